// field_charges.cpp -- the screened charges' term on the CPU, and the backend of a point-charge field.
#include "field_charges.hpp"

#include <algorithm>
#include <cmath>

#include "cpu_parallel.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 8;

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
// As in field_cpu.cpp: non-trapping math lets the compiler compute 1/sqrt on every lane and select.
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")

// sum_m -q_m / d over the charges beyond their cut-off (lanes by position, a fixed order); *near is set when a
// charge is within its cut-off, whose full term screened_sum then adds.
// The body, inlined into one multiversioned function per type below (clang has no target_clones templates).
template <class T>
__attribute__((always_inline)) inline T far_sum_body(int64_t n, const T *__restrict x, const T *__restrict y, const T *__restrict z,
                      const T *__restrict q, const T *__restrict cut2, T px, T py, T pz, bool *near) {
    T acc[kLanes] = {};
    int any = 0;
    const int64_t full = n - n % kLanes;
    for (int64_t i = 0; i < full; i += kLanes)
        for (int l = 0; l < kLanes; ++l) {
            const T dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const T d2 = dx * dx + dy * dy + dz * dz;
            const bool far = d2 >= cut2[i + l];
            any |= !far;
            acc[l] += far ? -q[i + l] / std::sqrt(d2) : T(0);
        }
    for (int64_t i = full; i < n; ++i) {
        const T dx = px - x[i], dy = py - y[i], dz = pz - z[i];
        const T d2 = dx * dx + dy * dy + dz * dz;
        const bool far = d2 >= cut2[i];
        any |= !far;
        acc[i - full] += far ? -q[i] / std::sqrt(d2) : T(0);
    }
    *near = any != 0;
    T s = 0;
    for (int l = 0; l < kLanes; ++l) s += acc[l];
    return s;
}

QMMM_CLONES double far_sum_double(int64_t n, const double *__restrict x, const double *__restrict y,
                                  const double *__restrict z, const double *__restrict q, const double *__restrict cut2,
                                  double px, double py, double pz, bool *near) {
    return far_sum_body<double>(n, x, y, z, q, cut2, px, py, pz, near);
}
QMMM_CLONES float far_sum_float(int64_t n, const float *__restrict x, const float *__restrict y,
                                const float *__restrict z, const float *__restrict q, const float *__restrict cut2,
                                float px, float py, float pz, bool *near) {
    return far_sum_body<float>(n, x, y, z, q, cut2, px, py, pz, near);
}
inline double far_sum(int64_t n, const double *x, const double *y, const double *z, const double *q, const double *c,
                      double px, double py, double pz, bool *near) {
    return far_sum_double(n, x, y, z, q, c, px, py, pz, near);
}
inline float far_sum(int64_t n, const float *x, const float *y, const float *z, const float *q, const float *c,
                     float px, float py, float pz, bool *near) {
    return far_sum_float(n, x, y, z, q, c, px, py, pz, near);
}

#pragma GCC pop_options

template <class T>
class ScreenedCpu final : public ScreenedTerm {
public:
    ScreenedCpu(const ScreenedCharges &c, int n_threads) : kind_(c.kind), n_(c.n), threads_(n_threads) {
        auto cast = [](const std::vector<double> &v) { return std::vector<T>(v.begin(), v.end()); };
        x_ = cast(c.x), y_ = cast(c.y), z_ = cast(c.z), q_ = cast(c.q), a_ = cast(c.a), b_ = cast(c.b);
        cut2_ = cast(c.cut2);
    }
    int start(int64_t n, const double *xyz) override {
        if (static_cast<int64_t>(s_.size()) < n) s_.resize(static_cast<size_t>(n));
        const int nt = call_threads(threads_, static_cast<double>(n) * static_cast<double>(n_));
        constexpr int64_t kTile = 8;
        parallel_tiles(nt, (n + kTile - 1) / kTile, [&](int64_t t) {
            for (int64_t p = t * kTile; p < std::min(n, (t + 1) * kTile); ++p) s_[p] = point(xyz + 3 * p);
        });
        return QMMM_SUCCESS;
    }
    int finish(int64_t n, double *u) override {
        for (int64_t p = 0; p < n; ++p) u[p] += s_[p];
        return QMMM_SUCCESS;
    }

private:
    double point(const double *p) const {
        const T px = static_cast<T>(p[0]), py = static_cast<T>(p[1]), pz = static_cast<T>(p[2]);
        bool near = false;
        const T far = far_sum(n_, x_.data(), y_.data(), z_.data(), q_.data(), cut2_.data(), px, py, pz, &near);
        if (!near) return static_cast<double>(far);
        T close = 0;  // the charges within their cut-off, in index order
        for (int64_t m = 0; m < n_; ++m) {
            const T dx = px - x_[m], dy = py - y_[m], dz = pz - z_[m];
            const T d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < cut2_[m]) close += -q_[m] * screened_inv_r<T>(kind_, d2, a_[m], b_[m]);
        }
        return static_cast<double>(far + close);
    }

    int kind_;
    int64_t n_;
    int threads_;
    std::vector<T> x_, y_, z_, q_, a_, b_, cut2_;
    std::vector<double> s_;  // the last start's sums; grows, never shrinks (no allocation per call)
};

class FieldCharges final : public FieldBackend {
public:
    FieldCharges(std::unique_ptr<FieldBackend> inner, std::unique_ptr<ScreenedTerm> screened, int backend,
                 int precision, int device)
        : inner_(std::move(inner)), screened_(std::move(screened)), backend_(backend), precision_(precision),
          device_(device) {}

    int eval(int64_t n, const double *xyz, double *u) override {
        if (screened_)
            if (int s = screened_->start(n, xyz)) return s;
        if (inner_) {
            if (int s = inner_->eval(n, xyz, u)) return s;
        } else {
            std::fill(u, u + n, 0.0);
        }
        return screened_ ? screened_->finish(n, u) : QMMM_SUCCESS;
    }
    int eval_async(int64_t n, const double *xyz, double *u) override {
        if (screened_)
            if (int s = screened_->start(n, xyz)) return s;
        if (inner_) {
            if (int s = inner_->eval_async(n, xyz, u)) return s;
        } else {
            std::fill(u, u + n, 0.0);
        }
        // On the CPU the whole value is in u when the call returns (the header's promise; a caller may reuse u's
        // memory, as a Fortran temporary is freed, before wait); the GPU's part lands only at wait, so the screened
        // part is added after it.
        if (backend_ == QMMM_BACKEND_CPU) return screened_ ? screened_->finish(n, u) : QMMM_SUCCESS;
        pending_n_ = n, pending_u_ = u;
        return QMMM_SUCCESS;
    }
    int wait() override {
        if (inner_)
            if (int s = inner_->wait()) return s;
        if (screened_ && pending_u_) {
            const int s = screened_->finish(pending_n_, pending_u_);
            pending_u_ = nullptr;
            return s;
        }
        return QMMM_SUCCESS;
    }
    int backend() const override { return backend_; }
    int precision() const override { return inner_ ? inner_->precision() : precision_; }
    int device() const override { return device_; }
    // The unscreened charges' kernels; screened charges alone run the generic kernels (or the GPU).
    int cpu_isa() const override {
        if (inner_) return inner_->cpu_isa();
        return backend_ == QMMM_BACKEND_CPU ? QMMM_CPU_ISA_GENERIC : QMMM_CPU_ISA_NONE;
    }
    const FieldBackend *wrapped() const override { return inner_.get(); }
    void low_latency(int *running, int64_t *launches) const override {
        if (inner_) inner_->low_latency(running, launches);
        else *running = 0, *launches = 0;
    }

private:
    std::unique_ptr<FieldBackend> inner_;
    std::unique_ptr<ScreenedTerm> screened_;
    int backend_, precision_, device_;
    int64_t pending_n_ = 0;
    double *pending_u_ = nullptr;
};

}  // namespace

std::unique_ptr<ScreenedTerm> make_screened_cpu(const ScreenedCharges &c, int precision, int n_threads) {
    if (precision == QMMM_PRECISION_SINGLE) return std::make_unique<ScreenedCpu<float>>(c, n_threads);
    return std::make_unique<ScreenedCpu<double>>(c, n_threads);
}

std::unique_ptr<FieldBackend> make_field_charges(std::unique_ptr<FieldBackend> inner,
                                                 std::unique_ptr<ScreenedTerm> screened, int backend,
                                                 int precision, int device) {
    return std::make_unique<FieldCharges>(std::move(inner), std::move(screened), backend, precision, device);
}

}  // namespace qmmm
