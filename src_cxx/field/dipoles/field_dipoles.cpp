// field_dipoles.cpp -- point dipoles on a field: the CPU kernels, the term's checks and messages, and the wrapper
// that adds the term to a field's values (field_dipoles.hpp).
//
// CPU: threads take tiles of points; a point's sum runs over the sites in index order, vectorised across the sites
// (lanes of a fixed width, added in a fixed order), so its bits depend on neither the thread count nor the batch.
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

class DipoleCpu final : public DipoleKernels {
public:
    DipoleCpu(const std::vector<double> &xyz, int n_threads)
        : m_(static_cast<int64_t>(xyz.size() / 3)), nt_(n_threads) {
        for (std::vector<double> *v : {&x_, &y_, &z_, &mx_, &my_, &mz_}) v->assign(static_cast<size_t>(m_), 0.0);
        for (int64_t k = 0; k < m_; ++k) x_[k] = xyz[3 * k], y_[k] = xyz[3 * k + 1], z_[k] = xyz[3 * k + 2];
    }
    void set_mu(const double *mu) override {
        for (int64_t k = 0; k < m_; ++k) mx_[k] = mu[3 * k], my_[k] = mu[3 * k + 1], mz_[k] = mu[3 * k + 2];
    }
    void add(int64_t n, const double *xyz, double *u, double *grad, bool *bad) override {
        const int64_t tiles = (n + kPointTile - 1) / kPointTile;
        std::vector<char> tile_bad(static_cast<size_t>(tiles), 0);
        const int nt = call_threads(nt_, static_cast<double>(n) * static_cast<double>(m_));
        parallel_tiles(nt, tiles, [&](int64_t t) {
            const int64_t end = std::min(n, (t + 1) * kPointTile);
            for (int64_t i = t * kPointTile; i < end; ++i) {
                double out[4];
                int near = 0;
                (grad ? dipole_point : dipole_value)(m_, x_.data(), y_.data(), z_.data(), mx_.data(), my_.data(),
                                                     mz_.data(), xyz + 3 * i, out, &near);
                if (near || !std::isfinite(out[0]) || !std::isfinite(out[1]) || !std::isfinite(out[2]) ||
                    !std::isfinite(out[3]))
                    tile_bad[t] = 1;
                u[i] += out[0];
                if (grad) grad[3 * i] += out[1], grad[3 * i + 1] += out[2], grad[3 * i + 2] += out[3];
            }
        });
        *bad = false;
        for (char b : tile_bad) *bad = *bad || b;
    }

private:
    int64_t m_;
    int nt_;
    std::vector<double> x_, y_, z_, mx_, my_, mz_;
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

std::unique_ptr<DipoleKernels> make_dipole_kernels_cpu(const std::vector<double> &xyz, int n_threads) {
    return std::make_unique<DipoleCpu>(xyz, n_threads);
}

void DipoleTerm::set_sites(int64_t n, const double *xyz, const double *mu) {
    std::vector<double> sites(xyz, xyz + 3 * n);
    std::unique_ptr<DipoleKernels> k;
    if (n > 0)
        k = backend_ == QMMM_BACKEND_CUDA ? GpuRegistry<DipolesGpu>::get().make(sites, device_)
                                          : make_dipole_kernels_cpu(sites, n_threads_);
    std::vector<double> zero;
    if (k) {
        if (!mu) zero.assign(static_cast<size_t>(3 * n), 0.0), mu = zero.data();
        k->set_mu(mu);
    }
    k_ = std::move(k), xyz_ = std::move(sites), n_ = n;  // only now: a failure above leaves the old sites
}

void DipoleTerm::set_mu(const double *mu) {
    if (k_) k_->set_mu(mu);
}

void DipoleTerm::add(int64_t n, const double *xyz, double *u, double *grad) {
    if (!k_ || n == 0) return;
    bool bad = false;
    k_->add(n, xyz, u, grad, &bad);
    if (!bad) return;
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

std::unique_ptr<FieldBackend> wrap_dipoles(std::unique_ptr<FieldBackend> inner, std::shared_ptr<DipoleTerm> term) {
    return std::make_unique<FieldDipoles>(std::move(inner), std::move(term));
}

}  // namespace qmmm
