// test_field_split_grad.cpp -- the gradient of a QMMM_METHOD_SPLIT field on the CPU (qmmm_field_eval_grad): per
// component against the long-double direct gradient, relative to sum |q|/d^2 + sum Z/d^2, on the water dimer's density
// and on random MM charges at tolerances 1e-5, 1e-7 and 1e-9; against central differences of the split's own value;
// points outside the region, on cell centres and on nuclei; the same bits for any batch and thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "field_reference.hpp"
#include "qmmm_accel.h"
#include "test_field_split_grad.hpp"
#include "test_field_split_util.hpp"

namespace {

using qmmm_test::System;
using namespace qmmm_split_test;
using namespace qmmm_split_grad_test;

struct GradParams {
    double r_cut = 0, est = 0;
    int64_t values = 0;
    int split = -1;
};
GradParams grad_params(qmmm_field f) {
    GradParams g;
    EXPECT_EQ(qmmm_field_split_grad_params(f, &g.r_cut, &g.est, &g.values, &g.split), QMMM_SUCCESS) << qmmm_error_message();
    return g;
}

class SplitGradWater : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        sys_ = qmmm_test::water2_environment(QMMM_SOURCE_DIR, &dv_);
        ASSERT_GT(sys_.n_cells(), 1000) << qmmm_error_message();
        // Water 1's nuclei (data/water_dimer/reference.json qm_atoms) + 3 bohr, as test_field_split.cpp.
        const double atoms[9] = {-2.9309784486679695, -0.21641143588743048, 0.0, -3.655219765701933, 1.4409218398399704, 0.0,
                                 -1.133225293736174,  0.0769345300196391,   0.0};
        ASSERT_EQ(qmmm_region_around(3, atoms, 3.0, region_), QMMM_SUCCESS) << qmmm_error_message();
        pts_ = region_points(region_, 2000, 43);
        f7_ = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-7, region_);
        ASSERT_NE(f7_, nullptr) << qmmm_error_message();
    }
    static void TearDownTestSuite() {
        qmmm_field_destroy(f7_);
        f7_ = nullptr;
    }
    static System sys_;
    static double dv_, region_[6];
    static std::vector<double> pts_;
    static qmmm_field f7_;  // tolerance 1e-7, shared by the suite's tests (its gradient's tables are made once)
};
System SplitGradWater::sys_;
double SplitGradWater::dv_ = 0, SplitGradWater::region_[6];
std::vector<double> SplitGradWater::pts_;
qmmm_field SplitGradWater::f7_ = nullptr;

class SplitGradWaterTolerance : public SplitGradWater, public ::testing::WithParamInterface<double> {};

// Every component within the tolerance of the long-double gradient, the estimate within it too; the error above the
// direct sum's rounding (a gradient silently summed directly would not have it); u within the value's tolerance.
TEST_P(SplitGradWaterTolerance, WithinToleranceOfTheLongDoubleGradient) {
    const double tol = GetParam();
    qmmm_field f = tol == 1e-7 ? f7_ : make_field(sys_, dv_, QMMM_METHOD_SPLIT, tol, region_);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    const int64_t n = (int64_t)pts_.size() / 3;
    std::vector<double> u(n), g(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad(f, n, pts_.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    const GradParams gp = grad_params(f);
    double rc = 0, est_v = 0;
    ASSERT_EQ(qmmm_field_split_params(f, nullptr, &rc, nullptr, &est_v), QMMM_SUCCESS);
    const GradWorst w = grad_error(sys_, pts_, g);
    double du = 0;  // u of the gradient call against the long-double value, normwise
    for (int64_t i = 0; i < n; i += 7) {
        double sc = 0;
        const double r = qmmm_test::reference_u(sys_, &pts_[3 * i], dv_, &sc);
        du = std::fmax(du, std::fabs(u[i] - r) / sc);
    }
    std::printf("water dimer, tolerance %.0e: gradient max error %.2e per component (estimate %.2e, split %d, R_g %.3f "
                "against R_c %.3f, own grid %lld values); u's normwise error %.1e\n",
                tol, w.err, gp.est, gp.split, gp.r_cut, rc, (long long)gp.values, du);
    EXPECT_EQ(gp.split, 1);
    EXPECT_LE(w.err, tol) << "point " << w.point;
    EXPECT_LE(gp.est, tol);
    EXPECT_GT(gp.r_cut, rc);
    EXPECT_GT(w.err, 1e-14) << "the gradient as exact as the direct sum: is the split's gradient taken?";
    EXPECT_LE(du, tol);
    // A point's gradient does not depend on the batch: one at a time gives the same bits (a sample of them).
    for (int64_t p = 0; p < n; p += 37) {
        double one_u = 0, one_g[3];
        ASSERT_EQ(qmmm_field_eval_grad(f, 1, &pts_[3 * p], &one_u, one_g), QMMM_SUCCESS);
        ASSERT_EQ(one_u, u[p]) << "point " << p;
        for (int k = 0; k < 3; ++k) ASSERT_EQ(one_g[k], g[3 * p + k]) << "point " << p;
    }
    if (f != f7_) qmmm_field_destroy(f);
}

INSTANTIATE_TEST_SUITE_P(Tolerances, SplitGradWaterTolerance, ::testing::Values(1e-5, 1e-7, 1e-9));

// The gradient is the derivative of the split's own value: central differences (4th order, step 1e-3 bohr) of the
// values of qmmm_field_eval_grad (the tables the gradient reads) agree with it within the tolerance per component --
// the interpolant's derivative is taken at the same stencil, and the short-range terms' derivative is the exact one of
// what the value sums. Those of qmmm_field_eval's values (the value's grid) differ by that grid's derivative error,
// about 10x the tolerance on this system: why the gradient builds a finer grid of its own here.
TEST_F(SplitGradWater, CentralDifferencesOfTheSplitValue) {
    const double tol = 1e-7, h = 1e-3;
    qmmm_field f = f7_;
    // Points at least 4h inside the region, so that every shifted point is interpolated too.
    double inner[6];
    for (int k = 0; k < 3; ++k) inner[k] = region_[k] + 4 * h, inner[3 + k] = region_[3 + k] - 4 * h;
    std::vector<double> p = region_points(inner, 300, 7);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), g(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    std::vector<double> shifted(3 * 4 * 3 * n), ug(4 * 3 * n), gs(3 * 4 * 3 * n), uv(4 * 3 * n);
    const double steps[4] = {-2 * h, -h, h, 2 * h};
    for (int64_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
            for (int s = 0; s < 4; ++s) {
                double *q = &shifted[3 * ((i * 3 + k) * 4 + s)];
                q[0] = p[3 * i], q[1] = p[3 * i + 1], q[2] = p[3 * i + 2];
                q[k] += steps[s];
            }
    const int64_t m = 4 * 3 * n;
    ASSERT_EQ(qmmm_field_eval_grad(f, m, shifted.data(), ug.data(), gs.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(f, m, shifted.data(), uv.data()), QMMM_SUCCESS) << qmmm_error_message();
    double worst_g = 0, worst_v = 0;
    for (int64_t i = 0; i < n; ++i) {
        long double r[3], sc;
        reference_grad(sys_, &p[3 * i], r, &sc);
        for (int k = 0; k < 3; ++k) {
            const double *a = &ug[(i * 3 + k) * 4], *b = &uv[(i * 3 + k) * 4];
            const double cg = (a[0] - 8 * a[1] + 8 * a[2] - a[3]) / (12 * h), cv = (b[0] - 8 * b[1] + 8 * b[2] - b[3]) / (12 * h);
            worst_g = std::fmax(worst_g, std::fabs(cg - g[3 * i + k]) / (double)sc);
            worst_v = std::fmax(worst_v, std::fabs(cv - g[3 * i + k]) / (double)sc);
        }
    }
    std::printf("water dimer, tolerance 1e-7: the gradient against central differences of the gradient call's values: "
                "max %.2e per component; of qmmm_field_eval's values (the value's grid): %.2e\n", worst_g, worst_v);
    EXPECT_LE(worst_g, tol);
    EXPECT_LE(worst_v, 30 * tol);
}

// Outside the region: the direct gradient (to rounding); on a cell centre (cell_volume set): finite, the cell adds its
// self potential to u and nothing to the gradient; the async form gives the same bits.
TEST_F(SplitGradWater, OutsideAndCellCentres) {
    qmmm_field f = f7_;
    std::vector<double> p = {region_[3] + 1.5, 0.3, 0.2, region_[0] - 0.7, region_[4] + 2.0, -0.4};
    int added = 0;  // two cell centres inside the region
    for (int64_t m = 0; m < sys_.n_cells() && added < 2; m += 17) {
        const double *c = &sys_.cell_xyz[3 * m];
        if (split_inside_region(region_, c)) p.insert(p.end(), c, c + 3), ++added;
    }
    ASSERT_EQ(added, 2);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), g(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    const GradWorst w = grad_error(sys_, p, g);
    std::printf("outside the region and on cell centres: gradient max error %.2e\n", w.err);
    EXPECT_LE(w.err, 1e-7);
    for (int64_t i = 0; i < 2; ++i) {  // outside: the direct sum's
        long double r[3], sc;
        reference_grad(sys_, &p[3 * i], r, &sc);
        for (int k = 0; k < 3; ++k) EXPECT_LE(std::fabs(g[3 * i + k] - (double)r[k]) / (double)sc, 1e-13);
    }
    for (int64_t i = 2; i < n; ++i) {  // on a centre: u with the cell's self potential, within the tolerance
        double sc = 0;
        const double r = qmmm_test::reference_u(sys_, &p[3 * i], dv_, &sc);
        EXPECT_LE(std::fabs(u[i] - r) / sc, 1e-7);
    }
    std::vector<double> ua(n), ga(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad_async(f, n, p.data(), ua.data(), ga.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(ua[i], u[i]);
    for (int64_t i = 0; i < 3 * n; ++i) EXPECT_EQ(ga[i], g[i]);
    double sum = 0;
    std::vector<double> gsum(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad_sum(f, n, p.data(), &sum, gsum.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int64_t i = 0; i < 3 * n; ++i) EXPECT_EQ(gsum[i], g[i]);
}

// A synthetic density with nuclei inside the region (tolerance 1e-4): within the tolerance; a point on a nucleus is
// SINGULAR, naming it, from the plain and the async form (at wait); the same bits for 1 and 3 threads.
TEST(SplitGradSynthetic, NucleiInsideTheRegionAndThreads) {
    const System s = lattice_system(16, 0.4, true, 4, 17);
    const double region[6] = {-3, -3, -3, 3, 3, 3};
    const double dv = 0.064;
    const auto p = region_points(region, 800, 3);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> ref;
    for (int threads : {1, 3}) {
        qmmm_field f = make_field(s, dv, QMMM_METHOD_SPLIT, 1e-4, region, threads);
        ASSERT_NE(f, nullptr) << qmmm_error_message();
        std::vector<double> u(n), g(3 * n);
        ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
        if (threads == 1) {
            const GradParams gp = grad_params(f);
            const GradWorst w = grad_error(s, p, g);
            std::printf("lattice density, signed charges, 4 nuclei, tolerance 1e-4: gradient max error %.2e (estimate "
                        "%.2e, split %d, own grid %lld values)\n", w.err, gp.est, gp.split, (long long)gp.values);
            EXPECT_EQ(gp.split, 1);
            EXPECT_LE(w.err, 1e-4);
            EXPECT_GT(w.err, 1e-14);
            const double *nuc = &s.nuc_xyz[3];
            ASSERT_TRUE(split_inside_region(region, nuc));
            double u1 = 0, g1[3];
            EXPECT_EQ(qmmm_field_eval_grad(f, 1, nuc, &u1, g1), QMMM_ERR_SINGULAR);
            EXPECT_NE(std::string(qmmm_error_message()).find("nucleus 1"), std::string::npos) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_eval_grad_async(f, 1, nuc, &u1, g1), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(qmmm_field_wait(f), QMMM_ERR_SINGULAR);
        }
        g.insert(g.end(), u.begin(), u.end());
        if (ref.empty()) ref = g;
        else EXPECT_EQ(0, std::memcmp(ref.data(), g.data(), 8 * g.size())) << threads << " threads";
        qmmm_field_destroy(f);
    }
}

// MM charges (both signs, 6,000 of +-0.3..0.8 e, 4-12 bohr from a water-like QM region, region = its nuclei + 3 bohr,
// some charges inside it) at the three tolerances; a point on an inner charge is SINGULAR.
class SplitGradCharges : public ::testing::TestWithParam<double> {};

TEST_P(SplitGradCharges, WithinToleranceOfTheLongDoubleGradient) {
    const double tol = GetParam();
    std::mt19937_64 rng(91);
    std::uniform_real_distribution<double> box(-12, 12), mag(0.3, 0.8);
    System s;
    s.nuc_xyz = {0.0, 0.0, 0.0, 1.43, 1.1, 0.0, -1.43, 1.1, 0.0};
    s.nuc_z = {8, 1, 1};
    std::vector<double> x, y, z, q;
    x = {3.2}, y = {0.4}, z = {-0.5}, q = {0.5};  // inside the region
    while (q.size() < 6000) {
        const double p[3] = {box(rng), box(rng), box(rng)};
        const double d = std::hypot(p[0], p[1] - 0.5, p[2]);
        if (d < 4 || d > 12) continue;
        x.push_back(p[0]), y.push_back(p[1]), z.push_back(p[2]), q.push_back((q.size() % 2 ? -1 : 1) * mag(rng));
    }
    for (size_t m = 0; m < q.size(); ++m) s.cell_xyz.insert(s.cell_xyz.end(), {x[m], y[m], z[m]}), s.cell_q.push_back(-q[m]);
    double region[6];
    ASSERT_EQ(qmmm_region_around(3, s.nuc_xyz.data(), 3.0, region), QMMM_SUCCESS);
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CPU, o.method = QMMM_METHOD_SPLIT, o.tolerance = tol, o.region = region;
    qmmm_field f = nullptr;
    ASSERT_EQ(qmmm_field_create_charges(&f, (int64_t)q.size(), x.data(), y.data(), z.data(), 1, q.data(),
                                        QMMM_SCREEN_NONE, nullptr, nullptr, 3, s.nuc_xyz.data(), s.nuc_z.data(), &o),
              QMMM_SUCCESS)
        << qmmm_error_message();
    // electron-like points around the nuclei, inside the region
    std::normal_distribution<double> nd(0, 1.2);
    std::vector<double> p;
    while (p.size() < 3 * 600) {
        const double r[3] = {s.nuc_xyz[0] + nd(rng), s.nuc_xyz[1] + 0.5 + nd(rng), nd(rng)};
        if (split_inside_region(region, r)) p.insert(p.end(), r, r + 3);
    }
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), g(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    const GradParams gp = grad_params(f);
    const GradWorst w = grad_error(s, p, g);
    double rc = 0;
    ASSERT_EQ(qmmm_field_split_params(f, nullptr, &rc, nullptr, nullptr), QMMM_SUCCESS);
    std::printf("6,000 MM charges, tolerance %.0e: gradient max error %.2e per component (estimate %.2e, split %d, R_g "
                "%.3f against R_c %.3f, own grid %lld values)\n",
                tol, w.err, gp.est, gp.split, gp.r_cut, rc, (long long)gp.values);
    EXPECT_EQ(gp.split, 1);
    EXPECT_LE(w.err, tol) << "point " << w.point;
    EXPECT_LE(gp.est, tol);
    EXPECT_GT(w.err, 1e-14) << "the gradient as exact as the direct sum: is the split's gradient taken?";
    double u1 = 0, g1[3];
    const double on[3] = {x[0], y[0], z[0]};
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, on, &u1, g1), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 0"), std::string::npos) << qmmm_error_message();
    qmmm_field_destroy(f);
}

INSTANTIATE_TEST_SUITE_P(Tolerances, SplitGradCharges, ::testing::Values(1e-5, 1e-7, 1e-9));

// Few cells, one of them dominant and inside a small region at a loose tolerance (the shape of a fuzz input that took
// 20 s): the gradient sums the near terms over the cells the grid leaves out, those within the grid's own R_c. Summed
// to a wider R_g on the value's grid, the shell between counted twice (L = C - S holds each cell beyond R_c whole:
// 5e-3 here); on a finer grid of its own (R_c beyond R_g) the shell was left out, an error that no grid removes,
// added again to the estimate as a bound: three grids, then the direct sum. Now one grid of its own, the split's
// gradient within the tolerance.
TEST(SplitGradFewCells, OneDominantCellInTheRegion) {
    System s;
    s.cell_xyz = {0, 0, 0, 0, 0, 0, -40, 0.5, 0};
    s.cell_q = {3.0, -0.03, 0.5};
    s.nuc_xyz = {0.1, 0.2, -0.3, 60, 0, 0.1};
    s.nuc_z = {0, 0.3};
    const double region[6] = {-0.62, -0.62, -0.62, 0.62, 0.62, 0.62}, tol = 1e-3;
    qmmm_field f = make_field(s, 0, QMMM_METHOD_SPLIT, tol, region);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    const auto p = region_points(region, 2000, 11);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), g(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    const GradParams gp = grad_params(f);
    const GradWorst w = grad_error(s, p, g);
    std::printf("3 cells, one dominant, region of 1.24 bohr, tolerance 1e-3: gradient max error %.2e (estimate %.2e, "
                "split %d, R_g %.3f, own grid %lld values)\n", w.err, gp.est, gp.split, gp.r_cut, (long long)gp.values);
    EXPECT_EQ(gp.split, 1);
    EXPECT_LE(w.err, tol) << "point " << w.point;
    EXPECT_LE(gp.est, tol);
    EXPECT_GT(w.err, 1e-14) << "the gradient as exact as the direct sum: is the split's gradient taken?";
    EXPECT_LE(gp.values, 400000);  // one grid of its own (185,579 values); the value's has 27,151
    qmmm_field_destroy(f);
}

// qmmm_field_split_grad_params: UNSUPPORTED on a DIRECT field, BAD_HANDLE on a dead one; outputs may be NULL.
TEST(SplitGradParams, Errors) {
    const System s = lattice_system(12, 0.3, false, 2, 3);
    const double region[6] = {-1, -1, -1, 1, 1, 1};
    qmmm_field d = make_field(s, 0.027, QMMM_METHOD_DIRECT, 0, nullptr);
    qmmm_field f = make_field(s, 0.027, QMMM_METHOD_SPLIT, 1e-6, region);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_split_grad_params(d, nullptr, nullptr, nullptr, nullptr), QMMM_ERR_UNSUPPORTED);
    EXPECT_EQ(qmmm_field_split_grad_params(f, nullptr, nullptr, nullptr, nullptr), QMMM_SUCCESS) << qmmm_error_message();
    qmmm_field_destroy(f);
    EXPECT_EQ(qmmm_field_split_grad_params(f, nullptr, nullptr, nullptr, nullptr), QMMM_ERR_BAD_HANDLE);
    qmmm_field_destroy(d);
}

}  // namespace
