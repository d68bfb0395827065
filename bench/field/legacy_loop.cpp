// legacy_loop.cpp -- the loop a legacy QMC code writes at its point-charge call site, in its own translation unit
// (compiled with the project's flags, so the comparison is with an optimised build of that loop): separate x, y,
// z, q arrays, physical charges, the energy summed over the electrons, one thread, double.
#include "legacy_loop.hpp"

#include <cmath>

double legacy_point_charge_energy(int n_charges, const double *x, const double *y, const double *z, const double *q,
                                  int n_electrons, const double *coord) {
    double e = 0;
    for (int i = 0; i < n_electrons; ++i)
        for (int m = 0; m < n_charges; ++m) {
            const double dx = coord[3 * i] - x[m], dy = coord[3 * i + 1] - y[m], dz = coord[3 * i + 2] - z[m];
            e -= q[m] / std::sqrt(dx * dx + dy * dy + dz * dz);
        }
    return e;
}

double legacy_screened_energy(int kind, int n_charges, const double *x, const double *y, const double *z,
                              const double *q, const double *a, const double *b, int n_electrons, const double *coord) {
    double e = 0;
    for (int i = 0; i < n_electrons; ++i)
        for (int m = 0; m < n_charges; ++m) {
            const double dx = coord[3 * i] - x[m], dy = coord[3 * i + 1] - y[m], dz = coord[3 * i + 2] - z[m];
            const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
            if (kind == 1) e -= q[m] * (1.0 - a[m] * std::exp(-b[m] * d * d)) / d;
            else e -= q[m] * std::erf(d / a[m]) / d;
        }
    return e;
}
