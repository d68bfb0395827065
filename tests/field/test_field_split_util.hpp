// test_field_split_util.hpp -- helpers of the QMMM_METHOD_SPLIT tests: fields of a System through the C API, the
// normwise scale field, points in a region (a fifth of them on its faces, edges and corners) and the worst error.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "field_reference.hpp"
#include "qmmm_accel.h"

namespace qmmm_split_test {

// NULL (and the message in qmmm_error_message) when create fails.
inline qmmm_field make_field(const qmmm_test::System &s, double cell_volume, int method, double tol, const double *region,
                             int threads = 0, int backend = QMMM_BACKEND_CPU, int precision = QMMM_PRECISION_DOUBLE) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = backend, o.n_threads = threads, o.cell_volume = cell_volume, o.precision = precision;
    o.method = method, o.tolerance = tol, o.region = region;
    qmmm_field f = nullptr;
    if (qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(), s.nuc_xyz.data(),
                          s.nuc_z.data(), &o) != QMMM_SUCCESS)
        return nullptr;
    return f;
}

// The direct field of |q| and -Z: its value is the normwise scale sum |q|/d + sum Z/d.
inline qmmm_field make_scale_field(qmmm_test::System s, double cell_volume) {
    for (auto &q : s.cell_q) q = std::fabs(q);
    for (auto &z : s.nuc_z) z = -std::fabs(z);
    return make_field(s, cell_volume, QMMM_METHOD_DIRECT, 0, nullptr);
}

// A density-like environment: cells on a lattice (n^3, spacing h, centred on 0) with populations of a smooth density
// (a Gaussian of width 2.5 bohr; times cos(x) when signed, so that the charges change sign), and a few nuclei.
inline qmmm_test::System lattice_system(int n, double h, bool signed_charges, int n_nuclei, uint64_t seed) {
    qmmm_test::System s;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k) {
                const double x = (i - 0.5 * (n - 1)) * h, y = (j - 0.5 * (n - 1)) * h, z = (k - 0.5 * (n - 1)) * h;
                const double rho = std::exp(-(x * x + y * y + z * z) / 6.25) * (signed_charges ? std::cos(x) : 1.0);
                s.cell_xyz.insert(s.cell_xyz.end(), {x, y, z});
                s.cell_q.push_back(rho * h * h * h);
            }
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> pos(-3.0, 3.0);
    for (int b = 0; b < n_nuclei; ++b) {
        for (int k = 0; k < 3; ++k) s.nuc_xyz.push_back(pos(rng));
        s.nuc_z.push_back(1.0 + b % 6);
    }
    return s;
}

// Grid nodes on cell centres: cells on a 0.25 bohr lattice through 0 (33^3, charges of both signs) and a region whose
// corner lies on it, so that at tolerance 1e-7 (level-0 spacing 0.25 bohr: check qmmm_field_split_params) every
// level-0 node is a cell centre and the grid's sums take the singular-cell rule there (the row kernels' careful
// paths, field_split.hpp's coulomb_rows). Cell volume 0.25^3.
struct CentresCase {
    qmmm_test::System sys = lattice_system(33, 0.25, true, 2, 5);
    double region[6] = {-2, -1.5, -1.75, 1.5, 2, 1.25};
    double dv = 0.25 * 0.25 * 0.25, tol = 1e-7, spacing = 0.25;
};

// n points uniform in the region; every fifth one moved onto a face (one coordinate at lo or hi), and of those every
// third onto an edge and every ninth onto a corner.
inline std::vector<double> region_points(const double *region, int64_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> p(3 * n);
    for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) p[3 * i + k] = std::uniform_real_distribution<double>(region[k], region[3 + k])(rng);
        if (i % 5) continue;
        const int64_t j = i / 5;
        const int on = j % 9 == 0 ? 3 : (j % 3 == 0 ? 2 : 1);
        for (int a = 0; a < on; ++a) {
            const int k = static_cast<int>((j + a) % 3);
            p[3 * i + k] = (j / 3 + a) % 2 ? region[3 + k] : region[k];
        }
    }
    return p;
}

struct Worst {
    double err = 0;
    double p[3] = {0, 0, 0};
};

inline Worst worst_error(const std::vector<double> &u, const std::vector<double> &ref, const std::vector<double> &scale,
                         const std::vector<double> &pts) {
    Worst w;
    for (size_t i = 0; i < u.size(); ++i) {
        const double e = std::fabs(u[i] - ref[i]) / scale[i];
        if (!(e <= w.err)) w.err = e, w.p[0] = pts[3 * i], w.p[1] = pts[3 * i + 1], w.p[2] = pts[3 * i + 2];
    }
    return w;
}

}  // namespace qmmm_split_test
