// test_rdf_gpu.cpp -- GPU counts equal CPU counts exactly (64-bit integer histograms, the same bins):
// brute force and cell list, identical/disjoint/overlapping selections, exclusions, triclinic boxes,
// several histogram ranges, a device listed twice (two host threads).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numeric>

#include "gpu_test.hpp"
#include "qmmm_accel.h"
#include "test_rdf_frames.hpp"
#include "test_rdf_reference.hpp"

namespace {

struct Case {
    rdfref::System s1, s2;
    std::vector<int64_t> id1, id2, mol1, mol2;
    bool self = true;
    double rmin = 0, rmax = 5;
    int nb = 100;
};

std::vector<int64_t> run(const Case &c, int backend, int method, std::vector<int> devices = {},
                         qmmm_rdf_stats *st = nullptr) {
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = backend, o.method = method;
    o.n_devices = static_cast<int32_t>(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) o.devices[i] = devices[i];
    qmmm_rdf h = nullptr;
    EXPECT_EQ(qmmm_rdf_create(&h, c.rmin, c.rmax, c.nb, &o), 0) << qmmm_error_message();
    if (c.self)
        EXPECT_EQ(qmmm_rdf_set_selection_self(h, c.s1.n(), c.mol1.empty() ? nullptr : c.mol1.data()), 0);
    else
        EXPECT_EQ(qmmm_rdf_set_selections(h, c.s1.n(), c.id1.empty() ? nullptr : c.id1.data(),
                                          c.mol1.empty() ? nullptr : c.mol1.data(), c.s2.n(),
                                          c.id2.empty() ? nullptr : c.id2.data(), c.mol2.empty() ? nullptr : c.mol2.data()),
                  0)
            << qmmm_error_message();
    EXPECT_EQ(qmmm_rdf_add_frame(h, c.s1.xyz.data(), c.self ? nullptr : c.s2.xyz.data(), c.s1.box), 0)
        << qmmm_error_message();
    std::vector<int64_t> hist(c.nb);
    qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), nullptr, nullptr);
    if (st) qmmm_rdf_stats_last(h, st);
    qmmm_rdf_destroy(h);
    return hist;
}

void expect_equal(const Case &c, const char *what) {
    for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_AUTO}) {
        qmmm_rdf_stats sc{}, sg{};
        const auto cpu = run(c, QMMM_BACKEND_CPU, method, {}, &sc);
        const auto gpu = run(c, QMMM_BACKEND_CUDA, method, {0}, &sg);
        EXPECT_EQ(sc.method, sg.method);
        EXPECT_EQ(cpu, gpu) << what << " method " << sg.method;
        EXPECT_GT(std::accumulate(cpu.begin(), cpu.end(), int64_t{0}), 0) << what;
        EXPECT_EQ(cpu, run(c, QMMM_BACKEND_CUDA, method, {0, 0})) << what << " on device 0 twice";
    }
}

class RdfGpu : public ::testing::Test {
protected:
    void SetUp() override {
        QMMM_REQUIRE_GPU_OR_SKIP();
    }
};

TEST_F(RdfGpu, IdenticalSelectionEqualsCpu) {
    const double box[9] = {40, 0, 0, 0, 38, 0, 0, 0, 42};
    Case c;
    c.s1 = rdfref::gas(20000, box, 1);
    c.rmax = 12, c.nb = 240;
    expect_equal(c, "gas identical");
}

TEST_F(RdfGpu, DisjointAndOverlappingEqualCpu) {
    const double box[9] = {35, 0, 0, 0, 35, 0, 0, 0, 35};
    Case c;
    c.self = false;
    const auto all = rdfref::gas(16000, box, 2);
    c.s1.xyz.assign(all.xyz.begin(), all.xyz.begin() + 3 * 9000);
    c.s2.xyz.assign(all.xyz.begin() + 3 * 6000, all.xyz.end());
    std::copy(box, box + 9, c.s1.box), std::copy(box, box + 9, c.s2.box);
    c.rmax = 10, c.nb = 100;
    expect_equal(c, "disjoint");
    for (int64_t i = 0; i < 9000; ++i) c.id1.push_back(i);
    for (int64_t i = 6000; i < 16000; ++i) c.id2.push_back(i);
    expect_equal(c, "overlapping ids");
    for (auto v : c.id1) c.mol1.push_back(v / 3);
    for (auto v : c.id2) c.mol2.push_back(v / 3);
    expect_equal(c, "molecule exclusions");
}

// The GPU sorts a cell list itself (Frame::device_cells), so the host no longer sees the fullest cell before the
// count. 150,000 sel2 atoms in one cell could overflow a block's 32-bit counters (256 x 126 x 150,000 > 2^32):
// the kernel must then count into the 64-bit histogram and still give the CPU's counts, as a cell list.
TEST_F(RdfGpu, CrowdedCellEqualsCpu) {
    const double box[9] = {60, 0, 0, 0, 60, 0, 0, 0, 60};
    Case c;
    c.self = false;
    c.s1 = rdfref::gas(600, box, 9);
    const double clump[9] = {1.5, 0, 0, 0, 1.5, 0, 0, 0, 1.5};
    c.s2 = rdfref::gas(150000, clump, 10);
    for (size_t i = 0; i < c.s2.xyz.size(); ++i) c.s2.xyz[i] += 31.0;  // inside one 5.45 A cell
    std::copy(box, box + 9, c.s2.box);
    c.rmax = 10, c.nb = 50;
    qmmm_rdf_stats sc{}, sg{};
    const auto cpu = run(c, QMMM_BACKEND_CPU, QMMM_RDF_METHOD_BRUTE, {}, &sc);
    const auto gpu = run(c, QMMM_BACKEND_CUDA, QMMM_RDF_METHOD_CELLS, {0}, &sg);
    EXPECT_EQ(sg.method, QMMM_RDF_METHOD_CELLS);
    EXPECT_EQ(cpu, gpu);
    EXPECT_GT(std::accumulate(cpu.begin(), cpu.end(), int64_t{0}), 300000);
}

TEST_F(RdfGpu, TriclinicAndManyBinsEqualCpu) {
    const double box[9] = {36, 0, 0, 9, 33, 0, -7, 6, 38};
    Case c;
    c.s1 = rdfref::gas(15000, box, 3);
    double lim;
    qmmm_rdf_box_limit(box, &lim);
    c.rmin = 0.5, c.rmax = 0.99 * lim, c.nb = 25000;  // more bins than one shared-memory range
    expect_equal(c, "triclinic, 25000 bins");
    c.nb = 300, c.rmax = 10;
    expect_equal(c, "triclinic cells");
}

TEST_F(RdfGpu, LatticeShellsOnGpu) {
    const auto f = rdfref::fcc(8, 1.0);
    Case c;
    c.s1 = f;
    c.rmin = 0.0125, c.rmax = 2.4875, c.nb = 99;
    for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_CELLS}) {
        const auto h = run(c, QMMM_BACKEND_CUDA, method, {0});
        EXPECT_EQ(h[static_cast<int>((std::sqrt(0.5) - 0.0125) / 0.025)], f.n() * 12 / 2) << method;
        EXPECT_EQ(h[static_cast<int>((1.0 - 0.0125) / 0.025)], f.n() * 6 / 2) << method;
    }
}

// The per-GPU host threads keep device buffers until qmmm_rdf_release(): end them so leak checkers see
// every allocation freed.
class ReleaseDevices : public ::testing::Environment {
public:
    void TearDown() override { EXPECT_EQ(qmmm_rdf_release(), QMMM_SUCCESS); }
};
const auto *release_env = ::testing::AddGlobalTestEnvironment(new ReleaseDevices);

}  // namespace

namespace {

// Frames handed whole to GPUs (device 0 listed twice: two host threads), one GPU in a batch, and the CPU
// frame by frame: the same bits (histogram, g, n, average volume). 5 frames over 2 listings also takes the
// path where the last frame is split.
TEST_F(RdfGpu, FramesOverDevicesEqualCpu) {
    for (bool tri : {false, true}) {
        const auto fs = rdfframes::frames(5, 6000, tri, 60);
        for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_AUTO}) {
            const auto cpu = rdfframes::run(fs, false, QMMM_BACKEND_CPU, {}, 9.0, 180, {}, method);
            const auto one = rdfframes::run(fs, true, QMMM_BACKEND_CUDA, {0}, 9.0, 180, {}, method);
            const auto two = rdfframes::run(fs, true, QMMM_BACKEND_CUDA, {0, 0}, 9.0, 180, {}, method);
            rdfframes::expect_same(cpu, one, "one GPU, batch");
            rdfframes::expect_same(cpu, two, "device 0 twice, batch");
            EXPECT_EQ(two.st.n_workers, 2);
            EXPECT_EQ(two.st.units_per_worker[0] + two.st.units_per_worker[1] >= 4, true);
            std::vector<int64_t> mol(fs[0].n());
            for (size_t i = 0; i < mol.size(); ++i) mol[i] = static_cast<int64_t>(i / 3);
            rdfframes::expect_same(rdfframes::run(fs, false, QMMM_BACKEND_CPU, {}, 9.0, 180, mol, method),
                                   rdfframes::run(fs, true, QMMM_BACKEND_CUDA, {0, 0}, 9.0, 180, mol, method),
                                   "molecule exclusions, batch");
        }
    }
}

TEST_F(RdfGpu, BadFrameInBatchAddsNothing) {
    auto fs = rdfframes::frames(6, 800, false, 70);
    for (int d : {0, 4, 8}) fs[3].box[d] = 15.0;  // r_max = 9 is beyond this box's limit 7.5
    const auto r = rdfframes::run(fs, true, QMMM_BACKEND_CUDA, {0, 0}, 9.0, 90);
    EXPECT_EQ(r.status, QMMM_ERR_INVALID_ARG);
    EXPECT_NE(r.message.find("frame 3"), std::string::npos) << r.message;
    EXPECT_EQ(r.frames, 0);
    int64_t total = 0;
    for (auto v : r.hist) total += v;
    EXPECT_EQ(total, 0);
}

// The split rule: a small single frame stays on the first listing; one with >= 2 x 1e10 distances is cut into
// units over both, with the same bits as one device.
TEST_F(RdfGpu, SingleFrameSplitRule) {
    const auto small = rdfframes::frames(1, 20000, false, 80);
    const auto s = rdfframes::run(small, false, QMMM_BACKEND_CUDA, {0, 0}, 9.0, 100, {}, QMMM_RDF_METHOD_BRUTE);
    EXPECT_GT(s.st.units_per_worker[0], 0);
    EXPECT_EQ(s.st.units_per_worker[1], 0) << "a 2e8-pair frame was split";
    const double L = 40;
    const double box[9] = {L, 0, 0, 0, L, 0, 0, 0, L};
    const std::vector<rdfref::System> big = {rdfref::gas(205000, box, 81)};  // 2.1e10 pairs
    const auto one = rdfframes::run(big, false, QMMM_BACKEND_CUDA, {0}, 19.9, 400, {}, QMMM_RDF_METHOD_BRUTE);
    const auto two = rdfframes::run(big, false, QMMM_BACKEND_CUDA, {0, 0}, 19.9, 400, {}, QMMM_RDF_METHOD_BRUTE);
    rdfframes::expect_same(one, two, "one frame over device 0 twice");
    EXPECT_EQ(two.st.units_per_worker[0] + two.st.units_per_worker[1], two.st.n_units);
    EXPECT_GT(two.st.n_units, 1);
    std::printf("split: %lld units, %lld / %lld per listing\n", (long long)two.st.n_units,
                (long long)two.st.units_per_worker[0], (long long)two.st.units_per_worker[1]);
}

// Units over two listings for small frames too (threshold 0): brute force and cell list, identical and
// disjoint selections, exclusions, a triclinic box, three histogram ranges -- equal to the CPU.
TEST_F(RdfGpu, ForcedSplitEqualsCpu) {
    setenv("QMMM_RDF_MIN_SPLIT_PAIRS", "0", 1);
    const double box[9] = {36, 0, 0, 9, 33, 0, -7, 6, 38};
    Case c;
    c.s1 = rdfref::gas(15000, box, 91);
    c.rmin = 0.5, c.rmax = 14, c.nb = 25000;
    expect_equal(c, "forced split, triclinic, 25000 bins");
    c.nb = 300, c.rmax = 10;
    c.self = false;
    c.s2 = rdfref::gas(7000, box, 92);
    for (int64_t i = 0; i < 15000; ++i) c.id1.push_back(i), c.mol1.push_back(i / 4);
    for (int64_t i = 0; i < 7000; ++i) c.id2.push_back(10000 + i), c.mol2.push_back((10000 + i) / 4);
    expect_equal(c, "forced split, overlapping ids and molecules");
    unsetenv("QMMM_RDF_MIN_SPLIT_PAIRS");
}

}  // namespace
