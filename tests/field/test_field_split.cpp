// test_field_split.cpp -- QMMM_METHOD_SPLIT on the CPU against the direct double sum: the water dimer at
// tolerances 1e-5, 1e-7 and 1e-9 (10^4 random points in the QM region, a fifth of them on its faces, edges and
// corners), points outside the region (the direct sum's own bits), points on cell centres (the singular-cell rule),
// determinism, empty environments and bad options.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "field_reference.hpp"
#include "test_field_split_util.hpp"
#include "qmmm_accel.h"

namespace {

using qmmm_test::System;
using namespace qmmm_split_test;

class WaterDimer : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        sys_ = qmmm_test::water2_environment(QMMM_SOURCE_DIR, &dv_);
        ASSERT_GT(sys_.n_cells(), 1000) << qmmm_error_message();
        // Water 1's nuclei (data/water_dimer/reference.json qm_atoms) + 3 bohr.
        const double atoms[9] = {-2.9309784486679695, -0.21641143588743048, 0.0, -3.655219765701933, 1.4409218398399704, 0.0,
                                 -1.133225293736174,  0.0769345300196391,   0.0};
        ASSERT_EQ(qmmm_region_around(3, atoms, 3.0, region_), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_region_around(3, atoms, 4.0, region4_), QMMM_SUCCESS) << qmmm_error_message();
        direct_ = make_field(sys_, dv_, QMMM_METHOD_DIRECT, 0, nullptr);
        scale_ = make_scale_field(sys_, dv_);
        pts_ = region_points(region_, 10000, 42);
        ref_.resize(pts_.size() / 3), sc_.resize(ref_.size());
        ASSERT_EQ(qmmm_field_eval(direct_, (int64_t)ref_.size(), pts_.data(), ref_.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval(scale_, (int64_t)sc_.size(), pts_.data(), sc_.data()), QMMM_SUCCESS);
    }
    static void TearDownTestSuite() {
        qmmm_field_destroy(direct_);
        qmmm_field_destroy(scale_);
    }
    static System sys_;
    static double dv_, region_[6], region4_[6];
    static qmmm_field direct_, scale_;
    static std::vector<double> pts_, ref_, sc_;
};
System WaterDimer::sys_;
double WaterDimer::dv_ = 0, WaterDimer::region_[6], WaterDimer::region4_[6];
qmmm_field WaterDimer::direct_ = nullptr, WaterDimer::scale_ = nullptr;
std::vector<double> WaterDimer::pts_, WaterDimer::ref_, WaterDimer::sc_;

class WaterDimerTolerance : public WaterDimer, public ::testing::WithParamInterface<double> {};

TEST_P(WaterDimerTolerance, WithinToleranceOfTheDirectSum) {
    const double tol = GetParam();
    qmmm_field f = make_field(sys_, dv_, QMMM_METHOD_SPLIT, tol, region_);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    std::vector<double> u(ref_.size());
    ASSERT_EQ(qmmm_field_eval(f, (int64_t)u.size(), pts_.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    const Worst w = worst_error(u, ref_, sc_, pts_);
    double alpha = 0, rc = 0, h = 0, est = 0;
    ASSERT_EQ(qmmm_field_split_params(f, &alpha, &rc, &h, &est), QMMM_SUCCESS);
    int64_t values = 0, bytes = 0, n = 0, out = 0;
    ASSERT_EQ(qmmm_field_split_stats(f, &values, &bytes, &n, &out), QMMM_SUCCESS);
    std::printf("water dimer, tolerance %.0e: max normwise error %.2e at (%.3f, %.3f, %.3f); estimate %.2e; alpha %.2f, "
                "R_c %.3f, h %.3f bohr, %lld grid values, %.1f MB\n",
                tol, w.err, w.p[0], w.p[1], w.p[2], est, alpha, rc, h, (long long)values, bytes / 1e6);
    EXPECT_LE(w.err, tol);
    EXPECT_LE(est, tol);
    // The estimate is an estimate, not a loose bound: the measured error is of its size.
    EXPECT_GT(w.err, est / 100) << "the error estimate is far too pessimistic";
    EXPECT_EQ(n, (int64_t)u.size());
    EXPECT_EQ(out, 0);
    // A point's value does not depend on the batch: one at a time gives the same bits (a sample of them).
    for (int64_t p = 0; p < (int64_t)u.size(); p += 97) {
        double one = 0;
        ASSERT_EQ(qmmm_field_eval(f, 1, &pts_[3 * p], &one), QMMM_SUCCESS);
        ASSERT_EQ(one, u[p]) << "point " << p;
    }
    qmmm_field_destroy(f);
}

INSTANTIATE_TEST_SUITE_P(Tolerances, WaterDimerTolerance, ::testing::Values(1e-5, 1e-7, 1e-9));

// What a VMC energy sees (split and direct energies within 1e-6 hartree at tolerance 1e-8): the mean error
// over water 1's electron-like positions, times its 10 electrons, and the nuclei's constant -sum_A Z_A U(R_A).
TEST_F(WaterDimer, VmcEnergyTermsAtTolerance1e8) {
    qmmm_field f = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-8, region4_);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    const auto p = qmmm_test::water1_electron_points(100000, 8);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), r(n);
    ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(direct_, n, p.data(), r.data()), QMMM_SUCCESS);
    const double mean = qmmm_test::mean_error(u, r);
    const double atoms[9] = {-2.9309784486679695, -0.21641143588743048, 0.0, -3.655219765701933, 1.4409218398399704, 0.0,
                             -1.133225293736174,  0.0769345300196391,   0.0};
    const double z[3] = {8, 1, 1};
    double un[3], rn[3], e_nuc = 0;
    ASSERT_EQ(qmmm_field_eval(f, 3, atoms, un), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(direct_, 3, atoms, rn), QMMM_SUCCESS);
    for (int a = 0; a < 3; ++a) e_nuc -= z[a] * (un[a] - rn[a]);
    int64_t np = 0, out = 0;
    qmmm_field_split_stats(f, nullptr, nullptr, &np, &out);
    std::printf("tolerance 1e-8, region = water 1 + 4 bohr: mean error per electron %.2e hartree (x10 electrons: %.2e), "
                "nuclear constant off by %.2e hartree; %lld of %lld positions outside\n",
                mean, 10 * mean, e_nuc, (long long)out, (long long)np);
    EXPECT_LT(std::fabs(10 * mean), 1e-7);
    EXPECT_LT(std::fabs(e_nuc), 1e-6);
    qmmm_field_destroy(f);
}

// Outside the region: the direct sum's value, bit for bit, and counted.
TEST_F(WaterDimer, OutsideTheRegionIsTheDirectSum) {
    qmmm_field f = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-6, region_);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    std::vector<double> p;
    std::mt19937_64 rng(3);
    const double eps[3] = {1e-9, 0.3, 4.0};  // just outside a face, and further
    for (int i = 0; i < 60; ++i) {
        double x[3];
        for (int k = 0; k < 3; ++k) x[k] = std::uniform_real_distribution<double>(region_[k], region_[3 + k])(rng);
        const int axis = i % 3, side = (i / 3) % 2;
        x[axis] = side ? region_[3 + axis] + eps[i % 3] : region_[axis] - eps[i % 3];
        p.insert(p.end(), x, x + 3);
    }
    // and three inside, so that the call mixes both kinds
    for (int k = 0; k < 3; ++k) p.push_back(0.5 * (region_[k] + region_[3 + k]));
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), r(n);
    ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(direct_, n, p.data(), r.data()), QMMM_SUCCESS);
    for (int64_t i = 0; i < n - 1; ++i) EXPECT_EQ(u[i], r[i]) << "outside point " << i;
    int64_t np = 0, out = 0;
    ASSERT_EQ(qmmm_field_split_stats(f, nullptr, nullptr, &np, &out), QMMM_SUCCESS);
    EXPECT_EQ(np, n);
    EXPECT_EQ(out, n - 1);
    qmmm_field_destroy(f);
}

// Points on cell centres, inside and outside the region: the uniform-cube self-potential (long double reference);
// without a cell volume, QMMM_ERR_SINGULAR as with DIRECT.
// MIXED on the CPU: accepted, evaluated in double (qmmm_accel_field.h), so reported as DOUBLE and the same bits as a
// DOUBLE handle's.
TEST_F(WaterDimer, MixedOnTheCpuIsDouble) {
    qmmm_field m = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-7, region_, 0, QMMM_BACKEND_CPU, QMMM_PRECISION_MIXED);
    qmmm_field d = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-7, region_);
    ASSERT_NE(m, nullptr) << qmmm_error_message();
    ASSERT_NE(d, nullptr) << qmmm_error_message();
    int backend = -1, precision = -1, device = -2;
    ASSERT_EQ(qmmm_field_backend(m, &backend, &precision, &device), QMMM_SUCCESS);
    EXPECT_EQ(backend, QMMM_BACKEND_CPU);
    EXPECT_EQ(precision, QMMM_PRECISION_DOUBLE);
    double em = 0, ed = 0;
    qmmm_field_split_params(m, nullptr, nullptr, nullptr, &em);
    qmmm_field_split_params(d, nullptr, nullptr, nullptr, &ed);
    EXPECT_EQ(em, ed);
    const auto p = region_points(region_, 500, 5);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> um(n), ud(n);
    ASSERT_EQ(qmmm_field_eval(m, n, p.data(), um.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), ud.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(um[i], ud[i]) << i;
    qmmm_field_destroy(m);
    qmmm_field_destroy(d);
}

TEST_F(WaterDimer, PointsOnCellCentres) {
    qmmm_field f = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-7, region_);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    std::vector<double> in, out;
    for (int64_t m = 0; m < sys_.n_cells(); m += 7) {
        const double *c = &sys_.cell_xyz[3 * m];
        bool inside = true;
        for (int k = 0; k < 3; ++k) inside = inside && c[k] >= region_[k] && c[k] <= region_[3 + k];
        auto &dst = inside ? in : out;
        if (dst.size() < 3 * 200) dst.insert(dst.end(), c, c + 3);
    }
    ASSERT_EQ(in.size(), 3u * 200);
    ASSERT_GT(out.size(), 0u);
    for (const auto *set : {&in, &out}) {
        const int64_t n = (int64_t)set->size() / 3;
        std::vector<double> u(n);
        ASSERT_EQ(qmmm_field_eval(f, n, set->data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
        double worst = 0;
        for (int64_t i = 0; i < n; ++i) {
            double scale = 0;
            const double r = qmmm_test::reference_u(sys_, &(*set)[3 * i], dv_, &scale);
            worst = std::max(worst, std::fabs(u[i] - r) / scale);
        }
        std::printf("%s the region: %lld points on cell centres, max normwise error %.2e\n", set == &in ? "inside" : "outside",
                    (long long)n, worst);
        EXPECT_LE(worst, 1e-7);
    }
    qmmm_field_destroy(f);

    qmmm_field g = make_field(sys_, 0.0, QMMM_METHOD_SPLIT, 1e-5, region_);  // cell volume unknown
    ASSERT_NE(g, nullptr) << qmmm_error_message();
    for (const auto *set : {&in, &out}) {
        double u = 0;
        EXPECT_EQ(qmmm_field_eval(g, 1, set->data(), &u), QMMM_ERR_SINGULAR);
        EXPECT_NE(std::string(qmmm_error_message()).find("cell centre"), std::string::npos) << qmmm_error_message();
    }
    // A point a little off every centre is fine with cell volume unknown.
    double p[3] = {in[0] + 1e-3, in[1], in[2]}, u = 0;
    EXPECT_EQ(qmmm_field_eval(g, 1, p, &u), QMMM_SUCCESS) << qmmm_error_message();
    qmmm_field_destroy(g);
}

// The thread count does not change a bit; nor do the order of the points and the batch size.
TEST_F(WaterDimer, SameBitsForAnyThreadCountAndOrder) {
    const int64_t n = 2000;
    std::vector<double> p(pts_.begin(), pts_.begin() + 3 * n), u1(n), u2(n), u3(n);
    qmmm_field f1 = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-6, region_, 1);
    qmmm_field f2 = make_field(sys_, dv_, QMMM_METHOD_SPLIT, 1e-6, region_, 2);
    ASSERT_NE(f1, nullptr) << qmmm_error_message();
    ASSERT_NE(f2, nullptr) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(f1, n, p.data(), u1.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(f2, n, p.data(), u2.data()), QMMM_SUCCESS);
    std::vector<double> rev(3 * n);
    for (int64_t i = 0; i < n; ++i) std::memcpy(&rev[3 * i], &p[3 * (n - 1 - i)], 3 * sizeof(double));
    ASSERT_EQ(qmmm_field_eval(f2, n, rev.data(), u3.data()), QMMM_SUCCESS);
    for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(u1[i], u2[i]) << i;
        ASSERT_EQ(u1[i], u3[n - 1 - i]) << i;
    }
    // A batch is evaluated in spatial order (64 points or more), a single point as it comes: the same bits.
    for (int64_t i = 0; i < 50; ++i) {
        double one = 0;
        ASSERT_EQ(qmmm_field_eval(f2, 1, &p[3 * i], &one), QMMM_SUCCESS);
        ASSERT_EQ(one, u2[i]) << i;
    }
    qmmm_field_destroy(f1);
    qmmm_field_destroy(f2);
}

// The lattice's cell volume (0.2 bohr spacing): points on a cell centre (region faces meet some) are valid.
constexpr double kDv = 0.008;

// A density on a lattice with charges of both signs, the region inside its cell cloud.
TEST(SplitSynthetic, SignedChargesInsideTheCloud) {
    const System s = lattice_system(36, 0.2, true, 3, 77);
    const double region[6] = {-2, -1.5, -1.8, 1.5, 2, 1.2};
    qmmm_field d = make_field(s, kDv, QMMM_METHOD_DIRECT, 0, nullptr);
    qmmm_field f = make_field(s, kDv, QMMM_METHOD_SPLIT, 1e-8, region);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    qmmm_field a = make_scale_field(s, kDv);
    const auto p = region_points(region, 3000, 9);
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), r(n), sc(n);
    ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
    const Worst w = worst_error(u, r, sc, p);
    std::printf("lattice density, signed charges, tolerance 1e-8: max normwise error %.2e\n", w.err);
    EXPECT_LE(w.err, 1e-8);
    for (auto h : {d, f, a}) qmmm_field_destroy(h);
}

// The grid's nodes on cell centres (CentresCase): within tolerance of the direct sum, in the region and on its centres.
TEST(SplitSynthetic, GridNodesOnCellCentres) {
    const CentresCase cc;
    qmmm_field d = make_field(cc.sys, cc.dv, QMMM_METHOD_DIRECT, 0, nullptr);
    qmmm_field f = make_field(cc.sys, cc.dv, QMMM_METHOD_SPLIT, cc.tol, cc.region);
    ASSERT_NE(f, nullptr) << qmmm_error_message();
    double h = 0;
    ASSERT_EQ(qmmm_field_split_params(f, nullptr, nullptr, &h, nullptr), QMMM_SUCCESS);
    ASSERT_EQ(h, cc.spacing);  // else the nodes miss the centres and this test tests nothing special
    qmmm_field a = make_scale_field(cc.sys, cc.dv);
    auto p = region_points(cc.region, 2000, 3);
    for (int64_t m = 0; m < cc.sys.n_cells(); m += 97) {  // centres in the region too
        const double *c = &cc.sys.cell_xyz[3 * m];
        bool in = true;
        for (int k = 0; k < 3; ++k) in = in && c[k] >= cc.region[k] && c[k] <= cc.region[3 + k];
        if (in) p.insert(p.end(), c, c + 3);
    }
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> u(n), r(n), sc(n);
    ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
    const Worst w = worst_error(u, r, sc, p);
    std::printf("grid nodes on cell centres, tolerance 1e-7: %lld points (%lld on centres), max normwise error %.2e\n",
                (long long)n, (long long)(n - 2000), w.err);
    EXPECT_GE(n - 2000, 20);
    EXPECT_LE(w.err, cc.tol);
    for (auto x : {d, f, a}) qmmm_field_destroy(x);
}

// No cells (nuclei only) and no nuclei (cells only).
TEST(SplitSynthetic, EmptyTerms) {
    const System s = lattice_system(30, 0.2, false, 4, 11);
    const double region[6] = {-1.5, -1.5, -1.5, 1.5, 1.5, 1.5};
    const auto p = region_points(region, 500, 1);
    const int64_t n = (int64_t)p.size() / 3;
    System cells = s, nuclei = s;
    cells.nuc_xyz.clear(), cells.nuc_z.clear(), nuclei.cell_xyz.clear(), nuclei.cell_q.clear();
    for (const System *sys : {&cells, &nuclei}) {
        qmmm_field d = make_field(*sys, kDv, QMMM_METHOD_DIRECT, 0, nullptr);
        qmmm_field f = make_field(*sys, kDv, QMMM_METHOD_SPLIT, 1e-8, region);
        ASSERT_NE(f, nullptr) << qmmm_error_message();
        qmmm_field a = make_scale_field(*sys, kDv);
        std::vector<double> u(n), r(n), sc(n);
        ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval(d, n, p.data(), r.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval(a, n, p.data(), sc.data()), QMMM_SUCCESS);
        EXPECT_LE(worst_error(u, r, sc, p).err, 1e-8) << (sys == &cells ? "cells only" : "nuclei only");
        for (auto h : {d, f, a}) qmmm_field_destroy(h);
    }
}

TEST(SplitOptions, BadOptionsAreRejectedWithTheirName) {
    System s = qmmm_test::random_system(500, 2, 5, 8.0);
    const double region[6] = {-1, -1, -1, 1, 1, 1};
    struct Case {
        const char *what;
        void (*set)(qmmm_options &, const double *);
        int status;
        const char *message;
    };
    const Case cases[] = {
        {"NaN tolerance", [](qmmm_options &o, const double *) { o.tolerance = std::nan(""); }, QMMM_ERR_INVALID_ARG, "opt->tolerance"},
        {"negative tolerance", [](qmmm_options &o, const double *) { o.tolerance = -1e-7; }, QMMM_ERR_INVALID_ARG, "opt->tolerance"},
        {"zero tolerance", [](qmmm_options &o, const double *) { o.tolerance = 0; }, QMMM_ERR_INVALID_ARG, "opt->tolerance"},
        {"negative zero tolerance", [](qmmm_options &o, const double *) { o.tolerance = -0.0; }, QMMM_ERR_INVALID_ARG,
         "opt->tolerance"},
        {"tolerance -1", [](qmmm_options &o, const double *) { o.tolerance = -1; }, QMMM_ERR_INVALID_ARG, "opt->tolerance"},
        {"infinite tolerance", [](qmmm_options &o, const double *) { o.tolerance = INFINITY; }, QMMM_ERR_INVALID_ARG, "opt->tolerance"},
        {"tolerance too small", [](qmmm_options &o, const double *) { o.tolerance = 1e-14; }, QMMM_ERR_INVALID_ARG, "opt->tolerance"},
        {"tolerance too large", [](qmmm_options &o, const double *) { o.tolerance = 0.1; }, QMMM_ERR_INVALID_ARG, "opt->tolerance"},
        {"no region", [](qmmm_options &o, const double *) { o.region = nullptr; }, QMMM_ERR_NULL_ARG, "opt->region"},
        {"single precision", [](qmmm_options &o, const double *) { o.precision = QMMM_PRECISION_SINGLE; }, QMMM_ERR_UNSUPPORTED,
         "double or mixed precision"},
        {"region with DIRECT", [](qmmm_options &o, const double *) { o.method = QMMM_METHOD_DIRECT; }, QMMM_ERR_INVALID_ARG,
         "opt->region"},
        {"unknown method", [](qmmm_options &o, const double *) { o.method = 7; }, QMMM_ERR_INVALID_ARG, "opt->method"},
    };
    for (const Case &c : cases) {
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.method = QMMM_METHOD_SPLIT, o.tolerance = 1e-7, o.region = region;
        c.set(o, region);
        qmmm_field f = nullptr;
        EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(), s.nuc_xyz.data(),
                                    s.nuc_z.data(), &o),
                  c.status)
            << c.what;
        EXPECT_EQ(f, nullptr) << c.what;
        EXPECT_NE(std::string(qmmm_error_message()).find(c.message), std::string::npos) << c.what << ": " << qmmm_error_message();
    }
    // Bad regions: NaN, Inf, empty along an axis.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double bad[3][6] = {{-1, nan, -1, 1, 1, 1}, {-1, -1, -1, 1, INFINITY, 1}, {-1, -1, 1, 1, 1, 1}};
    const int status[3] = {QMMM_ERR_NONFINITE, QMMM_ERR_NONFINITE, QMMM_ERR_INVALID_ARG};
    for (int i = 0; i < 3; ++i) {
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.method = QMMM_METHOD_SPLIT, o.region = bad[i];
        qmmm_field f = nullptr;
        EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), 0, nullptr, nullptr, &o), status[i]);
        EXPECT_NE(std::string(qmmm_error_message()).find("opt->region"), std::string::npos) << qmmm_error_message();
    }
    // qmmm_options_default's tolerance is the documented 1e-7: the split built with it estimates at most that.
    qmmm_options def;
    ASSERT_EQ(qmmm_options_default(&def), QMMM_SUCCESS);
    EXPECT_EQ(def.tolerance, 1e-7);
    def.backend = QMMM_BACKEND_CPU, def.method = QMMM_METHOD_SPLIT, def.region = region;
    qmmm_field f = nullptr;
    ASSERT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(), s.nuc_xyz.data(),
                                s.nuc_z.data(), &def),
              QMMM_SUCCESS)
        << qmmm_error_message();
    double est = 0;
    ASSERT_EQ(qmmm_field_split_params(f, nullptr, nullptr, nullptr, &est), QMMM_SUCCESS);
    EXPECT_LE(est, 1e-7);
    EXPECT_GT(est, 0.0);
    qmmm_field_destroy(f);
    // DIRECT does not use the tolerance: 0 (a zeroed struct, older callers) and the default give the same field,
    // bitwise; a non-finite or negative one is refused for every method.
    {
        std::vector<double> p = qmmm_split_test::region_points(region, 64, 5), u0(64), u1(64);
        qmmm_field d0 = make_field(s, 0.0, QMMM_METHOD_DIRECT, 0.0, nullptr);
        qmmm_field d1 = make_field(s, 0.0, QMMM_METHOD_DIRECT, 1e-7, nullptr);
        ASSERT_NE(d0, nullptr) << qmmm_error_message();
        ASSERT_NE(d1, nullptr) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval(d0, 64, p.data(), u0.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval(d1, 64, p.data(), u1.data()), QMMM_SUCCESS);
        for (int i = 0; i < 64; ++i) EXPECT_EQ(u0[i], u1[i]) << i;
        qmmm_field_destroy(d0), qmmm_field_destroy(d1);
        EXPECT_EQ(make_field(s, 0.0, QMMM_METHOD_DIRECT, std::nan(""), nullptr), nullptr);
        EXPECT_NE(std::string(qmmm_error_message()).find("opt->tolerance"), std::string::npos) << qmmm_error_message();
    }
    // The split's reports on a DIRECT field, and on no field.
    qmmm_field d = make_field(s, 0.0, QMMM_METHOD_DIRECT, 0, nullptr);
    EXPECT_EQ(qmmm_field_split_params(d, nullptr, nullptr, nullptr, nullptr), QMMM_ERR_UNSUPPORTED);
    EXPECT_EQ(qmmm_field_split_stats(d, nullptr, nullptr, nullptr, nullptr), QMMM_ERR_UNSUPPORTED);
    EXPECT_EQ(qmmm_field_split_stats(nullptr, nullptr, nullptr, nullptr, nullptr), QMMM_ERR_BAD_HANDLE);
    qmmm_field_destroy(d);
}

TEST(SplitOptions, RegionAround) {
    const double xyz[6] = {1, 2, 3, -1, 5, 0};
    double r[6];
    ASSERT_EQ(qmmm_region_around(2, xyz, 0.5, r), QMMM_SUCCESS);
    const double want[6] = {-1.5, 1.5, -0.5, 1.5, 5.5, 3.5};
    for (int k = 0; k < 6; ++k) EXPECT_EQ(r[k], want[k]) << k;
    EXPECT_EQ(qmmm_region_around(0, xyz, 0.5, r), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_region_around(2, nullptr, 0.5, r), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_region_around(2, xyz, -1.0, r), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_region_around(2, xyz, std::nan(""), r), QMMM_ERR_INVALID_ARG);
    const double bad[3] = {0, std::nan(""), 0};
    EXPECT_EQ(qmmm_region_around(1, bad, 1.0, r), QMMM_ERR_NONFINITE);
}

// A region far larger than the tolerance allows is refused with the numbers, not attempted.
TEST(SplitOptions, HugeRegionIsRefused) {
    System s = qmmm_test::random_system(100, 1, 5, 8.0);
    const double region[6] = {-500, -500, -500, 500, 500, 500};
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CPU, o.method = QMMM_METHOD_SPLIT, o.tolerance = 1e-7, o.region = region;
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), 0, nullptr, nullptr, &o),
              QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("grid"), std::string::npos) << qmmm_error_message();
}

}  // namespace
