// test_field_cpu.cpp -- the CPU field against an independent long-double reference and closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "field_claims.hpp"
#include "field_reference.hpp"
#include "qmmm_accel.h"

using qmmm_test::System;

namespace {

struct Field {
    qmmm_field f = nullptr;
    Field(const System &s, int precision = QMMM_PRECISION_DOUBLE, int threads = 0, double cell_volume = 0) {
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.precision = precision, o.n_threads = threads, o.cell_volume = cell_volume;
        int st = qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(),
                                   s.nuc_xyz.data(), s.nuc_z.data(), &o);
        EXPECT_EQ(st, QMMM_SUCCESS) << qmmm_error_message();
    }
    ~Field() { qmmm_field_destroy(f); }
    std::vector<double> eval(const std::vector<double> &pts) const {
        std::vector<double> u(pts.size() / 3);
        EXPECT_EQ(qmmm_field_eval(f, (int64_t)u.size(), pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
        return u;
    }
};

// Largest |u - ref| / sum|terms| over the points; *outside counts the points beyond the precision's claim
// (field_claims.hpp), when given.
double max_rel_error(const System &s, const std::vector<double> &pts, const std::vector<double> &u, double dv = 0,
                     int precision = -1, int *outside = nullptr) {
    double worst = 0;
    if (outside) *outside = 0;
    for (size_t p = 0; p < u.size(); ++p) {
        double scale = 0, ref = qmmm_test::reference_u(s, &pts[3 * p], dv, &scale);
        const double e = std::fabs(u[p] - ref) / scale;
        worst = std::max(worst, e);
        if (outside && !qmmm_claims::within(precision, e, s, &pts[3 * p])) ++*outside;
    }
    return worst;
}

bool bitwise_equal(const std::vector<double> &a, const std::vector<double> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST(FieldCpu, CubeCornersSeenFromCentre) {
    // 8 cells of q at the corners of a cube of side 2a: U = 8 q / (a sqrt 3) at the centre.
    const double a = 1.5, q = 0.3;
    System s;
    for (int i = -1; i <= 1; i += 2)
        for (int j = -1; j <= 1; j += 2)
            for (int k = -1; k <= 1; k += 2) s.cell_xyz.insert(s.cell_xyz.end(), {a * i, a * j, a * k}), s.cell_q.push_back(q);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_SINGLE}) {
        Field f(s, prec);
        auto u = f.eval({0, 0, 0});
        const double exact = 8 * q / (a * std::sqrt(3.0));  // all terms positive: normwise = relative
        // MIXED's 1e-8 holds where the float terms' rounding averages out over many cells; 8 equal terms repeat
        // one rounding (float charge, product, 1/r), up to ~1e-7 (the generic kernels exceed 1e-8 in 333 of 400
        // variants of a and q): held to 2^-22 here.
        const double bound = prec == QMMM_PRECISION_MIXED ? 0x1p-22 : qmmm_claims::bound(prec);
        EXPECT_NEAR(u[0], exact, bound * exact) << "precision " << prec;
    }
}

TEST(FieldCpu, NuclearTermAlone) {
    // A proton and a Z=2 nucleus on the x axis, seen from the origin and from (0,3,4).
    System s;
    s.nuc_xyz = {2, 0, 0, -4, 0, 0};
    s.nuc_z = {1, 2};
    Field f(s);
    auto u = f.eval({0, 0, 0, 0, 3, 4});
    EXPECT_DOUBLE_EQ(u[0], -(1.0 / 2 + 2.0 / 4));
    EXPECT_NEAR(u[1], -(1.0 / std::sqrt(4.0 + 25.0) + 2.0 / std::sqrt(16.0 + 25.0)), 1e-15);
}

TEST(FieldCpu, NuclearTermOverThreadsMatchesReferenceAndOneThread) {
    // 2,048 points x 12 nuclei: enough pairs for the nuclear term to be spread over the threads
    // (add_nuclear_term); each point's sum must be the one-thread bits and the long-double reference.
    std::mt19937_64 rng(91);
    std::uniform_real_distribution<double> box(-6.0, 6.0);
    System s;
    for (int b = 0; b < 12; ++b) {
        for (int k = 0; k < 3; ++k) s.nuc_xyz.push_back(box(rng));
        s.nuc_z.push_back(1.0 + b % 8);
    }
    auto pts = qmmm_test::random_points(2048, 92, 12.0);
    Field one(s, QMMM_PRECISION_DOUBLE, 1), four(s, QMMM_PRECISION_DOUBLE, 4);
    const auto a = one.eval(pts), b = four.eval(pts);
    EXPECT_TRUE(bitwise_equal(a, b));
    EXPECT_LT(max_rel_error(s, pts, b), qmmm_claims::kDouble);
    // A point on a nucleus in the middle of the batch is reported by its index, with threads too.
    std::copy_n(&s.nuc_xyz[3 * 5], 3, &pts[3 * 1500]);
    std::vector<double> u(2048);
    EXPECT_EQ(qmmm_field_eval(four.f, 2048, pts.data(), u.data()), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "point 1500"), nullptr) << qmmm_error_message();
    EXPECT_NE(std::strstr(qmmm_error_message(), "nucleus 5"), nullptr) << qmmm_error_message();
}

TEST(FieldCpu, CellsAloneAndOneCell) {
    System s;
    s.cell_xyz = {1, 2, 3};
    s.cell_q = {0.5};
    Field f(s);
    auto u = f.eval({1, 2, 5});
    EXPECT_DOUBLE_EQ(u[0], 0.25);
}

TEST(FieldCpu, DoubleMatchesReferenceAcrossSizes) {
    for (int64_t m : {1, 7, 1023, 1024, 1025, 4097, 100003}) {
        auto s = qmmm_test::random_system(m, 11, 1000 + m);
        auto pts = qmmm_test::random_points(13, 7 + m);
        Field f(s);
        const double e = max_rel_error(s, pts, f.eval(pts));
        EXPECT_LT(e, qmmm_claims::kDouble) << "M = " << m;
        std::printf("M = %lld: double max normwise error %.3e\n", (long long)m, e);
    }
}

// Every precision at the claims with 10^6 cells, where sums are longest (SINGLE's float sums grow like sqrt(M)).
TEST(FieldCpu, LargeMillionCells) {
    auto s = qmmm_test::random_system(1000000, 30, 42);
    auto pts = qmmm_test::random_points(3, 43);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field f(s, prec);
        int outside = 0;
        const double e = max_rel_error(s, pts, f.eval(pts), 0, prec, &outside);
        EXPECT_EQ(outside, 0) << "precision " << prec << ": max normwise error " << e;
        std::printf("M = 1e6, precision %d: max normwise error %.3e\n", prec, e);
    }
}

// The claims (field_claims.hpp) on 200,001 cells: SINGLE 2e-6, MIXED 1e-8, normwise.
TEST(FieldCpu, SingleAndMixedWithinStatedBounds) {
    auto s = qmmm_test::random_system(200001, 20, 5);
    auto pts = qmmm_test::random_points(16, 6);
    Field fs(s, QMMM_PRECISION_SINGLE), fm(s, QMMM_PRECISION_MIXED);
    int out_s = 0, out_m = 0;
    const double es = max_rel_error(s, pts, fs.eval(pts), 0, QMMM_PRECISION_SINGLE, &out_s),
                 em = max_rel_error(s, pts, fm.eval(pts), 0, QMMM_PRECISION_MIXED, &out_m);
    EXPECT_EQ(out_s, 0) << "single: max normwise error " << es;
    EXPECT_EQ(out_m, 0) << "mixed: max normwise error " << em;
    EXPECT_LT(em, es) << "mixed precision should beat single";
    RecordProperty("single_rel_error", std::to_string(es));
    RecordProperty("mixed_rel_error", std::to_string(em));
    std::printf("relative error (of sum |terms|): single %.3e, mixed %.3e\n", es, em);
}

// MIXED on a small field (few chunks: the point's float offset error does not average out over chunks)
// and with points close to cells (0.001 to 0.45 bohr: the near field, summed in double).
TEST(FieldCpu, MixedWithin1e8SmallFieldAndNearCells) {
    auto s = qmmm_test::random_system(10000, 20, 5);
    auto pts = qmmm_test::random_points(400, 6);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> r(-0.26, 0.26);
    for (int p = 0; p < 100; ++p)  // a quarter of the points next to a cell
        for (int k = 0; k < 3; ++k) pts[3 * p + k] = s.cell_xyz[3 * (97 * p) + k] + (p % 10 == 0 ? 1e-3 : r(rng));
    Field fm(s, QMMM_PRECISION_MIXED);
    auto u = fm.eval(pts);
    double worst = 0, worst_pointwise = 0;
    for (size_t p = 0; p < u.size(); ++p) {
        double scale = 0, ref = qmmm_test::reference_u(s, &pts[3 * p], 0, &scale);
        worst = std::max(worst, std::fabs(u[p] - ref) / scale);
        worst_pointwise = std::max(worst_pointwise, std::fabs(u[p] - ref) / std::fabs(ref));
    }
    std::printf("M = 10000, 400 points: mixed max normwise %.3e, pointwise |u - ref| / |ref| %.3e\n", worst, worst_pointwise);
    EXPECT_LT(worst, qmmm_claims::kMixed);
}

// MIXED on a uniform lattice (a thresholded cube whose 32,532 cells all weigh alike, charges 1e-6..1e-2): rounding
// that repeats along the lattice's planes and rows adds up instead of averaging out, so this is MIXED's hardest field
// for the claim; points around the blob, on cell centres and 1e-3 bohr from them. (With d = a + b rounded to float:
// runs of 16 float terms reached 1.16e-8 here, runs of 8 8.6e-9 with AVX-512 and 1.03e-8 with AVX2; with d^2 as
// a (a + 2b) onto the chunk's mean b^2 (field_mixed_b2), 5.4e-9 and 5.2e-9. Every instruction set: FieldCpuIsa.MixedWithinClaimOnUniformLattice.)
TEST(FieldCpu, MixedWithinClaimOnUniformLattice) {
    const double h = 0.175, dv = h * h * h;
    const System s = qmmm_test::lattice_system(48, 40, 36, h, 5);
    auto pts = qmmm_test::random_points(600, 6, 12.0);
    for (int64_t m : {int64_t{0}, s.n_cells() / 3, s.n_cells() - 1}) {
        pts.insert(pts.end(), &s.cell_xyz[3 * m], &s.cell_xyz[3 * m] + 3);
        pts.insert(pts.end(), {s.cell_xyz[3 * m] + 1e-3, s.cell_xyz[3 * m + 1], s.cell_xyz[3 * m + 2] - 1e-3});
    }
    int outside = 0;
    const double worst = max_rel_error(s, pts, Field(s, QMMM_PRECISION_MIXED, 0, dv).eval(pts), dv, QMMM_PRECISION_MIXED,
                                       &outside);
    std::printf("uniform lattice M = %lld, %zu points: mixed max normwise %.3e\n", (long long)s.n_cells(), pts.size() / 3,
                worst);
    EXPECT_EQ(outside, 0) << "max normwise error " << worst;
}

// SINGLE near cells (1e-3 to 0.45 bohr): float coordinates move the point by ~1e-7 bohr, which the claim's
// coordinate part allows for (field_claims.hpp); everywhere else the 2e-6 alone.
TEST(FieldCpu, SingleNearCellsWithinCoordinateRounding) {
    auto s = qmmm_test::random_system(10000, 20, 5);
    auto pts = qmmm_test::random_points(200, 6);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> r(-0.26, 0.26);
    for (int p = 0; p < 100; ++p)
        for (int k = 0; k < 3; ++k) pts[3 * p + k] = s.cell_xyz[3 * (97 * p) + k] + (p % 10 == 0 ? 1e-3 : r(rng));
    auto u = Field(s, QMMM_PRECISION_SINGLE).eval(pts);
    double near = 0, far = 0;
    for (size_t p = 0; p < u.size(); ++p) {
        double scale = 0, ref = qmmm_test::reference_u(s, &pts[3 * p], 0, &scale);
        const double e = std::fabs(u[p] - ref) / scale;
        if (p < 100) near = std::max(near, e);
        else far = std::max(far, e);
        EXPECT_TRUE(qmmm_claims::within(QMMM_PRECISION_SINGLE, e, s, &pts[3 * p]))
            << "point " << p << ": normwise error " << e << ", coordinate part "
            << qmmm_claims::single_coordinate_part(s, &pts[3 * p]);
        if (p >= 100) EXPECT_LT(e, qmmm_claims::kSingle) << "point " << p << " (not placed near a cell)";
    }
    std::printf("M = 10000: single max normwise error %.3e near cells, %.3e elsewhere\n", near, far);
}

// MIXED errors must average out over many points, as a VMC energy sums U_ES at ~10^6 electron positions:
// water 1's electrons in water 2's density. Plainly rounded float charges left -6.7e-10 hartree per point. Every value
// within the claim as well.
TEST(FieldCpu, MixedErrorsAverageOutOnWaterDimer) {
    double dv = 0;
    const System s = qmmm_test::water2_environment(QMMM_SOURCE_DIR, &dv);
    ASSERT_GT(s.n_cells(), 0) << qmmm_error_message();
    const auto pts = qmmm_test::water1_electron_points(8192, 11);
    const auto ref = Field(s, QMMM_PRECISION_DOUBLE, 0, dv).eval(pts);
    const auto mixed = Field(s, QMMM_PRECISION_MIXED, 0, dv).eval(pts);
    const double b = qmmm_test::mean_error(mixed, ref);
    std::printf("CPU mixed, mean error vs double over 8192 points: %.3e hartree\n", b);
    EXPECT_LT(std::fabs(b), qmmm_claims::kMixedMeanPerPoint);
    // MIXED's 1e-8 claim on a real density: water 2's cube has a few core cells with most of sum q^2 (N_eff 298 of
    // 21,268), where the float terms' errors cannot average out; they are summed in double (field_take_heavy). Before
    // that, 1.4e-8 here.
    const double e = qmmm_test::max_normwise_error(s, pts, mixed, ref, dv, 2048);
    std::printf("CPU mixed, max normwise error over 2048 points: %.3e\n", e);
    EXPECT_LT(e, qmmm_claims::kMixed);
}

// A few large charges dominate sum q^2 (a real density's core cells): MIXED sums them in double with the nuclei, with
// the cells' singular rule -- every value within the claim against the long-double reference, a point on a large
// cell's centre included, and that point reported as singular when the cell volume is unknown.
TEST(FieldCpu, DominantCellsKeepMixedWithinTheClaim) {
    const System s = qmmm_test::dominated_system(6000, 17);
    const auto pts = qmmm_test::dominated_points(s, 18);
    const double *c = &s.cell_xyz[3 * (s.n_cells() - 33)];  // the large cell that pts ends on
    const double dv = 0.008;
    const auto u = Field(s, QMMM_PRECISION_MIXED, 0, dv).eval(pts);
    double worst = 0;
    for (size_t p = 0; p < u.size(); ++p) {
        double scale = 0;
        const double ref = qmmm_test::reference_u(s, &pts[3 * p], dv, &scale);
        worst = std::max(worst, std::fabs(u[p] - ref) / scale);
    }
    std::printf("dominant cells: CPU mixed max normwise error %.3e over %zu points\n", worst, u.size());
    EXPECT_LT(worst, qmmm_claims::kMixed);
    Field f(s, QMMM_PRECISION_MIXED);
    int64_t n_cells = 0, n_nuclei = 0;  // the cells as given, those summed in double included
    EXPECT_EQ(qmmm_field_sizes(f.f, &n_cells, &n_nuclei), QMMM_SUCCESS);
    EXPECT_EQ(n_cells, s.n_cells());
    EXPECT_EQ(n_nuclei, s.n_nuclei());
    double v = 0;
    EXPECT_EQ(qmmm_field_eval(f.f, 1, c, &v), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "density cell centre"), nullptr) << qmmm_error_message();
}

TEST(FieldCpu, BitwiseRepeatableAndIndependentOfThreadsAndBatch) {
    auto s = qmmm_test::random_system(30011, 9, 77);
    auto pts = qmmm_test::random_points(37, 78);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field f1(s, prec, 1), f2(s, prec, 2);
        auto a = f1.eval(pts), b = f1.eval(pts), c = f2.eval(pts);
        EXPECT_TRUE(bitwise_equal(a, b)) << "repeat, precision " << prec;
        EXPECT_TRUE(bitwise_equal(a, c)) << "threads, precision " << prec;
        // A point alone gives the same bits as in the batch, whatever its neighbours.
        for (size_t p = 0; p < a.size(); p += 9) {
            auto one = f2.eval({pts[3 * p], pts[3 * p + 1], pts[3 * p + 2]});
            EXPECT_EQ(std::memcmp(&one[0], &a[p], sizeof(double)), 0) << "point " << p << ", precision " << prec;
        }
    }
}

// Parallel calls share tiles with the helper pool (cpu_parallel.hpp). Six threads of the caller's call at once,
// each field with 8 threads: one call holds the pool, the others run alone, helpers join and leave calls that
// start and end in every order. Every value is the one-thread value, bit for bit, over 40 rounds.
TEST(FieldCpu, ConcurrentParallelCallsKeepTheirValues) {
    const System s = qmmm_test::random_system(20000, 4, 91);
    const auto pts = qmmm_test::random_points(96, 92);  // 96 x 20,000 pairs: 14 threads' worth
    const auto ref = Field(s, QMMM_PRECISION_DOUBLE, 1).eval(pts);
    std::vector<std::thread> callers;
    std::vector<int> bad(6, 0);
    for (int c = 0; c < 6; ++c)
        callers.emplace_back([&, c] {
            const Field f(s, QMMM_PRECISION_DOUBLE, 8);  // one thread at a time per handle (the header's rule)
            for (int round = 0; round < 40; ++round) {
                std::vector<double> u(pts.size() / 3, -1.0);
                if (qmmm_field_eval(f.f, (int64_t)u.size(), pts.data(), u.data()) != QMMM_SUCCESS ||
                    !bitwise_equal(u, ref))
                    ++bad[c];
            }
        });
    for (auto &t : callers) t.join();
    for (int c = 0; c < 6; ++c) EXPECT_EQ(bad[c], 0) << "caller " << c;
}

// SINGLE density fields 10^3..10^5 bohr from the origin (lean and chunked kernels) keep SINGLE's claim: they are
// summed around a local origin (field_local_origin.hpp). Without it the error grew to ~1e-3 at 1e5 bohr.
TEST(FieldCpu, SingleFarFromTheOriginKeepsItsClaim) {
    for (int64_t m : {500, 5000})
        for (double shift : {1e3, 1e4, 1e5}) {
            System s = qmmm_test::random_system(m, 3, 17);
            for (double &x : s.cell_xyz) x += shift;
            for (double &x : s.nuc_xyz) x += shift;
            auto pts = qmmm_test::random_points(40, 18);
            for (double &x : pts) x += shift;
            Field f(s, QMMM_PRECISION_SINGLE, 1);
            EXPECT_LT(max_rel_error(s, pts, f.eval(pts)), 2e-6) << m << " cells, moved by " << shift;
        }
}

TEST(FieldCpu, PointOnCellCentreUsesUniformCubeSelfPotential) {
    // Independent value of C = integral over the unit cube of 1/r from its centre:
    // 6 pyramids, each (1/8) * integral over [-1,1]^2 of du dv / sqrt(1+u^2+v^2), by Gauss-Legendre.
    const int n = 64;
    std::vector<double> x(n), w(n);
    for (int i = 0; i < n; ++i) {  // Golub-Welsch-free: Newton on Legendre P_n
        double z = std::cos(M_PI * (i + 0.75) / (n + 0.5)), pp = 0;
        for (int it = 0; it < 100; ++it) {
            double p1 = 1, p2 = 0;
            for (int j = 1; j <= n; ++j) {
                double p3 = p2;
                p2 = p1;
                p1 = ((2.0 * j - 1) * z * p2 - (j - 1.0) * p3) / j;
            }
            pp = n * (z * p1 - p2) / (z * z - 1);
            double z1 = z;
            z = z1 - p1 / pp;
            if (std::fabs(z - z1) < 1e-16) break;
        }
        x[i] = z, w[i] = 2 / ((1 - z * z) * pp * pp);
    }
    double i2 = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) i2 += w[i] * w[j] / std::sqrt(1 + x[i] * x[i] + x[j] * x[j]);
    const double C = 6 * std::log((1 + std::sqrt(3.0)) / std::sqrt(2.0)) - M_PI / 2;  // closed form
    EXPECT_NEAR(6 * i2 / 8, C, 1e-13);

    System s;
    s.cell_xyz = {0, 0, 0, 1, 0, 0};
    s.cell_q = {0.2, 0.1};
    const double dv = 0.125;  // h = 0.5 bohr
    Field f(s, QMMM_PRECISION_DOUBLE, 0, dv);
    auto u = f.eval({0, 0, 1e-12});  // within 1e-10 bohr of cell 0: its self-potential
    EXPECT_NEAR(u[0], 0.2 * C / 0.5 + 0.1 / 1.0, qmmm_claims::kDouble * (0.2 * C / 0.5 + 0.1));
    EXPECT_TRUE(std::isfinite(u[0]));
    for (int prec : {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field g(s, prec, 0, dv);
        auto v = g.eval({0, 0, 0});
        const double exact = 0.2 * C / 0.5 + 0.1;  // both terms positive: the normwise scale is the value
        EXPECT_NEAR(v[0], exact, qmmm_claims::bound(prec) * exact) << "precision " << prec;
    }
}

TEST(FieldCpu, PointOnCellCentreWithoutVolumeIsSingularError) {
    System s;
    s.cell_xyz = {0, 0, 0, 1, 0, 0};
    s.cell_q = {0.2, 0.1};
    Field f(s);
    double p[3] = {0, 0, 0}, u = 0;
    EXPECT_EQ(qmmm_field_eval(f.f, 1, p, &u), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "cell_volume"), nullptr) << qmmm_error_message();
}

TEST(FieldCpu, PointOnNucleusIsSingularError) {
    System s;
    s.nuc_xyz = {1, 1, 1};
    s.nuc_z = {6};
    Field f(s);
    double p[6] = {0, 0, 0, 1, 1, 1 + 1e-11}, u[2];
    EXPECT_EQ(qmmm_field_eval(f.f, 2, p, u), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "point 1"), nullptr) << qmmm_error_message();
    EXPECT_NE(std::strstr(qmmm_error_message(), "nucleus 0"), nullptr) << qmmm_error_message();
}

TEST(FieldCpu, AsyncOnCpuGivesSameValues) {
    auto s = qmmm_test::random_system(5000, 4, 3);
    auto pts = qmmm_test::random_points(10, 4);
    Field f(s);
    auto ref = f.eval(pts);
    std::vector<double> u(10, -1);
    ASSERT_EQ(qmmm_field_eval_async(f.f, 10, pts.data(), u.data()), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_eval_async(f.f, 10, pts.data(), u.data()), QMMM_ERR_BUSY);
    ASSERT_EQ(qmmm_field_wait(f.f), QMMM_SUCCESS);
    EXPECT_TRUE(bitwise_equal(ref, u));
    EXPECT_EQ(qmmm_field_wait(f.f), QMMM_SUCCESS) << "waiting with nothing pending is fine";
}

TEST(FieldCpu, ReportsBackendAndPrecision) {
    auto s = qmmm_test::random_system(10, 1, 1);
    Field f(s, QMMM_PRECISION_MIXED);
    int b = -1, p = -1, d = 0;
    ASSERT_EQ(qmmm_field_backend(f.f, &b, &p, &d), QMMM_SUCCESS);
    EXPECT_EQ(b, QMMM_BACKEND_CPU);
    EXPECT_EQ(p, QMMM_PRECISION_MIXED);
    EXPECT_EQ(d, -1);
    int64_t nc = 0, nn = 0;
    ASSERT_EQ(qmmm_field_sizes(f.f, &nc, &nn), QMMM_SUCCESS);
    EXPECT_EQ(nc, 10);
    EXPECT_EQ(nn, 1);
}

TEST(FieldCpu, AutoFallsBackToCpuWithoutGpuAndEnvOverrides) {
    int count = -1;
    ASSERT_EQ(qmmm_cuda_device_count(&count), QMMM_SUCCESS);
    auto s = qmmm_test::random_system(10, 1, 1);
    qmmm_field f = nullptr;
    unsetenv("QMMM_BACKEND");
    ASSERT_EQ(qmmm_field_create(&f, 10, s.cell_xyz.data(), s.cell_q.data(), 1, s.nuc_xyz.data(), s.nuc_z.data(),
                                nullptr), QMMM_SUCCESS);
    int b = -1;
    qmmm_field_backend(f, &b, nullptr, nullptr);
    EXPECT_EQ(b, count > 0 ? QMMM_BACKEND_CUDA : QMMM_BACKEND_CPU);
    qmmm_field_destroy(f);
    setenv("QMMM_BACKEND", "cpu", 1);
    ASSERT_EQ(qmmm_field_create(&f, 10, s.cell_xyz.data(), s.cell_q.data(), 1, s.nuc_xyz.data(), s.nuc_z.data(),
                                nullptr), QMMM_SUCCESS);
    qmmm_field_backend(f, &b, nullptr, nullptr);
    EXPECT_EQ(b, QMMM_BACKEND_CPU);
    qmmm_field_destroy(f);
    setenv("QMMM_BACKEND", "gpu-please", 1);
    EXPECT_EQ(qmmm_field_create(&f, 10, s.cell_xyz.data(), s.cell_q.data(), 1, s.nuc_xyz.data(), s.nuc_z.data(),
                                nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::strstr(qmmm_error_message(), "QMMM_BACKEND"), nullptr);
    unsetenv("QMMM_BACKEND");
}
