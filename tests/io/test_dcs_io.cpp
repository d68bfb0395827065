// test_dcs_io.cpp -- the tool's readers and writers: structures parsed to the right numbers, a written .dx
// read back equal to the map to its printed digits, a cube's layout, malformed files named with their line; the
// qmmm-dcs tool's map read back in its units (kT/e, V).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

// The tool's map units: qmmm-dcs run on small.pqr, its .dx read back, and the value at two lattice points
// against sum q_i / r_i computed here with CODATA 2018 literals (not the library's constants): e / (4 pi eps0 A) =
// 14.399645478 V, and kT/e at 298.15 K = k_B T / e. A map in the wrong unit (hartree/e, bohr distances, another T)
// is off by a factor >= 1.0005 (T = 298 K instead of 298.15) -- far outside the 7 digits the file keeps.
TEST(DcsIo, ToolMapInKtPerEAndVolt) {
    const double kCoulombVoltAngstrom = 27.211386245988 * 0.529177210903;    // e / (4 pi eps0), V A
    const double kT_volt = 1.380649e-23 * 298.15 / 1.602176634e-19;         // k_B T / e at 298.15 K, V
    const auto m = dcsio::read_structure(kData + "small.pqr");
    const double origin[3] = {-3.0, -1.5, 0.5}, h = 1.25;  // a 2 x 3 x 2 lattice near the atoms, Angstrom
    auto potential_volt = [&](int i, int j, int k) {
        const double p[3] = {origin[0] + i * h, origin[1] + j * h, origin[2] + k * h};
        double s = 0;
        for (int a = 0; a < m.n(); ++a) {
            const double dx = p[0] - m.xyz[3 * a], dy = p[1] - m.xyz[3 * a + 1], dz = p[2] - m.xyz[3 * a + 2];
            s += m.q[a] / std::sqrt(dx * dx + dy * dy + dz * dz);
        }
        return kCoulombVoltAngstrom * s;
    };
    for (const std::string units : {"kT", "V"}) {
        const std::string path = ::testing::TempDir() + "dcs_units_" + units + ".dx";
        std::remove(path.c_str());
        const std::string cmd = "'" + std::string(QMMM_DCS_TOOL) + "' '" + kData + "small.pqr' -o '" + path +
                                "' --origin -3 -1.5 0.5 --counts 2 3 2 --spacing 1.25 --units " + units +
                                " --backend cpu --precision double -q > /dev/null";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        const auto g = dcsio::read_dx(path);
        ASSERT_EQ(g.count[0] * g.count[1] * g.count[2], 12);
        EXPECT_NEAR(g.origin[0], -3.0, 1e-9);
        EXPECT_NEAR(g.spacing[2], 1.25, 1e-9);
        const double per = units == "kT" ? 1.0 / kT_volt : 1.0;
        for (const auto &ijk : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{1, 2, 1}}) {
            const double want = potential_volt(ijk[0], ijk[1], ijk[2]) * per;
            const double got = g.values[(ijk[0] * g.count[1] + ijk[1]) * g.count[2] + ijk[2]];
            EXPECT_NEAR(got, want, 1e-6 * std::fabs(want)) << units << " at (" << ijk[0] << "," << ijk[1] << "," << ijk[2] << ")";
        }
    }
}
