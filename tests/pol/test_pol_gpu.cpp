// test_pol_gpu.cpp -- the induced-dipole solver with its products on the GPU (backend CUDA) against the CPU solve of
// the same system (which test_pol_solver.cpp holds to a long-double dense reference): every damping mode, tensor and
// isotropic sites, exclusions; the same bits run after run; start_from_mu. Skips visibly without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

struct Handle {
    qmmm_pol p = nullptr;
    ~Handle() {
        if (p) qmmm_pol_destroy(p);
    }
};

// Molecules of 3 sites (a centre and two sites 1.8 bohr away) on a jittered 5.5-bohr grid, each excluding its
// molecule; the first site of a molecule has an anisotropic tensor, the second an isotropic one, the third none.
struct System {
    int64_t n = 0;
    std::vector<double> xyz, q, dip, alpha6;
    std::vector<int64_t> excl;  // width 2
};

System make_system(int n_mol, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    System s;
    s.n = 3 * n_mol;
    const int side = static_cast<int>(std::ceil(std::cbrt(n_mol)));
    for (int m = 0; m < n_mol; ++m) {
        const double c[3] = {5.5 * (m % side) + 0.4 * u(g), 5.5 * ((m / side) % side) + 0.4 * u(g),
                             5.5 * (m / side / side) + 0.4 * u(g)};
        for (int a = 0; a < 3; ++a) {
            double dir[3] = {u(g), u(g), u(g)};
            const double len = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
            for (int d = 0; d < 3; ++d) s.xyz.push_back(c[d] + (a == 0 ? 0.0 : 1.8 * dir[d] / len));
            s.q.push_back(a == 0 ? -0.8 : 0.4);
            for (int d = 0; d < 3; ++d) s.dip.push_back(0.2 * u(g));
            if (a == 0) {
                const double t[6] = {2.5 + 0.3 * u(g), 0.2 * u(g), 0.2 * u(g), 2.5 + 0.3 * u(g), 0.2 * u(g), 2.5};
                s.alpha6.insert(s.alpha6.end(), t, t + 6);
            } else if (a == 1) {
                const double a0 = 1.5 + u(g);
                const double t[6] = {a0, 0, 0, a0, 0, a0};
                s.alpha6.insert(s.alpha6.end(), t, t + 6);
            } else {
                s.alpha6.insert(s.alpha6.end(), 6, 0.0);
            }
            for (int b = 0; b < 3; ++b)
                if (b != a) s.excl.push_back(3 * m + b);
        }
    }
    return s;
}

int solve(const System &s, int backend, int mode, const std::vector<double> &e, std::vector<double> &mu,
          qmmm_pol_stats &st, bool start_from_mu = false) {
    qmmm_pol_options o;
    qmmm_pol_options_default(&o);
    o.backend = backend, o.tolerance = 1e-12;
    o.damp_induced = mode >= 1, o.damp_multipole = mode == 2, o.start_from_mu = start_from_mu;
    Handle h;
    int r = qmmm_pol_create(&h.p, s.n, s.xyz.data(), s.q.data(), s.dip.data(), 6, s.alpha6.data(), 2, s.excl.data(),
                            &o);
    if (r != QMMM_SUCCESS) return r;
    mu.resize(3 * s.n);
    return qmmm_pol_solve(h.p, e.data(), mu.data(), &st);
}

}  // namespace

TEST(PolGpu, MatchesCpuEveryDampingMode) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const System s = make_system(700, 5);  // 2,100 sites, 1,400 polarizable
    std::mt19937_64 g(6);
    std::uniform_real_distribution<double> u(-0.05, 0.05);
    std::vector<double> e(3 * s.n);
    for (double &x : e) x = u(g);
    for (int mode = 0; mode < 3; ++mode) {
        std::vector<double> mc, mg;
        qmmm_pol_stats sc, sg;
        ASSERT_EQ(solve(s, QMMM_BACKEND_CPU, mode, e, mc, sc), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(solve(s, QMMM_BACKEND_CUDA, mode, e, mg, sg), QMMM_SUCCESS) << qmmm_error_message();
        double mx = 0, err = 0;
        for (int64_t i = 0; i < 3 * s.n; ++i)
            mx = std::max(mx, std::fabs(mc[i])), err = std::max(err, std::fabs(mg[i] - mc[i]));
        EXPECT_GT(mx, 0.01);
        // Both solve to a relative residual of 1e-12; the products differ by rounding only.
        EXPECT_LE(err / mx, 1e-10) << "mode " << mode;
        EXPECT_NEAR(sg.e_pol, sc.e_pol, 1e-10 * std::fabs(sc.e_pol)) << "mode " << mode;
        EXPECT_LE(sg.residual, 1e-12);
        EXPECT_LE(std::abs(sg.iterations - sc.iterations), 2) << sg.iterations << " vs " << sc.iterations;
    }
}

TEST(PolGpu, SameBitsRunAfterRunAndStartFromMu) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const System s = make_system(400, 7);
    std::vector<double> e(3 * s.n, 0.01), m1, m2;
    qmmm_pol_stats s1, s2;
    ASSERT_EQ(solve(s, QMMM_BACKEND_CUDA, 1, e, m1, s1), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(solve(s, QMMM_BACKEND_CUDA, 1, e, m2, s2), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(0, std::memcmp(m1.data(), m2.data(), m1.size() * sizeof(double)));
    EXPECT_EQ(s1.e_pol, s2.e_pol);
    // From its own solution a solve stops at once with the same bits.
    m2 = m1;
    ASSERT_EQ(solve(s, QMMM_BACKEND_CUDA, 1, e, m2, s2, true), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(s2.iterations, 0);
    EXPECT_EQ(0, std::memcmp(m1.data(), m2.data(), m1.size() * sizeof(double)));
}
