// field_dipoles.hpp -- point dipoles attached to a field (qmmm_field_set_dipoles): the induced (and permanent) dipoles
// of polarizable MM sites, whose term the potential at the points and its gradient gain.
//
// The sites' positions are set once (set_sites); the dipoles change at every update (set_mu), a copy of 3 doubles a
// site (and one transfer on the GPU), nothing rebuilt. The term is summed per point over the sites in index order,
// in double on every precision (field_dipoles_shared.hpp), so a point's value depends on neither the batch nor the
// thread count. The value path adds it in a wrapper around the field's backend (wrap_dipoles), the gradient path in
// the forces engine (forces/field_forces.cpp); both hold the same DipoleTerm.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/field_backend.hpp"
#include "gpu_registry.hpp"

namespace qmmm {

// The kernels of one backend: the sites' positions at make, the dipoles at set_mu. add: u[i] += U_dip(point i), and
// when grad is not null grad[3i..3i+2] += its gradient; *bad when a point is within the singular radius of a site
// or a term is not finite (the outputs are then unspecified).
class DipoleKernels {
public:
    virtual ~DipoleKernels() = default;
    virtual void set_mu(const double *mu) = 0;
    virtual void add(int64_t n, const double *xyz, double *u, double *grad, bool *bad) = 0;
};

std::unique_ptr<DipoleKernels> make_dipole_kernels_cpu(const std::vector<double> &xyz, int n_threads);

// The GPU side (src_cuda/field/dipoles/field_dipoles_gpu.cu registers it).
class DipolesGpu {
public:
    virtual ~DipolesGpu() = default;
    virtual std::unique_ptr<DipoleKernels> make(const std::vector<double> &xyz, int device) const = 0;
};

// The dipoles of one field: a host copy of the sites (for messages), the kernels on the field's backend, the checks.
class DipoleTerm {
public:
    DipoleTerm(int backend, int device, int n_threads) : backend_(backend), device_(device), n_threads_(n_threads) {}
    int64_t n() const { return n_; }
    // Replaces the sites (validated: 3n finite doubles) and sets their dipoles to mu (3n, or null: zero).
    void set_sites(int64_t n, const double *xyz, const double *mu);
    // Replaces the dipoles (3n validated doubles).
    void set_mu(const double *mu);
    // Adds the term to u (and grad when not null). Throws SINGULAR for a point on a site, NONFINITE for a term out of
    // double's range; u and grad are then unspecified.
    void add(int64_t n, const double *xyz, double *u, double *grad);

private:
    int backend_, device_, n_threads_;
    int64_t n_ = 0;
    std::vector<double> xyz_;
    std::unique_ptr<DipoleKernels> k_;
};

// The field inner plus the dipoles' term at every point (eval, eval_async + wait).
std::unique_ptr<FieldBackend> wrap_dipoles(std::unique_ptr<FieldBackend> inner, std::shared_ptr<DipoleTerm> term);

}  // namespace qmmm
