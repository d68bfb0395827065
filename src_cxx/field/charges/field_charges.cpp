// field_charges.cpp -- the screened charges' term on the CPU, and the backend of a point-charge field.
#include "charges/field_charges.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu_parallel.hpp"
#include "backend/field_factory.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 8;

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
// As in field_cpu.cpp: non-trapping math lets the compiler compute 1/sqrt on every lane and select.
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")
// The builtins: std::sqrt from <cmath> is not inlined under the pragma above (its errno-setting call then blocks
// vectorisation of every loop below).
__attribute__((always_inline)) inline double root(double v) { return __builtin_sqrt(v); }
__attribute__((always_inline)) inline float root(float v) { return __builtin_sqrtf(v); }

// One lane's far term: q / d beyond the cut-off (q: the charge as the electron feels it, ScreenedCharges::q), 0
// within, where n_near counts it.
template <class T>
__attribute__((always_inline)) inline void far_lane(const T *__restrict x, const T *__restrict y, const T *__restrict z,
                                                    const T *__restrict q, const T *__restrict cut2, T px, T py, T pz,
                                                    int64_t i, T &acc, T &n_near) {
    const T dx = px - x[i], dy = py - y[i], dz = pz - z[i];
    const T d2 = dx * dx + dy * dy + dz * dz;
    n_near += d2 < cut2[i] ? T(1) : T(0);
    acc += d2 >= cut2[i] ? q[i] / root(d2) : T(0);
}

// sum_m q_m / d over the charges beyond their cut-off (lanes by position, a fixed order); *near is set when a
// charge is within its cut-off, whose full term the near pass then adds. The body, inlined into one multiversioned
// function per type below (clang has no target_clones templates).
template <class T>
__attribute__((always_inline)) inline T far_sum_body(int64_t n, const T *__restrict x, const T *__restrict y, const T *__restrict z,
                      const T *__restrict q, const T *__restrict cut2, T px, T py, T pz, bool *near) {
    // Lanes by position, one vector of them (omp simd: GCC 12 leaves this loop scalar without it); the near
    // charges are counted in T lanes too.
    T acc[kLanes] = {}, n_near[kLanes] = {};
    const int64_t full = n - n % kLanes;
    for (int64_t i = 0; i < full; i += kLanes)
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) far_lane(x, y, z, q, cut2, px, py, pz, i + l, acc[l], n_near[l]);
    for (int64_t i = full; i < n; ++i) far_lane(x, y, z, q, cut2, px, py, pz, i, acc[i - full], n_near[i - full]);
    T s = 0, k = 0;
    for (int l = 0; l < kLanes; ++l) s += acc[l], k += n_near[l];
    *near = k > T(0);
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

// exp(x) and expm1(x) for x <= 0 without a branch or a call, so that the EXP charges' loop vectorises: x = k ln 2 + r,
// |r| <= ln 2 / 2, expm1(r) by its Taylor series (to r^13 in double, r^7 in float: below half an ulp), then
// exp(x) = 2^k (1 + expm1(r)). 2^k is built from k's bits as 2^(k+64) 2^-64, which reaches the subnormal range
// (x down to -745 in double). Measured against expm1l over x in [-745, 0]: 2 ulp at most.
template <class T>
struct ExpBits;
template <>
struct ExpBits<double> {
    using U = uint64_t;
    static constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52: k lands in the low bits
    static constexpr double kLow = -745.0, kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
    static constexpr int kMant = 52, kBias = 1023;
    __attribute__((always_inline)) static double series(double r) {
        double p = 1.0 / 6227020800.0;
        p = p * r + 1.0 / 479001600.0, p = p * r + 1.0 / 39916800.0, p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0, p = p * r + 1.0 / 40320.0, p = p * r + 1.0 / 5040.0, p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0, p = p * r + 1.0 / 24.0, p = p * r + 1.0 / 6.0, p = p * r + 0.5;
        return r + r * r * p;
    }
};
template <>
struct ExpBits<float> {
    using U = uint32_t;
    static constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
    static constexpr float kLow = -104.0f, kLn2Hi = 0.693145751953125f, kLn2Lo = 1.428606765330187e-06f;
    static constexpr int kMant = 23, kBias = 127;
    __attribute__((always_inline)) static float series(float r) {
        float p = 1.0f / 5040.0f;
        p = p * r + 1.0f / 720.0f, p = p * r + 1.0f / 120.0f, p = p * r + 1.0f / 24.0f, p = p * r + 1.0f / 6.0f;
        p = p * r + 0.5f;
        return r + r * r * p;
    }
};

template <class T>
__attribute__((always_inline)) inline void exp_expm1(T x, T *e, T *em) {
    using B = ExpBits<T>;
    using U = typename B::U;
    x = x < B::kLow ? B::kLow : x;
    T kd = x * T(1.4426950408889634) + B::kMagic;
    U kb;
    std::memcpy(&kb, &kd, sizeof kb);
    kd -= B::kMagic;
    const T r = (x - kd * B::kLn2Hi) - kd * B::kLn2Lo;
    const T m = B::series(r);
    const U sb = (kb + U(B::kBias + 64)) << B::kMant;  // 2^(k+64); k >= -1075 (double), -150 (float)
    T s;
    std::memcpy(&s, &sb, sizeof s);
    s *= T(5.42101086242752217e-20);  // 2^-64
    *e = s + s * m;
    *em = s * m + (s - T(1));
}

// The EXP charges' sums, far and near apart: far[l] as far_sum_body's lanes, near[l] the charges within their
// cut-off (the factor exp_screen_factor gives, with exp_expm1 in place of the library's functions). *singular is
// set when a near charge lies within the singular radius (the exact rules of screened_inv_r then decide). The far
// lanes are far_sum_body's to the bit, so a point's value is the same whichever of the two loops summed its far
// charges.
template <class T>
__attribute__((always_inline)) inline void exp_lane(const T *__restrict x, const T *__restrict y, const T *__restrict z,
                                                    const T *__restrict q, const T *__restrict a,
                                                    const T *__restrict b, const T *__restrict cut2, T px, T py, T pz,
                                                    int64_t i, T &far, T &near, T &n_near, T &n_sing) {
    const T dx = px - x[i], dy = py - y[i], dz = pz - z[i];
    const T d2 = dx * dx + dy * dy + dz * dz;
    const bool is_far = d2 >= cut2[i];
    n_near += is_far ? T(0) : T(1);
    n_sing += (d2 < cut2[i]) & (d2 < T(kSingularRadius2)) ? T(1) : T(0);
    const T xe = -b[i] * d2;
    T e, em;
    exp_expm1(xe, &e, &em);
    const T f = xe < T(kExpFormSwitch) ? T(1) - a[i] * e : (T(1) - a[i]) - a[i] * em;
    far += is_far ? q[i] / root(d2) : T(0);  // far_lane's term, to the bit
    near += is_far ? T(0) : q[i] * f / root(d2);
}

template <class T>
__attribute__((always_inline)) inline void exp_sum_body(int64_t n, const T *__restrict x, const T *__restrict y,
                                                        const T *__restrict z, const T *__restrict q,
                                                        const T *__restrict a, const T *__restrict b,
                                                        const T *__restrict cut2, T px, T py, T pz, T *far_out,
                                                        T *near_out, bool *any_near, bool *singular) {
    T far[kLanes] = {}, near[kLanes] = {}, n_near[kLanes] = {}, n_sing[kLanes] = {};
    const int64_t full = n - n % kLanes;
    for (int64_t i = 0; i < full; i += kLanes)
#pragma omp simd
        for (int l = 0; l < kLanes; ++l)
            exp_lane(x, y, z, q, a, b, cut2, px, py, pz, i + l, far[l], near[l], n_near[l], n_sing[l]);
    for (int64_t i = full; i < n; ++i)
        exp_lane(x, y, z, q, a, b, cut2, px, py, pz, i, far[i - full], near[i - full], n_near[i - full],
                 n_sing[i - full]);
    T sf = 0, sn = 0, k = 0, ks = 0;
    for (int l = 0; l < kLanes; ++l) sf += far[l], sn += near[l], k += n_near[l], ks += n_sing[l];
    *singular = ks > T(0), *any_near = k > T(0);
    *far_out = sf, *near_out = sn;
}

QMMM_CLONES void exp_sum_double(int64_t n, const double *__restrict x, const double *__restrict y,
                                const double *__restrict z, const double *__restrict q, const double *__restrict a,
                                const double *__restrict b, const double *__restrict cut2, double px, double py,
                                double pz, double *far, double *near, bool *any, bool *singular) {
    exp_sum_body<double>(n, x, y, z, q, a, b, cut2, px, py, pz, far, near, any, singular);
}
QMMM_CLONES void exp_sum_float(int64_t n, const float *__restrict x, const float *__restrict y,
                               const float *__restrict z, const float *__restrict q, const float *__restrict a,
                               const float *__restrict b, const float *__restrict cut2, float px, float py, float pz,
                               float *far, float *near, bool *any, bool *singular) {
    exp_sum_body<float>(n, x, y, z, q, a, b, cut2, px, py, pz, far, near, any, singular);
}
inline void exp_sum(int64_t n, const double *x, const double *y, const double *z, const double *q, const double *a,
                    const double *b, const double *c, double px, double py, double pz, double *far, double *near,
                    bool *any, bool *singular) {
    exp_sum_double(n, x, y, z, q, a, b, c, px, py, pz, far, near, any, singular);
}
inline void exp_sum(int64_t n, const float *x, const float *y, const float *z, const float *q, const float *a,
                    const float *b, const float *c, float px, float py, float pz, float *far, float *near,
                    bool *any, bool *singular) {
    exp_sum_float(n, x, y, z, q, a, b, c, px, py, pz, far, near, any, singular);
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
        // Soft EXP screening (most charges within their cut-off, as b <= ~1 bohr^-2 makes them) sums far and near
        // charges in one pass; else the far pass runs alone and the near one only where a charge is near. Both give
        // the same bits (exp_sum_body); the call's first point chooses, so the choice costs one point's pass.
        fused_ = n > 0 && kind_ == kScreenExp && near_share(xyz) > 0.25;
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
    // The share of the charges within their cut-off of point p.
    double near_share(const double *p) const {
        const T px = static_cast<T>(p[0]), py = static_cast<T>(p[1]), pz = static_cast<T>(p[2]);
        int64_t k = 0;
        for (int64_t m = 0; m < n_; ++m) {
            const T dx = px - x_[m], dy = py - y_[m], dz = pz - z_[m];
            k += dx * dx + dy * dy + dz * dz < cut2_[m];
        }
        return n_ > 0 ? static_cast<double>(k) / static_cast<double>(n_) : 0.0;
    }

    double point(const double *p) const {
        const T px = static_cast<T>(p[0]), py = static_cast<T>(p[1]), pz = static_cast<T>(p[2]);
        bool near = false;
        T far = 0;
        if (kind_ == kScreenExp) {
            T near_sum = 0;
            bool singular = false;
            if (!fused_) {
                far = far_sum(n_, x_.data(), y_.data(), z_.data(), q_.data(), cut2_.data(), px, py, pz, &near);
                if (!near) return static_cast<double>(far);
            }
            exp_sum(n_, x_.data(), y_.data(), z_.data(), q_.data(), a_.data(), b_.data(), cut2_.data(), px, py, pz,
                    &far, &near_sum, &near, &singular);
            if (!near) return static_cast<double>(far);  // as the far pass alone returns it
            if (!singular) return static_cast<double>(far + near_sum);
        } else {
            far = far_sum(n_, x_.data(), y_.data(), z_.data(), q_.data(), cut2_.data(), px, py, pz, &near);
            if (!near) return static_cast<double>(far);
        }
        T close = 0;  // the charges within their cut-off, in index order (GAUSSIAN; EXP on top of a charge)
        for (int64_t m = 0; m < n_; ++m) {
            const T dx = px - x_[m], dy = py - y_[m], dz = pz - z_[m];
            const T d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < cut2_[m]) close += q_[m] * screened_inv_r_xyz<T>(kind_, dx, dy, dz, a_[m], b_[m]);
        }
        return static_cast<double>(far + close);
    }

    int kind_;
    int64_t n_;
    int threads_;
    bool fused_ = false;  // this call sums EXP charges in one pass (start)
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
    // The screened term gives a point the same bits in any batch (ScreenedCpu: either pass; the GPU: a block a point),
    // so walkers share a call where the cells' backend lets them. Device-resident points: without screened charges.
    int64_t merge_from() const override { return inner_ ? inner_->merge_from() : 1; }
    int eval_device(int64_t n, const double *d_xyz, double *d_u, int64_t n_walkers, const int64_t *offsets,
                    double *d_sums, void *stream) override {
        if (!screened_ && inner_) return inner_->eval_device(n, d_xyz, d_u, n_walkers, offsets, d_sums, stream);
        return FieldBackend::eval_device(n, d_xyz, d_u, n_walkers, offsets, d_sums, stream);
    }
    int wait_device() override { return inner_ ? inner_->wait_device() : QMMM_SUCCESS; }

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
