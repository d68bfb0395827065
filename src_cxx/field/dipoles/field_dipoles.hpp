// field_dipoles.hpp -- point dipoles attached to a field (qmmm_field_set_dipoles): the induced (and permanent) dipoles
// of polarizable MM sites, whose term the potential at the points and its gradient gain.
//
// The sites' positions are set once (set_sites); the dipoles change at every update (set_mu), a copy of 3 values a
// site (and one transfer on the GPU), nothing rebuilt. The term is summed per point over the sites in index order,
// in double on DOUBLE and MIXED; SINGLE takes float pair terms of offsets from the sites' origin (dipole_origin) and
// float sums over slices of kDipoleSlice sites, added in double (field_dipoles_shared.hpp). A point's value depends
// on neither the batch nor the thread count. A SINGLE point that float puts on a site, or whose float term is not
// finite, is recomputed in double on the host (DipoleTerm::add). The value path adds the term in a wrapper around the
// field's backend (wrap_dipoles), the gradient path in the forces engine (forces/field_forces.cpp); both hold the
// same DipoleTerm.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/field_backend.hpp"
#include "gpu_registry.hpp"

namespace qmmm {

// The kernels of one backend: the sites' positions at make, the dipoles at set_mu. add: u[i] += U_dip(point i), and
// when grad is not null grad[3i..3i+2] += its gradient. Returns false when a point is within the singular radius of
// a site (in the kernels' coordinates: float offsets on SINGLE) or its term is not finite. Then, where bad is not
// null, bad[i] = 1 for exactly those points (0 for the others), which keep their u and grad as they were; where bad
// is null the outputs are unspecified.
class DipoleKernels {
public:
    virtual ~DipoleKernels() = default;
    virtual void set_mu(const double *mu) = 0;
    virtual bool add(int64_t n, const double *xyz, double *u, double *grad, char *bad) = 0;
};

// SINGLE's origin of the sites' offsets: the centre of their box in whole bohr, so that float rounds the offsets by
// the sites' extent, not their place (as the SINGLE forces kernels' origin).
void dipole_origin(const std::vector<double> &xyz, double origin[3]);

std::unique_ptr<DipoleKernels> make_dipole_kernels_cpu(const std::vector<double> &xyz, int n_threads, int precision);

// The GPU side (src_cuda/field/dipoles/field_dipoles_gpu.cu registers it).
class DipolesGpu {
public:
    virtual ~DipolesGpu() = default;
    virtual std::unique_ptr<DipoleKernels> make(const std::vector<double> &xyz, int device, int precision) const = 0;
};

// The dipoles of one field: a host copy of the sites (for messages and SINGLE's recomputed points) and, on SINGLE,
// of the dipoles; the kernels on the field's backend; the checks.
class DipoleTerm {
public:
    DipoleTerm(int backend, int device, int n_threads, int precision)
        : backend_(backend), device_(device), n_threads_(n_threads), precision_(precision) {}
    int64_t n() const { return n_; }
    // Replaces the sites (validated: 3n finite doubles) and sets their dipoles to mu (3n, or null: zero).
    void set_sites(int64_t n, const double *xyz, const double *mu);
    // Replaces the dipoles (3n validated doubles).
    void set_mu(const double *mu);
    // Adds the term to u (and grad when not null). Throws SINGULAR for a point on a site, NONFINITE for a term out of
    // double's range; u and grad are then unspecified.
    void add(int64_t n, const double *xyz, double *u, double *grad);

private:
    // The term at p in double on the host, sites in index order (DOUBLE's pair term); false when p is within the
    // singular radius of a site or the term is not finite.
    bool add_host(const double *p, double *u, double *g) const;
    [[noreturn]] void report(int64_t n, const double *xyz) const;
    int backend_, device_, n_threads_, precision_;
    int64_t n_ = 0;
    std::vector<double> xyz_, mu_;  // mu_: SINGLE only
    std::vector<char> bad_;
    std::unique_ptr<DipoleKernels> k_;
};

// The field inner plus the dipoles' term at every point (eval, eval_async + wait).
std::unique_ptr<FieldBackend> wrap_dipoles(std::unique_ptr<FieldBackend> inner, std::shared_ptr<DipoleTerm> term);

}  // namespace qmmm
