// test_dcs_io.cpp -- the tool's readers and writers: structures parsed to the right numbers, a written .dx
// read back equal to the map to its printed digits, a cube's layout, malformed files named with their line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "dcs_io.hpp"
#include "test_dcs_reference.hpp"

namespace {
const std::string kData = std::string(QMMM_SOURCE_DIR) + "/tests/data/dcs/";

template <class F>
void expect_io_error(F &&f, int status, const char *fragment) {
    try {
        f();
        ADD_FAILURE() << "no error";
    } catch (const qmmm::Error &e) {
        EXPECT_EQ(e.status, status) << e.what();
        EXPECT_NE(std::strstr(e.what(), fragment), nullptr) << e.what() << " should mention " << fragment;
    }
}
}  // namespace

TEST(DcsIo, ReadsPqrPdbXyz) {
    auto m = dcsio::read_structure(kData + "small.pqr");
    ASSERT_EQ(m.n(), 4);
    EXPECT_DOUBLE_EQ(m.xyz[6], -1.2);
    EXPECT_DOUBLE_EQ(m.q[2], -0.8);  // chain column absent on this line: fields counted from the end
    EXPECT_EQ(m.z[0], 7);
    m = dcsio::read_structure(kData + "small.pdb");
    ASSERT_EQ(m.n(), 3);
    EXPECT_DOUBLE_EQ(m.q[0], 1.0);
    EXPECT_DOUBLE_EQ(m.q[1], -1.0);
    EXPECT_DOUBLE_EQ(m.q[2], 0.0);
    EXPECT_DOUBLE_EQ(m.xyz[4], 0.3);
    m = dcsio::read_structure(kData + "small.xyz");
    ASSERT_EQ(m.n(), 3);
    EXPECT_DOUBLE_EQ(m.q[0], -0.834);
    EXPECT_DOUBLE_EQ(m.xyz[7], 0.927);
    EXPECT_EQ(m.z[1], 1);
}

TEST(DcsIo, MalformedFilesNameFileAndLine) {
    expect_io_error([] { dcsio::read_structure(kData + "bad_coord.pqr"); }, QMMM_ERR_FILE_FORMAT, "bad_coord.pqr:3: PQR y 'abc'");
    expect_io_error([] { dcsio::read_structure(kData + "truncated.xyz"); }, QMMM_ERR_FILE_FORMAT, "truncated.xyz:5: file ends after 2 of 3");
    expect_io_error([] { dcsio::read_structure(kData + "bad_charge.pdb"); }, QMMM_ERR_FILE_FORMAT, "bad_charge.pdb:1: PDB charge");
    expect_io_error([] { dcsio::read_structure(kData + "missing.pqr"); }, QMMM_ERR_FILE_OPEN, "missing.pqr: cannot open");
    expect_io_error([] { dcsio::read_structure(kData + "small.pqr", "mol2"); }, QMMM_ERR_INVALID_ARG, "unknown structure format");
}

TEST(DcsIo, DxRoundTripMatchesMap) {
    const auto l = dcsref::lattice(-1.0, -2.0, 0.5, 0.35, 7, 5, 4);
    const auto a = dcsref::random_atoms(l, 30, 11);
    dcsio::Grid g;
    g.values.resize(dcsref::points(l));
    auto o = dcsref::options(QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE);
    ASSERT_EQ(qmmm_dcs_map(a.n(), a.xyz.data(), a.q.data(), &l, g.values.data(), &o, nullptr), QMMM_SUCCESS);
    for (int d = 0; d < 3; ++d) g.origin[d] = l.origin[d], g.spacing[d] = l.spacing[d], g.count[d] = l.count[d];
    const std::string path = ::testing::TempDir() + "dcs_roundtrip.dx";
    dcsio::write_dx(path, g, "test map");
    const auto r = dcsio::read_dx(path);
    for (int d = 0; d < 3; ++d) {
        EXPECT_EQ(r.count[d], l.count[d]);
        EXPECT_NEAR(r.origin[d], l.origin[d], 1e-9);
        EXPECT_NEAR(r.spacing[d], l.spacing[d], 1e-9);
    }
    // Every value against the long-double reference: 7 significant digits are written.
    std::vector<long double> phi, scale;
    dcsref::reference(a, l, phi, scale);
    ASSERT_EQ(r.values.size(), phi.size());
    for (size_t p = 0; p < phi.size(); ++p)
        EXPECT_NEAR(r.values[p], static_cast<double>(phi[p]), 6e-7 * std::fabs(static_cast<double>(phi[p])) + 1e-300) << p;
    // Corrupt it: a missing value is reported with its line.
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const auto cut = text.rfind('\n', text.find("attribute") - 2);
    std::ofstream(path) << text.substr(0, cut + 1);
    expect_io_error([&] { dcsio::read_dx(path); }, QMMM_ERR_FILE_FORMAT, "file ends after");
}

TEST(DcsIo, CubeHeaderAndOrder) {
    dcsio::Grid g;
    g.count[0] = 2, g.count[1] = 2, g.count[2] = 7;
    for (int d = 0; d < 3; ++d) g.origin[d] = d, g.spacing[d] = 0.5;
    for (int p = 0; p < 28; ++p) g.values.push_back(p);
    const auto m = dcsio::read_structure(kData + "small.xyz");
    const std::string path = ::testing::TempDir() + "dcs.cube";
    dcsio::write_cube(path, g, m, "units");
    std::ifstream in(path);
    std::string line;
    for (int i = 0; i < 2 + 4 + 3; ++i) std::getline(in, line);
    EXPECT_NE(line.find("0.417"), std::string::npos);  // last atom line carries the charge
    double v[7];
    for (double &x : v) in >> x;
    // First row: x = 0, y = 0, z = 0..6 -> indices 0, 4, 8, ...
    for (int k = 0; k < 7; ++k) EXPECT_EQ(v[k], 4.0 * k);
}
