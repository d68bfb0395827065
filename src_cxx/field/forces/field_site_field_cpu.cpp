// field_site_field_cpu.cpp -- the potential and field that n weighted points put on the sites, on the CPU.
//
// Site k: phi_k = sum_i w_i g_k(d_ik), E_k = -grad_Rk phi_k = -sum_i w_i h_k(d_ik) (R_k - r_i) (field_forces_shared.hpp).
// Per site a fixed order: the points in index order, in T, flushed into the site's double sums every kFieldChunk
// points (points that all have one weight: their terms without it, each flush times it). Threads take tiles of sites
// (each site is summed by one thread), vectorised across the sites of a tile, so a site's bits depend on neither the
// thread count nor the other sites. The site accumulator's calls add each tile's values to the running sums inside
// the same loop (SiteAccum).
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

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")

// sqrt as the builtin: std::sqrt(float) is a <cmath> wrapper that GCC does not inline into functions compiled under
// other optimize options (a call per pair, and no vectorisation).
__attribute__((always_inline)) inline double root(double x) { return __builtin_sqrt(x); }
__attribute__((always_inline)) inline float root(float x) { return __builtin_sqrtf(x); }

// The np points of pw (x y z w each) on the sites [0, m) of a tile, summed in T in order and then added to the
// tile's double sums dph, dex, dey, dez. Within the singular radius a site takes w on_value and no field: self_inv_r
// for a density cell, NaN for another site (reported). The caller splits a tile where the density cells end (no lane
// needs a site's index: float lanes beside 64-bit indices did not vectorise). A block of kBlock sites keeps its sums
// in registers while the points stream past; every site of a block takes the same vector lanes (no scalar tail).
constexpr int64_t kBlock = 16;

template <class T>
__attribute__((always_inline)) inline void plain_points_body(int64_t m, const T *__restrict x, const T *__restrict y,
                                                             const T *__restrict z, T on_value,
                                                             const T *__restrict pw, int64_t np,
                                                             double *__restrict dph, double *__restrict dex,
                                                             double *__restrict dey, double *__restrict dez) {
    for (int64_t k0 = 0; k0 < m; k0 += kBlock) {
        const int64_t nb = std::min(kBlock, m - k0);
        T xk[kBlock] = {}, yk[kBlock] = {}, zk[kBlock] = {}, a[kBlock] = {}, bx[kBlock] = {}, by[kBlock] = {},
          bz[kBlock] = {};
        if (nb == kBlock) {
            for (int64_t l = 0; l < kBlock; ++l) xk[l] = x[k0 + l], yk[l] = y[k0 + l], zk[l] = z[k0 + l];
        } else {
            for (int64_t l = 0; l < nb; ++l) xk[l] = x[k0 + l], yk[l] = y[k0 + l], zk[l] = z[k0 + l];
        }
        for (int64_t j = 0; j < np; ++j) {
            const T px = pw[4 * j], py = pw[4 * j + 1], pz = pw[4 * j + 2], w = pw[4 * j + 3];
            for (int64_t l = 0; l < kBlock; ++l) {  // all kBlock lanes (unused ones are dropped below)
                const T dx = xk[l] - px, dy = yk[l] - py, dz = zk[l] - pz;
                const T d2 = dx * dx + dy * dy + dz * dz;
                const bool on = d2 < T(kSingularRadius2);
                const T inv = T(1) / root(on ? T(1) : d2);
                a[l] += w * (on ? on_value : inv);
                const T g = on ? T(0) : w * inv * inv * inv;
                bx[l] += g * dx, by[l] += g * dy, bz[l] += g * dz;
            }
        }
        const double un = 1.0 / double(ForceSourcesCpu<T>::kPre);  // the weights came times kPre (exact)
        if (nb == kBlock) {  // a fixed count: vectorised
            for (int64_t l = 0; l < kBlock; ++l)
                dph[k0 + l] += a[l] * un, dex[k0 + l] += bx[l] * un, dey[k0 + l] += by[l] * un,
                    dez[k0 + l] += bz[l] * un;
        } else {
            for (int64_t l = 0; l < nb; ++l)
                dph[k0 + l] += a[l] * un, dex[k0 + l] += bx[l] * un, dey[k0 + l] += by[l] * un,
                    dez[k0 + l] += bz[l] * un;
        }
    }
}

#define QMMM_PLAIN_POINTS(NAME, T)                                                                                  \
    QMMM_CLONES void NAME(int64_t m, const T *x, const T *y, const T *z, T on_value, const T *pw, int64_t np,       \
                          double *ph, double *ex, double *ey, double *ez) {                                         \
        plain_points_body<T>(m, x, y, z, on_value, pw, np, ph, ex, ey, ez);                                         \
    }
QMMM_PLAIN_POINTS(plain_points_double, double)
QMMM_PLAIN_POINTS(plain_points_float, float)
#undef QMMM_PLAIN_POINTS

// Site vectors per pass of the AVX-512 loop: two keep 6 coordinates and 8 sums in registers beside the temporaries.
constexpr int kSiteVectors = 2;

using avx512_forces::PointWeights;

inline void plain_points(int64_t m, const double *x, const double *y, const double *z, double on_value,
                         const double *pw, int64_t np, PointWeights pwt, double *ph, double *ex, double *ey,
                         double *ez) {
    if (forces_use_avx512())
        avx512_forces::sites_plain<double, kSiteVectors>(m, x, y, z, on_value, pw, np, pwt, ph, ex, ey, ez);
    else
        plain_points_double(m, x, y, z, on_value, pw, np, ph, ex, ey, ez);
}
inline void plain_points(int64_t m, const float *x, const float *y, const float *z, float on_value, const float *pw,
                         int64_t np, PointWeights pwt, double *ph, double *ex, double *ey, double *ez) {
    if (forces_use_avx512())
        avx512_forces::sites_plain<float, kSiteVectors>(m, x, y, z, on_value, pw, np, pwt, ph, ex, ey, ez);
    else
        plain_points_float(m, x, y, z, on_value, pw, np, ph, ex, ey, ez);
}

// The sites [0, m) of one chunk of points straight into the outputs (AVX-512 only); whether every value is finite.
inline bool plain_points_out(int64_t m, const double *x, const double *y, const double *z, double on_value,
                             const double *pw, int64_t np, PointWeights pwt, double *phi, double *e) {
    return avx512_forces::sites_plain_out<double, kSiteVectors>(m, x, y, z, on_value, pw, np, pwt, phi, e);
}
inline bool plain_points_out(int64_t m, const float *x, const float *y, const float *z, float on_value,
                             const float *pw, int64_t np, PointWeights pwt, double *phi, double *e) {
    return avx512_forces::sites_plain_out<float, kSiteVectors>(m, x, y, z, on_value, pw, np, pwt, phi, e);
}

// A call of one chunk of points added to the accumulator (AVX-512 only): site k of [0, m) at o + k of its arrays.
inline bool plain_points_acc(int64_t m, const double *x, const double *y, const double *z, double on_value,
                             const double *pw, int64_t np, PointWeights pwt, const SiteAccum &acc, int64_t o) {
    return avx512_forces::sites_plain_acc<double, kSiteVectors>(m, x, y, z, on_value, pw, np, pwt, acc, o);
}
inline bool plain_points_acc(int64_t m, const float *x, const float *y, const float *z, float on_value,
                             const float *pw, int64_t np, PointWeights pwt, const SiteAccum &acc, int64_t o) {
    return avx512_forces::sites_plain_acc<float, kSiteVectors>(m, x, y, z, on_value, pw, np, pwt, acc, o);
}

// The tile's double sums added to the accumulator at o (add_weighted); whether every value is finite.
inline bool acc_store_sites(int64_t m, const double *ph, const double *ex, const double *ey, const double *ez,
                            const SiteAccum &acc, int64_t o) {
    if (forces_use_avx512()) return avx512_forces::sites_acc_store(m, ph, ex, ey, ez, acc, o);
    int ok = 1;
    const double *v[4] = {ph, ex, ey, ez};
    for (int64_t k = 0; k < m; ++k)
        for (int q = 0; q < 4; ++q) {
            acc.out[q][o + k] = add_weighted(acc.in[q][o + k], acc.weight, v[q][k]);
            ok &= __builtin_isfinite(v[q][k]);
        }
    return ok;
}

// The tile's double sums into the outputs (phi[k], e[3k..3k+2]); whether every value is finite.
inline bool store_sites(int64_t m, const double *ph, const double *ex, const double *ey, const double *ez, double *phi,
                        double *e) {
    if (forces_use_avx512()) return avx512_forces::sites_store(m, ph, ex, ey, ez, phi, e);
    // The builtin, & without short-circuit: std::isfinite is not inlined under this file's optimize options.
    int ok = 1;
    for (int64_t k = 0; k < m; ++k) {
        phi[k] = ph[k], e[3 * k] = ex[k], e[3 * k + 1] = ey[k], e[3 * k + 2] = ez[k];
        ok &= __builtin_isfinite(ph[k]) & __builtin_isfinite(ex[k]) & __builtin_isfinite(ey[k]) &
              __builtin_isfinite(ez[k]);
    }
    return ok;
}

#pragma GCC pop_options

}  // namespace

template <class T>
bool force_sites_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, const double *w, double *phi_p,
                     double *e_p, double *phi_s, double *e_s, const SiteAccum *acc) {
    // The points in T (offsets from the sources' origin) and their weights times kPre, once per call.
    std::vector<T> p(4 * static_cast<size_t>(n));  // x y z w per point
    for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) p[4 * i + k] = static_cast<T>(xyz[3 * i + k] - s.origin[k]);
        p[4 * i + 3] = static_cast<T>(w[i]) * ForceSourcesCpu<T>::kPre;
    }
    // One weight for every point (a walker's electrons, the common call): the AVX-512 loops leave it out of the pair
    // terms and scale the sums by it (PointWeights). The choice depends on the call's weights alone.
    bool one = true;
    for (int64_t i = 1; i < n; ++i) one = one && w[i] == w[0];
    const PointWeights pwt{!one || n == 0, one && n > 0 ? w[0] * double(ForceSourcesCpu<T>::kPre) : 1.0};
    const double un = 1.0 / double(ForceSourcesCpu<T>::kPre);
    const double pairs = static_cast<double>(n) * static_cast<double>(s.n_plain + 8 * s.n_screened);
    const int nt = call_threads(s.n_threads, pairs);
    const int64_t plain_tiles = (s.n_plain + kSiteTile - 1) / kSiteTile;
    const int64_t scr_tiles = (s.n_screened + kSiteTile - 1) / kSiteTile;
    std::atomic<bool> bad{false};  // as the gradient's: one flag, no per-call vector of them
    parallel_tiles(nt, plain_tiles + scr_tiles, [&](int64_t t) {
        const bool screened = t >= plain_tiles;
        const int64_t first = (screened ? t - plain_tiles : t) * kSiteTile;
        const int64_t m = std::min(kSiteTile, (screened ? s.n_screened : s.n_plain) - first);
        if (!screened && n <= kFieldChunk && forces_use_avx512()) {
            // One chunk of points (a VMC step's call): the sums go to the outputs directly, with the same bits.
            const int64_t cells = std::min(std::max(s.n_self - first, int64_t{0}), m);
            bool ok = true;
            const T nan = std::numeric_limits<T>::quiet_NaN();
            if (acc) {
                if (cells > 0)
                    ok &= plain_points_acc(cells, &s.x[first], &s.y[first], &s.z[first], s.self_inv_r, p.data(), n,
                                           pwt, *acc, first);
                if (m > cells)
                    ok &= plain_points_acc(m - cells, &s.x[first + cells], &s.y[first + cells], &s.z[first + cells],
                                           nan, p.data(), n, pwt, *acc, first + cells);
            } else {
                if (cells > 0)
                    ok &= plain_points_out(cells, &s.x[first], &s.y[first], &s.z[first], s.self_inv_r, p.data(), n,
                                           pwt, phi_p + first, e_p + 3 * first);
                if (m > cells)
                    ok &= plain_points_out(m - cells, &s.x[first + cells], &s.y[first + cells], &s.z[first + cells],
                                           nan, p.data(), n, pwt, phi_p + first + cells, e_p + 3 * (first + cells));
            }
            if (!ok) bad.store(true, std::memory_order_relaxed);
            return;
        }
        double dph[kSiteTile] = {}, dex[kSiteTile] = {}, dey[kSiteTile] = {}, dez[kSiteTile] = {};
        for (int64_t b = 0; b < n; b += kFieldChunk) {
            const int64_t e = std::min(n, b + kFieldChunk);
            if (!screened) {  // the tile's density cells (self term on their centres), then its other sites
                const int64_t cells = std::min(std::max(s.n_self - first, int64_t{0}), m);
                const T nan = std::numeric_limits<T>::quiet_NaN();
                if (cells > 0)
                    plain_points(cells, &s.x[first], &s.y[first], &s.z[first], s.self_inv_r, &p[4 * b], e - b, pwt,
                                 dph, dex, dey, dez);
                if (m > cells)
                    plain_points(m - cells, &s.x[first + cells], &s.y[first + cells], &s.z[first + cells], nan,
                                 &p[4 * b], e - b, pwt, dph + cells, dex + cells, dey + cells, dez + cells);
                continue;
            }
            T ph[kSiteTile] = {}, ex[kSiteTile] = {}, ey[kSiteTile] = {}, ez[kSiteTile] = {};
            for (int64_t i = b; i < e; ++i) {
                const T px = p[4 * i], py = p[4 * i + 1], pz = p[4 * i + 2], wi = p[4 * i + 3];
                for (int64_t k = 0; k < m; ++k) {
                    const int64_t j = first + k;
                    const T dx = s.sx[j] - px, dy = s.sy[j] - py, dz = s.sz[j] - pz;
                    const T d2 = dx * dx + dy * dy + dz * dz;
                    T gv, h;
                    if (d2 >= s.cut2[j]) {
                        const T inv = T(1) / std::sqrt(d2);
                        gv = inv, h = -inv * inv * inv;
                    } else {
                        gv = screened_inv_r_xyz<T>(s.kind, dx, dy, dz, s.sa[j], s.sb[j]);
                        h = d2 > T(0) ? screened_grad_h<T>(s.kind, d2, s.sa[j], s.sb[j]) : T(0);
                    }
                    ph[k] += wi * gv;
                    const T g = -wi * h;  // E = -sum w h (R - r)
                    ex[k] += g * dx, ey[k] += g * dy, ez[k] += g * dz;
                }
            }
            for (int64_t k = 0; k < m; ++k)
                dph[k] += ph[k] * un, dex[k] += ex[k] * un, dey[k] += ey[k] * un, dez[k] += ez[k] * un;
        }
        double *po = screened ? phi_s : phi_p, *eo = screened ? e_s : e_p;
        const bool ok = acc ? acc_store_sites(m, dph, dex, dey, dez, *acc, (screened ? s.n_plain : 0) + first)
                            : store_sites(m, dph, dex, dey, dez, po + first, eo + 3 * first);
        if (!ok) bad.store(true, std::memory_order_relaxed);
    });
    return !bad.load(std::memory_order_relaxed);
}

template bool force_sites_cpu<double>(const ForceSourcesCpu<double> &, int64_t, const double *, const double *,
                                      double *, double *, double *, double *, const SiteAccum *);
template bool force_sites_cpu<float>(const ForceSourcesCpu<float> &, int64_t, const double *, const double *, double *,
                                     double *, double *, double *, const SiteAccum *);

}  // namespace qmmm
