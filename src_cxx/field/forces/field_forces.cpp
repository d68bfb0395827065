// field_forces.cpp -- the forces engine of a field: its sources (built at create from the caller's arrays), its
// kernels (built on first use, on the field's backend), the pending asynchronous gradient, the site accumulator's
// summed weight, and the messages for points on a site without a finite potential.
#include <cmath>
#include <limits>

#include "error.hpp"
#include "charges/field_charges_shared.hpp"
#include "field_forces.hpp"

namespace qmmm {

ForceEngine::~ForceEngine() {
    if (pending_ && k_) {  // never free what a GPU is still writing
        bool bad = false;
        k_->grad_finish(&bad);
    }
}

ForceKernels &ForceEngine::kernels() {
    if (!k_) k_ = s_.backend == QMMM_BACKEND_CUDA ? GpuRegistry<ForcesGpu>::get().make(s_) : make_force_kernels_cpu(s_);
    return *k_;
}

void ForceEngine::report_singular(int64_t n, const double *xyz, const char *what) {
    const int64_t m = n_sites();
    for (int64_t i = 0; i < n; ++i) {
        const double *p = xyz + 3 * i;
        for (int64_t k = 0; k < m; ++k) {
            if (!s_.singular[k]) continue;
            const int64_t j = s_.site_index[k];
            const double sx = j >= 0 ? s_.x[j] : s_.sx[-1 - j], sy = j >= 0 ? s_.y[j] : s_.sy[-1 - j];
            const double sz = j >= 0 ? s_.z[j] : s_.sz[-1 - j];
            const double dx = p[0] - sx, dy = p[1] - sy, dz = p[2] - sz;
            if (dx * dx + dy * dy + dz * dz >= kSingularRadius2) continue;
            const bool nucleus = k >= s_.n_first;
            throw Error(QMMM_ERR_SINGULAR,
                        strfmt("point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of %s %lld (site %lld), which "
                               "has no finite %s there%s",
                               ix(i), p[0], p[1], p[2], nucleus ? "nucleus" : s_.charges ? "charge" : "density cell",
                               ix(nucleus ? k - s_.n_first : k), ix(k), what,
                               nucleus || s_.charges ? "" : " (qmmm_options.cell_volume is 0)"));
        }
    }
    throw Error(QMMM_ERR_NONFINITE, strfmt("a %s is beyond the range of the field's precision (a term or a sum "
                                           "overflows); no point is on a singular site", what));
}

void ForceEngine::grad_checked(int64_t n, const double *xyz, const double *u, bool bad) {
    (void)u;
    if (bad) report_singular(n, xyz, "potential or gradient");
}

void ForceEngine::grad(int64_t n, const double *xyz, double *u, double *grad, double *sum_u) {
    if (!u) {
        if (static_cast<int64_t>(scratch_u_.size()) < n) scratch_u_.resize(static_cast<size_t>(n));
        u = scratch_u_.data();
    }
    ForceKernels &k = kernels();
    k.grad_start(n, xyz, u, grad);
    bool bad = false;
    k.grad_finish(&bad);
    grad_checked(n, xyz, u, bad);
    if (sum_u) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += u[i];
        *sum_u = s;
    }
}

void ForceEngine::grad_async(int64_t n, const double *xyz, double *u, double *grad, double *sum_u) {
    if (!u) {
        if (static_cast<int64_t>(scratch_u_.size()) < n) scratch_u_.resize(static_cast<size_t>(n));
        u = scratch_u_.data();
    }
    kernels().grad_start(n, xyz, u, grad);
    pending_ = true, pending_n_ = n, pending_u_ = u, pending_sum_ = sum_u;
    pending_xyz_.assign(xyz, xyz + 3 * n);
}

void ForceEngine::wait() {
    if (!pending_) return;
    pending_ = false;
    bool bad = false;
    k_->grad_finish(&bad);
    grad_checked(pending_n_, pending_xyz_.data(), pending_u_, bad);
    if (pending_sum_) {
        double s = 0;
        for (int64_t i = 0; i < pending_n_; ++i) s += pending_u_[i];
        *pending_sum_ = s;
    }
}

void ForceEngine::sites(int64_t n, const double *xyz, const double *w, double *phi, double *efield) {
    bool bad = false;
    kernels().sites(n, xyz, w, phi, efield, false, 0.0, &bad);
    if (bad) report_singular(n, xyz, "potential or field");
}

void ForceEngine::accum_reset() {
    kernels().accum_reset();
    weight_sum_ = 0, n_calls_ = 0;
}

void ForceEngine::accum_add(int64_t n, const double *xyz, const double *w, double weight) {
    bool bad = false;
    kernels().sites(n, xyz, w, nullptr, nullptr, true, weight, &bad);
    if (bad) report_singular(n, xyz, "potential or field");
    weight_sum_ += weight, ++n_calls_;
}

void ForceEngine::accum_read(double *phi, double *efield, double *weight_sum, int64_t *n_calls) {
    kernels().accum_read(phi, efield);
    if (weight_sum) *weight_sum = weight_sum_;
    if (n_calls) *n_calls = n_calls_;
}

}  // namespace qmmm
