// test_field_site_grad.cpp -- the field gradient at the sites (qmmm_field_site_field_grad, the accumulator's gradient
// sums): against long-double references written from the physical formula, central differences of
// qmmm_field_site_field's E, Newton's third law with point dipoles (the dipoles' forces (mu . grad) E against the
// force their field puts on the points through qmmm_field_eval_grad with qmmm_field_set_dipoles), bit-for-bit
// determinism and bad input. Built twice: test_field_site_grad (backend CPU) and test_field_site_grad_gpu (backend
// CUDA, QMMM_TEST_CUDA; it also compares CUDA with the CPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

using qmmm_test::kBackend;

// The claim per component relative to sum_i |w_i| / d^3 (the header's): DOUBLE and MIXED in double, SINGLE in float
// terms plus the rounding of the offsets to float (3 2^-24 |offset| / d relative, for the nearest pair).
double claim(int precision) { return precision == QMMM_PRECISION_SINGLE ? 3e-5 : 1e-13; }

// Density cells (kind 0) or unscreened MM charges, then nuclei: the sites in the caller's order.
struct Sys {
    bool charges = false;
    std::vector<double> xyz, q, nuc_xyz, nuc_z;
    int64_t n() const { return static_cast<int64_t>(q.size()); }
    int64_t sites() const { return n() + static_cast<int64_t>(nuc_z.size()); }
    const double *site(int64_t k) const { return k < n() ? &xyz[3 * k] : &nuc_xyz[3 * (k - n())]; }
    double charge(int64_t k) const { return k < n() ? (charges ? q[k] : -q[k]) : nuc_z[k - n()]; }  // physical
};

Sys make_sys(bool charges, int64_t m, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-8, 8), chg(-0.8, 0.8), pop(1e-6, 1e-2);
    Sys s;
    s.charges = charges;
    for (int64_t i = 0; i < m; ++i) {
        s.xyz.push_back(pos(g)), s.xyz.push_back(pos(g)), s.xyz.push_back(pos(g));
        s.q.push_back(charges ? chg(g) : pop(g));
    }
    s.nuc_xyz = {0.5, 0.2, -0.3, -1.4, 0.9, 0.4};
    s.nuc_z = {8, 1};
    return s;
}

qmmm_field make(const Sys &s, int precision, int threads = 0, double cell_volume = 0, int screening = 0,
                const double *a = nullptr) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = precision, o.n_threads = threads, o.cell_volume = cell_volume;
    qmmm_field f = nullptr;
    int st;
    if (s.charges)
        st = qmmm_field_create_charges(&f, s.n(), s.xyz.data(), s.xyz.data() + 1, s.xyz.data() + 2, 3, s.q.data(),
                                       screening, a, nullptr, static_cast<int64_t>(s.nuc_z.size()), s.nuc_xyz.data(),
                                       s.nuc_z.data(), &o);
    else
        st = qmmm_field_create(&f, s.n(), s.xyz.data(), s.q.data(), static_cast<int64_t>(s.nuc_z.size()),
                               s.nuc_xyz.data(), s.nuc_z.data(), &o);
    EXPECT_EQ(st, QMMM_SUCCESS) << qmmm_error_message();
    return f;
}

std::vector<double> random_points(int64_t n, unsigned seed, double half = 9) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-half, half);
    std::vector<double> p(3 * n);
    for (double &v : p) v = pos(g);
    return p;
}

std::vector<double> weights(int64_t n) {
    std::vector<double> w(n);
    for (int64_t i = 0; i < n; ++i) w[i] = i % 5 == 0 ? 1.0 + i % 7 : -1.0;
    return w;
}

// Site k's gradient in long double, sum_i w_i (delta_ab / d^3 - 3 d_a d_b / d^5), and the scale sum_i |w_i| / d^3.
void ref_site(const double *r, int64_t n, const double *p, const double *w, long double g[6], long double *scale) {
    const int ab[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int c = 0; c < 6; ++c) g[c] = 0;
    *scale = 0;
    for (int64_t i = 0; i < n; ++i) {
        const long double d[3] = {(long double)r[0] - p[3 * i], (long double)r[1] - p[3 * i + 1],
                                  (long double)r[2] - p[3 * i + 2]};
        const long double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], dd = sqrtl(d2);
        const long double t3 = w[i] / (d2 * dd), t5 = 3 * t3 / d2;
        for (int c = 0; c < 6; ++c) g[c] += (ab[c][0] == ab[c][1] ? t3 : 0) - t5 * d[ab[c][0]] * d[ab[c][1]];
        *scale += fabsl(t3);
    }
}

double worst_vs_reference(const Sys &s, int64_t n, const std::vector<double> &p, const std::vector<double> &w,
                          const std::vector<double> &g) {
    double worst = 0;
    for (int64_t k = 0; k < s.sites(); ++k) {
        long double r[6], sc;
        ref_site(s.site(k), n, p.data(), w.data(), r, &sc);
        for (int c = 0; c < 6; ++c) worst = std::max(worst, double(fabsl(g[6 * k + c] - r[c]) / sc));
    }
    return worst;
}

// Every precision against long double, cells and charges, one chunk of points and several (1,024 a chunk).
TEST(SiteFieldGrad, MatchesLongDoubleEveryPrecision) {
    REQUIRE_BACKEND();
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED})
        for (bool charges : {false, true})
            for (int64_t n : {int64_t{40}, int64_t{2500}}) {
                const Sys s = make_sys(charges, n > 100 ? 300 : 1500, 20 + charges);
                qmmm_field f = make(s, prec);
                const std::vector<double> p = random_points(n, 9), w = weights(n);
                std::vector<double> g(6 * s.sites());
                ASSERT_EQ(qmmm_field_site_field_grad(f, n, p.data(), w.data(), g.data()), QMMM_SUCCESS)
                    << qmmm_error_message();
                const double worst = worst_vs_reference(s, n, p, w, g);
                EXPECT_LE(worst, claim(prec)) << "precision " << prec << " charges " << charges << " n " << n;
                std::printf("field gradient vs long double, precision %d, %s, %lld sites, %lld points: %.2e\n", prec,
                            charges ? "charges" : "cells", static_cast<long long>(s.sites()),
                            static_cast<long long>(n), worst);
                qmmm_field_destroy(f);
            }
}

// Central differences of qmmm_field_site_field's E: moving site k by h along b is moving every point by -h, so
// dE_a/dR_b = (E_a(points - h e_b) - E_a(points + h e_b)) / (2 h) + O(h^2). Also the trace vanishes (div E = 0
// away from the points).
TEST(SiteFieldGrad, CentralDifferencesOfTheSiteField) {
    REQUIRE_BACKEND();
    const Sys s = make_sys(true, 200, 30);
    qmmm_field f = make(s, QMMM_PRECISION_DOUBLE);
    const int64_t n = 25, m = s.sites();
    const std::vector<double> p = random_points(n, 31), w = weights(n);
    std::vector<double> g(6 * m), phi(m), ep(3 * m), em(3 * m);
    ASSERT_EQ(qmmm_field_site_field_grad(f, n, p.data(), w.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    const double h = 1e-4;
    const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};  // (a, b) -> xx xy xz yy yz zz
    double worst = 0, worst_trace = 0;
    for (int b = 0; b < 3; ++b) {
        std::vector<double> pm = p, pp = p;
        for (int64_t i = 0; i < n; ++i) pm[3 * i + b] -= h, pp[3 * i + b] += h;
        ASSERT_EQ(qmmm_field_site_field(f, n, pm.data(), w.data(), phi.data(), em.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_site_field(f, n, pp.data(), w.data(), phi.data(), ep.data()), QMMM_SUCCESS);
        for (int64_t k = 0; k < m; ++k) {
            long double r[6], sc;
            ref_site(s.site(k), n, p.data(), w.data(), r, &sc);
            for (int a = 0; a < 3; ++a) {
                const double fd = (em[3 * k + a] - ep[3 * k + a]) / (2 * h);
                worst = std::max(worst, double(std::fabs(g[6 * k + idx[a][b]] - fd) / sc));
            }
        }
    }
    for (int64_t k = 0; k < m; ++k) {
        long double r[6], sc;
        ref_site(s.site(k), n, p.data(), w.data(), r, &sc);
        worst_trace = std::max(worst_trace, double(std::fabs(g[6 * k] + g[6 * k + 3] + g[6 * k + 5]) / sc));
    }
    EXPECT_LE(worst, 1e-6);  // h^2 times the third derivative's scale (sum |w|/d^5, d >~ 0.1 bohr here)
    EXPECT_LE(worst_trace, 1e-14);
    std::printf("field gradient vs central differences of E (h = %g): %.2e; trace %.2e\n", h, worst, worst_trace);
    qmmm_field_destroy(f);
}

// Newton's third law with dipoles: the charges carry point dipoles mu_k (qmmm_field_set_dipoles); the force on
// site k is Q_k E_k + (mu_k . grad) E_k, on point i w_i dU/dr_i (U with the charges' and the dipoles' terms).
// Their sum vanishes; also the dipoles' part alone (a field of zero charges with the same dipoles).
TEST(SiteFieldGrad, NewtonsThirdLawWithDipoles) {
    REQUIRE_BACKEND();
    for (bool zero_charges : {false, true}) {
        Sys s = make_sys(true, 400, 40);
        if (zero_charges) std::fill(s.q.begin(), s.q.end(), 0.0);
        qmmm_field f = make(s, QMMM_PRECISION_DOUBLE);
        const int64_t n = 30, m = s.sites(), nq = s.n();
        std::mt19937_64 gen(41);
        std::uniform_real_distribution<double> md(-0.5, 0.5);
        std::vector<double> mu(3 * nq);
        for (double &v : mu) v = md(gen);
        ASSERT_EQ(qmmm_field_set_dipoles(f, nq, s.xyz.data(), mu.data()), QMMM_SUCCESS) << qmmm_error_message();
        const std::vector<double> p = random_points(n, 42, 7);
        std::vector<double> w(n, -1.0), u(n), gp(3 * n), phi(m), e(3 * m), g(6 * m);
        w[0] = 8, w[1] = 1;
        ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), gp.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_site_field(f, n, p.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_site_field_grad(f, n, p.data(), w.data(), g.data()), QMMM_SUCCESS);
        const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
        long double tot[3] = {0, 0, 0}, mag = 0;
        for (int64_t k = 0; k < m; ++k)
            for (int a = 0; a < 3; ++a) {
                long double fk = (long double)s.charge(k) * e[3 * k + a];
                if (k < nq)
                    for (int b = 0; b < 3; ++b) fk += (long double)mu[3 * k + b] * g[6 * k + idx[a][b]];
                tot[a] += fk, mag += fabsl(fk);
            }
        for (int64_t i = 0; i < n; ++i)
            for (int a = 0; a < 3; ++a) tot[a] += w[i] * gp[3 * i + a], mag += fabsl(w[i] * gp[3 * i + a]);
        for (int a = 0; a < 3; ++a)
            EXPECT_LE(double(fabsl(tot[a]) / mag), 1e-14) << "zero charges " << zero_charges << " axis " << a;
        std::printf("Newton's third law with dipoles%s: |sum| / sum |F| = %.2e %.2e %.2e\n",
                    zero_charges ? " (dipoles only)" : "", double(fabsl(tot[0]) / mag), double(fabsl(tot[1]) / mag),
                    double(fabsl(tot[2]) / mag));
        qmmm_field_destroy(f);
    }
}

// The same bits with 1 and 3 threads, and the accumulator's sums are weight * the plain call's values in call order.
TEST(SiteFieldGrad, BitwiseAcrossThreadsAndTheAccumulator) {
    REQUIRE_BACKEND();
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE}) {
        const Sys s = make_sys(false, 3000, 50);
        const int64_t n = 300, m = s.sites();
        const std::vector<double> p = random_points(n, 51), w = weights(n);
        std::vector<double> g1(6 * m), g3(6 * m);
        qmmm_field f1 = make(s, prec, 1), f3 = make(s, prec, 3);
        ASSERT_EQ(qmmm_field_site_field_grad(f1, n, p.data(), w.data(), g1.data()), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_site_field_grad(f3, n, p.data(), w.data(), g3.data()), QMMM_SUCCESS);
        EXPECT_EQ(0, std::memcmp(g1.data(), g3.data(), 6 * m * 8)) << "precision " << prec;

        // read_grad before the option: refused; with it: three adds against the host's sums of the plain values
        std::vector<double> acc(6 * m, 0.0), got(6 * m), phi(m), e(3 * m), gk(6 * m);
        EXPECT_EQ(qmmm_field_site_accum_read_grad(f3, got.data()), QMMM_ERR_INVALID_ARG);
        ASSERT_EQ(qmmm_field_site_accum_set_grad(f3, 1), QMMM_SUCCESS) << qmmm_error_message();
        const double wt[3] = {1.0, 0.5, 2.25};
        for (int c = 0; c < 3; ++c) {
            const std::vector<double> pc = random_points(n, 60 + c);
            ASSERT_EQ(qmmm_field_site_field_grad(f1, n, pc.data(), w.data(), gk.data()), QMMM_SUCCESS);
            for (int64_t k = 0; k < 6 * m; ++k) {
                volatile double prod = wt[c] * gk[k];  // rounded before the sum, as the library adds
                acc[k] += prod;
            }
            ASSERT_EQ(qmmm_field_site_accum_add(f3, n, pc.data(), w.data(), wt[c]), QMMM_SUCCESS)
                << qmmm_error_message();
        }
        // a failing add (a point on a nucleus) leaves both sums as they were
        const double wb = -1;
        EXPECT_EQ(qmmm_field_site_accum_add(f3, 1, s.nuc_xyz.data(), &wb, 1.0), QMMM_ERR_SINGULAR);
        double wsum = 0;
        int64_t calls = 0;
        ASSERT_EQ(qmmm_field_site_accum_read(f3, phi.data(), e.data(), &wsum, &calls), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_site_accum_read_grad(f3, got.data()), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_EQ(calls, 3);
        EXPECT_EQ(wsum, 3.75);
        EXPECT_EQ(0, std::memcmp(got.data(), acc.data(), 6 * m * 8)) << "precision " << prec;
        ASSERT_EQ(qmmm_field_site_accum_reset(f3), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_site_accum_read_grad(f3, got.data()), QMMM_SUCCESS);
        EXPECT_EQ(got[0], 0.0);
        EXPECT_EQ(got[6 * m - 1], 0.0);
        ASSERT_EQ(qmmm_field_site_accum_set_grad(f3, 0), QMMM_SUCCESS);
        EXPECT_EQ(qmmm_field_site_accum_read_grad(f3, got.data()), QMMM_ERR_INVALID_ARG);
        qmmm_field_destroy(f1), qmmm_field_destroy(f3);
    }
}

// SINGLE: a point 1e-8 bohr from a site, which float puts on it, is recomputed in double (plain call and
// accumulator); a point on a cell centre with a cell volume adds nothing to that cell.
TEST(SiteFieldGrad, NearASiteAndOnACellCentre) {
    REQUIRE_BACKEND();
    const Sys s = make_sys(true, 50, 70);
    const int64_t m = s.sites();
    std::vector<double> p = {s.xyz[0] + 1e-8, s.xyz[1], s.xyz[2], 3.0, -2.0, 1.0}, w = {-1.0, -1.0};
    std::vector<double> gs(6 * m), gd(6 * m);
    qmmm_field fs = make(s, QMMM_PRECISION_SINGLE), fd = make(s, QMMM_PRECISION_DOUBLE);
    ASSERT_EQ(qmmm_field_site_field_grad(fs, 2, p.data(), w.data(), gs.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_site_field_grad(fd, 2, p.data(), w.data(), gd.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int c = 0; c < 6; ++c) EXPECT_NEAR(gs[c], gd[c], 1e-12 * std::fabs(gd[0])) << c;  // site 0: 1e24 scale
    ASSERT_EQ(qmmm_field_site_accum_set_grad(fs, 1), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_site_accum_add(fs, 2, p.data(), w.data(), 1.0), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_site_accum_read_grad(fs, gs.data()), QMMM_SUCCESS);
    for (int c = 0; c < 6; ++c) EXPECT_NEAR(gs[c], gd[c], 1e-12 * std::fabs(gd[0])) << c;
    // ... and its phi and E, recomputed in double too (CUDA: added on the device from the host's values)
    std::vector<double> phs(m), es(3 * m), phd(m), ed(3 * m);
    ASSERT_EQ(qmmm_field_site_accum_read(fs, phs.data(), es.data(), nullptr, nullptr), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_site_field(fd, 2, p.data(), w.data(), phd.data(), ed.data()), QMMM_SUCCESS);
    EXPECT_NEAR(phs[0], phd[0], 1e-12 * std::fabs(phd[0]));
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(es[c], ed[c], 1e-12 * std::fabs(ed[0])) << c;
    qmmm_field_destroy(fs), qmmm_field_destroy(fd);

    const Sys c = make_sys(false, 20, 71);
    qmmm_field f = make(c, QMMM_PRECISION_DOUBLE, 0, 0.125);
    std::vector<double> on = {c.xyz[6], c.xyz[7], c.xyz[8]}, g(6 * c.sites()), gref(6 * c.sites());
    const double w1 = -1;
    ASSERT_EQ(qmmm_field_site_field_grad(f, 1, on.data(), &w1, g.data()), QMMM_SUCCESS) << qmmm_error_message();
    for (int k = 0; k < 6; ++k) EXPECT_EQ(g[6 * 2 + k], 0.0);
    long double r[6], sc;
    ref_site(c.site(5), 1, on.data(), &w1, r, &sc);
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(g[6 * 5 + k], double(r[k]), 1e-14 * double(sc));
    qmmm_field_destroy(f);
}

TEST(SiteFieldGrad, BadInput) {
    REQUIRE_BACKEND();
    const Sys s = make_sys(true, 10, 80);
    qmmm_field f = make(s, QMMM_PRECISION_DOUBLE);
    double p[3] = {1, 2, 3}, w = -1, g[6 * 12];
    EXPECT_EQ(qmmm_field_site_field_grad(nullptr, 1, p, &w, g), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_field_site_field_grad(f, -1, p, &w, g), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, nullptr, &w, g), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, p, nullptr, g), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, p, &w, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_site_accum_read_grad(f, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_site_accum_set_grad(nullptr, 1), QMMM_ERR_BAD_HANDLE);
    double nanp[3] = {1, NAN, 3}, nanw = NAN, big = 1e301;
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, nanp, &w, g), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, p, &nanw, g), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, p, &big, g), QMMM_ERR_INVALID_ARG);
    // on a charge, on a nucleus: SINGULAR, named
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, &s.xyz[3], &w, g), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "charge 1"), nullptr) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, s.nuc_xyz.data() + 3, &w, g), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "nucleus 1"), nullptr) << qmmm_error_message();
    // no points: zeros
    g[0] = 7;
    EXPECT_EQ(qmmm_field_site_field_grad(f, 0, nullptr, nullptr, g), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(g[0], 0.0);
    // a pending asynchronous evaluation: BUSY
    double u, gp[3];
    ASSERT_EQ(qmmm_field_eval_grad_async(f, 1, p, &u, gp), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, p, &w, g), QMMM_ERR_BUSY);
    EXPECT_EQ(qmmm_field_site_accum_set_grad(f, 1), QMMM_ERR_BUSY);
    ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS);
    qmmm_field_destroy(f);
    // screened charges: no gradient yet, said so (the call and the accumulator's option)
    std::vector<double> a(s.n(), 0.0);
    a[2] = 0.7;
    f = make(s, QMMM_PRECISION_DOUBLE, 0, 0, QMMM_SCREEN_GAUSSIAN, a.data());
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, p, &w, g), QMMM_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(qmmm_error_message(), "screened"), nullptr) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_site_accum_set_grad(f, 1), QMMM_ERR_UNSUPPORTED);
    EXPECT_EQ(qmmm_field_site_accum_set_grad(f, 0), QMMM_SUCCESS);
    qmmm_field_destroy(f);
    // a Gaussian screening with every width 0 is plain charges: supported
    std::fill(a.begin(), a.end(), 0.0);
    f = make(s, QMMM_PRECISION_DOUBLE, 0, 0, QMMM_SCREEN_GAUSSIAN, a.data());
    EXPECT_EQ(qmmm_field_site_field_grad(f, 1, p, &w, g), QMMM_SUCCESS) << qmmm_error_message();
    qmmm_field_destroy(f);
}

#ifdef QMMM_TEST_CUDA
// CUDA against the CPU (DOUBLE), every precision, cells and charges; repeated GPU calls give the same bits.
TEST(SiteFieldGradGpu, MatchesTheCpu) {
    REQUIRE_BACKEND();
    for (bool charges : {false, true})
        for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
            const Sys s = make_sys(charges, 20000, 90);
            qmmm_options o;
            qmmm_options_default(&o);
            o.backend = QMMM_BACKEND_CPU, o.precision = QMMM_PRECISION_DOUBLE;
            qmmm_field fc = nullptr, fg = make(s, prec);
            if (charges)
                ASSERT_EQ(qmmm_field_create_charges(&fc, s.n(), s.xyz.data(), s.xyz.data() + 1, s.xyz.data() + 2, 3,
                                                    s.q.data(), 0, nullptr, nullptr, 2, s.nuc_xyz.data(),
                                                    s.nuc_z.data(), &o), QMMM_SUCCESS);
            else
                ASSERT_EQ(qmmm_field_create(&fc, s.n(), s.xyz.data(), s.q.data(), 2, s.nuc_xyz.data(), s.nuc_z.data(),
                                            &o), QMMM_SUCCESS);
            const int64_t n = 2000, m = s.sites();
            const std::vector<double> p = random_points(n, 92), w = weights(n);
            std::vector<double> gc(6 * m), gg(6 * m), g2(6 * m);
            ASSERT_EQ(qmmm_field_site_field_grad(fc, n, p.data(), w.data(), gc.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_site_field_grad(fg, n, p.data(), w.data(), gg.data()), QMMM_SUCCESS)
                << qmmm_error_message();
            EXPECT_LE(worst_vs_reference(s, n, p, w, gg), claim(prec)) << "precision " << prec;
            long double r[6], sc = 0;
            for (int64_t k = 0; k < 6 * m; ++k) {
                if (k % 6 == 0) ref_site(s.site(k / 6), n, p.data(), w.data(), r, &sc);
                ASSERT_NEAR(gg[k], gc[k], claim(prec) * double(sc)) << k;
            }
            ASSERT_EQ(qmmm_field_site_field_grad(fg, n, p.data(), w.data(), g2.data()), QMMM_SUCCESS);
            EXPECT_EQ(0, std::memcmp(gg.data(), g2.data(), 6 * m * 8));
            // the accumulator on the device: one add, weight 2, is 2 * the plain call's bits
            ASSERT_EQ(qmmm_field_site_accum_set_grad(fg, 1), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_site_accum_add(fg, n, p.data(), w.data(), 2.0), QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_site_accum_read_grad(fg, g2.data()), QMMM_SUCCESS);
            for (int64_t k = 0; k < 6 * m; ++k) ASSERT_EQ(g2[k], 2.0 * gg[k]) << k;
            qmmm_field_destroy(fc), qmmm_field_destroy(fg);
        }
}
#endif

}  // namespace
