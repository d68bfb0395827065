// test_field_cpu_simd.cpp -- the CPU field's kernels for each instruction set (QMMM_CPU_ISA=generic|avx2|avx512):
// accuracy against the long-double reference and closed forms, the singular and near-cell rules, points that
// leave the SIMD kernels' range, determinism, the run-time choice, and a clean AVX state after every call.
// An instruction set this CPU lacks is skipped with the reason.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "field_reference.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"

using qmmm_test::System;

namespace {

// The README's claims, normwise (|u - ref| / (sum |q|/r + sum Z/r)); MIXED's mean error per point in hartree.
constexpr double kDouble = 5e-15, kSingle = 2e-6, kMixed = 1e-8, kMixedMean = 3e-10;

bool cpu_runs(const std::string &isa) {
    if (isa == "avx512") return __builtin_cpu_supports("avx512f");
    if (isa == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return true;
}

// Creates a CPU field with QMMM_CPU_ISA=isa (read at creation), restoring the variable afterwards.
struct Field {
    qmmm_field f = nullptr;
    int status = -1;
    Field(const std::string &isa, const System &s, int precision, int threads = 0, double cell_volume = 0) {
        const char *old = std::getenv("QMMM_CPU_ISA");
        const std::string saved = old ? old : "";
        setenv("QMMM_CPU_ISA", isa.c_str(), 1);
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.precision = precision, o.n_threads = threads, o.cell_volume = cell_volume;
        status = qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(),
                                   s.nuc_xyz.data(), s.nuc_z.data(), &o);
        if (old) setenv("QMMM_CPU_ISA", saved.c_str(), 1);
        else unsetenv("QMMM_CPU_ISA");
    }
    ~Field() { qmmm_field_destroy(f); }
    std::vector<double> eval(const std::vector<double> &pts) const {
        std::vector<double> u(pts.size() / 3, -1.0);
        EXPECT_EQ(qmmm_field_eval(f, (int64_t)u.size(), pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
        return u;
    }
};

double normwise(const System &s, const double *p, double u, double dv = 0) {
    double scale = 0;
    const double ref = qmmm_test::reference_u(s, p, dv, &scale);
    return std::fabs(u - ref) / scale;
}

const char *kPrecisionName[] = {"double", "single", "mixed"};

// Points of every kind the kernels route differently: random ones, some within 0.45 bohr of a cell (MIXED's
// near cells), two on cell centres (the singular rule; cell_volume must be set), one 1e-12 bohr off a centre.
std::vector<double> mixed_bag(const System &s, int n_random, uint64_t seed) {
    auto pts = qmmm_test::random_points(n_random, seed);
    std::mt19937_64 rng(seed + 1);
    std::uniform_real_distribution<double> r(-0.26, 0.26);
    for (int p = 0; p < 24; ++p)
        for (int k = 0; k < 3; ++k) pts.push_back(s.cell_xyz[3 * (101 * p + 7) + k] + (p % 6 == 0 ? 1e-3 : r(rng)));
    for (int k = 0; k < 3; ++k) pts.push_back(s.cell_xyz[3 * 5 + k]);
    for (int k = 0; k < 3; ++k) pts.push_back(s.cell_xyz[3 * 3001 + k] + (k == 2 ? 1e-12 : 0.0));
    for (int k = 0; k < 3; ++k) pts.push_back(s.cell_xyz[3 * 4000 + k]);
    return pts;
}

class FieldCpuIsa : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (!cpu_runs(GetParam())) QMMM_SKIP("this CPU does not run " + GetParam());
    }
};

}  // namespace

// All three precisions at their claims, on every kind of point, with cells near and on the points.
TEST_P(FieldCpuIsa, EveryPrecisionWithinClaims) {
    const System s = qmmm_test::random_system(30011, 9, 31);
    const double dv = 0.02;
    const auto pts = mixed_bag(s, 64, 32);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field f(GetParam(), s, prec, 2, dv);
        ASSERT_EQ(f.status, QMMM_SUCCESS) << qmmm_error_message();
        const auto u = f.eval(pts);
        double worst = 0;
        for (size_t p = 0; p < u.size(); ++p) {
            ASSERT_TRUE(std::isfinite(u[p])) << "point " << p;
            const double e = normwise(s, &pts[3 * p], u[p], dv);
            worst = std::max(worst, e);
            if (prec == QMMM_PRECISION_DOUBLE) EXPECT_LT(e, kDouble) << "point " << p;
            if (prec == QMMM_PRECISION_MIXED) EXPECT_LT(e, kMixed) << "point " << p;
            // SINGLE rounds the coordinates to float: near a cell that alone exceeds 2e-6 (field_claims.hpp);
            // the random points are checked at the claim, the others against the generic kernels below.
            if (prec == QMMM_PRECISION_SINGLE && p < 64) EXPECT_LT(e, kSingle) << "point " << p;
        }
        std::printf("%s %s: max normwise error %.3e over %zu points\n", GetParam().c_str(), kPrecisionName[prec], worst,
                    u.size());
    }
}

// SINGLE on the same float data as the generic kernels (correctly rounded 1/sqrtf): only the 1/r arithmetic
// differs, so the two agree to float rounding wherever the point is, near cells included.
TEST_P(FieldCpuIsa, SingleAgreesWithGenericKernelsNearCells) {
    const System s = qmmm_test::random_system(30011, 9, 31);
    const auto pts = mixed_bag(s, 64, 33);
    const double dv = 0.02;
    const auto a = Field(GetParam(), s, QMMM_PRECISION_SINGLE, 2, dv).eval(pts);
    const auto g = Field("generic", s, QMMM_PRECISION_SINGLE, 2, dv).eval(pts);
    double worst = 0;
    for (size_t p = 0; p < a.size(); ++p) {
        double scale = 0;
        qmmm_test::reference_u(s, &pts[3 * p], dv, &scale);
        worst = std::max(worst, std::fabs(a[p] - g[p]) / scale);
    }
    std::printf("%s single vs generic: max normwise difference %.3e\n", GetParam().c_str(), worst);
    EXPECT_LT(worst, 1e-6);
}

// One unit charge seen from 1e-9 to 1e6 bohr (the seed and its Newton polynomial over 30 binades of d2):
// DOUBLE to a few ulp, SINGLE to float rounding, MIXED in double below 0.5 bohr and to float rounding beyond.
TEST_P(FieldCpuIsa, OneChargeAtEveryDistance) {
    System s;
    s.cell_xyz = {0, 0, 0};
    s.cell_q = {1.0};
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field f(GetParam(), s, prec, 1);
        std::vector<double> pts;
        for (int k = -9; k <= 6; ++k)
            for (double m : {1.0, 1.37, 2.9, 5.55, 8.01}) {
                const double r = m * std::pow(10.0, k);
                pts.insert(pts.end(), {0.6 * r, -0.48 * r, 0.64 * r});  // |(0.6, -0.48, 0.64)| = 1
            }
        const auto u = f.eval(pts);
        for (size_t p = 0; p < u.size(); ++p) {
            const double r = std::sqrt(pts[3 * p] * pts[3 * p] + pts[3 * p + 1] * pts[3 * p + 1] + pts[3 * p + 2] * pts[3 * p + 2]);
            const double rel = std::fabs(u[p] * r - 1.0);
            const double bound = prec == QMMM_PRECISION_DOUBLE ? 1e-15
                                 : prec == QMMM_PRECISION_MIXED && r < 0.5 ? 1e-15
                                                                           : 4e-7;
            EXPECT_LT(rel, bound) << kPrecisionName[prec] << ", r = " << r;
        }
    }
}

// MIXED's errors average out over many points (a VMC energy adds ~10^6 values): water 1's electrons in water 2's
// density, 8192 points, against DOUBLE of the same instruction set.
TEST_P(FieldCpuIsa, MixedErrorsAverageOutOnWaterDimer) {
    double dv = 0;
    const System s = qmmm_test::water2_environment(QMMM_SOURCE_DIR, &dv);
    ASSERT_GT(s.n_cells(), 0) << qmmm_error_message();
    const auto pts = qmmm_test::water1_electron_points(8192, 11);
    const auto ref = Field(GetParam(), s, QMMM_PRECISION_DOUBLE, 0, dv).eval(pts);
    const auto mixed = Field(GetParam(), s, QMMM_PRECISION_MIXED, 0, dv).eval(pts);
    const double b = qmmm_test::mean_error(mixed, ref);
    std::printf("%s mixed, mean error vs double over 8192 points: %.3e hartree\n", GetParam().c_str(), b);
    EXPECT_LT(std::fabs(b), kMixedMean);
    // Every value within the claim (the core cells in double: FieldCpu.MixedErrorsAverageOutOnWaterDimer).
    const double e = qmmm_test::max_normwise_error(s, pts, mixed, ref, dv, 2048);
    std::printf("%s mixed, max normwise error over 2048 points: %.3e\n", GetParam().c_str(), e);
    EXPECT_LT(e, kMixed);
}

// MIXED on a uniform lattice with every instruction set (test_field_cpu's MixedWithinClaimOnUniformLattice runs the
// default one; valgrind's CPU has no AVX-512, which is how d = a + b rounded to float, 1.03e-8 with rsqrtps, was
// found): rounding repeated along the lattice's planes adds up instead of averaging out.
TEST_P(FieldCpuIsa, MixedWithinClaimOnUniformLattice) {
    const double h = 0.175, dv = h * h * h;
    const System s = qmmm_test::lattice_system(48, 40, 36, h, 5);
    auto pts = qmmm_test::random_points(600, 6, 12.0);
    for (int64_t m : {int64_t{0}, s.n_cells() / 3, s.n_cells() - 1}) {
        pts.insert(pts.end(), &s.cell_xyz[3 * m], &s.cell_xyz[3 * m] + 3);
        pts.insert(pts.end(), {s.cell_xyz[3 * m] + 1e-3, s.cell_xyz[3 * m + 1], s.cell_xyz[3 * m + 2] - 1e-3});
    }
    const auto u = Field(GetParam(), s, QMMM_PRECISION_MIXED, 0, dv).eval(pts);
    double worst = 0;
    for (size_t p = 0; p < u.size(); ++p) worst = std::max(worst, normwise(s, &pts[3 * p], u[p], dv));
    std::printf("%s mixed, uniform lattice M = %lld, %zu points: max normwise %.3e\n", GetParam().c_str(),
                (long long)s.n_cells(), u.size(), worst);
    EXPECT_LT(worst, kMixed);
}

// A point's bits depend on the point only: the same alone, in any batch (points share the kernels' cell loads in
// groups), for 1 or 2 threads, and when repeated; special points (on a centre, near cells, beyond the SIMD
// range) mixed into the batch.
TEST_P(FieldCpuIsa, BitwiseIndependentOfBatchAndThreads) {
    const System s = qmmm_test::random_system(30011, 9, 77);
    auto pts = mixed_bag(s, 37, 78);
    pts.insert(pts.end(), {3e17, -1.0, 2.0, 0.5, 1e18, 0.5});  // beyond kSimdRange: the generic kernels
    const double dv = 0.02;
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field f1(GetParam(), s, prec, 1, dv), f2(GetParam(), s, prec, 2, dv);
        const auto a = f1.eval(pts), b = f1.eval(pts), c = f2.eval(pts);
        EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << "repeat, " << kPrecisionName[prec];
        EXPECT_EQ(std::memcmp(a.data(), c.data(), a.size() * sizeof(double)), 0) << "threads, " << kPrecisionName[prec];
        // Reversed order: every point lands in another group and another tile.
        std::vector<double> rev;
        for (size_t p = a.size(); p-- > 0;) rev.insert(rev.end(), {pts[3 * p], pts[3 * p + 1], pts[3 * p + 2]});
        const auto r = f1.eval(rev);
        for (size_t p = 0; p < a.size(); ++p) {
            EXPECT_EQ(std::memcmp(&r[a.size() - 1 - p], &a[p], sizeof(double)), 0) << "reversed, point " << p;
            if (p % 5 == 0 || p + 8 >= a.size()) {
                const auto one = f2.eval({pts[3 * p], pts[3 * p + 1], pts[3 * p + 2]});
                EXPECT_EQ(std::memcmp(&one[0], &a[p], sizeof(double)), 0) << "alone, point " << p << ", "
                                                                          << kPrecisionName[prec];
            }
        }
    }
}

// Small fields (at most 1,024 cells, the lean kernels): a batch is summed with its points in vector lanes, a lone
// point or a short tail with the cells in lanes; both orders give the same bits, for cell counts of every residue
// modulo 8, blocks with a point on a cell or beyond the SIMD range, and tails of 1-7 points. Each value is also
// within the precision's claim of the long-double sum.
TEST_P(FieldCpuIsa, SmallFieldBatchesAndLonePointsAgreeBitwise) {
    for (int64_t m : {1, 7, 10, 17, 40, 100, 1000}) {
        const System s = qmmm_test::random_system(m, 2, 100 + m);
        auto pts = qmmm_test::random_points(45, 7 + m);
        pts.insert(pts.end(), {s.cell_xyz[0], s.cell_xyz[1], s.cell_xyz[2]});  // on a cell: the singular rule
        pts.insert(pts.end(), {3e17, 1.0, 2.0});                                  // beyond kSimdRange
        pts.insert(pts.end(), {1.0, -2.0, 0.5, 0.25, 0.5, -4.0});
        for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE}) {
            Field f(GetParam(), s, prec, 1, 0.02);
            ASSERT_EQ(f.status, QMMM_SUCCESS) << qmmm_error_message();
            const auto all = f.eval(pts);
            const size_t n = all.size();
            for (size_t p = 0; p < n; ++p) {
                const auto one = f.eval({pts.begin() + 3 * p, pts.begin() + 3 * p + 3});
                EXPECT_EQ(std::memcmp(&one[0], &all[p], sizeof(double)), 0)
                    << m << " cells, " << kPrecisionName[prec] << ", point " << p << " alone";
                if (p + 3 <= n && p % 3 == 1) {  // a tail of three points starting here
                    const auto three = f.eval({pts.begin() + 3 * p, pts.begin() + 3 * p + 9});
                    EXPECT_EQ(std::memcmp(three.data(), &all[p], 3 * sizeof(double)), 0)
                        << m << " cells, " << kPrecisionName[prec] << ", points " << p << "-" << p + 2;
                }
                if (p == 46) continue;  // 3e17 bohr: FarPointsAndFarCells holds those
                EXPECT_LT(normwise(s, &pts[3 * p], all[p], 0.02), prec == QMMM_PRECISION_DOUBLE ? kDouble : kSingle)
                    << m << " cells, " << kPrecisionName[prec] << ", point " << p;
            }
        }
    }
}

// Points beyond the SIMD kernels' range (1e17 bohr) and a field with a cell beyond it take the generic kernels:
// finite, DOUBLE and SINGLE at their claims (SINGLE's and MIXED's float d2 reaches 1.8e19 bohr). MIXED seen from
// 1e17 bohr has every cell at the same distance, so its float terms' rounding errors are one error repeated, not
// averaged: float precision (4e-7) there. A MIXED field with a cell 3e17 bohr out is not tested: that cell's
// chunk has its origin 1.5e17 bohr from the other cells, beyond what hi + lo floats resolve. The last point sits
// on the padding cells (zero charges at 1e15 bohr): they add nothing there either.
TEST_P(FieldCpuIsa, FarPointsAndFarCells) {
    System s = qmmm_test::random_system(2000, 3, 5);
    const std::vector<double> pts = {2e17, 1.0, -1.0, 0.0, -1e18, 3.0, 1.0, 2.0, 3.0, 1e15, 1e15, 1e15};
    for (int far_cell : {0, 1}) {
        if (far_cell) s.cell_xyz[3 * 17] = 3e17;
        for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
            if (far_cell && prec == QMMM_PRECISION_MIXED) continue;
            Field f(GetParam(), s, prec, 1, 0.02);
            const auto u = f.eval(pts);
            for (size_t p = 0; p < u.size(); ++p) {
                ASSERT_TRUE(std::isfinite(u[p])) << kPrecisionName[prec] << ", point " << p;
                const bool far = p != 2;
                const double bound = prec == QMMM_PRECISION_DOUBLE ? kDouble
                                     : prec == QMMM_PRECISION_MIXED ? (far ? 4e-7 : kMixed)
                                                                    : kSingle;
                EXPECT_LT(normwise(s, &pts[3 * p], u[p]), bound) << kPrecisionName[prec] << ", point " << p
                                                                 << (far_cell ? ", far cell" : "");
            }
        }
    }
}

// A point on a cell centre takes q C / h for that cell (C = 6 ln((1 + sqrt 3)/sqrt 2) - pi/2), whichever
// kernels see it; the cell's chunk is full of other cells, so the careful pass runs beside the fast one.
TEST_P(FieldCpuIsa, PointOnCellCentreInAFullChunk) {
    System s = qmmm_test::random_system(3000, 0, 9);
    const double dv = 0.125, C = 6 * std::log((1 + std::sqrt(3.0)) / std::sqrt(2.0)) - M_PI / 2;
    const double *c = &s.cell_xyz[3 * 1234];
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field f(GetParam(), s, prec, 1, dv);
        const auto u = f.eval({c[0], c[1], c[2], c[0] + 3e-11, c[1], c[2]});
        System rest = s;  // the other cells, summed by the reference
        rest.cell_xyz.erase(rest.cell_xyz.begin() + 3 * 1234, rest.cell_xyz.begin() + 3 * 1235);
        rest.cell_q.erase(rest.cell_q.begin() + 1234);
        const double self = s.cell_q[1234] * C / 0.5;
        const double bound = prec == QMMM_PRECISION_DOUBLE ? kDouble : prec == QMMM_PRECISION_MIXED ? kMixed : kSingle;
        for (int k = 0; k < 2; ++k) {
            const double p[3] = {c[0] + (k ? 3e-11 : 0.0), c[1], c[2]};
            double scale = 0;
            const double others = qmmm_test::reference_u(rest, p, 0, &scale);
            EXPECT_NEAR(u[k], others + self, bound * (scale + std::fabs(self))) << kPrecisionName[prec] << ", point " << k;
        }
    }
}

// Without cell_volume a point on a centre is QMMM_ERR_SINGULAR on every path (the NaN self term reaches the sum).
TEST_P(FieldCpuIsa, PointOnCentreWithoutVolumeIsSingular) {
    System s = qmmm_test::random_system(3000, 0, 9);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        Field f(GetParam(), s, prec, 1);
        double u[2] = {0, 0};
        const double p[6] = {1.0, 2.0, 3.0, s.cell_xyz[3 * 99], s.cell_xyz[3 * 99 + 1], s.cell_xyz[3 * 99 + 2]};
        EXPECT_EQ(qmmm_field_eval(f.f, 2, p, u), QMMM_ERR_SINGULAR) << kPrecisionName[prec];
    }
}

// The vector unit is left clean for the caller: after qmmm_field_eval the upper halves of ymm0..15 / zmm0..15 are
// in their initial state (XINUSE bits 2 and 6), on the calling thread and on the OpenMP workers that ran kernels
// (a dirty state made the Fortran driver's SSE code 4.5x slower).
namespace {
bool xinuse_readable() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(0xd, 1, &a, &b, &c, &d) && (a & 4u);
}
unsigned long long xinuse() {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return (static_cast<unsigned long long>(hi) << 32) | lo;
}
constexpr unsigned long long kUpper = (1ull << 2) | (1ull << 6);
// Plain asm (no target attribute: the compiler would put a vzeroupper at the return of an AVX function).
void dirty_upper() { __asm__ volatile("vpcmpeqd %%ymm1, %%ymm1, %%ymm1" ::: "xmm1"); }
}  // namespace

TEST_P(FieldCpuIsa, AvxUpperStateCleanAfterEval) {
    if (!__builtin_cpu_supports("avx") || !xinuse_readable()) QMMM_SKIP("XGETBV(1) (XINUSE) is not available here");
    dirty_upper();
    if (!(xinuse() & kUpper)) QMMM_SKIP("XINUSE does not report the AVX upper state on this CPU");
    __asm__ volatile("vzeroupper");
    if (xinuse() & kUpper) QMMM_SKIP("XINUSE keeps the AVX upper state after vzeroupper on this CPU");
    const System s = qmmm_test::random_system(5000, 3, 1);
    const auto pts = qmmm_test::random_points(16, 2);
    std::vector<double> u(16);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        for (int threads : {1, 2}) {
            Field f(GetParam(), s, prec, threads);
            ASSERT_EQ(qmmm_field_eval(f.f, 16, pts.data(), u.data()), QMMM_SUCCESS);
            const unsigned long long caller = xinuse();
            EXPECT_EQ(caller & kUpper, 0u) << kPrecisionName[prec] << ", " << threads << " threads: XINUSE " << caller;
            unsigned long long workers = 0;
#pragma omp parallel num_threads(threads) reduction(| : workers)
            workers |= xinuse();
            EXPECT_EQ(workers & kUpper, 0u) << kPrecisionName[prec] << ", " << threads << " threads, workers";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, FieldCpuIsa, ::testing::Values("generic", "avx2", "avx512"),
                         [](const auto &info) { return info.param; });

// QMMM_CPU_ISA: unknown values are INVALID_ARG, a set this CPU lacks is UNSUPPORTED (never silently another),
// auto and unset take the widest.
TEST(FieldCpuIsaChoice, EnvironmentVariable) {
    const System s = qmmm_test::random_system(100, 1, 1);
    {
        Field f("sse9", s, QMMM_PRECISION_DOUBLE);
        EXPECT_EQ(f.status, QMMM_ERR_INVALID_ARG);
        EXPECT_NE(std::strstr(qmmm_error_message(), "QMMM_CPU_ISA"), nullptr) << qmmm_error_message();
    }
    for (const char *isa : {"avx512", "AVX2", "generic", "auto"}) {
        std::string lower(isa);
        for (auto &ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        Field f(isa, s, QMMM_PRECISION_MIXED);
        if (cpu_runs(lower)) {
            EXPECT_EQ(f.status, QMMM_SUCCESS) << isa << ": " << qmmm_error_message();
        } else {
            EXPECT_EQ(f.status, QMMM_ERR_UNSUPPORTED) << isa;
            EXPECT_NE(std::strstr(qmmm_error_message(), "QMMM_CPU_ISA"), nullptr) << qmmm_error_message();
        }
    }
}

// QMMM_CPU_ISA is checked by every CPU field, whatever kernels it ends up with: density cells, unscreened point
// charges, and screened charges alone (which run no kernel set of their own and were created with any value).
TEST(FieldCpuIsaChoice, EveryCpuFieldChecksTheVariable) {
    const char *old = std::getenv("QMMM_CPU_ISA");
    const std::string saved = old ? old : "";
    const double xyz[6] = {0, 0, 0, 1.5, 0, 0}, q[2] = {0.4, -0.6}, sigma[2] = {0.5, 0.8}, z[1] = {1};
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CPU;
    // creates the four kinds of field with the variable at `isa`; their statuses
    auto statuses = [&](const char *isa) {
        setenv("QMMM_CPU_ISA", isa, 1);
        std::vector<int> st;
        qmmm_field f = nullptr;
        st.push_back(qmmm_field_create(&f, 2, xyz, q, 1, xyz, z, &o));
        qmmm_field_destroy(f);
        st.push_back(qmmm_field_create_charges(&f, 2, xyz, xyz + 1, xyz + 2, 3, q, QMMM_SCREEN_NONE, nullptr, nullptr,
                                               0, nullptr, nullptr, &o));
        qmmm_field_destroy(f);
        st.push_back(qmmm_field_create_charges(&f, 2, xyz, xyz + 1, xyz + 2, 3, q, QMMM_SCREEN_GAUSSIAN, sigma,
                                               nullptr, 0, nullptr, nullptr, &o));
        qmmm_field_destroy(f);
        st.push_back(qmmm_field_create_charges(&f, 2, xyz, xyz + 1, xyz + 2, 3, q, QMMM_SCREEN_GAUSSIAN, sigma,
                                               nullptr, 1, xyz + 3, z, &o));
        qmmm_field_destroy(f);
        return st;
    };
    const char *what[4] = {"cells", "unscreened charges", "screened charges alone", "screened charges and a nucleus"};
    const std::vector<int> bad = statuses("sse9");
    for (int k = 0; k < 4; ++k) EXPECT_EQ(bad[k], QMMM_ERR_INVALID_ARG) << what[k];
    const std::vector<int> good = statuses("generic");
    for (int k = 0; k < 4; ++k) EXPECT_EQ(good[k], QMMM_SUCCESS) << what[k];
    if (!cpu_runs("avx512")) {
        const std::vector<int> lacking = statuses("avx512");
        for (int k = 0; k < 4; ++k) EXPECT_EQ(lacking[k], QMMM_ERR_UNSUPPORTED) << what[k];
    }
    if (old) setenv("QMMM_CPU_ISA", saved.c_str(), 1);
    else unsetenv("QMMM_CPU_ISA");
}

namespace {
// The widest kernel set by the kernel's own view of the CPU (/proc/cpuinfo), independent of the library.
std::string widest_from_cpuinfo() {
    std::FILE *fp = std::fopen("/proc/cpuinfo", "r");
    if (!fp) return "";
    char line[8192];
    std::string flags;
    while (std::fgets(line, sizeof line, fp))
        if (std::strncmp(line, "flags", 5) == 0) {
            flags = std::string(" ") + line + " ";
            break;
        }
    std::fclose(fp);
    for (auto &ch : flags)
        if (ch == '\t' || ch == '\n' || ch == ':') ch = ' ';
    auto has = [&](const char *f) { return flags.find(std::string(" ") + f + " ") != std::string::npos; };
    if (flags.empty()) return "";
    return has("avx512f") ? "avx512" : has("avx2") && has("fma") ? "avx2" : "generic";
}

int isa_code(const std::string &isa) {
    return isa == "avx512" ? QMMM_CPU_ISA_AVX512 : isa == "avx2" ? QMMM_CPU_ISA_AVX2 : QMMM_CPU_ISA_GENERIC;
}

int runtime_isa(qmmm_field f) {
    int isa = -99, running = -1;
    int64_t launches = -1;
    EXPECT_EQ(qmmm_field_runtime(f, &isa, &running, &launches), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(running, 0);  // no low-latency kernel on the CPU
    EXPECT_EQ(launches, 0);
    return isa;
}
}  // namespace

// qmmm_field_runtime names the kernels that ran: the set QMMM_CPU_ISA forces (the widest /proc/cpuinfo lists when
// unset), on the lean path (<= 1,024 cells) and the chunked one; and a SIMD set's values differ from the generic
// kernels' in some bits (they are not correctly rounded), so the report cannot be a label alone.
TEST(FieldCpuIsaChoice, RuntimeReportsTheKernelsThatRan) {
    const std::string widest = widest_from_cpuinfo();
    if (widest.empty()) QMMM_SKIP("no /proc/cpuinfo flags to compare with");
    const auto pts = qmmm_test::random_points(64, 9);
    for (int n_cells : {300, 5000}) {
        const System s = qmmm_test::random_system(n_cells, 2, 11);
        Field generic("generic", s, QMMM_PRECISION_DOUBLE);
        ASSERT_EQ(generic.status, QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_EQ(runtime_isa(generic.f), QMMM_CPU_ISA_GENERIC) << n_cells;
        const std::vector<double> ug = generic.eval(pts);
        {
            // unset: the widest
            const char *old = std::getenv("QMMM_CPU_ISA");
            const std::string saved = old ? old : "";
            unsetenv("QMMM_CPU_ISA");
            qmmm_options o;
            qmmm_options_default(&o);
            o.backend = QMMM_BACKEND_CPU;
            qmmm_field f = nullptr;
            ASSERT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(),
                                        s.nuc_xyz.data(), s.nuc_z.data(), &o),
                      QMMM_SUCCESS);
            EXPECT_EQ(runtime_isa(f), isa_code(widest)) << n_cells << " cells, /proc/cpuinfo: " << widest;
            qmmm_field_destroy(f);
            if (old) setenv("QMMM_CPU_ISA", saved.c_str(), 1);
        }
        for (const std::string isa : {"avx2", "avx512"}) {
            if (!cpu_runs(isa)) continue;
            Field f(isa, s, QMMM_PRECISION_DOUBLE);
            ASSERT_EQ(f.status, QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(runtime_isa(f.f), isa_code(isa)) << isa << ", " << n_cells << " cells";
            const std::vector<double> u = f.eval(pts);
            int differ = 0;
            for (size_t i = 0; i < u.size(); ++i) differ += u[i] != ug[i];
            EXPECT_GT(differ, 0) << isa << " gave the generic kernels' bits at all " << u.size() << " points";
        }
        // SINGLE's lean path has only the generic kernels
        if (n_cells <= 1024) {
            Field f(widest, s, QMMM_PRECISION_SINGLE);
            ASSERT_EQ(f.status, QMMM_SUCCESS);
            EXPECT_EQ(runtime_isa(f.f), QMMM_CPU_ISA_GENERIC);
        }
    }
    int isa = 0;
    EXPECT_EQ(qmmm_field_runtime(nullptr, &isa, nullptr, nullptr), QMMM_ERR_BAD_HANDLE);
}
