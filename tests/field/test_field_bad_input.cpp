// test_field_bad_input.cpp -- the field's answers to input at the edges: sites without charge, points nearer a site
// than the precision resolves, screening at its limits, counts beyond memory. Each case is the one-line reproducer
// of what went wrong, checked against a value computed here in long double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <unistd.h>

#include "qmmm_accel.h"

namespace {

qmmm_options opts(int precision = QMMM_PRECISION_DOUBLE) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CPU, o.precision = precision;
    return o;
}

void expect_message(const char *fragment) {
    EXPECT_NE(std::strstr(qmmm_error_message(), fragment), nullptr)
        << "message '" << qmmm_error_message() << "' should mention '" << fragment << "'";
}

// sum_m q_m / |p - r_m| - sum_b Z_b / |p - R_b| in long double, skipping zero charges (the reference's own rule).
long double reference(const double *p, int64_t nc, const double *cx, const double *cq, int64_t nn, const double *nx,
                      const double *nz) {
    long double u = 0;
    for (int64_t m = 0; m < nc; ++m) {
        if (cq[m] == 0) continue;
        long double d2 = 0;
        for (int k = 0; k < 3; ++k) d2 += (static_cast<long double>(p[k]) - cx[3 * m + k]) * (static_cast<long double>(p[k]) - cx[3 * m + k]);
        u += cq[m] / std::sqrt(d2);
    }
    for (int64_t b = 0; b < nn; ++b) {
        if (nz[b] == 0) continue;
        long double d2 = 0;
        for (int k = 0; k < 3; ++k) d2 += (static_cast<long double>(p[k]) - nx[3 * b + k]) * (static_cast<long double>(p[k]) - nx[3 * b + k]);
        u -= nz[b] / std::sqrt(d2);
    }
    return u;
}

double tolerance(int precision) { return precision == QMMM_PRECISION_DOUBLE ? 1e-14 : precision == QMMM_PRECISION_MIXED ? 1e-8 : 2e-6; }

}  // namespace

// A point on a cell, charge or nucleus of zero charge has the others' value: a zero charge has no singularity
// (before: QMMM_ERR_SINGULAR).
TEST(FieldBadInput, PointOnAZeroChargeHasTheOthersValue) {
    const double cx[9] = {0, 0, 0, 1, 1, 1, -1, 0.5, 0}, cq[3] = {0, 0.2, -0.3};
    const double nx[6] = {2, 0, 0, 3, 0, 0}, nz[2] = {1, 0};
    const double pts[6] = {0, 0, 0, 3, 0, 0};  // on the zero cell, on the zero nucleus
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        SCOPED_TRACE(prec);
        qmmm_options o = opts(prec);
        qmmm_field f = nullptr;
        ASSERT_EQ(qmmm_field_create(&f, 3, cx, cq, 2, nx, nz, &o), QMMM_SUCCESS) << qmmm_error_message();
        double u[2];
        ASSERT_EQ(qmmm_field_eval(f, 2, pts, u), QMMM_SUCCESS) << qmmm_error_message();
        for (int i = 0; i < 2; ++i) {
            const long double r = reference(pts + 3 * i, 3, cx, cq, 2, nx, nz);
            EXPECT_NEAR(u[i], static_cast<double>(r), tolerance(prec) * std::fabs(static_cast<double>(r))) << i;
        }
        double s = 0;
        ASSERT_EQ(qmmm_field_eval_sum(f, 2, pts, &s), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_NEAR(s, u[0] + u[1], 1e-12);
        double ug[2], g[6];  // the gradient's value path: the same rule
        ASSERT_EQ(qmmm_field_eval_grad(f, 2, pts, ug, g), QMMM_SUCCESS) << qmmm_error_message();
        for (int i = 0; i < 2; ++i) EXPECT_NEAR(ug[i], u[i], tolerance(prec) * std::fabs(u[i]) + 1e-15) << i;
        int64_t n_cells = 0, n_nuclei = 0;
        ASSERT_EQ(qmmm_field_sizes(f, &n_cells, &n_nuclei), QMMM_SUCCESS);
        EXPECT_EQ(n_cells, 3);  // the counts as given
        EXPECT_EQ(n_nuclei, 2);
        EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    }
    // Every charge zero: a field that is 0 everywhere, also on its sites.
    qmmm_options o = opts();
    qmmm_field f = nullptr;
    const double zq[3] = {0, 0, 0}, zz[2] = {0, 0};
    ASSERT_EQ(qmmm_field_create(&f, 3, cx, zq, 2, nx, zz, &o), QMMM_SUCCESS) << qmmm_error_message();
    double u[2] = {1, 1};
    ASSERT_EQ(qmmm_field_eval(f, 2, pts, u), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(u[0], 0.0);
    EXPECT_EQ(u[1], 0.0);
    EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
}

TEST(FieldBadInput, PointOnAZeroPointChargeHasTheOthersValue) {
    const double x[3] = {0, 1, -1}, y[3] = {0, 1, 0.5}, z[3] = {0, 1, 0}, q[3] = {0, 0.2, -0.3};
    const double a[3] = {2, 2, 2}, b[3] = {1.5, 1.5, 1.5}, sigma[3] = {0, 0, 0};  // EXP a = 2: singular unless q = 0
    const double nx[3] = {2, 0, 0}, nz[1] = {1};
    const double p[3] = {0, 0, 0};
    for (int screening : {QMMM_SCREEN_NONE, QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN}) {
        SCOPED_TRACE(screening);
        qmmm_options o = opts();
        qmmm_field f = nullptr;
        ASSERT_EQ(qmmm_field_create_charges(&f, 3, x, y, z, 1, q, screening, screening == QMMM_SCREEN_GAUSSIAN ? sigma : a,
                                            b, 1, nx, nz, &o),
                  QMMM_SUCCESS)
            << qmmm_error_message();
        double u = 0;
        ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS) << qmmm_error_message();
        // The electron's energy: -q / d of each charge (screened: -q (1 - a exp(-b d^2)) / d), -Z / d of the nucleus.
        long double r = -1.0L / 2;
        for (int m = 1; m < 3; ++m) {
            const long double d = std::sqrt(static_cast<long double>(x[m] * x[m] + y[m] * y[m] + z[m] * z[m]));
            const long double s = screening == QMMM_SCREEN_EXP ? 1 - a[m] * std::exp(-b[m] * d * d) : 1;
            r -= q[m] * s / d;
        }
        EXPECT_NEAR(u, static_cast<double>(r), 1e-14);
        double ug = 0, g[3];
        ASSERT_EQ(qmmm_field_eval_grad(f, 1, p, &ug, g), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_NEAR(ug, static_cast<double>(r), 1e-14);
        EXPECT_TRUE(std::isfinite(g[0]) && std::isfinite(g[1]) && std::isfinite(g[2]));
        EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    }
}

// A count of points no array can hold is refused before anything is read or allocated, by every call that takes
// points (before: qmmm_field_eval_sum(n = INT64_MAX) was QMMM_ERR_INTERNAL, "a bug"; eval's 3 n wrapped).
TEST(FieldBadInput, PointCountsBeyondMemory) {
    const double cx[3] = {0, 0, 0}, cq[1] = {0.5};
    qmmm_options o = opts();
    qmmm_field f = nullptr;
    ASSERT_EQ(qmmm_field_create(&f, 1, cx, cq, 0, nullptr, nullptr, &o), QMMM_SUCCESS) << qmmm_error_message();
    const double p[3] = {1, 0, 0}, w[1] = {1};
    double u[1], g[3], s = 0, phi[1], e[3], eg[6];
    for (int64_t n : {INT64_MAX, INT64_MAX / 3 + 1, static_cast<int64_t>(1e15)}) {
        SCOPED_TRACE(n);
        auto refused = [](int status) {
            EXPECT_TRUE(status == QMMM_ERR_INVALID_ARG || status == QMMM_ERR_OUT_OF_MEMORY) << status;
            expect_message("n_points");
            expect_message("GB");
        };
        refused(qmmm_field_eval(f, n, p, u));
        refused(qmmm_field_eval_async(f, n, p, u));
        refused(qmmm_field_eval_sum(f, n, p, &s));
        refused(qmmm_field_eval_sum_async(f, n, p, &s));
        refused(qmmm_field_eval_grad(f, n, p, u, g));
        refused(qmmm_field_eval_grad(f, n, p, nullptr, g));
        refused(qmmm_field_eval_grad_async(f, n, p, u, g));
        refused(qmmm_field_eval_grad_sum(f, n, p, &s, g));
        refused(qmmm_field_site_field(f, n, p, w, phi, e));
        refused(qmmm_field_site_accum_add(f, n, p, w, 1.0));
        refused(qmmm_field_site_field_grad(f, n, p, w, eg));
    }
    // The field is still usable, nothing pending.
    ASSERT_EQ(qmmm_field_eval(f, 1, p, u), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_DOUBLE_EQ(u[0], 0.5);
    EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
}

// Create's memory estimate covers its peak in each precision, nuclei included, and says so before any array is read
// (the arrays here hold one site). Before: 96 bytes a cell or charge whatever the precision (MIXED peaks near 190
// and 220), and nuclei unchecked (2e9 nuclei scanned for 40 s, then a vague out-of-memory).
TEST(FieldBadInput, CreateMemoryEstimatePerPrecisionWithNuclei) {
    const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
    const double xyz[3] = {0, 0, 0}, q[1] = {0.5};
    qmmm_field f = nullptr;
    auto refused_fast = [&](int status, const char *fragment) {
        EXPECT_EQ(status, QMMM_ERR_OUT_OF_MEMORY);
        expect_message(fragment);
        expect_message("GB");
        EXPECT_EQ(f, nullptr);
    };
    // MIXED: 150 bytes a site fit this machine, MIXED's peak (184.5 bytes a cell, 219.3 a charge, measured) does not.
    const int64_t n150 = static_cast<int64_t>(phys / 150);
    qmmm_options mixed = opts(QMMM_PRECISION_MIXED);
    refused_fast(qmmm_field_create(&f, n150, xyz, q, 0, nullptr, nullptr, &mixed), "MIXED precision");
    refused_fast(qmmm_field_create_charges(&f, n150, xyz, xyz + 1, xyz + 2, 1, q, QMMM_SCREEN_NONE, nullptr, nullptr,
                                           0, nullptr, nullptr, &mixed),
                 "n_charges");
    // Nuclei (144.5 bytes each, measured) in any precision, with or without cells.
    const int64_t n100 = static_cast<int64_t>(phys / 100);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        qmmm_options o = opts(prec);
        refused_fast(qmmm_field_create(&f, 0, nullptr, nullptr, n100, xyz, q, &o), "n_nuclei");
        refused_fast(qmmm_field_create(&f, 1, xyz, q, n100, xyz, q, &o), "n_nuclei");
        refused_fast(qmmm_field_create_charges(&f, 1, xyz, xyz + 1, xyz + 2, 1, q, QMMM_SCREEN_NONE, nullptr, nullptr,
                                               n100, xyz, q, &o),
                     "n_nuclei");
    }
}

// EXP screening with a = 1 at a point so near its charge that d^2 leaves the precision's normal range: the term is
// -q (1 - exp(-b d^2)) / d ~ -q b d, computed from d (before: d^2 underflowed to 0 and u = 0 with success; b = 1e300
// at d = 1e-170 is 1e130 hartree). The reference: long double, whose range holds d^2.
TEST(FieldBadInput, ExpScreeningWhereDSquaredUnderflows) {
    struct Case { int precision; double b, d; };
    const Case cases[] = {{QMMM_PRECISION_DOUBLE, 1e300, 1e-170}, {QMMM_PRECISION_DOUBLE, 1e300, 1e-160},
                          {QMMM_PRECISION_DOUBLE, 1e300, 1e-150}, {QMMM_PRECISION_DOUBLE, 1e250, 3e-200},
                          {QMMM_PRECISION_SINGLE, 1e30, 1e-24},   {QMMM_PRECISION_SINGLE, 1e30, 1e-20},
                          {QMMM_PRECISION_SINGLE, 1e30, 1e-15},   {QMMM_PRECISION_MIXED, 1e30, 1e-24}};
    for (const Case &c : cases) {
        SCOPED_TRACE(testing::Message() << "precision " << c.precision << " b " << c.b << " d " << c.d);
        const double x = 0, y = 0, z = 0, q = 0.75, a = 1;
        qmmm_options o = opts(c.precision);
        qmmm_field f = nullptr;
        ASSERT_EQ(qmmm_field_create_charges(&f, 1, &x, &y, &z, 1, &q, QMMM_SCREEN_EXP, &a, &c.b, 0, nullptr, nullptr, &o),
                  QMMM_SUCCESS) << qmmm_error_message();
        for (int axes = 1; axes <= 3; ++axes) {  // along x; in the xy plane; along the diagonal
            const double s = c.d / std::sqrt(static_cast<double>(axes));
            const double p[3] = {s, axes >= 2 ? s : 0.0, axes >= 3 ? s : 0.0};
            long double d2 = 0;
            for (int k = 0; k < 3; ++k) d2 += static_cast<long double>(p[k]) * p[k];
            const long double dl = std::sqrt(d2), ref = -q * -std::expm1(-static_cast<long double>(c.b) * d2) / dl;
            double u = 0;
            ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_NEAR(u, static_cast<double>(ref), 2 * tolerance(c.precision) * std::fabs(static_cast<double>(ref)))
                << axes;
        }
        const double on[3] = {0, 0, 0};  // on the charge: the limit, 0
        double u = 1;
        ASSERT_EQ(qmmm_field_eval(f, 1, on, &u), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_EQ(u, 0.0);
        EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    }
}

// SINGLE rounds coordinates to float: a point at distance d from a cell or charge carries that term's error up to
// about sqrt(3) 2^-23 X / d of it (X: the coordinates' size), the header's statement; a point that float puts on the
// site is recomputed in double. Checked at 1e-2..1e-9 bohr against long double (before: 1e-8 bohr from a cell was
// QMMM_ERR_SINGULAR "within 1e-10 bohr", from a charge NONFINITE "overflow", and with cell_volume set u = 11.3,
// the cube's self-potential, for 5e7, with success).
TEST(FieldBadInput, SingleNearASiteIsTrueToItsStatedError) {
    const double cx[6] = {1.3, 2.7, -0.4, 3.1, 0.2, 1.9}, cq[2] = {0.5, -0.25}, nx[3] = {-1.2, 0.9, 2.2}, nz[1] = {2};
    const double x[2] = {cx[0], cx[3]}, y[2] = {cx[1], cx[4]}, z[2] = {cx[2], cx[5]}, pq[2] = {-cq[0], -cq[1]};
    const double big_x = 3.2;  // the largest coordinate of cells, nuclei and points (no local origin this near 0)
    const double delta = std::sqrt(3.0) * std::ldexp(1.0, -23) * big_x;
    for (int kind = 0; kind < 3; ++kind) {  // cells; cells with cell_volume; point charges (physical -cq)
        SCOPED_TRACE(kind);
        qmmm_options o = opts(QMMM_PRECISION_SINGLE);
        if (kind == 1) o.cell_volume = 0.001;
        qmmm_field f = nullptr;
        ASSERT_EQ(kind < 2 ? qmmm_field_create(&f, 2, cx, cq, 1, nx, nz, &o)
                           : qmmm_field_create_charges(&f, 2, x, y, z, 1, pq, QMMM_SCREEN_NONE, nullptr, nullptr, 1, nx,
                                                       nz, &o),
                  QMMM_SUCCESS) << qmmm_error_message();
        for (int e = 2; e <= 9; ++e) {
            const double d = std::pow(10.0, -e);
            const double p[3] = {cx[0] + d, cx[1], cx[2]};
            SCOPED_TRACE(testing::Message() << "d = " << d);
            double u = 0;
            ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS) << qmmm_error_message();
            const long double ref = reference(p, 2, cx, cq, 1, nx, nz);
            const bool on_in_float = static_cast<float>(p[0]) == static_cast<float>(cx[0]);
            double allowed;
            if (on_in_float) {
                allowed = 1e-12 * std::fabs(static_cast<double>(ref));  // recomputed in double
            } else {
                const double term_rel = d > 2 * delta ? delta / (d - delta) : 3.5;
                allowed = std::fabs(cq[0]) / d * term_rel + 2e-6 * (std::fabs(static_cast<double>(ref)) + 10);
            }
            EXPECT_LE(std::fabs(u - static_cast<double>(ref)), allowed) << "u = " << u << ", ref = " << static_cast<double>(ref);
        }
        // On the cell in double too: the cube's self-potential (kind 1), else SINGULAR naming the cell or charge.
        double u = 0;
        const int s = qmmm_field_eval(f, 1, cx, &u);
        if (kind == 1) {
            ASSERT_EQ(s, QMMM_SUCCESS) << qmmm_error_message();
            const double self = cq[0] * 2.380077363979553 / std::cbrt(0.001);
            const long double rest = reference(cx, 1, cx + 3, cq + 1, 1, nx, nz);
            EXPECT_NEAR(u, self + static_cast<double>(rest), 1e-12 * std::fabs(self));
        } else {
            EXPECT_EQ(s, QMMM_ERR_SINGULAR);
            expect_message(kind == 0 ? "density cell" : "charge 0");
        }
        EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    }
}


// Finite values whose sum leaves double's range (a cell of the largest DOUBLE charge, 1e300, and 400,000 points
// 2e-3 bohr from it: 5e302 hartree each, c/d^3 1.25e308 within range, a sum of 2e308): every call that returns a sum
// says QMMM_ERR_NONFINITE (it returned +Inf with success); the values and the walkers' smaller sums stay good.
TEST(FieldBadInput, FiniteValuesWhoseSumOverflows) {
    const double cell[3] = {0.25, -0.5, 1.0}, q = 1e300, r = 2e-3;
    const int64_t n = 400000;
    std::vector<double> p(3 * n);
    for (int64_t i = 0; i < n; ++i) {  // a spiral over the sphere of radius r about the cell
        const double z = 1 - (2 * i + 1.0) / n, s = std::sqrt(1 - z * z), a = 2.399963229728653 * i;
        p[3 * i] = cell[0] + r * s * std::cos(a), p[3 * i + 1] = cell[1] + r * s * std::sin(a), p[3 * i + 2] = cell[2] + r * z;
    }
    const qmmm_options o = opts();
    qmmm_field f = nullptr;
    ASSERT_EQ(qmmm_field_create(&f, 1, cell, &q, 0, nullptr, nullptr, &o), QMMM_SUCCESS) << qmmm_error_message();
    std::vector<double> u(n), g(3 * n);
    ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int64_t i = 0; i < n; i += 997) EXPECT_NEAR(u[i], q / r, 1e-12 * q / r) << i;
    double sum = 0;
    EXPECT_EQ(qmmm_field_eval_sum(f, n, p.data(), &sum), QMMM_ERR_NONFINITE);
    expect_message("leaves double's range");
    EXPECT_EQ(qmmm_field_eval_sum_async(f, n, p.data(), &sum), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_wait(f), QMMM_ERR_NONFINITE);
    expect_message("qmmm_field_eval_sum_async");
    EXPECT_EQ(qmmm_field_eval_grad_sum(f, n, p.data(), &sum, g.data()), QMMM_ERR_NONFINITE);
    expect_message("leaves double's range");
    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int64_t i = 0; i < n; i += 997)
        for (int k = 0; k < 3; ++k) EXPECT_NEAR(g[3 * i + k], -q * (p[3 * i + k] - cell[k]) / (r * r * r), 1e-10 * q / (r * r));
    // One walker of all the points overflows; two of half each sum to 1e308.
    const int64_t one[2] = {0, n}, two[3] = {0, n / 2, n};
    double sums[2] = {0, 0};
    EXPECT_EQ(qmmm_field_eval_walkers(f, 1, one, p.data(), sums, nullptr), QMMM_ERR_NONFINITE);
    expect_message("walker 0's sum");
    ASSERT_EQ(qmmm_field_eval_walkers(f, 2, two, p.data(), sums, nullptr), QMMM_SUCCESS) << qmmm_error_message();
    for (int w = 0; w < 2; ++w) EXPECT_NEAR(sums[w], (n / 2) * (q / r), 1e-10 * (n / 2) * (q / r));
    // The handle stays usable.
    ASSERT_EQ(qmmm_field_eval_sum(f, n / 2, p.data(), &sum), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_NEAR(sum, (n / 2) * (q / r), 1e-10 * (n / 2) * (q / r));
    qmmm_field_destroy(f);
}
