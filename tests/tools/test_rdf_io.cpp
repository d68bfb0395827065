// test_rdf_io.cpp -- the trajectory readers on small files holding the same 3 frames in every format
// (tests/data/rdf/make_data.py), selections, and broken files.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

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
    EXPECT_THROW(select(a, "colour red"), IoError);
    EXPECT_THROW(select(a, "name"), IoError);
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
    } catch (const IoError &e) {
        EXPECT_EQ(e.status, QMMM_ERR_FILE_FORMAT);
        EXPECT_NE(std::string(e.what()).find("frame 2 is truncated"), std::string::npos) << e.what();
    }
    try {
        read_all("mismatch.xyz");
        FAIL() << "mismatched atom counts read";
    } catch (const IoError &e) {
        EXPECT_EQ(e.status, QMMM_ERR_FILE_FORMAT);
        EXPECT_NE(std::string(e.what()).find("frame 1 has 191 atoms, the first frame had 192"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("mismatch.xyz:"), std::string::npos) << e.what();
    }
    try {
        open_trajectory(dir + "no_such_file.gro");
        FAIL();
    } catch (const IoError &e) {
        EXPECT_EQ(e.status, QMMM_ERR_FILE_OPEN);
    }
    try {
        open_trajectory(dir + "water.dcd", "auto", dir + "tri.xyz")->atoms();
    } catch (const IoError &e) {  // tri.xyz has 192 atoms too: accepted; a wrong count is not
        FAIL() << e.what();
    }
    try {
        open_trajectory(dir + "water.dcd", "auto", dir + "mismatch.xyz");  // first frame 192: fine
    } catch (const IoError &e) {
        FAIL() << e.what();
    }
    EXPECT_THROW(open_trajectory(dir + "make_data.py"), IoError);  // unknown extension
    EXPECT_THROW(open_trajectory(dir + "water.xyz", "dcd"), IoError);  // not a DCD
}

}  // namespace
