// test_rdf_tool.cpp -- qmmm-rdf run as a program on the small trajectories of tests/data/rdf: exit codes and
// messages, several pairs in one pass (each equal to the library run directly on the frames, and O-O + O-H + H-H
// equal to all atoms as one pair), the --norm columns from the integer histogram, --cut against a double
// reference, XTC through GROMACS.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test.hpp"  // QMMM_SKIP
#include "qmmm_accel.h"
#include "rdf_io.hpp"
#include "test_rdf_reference.hpp"

namespace {

using nlohmann::json;
const std::string dir = std::string(QMMM_SOURCE_DIR) + "/tests/data/rdf/";
const std::string work = ::testing::TempDir();

struct Run {
    int status = -1;
    std::string out;
};

// Runs qmmm-rdf with args (shell words), output and errors together. --force: the outputs in the shared temporary
// folder may be there from an earlier run (replacing them is what these tests mean).
Run tool(const std::string &args) {
    Run r;
    FILE *p = popen(("'" + std::string(QMMM_RDF_TOOL) + "' " + args + " --force 2>&1").c_str(), "r");
    if (!p) return r;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    const int w = pclose(p);
    r.status = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
    return r;
}

json load(const std::string &path) {
    std::ifstream f(path);
    return json::parse(f);
}

std::vector<rdfref::System> frames_of(const std::string &file, const std::string &top = "") {
    auto r = qmmm::rdfio::open_trajectory(dir + file, "auto", top.empty() ? "" : dir + top);
    std::vector<rdfref::System> v;
    qmmm::rdfio::Frame f;
    while (r->next(f)) {
        rdfref::System s;
        s.xyz = f.xyz;
        std::copy(f.box, f.box + 9, s.box);
        v.push_back(s);
    }
    return v;
}

std::vector<int64_t> pick(const std::string &file, const std::string &sel) {
    auto r = qmmm::rdfio::open_trajectory(dir + file);
    qmmm::rdfio::Frame f;
    r->next(f);
    return qmmm::rdfio::select(r->atoms(), sel);
}

// The library directly (CPU): histogram of sel1 x sel2 over the frames.
std::vector<int64_t> library(const std::vector<rdfref::System> &fs, const std::vector<int64_t> &s1,
                             const std::vector<int64_t> &s2, double rmax, int bins, double cut = 0) {
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = QMMM_BACKEND_CPU;
    qmmm_rdf h;
    EXPECT_EQ(qmmm_rdf_create(&h, 0, rmax, bins, &o), 0);
    if (cut > 0) EXPECT_EQ(qmmm_rdf_set_cut(h, cut), 0) << qmmm_error_message();
    EXPECT_EQ(qmmm_rdf_set_selections(h, (int64_t)s1.size(), s1.data(), nullptr, (int64_t)s2.size(), s2.data(), nullptr), 0);
    const bool same = s1 == s2;
    for (const auto &f : fs) {
        std::vector<double> x1, x2;
        for (auto i : s1) x1.insert(x1.end(), &f.xyz[3 * i], &f.xyz[3 * i] + 3);
        for (auto i : s2) x2.insert(x2.end(), &f.xyz[3 * i], &f.xyz[3 * i] + 3);
        EXPECT_EQ(qmmm_rdf_add_frame(h, x1.data(), same ? nullptr : x2.data(), f.box), 0) << qmmm_error_message();
    }
    std::vector<int64_t> hist(bins);
    qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), nullptr, nullptr);
    qmmm_rdf_destroy(h);
    return hist;
}

TEST(RdfTool, UnknownSelectionKeywordIsAUsageErrorNamingTheKeywords) {
    const auto r = tool("'" + dir + "water.pdb' --sel1 nonsense --backend cpu --no-progress");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("qmmm-rdf: error: selection 'nonsense': unknown keyword 'nonsense'; a selection is"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("name, element, resname, type"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("needs at least one value"), std::string::npos) << r.out;
}

TEST(RdfTool, ExitCodesAndMessages) {
    auto r = tool("'" + dir + "truncated.dcd' --top '" + dir + "water.pdb' --rmax 6 --backend cpu -q --no-progress");
    EXPECT_EQ(r.status, QMMM_ERR_FILE_FORMAT) << r.out;
    EXPECT_NE(r.out.find("truncated.dcd: frame 2 is truncated"), std::string::npos) << r.out;
    r = tool("'" + dir + "water.gro' --rmax nan --backend cpu -q");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("--rmax"), std::string::npos) << r.out;
    r = tool("'" + dir + "water.gro' --rmax 6 --cut 6 --backend cpu -q");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("r_cut"), std::string::npos) << r.out;
    r = tool("'" + dir + "water.gro' --pairs 'name OW:name HW1:name HW2' --backend cpu -q");
    EXPECT_EQ(r.status, 2) << r.out;
    r = tool("'" + dir + "water.gro' --pairs 'name OW' --sel1 'name OW' --backend cpu -q");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("either --pairs or --sel1"), std::string::npos) << r.out;
    r = tool("'" + dir + "water.gro' --rmax 7 --backend cpu -q");  // beyond half of the 12.4 A box
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("frame 0"), std::string::npos) << r.out;
}

// O-O, O-H and H-H in one pass; each pair equals the library on the frames; together they are all atoms.
TEST(RdfTool, SeveralPairsInOnePass) {
    const std::string a = work + "rdf_all.json", b = work + "rdf_three.json", txt = work + "rdf_three.dat";
    auto r = tool("'" + dir + "water.gro' --sel1 all --rmax 6 --bins 60 --backend cpu -q --no-progress --json '" + a + "'");
    ASSERT_EQ(r.status, 0) << r.out;
    r = tool("'" + dir + "water.gro' --rmax 6 --bins 60 --backend cpu -q --no-progress --norm none -o '" + txt +
             "' --json '" + b + "' --pairs 'name OW:name OW' 'name OW:name HW1 HW2' 'name HW1 HW2:name HW1 HW2'");
    ASSERT_EQ(r.status, 0) << r.out;
    const json ja = load(a), jb = load(b);
    ASSERT_EQ(jb["pairs"].size(), 3u);
    EXPECT_EQ(jb["frames"], 3);
    const auto fs = frames_of("water.gro");
    const auto o = pick("water.gro", "name OW"), h = pick("water.gro", "name HW1 HW2");
    ASSERT_EQ(o.size(), 64u);
    ASSERT_EQ(h.size(), 128u);
    const std::vector<std::vector<int64_t>> want = {library(fs, o, o, 6, 60), library(fs, o, h, 6, 60),
                                                    library(fs, h, h, 6, 60)};
    std::vector<int64_t> sum(60, 0);
    for (int p = 0; p < 3; ++p) {
        const auto got = jb["pairs"][p]["hist"].get<std::vector<int64_t>>();
        EXPECT_EQ(got, want[p]) << "pair " << p;
        for (int k = 0; k < 60; ++k) sum[k] += got[k];
    }
    EXPECT_EQ(sum, ja["hist"].get<std::vector<int64_t>>());
    EXPECT_TRUE(jb["pairs"][0]["identical"].get<bool>());
    EXPECT_FALSE(jb["pairs"][1]["identical"].get<bool>());
    // --norm: from the histogram (unordered pairs count for both atoms of an identical selection)
    std::ifstream t(txt);
    std::string line;
    int row = 0;
    while (std::getline(t, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        double rr, col[6];
        in >> rr;
        for (double &c : col) in >> c;
        ASSERT_TRUE(in) << line;
        const double lo = 0.1 * row, hi = lo + 0.1;
        EXPECT_NEAR(rr, lo + 0.05, 1e-6);
        for (int p = 0; p < 3; ++p) {
            const auto &jp = jb["pairs"][p];
            const double n1 = jp["n1"], per = jp["identical"].get<bool>() ? 2.0 : 1.0;
            const double count = double(jp["hist"][row].get<int64_t>()) * per / (3.0 * n1);
            EXPECT_NEAR(col[2 * p], count, 1e-7 * (1 + count)) << "none, pair " << p << " row " << row;
            EXPECT_NEAR(jp["count_per_bin"][row].get<double>(), count, 1e-12 * (1 + count));
            EXPECT_NEAR(jp["number_density"][row].get<double>(), count / (4.0 / 3.0 * M_PI * (hi * hi * hi - lo * lo * lo)),
                        1e-12 * (1 + count / (hi * hi * hi - lo * lo * lo)));
        }
        ++row;
    }
    EXPECT_EQ(row, 60);
    // coordination number at the first minimum after the peak: n at that bin
    for (int p = 0; p < 3; ++p) {
        const auto &m = jb["pairs"][p]["first_minimum"];
        const int k = static_cast<int>(std::lround(m["r_upper_edge"].get<double>() / 0.1)) - 1;
        EXPECT_DOUBLE_EQ(m["coordination_number"].get<double>(), jb["pairs"][p]["n"][k].get<double>());
    }
}

// The default backend (the GPU where there is one, batches of frames through the reader thread) and frame
// selection (--first/--stride) give the CPU's counts for the frames they take.
TEST(RdfTool, BackendsBatchesAndStridesAgree) {
    const std::string a = work + "rdf_auto.json", b = work + "rdf_stride.json";
    const std::string pairs = " --pairs 'name OW:name OW' 'name OW:name HW1 HW2' --rmax 6 --bins 60 -q --no-progress";
    auto r = tool("'" + dir + "water.gro'" + pairs + " --json '" + a + "'");
    ASSERT_EQ(r.status, 0) << r.out;
    r = tool("'" + dir + "water.gro'" + pairs + " --backend cpu --first 1 --stride 2 --json '" + b + "'");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto fs = frames_of("water.gro");
    const auto o = pick("water.gro", "name OW"), h = pick("water.gro", "name HW1 HW2");
    const json ja = load(a), jb = load(b);
    EXPECT_EQ(ja["pairs"][0]["hist"].get<std::vector<int64_t>>(), library(fs, o, o, 6, 60));
    EXPECT_EQ(ja["pairs"][1]["hist"].get<std::vector<int64_t>>(), library(fs, o, h, 6, 60));
    EXPECT_EQ(jb["frames"], 1);  // frames 1 (first) and 3 (none: the file has 3)
    EXPECT_EQ(jb["pairs"][1]["hist"].get<std::vector<int64_t>>(), library({fs[1]}, o, h, 6, 60));
}

// DCD with selections that are ranges of atoms ("all", "index a-b"): the reader decodes straight into the
// batches (rdf_pipe.hpp, no gather). The counts equal the library's on the frames as read, with every frame and
// with a stride; so do those of a selection that is not a range ("name OW", every third atom: the gather path).
TEST(RdfTool, DcdRangesDecodedInPlaceEqualTheLibrary) {
    const std::string top = " --top '" + dir + "water.gro'";
    const std::string common = " --rmax 6 --bins 60 -q --no-progress";
    const auto fs = frames_of("water.dcd", "water.gro");
    ASSERT_EQ(fs.size(), 3u);
    const int64_t n = fs[0].n();
    std::vector<int64_t> all(n), first(64), rest(n - 64);
    for (int64_t i = 0; i < n; ++i) all[i] = i;
    for (int64_t i = 0; i < 64; ++i) first[i] = i;
    for (int64_t i = 64; i < n; ++i) rest[i - 64] = i;
    const auto o = pick("water.gro", "name OW");
    ASSERT_EQ(o.size(), 64u);
    const std::string ranges = " --pairs 'all:all' 'index 0-63:index 64-" + std::to_string(n - 1) + "'";
    for (const std::string backend : {"cpu", "auto"}) {
        const std::string a = work + "rdf_dcd_ranges_" + backend + ".json", b = work + "rdf_dcd_names_" + backend + ".json",
                          c = work + "rdf_dcd_stride_" + backend + ".json";
        auto r = tool("'" + dir + "water.dcd'" + top + ranges + common + " --backend " + backend + " --json '" + a + "'");
        ASSERT_EQ(r.status, 0) << r.out;
        r = tool("'" + dir + "water.dcd'" + top + " --pairs 'name OW:all'" + common + " --backend " + backend + " --json '" +
                 b + "'");
        ASSERT_EQ(r.status, 0) << r.out;
        r = tool("'" + dir + "water.dcd'" + top + ranges + common + " --backend " + backend + " --first 1 --stride 2 --json '" +
                 c + "'");
        ASSERT_EQ(r.status, 0) << r.out;
        const json ja = load(a), jb = load(b), jc = load(c);
        EXPECT_EQ(ja["frames"], 3);
        EXPECT_EQ(ja["pairs"][0]["hist"].get<std::vector<int64_t>>(), library(fs, all, all, 6, 60)) << backend;
        EXPECT_EQ(ja["pairs"][1]["hist"].get<std::vector<int64_t>>(), library(fs, first, rest, 6, 60)) << backend;
        EXPECT_EQ(jb["hist"].get<std::vector<int64_t>>(), library(fs, o, all, 6, 60)) << backend;
        EXPECT_EQ(jc["frames"], 1);
        EXPECT_EQ(jc["pairs"][1]["hist"].get<std::vector<int64_t>>(), library({fs[1]}, first, rest, 6, 60)) << backend;
    }
}

// --cut: pairs closer than the cut are left out (gmx rdf -cut); the O-H bonds (about 1 A) vanish. The bin the
// cut is inside holds the pairs from the cut to its upper edge, as a double-precision count finds them.
TEST(RdfTool, CutLeavesOutCloserPairs) {
    const std::string a = work + "rdf_cut0.json", b = work + "rdf_cut.json";
    const std::string common = "'" + dir + "water.gro' --sel1 'name OW' --sel2 'name HW1 HW2' --rmax 6 --bins 60 "
                                           "--backend cpu -q --no-progress --json ";
    auto r = tool(common + "'" + a + "'");
    ASSERT_EQ(r.status, 0) << r.out;
    r = tool(common + "'" + b + "' --cut 1.55");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto h0 = load(a)["hist"].get<std::vector<int64_t>>(), h = load(b)["hist"].get<std::vector<int64_t>>();
    EXPECT_GT(h0[10], 0);  // the bonds, [1.0, 1.1)
    for (int k = 0; k < 15; ++k) EXPECT_EQ(h[k], 0) << k;
    for (int k = 16; k < 60; ++k) EXPECT_EQ(h[k], h0[k]) << k;
    EXPECT_LE(h[15], h0[15]);
    const auto fs = frames_of("water.gro");
    const auto o = pick("water.gro", "name OW"), hh = pick("water.gro", "name HW1 HW2");
    int64_t ref = 0;
    for (const auto &f : fs)
        for (auto i : o)
            for (auto j : hh) {
                const double d = rdfref::min_dist(&f.xyz[3 * i], &f.xyz[3 * j], f.box);
                ref += d >= 1.55 && d < 1.6;
            }
    EXPECT_EQ(h[15], ref);
    EXPECT_EQ(h, library(fs, o, hh, 6, 60, 1.55));
    EXPECT_EQ(load(b)["g"][20], load(a)["g"][20]);  // the normalisation does not change
}

TEST(RdfTool, XtcThroughGromacs) {
    if (!qmmm::rdfio::have_gromacs()) QMMM_SKIP("built without GROMACS's library (libgromacs-dev)");
    const std::string a = work + "rdf_xtc.json";
    const auto r = tool("'" + dir + "water.xtc' --top '" + dir + "water.gro' --pairs 'name OW' 'name OW:element H' "
                        "--rmax 6 --bins 60 --backend cpu -q --no-progress --json '" + a + "'");
    ASSERT_EQ(r.status, 0) << r.out;
    const json j = load(a);
    EXPECT_EQ(j["frames"], 3);
    const auto fs = frames_of("water.xtc", "water.gro");
    const auto o = pick("water.gro", "name OW"), hh = pick("water.gro", "element H");
    EXPECT_EQ(j["pairs"][0]["hist"].get<std::vector<int64_t>>(), library(fs, o, o, 6, 60));
    EXPECT_EQ(j["pairs"][1]["hist"].get<std::vector<int64_t>>(), library(fs, o, hh, 6, 60));
}

}  // namespace
