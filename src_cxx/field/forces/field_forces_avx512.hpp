// field_forces_avx512.hpp -- the forces' plain pair loops in AVX-512 (field_grad_cpu.cpp, field_site_field_cpu.cpp;
// field_site_grad_cpu.cpp takes its vector types, recip and add_to), run when the CPU has it and QMMM_CPU_ISA does
// not ask for another set (cpu_simd.hpp). The compiler-vectorised
// loops beside them pay a vector square root and a division per pair; these take 1/r from the hardware seed
// (rsqrt14, ~2^-14) and, in double, a series to half an ulp (recip), in float one Newton step. Both loops share one
// pair term (pair_term). Same structure and order as the generic loops (lanes by position, points in order), but not
// the same bits.
#pragma once
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cpu_simd.hpp"
#include "backend/field_shared.hpp"
#include "forces/field_forces_cpu.hpp"
#include "forces/field_forces_sign.hpp"

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

// GCC 12 warns that rsqrt14's unused pass-through operand "may be used uninitialized", and extractf64x4's "is used
// uninitialized" where a lambda takes float's halves (false positives in its header: the operand is an undefined
// vector by design).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#define QMMM_AVX512 __attribute__((target("avx512f"), always_inline)) inline
#define QMMM_AVX512_FN __attribute__((target("avx512f"), always_inline))  // a lambda's

// The pair's reciprocal distance r from the seed, in the form the loops use it (pair_term):
//   double: r = 1/d, the seed and 1/(1 - e)^(1/2) = 1 + e (c1 + c2 e + c3 e^2), e = 1 - d2 y0^2. The first omitted
//     term, c4 e^3 (c4 = 0.2734375, |e| < 2^-13), is below 6e-17 relative: under half a double ulp, and far under the
//     forces' 1e-13 claim (the value kernels carry it, for their one-ulp claim).
//   float: r = 2/d, one Newton step without its 1/2, y0 (3 - d2 y0^2) (~2^-27).
// The forces' term then costs the fewest multiply-class operations (the units that limit these loops, as the value
// kernels; differences, minima and sums run beside them): s c r and (s c r) r^2 from the scaled charge s c.
QMMM_AVX512 __m512d recip(__m512d d2) {
    // _mm512_rsqrt14_pd with a full mask: the same result, without GCC 12's false uninitialised warning
    const __m512d y0 = _mm512_maskz_rsqrt14_pd(0xFF, d2);
    const __m512d e = _mm512_fnmadd_pd(_mm512_mul_pd(d2, y0), y0, _mm512_set1_pd(1.0));
    const __m512d s = _mm512_fmadd_pd(_mm512_fmadd_pd(_mm512_set1_pd(0.3125), e, _mm512_set1_pd(0.375)), e,
                                      _mm512_set1_pd(0.5));
    return _mm512_fmadd_pd(_mm512_mul_pd(y0, e), s, y0);
}
QMMM_AVX512 __m512 recip(__m512 d2) {
    const __m512 y0 = _mm512_rsqrt14_ps(d2);
    return _mm512_mul_ps(y0, _mm512_fnmadd_ps(_mm512_mul_ps(d2, y0), y0, _mm512_set1_ps(3.0f)));
}

// The rounding argument of the _round_ intrinsics that add, sub and mul use: the current mode (no embedded rounding in
// the instruction). GCC compiles _mm512_add_pd and _mm512_mul_pd as plain vector arithmetic, which -ffp-contract
// (GCC's default: fast) may fuse into a multiply-add where one instantiation's code allows it and another's does
// not: a point's bits then depended on the points sharing its pass. The _round_ forms are builtins it does not fuse;
// every fused multiply-add here is spelled out.
constexpr int kCur = _MM_FROUND_CUR_DIRECTION;

// The vector type of T and its operations, for one template over both. The loops take the charges (weights) times
// kPre (ForceSourcesCpu::kPre) and scale the value sums by kUnscale as they leave T, both powers of two (exact): with
// r = 2/d in float, (c/8) r = c/(4d) and (c/(4d)) r^2 = c/d^3, the field's term unscaled. The value term is the one
// scaled down: the field's T sums keep their range (no overflow that the unscaled loop would not have).
template <class T>
struct V;
template <>
struct V<double> {
    using R = __m512d;
    using M = __mmask8;
    static constexpr int kLanes = 8;
    static constexpr double kPre = 1.0, kUnscale = 1.0, kRecip = 1.0;  // recip gives kRecip / d
    QMMM_AVX512 static R set1(double v) { return _mm512_set1_pd(v); }
    QMMM_AVX512 static R zero() { return _mm512_setzero_pd(); }
    QMMM_AVX512 static R load(M m, const double *p) { return _mm512_maskz_loadu_pd(m, p); }
    QMMM_AVX512 static R add(R a, R b) { return _mm512_add_round_pd(a, b, kCur); }
    QMMM_AVX512 static R sub(R a, R b) { return _mm512_sub_round_pd(a, b, kCur); }
    QMMM_AVX512 static R mul(R a, R b) { return _mm512_mul_round_pd(a, b, kCur); }
    QMMM_AVX512 static R fmadd(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }
    QMMM_AVX512 static R min(R a, R b) { return _mm512_min_pd(a, b); }
    QMMM_AVX512 static R mask_add(R a, M m, R b) { return _mm512_mask_add_pd(a, m, a, b); }
    QMMM_AVX512 static R mask3_fmadd(R a, R b, R c, M m) { return _mm512_mask3_fmadd_pd(a, b, c, m); }
    QMMM_AVX512 static M lt(R a, R b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
    QMMM_AVX512 static M nlt(R a, R b) { return _mm512_cmp_pd_mask(a, b, _CMP_NLT_UQ); }  // !(a < b): NaN too
    QMMM_AVX512 static R blend(M m, R a, R b) { return _mm512_mask_blend_pd(m, a, b); }  // m ? b : a
    QMMM_AVX512 static R mask_min(R src, M m, R a, R b) { return _mm512_mask_min_pd(src, m, a, b); }
    QMMM_AVX512 static void store_all(double *p, R v) { _mm512_storeu_pd(p, v); }
    QMMM_AVX512 static M head(int64_t r) { return static_cast<M>(r >= 8 ? 0xff : (1u << r) - 1); }
};
template <>
struct V<float> {
    using R = __m512;
    using M = __mmask16;
    static constexpr int kLanes = 16;
    static constexpr float kPre = 0.125f, kUnscale = 4.0f;
    static constexpr double kRecip = 2.0;
    QMMM_AVX512 static R set1(float v) { return _mm512_set1_ps(v); }
    QMMM_AVX512 static R zero() { return _mm512_setzero_ps(); }
    QMMM_AVX512 static R load(M m, const float *p) { return _mm512_maskz_loadu_ps(m, p); }
    QMMM_AVX512 static R add(R a, R b) { return _mm512_add_round_ps(a, b, kCur); }
    QMMM_AVX512 static R sub(R a, R b) { return _mm512_sub_round_ps(a, b, kCur); }
    QMMM_AVX512 static R mul(R a, R b) { return _mm512_mul_round_ps(a, b, kCur); }
    QMMM_AVX512 static R fmadd(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
    QMMM_AVX512 static R min(R a, R b) { return _mm512_min_ps(a, b); }
    QMMM_AVX512 static R mask_add(R a, M m, R b) { return _mm512_mask_add_ps(a, m, a, b); }
    QMMM_AVX512 static R mask3_fmadd(R a, R b, R c, M m) { return _mm512_mask3_fmadd_ps(a, b, c, m); }
    QMMM_AVX512 static M lt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
    QMMM_AVX512 static M nlt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); }
    QMMM_AVX512 static R blend(M m, R a, R b) { return _mm512_mask_blend_ps(m, a, b); }
    QMMM_AVX512 static R mask_min(R src, M m, R a, R b) { return _mm512_mask_min_ps(src, m, a, b); }
    QMMM_AVX512 static void store_all(float *p, R v) { _mm512_storeu_ps(p, v); }
    QMMM_AVX512 static M head(int64_t r) { return static_cast<M>(r >= 16 ? 0xffff : (1u << r) - 1); }
};

// The sums of one pair loop: the value and the vector term of one point (gradient) or of a vector of sites (field).
template <class T>
struct Sums {
    typename V<T>::R u, x, y, z;
};

// One pair term, the body both loops share: lanes m of s gain c g(d) and c (R - r) / d^3 (R - r = (dx, dy, dz), the
// site minus the point: the gradient at the point and the field at the site alike), c already scaled by kPre (cs).
// Careful: lanes within the singular radius take c on_value and no vector term (onv: on_value / (kPre kUnscale));
// every other lane computes exactly what the fast form computes. Fast: dm keeps the lanes' smallest d^2 instead, or,
// without guard, nothing: the caller tells a pair within the radius from the value sums (sum_flags).
// Unweighted (the reverse field of points of one weight): c = 1, cs unused, the multiply by it left out. full: every
// lane is in m (the same values without the masks).
template <class T, bool careful, bool weighted = true, bool full = false, bool guard = true>
QMMM_AVX512 void pair_term(typename V<T>::R dx, typename V<T>::R dy, typename V<T>::R dz, typename V<T>::R cs,
                           typename V<T>::R onv, typename V<T>::M m, Sums<T> &s, typename V<T>::R &dm) {
    using v = V<T>;
    using R = typename v::R;
    if constexpr (full) {  // the masked forms below on every lane
        const R d2 = v::fmadd(dz, dz, v::fmadd(dy, dy, v::mul(dx, dx)));
        R r, cr;
        if constexpr (careful) {
            const auto on = v::lt(d2, v::set1(T(kSingularRadius2)));
            r = v::blend(on, recip(v::blend(on, d2, v::set1(T(1)))), v::zero());
            cr = weighted ? v::mul(cs, r) : r;
            const R u = v::blend(on, r, onv);
            s.u = v::add(s.u, weighted ? v::mul(cs, u) : u);
        } else {
            if constexpr (guard) dm = v::min(dm, d2);
            r = recip(d2);
            cr = weighted ? v::mul(cs, r) : r;
            s.u = v::add(s.u, cr);
        }
        const R g = v::mul(cr, v::mul(r, r));
        s.x = v::fmadd(g, dx, s.x), s.y = v::fmadd(g, dy, s.y), s.z = v::fmadd(g, dz, s.z);
        return;
    }
    const R d2 = v::fmadd(dz, dz, v::fmadd(dy, dy, v::mul(dx, dx)));
    R r, cr;
    if constexpr (careful) {
        const auto on = v::lt(d2, v::set1(T(kSingularRadius2)));
        r = v::blend(on, recip(v::blend(on, d2, v::set1(T(1)))), v::zero());
        cr = weighted ? v::mul(cs, r) : r;
        const R u = v::blend(on, r, onv);
        s.u = v::mask_add(s.u, m, weighted ? v::mul(cs, u) : u);
    } else {
        if constexpr (guard) dm = v::mask_min(dm, m, dm, d2);
        r = recip(d2);
        cr = weighted ? v::mul(cs, r) : r;
        s.u = v::mask_add(s.u, m, cr);
    }
    const R g = v::mul(cr, v::mul(r, r));
    s.x = v::mask3_fmadd(g, dx, s.x, m), s.y = v::mask3_fmadd(g, dy, s.y, m), s.z = v::mask3_fmadd(g, dz, s.z, m);
}

// The singular radius from the value sums instead of a running minimum, where every term of a lane's sum has one sign
// (the reverse field's unweighted terms, 1/d; a range of charges of one sign, none zero; field_forces_sign.hpp): true
// where a lane of u times sgn is not below lim (NaN too: a site on the point, 1/0).
template <class T>
QMMM_AVX512 bool sum_flag(typename V<T>::R u, typename V<T>::R sgn, typename V<T>::R lim, typename V<T>::M m) {
    return (V<T>::nlt(V<T>::mul(u, sgn), lim) & m) != 0;
}

// sum_flag's bound for terms of weight c_min (field_forces_sign.hpp), for recip's kRecip / d.
template <class T>
inline T sum_flag_limit(double c_min) {
    return qmmm::sum_flag_limit<T>(c_min, V<T>::kRecip);
}

// The gradient's sum_flag bound for the charges c[b, e) (already times kPre): sign_sum_limit (0: the running minimum).
template <class T>
inline T grad_sign_limit(const T *c, int64_t b, int64_t e) {
    return sign_sum_limit<T>(c, b, e, V<T>::kRecip);
}

// Points per register pass of the gradient: each keeps 3 coordinates and 4 sums in registers, and the points of a pass
// share one running minimum (float's 4 a pass measured 2 % slower than 2: too few registers beside the temporaries).
template <class T>
constexpr int kGradPoints = 2;

// The gradient's plain loop: s[j] gains U and dU/dr = sum c (R - r) / d^3 of sites [b, e) at point j of pt (x y z
// each), P points, from the charges c times kPre; lanes by position from b. A point's lanes are its own: its bits are
// those of P = 1.
template <class T, int P, bool careful, bool guard = true>
QMMM_AVX512 void grad_pass(int64_t b, int64_t e, const T *x, const T *y, const T *z, const T *c, T on_value,
                           const T *pt, Sums<T> *s, typename V<T>::R &dm) {
    using v = V<T>;
    using R = typename v::R;
    const R onv = v::set1(on_value / (v::kPre * v::kUnscale));
    R px[P], py[P], pz[P];
    for (int j = 0; j < P; ++j) {
        px[j] = v::set1(pt[3 * j]), py[j] = v::set1(pt[3 * j + 1]), pz[j] = v::set1(pt[3 * j + 2]);
        s[j].u = s[j].x = s[j].y = s[j].z = v::zero();
    }
    // Whole vectors without masks (the same values), then the masked tail.
    const int64_t whole = b + (e - b) / v::kLanes * v::kLanes;
    const auto all = v::head(v::kLanes);
    for (int64_t i = b; i < whole; i += v::kLanes) {
        const R xk = v::load(all, x + i), yk = v::load(all, y + i), zk = v::load(all, z + i), cs = v::load(all, c + i);
        for (int j = 0; j < P; ++j)
            pair_term<T, careful, true, true, guard>(v::sub(xk, px[j]), v::sub(yk, py[j]), v::sub(zk, pz[j]), cs, onv,
                                                    all, s[j], dm);
    }
    if (whole < e) {
        const auto m = v::head(e - whole);
        const R xk = v::load(m, x + whole), yk = v::load(m, y + whole), zk = v::load(m, z + whole),
                cs = v::load(m, c + whole);
        for (int j = 0; j < P; ++j)
            pair_term<T, careful, true, false, guard>(v::sub(xk, px[j]), v::sub(yk, py[j]), v::sub(zk, pz[j]), cs, onv,
                                                     m, s[j], dm);
    }
}

// One point's sums into out[0..3] (U, and dU/dr = sum c (R - r) / d^3): each folded in lane order in double.
template <class T>
QMMM_AVX512 void grad_fold(const Sums<T> &s, double *out) {
    using v = V<T>;
    T l[4][v::kLanes];
    v::store_all(l[0], s.u), v::store_all(l[1], s.x), v::store_all(l[2], s.y), v::store_all(l[3], s.z);
    for (int q = 0; q < 4; ++q) {
        double t = 0;
        for (int k = 0; k < v::kLanes; ++k) t += l[q][k];
        out[q] += q == 0 ? t * double(v::kUnscale) : t;
    }
}

// out[4j..4j+3] += U and dU/dr of sites [b, e) at the P points of pt. As the value path's kernels: a first pass
// applies the singular radius to no pair; points with a site within it (rare: a point on a cell centre) are summed
// again with the blends, which change no other lane: the bits of one careful pass. Which points: where sign_lim is
// nonzero (grad_sign_limit of the range), those whose value sums say so (sum_flag); else those whose smallest d^2,
// kept by the first pass, does.
template <class T, int P>
__attribute__((target("avx512f"))) void grad_plain(int64_t b, int64_t e, const T *x, const T *y, const T *z,
                                                   const T *c, T on_value, const T *pt, double *out, T sign_lim) {
    using v = V<T>;
    constexpr int Q = P < kGradPoints<T> ? P : kGradPoints<T>;
    static_assert(P % Q == 0, "whole register passes");
    for (int j0 = 0; j0 < P; j0 += Q) {
        Sums<T> s[Q];
        typename v::R dm = v::set1(T(3.0e38));
        bool redo = false;
        if (sign_lim != T(0)) {
            grad_pass<T, Q, false, false>(b, e, x, y, z, c, on_value, pt + 3 * j0, s, dm);
            const typename v::R sg = v::set1(sign_lim > T(0) ? T(1) : T(-1)), lim = v::set1(std::fabs(sign_lim));
            for (int j = 0; j < Q; ++j) redo = redo || sum_flag<T>(s[j].u, sg, lim, v::head(v::kLanes));
        } else {
            grad_pass<T, Q, false>(b, e, x, y, z, c, on_value, pt + 3 * j0, s, dm);
            redo = v::lt(dm, v::set1(T(kSingularRadius2)));
        }
        if (redo) grad_pass<T, Q, true>(b, e, x, y, z, c, on_value, pt + 3 * j0, s, dm);
        for (int j = 0; j < Q; ++j) grad_fold<T>(s[j], out + 4 * (j0 + j));
    }
}

// A float vector's lanes 0-7 and 8-15 in double.
QMMM_AVX512 __m512d lo(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
QMMM_AVX512 __m512d hi(__m512 v) {
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

// T sums of a vector added into double sums d (masked), times f: float's 16 lanes as two halves of 8.
QMMM_AVX512 void add_to(__mmask8 m, double *d, __m512d v, double f) {
    const __m512d t = f == 1.0 ? v : _mm512_mul_pd(v, _mm512_set1_pd(f));
    _mm512_mask_storeu_pd(d, m, _mm512_add_pd(_mm512_maskz_loadu_pd(m, d), t));
}
QMMM_AVX512 void add_to(__mmask16 m, double *d, __m512 v, double f) {
    // float's sums are scaled in float (f rounded to float), as finish16 scales them: the same bits on either path
    const __m512 t = f == 1.0 ? v : _mm512_mul_ps(v, _mm512_set1_ps(static_cast<float>(f)));
    add_to(static_cast<__mmask8>(m), d, lo(t), 1.0), add_to(static_cast<__mmask8>(m >> 8), d + 8, hi(t), 1.0);
}

// Points a call of grad_rows takes: the CPU gradient's tile of points, in lanes (two double vectors, one float).
constexpr int kRowPoints = 16;
// Sites after which float's row sums go into double (at the end of a row): as many terms a sum as grad_pass's lanes
// take before grad_fold, so the float sums round as much.
constexpr int64_t kRowFlush = 128;

// The gradient's row layout (lattice cells): rows [r0, r1) of one chunk at the kRowPoints points of p (x y z each),
// the points in lanes and each site broadcast. Per row, the points' offsets across it (dv, dw) and their squares' sum
// once; per pair, du, d^2 from one fused multiply-add, 1/d, the term and the gradient along the row (DOUBLE 14
// operations and the seed, against 20 in grad_pass); across it, dv and dw times the row's sum of c/d^3, which also
// tells whether a site of the row may be within the singular radius (ForceRow::lim). out[4j..4j+3] gains point j's U
// and dU/dr; bit j of the result is set where point j's sums are not to be taken (its chunk must be summed by
// grad_plain instead). Each lane sums its point's terms in the rows' order: a point's bits depend on no other point.
template <class T>
__attribute__((target("avx512f"))) uint32_t grad_rows(const ForceRow<T> *r0, const ForceRow<T> *r1, int axis,
                                                      const T *u, const T *c, const T *p, double *out) {
    using v = V<T>;
    using R = typename v::R;
    constexpr int L = v::kLanes, NV = kRowPoints / L;
    const int av = (axis + 1) % 3, aw = (axis + 2) % 3;
    alignas(64) T pc[3][kRowPoints];
    for (int j = 0; j < kRowPoints; ++j) pc[0][j] = p[3 * j + axis], pc[1][j] = p[3 * j + av], pc[2][j] = p[3 * j + aw];
    alignas(64) double part[4][kRowPoints] = {};  // U, then dU/dr along u, v, w
    R pu[NV], pv[NV], pw[NV], su[NV], gu[NV], gv[NV], gw[NV];
    const auto all = v::head(L);
    for (int k = 0; k < NV; ++k) {
        pu[k] = v::load(all, pc[0] + k * L), pv[k] = v::load(all, pc[1] + k * L), pw[k] = v::load(all, pc[2] + k * L);
        su[k] = gu[k] = gv[k] = gw[k] = v::zero();
    }
    auto flush = [&]() QMMM_AVX512_FN {
        for (int k = 0; k < NV; ++k) {
            add_to(all, part[0] + k * L, su[k], v::kUnscale), add_to(all, part[1] + k * L, gu[k], 1.0);
            add_to(all, part[2] + k * L, gv[k], 1.0), add_to(all, part[3] + k * L, gw[k], 1.0);
            su[k] = gu[k] = gv[k] = gw[k] = v::zero();
        }
    };
    uint32_t flag = 0;
    int64_t since = 0;
    for (const ForceRow<T> *r = r0; r < r1; ++r) {
        R dv[NV], dw[NV], sq[NV], gs[NV];
        const R rv = v::set1(r->v), rw = v::set1(r->w);
        for (int k = 0; k < NV; ++k) {
            dv[k] = v::sub(rv, pv[k]), dw[k] = v::sub(rw, pw[k]);
            sq[k] = v::fmadd(dw[k], dw[k], v::mul(dv[k], dv[k])), gs[k] = v::zero();
        }
        for (int64_t j = r->first; j < r->end; ++j) {
            const R uk = v::set1(u[j]), ck = v::set1(c[j]);
            for (int k = 0; k < NV; ++k) {
                const R du = v::sub(uk, pu[k]), d = recip(v::fmadd(du, du, sq[k])), cr = v::mul(ck, d);
                const R g = v::mul(cr, v::mul(d, d));
                su[k] = v::add(su[k], cr), gu[k] = v::fmadd(g, du, gu[k]), gs[k] = v::add(gs[k], g);
            }
        }
        const R sg = v::set1(r->sgn), lim = v::set1(r->lim);
        for (int k = 0; k < NV; ++k) {
            gv[k] = v::fmadd(gs[k], dv[k], gv[k]), gw[k] = v::fmadd(gs[k], dw[k], gw[k]);
            flag |= static_cast<uint32_t>(v::nlt(v::mul(gs[k], sg), lim)) << (k * L);
        }
        if (sizeof(T) == 4 && (since += r->end - r->first) >= kRowFlush) flush(), since = 0;
    }
    flush();
    for (int j = 0; j < kRowPoints; ++j) {
        out[4 * j] += part[0][j], out[4 * j + 1 + axis] += part[1][j];
        out[4 * j + 1 + av] += part[2][j], out[4 * j + 1 + aw] += part[3][j];
    }
    return flag;
}

// The reverse field's plain loop: the np points of pw (x y z, w times kPre each) on the sites [0, m) of a tile, summed
// in T in order: ph += w (on ? on_value : 1/d), (ex, ey, ez) += w (R - r) / d^3 (0 on the site); the T sums are added
// to the tile's double sums dph, dex, dey, dez. G vectors of sites at a time keep their coordinates and sums in
// registers while the points stream past (a point is 4 broadcasts); a site's sums take the points one after the
// other, so its bits depend neither on G nor on np. The singular radius as the gradient's (grad_plain), per G vectors.
// Unweighted: the weights are left out of the pair term (a multiply less a pair; PointWeights).
template <class T, int G, bool careful, bool weighted, bool full, bool guard = true>
QMMM_AVX512 void sites_pass(const typename V<T>::R *xk, const typename V<T>::R *yk, const typename V<T>::R *zk,
                            const typename V<T>::M *mk, typename V<T>::R onv, const T *pw, int64_t np, Sums<T> *s,
                            typename V<T>::R &dm) {
    using v = V<T>;
    using R = typename v::R;
    for (int g = 0; g < G; ++g) s[g].u = s[g].x = s[g].y = s[g].z = v::zero();
    for (int64_t i = 0; i < np; ++i) {
        const T *p = pw + 4 * i;
        const R px = v::set1(p[0]), py = v::set1(p[1]), pz = v::set1(p[2]), w = weighted ? v::set1(p[3]) : v::zero();
        for (int g = 0; g < G; ++g)
            pair_term<T, careful, weighted, full, guard>(v::sub(xk[g], px), v::sub(yk[g], py), v::sub(zk[g], pz), w,
                                                         onv, mk[g], s[g], dm);
    }
}

// Eight sites' values into the outputs, phi[k] and e[3k..3k+2] for the lanes of m (interleaved by permutes where all
// eight are there).
QMMM_AVX512 void store8(__mmask8 m, __m512d a, __m512d x, __m512d y, __m512d z, double *phi, double *e) {
    if (m == 0xff) {
        const __m512i i0 = _mm512_setr_epi64(0, 8, 0, 1, 9, 0, 2, 10), j0 = _mm512_setr_epi64(0, 0, 0, 0, 0, 1, 0, 0);
        const __m512i i1 = _mm512_setr_epi64(0, 3, 11, 0, 4, 12, 0, 5), j1 = _mm512_setr_epi64(2, 0, 0, 3, 0, 0, 4, 0);
        const __m512i i2 = _mm512_setr_epi64(13, 0, 6, 14, 0, 7, 15, 0), j2 = _mm512_setr_epi64(0, 5, 0, 0, 6, 0, 0, 7);
        _mm512_storeu_pd(phi, a);
        _mm512_storeu_pd(e, _mm512_mask_permutexvar_pd(_mm512_permutex2var_pd(x, i0, y), 0x24, j0, z));
        _mm512_storeu_pd(e + 8, _mm512_mask_permutexvar_pd(_mm512_permutex2var_pd(x, i1, y), 0x49, j1, z));
        _mm512_storeu_pd(e + 16, _mm512_mask_permutexvar_pd(_mm512_permutex2var_pd(x, i2, y), 0x92, j2, z));
        return;
    }
    double t[4][8];
    _mm512_storeu_pd(t[0], a), _mm512_storeu_pd(t[1], x), _mm512_storeu_pd(t[2], y), _mm512_storeu_pd(t[3], z);
    for (int k = 0; k < 8 && (m >> k & 1); ++k)
        phi[k] = t[0][k], e[3 * k] = t[1][k], e[3 * k + 1] = t[2][k], e[3 * k + 2] = t[3][k];
}

// Eight sites' double sums v (phi, Ex, Ey, Ez) as values: 0 + v, the bits that sums started from zero give (-0 becomes
// +0). ok loses the lanes of m whose values are not all finite (x * 0 == 0 fails).
QMMM_AVX512 void finish8(__mmask8 m, __m512d *v, __mmask8 &ok) {
    const __m512d zero = _mm512_setzero_pd();
    for (int q = 0; q < 4; ++q) v[q] = _mm512_add_pd(zero, v[q]);
    const __m512d f = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(v[0], zero), _mm512_mul_pd(v[1], zero)),
                                    _mm512_add_pd(_mm512_mul_pd(v[2], zero), _mm512_mul_pd(v[3], zero)));
    ok &= static_cast<__mmask8>(_mm512_cmp_pd_mask(f, zero, _CMP_EQ_OQ) | static_cast<__mmask8>(~m));
}

// Eight sites' double sums into the outputs (finish8, store8).
QMMM_AVX512 void put8(__mmask8 m, __m512d a, __m512d x, __m512d y, __m512d z, double *phi, double *e, __mmask8 &ok) {
    __m512d v[4] = {a, x, y, z};
    finish8(m, v, ok);
    store8(m, v[0], v[1], v[2], v[3], phi, e);
}

// Sixteen sites' float sums as values in double, lo[q] lanes 0-7 and hi[q] lanes 8-15: the value sums times kUnscale
// f, the field's times f, each scaled and made 0 + v in one fused multiply-add in float (exact where f is a power of
// two, as for the weighted sums' f = 1), then checked as finish8 does on all 16 lanes at once and widened (exact).
QMMM_AVX512 void finish16(__mmask16 m, const Sums<float> &s, double f, __m512d *lo4, __m512d *hi4, __mmask8 &ok) {
    const __m512 zero = _mm512_setzero_ps(), fe = _mm512_set1_ps(static_cast<float>(f));
    const __m512 v[4] = {_mm512_fmadd_ps(s.u, _mm512_set1_ps(static_cast<float>(V<float>::kUnscale * f)), zero),
                         _mm512_fmadd_ps(s.x, fe, zero), _mm512_fmadd_ps(s.y, fe, zero),
                         _mm512_fmadd_ps(s.z, fe, zero)};
    const __m512 c = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(v[0], zero), _mm512_mul_ps(v[1], zero)),
                                   _mm512_add_ps(_mm512_mul_ps(v[2], zero), _mm512_mul_ps(v[3], zero)));
    const __mmask16 good = static_cast<__mmask16>(_mm512_cmp_ps_mask(c, zero, _CMP_EQ_OQ) | static_cast<__mmask16>(~m));
    ok &= static_cast<__mmask8>(good & (good >> 8));
    for (int q = 0; q < 4; ++q) lo4[q] = lo(v[q]), hi4[q] = hi(v[q]);
}

// The points' weights as the reverse field's loops take them. Weighted: each point's own, w times kPre (in pw), in
// every pair term, and scale = 1. Unweighted, where every point of the call has one weight w: none in the pair terms
// (a multiply less a pair: the weight of the electrons of a walker, the common call), and the sums times scale = w
// kPre as they leave T (one rounding where the weighted sum has one a term).
struct PointWeights {
    bool weighted;
    double scale;
};

// A vector of T sums times f in double: float's lanes 0-7 (lo) or 8-15 (hi).
QMMM_AVX512 __m512d scaled(__m512d v, double f) { return f == 1.0 ? v : _mm512_mul_pd(v, _mm512_set1_pd(f)); }

// One vector of sites' T sums (the value sums times kUnscale, all times scale f) into the outputs: float's 16 lanes as
// two halves of 8.
QMMM_AVX512 void put_sites(__mmask8 m, const Sums<double> &s, double *phi, double *e, __mmask8 &ok, double f) {
    put8(m, scaled(s.u, f), scaled(s.x, f), scaled(s.y, f), scaled(s.z, f), phi, e, ok);
}
QMMM_AVX512 void put_sites(__mmask16 m, const Sums<float> &s, double *phi, double *e, __mmask8 &ok, double f) {
    __m512d l[4], h[4];
    finish16(m, s, f, l, h, ok);
    store8(static_cast<__mmask8>(m), l[0], l[1], l[2], l[3], phi, e);
    if (m >> 8) store8(static_cast<__mmask8>(m >> 8), h[0], h[1], h[2], h[3], phi + 8, e + 24);
}

// weight * v rounded on its own, eight lanes of add_weighted's product (field_forces_cpu.hpp: why).
QMMM_AVX512 __m512d product(__m512d weight, __m512d v) {
    __m512d p = _mm512_mul_pd(weight, v);
    __asm__("" : "+v"(p));
    return p;
}

// Eight sites' values v (phi, Ex, Ey, Ez) into the accumulator at o, for the lanes of m: out[q][o + l] =
// in[q][o + l] + weight * v.
QMMM_AVX512 void accum8(__mmask8 m, const __m512d *v, const SiteAccum &acc, int64_t o) {
    const __m512d w = _mm512_set1_pd(acc.weight);
    for (int q = 0; q < 4; ++q)
        _mm512_mask_storeu_pd(acc.out[q] + o, m,
                              _mm512_add_pd(_mm512_maskz_loadu_pd(m, acc.in[q] + o), product(w, v[q])));
}

// Eight sites' double sums (the values put8 writes) into the accumulator at o (finish8, accum8).
QMMM_AVX512 void acc8(__mmask8 m, __m512d a, __m512d x, __m512d y, __m512d z, const SiteAccum &acc, int64_t o,
                      __mmask8 &ok) {
    __m512d v[4] = {a, x, y, z};
    finish8(m, v, ok);
    accum8(m, v, acc, o);
}

// One vector of sites' T sums into the accumulator at o (put_sites' values).
QMMM_AVX512 void acc_sites(__mmask8 m, const Sums<double> &s, const SiteAccum &acc, int64_t o, __mmask8 &ok,
                           double f) {
    acc8(m, scaled(s.u, f), scaled(s.x, f), scaled(s.y, f), scaled(s.z, f), acc, o, ok);
}
QMMM_AVX512 void acc_sites(__mmask16 m, const Sums<float> &s, const SiteAccum &acc, int64_t o, __mmask8 &ok,
                           double f) {
    __m512d l[4], h[4];
    finish16(m, s, f, l, h, ok);
    accum8(static_cast<__mmask8>(m), l, acc, o);
    if (m >> 8) accum8(static_cast<__mmask8>(m >> 8), h, acc, o + 8);
}

// The sites [0, m) in blocks of G vectors, each vector's sums handed to sink(offset, mask, sums) at its block's end.
template <class T, int G, class Sink>
QMMM_AVX512 void sites_blocks(int64_t m, const T *x, const T *y, const T *z, T on_value, const T *pw, int64_t np,
                              bool weighted, Sink &&sink) {
    using v = V<T>;
    using R = typename v::R;
    using M = typename v::M;
    const R onv = v::set1(on_value / (v::kPre * v::kUnscale)), unit_lim = v::set1(sum_flag_limit<T>(1.0));
    for (int64_t k = 0; k < m; k += G * v::kLanes) {
        M mk[G];
        R xk[G], yk[G], zk[G], dm = v::set1(T(3.0e38));
        Sums<T> s[G];
        for (int g = 0; g < G; ++g) {
            const int64_t o = k + g * v::kLanes;
            mk[g] = o < m ? v::head(m - o) : M(0);
            xk[g] = v::load(mk[g], x + o), yk[g] = v::load(mk[g], y + o), zk[g] = v::load(mk[g], z + o);
        }
        // A block of G whole vectors (all but a tile's last) runs without masks: the same values.
        const bool full = k + G * v::kLanes <= m;
        auto pass = [&](auto careful, auto weighted, auto whole) QMMM_AVX512_FN {
            // The unweighted terms are all 1/d > 0: their sums tell a pair within the radius (sum_flag).
            constexpr bool guard = decltype(weighted)::value;
            sites_pass<T, G, decltype(careful)::value, decltype(weighted)::value, decltype(whole)::value, guard>(
                xk, yk, zk, mk, onv, pw, np, s, dm);
        };
        auto passes = [&](auto weighted, auto whole) QMMM_AVX512_FN {
            pass(std::false_type{}, weighted, whole);
            bool redo = false;
            if constexpr (decltype(weighted)::value) {
                redo = v::lt(dm, v::set1(T(kSingularRadius2)));
            } else {
                for (int g = 0; g < G; ++g) redo = redo || sum_flag<T>(s[g].u, v::set1(T(1)), unit_lim, mk[g]);
            }
            if (redo) pass(std::true_type{}, weighted, whole);
        };
        if (weighted)
            full ? passes(std::true_type{}, std::true_type{}) : passes(std::true_type{}, std::false_type{});
        else
            full ? passes(std::false_type{}, std::true_type{}) : passes(std::false_type{}, std::false_type{});
        for (int g = 0; g < G; ++g)
            if (mk[g]) sink(k + g * v::kLanes, mk[g], s[g]);
    }
}

// The sites' sums added to the tile's double sums dph, dex, dey, dez (one chunk of points of several).
template <class T, int G>
__attribute__((target("avx512f"))) void sites_plain(int64_t m, const T *x, const T *y, const T *z, T on_value,
                                                    const T *pw, int64_t np, PointWeights pwt, double *dph,
                                                    double *dex, double *dey, double *dez) {
    const double f = pwt.scale;
    sites_blocks<T, G>(m, x, y, z, on_value, pw, np, pwt.weighted,
                       [&](int64_t o, typename V<T>::M mk, const Sums<T> &s) QMMM_AVX512_FN {
        add_to(mk, dph + o, s.u, V<T>::kUnscale * f), add_to(mk, dex + o, s.x, f);
        add_to(mk, dey + o, s.y, f), add_to(mk, dez + o, s.z, f);
    });
}

// A call of one chunk of points (the calls of a VMC step): the sites' sums straight into the outputs, phi[k] and
// e[3k..3k+2], the bits of sites_plain into zeroed sums and sites_store. Returns whether every value is finite.
template <class T, int G>
__attribute__((target("avx512f"))) bool sites_plain_out(int64_t m, const T *x, const T *y, const T *z, T on_value,
                                                        const T *pw, int64_t np, PointWeights pwt, double *phi,
                                                        double *e) {
    __mmask8 ok = 0xff;
    sites_blocks<T, G>(m, x, y, z, on_value, pw, np, pwt.weighted,
                       [&](int64_t o, typename V<T>::M mk, const Sums<T> &s) QMMM_AVX512_FN {
        put_sites(mk, s, phi + o, e + 3 * o, ok, pwt.scale);
    });
    return ok == 0xff;
}

// sites_plain_out's values added to the accumulator: site k at o + k of its arrays.
template <class T, int G>
__attribute__((target("avx512f"))) bool sites_plain_acc(int64_t m, const T *x, const T *y, const T *z, T on_value,
                                                        const T *pw, int64_t np, PointWeights pwt,
                                                        const SiteAccum &acc, int64_t o) {
    __mmask8 ok = 0xff;
    sites_blocks<T, G>(m, x, y, z, on_value, pw, np, pwt.weighted,
                       [&](int64_t k, typename V<T>::M mk, const Sums<T> &s) QMMM_AVX512_FN {
        acc_sites(mk, s, acc, o + k, ok, pwt.scale);
    });
    return ok == 0xff;
}

// The tile's double sums added to the accumulator at o (sites_store's values). Returns whether every value is finite.
__attribute__((target("avx512f"))) inline bool sites_acc_store(int64_t m, const double *ph, const double *ex,
                                                               const double *ey, const double *ez,
                                                               const SiteAccum &acc, int64_t o) {
    __mmask8 ok = 0xff;
    for (int64_t k = 0; k < m; k += 8) {
        const __mmask8 h = V<double>::head(m - k);
        acc8(h, _mm512_maskz_loadu_pd(h, ph + k), _mm512_maskz_loadu_pd(h, ex + k), _mm512_maskz_loadu_pd(h, ey + k),
             _mm512_maskz_loadu_pd(h, ez + k), acc, o + k, ok);
    }
    return ok == 0xff;
}

// The tile's sums into the outputs: phi[k] = ph[k], e[3k..3k+2] = (ex, ey, ez)[k] for k in [0, m). Returns whether
// every value is finite.
__attribute__((target("avx512f"))) inline bool sites_store(int64_t m, const double *ph, const double *ex,
                                                           const double *ey, const double *ez, double *phi,
                                                           double *e) {
    __mmask8 ok = 0xff;
    for (int64_t k = 0; k < m; k += 8) {
        const __mmask8 h = V<double>::head(m - k);
        put8(h, _mm512_maskz_loadu_pd(h, ph + k), _mm512_maskz_loadu_pd(h, ex + k), _mm512_maskz_loadu_pd(h, ey + k),
             _mm512_maskz_loadu_pd(h, ez + k), phi + k, e + 3 * k, ok);
    }
    return ok == 0xff;
}

#undef QMMM_AVX512
#undef QMMM_AVX512_FN
#pragma GCC diagnostic pop

}  // namespace avx512_forces
}  // namespace qmmm
