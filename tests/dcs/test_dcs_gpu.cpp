// test_dcs_gpu.cpp -- the CUDA DCS paths against the long-double reference and the CPU: every precision,
// the seed's kernel, odd lattices, several host threads on one device, maps in pieces, ions, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gpu_test.hpp"
#include "test_dcs_reference.hpp"

using namespace dcsref;

namespace {

#define NEED_GPU() QMMM_REQUIRE_GPU_OR_SKIP()

std::vector<double> run_map(const Atoms &a, const qmmm_dcs_lattice &l, const qmmm_dcs_options &o,
                            qmmm_dcs_stats *st = nullptr) {
    std::vector<double> m(points(l), NAN);
    EXPECT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, st), QMMM_SUCCESS) << qmmm_error_message();
    return m;
}

bool same_bits(const std::vector<double> &a, const std::vector<double> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST(DcsGpu, AllPrecisionsAgainstReferenceOddLattice) {
    NEED_GPU();
    const auto l = lattice(-0.4, 0.2, 0.1, 0.31, 131, 19, 9);  // not multiples of the tiles
    const auto a = random_atoms(l, 1500, 21);                   // not a multiple of 256 or 4000
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    const double tol[3] = {1e-13, 2e-5, 2e-5};  // MIXED shares SINGLE's float pair terms
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        qmmm_dcs_stats st{};
        const auto m = run_map(a, l, options(QMMM_BACKEND_CUDA, prec), &st);
        EXPECT_EQ(st.backend, QMMM_BACKEND_CUDA);
        const double e = max_rel_error(m, phi, scale);
        EXPECT_LT(e, tol[prec]) << "precision " << prec;
        std::printf("GPU precision %d: max |err| / sum|q|/r = %.3g\n", prec, e);
    }
    auto o = options(QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE);
    o.kernel = QMMM_DCS_KERNEL_VMD4;
    EXPECT_LT(max_rel_error(run_map(a, l, o), phi, scale), 2e-5) << "VMD4 kernel";
    o.kernel = QMMM_DCS_KERNEL_VMD4_SLICE;
    EXPECT_LT(max_rel_error(run_map(a, l, o), phi, scale), 2e-5) << "VMD4 kernel, seed launches";
}

TEST(DcsGpu, DoubleAgreesWithCpu) {
    NEED_GPU();
    const auto l = lattice(1.0, 2.0, 3.0, 0.5, 40, 33, 17);
    const auto a = random_atoms(l, 3000, 5);
    const auto g = run_map(a, l, options(QMMM_BACKEND_CUDA, QMMM_PRECISION_DOUBLE));
    const auto c = run_map(a, l, options(QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE));
    double worst = 0;
    for (size_t p = 0; p < g.size(); ++p) worst = std::fmax(worst, std::fabs(g[p] - c[p]) / (std::fabs(c[p]) + 1e-3));
    EXPECT_LT(worst, 1e-12);
}

// Same input, any device list or piece size: bitwise the same map.
TEST(DcsGpu, DeviceListedTwiceAndPiecesGiveSameBits) {
    NEED_GPU();
    const auto l = lattice(0, 0, 0, 0.4, 70, 45, 40);
    const auto a = random_atoms(l, 900, 8);
    for (int prec : {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE}) {
        auto o = options(QMMM_BACKEND_CUDA, prec);
        const auto one = run_map(a, l, o);
        const auto again = run_map(a, l, o);
        EXPECT_TRUE(same_bits(one, again)) << "repeat, precision " << prec;
        o.n_devices = 2, o.devices[0] = 0, o.devices[1] = 0;
        qmmm_dcs_stats st{};
        EXPECT_TRUE(same_bits(one, run_map(a, l, o, &st))) << "two threads on device 0, precision " << prec;
        EXPECT_EQ(st.n_workers, 2);
        o.max_device_bytes = 3 * 128 * 48 * (prec == QMMM_PRECISION_SINGLE ? 4 : 8);  // three padded planes
        EXPECT_TRUE(same_bits(one, run_map(a, l, o, &st))) << "pieces, precision " << prec;
        EXPECT_GE(st.n_pieces, 40 / 3);
    }
}

TEST(DcsGpu, IonsSameAsCpu) {
    NEED_GPU();
    const auto l = lattice(-6, -6, -6, 0.5, 25, 23, 27);
    const auto a = random_atoms(l, 40, 13);
    std::vector<double> ions[2];
    for (int b = 0; b < 2; ++b) {
        auto m = run_map(a, l, options(b ? QMMM_BACKEND_CUDA : QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE));
        ions[b].resize(15);
        ASSERT_EQ(qmmm_dcs_place_ions(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), 5, 1.0, 1.0, 3.0, ions[b].data(),
                                      nullptr),
                  QMMM_SUCCESS)
            << qmmm_error_message();
    }
    EXPECT_EQ(ions[0], ions[1]);
}

TEST(DcsGpu, Errors) {
    NEED_GPU();
    const auto l = lattice(0, 0, 0, 0.5, 300, 200, 3);
    const auto a = random_atoms(l, 10, 1);
    std::vector<double> m(points(l));
    auto o = options(QMMM_BACKEND_CUDA, QMMM_PRECISION_DOUBLE);
    o.max_device_bytes = 1000;  // less than one plane
    EXPECT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, nullptr), QMMM_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::strstr(qmmm_error_message(), "one padded plane"), nullptr) << qmmm_error_message();
    o = options(QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE);
    o.kernel = QMMM_DCS_KERNEL_VMD4;
    o.n_devices = 2;  // devices {0, 0}
    EXPECT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, nullptr), QMMM_ERR_UNSUPPORTED);
    // The pool comes back after a release.
    EXPECT_EQ(qmmm_dcs_release(), QMMM_SUCCESS);
    o = options(QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE);
    EXPECT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_dcs_release(), QMMM_SUCCESS);
}
