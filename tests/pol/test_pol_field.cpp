// test_pol_field.cpp -- the pieces of a polarizable-embedding step together, and their signs against each other: the
// QM side's field at the sites from qmmm_field_site_field (electrons w = -1, nuclei w = +Z), the induced dipoles from
// qmmm_pol_solve, and their term in the field (qmmm_field_set_dipoles). The solver's E_pol,ext = -1/2 mu . E_ext must
// equal half the QM side's energy in the dipoles' potential, 1/2 (sum_i U_dip(r_i) - sum_b Z_b U_dip(R_b)), with
// U_dip the change of qmmm_field_eval when the dipoles are attached (an electron's energy; a nucleus' is -Z U).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "qmmm_accel.h"

namespace {

// Polarizable water-like molecules (3 sites, each excluding its molecule) on a 5.5-bohr grid around a cavity of
// 5 bohr at the origin, where the QM region sits.
struct Env {
    int64_t n = 0;
    std::vector<double> xyz, q, alpha;
    std::vector<int64_t> excl;
};

Env environment(unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    Env e;
    for (int i = -2; i <= 2; ++i)
        for (int j = -2; j <= 2; ++j)
            for (int k = -2; k <= 2; ++k) {
                const double c[3] = {5.5 * i + 0.3 * u(g), 5.5 * j + 0.3 * u(g), 5.5 * k + 0.3 * u(g)};
                if (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 25) continue;
                const int64_t first = e.n;
                for (int a = 0; a < 3; ++a) {
                    double d[3] = {u(g), u(g), u(g)};
                    const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                    for (int x = 0; x < 3; ++x) e.xyz.push_back(c[x] + (a == 0 ? 0.0 : 1.8 * d[x] / len));
                    e.q.push_back(a == 0 ? -0.68 : 0.34);
                    e.alpha.push_back(a == 0 ? 5.7 : 2.3);
                    for (int b = 0; b < 3; ++b)
                        if (b != a) e.excl.push_back(first + b);
                    ++e.n;
                }
            }
    return e;
}

qmmm_field charges(const Env &e, int64_t n_nuc, const double *nuc, const double *z) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CPU;
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create_charges(&f, e.n, e.xyz.data(), e.xyz.data() + 1, e.xyz.data() + 2, 3, e.q.data(),
                                        QMMM_SCREEN_NONE, nullptr, nullptr, n_nuc, nuc, z, &o),
              QMMM_SUCCESS)
        << qmmm_error_message();
    return f;
}

}  // namespace

TEST(PolField, InductionEnergyFromTheFieldMatchesTheSolver) {
    const Env env = environment(3);
    ASSERT_GT(env.n, 300);
    // A water-like QM region: three nuclei and ten electrons near them.
    const double nuc[9] = {0, 0, 0.2, 1.4, 0, -0.9, -1.4, 0, -0.9}, z[3] = {8, 1, 1};
    std::mt19937_64 g(4);
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    std::vector<double> el(30);
    for (double &x : el) x = u(g);
    const std::vector<double> w_el(10, -1.0);

    // E_ext at the sites: the electrons' and the nuclei's field (the sites' field of a field without the nuclei, so
    // that no point is on a site).
    qmmm_field sites = charges(env, 0, nullptr, nullptr);
    std::vector<double> phi(env.n), e_el(3 * env.n), e_nuc(3 * env.n), e_ext(3 * env.n);
    ASSERT_EQ(qmmm_field_site_field(sites, 10, el.data(), w_el.data(), phi.data(), e_el.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_site_field(sites, 3, nuc, z, phi.data(), e_nuc.data()), QMMM_SUCCESS);
    for (int64_t i = 0; i < 3 * env.n; ++i) e_ext[i] = e_el[i] + e_nuc[i];

    qmmm_pol p = nullptr;
    qmmm_pol_options po;
    qmmm_pol_options_default(&po);
    po.tolerance = 1e-13;
    ASSERT_EQ(qmmm_pol_create(&p, env.n, env.xyz.data(), env.q.data(), nullptr, 1, env.alpha.data(), 2,
                              env.excl.data(), &po),
              QMMM_SUCCESS)
        << qmmm_error_message();
    std::vector<double> mu(3 * env.n);
    qmmm_pol_stats st;
    ASSERT_EQ(qmmm_pol_solve(p, e_ext.data(), mu.data(), &st), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_GT(std::fabs(st.e_pol_ext), 1e-4);

    // U_dip at the electrons (the QM field, nuclei included, with and without the dipoles) and at the nuclei (the
    // sites' field: no point on a source).
    qmmm_field qm = charges(env, 3, nuc, z);
    std::vector<double> u0(10), u1(10), v0(3), v1(3);
    ASSERT_EQ(qmmm_field_eval(qm, 10, el.data(), u0.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(sites, 3, nuc, v0.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_set_dipoles(qm, env.n, env.xyz.data(), mu.data()), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_set_dipoles(sites, env.n, env.xyz.data(), mu.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(qm, 10, el.data(), u1.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval(sites, 3, nuc, v1.data()), QMMM_SUCCESS);
    long double energy = 0, scale = 0;
    for (int i = 0; i < 10; ++i) energy += (long double)u1[i] - u0[i], scale += std::fabs(u1[i] - u0[i]);
    for (int b = 0; b < 3; ++b) energy -= z[b] * ((long double)v1[b] - v0[b]), scale += z[b] * std::fabs(v1[b] - v0[b]);
    // The differences of U carry U's rounding (~1e-16 |U|, |U| ~ 1-10 hartree) beside the solver's tolerance.
    EXPECT_NEAR(st.e_pol_ext, double(energy / 2), 1e-12 * double(scale) + 1e-14)
        << "E_pol,ext " << st.e_pol_ext << ", from the field " << double(energy / 2);
    std::printf("%lld sites: E_pol,ext %.15g, from the field %.15g, %d iterations\n", static_cast<long long>(env.n),
                st.e_pol_ext, double(energy / 2), st.iterations);
    qmmm_field_destroy(qm);
    qmmm_field_destroy(sites);
    qmmm_pol_destroy(p);
}
