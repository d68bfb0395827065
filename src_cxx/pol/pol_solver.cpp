// pol_solver.cpp -- polarizable sites: input checks, exclusions, the permanent field and the induced-dipole solver
// (preconditioned conjugate gradients with matrix-free O(N^2) dipole-field products).
//
// Determinism: a site's field is summed by one thread over the other sites, in index order within the vector lanes
// of the build, and every dot product of the solver is summed in site order on the calling thread, so the dipoles
// are the same bits for any thread count.
#include "pol_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "core_backend.hpp"
#include "cpu_parallel.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"
#include "pol_shared.hpp"
#include "tuning_env.hpp"

namespace qmmm {
namespace {

constexpr long long kMaxSites = 2147483647LL;
constexpr int32_t kMaxExclWidth = 1 << 20;
constexpr int64_t kRowsPerTile = 16;

void check_finite(const double *a, int64_t n, const char *what) {
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(a[i])) throw Error(QMMM_ERR_NONFINITE, strfmt("%s[%lld] is %g", what, ix(i), a[i]));
}

// The tensor xx xy xz yy yz zz: all zero (not polarizable, false), or positive definite (true, with its inverse).
bool tensor_inverse(const double *a, double *inv, int64_t site) {
    bool zero = true;
    for (int d = 0; d < 6; ++d) zero = zero && a[d] == 0;
    if (zero) return false;
    const double xx = a[0], xy = a[1], xz = a[2], yy = a[3], yz = a[4], zz = a[5];
    // Cofactors; the leading principal minors xx, m2 and det are all positive exactly for a positive definite tensor.
    const double cxx = yy * zz - yz * yz, cxy = xz * yz - xy * zz, cxz = xy * yz - xz * yy;
    const double cyy = xx * zz - xz * xz, cyz = xy * xz - xx * yz, czz = xx * yy - xy * xy;
    const double det = xx * cxx + xy * cxy + xz * cxz;
    if (!(xx > 0 && czz > 0 && det > 0) || !std::isfinite(det))
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("the polarizability of site %lld (xx xy xz yy yz zz = %g %g %g %g %g %g) is neither zero "
                           "nor positive definite", ix(site), xx, xy, xz, yy, yz, zz));
    const double r = 1.0 / det;
    inv[0] = cxx * r; inv[1] = cxy * r; inv[2] = cxz * r; inv[3] = cyy * r; inv[4] = cyz * r; inv[5] = czz * r;
    for (int d = 0; d < 6; ++d)
        if (!std::isfinite(inv[d]))
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("the polarizability of site %lld is too small to invert", ix(site)));
    return true;
}

inline void sym_apply(const double *t, const double *x, double *y) {
    y[0] = t[0] * x[0] + t[1] * x[1] + t[2] * x[2];
    y[1] = t[1] * x[0] + t[3] * x[1] + t[4] * x[2];
    y[2] = t[2] * x[0] + t[4] * x[1] + t[5] * x[2];
}

// Calls f(m0, m1) for the runs [m0, m1) of [0, n) between the sorted exclusions ex[0..ne) and self: the inner
// loops then have no branch and vectorize (their reductions in a fixed order for a given build).
template <class F>
inline void for_runs(const int64_t *ex, int64_t ne, int64_t self, int64_t n, F &&f) {
    int64_t m0 = 0, e = 0;
    bool self_done = false;
    for (;;) {
        int64_t next = e < ne ? ex[e] : n;
        const bool at_self = !self_done && self <= next;
        if (at_self) next = self;
        if (next > m0) f(m0, next);
        if (next >= n) break;
        m0 = next + 1;
        if (at_self) {
            self_done = true;
            if (e < ne && ex[e] == self) ++e;
        } else {
            ++e;
        }
    }
}

// One row of T x: the field of the dipoles x (xs, ys, zs: one array a component, unit stride, so the loop
// vectorizes without gathers) at polarizable site k, summed over the other sites in index order within the lanes.
// Compiled for AVX-512, AVX2 and the baseline (target_clones): the loop is 88 % of a polarizable driver run on the
// CPU, and the baseline's two-lane square roots and divisions ran it at a quarter of the AVX-512 rate.
template <bool Damp>
__attribute__((always_inline)) inline void row_field_body(const double *__restrict px, const double *__restrict py,
                                                          const double *__restrict pz, const double *__restrict s6,
                                                          const double *__restrict xs, const double *__restrict ys,
                                                          const double *__restrict zs, const int64_t *ex, int64_t ne,
                                                          int64_t k, int64_t np, double a, double *out) {
    const double xi = px[k], yi = py[k], zi = pz[k], ak = a * s6[k];
    double fx = 0, fy = 0, fz = 0;
    for_runs(ex, ne, k, np, [&](int64_t m0, int64_t m1) {
#pragma omp simd reduction(+ : fx, fy, fz)
        for (int64_t m = m0; m < m1; ++m) {
            const double dx = xi - px[m], dy = yi - py[m], dz = zi - pz[m];
            const double r2 = dx * dx + dy * dy + dz * dz;
            const double rinv = 1.0 / __builtin_sqrt(r2);
            double rinv3 = rinv * rinv * rinv;
            double t = 3.0 * (dx * xs[m] + dy * ys[m] + dz * zs[m]) * rinv3 * rinv * rinv;
            if constexpr (Damp) {
                double fe, ft;
                thole(ak * r2 * rinv * s6[m], fe, ft);
                t *= ft;
                rinv3 *= fe;
            }
            fx += t * dx - xs[m] * rinv3;
            fy += t * dy - ys[m] * rinv3;
            fz += t * dz - zs[m] * rinv3;
        }
    });
    out[0] = fx, out[1] = fy, out[2] = fz;
}

#define QMMM_ROW_FIELD(NAME, DAMP)                                                                                  \
    __attribute__((target_clones("avx512f", "avx2", "default"))) void NAME(                                         \
        const double *px, const double *py, const double *pz, const double *s6, const double *xs, const double *ys, \
        const double *zs, const int64_t *ex, int64_t ne, int64_t k, int64_t np, double a, double *out) {           \
        row_field_body<DAMP>(px, py, pz, s6, xs, ys, zs, ex, ne, k, np, a, out);                                     \
    }
QMMM_ROW_FIELD(row_field_plain, false)
QMMM_ROW_FIELD(row_field_damped, true)
#undef QMMM_ROW_FIELD

// y = (alpha^-1 - T) x over the polarizable sites (3 per site). Rows are summed by one thread each, in site order.
void apply_b_rows(const PolSystem &s, const double *x, const double *xs, const double *ys, const double *zs,
                  double *y, int64_t k0, int64_t k1) {
    const int64_t np = static_cast<int64_t>(s.pol_site.size());
    const auto row = s.opt.damp_induced ? row_field_damped : row_field_plain;
    for (int64_t k = k0; k < k1; ++k) {
        double f[3], ax[3];
        row(s.px.data(), s.py.data(), s.pz.data(), s.s6.data(), xs, ys, zs, s.pexcl.data() + s.pexcl_start[k],
            s.pexcl_start[k + 1] - s.pexcl_start[k], k, np, s.opt.damping_induced, f);
        sym_apply(&s.alpha_inv[6 * k], &x[3 * k], ax);
        y[3 * k] = ax[0] - f[0];
        y[3 * k + 1] = ax[1] - f[1];
        y[3 * k + 2] = ax[2] - f[2];
    }
}

void apply_b(const PolSystem &s, int nt, const double *x, double *y) {
    if (s.product) {
        s.product->apply(x, y);
        return;
    }
    const int64_t np = static_cast<int64_t>(s.pol_site.size());
    std::vector<double> soa(3 * np);
    double *xs = soa.data(), *ys = xs + np, *zs = ys + np;
    for (int64_t k = 0; k < np; ++k) {
        xs[k] = x[3 * k];
        ys[k] = x[3 * k + 1];
        zs[k] = x[3 * k + 2];
    }
    const int64_t tiles = (np + kRowsPerTile - 1) / kRowsPerTile;
    parallel_tiles(nt, tiles, [&](int64_t t) {
        const int64_t k0 = t * kRowsPerTile, k1 = std::min(np, k0 + kRowsPerTile);
        apply_b_rows(s, x, xs, ys, zs, y, k0, k1);
    });
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
    double sum = 0;
    for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
    return sum;
}

void precondition(const PolSystem &s, const std::vector<double> &r, std::vector<double> &z) {
    const int64_t np = static_cast<int64_t>(s.pol_site.size());
    for (int64_t k = 0; k < np; ++k) sym_apply(&s.alpha[6 * s.pol_site[k]], &r[3 * k], &z[3 * k]);
}

// The sites as the permanent field's rows read them: one array a component (PermSites), the Thole factor s6 of each.
struct PermSites {
    const double *x, *y, *z, *q, *px, *py, *pz, *s6;
};

// The permanent field at site i (out[3]) from the charges and dipoles of the sites it does not exclude, in index order
// within the lanes; Damp: Thole-damped with a_i = ai where the other site is polarizable (s6 > 0). Returns how many
// of those sites sit on site i (the caller then names one). Compiled for AVX-512, AVX2 and the baseline as the
// product's rows are (the baseline alone ran it as two-lane SSE2): 6,000 sites' set-up on one core of the
// development VM went from 0.29 s to 0.047 s.
template <bool Damp>
__attribute__((always_inline)) inline int64_t perm_row_body(const PermSites &ps, const int64_t *ex, int64_t ne,
                                                           int64_t i, int64_t n, double ai, double *out) {
    const double *__restrict x = ps.x, *__restrict y = ps.y, *__restrict z = ps.z, *__restrict q = ps.q;
    const double *__restrict px = ps.px, *__restrict py = ps.py, *__restrict pz = ps.pz, *__restrict s6 = ps.s6;
    const double xi = x[i], yi = y[i], zi = z[i];
    double fx = 0, fy = 0, fz = 0;
    int64_t zero = 0;
    for_runs(ex, ne, i, n, [&](int64_t j0, int64_t j1) {
#pragma omp simd reduction(+ : fx, fy, fz, zero)
        for (int64_t j = j0; j < j1; ++j) {
            const double dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
            const double r2 = dx * dx + dy * dy + dz * dz;
            zero += r2 == 0 ? 1 : 0;
            const double rinv = 1.0 / __builtin_sqrt(r2);
            double fe = 1, ft = 1;
            if constexpr (Damp) {
                double de, dt;
                thole(ai * r2 * rinv * s6[j], de, dt);
                fe = s6[j] > 0 ? de : 1.0;
                ft = s6[j] > 0 ? dt : 1.0;
            }
            const double rinv3 = rinv * rinv * rinv;
            const double pr = dx * px[j] + dy * py[j] + dz * pz[j];
            const double t5 = 3.0 * pr * rinv3 * rinv * rinv * ft;
            const double c = q[j] * rinv3 * fe;
            fx += c * dx + t5 * dx - px[j] * rinv3 * fe;
            fy += c * dy + t5 * dy - py[j] * rinv3 * fe;
            fz += c * dz + t5 * dz - pz[j] * rinv3 * fe;
        }
    });
    out[0] = fx, out[1] = fy, out[2] = fz;
    return zero;
}

#define QMMM_PERM_ROW(NAME, DAMP)                                                                                   \
    __attribute__((target_clones("avx512f", "avx2", "default"))) int64_t NAME(                                      \
        const PermSites &ps, const int64_t *ex, int64_t ne, int64_t i, int64_t n, double ai, double *out) {          \
        return perm_row_body<DAMP>(ps, ex, ne, i, n, ai, out);                                                       \
    }
QMMM_PERM_ROW(perm_row_plain, false)
QMMM_PERM_ROW(perm_row_damped, true)
#undef QMMM_PERM_ROW

}  // namespace

void check_pol_options(const qmmm_pol_options &o) {
    check_threads(o.n_threads, "opt->n_threads");
    if (o.max_iter < 1 || o.max_iter > 100000)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->max_iter = %d (1 .. 100000)", o.max_iter));
    if (o.damp_induced != 0 && o.damp_induced != 1)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->damp_induced = %d (0 or 1)", o.damp_induced));
    if (o.damp_multipole != 0 && o.damp_multipole != 1)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->damp_multipole = %d (0 or 1)", o.damp_multipole));
    if (o.backend != QMMM_BACKEND_AUTO && o.backend != QMMM_BACKEND_CPU && o.backend != QMMM_BACKEND_CUDA)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->backend = %d (QMMM_BACKEND_AUTO, _CPU or _CUDA)", o.backend));
    if (o.device < -1)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->device = %d (-1: the current one, or >= 0)", o.device));
    if (o.start_from_mu != 0 && o.start_from_mu != 1)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->start_from_mu = %d (0 or 1)", o.start_from_mu));
    const struct { double v; const char *name; double lo, hi; } vals[] = {
        {o.tolerance, "opt->tolerance", kPolTolMin, kPolTolMax},
        {o.damping_induced, "opt->damping_induced", 1e-3, 1e3},
        {o.damping_multipole, "opt->damping_multipole", 1e-3, 1e3}};
    for (const auto &v : vals) {
        if (!std::isfinite(v.v)) throw Error(QMMM_ERR_NONFINITE, strfmt("%s is %g", v.name, v.v));
        if (v.v < v.lo || v.v > v.hi)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s = %g (%g .. %g)", v.name, v.v, v.lo, v.hi));
    }
}

void build_pol_system(PolSystem &s, int64_t n, const double *xyz, const double *charge, const double *dipole,
                      int32_t alpha_components, const double *alpha, int32_t excl_width, const int64_t *excl,
                      const qmmm_pol_options &opt) {
    check_pol_options(opt);
    if (n < 1 || n > kMaxSites)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_sites = %lld (1 .. %lld)", static_cast<long long>(n), kMaxSites));
    if (!xyz) throw Error(QMMM_ERR_NULL_ARG, "xyz is NULL");
    if (alpha && alpha_components != 1 && alpha_components != 6)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("alpha_components = %d (1 or 6)", alpha_components));
    if (excl_width < 0 || excl_width > kMaxExclWidth)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("excl_width = %d (0 .. %d)", excl_width, kMaxExclWidth));
    if (excl_width > 0 && !excl)
        throw Error(QMMM_ERR_NULL_ARG, strfmt("excl is NULL with excl_width = %d", excl_width));
    check_finite(xyz, 3 * n, "xyz");
    if (charge) check_finite(charge, n, "charge");
    if (dipole) check_finite(dipole, 3 * n, "dipole");
    if (alpha) check_finite(alpha, alpha_components * n, "alpha");
    s.opt = opt;
    s.n = n;
    s.xyz.assign(xyz, xyz + 3 * n);
    s.charge.assign(n, 0.0);
    if (charge) s.charge.assign(charge, charge + n);
    s.dipole.assign(3 * n, 0.0);
    if (dipole) s.dipole.assign(dipole, dipole + 3 * n);
    s.alpha.assign(6 * n, 0.0);
    if (alpha) {
        for (int64_t i = 0; i < n; ++i) {
            double *t = &s.alpha[6 * i];
            if (alpha_components == 6) {
                std::copy(alpha + 6 * i, alpha + 6 * i + 6, t);
            } else {
                if (alpha[i] < 0)
                    throw Error(QMMM_ERR_INVALID_ARG, strfmt("alpha[%lld] = %g is negative", ix(i), alpha[i]));
                t[0] = t[3] = t[5] = alpha[i];
            }
        }
    }
    // Polarizable sites, their inverse tensors and Thole scales.
    std::vector<int64_t> compact(n, -1);
    std::vector<double> site_s6(n, 0.0);
    s.pol_site.clear();
    for (int64_t i = 0; i < n; ++i) {
        double inv[6];
        if (!tensor_inverse(&s.alpha[6 * i], inv, i)) continue;
        const double abar = (s.alpha[6 * i] + s.alpha[6 * i + 3] + s.alpha[6 * i + 5]) / 3.0;
        compact[i] = static_cast<int64_t>(s.pol_site.size());
        s.pol_site.push_back(i);
        s.px.push_back(s.xyz[3 * i]);
        s.py.push_back(s.xyz[3 * i + 1]);
        s.pz.push_back(s.xyz[3 * i + 2]);
        s.alpha_inv.insert(s.alpha_inv.end(), inv, inv + 6);
        site_s6[i] = std::pow(abar, -1.0 / 6.0);
        s.s6.push_back(site_s6[i]);
    }
    // Symmetric exclusions, CSR, sorted, without self.
    std::vector<int64_t> count(n + 1, 0);
    for (int64_t i = 0; i < n; ++i)
        for (int32_t k = 0; k < excl_width; ++k) {
            const int64_t j = excl[i * excl_width + k];
            if (j == -1 || j == i) continue;
            if (j < 0 || j >= n)
                throw Error(QMMM_ERR_INVALID_ARG,
                            strfmt("excl[%lld] = %lld (site %lld's exclusion %d) is neither a site (%lld .. %lld) "
                                   "nor padding", ix(i * excl_width + k), ix(j), ix(i), k + 1, ix(0), ix(n - 1)));
            ++count[i + 1];
            ++count[j + 1];
        }
    for (int64_t i = 0; i < n; ++i) count[i + 1] += count[i];
    s.excl_start = count;
    s.excl.assign(count[n], 0);
    {
        std::vector<int64_t> fill(count.begin(), count.end() - 1);
        for (int64_t i = 0; i < n; ++i)
            for (int32_t k = 0; k < excl_width; ++k) {
                const int64_t j = excl[i * excl_width + k];
                if (j == -1 || j == i) continue;
                s.excl[fill[i]++] = j;
                s.excl[fill[j]++] = i;
            }
    }
    std::vector<int64_t> start(1, 0);
    std::vector<int64_t> uniq;
    uniq.reserve(s.excl.size());
    for (int64_t i = 0; i < n; ++i) {
        auto b = s.excl.begin() + s.excl_start[i], e = s.excl.begin() + s.excl_start[i + 1];
        std::sort(b, e);
        const auto u = std::unique(b, e);
        uniq.insert(uniq.end(), b, u);
        start.push_back(static_cast<int64_t>(uniq.size()));
    }
    s.excl = std::move(uniq);
    s.excl_start = std::move(start);
    // The same among polarizable sites, in compact indices (sorted because compact keeps site order).
    s.pexcl_start.assign(1, 0);
    s.pexcl.clear();
    for (int64_t i : s.pol_site) {
        for (int64_t e = s.excl_start[i]; e < s.excl_start[i + 1]; ++e)
            if (compact[s.excl[e]] >= 0) s.pexcl.push_back(compact[s.excl[e]]);
        s.pexcl_start.push_back(static_cast<int64_t>(s.pexcl.size()));
    }

    // The permanent field at every site: charges and dipoles of the sites it does not exclude.
    s.e_mm.assign(3 * n, 0.0);
    const int nt = call_threads(opt.n_threads, static_cast<double>(n) * static_cast<double>(n));
    const int64_t tiles = (n + kRowsPerTile - 1) / kRowsPerTile;
    std::vector<int64_t> coincident(tiles, -1);  // per tile: a site j on a row's site (the first found), else -1
    std::vector<int64_t> coincident_row(tiles, -1);
    // The sites' coordinates, charges and dipoles one array each (unit stride: the rows vectorize without gathers).
    std::vector<double> soa(7 * static_cast<size_t>(n));
    PermSites ps{};
    double *col[7];
    for (int c = 0; c < 7; ++c) col[c] = soa.data() + c * n;
    ps.x = col[0], ps.y = col[1], ps.z = col[2], ps.q = col[3], ps.px = col[4], ps.py = col[5], ps.pz = col[6];
    ps.s6 = site_s6.data();
    for (int64_t j = 0; j < n; ++j) {
        for (int c = 0; c < 3; ++c) col[c][j] = s.xyz[3 * j + c], col[4 + c][j] = s.dipole[3 * j + c];
        col[3][j] = s.charge[j];
    }
    parallel_tiles(nt, tiles, [&](int64_t t) {
        const int64_t i0 = t * kRowsPerTile, i1 = std::min(n, i0 + kRowsPerTile);
        const double *x = s.xyz.data(), *s6 = site_s6.data();
        for (int64_t i = i0; i < i1; ++i) {
            const double xi = x[3 * i], yi = x[3 * i + 1], zi = x[3 * i + 2];
            const int64_t *ex_i = s.excl.data() + s.excl_start[i];
            const int64_t ne = s.excl_start[i + 1] - s.excl_start[i];
            double f[3];
            const int64_t zero = opt.damp_multipole && s6[i] > 0
                                     ? perm_row_damped(ps, ex_i, ne, i, n, opt.damping_multipole * s6[i], f)
                                     : perm_row_plain(ps, ex_i, ne, i, n, 0.0, f);
            const double ex = f[0], ey = f[1], ez = f[2];
            if (zero > 0 && coincident[t] < 0) {
                // The first site on this one's spot, for the message (rare: a scalar pass).
                for_runs(ex_i, ne, i, n, [&](int64_t j0, int64_t j1) {
                    for (int64_t j = j0; j < j1 && coincident[t] < 0; ++j)
                        if (x[3 * j] == xi && x[3 * j + 1] == yi && x[3 * j + 2] == zi) {
                            coincident[t] = j;
                            coincident_row[t] = i;
                        }
                });
            }
            s.e_mm[3 * i] = ex;
            s.e_mm[3 * i + 1] = ey;
            s.e_mm[3 * i + 2] = ez;
        }
    });
    for (int64_t t = 0; t < tiles; ++t)
        if (coincident[t] >= 0)
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("sites %lld and %lld are at the same position and do not exclude each other",
                               ix(coincident_row[t]), ix(coincident[t])));
    for (int64_t i = 0; i < 3 * n; ++i)
        if (!std::isfinite(s.e_mm[i]))
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("the permanent field at site %lld is not finite (sites too close or charges too large)",
                               ix(i / 3)));
    // The solver's products on the GPU: asked for, or AUTO with more polarizable sites than a GPU call's cost is
    // worth (QMMM_BACKEND decides AUTO when set).
    int backend = opt.backend;
    if (backend == QMMM_BACKEND_AUTO && tuning::backend() < 0 &&
        static_cast<int64_t>(s.pol_site.size()) <= kPolAutoCpu)
        backend = QMMM_BACKEND_CPU;
    s.backend = resolve_backend(backend);
    s.product.reset();
    // CUDA asked for: the device checked first, as a field's is (NO_CUDA, NO_DEVICE or a bad index, with a message),
    // not the first CUDA call's own error.
    if (s.backend == QMMM_BACKEND_CUDA) check_device(opt.device, "opt->device");
    if (s.backend == QMMM_BACKEND_CUDA && !s.pol_site.empty())
        s.product = GpuRegistry<PolGpu>::get().make(s, opt.device);
}

void solve_pol(const PolSystem &s, const double *e_ext, double *mu, qmmm_pol_stats &st) {
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t n = s.n, np = static_cast<int64_t>(s.pol_site.size());
    if (e_ext) check_finite(e_ext, 3 * n, "e_ext");
    st = qmmm_pol_stats{};
    const int nt = call_threads(s.opt.n_threads, static_cast<double>(np) * static_cast<double>(np));
    st.n_threads = nt;
    // b: the total static field at the polarizable sites.
    std::vector<double> b(3 * np), ext(3 * np, 0.0);
    for (int64_t k = 0; k < np; ++k)
        for (int d = 0; d < 3; ++d) {
            const int64_t i = 3 * s.pol_site[k] + d;
            if (e_ext) ext[3 * k + d] = e_ext[i];
            b[3 * k + d] = ext[3 * k + d] + s.e_mm[i];
        }
    std::vector<double> x(3 * np, 0.0), r(3 * np), z(3 * np), p(3 * np), ap(3 * np);
    if (s.opt.start_from_mu) {
        for (int64_t k = 0; k < np; ++k)
            for (int d = 0; d < 3; ++d) {
                const int64_t i = 3 * s.pol_site[k] + d;
                if (!std::isfinite(mu[i]))
                    throw Error(QMMM_ERR_NONFINITE, strfmt("mu[%lld] is %g (the starting dipoles of start_from_mu)",
                                                           ix(i), mu[i]));
                x[3 * k + d] = mu[i];
            }
    }
    const double bnorm = std::sqrt(dot(b, b));
    if (!std::isfinite(bnorm))
        throw Error(QMMM_ERR_INVALID_ARG, "the total field at the sites overflows (|E_ext + E_mm| is not finite)");
    const double goal = s.opt.tolerance * bnorm;
    double rnorm = 0;
    bool ok = bnorm == 0;
    bool breakdown = false;
    if (ok) std::fill(x.begin(), x.end(), 0.0);  // no field: no dipoles, whatever the start
    if (!ok) {
        if (!s.opt.start_from_mu) precondition(s, b, x);  // x0 = alpha b
        apply_b(s, nt, x.data(), ap.data());
        for (int64_t i = 0; i < 3 * np; ++i) r[i] = b[i] - ap[i];
        rnorm = std::sqrt(dot(r, r));
        precondition(s, r, z);
        p = z;
        double rz = dot(r, z);
        while (!(ok = rnorm <= goal) && st.iterations < s.opt.max_iter) {
            apply_b(s, nt, p.data(), ap.data());
            const double pap = dot(p, ap);
            if (!(pap > 0) || !std::isfinite(pap)) {
                breakdown = true;
                break;
            }
            const double step = rz / pap;
            for (int64_t i = 0; i < 3 * np; ++i) {
                x[i] += step * p[i];
                r[i] -= step * ap[i];
            }
            ++st.iterations;
            rnorm = std::sqrt(dot(r, r));
            if (rnorm <= goal) {
                // The recurrence's residual drifts from the true one: confirm with b - B x, restart from it if not.
                apply_b(s, nt, x.data(), ap.data());
                for (int64_t i = 0; i < 3 * np; ++i) r[i] = b[i] - ap[i];
                rnorm = std::sqrt(dot(r, r));
                if (rnorm <= goal) continue;
                precondition(s, r, z);
                p = z;
                rz = dot(r, z);
                continue;
            }
            precondition(s, r, z);
            const double rz_new = dot(r, z);
            const double beta = rz_new / rz;
            rz = rz_new;
            for (int64_t i = 0; i < 3 * np; ++i) p[i] = z[i] + beta * p[i];
        }
    }
    std::fill(mu, mu + 3 * n, 0.0);
    double e_ext_dot = 0, e_mm_dot = 0;
    for (int64_t k = 0; k < np; ++k)
        for (int d = 0; d < 3; ++d) {
            const int64_t i = 3 * s.pol_site[k] + d;
            mu[i] = x[3 * k + d];
            e_ext_dot += x[3 * k + d] * ext[3 * k + d];
            e_mm_dot += x[3 * k + d] * s.e_mm[i];
        }
    st.residual = bnorm > 0 ? rnorm / bnorm : 0.0;
    st.e_pol_ext = -0.5 * e_ext_dot;
    st.e_pol_mm = -0.5 * e_mm_dot;
    st.e_pol = st.e_pol_ext + st.e_pol_mm;
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (breakdown)
        throw Error(QMMM_ERR_NOT_CONVERGED,
                    strfmt("the dipole equations are not positive definite (a polarization catastrophe: polarizable "
                           "sites too close for their polarizabilities; exclude them or set damp_induced) after %d "
                           "iterations, relative residual %.3g",
                           st.iterations, st.residual));
    if (!ok)
        throw Error(QMMM_ERR_NOT_CONVERGED,
                    strfmt("%d iterations (max_iter) reached relative residual %.3g, not the tolerance %.3g",
                           st.iterations, st.residual, s.opt.tolerance));
    for (int64_t i = 0; i < 3 * n; ++i)
        if (!std::isfinite(mu[i]))
            throw Error(QMMM_ERR_NOT_CONVERGED, strfmt("the dipole of site %lld is not finite", ix(i / 3)));
}

}  // namespace qmmm
