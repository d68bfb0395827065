// field_site_grad_cpu.cpp -- the gradient of the field that n weighted points put on the sites, on the CPU.
//
// Site k: dE_a/dR_b = sum_i w_i (delta_ab / d^3 - 3 d_a d_b / d^5), d = R_k - r_i (plain sites: g = 1/d; the engine
// refuses screened ones). Per site a fixed order: the points in index order, in T, flushed into the site's double
// sums every kFieldChunk points, as the site field (field_site_field_cpu.cpp). Threads take tiles of sites (each
// site is summed by one thread), vectorised across the sites of a block, so a site's bits depend on neither the
// thread count nor the other sites. Where the CPU has AVX-512 (forces_use_avx512) the pairs take 1/d from the
// hardware seed as the site field's loops do (field_forces_avx512.hpp's recip); elsewhere the compiler's loops. The
// accumulator's form writes running sum + weight x value as each tile finishes (no pass over the values after).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "cpu_parallel.hpp"
#include "cpu_threads.hpp"
#include "forces/field_forces_avx512.hpp"
#include "forces/field_forces_cpu.hpp"
#include "forces/field_forces_shared.hpp"

namespace qmmm {

namespace {

constexpr int64_t kSiteTile = 256;
constexpr int64_t kBlock = 16;

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")

__attribute__((always_inline)) inline double root(double x) { return __builtin_sqrt(x); }
__attribute__((always_inline)) inline float root(float x) { return __builtin_sqrtf(x); }

// The np points of pw (x y z w each) on the sites [0, m), summed in T in order and then added to the double sums
// g[c * kSiteTile + k] (c: xx xy xz yy yz zz). Within the singular radius a site takes on_value for each term: 0 for
// a density cell with its self term (the uniform cube's field is flat at its centre), NaN for another site
// (reported). Every site of a block takes the same vector lanes (no scalar tail).
template <class T>
__attribute__((always_inline)) inline void grad_points_body(int64_t m, const T *__restrict x, const T *__restrict y,
                                                            const T *__restrict z, T on_value,
                                                            const T *__restrict pw, int64_t np,
                                                            double *__restrict g) {
    const double un = 1.0 / double(ForceSourcesCpu<T>::kPre);  // the weights came times kPre (exact)
    for (int64_t k0 = 0; k0 < m; k0 += kBlock) {
        const int64_t nb = std::min(kBlock, m - k0);
        T xk[kBlock] = {}, yk[kBlock] = {}, zk[kBlock] = {};
        T axx[kBlock] = {}, axy[kBlock] = {}, axz[kBlock] = {}, ayy[kBlock] = {}, ayz[kBlock] = {}, azz[kBlock] = {};
        for (int64_t l = 0; l < nb; ++l) xk[l] = x[k0 + l], yk[l] = y[k0 + l], zk[l] = z[k0 + l];
        for (int64_t j = 0; j < np; ++j) {
            const T px = pw[4 * j], py = pw[4 * j + 1], pz = pw[4 * j + 2], w = pw[4 * j + 3];
            for (int64_t l = 0; l < kBlock; ++l) {  // all kBlock lanes (unused ones are dropped below)
                const T dx = xk[l] - px, dy = yk[l] - py, dz = zk[l] - pz;
                const T d2 = dx * dx + dy * dy + dz * dz;
                const bool on = d2 < T(kSingularRadius2);
                const T inv = T(1) / root(on ? T(1) : d2), i2 = inv * inv;
                const T t3 = on ? on_value : ((w * inv) * inv) * inv;  // w / d^3, formed as the field's
                const T t5 = on ? on_value : T(3) * t3 * i2;            // 3 w / d^5
                axx[l] += t3 - t5 * dx * dx, axy[l] -= t5 * dx * dy, axz[l] -= t5 * dx * dz;
                ayy[l] += t3 - t5 * dy * dy, ayz[l] -= t5 * dy * dz, azz[l] += t3 - t5 * dz * dz;
            }
        }
        for (int64_t l = 0; l < nb; ++l) {
            double *s = g + k0 + l;
            s[0] += axx[l] * un, s[kSiteTile] += axy[l] * un, s[2 * kSiteTile] += axz[l] * un;
            s[3 * kSiteTile] += ayy[l] * un, s[4 * kSiteTile] += ayz[l] * un, s[5 * kSiteTile] += azz[l] * un;
        }
    }
}

// Named apart per type: one target_clones resolver per symbol.
QMMM_CLONES void grad_points_double(int64_t m, const double *x, const double *y, const double *z, double on_value,
                                    const double *pw, int64_t np, double *g) {
    grad_points_body<double>(m, x, y, z, on_value, pw, np, g);
}
QMMM_CLONES void grad_points_float(int64_t m, const float *x, const float *y, const float *z, float on_value,
                                   const float *pw, int64_t np, double *g) {
    grad_points_body<float>(m, x, y, z, on_value, pw, np, g);
}

#pragma GCC pop_options

// The AVX-512 form of grad_points_body: G vectors of sites keep their coordinates and 6 sums in registers while the
// points stream past; 1/d from recip (double: to half an ulp; float: r = 2/d, which the weights' kPre = 1/8 makes
// w r^3 = w/d^3 and the 3/d^2 of t5 0.75 r^2). A first pass keeps the smallest d^2; a block with a point within the
// singular radius is summed again with the on-site blends, which change no other lane (as the site field's loops).
namespace avx = avx512_forces;
#define QMMM_AVX512 __attribute__((target("avx512f"), always_inline)) inline

template <class T>
struct GradSums {
    typename avx::V<T>::R xx, xy, xz, yy, yz, zz;
};

template <class T, int G, bool careful>
QMMM_AVX512 void grad_pass(const typename avx::V<T>::R *xk, const typename avx::V<T>::R *yk,
                           const typename avx::V<T>::R *zk, const typename avx::V<T>::M *mk, typename avx::V<T>::R onv,
                           const T *pw, int64_t np, GradSums<T> *s, typename avx::V<T>::R &dm) {
    using v = avx::V<T>;
    using R = typename v::R;
    const R c5 = v::set1(sizeof(T) == 4 ? T(0.75) : T(3));
    for (int g = 0; g < G; ++g) s[g].xx = s[g].xy = s[g].xz = s[g].yy = s[g].yz = s[g].zz = v::zero();
    for (int64_t i = 0; i < np; ++i) {
        const T *p = pw + 4 * i;
        const R px = v::set1(p[0]), py = v::set1(p[1]), pz = v::set1(p[2]), w = v::set1(p[3]);
        for (int g = 0; g < G; ++g) {
            const R dx = v::sub(xk[g], px), dy = v::sub(yk[g], py), dz = v::sub(zk[g], pz);
            const R d2 = v::fmadd(dz, dz, v::fmadd(dy, dy, v::mul(dx, dx)));
            R t3, t5;
            if constexpr (careful) {
                const auto on = v::lt(d2, v::set1(T(kSingularRadius2)));
                const R r = v::blend(on, avx::recip(v::blend(on, d2, v::set1(T(1)))), v::zero()), r2 = v::mul(r, r);
                t3 = v::mul(v::mul(w, r), r2), t5 = v::mul(v::mul(c5, t3), r2);
                t3 = v::blend(on, t3, onv), t5 = v::blend(on, t5, onv);
            } else {
                dm = v::mask_min(dm, mk[g], dm, d2);
                const R r = avx::recip(d2), r2 = v::mul(r, r);
                t3 = v::mul(v::mul(w, r), r2), t5 = v::mul(v::mul(c5, t3), r2);
            }
            const R tx = v::mul(t5, dx), ty = v::mul(t5, dy), tz = v::mul(t5, dz);
            GradSums<T> &a = s[g];
            a.xx = v::sub(v::add(a.xx, t3), v::mul(tx, dx)), a.xy = v::sub(a.xy, v::mul(tx, dy));
            a.xz = v::sub(a.xz, v::mul(tx, dz)), a.yy = v::sub(v::add(a.yy, t3), v::mul(ty, dy));
            a.yz = v::sub(a.yz, v::mul(ty, dz)), a.zz = v::sub(v::add(a.zz, t3), v::mul(tz, dz));
        }
    }
}

template <class T, int G>
__attribute__((target("avx512f"))) void grad_points_avx512(int64_t m, const T *x, const T *y, const T *z, T on_value,
                                                           const T *pw, int64_t np, double *g) {
    using v = avx::V<T>;
    using R = typename v::R;
    using M = typename v::M;
    const R onv = v::set1(on_value);
    for (int64_t k = 0; k < m; k += G * v::kLanes) {
        M mk[G];
        R xk[G], yk[G], zk[G], dm = v::set1(T(3.0e38));
        GradSums<T> s[G];
        for (int q = 0; q < G; ++q) {
            const int64_t o = k + q * v::kLanes;
            mk[q] = o < m ? v::head(m - o) : M(0);
            xk[q] = v::load(mk[q], x + o), yk[q] = v::load(mk[q], y + o), zk[q] = v::load(mk[q], z + o);
        }
        grad_pass<T, G, false>(xk, yk, zk, mk, onv, pw, np, s, dm);
        if (v::lt(dm, v::set1(T(kSingularRadius2)))) grad_pass<T, G, true>(xk, yk, zk, mk, onv, pw, np, s, dm);
        for (int q = 0; q < G; ++q) {
            if (!mk[q]) continue;
            double *o = g + k + q * v::kLanes;
            avx::add_to(mk[q], o, s[q].xx, 1.0), avx::add_to(mk[q], o + kSiteTile, s[q].xy, 1.0);
            avx::add_to(mk[q], o + 2 * kSiteTile, s[q].xz, 1.0), avx::add_to(mk[q], o + 3 * kSiteTile, s[q].yy, 1.0);
            avx::add_to(mk[q], o + 4 * kSiteTile, s[q].yz, 1.0), avx::add_to(mk[q], o + 5 * kSiteTile, s[q].zz, 1.0);
        }
    }
}
#undef QMMM_AVX512

// Site vectors per pass: two keep 6 coordinates and 12 sums in registers beside the temporaries.
constexpr int kGradSiteVectors = 2;

inline void grad_points(int64_t m, const double *x, const double *y, const double *z, double on_value,
                        const double *pw, int64_t np, double *g) {
    if (forces_use_avx512())
        grad_points_avx512<double, kGradSiteVectors>(m, x, y, z, on_value, pw, np, g);
    else
        grad_points_double(m, x, y, z, on_value, pw, np, g);
}
inline void grad_points(int64_t m, const float *x, const float *y, const float *z, float on_value, const float *pw,
                        int64_t np, double *g) {
    if (forces_use_avx512())
        grad_points_avx512<float, kGradSiteVectors>(m, x, y, z, on_value, pw, np, g);
    else
        grad_points_float(m, x, y, z, on_value, pw, np, g);
}

}  // namespace

template <class T>
bool force_sites_grad_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, const double *w, double *egrad,
                          const double *acc_in, double weight) {
    std::vector<T> p(4 * static_cast<size_t>(n));  // x y z w per point, offsets from the origin, w times kPre
    for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) p[4 * i + k] = static_cast<T>(xyz[3 * i + k] - s.origin[k]);
        p[4 * i + 3] = static_cast<T>(w[i]) * ForceSourcesCpu<T>::kPre;
    }
    const double pairs = 2.0 * static_cast<double>(n) * static_cast<double>(s.n_plain);  // ~2 site-field pairs each
    const int nt = call_threads(s.n_threads, pairs);
    const int64_t tiles = (s.n_plain + kSiteTile - 1) / kSiteTile;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    // A cell's term on its centre: 0 where the self term applies (SINGLE marks it NaN: recomputed in double).
    const T cell_on = std::isnan(s.self_inv_r) ? nan : T(0);
    std::atomic<bool> bad{false};
    parallel_tiles(nt, tiles, [&](int64_t t) {
        const int64_t first = t * kSiteTile;
        const int64_t m = std::min(kSiteTile, s.n_plain - first);
        const int64_t cells = std::min(std::max(s.n_self - first, int64_t{0}), m);
        double g[6 * kSiteTile] = {};
        for (int64_t b = 0; b < n; b += kFieldChunk) {
            const int64_t e = std::min(n, b + kFieldChunk);
            if (cells > 0) grad_points(cells, &s.x[first], &s.y[first], &s.z[first], cell_on, &p[4 * b], e - b, g);
            if (m > cells)
                grad_points(m - cells, &s.x[first + cells], &s.y[first + cells], &s.z[first + cells], nan, &p[4 * b],
                            e - b, g + cells);
        }
        bool ok = true;
        for (int64_t k = 0; k < m; ++k)
            for (int c = 0; c < 6; ++c) {
                const double v = g[c * kSiteTile + k];
                const int64_t o = 6 * (first + k) + c;
                egrad[o] = acc_in ? add_weighted(acc_in[o], weight, v) : v;
                ok = ok && std::isfinite(v);
            }
        if (!ok) bad.store(true, std::memory_order_relaxed);
    });
    return !bad.load(std::memory_order_relaxed);
}

template bool force_sites_grad_cpu<double>(const ForceSourcesCpu<double> &, int64_t, const double *, const double *,
                                           double *, const double *, double);
template bool force_sites_grad_cpu<float>(const ForceSourcesCpu<float> &, int64_t, const double *, const double *,
                                          double *, const double *, double);

}  // namespace qmmm
