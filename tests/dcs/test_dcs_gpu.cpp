// test_dcs_gpu.cpp -- the CUDA DCS paths against the long-double reference and the CPU: every precision,
// odd lattices, several host threads on one device, maps in pieces, ions, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "dcs_claims.hpp"
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
    // The claims of qmmm_accel_dcs.h, point by point (dcs_claims.hpp).
    const auto factor = pair_term_factor(a, l);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        qmmm_dcs_stats st{};
        const auto m = run_map(a, l, options(QMMM_BACKEND_CUDA, prec), &st);
        EXPECT_EQ(st.backend, QMMM_BACKEND_CUDA);
        const double e = max_rel_error(m, phi, scale);
        const double ratio = max_claim_ratio(m, phi, scale, claimed_bound(a.n(), factor, prec));
        EXPECT_LT(ratio, 1.0) << "precision " << prec << ": max |err| / sum|q|/r = " << e;
        std::printf("GPU precision %d: max |err| / sum|q|/r = %.3g (%.2f of the claim)\n", prec, e, ratio);
    }
}

// MIXED's claim on the GPU: no growth of the summation error with the atom count (tiles of 256 atoms summed in
// float, added in double), where SINGLE's float sum grows. As DcsCpu.MixedSumErrorDoesNotGrowWithAtomCount.
TEST(DcsGpu, MixedSumErrorDoesNotGrowWithAtomCount) {
    NEED_GPU();
    const auto l = lattice(-1.0, -1.0, -1.0, 0.5, 5, 4, 4);
    const auto a = same_sign_cloud(50000, 3);
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    const auto factor = pair_term_factor(a, l);
    double e[3] = {};
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        const auto m = run_map(a, l, options(QMMM_BACKEND_CUDA, prec));
        e[prec] = max_rel_error(m, phi, scale);
        const auto bound = claimed_bound(a.n(), factor, prec);
        EXPECT_LT(max_claim_ratio(m, phi, scale, bound), 1.0) << "precision " << prec << ": " << e[prec];
    }
    std::printf("GPU, 50,000 same-sign atoms, max |err| / sum|q|/r: double %.3g, single %.3g, mixed %.3g\n", e[0],
                e[1], e[2]);
    EXPECT_LT(e[QMMM_PRECISION_MIXED], e[QMMM_PRECISION_SINGLE] / 10);
}

// Both DOUBLE backends within DOUBLE's claim of the long-double reference, point by point.
TEST(DcsGpu, DoubleAgreesWithCpu) {
    NEED_GPU();
    const auto l = lattice(1.0, 2.0, 3.0, 0.5, 40, 33, 17);
    const auto a = random_atoms(l, 3000, 5);
    std::vector<long double> phi, scale;
    reference(a, l, phi, scale);
    const auto bound = claimed_bound(a, l, QMMM_PRECISION_DOUBLE);
    const auto g = run_map(a, l, options(QMMM_BACKEND_CUDA, QMMM_PRECISION_DOUBLE));
    const auto c = run_map(a, l, options(QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE));
    EXPECT_LT(max_claim_ratio(g, phi, scale, bound), 1.0) << "GPU: " << max_rel_error(g, phi, scale);
    EXPECT_LT(max_claim_ratio(c, phi, scale, bound), 1.0) << "CPU: " << max_rel_error(c, phi, scale);
    std::printf("DOUBLE, 3000 atoms: max |err| / sum|q|/r: GPU %.3g, CPU %.3g\n", max_rel_error(g, phi, scale),
                max_rel_error(c, phi, scale));
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
    // The pool comes back after a release.
    EXPECT_EQ(qmmm_dcs_release(), QMMM_SUCCESS);
    o = options(QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE);
    EXPECT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, m.data(), &o, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_dcs_release(), QMMM_SUCCESS);
}
