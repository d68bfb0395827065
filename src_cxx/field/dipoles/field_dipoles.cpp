// field_dipoles.cpp -- point dipoles on a field: the CPU kernels, the term's checks and messages, SINGLE's points
// recomputed in double, and the wrapper that adds the term to a field's values (field_dipoles.hpp).
//
// CPU: threads take tiles of points; a point's sum runs over the sites in index order, vectorised across the sites
// (lanes of a fixed width, added in a fixed order; SINGLE: float lanes within each slice of kDipoleSlice sites, the
// slices' sums added in double), so its bits depend on neither the thread count nor the batch.
#include <algorithm>
#include <cmath>
#include <utility>

#include "cpu_parallel.hpp"
#include "cpu_threads.hpp"
#include "dipoles/field_dipoles.hpp"
#include "dipoles/field_dipoles_shared.hpp"
#include "error.hpp"

namespace qmmm {

namespace {

constexpr int64_t kPointTile = 64;

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
// One point's term over m sites (structure of arrays): out = U, dU/dx, dU/dy, dU/dz. A site within the singular
// radius counts in *near and adds nothing.
QMMM_CLONES void dipole_point(int64_t m, const double *__restrict x, const double *__restrict y,
                              const double *__restrict z, const double *__restrict mx, const double *__restrict my,
                              const double *__restrict mz, const double p[3], double out[4], int *near) {
    double u = 0, gx = 0, gy = 0, gz = 0;
    double on = 0;  // a double count: an int beside the double lanes kept the AVX2 and generic loops scalar
    const double px = p[0], py = p[1], pz = p[2];
#pragma omp simd reduction(+ : u, gx, gy, gz, on)
    for (int64_t k = 0; k < m; ++k) {
        const double dx = px - x[k], dy = py - y[k], dz = pz - z[k];
        const double d2 = dx * dx + dy * dy + dz * dz;
        const bool is_on = d2 < kSingularRadius2;
        double tu = 0, tx = 0, ty = 0, tz = 0;
        dipole_pair(dx, dy, dz, 1.0 / __builtin_sqrt(is_on ? 1.0 : d2), mx[k], my[k], mz[k], tu, tx, ty, tz);
        u += is_on ? 0.0 : tu, gx += is_on ? 0.0 : tx, gy += is_on ? 0.0 : ty, gz += is_on ? 0.0 : tz;
        on += is_on ? 1.0 : 0.0;
    }
    out[0] = u, out[1] = gx, out[2] = gy, out[3] = gz;
    *near = on > 0;
}

// dipole_point's U alone (qmmm_field_eval): the same operations for U, the gradient's left to dead-code removal
// (0.67x the time). Its own loop may be vectorised apart, so U agrees with dipole_point's to rounding, not by
// contract bit for bit (measured equal with GCC 12 on AVX-512).
QMMM_CLONES void dipole_value(int64_t m, const double *__restrict x, const double *__restrict y,
                              const double *__restrict z, const double *__restrict mx, const double *__restrict my,
                              const double *__restrict mz, const double p[3], double out[4], int *near) {
    double u = 0;
    double on = 0;
    const double px = p[0], py = p[1], pz = p[2];
#pragma omp simd reduction(+ : u, on)
    for (int64_t k = 0; k < m; ++k) {
        const double dx = px - x[k], dy = py - y[k], dz = pz - z[k];
        const double d2 = dx * dx + dy * dy + dz * dz;
        const bool is_on = d2 < kSingularRadius2;
        double tu = 0, tx = 0, ty = 0, tz = 0;
        dipole_pair(dx, dy, dz, 1.0 / __builtin_sqrt(is_on ? 1.0 : d2), mx[k], my[k], mz[k], tu, tx, ty, tz);
        u += is_on ? 0.0 : tu;
        on += is_on ? 1.0 : 0.0;
    }
    out[0] = u, out[1] = out[2] = out[3] = 0;
    *near = on > 0;
}

// SINGLE: dipole_point in float on offsets from the sites' origin, float lane sums within each slice of
// kDipoleSlice sites, the slices' sums added in double in slice order (the GPU's slices, so the claim is the same).
QMMM_CLONES void dipole_point_f(int64_t m, const float *__restrict x, const float *__restrict y,
                                const float *__restrict z, const float *__restrict mx, const float *__restrict my,
                                const float *__restrict mz, const float p[3], double out[4], int *near) {
    double u = 0, gx = 0, gy = 0, gz = 0;
    float on = 0;
    const float px = p[0], py = p[1], pz = p[2];
    for (int64_t b = 0; b < m; b += kDipoleSlice) {
        const int64_t e = std::min(m, b + kDipoleSlice);
        float su = 0, sx = 0, sy = 0, sz = 0;
#pragma omp simd reduction(+ : su, sx, sy, sz, on)
        for (int64_t k = b; k < e; ++k) {
            const float dx = px - x[k], dy = py - y[k], dz = pz - z[k];
            const float d2 = dx * dx + dy * dy + dz * dz;
            const bool is_on = d2 < static_cast<float>(kSingularRadius2);
            float tu = 0, tx = 0, ty = 0, tz = 0;
            dipole_pair(dx, dy, dz, 1.0f / __builtin_sqrtf(is_on ? 1.0f : d2), mx[k], my[k], mz[k], tu, tx, ty, tz);
            su += is_on ? 0.0f : tu, sx += is_on ? 0.0f : tx, sy += is_on ? 0.0f : ty, sz += is_on ? 0.0f : tz;
            on += is_on ? 1.0f : 0.0f;
        }
        u += su, gx += sx, gy += sy, gz += sz;
    }
    out[0] = u, out[1] = gx, out[2] = gy, out[3] = gz;
    *near = on > 0;
}

// dipole_point_f's U alone (as dipole_value is dipole_point's).
QMMM_CLONES void dipole_value_f(int64_t m, const float *__restrict x, const float *__restrict y,
                                const float *__restrict z, const float *__restrict mx, const float *__restrict my,
                                const float *__restrict mz, const float p[3], double out[4], int *near) {
    double u = 0;
    float on = 0;
    const float px = p[0], py = p[1], pz = p[2];
    for (int64_t b = 0; b < m; b += kDipoleSlice) {
        const int64_t e = std::min(m, b + kDipoleSlice);
        float su = 0;
#pragma omp simd reduction(+ : su, on)
        for (int64_t k = b; k < e; ++k) {
            const float dx = px - x[k], dy = py - y[k], dz = pz - z[k];
            const float d2 = dx * dx + dy * dy + dz * dz;
            const bool is_on = d2 < static_cast<float>(kSingularRadius2);
            float tu = 0;
            dipole_pair_u(dx, dy, dz, 1.0f / __builtin_sqrtf(is_on ? 1.0f : d2), mx[k], my[k], mz[k], tu);
            su += is_on ? 0.0f : tu;
            on += is_on ? 1.0f : 0.0f;
        }
        u += su;
    }
    out[0] = u, out[1] = out[2] = out[3] = 0;
    *near = on > 0;
}

class DipoleCpu final : public DipoleKernels {
public:
    DipoleCpu(const std::vector<double> &xyz, int n_threads, int precision)
        : m_(static_cast<int64_t>(xyz.size() / 3)), nt_(n_threads), single_(precision == QMMM_PRECISION_SINGLE) {
        if (single_) {
            dipole_origin(xyz, origin_);
            for (std::vector<float> *v : {&fx_, &fy_, &fz_, &fmx_, &fmy_, &fmz_})
                v->assign(static_cast<size_t>(m_), 0.0f);
            for (int64_t k = 0; k < m_; ++k) {
                fx_[k] = static_cast<float>(xyz[3 * k] - origin_[0]);
                fy_[k] = static_cast<float>(xyz[3 * k + 1] - origin_[1]);
                fz_[k] = static_cast<float>(xyz[3 * k + 2] - origin_[2]);
            }
            return;
        }
        for (std::vector<double> *v : {&x_, &y_, &z_, &mx_, &my_, &mz_}) v->assign(static_cast<size_t>(m_), 0.0);
        for (int64_t k = 0; k < m_; ++k) x_[k] = xyz[3 * k], y_[k] = xyz[3 * k + 1], z_[k] = xyz[3 * k + 2];
    }
    void set_mu(const double *mu) override {
        if (single_) {
            for (int64_t k = 0; k < m_; ++k)
                fmx_[k] = static_cast<float>(mu[3 * k]), fmy_[k] = static_cast<float>(mu[3 * k + 1]),
                fmz_[k] = static_cast<float>(mu[3 * k + 2]);
            return;
        }
        for (int64_t k = 0; k < m_; ++k) mx_[k] = mu[3 * k], my_[k] = mu[3 * k + 1], mz_[k] = mu[3 * k + 2];
    }
    bool add(int64_t n, const double *xyz, double *u, double *grad, char *bad) override {
        const int64_t tiles = (n + kPointTile - 1) / kPointTile;
        std::vector<char> tile_bad(static_cast<size_t>(tiles), 0);
        const int nt = call_threads(nt_, static_cast<double>(n) * static_cast<double>(m_));
        parallel_tiles(nt, tiles, [&](int64_t t) {
            const int64_t end = std::min(n, (t + 1) * kPointTile);
            for (int64_t i = t * kPointTile; i < end; ++i) {
                double out[4];
                int near = 0;
                if (single_) {
                    const float p[3] = {static_cast<float>(xyz[3 * i] - origin_[0]),
                                        static_cast<float>(xyz[3 * i + 1] - origin_[1]),
                                        static_cast<float>(xyz[3 * i + 2] - origin_[2])};
                    (grad ? dipole_point_f : dipole_value_f)(m_, fx_.data(), fy_.data(), fz_.data(), fmx_.data(),
                                                             fmy_.data(), fmz_.data(), p, out, &near);
                } else {
                    (grad ? dipole_point : dipole_value)(m_, x_.data(), y_.data(), z_.data(), mx_.data(), my_.data(),
                                                         mz_.data(), xyz + 3 * i, out, &near);
                }
                if (near || !std::isfinite(out[0]) || !std::isfinite(out[1]) || !std::isfinite(out[2]) ||
                    !std::isfinite(out[3])) {
                    tile_bad[t] = 1;
                    if (bad) {  // left as it was: the caller recomputes it
                        bad[i] = 1;
                        continue;
                    }
                }
                u[i] += out[0];
                if (grad) grad[3 * i] += out[1], grad[3 * i + 1] += out[2], grad[3 * i + 2] += out[3];
            }
        });
        for (char b : tile_bad)
            if (b) return false;
        return true;
    }

private:
    int64_t m_;
    int nt_;
    bool single_;
    double origin_[3] = {0, 0, 0};
    std::vector<double> x_, y_, z_, mx_, my_, mz_;
    std::vector<float> fx_, fy_, fz_, fmx_, fmy_, fmz_;  // SINGLE: offsets from origin_, and the dipoles
};

class FieldDipoles final : public FieldBackend {
public:
    FieldDipoles(std::unique_ptr<FieldBackend> inner, std::shared_ptr<DipoleTerm> term)
        : inner_(std::move(inner)), term_(std::move(term)) {}
    int eval(int64_t n, const double *xyz, double *u) override {
        if (int s = inner_->eval(n, xyz, u)) return s;
        term_->add(n, xyz, u, nullptr);
        return QMMM_SUCCESS;
    }
    int eval_async(int64_t n, const double *xyz, double *u) override {
        if (int s = inner_->eval_async(n, xyz, u)) return s;
        pending_xyz_.assign(xyz, xyz + 3 * n), pending_u_ = u, pending_n_ = n;
        return QMMM_SUCCESS;
    }
    int wait() override {
        if (int s = inner_->wait()) return s;
        if (!pending_u_) return QMMM_SUCCESS;
        double *u = pending_u_;
        pending_u_ = nullptr;
        term_->add(pending_n_, pending_xyz_.data(), u, nullptr);
        return QMMM_SUCCESS;
    }
    int backend() const override { return inner_->backend(); }
    int precision() const override { return inner_->precision(); }
    int device() const override { return inner_->device(); }
    int cpu_isa() const override { return inner_->cpu_isa(); }
    void low_latency(int *running, int64_t *launches) const override { inner_->low_latency(running, launches); }
    const FieldBackend *wrapped() const override { return inner_.get(); }

private:
    std::unique_ptr<FieldBackend> inner_;
    std::shared_ptr<DipoleTerm> term_;
    std::vector<double> pending_xyz_;
    double *pending_u_ = nullptr;
    int64_t pending_n_ = 0;
};

}  // namespace

void dipole_origin(const std::vector<double> &xyz, double origin[3]) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t k = 0; k + 2 < xyz.size(); k += 3)
        for (int c = 0; c < 3; ++c) lo[c] = std::min(lo[c], xyz[k + c]), hi[c] = std::max(hi[c], xyz[k + c]);
    for (int c = 0; c < 3; ++c) origin[c] = xyz.empty() ? 0.0 : std::round(0.5 * (lo[c] + hi[c]));
}

std::unique_ptr<DipoleKernels> make_dipole_kernels_cpu(const std::vector<double> &xyz, int n_threads, int precision) {
    return std::make_unique<DipoleCpu>(xyz, n_threads, precision);
}

void DipoleTerm::set_sites(int64_t n, const double *xyz, const double *mu) {
    std::vector<double> sites(xyz, xyz + 3 * n);
    std::unique_ptr<DipoleKernels> k;
    if (n > 0)
        k = backend_ == QMMM_BACKEND_CUDA ? GpuRegistry<DipolesGpu>::get().make(sites, device_, precision_)
                                          : make_dipole_kernels_cpu(sites, n_threads_, precision_);
    std::vector<double> zero, host_mu;
    if (k) {
        if (!mu) zero.assign(static_cast<size_t>(3 * n), 0.0), mu = zero.data();
        k->set_mu(mu);
        if (precision_ == QMMM_PRECISION_SINGLE) host_mu.assign(mu, mu + 3 * n);
    }
    // only now: a failure above leaves the old sites
    k_ = std::move(k), xyz_ = std::move(sites), mu_ = std::move(host_mu), n_ = n;
}

void DipoleTerm::set_mu(const double *mu) {
    if (!k_) return;
    k_->set_mu(mu);
    if (precision_ == QMMM_PRECISION_SINGLE) std::copy(mu, mu + 3 * n_, mu_.begin());
}

bool DipoleTerm::add_host(const double *p, double *u, double *g) const {
    double v = 0, gx = 0, gy = 0, gz = 0;
    for (int64_t k = 0; k < n_; ++k) {
        const double dx = p[0] - xyz_[3 * k], dy = p[1] - xyz_[3 * k + 1], dz = p[2] - xyz_[3 * k + 2];
        const double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 < kSingularRadius2) return false;
        dipole_pair(dx, dy, dz, 1.0 / std::sqrt(d2), mu_[3 * k], mu_[3 * k + 1], mu_[3 * k + 2], v, gx, gy, gz);
    }
    if (!std::isfinite(v) || !std::isfinite(gx) || !std::isfinite(gy) || !std::isfinite(gz)) return false;
    *u += v;
    if (g) g[0] += gx, g[1] += gy, g[2] += gz;
    return true;
}

void DipoleTerm::report(int64_t n, const double *xyz) const {
    for (int64_t i = 0; i < n; ++i) {
        const double *p = xyz + 3 * i;
        for (int64_t k = 0; k < n_; ++k) {
            const double dx = p[0] - xyz_[3 * k], dy = p[1] - xyz_[3 * k + 1], dz = p[2] - xyz_[3 * k + 2];
            if (dx * dx + dy * dy + dz * dz < kSingularRadius2)
                throw Error(QMMM_ERR_SINGULAR,
                            strfmt("point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of dipole site %lld: a "
                                   "point dipole has no finite potential there",
                                   ix(i), p[0], p[1], p[2], ix(k)));
        }
    }
    throw Error(QMMM_ERR_NONFINITE, "the dipoles' potential or gradient at a point is beyond double's range (a dipole "
                                    "too large for its distance to the point); no point is on a dipole site");
}

// SINGLE: a point that float puts on a site (within the singular radius in float offsets), or whose float term
// overflows, is recomputed in double on the host, whichever backend ran the call: its term is DOUBLE's, and only a
// point on a site in double is SINGULAR.
void DipoleTerm::add(int64_t n, const double *xyz, double *u, double *grad) {
    if (!k_ || n == 0) return;
    char *bad = nullptr;
    if (precision_ == QMMM_PRECISION_SINGLE) bad_.assign(static_cast<size_t>(n), 0), bad = bad_.data();
    if (k_->add(n, xyz, u, grad, bad)) return;
    if (!bad) report(n, xyz);
    for (int64_t i = 0; i < n; ++i)
        if (bad[i] && !add_host(xyz + 3 * i, u + i, grad ? grad + 3 * i : nullptr)) report(n, xyz);
}

std::unique_ptr<FieldBackend> wrap_dipoles(std::unique_ptr<FieldBackend> inner, std::shared_ptr<DipoleTerm> term) {
    return std::make_unique<FieldDipoles>(std::move(inner), std::move(term));
}

}  // namespace qmmm
