// test_rdf_exact.cpp -- a pair on a bin edge goes where exact arithmetic puts it (the upper
// bin), on the CPU and the GPU. The systems are GRO-quantised: every coordinate and cell vector is an integer
// number of 0.01 Angstrom (0.001 nm), so every r^2 is an integer in units of 1e-4 A^2 and the reference decides
// each pair in integers, exactly. Bins of 0.02 A (gmx rdf's default 0.002 nm): the O-H bonds of exactly 1.00 A
// and the replicas of a copied box (at exactly its edge length) lie on edges, which float distances used to put
// on either side (neighbouring bins differed by up to 0.018 in g(r) on a replicated SPC box).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

// Integer system: coordinates and cell vectors in units of 0.01 A.
struct Grid {
    std::vector<int64_t> q;  // 3n
    int64_t cell[9] = {0};   // a, b, c
    int64_t n() const { return static_cast<int64_t>(q.size() / 3); }
    std::vector<double> xyz() const {  // Angstrom, as a GRO reader gives them (x 0.01: not exact in binary)
        std::vector<double> x(q.size());
        for (size_t i = 0; i < q.size(); ++i) x[i] = 0.01 * double(q[i]);
        return x;
    }
    std::vector<double> box() const {
        std::vector<double> b(9);
        for (int i = 0; i < 9; ++i) b[i] = 0.01 * double(cell[i]);
        return b;
    }
};

// 64 water-like molecules (O on a jittered 4x4x4 grid, H at exactly (1.00, 0, 0) and (0, 1.00, 0) A from it) in
// a 12.42 A box (tilted: b has an x part), copied 3 x 3 x 3.
Grid water_box(bool tilted, uint64_t seed) {
    const int64_t L0 = 1242, tilt = tilted ? 300 : 0;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> jit(-60, 60);
    Grid g0;
    for (int m = 0; m < 64; ++m) {
        const int64_t o[3] = {(m % 4) * L0 / 4 + 155 + jit(rng), ((m / 4) % 4) * L0 / 4 + 155 + jit(rng),
                              (m / 16) * L0 / 4 + 155 + jit(rng)};
        g0.q.insert(g0.q.end(), {o[0], o[1], o[2], o[0] + 100, o[1], o[2], o[0], o[1] + 100, o[2]});
    }
    Grid g;
    const int64_t base[9] = {L0, 0, 0, tilt, L0, 0, 0, 0, L0};
    for (int i = 0; i < 9; ++i) g.cell[i] = 3 * base[i];
    for (int c = 0; c < 3; ++c)
        for (int b = 0; b < 3; ++b)
            for (int a = 0; a < 3; ++a)
                for (int64_t i = 0; i < g0.n(); ++i)
                    for (int d = 0; d < 3; ++d)
                        g.q.push_back(g0.q[3 * i + d] + a * base[d] + b * base[3 + d] + c * base[6 + d]);
    return g;
}

// Exact minimum-image r^2 (units 1e-4 A^2): the image picked by rounding fractional coordinates, then the 27
// around it searched in integers.
int64_t r2_exact(const Grid &g, int64_t i, int64_t j) {
    const int64_t *A = g.cell, *B = g.cell + 3, *C = g.cell + 6;
    int64_t d[3];
    for (int k = 0; k < 3; ++k) d[k] = g.q[3 * i + k] - g.q[3 * j + k];
    // lower-triangular cell (a = (ax,0,0), b = (bx,by,0), c = (cx,cy,cz)): back-substitution
    const double sz = double(d[2]) / double(C[2]);
    const double sy = (double(d[1]) - sz * double(C[1])) / double(B[1]);
    const double sx = (double(d[0]) - sy * double(B[0]) - sz * double(C[0])) / double(A[0]);
    const int64_t nx = std::llround(sx), ny = std::llround(sy), nz = std::llround(sz);
    int64_t best = INT64_MAX;
    for (int64_t a = nx - 1; a <= nx + 1; ++a)
        for (int64_t b = ny - 1; b <= ny + 1; ++b)
            for (int64_t c = nz - 1; c <= nz + 1; ++c) {
                int64_t r2 = 0;
                for (int k = 0; k < 3; ++k) {
                    const int64_t v = d[k] - a * A[k] - b * B[k] - c * C[k];
                    r2 += v * v;
                }
                best = std::min(best, r2);
            }
    return best;
}

int64_t isqrt(int64_t v) {
    int64_t r = static_cast<int64_t>(std::sqrt(double(v)));
    while (r * r > v) --r;
    while ((r + 1) * (r + 1) <= v) ++r;
    return r;
}

// Reference histogram over unordered pairs, bins of `w` units from `lo` units, pairs with cut <= r < hi; also
// how many pairs lie exactly on an edge.
std::vector<int64_t> reference(const Grid &g, int64_t lo, int64_t w, int nb, int64_t cut, int64_t &on_edge) {
    std::vector<int64_t> h(nb, 0);
    on_edge = 0;
    const int64_t hi = lo + w * nb, low = std::max(lo, cut);
    for (int64_t i = 0; i < g.n(); ++i)
        for (int64_t j = i + 1; j < g.n(); ++j) {
            const int64_t r2 = r2_exact(g, i, j);
            if (r2 < low * low || r2 >= hi * hi) continue;
            const int64_t s = isqrt(r2);          // floor(r)
            int64_t k = (s - lo) / w;             // floor((r - lo) / w) unless r is just below an edge ...
            if ((lo + (k + 1) * w) * (lo + (k + 1) * w) <= r2) ++k;  // (never: floor(r) >= edge when r >= edge)
            if ((lo + k * w) * (lo + k * w) > r2) --k;
            on_edge += (lo + k * w) * (lo + k * w) == r2;
            ++h[k];
        }
    return h;
}

std::vector<int64_t> run(const Grid &g, int backend, int method, double rmin, double rmax, int nb, double cut = 0) {
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = backend, o.method = method;
    qmmm_rdf h = nullptr;
    EXPECT_EQ(qmmm_rdf_create(&h, rmin, rmax, nb, &o), 0) << qmmm_error_message();
    if (cut > 0) EXPECT_EQ(qmmm_rdf_set_cut(h, cut), 0) << qmmm_error_message();
    EXPECT_EQ(qmmm_rdf_set_selection_self(h, g.n(), nullptr), 0);
    const auto x = g.xyz(), b = g.box();
    EXPECT_EQ(qmmm_rdf_add_frame(h, x.data(), nullptr, b.data()), 0) << qmmm_error_message();
    std::vector<int64_t> hist(nb);
    qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), nullptr, nullptr);
    qmmm_rdf_destroy(h);
    return hist;
}

struct Case {
    bool tilted;
    int64_t lo, w;  // units of 0.01 A
    int nb;
    int64_t cut;
};

const Case kCases[] = {
    {false, 0, 2, 930, 0},    // 0.02 A bins to 18.6 A: bonds at 1.00 A and replicas at 12.42 A on edges
    {true, 0, 2, 900, 0},     // the same in a triclinic cell (to 18 A: its limit is 18.1 A)
    {false, 50, 2, 400, 0},   // r_min = 0.5 A: the square-root path
    {false, 0, 2, 700, 100},  // cut at exactly 1.00 A: the bonds stay (r >= cut)
};

#ifndef QMMM_RDF_EXACT_GPU  // the CPU tests (test_rdf_exact, label cpu)
TEST(RdfExact, GroQuantisedEdgesOnTheCpuEqualIntegerReference) {
    for (const auto &c : kCases) {
        const Grid g = water_box(c.tilted, 5);
        int64_t on_edge = 0;
        const auto ref = reference(g, c.lo, c.w, c.nb, c.cut, on_edge);
        EXPECT_GT(on_edge, 1000) << "the case must have pairs on edges";
        for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_AUTO}) {
            const auto h = run(g, QMMM_BACKEND_CPU, method, 0.01 * c.lo, 0.01 * (c.lo + c.w * c.nb), c.nb, 0.01 * c.cut);
            int64_t moved = 0;
            for (int k = 0; k < c.nb; ++k) moved += std::llabs(h[k] - ref[k]);
            EXPECT_EQ(moved, 0) << "tilted " << c.tilted << " lo " << c.lo << " cut " << c.cut << " method " << method
                                << " (" << on_edge << " pairs on edges)";
        }
    }
}

// Random gas (no ties): the exact decision equals a double-precision count everywhere.
TEST(RdfExact, GasEqualsDoubleReferenceExactly) {
    Grid g;
    const int64_t L = 2345;
    g.cell[0] = g.cell[4] = g.cell[8] = L;
    g.cell[3] = 410, g.cell[6] = -275, g.cell[7] = 330;
    std::mt19937_64 rng(17);
    std::uniform_int_distribution<int64_t> u(0, L - 1);
    for (int i = 0; i < 3 * 2500; ++i) g.q.push_back(u(rng));
    int64_t on_edge = 0;
    const auto ref = reference(g, 0, 3, 300, 0, on_edge);
    EXPECT_EQ(run(g, QMMM_BACKEND_CPU, QMMM_RDF_METHOD_BRUTE, 0.0, 9.0, 300), ref);
}

#else  // the GPU test (test_rdf_exact_gpu, label gpu: `ctest -L gpu` runs it)
// The GPU's kernels (table and square-root bins, brute force and cell list) give the CPU's bits.
TEST(RdfExact, GroQuantisedEdgesOnTheGpuEqualCpu) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    for (const auto &c : kCases) {
        const Grid g = water_box(c.tilted, 5);
        for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_AUTO}) {
            const double rmin = 0.01 * c.lo, rmax = 0.01 * (c.lo + c.w * c.nb), cut = 0.01 * c.cut;
            EXPECT_EQ(run(g, QMMM_BACKEND_CUDA, method, rmin, rmax, c.nb, cut), run(g, QMMM_BACKEND_CPU, method, rmin, rmax, c.nb, cut))
                << "tilted " << c.tilted << " lo " << c.lo << " cut " << c.cut << " method " << method;
        }
    }
}

#endif

// The per-GPU host threads keep device buffers until qmmm_rdf_release(): end them so that compute-sanitizer's
// leak check sees every allocation freed (as test_rdf_gpu.cpp does).
class ReleaseDevices : public ::testing::Environment {
public:
    void TearDown() override { EXPECT_EQ(qmmm_rdf_release(), QMMM_SUCCESS); }
};
const auto *release_env = ::testing::AddGlobalTestEnvironment(new ReleaseDevices);

}  // namespace
