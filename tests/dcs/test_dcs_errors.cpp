// test_dcs_errors.cpp -- bad input to the DCS API gets its own status and a message naming the argument.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>

#include "test_dcs_reference.hpp"

using namespace dcsref;

namespace {

void expect_message(const char *fragment) {
    EXPECT_NE(std::strstr(qmmm_error_message(), fragment), nullptr)
        << "message '" << qmmm_error_message() << "' should mention '" << fragment << "'";
}

const double kXyz[6] = {0.05, 0.05, 0.05, 1.05, 0.5, 0.5}, kQ[2] = {1, -1};

struct Fixture : ::testing::Test {
    qmmm_dcs_lattice l = lattice(0, 0, 0, 0.5, 4, 4, 4);
    std::vector<double> m = std::vector<double>(64);
    qmmm_dcs_options o = options(QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE);
    int map(int64_t n = 2, const double *x = kXyz, const double *q = kQ) {
        return qmmm_dcs_map(n, x, q, &l, m.data(), &o, nullptr);
    }
};

}  // namespace

TEST_F(Fixture, NullPointers) {
    EXPECT_EQ(map(2, nullptr, kQ), QMMM_ERR_NULL_ARG);
    expect_message("xyz");
    EXPECT_EQ(map(2, kXyz, nullptr), QMMM_ERR_NULL_ARG);
    expect_message("q is NULL");
    EXPECT_EQ(qmmm_dcs_map(2, kXyz, kQ, nullptr, m.data(), &o, nullptr), QMMM_ERR_NULL_ARG);
    expect_message("lat");
    EXPECT_EQ(qmmm_dcs_map(2, kXyz, kQ, &l, nullptr, &o, nullptr), QMMM_ERR_NULL_ARG);
    expect_message("map");
    EXPECT_EQ(qmmm_dcs_options_default(nullptr), QMMM_ERR_NULL_ARG);
}

TEST_F(Fixture, NoAtomsGivesZeroMapNegativeIsAnError) {
    std::fill(m.begin(), m.end(), 7.0);
    EXPECT_EQ(map(0, nullptr, nullptr), QMMM_SUCCESS);
    for (double v : m) EXPECT_EQ(v, 0.0);
    EXPECT_EQ(map(-1), QMMM_ERR_INVALID_ARG);
    expect_message("n_atoms");
}

TEST_F(Fixture, SpacingAndCounts) {
    for (double h : {0.0, -0.5, std::numeric_limits<double>::infinity()}) {
        l.spacing[1] = h;
        EXPECT_EQ(map(), QMMM_ERR_INVALID_ARG) << h;
        expect_message("lat->spacing[y]");
    }
    l = lattice(0, 0, 0, 0.5, 4, 4, 4);
    l.count[2] = 0;
    EXPECT_EQ(map(), QMMM_ERR_INVALID_ARG);
    expect_message("lat->count[z]");
    l.count[2] = 4;
    l.origin[0] = NAN;
    EXPECT_EQ(map(), QMMM_ERR_NONFINITE);
    expect_message("lat->origin[x]");
}

TEST_F(Fixture, LatticeTooLargeForMemory) {
    l.count[0] = l.count[1] = l.count[2] = int64_t{1} << 21;  // 2^63 points
    EXPECT_EQ(map(), QMMM_ERR_OUT_OF_MEMORY);
    expect_message("lattice too large");
}

TEST_F(Fixture, NonFiniteAtoms) {
    double x[6] = {0.05, 0.05, 0.05, 1, NAN, 1};
    EXPECT_EQ(map(2, x), QMMM_ERR_NONFINITE);
    expect_message("xyz: element 4 is NaN");
    double q[2] = {1, INFINITY};
    EXPECT_EQ(map(2, kXyz, q), QMMM_ERR_NONFINITE);
    expect_message("q: element 1 is Inf");
}

TEST_F(Fixture, AtomOnLatticePoint) {
    double x[3] = {0.5, 0.55, 0.45};  // lattice point (1, 1, 1) with spacings 0.5, 0.55, 0.45
    EXPECT_EQ(map(1, x, kQ), QMMM_ERR_SINGULAR);
    expect_message("atom 0 lies on lattice point (1, 1, 1)");
}

TEST_F(Fixture, BadOptions) {
    o.backend = 9;
    EXPECT_EQ(map(), QMMM_ERR_INVALID_ARG);
    expect_message("opt->backend");
    o = options(QMMM_BACKEND_CPU, 5);
    EXPECT_EQ(map(), QMMM_ERR_INVALID_ARG);
    expect_message("opt->precision");
    o = options(QMMM_BACKEND_CPU, QMMM_PRECISION_SINGLE);
    o.kernel = 1;  // FAST is the only kernel
    EXPECT_EQ(map(), QMMM_ERR_INVALID_ARG);
    expect_message("opt->kernel");
    o = options(QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE);
    o.n_devices = 17;
    EXPECT_EQ(map(), QMMM_ERR_INVALID_ARG);
    expect_message("n_devices");
}

// Without CUDA (or without a GPU) a CUDA request says why; device indices beyond the count are refused.
TEST_F(Fixture, CudaWhereThereIsNone) {
    int count = 0;
    qmmm_cuda_device_count(&count);
    o = options(QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE);
    o.n_devices = 1, o.devices[0] = count + 3;
    const int s = map();
    if (count > 0) {  // a GPU machine: the index is the error
        EXPECT_EQ(s, QMMM_ERR_INVALID_ARG) << qmmm_error_message();
        expect_message("opt->devices[0]");
    } else {  // no GPU (NO_DEVICE) or a build without CUDA (NO_CUDA)
        EXPECT_TRUE(s == QMMM_ERR_NO_CUDA || s == QMMM_ERR_NO_DEVICE) << s;
        expect_message(s == QMMM_ERR_NO_DEVICE ? "no CUDA device is usable" : "no CUDA backend");
    }
}

TEST_F(Fixture, ProgressCancel) {
    o.progress = [](int64_t, int64_t, void *) { return 1; };
    EXPECT_EQ(map(), QMMM_ERR_INVALID_ARG);
    expect_message("cancelled");
}

TEST_F(Fixture, PlaceIonsArguments) {
    ASSERT_EQ(map(), QMMM_SUCCESS);
    double ions[6];
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 1, 0.0, 0, 0, ions, nullptr), QMMM_ERR_INVALID_ARG);
    expect_message("ion_charge");
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 1, 1.0, -1, 0, ions, nullptr), QMMM_ERR_INVALID_ARG);
    expect_message("min_dist_atoms");
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 1, 1.0, 0, NAN, ions, nullptr), QMMM_ERR_INVALID_ARG);
    expect_message("min_dist_ions");
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 1, 1.0, 0, 0, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    expect_message("ion_xyz");
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), -2, 1.0, 0, 0, ions, nullptr), QMMM_ERR_INVALID_ARG);
    expect_message("n_ions");
    // Exclusion radius larger than the lattice: nothing left.
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 2, 1.0, 50.0, 0, ions, nullptr), QMMM_ERR_INVALID_ARG);
    expect_message("no lattice point is left for ion 1 (0 placed)");
    m[3] = NAN;
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 1, 1.0, 0, 0, ions, nullptr), QMMM_ERR_NONFINITE);
    expect_message("map: element 3");
    // An ion whose potential at the next lattice point leaves double's range: refused, not -Inf with success.
    m[3] = 0;
    EXPECT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 1, -1e300, 0, 0, ions, nullptr), QMMM_ERR_INVALID_ARG);
    expect_message("would leave double's range");
}

// An ion's energy is its charge times the potential there, the earlier ions' included: charges whose energies would
// leave double's range are refused with the limit (1e95..1e202 e gave -Inf energies with success). Charges that
// are accepted give finite energies and a finite map.
TEST_F(Fixture, PlaceIonsEnergiesStayFiniteOrAreRefused) {
    ASSERT_EQ(map(), QMMM_SUCCESS);
    const std::vector<double> m0 = m;
    double ions[9], energy[3];
    int refused = 0;
    // Maps of atoms with charges up to 1e214 e (the map's values are proportional to them).
    for (double scale : {1.0, 1e107, 1e214})
    for (double charge : {1e95, -1e95, 1e150, -1e150, 1e202, -1e202})
        for (int64_t n = 1; n <= 3; ++n) {
            for (size_t i = 0; i < m.size(); ++i) m[i] = m0[i] * scale;
            const int s = qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), n, charge, 0, 0, ions, energy);
            if (s == QMMM_SUCCESS) {
                for (int64_t k = 0; k < n; ++k) EXPECT_TRUE(std::isfinite(energy[k])) << charge << " ion " << k;
                for (double v : m) ASSERT_TRUE(std::isfinite(v)) << charge;
            } else {
                ++refused;
                EXPECT_EQ(s, QMMM_ERR_INVALID_ARG) << charge;
                expect_message("1e300");
            }
        }
    EXPECT_GT(refused, 0);
    // An ordinary charge is still placed, with energy q * (the map's lowest value).
    m = m0;
    ASSERT_EQ(qmmm_dcs_place_ions(2, kXyz, kQ, &l, m.data(), 1, 1.0, 0, 0, ions, energy), QMMM_SUCCESS);
    EXPECT_EQ(energy[0], *std::min_element(m0.begin(), m0.end()));
}

// A lattice of spacing 1e-300 bohr: the squared distances underflow, the distances do not; the ion's terms are
// finite and equal q / (k spacing) along an axis.
TEST(DcsPlaceIons, TinySpacingKeepsFiniteTerms) {
    qmmm_dcs_lattice t{};
    t.count[0] = 4, t.count[1] = 1, t.count[2] = 1;
    t.spacing[0] = t.spacing[1] = t.spacing[2] = 1e-300;
    std::vector<double> map(4, 0.0);
    double ion[3];
    ASSERT_EQ(qmmm_dcs_place_ions(0, nullptr, nullptr, &t, map.data(), 1, 8.5e-175, 0, 0, ion, nullptr),
              QMMM_SUCCESS) << qmmm_error_message();
    for (int p = 0; p < 4; ++p) EXPECT_TRUE(std::isfinite(map[p])) << p;
    EXPECT_NEAR(map[2] / 8.5e125, 0.5, 1e-15);  // the ion took point 0 (all equal: the lowest index)
}

TEST(DcsErrors, ReleaseWithoutUseIsFine) { EXPECT_EQ(qmmm_dcs_release(), QMMM_SUCCESS); }
