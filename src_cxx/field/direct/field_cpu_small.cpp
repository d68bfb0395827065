// field_cpu_small.cpp -- the direct sum for small fields (at most kSmallCells cells, DOUBLE or SINGLE): the call site
// of a legacy QMC code sums 10-1,000 MM charges for 1-100 electrons, where the chunked kernels (field_cpu.cpp) would
// pad every point's sum to 1,024 cells. Here the cells stay unpadded, a point's sum runs in kLanes lanes (vectorised,
// 1/sqrt correctly rounded, the same singular rule as the chunked kernels), nothing is allocated per call, and a call
// runs on the caller's thread unless it is large (call_threads).
//
// DOUBLE on AVX-512 and AVX2 takes 1/r from the hardware seed refined by the series of field_cpu_simd_kernels.hpp
// (four terms: below half a double ulp), as the chunked SIMD kernels do: the correctly rounded sqrt and division
// cost ~2.3 ns a pair on the Xeon hosts, more than a legacy code's scalar loop allows. The generic kernel (and every
// point or cell beyond kSimdRange) keeps 1/sqrt correctly rounded.
//
// Two loop orders give the same bits. One point at a time, the cells run in vector lanes (lane l sums cells l,
// l + 8, ...) and the lanes are added in a fixed tree; its cost is the latency of one point's chain (~60 cycles),
// which for 10 cells is most of the call. A block of points in vector lanes keeps the same eight accumulators per
// point (cell m goes to accumulator m % 8) and the same tree, so each point's arithmetic is identical, and the
// block is limited by throughput: ~8x fewer cycles a point at 10 cells. Blocks are used wherever they are cheaper
// (a full block always; a short tail only when it has enough points), so a value never depends on the batch.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cpu_parallel.hpp"
#include "cpu_simd.hpp"
#include "cpu_threads.hpp"
#include "backend/field_backend.hpp"
#include "backend/field_factory.hpp"
#include "direct/field_cpu_simd.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 8;

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")  // as in field_cpu.cpp: lets the select below vectorise

// The body, inlined into one multiversioned function per type below (clang has no target_clones templates).
template <class T>
__attribute__((always_inline)) inline T small_sum_body(int64_t n, const T *__restrict x, const T *__restrict y, const T *__restrict z,
                        const T *__restrict q, T px, T py, T pz, T self) {
    T acc[kLanes] = {};
    const T eps2 = static_cast<T>(kSingularRadius2);
    const int64_t full = n - n % kLanes;
    for (int64_t i = 0; i < full; i += kLanes)
        for (int l = 0; l < kLanes; ++l) {
            const T dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const T d2 = dx * dx + dy * dy + dz * dz;
            acc[l] += q[i + l] * (d2 < eps2 ? self : T(1) / std::sqrt(d2));
        }
    for (int64_t i = full; i < n; ++i) {
        const T dx = px - x[i], dy = py - y[i], dz = pz - z[i];
        const T d2 = dx * dx + dy * dy + dz * dz;
        acc[i - full] += q[i] * (d2 < eps2 ? self : T(1) / std::sqrt(d2));
    }
    T s = 0;
    for (int l = 0; l < kLanes; ++l) s += acc[l];
    return s;
}

QMMM_CLONES double small_sum_double(int64_t n, const double *__restrict x, const double *__restrict y,
                                    const double *__restrict z, const double *__restrict q, double px, double py,
                                    double pz, double self) {
    return small_sum_body<double>(n, x, y, z, q, px, py, pz, self);
}
QMMM_CLONES float small_sum_float(int64_t n, const float *__restrict x, const float *__restrict y,
                                  const float *__restrict z, const float *__restrict q, float px, float py, float pz,
                                  float self) {
    return small_sum_body<float>(n, x, y, z, q, px, py, pz, self);
}
inline double small_sum(int64_t n, const double *x, const double *y, const double *z, const double *q, double px,
                        double py, double pz, double self) {
    return small_sum_double(n, x, y, z, q, px, py, pz, self);
}
inline float small_sum(int64_t n, const float *x, const float *y, const float *z, const float *q, float px, float py,
                       float pz, float self) {
    return small_sum_float(n, x, y, z, q, px, py, pz, self);
}

#pragma GCC pop_options

// 1/(1 - e)^(1/2) = 1 + e (c1 + c2 e + c3 e^2 + c4 e^3 + ...), cut after c4 (field_cpu_simd_kernels.hpp's kSeries).
constexpr double kC1 = 0.5, kC2 = 0.375, kC3 = 0.3125, kC4 = 0.2734375;

// n: a multiple of 8 (cells padded with zero charges far away).
__attribute__((target("avx512f"))) double small_sum_avx512(int64_t n, const double *x, const double *y,
                                                           const double *z, const double *q, double px, double py,
                                                           double pz, double self) {
    const __m512d one = _mm512_set1_pd(1.0), eps = _mm512_set1_pd(kSingularRadius2), vself = _mm512_set1_pd(self);
    const __m512d c1 = _mm512_set1_pd(kC1), c2 = _mm512_set1_pd(kC2), c3 = _mm512_set1_pd(kC3),
                  c4 = _mm512_set1_pd(kC4);
    const __m512d vx = _mm512_set1_pd(px), vy = _mm512_set1_pd(py), vz = _mm512_set1_pd(pz);
    __m512d acc = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 8) {
        const __m512d dx = _mm512_sub_pd(_mm512_loadu_pd(x + i), vx), dy = _mm512_sub_pd(_mm512_loadu_pd(y + i), vy),
                      dz = _mm512_sub_pd(_mm512_loadu_pd(z + i), vz);
        const __m512d d2 = _mm512_fmadd_pd(dz, dz, _mm512_fmadd_pd(dy, dy, _mm512_mul_pd(dx, dx)));
        // _mm512_rsqrt14_pd with a full mask: the same result, without GCC 12's false uninitialised warning
        const __m512d y0 = _mm512_maskz_rsqrt14_pd(0xFF, d2);
        const __m512d e = _mm512_fnmadd_pd(_mm512_mul_pd(d2, y0), y0, one);
        const __m512d s = _mm512_fmadd_pd(_mm512_fmadd_pd(_mm512_fmadd_pd(c4, e, c3), e, c2), e, c1);
        __m512d r = _mm512_fmadd_pd(_mm512_mul_pd(y0, e), s, y0);
        r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(d2, eps, _CMP_LT_OQ), r, vself);
        acc = _mm512_fmadd_pd(_mm512_loadu_pd(q + i), r, acc);
    }
    alignas(64) double l[8];
    _mm512_store_pd(l, acc);
    return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

// q / r for the four cells at i (the series as above; the seed from the float rsqrtps).
__attribute__((target("avx2,fma"))) inline __m256d small_terms_avx2(int64_t i, const double *x, const double *y,
                                                                    const double *z, const double *q, __m256d vx,
                                                                    __m256d vy, __m256d vz, __m256d vself) {
    const __m256d one = _mm256_set1_pd(1.0), eps = _mm256_set1_pd(kSingularRadius2);
    const __m256d dx = _mm256_sub_pd(_mm256_loadu_pd(x + i), vx), dy = _mm256_sub_pd(_mm256_loadu_pd(y + i), vy),
                  dz = _mm256_sub_pd(_mm256_loadu_pd(z + i), vz);
    const __m256d d2 = _mm256_fmadd_pd(dz, dz, _mm256_fmadd_pd(dy, dy, _mm256_mul_pd(dx, dx)));
    const __m256d y0 = _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(d2)));  // d2 in float range (kSimdRange)
    const __m256d e = _mm256_fnmadd_pd(_mm256_mul_pd(d2, y0), y0, one);
    const __m256d s = _mm256_fmadd_pd(
        _mm256_fmadd_pd(_mm256_fmadd_pd(_mm256_set1_pd(kC4), e, _mm256_set1_pd(kC3)), e, _mm256_set1_pd(kC2)), e,
        _mm256_set1_pd(kC1));
    const __m256d r = _mm256_fmadd_pd(_mm256_mul_pd(y0, e), s, y0);
    return _mm256_mul_pd(_mm256_loadu_pd(q + i), _mm256_blendv_pd(r, vself, _mm256_cmp_pd(d2, eps, _CMP_LT_OQ)));
}

__attribute__((target("avx2,fma"))) double small_sum_avx2(int64_t n, const double *x, const double *y, const double *z,
                                                          const double *q, double px, double py, double pz,
                                                          double self) {
    const __m256d vself = _mm256_set1_pd(self), vx = _mm256_set1_pd(px), vy = _mm256_set1_pd(py),
                  vz = _mm256_set1_pd(pz);
    __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
    for (int64_t i = 0; i < n; i += 8) {
        acc0 = _mm256_add_pd(acc0, small_terms_avx2(i, x, y, z, q, vx, vy, vz, vself));
        acc1 = _mm256_add_pd(acc1, small_terms_avx2(i + 4, x, y, z, q, vx, vy, vz, vself));
    }
    alignas(32) double l[8];
    _mm256_store_pd(l, acc0), _mm256_store_pd(l + 4, acc1);
    const double s = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
    _mm256_zeroupper();
    return s;
}

// Points p[0..7] in lanes: the accumulators of small_sum_avx512 (cell m into acc[m % 8]), the same terms and the
// same tree, so each lane's value is bitwise small_sum_avx512's for that point. Only the n real cells are visited:
// a padded cell adds an exact +0 there (acc never holds -0: it starts at +0 and x + (-x) rounds to +0).
__attribute__((target("avx512f"))) void block_sum_avx512(int64_t n, const double *x, const double *y,
                                                         const double *z, const double *q, const double *px,
                                                         const double *py, const double *pz, double self,
                                                         double *out) {
    const __m512d one = _mm512_set1_pd(1.0), eps = _mm512_set1_pd(kSingularRadius2), vself = _mm512_set1_pd(self);
    const __m512d c1 = _mm512_set1_pd(kC1), c2 = _mm512_set1_pd(kC2), c3 = _mm512_set1_pd(kC3),
                  c4 = _mm512_set1_pd(kC4);
    const __m512d vx = _mm512_loadu_pd(px), vy = _mm512_loadu_pd(py), vz = _mm512_loadu_pd(pz);
    __m512d acc[8];
    for (auto &a : acc) a = _mm512_setzero_pd();
    for (int64_t m = 0; m < n; ++m) {
        const __m512d dx = _mm512_sub_pd(_mm512_set1_pd(x[m]), vx), dy = _mm512_sub_pd(_mm512_set1_pd(y[m]), vy),
                      dz = _mm512_sub_pd(_mm512_set1_pd(z[m]), vz);
        const __m512d d2 = _mm512_fmadd_pd(dz, dz, _mm512_fmadd_pd(dy, dy, _mm512_mul_pd(dx, dx)));
        // _mm512_rsqrt14_pd with a full mask: the same result, without GCC 12's false uninitialised warning
        const __m512d y0 = _mm512_maskz_rsqrt14_pd(0xFF, d2);
        const __m512d e = _mm512_fnmadd_pd(_mm512_mul_pd(d2, y0), y0, one);
        const __m512d s = _mm512_fmadd_pd(_mm512_fmadd_pd(_mm512_fmadd_pd(c4, e, c3), e, c2), e, c1);
        __m512d r = _mm512_fmadd_pd(_mm512_mul_pd(y0, e), s, y0);
        r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(d2, eps, _CMP_LT_OQ), r, vself);
        acc[m % 8] = _mm512_fmadd_pd(_mm512_set1_pd(q[m]), r, acc[m % 8]);
    }
    const __m512d s = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(acc[0], acc[4]), _mm512_add_pd(acc[2], acc[6])),
                                    _mm512_add_pd(_mm512_add_pd(acc[1], acc[5]), _mm512_add_pd(acc[3], acc[7])));
    _mm512_storeu_pd(out, s);
}

// Points p[0..3] in lanes, bitwise small_sum_avx2's value for each (cell m into acc[m % 8], term then add).
__attribute__((target("avx2,fma"))) void block_sum_avx2(int64_t n, const double *x, const double *y, const double *z,
                                                        const double *q, const double *px, const double *py,
                                                        const double *pz, double self, double *out) {
    const __m256d one = _mm256_set1_pd(1.0), eps = _mm256_set1_pd(kSingularRadius2), vself = _mm256_set1_pd(self);
    const __m256d c1 = _mm256_set1_pd(kC1), c2 = _mm256_set1_pd(kC2), c3 = _mm256_set1_pd(kC3),
                  c4 = _mm256_set1_pd(kC4);
    const __m256d vx = _mm256_loadu_pd(px), vy = _mm256_loadu_pd(py), vz = _mm256_loadu_pd(pz);
    __m256d acc[8];
    for (auto &a : acc) a = _mm256_setzero_pd();
    for (int64_t m = 0; m < n; ++m) {
        const __m256d dx = _mm256_sub_pd(_mm256_set1_pd(x[m]), vx), dy = _mm256_sub_pd(_mm256_set1_pd(y[m]), vy),
                      dz = _mm256_sub_pd(_mm256_set1_pd(z[m]), vz);
        const __m256d d2 = _mm256_fmadd_pd(dz, dz, _mm256_fmadd_pd(dy, dy, _mm256_mul_pd(dx, dx)));
        const __m256d y0 = _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(d2)));
        const __m256d e = _mm256_fnmadd_pd(_mm256_mul_pd(d2, y0), y0, one);
        const __m256d s = _mm256_fmadd_pd(_mm256_fmadd_pd(_mm256_fmadd_pd(c4, e, c3), e, c2), e, c1);
        const __m256d r = _mm256_fmadd_pd(_mm256_mul_pd(y0, e), s, y0);
        const __m256d t =
            _mm256_mul_pd(_mm256_set1_pd(q[m]), _mm256_blendv_pd(r, vself, _mm256_cmp_pd(d2, eps, _CMP_LT_OQ)));
        acc[m % 8] = _mm256_add_pd(acc[m % 8], t);
    }
    const __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(acc[0], acc[4]), _mm256_add_pd(acc[2], acc[6])),
                                    _mm256_add_pd(_mm256_add_pd(acc[1], acc[5]), _mm256_add_pd(acc[3], acc[7])));
    _mm256_storeu_pd(out, s);
    _mm256_zeroupper();
}

template <class T>
class FieldCpuSmall final : public FieldBackend {
public:
    FieldCpuSmall(const FieldData &d, const qmmm_options &opt)
        : data_(d), n_(d.n_cells), precision_(opt.precision), threads_(opt.n_threads),
          self_(static_cast<T>(d.cell_self_inv_r)) {
        const CpuIsa isa = cpu_isa_choose();  // QMMM_CPU_ISA as for every CPU field
        for (int64_t m = 0; m < n_; ++m) {
            x_.push_back(static_cast<T>(d.cell_xyz[3 * m])), y_.push_back(static_cast<T>(d.cell_xyz[3 * m + 1]));
            z_.push_back(static_cast<T>(d.cell_xyz[3 * m + 2])), q_.push_back(static_cast<T>(d.cell_q[m]));
            in_range_ = in_range_ && std::fabs(d.cell_xyz[3 * m]) <= kSimdRange &&
                        std::fabs(d.cell_xyz[3 * m + 1]) <= kSimdRange && std::fabs(d.cell_xyz[3 * m + 2]) <= kSimdRange;
        }
        if constexpr (std::is_same_v<T, double>) {
            if (isa != CpuIsa::Generic && in_range_) {
                simd_ = isa == CpuIsa::Avx512 ? small_sum_avx512 : small_sum_avx2;
                block_ = isa == CpuIsa::Avx512 ? block_sum_avx512 : block_sum_avx2;
                width_ = isa == CpuIsa::Avx512 ? 8 : 4;
                isa_ = isa;
                padded_ = (n_ + 7) / 8 * 8;  // zero charges far away (kMixedFar: d2 stays in float range)
                per_point_ = padded_ / 8 * (8 / width_) + 4;  // here, not per call: a 64-bit division is ~40 cycles
                for (auto *v : {&xs_, &ys_, &zs_}) v->assign(static_cast<size_t>(padded_), kMixedFar);
                qs_.assign(static_cast<size_t>(padded_), 0.0);
                std::copy(x_.begin(), x_.end(), xs_.begin()), std::copy(y_.begin(), y_.end(), ys_.begin());
                std::copy(z_.begin(), z_.end(), zs_.begin()), std::copy(q_.begin(), q_.end(), qs_.begin());
            }
        }
        data_.cell_xyz = {}, data_.cell_q = {};
    }
    int backend() const override { return QMMM_BACKEND_CPU; }
    int precision() const override { return precision_; }
    int cpu_isa() const override { return static_cast<int>(isa_); }
    // A point's value depends on the point alone (chunks and kernels per point, threads over points).
    int64_t merge_from() const override { return 1; }

    int eval(int64_t n, const double *xyz, double *u) override {
        const int nt = call_threads(threads_, static_cast<double>(n) * static_cast<double>(n_ + data_.n_nuclei));
        constexpr int64_t kTile = 16;
        parallel_tiles(nt, (n + kTile - 1) / kTile, [&](int64_t t) {
            points(t * kTile, std::min(n, (t + 1) * kTile), xyz, u);
        });
        if (data_.n_nuclei) add_nuclear_term(data_, n, xyz, u, nt);
        if (simd_) simd_clear_upper();  // no dirty upper vector state left to the caller's SSE code
        return QMMM_SUCCESS;
    }

private:
    static bool in_simd_range(const double *p) {
        return std::fabs(p[0]) <= kSimdRange && std::fabs(p[1]) <= kSimdRange && std::fabs(p[2]) <= kSimdRange;
    }

    // Points [b, e) into u: blocks of width_ points where a block is cheaper than its points one at a time (a
    // point costs per_point_ vectors; a block one vector a cell), the rest one by one.
    void points(int64_t b, int64_t e, const double *xyz, double *u) const {
        int64_t p = b;
        if (block_) {
            while (p < e && std::min<int64_t>(width_, e - p) * per_point_ >= n_) {
                const int64_t w = std::min<int64_t>(width_, e - p);
                alignas(64) double bx[8], by[8], bz[8], out[8];
                bool in_range = true;
                for (int64_t l = 0; l < width_; ++l) {  // a short block repeats its last point in the unused lanes
                    const double *r = xyz + 3 * (p + std::min(l, w - 1));
                    bx[l] = r[0], by[l] = r[1], bz[l] = r[2];
                    in_range = in_range && in_simd_range(r);
                }
                if (!in_range) break;
                block_(n_, xs_.data(), ys_.data(), zs_.data(), qs_.data(), bx, by, bz, static_cast<double>(self_), out);
                for (int64_t l = 0; l < w; ++l) u[p + l] = out[l];
                p += w;
            }
        }
        for (; p < e; ++p) u[p] = point(xyz + 3 * p);
    }

    double point(const double *p) const {
        if (simd_ && in_simd_range(p))
            return simd_(padded_, xs_.data(), ys_.data(), zs_.data(), qs_.data(), p[0], p[1], p[2],
                         static_cast<double>(self_));
        return static_cast<double>(small_sum(n_, x_.data(), y_.data(), z_.data(), q_.data(), static_cast<T>(p[0]),
                                                static_cast<T>(p[1]), static_cast<T>(p[2]), self_));
    }

    FieldData data_;  // the nuclei
    int64_t n_;
    int precision_, threads_;
    T self_;
    std::vector<T> x_, y_, z_, q_;
    bool in_range_ = true;  // every cell within kSimdRange of the origin
    // DOUBLE on AVX-512 / AVX2: the seed-and-series kernel over the cells padded to a multiple of 8.
    CpuIsa isa_ = CpuIsa::Generic;  // of simd_
    double (*simd_)(int64_t, const double *, const double *, const double *, const double *, double, double, double,
                    double) = nullptr;
    int64_t padded_ = 0;
    std::vector<double> xs_, ys_, zs_, qs_;
    // The same kernel with width_ points in the lanes (block_sum_avx512 / _avx2), on the unpadded cells.
    void (*block_)(int64_t, const double *, const double *, const double *, const double *, const double *,
                   const double *, const double *, double, double *) = nullptr;
    int64_t width_ = 0;
    // A point's cost one at a time, in vectors of width_ lanes: its padded cells and ~4 more of chain latency.
    int64_t per_point_ = 0;
};

}  // namespace

std::unique_ptr<FieldBackend> make_field_cpu_small(const FieldData &d, const qmmm_options &opt) {
    if (opt.precision == QMMM_PRECISION_SINGLE) return std::make_unique<FieldCpuSmall<float>>(d, opt);
    return std::make_unique<FieldCpuSmall<double>>(d, opt);
}

}  // namespace qmmm
