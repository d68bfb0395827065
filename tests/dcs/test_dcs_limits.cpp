// test_dcs_limits.cpp -- qmmm_dcs_map never returns success with a NaN or Inf in the map: magnitudes beyond a
// precision are refused with the reason and the limit, points nearer an atom than float resolves are finite, a
// point on an atom follows opt->on_atom, and a huge atom count is refused from an estimate before any read.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <unistd.h>

#include "test_dcs_reference.hpp"

using namespace dcsref;

namespace {

bool all_finite(const std::vector<double> &m) {
    for (double v : m)
        if (!std::isfinite(v)) return false;
    return true;
}

struct Limits : ::testing::TestWithParam<int> {  // the precision
    qmmm_dcs_lattice l = lattice(0, 0, 0, 0.5, 4, 4, 4);
    std::vector<double> m = std::vector<double>(64);
    qmmm_dcs_options o = options(QMMM_BACKEND_CPU, GetParam());
    int map(int64_t n, const double *x, const double *q) { return qmmm_dcs_map(n, x, q, &l, m.data(), &o, nullptr); }
    // Refused with `status` and a message containing `fragment`; on success the map would have to be finite.
    void expect_refused(int status, int64_t n, const double *x, const double *q, const char *fragment) {
        const int s = map(n, x, q);
        EXPECT_EQ(s, status) << "message: " << qmmm_error_message();
        if (s == QMMM_SUCCESS) EXPECT_TRUE(all_finite(m)) << "success with a non-finite map";
        EXPECT_NE(std::strstr(qmmm_error_message(), fragment), nullptr)
            << "message '" << qmmm_error_message() << "' should mention '" << fragment << "'";
    }
};

const double kXyz[6] = {0.05, 0.05, 0.05, 1.05, 0.5, 0.5};

}  // namespace

TEST_P(Limits, ChargesBeyondThePrecisionAreRefusedWithTheLimit) {
    const bool dbl = GetParam() == QMMM_PRECISION_DOUBLE;
    for (double big : {1e39, -1e39, 1e300}) {
        const double q[2] = {big, 1};
        if (dbl && big == 1e300) {
            // DOUBLE takes a charge of 1e300, but not at 0.087 bohr from a point: the bound says so.
            expect_refused(QMMM_ERR_INVALID_ARG, 2, kXyz, q, "beyond the 1e+300 that DOUBLE precision holds");
        } else if (dbl) {
            ASSERT_EQ(map(2, kXyz, q), QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_TRUE(all_finite(m));
        } else {
            expect_refused(QMMM_ERR_INVALID_ARG, 2, kXyz, q, "q: entry 0 is");
            EXPECT_NE(std::strstr(qmmm_error_message(), dbl ? "1e+300" : "1e+30 that SINGLE and MIXED"), nullptr)
                << qmmm_error_message();
        }
    }
    // 1e30 is taken by float precisions far enough from the lattice (1e30 / 0.087 bohr < 1e38 ...) ...
    const double q[2] = {1e30, -1e30};
    ASSERT_EQ(map(2, kXyz, q), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_TRUE(all_finite(m));
    // ... and refused where the bound reaches beyond the float range.
    const double x_near[3] = {0.5 + 1e-9, 0.55, 0.45};
    if (!dbl) expect_refused(QMMM_ERR_INVALID_ARG, 1, x_near, q, "the map may reach 1e+39 hartree/e");
}

TEST_P(Limits, SpacingAndLengthsBeyondThePrecisionAreRefused) {
    const double q[2] = {1, -1};
    l.spacing[0] = 1e308;
    expect_refused(QMMM_ERR_INVALID_ARG, 2, kXyz, q, "lat->spacing[x] = 1e+308 bohr is beyond the");
    l = lattice(0, 0, 0, 0.5, 4, 4, 4);
    l.spacing[2] = 1e150;  // one spacing fits DOUBLE, three of them do not
    expect_refused(QMMM_ERR_INVALID_ARG, 2, kXyz, q, "");
    EXPECT_NE(std::strstr(qmmm_error_message(), "bohr"), nullptr) << qmmm_error_message();
    l = lattice(0, 0, 0, 0.5, 4, 4, 4);
    const double far[6] = {0.05, 0.05, 0.05, 1e200, 0.5, 0.5};
    expect_refused(QMMM_ERR_INVALID_ARG, 2, far, q, "xyz: atom 1 is 1e+200 bohr from the lattice origin along x");
    l.origin[0] = -1e308;  // atom - origin overflows to Inf
    const double far2[6] = {0.05, 0.05, 0.05, 1e308, 0.5, 0.5};
    expect_refused(QMMM_ERR_INVALID_ARG, 2, far2, q, "from the lattice origin along x");
}

// An atom 1e-9 bohr from a point: in float its distance rounds to 0 (the map had Inf there); the point is
// computed in double instead, matching the direct sum.
TEST_P(Limits, AtomNearerThanFloatResolvesGivesTheDirectSum) {
    Atoms a;
    a.xyz = {0.5 + 1e-9, 0.55, 0.45, 1.05, 0.5, 0.5};
    a.q = {1e-3, -1};
    ASSERT_EQ(map(a.n(), a.xyz.data(), a.q.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_TRUE(all_finite(m));
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    EXPECT_NEAR(m[1 + 4 * (1 + 4 * 1)] / static_cast<double>(phi[1 + 4 * (1 + 4 * 1)]), 1.0, 1e-12);
    EXPECT_LT(max_rel_error(m, phi, scale), 1e-5);
}

// A point on an atom: ERROR (default) refuses with SINGULAR; OTHERS gives the other atoms' potential there and
// the direct sum everywhere else.
TEST_P(Limits, PointOnAnAtomFollowsOnAtom) {
    Atoms a;
    a.xyz = {0.5, 0.55, 0.45, 1.05, 0.5, 0.5, 0.5, 0.55, 0.45};  // atoms 0 and 2 on point (1, 1, 1)
    a.q = {1, -0.7, 0.25};
    expect_refused(QMMM_ERR_SINGULAR, 3, a.xyz.data(), a.q.data(), "atom 0 lies on lattice point (1, 1, 1)");
    o.on_atom = QMMM_DCS_ON_ATOM_OTHERS;
    ASSERT_EQ(map(a.n(), a.xyz.data(), a.q.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_TRUE(all_finite(m));
    const int64_t p = 1 + 4 * (1 + 4 * 1);
    const double dx = 0.5 - 1.05, dy = 0.55 - 0.5, dz = 0.45 - 0.5;
    EXPECT_DOUBLE_EQ(m[p], -0.7 / std::sqrt(dx * dx + dy * dy + dz * dz));
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    phi[p] = m[p], scale[p] = 1;
    EXPECT_LT(max_rel_error(m, phi, scale), 1e-5);
    o.on_atom = 7;
    expect_refused(QMMM_ERR_INVALID_ARG, 3, a.xyz.data(), a.q.data(), "opt->on_atom = 7");
}

INSTANTIATE_TEST_SUITE_P(Precisions, Limits,
                         ::testing::Values(QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE));

// 2e9 atoms (where this machine cannot hold their copies) and 1e13 atoms: refused from the estimate within 1 s,
// before any read -- the arrays here hold 2 atoms.
TEST(DcsLimitsMemory, HugeAtomCountIsRefusedBeforeAnyRead) {
    const qmmm_dcs_lattice l = lattice(0, 0, 0, 0.5, 4, 4, 4);
    std::vector<double> m(64);
    const qmmm_dcs_options o = options(QMMM_BACKEND_CPU, QMMM_PRECISION_SINGLE);
    const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
    for (int64_t n : {int64_t{2'000'000'000}, int64_t{10'000'000'000'000}}) {
        if (n * 64.0 <= phys) continue;  // a machine that holds 2e9 atoms
        const auto t0 = std::chrono::steady_clock::now();
        EXPECT_EQ(qmmm_dcs_map(n, kXyz, kXyz, &l, m.data(), &o, nullptr), QMMM_ERR_OUT_OF_MEMORY);
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
        const std::string msg = qmmm_error_message();
        EXPECT_NE(msg.find("GB"), std::string::npos) << msg;
        EXPECT_NE(msg.find("this machine has"), std::string::npos) << msg;
    }
}
