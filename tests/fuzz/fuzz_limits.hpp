// fuzz_limits.hpp -- the documented magnitude limits of the C API, as the fuzz targets predict them (fuzz_capi,
// fuzz_magnitudes): what each precision takes before a call is refused with QMMM_ERR_INVALID_ARG.
//   field (qmmm_accel_field.h, src_cxx/field/api/field_checks.cpp): |charge| and |Z| up to 1e300 (DOUBLE) or 1e30 (SINGLE,
//     MIXED); every coordinate of a cell, nucleus, point charge (at create) and point (eval, eval_sum, async) up to
//     1e150 bohr (DOUBLE) or 1e18 bohr (SINGLE, MIXED), so that a squared distance does not overflow.
//   DCS (qmmm_accel_dcs.h, src_cxx/dcs/dcs_limits.cpp): |q| as the field; a spacing, the lattice's extent
//     ((count - 1) x spacing) and an atom's distance from the origin along an axis up to 1e18 / 1e150 bohr; the
//     bound sum_a |q_a| / (distance at which a's term is summed) up to 1e38 / 1e300; at most 64 lattice points
//     of one atom within 1e-10 + 100 u |r_a - origin|_1 bohr.
//   RDF (qmmm_accel_rdf.h, src_cxx/rdf/rdf_api.cpp): r_max in [1e-6, 1e15].
// NaN and Inf are not judged here (NONFINITE, checked apart); neither are counts and NULL pointers.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "qmmm_accel.h"

namespace fuzz {

inline bool is_double(int precision) { return precision == QMMM_PRECISION_DOUBLE; }
inline double max_charge(int precision) { return is_double(precision) ? 1e300 : 1e30; }
inline double max_coordinate(int precision) { return is_double(precision) ? 1e150 : 1e18; }

// Every finite entry of n rows of 3 coordinates (stride apart) within the precision's reach. NULL: true.
inline bool coords_in_reach(const double *a, int64_t n, int precision, int64_t stride = 3) {
    if (!a || n <= 0) return true;
    const double lim = max_coordinate(precision);
    for (int64_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
            if (std::isfinite(a[i * stride + k]) && std::fabs(a[i * stride + k]) > lim) return false;
    return true;
}

// ---- RDF ----
inline bool rdf_rmax_in_range(double r_max) { return r_max >= 1e-6 && r_max <= 1e15; }

// ---- DCS ----
constexpr double kDcsOnAtom = 1e-10;  // a lattice point within this distance of an atom is on it (bohr)

enum DcsLimit { kDcsWithin = 0, kDcsBeyond = 1, kDcsEither = -1 };  // either: at the edge of a limit (rounding)

// What qmmm_dcs_map does with these (finite) atoms and this (valid) lattice at `precision` and `on_atom`, after its
// argument checks: kDcsBeyond when a documented magnitude limit refuses them (INVALID_ARG), kDcsWithin when none
// does, kDcsEither where the prediction is within rounding of a limit. A lattice point on an atom with on_atom
// ERROR (SINGULAR) is the caller's to predict. The bound and the near-point box follow dcs_limits.cpp's own
// arithmetic (the distance at which an atom on a lattice point, left out there, is next summed).
inline DcsLimit dcs_limits(int64_t n_atoms, const double *xyz, const double *q, const qmmm_dcs_lattice &l,
                           int precision, int on_atom) {
    const double qmax = max_charge(precision), lmax = max_coordinate(precision);
    const double vmax = is_double(precision) ? 1e300 : 1e38;
    const double u = is_double(precision) ? 0x1p-53 : 0x1p-24;
    for (int d = 0; d < 3; ++d) {
        if (l.spacing[d] > lmax) return kDcsBeyond;
        if (static_cast<double>(l.count[d] - 1) * l.spacing[d] > lmax) return kDcsBeyond;
    }
    for (int64_t a = 0; a < n_atoms; ++a) {
        if (std::fabs(q[a]) > qmax) return kDcsBeyond;
        for (int d = 0; d < 3; ++d)
            if (!(std::fabs(xyz[3 * a + d] - l.origin[d]) <= lmax)) return kDcsBeyond;
    }
    const double min_h = std::min({l.spacing[0], l.spacing[1], l.spacing[2]});
    double bound = 0;
    bool edge = false;
    for (int64_t a = 0; a < n_atoms; ++a) {
        double r[3], near_d2 = 0;
        for (int d = 0; d < 3; ++d) {
            r[d] = xyz[3 * a + d] - l.origin[d];
            const double i =
                std::clamp(std::nearbyint(r[d] / l.spacing[d]), 0.0, static_cast<double>(l.count[d] - 1));
            const double e = r[d] - i * l.spacing[d];
            near_d2 += e * e;
        }
        const double near_d = std::sqrt(near_d2);
        const double reach = kDcsOnAtom + 100 * u * (std::fabs(r[0]) + std::fabs(r[1]) + std::fabs(r[2]));
        double lo[3], hi[3], n_box = 1;
        for (int d = 0; d < 3; ++d) {
            lo[d] = std::max(0.0, std::ceil((r[d] - reach) / l.spacing[d]));
            hi[d] = std::min(static_cast<double>(l.count[d] - 1), std::floor((r[d] + reach) / l.spacing[d]));
            n_box *= std::max(0.0, hi[d] - lo[d] + 1);
        }
        if (n_box > 64) return kDcsBeyond;  // a spacing finer than the precision resolves near this atom
        if (near_d > 0.5 * kDcsOnAtom && near_d < 2 * kDcsOnAtom) edge = true;  // on the atom or not: rounding
        double summed = near_d > kDcsOnAtom ? near_d : std::max(reach, min_h - near_d);
        if (near_d <= kDcsOnAtom && on_atom != QMMM_DCS_ON_ATOM_OTHERS) continue;  // SINGULAR: the caller's
        if (n_box > 0)
            for (double k = lo[2]; k <= hi[2]; ++k)
                for (double j = lo[1]; j <= hi[1]; ++j)
                    for (double i = lo[0]; i <= hi[0]; ++i) {
                        const double ex = r[0] - i * l.spacing[0], ey = r[1] - j * l.spacing[1],
                                     ez = r[2] - k * l.spacing[2];
                        const double dist = std::sqrt(ex * ex + ey * ey + ez * ez);
                        if (dist > reach || dist <= kDcsOnAtom) continue;
                        summed = std::min(summed, dist);
                    }
        bound += std::fabs(q[a]) / summed;
    }
    if (!(bound <= vmax * (1 + 1e-6))) return kDcsBeyond;
    if (!(bound <= vmax * (1 - 1e-6))) edge = true;
    return edge ? kDcsEither : kDcsWithin;
}

}  // namespace fuzz
