// dcs_limits.cpp -- the checks and host-side mending of qmmm_dcs_map that make every backend's map finite or
// refused with the reason (dcs_limits.hpp).
//
// Limits per precision: float pair terms (SINGLE, MIXED) overflow at ~3.4e38 and their squared distances at
// (1.8e19)^2; double ones at ~1.8e308 and (1.3e154)^2. Charges up to 1e30 (float) and 1e300 (double), as the
// field family takes; lengths (an atom's distance from the lattice origin along an axis, a spacing, the lattice's
// extent) up to 1e18 and 1e150 bohr, so 3 (2 L)^2 stays finite; and the map's bound up to 1e38 and 1e300.
//
// Near points: a pair term's relative rounding error is u (8 + (2 |p|_1 + |r_a|_1) / r_a) (qmmm_accel_dcs.h),
// with p and r_a relative to the origin, so at r_a <= 100 u |r_a|_1 it may exceed 1/32 and at the float resolution
// r_a computes as 0 (an atom 1e-9 bohr from a point 0.5 bohr from the origin: 1/0 in float). Those points are
// recomputed in double, where a point within 1e-10 bohr is on the atom.
#include "dcs_limits.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "error.hpp"
#include "host_memory.hpp"

namespace qmmm {
namespace {

bool is_double(int precision) { return precision == QMMM_PRECISION_DOUBLE; }
double unit_roundoff(int precision) { return is_double(precision) ? 0x1p-53 : 0x1p-24; }
double max_charge(int precision) { return is_double(precision) ? 1e300 : 1e30; }
double max_length(int precision) { return is_double(precision) ? 1e150 : 1e18; }
double max_value(int precision) { return is_double(precision) ? 1e300 : 1e38; }
const char *name(int precision) { return is_double(precision) ? "DOUBLE" : "SINGLE and MIXED"; }
// What the refusal adds for float precisions: DOUBLE takes more.
std::string use_double(int precision, const char *what) {
    return is_double(precision) ? "" : strfmt(" (DOUBLE takes up to %s)", what);
}

// At most this many lattice points may be near one atom: more means the spacing is finer than the precision
// resolves there.
constexpr double kMaxNearPerAtom = 64;

}  // namespace

void dcs_check_memory(int64_t n_atoms, int backend, int n_workers) {
    // The API's double copy (x, y, z, q); then per CPU thread the kernel's row terms and its own T copies (<= 8
    // bytes each), or per GPU one upload buffer (double4 of 32 bytes at most).
    const double per_atom = backend == QMMM_BACKEND_CUDA ? 32.0 + 32.0 * n_workers : 32.0 + 32.0 + 8.0 * n_workers;
    const double bytes = static_cast<double>(n_atoms) * per_atom;
    const double phys = physical_memory_bytes();
    if (bytes > phys)
        throw Error(QMMM_ERR_OUT_OF_MEMORY,
                    strfmt("n_atoms = %lld: the host copies of the atoms need %.3g GB (%.0f bytes per atom with %d "
                           "%s); this machine has %.3g GB",
                           static_cast<long long>(n_atoms), bytes / 1e9, per_atom, n_workers,
                           backend == QMMM_BACKEND_CUDA ? "GPU(s)" : "thread(s)", phys / 1e9));
}

void dcs_check_magnitudes(int64_t n_atoms, const double *xyz, const double *q, const qmmm_dcs_lattice &l,
                          int precision) {
    const char *ax = "xyz";
    const double qmax = max_charge(precision), lmax = max_length(precision);
    for (int d = 0; d < 3; ++d) {
        if (l.spacing[d] > lmax)
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("lat->spacing[%c] = %g bohr is beyond the %g bohr that %s precision squares without "
                               "overflow%s", ax[d], l.spacing[d], lmax, name(precision),
                               use_double(precision, "1e150").c_str()));
        const double extent = static_cast<double>(l.count[d] - 1) * l.spacing[d];
        if (extent > lmax)
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("the lattice spans %g bohr along %c ((count - 1) x spacing), beyond the %g bohr that %s "
                               "precision squares without overflow%s", extent, ax[d], lmax, name(precision),
                               use_double(precision, "1e150").c_str()));
    }
    for (int64_t a = 0; a < n_atoms; ++a) {
        if (std::fabs(q[a]) > qmax)
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("q: entry %lld is %g, beyond the %g that %s precision sums without overflow%s", ix(a),
                               q[a], qmax, name(precision), use_double(precision, "1e300").c_str()));
        for (int d = 0; d < 3; ++d) {
            const double r = xyz[3 * a + d] - l.origin[d];  // may overflow to Inf: refused below
            if (!(std::fabs(r) <= lmax))
                throw Error(QMMM_ERR_INVALID_ARG,
                            strfmt("xyz: atom %lld is %g bohr from the lattice origin along %c, beyond the %g bohr "
                                   "that %s precision squares without overflow%s", ix(a), r, ax[d], lmax,
                                   name(precision), use_double(precision, "1e150").c_str()));
        }
    }
}

DcsNearPoints dcs_near_points(int64_t n_atoms, const double *xyz, const double *q, const qmmm_dcs_lattice &l,
                              int precision, int on_atom) {
    DcsNearPoints np;
    const double u = unit_roundoff(precision);
    const double min_h = std::min({l.spacing[0], l.spacing[1], l.spacing[2]});
    double bound = 0, worst = 0, worst_dist = 0;
    int64_t worst_atom = 0;
    for (int64_t a = 0; a < n_atoms; ++a) {
        double r[3], near_d2 = 0;
        for (int d = 0; d < 3; ++d) {
            r[d] = xyz[3 * a + d] - l.origin[d];
            // The nearest point: rounded, then clamped to the lattice (a far atom's index may not fit an int64_t).
            const double i = std::clamp(std::nearbyint(r[d] / l.spacing[d]), 0.0, static_cast<double>(l.count[d] - 1));
            const double e = r[d] - i * l.spacing[d];
            near_d2 += e * e;
        }
        const double near_d = std::sqrt(near_d2);
        const double reach = kDcsOnAtom + 100 * u * (std::fabs(r[0]) + std::fabs(r[1]) + std::fabs(r[2]));
        // The box of points within `reach` along every axis.
        double lo[3], hi[3], n_box = 1;
        for (int d = 0; d < 3; ++d) {
            lo[d] = std::max(0.0, std::ceil((r[d] - reach) / l.spacing[d]));
            hi[d] = std::min(static_cast<double>(l.count[d] - 1), std::floor((r[d] + reach) / l.spacing[d]));
            n_box *= std::max(0.0, hi[d] - lo[d] + 1);
        }
        if (n_box > kMaxNearPerAtom)
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("atom %lld has %.3g lattice points within %g bohr (1e-10 bohr, within which a point "
                               "is on the atom, plus what %s precision does not resolve %g bohr from the lattice "
                               "origin): the spacing %g bohr is too fine for it%s", ix(a), n_box, reach,
                               name(precision), std::fabs(r[0]) + std::fabs(r[1]) + std::fabs(r[2]), min_h,
                               is_double(precision) ? "" : "; use DOUBLE"));
        // The least distance at which a's term is summed, for the bound: the nearest point unless a is left out
        // there; then the box's other points, and beyond the box at least reach and min_h - near_d.
        double summed_d = near_d > kDcsOnAtom ? near_d : std::max(reach, min_h - near_d);
        if (n_box > 0)
            for (double k = lo[2]; k <= hi[2]; ++k)
                for (double j = lo[1]; j <= hi[1]; ++j)
                    for (double i = lo[0]; i <= hi[0]; ++i) {
                        const double ex = r[0] - i * l.spacing[0], ey = r[1] - j * l.spacing[1],
                                     ez = r[2] - k * l.spacing[2];
                        const double dist = std::sqrt(ex * ex + ey * ey + ez * ez);
                        if (dist > reach) continue;
                        const int64_t ii = static_cast<int64_t>(i), jj = static_cast<int64_t>(j),
                                      kk = static_cast<int64_t>(k);
                        const int64_t p = ii + l.count[0] * (jj + l.count[1] * kk);
                        np.points.push_back(p);
                        if (dist > kDcsOnAtom) {
                            summed_d = std::min(summed_d, dist);
                            continue;
                        }
                        if (on_atom != QMMM_DCS_ON_ATOM_OTHERS)
                            throw Error(QMMM_ERR_SINGULAR,
                                        strfmt("atom %lld lies on lattice point (%lld, %lld, %lld): its potential is "
                                               "infinite there (opt->on_atom = QMMM_DCS_ON_ATOM_OTHERS gives such a "
                                               "point the potential of the other atoms)", ix(a), ix(ii), ix(jj), ix(kk)));
                        np.left_out.emplace_back(p, a);
                    }
        const double term = std::fabs(q[a]) / summed_d;
        bound += term;
        if (term > worst) worst = term, worst_atom = a, worst_dist = summed_d;
    }
    const double vmax = max_value(precision);
    if (!(bound <= vmax))
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("the map may reach %g hartree/e (the sum of |q| / distance to the nearest lattice point; "
                           "largest term: atom %lld, q = %g at %g bohr), beyond the %g that %s precision holds%s",
                           bound, ix(worst_atom), q[worst_atom], worst_dist, vmax, name(precision),
                           use_double(precision, "1e300").c_str()));
    std::sort(np.points.begin(), np.points.end());
    np.points.erase(std::unique(np.points.begin(), np.points.end()), np.points.end());
    std::sort(np.left_out.begin(), np.left_out.end());
    return np;
}

void dcs_fix_points(const DcsNearPoints &np, int64_t n_atoms, const double *xyz, const double *q,
                    const qmmm_dcs_lattice &l, double *map) {
    const int64_t n = static_cast<int64_t>(np.points.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k < n; ++k) {
        const int64_t p = np.points[k];
        const int64_t idx[3] = {p % l.count[0], (p / l.count[0]) % l.count[1], p / (l.count[0] * l.count[1])};
        // The atoms left out at p, in atom order.
        auto skip = std::lower_bound(np.left_out.begin(), np.left_out.end(), std::make_pair(p, int64_t{-1}));
        double s = 0;
        for (int64_t a = 0; a < n_atoms; ++a) {
            if (skip != np.left_out.end() && skip->first == p && skip->second == a) {
                ++skip;
                continue;
            }
            double d2 = 0;
            for (int d = 0; d < 3; ++d) {  // as dcs_near_points measured it, so a summed term is never 1/0
                const double e = (xyz[3 * a + d] - l.origin[d]) - static_cast<double>(idx[d]) * l.spacing[d];
                d2 += e * e;
            }
            s += q[a] / std::sqrt(d2);
        }
        map[p] = s;
    }
}

}  // namespace qmmm
