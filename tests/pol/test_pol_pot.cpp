// test_pol_pot.cpp -- the potential-file (.pot) reader: a PyFraME-style file in Angstrom (tests/data/pol/water3.pot),
// files in bohr with partial multipole lists, comments and padding, the permanent field of what was read against a
// long-double sum, and malformed files, each refused with the status and "file:line" it deserves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "qmmm_accel.h"

namespace {

// CODATA 2018 bohr in Angstrom, as a literal (the library's constant would convert both ways and pass if wrong).
const double kAng = 0.529177210903;

std::string tmp_path(const std::string &name) { return std::string(::testing::TempDir()) + "qmmm_pot_" + name; }

std::string write(const std::string &name, const std::string &text) {
    const std::string p = tmp_path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

struct Handle {
    qmmm_pol p = nullptr;
    ~Handle() {
        if (p) qmmm_pol_destroy(p);
    }
};

const std::string kWater3 = std::string(QMMM_SOURCE_DIR) + "/tests/data/pol/water3.pot";

}  // namespace

TEST(PotReader, Water3Angstrom) {
    Handle h;
    ASSERT_EQ(qmmm_pol_create_from_pot(&h.p, kWater3.c_str(), nullptr), QMMM_SUCCESS) << qmmm_error_message();
    int64_t n = 0, np = 0;
    ASSERT_EQ(qmmm_pol_sizes(h.p, &n, &np), QMMM_SUCCESS);
    ASSERT_EQ(n, 9);
    EXPECT_EQ(np, 9);
    std::vector<double> xyz(27), q(9), dip(27), alpha(54);
    ASSERT_EQ(qmmm_pol_sites(h.p, xyz.data(), q.data(), dip.data(), alpha.data()), QMMM_SUCCESS);
    // Spot checks of every block: site 1, 5 and 9.
    EXPECT_DOUBLE_EQ(xyz[0], 1.2 / kAng);
    EXPECT_DOUBLE_EQ(xyz[14], -3.30 / kAng);
    EXPECT_DOUBLE_EQ(xyz[26], -0.23 / kAng);
    EXPECT_EQ(q[0], -0.67072060);
    EXPECT_EQ(q[8], 0.33541547);
    EXPECT_EQ(dip[1], -0.20614866);
    EXPECT_EQ(dip[26], -0.05185290);
    const double a5[6] = {1.95, 0.06, -0.35, 2.12, 0.18, 2.20};
    for (int d = 0; d < 6; ++d) EXPECT_EQ(alpha[24 + d], a5[d]);
    // The permanent field at each site: the charges and dipoles of the other two molecules only (the exclusion lists
    // hold each molecule), summed here in long double.
    std::vector<double> f(27);
    ASSERT_EQ(qmmm_pol_static_field(h.p, f.data()), QMMM_SUCCESS);
    for (int i = 0; i < 9; ++i) {
        long double e[3] = {0, 0, 0};
        for (int j = 0; j < 9; ++j) {
            if (j / 3 == i / 3) continue;
            long double r[3], r2 = 0;
            for (int d = 0; d < 3; ++d) {
                r[d] = (long double)xyz[3 * i + d] - xyz[3 * j + d];
                r2 += r[d] * r[d];
            }
            const long double rr = std::sqrt(r2);
            const long double pr = r[0] * dip[3 * j] + r[1] * dip[3 * j + 1] + r[2] * dip[3 * j + 2];
            for (int d = 0; d < 3; ++d)
                e[d] += q[j] * r[d] / (r2 * rr) + 3 * pr * r[d] / (r2 * r2 * rr) - dip[3 * j + d] / (r2 * rr);
        }
        for (int d = 0; d < 3; ++d) EXPECT_NEAR(f[3 * i + d], (double)e[d], 1e-15) << "site " << i + 1;
    }
    // Sites read from the file are the sites given as arrays: the same dipoles, bit for bit.
    std::vector<int64_t> excl(18);
    for (int i = 0; i < 9; ++i)
        for (int k = 0, m = 0; k < 3; ++k)
            if (3 * (i / 3) + k != i) excl[2 * i + m++] = 3 * (i / 3) + k;
    Handle a;
    ASSERT_EQ(qmmm_pol_create(&a.p, 9, xyz.data(), q.data(), dip.data(), 6, alpha.data(), 2, excl.data(), nullptr),
              QMMM_SUCCESS);
    std::vector<double> e_ext(27, 0.01), mu1(27), mu2(27);
    qmmm_pol_stats st;
    ASSERT_EQ(qmmm_pol_solve(h.p, e_ext.data(), mu1.data(), &st), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_pol_solve(a.p, e_ext.data(), mu2.data(), nullptr), QMMM_SUCCESS);
    EXPECT_EQ(std::memcmp(mu1.data(), mu2.data(), sizeof(double) * 27), 0);
    EXPECT_LT(st.e_pol, 0);
}

// Bohr, comments, blank lines, partial lists (unlisted sites get 0), a site without polarizability, D exponents,
// zero padding in the exclusion lists, lower-case keywords; no EXCLISTS in the second file.
TEST(PotReader, BohrPartialListsAndPadding) {
    const std::string text =
        "! comment\n"
        "# another comment\n"
        "\n"
        "@COORDINATES\n"
        "4\n"
        "AU\n"
        "X 0.0 0.0 0.0\n"
        "X 0.0 0.0 4.0\n"
        "X 5.0 0.0 0.0\n"
        "X 0.0 6.0 1.5D+00\n"
        "@MULTIPOLES\n"
        "ORDER 0\n"
        "2\n"
        "1 0.5\n"
        "4 -0.25\n"
        "ORDER 1\n"
        "1\n"
        "3 0.1 0.2 0.3\n"
        "@polarizabilities\n"
        "ORDER 1 1\n"
        "3\n"
        "1 3.0 0 0 3.0 0 3.0\n"
        "2 2.0 0.1 0 2.5 0 2.2\n"
        "4 1.0d0 0 0 1.0 0 1.0\n"
        "EXCLISTS\n"
        "4 3\n"
        "1 2 0\n"
        "2 1 0\n"
        "3 0 0\n"
        "4 0 0\n";
    const std::string path = write("bohr.pot", text);
    Handle h;
    ASSERT_EQ(qmmm_pol_create_from_pot(&h.p, path.c_str(), nullptr), QMMM_SUCCESS) << qmmm_error_message();
    int64_t n = 0, np = 0;
    ASSERT_EQ(qmmm_pol_sizes(h.p, &n, &np), QMMM_SUCCESS);
    EXPECT_EQ(n, 4);
    EXPECT_EQ(np, 3);
    std::vector<double> xyz(12), q(4), dip(12), alpha(24);
    ASSERT_EQ(qmmm_pol_sites(h.p, xyz.data(), q.data(), dip.data(), alpha.data()), QMMM_SUCCESS);
    EXPECT_EQ(xyz[5], 4.0);
    EXPECT_EQ(xyz[11], 1.5);
    EXPECT_EQ(q[0], 0.5);
    EXPECT_EQ(q[1], 0.0);
    EXPECT_EQ(q[3], -0.25);
    EXPECT_EQ(dip[6], 0.1);
    EXPECT_EQ(dip[0], 0.0);
    EXPECT_EQ(alpha[7], 0.1);
    for (int d = 0; d < 6; ++d) EXPECT_EQ(alpha[12 + d], 0.0);
    EXPECT_EQ(alpha[18], 1.0);
    // Site 2 excludes site 1: its permanent field is that of site 3's dipole and site 4's charge alone.
    std::vector<double> f(12);
    ASSERT_EQ(qmmm_pol_static_field(h.p, f.data()), QMMM_SUCCESS);
    {
        const double r3[3] = {-5, 0, 4}, r4[3] = {0, -6, 2.5};
        const double p[3] = {0.1, 0.2, 0.3};
        const double d3 = std::sqrt(41.0), d4 = std::sqrt(36 + 6.25);
        const double pr = r3[0] * p[0] + r3[1] * p[1] + r3[2] * p[2];
        for (int d = 0; d < 3; ++d) {
            const double e = 3 * pr * r3[d] / std::pow(d3, 5) - p[d] / std::pow(d3, 3) - 0.25 * r4[d] / std::pow(d4, 3);
            EXPECT_NEAR(f[3 + d], e, 1e-16);
        }
    }
    // The same sites in Angstrom: the same positions to rounding.
    std::string aa = text;
    aa.replace(aa.find("AU\n"), 3, "aa\n");
    const std::string path_aa = write("angstrom.pot", aa);
    Handle g;
    ASSERT_EQ(qmmm_pol_create_from_pot(&g.p, path_aa.c_str(), nullptr), QMMM_SUCCESS) << qmmm_error_message();
    std::vector<double> xyz2(12);
    ASSERT_EQ(qmmm_pol_sites(g.p, xyz2.data(), nullptr, nullptr, nullptr), QMMM_SUCCESS);
    for (int i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(xyz2[i], xyz[i] / kAng);
}

struct Bad {
    const char *name, *text;
    int status, line;
    const char *what;
};

TEST(PotReader, ErrorsNameFileAndLine) {
    const Bad cases[] = {
        {"empty", "", QMMM_ERR_FILE_FORMAT, 1, "empty file"},
        {"no_coords", "@MULTIPOLES\nORDER 0\n1\n1 0.5\n", QMMM_ERR_FILE_FORMAT, 1, "before @COORDINATES"},
        {"bad_unit", "@COORDINATES\n1\nNM\nA 0 0 0\n", QMMM_ERR_FILE_FORMAT, 3, "neither AA"},
        {"count_text", "@COORDINATES\ntwo\nAU\n", QMMM_ERR_FILE_FORMAT, 2, "not an integer"},
        {"count_zero", "@COORDINATES\n0\nAU\n", QMMM_ERR_FILE_FORMAT, 2, "site count 0"},
        {"count_negative", "@COORDINATES\n-3\nAU\n", QMMM_ERR_FILE_FORMAT, 2, "out of range"},
        {"truncated_sites", "@COORDINATES\n3\nAU\nA 0 0 0\nB 0 0 1\n", QMMM_ERR_FILE_FORMAT, 5, "site 3 of 3"},
        {"short_site", "@COORDINATES\n1\nAU\nA 0 0\n", QMMM_ERR_FILE_FORMAT, 4, "fields"},
        {"nan_coord", "@COORDINATES\n1\nAU\nA 0 nan 0\n", QMMM_ERR_FILE_FORMAT, 4, "not finite"},
        {"text_coord", "@COORDINATES\n1\nAU\nA 0 x 0\n", QMMM_ERR_FILE_FORMAT, 4, "not a number"},
        {"huge_coord", "@COORDINATES\n1\nAA\nA 0 1e308 0\n", QMMM_ERR_FILE_FORMAT, 4, "not finite in bohr"},
        {"overflow_coord", "@COORDINATES\n1\nAU\nA 0 1e999 0\n", QMMM_ERR_FILE_FORMAT, 4, "out of range"},
        {"wrong_site_number", "@COORDINATES\n1\nAU\nA 0 0 0 7\n", QMMM_ERR_FILE_FORMAT, 4, "site number"},
        {"section_in_sites", "@COORDINATES\n2\nAU\nA 0 0 0\n@MULTIPOLES\n", QMMM_ERR_FILE_FORMAT, 5, "fields"},
        {"two_coords", "@COORDINATES\n1\nAU\nA 0 0 0\n@COORDINATES\n", QMMM_ERR_FILE_FORMAT, 5, "second"},
        {"unknown", "@COORDINATES\n1\nAU\nA 0 0 0\n@QUADRUPOLES\n", QMMM_ERR_FILE_FORMAT, 5, "unknown section"},
        {"charge_site", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 0\n1\n2 0.5\n", QMMM_ERR_FILE_FORMAT, 8,
         "not a site"},
        {"charge_twice", "@COORDINATES\n2\nAU\nA 0 0 0\nB 0 0 3\n@MULTIPOLES\nORDER 0\n2\n1 0.5\n1 0.5\n",
         QMMM_ERR_FILE_FORMAT, 10, "twice"},
        {"charge_count_big", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 0\n5\n", QMMM_ERR_FILE_FORMAT, 7,
         "out of range"},
        {"dipole_short", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 1\n1\n1 0.5 0.1\n", QMMM_ERR_FILE_FORMAT, 8,
         "fields"},
        {"dipole_missing_line", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 1\n1\n", QMMM_ERR_FILE_FORMAT, 7,
         "file ends"},
        {"two_multipoles", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 0\n0\n@MULTIPOLES\nORDER 1\n0\n",
         QMMM_ERR_FILE_FORMAT, 8, "second @MULTIPOLES"},
        {"order_twice", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 0\n0\nORDER 0\n0\n", QMMM_ERR_FILE_FORMAT, 8,
         "second ORDER 0"},
        {"quadrupoles", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 2\n0\n", QMMM_ERR_UNSUPPORTED, 6,
         "order 2"},
        {"pol_order", "@COORDINATES\n1\nAU\nA 0 0 0\n@POLARIZABILITIES\nORDER 1 2\n0\n", QMMM_ERR_UNSUPPORTED, 6,
         "1 2"},
        {"pol_no_order", "@COORDINATES\n1\nAU\nA 0 0 0\n@POLARIZABILITIES\n1\n", QMMM_ERR_FILE_FORMAT, 6, "ORDER 1 1"},
        {"pol_short", "@COORDINATES\n1\nAU\nA 0 0 0\n@POLARIZABILITIES\nORDER 1 1\n1\n1 1 0 0 1 0\n",
         QMMM_ERR_FILE_FORMAT, 8, "fields"},
        {"order_outside", "@COORDINATES\n1\nAU\nA 0 0 0\nORDER 0\n", QMMM_ERR_FILE_FORMAT, 5, "outside"},
        {"excl_counts", "@COORDINATES\n1\nAU\nA 0 0 0\nEXCLISTS\n1\n", QMMM_ERR_FILE_FORMAT, 6, "fields"},
        {"excl_long", "@COORDINATES\n2\nAU\nA 0 0 0\nB 0 0 3\nEXCLISTS\n1 2\n1 2 2\n", QMMM_ERR_FILE_FORMAT, 8,
         "more than the length"},
        {"excl_range", "@COORDINATES\n2\nAU\nA 0 0 0\nB 0 0 3\nEXCLISTS\n1 2\n1 3\n", QMMM_ERR_FILE_FORMAT, 8,
         "not a site"},
        {"excl_negative", "@COORDINATES\n2\nAU\nA 0 0 0\nB 0 0 3\nEXCLISTS\n1 2\n1 -1\n", QMMM_ERR_FILE_FORMAT, 8,
         "not a site"},
        {"excl_length0", "@COORDINATES\n2\nAU\nA 0 0 0\nB 0 0 3\nEXCLISTS\n1 0\n", QMMM_ERR_FILE_FORMAT, 7,
         "length 0"},
        {"excl_twice", "@COORDINATES\n2\nAU\nA 0 0 0\nB 0 0 3\nEXCLISTS\n2 2\n1 2\n1 2\n", QMMM_ERR_FILE_FORMAT, 9,
         "two exclusion lists"},
    };
    for (const Bad &b : cases) {
        const std::string path = write(std::string(b.name) + ".pot", b.text);
        qmmm_pol p = nullptr;
        EXPECT_EQ(qmmm_pol_create_from_pot(&p, path.c_str(), nullptr), b.status)
            << b.name << ": " << qmmm_error_message();
        EXPECT_EQ(p, nullptr);
        const std::string msg = qmmm_error_message();
        EXPECT_NE(msg.find(path + ":" + std::to_string(b.line) + ": "), std::string::npos) << b.name << ": " << msg;
        EXPECT_NE(msg.find(b.what), std::string::npos) << b.name << ": " << msg;
    }
}

// Valid files whose sites the constructor refuses: the message names the file and counts sites from 1.
TEST(PotReader, SitesRefusedAfterReading) {
    const std::string path = write("same_spot.pot", "@COORDINATES\n2\nAU\nA 1 1 1\nB 1 1 1\n");
    qmmm_pol p = nullptr;
    EXPECT_EQ(qmmm_pol_create_from_pot(&p, path.c_str(), nullptr), QMMM_ERR_INVALID_ARG);
    const std::string msg = qmmm_error_message();
    EXPECT_NE(msg.find(path + ": sites 1 and 2"), std::string::npos) << msg;
    const std::string indef = write("indefinite.pot",
                                    "@COORDINATES\n1\nAU\nA 0 0 0\n@POLARIZABILITIES\nORDER 1 1\n1\n1 1 2 0 1 0 1\n");
    EXPECT_EQ(qmmm_pol_create_from_pot(&p, indef.c_str(), nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("site 1"), std::string::npos) << qmmm_error_message();
}

TEST(PotReader, OpenAndNullErrors) {
    qmmm_pol p = nullptr;
    EXPECT_EQ(qmmm_pol_create_from_pot(&p, tmp_path("missing.pot").c_str(), nullptr), QMMM_ERR_FILE_OPEN);
    EXPECT_EQ(qmmm_pol_create_from_pot(&p, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_pol_create_from_pot(nullptr, kWater3.c_str(), nullptr), QMMM_ERR_NULL_ARG);
    qmmm_pol_options o;
    qmmm_pol_options_default(&o);
    o.max_iter = -1;
    EXPECT_EQ(qmmm_pol_create_from_pot(&p, kWater3.c_str(), &o), QMMM_ERR_INVALID_ARG);
}
