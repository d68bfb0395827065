// field_site_field_cpu.cpp -- the potential and field that n weighted points put on the sites, on the CPU.
//
// Site k: phi_k = sum_i w_i g_k(d_ik), E_k = -grad_Rk phi_k = -sum_i w_i h_k(d_ik) (R_k - r_i) (field_forces_shared.hpp).
// Per site a fixed order: the points in index order, in T, flushed into the site's double sums every kFieldChunk
// points. Threads take tiles of sites (each site is summed by one thread), vectorised across the sites of a tile, so
// a site's bits depend on neither the thread count nor the other sites.
#include <algorithm>
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

// The point (p, w) added to the sites [0, m) of a tile: ph, ex, ey, ez. Within the singular radius a site takes
// w on_value and no field: self_inv_r for a density cell, NaN for another site (reported). The caller splits a tile
// where the density cells end (no lane needs a site's index: float lanes beside 64-bit indices did not vectorise).
template <class T, int P>
__attribute__((always_inline)) inline void plain_point_body(int64_t m, const T *__restrict x, const T *__restrict y,
                                                            const T *__restrict z, T on_value, const T *__restrict pw,
                                                            T *__restrict ph, T *__restrict ex, T *__restrict ey,
                                                            T *__restrict ez) {
    // P points (x y z w each) per pass over the tile: a site's sums still take them one after the other, in order.
    for (int64_t k = 0; k < m; ++k) {
        const T xk = x[k], yk = y[k], zk = z[k];
        T a = ph[k], bx = ex[k], by = ey[k], bz = ez[k];
        for (int j = 0; j < P; ++j) {
            const T dx = xk - pw[4 * j], dy = yk - pw[4 * j + 1], dz = zk - pw[4 * j + 2], w = pw[4 * j + 3];
            const T d2 = dx * dx + dy * dy + dz * dz;
            const bool on = d2 < T(kSingularRadius2);
            const T inv = T(1) / root(on ? T(1) : d2);
            a += w * (on ? on_value : inv);
            const T g = on ? T(0) : w * inv * inv * inv;
            bx += g * dx, by += g * dy, bz += g * dz;
        }
        ph[k] = a, ex[k] = bx, ey[k] = by, ez[k] = bz;
    }
}

#define QMMM_PLAIN_POINT(NAME, T, P)                                                                                \
    QMMM_CLONES void NAME(int64_t m, const T *x, const T *y, const T *z, T on_value, const T *pw, T *ph, T *ex,      \
                          T *ey, T *ez) {                                                                            \
        plain_point_body<T, P>(m, x, y, z, on_value, pw, ph, ex, ey, ez);                                           \
    }
QMMM_PLAIN_POINT(plain_point_double1, double, 1)
QMMM_PLAIN_POINT(plain_point_double4, double, 4)
QMMM_PLAIN_POINT(plain_point_float1, float, 1)
QMMM_PLAIN_POINT(plain_point_float4, float, 4)
#undef QMMM_PLAIN_POINT

constexpr int kPass = 4;

inline void plain_point(int np, int64_t m, const double *x, const double *y, const double *z, double on_value,
                        const double *pw, double *ph, double *ex, double *ey, double *ez) {
    if (forces_use_avx512())
        (np == 1 ? avx512_forces::sites_plain<double, 1> : avx512_forces::sites_plain<double, 4>)(m, x, y, z, on_value,
                                                                                                pw, ph, ex, ey, ez);
    else
        (np == 1 ? plain_point_double1 : plain_point_double4)(m, x, y, z, on_value, pw, ph, ex, ey, ez);
}
inline void plain_point(int np, int64_t m, const float *x, const float *y, const float *z, float on_value,
                        const float *pw, float *ph, float *ex, float *ey, float *ez) {
    if (forces_use_avx512())
        (np == 1 ? avx512_forces::sites_plain<float, 1> : avx512_forces::sites_plain<float, 4>)(m, x, y, z, on_value,
                                                                                              pw, ph, ex, ey, ez);
    else
        (np == 1 ? plain_point_float1 : plain_point_float4)(m, x, y, z, on_value, pw, ph, ex, ey, ez);
}

#pragma GCC pop_options

}  // namespace

template <class T>
bool force_sites_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, const double *w, double *phi_p,
                     double *e_p, double *phi_s, double *e_s) {
    // The points in T (offsets from the sources' origin) and their weights, once per call.
    std::vector<T> p(4 * static_cast<size_t>(n));  // x y z w per point
    for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) p[4 * i + k] = static_cast<T>(xyz[3 * i + k] - s.origin[k]);
        p[4 * i + 3] = static_cast<T>(w[i]);
    }
    const double pairs = static_cast<double>(n) * static_cast<double>(s.n_plain + 8 * s.n_screened);
    const int nt = call_threads(s.n_threads, pairs);
    const int64_t plain_tiles = (s.n_plain + kSiteTile - 1) / kSiteTile;
    const int64_t scr_tiles = (s.n_screened + kSiteTile - 1) / kSiteTile;
    std::vector<char> bad(static_cast<size_t>(plain_tiles + scr_tiles), 0);
    parallel_tiles(nt, plain_tiles + scr_tiles, [&](int64_t t) {
        const bool screened = t >= plain_tiles;
        const int64_t first = (screened ? t - plain_tiles : t) * kSiteTile;
        const int64_t m = std::min(kSiteTile, (screened ? s.n_screened : s.n_plain) - first);
        T ph[kSiteTile], ex[kSiteTile], ey[kSiteTile], ez[kSiteTile];
        double dph[kSiteTile] = {}, dex[kSiteTile] = {}, dey[kSiteTile] = {}, dez[kSiteTile] = {};
        for (int64_t b = 0; b < n; b += kFieldChunk) {
            const int64_t e = std::min(n, b + kFieldChunk);
            std::fill(ph, ph + m, T(0)), std::fill(ex, ex + m, T(0)), std::fill(ey, ey + m, T(0));
            std::fill(ez, ez + m, T(0));
            if (!screened) {  // the tile's density cells (self term on their centres), then its other sites
                const int64_t cells = std::min(std::max(s.n_self - first, int64_t{0}), m);
                const T nan = std::numeric_limits<T>::quiet_NaN();
                for (int64_t i = b; i < e;) {
                    const int np = i + kPass <= e ? kPass : 1;
                    if (cells > 0)
                        plain_point(np, cells, &s.x[first], &s.y[first], &s.z[first], s.self_inv_r, &p[4 * i], ph, ex,
                                    ey, ez);
                    if (m > cells)
                        plain_point(np, m - cells, &s.x[first + cells], &s.y[first + cells], &s.z[first + cells], nan,
                                    &p[4 * i], ph + cells, ex + cells, ey + cells, ez + cells);
                    i += np;
                }
            } else {
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
            }
            for (int64_t k = 0; k < m; ++k) dph[k] += ph[k], dex[k] += ex[k], dey[k] += ey[k], dez[k] += ez[k];
        }
        double *po = screened ? phi_s : phi_p, *eo = screened ? e_s : e_p;
        bool ok = true;
        for (int64_t k = 0; k < m; ++k) {
            const int64_t j = first + k;
            po[j] = dph[k], eo[3 * j] = dex[k], eo[3 * j + 1] = dey[k], eo[3 * j + 2] = dez[k];
            ok &= std::isfinite(dph[k]) && std::isfinite(dex[k]) && std::isfinite(dey[k]) && std::isfinite(dez[k]);
        }
        bad[t] = !ok;
    });
    return std::find(bad.begin(), bad.end(), 1) == bad.end();
}

template bool force_sites_cpu<double>(const ForceSourcesCpu<double> &, int64_t, const double *, const double *,
                                      double *, double *, double *, double *);
template bool force_sites_cpu<float>(const ForceSourcesCpu<float> &, int64_t, const double *, const double *, double *,
                                     double *, double *, double *);

}  // namespace qmmm
