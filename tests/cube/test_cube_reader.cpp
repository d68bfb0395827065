// test_cube_reader.cpp -- the cube reader on cubes written here from an analytic density (a normalised
// Gaussian, whose potential N erf(sqrt(a) r)/r is known in closed form), and on malformed files.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "qmmm_accel.h"

namespace {

// CODATA 2018 bohr radius in Angstrom, as a literal: the library's own constant (QMMM_BOHR_ANGSTROM) would let a wrong
// value there convert both ways and pass.
const double kAng = 0.529177210903;
const double kN = 3.0, kA = 0.8;             // electrons, exponent (bohr^-2)
const double kC[3] = {0.3, -0.2, 0.1};       // centre (bohr)

std::string tmp_path(const std::string &name) { return std::string(::testing::TempDir()) + "qmmm_cube_" + name; }

double rho_at(const double *p) {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (p[d] - kC[d]) * (p[d] - kC[d]);
    return kN * std::pow(kA / M_PI, 1.5) * std::exp(-kA * r2);
}

struct Grid {
    double origin[3], axis[3][3];
    int n[3];
};

// Non-orthogonal axes (a2 leans 60 degrees towards a1, a3 leans too) covering +-6.5 bohr.
Grid make_grid(double h) {
    Grid g;
    const double ax[3][3] = {{h, 0, 0}, {0.5 * h, 0.8660254037844386 * h, 0}, {0.2 * h, 0.1 * h, h}};
    for (int a = 0; a < 3; ++a)
        for (int d = 0; d < 3; ++d) g.axis[a][d] = ax[a][d];
    int n = static_cast<int>(std::ceil(13.0 / h)) + 1;
    for (int a = 0; a < 3; ++a) g.n[a] = n;
    for (int d = 0; d < 3; ++d) g.origin[d] = kC[d] - 0.5 * (n - 1) * (ax[0][d] + ax[1][d] + ax[2][d]);
    return g;
}

// The cube text; angstrom = true writes lengths in Angstrom with negative counts.
std::string cube_text(const Grid &g, bool angstrom, std::vector<double> *values = nullptr) {
    const double u = angstrom ? kAng : 1.0;
    std::ostringstream s;
    char buf[160];
    s << "analytic Gaussian density\nfor test_cube_reader\n";
    std::snprintf(buf, sizeof buf, "%5d %14.8f %14.8f %14.8f\n", 2, g.origin[0] * u, g.origin[1] * u, g.origin[2] * u);
    s << buf;
    for (int a = 0; a < 3; ++a) {
        std::snprintf(buf, sizeof buf, "%5d %14.10f %14.10f %14.10f\n", angstrom ? -g.n[a] : g.n[a], g.axis[a][0] * u,
                      g.axis[a][1] * u, g.axis[a][2] * u);
        s << buf;
    }
    std::snprintf(buf, sizeof buf, "%5d %10.6f %14.8f %14.8f %14.8f\n", 8, 0.0, 1.0 * u, 2.0 * u, 3.0 * u);
    s << buf;
    std::snprintf(buf, sizeof buf, "%5d %10.6f %14.8f %14.8f %14.8f\n", 26, 16.0, -1.0 * u, 0.5 * u, -2.0 * u);
    s << buf;
    int col = 0;
    for (int i = 0; i < g.n[0]; ++i)
        for (int j = 0; j < g.n[1]; ++j)
            for (int k = 0; k < g.n[2]; ++k) {
                double p[3];
                for (int d = 0; d < 3; ++d) p[d] = g.origin[d] + i * g.axis[0][d] + j * g.axis[1][d] + k * g.axis[2][d];
                std::snprintf(buf, sizeof buf, " %.12E", rho_at(p));
                if (values) values->push_back(std::strtod(buf, nullptr));
                s << buf;
                if (++col % 6 == 0 || k == g.n[2] - 1) s << "\n", col = 0;
            }
    return s.str();
}

std::string write(const std::string &name, const std::string &text) {
    std::string p = tmp_path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

struct Env {
    qmmm_env e = nullptr;
    std::vector<double> cx, cq, nx, nz;
    double dv = 0;
    void load() {
        int64_t nc = 0, nn = 0;
        ASSERT_EQ(qmmm_env_sizes(e, &nc, &nn, &dv), QMMM_SUCCESS);
        cx.resize(3 * nc), cq.resize(nc), nx.resize(3 * nn), nz.resize(nn);
        ASSERT_EQ(qmmm_env_copy(e, cx.data(), cq.data(), nx.data(), nz.data()), QMMM_SUCCESS);
    }
    ~Env() {
        if (e) qmmm_env_destroy(e);
    }
};

double sum(const std::vector<double> &v) {
    long double s = 0;
    for (double x : v) s += x;
    return static_cast<double>(s);
}

TEST(CubeReader, AnalyticGaussianNonOrthogonal) {
    const double h = 0.25;
    Grid g = make_grid(h);
    std::vector<double> vals;
    std::string path = write("gauss.cube", cube_text(g, false, &vals));
    Env env;
    ASSERT_EQ(qmmm_cube_read(&env.e, path.c_str(), 0.0), QMMM_SUCCESS) << qmmm_error_message();
    env.load();
    const double dv = h * 0.8660254037844386 * h * h;
    EXPECT_NEAR(env.dv, dv, 1e-9 * dv);  // axes written with 10 decimals
    ASSERT_EQ(env.cq.size(), vals.size());
    // Smooth density on a uniform grid: the midpoint sum is spectrally accurate.
    EXPECT_NEAR(sum(env.cq), kN, 1e-9);
    // One cell by index: centre = origin + i a1 + j a2 + k a3, population = value * dV.
    const int i = 7, j = 30, k = 41;
    const size_t m = (static_cast<size_t>(i) * g.n[1] + j) * g.n[2] + k;
    for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(env.cx[3 * m + d], g.origin[d] + i * g.axis[0][d] + j * g.axis[1][d] + k * g.axis[2][d], 1e-7);
    EXPECT_DOUBLE_EQ(env.cq[m], vals[m] * env.dv);
    ASSERT_EQ(env.nz.size(), 2u);
    EXPECT_EQ(env.nz[0], 8.0);   // charge column 0 -> atomic number
    EXPECT_EQ(env.nz[1], 16.0);  // charge column non-zero (a valence charge) wins
    EXPECT_DOUBLE_EQ(env.nx[3], -1.0);
    EXPECT_DOUBLE_EQ(env.nx[5], -2.0);
}

// U_ES from the cube vs the closed form: the error falls with the grid spacing.
TEST(CubeReader, FieldFromCubeMatchesClosedForm) {
    const double pts[3][3] = {{4.0, 0.0, 0.0}, {0.3, 3.2, -1.0}, {1.0, 1.0, 1.0}};
    double worst[2] = {0, 0}, inside[2] = {0, 0};  // points 0-1 lie outside the density's bulk, 2 inside
    const double hs[2] = {0.5, 0.25};
    for (int s = 0; s < 2; ++s) {
        std::string path = write("gauss_h" + std::to_string(s) + ".cube", cube_text(make_grid(hs[s]), false));
        const char *paths[1] = {path.c_str()};
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU;
        qmmm_field f = nullptr;
        ASSERT_EQ(qmmm_field_create_from_cubes(&f, 1, paths, 0.0, &o), QMMM_SUCCESS) << qmmm_error_message();
        double u[3];
        ASSERT_EQ(qmmm_field_eval(f, 3, &pts[0][0], u), QMMM_SUCCESS) << qmmm_error_message();
        for (int p = 0; p < 3; ++p) {
            double r = 0, nuc = 0;
            for (int d = 0; d < 3; ++d) r += (pts[p][d] - kC[d]) * (pts[p][d] - kC[d]);
            r = std::sqrt(r);
            const double nxyz[2][3] = {{1, 2, 3}, {-1, 0.5, -2}}, nzv[2] = {8, 16};
            for (int b = 0; b < 2; ++b)
                nuc += nzv[b] / std::sqrt(std::pow(pts[p][0] - nxyz[b][0], 2) + std::pow(pts[p][1] - nxyz[b][1], 2) +
                                          std::pow(pts[p][2] - nxyz[b][2], 2));
            const double exact = kN * std::erf(std::sqrt(kA) * r) / r - nuc;
            std::printf("h=%.2f point %d: U_ES %.12f closed form %.12f\n", hs[s], p, u[p], exact);
            (p == 2 ? inside[s] : worst[s]) = std::max(p == 2 ? inside[s] : worst[s], std::fabs(u[p] - exact));
        }
        qmmm_field_destroy(f);
    }
    std::printf("closed-form Gaussian: |U_ES error| outside %.2e (h=0.5), %.2e (h=0.25); inside %.2e, %.2e hartree\n",
                worst[0], worst[1], inside[0], inside[1]);
    // Outside, the integrand is smooth and the cell sum converges fast; inside, 1/|r-p| is singular within
    // the grid and the midpoint rule converges slowly (measured 4.2e-3 -> 1.6e-3).
    EXPECT_LT(worst[1], 1e-6);
    EXPECT_LT(worst[1], worst[0] / 2);
    EXPECT_LT(inside[1], 2e-3);
    EXPECT_LT(inside[1], inside[0] / 2);
}

TEST(CubeReader, AngstromFlagAndGzipGiveTheSameEnvironment) {
    Grid g = make_grid(0.5);
    std::string bohr = write("b.cube", cube_text(g, false));
    std::string ang = write("a.cube", cube_text(g, true));
    std::string gz = tmp_path("b.cube.gz");
    {
        std::string t = cube_text(g, false);
        gzFile z = gzopen(gz.c_str(), "wb");
        ASSERT_NE(z, nullptr);
        ASSERT_EQ(gzwrite(z, t.data(), static_cast<unsigned>(t.size())), static_cast<int>(t.size()));
        gzclose(z);
    }
    Env b, a, z;
    ASSERT_EQ(qmmm_cube_read(&b.e, bohr.c_str(), 1e-4), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_cube_read(&a.e, ang.c_str(), 1e-4), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_cube_read(&z.e, gz.c_str(), 1e-4), QMMM_SUCCESS) << qmmm_error_message();
    b.load(), a.load(), z.load();
    ASSERT_EQ(a.cq.size(), b.cq.size());
    EXPECT_EQ(z.cx, b.cx);
    EXPECT_EQ(z.cq, b.cq);
    EXPECT_NEAR(a.dv, b.dv, 1e-7 * b.dv);  // Angstrom text has 10 decimals of A
    for (size_t i = 0; i < b.cx.size(); ++i) ASSERT_NEAR(a.cx[i], b.cx[i], 1e-6);
    for (size_t i = 0; i < b.nx.size(); ++i) EXPECT_NEAR(a.nx[i], b.nx[i], 1e-7);
    // Threshold: kept cells are exactly those with value >= threshold.
    std::vector<double> vals;
    cube_text(g, false, &vals);
    size_t kept = 0;
    for (double v : vals) kept += v >= 1e-4;
    EXPECT_EQ(b.cq.size(), kept);
    EXPECT_LT(kept, vals.size());
}

// A threshold <= 0 keeps every grid point, negative values included (a spin or difference density), as the header
// says; a positive one keeps rho >= threshold. Before, threshold 0 kept 4 of these 8 points.
TEST(CubeReader, ThresholdAtOrBelowZeroKeepsEveryPoint) {
    const std::string p = write("signs.cube",
                                "signs\n2 x 2 x 2, four negative\n    0 0.0 0.0 0.0\n    2 1.0 0.0 0.0\n"
                                "    2 0.0 1.0 0.0\n    2 0.0 0.0 1.0\n"
                                " 0.25 -0.25 0.5 -0.5\n 0.0 -1e-9 0.125 -0.125\n");
    const double values[8] = {0.25, -0.25, 0.5, -0.5, 0.0, -1e-9, 0.125, -0.125};
    for (double threshold : {0.0, -1e-12, -0.3, -1e300}) {
        Env env;
        ASSERT_EQ(qmmm_cube_read(&env.e, p.c_str(), threshold), QMMM_SUCCESS) << qmmm_error_message();
        env.load();
        ASSERT_EQ(env.cq.size(), 8u) << "threshold " << threshold;
        for (int i = 0; i < 8; ++i) EXPECT_EQ(env.cq[i], values[i]) << i;  // dV = 1 bohr^3
    }
    Env pos;
    ASSERT_EQ(qmmm_cube_read(&pos.e, p.c_str(), 0.125), QMMM_SUCCESS) << qmmm_error_message();
    pos.load();
    EXPECT_EQ(pos.cq, (std::vector<double>{0.25, 0.5, 0.125}));
}

TEST(CubeReader, MergingCubes) {
    std::string p1 = write("m1.cube", cube_text(make_grid(0.5), false));
    std::string p2 = write("m2.cube", cube_text(make_grid(0.25), false));
    Env one, env;
    ASSERT_EQ(qmmm_cube_read(&one.e, p1.c_str(), 1e-3), QMMM_SUCCESS);
    one.load();
    ASSERT_EQ(qmmm_env_create(&env.e), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_env_add_cube(env.e, p1.c_str(), 1e-3), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_env_add_cube(env.e, p1.c_str(), 1e-3), QMMM_SUCCESS);
    env.load();
    EXPECT_EQ(env.cq.size(), 2 * one.cq.size());
    EXPECT_EQ(env.nz.size(), 4u);
    EXPECT_EQ(env.dv, one.dv);
    EXPECT_TRUE(std::equal(one.cq.begin(), one.cq.end(), env.cq.begin() + one.cq.size()));
    ASSERT_EQ(qmmm_env_add_cube(env.e, p2.c_str(), 1e-3), QMMM_SUCCESS);
    env.load();
    EXPECT_EQ(env.dv, 0.0);  // different cell volumes: no common dV
}

TEST(CubeReader, CellVolumeMakesCellCentresRegular) {
    std::string p = write("c.cube", cube_text(make_grid(0.5), false));
    Env env;
    ASSERT_EQ(qmmm_cube_read(&env.e, p.c_str(), 1e-3), QMMM_SUCCESS);
    env.load();
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CPU;
    qmmm_field f = nullptr, g = nullptr;
    ASSERT_EQ(qmmm_field_create_from_env(&f, env.e, &o), QMMM_SUCCESS) << qmmm_error_message();
    double u = 0;
    EXPECT_EQ(qmmm_field_eval(f, 1, env.cx.data(), &u), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_TRUE(std::isfinite(u));
    ASSERT_EQ(qmmm_field_create(&g, (int64_t)env.cq.size(), env.cx.data(), env.cq.data(), 0, nullptr, nullptr, &o),
              QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_eval(g, 1, env.cx.data(), &u), QMMM_ERR_SINGULAR);
    qmmm_field_destroy(f), qmmm_field_destroy(g);
}

// ---- malformed input ----
const char *kHead =
    "c1\nc2\n    1    0.0 0.0 0.0\n    2    0.5 0.0 0.0\n    2    0.0 0.5 0.0\n    2    0.0 0.0 0.5\n"
    "    1    0.0  0.0 0.0 0.0\n";

void expect_error(const std::string &name, const std::string &text, int status, const std::string &needle) {
    std::string p = write(name, text);
    qmmm_env e = reinterpret_cast<qmmm_env>(0x1);
    EXPECT_EQ(qmmm_cube_read(&e, p.c_str(), 0.0), status) << name << ": " << qmmm_error_message();
    EXPECT_EQ(e, nullptr);
    std::string msg = qmmm_error_message();
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << "wanted '" << needle << "' in: " << msg;
}

TEST(CubeReaderErrors, MalformedFiles) {
    const std::string h = kHead;
    write("ok.cube", h + "1 2 3 4\n5 6 7 8\n");
    Env ok;
    ASSERT_EQ(qmmm_cube_read(&ok.e, tmp_path("ok.cube").c_str(), 0.0), QMMM_SUCCESS) << qmmm_error_message();
    expect_error("missing.cube", "", QMMM_ERR_FILE_FORMAT, "empty file");
    std::remove(tmp_path("missing.cube").c_str());
    {
        qmmm_env e = nullptr;
        EXPECT_EQ(qmmm_cube_read(&e, tmp_path("missing.cube").c_str(), 0.0), QMMM_ERR_FILE_OPEN);
        EXPECT_NE(std::string(qmmm_error_message()).find("missing.cube"), std::string::npos);
    }
    expect_error("empty.cube", "", QMMM_ERR_FILE_FORMAT, "empty file");
    // A grid whose cells could outgrow this machine (1e12 points: up to 32 TB) is refused from its header, with
    // what it would take, before any value is read (the file has one).
    expect_error("huge.cube", "c1\nc2\n 0 0 0 0\n 10000 0.1 0 0\n 10000 0 0.1 0\n 10000 0 0 0.1\n1\n",
                 QMMM_ERR_OUT_OF_MEMORY, "may keep up to 3.2e+04 GB of cells");
    expect_error("trunc.cube", h + "1 2 3 4\n5 6 7\n", QMMM_ERR_FILE_FORMAT, "truncated: 7 of 8");
    expect_error("extra.cube", h + "1 2 3 4\n5 6 7 8\n9\n", QMMM_ERR_FILE_FORMAT, ":10: wrong counts");
    expect_error("nonnum.cube", h + "1 2 3 4\n5 x7 7 8\n", QMMM_ERR_FILE_FORMAT, ":9: grid value 'x7' is not a number");
    expect_error("nan.cube", h + "1 2 3 4\n5 nan 7 8\n", QMMM_ERR_FILE_FORMAT, ":9: grid value 'nan'");
    expect_error("zero.cube", "c1\nc2\n 0 0 0 0\n 2 0.5 0 0\n 0 0 0.5 0\n 2 0 0 0.5\n", QMMM_ERR_FILE_FORMAT,
                 ":5: voxel count of axis 2 is 0 (empty grid)");
    expect_error("mixed.cube", "c1\nc2\n 0 0 0 0\n 2 0.5 0 0\n -2 0 0.5 0\n 2 0 0 0.5\n", QMMM_ERR_FILE_FORMAT,
                 ":5: voxel counts mix signs");
    expect_error("badatom.cube", "c1\nc2\n 2 0 0 0\n 2 0.5 0 0\n 2 0 0.5 0\n 2 0 0 0.5\n 1 0 0 0 0\n",
                 QMMM_ERR_FILE_FORMAT, "after 1 of 2 atoms");
    expect_error("atomfield.cube", "c1\nc2\n 1 0 0 0\n 2 0.5 0 0\n 2 0 0.5 0\n 2 0 0 0.5\n H 0 0 0 0\n1 2 3 4 5 6 7 8\n",
                 QMMM_ERR_FILE_FORMAT, ":7: atomic number 'H' is not an integer");
    expect_error("flat.cube", "c1\nc2\n 0 0 0 0\n 2 0.5 0 0\n 2 1.0 0 0\n 2 0 0 0.5\n1 2 3 4 5 6 7 8\n",
                 QMMM_ERR_FILE_FORMAT, "linearly dependent");
    expect_error("dset.cube", "c1\nc2\n -1 0 0 0\n 1 0.5 0 0\n 1 0 0.5 0\n 1 0 0 0.5\n 1 0 0 0 0\n 2 5 6\n1 2\n",
                 QMMM_ERR_UNSUPPORTED, ":8: DSET_IDS lists 2");
    expect_error("comments.cube", "only one line", QMMM_ERR_FILE_FORMAT, "comment lines");
    // A gzip stream cut short.
    {
        std::string t = h + "1 2 3 4\n5 6 7 8\n", gzp = tmp_path("cut.cube.gz");
        gzFile z = gzopen(gzp.c_str(), "wb");
        gzwrite(z, t.data(), static_cast<unsigned>(t.size()));
        gzclose(z);
        std::ifstream in(gzp, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        write("cut.cube.gz", bytes.substr(0, bytes.size() / 2));
        qmmm_env e = nullptr;
        int s = qmmm_cube_read(&e, gzp.c_str(), 0.0);
        EXPECT_TRUE(s == QMMM_ERR_FILE_FORMAT) << qmmm_status_string(s) << ": " << qmmm_error_message();
        EXPECT_EQ(e, nullptr);
    }
}

TEST(CubeReaderErrors, ArgumentsAndHandles) {
    std::string p = write("args.cube", std::string(kHead) + "1 2 3 4\n5 6 7 8\n");
    qmmm_env e = nullptr;
    EXPECT_EQ(qmmm_cube_read(nullptr, p.c_str(), 0.0), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_cube_read(&e, nullptr, 0.0), QMMM_ERR_NULL_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("path"), std::string::npos);
    EXPECT_EQ(qmmm_cube_read(&e, p.c_str(), NAN), QMMM_ERR_NONFINITE);
    EXPECT_NE(std::string(qmmm_error_message()).find("threshold"), std::string::npos);
    EXPECT_EQ(qmmm_env_create(nullptr), QMMM_ERR_NULL_ARG);
    ASSERT_EQ(qmmm_env_create(&e), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_env_add_cube(e, p.c_str(), 0.0), QMMM_SUCCESS);
    // A failing add leaves the environment as it was.
    std::string bad = write("args_bad.cube", std::string(kHead) + "1 2 3\n");
    EXPECT_EQ(qmmm_env_add_cube(e, bad.c_str(), 0.0), QMMM_ERR_FILE_FORMAT);
    int64_t nc = -1, nn = -1;
    double dv = -1;
    EXPECT_EQ(qmmm_env_sizes(e, &nc, &nn, &dv), QMMM_SUCCESS);
    EXPECT_EQ(nc, 8);
    EXPECT_EQ(nn, 1);
    EXPECT_DOUBLE_EQ(dv, 0.125);
    EXPECT_EQ(qmmm_env_sizes(e, nullptr, nullptr, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_env_copy(e, nullptr, nullptr, nullptr, nullptr), QMMM_SUCCESS);
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create_from_env(nullptr, e, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_create_from_env(&f, nullptr, nullptr), QMMM_ERR_BAD_HANDLE);
    const char *none[1] = {nullptr};
    EXPECT_EQ(qmmm_field_create_from_cubes(&f, 0, none, 0.0, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_create_from_cubes(&f, 1, nullptr, 0.0, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_create_from_cubes(&f, 1, none, 0.0, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(f, nullptr);
    EXPECT_EQ(qmmm_env_destroy(e), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_env_destroy(e), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_env_sizes(e, &nc, &nn, &dv), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_env_add_cube(e, p.c_str(), 0.0), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_env_destroy(nullptr), QMMM_ERR_BAD_HANDLE);
}

}  // namespace

// The library's bohr constant is CODATA 2018's (the reader converts Angstrom headers with it).
TEST(CubeReader, BohrConstantIsCodata2018) { EXPECT_EQ(QMMM_BOHR_ANGSTROM, 0.529177210903); }
