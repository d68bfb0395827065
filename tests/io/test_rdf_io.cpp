// test_rdf_io.cpp -- the trajectory readers on small files holding the same 3 frames in every format
// (tests/data/rdf/make_data.py), selections, and broken files.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test.hpp"  // QMMM_SKIP
#include "qmmm_accel.h"
#include "rdf_io.hpp"

namespace {

using namespace qmmm::rdfio;
const std::string dir = std::string(QMMM_SOURCE_DIR) + "/tests/data/rdf/";

std::vector<Frame> read_all(const std::string &file, const std::string &top = "") {
    auto r = open_trajectory(dir + file, "auto", top.empty() ? "" : dir + top);
    std::vector<Frame> v;
    Frame f;
    while (r->next(f)) v.push_back(f);
    return v;
}

TEST(RdfIo, AllFormatsReadTheSameFrames) {
    const auto ref = read_all("water.xyz");
    ASSERT_EQ(ref.size(), 3u);
    ASSERT_EQ(ref[0].xyz.size(), 3u * 192);
    EXPECT_TRUE(ref[0].has_box);
    EXPECT_DOUBLE_EQ(ref[0].box[4], 12.4);
    for (const char *file : {"water.pdb", "water.gro", "water.lammpstrj", "water.dcd"}) {
        const auto v = read_all(file, std::string(file) == "water.dcd" ? "water.pdb" : "");
        ASSERT_EQ(v.size(), 3u) << file;
        for (size_t f = 0; f < 3; ++f) {
            ASSERT_EQ(v[f].xyz.size(), ref[f].xyz.size()) << file;
            double err = 0;
            for (size_t i = 0; i < v[f].xyz.size(); ++i) err = std::max(err, std::fabs(v[f].xyz[i] - ref[f].xyz[i]));
            EXPECT_LT(err, 2e-6) << file << " frame " << f;  // 3 decimals in every text file; float in DCD
            ASSERT_TRUE(v[f].has_box) << file;
            for (int k = 0; k < 9; ++k) EXPECT_NEAR(v[f].box[k], ref[f].box[k], 1e-9) << file << " box " << k;
        }
    }
}

TEST(RdfIo, AtomNamesResiduesSelections) {
    auto r = open_trajectory(dir + "water.pdb");
    Frame f;
    ASSERT_TRUE(r->next(f));
    const auto &a = r->atoms();
    EXPECT_EQ(a[0].name, "OW");
    EXPECT_EQ(a[1].name, "HW1");
    EXPECT_EQ(a[0].resname, "SOL");
    EXPECT_EQ(a[0].element, "O");
    EXPECT_EQ(a[5].mol, 1);
    EXPECT_EQ(select(a, "name OW").size(), 64u);
    EXPECT_EQ(select(a, "element H").size(), 128u);
    EXPECT_EQ(select(a, "resname SOL and name HW*").size(), 128u);
    EXPECT_EQ(select(a, "index 0-9 30").size(), 11u);
    EXPECT_EQ(select(a, "resid 2-3 and element O").size(), 2u);
    EXPECT_EQ(select(a, "all").size(), 192u);
    EXPECT_TRUE(select(a, "name XX").empty());
    EXPECT_THROW(select(a, "colour red"), qmmm::Error);
    EXPECT_THROW(select(a, "name"), qmmm::Error);
    EXPECT_THROW(select(a, "all OW"), qmmm::Error);
    // a negative index is refused, never read as a range from 0 ("index -5-3" once selected atoms 0-3); so is an
    // empty range, and a number out of range
    for (const char *bad : {"index -5-3", "index -1", "index 5-3", "index 3--1", "index 99999999999999999999"}) {
        try {
            select(a, bad);
            ADD_FAILURE() << "'" << bad << "' was accepted";
        } catch (const qmmm::Error &e) {
            EXPECT_EQ(e.status, QMMM_ERR_INVALID_ARG) << bad;
            EXPECT_NE(std::string(e.what()).find(bad + 6), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(select(a, "index 0-0").size(), 1u);
    // GRO and LAMMPS give the same molecules; LAMMPS types from the type column
    auto g = open_trajectory(dir + "water.gro");
    ASSERT_TRUE(g->next(f));
    EXPECT_EQ(g->atoms()[4].mol, 1);
    EXPECT_EQ(select(g->atoms(), "name OW").size(), 64u);
    auto l = open_trajectory(dir + "water.lammpstrj");
    ASSERT_TRUE(l->next(f));
    EXPECT_EQ(select(l->atoms(), "type 1").size(), 64u);
    EXPECT_EQ(l->atoms()[191].mol, 64);
}

TEST(RdfIo, TriclinicLammpsEqualsExtendedXyz) {
    const auto x = read_all("tri.xyz"), l = read_all("tri.lammpstrj");
    ASSERT_EQ(x.size(), 2u);
    ASSERT_EQ(l.size(), 2u);
    const double cell[9] = {13, 0, 0, 2.5, 12.5, 0, -1.5, 2, 12};
    for (size_t f = 0; f < 2; ++f) {
        for (int k = 0; k < 9; ++k) EXPECT_NEAR(l[f].box[k], cell[k], 1e-12) << k;
        for (size_t i = 0; i < x[f].xyz.size(); ++i) EXPECT_NEAR(l[f].xyz[i], x[f].xyz[i], 1e-9);
    }
    // and the same g(r) through the library
    auto g = [](const std::vector<Frame> &v) {
        qmmm_rdf_options o;
        qmmm_rdf_options_default(&o);
        o.backend = QMMM_BACKEND_CPU;
        qmmm_rdf h;
        qmmm_rdf_create(&h, 0, 5.5, 55, &o);
        qmmm_rdf_set_selection_self(h, 192, nullptr);
        for (const auto &f : v) EXPECT_EQ(qmmm_rdf_add_frame(h, f.xyz.data(), nullptr, f.box), 0) << qmmm_error_message();
        std::vector<int64_t> hist(55);
        qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), nullptr, nullptr);
        qmmm_rdf_destroy(h);
        return hist;
    };
    EXPECT_EQ(g(x), g(l));
}

TEST(RdfIo, FramesCanBeSkipped) {
    auto r = open_trajectory(dir + "water.dcd");
    EXPECT_EQ(r->n_frames_hint(), 3);
    EXPECT_TRUE(r->skip());
    Frame f;
    ASSERT_TRUE(r->next(f));
    const auto ref = read_all("water.xyz");
    EXPECT_NEAR(f.xyz[10], ref[1].xyz[10], 1e-5);
    EXPECT_TRUE(r->skip());
    EXPECT_FALSE(r->skip());
    EXPECT_FALSE(r->next(f));
}

TEST(RdfIo, BrokenFilesSayWhere) {
    try {
        read_all("truncated.dcd");
        FAIL() << "truncated DCD read";
    } catch (const qmmm::Error &e) {
        EXPECT_EQ(e.status, QMMM_ERR_FILE_FORMAT);
        EXPECT_NE(std::string(e.what()).find("frame 2 is truncated"), std::string::npos) << e.what();
    }
    try {
        read_all("mismatch.xyz");
        FAIL() << "mismatched atom counts read";
    } catch (const qmmm::Error &e) {
        EXPECT_EQ(e.status, QMMM_ERR_FILE_FORMAT);
        EXPECT_NE(std::string(e.what()).find("frame 1 has 191 atoms, the first frame had 192"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("mismatch.xyz:"), std::string::npos) << e.what();
    }
    try {
        open_trajectory(dir + "no_such_file.gro");
        FAIL();
    } catch (const qmmm::Error &e) {
        EXPECT_EQ(e.status, QMMM_ERR_FILE_OPEN);
    }
    try {
        open_trajectory(dir + "water.dcd", "auto", dir + "tri.xyz")->atoms();
    } catch (const qmmm::Error &e) {  // tri.xyz has 192 atoms too: accepted; a wrong count is not
        FAIL() << e.what();
    }
    try {
        open_trajectory(dir + "water.dcd", "auto", dir + "mismatch.xyz");  // first frame 192: fine
    } catch (const qmmm::Error &e) {
        FAIL() << e.what();
    }
    EXPECT_THROW(open_trajectory(dir + "make_data.py"), qmmm::Error);  // unknown extension
    EXPECT_THROW(open_trajectory(dir + "water.xyz", "dcd"), qmmm::Error);  // not a DCD
}

// A word that is no keyword is named as an unknown keyword, and the message lists the
// language's keywords (it used to say "'nonsense' needs at least one value").
TEST(RdfIo, UnknownSelectionWordNamesTheKeywords) {
    auto r = open_trajectory(dir + "water.pdb");
    Frame f;
    ASSERT_TRUE(r->next(f));
    for (const auto &[expr, word] : std::vector<std::pair<std::string, std::string>>{
             {"nonsense", "nonsense"}, {"name OW and nonsense", "nonsense"}, {"Nonsense 1 2", "Nonsense"}}) {
        try {
            select(r->atoms(), expr);
            FAIL() << expr;
        } catch (const qmmm::Error &e) {
            const std::string m = e.what();
            EXPECT_EQ(e.status, QMMM_ERR_INVALID_ARG);
            EXPECT_NE(m.find("selection '" + expr + "': unknown keyword '" + word + "'"), std::string::npos) << m;
            EXPECT_EQ(m.find("needs at least one value"), std::string::npos) << m;
            for (const char *k : {"name", "element", "resname", "type", "index", "resid", "all", "'and'"})
                EXPECT_NE(m.find(k), std::string::npos) << k << " missing in: " << m;
        }
    }
    try {  // a keyword without values still says so, with the same help
        select(r->atoms(), "name");
        FAIL();
    } catch (const qmmm::Error &e) {
        EXPECT_NE(std::string(e.what()).find("'name' needs at least one value; a selection is"), std::string::npos) << e.what();
    }
}

// XTC and TRR through GROMACS's reader: the files make_gmx_data.sh wrote with gmx trjconv from water.gro and
// tri.gro hold the same frames, boxes and coordinates (XTC: 4 decimals in nm, as the GRO files; TRR: float).
TEST(RdfIo, XtcAndTrrEqualTheirGroSource) {
    if (!have_gromacs()) QMMM_SKIP("built without GROMACS's library (libgromacs-dev)");
    for (const auto &[file, ref] : std::vector<std::pair<std::string, std::string>>{
             {"water.xtc", "water.gro"}, {"water.trr", "water.gro"}, {"tri.xtc", "tri.gro"}}) {
        const auto v = read_all(file), g = read_all(ref);
        ASSERT_EQ(v.size(), g.size()) << file;
        ASSERT_GE(v.size(), 2u) << file;
        for (size_t f = 0; f < v.size(); ++f) {
            ASSERT_EQ(v[f].xyz.size(), g[f].xyz.size()) << file;
            double err = 0;
            for (size_t i = 0; i < v[f].xyz.size(); ++i) err = std::max(err, std::fabs(v[f].xyz[i] - g[f].xyz[i]));
            EXPECT_LT(err, 2e-6) << file << " frame " << f;  // float nm x 10 of numbers below 20 Angstrom
            ASSERT_TRUE(v[f].has_box) << file;
            for (int k = 0; k < 9; ++k) EXPECT_NEAR(v[f].box[k], g[f].box[k], 2e-6) << file << " frame " << f << " box " << k;
        }
    }
    // the triclinic cell as the GRO file gives it (and as tri.xyz, Angstrom)
    const auto t = read_all("tri.xtc");
    const double cell[9] = {13, 0, 0, 2.5, 12.5, 0, -1.5, 2, 12};
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(t[1].box[k], cell[k], 2e-6) << k;
    // names from a topology, atoms numbered without one
    auto r = open_trajectory(dir + "water.xtc", "auto", dir + "water.pdb");
    EXPECT_EQ(select(r->atoms(), "name OW").size(), 64u);
    EXPECT_EQ(select(open_trajectory(dir + "water.trr")->atoms(), "index 0-9").size(), 10u);
    // skipping frames
    auto s = open_trajectory(dir + "water.xtc");
    Frame f;
    EXPECT_TRUE(s->skip());
    ASSERT_TRUE(s->next(f));
    EXPECT_NEAR(f.xyz[10], read_all("water.gro")[1].xyz[10], 2e-6);
    EXPECT_TRUE(s->skip());
    EXPECT_FALSE(s->skip());
    EXPECT_FALSE(s->next(f));
}

TEST(RdfIo, BrokenXtcAndTrrSayWhere) {
    if (!have_gromacs()) QMMM_SKIP("built without GROMACS's library (libgromacs-dev)");
    const auto expect = [](const std::function<void()> &fn, int status, const std::string &text) {
        try {
            fn();
            ADD_FAILURE() << "no error; expected: " << text;
        } catch (const qmmm::Error &e) {
            EXPECT_EQ(e.status, status) << e.what();
            EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
        }
    };
    // water.xtc cut inside frame 2: frames 0 and 1, then an error naming the file and the frame
    auto r = open_trajectory(dir + "truncated.xtc");
    Frame f;
    EXPECT_TRUE(r->next(f));
    EXPECT_TRUE(r->next(f));
    expect([&] { r->next(f); }, QMMM_ERR_FILE_FORMAT, "truncated.xtc: frame 2 is incomplete");
    expect([] { open_trajectory(dir + "water.trr", "xtc"); }, QMMM_ERR_FILE_FORMAT,
           "water.trr: not an XTC file (magic number 1993, expected 1995)");
    expect([] { open_trajectory(dir + "water.gro", "trr"); }, QMMM_ERR_FILE_FORMAT, "water.gro: not a TRR file");
    expect([] { open_trajectory(dir + "no_such.xtc"); }, QMMM_ERR_FILE_OPEN, "no_such.xtc: cannot open");
    EXPECT_NO_THROW(open_trajectory(dir + "water.xtc", "auto", dir + "tri.lammpstrj"));  // 192 atoms: fine
}

TEST(RdfIo, XtcWithoutGromacsSaysWhatToInstall) {
    if (have_gromacs()) QMMM_SKIP("this build reads XTC through GROMACS");
    for (const char *file : {"water.xtc", "water.trr"}) {
        try {
            open_trajectory(dir + file);
            FAIL() << file;
        } catch (const qmmm::Error &e) {
            EXPECT_EQ(e.status, QMMM_ERR_UNSUPPORTED);
            EXPECT_NE(std::string(e.what()).find("libgromacs-dev"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("xyz, pdb, gro, lammps, dcd"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
