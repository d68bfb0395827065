// dcs_claims.hpp -- the accuracy qmmm_accel_dcs.h claims for DCS maps, as every DCS test checks it (CPU and
// CUDA, every precision and kernel). Normwise at each lattice point p: |map - phi| / sum_a |q_a|/r_a must stay
// below
//
//     2 u sqrt(n_sum)  +  u * sum_a (|q_a|/r_a) (8 + (2 |P|_1 + |A_a|_1) / r_a) / sum_a |q_a|/r_a
//
// u = 2^-53 (DOUBLE) or 2^-24 (SINGLE, MIXED): the unit roundoff of the pair terms.
// First part, the sum: rounding errors of n terms add like a random walk, ~u sqrt(n) of sum |t|. SINGLE and DOUBLE
//   add all n_atoms terms per point in one accumulator (n_sum = n_atoms); MIXED adds float partial sums of 256
//   atoms in double (n_sum = 256 whatever n_atoms: its claim, "no growth of the summation error with n_atoms").
// Second part, the pair terms: coordinates are taken relative to the lattice origin (P = point - origin,
//   A_a = atom - origin) and rounded (a lattice point is i * h: two roundings), so a distance r_a is off by up to
//   u (2|P|_1 + |A_a|_1) and q_a/r_a by that over r_a; 8 u covers the arithmetic of one term (an approximate
//   rsqrt on the GPU included). It matters within a fraction of a bohr of an atom.
// Measured (2-core development VM, AMD EPYC, CPU kernel of 2026-11-23), max over points of error / bound:
// 0.03..0.36 in every case below; errors: random charges in [-1, 1] on the 131x19x9 lattice with 1500 atoms
// DOUBLE 4.5e-15, SINGLE 5.7e-6, MIXED 5.7e-6 (an atom close to a point: the pair-term part); same-sign
// charges 3..35 bohr from a 5x4x4 lattice, n = 1e3 / 1e4 / 1e5 / 1e6 atoms: SINGLE 1.2e-6 / 4.1e-6 / 1.0e-5 /
// 3.6e-5 (the float sum: ~0.6 u sqrt(n)), MIXED 2.8e-7 / 8.0e-8 / 2.6e-8 / 1.0e-8, DOUBLE 2.6e-15 / 6.8e-15 /
// 2.0e-14 / 8.0e-14.
// The GPU's 1500-atom SINGLE error was 4.4e-6 (H100, the header's figure).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "test_dcs_reference.hpp"

namespace dcsref {

constexpr int64_t kMixedBlock = 256;  // atoms per float partial sum in MIXED (the header's figure)

inline double unit_roundoff(int precision) {
    return std::ldexp(1.0, precision == QMMM_PRECISION_DOUBLE ? -53 : -24);
}

// The pair-term part of the claim without its factor u, at every lattice point:
// sum_a (|q_a|/r_a) (8 + (2 |P|_1 + |A_a|_1) / r_a) / sum_a |q_a|/r_a. The same for every precision.
inline std::vector<double> pair_term_factor(const Atoms &a, const qmmm_dcs_lattice &l) {
    std::vector<double> f(points(l));
    for (int64_t k = 0; k < l.count[2]; ++k)
        for (int64_t j = 0; j < l.count[1]; ++j)
            for (int64_t i = 0; i < l.count[0]; ++i) {
                const double P[3] = {i * l.spacing[0], j * l.spacing[1], k * l.spacing[2]};
                const double p1 = std::fabs(P[0]) + std::fabs(P[1]) + std::fabs(P[2]);
                double num = 0, den = 0;
                for (int64_t b = 0; b < a.n(); ++b) {
                    double a1 = 0, r2 = 0;
                    for (int d = 0; d < 3; ++d) {
                        const double ad = a.xyz[3 * b + d] - l.origin[d];
                        a1 += std::fabs(ad), r2 += (P[d] - ad) * (P[d] - ad);
                    }
                    const double r = std::sqrt(r2), t = std::fabs(a.q[b]) / r;
                    num += t * (8 + (2 * p1 + a1) / r), den += t;
                }
                f[i + l.count[0] * (j + l.count[1] * k)] = den > 0 ? num / den : 0.0;
            }
    return f;
}

// The claim at every lattice point (normwise, as max_rel_error measures); factor from pair_term_factor.
inline std::vector<double> claimed_bound(int64_t n_atoms, const std::vector<double> &factor, int precision) {
    const double u = unit_roundoff(precision);
    const double n_sum = precision == QMMM_PRECISION_MIXED ? std::min<int64_t>(n_atoms, kMixedBlock) : n_atoms;
    const double sum_part = 2 * u * std::sqrt(std::max(n_sum, 1.0));
    std::vector<double> bound(factor.size());
    for (size_t p = 0; p < factor.size(); ++p) bound[p] = sum_part + u * factor[p];
    return bound;
}

inline std::vector<double> claimed_bound(const Atoms &a, const qmmm_dcs_lattice &l, int precision) {
    return claimed_bound(a.n(), pair_term_factor(a, l), precision);
}

// Largest error / claim over the points (< 1: within the claim).
inline double max_claim_ratio(const std::vector<double> &map, const std::vector<long double> &phi,
                              const std::vector<long double> &scale, const std::vector<double> &bound) {
    double worst = 0;
    for (size_t p = 0; p < map.size(); ++p)
        worst = std::fmax(worst, static_cast<double>(std::fabs(map[p] - phi[p]) / scale[p]) / bound[p]);
    return worst;
}

// Same-sign charges (0.1 to 1 e) 3 to 35 bohr from the centre of a small lattice: the sums' worst case (no
// cancellation), far from every atom (small pair-term part), so the summation part of the claim shows.
inline Atoms same_sign_cloud(int64_t n, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-20, 20), c(0.1, 1.0);
    Atoms a;
    while (a.n() < n) {
        const double x = pos(g), y = pos(g), z = pos(g);
        if (x * x + y * y + z * z < 9) continue;
        a.xyz.insert(a.xyz.end(), {x, y, z});
        a.q.push_back(c(g));
    }
    return a;
}

}  // namespace dcsref
