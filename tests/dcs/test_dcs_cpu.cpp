// test_dcs_cpu.cpp -- the CPU DCS map against closed forms and a long-double reference; ion placement
// against a brute-force search.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "dcs_claims.hpp"
#include "test_dcs_reference.hpp"

using namespace dcsref;

namespace {

std::vector<double> run_map(const Atoms &a, const qmmm_dcs_lattice &l, const qmmm_dcs_options &o) {
    std::vector<double> m(points(l), std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, nullptr), QMMM_SUCCESS)
        << qmmm_error_message();
    return m;
}

}  // namespace

// One charge: the map is q/r to the claim (dcs_claims.hpp; normwise = relative here).
TEST(DcsCpu, SingleChargeIsQOverR) {
    const auto l = lattice(-2.0, -1.5, -1.0, 0.37, 11, 9, 7);
    Atoms a{{0.123, 0.217, 0.051}, {-1.7}};
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        const auto m = run_map(a, l, options(QMMM_BACKEND_CPU, prec));
        const auto bound = claimed_bound(a, l, prec);
        double worst = 0;
        for (int64_t k = 0; k < l.count[2]; ++k)
            for (int64_t j = 0; j < l.count[1]; ++j)
                for (int64_t i = 0; i < l.count[0]; ++i) {
                    const double dx = l.origin[0] + i * l.spacing[0] - a.xyz[0],
                                 dy = l.origin[1] + j * l.spacing[1] - a.xyz[1],
                                 dz = l.origin[2] + k * l.spacing[2] - a.xyz[2];
                    const double exact = a.q[0] / std::sqrt(dx * dx + dy * dy + dz * dz);
                    const int64_t p = i + 11 * (j + 9 * k);
                    worst = std::fmax(worst, std::fabs(m[p] - exact) / std::fabs(exact) / bound[p]);
                }
        EXPECT_LT(worst, 1.0) << "precision " << prec << ": max error / claim";
    }
}

// Far from a dipole p = q d the potential tends to p.r / r^3; the exact two-charge sum differs from it
// by O((d/r)^2), and from the reference by rounding only.
TEST(DcsCpu, DipoleFarFieldAndExactSum) {
    const double q = 0.8, d = 0.2;
    Atoms a{{0.01, 0.02, -d / 2, 0.01, 0.02, d / 2}, {-q, q}};
    const auto l = lattice(-30.0, -30.0, -30.0, 6.0, 11, 10, 12);
    const auto m = run_map(a, l, options(QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE));
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    EXPECT_LT(max_rel_error(m, phi, scale), 1e-15);
    int checked = 0;
    for (int64_t p = 0; p < points(l); ++p) {
        const int64_t i = p % 11, j = (p / 11) % 10, k = p / 110;
        const double x = l.origin[0] + i * l.spacing[0] - 0.01, y = l.origin[1] + j * l.spacing[1] - 0.02,
                     z = l.origin[2] + k * l.spacing[2];
        const double r = std::sqrt(x * x + y * y + z * z);
        if (r < 15) continue;
        const double dip = q * d * z / (r * r * r);
        EXPECT_NEAR(m[p], dip, 3 * q * d * (d / r) * (d / r) / (r * r) + 1e-15) << "point " << p;
        ++checked;
    }
    EXPECT_GT(checked, 100);
}

TEST(DcsCpu, RandomChargesOddLatticeAllPrecisions) {
    const auto l = lattice(0.3, -0.7, 1.1, 0.41, 13, 7, 5);
    const auto a = random_atoms(l, 700, 7);
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        const auto m = run_map(a, l, options(QMMM_BACKEND_CPU, prec));
        const double e = max_rel_error(m, phi, scale);
        const double ratio = max_claim_ratio(m, phi, scale, claimed_bound(a, l, prec));
        EXPECT_LT(ratio, 1.0) << "precision " << prec << ": max |err| / sum|q|/r = " << e;
        RecordProperty("max_rel_error_precision_" + std::to_string(prec), std::to_string(e));
        std::printf("CPU precision %d: max |err| / sum|q|/r = %.3g (%.2f of the claim)\n", prec, e, ratio);
    }
}

// MIXED's claim: float partial sums over blocks of 256 atoms added in double, so its summation error does not
// grow with the atom count, where SINGLE's float sum does (~u sqrt(n)). 50,000 same-sign charges around a
// small lattice (no cancellation, no atom near a point): measured SINGLE 8.4e-6, MIXED 3.8e-8, DOUBLE 1.7e-14.
TEST(DcsCpu, MixedSumErrorDoesNotGrowWithAtomCount) {
    const auto l = lattice(-1.0, -1.0, -1.0, 0.5, 5, 4, 4);
    const auto a = same_sign_cloud(50000, 3);
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    const auto factor = pair_term_factor(a, l);
    double e[3] = {};
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        const auto m = run_map(a, l, options(QMMM_BACKEND_CPU, prec));
        e[prec] = max_rel_error(m, phi, scale);
        const auto bound = claimed_bound(a.n(), factor, prec);
        EXPECT_LT(max_claim_ratio(m, phi, scale, bound), 1.0) << "precision " << prec << ": " << e[prec];
    }
    std::printf("50,000 same-sign atoms, max |err| / sum|q|/r: double %.3g, single %.3g, mixed %.3g\n", e[0], e[1], e[2]);
    // The case must show SINGLE's summation error (its claim grows with n), or it would not test MIXED's.
    EXPECT_LT(e[QMMM_PRECISION_MIXED], e[QMMM_PRECISION_SINGLE] / 10);
}

TEST(DcsCpu, BitwiseSameForAnyThreadCount) {
    const auto l = lattice(0, 0, 0, 0.5, 17, 6, 4);
    const auto a = random_atoms(l, 600, 3);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        auto o = options(QMMM_BACKEND_CPU, prec);
        o.n_threads = 1;
        const auto m1 = run_map(a, l, o);
        o.n_threads = 2;
        const auto m2 = run_map(a, l, o);
        o.n_threads = 3;
        const auto m3 = run_map(a, l, o);
        EXPECT_EQ(std::memcmp(m1.data(), m2.data(), m1.size() * 8), 0);
        EXPECT_EQ(std::memcmp(m1.data(), m3.data(), m1.size() * 8), 0);
    }
}

TEST(DcsCpu, StatsAndProgress) {
    const auto l = lattice(0, 0, 0, 0.5, 8, 8, 8);
    const auto a = random_atoms(l, 50, 5);
    auto o = options(QMMM_BACKEND_CPU, QMMM_PRECISION_SINGLE);
    int64_t last = -1;
    o.progress = [](int64_t done, int64_t total, void *u) -> int {
        *static_cast<int64_t *>(u) = done;
        return done > total;
    };
    o.progress_user = &last;
    qmmm_dcs_stats st{};
    std::vector<double> m(points(l));
    ASSERT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, &st), QMMM_SUCCESS);
    EXPECT_EQ(st.backend, QMMM_BACKEND_CPU);
    EXPECT_EQ(last, 8);
    EXPECT_GE(st.n_pieces, 1);
}

// Brute force: every point, distance to every atom and ion, potential recomputed from scratch.
TEST(DcsCpu, IonPlacementMatchesBruteForce) {
    const auto l = lattice(-4, -4, -4, 0.5, 17, 15, 19);
    Atoms a{{0.1, 0.2, 0.3, 1.6, -0.4, 0.2, -1.2, 0.9, -0.8}, {-1.0, -0.6, 0.3}};
    std::vector<double> m(points(l));
    auto o = options(QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE);
    ASSERT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, nullptr), QMMM_SUCCESS);
    const int n_ions = 4;
    const double qi = 1.0, dmin_a = 1.3, dmin_i = 2.1;
    std::vector<double> ions(3 * n_ions), energy(n_ions);
    ASSERT_EQ(qmmm_dcs_place_ions(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), n_ions, qi, dmin_a, dmin_i,
                                  ions.data(), energy.data()),
              QMMM_SUCCESS)
        << qmmm_error_message();
    std::vector<double> placed;
    for (int n = 0; n < n_ions; ++n) {
        long double best = INFINITY;
        double bx = 0, by = 0, bz = 0;
        for (int64_t k = 0; k < l.count[2]; ++k)
            for (int64_t j = 0; j < l.count[1]; ++j)
                for (int64_t i = 0; i < l.count[0]; ++i) {
                    const double x = l.origin[0] + i * l.spacing[0], y = l.origin[1] + j * l.spacing[1],
                                 z = l.origin[2] + k * l.spacing[2];
                    long double phi = 0;
                    bool ok = true;
                    auto add = [&](const double *c, double q, double dmin) {
                        const double r = std::sqrt((x - c[0]) * (x - c[0]) + (y - c[1]) * (y - c[1]) +
                                                   (z - c[2]) * (z - c[2]));
                        if (r < dmin) ok = false;
                        else phi += q / (long double)r;
                    };
                    for (int b = 0; b < a.n(); ++b) add(&a.xyz[3 * b], a.q[b], dmin_a);
                    for (size_t b = 0; b < placed.size() / 3; ++b) add(&placed[3 * b], qi, dmin_i);
                    if (ok && qi * phi < best - 1e-12) best = qi * phi, bx = x, by = y, bz = z;
                }
        EXPECT_NEAR(ions[3 * n], bx, 1e-12) << "ion " << n;
        EXPECT_NEAR(ions[3 * n + 1], by, 1e-12) << "ion " << n;
        EXPECT_NEAR(ions[3 * n + 2], bz, 1e-12) << "ion " << n;
        EXPECT_NEAR(energy[n], static_cast<double>(best), 1e-12) << "ion " << n;
        placed.insert(placed.end(), {bx, by, bz});
    }
    // An anion goes to the maximum instead.
    std::vector<double> m2(points(l));
    ASSERT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m2.data(), &o, nullptr), QMMM_SUCCESS);
    double best = -INFINITY;
    for (int64_t p = 0; p < points(l); ++p) {
        const int64_t i = p % l.count[0], j = (p / l.count[0]) % l.count[1], k = p / (l.count[0] * l.count[1]);
        const double x = l.origin[0] + i * l.spacing[0], y = l.origin[1] + j * l.spacing[1],
                     z = l.origin[2] + k * l.spacing[2];
        bool ok = true;
        for (int b = 0; b < a.n(); ++b)
            ok &= std::hypot(x - a.xyz[3 * b], y - a.xyz[3 * b + 1], z - a.xyz[3 * b + 2]) >= dmin_a;
        if (ok) best = std::fmax(best, m2[p]);
    }
    double anion[3], e_an;
    ASSERT_EQ(qmmm_dcs_place_ions(a.n(), a.xyz.data(), a.q.data(), &l, m2.data(), 1, -1.0, dmin_a, dmin_i, anion, &e_an),
              QMMM_SUCCESS);
    EXPECT_EQ(e_an, -best);  // an anion goes to the highest potential
}
