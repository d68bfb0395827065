// test_dcs_reference.hpp -- independent reference for DCS tests: a plain triple loop in long double
// (no row reuse, no blocking), and small problem generators.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "qmmm_accel.h"

namespace dcsref {

struct Atoms {
    std::vector<double> xyz, q;
    int64_t n() const { return static_cast<int64_t>(q.size()); }
};

inline qmmm_dcs_lattice lattice(double ox, double oy, double oz, double h, int64_t nx, int64_t ny, int64_t nz) {
    qmmm_dcs_lattice l{};
    l.origin[0] = ox, l.origin[1] = oy, l.origin[2] = oz;
    l.spacing[0] = h, l.spacing[1] = h * 1.1, l.spacing[2] = h * 0.9;  // anisotropic on purpose
    l.count[0] = nx, l.count[1] = ny, l.count[2] = nz;
    return l;
}

inline int64_t points(const qmmm_dcs_lattice &l) { return l.count[0] * l.count[1] * l.count[2]; }

// Random atoms inside the lattice box (slightly beyond), charges in [-1, 1], seed fixed.
inline Atoms random_atoms(const qmmm_dcs_lattice &l, int64_t n, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-0.1, 1.1), c(-1, 1);
    Atoms a;
    for (int64_t i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d)
            a.xyz.push_back(l.origin[d] + u(g) * l.spacing[d] * static_cast<double>(l.count[d] - 1) + 0.013 * (d + 1));
        a.q.push_back(c(g));
    }
    return a;
}

// phi and sum |q|/r at every point (the scale against which single-precision errors are judged).
inline void reference(const Atoms &a, const qmmm_dcs_lattice &l, std::vector<long double> &phi,
                      std::vector<long double> &scale) {
    phi.assign(points(l), 0), scale.assign(points(l), 0);
    for (int64_t k = 0; k < l.count[2]; ++k)
        for (int64_t j = 0; j < l.count[1]; ++j)
            for (int64_t i = 0; i < l.count[0]; ++i) {
                const int64_t p = i + l.count[0] * (j + l.count[1] * k);
                const long double x = l.origin[0] + i * (long double)l.spacing[0],
                                  y = l.origin[1] + j * (long double)l.spacing[1],
                                  z = l.origin[2] + k * (long double)l.spacing[2];
                for (int64_t b = 0; b < a.n(); ++b) {
                    const long double dx = x - a.xyz[3 * b], dy = y - a.xyz[3 * b + 1], dz = z - a.xyz[3 * b + 2];
                    const long double r = std::sqrt(dx * dx + dy * dy + dz * dz);
                    phi[p] += a.q[b] / r;
                    scale[p] += std::fabs(a.q[b]) / r;
                }
            }
}

// max over points of |map - phi| / scale
inline double max_rel_error(const std::vector<double> &map, const std::vector<long double> &phi,
                            const std::vector<long double> &scale) {
    double e = 0;
    for (size_t p = 0; p < map.size(); ++p)
        e = std::fmax(e, static_cast<double>(std::fabs(map[p] - phi[p]) / scale[p]));
    return e;
}

inline qmmm_dcs_options options(int backend, int precision) {
    qmmm_dcs_options o;
    qmmm_dcs_options_default(&o);
    o.backend = backend, o.precision = precision;
    return o;
}

}  // namespace dcsref
