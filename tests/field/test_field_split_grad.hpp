// test_field_split_grad.hpp -- helpers of the SPLIT gradient's tests (test_field_split_grad.cpp, the glycine suite and
// the CUDA test): the long-double reference of U's gradient per component and its scale, and the worst error.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "field_reference.hpp"

namespace qmmm_split_grad_test {

// dU/dr at p in long double, term by term (cells with coefficient q, nuclei -Z; a cell within 1e-10 bohr adds
// nothing: the cube's field vanishes at its centre), and the gradient's scale sum |q|/d^2 + sum Z/d^2.
inline void reference_grad(const qmmm_test::System &s, const double *p, long double g[3], long double *scale) {
    g[0] = g[1] = g[2] = 0;
    long double sc = 0;
    auto add = [&](long double c, const double *r) {
        const long double dx = (long double)p[0] - r[0], dy = (long double)p[1] - r[1], dz = (long double)p[2] - r[2];
        const long double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 < 1e-20L) return;
        const long double d = std::sqrt(d2), h = -c / (d2 * d);
        g[0] += h * dx, g[1] += h * dy, g[2] += h * dz, sc += std::fabs(c) / d2;
    };
    for (int64_t m = 0; m < s.n_cells(); ++m) add(s.cell_q[m], &s.cell_xyz[3 * m]);
    for (int64_t b = 0; b < s.n_nuclei(); ++b) add(-(long double)s.nuc_z[b], &s.nuc_xyz[3 * b]);
    *scale = sc;
}

inline bool split_inside_region(const double *region, const double *p) {
    for (int k = 0; k < 3; ++k)
        if (!(p[k] >= region[k] && p[k] <= region[3 + k])) return false;
    return true;
}

struct GradWorst {
    double err = 0;  // max over points and components of |g - ref| / scale
    int64_t point = -1;
};

// The gradients g (3 a point) against the reference at the points.
inline GradWorst grad_error(const qmmm_test::System &s, const std::vector<double> &pts, const std::vector<double> &g) {
    GradWorst w;
    const int64_t n = (int64_t)pts.size() / 3;
    std::vector<double> e(n);
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t i = 0; i < n; ++i) {
        long double r[3], sc;
        reference_grad(s, &pts[3 * i], r, &sc);
        double m = 0;
        for (int k = 0; k < 3; ++k) m = std::fmax(m, (double)(std::fabs(g[3 * i + k] - r[k]) / sc));
        e[i] = m;
    }
    for (int64_t i = 0; i < n; ++i)
        if (!(e[i] <= w.err)) w.err = e[i], w.point = i;
    return w;
}

}  // namespace qmmm_split_grad_test
