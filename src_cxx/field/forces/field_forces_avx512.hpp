// field_forces_avx512.hpp -- the forces' plain pair loops in AVX-512 (field_grad_cpu.cpp, field_site_field_cpu.cpp),
// run when the CPU has it and QMMM_CPU_ISA does not ask for another set (cpu_simd.hpp). The compiler-vectorised
// loops beside them pay a vector square root and a division per pair; these take 1/r from the hardware seed
// (rsqrt14, ~2^-14) and, in double, the series of field_cpu_small.cpp (1/r to ~1 ulp), in float one Newton step.
// Same structure and order as the generic loops (lanes by position, points in order), but not the same bits.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "cpu_simd.hpp"
#include "backend/field_shared.hpp"

namespace qmmm {

// Whether the forces' CPU loops take the AVX-512 forms (once per process).
inline bool forces_use_avx512() {
    static const bool yes = [] {
        try {
            return cpu_isa_choose() == CpuIsa::Avx512;
        } catch (...) {
            return false;  // a bad QMMM_CPU_ISA: the create of a field reports it; the generic loops here
        }
    }();
    return yes;
}

namespace avx512_forces {

// GCC 12 warns that rsqrt14's unused pass-through operand "may be used uninitialized" (a false positive in its header).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define QMMM_AVX512 __attribute__((target("avx512f"), always_inline)) inline

// 1/sqrt(d2) in double: the seed and 1/(1 - e)^(1/2) = 1 + e (c1 + c2 e + c3 e^2 + c4 e^3), e = 1 - d2 y0^2.
QMMM_AVX512 __m512d inv_sqrt(__m512d d2) {
    const __m512d y0 = _mm512_rsqrt14_pd(d2);
    const __m512d e = _mm512_fnmadd_pd(_mm512_mul_pd(d2, y0), y0, _mm512_set1_pd(1.0));
    const __m512d s = _mm512_fmadd_pd(
        _mm512_fmadd_pd(_mm512_fmadd_pd(_mm512_set1_pd(0.2734375), e, _mm512_set1_pd(0.3125)), e,
                        _mm512_set1_pd(0.375)),
        e, _mm512_set1_pd(0.5));
    return _mm512_fmadd_pd(_mm512_mul_pd(y0, e), s, y0);
}
// 1/sqrt(d2) in float: the seed and one Newton step (~2^-27).
QMMM_AVX512 __m512 inv_sqrt(__m512 d2) {
    const __m512 y0 = _mm512_rsqrt14_ps(d2);
    const __m512 h = _mm512_mul_ps(_mm512_mul_ps(d2, y0), y0);
    return _mm512_mul_ps(_mm512_mul_ps(y0, _mm512_set1_ps(0.5f)), _mm512_sub_ps(_mm512_set1_ps(3.0f), h));
}

// The vector type of T and its operations, for one template over both.
template <class T>
struct V;
template <>
struct V<double> {
    using R = __m512d;
    using M = __mmask8;
    static constexpr int kLanes = 8;
    QMMM_AVX512 static R set1(double v) { return _mm512_set1_pd(v); }
    QMMM_AVX512 static R zero() { return _mm512_setzero_pd(); }
    QMMM_AVX512 static R load(M m, const double *p) { return _mm512_maskz_loadu_pd(m, p); }
    QMMM_AVX512 static void store(M m, double *p, R v) { _mm512_mask_storeu_pd(p, m, v); }
    QMMM_AVX512 static R sub(R a, R b) { return _mm512_sub_pd(a, b); }
    QMMM_AVX512 static R mul(R a, R b) { return _mm512_mul_pd(a, b); }
    QMMM_AVX512 static R fmadd(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }
    QMMM_AVX512 static R mask3_fmadd(R a, R b, R c, M m) { return _mm512_mask3_fmadd_pd(a, b, c, m); }
    QMMM_AVX512 static R mask3_fnmadd(R a, R b, R c, M m) { return _mm512_mask3_fnmadd_pd(a, b, c, m); }
    QMMM_AVX512 static M lt(R a, R b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
    QMMM_AVX512 static R blend(M m, R a, R b) { return _mm512_mask_blend_pd(m, a, b); }  // m ? b : a
    QMMM_AVX512 static void store_all(double *p, R v) { _mm512_storeu_pd(p, v); }
    QMMM_AVX512 static M head(int64_t r) { return static_cast<M>(r >= 8 ? 0xff : (1u << r) - 1); }
};
template <>
struct V<float> {
    using R = __m512;
    using M = __mmask16;
    static constexpr int kLanes = 16;
    QMMM_AVX512 static R set1(float v) { return _mm512_set1_ps(v); }
    QMMM_AVX512 static R zero() { return _mm512_setzero_ps(); }
    QMMM_AVX512 static R load(M m, const float *p) { return _mm512_maskz_loadu_ps(m, p); }
    QMMM_AVX512 static void store(M m, float *p, R v) { _mm512_mask_storeu_ps(p, m, v); }
    QMMM_AVX512 static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
    QMMM_AVX512 static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
    QMMM_AVX512 static R fmadd(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
    QMMM_AVX512 static R mask3_fmadd(R a, R b, R c, M m) { return _mm512_mask3_fmadd_ps(a, b, c, m); }
    QMMM_AVX512 static R mask3_fnmadd(R a, R b, R c, M m) { return _mm512_mask3_fnmadd_ps(a, b, c, m); }
    QMMM_AVX512 static M lt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
    QMMM_AVX512 static R blend(M m, R a, R b) { return _mm512_mask_blend_ps(m, a, b); }
    QMMM_AVX512 static void store_all(float *p, R v) { _mm512_storeu_ps(p, v); }
    QMMM_AVX512 static M head(int64_t r) { return static_cast<M>(r >= 16 ? 0xffff : (1u << r) - 1); }
};

// The gradient's plain loop: out[4j..4j+3] += U and dU/dr of sites [b, e) at point j of pt (x y z each), P points;
// lanes by position from b, folded in lane order. Within the singular radius a site gives on_value and no gradient.
template <class T, int P>
__attribute__((target("avx512f"))) void grad_plain(int64_t b, int64_t e, const T *x, const T *y, const T *z,
                                                   const T *c, T on_value, const T *pt, double *out) {
    using v = V<T>;
    using R = typename v::R;
    const R eps = v::set1(T(kSingularRadius2)), one = v::set1(T(1)), zero = v::zero(), onv = v::set1(on_value);
    R px[P], py[P], pz[P], au[P], ax[P], ay[P], az[P];
    for (int j = 0; j < P; ++j) {
        px[j] = v::set1(pt[3 * j]), py[j] = v::set1(pt[3 * j + 1]), pz[j] = v::set1(pt[3 * j + 2]);
        au[j] = ax[j] = ay[j] = az[j] = zero;
    }
    for (int64_t i = b; i < e; i += v::kLanes) {
        const auto m = v::head(e - i);
        const R xk = v::load(m, x + i), yk = v::load(m, y + i), zk = v::load(m, z + i), ck = v::load(m, c + i);
        for (int j = 0; j < P; ++j) {
            const R dx = v::sub(px[j], xk), dy = v::sub(py[j], yk), dz = v::sub(pz[j], zk);
            const R d2 = v::fmadd(dz, dz, v::fmadd(dy, dy, v::mul(dx, dx)));
            const auto on = v::lt(d2, eps);
            const R inv = v::blend(on, inv_sqrt(v::blend(on, d2, one)), zero);
            au[j] = v::mask3_fmadd(ck, v::blend(on, inv, onv), au[j], m);
            const R g = v::mul(v::mul(ck, inv), v::mul(inv, inv));
            ax[j] = v::mask3_fnmadd(g, dx, ax[j], m), ay[j] = v::mask3_fnmadd(g, dy, ay[j], m);
            az[j] = v::mask3_fnmadd(g, dz, az[j], m);
        }
    }
    for (int j = 0; j < P; ++j) {
        T l[4][v::kLanes];
        v::store_all(l[0], au[j]), v::store_all(l[1], ax[j]), v::store_all(l[2], ay[j]), v::store_all(l[3], az[j]);
        for (int q = 0; q < 4; ++q) {
            double s = 0;
            for (int k = 0; k < v::kLanes; ++k) s += l[q][k];
            out[4 * j + q] += s;
        }
    }
}

// The reverse field's plain loop: sites [0, m) of a tile gain the P points of pw (x y z w each), in order:
// ph += w (on ? on_value : 1/d), (ex, ey, ez) += w (R - r) / d^3 (0 on the site).
template <class T, int P>
__attribute__((target("avx512f"))) void sites_plain(int64_t m, const T *x, const T *y, const T *z, T on_value,
                                                    const T *pw, T *ph, T *ex, T *ey, T *ez) {
    using v = V<T>;
    using R = typename v::R;
    const R eps = v::set1(T(kSingularRadius2)), one = v::set1(T(1)), zero = v::zero(), onv = v::set1(on_value);
    for (int64_t k = 0; k < m; k += v::kLanes) {
        const auto mk = v::head(m - k);
        const R xk = v::load(mk, x + k), yk = v::load(mk, y + k), zk = v::load(mk, z + k);
        R a = v::load(mk, ph + k), bx = v::load(mk, ex + k), by = v::load(mk, ey + k), bz = v::load(mk, ez + k);
        for (int j = 0; j < P; ++j) {
            const R w = v::set1(pw[4 * j + 3]);
            const R dx = v::sub(xk, v::set1(pw[4 * j])), dy = v::sub(yk, v::set1(pw[4 * j + 1]));
            const R dz = v::sub(zk, v::set1(pw[4 * j + 2]));
            const R d2 = v::fmadd(dz, dz, v::fmadd(dy, dy, v::mul(dx, dx)));
            const auto on = v::lt(d2, eps);
            const R inv = v::blend(on, inv_sqrt(v::blend(on, d2, one)), zero);
            a = v::fmadd(w, v::blend(on, inv, onv), a);
            const R g = v::mul(v::mul(w, inv), v::mul(inv, inv));
            bx = v::fmadd(g, dx, bx), by = v::fmadd(g, dy, by), bz = v::fmadd(g, dz, bz);
        }
        v::store(mk, ph + k, a), v::store(mk, ex + k, bx), v::store(mk, ey + k, by), v::store(mk, ez + k, bz);
    }
}

#undef QMMM_AVX512
#pragma GCC diagnostic pop

}  // namespace avx512_forces
}  // namespace qmmm
