// field_forces.cpp -- the forces engine of a field: its sources (built at create from the caller's arrays), its
// kernels (built on first use, on the field's backend), the pending asynchronous gradient, the site accumulator's
// summed weight and its gradient option, and the messages for points on a site without a finite potential.
#include <cmath>
#include <limits>

#include "backend/checked_sum.hpp"
#include "dipoles/field_dipoles.hpp"
#include "error.hpp"
#include "charges/field_charges_shared.hpp"
#include "forces/field_forces_shared.hpp"
#include "backend/field_backend.hpp"
#include "forces/field_forces.hpp"
#include "split/field_split.hpp"

namespace qmmm {

ForceEngine::~ForceEngine() {
    if (pending_ && !pending_split_ && k_) {  // never free what a GPU is still writing
        bool bad = false;
        k_->grad_finish(&bad);
    }
}

ForceKernels &ForceEngine::kernels() {
    if (!k_) k_ = s_.backend == QMMM_BACKEND_CUDA ? GpuRegistry<ForcesGpu>::get().make(s_) : make_force_kernels_cpu(s_);
    return *k_;
}

double ForceEngine::site_charge(int64_t k) const {
    const int64_t j = s_.site_index[k];
    return j >= 0 ? s_.c[j] : s_.sc[-1 - j];
}

void ForceEngine::report_singular(int64_t n, const double *xyz, const char *what, bool skip_zero) {
    const int64_t m = n_sites();
    for (int64_t i = 0; i < n; ++i) {
        const double *p = xyz + 3 * i;
        for (int64_t k = 0; k < m; ++k) {
            if (!s_.singular[k] || (skip_zero && site_charge(k) == 0)) continue;
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

// U and dU/dr at p in double on the host, term by term: the kernels' rule, except that a site of zero charge adds
// nothing (the kernels' 0 * NaN on its centre). g NULL: U alone. False when the result is still not finite.
bool ForceEngine::grad_host(const double *p, double *u, double *g) const {
    double v = 0, gx = 0, gy = 0, gz = 0;
    // ch: c times the vector term h, formed as the kernels do (c / d^3 as ((c / d) / d) / d: 1 / d^3 alone
    // underflows where d > 1e103 bohr and the product does not).
    auto add = [&](double c, double dx, double dy, double dz, double gv, double ch) {
        v += c * gv, gx += ch * dx, gy += ch * dy, gz += ch * dz;
    };
    for (int64_t k = 0; k < s_.n_plain; ++k) {
        if (s_.c[k] == 0) continue;
        const double dx = p[0] - s_.x[k], dy = p[1] - s_.y[k], dz = p[2] - s_.z[k];
        const double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 < kSingularRadius2) {
            add(s_.c[k], 0, 0, 0, k < s_.n_self ? s_.self_inv_r : std::numeric_limits<double>::quiet_NaN(), 0);
            continue;
        }
        const double inv = 1 / std::sqrt(d2);
        add(s_.c[k], dx, dy, dz, inv, -(s_.c[k] * inv) * inv * inv);
    }
    for (int64_t k = 0; k < s_.n_screened; ++k) {
        if (s_.sc[k] == 0) continue;
        const double dx = p[0] - s_.sx[k], dy = p[1] - s_.sy[k], dz = p[2] - s_.sz[k];
        const double d2 = dx * dx + dy * dy + dz * dz;
        add(s_.sc[k], dx, dy, dz, screened_inv_r_xyz<double>(s_.kind, dx, dy, dz, s_.sa[k], s_.sb[k]),
            d2 > 0 ? s_.sc[k] * screened_grad_h<double>(s_.kind, d2, s_.sa[k], s_.sb[k]) : 0.0);
    }
    if (!std::isfinite(v)) return false;
    if (u) *u = v;
    if (!g) return true;
    if (!std::isfinite(gx) || !std::isfinite(gy) || !std::isfinite(gz)) return false;
    g[0] = gx, g[1] = gy, g[2] = gz;
    return true;
}

bool ForceEngine::sites_host(int64_t n, const double *xyz, const double *w, double *phi, double *efield) const {
    const int64_t m = n_sites();
    bool ok = true;
    for (int64_t k = 0; k < m; ++k) {
        const int64_t j = s_.site_index[k];
        double v = 0, ex = 0, ey = 0, ez = 0;
        if (j >= 0) {  // E_k = sum_i w_i (R_k - r_i) / d^3, c / d^3 formed as ((c / d) / d) / d as the kernels do
            for (int64_t i = 0; i < n; ++i) {
                const double *p = xyz + 3 * i;
                const double dx = p[0] - s_.x[j], dy = p[1] - s_.y[j], dz = p[2] - s_.z[j];
                const double d2 = dx * dx + dy * dy + dz * dz;
                if (d2 < kSingularRadius2) {
                    v += w[i] * (j < s_.n_self ? s_.self_inv_r : std::numeric_limits<double>::quiet_NaN());
                    continue;
                }
                const double inv = 1 / std::sqrt(d2), h = ((w[i] * inv) * inv) * inv;
                v += w[i] * inv, ex -= h * dx, ey -= h * dy, ez -= h * dz;
            }
        } else {  // E_k = -grad_R phi = sum_i w_i h(d) (r_i - R_k), h as the gradient's
            const int64_t q = -1 - j;
            for (int64_t i = 0; i < n; ++i) {
                const double *p = xyz + 3 * i;
                const double dx = p[0] - s_.sx[q], dy = p[1] - s_.sy[q], dz = p[2] - s_.sz[q];
                const double d2 = dx * dx + dy * dy + dz * dz;
                v += w[i] * screened_inv_r_xyz<double>(s_.kind, dx, dy, dz, s_.sa[q], s_.sb[q]);
                const double h = d2 > 0 ? w[i] * screened_grad_h<double>(s_.kind, d2, s_.sa[q], s_.sb[q]) : 0.0;
                ex += h * dx, ey += h * dy, ez += h * dz;
            }
        }
        phi[k] = v, efield[3 * k] = ex, efield[3 * k + 1] = ey, efield[3 * k + 2] = ez;
        ok = ok && std::isfinite(v) && std::isfinite(ex) && std::isfinite(ey) && std::isfinite(ez);
    }
    return ok;
}

// A non-finite value or gradient: the point is recomputed on the host (a site of zero charge is no singularity),
// else named with the site it is on.
void ForceEngine::grad_checked(int64_t n, const double *xyz, double *u, double *grad, bool bad) {
    if (!bad) return;
    for (int64_t i = 0; i < n; ++i) {
        double *g = grad + 3 * i;
        if (std::isfinite(u[i]) && std::isfinite(g[0]) && std::isfinite(g[1]) && std::isfinite(g[2])) continue;
        if (!grad_host(xyz + 3 * i, u + i, g)) report_singular(n, xyz, "potential or gradient", true);
    }
}

bool ForceEngine::split_grad(int64_t n, const double *xyz, double *u, double *grad, bool *bad) {
    if (!split_ || !split_->split_grad(n, xyz, u, grad, split_out_)) return false;
    finish_rest(n, xyz, u, grad, bad);
    return true;
}

bool ForceEngine::own_grad(int64_t n, const double *xyz, double *u, double *grad, bool *bad) {
    // Lattice cells keep the engine's rows: exact, and within the cost target by themselves (forces.md's cube table).
    if (!own_ || kernels().grad_rows() || !own_->own_grad(n, xyz, u, grad, split_out_)) return false;
    finish_rest(n, xyz, u, grad, bad);
    return true;
}

// After split_grad's or own_grad's points: the points they left (split_out_) by the engine's kernels; *bad gains a
// non-finite output of any point.
void ForceEngine::finish_rest(int64_t n, const double *xyz, double *u, double *grad, bool *bad) {
    std::vector<int64_t> idx;
    std::vector<double> pts;
    for (int64_t i = 0; i < n; ++i) {
        if (split_out_[static_cast<size_t>(i)]) {
            idx.push_back(i), pts.insert(pts.end(), xyz + 3 * i, xyz + 3 * i + 3);
            continue;
        }
        const double *g = grad + 3 * i;
        *bad = *bad || !(std::isfinite(u[i]) && std::isfinite(g[0]) && std::isfinite(g[1]) && std::isfinite(g[2]));
    }
    if (idx.empty()) return;
    const int64_t m = static_cast<int64_t>(idx.size());
    std::vector<double> ou(static_cast<size_t>(m)), og(static_cast<size_t>(3 * m));
    ForceKernels &k = kernels();
    k.grad_start(m, pts.data(), ou.data(), og.data());
    bool b = false;
    k.grad_finish(&b);
    *bad = *bad || b;
    for (int64_t j = 0; j < m; ++j) {
        const int64_t i = idx[static_cast<size_t>(j)];
        u[i] = ou[j], grad[3 * i] = og[3 * j], grad[3 * i + 1] = og[3 * j + 1], grad[3 * i + 2] = og[3 * j + 2];
    }
}

void ForceEngine::grad(int64_t n, const double *xyz, double *u, double *grad, double *sum_u) {
    if (!u) {
        if (static_cast<int64_t>(scratch_u_.size()) < n) scratch_u_.resize(static_cast<size_t>(n));
        u = scratch_u_.data();
    }
    bool bad = false;
    if (!split_grad(n, xyz, u, grad, &bad) && !own_grad(n, xyz, u, grad, &bad)) {
        ForceKernels &k = kernels();
        k.grad_start(n, xyz, u, grad);
        k.grad_finish(&bad);
    }
    grad_checked(n, xyz, u, grad, bad);
    if (dipoles_) dipoles_->add(n, xyz, u, grad);
    if (sum_u) *sum_u = checked_sum(u, n, "qmmm_field_eval_grad_sum");
}

void ForceEngine::grad_async(int64_t n, const double *xyz, double *u, double *grad, double *sum_u) {
    if (!u) {
        if (static_cast<int64_t>(scratch_u_.size()) < n) scratch_u_.resize(static_cast<size_t>(n));
        u = scratch_u_.data();
    }
    // A SPLIT field's gradient, or the value backend's own, is computed here in full (on the host; a SINGULAR point
    // is still reported by wait, as the kernels' are).
    pending_bad_ = false;
    pending_split_ = split_grad(n, xyz, u, grad, &pending_bad_) || own_grad(n, xyz, u, grad, &pending_bad_);
    if (!pending_split_) kernels().grad_start(n, xyz, u, grad);
    pending_ = true, pending_n_ = n, pending_u_ = u, pending_sum_ = sum_u, pending_grad_ = grad;
    pending_xyz_.assign(xyz, xyz + 3 * n);
}

void ForceEngine::wait() {
    if (!pending_) return;
    pending_ = false;
    bool bad = pending_split_ && pending_bad_;
    if (!pending_split_) k_->grad_finish(&bad);
    pending_split_ = false;
    grad_checked(pending_n_, pending_xyz_.data(), pending_u_, pending_grad_, bad);
    if (dipoles_) dipoles_->add(pending_n_, pending_xyz_.data(), pending_u_, pending_grad_);
    if (pending_sum_) *pending_sum_ = checked_sum(pending_u_, pending_n_, "the pending gradient call's sum");
}

// SINGLE rounds the points to float: one 1e-8 bohr from a site lands on it there (a false SINGULAR or overflow, or a
// cell's self term for a site it is not on). A non-finite SINGLE call is recomputed in double on the host first.
void ForceEngine::sites(int64_t n, const double *xyz, const double *w, double *phi, double *efield) {
    bool bad = false;
    kernels().sites(n, xyz, w, phi, efield, false, 0.0, &bad);
    if (bad && s_.precision == QMMM_PRECISION_SINGLE && sites_host(n, xyz, w, phi, efield)) return;
    if (bad) report_singular(n, xyz, "potential or field");
}

bool ForceEngine::sites_grad_host(int64_t n, const double *xyz, const double *w, double *egrad) const {
    const int64_t m = n_sites();
    bool ok = true;
    for (int64_t k = 0; k < m; ++k) {
        const int64_t j = s_.site_index[k];  // plain (require_grad_sites)
        double g[6] = {0, 0, 0, 0, 0, 0};
        for (int64_t i = 0; i < n; ++i) {
            const double *p = xyz + 3 * i;
            const double dx = s_.x[j] - p[0], dy = s_.y[j] - p[1], dz = s_.z[j] - p[2];
            const double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < kSingularRadius2) {  // a cell's self term is flat at its centre; another site has no field there
                if (j >= s_.n_self)
                    for (double &v : g) v = std::numeric_limits<double>::quiet_NaN();
                continue;
            }
            const double inv = 1 / std::sqrt(d2), t3 = ((w[i] * inv) * inv) * inv, t5 = 3 * t3 * inv * inv;
            g[0] += t3 - t5 * dx * dx, g[1] -= t5 * dx * dy, g[2] -= t5 * dx * dz;
            g[3] += t3 - t5 * dy * dy, g[4] -= t5 * dy * dz, g[5] += t3 - t5 * dz * dz;
        }
        for (int c = 0; c < 6; ++c) egrad[6 * k + c] = g[c], ok = ok && std::isfinite(g[c]);
    }
    return ok;
}

void ForceEngine::require_grad_sites() const {
    if (s_.n_screened > 0)
        throw Error(QMMM_ERR_UNSUPPORTED,
                    strfmt("the field gradient at the sites is not implemented for screened charges (EXP or GAUSSIAN "
                           "screening); this field has %lld screened charges (their potential and field: "
                           "qmmm_field_site_field)", ix(s_.n_screened)));
}

void ForceEngine::sites_grad(int64_t n, const double *xyz, const double *w, double *egrad) {
    require_grad_sites();
    bool bad = false;
    kernels().sites_grad(n, xyz, w, egrad, &bad);
    if (bad && s_.precision == QMMM_PRECISION_SINGLE && sites_grad_host(n, xyz, w, egrad)) return;
    if (bad) report_singular(n, xyz, "field gradient");
}

void ForceEngine::accum_set_grad(bool on) {
    if (on) require_grad_sites();
    accum_grad_ = on;
    accum_reset();
}

void ForceEngine::accum_read_grad(double *egrad) {
    if (!accum_grad_)
        throw Error(QMMM_ERR_INVALID_ARG, "the site accumulator keeps no field gradient: call "
                                          "qmmm_field_site_accum_set_grad(f, 1) before the calls that add");
    kernels().accum_read_grad(egrad);
}

void ForceEngine::accum_reset() {
    kernels().accum_reset();
    if (accum_grad_) k_->accum_grad_reset();
    weight_sum_ = 0, n_calls_ = 0;
}

// With the gradient kept: its values are staged (and checked) first, then the potential and field are added, then
// the staged gradient: a failed call adds to neither sum.
void ForceEngine::accum_add(int64_t n, const double *xyz, const double *w, double weight) {
    const double *host_grad = nullptr;  // the gradient recomputed in double on the host (SINGLE), else staged
    if (accum_grad_) {
        bool bad_g = false;
        kernels().accum_stage_grad(n, xyz, w, weight, &bad_g);
        if (bad_g && s_.precision == QMMM_PRECISION_SINGLE) {
            host_g_.resize(6 * static_cast<size_t>(n_sites()));
            if (sites_grad_host(n, xyz, w, host_g_.data())) bad_g = false, host_grad = host_g_.data();
        }
        if (bad_g) report_singular(n, xyz, "field gradient");
    }
    bool bad = false;
    kernels().sites(n, xyz, w, nullptr, nullptr, true, weight, &bad);
    if (bad && s_.precision == QMMM_PRECISION_SINGLE) {  // as sites(): recomputed in double, then added
        const size_t m = static_cast<size_t>(n_sites());
        host_phi_.resize(m), host_e_.resize(3 * m);
        if (sites_host(n, xyz, w, host_phi_.data(), host_e_.data()) &&
            k_->accum_add_values(host_phi_.data(), host_e_.data(), weight))
            bad = false;
    }
    if (bad) report_singular(n, xyz, "potential or field");
    if (accum_grad_) k_->accum_commit_grad(weight, host_grad);
    weight_sum_ += weight, ++n_calls_;
}

void ForceEngine::accum_read(double *phi, double *efield, double *weight_sum, int64_t *n_calls) {
    kernels().accum_read(phi, efield);
    if (weight_sum) *weight_sum = weight_sum_;
    if (n_calls) *n_calls = n_calls_;
}

}  // namespace qmmm
