// test_field_split_gpu.cpp -- QMMM_METHOD_SPLIT on the CUDA backend (label gpu; skips without a GPU): the water
// dimer against the direct double sum at tolerances 1e-7 and 1e-9, against the CPU split (the same tables and
// formulas: agreement to rounding), points outside the region and on cell centres, repeatability.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "field_reference.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"
#include "test_field_split_util.hpp"

namespace {

using namespace qmmm_split_test;

struct Water {
    qmmm_test::System sys;
    double dv = 0, region[6] = {0, 0, 0, 0, 0, 0};
};

const Water &water() {
    static const Water w = [] {
        Water x;
        x.sys = qmmm_test::water2_environment(QMMM_SOURCE_DIR, &x.dv);
        const double atoms[9] = {-2.9309784486679695, -0.21641143588743048, 0.0, -3.655219765701933, 1.4409218398399704, 0.0,
                                 -1.133225293736174,  0.0769345300196391,   0.0};
        qmmm_region_around(3, atoms, 3.0, x.region);
        return x;
    }();
    return w;
}

class SplitGpu : public ::testing::TestWithParam<double> {};

TEST_P(SplitGpu, WaterDimerWithinToleranceAndAsTheCpu) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const Water &w = water();
    ASSERT_GT(w.sys.n_cells(), 1000);
    const double tol = GetParam();
    qmmm_field g = make_field(w.sys, w.dv, QMMM_METHOD_SPLIT, tol, w.region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    int backend = 0, precision = -1, device = -2;
    ASSERT_EQ(qmmm_field_backend(g, &backend, &precision, &device), QMMM_SUCCESS);
    EXPECT_EQ(backend, QMMM_BACKEND_CUDA);
    EXPECT_EQ(precision, QMMM_PRECISION_DOUBLE);
    EXPECT_GE(device, 0);
    qmmm_field c = make_field(w.sys, w.dv, QMMM_METHOD_SPLIT, tol, w.region);
    qmmm_field d = make_field(w.sys, w.dv, QMMM_METHOD_DIRECT, 0, nullptr);
    qmmm_field a = make_scale_field(w.sys, w.dv);
    ASSERT_NE(c, nullptr) << qmmm_error_message();
    const auto p = region_points(w.region, 10000, 17);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> ug(n), uc(n), r(n), sc(n);
    ASSERT_EQ(qmmm_field_eval(g, n, p.data(), ug.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(c, n, p.data(), uc.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
    const Worst wg = worst_error(ug, r, sc, p), wc = worst_error(ug, uc, sc, p);
    double est_g = 0, est_c = 0;
    qmmm_field_split_params(g, nullptr, nullptr, nullptr, &est_g);
    qmmm_field_split_params(c, nullptr, nullptr, nullptr, &est_c);
    std::printf("CUDA split, tolerance %.0e: max normwise error %.2e vs direct, %.2e vs the CPU split; estimates %.2e "
                "(CUDA), %.2e (CPU)\n", tol, wg.err, wc.err, est_g, est_c);
    EXPECT_LE(wg.err, tol);
    // The grids were built from direct sums of two backends (DOUBLE, ~1e-15 apart) and the kernels sum in
    // different orders: rounding, not method, separates them.
    EXPECT_LE(wc.err, 1e-12);
    EXPECT_NEAR(est_g, est_c, 1e-3 * est_c);
    // Repeatable, and a point's value does not depend on the batch.
    std::vector<double> again(n);
    ASSERT_EQ(qmmm_field_eval(g, n, p.data(), again.data()), QMMM_SUCCESS);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(again[i], ug[i]) << i;
    for (int64_t i = 0; i < n; i += 501) {
        double one = 0;
        ASSERT_EQ(qmmm_field_eval(g, 1, &p[3 * i], &one), QMMM_SUCCESS);
        ASSERT_EQ(one, ug[i]) << i;
    }
    for (auto h : {g, c, d, a}) qmmm_field_destroy(h);
}

INSTANTIATE_TEST_SUITE_P(Tolerances, SplitGpu, ::testing::Values(1e-7, 1e-9));

TEST(SplitGpuEdges, OutsideAndOnCellCentres) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const Water &w = water();
    qmmm_field g = make_field(w.sys, w.dv, QMMM_METHOD_SPLIT, 1e-7, w.region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    qmmm_field d = make_field(w.sys, w.dv, QMMM_METHOD_DIRECT, 0, nullptr);
    // Cell centres inside and outside the region, and points just outside its faces.
    std::vector<double> p, pout;  // inside first, then outside
    int in = 0, out = 0;
    for (int64_t m = 0; m < w.sys.n_cells() && (in < 100 || out < 100); m += 5) {
        const double *c = &w.sys.cell_xyz[3 * m];
        bool inside = true;
        for (int k = 0; k < 3; ++k) inside = inside && c[k] >= w.region[k] && c[k] <= w.region[3 + k];
        int &cnt = inside ? in : out;
        if (cnt < 100) (inside ? p : pout).insert((inside ? p : pout).end(), c, c + 3), ++cnt;
    }
    ASSERT_EQ(in, 100);
    ASSERT_EQ(out, 100);
    p.insert(p.end(), pout.begin(), pout.end());
    for (int k = 0; k < 3; ++k) {
        double x[3] = {0.5 * (w.region[0] + w.region[3]), 0.5 * (w.region[1] + w.region[4]), 0.5 * (w.region[2] + w.region[5])};
        x[k] = w.region[3 + k] + 1e-9;
        p.insert(p.end(), x, x + 3);
        x[k] = w.region[k] - 0.5;
        p.insert(p.end(), x, x + 3);
    }
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), r(n);
    ASSERT_EQ(qmmm_field_eval(g, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
        double scale = 0;
        const double ref = qmmm_test::reference_u(w.sys, &p[3 * i], w.dv, &scale);
        worst = std::max(worst, std::fabs(u[i] - ref) / scale);
    }
    std::printf("CUDA split: %d cell centres inside, %d outside, 6 points outside faces: max error %.2e\n", in, out, worst);
    EXPECT_LE(worst, 1e-7);
    int64_t np = 0, nout = 0;
    ASSERT_EQ(qmmm_field_split_stats(g, nullptr, nullptr, &np, &nout), QMMM_SUCCESS);
    EXPECT_EQ(np, n);
    EXPECT_EQ(nout, out + 6);
    qmmm_field_destroy(g);
    // Cell volume unknown: a point on a centre is QMMM_ERR_SINGULAR, inside and outside the region.
    qmmm_field s = make_field(w.sys, 0.0, QMMM_METHOD_SPLIT, 1e-5, w.region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(s, nullptr) << qmmm_error_message();
    double v = 0;
    EXPECT_EQ(qmmm_field_eval(s, 1, &p[0], &v), QMMM_ERR_SINGULAR);
    EXPECT_EQ(qmmm_field_eval(s, 1, &p[3 * in], &v), QMMM_ERR_SINGULAR);
    qmmm_field_destroy(s);
    qmmm_field_destroy(d);
}

}  // namespace
