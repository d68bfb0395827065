// field_cpu_simd.cpp -- the CPU field's chunk kernels for AVX-512 and AVX2 (field_cpu_simd.hpp): the vector
// types of each instruction set, then the kernels (field_cpu_simd_kernels.hpp) compiled for it.
//
// Each set lives in a target region (QMMM_TARGET_BEGIN) that holds only this file's own functions: the standard
// headers are included before it, so no inline library function is compiled for AVX-512 and then shared
// with code that runs where AVX-512 is missing. The file is built with -ffp-contract=off (CMakeLists.txt):
// the kernels spell out every fused multiply-add, and the compiler fuses nothing else, so a point's
// arithmetic is the same whether it shares the cell loads with 1 or 4 other points.

// GCC 12 warns that its own _mm512_undefined_* placeholders (inside the intrinsics' headers) are used
// uninitialised (GCC bug 105593, fixed in GCC 13); the warnings are located in those headers.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "direct/field_cpu_simd.hpp"

#define QMMM_VEC static inline __attribute__((always_inline))

// A target region: every function defined inside is compiled for the instruction set (clang spells it its own way;
// the fuzzing build uses clang).
#define QMMM_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define QMMM_TARGET_BEGIN(t) QMMM_PRAGMA(clang attribute push(__attribute__((target(t))), apply_to = function))
#define QMMM_TARGET_END() _Pragma("clang attribute pop")
#else
#define QMMM_TARGET_BEGIN(t) _Pragma("GCC push_options") QMMM_PRAGMA(GCC target(t))
#define QMMM_TARGET_END() _Pragma("GCC pop_options")
#endif

namespace qmmm {
namespace {

QMMM_TARGET_BEGIN("avx512f,avx2,fma")
namespace avx512 {

constexpr CpuIsa kIsa = CpuIsa::Avx512;
constexpr double kSeedError = 0x1p-14;  // vrsqrt14ps/pd: relative error < 2^-14
// Four points per cell load: the loads and loop overhead amortised, 32 registers still hold the accumulators
// (llvm-mca, Ice Lake server: 2.45 / 1.43 / 0.88 pairs per cycle for SINGLE / MIXED / DOUBLE, any of 2..4).
constexpr int kPointsSingle = 4, kPointsMixed = 4, kPointsDouble = 4;

struct F16 {
    __m512 v;
    QMMM_VEC F16 set(double x) { return {_mm512_set1_ps(static_cast<float>(x))}; }
    QMMM_VEC F16 load(const float *p) { return {_mm512_loadu_ps(p)}; }
};
struct D16 {
    __m512d a, b;  // lanes 0..7, 8..15
    QMMM_VEC D16 set(double x) { return {_mm512_set1_pd(x), _mm512_set1_pd(x)}; }
    QMMM_VEC D16 load(const double *p) { return {_mm512_loadu_pd(p), _mm512_loadu_pd(p + 8)}; }
};

QMMM_VEC F16 add(F16 x, F16 y) { return {_mm512_add_ps(x.v, y.v)}; }
QMMM_VEC F16 sub(F16 x, F16 y) { return {_mm512_sub_ps(x.v, y.v)}; }
QMMM_VEC F16 mul(F16 x, F16 y) { return {_mm512_mul_ps(x.v, y.v)}; }
QMMM_VEC F16 min(F16 x, F16 y) { return {_mm512_min_ps(x.v, y.v)}; }
QMMM_VEC F16 vfma(F16 x, F16 y, F16 z) { return {_mm512_fmadd_ps(x.v, y.v, z.v)}; }
QMMM_VEC F16 vfnma(F16 x, F16 y, F16 z) { return {_mm512_fnmadd_ps(x.v, y.v, z.v)}; }
QMMM_VEC F16 rsqrt(F16 x) { return {_mm512_rsqrt14_ps(x.v)}; }
QMMM_VEC F16 select_lt(F16 d, F16 t, F16 x, F16 y) {
    return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(d.v, t.v, _CMP_LT_OQ), y.v, x.v)};
}
QMMM_VEC unsigned lt_bits(F16 d, F16 t) { return _mm512_cmp_ps_mask(d.v, t.v, _CMP_LT_OQ); }
QMMM_VEC __m256 high(F16 x) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x.v), 1)); }
QMMM_VEC D16 widen(F16 x) {
    return {_mm512_cvtps_pd(_mm512_castps512_ps256(x.v)), _mm512_cvtps_pd(high(x))};
}
// s[l] += s[l + 4]; s[l] += s[l + 2]; s[0] + s[1] (the reference lane_sum after its first level)
QMMM_VEC float hsum8(__m256 s) {
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_add_ss(a, _mm_shuffle_ps(a, a, 1)));
}
QMMM_VEC double hsum8(__m256d lo, __m256d hi) {
    const __m256d s = _mm256_add_pd(lo, hi);
    const __m128d a = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(a, _mm_unpackhi_pd(a, a)));
}
QMMM_VEC float hsum(F16 x) { return hsum8(_mm256_add_ps(_mm512_castps512_ps256(x.v), high(x))); }
QMMM_VEC float hmin(F16 x) { return _mm512_reduce_min_ps(x.v); }

QMMM_VEC D16 add(D16 x, D16 y) { return {_mm512_add_pd(x.a, y.a), _mm512_add_pd(x.b, y.b)}; }
QMMM_VEC D16 sub(D16 x, D16 y) { return {_mm512_sub_pd(x.a, y.a), _mm512_sub_pd(x.b, y.b)}; }
QMMM_VEC D16 mul(D16 x, D16 y) { return {_mm512_mul_pd(x.a, y.a), _mm512_mul_pd(x.b, y.b)}; }
QMMM_VEC D16 min(D16 x, D16 y) { return {_mm512_min_pd(x.a, y.a), _mm512_min_pd(x.b, y.b)}; }
QMMM_VEC D16 vfma(D16 x, D16 y, D16 z) { return {_mm512_fmadd_pd(x.a, y.a, z.a), _mm512_fmadd_pd(x.b, y.b, z.b)}; }
QMMM_VEC D16 vfnma(D16 x, D16 y, D16 z) {
    return {_mm512_fnmadd_pd(x.a, y.a, z.a), _mm512_fnmadd_pd(x.b, y.b, z.b)};
}
QMMM_VEC D16 rsqrt(D16 x) { return {_mm512_rsqrt14_pd(x.a), _mm512_rsqrt14_pd(x.b)}; }
QMMM_VEC D16 select_lt(D16 d, D16 t, D16 x, D16 y) {
    return {_mm512_mask_blend_pd(_mm512_cmp_pd_mask(d.a, t.a, _CMP_LT_OQ), y.a, x.a),
            _mm512_mask_blend_pd(_mm512_cmp_pd_mask(d.b, t.b, _CMP_LT_OQ), y.b, x.b)};
}
QMMM_VEC double hsum(D16 x) {
    const __m512d s = _mm512_add_pd(x.a, x.b);  // s[l] = acc[l] + acc[l + 8]
    return hsum8(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
}
QMMM_VEC double hmin(D16 x) { return _mm512_reduce_min_pd(_mm512_min_pd(x.a, x.b)); }

#include "direct/field_cpu_simd_kernels.hpp"

}  // namespace avx512
QMMM_TARGET_END()

QMMM_TARGET_BEGIN("avx2,fma")
namespace avx2 {

constexpr CpuIsa kIsa = CpuIsa::Avx2;
constexpr double kSeedError = 1.5 * 0x1p-12;  // vrsqrtps: relative error <= 1.5 * 2^-12
// 16 registers: one point's values fill them (more points per load only spill; llvm-mca, Skylake: 1.22 / 0.76 /
// 0.41 pairs per cycle).
constexpr int kPointsSingle = 1, kPointsMixed = 1, kPointsDouble = 1;

struct F16 {
    __m256 a, b;  // lanes 0..7, 8..15
    QMMM_VEC F16 set(double x) { return {_mm256_set1_ps(static_cast<float>(x)), _mm256_set1_ps(static_cast<float>(x))}; }
    QMMM_VEC F16 load(const float *p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
};
struct D16 {
    __m256d v[4];  // lanes 0..3, 4..7, 8..11, 12..15
    QMMM_VEC D16 set(double x) {
        const __m256d s = _mm256_set1_pd(x);
        return {{s, s, s, s}};
    }
    QMMM_VEC D16 load(const double *p) {
        return {{_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4), _mm256_loadu_pd(p + 8), _mm256_loadu_pd(p + 12)}};
    }
};

QMMM_VEC F16 add(F16 x, F16 y) { return {_mm256_add_ps(x.a, y.a), _mm256_add_ps(x.b, y.b)}; }
QMMM_VEC F16 sub(F16 x, F16 y) { return {_mm256_sub_ps(x.a, y.a), _mm256_sub_ps(x.b, y.b)}; }
QMMM_VEC F16 mul(F16 x, F16 y) { return {_mm256_mul_ps(x.a, y.a), _mm256_mul_ps(x.b, y.b)}; }
QMMM_VEC F16 min(F16 x, F16 y) { return {_mm256_min_ps(x.a, y.a), _mm256_min_ps(x.b, y.b)}; }
QMMM_VEC F16 vfma(F16 x, F16 y, F16 z) { return {_mm256_fmadd_ps(x.a, y.a, z.a), _mm256_fmadd_ps(x.b, y.b, z.b)}; }
QMMM_VEC F16 vfnma(F16 x, F16 y, F16 z) {
    return {_mm256_fnmadd_ps(x.a, y.a, z.a), _mm256_fnmadd_ps(x.b, y.b, z.b)};
}
QMMM_VEC F16 rsqrt(F16 x) { return {_mm256_rsqrt_ps(x.a), _mm256_rsqrt_ps(x.b)}; }
QMMM_VEC F16 select_lt(F16 d, F16 t, F16 x, F16 y) {
    return {_mm256_blendv_ps(y.a, x.a, _mm256_cmp_ps(d.a, t.a, _CMP_LT_OQ)),
            _mm256_blendv_ps(y.b, x.b, _mm256_cmp_ps(d.b, t.b, _CMP_LT_OQ))};
}
QMMM_VEC unsigned lt_bits(F16 d, F16 t) {
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d.a, t.a, _CMP_LT_OQ))) |
           static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d.b, t.b, _CMP_LT_OQ))) << 8;
}
QMMM_VEC D16 widen(F16 x) {
    return {{_mm256_cvtps_pd(_mm256_castps256_ps128(x.a)), _mm256_cvtps_pd(_mm256_extractf128_ps(x.a, 1)),
             _mm256_cvtps_pd(_mm256_castps256_ps128(x.b)), _mm256_cvtps_pd(_mm256_extractf128_ps(x.b, 1))}};
}
QMMM_VEC float hsum(F16 x) {
    const __m256 s = _mm256_add_ps(x.a, x.b);  // s[l] = acc[l] + acc[l + 8]
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_add_ss(a, _mm_shuffle_ps(a, a, 1)));
}
QMMM_VEC float hmin(F16 x) {
    const __m256 s = _mm256_min_ps(x.a, x.b);
    __m128 a = _mm_min_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    a = _mm_min_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_min_ss(a, _mm_shuffle_ps(a, a, 1)));
}

#define QMMM_D4(expr) {{expr(0), expr(1), expr(2), expr(3)}}
QMMM_VEC D16 add(D16 x, D16 y) {
#define E(i) _mm256_add_pd(x.v[i], y.v[i])
    return QMMM_D4(E);
#undef E
}
QMMM_VEC D16 sub(D16 x, D16 y) {
#define E(i) _mm256_sub_pd(x.v[i], y.v[i])
    return QMMM_D4(E);
#undef E
}
QMMM_VEC D16 mul(D16 x, D16 y) {
#define E(i) _mm256_mul_pd(x.v[i], y.v[i])
    return QMMM_D4(E);
#undef E
}
QMMM_VEC D16 min(D16 x, D16 y) {
#define E(i) _mm256_min_pd(x.v[i], y.v[i])
    return QMMM_D4(E);
#undef E
}
QMMM_VEC D16 vfma(D16 x, D16 y, D16 z) {
#define E(i) _mm256_fmadd_pd(x.v[i], y.v[i], z.v[i])
    return QMMM_D4(E);
#undef E
}
QMMM_VEC D16 vfnma(D16 x, D16 y, D16 z) {
#define E(i) _mm256_fnmadd_pd(x.v[i], y.v[i], z.v[i])
    return QMMM_D4(E);
#undef E
}
// A float seed: d2 is within the float range here (field_cpu_simd.hpp's preconditions and the singular check).
QMMM_VEC D16 rsqrt(D16 x) {
#define E(i) _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(x.v[i])))
    return QMMM_D4(E);
#undef E
}
QMMM_VEC D16 select_lt(D16 d, D16 t, D16 x, D16 y) {
#define E(i) _mm256_blendv_pd(y.v[i], x.v[i], _mm256_cmp_pd(d.v[i], t.v[i], _CMP_LT_OQ))
    return QMMM_D4(E);
#undef E
}
#undef QMMM_D4
QMMM_VEC double hsum(D16 x) {
    const __m256d lo = _mm256_add_pd(x.v[0], x.v[2]), hi = _mm256_add_pd(x.v[1], x.v[3]);  // acc[l] + acc[l + 8]
    const __m256d s = _mm256_add_pd(lo, hi);
    const __m128d a = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(a, _mm_unpackhi_pd(a, a)));
}
QMMM_VEC double hmin(D16 x) {
    const __m256d s = _mm256_min_pd(_mm256_min_pd(x.v[0], x.v[1]), _mm256_min_pd(x.v[2], x.v[3]));
    const __m128d a = _mm_min_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_min_sd(a, _mm_unpackhi_pd(a, a)));
}

#include "direct/field_cpu_simd_kernels.hpp"

}  // namespace avx2
QMMM_TARGET_END()

// The Newton polynomials' lengths that field_cpu_simd_kernels.hpp's error budget works out (SINGLE, MIXED, DOUBLE).
static_assert(avx512::kOrderSingle == 1 && avx512::kOrderMixed == 2 && avx512::kOrderDouble == 4, "rsqrt14");
static_assert(avx2::kOrderSingle == 2 && avx2::kOrderMixed == 3 && avx2::kOrderDouble == 4, "rsqrtps");
static_assert(avx512::kOrderGrid == 2 && avx2::kOrderGrid == 3, "the split grid's 1e-12");

}  // namespace

const FieldSimdKernels *field_simd_kernels(CpuIsa isa) {
    switch (isa) {
        case CpuIsa::Avx512: return &avx512::kKernels;
        case CpuIsa::Avx2: return &avx2::kKernels;
        default: return nullptr;
    }
}

}  // namespace qmmm

#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
