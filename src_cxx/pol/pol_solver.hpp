// pol_solver.hpp -- polarizable sites, their permanent field and the induced-dipole solver (model and signs:
// qmmm_accel_pol.h).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu_registry.hpp"
#include "qmmm_accel_pol.h"

namespace qmmm {

// The solver's product y = B x = alpha^-1 x - T x over the polarizable sites (3 doubles a site, in compact order),
// where it runs off the CPU (the CPU's is apply_b in pol_solver.cpp).
class PolProduct {
public:
    virtual ~PolProduct() = default;
    virtual void apply(const double *x, double *y) = 0;  // throws Error (CUDA, OUT_OF_MEMORY)
};

// Backend AUTO runs the products on the CPU up to this many polarizable sites: a GPU product costs a launch and two
// copies (~20-50 us), the CPU's 1,024-site product ~3 ms a core.
constexpr int64_t kPolAutoCpu = 1024;

// The solver's relative residual tolerance, at create (opt->tolerance) and after (qmmm_pol_set_tolerance).
constexpr double kPolTolMin = 1e-15, kPolTolMax = 0.1;

struct PolSystem {
    int64_t n = 0;
    std::vector<double> xyz, charge, dipole, alpha;  // 3n, n, 3n, 6n (xx xy xz yy yz zz)
    // Exclusions, symmetric (i excludes j when either listed the other), self left out: CSR by site, sorted.
    std::vector<int64_t> excl_start, excl;
    // The polarizable sites (alpha not zero), in site order, and per polarizable site k (compact index):
    std::vector<int64_t> pol_site;   // site index of k
    std::vector<double> px, py, pz;  // per k: position
    std::vector<double> alpha_inv;   // 6 per k: the inverse polarizability
    std::vector<double> s6;          // per k: abar^(-1/6), abar = trace / 3 (the Thole length scale)
    std::vector<int64_t> pexcl_start, pexcl;  // the exclusions among polarizable sites, as compact indices
    std::vector<double> e_mm;        // 3n: the permanent field at every site
    qmmm_pol_options opt{};
    int backend = QMMM_BACKEND_CPU;       // resolved: where the products run
    std::shared_ptr<PolProduct> product;  // the GPU's products (backend CUDA), else null
};

// The GPU side (src_cuda/pol/pol_gpu.cu registers it): the products of a built system on a device (-1: current).
class PolGpu {
public:
    virtual ~PolGpu() = default;
    virtual std::unique_ptr<PolProduct> make(const PolSystem &s, int device) const = 0;
};

// Checks the arrays and options and builds the system with its permanent field. Throws qmmm::Error.
void build_pol_system(PolSystem &s, int64_t n, const double *xyz, const double *charge, const double *dipole,
                      int32_t alpha_components, const double *alpha, int32_t excl_width, const int64_t *excl,
                      const qmmm_pol_options &opt);

// Checks an options struct (INVALID_ARG / NONFINITE with the option's name).
void check_pol_options(const qmmm_pol_options &opt);

// Solves for the induced dipoles (3n, zero at non-polarizable sites); e_ext may be null. Throws qmmm::Error with
// QMMM_ERR_NOT_CONVERGED after writing the last iterate into mu and st.
void solve_pol(const PolSystem &s, const double *e_ext, double *mu, qmmm_pol_stats &st);

}  // namespace qmmm
