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
    // _mm512_rsqrt14_pd with a full mask: the same result, without GCC 12's false uninitialised warning
    const __m512d y0 = _mm512_maskz_rsqrt14_pd(0xFF, d2);
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
    QMMM_AVX512 static R min(R a, R b) { return _mm512_min_pd(a, b); }
    QMMM_AVX512 static R mask_min(R src, M m, R a, R b) { return _mm512_mask_min_pd(src, m, a, b); }
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
    QMMM_AVX512 static R min(R a, R b) { return _mm512_min_ps(a, b); }
    QMMM_AVX512 static R mask_min(R src, M m, R a, R b) { return _mm512_mask_min_ps(src, m, a, b); }
    QMMM_AVX512 static void store_all(float *p, R v) { _mm512_storeu_ps(p, v); }
    QMMM_AVX512 static M head(int64_t r) { return static_cast<M>(r >= 16 ? 0xffff : (1u << r) - 1); }
};

// The gradient's plain loop: out[4j..4j+3] += U and dU/dr of sites [b, e) at point j of pt (x y z each), P points;
// lanes by position from b, folded in lane order. Within the singular radius a site gives on_value and no gradient.
// As the value path's kernels: a first pass keeps each point's smallest d^2 instead of applying the singular radius to
// every pair; a point with a site within it (rare: a point on a cell centre) is summed again with the blends, alone.
// A point's lanes are its own, and the blends change no other lane: the bits are those of one careful pass.
template <class T, int P, bool careful>
QMMM_AVX512 void grad_pass(int64_t b, int64_t e, const T *x, const T *y, const T *z, const T *c, T on_value,
                           const T *pt, typename V<T>::R *au, typename V<T>::R *ax, typename V<T>::R *ay,
                           typename V<T>::R *az, typename V<T>::R *dm) {
    using v = V<T>;
    using R = typename v::R;
    const R eps = v::set1(T(kSingularRadius2)), one = v::set1(T(1)), zero = v::zero(), onv = v::set1(on_value);
    R px[P], py[P], pz[P];
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
            R inv;
            if constexpr (careful) {
                const auto on = v::lt(d2, eps);
                inv = v::blend(on, inv_sqrt(v::blend(on, d2, one)), zero);
                au[j] = v::mask3_fmadd(ck, v::blend(on, inv, onv), au[j], m);
            } else {
                dm[j] = v::mask_min(dm[j], m, dm[j], d2);
                inv = inv_sqrt(d2);
                au[j] = v::mask3_fmadd(ck, inv, au[j], m);
            }
            const R g = v::mul(v::mul(ck, inv), v::mul(inv, inv));
            ax[j] = v::mask3_fnmadd(g, dx, ax[j], m), ay[j] = v::mask3_fnmadd(g, dy, ay[j], m);
            az[j] = v::mask3_fnmadd(g, dz, az[j], m);
        }
    }
}

template <class T>
QMMM_AVX512 void grad_fold(typename V<T>::R au, typename V<T>::R ax, typename V<T>::R ay, typename V<T>::R az,
                           double *out) {
    using v = V<T>;
    T l[4][v::kLanes];
    v::store_all(l[0], au), v::store_all(l[1], ax), v::store_all(l[2], ay), v::store_all(l[3], az);
    for (int q = 0; q < 4; ++q) {
        double s = 0;
        for (int k = 0; k < v::kLanes; ++k) s += l[q][k];
        out[q] += s;
    }
}

template <class T, int P>
__attribute__((target("avx512f"))) void grad_plain(int64_t b, int64_t e, const T *x, const T *y, const T *z,
                                                   const T *c, T on_value, const T *pt, double *out) {
    using v = V<T>;
    using R = typename v::R;
    R au[P], ax[P], ay[P], az[P], dm[P];
    for (int j = 0; j < P; ++j) dm[j] = v::set1(T(3.0e38));
    grad_pass<T, P, false>(b, e, x, y, z, c, on_value, pt, au, ax, ay, az, dm);
    const R eps = v::set1(T(kSingularRadius2));
    for (int j = 0; j < P; ++j) {
        if (v::lt(dm[j], eps)) {
            R cu, cx, cy, cz;
            grad_pass<T, 1, true>(b, e, x, y, z, c, on_value, pt + 3 * j, &cu, &cx, &cy, &cz, nullptr);
            au[j] = cu, ax[j] = cx, ay[j] = cy, az[j] = cz;
        }
        grad_fold<T>(au[j], ax[j], ay[j], az[j], out + 4 * j);
    }
}

// T sums of a vector added into double sums d (masked): float's 16 lanes as two halves of 8.
QMMM_AVX512 void add_to(__mmask8 m, double *d, __m512d v) {
    _mm512_mask_storeu_pd(d, m, _mm512_add_pd(_mm512_maskz_loadu_pd(m, d), v));
}
QMMM_AVX512 void add_to(__mmask16 m, double *d, __m512 v) {
    add_to(static_cast<__mmask8>(m), d, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    add_to(static_cast<__mmask8>(m >> 8), d + 8,
           _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

// The reverse field's plain loop: the np points of pw (x y z w each) on the sites [0, m) of a tile, summed in T in
// order: ph += w (on ? on_value : 1/d), (ex, ey, ez) += w (R - r) / d^3 (0 on the site); the T sums are then added
// to the tile's double sums dph, dex, dey, dez. G vectors of sites at a time keep their coordinates and sums in
// registers while the points stream past (a point is 4 broadcasts); a site's sums take the points one after the
// other, so its bits depend neither on G nor on np. As the value path's kernels: a first pass keeps the smallest d^2
// instead of applying the singular radius to every pair, and the few vectors with a point within it (a point on a
// site) are summed again with the blends; the blends change no other lane, so the bits are the same.
template <class T, int G, bool careful>
QMMM_AVX512 void sites_pass(const typename V<T>::R *xk, const typename V<T>::R *yk, const typename V<T>::R *zk,
                            typename V<T>::R onv, const T *pw, int64_t np, typename V<T>::R *a, typename V<T>::R *bx,
                            typename V<T>::R *by, typename V<T>::R *bz, typename V<T>::R *dm) {
    using v = V<T>;
    using R = typename v::R;
    const R eps = v::set1(T(kSingularRadius2)), one = v::set1(T(1)), zero = v::zero();
    for (int g = 0; g < G; ++g) a[g] = bx[g] = by[g] = bz[g] = zero;
    for (int64_t i = 0; i < np; ++i) {
        const T *p = pw + 4 * i;
        const R px = v::set1(p[0]), py = v::set1(p[1]), pz = v::set1(p[2]), w = v::set1(p[3]);
        for (int g = 0; g < G; ++g) {
            const R dx = v::sub(xk[g], px), dy = v::sub(yk[g], py), dz = v::sub(zk[g], pz);
            const R d2 = v::fmadd(dz, dz, v::fmadd(dy, dy, v::mul(dx, dx)));
            R inv;
            if constexpr (careful) {
                const auto on = v::lt(d2, eps);
                inv = v::blend(on, inv_sqrt(v::blend(on, d2, one)), zero);
                a[g] = v::fmadd(w, v::blend(on, inv, onv), a[g]);
            } else {
                dm[g] = v::min(dm[g], d2);
                inv = inv_sqrt(d2);
                a[g] = v::fmadd(w, inv, a[g]);
            }
            const R gg = v::mul(v::mul(w, inv), v::mul(inv, inv));
            bx[g] = v::fmadd(gg, dx, bx[g]), by[g] = v::fmadd(gg, dy, by[g]), bz[g] = v::fmadd(gg, dz, bz[g]);
        }
    }
}

template <class T, int G>
__attribute__((target("avx512f"))) void sites_plain(int64_t m, const T *x, const T *y, const T *z, T on_value,
                                                    const T *pw, int64_t np, double *dph, double *dex, double *dey,
                                                    double *dez) {
    using v = V<T>;
    using R = typename v::R;
    using M = typename v::M;
    const R eps = v::set1(T(kSingularRadius2)), onv = v::set1(on_value), far = v::set1(T(3.0e38));
    for (int64_t k = 0; k < m; k += G * v::kLanes) {
        M mk[G];
        R xk[G], yk[G], zk[G], a[G], bx[G], by[G], bz[G], dm[G];
        for (int g = 0; g < G; ++g) {
            const int64_t o = k + g * v::kLanes;
            mk[g] = o < m ? v::head(m - o) : M(0);
            xk[g] = v::load(mk[g], x + o), yk[g] = v::load(mk[g], y + o), zk[g] = v::load(mk[g], z + o);
            dm[g] = far;
        }
        sites_pass<T, G, false>(xk, yk, zk, onv, pw, np, a, bx, by, bz, dm);
        M near = 0;
        for (int g = 0; g < G; ++g) near |= v::lt(dm[g], eps) & mk[g];
        if (near) sites_pass<T, G, true>(xk, yk, zk, onv, pw, np, a, bx, by, bz, dm);
        for (int g = 0; g < G; ++g) {
            const int64_t o = k + g * v::kLanes;
            add_to(mk[g], dph + o, a[g]), add_to(mk[g], dex + o, bx[g]), add_to(mk[g], dey + o, by[g]);
            add_to(mk[g], dez + o, bz[g]);
        }
    }
}

// The tile's sums into the outputs: phi[k] = ph[k], e[3k..3k+2] = (ex, ey, ez)[k] for k in [0, m), 8 sites a pass
// interleaved by permutes (the rest one by one). Returns whether every value is finite (x * 0 == 0).
__attribute__((target("avx512f"))) inline bool sites_store(int64_t m, const double *ph, const double *ex,
                                                           const double *ey, const double *ez, double *phi,
                                                           double *e) {
    const __m512d zero = _mm512_setzero_pd();
    const __m512i i0 = _mm512_setr_epi64(0, 8, 0, 1, 9, 0, 2, 10), j0 = _mm512_setr_epi64(0, 0, 0, 0, 0, 1, 0, 0);
    const __m512i i1 = _mm512_setr_epi64(0, 3, 11, 0, 4, 12, 0, 5), j1 = _mm512_setr_epi64(2, 0, 0, 3, 0, 0, 4, 0);
    const __m512i i2 = _mm512_setr_epi64(13, 0, 6, 14, 0, 7, 15, 0), j2 = _mm512_setr_epi64(0, 5, 0, 0, 6, 0, 0, 7);
    __mmask8 ok = 0xff;
    int64_t k = 0;
    for (; k + 8 <= m; k += 8) {
        const __m512d a = _mm512_loadu_pd(ph + k), x = _mm512_loadu_pd(ex + k), y = _mm512_loadu_pd(ey + k);
        const __m512d z = _mm512_loadu_pd(ez + k);
        _mm512_storeu_pd(phi + k, a);
        double *o = e + 3 * k;
        _mm512_storeu_pd(o, _mm512_mask_permutexvar_pd(_mm512_permutex2var_pd(x, i0, y), 0x24, j0, z));
        _mm512_storeu_pd(o + 8, _mm512_mask_permutexvar_pd(_mm512_permutex2var_pd(x, i1, y), 0x49, j1, z));
        _mm512_storeu_pd(o + 16, _mm512_mask_permutexvar_pd(_mm512_permutex2var_pd(x, i2, y), 0x92, j2, z));
        const __m512d s = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(a, zero), _mm512_mul_pd(x, zero)),
                                        _mm512_add_pd(_mm512_mul_pd(y, zero), _mm512_mul_pd(z, zero)));
        ok &= _mm512_cmp_pd_mask(s, zero, _CMP_EQ_OQ);
    }
    bool fin = ok == 0xff;
    for (; k < m; ++k) {
        phi[k] = ph[k], e[3 * k] = ex[k], e[3 * k + 1] = ey[k], e[3 * k + 2] = ez[k];
        fin &= (ph[k] * 0.0 + ex[k] * 0.0) + (ey[k] * 0.0 + ez[k] * 0.0) == 0.0;
    }
    return fin;
}

#undef QMMM_AVX512
#pragma GCC diagnostic pop

}  // namespace avx512_forces
}  // namespace qmmm
