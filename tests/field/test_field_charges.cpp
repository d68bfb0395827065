// test_field_charges.cpp -- MM point charges (qmmm_field_create_charges) and the summing evaluation, against a
// long-double reference of the physical formulas: -q/d, -q (1 - a exp(-b d^2))/d, -q erf(d/sigma)/d, -Z/d.
// Built twice: test_field_charges (backend CPU) and test_field_charges_gpu (backend CUDA, QMMM_TEST_CUDA).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "field_claims.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

using qmmm_test::kBackend;

struct Charges {
    std::vector<double> x, y, z, q, a, b, nuc_xyz, nuc_z;
    int screening = QMMM_SCREEN_NONE;
};

// m charges in a 20-bohr box, a fraction of them screened (screened = every k-th; 0: none).
Charges make_charges(int64_t m, int screening, int every, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-10, 10), chg(-0.8, 0.8), amp(0.2, 1.0), ex(0.3, 2.0);
    Charges c;
    c.screening = screening;
    for (int64_t i = 0; i < m; ++i) {
        c.x.push_back(pos(g)), c.y.push_back(pos(g)), c.z.push_back(pos(g)), c.q.push_back(chg(g));
        const bool s = screening != QMMM_SCREEN_NONE && every > 0 && i % every == 0;
        c.a.push_back(s ? (screening == QMMM_SCREEN_EXP ? (i % (2 * every) == 0 ? 1.0 : amp(g)) : ex(g)) : 0.0);
        c.b.push_back(s ? ex(g) : 0.0);
    }
    c.nuc_xyz = {0.5, 0.2, -0.3, -1.4, 0.9, 0.4};
    c.nuc_z = {8, 1};
    return c;
}

// U(p) and sum_m |term_m| (the normwise scale), in long double.
void reference(const Charges &c, const double *p, long double *u, long double *scale) {
    long double s = 0, w = 0;
    for (size_t m = 0; m < c.q.size(); ++m) {
        const long double dx = (long double)p[0] - c.x[m], dy = (long double)p[1] - c.y[m],
                          dz = (long double)p[2] - c.z[m];
        const long double d = sqrtl(dx * dx + dy * dy + dz * dz), q = c.q[m];
        long double t;
        if (c.screening == QMMM_SCREEN_EXP && c.a[m] != 0 && c.b[m] != 0)
            t = d == 0 ? 0.0L : -q * ((1 - (long double)c.a[m]) - c.a[m] * expm1l(-c.b[m] * d * d)) / d;  // 1 - a e^-x
        else if (c.screening == QMMM_SCREEN_GAUSSIAN && c.a[m] != 0)
            t = d == 0 ? -q * 2 / (c.a[m] * sqrtl(3.14159265358979323846264338327950288L)) : -q * erfl(d / c.a[m]) / d;
        else
            t = -q / d;
        s += t, w += fabsl(t);
    }
    for (size_t b = 0; b < c.nuc_z.size(); ++b) {
        const long double dx = (long double)p[0] - c.nuc_xyz[3 * b], dy = (long double)p[1] - c.nuc_xyz[3 * b + 1],
                          dz = (long double)p[2] - c.nuc_xyz[3 * b + 2];
        const long double t = -c.nuc_z[b] / sqrtl(dx * dx + dy * dy + dz * dz);
        s += t, w += fabsl(t);
    }
    *u = s, *scale = w;
}

qmmm_field create(const Charges &c, int precision, int64_t stride_layout = 1, int n_threads = 0) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = precision, o.n_threads = n_threads;
    qmmm_field f = nullptr;
    const int64_t n = static_cast<int64_t>(c.q.size());
    int s;
    if (stride_layout == 3) {
        std::vector<double> xyz;
        for (int64_t m = 0; m < n; ++m) xyz.insert(xyz.end(), {c.x[m], c.y[m], c.z[m]});
        s = qmmm_field_create_charges(&f, n, xyz.data(), xyz.data() + 1, xyz.data() + 2, 3, c.q.data(), c.screening,
                                      c.a.data(), c.b.data(), static_cast<int64_t>(c.nuc_z.size()), c.nuc_xyz.data(),
                                      c.nuc_z.data(), &o);
    } else {
        s = qmmm_field_create_charges(&f, n, c.x.data(), c.y.data(), c.z.data(), 1, c.q.data(), c.screening,
                                      c.a.data(), c.b.data(), static_cast<int64_t>(c.nuc_z.size()), c.nuc_xyz.data(),
                                      c.nuc_z.data(), &o);
    }
    EXPECT_EQ(s, QMMM_SUCCESS) << qmmm_error_message();
    return f;
}

std::vector<double> random_points(int n, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-9, 9);
    std::vector<double> p(3 * static_cast<size_t>(n));
    for (double &v : p) v = pos(g);
    return p;
}

// Normwise error of every point against the reference, and the worst.
double max_error(const Charges &c, qmmm_field f, const std::vector<double> &pts) {
    const int64_t n = static_cast<int64_t>(pts.size() / 3);
    std::vector<double> u(static_cast<size_t>(n));
    EXPECT_EQ(qmmm_field_eval(f, n, pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
        long double r, w;
        reference(c, &pts[3 * i], &r, &w);
        worst = std::max(worst, static_cast<double>(fabsl(u[i] - r) / w));
    }
    return worst;
}

class ChargesEveryPrecision : public ::testing::TestWithParam<int> {};

// Sizes on both sides of the lean path's limit (one chunk, 1,024 cells); every screening.
TEST_P(ChargesEveryPrecision, MatchesLongDoubleReference) {
    REQUIRE_BACKEND();
    const int precision = GetParam();
    for (int screening : {QMMM_SCREEN_NONE, QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN})
        for (int64_t m : {1, 10, 40, 511, 1024, 1025, 1500, 20000}) {
            const Charges c = make_charges(m, screening, 3, 17 + static_cast<unsigned>(m));
            qmmm_field f = create(c, precision);
            const double err = max_error(c, f, random_points(37, 5));
            // SINGLE's second part (coordinates rounded to float) is at most ~2^-24 * 40 bohr / 0.05 bohr here.
            const double bound = precision == QMMM_PRECISION_SINGLE ? 3e-5 : qmmm_claims::bound(precision);
            EXPECT_LE(err, bound) << "screening " << screening << ", " << m << " charges";
            EXPECT_GT(err, 0.0) << "a result equal to the long-double reference to the last bit is suspicious";
            qmmm_field_destroy(f);
        }
}

INSTANTIATE_TEST_SUITE_P(Precisions, ChargesEveryPrecision,
                         ::testing::Values(QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED));

// Backend AUTO keeps a small charge set on the CPU (a GPU call costs more than its whole sum); a large one may go to
// the GPU.
TEST(Charges, AutoKeepsSmallSetsOnTheCpu) {
    if (const char *e = std::getenv("QMMM_BACKEND"); e && *e) QMMM_SKIP("QMMM_BACKEND is set");
    for (int64_t m : {40, 2048, 2049}) {
        const Charges c = make_charges(m - 2, QMMM_SCREEN_NONE, 0, 53);  // + 2 nuclei
        qmmm_field f;
        ASSERT_EQ(qmmm_field_create_charges(&f, m - 2, c.x.data(), c.y.data(), c.z.data(), 1, c.q.data(),
                                            QMMM_SCREEN_NONE, nullptr, nullptr, 2, c.nuc_xyz.data(), c.nuc_z.data(),
                                            nullptr),
                  QMMM_SUCCESS)
            << qmmm_error_message();
        int backend = -1, n_dev = 0;
        ASSERT_EQ(qmmm_field_backend(f, &backend, nullptr, nullptr), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_cuda_device_count(&n_dev), QMMM_SUCCESS);
        EXPECT_EQ(backend, m <= 2048 || n_dev == 0 ? QMMM_BACKEND_CPU : QMMM_BACKEND_CUDA) << m << " charges and nuclei";
        qmmm_field_destroy(f);
    }
}

TEST(Charges, PhysicalSignAndLayoutsAgree) {
    REQUIRE_BACKEND();
    // One charge +1 at the origin: an electron at 2 bohr feels -0.5 hartree.
    const double x = 0, y = 0, z = 0, q = 1, p[3] = {2, 0, 0};
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend;
    qmmm_field f;
    ASSERT_EQ(qmmm_field_create_charges(&f, 1, &x, &y, &z, 1, &q, QMMM_SCREEN_NONE, nullptr, nullptr, 0, nullptr,
                                        nullptr, &o),
              QMMM_SUCCESS)
        << qmmm_error_message();
    double u = 0;
    ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS);
    EXPECT_DOUBLE_EQ(u, -0.5);
    qmmm_field_destroy(f);
    // (3,n) and three arrays give the same bits.
    const Charges c = make_charges(300, QMMM_SCREEN_EXP, 4, 3);
    qmmm_field f1 = create(c, QMMM_PRECISION_DOUBLE, 1), f3 = create(c, QMMM_PRECISION_DOUBLE, 3);
    const auto pts = random_points(9, 11);
    std::vector<double> u1(9), u3(9);
    ASSERT_EQ(qmmm_field_eval(f1, 9, pts.data(), u1.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(f3, 9, pts.data(), u3.data()), QMMM_SUCCESS);
    EXPECT_EQ(u1, u3);
    qmmm_field_destroy(f1), qmmm_field_destroy(f3);
}

// An electron on top of a screened charge: finite where the screening removes the singularity.
TEST(Charges, OnTopOfScreenedChargesIsFinite) {
    REQUIRE_BACKEND();
    for (int precision : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED})
        for (int screening : {QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN}) {
            Charges c = make_charges(50, screening, 1, 23);  // every charge screened
            for (double &a : c.a) a = screening == QMMM_SCREEN_EXP ? 1.0 : a;
            qmmm_field f = create(c, precision);
            // On charge 7 exactly, and 1e-12 and 1e-3 bohr from it.
            for (double off : {0.0, 1e-12, 1e-3}) {
                const std::vector<double> p = {c.x[7] + off, c.y[7], c.z[7]};
                double u = 0;
                ASSERT_EQ(qmmm_field_eval(f, 1, p.data(), &u), QMMM_SUCCESS) << qmmm_error_message();
                long double r, w;
                reference(c, p.data(), &r, &w);
                ASSERT_TRUE(std::isfinite(u));
                const double bound = precision == QMMM_PRECISION_SINGLE ? 1e-5 : 1e-13;
                EXPECT_LE(fabsl(u - r) / w, bound) << "screening " << screening << " offset " << off;
            }
            qmmm_field_destroy(f);
        }
}

TEST(Charges, OnAnUnscreenedChargeIsSingularAndNamesIt) {
    REQUIRE_BACKEND();
    Charges c = make_charges(30, QMMM_SCREEN_EXP, 2, 29);  // even charges screened (a = 1 for every 4th)
    qmmm_field f = create(c, QMMM_PRECISION_DOUBLE);
    const double p[3] = {c.x[5], c.y[5], c.z[5]};  // charge 5: unscreened
    double u;
    EXPECT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 5,"), std::string::npos) << qmmm_error_message();
    // Fortran callers count from 1.
    ASSERT_EQ(qmmm_set_index_base(1), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("point 1 "), std::string::npos) << qmmm_error_message();
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 6,"), std::string::npos) << qmmm_error_message();
    ASSERT_EQ(qmmm_set_index_base(0), QMMM_SUCCESS);
    // EXP with a != 1 keeps a (1 - a) / d singularity: charge 2 (a random in [0.2, 1)).
    ASSERT_NE(c.a[2], 1.0);
    const double p2[3] = {c.x[2], c.y[2], c.z[2]};
    EXPECT_EQ(qmmm_field_eval(f, 1, p2, &u), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 2,"), std::string::npos) << qmmm_error_message();
    // Within the singular radius but not on it (1e-12 bohr: (1 - a) / d is finite but huge): SINGULAR too, as for
    // an unscreened charge.
    const double p3[3] = {c.x[2] + 1e-12, c.y[2], c.z[2]};
    ASSERT_NE(p3[0], c.x[2]);
    EXPECT_EQ(qmmm_field_eval(f, 1, p3, &u), QMMM_ERR_SINGULAR) << u;
    // a = 1 (charge 0): finite.
    const double p0[3] = {c.x[0], c.y[0], c.z[0]};
    ASSERT_EQ(c.a[0], 1.0);
    EXPECT_EQ(qmmm_field_eval(f, 1, p0, &u), QMMM_SUCCESS) << qmmm_error_message();
    qmmm_field_destroy(f);
}

TEST(Charges, SumIsTheOrderedSumOfTheValues) {
    REQUIRE_BACKEND();
    for (int64_t m : {40, 5000}) {
        const Charges c = make_charges(m, QMMM_SCREEN_GAUSSIAN, 5, 31);
        qmmm_field f = create(c, QMMM_PRECISION_DOUBLE);
        for (int n : {1, 22, 128}) {
            const auto pts = random_points(n, 41 + n);
            std::vector<double> u(n);
            ASSERT_EQ(qmmm_field_eval(f, n, pts.data(), u.data()), QMMM_SUCCESS);
            double expect = 0;
            for (double v : u) expect += v;
            double sum = 1, sum_async = 2;
            ASSERT_EQ(qmmm_field_eval_sum(f, n, pts.data(), &sum), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(sum, expect);
            ASSERT_EQ(qmmm_field_eval_sum_async(f, n, pts.data(), &sum_async), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(sum_async, expect);
        }
        double s = 5;
        EXPECT_EQ(qmmm_field_eval_sum(f, 0, nullptr, &s), QMMM_SUCCESS);
        EXPECT_EQ(s, 0.0);
        EXPECT_EQ(qmmm_field_eval_sum(f, 1, nullptr, &s), QMMM_ERR_NULL_ARG);
        EXPECT_EQ(qmmm_field_eval_sum(f, 1, c.nuc_xyz.data(), nullptr), QMMM_ERR_NULL_ARG);
        // A point on a nucleus: SINGULAR through the summing call too.
        EXPECT_EQ(qmmm_field_eval_sum(f, 1, c.nuc_xyz.data(), &s), QMMM_ERR_SINGULAR);
        qmmm_field_destroy(f);
    }
}

// On the CPU, qmmm_field_eval_async does the work inside the call (the header says so): u holds the whole value,
// screened part included, when the call returns, so a caller that reads or frees u before wait (a Fortran
// temporary) loses nothing. Before, the screened part was added to u at wait. The GPU's u is complete at wait.
TEST(Charges, AsyncValuesOnTheCpuAreCompleteWhenTheCallReturns) {
    REQUIRE_BACKEND();
    for (int screening : {QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN}) {
        const Charges c = make_charges(60, screening, 3, 57);
        qmmm_field f = create(c, QMMM_PRECISION_DOUBLE);
        const int n = 9;
        const auto pts = random_points(n, 59);
        std::vector<double> u(n), ua(n, 0.0);
        ASSERT_EQ(qmmm_field_eval(f, n, pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval_async(f, n, pts.data(), ua.data()), QMMM_SUCCESS) << qmmm_error_message();
        const std::vector<double> at_return = ua;
        ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
        for (int i = 0; i < n; ++i) {
            EXPECT_EQ(ua[i], u[i]) << "point " << i;
            if (kBackend == QMMM_BACKEND_CPU) EXPECT_EQ(at_return[i], u[i]) << "point " << i << " before wait";
        }
        qmmm_field_destroy(f);
    }
}

// A point's value depends on the point, not on its batch or the threads (on the GPU, on the call's size too: the
// latency path for few points is another kernel, qmmm_field_eval says so).
TEST(Charges, PointValueIndependentOfBatchAndThreads) {
    REQUIRE_BACKEND();
    for (int64_t m : {100, 3000}) {
        const Charges c = make_charges(m, QMMM_SCREEN_EXP, 7, 37);
        qmmm_field f1 = create(c, QMMM_PRECISION_DOUBLE, 1, 1), f2 = create(c, QMMM_PRECISION_DOUBLE, 1, 2);
        const auto pts = random_points(300, 43);
        std::vector<double> all(300), all2(300);
        ASSERT_EQ(qmmm_field_eval(f1, 300, pts.data(), all.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval(f2, 300, pts.data(), all2.data()), QMMM_SUCCESS);
        EXPECT_EQ(all, all2);
        // The same points in another order: each value moves with its point.
        std::vector<double> rev(pts.rbegin(), pts.rend()), back(300);
        for (int i = 0; i < 300; ++i) std::copy(&pts[3 * (299 - i)], &pts[3 * (299 - i)] + 3, &rev[3 * i]);
        ASSERT_EQ(qmmm_field_eval(f1, 300, rev.data(), back.data()), QMMM_SUCCESS);
        for (int i = 0; i < 300; ++i) ASSERT_EQ(back[i], all[299 - i]) << i;
#ifndef QMMM_TEST_CUDA
        for (int i : {0, 151, 299}) {
            double one;
            ASSERT_EQ(qmmm_field_eval(f1, 1, &pts[3 * i], &one), QMMM_SUCCESS);
            EXPECT_EQ(one, all[i]);
        }
        // A walker's 22 points on up to 5 threads (tiles of fewer points than a thread's share of 300)
        qmmm_field f5 = create(c, QMMM_PRECISION_DOUBLE, 1, 5);
        std::vector<double> few(22);
        ASSERT_EQ(qmmm_field_eval(f5, 22, pts.data(), few.data()), QMMM_SUCCESS);
        EXPECT_EQ(few, std::vector<double>(all.begin(), all.begin() + 22));
        qmmm_field_destroy(f5);
#endif
        qmmm_field_destroy(f1), qmmm_field_destroy(f2);
    }
}

#ifdef QMMM_TEST_CUDA
// Screened charges on the GPU: a call of few points takes a block per chunk of charges and a second kernel adds each
// point's chunks; a call whose points fill the GPU sums every chunk in the point's thread. The additions are the same,
// so a point has the same bits alone, among 22 and among 2^19 points (more blocks than any GPU holds at once). 4,500
// charges, every one screened (36 chunks of 128: a whole slice of 32 chunks and a part of one), no nuclei: the value
// is the screened term alone.
TEST(Charges, ScreenedPointAloneAsInACallThatFillsTheGpu) {
    REQUIRE_BACKEND();
    const int n = 1 << 19;
    const auto pts = random_points(n, 72);
    for (int screening : {QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN})
        for (int precision : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
            Charges c = make_charges(4500, screening, 1, 71);
            c.nuc_xyz.clear(), c.nuc_z.clear();
            qmmm_field f = create(c, precision);
            std::vector<double> all(n), few(22);
            ASSERT_EQ(qmmm_field_eval(f, n, pts.data(), all.data()), QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_eval(f, 22, &pts[3 * 1000], few.data()), QMMM_SUCCESS) << qmmm_error_message();
            for (int i = 0; i < 22; ++i)
                EXPECT_EQ(few[i], all[1000 + i]) << "screening " << screening << ", precision " << precision;
            const double bound = precision == QMMM_PRECISION_SINGLE ? 3e-5 : qmmm_claims::bound(precision);
            for (int i : {0, 4321, n - 1}) {
                double one;
                ASSERT_EQ(qmmm_field_eval(f, 1, &pts[3 * i], &one), QMMM_SUCCESS) << qmmm_error_message();
                EXPECT_EQ(one, all[i]) << "point " << i << ", screening " << screening << ", precision " << precision;
                long double ref, scale;
                reference(c, &pts[3 * i], &ref, &scale);
                EXPECT_LE(static_cast<double>(fabsl(all[i] - ref) / scale), bound) << "point " << i;
            }
            qmmm_field_destroy(f);
        }
}

// A call of few points keeps its chunks' partial sums within 128 MiB, so 10^6 screened charges (7,813 chunks) take
// 4,096 points in rounds of 2,048: each point's value has the bits of the same point alone (one round), and the points
// of the second round land in their own places.
TEST(Charges, ScreenedRoundsOfPointsKeepTheBits) {
    REQUIRE_BACKEND();
    Charges c = make_charges(1000000, QMMM_SCREEN_GAUSSIAN, 1, 73);
    c.nuc_xyz.clear(), c.nuc_z.clear();
    qmmm_field f = create(c, QMMM_PRECISION_DOUBLE);
    const int n = 4096;
    const auto pts = random_points(n, 74);
    std::vector<double> all(n);
    ASSERT_EQ(qmmm_field_eval(f, n, pts.data(), all.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int i : {0, 2047, 2048, 3000, n - 1}) {
        double one;
        ASSERT_EQ(qmmm_field_eval(f, 1, &pts[3 * i], &one), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_EQ(one, all[i]) << "point " << i;
    }
    long double ref, scale;
    reference(c, &pts[3 * 3000], &ref, &scale);
    EXPECT_LE(static_cast<double>(fabsl(all[3000] - ref) / scale), qmmm_claims::bound(QMMM_PRECISION_DOUBLE));
    qmmm_field_destroy(f);
}
#endif

// SINGLE rounds coordinates to float; a field and its points 10^2..10^5 bohr from the origin are summed around a
// local origin, so the error stays at SINGLE's claim (2e-6 normwise) wherever the system sits. 300 charges (the
// lean kernels) and 3,000 (the chunked ones), unscreened and with EXP screening, moved by up to 1e5 bohr.
TEST(Charges, SingleFarFromTheOriginKeepsItsClaim) {
    REQUIRE_BACKEND();
    for (int64_t m : {300, 3000})
        for (int screening : {QMMM_SCREEN_NONE, QMMM_SCREEN_EXP})
            for (double shift : {0.0, 1e2, 1e3, 1e4, 1e5}) {
                Charges c = make_charges(m, screening, 5, 61);
                for (auto *v : {&c.x, &c.y, &c.z})
                    for (double &x : *v) x += shift;
                for (double &x : c.nuc_xyz) x += shift;
                qmmm_field f = create(c, QMMM_PRECISION_SINGLE, 1, 1);
                auto pts = random_points(64, 62);
                for (double &x : pts) x += shift;
                std::vector<double> u(64);
                ASSERT_EQ(qmmm_field_eval(f, 64, pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
                double worst = 0;
                for (int i = 0; i < 64; ++i) {
                    long double ref, scale;
                    reference(c, &pts[3 * i], &ref, &scale);
                    worst = std::max(worst, (double)(fabsl(u[i] - ref) / scale));
                }
                EXPECT_LT(worst, 2e-6) << m << " charges, screening " << screening << ", moved by " << shift;
                qmmm_field_destroy(f);
            }
}

// SPLIT on an MM environment: 20,000 charges of +-0.3..0.8 e, 5-15 bohr from the two nuclei, region = the nuclei +
// 4 bohr (charges inside it), tolerance 1e-7; one charge 3 bohr from a nucleus, well inside. Against the long-double
// sum: every point within the tolerance and the estimate; the error above the direct sum's rounding (a split that
// silently summed directly would not have it); alpha below the densities' 4.5 (the charges' rule); the points
// counted; a point on the inner charge SINGULAR.
TEST(Charges, SplitAroundAQmRegion) {
    REQUIRE_BACKEND();
    Charges c;
    std::mt19937_64 g(71);
    std::uniform_real_distribution<double> box(-16, 16), mag(0.3, 0.8);
    c.nuc_xyz = {0.5, 0.2, -0.3, -1.4, 0.9, 0.4};
    c.nuc_z = {8, 1};
    c.x = {3.5}, c.y = {0.2}, c.z = {-0.3}, c.q = {0.6};
    while (c.q.size() < 20000) {
        const double p[3] = {box(g), box(g), box(g)};
        double dmin = 1e9;
        for (int b = 0; b < 2; ++b)
            dmin = std::min(dmin, std::hypot(p[0] - c.nuc_xyz[3 * b], p[1] - c.nuc_xyz[3 * b + 1], p[2] - c.nuc_xyz[3 * b + 2]));
        if (dmin < 5 || dmin > 15) continue;
        c.x.push_back(p[0]), c.y.push_back(p[1]), c.z.push_back(p[2]);
        c.q.push_back((c.q.size() % 2 ? -1 : 1) * mag(g));
    }
    c.a.assign(c.q.size(), 0.0), c.b.assign(c.q.size(), 0.0);
    double region[6];
    ASSERT_EQ(qmmm_region_around(2, c.nuc_xyz.data(), 4.0, region), QMMM_SUCCESS);
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.method = QMMM_METHOD_SPLIT, o.tolerance = 1e-7, o.region = region;
    qmmm_field f = nullptr;
    const int64_t n = static_cast<int64_t>(c.q.size());
    ASSERT_EQ(qmmm_field_create_charges(&f, n, c.x.data(), c.y.data(), c.z.data(), 1, c.q.data(), QMMM_SCREEN_NONE,
                                        nullptr, nullptr, 2, c.nuc_xyz.data(), c.nuc_z.data(), &o),
              QMMM_SUCCESS)
        << qmmm_error_message();
    double alpha = 0, r_cut = 0, est = 1;
    ASSERT_EQ(qmmm_field_split_params(f, &alpha, &r_cut, nullptr, &est), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_LT(alpha, 4.0);
    EXPECT_LE(est, 1e-7);
    std::normal_distribution<double> nd(0, 1.5);
    const int np = 96;
    std::vector<double> pts(3 * np), u(np);
    for (int i = 0; i < np; ++i)
        for (int k = 0; k < 3; ++k) pts[3 * i + k] = c.nuc_xyz[3 * (i % 2) + k] + nd(g);
    ASSERT_EQ(qmmm_field_eval(f, np, pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    double worst = 0;
    int64_t outside = 0;
    for (int i = 0; i < np; ++i) {
        long double ref = 0, scale = 0;
        reference(c, &pts[3 * i], &ref, &scale);
        worst = std::max(worst, static_cast<double>(fabsl(u[i] - ref) / scale));
        bool in = true;
        for (int k = 0; k < 3; ++k) in = in && pts[3 * i + k] >= region[k] && pts[3 * i + k] <= region[3 + k];
        outside += !in;
    }
    std::printf("split of 20,000 MM charges: alpha %.3f, R_c %.3f bohr, estimate %.2e, max normwise error %.2e\n", alpha,
                r_cut, est, worst);
    EXPECT_LE(worst, 1e-7);
    EXPECT_LE(worst, est);
    EXPECT_GT(worst, 1e-13) << "no interpolation error at all: was the split summed directly?";
    int64_t n_points = -1, n_outside = -1;
    ASSERT_EQ(qmmm_field_split_stats(f, nullptr, nullptr, &n_points, &n_outside), QMMM_SUCCESS);
    EXPECT_EQ(n_points, np);
    EXPECT_EQ(n_outside, outside);
    const double on[3] = {3.5, 0.2, -0.3};
    double v = 0;
    EXPECT_EQ(qmmm_field_eval(f, 1, on, &v), QMMM_ERR_SINGULAR);
    EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
}

// A split whose grid cannot fit is refused from the cheap estimate, before any sum (well under a second), and the
// message says what would fit: a larger tolerance or a smaller region.
TEST(Charges, SplitThatCannotFitIsRefusedAtOnce) {
    REQUIRE_BACKEND();
    Charges c = make_charges(2000, QMMM_SCREEN_NONE, 0, 73);
    const double region[6] = {-17, -17, -15, 16, 17, 16};  // ~33 bohr a side
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.method = QMMM_METHOD_SPLIT, o.tolerance = 1e-10, o.region = region;
    qmmm_field f = nullptr;
    // The backend's own start (a CUDA context: 0.2-2 s, longer with other processes on the device) is not the
    // estimate's cost: a small direct field starts it before the clock does.
    {
        qmmm_options od;
        qmmm_options_default(&od);
        od.backend = kBackend;
        ASSERT_EQ(qmmm_field_create_charges(&f, 1, c.x.data(), c.y.data(), c.z.data(), 1, c.q.data(),
                                            QMMM_SCREEN_NONE, nullptr, nullptr, 0, nullptr, nullptr, &od),
                  QMMM_SUCCESS)
            << qmmm_error_message();
        EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
        f = nullptr;
    }
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(qmmm_field_create_charges(&f, static_cast<int64_t>(c.q.size()), c.x.data(), c.y.data(), c.z.data(), 1,
                                        c.q.data(), QMMM_SCREEN_NONE, nullptr, nullptr, 2, c.nuc_xyz.data(),
                                        c.nuc_z.data(), &o),
              QMMM_ERR_INVALID_ARG);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string msg = qmmm_error_message();
    EXPECT_LT(s, 1.0) << msg;
    EXPECT_EQ(f, nullptr);
    EXPECT_NE(msg.find("estimated before any sum"), std::string::npos) << msg;
    const size_t at = msg.find("Would fit: tolerance ");
    ASSERT_NE(at, std::string::npos) << msg;
    const double tol_fit = std::atof(msg.c_str() + at + 21);
    EXPECT_GT(tol_fit, 1e-10) << msg;
    EXPECT_LE(tol_fit, 1e-3) << msg;
    EXPECT_NE(msg.find("smaller on every side"), std::string::npos) << msg;
}

TEST(Charges, BadInput) {
    const Charges c = make_charges(4, QMMM_SCREEN_EXP, 1, 47);
    qmmm_field f = nullptr;
    auto mk = [&](int64_t n, const double *x, int64_t stride, int scr, const double *a, const double *b,
                  const qmmm_options *o) {
        return qmmm_field_create_charges(&f, n, x, c.y.data(), c.z.data(), stride, c.q.data(), scr, a, b, 0, nullptr,
                                         nullptr, o);
    };
    EXPECT_EQ(mk(-1, c.x.data(), 1, 1, c.a.data(), c.b.data(), nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(mk(0, nullptr, 1, 0, nullptr, nullptr, nullptr), QMMM_ERR_INVALID_ARG);  // nothing at all
    EXPECT_NE(std::string(qmmm_error_message()).find("no charges and no nuclei"), std::string::npos);
    EXPECT_EQ(mk(4, nullptr, 1, 1, c.a.data(), c.b.data(), nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(mk(4, c.x.data(), 0, 1, c.a.data(), c.b.data(), nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(mk(4, c.x.data(), 1, 7, c.a.data(), c.b.data(), nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, nullptr, c.b.data(), nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), nullptr, nullptr), QMMM_ERR_NULL_ARG);
    std::vector<double> bad = c.b;
    bad[2] = -1;
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), bad.data(), nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 2: b"), std::string::npos) << qmmm_error_message();
    bad[2] = NAN;
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), bad.data(), nullptr), QMMM_ERR_NONFINITE);
    std::vector<double> xs = c.x;
    xs[3] = INFINITY;
    EXPECT_EQ(mk(4, xs.data(), 1, 1, c.a.data(), c.b.data(), nullptr), QMMM_ERR_NONFINITE);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 3: x is Inf"), std::string::npos) << qmmm_error_message();
    qmmm_options o;
    qmmm_options_default(&o);
    const double region[6] = {-1, -1, -1, 1, 1, 1};
    o.method = QMMM_METHOD_SPLIT, o.region = region;
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), c.b.data(), &o), QMMM_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(qmmm_error_message()).find("screened charges are summed directly"), std::string::npos)
        << qmmm_error_message();
    qmmm_options_default(&o);
    o.n_threads = 100000;
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), c.b.data(), &o), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("0 .. 1024"), std::string::npos) << qmmm_error_message();
    o.n_threads = 2147483647;
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), c.b.data(), &o), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(f, nullptr);
    // A Gaussian width below 1e-6 bohr: the value on the charge, 2 q / (sqrt(pi) sigma), leaves float's range.
    std::vector<double> sig(4, 0.5);
    sig[2] = 7e-241;
    EXPECT_EQ(qmmm_field_create_charges(&f, 4, c.x.data(), c.y.data(), c.z.data(), 1, c.q.data(),
                                        QMMM_SCREEN_GAUSSIAN, sig.data(), nullptr, 0, nullptr, nullptr, nullptr),
              QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 2: sigma = 7e-241 bohr must be 0 (unscreened) or at least"),
              std::string::npos) << qmmm_error_message();
    // A count beyond this machine's memory (192 bytes a DOUBLE charge: 1e12 is 192 TB) is refused before any array is read
    // (the arrays here hold 4 charges), at once.
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(mk(1000000000000LL, c.x.data(), 1, 1, c.a.data(), c.b.data(), nullptr), QMMM_ERR_OUT_OF_MEMORY);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
    EXPECT_NE(std::string(qmmm_error_message()).find("n_charges = 1000000000000, n_nuclei = 0: the field needs about 1.92e+05 GB"),
              std::string::npos) << qmmm_error_message();
    qmmm_field g = nullptr;
    EXPECT_EQ(qmmm_field_create(&g, 2000000000000LL, c.x.data(), c.q.data(), 0, nullptr, nullptr, nullptr),
              QMMM_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(g, nullptr);
    // Valid charges whose value leaves double's range (7e299 e, 1e-28 bohr from an EXP charge with a = 1 and b =
    // 1.5e53: 1e325 hartree): NONFINITE with the reason, not an internal error.
    {
        const double px = 1.0, py = 2.0, pz = 0.0, pq = -7.2e299, pa = 1.0, pb = 1.47e53;
        qmmm_options dbl;
        qmmm_options_default(&dbl);
        dbl.backend = QMMM_BACKEND_CPU;
        ASSERT_EQ(qmmm_field_create_charges(&f, 1, &px, &py, &pz, 1, &pq, QMMM_SCREEN_EXP, &pa, &pb, 0, nullptr,
                                            nullptr, &dbl), QMMM_SUCCESS) << qmmm_error_message();
        const double pt[3] = {1.0, 2.0, 1.0758997536294622e-28};
        double u;
        EXPECT_EQ(qmmm_field_eval(f, 1, pt, &u), QMMM_ERR_NONFINITE);
        EXPECT_NE(std::string(qmmm_error_message()).find("beyond the range of the field's precision"),
                  std::string::npos) << qmmm_error_message();
        qmmm_field_destroy(f), f = nullptr;
    }
    // An EXP exponent beyond float's range in SINGLE: b d^2 would be Inf, and Inf * 0 on the charge NaN.
    std::vector<double> big_b = c.b;
    big_b[1] = 1.2e204;
    qmmm_options single;
    qmmm_options_default(&single);
    single.backend = QMMM_BACKEND_CPU, single.precision = QMMM_PRECISION_SINGLE;
    EXPECT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), big_b.data(), &single), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 1: b = 1.2e+204 bohr^-2 is beyond"), std::string::npos)
        << qmmm_error_message();
    // Coordinates whose squared distances overflow: refused with the limit, never a term silently 0 or NaN (the
    // API checks them before any backend; the CPU's runs everywhere).
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CPU;
    xs = c.x, xs[1] = 1e151;
    EXPECT_EQ(mk(4, xs.data(), 1, 1, c.a.data(), c.b.data(), &o), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 1: x = 1e+151 bohr is beyond the 1e+150"),
              std::string::npos) << qmmm_error_message();
    o.precision = QMMM_PRECISION_SINGLE, xs[1] = 1e19;
    EXPECT_EQ(mk(4, xs.data(), 1, 1, c.a.data(), c.b.data(), &o), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(f, nullptr);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE}) {
        o.precision = prec;
        ASSERT_EQ(mk(4, c.x.data(), 1, 1, c.a.data(), c.b.data(), &o), QMMM_SUCCESS) << qmmm_error_message();
        const double far = prec == QMMM_PRECISION_DOUBLE ? 1e200 : 1e58;
        const double pts[6] = {1, 2, 3, 0, 0, -far};
        double u[2], sum;
        EXPECT_EQ(qmmm_field_eval(f, 2, pts, u), QMMM_ERR_INVALID_ARG);
        EXPECT_NE(std::string(qmmm_error_message()).find("xyz: z of entry 1 is"), std::string::npos)
            << qmmm_error_message();
        EXPECT_EQ(qmmm_field_eval_sum(f, 2, pts, &sum), QMMM_ERR_INVALID_ARG);
        EXPECT_EQ(qmmm_field_eval(f, 1, pts, u), QMMM_SUCCESS) << qmmm_error_message();  // the field still works
        EXPECT_TRUE(std::isfinite(u[0]));
        qmmm_field_destroy(f), f = nullptr;
    }
}

TEST(Field, EmptyFieldIsAnError) {
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create(&f, 0, nullptr, nullptr, 0, nullptr, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("no cells and no nuclei"), std::string::npos);
    EXPECT_EQ(f, nullptr);
}

// One EXP charge with a large amplitude a: the term -q (1 - a e^{-b d^2}) / d crosses zero at a e^{-b d^2} = 1 and
// must keep its digits on both sides of the crossing. (1 - a) - a expm1(-b d^2) cancelled to the last bit of a: at
// a = 1e20 the value lost every digit (0 or +-1e4 instead of ~-30 hartree).
TEST_P(ChargesEveryPrecision, ExpLargeAmplitudeKeepsItsDigits) {
    REQUIRE_BACKEND();
    const int precision = GetParam();
    Charges c;
    c.screening = QMMM_SCREEN_EXP;
    c.x = {0.0}, c.y = {0.0}, c.z = {0.0}, c.q = {0.5}, c.a = {1e20}, c.b = {0.5};
    qmmm_field f = create(c, precision);
    // d = 9.0: a e^{-b d^2} = 260; 9.6: ~1.2 (near the crossing); 11 and 12: ~5e-7 and ~1e-11; 15: beyond the cut-off.
    const std::vector<double> pts = {9.0, 0, 0, 0, 9.3, 0, 0, 0, 11.0, 12.0, 0, 0, 0, 15.0, 0};
    std::vector<double> u(5);
    ASSERT_EQ(qmmm_field_eval(f, 5, pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int i = 0; i < 5; ++i) {
        const long double d = sqrtl((long double)pts[3 * i] * pts[3 * i] + (long double)pts[3 * i + 1] * pts[3 * i + 1] +
                                    (long double)pts[3 * i + 2] * pts[3 * i + 2]);
        const long double x = -0.5L * d * d, ae = 1e20L * expl(x);
        const long double ref = -0.5L * (1 - ae) / d;
        // The exponent b d^2 (~40) is rounded to the precision: exp's relative error is ~|x| eps, scaled by
        // |a e| / |1 - a e| (the crossing's condition number).
        const double eps = precision == QMMM_PRECISION_SINGLE ? 6e-8 : 1.1e-16;
        const double bound = 8 * eps * (1 + static_cast<double>(fabsl(x))) * static_cast<double>((1 + fabsl(ae)) / fabsl(1 - ae));
        EXPECT_LE(static_cast<double>(fabsl(u[i] - ref) / fabsl(ref)), bound) << "point " << i << ": " << u[i] << " vs "
                                                                               << static_cast<double>(ref);
    }
    qmmm_field_destroy(f);
}

// Soft EXP screening (b = 0.05 bohr^-2: every charge within its 30-bohr cut-off): the one-pass sum (chosen when a
// call's first point has most charges near) and the two-pass sum give a point the same bits; both agree with the
// long-double reference.
TEST_P(ChargesEveryPrecision, SoftExpOnePassAndTwoPassesAgreeToTheBit) {
    REQUIRE_BACKEND();
    const int precision = GetParam();
    Charges c = make_charges(2000, QMMM_SCREEN_EXP, 1, 41);
    for (size_t m = 0; m < c.q.size(); ++m) c.a[m] = m % 3 ? 0.7 : 1.0, c.b[m] = 0.05;
    c.nuc_xyz.clear(), c.nuc_z.clear();
    qmmm_field f = create(c, precision);
    const double inside[3] = {0.3, -0.2, 0.1}, far[3] = {900.0, 10.0, -5.0};
    const double in_far[6] = {inside[0], inside[1], inside[2], far[0], far[1], far[2]};
    const double far_in[6] = {far[0], far[1], far[2], inside[0], inside[1], inside[2]};
    double u_in_far[2], u_far_in[2], u_in, u_far;
    ASSERT_EQ(qmmm_field_eval(f, 2, in_far, u_in_far), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(f, 2, far_in, u_far_in), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(f, 1, inside, &u_in), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(f, 1, far, &u_far), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(u_in_far[0], u_in);
    EXPECT_EQ(u_far_in[1], u_in);
    EXPECT_EQ(u_in_far[1], u_far);
    EXPECT_EQ(u_far_in[0], u_far);
    const double bound = precision == QMMM_PRECISION_SINGLE ? 3e-5 : qmmm_claims::bound(precision);
    EXPECT_LE(max_error(c, f, random_points(23, 9)), bound);
    qmmm_field_destroy(f);
}

// Soft and hard EXP charges mixed, a count that is no whole number of blocks (the last block is padded): a point's
// value has the same bits in a call whose first point has most charges near (one pass over all) and in one led by a
// far point (the far pass, then the listed blocks with a near charge); hard charges whose far lanes' exp would be
// subnormal (b d^2 up to ~2000) leave the near terms as the long-double reference has them.
TEST_P(ChargesEveryPrecision, MixedExpPassesAgreeToTheBitWithAPaddedBlock) {
    REQUIRE_BACKEND();
    const int precision = GetParam();
    Charges c = make_charges(1003, QMMM_SCREEN_EXP, 1, 43);
    for (size_t m = 0; m < c.q.size(); ++m) c.a[m] = m % 3 ? 0.7 : 1.0, c.b[m] = m % 10 < 4 ? 0.01 : 5.0;
    qmmm_field f = create(c, precision);
    const auto pts = random_points(40, 17);
    for (size_t i = 0; i + 3 <= pts.size(); i += 3) {
        const double one_pass[6] = {0, 0, 0, pts[i], pts[i + 1], pts[i + 2]};
        const double two_pass[6] = {900, 0, 0, pts[i], pts[i + 1], pts[i + 2]};
        double u1[2], u2[2];
        ASSERT_EQ(qmmm_field_eval(f, 2, one_pass, u1), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval(f, 2, two_pass, u2), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_EQ(u1[1], u2[1]) << "point " << i / 3;
    }
    const double bound = precision == QMMM_PRECISION_SINGLE ? 3e-5 : qmmm_claims::bound(precision);
    EXPECT_LE(max_error(c, f, pts), bound);
    qmmm_field_destroy(f);
}

// EXP's amplitude multiplies the charge: beyond the precision's charge limit it is refused, as b is.
TEST(ChargesErrors, ExpAmplitudeBeyondThePrecisionIsRefused) {
    const double x = 0, y = 0, z = 0, q = 1, b = 1;
    for (int precision : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE}) {
        const double a = precision == QMMM_PRECISION_DOUBLE ? -1e301 : 1e31;
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.precision = precision;
        qmmm_field f = nullptr;
        EXPECT_EQ(qmmm_field_create_charges(&f, 1, &x, &y, &z, 1, &q, QMMM_SCREEN_EXP, &a, &b, 0, nullptr, nullptr, &o),
                  QMMM_ERR_INVALID_ARG);
        EXPECT_NE(std::string(qmmm_error_message()).find("|a| = "), std::string::npos) << qmmm_error_message();
        EXPECT_EQ(f, nullptr);
    }
}

// An EXP term whose product q (1 - a e^-x) leaves double's range although the term, divided by d, does not (q = -4e119,
// a = -4e202, 1e27 bohr away: 1.6e295 hartree): the kernels form that product first and overflow; the point is then
// recomputed on the host with the factor divided by d first, and the value is the term's (it was QMMM_ERR_NONFINITE).
TEST(Charges, ExpTermWhoseProductOverflowsIsEvaluated) {
    REQUIRE_BACKEND();
    const double x = 0, y = 0, z = 0, q = -4e119, a = -4e202, b = 3e-244;
    const double p[6] = {0, 0, 1e27, 0.5, -3e26, 2e26};
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = QMMM_PRECISION_DOUBLE;
    qmmm_field f = nullptr;
    ASSERT_EQ(qmmm_field_create_charges(&f, 1, &x, &y, &z, 1, &q, QMMM_SCREEN_EXP, &a, &b, 0, nullptr, nullptr, &o),
              QMMM_SUCCESS) << qmmm_error_message();
    double u[2];
    ASSERT_EQ(qmmm_field_eval(f, 2, p, u), QMMM_SUCCESS) << qmmm_error_message();
    for (int i = 0; i < 2; ++i) {
        const long double d2 = (long double)p[3 * i] * p[3 * i] + (long double)p[3 * i + 1] * p[3 * i + 1] +
                               (long double)p[3 * i + 2] * p[3 * i + 2];
        const long double ref = -(long double)q * (1 - (long double)a * expl(-(long double)b * d2)) / sqrtl(d2);
        EXPECT_NEAR(u[i], double(ref), 1e-14 * std::fabs(double(ref))) << i;
    }
    qmmm_field_destroy(f);
}

#ifndef QMMM_TEST_CUDA
// The default thread count: OMP_NUM_THREADS when set, else cores / ranks on the node.
TEST(Threads, DefaultFollowsNodeRanksAndOmpNumThreads) {
    unsetenv("OMP_NUM_THREADS");
    ASSERT_EQ(qmmm_set_node_ranks(1), QMMM_SUCCESS);
    int all = 0, shared = 0;
    ASSERT_EQ(qmmm_default_threads(&all), QMMM_SUCCESS);
    EXPECT_GE(all, 1);
    ASSERT_EQ(qmmm_set_node_ranks(1024), QMMM_SUCCESS);  // more ranks than cores: one thread each
    ASSERT_EQ(qmmm_default_threads(&shared), QMMM_SUCCESS);
    EXPECT_EQ(shared, 1);
    setenv("MPI_LOCALNRANKS", "4096", 1);  // Hydra's local size, read when no rank count was set
    ASSERT_EQ(qmmm_set_node_ranks(0), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_default_threads(&shared), QMMM_SUCCESS);
    EXPECT_EQ(shared, 1);
    unsetenv("MPI_LOCALNRANKS");
    EXPECT_EQ(qmmm_set_node_ranks(-1), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_default_threads(nullptr), QMMM_ERR_NULL_ARG);
    ASSERT_EQ(qmmm_set_node_ranks(0), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_default_threads(&shared), QMMM_SUCCESS);
    EXPECT_EQ(shared, all);
}
#endif

}  // namespace
