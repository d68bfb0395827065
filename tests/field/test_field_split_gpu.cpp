// test_field_split_gpu.cpp -- QMMM_METHOD_SPLIT on the CUDA backend (label gpu; skips without a GPU): the water
// dimer against the direct double sum at tolerances 1e-5, 1e-7 and 1e-9, seed 004's glycine environment at the
// three tolerances and its whole cube at 1e-7, against the CPU split (the same tables and
// formulas: agreement to rounding), points outside the region and on cell centres, repeatability.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "field_reference.hpp"
#include "glycine_env.hpp"
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

INSTANTIATE_TEST_SUITE_P(Tolerances, SplitGpu, ::testing::Values(1e-5, 1e-7, 1e-9));

// MIXED on the GPU (near cells' terms in single precision): within the tolerance of the direct double sum, with its
// measured rounding in the estimate; the single-precision path really taken at 1e-5 and 1e-7 (reported MIXED, and
// apart from the DOUBLE split by more than rounding in double but by less than the estimate); repeatable.
class SplitGpuMixed : public ::testing::TestWithParam<double> {};

TEST_P(SplitGpuMixed, WaterDimerWithinTolerance) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const Water &w = water();
    const double tol = GetParam();
    qmmm_field m = make_field(w.sys, w.dv, QMMM_METHOD_SPLIT, tol, w.region, 0, QMMM_BACKEND_CUDA, QMMM_PRECISION_MIXED);
    ASSERT_NE(m, nullptr) << qmmm_error_message();
    qmmm_field g = make_field(w.sys, w.dv, QMMM_METHOD_SPLIT, tol, w.region, 0, QMMM_BACKEND_CUDA);
    qmmm_field d = make_field(w.sys, w.dv, QMMM_METHOD_DIRECT, 0, nullptr);
    qmmm_field a = make_scale_field(w.sys, w.dv);
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    int backend = 0, precision = -1, device = -2;
    ASSERT_EQ(qmmm_field_backend(m, &backend, &precision, &device), QMMM_SUCCESS);
    if (tol >= 1e-7) EXPECT_EQ(precision, QMMM_PRECISION_MIXED) << "the single-precision terms should fit " << tol;
    const auto p = region_points(w.region, 10000, 23);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> um(n), ug(n), r(n), sc(n);
    ASSERT_EQ(qmmm_field_eval(m, n, p.data(), um.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(g, n, p.data(), ug.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
    const Worst wm = worst_error(um, r, sc, p), wg = worst_error(um, ug, sc, p);
    double est_m = 0, est_g = 0;
    qmmm_field_split_params(m, nullptr, nullptr, nullptr, &est_m);
    qmmm_field_split_params(g, nullptr, nullptr, nullptr, &est_g);
    std::printf("CUDA split MIXED (%s), tolerance %.0e: max normwise error %.2e vs direct, %.2e vs the DOUBLE split; "
                "estimates %.2e (MIXED), %.2e (DOUBLE)\n", precision == QMMM_PRECISION_MIXED ? "single-precision terms" : "in double",
                tol, wm.err, wg.err, est_m, est_g);
    EXPECT_LE(wm.err, tol);
    EXPECT_LE(est_m, tol);
    EXPECT_GE(est_m, est_g);
    if (precision == QMMM_PRECISION_MIXED) {
        EXPECT_GT(wg.err, 1e-12);               // single-precision terms, not the double kernel
        EXPECT_LE(wg.err, est_m - est_g + 1e-12);  // within the rounding the estimate added
    } else {
        EXPECT_LE(wg.err, 1e-12);
    }
    std::vector<double> again(n);
    ASSERT_EQ(qmmm_field_eval(m, n, p.data(), again.data()), QMMM_SUCCESS);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(again[i], um[i]) << i;
    for (int64_t i = 0; i < n; i += 701) {
        double one = 0;
        ASSERT_EQ(qmmm_field_eval(m, 1, &p[3 * i], &one), QMMM_SUCCESS);
        ASSERT_EQ(one, um[i]) << i;
    }
    for (auto h : {m, g, d, a}) qmmm_field_destroy(h);
}

INSTANTIATE_TEST_SUITE_P(Tolerances, SplitGpuMixed, ::testing::Values(1e-5, 1e-7, 1e-9));

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Seed 004's glycine environment on the GPU: the cube at psi4's threshold (268,938 cells) and the whole cube
// (1,099,098 cells), fragment 1's region (its nuclei + 2 bohr), random points (a fifth on the region's faces,
// edges and corners) against the direct double sum on the CPU. Prints the setup time (grid and cell list).
struct GlycineCase {
    double threshold_scale;  // 1: psi4's threshold; 0: the whole cube
    double tol;
    int points;
    int precision = QMMM_PRECISION_DOUBLE;
};

class SplitGpuGlycine : public ::testing::TestWithParam<GlycineCase> {};

TEST_P(SplitGpuGlycine, FragmentRegionWithinTolerance) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const GlycineCase k = GetParam();
    const auto ref = qmmm_glycine_test::reference();
    double dv = 0;
    const qmmm_test::System sys = qmmm_glycine_test::cube(k.threshold_scale * ref["density_threshold"].get<double>(), &dv);
    ASSERT_EQ(sys.n_cells(), k.threshold_scale > 0 ? 268938 : 1099098) << qmmm_error_message();
    const std::vector<double> qm = qmmm_glycine_test::qm_atoms(ref);
    double region[6];
    ASSERT_EQ(qmmm_region_around((int64_t)qm.size() / 3, qm.data(), 2.0, region), QMMM_SUCCESS);
    auto t0 = std::chrono::steady_clock::now();
    qmmm_field g = make_field(sys, dv, QMMM_METHOD_SPLIT, k.tol, region, 0, QMMM_BACKEND_CUDA, k.precision);
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    const double setup = seconds_since(t0);
    int backend = 0, precision = -1, device = -2;
    ASSERT_EQ(qmmm_field_backend(g, &backend, &precision, &device), QMMM_SUCCESS);
    EXPECT_EQ(precision, k.precision);  // MIXED at 1e-7 keeps its single-precision terms
    qmmm_field d = make_field(sys, dv, QMMM_METHOD_DIRECT, 0, nullptr), a = make_scale_field(sys, dv);
    const auto p = region_points(region, k.points, 2027);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), r(n), sc(n);
    t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(qmmm_field_eval(g, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    const double t_split = seconds_since(t0);
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
    const Worst w = worst_error(u, r, sc, p);
    double alpha = 0, rc = 0, h = 0, est = 0;
    int64_t values = 0, bytes = 0;
    qmmm_field_split_params(g, &alpha, &rc, &h, &est);
    qmmm_field_split_stats(g, &values, &bytes, nullptr, nullptr);
    std::printf("glycine on the GPU (%s), %lld cells, tolerance %.0e: max normwise error %.2e (estimate %.2e); alpha %.2f "
                "R_c %.3f h %.3f; %lld grid values, %.0f MB; setup %.2f s; %lld points in %.4f s (not a benchmark)\n",
                precision == QMMM_PRECISION_MIXED ? "MIXED" : "DOUBLE", (long long)sys.n_cells(), k.tol, w.err, est, alpha, rc, h, (long long)values, bytes / 1e6, setup,
                (long long)n, t_split);
    EXPECT_LE(w.err, k.tol);
    EXPECT_LE(est, k.tol);
    for (auto x : {g, d, a}) qmmm_field_destroy(x);
}

GlycineCase gc(double threshold_scale, double tol, int points, int precision = QMMM_PRECISION_DOUBLE) {
    return GlycineCase{threshold_scale, tol, points, precision};
}
std::string glycine_name(const ::testing::TestParamInfo<GlycineCase> &i) {
    const char *tol = i.param.tol > 1e-6 ? "1e5" : i.param.tol > 1e-8 ? "1e7" : "1e9";
    return std::string(i.param.threshold_scale > 0 ? "Cut268938" : "Whole1099098") + "Tol" + tol +
           (i.param.precision == QMMM_PRECISION_MIXED ? "Mixed" : "");
}
INSTANTIATE_TEST_SUITE_P(Glycine, SplitGpuGlycine,
                         ::testing::Values(gc(1, 1e-5, 10000), gc(1, 1e-7, 10000), gc(1, 1e-9, 10000), gc(0, 1e-7, 2000),
                                           gc(1, 1e-7, 10000, QMMM_PRECISION_MIXED), gc(0, 1e-7, 2000, QMMM_PRECISION_MIXED)),
                         glycine_name);

// The grid's nodes on cell centres (CentresCase): the row kernel's NaN for those nodes and their direct sums again;
// within tolerance of the direct sum and within rounding of the CPU split.
TEST(SplitGpuEdges, GridNodesOnCellCentres) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const CentresCase cc;
    qmmm_field g = make_field(cc.sys, cc.dv, QMMM_METHOD_SPLIT, cc.tol, cc.region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    double h = 0;
    ASSERT_EQ(qmmm_field_split_params(g, nullptr, nullptr, &h, nullptr), QMMM_SUCCESS);
    ASSERT_EQ(h, cc.spacing);
    qmmm_field c = make_field(cc.sys, cc.dv, QMMM_METHOD_SPLIT, cc.tol, cc.region);
    qmmm_field d = make_field(cc.sys, cc.dv, QMMM_METHOD_DIRECT, 0, nullptr);
    qmmm_field a = make_scale_field(cc.sys, cc.dv);
    ASSERT_NE(c, nullptr) << qmmm_error_message();
    const auto p = region_points(cc.region, 3000, 4);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> ug(n), uc(n), r(n), sc(n);
    ASSERT_EQ(qmmm_field_eval(g, n, p.data(), ug.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(c, n, p.data(), uc.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
    const Worst wg = worst_error(ug, r, sc, p), wc = worst_error(ug, uc, sc, p);
    std::printf("CUDA split, grid nodes on cell centres: max normwise error %.2e vs direct, %.2e vs the CPU split\n",
                wg.err, wc.err);
    EXPECT_LE(wg.err, cc.tol);
    EXPECT_LE(wc.err, 1e-12);
    for (auto x : {g, c, d, a}) qmmm_field_destroy(x);
}

// A create that fails while the direct fallback is still being made on its own thread (field_split_gpu.cu): the error
// and its message, nothing left behind (run under compute-sanitizer's leak check on the GPU), and the GPU usable after.
TEST(SplitGpuEdges, RefusedCreateLeavesNothing) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    qmmm_test::System s = qmmm_test::random_system(20000, 1, 5, 8.0);
    const double huge[6] = {-500, -500, -500, 500, 500, 500}, region[6] = {-2, -2, -2, 2, 2, 2};
    for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(make_field(s, 0.0, QMMM_METHOD_SPLIT, 1e-7, huge, 0, QMMM_BACKEND_CUDA), nullptr);
        EXPECT_NE(std::string(qmmm_error_message()).find("grid"), std::string::npos) << qmmm_error_message();
    }
    qmmm_field g = make_field(s, 0.0, QMMM_METHOD_SPLIT, 1e-5, region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    const double p[3] = {0.1234, -0.5678, 0.9};
    double u = 0;
    EXPECT_EQ(qmmm_field_eval(g, 1, p, &u), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_TRUE(std::isfinite(u));
    qmmm_field_destroy(g);
}

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

// Calls of 2,048 points and more stream their values out of the kernel in chunks of 1,024, and from 6,144 points
// in two launches on two streams (field_split_gpu.cu): such a call gives every point the bits of a small call, with
// points outside the region (the direct sum, to rounding: its order of summation depends on its batch), on cell
// centres, a partial last chunk and calls back to back, in DOUBLE and MIXED.
TEST(SplitGpuEdges, StreamedCallsAsSmallCalls) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const Water &w = water();
    auto inside = [&](const double *x) {
        for (int k = 0; k < 3; ++k)
            if (x[k] < w.region[k] || x[k] > w.region[3 + k]) return false;
        return true;
    };
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_MIXED}) {
        qmmm_field g = make_field(w.sys, w.dv, QMMM_METHOD_SPLIT, 1e-7, w.region, 0, QMMM_BACKEND_CUDA, prec);
        ASSERT_NE(g, nullptr) << qmmm_error_message();
        std::vector<double> p = region_points(w.region, 5000, 41);
        int64_t outside = 0;
        for (int64_t m = 0; m < w.sys.n_cells(); m += 97) {  // cell centres spread through the batch
            const double *c = &w.sys.cell_xyz[3 * m];
            outside += !inside(c);
            const size_t at = 3 * ((m * 7919) % (p.size() / 3));
            p.insert(p.begin() + static_cast<std::ptrdiff_t>(at), c, c + 3);
        }
        ASSERT_GT(outside, 10);
        const int64_t total = (int64_t)p.size() / 3;
        std::vector<double> small(total);
        for (int64_t b = 0; b < total; b += 1000)  // below the streaming size
            ASSERT_EQ(qmmm_field_eval(g, std::min<int64_t>(1000, total - b), &p[3 * b], &small[b]), QMMM_SUCCESS)
                << qmmm_error_message();
        int64_t np0 = 0, nout0 = 0;
        ASSERT_EQ(qmmm_field_split_stats(g, nullptr, nullptr, &np0, &nout0), QMMM_SUCCESS);
        EXPECT_EQ(nout0, outside);
        int64_t want = nout0;  // the outside-point counter after the calls below
        std::vector<double> p2(p);  // the points twice: calls of two launches
        p2.insert(p2.end(), p.begin(), p.end());
        ASSERT_LT(total, 6144);
        for (int64_t n : {int64_t{2048}, int64_t{2049}, int64_t{3071}, total, total, 6144 + total % 1024, 2 * total}) {
            std::vector<double> u(n, -1.0);
            ASSERT_EQ(qmmm_field_eval(g, n, p2.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
            for (int64_t i = 0; i < n; ++i) {
                const int64_t j = i % total;
                if (inside(&p[3 * j]))
                    ASSERT_EQ(u[i], small[j]) << "precision " << prec << ", n " << n << ", point " << i;
                else  // the direct backend's sum, whose order depends on how many points it gets
                    ASSERT_NEAR(u[i], small[j], 1e-13 * std::fabs(small[j])) << "precision " << prec << ", n " << n << ", point " << i;
                want += !inside(&p[3 * j]);
            }
        }
        int64_t np = 0, nout = 0;
        ASSERT_EQ(qmmm_field_split_stats(g, nullptr, nullptr, &np, &nout), QMMM_SUCCESS);
        EXPECT_EQ(np, np0 + 2048 + 2049 + 3071 + 6144 + total % 1024 + 4 * total);
        EXPECT_EQ(nout, want);
        qmmm_field_destroy(g);
    }
    // With the cell volume unknown, a point on a cell centre is QMMM_ERR_SINGULAR in a streamed call as in a small one.
    qmmm_field s = make_field(w.sys, 0.0, QMMM_METHOD_SPLIT, 1e-5, w.region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(s, nullptr) << qmmm_error_message();
    std::vector<double> p = region_points(w.region, 3000, 43), u(3001);
    p.insert(p.begin() + 3 * 2500, w.sys.cell_xyz.begin(), w.sys.cell_xyz.begin() + 3);
    EXPECT_EQ(qmmm_field_eval(s, 3001, p.data(), u.data()), QMMM_ERR_SINGULAR);
    EXPECT_EQ(qmmm_field_eval(s, 2400, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    qmmm_field_destroy(s);
}

// The kernel adds the environment's nuclei itself: against the direct double sum, and a point on a nucleus inside
// the region (alone or in a batch) is QMMM_ERR_SINGULAR, as on the host.
TEST(SplitGpuNuclei, InTheKernelAsOnTheHost) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    qmmm_test::System sys = lattice_system(20, 0.2, false, 0, 1);
    const double nuc[6] = {0.33, -0.41, 0.27, -0.8, 0.5, 0.1};  // inside the region, off the cell centres
    sys.nuc_xyz.assign(nuc, nuc + 6), sys.nuc_z = {6.0, 1.0};
    const double region[6] = {-1.5, -1.5, -1.5, 1.5, 1.5, 1.5};
    qmmm_field g = make_field(sys, 0.008, QMMM_METHOD_SPLIT, 1e-8, region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    qmmm_field d = make_field(sys, 0.008, QMMM_METHOD_DIRECT, 0, nullptr), a = make_scale_field(sys, 0.008);
    const auto p = region_points(region, 500, 5);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), r(n), sc(n);
    ASSERT_EQ(qmmm_field_eval(g, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
    EXPECT_LE(worst_error(u, r, sc, p).err, 1e-8);
    double v[3] = {0, 0, 0};
    EXPECT_EQ(qmmm_field_eval(g, 1, &nuc[3], v), QMMM_ERR_SINGULAR);
    const double batch[9] = {p[0], p[1], p[2], nuc[0], nuc[1], nuc[2], p[3], p[4], p[5]};
    EXPECT_EQ(qmmm_field_eval(g, 3, batch, v), QMMM_ERR_SINGULAR);
    for (auto h : {g, d, a}) qmmm_field_destroy(h);
}

}  // namespace
