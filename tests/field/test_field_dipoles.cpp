// test_field_dipoles.cpp -- point dipoles on a field (qmmm_field_set_dipoles, qmmm_field_update_dipoles): their term
// in the values and gradients against long-double references written from the physical formula, an analytic case,
// central differences of U, the energy of the dipoles in the electrons' field from qmmm_field_site_field (the reverse
// direction of a self-consistent loop), the cheap update against a fresh set, determinism and the errors. Built twice:
// test_field_dipoles (backend CPU) and test_field_dipoles_gpu (backend CUDA, QMMM_TEST_CUDA; it also compares CUDA
// with the CPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

using qmmm_test::kBackend;

const int kPrecisions[] = {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED};

// The dipoles' term is double on DOUBLE and MIXED: its claim relative to sum |mu| / d^2 (values) and
// sum 2 |mu| / d^3 (gradient components).
constexpr double kClaim = 1e-14;
// SINGLE's (float pair terms and slice sums, offsets from the sites' box centre rounded to float): the same norms,
// away from the sites (NearSiteSingle: next to one, float's rounding of the offsets dominates).
constexpr double kClaimSingle = 1e-5;

double claim(int precision) { return precision == QMMM_PRECISION_SINGLE ? kClaimSingle : kClaim; }

struct Dipoles {
    std::vector<double> xyz, mu;
    int64_t n() const { return static_cast<int64_t>(mu.size() / 3); }
};

Dipoles random_dipoles(int64_t m, unsigned seed, double offset = 0) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-9, 9), dip(-0.6, 0.6);
    Dipoles d;
    for (int64_t k = 0; k < 3 * m; ++k) d.xyz.push_back(offset + pos(g)), d.mu.push_back(dip(g));
    return d;
}

std::vector<double> random_points(int64_t n, unsigned seed, double offset = 0) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-3, 3);
    std::vector<double> p;
    for (int64_t k = 0; k < 3 * n; ++k) p.push_back(offset + pos(g));
    return p;
}

// A field whose own sources give exactly 0: one nucleus of Z = 0 far away (a field needs a source).
qmmm_field empty_field(int precision, int threads = 0, double offset = 0) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = precision, o.n_threads = threads;
    const double nuc[3] = {offset + 500, offset + 500, offset + 500}, z[1] = {0};
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create(&f, 0, nullptr, nullptr, 1, nuc, z, &o), QMMM_SUCCESS) << qmmm_error_message();
    return f;
}

// MM charges with the dipoles at their positions (a polarizable environment) and two nuclei.
qmmm_field charges_field(const Dipoles &d, int precision, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> chg(-0.8, 0.8);
    std::vector<double> q;
    for (int64_t k = 0; k < d.n(); ++k) q.push_back(chg(g));
    const double nuc[6] = {0.5, 0.2, -0.3, -1.4, 0.9, 0.4}, z[2] = {8, 1};
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = precision;
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create_charges(&f, d.n(), d.xyz.data(), d.xyz.data() + 1, d.xyz.data() + 2, 3, q.data(),
                                        QMMM_SCREEN_NONE, nullptr, nullptr, 2, nuc, z, &o),
              QMMM_SUCCESS)
        << qmmm_error_message();
    return f;
}

// U_dip, dU/dr (long double, from U = -sum mu . d / |d|^3) and the scales sum |mu|/d^2, sum 2|mu|/d^3 at p.
void reference(const Dipoles &d, const double *p, long double out[4], long double *su, long double *sg) {
    for (int k = 0; k < 4; ++k) out[k] = 0;
    *su = *sg = 0;
    for (int64_t k = 0; k < d.n(); ++k) {
        const long double r[3] = {(long double)p[0] - d.xyz[3 * k], (long double)p[1] - d.xyz[3 * k + 1],
                                  (long double)p[2] - d.xyz[3 * k + 2]};
        const long double m[3] = {d.mu[3 * k], d.mu[3 * k + 1], d.mu[3 * k + 2]};
        const long double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], r1 = sqrtl(r2), r3 = r2 * r1, r5 = r3 * r2;
        const long double mr = m[0] * r[0] + m[1] * r[1] + m[2] * r[2];
        const long double mn = sqrtl(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
        out[0] -= mr / r3;
        for (int c = 0; c < 3; ++c) out[1 + c] += 3 * mr * r[c] / r5 - m[c] / r3;
        *su += mn / r2, *sg += 2 * mn / r3;
    }
}

TEST(FieldDipoles, AnalyticSingleDipole) {
    REQUIRE_BACKEND();
    for (int prec : kPrecisions) {
        qmmm_field f = empty_field(prec);
        const double site[3] = {0, 0, 0}, mu[3] = {0, 0, 1};
        ASSERT_EQ(qmmm_field_set_dipoles(f, 1, site, mu), QMMM_SUCCESS) << qmmm_error_message();
        // On the axis at z = 2: U = -1/z^2 = -0.25, dU/dz = 2/z^3 = 0.25; beside it at x = 2: U = 0,
        // dU/dz = -mu/x^3 = -0.125 (the field of a dipole on its equator is antiparallel to it).
        const double p[6] = {0, 0, 2, 2, 0, 0};
        double u[2], g[6];
        ASSERT_EQ(qmmm_field_eval_grad(f, 2, p, u, g), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_NEAR(u[0], -0.25, 1e-16);
        EXPECT_NEAR(g[2], 0.25, 1e-16);
        EXPECT_NEAR(g[0], 0, 1e-16);
        EXPECT_NEAR(u[1], 0, 1e-16);
        EXPECT_NEAR(g[5], -0.125, 1e-16);
        double v[2];
        ASSERT_EQ(qmmm_field_eval(f, 2, p, v), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_NEAR(v[0], -0.25, 1e-16);
        EXPECT_NEAR(v[1], 0, 1e-16);
        qmmm_field_destroy(f);
    }
}

TEST(FieldDipoles, TermMatchesLongDouble) {
    REQUIRE_BACKEND();
    const Dipoles d = random_dipoles(700, 11);
    const std::vector<double> p = random_points(300, 12);
    const int64_t n = 300;
    for (int prec : kPrecisions) {
        qmmm_field f = empty_field(prec);
        ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
        std::vector<double> u(n), v(n), g(3 * n);
        ASSERT_EQ(qmmm_field_eval(f, n, p.data(), v.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
        double worst_u = 0, worst_g = 0;
        for (int64_t i = 0; i < n; ++i) {
            long double r[4], su, sg;
            reference(d, &p[3 * i], r, &su, &sg);
            worst_u = std::max(worst_u, static_cast<double>(fabsl(v[i] - r[0]) / su));
            worst_u = std::max(worst_u, static_cast<double>(fabsl(u[i] - r[0]) / su));
            for (int c = 0; c < 3; ++c)
                worst_g = std::max(worst_g, static_cast<double>(fabsl(g[3 * i + c] - r[1 + c]) / sg));
        }
        std::printf("precision %d: worst value error %.2e, gradient %.2e (relative to the scales)\n", prec, worst_u,
                    worst_g);
        EXPECT_LT(worst_u, claim(prec)) << "precision " << prec;
        EXPECT_LT(worst_g, claim(prec)) << "precision " << prec;
        qmmm_field_destroy(f);
    }
}

// SINGLE within its claim on larger random sets: many slices of kDipoleSlice sites (their float sums added in
// double), a set 3,000 bohr from the coordinate origin (float offsets from the sites' box centre: from the
// coordinate origin they would round by 2.4e-4 bohr), and dipoles of magnitudes 1e-4..1 e bohr.
TEST(FieldDipoles, SingleWithinClaimOnRandomSystems) {
    REQUIRE_BACKEND();
    struct Case {
        int64_t m;
        unsigned seed;
        double offset;
        bool spread;
    };
    for (const Case &c : {Case{6000, 91, 0.0, false}, Case{2000, 92, 3000.0, false}, Case{1500, 93, -700.0, true}}) {
        Dipoles d = random_dipoles(c.m, c.seed, c.offset);
        if (c.spread) {  // magnitudes over four decades
            std::mt19937_64 g(c.seed + 1);
            std::uniform_real_distribution<double> e(-4, 0);
            for (int64_t k = 0; k < c.m; ++k) {
                const double f = std::pow(10.0, e(g));
                for (int j = 0; j < 3; ++j) d.mu[3 * k + j] *= f;
            }
        }
        const int64_t n = 160;
        const std::vector<double> p = random_points(n, c.seed + 2, c.offset);
        qmmm_field f = empty_field(QMMM_PRECISION_SINGLE, 0, c.offset);
        ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
        std::vector<double> u(n), v(n), g(3 * n);
        ASSERT_EQ(qmmm_field_eval(f, n, p.data(), v.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
        double worst_u = 0, worst_g = 0;
        for (int64_t i = 0; i < n; ++i) {
            long double r[4], su, sg;
            reference(d, &p[3 * i], r, &su, &sg);
            worst_u = std::max({worst_u, static_cast<double>(fabsl(v[i] - r[0]) / su),
                                static_cast<double>(fabsl(u[i] - r[0]) / su)});
            for (int k = 0; k < 3; ++k)
                worst_g = std::max(worst_g, static_cast<double>(fabsl(g[3 * i + k] - r[1 + k]) / sg));
        }
        std::printf("SINGLE, %lld sites at %g bohr: worst value error %.2e, gradient %.2e (relative to the scales)\n",
                    static_cast<long long>(c.m), c.offset, worst_u, worst_g);
        EXPECT_LT(worst_u, kClaimSingle) << c.m << " sites at " << c.offset;
        EXPECT_LT(worst_g, kClaimSingle) << c.m << " sites at " << c.offset;
        EXPECT_GT(worst_u, 1e-12) << "float terms: not DOUBLE's rounding";
        qmmm_field_destroy(f);
    }
}

// A SINGLE point next to a dipole site, at 1e-2..1e-9 bohr, alone (a field of the dipoles) and on an MM charge that
// carries the dipole (the value path recomputes a point that float puts on the charge in double: it keeps the
// dipoles' term). The term's error grows as float's rounding of the offsets over d (header: up to about
// 2 sqrt(3) 2^-23 X / d of |mu|/d^2 for U, 3 sqrt(3) 2^-23 X / d of 2 |mu|/d^3 for the gradient, X the largest offset
// from the sites' origin; the test allows 3 and 4); below d ~ 2 sqrt(3) 2^-23 X it is known to an order of magnitude;
// a point that float puts on the site is recomputed in double (DOUBLE's value, no false SINGULAR). MIXED and DOUBLE are
// double here. Before, with the charge: the value lost the dipoles' term where float put the point on the charge
// (check_values put the charges' double value in its place).
TEST(FieldDipoles, NearSiteSingle) {
    REQUIRE_BACKEND();
    // The sites' and nuclei's boxes are centred within 0.5 bohr of 0: their origin (whole bohr) is 0 for the dipoles
    // and for the charges' kernels alike, so "on the site in float" is a test of the point's own rounding.
    Dipoles d;
    d.xyz = {1.3, 2.7, -0.4, -1.1, -2.5, 0.6};
    d.mu = {0.3, -0.2, 0.5, -0.4, 0.1, 0.2};
    const double q[2] = {0.5, -0.25}, nuc[3] = {-1.2, 0.9, 0.3}, z[1] = {2};
    const double delta = std::sqrt(3.0) * std::ldexp(1.0, -23) * 2.7;  // X = 2.7: the largest offset
    const double dir[3] = {0.6, 0.8, 0.0};
    for (int prec : kPrecisions)
        for (int with_charges = 0; with_charges < 2; ++with_charges) {
            SCOPED_TRACE(testing::Message() << "precision " << prec << ", charges " << with_charges);
            qmmm_options o;
            qmmm_options_default(&o);
            o.backend = kBackend, o.precision = prec;
            qmmm_field f = nullptr;
            if (with_charges)
                ASSERT_EQ(qmmm_field_create_charges(&f, 2, d.xyz.data(), d.xyz.data() + 1, d.xyz.data() + 2, 3, q,
                                                    QMMM_SCREEN_NONE, nullptr, nullptr, 1, nuc, z, &o),
                          QMMM_SUCCESS)
                    << qmmm_error_message();
            else
                f = empty_field(prec);
            ASSERT_EQ(qmmm_field_set_dipoles(f, 2, d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
            for (int e = 2; e <= 9; ++e) {
                const double dist = std::pow(10.0, -e);
                const double p[3] = {d.xyz[0] + dist * dir[0], d.xyz[1] + dist * dir[1], d.xyz[2]};
                SCOPED_TRACE(testing::Message() << "d = " << dist);
                long double r[4], su, sg;
                reference(d, p, r, &su, &sg);
                long double cu = 0, cg[3] = {0, 0, 0}, cs = 0, cgs = 0;  // the charges' and nucleus' U, dU/dr, scales
                if (with_charges) {
                    auto add = [&](const double *s, double c) {  // c: the electron's coefficient (-q, -Z)
                        long double v[3], d2 = 0;
                        for (int k = 0; k < 3; ++k) v[k] = static_cast<long double>(p[k]) - s[k], d2 += v[k] * v[k];
                        const long double rr = sqrtl(d2);
                        cu += c / rr, cs += std::fabs(c) / rr, cgs += std::fabs(c) / d2;
                        for (int k = 0; k < 3; ++k) cg[k] -= c * v[k] / (d2 * rr);
                    };
                    add(d.xyz.data(), -q[0]), add(d.xyz.data() + 3, -q[1]), add(nuc, -z[0]);
                }
                const bool on_in_float = static_cast<float>(p[0]) == static_cast<float>(d.xyz[0]) &&
                                         static_cast<float>(p[1]) == static_cast<float>(d.xyz[1]);
                const double mu0 = std::sqrt(0.3 * 0.3 + 0.2 * 0.2 + 0.5 * 0.5);
                double ru, rg;  // the nearest site's error, relative to its term
                if (prec != QMMM_PRECISION_SINGLE || on_in_float)
                    ru = rg = 1e-13;
                else
                    ru = dist > 2 * delta ? 3 * delta / (dist - delta) : 10.0,
                    rg = dist > 2 * delta ? 4 * delta / (dist - delta) : 10.0;
                const double floor = prec == QMMM_PRECISION_SINGLE ? 1e-5 : 1e-13;
                // The charge on the site: its own SINGLE claim near a charge (qmmm_field_eval's header), about as
                // the dipole's; its error adds with the same relative size.
                const double allowed_u =
                    ru * (mu0 / (dist * dist) + q[0] / dist) + floor * static_cast<double>(su + cs);
                const double allowed_g = rg * (2 * mu0 / (dist * dist * dist) + q[0] / (dist * dist)) +
                                         floor * static_cast<double>(sg + cgs);
                double u = 0, g[3] = {0, 0, 0}, v = 0;
                ASSERT_EQ(qmmm_field_eval(f, 1, p, &v), QMMM_SUCCESS) << qmmm_error_message();
                ASSERT_EQ(qmmm_field_eval_grad(f, 1, p, &u, g), QMMM_SUCCESS) << qmmm_error_message();
                const double uref = static_cast<double>(r[0] + cu);
                EXPECT_LE(std::fabs(v - uref), allowed_u) << "eval: " << v << ", reference " << uref;
                EXPECT_LE(std::fabs(u - uref), allowed_u) << "eval_grad's u: " << u << ", reference " << uref;
                for (int k = 0; k < 3; ++k)
                    EXPECT_LE(std::fabs(g[k] - static_cast<double>(r[1 + k] + cg[k])), allowed_g)
                        << "component " << k << ": " << g[k] << ", reference " << static_cast<double>(r[1 + k] + cg[k]);
            }
            // Exactly on the dipole site: SINGULAR in every precision.
            double u = 0;
            EXPECT_EQ(qmmm_field_eval(f, 1, d.xyz.data(), &u), QMMM_ERR_SINGULAR);
            qmmm_field_destroy(f);
        }
}

// SINGLE takes SINGLE's limits for the dipoles' arrays (float holds dipoles within 1e30 e bohr and squares offsets
// of sites within 1e18 bohr), as for its charges; a float term that overflows (a large dipole near its site) is
// recomputed in double: DOUBLE's value, not NONFINITE.
TEST(FieldDipoles, SingleLimitsAndOverflow) {
    REQUIRE_BACKEND();
    Dipoles d = random_dipoles(40, 95);
    qmmm_field f = empty_field(QMMM_PRECISION_SINGLE);
    std::vector<double> bad = d.mu;
    bad[4] = 2e30;
    EXPECT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), bad.data()), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("1e+30"), std::string::npos) << qmmm_error_message();
    bad = d.xyz, bad[7] = 2e18;
    EXPECT_EQ(qmmm_field_set_dipoles(f, d.n(), bad.data(), d.mu.data()), QMMM_ERR_INVALID_ARG);
    ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
    bad = d.mu, bad[4] = 2e30;
    EXPECT_EQ(qmmm_field_update_dipoles(f, d.n(), bad.data()), QMMM_ERR_INVALID_ARG);
    // mu = 1e29 at 1e-5 bohr: U ~ 1e39, beyond float's 3.4e38.
    d.mu[3] = 1e29;
    ASSERT_EQ(qmmm_field_update_dipoles(f, d.n(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
    const double p[6] = {d.xyz[3] + 1e-5, d.xyz[4], d.xyz[5], 0.5, 0.5, 0.5};
    double u[2], v[2], g[6];
    ASSERT_EQ(qmmm_field_eval(f, 2, p, v), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval_grad(f, 2, p, u, g), QMMM_SUCCESS) << qmmm_error_message();
    for (int i = 0; i < 2; ++i) {
        long double r[4], su, sg;
        reference(d, p + 3 * i, r, &su, &sg);
        // Point 0 is recomputed in double; point 1 (1e29 at ~8 bohr: 1.6e27) stays float.
        const double rel = i == 0 ? 1e-13 : kClaimSingle;
        EXPECT_LE(fabsl(v[i] - r[0]), rel * su) << "point " << i << ": " << v[i] << " vs " << (double)r[0];
        EXPECT_LE(fabsl(u[i] - r[0]), rel * su) << "point " << i;
        for (int k = 0; k < 3; ++k) EXPECT_LE(fabsl(g[3 * i + k] - r[1 + k]), rel * sg) << "point " << i;
    }
    qmmm_field_destroy(f);
}

// The dipoles add their term to a field of charges (with a local origin for SINGLE far away): the field's value
// with them minus the same field without them is the term.
TEST(FieldDipoles, AddsToChargesField) {
    REQUIRE_BACKEND();
    for (double offset : {0.0, 3000.0}) {
        const Dipoles d = random_dipoles(400, 21, offset);
        const std::vector<double> p = random_points(200, 22, offset);
        const int64_t n = 200;
        for (int prec : kPrecisions) {
            qmmm_field plain = charges_field(d, prec, 23), f = charges_field(d, prec, 23);
            ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
            std::vector<double> u0(n), u1(n), g0(3 * n), g1(3 * n);
            ASSERT_EQ(qmmm_field_eval(plain, n, p.data(), u0.data()), QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u1.data()), QMMM_SUCCESS) << qmmm_error_message();
            std::vector<double> gu0(n), gu1(n);
            ASSERT_EQ(qmmm_field_eval_grad(plain, n, p.data(), gu0.data(), g0.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), gu1.data(), g1.data()), QMMM_SUCCESS);
            for (int64_t i = 0; i < n; ++i) {
                long double r[4], su, sg;
                reference(d, &p[3 * i], r, &su, &sg);
                // u1 = fl(u0 + term): one rounding of u's size beyond the term's own error.
                const double ulp_u = 4e-16 * (std::fabs(u0[i]) + std::fabs(u1[i]));
                EXPECT_LT(fabsl(u1[i] - u0[i] - r[0]), claim(prec) * su + ulp_u)
                    << "point " << i << " precision " << prec;
                EXPECT_LT(fabsl(gu1[i] - gu0[i] - r[0]),
                          claim(prec) * su + 4e-16 * (std::fabs(gu0[i]) + std::fabs(gu1[i])));
                for (int c = 0; c < 3; ++c) {
                    const double ulp_g = 4e-16 * (std::fabs(g0[3 * i + c]) + std::fabs(g1[3 * i + c]));
                    EXPECT_LT(fabsl(g1[3 * i + c] - g0[3 * i + c] - r[1 + c]), claim(prec) * sg + ulp_g);
                }
            }
            qmmm_field_destroy(plain);
            qmmm_field_destroy(f);
        }
    }
}

// The gradient against central differences of U (DOUBLE: differences of qmmm_field_eval at +-h).
TEST(FieldDipoles, GradientMatchesDifferencesOfU) {
    REQUIRE_BACKEND();
    const Dipoles d = random_dipoles(300, 31);
    const std::vector<double> p = random_points(40, 32);
    qmmm_field f = charges_field(d, QMMM_PRECISION_DOUBLE, 33);
    ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
    const double h = 1e-5;
    std::vector<double> g(3 * 40);
    ASSERT_EQ(qmmm_field_eval_grad(f, 40, p.data(), nullptr, g.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int i = 0; i < 40; ++i)
        for (int c = 0; c < 3; ++c) {
            double q[6], u[2];
            std::memcpy(q, &p[3 * i], 3 * sizeof(double));
            std::memcpy(q + 3, &p[3 * i], 3 * sizeof(double));
            q[c] += h, q[3 + c] -= h;
            ASSERT_EQ(qmmm_field_eval(f, 2, q, u), QMMM_SUCCESS) << qmmm_error_message();
            const double fd = (u[0] - u[1]) / (2 * h);
            EXPECT_NEAR(g[3 * i + c], fd, 1e-6 * (1 + std::fabs(fd))) << "point " << i << " axis " << c;
        }
    qmmm_field_destroy(f);
}

// The reverse direction of the self-consistent loop: the electrons' field at the dipole sites is
// qmmm_field_site_field (w = -1) on a field of the sites (charges 0 do), and the dipoles' energy in it,
// -sum_k mu_k . E_k, is the electrons' energy sum_i U_dip(r_i).
TEST(FieldDipoles, EnergyMatchesSiteField) {
    REQUIRE_BACKEND();
    const Dipoles d = random_dipoles(500, 41);
    const std::vector<double> p = random_points(64, 42);
    const std::vector<double> w(64, -1.0), zero(d.n(), 0.0);
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend;
    qmmm_field sites = nullptr;
    ASSERT_EQ(qmmm_field_create_charges(&sites, d.n(), d.xyz.data(), d.xyz.data() + 1, d.xyz.data() + 2, 3,
                                        zero.data(), QMMM_SCREEN_NONE, nullptr, nullptr, 0, nullptr, nullptr, &o),
              QMMM_SUCCESS)
        << qmmm_error_message();
    std::vector<double> phi(d.n()), e(3 * d.n());
    ASSERT_EQ(qmmm_field_site_field(sites, 64, p.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS);
    long double e_sites = 0, scale = 0;
    for (int64_t k = 0; k < 3 * d.n(); ++k) e_sites -= (long double)d.mu[k] * e[k], scale += std::fabs(d.mu[k] * e[k]);
    qmmm_field f = empty_field(QMMM_PRECISION_DOUBLE);
    ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
    double sum_u = 0;
    ASSERT_EQ(qmmm_field_eval_sum(f, 64, p.data(), &sum_u), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_LT(fabsl(sum_u - e_sites), 1e-13 * scale) << sum_u << " vs " << (double)e_sites;
    qmmm_field_destroy(f);
    qmmm_field_destroy(sites);
}

// update_dipoles gives the bits of a fresh set with the same dipoles; set again replaces the sites; n = 0 removes.
TEST(FieldDipoles, UpdateEqualsFreshSet) {
    REQUIRE_BACKEND();
    const Dipoles d = random_dipoles(250, 51), d2 = random_dipoles(250, 52);
    const std::vector<double> p = random_points(100, 53);
    for (int prec : kPrecisions) {
        qmmm_field a = charges_field(d, prec, 54), b = charges_field(d, prec, 54), plain = charges_field(d, prec, 54);
        ASSERT_EQ(qmmm_field_set_dipoles(a, d.n(), d.xyz.data(), nullptr), QMMM_SUCCESS) << qmmm_error_message();
        std::vector<double> ua(100), ub(100), u0(100), ga(300), gb(300);
        ASSERT_EQ(qmmm_field_eval(a, 100, p.data(), ua.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval(plain, 100, p.data(), u0.data()), QMMM_SUCCESS);
        EXPECT_EQ(0, std::memcmp(ua.data(), u0.data(), 100 * sizeof(double))) << "zero dipoles change nothing";
        ASSERT_EQ(qmmm_field_update_dipoles(a, d.n(), d2.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_set_dipoles(b, d.n(), d.xyz.data(), d2.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval(a, 100, p.data(), ua.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval(b, 100, p.data(), ub.data()), QMMM_SUCCESS);
        EXPECT_EQ(0, std::memcmp(ua.data(), ub.data(), 100 * sizeof(double)));
        EXPECT_NE(0, std::memcmp(ua.data(), u0.data(), 100 * sizeof(double)));
        ASSERT_EQ(qmmm_field_eval_grad(a, 100, p.data(), ua.data(), ga.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval_grad(b, 100, p.data(), ub.data(), gb.data()), QMMM_SUCCESS);
        EXPECT_EQ(0, std::memcmp(ga.data(), gb.data(), 300 * sizeof(double)));
        // New sites replace the old ones.
        ASSERT_EQ(qmmm_field_set_dipoles(a, d2.n(), d2.xyz.data(), d.mu.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_set_dipoles(b, d2.n(), d2.xyz.data(), d.mu.data()), QMMM_SUCCESS);
        int64_t count = -1;
        ASSERT_EQ(qmmm_field_dipole_count(a, &count), QMMM_SUCCESS);
        EXPECT_EQ(count, d2.n());
        ASSERT_EQ(qmmm_field_eval(a, 100, p.data(), ua.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_eval(b, 100, p.data(), ub.data()), QMMM_SUCCESS);
        EXPECT_EQ(0, std::memcmp(ua.data(), ub.data(), 100 * sizeof(double)));
        // n = 0 removes them.
        ASSERT_EQ(qmmm_field_set_dipoles(a, 0, nullptr, nullptr), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_dipole_count(a, &count), QMMM_SUCCESS);
        EXPECT_EQ(count, 0);
        ASSERT_EQ(qmmm_field_eval(a, 100, p.data(), ua.data()), QMMM_SUCCESS);
        EXPECT_EQ(0, std::memcmp(ua.data(), u0.data(), 100 * sizeof(double)));
        for (qmmm_field f : {a, b, plain}) qmmm_field_destroy(f);
    }
}

// The same bits for one point alone or in a batch, for 1 or 2 threads, and from the asynchronous calls: DOUBLE,
// and SINGLE (float slices added in double).
TEST(FieldDipoles, Determinism) {
    REQUIRE_BACKEND();
    const Dipoles d = random_dipoles(3000, 61);
    const int64_t n = 512;
    const std::vector<double> p = random_points(n, 62);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE}) {
        SCOPED_TRACE(testing::Message() << "precision " << prec);
        std::vector<double> ref_u(n), ref_g(3 * n), ref_v(n);
        for (int threads : {1, 2}) {
            qmmm_field f = empty_field(prec, threads);
            ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS);
            std::vector<double> u(n), g(3 * n), v(n);
            ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_eval(f, n, p.data(), v.data()), QMMM_SUCCESS);
            // eval's own loop (no gradient) does the same operations for U; the two agree to rounding (the header
            // promises no more), here measured equal.
            const double tol = prec == QMMM_PRECISION_SINGLE ? 1e-6 : 1e-15;
            for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(u[i], v[i], tol * (1 + std::fabs(v[i])));
            if (threads == 1) ref_u = u, ref_g = g, ref_v = v;
            EXPECT_EQ(0, std::memcmp(v.data(), ref_v.data(), n * sizeof(double))) << threads << " threads";
            EXPECT_EQ(0, std::memcmp(u.data(), ref_u.data(), n * sizeof(double))) << threads << " threads";
            EXPECT_EQ(0, std::memcmp(g.data(), ref_g.data(), 3 * n * sizeof(double))) << threads << " threads";
            double one, og[3];
            ASSERT_EQ(qmmm_field_eval_grad(f, 1, &p[3 * 77], &one, og), QMMM_SUCCESS);
            EXPECT_EQ(0, std::memcmp(&one, &ref_u[77], sizeof(double)));
            EXPECT_EQ(0, std::memcmp(og, &ref_g[3 * 77], 3 * sizeof(double)));
            ASSERT_EQ(qmmm_field_eval(f, 1, &p[3 * 77], &one), QMMM_SUCCESS);
            EXPECT_EQ(0, std::memcmp(&one, &ref_v[77], sizeof(double)));
            std::vector<double> ua(n), ga(3 * n);
            ASSERT_EQ(qmmm_field_eval_async(f, n, p.data(), ua.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(0, std::memcmp(ua.data(), ref_v.data(), n * sizeof(double)));
            ASSERT_EQ(qmmm_field_eval_grad_async(f, n, p.data(), ua.data(), ga.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(0, std::memcmp(ga.data(), ref_g.data(), 3 * n * sizeof(double)));
            EXPECT_EQ(0, std::memcmp(ua.data(), ref_u.data(), n * sizeof(double)));
            double s = 0, s_ref = 0;
            for (int64_t i = 0; i < n; ++i) s_ref += ref_v[i];
            ASSERT_EQ(qmmm_field_eval_sum_async(f, n, p.data(), &s), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(s, s_ref);
            qmmm_field_destroy(f);
        }
    }
}

TEST(FieldDipoles, Errors) {
    REQUIRE_BACKEND();
    const Dipoles d = random_dipoles(20, 71);
    qmmm_field f = charges_field(d, QMMM_PRECISION_DOUBLE, 72);
    EXPECT_EQ(qmmm_field_set_dipoles(nullptr, 1, d.xyz.data(), d.mu.data()), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_field_set_dipoles(f, -1, d.xyz.data(), d.mu.data()), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_set_dipoles(f, 3, nullptr, d.mu.data()), QMMM_ERR_NULL_ARG);
    std::vector<double> bad = d.mu;
    bad[7] = std::nan("");
    EXPECT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), bad.data()), QMMM_ERR_NONFINITE);
    EXPECT_NE(std::string(qmmm_error_message()).find("mu"), std::string::npos) << qmmm_error_message();
    bad = d.xyz, bad[4] = INFINITY;
    EXPECT_EQ(qmmm_field_set_dipoles(f, d.n(), bad.data(), d.mu.data()), QMMM_ERR_NONFINITE);
    bad = d.xyz, bad[4] = 1e200;
    EXPECT_EQ(qmmm_field_set_dipoles(f, d.n(), bad.data(), d.mu.data()), QMMM_ERR_INVALID_ARG);
    bad = d.mu, bad[2] = 1e305;
    EXPECT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), bad.data()), QMMM_ERR_INVALID_ARG);
    int64_t count = -1;
    ASSERT_EQ(qmmm_field_dipole_count(f, &count), QMMM_SUCCESS);
    EXPECT_EQ(count, 0) << "a failed set attaches nothing";
    EXPECT_EQ(qmmm_field_update_dipoles(f, d.n(), d.mu.data()), QMMM_ERR_INVALID_ARG) << "no dipoles attached";
    ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_update_dipoles(f, d.n() - 1, d.mu.data()), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_update_dipoles(f, d.n(), nullptr), QMMM_ERR_NULL_ARG);
    bad = d.mu, bad[5] = -INFINITY;
    EXPECT_EQ(qmmm_field_update_dipoles(f, d.n(), bad.data()), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_field_dipole_count(f, nullptr), QMMM_ERR_NULL_ARG);

    // A point on a dipole site: SINGULAR naming it (a dipole of 0 too). Site 4 is also an MM charge; a dipole-only
    // site is named as a dipole site.
    qmmm_field e = empty_field(QMMM_PRECISION_DOUBLE);
    std::vector<double> zero(3 * d.n(), 0.0);
    ASSERT_EQ(qmmm_field_set_dipoles(e, d.n(), d.xyz.data(), zero.data()), QMMM_SUCCESS);
    double u, g[3];
    const double *on = &d.xyz[3 * 4];
    EXPECT_EQ(qmmm_field_eval(e, 1, on, &u), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("dipole site 4"), std::string::npos) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval_grad(e, 1, on, &u, g), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("dipole site 4"), std::string::npos) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval_async(e, 1, on, &u), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_set_dipoles(e, d.n(), d.xyz.data(), zero.data()), QMMM_ERR_BUSY);
    EXPECT_EQ(qmmm_field_update_dipoles(e, d.n(), zero.data()), QMMM_ERR_BUSY);
    EXPECT_EQ(qmmm_field_wait(e), QMMM_ERR_SINGULAR);
    // A point on an MM charge that carries a dipole: SINGULAR (the charge or the dipole is named).
    EXPECT_EQ(qmmm_field_eval(f, 1, on, &u), QMMM_ERR_SINGULAR);
    // A term beyond double's range: NONFINITE, not a point on a site.
    std::vector<double> huge(3 * d.n(), 0.0);
    huge[0] = 1e300;
    ASSERT_EQ(qmmm_field_update_dipoles(e, d.n(), huge.data()), QMMM_SUCCESS);
    double near_site[3] = {d.xyz[0] + 1e-9, d.xyz[1], d.xyz[2]};
    EXPECT_EQ(qmmm_field_eval(e, 1, near_site, &u), QMMM_ERR_NONFINITE) << qmmm_error_message();
    qmmm_field_destroy(e);
    qmmm_field_destroy(f);
}

#ifdef QMMM_TEST_CUDA
// CUDA against the CPU: DOUBLE the same term to rounding (both double, sites in the same order; FMA contraction
// differs); SINGLE within its claim (float lanes on the CPU, one thread's float sum a slice on the GPU, rsqrtf).
TEST(FieldDipoles, CudaMatchesCpu) {
    REQUIRE_BACKEND();
    const Dipoles d = random_dipoles(5000, 81);
    const int64_t n = 2000;
    const std::vector<double> p = random_points(n, 82);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE}) {
        qmmm_options o;
        qmmm_options_default(&o);
        o.precision = prec;
        const double nuc[3] = {500, 500, 500}, z[1] = {0};
        std::vector<double> u[2], g[2];
        for (int b = 0; b < 2; ++b) {
            o.backend = b ? QMMM_BACKEND_CUDA : QMMM_BACKEND_CPU;
            qmmm_field f = nullptr;
            ASSERT_EQ(qmmm_field_create(&f, 0, nullptr, nullptr, 1, nuc, z, &o), QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_set_dipoles(f, d.n(), d.xyz.data(), d.mu.data()), QMMM_SUCCESS)
                << qmmm_error_message();
            u[b].resize(n), g[b].resize(3 * n);
            ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u[b].data(), g[b].data()), QMMM_SUCCESS)
                << qmmm_error_message();
            qmmm_field_destroy(f);
        }
        for (int64_t i = 0; i < n; ++i) {
            long double r[4], su, sg;
            reference(d, &p[3 * i], r, &su, &sg);
            EXPECT_LT(std::fabs(u[1][i] - u[0][i]), claim(prec) * su) << "precision " << prec;
            for (int c = 0; c < 3; ++c)
                EXPECT_LT(std::fabs(g[1][3 * i + c] - g[0][3 * i + c]), claim(prec) * sg) << "precision " << prec;
        }
    }
}
#endif

}  // namespace
