// field_charges.cpp -- the screened charges' term on the CPU, and the backend of a point-charge field.
#include "charges/field_charges.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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

// sum_m q_m / d over the charges beyond their cut-off in [i0, i1) (multiples of kLanes: the charges' planes are
// padded to whole blocks with terms of exactly 0), lanes by position (a fixed order; omp simd: GCC 12 leaves the
// loop scalar without it) added into the caller's acc[], listing in blocks[] the start of every block with a charge
// within its cut-off: the near terms then visit those blocks only, in index order, instead of every charge again.
// A lane takes the same charges in the same order whatever the chunking, and every block runs the same vector code
// (no scalar tail, whose contraction into FMAs differs), so exp_lane's far term is far_lane's to the bit: a point's
// value is the same whichever pass summed its far charges.
template <class T>
__attribute__((always_inline)) inline int far_chunk_body(int64_t i0, int64_t i1, const T *__restrict x,
                                                         const T *__restrict y, const T *__restrict z,
                                                         const T *__restrict q, const T *__restrict cut2, T px, T py,
                                                         T pz, T *__restrict acc, int64_t *__restrict blocks) {
    T sum[kLanes];
    for (int l = 0; l < kLanes; ++l) sum[l] = acc[l];
    int nb = 0;
    for (int64_t i = i0; i < i1; i += kLanes) {
        T near[kLanes] = {};
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) far_lane(x, y, z, q, cut2, px, py, pz, i + l, sum[l], near[l]);
        T k = 0;
        for (int l = 0; l < kLanes; ++l) k += near[l];
        blocks[nb] = i;
        nb += k > T(0);
    }
    for (int l = 0; l < kLanes; ++l) acc[l] = sum[l];
    return nb;
}

QMMM_CLONES int far_chunk_double(int64_t i0, int64_t i1, const double *__restrict x,
                                 const double *__restrict y, const double *__restrict z, const double *__restrict q,
                                 const double *__restrict cut2, double px, double py, double pz, double *acc,
                                 int64_t *blocks) {
    return far_chunk_body<double>(i0, i1, x, y, z, q, cut2, px, py, pz, acc, blocks);
}
QMMM_CLONES int far_chunk_float(int64_t i0, int64_t i1, const float *__restrict x,
                                const float *__restrict y, const float *__restrict z, const float *__restrict q,
                                const float *__restrict cut2, float px, float py, float pz, float *acc,
                                int64_t *blocks) {
    return far_chunk_body<float>(i0, i1, x, y, z, q, cut2, px, py, pz, acc, blocks);
}
inline int far_chunk(int64_t i0, int64_t i1, const double *x, const double *y, const double *z,
                     const double *q, const double *c, double px, double py, double pz, double *acc, int64_t *blocks) {
    return far_chunk_double(i0, i1, x, y, z, q, c, px, py, pz, acc, blocks);
}
inline int far_chunk(int64_t i0, int64_t i1, const float *x, const float *y, const float *z,
                     const float *q, const float *c, float px, float py, float pz, float *acc, int64_t *blocks) {
    return far_chunk_float(i0, i1, x, y, z, q, c, px, py, pz, acc, blocks);
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

// One EXP charge into its lane's sums, far and near apart: far as far_lane's, to the bit; near the charges within
// their cut-off (the factor exp_screen_factor gives, with exp_expm1 in place of the library's functions); n_sing
// counts near charges within the singular radius (the exact rules of screened_inv_r then decide).
template <class T>
__attribute__((always_inline)) inline void exp_lane(const T *__restrict x, const T *__restrict y, const T *__restrict z,
                                                    const T *__restrict q, const T *__restrict a,
                                                    const T *__restrict b, const T *__restrict cut2,
                                                    const T *__restrict xlo, T px, T py, T pz, int64_t i, T &far,
                                                    T &near, T &n_near, T &n_sing) {
    const T dx = px - x[i], dy = py - y[i], dz = pz - z[i];
    const T d2 = dx * dx + dy * dy + dz * dz;
    const bool is_far = d2 >= cut2[i];
    n_near += is_far ? T(0) : T(1);
    n_sing += (d2 < cut2[i]) & (d2 < T(kSingularRadius2)) ? T(1) : T(0);
    // A far lane's exp is computed and dropped: x is held at the cut-off's -b cut2 (xlo), so that it stays in the
    // normal range (x down to -745 gave subnormal intermediates, which cost Intel cores a microcode assist per
    // vector). A near lane has d2 < cut2, so -b d2 >= xlo in any rounding: its x, and its bits, are unchanged.
    const T x0 = -b[i] * d2, xe = x0 < xlo[i] ? xlo[i] : x0;
    T e, em;
    exp_expm1(xe, &e, &em);
    const T f = xe < T(kExpFormSwitch) ? T(1) - a[i] * e : (T(1) - a[i]) - a[i] * em;
    far += is_far ? q[i] / root(d2) : T(0);  // far_lane's term, to the bit
    near += is_far ? T(0) : q[i] * f / root(d2);
}

// exp_lane over charges [i0, i1) (multiples of kLanes, as far_chunk_body's), into the caller's lanes: the whole set in
// one pass (soft screening, most charges near), or one listed block of far_chunk_body's (the lanes' far sums then are
// not used). Lane l takes the same charges in the same order either way, so a near lane's sum has the same bits
// whether its blocks came one by one or in one pass (a far lane adds exactly 0 to it).
template <class T>
__attribute__((always_inline)) inline void exp_range_body(int64_t i0, int64_t i1, const T *__restrict x,
                                                          const T *__restrict y, const T *__restrict z,
                                                          const T *__restrict q, const T *__restrict a,
                                                          const T *__restrict b, const T *__restrict cut2,
                                                          const T *__restrict xlo, T px, T py, T pz, T *far_lanes,
                                                          T *near_lanes) {
    // far_lanes: kLanes sums; near_lanes: near, n_near, n_sing, kLanes each. Local copies, so the stores cannot alias
    // the charges.
    T far[kLanes], near[kLanes], n_near[kLanes], n_sing[kLanes];
    for (int l = 0; l < kLanes; ++l)
        far[l] = far_lanes[l], near[l] = near_lanes[l], n_near[l] = near_lanes[kLanes + l],
        n_sing[l] = near_lanes[2 * kLanes + l];
    for (int64_t i = i0; i < i1; i += kLanes)
#pragma omp simd
        for (int l = 0; l < kLanes; ++l)
            exp_lane(x, y, z, q, a, b, cut2, xlo, px, py, pz, i + l, far[l], near[l], n_near[l], n_sing[l]);
    for (int l = 0; l < kLanes; ++l)
        far_lanes[l] = far[l], near_lanes[l] = near[l], near_lanes[kLanes + l] = n_near[l],
        near_lanes[2 * kLanes + l] = n_sing[l];
}

QMMM_CLONES void exp_range_double(int64_t i0, int64_t i1, const double *__restrict x,
                                  const double *__restrict y, const double *__restrict z, const double *__restrict q,
                                  const double *__restrict a, const double *__restrict b,
                                  const double *__restrict cut2, const double *__restrict xlo, double px, double py,
                                  double pz, double *far, double *near) {
    exp_range_body<double>(i0, i1, x, y, z, q, a, b, cut2, xlo, px, py, pz, far, near);
}
QMMM_CLONES void exp_range_float(int64_t i0, int64_t i1, const float *__restrict x,
                                 const float *__restrict y, const float *__restrict z, const float *__restrict q,
                                 const float *__restrict a, const float *__restrict b, const float *__restrict cut2,
                                 const float *__restrict xlo, float px, float py, float pz, float *far, float *near) {
    exp_range_body<float>(i0, i1, x, y, z, q, a, b, cut2, xlo, px, py, pz, far, near);
}
inline void exp_range(int64_t i0, int64_t i1, const double *x, const double *y, const double *z,
                      const double *q, const double *a, const double *b, const double *c, const double *xlo,
                      double px, double py, double pz, double *far, double *near) {
    exp_range_double(i0, i1, x, y, z, q, a, b, c, xlo, px, py, pz, far, near);
}
inline void exp_range(int64_t i0, int64_t i1, const float *x, const float *y, const float *z,
                      const float *q, const float *a, const float *b, const float *c, const float *xlo, float px,
                      float py, float pz, float *far, float *near) {
    exp_range_float(i0, i1, x, y, z, q, a, b, c, xlo, px, py, pz, far, near);
}

#pragma GCC pop_options

template <class T>
class ScreenedCpu final : public ScreenedTerm {
    // A screened pair's cost in plain pairs, for call_threads: one thread's rate on the H100 host's Xeon (the
    // legacy-loop runs, 10^4-10^5 charges) is 1,150-1,420 plain pairs/us, 235-510 screened (EXP soft / hard, Gaussian).
    static constexpr double kPairCost = 3.0;

public:
    ScreenedCpu(const ScreenedCharges &c, int n_threads) : kind_(c.kind), n_(c.n), threads_(n_threads) {
        // Padded to whole blocks of kLanes with charges whose terms are exactly 0 in either pass: q = 0, beyond
        // any point (d2 overflows to Inf: 0 / Inf), never near (cut2 = -Inf), and x held at -1 in exp_lane.
        n_pad_ = (n_ + kLanes - 1) / kLanes * kLanes;
        auto cast = [&](const std::vector<double> &v, T pad) {
            std::vector<T> w(v.begin(), v.end());
            w.resize(static_cast<size_t>(n_pad_), pad);
            return w;
        };
        const T far_away = std::numeric_limits<T>::max();
        x_ = cast(c.x, far_away), y_ = cast(c.y, far_away), z_ = cast(c.z, far_away), q_ = cast(c.q, 0);
        a_ = cast(c.a, 0), b_ = cast(c.b, 1), cut2_ = cast(c.cut2, -std::numeric_limits<T>::infinity());
        xlo_.assign(static_cast<size_t>(n_pad_), T(-1));
        for (int64_t m = 0; m < n_; ++m) xlo_[m] = -b_[m] * cut2_[m];  // as exp_lane forms x, in T
    }
    int start(int64_t n, const double *xyz) override {
        if (static_cast<int64_t>(s_.size()) < n) s_.resize(static_cast<size_t>(n));
        const int nt = call_threads(threads_, kPairCost * static_cast<double>(n) * static_cast<double>(n_));
        // Soft EXP screening (most charges within their cut-off, as b <= ~1 bohr^-2 makes them) sums far and near
        // charges in one pass; else the far pass lists the blocks with a near charge and the near terms visit those
        // only. Both give the same bits (exp_range_body); the call's first point chooses, so the choice costs one point's pass.
        fused_ = n > 0 && kind_ == kScreenExp && near_share(xyz) > 0.25;
        // Tiles of up to 8 points, at least two a thread where the points allow (22 points on 16 threads: one point
        // a tile, not three tiles of 8 that leave 13 threads idle); a point's sum is its own whatever the tile.
        const int64_t tile = std::clamp<int64_t>(n / (2 * int64_t{nt}), 1, 8);
        parallel_tiles(nt, (n + tile - 1) / tile, [&](int64_t t) {
            for (int64_t p = t * tile; p < std::min(n, (t + 1) * tile); ++p) s_[p] = point(xyz + 3 * p);
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

    // Far charges in chunks of kChunk, each followed by its listed near blocks: EXP's near lanes (exp_range) or
    // GAUSSIAN's near charges in index order; EXP with a charge within the singular radius takes the exact scalar
    // forms instead (rare: a point on a charge).
    double point(const double *p) const {
        const T px = static_cast<T>(p[0]), py = static_cast<T>(p[1]), pz = static_cast<T>(p[2]);
        T far_l[kLanes] = {}, near_l[3 * kLanes] = {};  // far; near, n_near, n_sing (exp_range's lanes)
        T close = 0;  // GAUSSIAN: the near charges' terms in index order
        bool near = false;
        if (kind_ == kScreenExp && fused_) {
            exp_range(0, n_pad_, x_.data(), y_.data(), z_.data(), q_.data(), a_.data(), b_.data(), cut2_.data(),
                      xlo_.data(), px, py, pz, far_l, near_l);
        } else {
            int64_t blocks[kChunk / kLanes + 1];
            for (int64_t c0 = 0; c0 < n_pad_; c0 += kChunk) {
                const int64_t c1 = std::min(n_pad_, c0 + kChunk);
                const int nb = far_chunk(c0, c1, x_.data(), y_.data(), z_.data(), q_.data(), cut2_.data(), px, py,
                                         pz, far_l, blocks);
                near = near || nb > 0;
                for (int j = 0; j < nb; ++j) {
                    const int64_t i = blocks[j], e = std::min(n_, i + kLanes);  // e: without the padding
                    if (kind_ == kScreenExp) {  // the near lanes; the block's far terms are far_chunk's already
                        T unused[kLanes] = {};
                        exp_range(i, i + kLanes, x_.data(), y_.data(), z_.data(), q_.data(), a_.data(), b_.data(),
                                  cut2_.data(), xlo_.data(), px, py, pz, unused, near_l);
                        continue;
                    }
                    for (int64_t m = i; m < e; ++m) {
                        const T dx = px - x_[m], dy = py - y_[m], dz = pz - z_[m];
                        const T d2 = dx * dx + dy * dy + dz * dz;
                        if (d2 < cut2_[m]) close += q_[m] * screened_inv_r_xyz<T>(kind_, dx, dy, dz, a_[m], b_[m]);
                    }
                }
            }
        }
        T far = 0, near_sum = 0, n_sing = 0;
        for (int l = 0; l < kLanes; ++l) far += far_l[l], near_sum += near_l[l], n_sing += near_l[2 * kLanes + l];
        if (kind_ != kScreenExp) return static_cast<double>(far + close);
        if (fused_) {
            T k = 0;
            for (int l = 0; l < kLanes; ++l) k += near_l[kLanes + l];
            near = k > T(0);
        }
        if (!near) return static_cast<double>(far);
        if (!(n_sing > T(0))) return static_cast<double>(far + near_sum);
        for (int64_t m = 0; m < n_; ++m) {  // on top of a charge: the exact forms, in index order
            const T dx = px - x_[m], dy = py - y_[m], dz = pz - z_[m];
            const T d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < cut2_[m]) close += q_[m] * screened_inv_r_xyz<T>(kind_, dx, dy, dz, a_[m], b_[m]);
        }
        return static_cast<double>(far + close);
    }

    int kind_;
    int64_t n_, n_pad_ = 0;  // charges; the planes' length (n_ rounded up to whole blocks)
    int threads_;
    bool fused_ = false;  // this call sums EXP charges in one pass (start)
    static constexpr int64_t kChunk = 4096;  // charges a far chunk covers: its block list lives on the stack
    std::vector<T> x_, y_, z_, q_, a_, b_, cut2_, xlo_;  // xlo: EXP's -b cut2, where a far lane's x is held
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
    // The screened term gives a point the same bits in any batch (ScreenedCpu: either pass; the GPU: either grid),
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
