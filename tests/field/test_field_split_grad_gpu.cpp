// test_field_split_grad_gpu.cpp -- the gradient of a QMMM_METHOD_SPLIT field on the CUDA backend (label gpu; skips
// without a GPU) against the CPU backend's split gradient and the long-double gradient: the water dimer at tolerances
// 1e-5, 1e-7 and 1e-9 and 6,000 MM charges at 1e-7, per component relative to sum |q|/d^2 + sum Z/d^2; points outside
// the region; a point on a nucleus or a charge SINGULAR; the same bits for any batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "field_reference.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"
#include "test_field_split_grad.hpp"
#include "test_field_split_util.hpp"

namespace {

using qmmm_test::System;
using namespace qmmm_split_test;
using namespace qmmm_split_grad_test;

struct Compared {
    double gpu_err = 0, cpu_err = 0, gpu_cpu = 0;
    int split_gpu = -1, split_cpu = -1;
};

// The two backends' gradients at the points: each against long double, and against each other (relative to the
// gradient's scale); both with the split's gradient.
Compared compare(const System &s, qmmm_field gpu, qmmm_field cpu, const std::vector<double> &p) {
    Compared c;
    const int64_t n = (int64_t)p.size() / 3;
    std::vector<double> ug(n), gg(3 * n), uc(n), gc(3 * n);
    EXPECT_EQ(qmmm_field_eval_grad(gpu, n, p.data(), ug.data(), gg.data()), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval_grad(cpu, n, p.data(), uc.data(), gc.data()), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_split_grad_params(gpu, nullptr, nullptr, nullptr, &c.split_gpu), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_split_grad_params(cpu, nullptr, nullptr, nullptr, &c.split_cpu), QMMM_SUCCESS) << qmmm_error_message();
    c.gpu_err = grad_error(s, p, gg).err, c.cpu_err = grad_error(s, p, gc).err;
    for (int64_t i = 0; i < n; ++i) {
        long double r[3], sc;
        reference_grad(s, &p[3 * i], r, &sc);
        for (int k = 0; k < 3; ++k) c.gpu_cpu = std::fmax(c.gpu_cpu, std::fabs(gg[3 * i + k] - gc[3 * i + k]) / (double)sc);
    }
    // A point's gradient does not depend on the batch (a sample, one at a time).
    for (int64_t i = 0; i < n; i += 101) {
        double u1 = 0, g1[3];
        EXPECT_EQ(qmmm_field_eval_grad(gpu, 1, &p[3 * i], &u1, g1), QMMM_SUCCESS) << qmmm_error_message();
        EXPECT_EQ(u1, ug[i]) << "point " << i;
        for (int k = 0; k < 3; ++k) EXPECT_EQ(g1[k], gg[3 * i + k]) << "point " << i;
    }
    return c;
}

class SplitGradGpu : public ::testing::TestWithParam<double> {};

TEST_P(SplitGradGpu, WaterDimerMatchesTheCpu) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const double tol = GetParam();
    double dv = 0, region[6];
    const System sys = qmmm_test::water2_environment(QMMM_SOURCE_DIR, &dv);
    ASSERT_GT(sys.n_cells(), 1000) << qmmm_error_message();
    const double atoms[9] = {-2.9309784486679695, -0.21641143588743048, 0.0, -3.655219765701933, 1.4409218398399704, 0.0,
                             -1.133225293736174,  0.0769345300196391,   0.0};
    ASSERT_EQ(qmmm_region_around(3, atoms, 3.0, region), QMMM_SUCCESS);
    qmmm_field gpu = make_field(sys, dv, QMMM_METHOD_SPLIT, tol, region, 0, QMMM_BACKEND_CUDA);
    ASSERT_NE(gpu, nullptr) << qmmm_error_message();
    qmmm_field cpu = make_field(sys, dv, QMMM_METHOD_SPLIT, tol, region, 0, QMMM_BACKEND_CPU);
    ASSERT_NE(cpu, nullptr) << qmmm_error_message();
    std::vector<double> p = region_points(region, 2000, 44);
    p.insert(p.end(), {region[3] + 1.0, 0.1, 0.2});  // outside: the direct sum
    const Compared c = compare(sys, gpu, cpu, p);
    std::printf("water dimer, tolerance %.0e: gradient max error CUDA %.2e, CPU %.2e; CUDA against CPU %.2e (split %d / %d)\n",
                tol, c.gpu_err, c.cpu_err, c.gpu_cpu, c.split_gpu, c.split_cpu);
    EXPECT_EQ(c.split_gpu, 1);
    EXPECT_EQ(c.split_cpu, 1);
    EXPECT_LE(c.gpu_err, tol);
    // The same formulas on the same tables, up to the grid's direct sums (the GPU's rows ~1e-13, the CPU's ~1e-12 of
    // the value's scale) and rounding: far below the tolerance, down to a floor. The interpolant's derivative
    // multiplies the grid values' rounding by about 1/spacing: the two backends' gradients stay ~1e-10 apart however
    // fine the grid (an H100 measured 9.5e-11 at 1e-9, where both backends' errors were 4.55e-10).
    EXPECT_LE(c.gpu_cpu, std::max(1e-3 * tol, 3e-10));
    qmmm_field_destroy(gpu);
    qmmm_field_destroy(cpu);
}

INSTANTIATE_TEST_SUITE_P(Tolerances, SplitGradGpu, ::testing::Values(1e-5, 1e-7, 1e-9));

// MM charges at 1e-7 (as test_field_split_grad.cpp's), and a point on an inner charge and on a nucleus: SINGULAR.
TEST(SplitGradGpuCharges, MatchesTheCpuAndSingularPoints) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    std::mt19937_64 rng(91);
    std::uniform_real_distribution<double> box(-12, 12), mag(0.3, 0.8);
    System s;
    s.nuc_xyz = {0.0, 0.0, 0.0, 1.43, 1.1, 0.0, -1.43, 1.1, 0.0};
    s.nuc_z = {8, 1, 1};
    std::vector<double> x = {3.2}, y = {0.4}, z = {-0.5}, q = {0.5};
    while (q.size() < 6000) {
        const double r[3] = {box(rng), box(rng), box(rng)};
        const double d = std::hypot(r[0], r[1] - 0.5, r[2]);
        if (d < 4 || d > 12) continue;
        x.push_back(r[0]), y.push_back(r[1]), z.push_back(r[2]), q.push_back((q.size() % 2 ? -1 : 1) * mag(rng));
    }
    for (size_t m = 0; m < q.size(); ++m) s.cell_xyz.insert(s.cell_xyz.end(), {x[m], y[m], z[m]}), s.cell_q.push_back(-q[m]);
    double region[6];
    ASSERT_EQ(qmmm_region_around(3, s.nuc_xyz.data(), 3.0, region), QMMM_SUCCESS);
    qmmm_field f[2] = {nullptr, nullptr};
    for (int b = 0; b < 2; ++b) {
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = b == 0 ? QMMM_BACKEND_CUDA : QMMM_BACKEND_CPU, o.method = QMMM_METHOD_SPLIT, o.tolerance = 1e-7;
        o.region = region;
        ASSERT_EQ(qmmm_field_create_charges(&f[b], (int64_t)q.size(), x.data(), y.data(), z.data(), 1, q.data(),
                                            QMMM_SCREEN_NONE, nullptr, nullptr, 3, s.nuc_xyz.data(), s.nuc_z.data(), &o),
                  QMMM_SUCCESS)
            << qmmm_error_message();
    }
    std::normal_distribution<double> nd(0, 1.2);
    std::vector<double> p;
    while (p.size() < 3 * 600) {
        const double r[3] = {nd(rng), 0.5 + nd(rng), nd(rng)};
        if (split_inside_region(region, r)) p.insert(p.end(), r, r + 3);
    }
    const Compared c = compare(s, f[0], f[1], p);
    std::printf("6,000 MM charges, tolerance 1e-7: gradient max error CUDA %.2e, CPU %.2e; CUDA against CPU %.2e\n",
                c.gpu_err, c.cpu_err, c.gpu_cpu);
    EXPECT_EQ(c.split_gpu, 1);
    EXPECT_LE(c.gpu_err, 1e-7);
    EXPECT_LE(c.gpu_cpu, 1e-10);
    double u1 = 0, g1[3];
    const double on[3] = {x[0], y[0], z[0]};
    EXPECT_EQ(qmmm_field_eval_grad(f[0], 1, on, &u1, g1), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("charge 0"), std::string::npos) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval_grad(f[0], 1, &s.nuc_xyz[3], &u1, g1), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::string(qmmm_error_message()).find("nucleus 1"), std::string::npos) << qmmm_error_message();
    for (auto h : f) qmmm_field_destroy(h);
}

}  // namespace
