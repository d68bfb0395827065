// test_rdf_reference.hpp -- independent references for the RDF tests: systems (lattices, random gas,
// molecules) and a double-precision pair counter that finds the minimum image by trying all 27 neighbour
// images of the wrapped vector (no fixed point, no float, no cell list).
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "qmmm_accel.h"

namespace rdfref {

struct System {
    std::vector<double> xyz;  // 3n
    double box[9] = {0};
    int64_t n() const { return static_cast<int64_t>(xyz.size() / 3); }
};

inline System simple_cubic(int cells, double a) {
    System s;
    for (int k = 0; k < cells; ++k)
        for (int j = 0; j < cells; ++j)
            for (int i = 0; i < cells; ++i) s.xyz.insert(s.xyz.end(), {i * a, j * a, k * a});
    s.box[0] = s.box[4] = s.box[8] = cells * a;
    return s;
}

inline System fcc(int cells, double a) {
    System s;
    const double b[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    for (int k = 0; k < cells; ++k)
        for (int j = 0; j < cells; ++j)
            for (int i = 0; i < cells; ++i)
                for (auto &o : b) s.xyz.insert(s.xyz.end(), {(i + o[0]) * a, (j + o[1]) * a, (k + o[2]) * a});
    s.box[0] = s.box[4] = s.box[8] = cells * a;
    return s;
}

// n random points in the cell (uniform in fractional coordinates).
inline System gas(int64_t n, const double box[9], uint64_t seed) {
    System s;
    std::copy(box, box + 9, s.box);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    for (int64_t i = 0; i < n; ++i) {
        const double f[3] = {u(rng), u(rng), u(rng)};
        for (int d = 0; d < 3; ++d) s.xyz.push_back(f[0] * box[d] + f[1] * box[3 + d] + f[2] * box[6 + d]);
    }
    return s;
}

// Minimum-image distance by explicit search over the 27 images around the wrapped fractional vector.
inline double min_dist(const double *p, const double *q, const double box[9]) {
    const double *a = box, *b = box + 3, *c = box + 6;
    // fractional coordinates by solving M s = d (Cramer)
    const double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
    auto det = [](const double *x, const double *y, const double *z) {
        return x[0] * (y[1] * z[2] - y[2] * z[1]) - y[0] * (x[1] * z[2] - x[2] * z[1]) + z[0] * (x[1] * y[2] - x[2] * y[1]);
    };
    const double V = det(a, b, c);
    double s[3] = {det(d, b, c) / V, det(a, d, c) / V, det(a, b, d) / V};
    for (double &x : s) x -= std::round(x);
    double best = 1e300;
    for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j)
            for (int k = -1; k <= 1; ++k) {
                double r2 = 0;
                for (int e = 0; e < 3; ++e) {
                    const double v = (s[0] + i) * a[e] + (s[1] + j) * b[e] + (s[2] + k) * c[e];
                    r2 += v * v;
                }
                best = std::min(best, r2);
            }
    return std::sqrt(best);
}

// Reference histogram: ordered pairs (i in 1, j in 2) with key1[i] != key2[j], or unordered (i < j) when
// identical.
inline std::vector<int64_t> count(const System &s1, const std::vector<int64_t> &key1, const System &s2,
                                  const std::vector<int64_t> &key2, bool identical, double rmin, double rmax,
                                  int nb) {
    std::vector<int64_t> h(nb, 0);
    const double dr = (rmax - rmin) / nb;
    for (int64_t i = 0; i < s1.n(); ++i)
        for (int64_t j = identical ? i + 1 : 0; j < s2.n(); ++j) {
            if (key1[i] == key2[j]) continue;
            const double r = min_dist(&s1.xyz[3 * i], &s2.xyz[3 * j], s1.box);
            if (r < rmin || r >= rmax) continue;
            h[std::min<int64_t>(nb - 1, static_cast<int64_t>((r - rmin) / dr))]++;
        }
    return h;
}

}  // namespace rdfref
