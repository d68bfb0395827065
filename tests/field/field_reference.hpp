// field_reference.hpp -- an independent reference for U_ES: long double terms summed with Neumaier
// compensation, the singular-cell rule written out from its definition. Test helpers only.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "qmmm_accel.h"

namespace qmmm_test {

struct System {
    std::vector<double> cell_xyz, cell_q, nuc_xyz, nuc_z;
    int64_t n_cells() const { return static_cast<int64_t>(cell_q.size()); }
    int64_t n_nuclei() const { return static_cast<int64_t>(nuc_z.size()); }
};

struct Neumaier {
    long double s = 0, c = 0;
    void add(long double x) {
        long double t = s + x;
        c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
        s = t;
    }
    long double value() const { return s + c; }
};

// Returns U_ES at p and, in *scale, sum of |terms| (the natural size for relative errors).
inline double reference_u(const System &sys, const double *p, double cell_volume = 0, double *scale = nullptr) {
    Neumaier sum, abs_sum;
    const long double self = cell_volume > 0 ? (6 * std::log((1 + std::sqrt(3.0L)) / std::sqrt(2.0L)) - 3.14159265358979323846264338327950288L / 2) / std::cbrt((long double)cell_volume) : NAN;
    for (int64_t m = 0; m < sys.n_cells(); ++m) {
        long double dx = (long double)p[0] - sys.cell_xyz[3 * m], dy = (long double)p[1] - sys.cell_xyz[3 * m + 1],
                    dz = (long double)p[2] - sys.cell_xyz[3 * m + 2];
        long double r = std::sqrt(dx * dx + dy * dy + dz * dz);
        long double t = sys.cell_q[m] * (r < 1e-10L ? self : 1.0L / r);
        sum.add(t), abs_sum.add(std::fabs(t));
    }
    for (int64_t b = 0; b < sys.n_nuclei(); ++b) {
        long double dx = (long double)p[0] - sys.nuc_xyz[3 * b], dy = (long double)p[1] - sys.nuc_xyz[3 * b + 1],
                    dz = (long double)p[2] - sys.nuc_xyz[3 * b + 2];
        long double t = -sys.nuc_z[b] / std::sqrt(dx * dx + dy * dy + dz * dz);
        sum.add(t), abs_sum.add(std::fabs(t));
    }
    if (scale) *scale = static_cast<double>(abs_sum.value());
    return static_cast<double>(sum.value());
}

// A molecule-like environment: cells on a jittered grid in a box, positive populations, a few nuclei.
inline System random_system(int64_t n_cells, int64_t n_nuclei, uint64_t seed, double box = 20.0) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> pos(-box / 2, box / 2), pop(1e-6, 1e-2), zz(1.0, 8.0);
    System s;
    for (int64_t m = 0; m < n_cells; ++m) {
        for (int k = 0; k < 3; ++k) s.cell_xyz.push_back(pos(rng));
        s.cell_q.push_back(pop(rng));
    }
    for (int64_t b = 0; b < n_nuclei; ++b) {
        for (int k = 0; k < 3; ++k) s.nuc_xyz.push_back(pos(rng));
        s.nuc_z.push_back(std::round(zz(rng)));
    }
    return s;
}

inline std::vector<double> random_points(int64_t n, uint64_t seed, double box = 24.0) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> pos(-box / 2, box / 2);
    std::vector<double> p(3 * n);
    for (auto &x : p) x = pos(rng);
    return p;
}

// A density cube's cells at or above threshold and its nuclei; *cell_volume gets the cube's dV. Empty on a read
// error (qmmm_error_message() says why; callers assert on n_cells()).
inline System cube_system(const std::string &file, double threshold, double *cell_volume) {
    System s;
    qmmm_env env = nullptr;
    if (qmmm_cube_read(&env, file.c_str(), threshold) != QMMM_SUCCESS) return s;
    int64_t nc = 0, nn = 0;
    qmmm_env_sizes(env, &nc, &nn, cell_volume);
    s.cell_xyz.resize(3 * nc), s.cell_q.resize(nc), s.nuc_xyz.resize(3 * nn), s.nuc_z.resize(nn);
    qmmm_env_copy(env, s.cell_xyz.data(), s.cell_q.data(), s.nuc_xyz.data(), s.nuc_z.data());
    qmmm_env_destroy(env);
    return s;
}

// data/water_dimer: water 2's density as psi4 wrote it (fine cube, cells >= 1e-3 e/bohr^3) and its nuclei;
// *cell_volume gets the cube's dV. Empty on a read error (the caller asserts on n_cells()).
inline System water2_environment(const std::string &source_dir, double *cell_volume) {
    return cube_system(source_dir + "/data/water_dimer/water2_density_fine.cube.gz", 1e-3, cell_volume);
}

// Cells of an nx x ny x nz lattice (spacing h, corner lo) inside an ellipsoidal blob with random holes, as a
// thresholded density cube gives: rows of a few to ~20 cells along x, charges 1e-6..1e-2, plus a few nuclei.
inline System lattice_system(int nx, int ny, int nz, double h, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u01(0, 1), pop(1e-6, 1e-2);
    System s;
    const double lo[3] = {-0.5 * nx * h + 0.0123, -0.5 * ny * h - 0.0456, -0.5 * nz * h + 0.0789};
    for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j)
            for (int k = 0; k < nz; ++k) {
                const double a = (i + 0.5) / nx - 0.5, b = (j + 0.5) / ny - 0.5, c = (k + 0.5) / nz - 0.5;
                if (4 * (a * a + b * b + c * c) > 1 || u01(rng) < 0.1) continue;
                s.cell_xyz.insert(s.cell_xyz.end(), {lo[0] + i * h, lo[1] + j * h, lo[2] + k * h});
                s.cell_q.push_back(pop(rng));
            }
    for (int b = 0; b < 5; ++b) {
        for (int d = 0; d < 3; ++d) s.nuc_xyz.push_back((u01(rng) - 0.5) * 6.0);
        s.nuc_z.push_back(1.0 + b);
    }
    return s;
}

// Points spread like water 1's electrons (reference.json qm_atoms): normal, sigma 1.2 bohr, about O with
// weight 8 and each H with weight 1.
inline std::vector<double> water1_electron_points(int64_t n, uint64_t seed) {
    const double atoms[3][3] = {{-2.9309784486679695, -0.21641143588743048, 0.0},
                                {-3.655219765701933, 1.4409218398399704, 0.0},
                                {-1.133225293736174, 0.0769345300196391, 0.0}};
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g(0.0, 1.2);
    std::uniform_int_distribution<int> pick(0, 9);
    std::vector<double> pts(3 * n);
    for (int64_t p = 0; p < n; ++p) {
        const int a = pick(rng) < 8 ? 0 : 1 + (pick(rng) & 1);
        for (int k = 0; k < 3; ++k) pts[3 * p + k] = atoms[a][k] + g(rng);
    }
    return pts;
}

// Mean of u - ref over the points (long double sum).
inline double mean_error(const std::vector<double> &u, const std::vector<double> &ref) {
    long double s = 0;
    for (size_t p = 0; p < u.size(); ++p) s += (long double)u[p] - ref[p];
    return static_cast<double>(s / static_cast<long double>(u.size()));
}

// A field whose few large charges dominate sum q^2, as a real density's core cells do: n small cells (q in [1e-5,
// 1e-4]) in a 10-bohr box and 40 cells of q = 0.5 on a 0.2-bohr lattice about the origin, plus 2 nuclei. MIXED sums
// the large ones in double (field_take_heavy). core(k) is the position of large cell k.
inline System dominated_system(int64_t n, uint64_t seed) {
    System s;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-5.0, 5.0), q(1e-5, 1e-4);
    for (int64_t m = 0; m < n; ++m) {
        for (int k = 0; k < 3; ++k) s.cell_xyz.push_back(u(rng));
        s.cell_q.push_back(q(rng));
    }
    for (int k = 0; k < 40; ++k) {
        s.cell_xyz.insert(s.cell_xyz.end(), {0.2 * (k % 4) + 0.013, 0.2 * ((k / 4) % 5) - 0.027, 0.2 * (k / 20) + 0.031});
        s.cell_q.push_back(0.5);
    }
    s.nuc_xyz = {0.3, 0.4, 0.1, -2.0, 1.0, 0.5};
    s.nuc_z = {8.0, 1.0};
    return s;
}

// Points for dominated_system: 300 random ones, 14 near the large cells, then on large cell 7's centre and 1e-3 bohr
// from it.
inline std::vector<double> dominated_points(const System &s, uint64_t seed) {
    const int64_t core = s.n_cells() - 40;
    auto pts = random_points(300, seed, 6.0);
    for (int k = 0; k < 40; k += 3)
        pts.insert(pts.end(), {s.cell_xyz[3 * (core + k)] + 0.3, s.cell_xyz[3 * (core + k) + 1] - 0.2, 0.7});
    const double *c = &s.cell_xyz[3 * (core + 7)];
    pts.insert(pts.end(), {c[0], c[1], c[2], c[0] + 1e-3, c[1], c[2]});
    return pts;
}

// Max over the first n points of |u - ref| / (the normwise scale of reference_u): how far a precision's values are
// from a double-precision reference ref (the long-double scale costs M operations a point).
inline double max_normwise_error(const System &s, const std::vector<double> &pts, const std::vector<double> &u,
                                 const std::vector<double> &ref, double cell_volume, int64_t n) {
    double worst = 0;
    for (int64_t p = 0; p < n; ++p) {
        double scale = 0;
        reference_u(s, &pts[3 * p], cell_volume, &scale);
        worst = std::max(worst, std::fabs(u[p] - ref[p]) / scale);
    }
    return worst;
}

}  // namespace qmmm_test
