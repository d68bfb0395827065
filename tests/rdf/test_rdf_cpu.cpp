// test_rdf_cpu.cpp -- RDF on the CPU against analytic cases (ideal gas, simple cubic and fcc shells) and a
// double-precision reference counter (triclinic boxes, exclusions, overlapping selections).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <numeric>

#include "qmmm_accel.h"
#include "test_rdf_frames.hpp"
#include "test_rdf_reference.hpp"

namespace {

using rdfref::System;

struct Result {
    std::vector<double> r, g, n;
    std::vector<int64_t> h;
    qmmm_rdf_stats st{};
};

// One selection paired with itself over the given frames.
Result run_self(const std::vector<System> &frames, double rmin, double rmax, int nb, int method,
                const int64_t *mol = nullptr, int backend = QMMM_BACKEND_CPU) {
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = backend;
    o.method = method;
    qmmm_rdf h = nullptr;
    EXPECT_EQ(qmmm_rdf_create(&h, rmin, rmax, nb, &o), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(qmmm_rdf_set_selection_self(h, frames[0].n(), mol), QMMM_SUCCESS) << qmmm_error_message();
    for (const auto &f : frames)
        EXPECT_EQ(qmmm_rdf_add_frame(h, f.xyz.data(), nullptr, f.box), QMMM_SUCCESS) << qmmm_error_message();
    Result res;
    res.r.resize(nb), res.g.resize(nb), res.n.resize(nb), res.h.resize(nb);
    int64_t nf = 0;
    EXPECT_EQ(qmmm_rdf_results(h, res.r.data(), res.g.data(), res.n.data(), res.h.data(), &nf, nullptr), 0);
    EXPECT_EQ(nf, static_cast<int64_t>(frames.size()));
    qmmm_rdf_stats_last(h, &res.st);
    EXPECT_EQ(qmmm_rdf_destroy(h), QMMM_SUCCESS);
    return res;
}

double n_at(const Result &r, double x) {  // n(r) at the upper edge of the bin holding x
    for (size_t k = 0; k < r.r.size(); ++k)
        if (x < r.r[k] + 0.5 * (r.r[1] - r.r[0])) return r.n[k];
    return -1;
}

TEST(RdfCpu, SimpleCubicShellsExact) {
    // Shells of the simple cubic lattice (a = 1): r^2 = 1, 2, 3, 4, 5, 6, 8, 9 hold 6, 12, 8, 6, 24, 24, 12, 30.
    const double shells[] = {1, std::sqrt(2.), std::sqrt(3.), 2, std::sqrt(5.), std::sqrt(6.), std::sqrt(8.), 3};
    const double cum[] = {6, 18, 26, 32, 56, 80, 92, 122};
    for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_CELLS}) {
        const auto sc = rdfref::simple_cubic(method == QMMM_RDF_METHOD_CELLS ? 9 : 8, 1.0);
        const auto res = run_self({sc}, 0.025, 3.475, 69, method);
        EXPECT_EQ(res.st.method, method);
        for (int s = 0; s < 8; ++s) EXPECT_DOUBLE_EQ(n_at(res, shells[s]), cum[s]) << "shell " << s << " method " << method;
        // Counts only in the bins of the shells, each N * shell / 2 pairs.
        int64_t total = 0;
        for (auto c : res.h) total += c;
        EXPECT_EQ(total, sc.n() * (122 + 24 + 24 + 8) / 2);  // and r^2 = 10, 11, 12 below r_max
        EXPECT_EQ(res.h[static_cast<int>((1.0 - 0.025) / 0.05)], sc.n() * 6 / 2);
    }
}

TEST(RdfCpu, FccShellsExact) {
    // fcc (a = 1): r^2 = 1/2, 1, 3/2, 2, 5/2, 3, 7/2, 4 hold 12, 6, 24, 12, 24, 8, 48, 6.
    const double r2[] = {0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4};
    const double cum[] = {12, 18, 42, 54, 78, 86, 134, 140};
    const auto f = rdfref::fcc(5, 1.0);
    for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_AUTO}) {
        const auto res = run_self({f}, 0.0125, 2.4875, 99, method);
        for (int s = 0; s < 8; ++s) EXPECT_DOUBLE_EQ(n_at(res, std::sqrt(r2[s])), cum[s]) << "shell " << s;
        // g peak of the first shell: 12 neighbours in a shell of width dr at density N/V.
        const int k = static_cast<int>((std::sqrt(0.5) - 0.0125) / 0.025);
        const double lo = 0.0125 + k * 0.025, hi = lo + 0.025;
        const double ideal = (f.n() - 1.0) / 125.0 * 4.0 / 3.0 * M_PI * (hi * hi * hi - lo * lo * lo);
        EXPECT_NEAR(res.g[k], 12.0 / ideal, 1e-12 * res.g[k]);
    }
    // The cell list takes over where the box is wide enough: fcc 7x7x7, r_max 2.4875 -> 7 >= 2.5 r_max.
    const auto res = run_self({rdfref::fcc(7, 1.0)}, 0.0125, 2.4875, 99, QMMM_RDF_METHOD_AUTO);
    EXPECT_EQ(res.st.method, QMMM_RDF_METHOD_CELLS);
    for (int s = 0; s < 8; ++s) EXPECT_DOUBLE_EQ(n_at(res, std::sqrt(r2[s])), cum[s]) << "cells shell " << s;
}

TEST(RdfCpu, IdealGasIsOne) {
    // 4 frames of 3000 uniform points: every bin within 5 sigma (Poisson) of g = 1, and chi^2 / bins ~ 1.
    const double box[9] = {20, 0, 0, 0, 20, 0, 0, 0, 20};
    std::vector<System> frames;
    for (int f = 0; f < 4; ++f) frames.push_back(rdfref::gas(3000, box, 100 + f));
    for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_CELLS}) {
        const auto res = run_self(frames, 0.0, 7.8, 39, method);  // the cell list needs 2.5 r_max <= 20
        double chi2 = 0;
        for (int k = 0; k < 39; ++k) {
            const double expected = res.h[k] / res.g[k];
            const double z = (res.h[k] - expected) / std::sqrt(expected);
            EXPECT_LT(std::fabs(z), 5.0) << "bin " << k << " g = " << res.g[k];
            chi2 += z * z;
        }
        EXPECT_LT(chi2 / 39, 2.0);
        EXPECT_GT(chi2 / 39, 0.3);
    }
}

TEST(RdfCpu, BruteAndCellsAgreeBitwise) {
    const double box[9] = {30, 0, 0, 0, 27, 0, 0, 0, 33};
    const auto s = rdfref::gas(4000, box, 7);
    const auto a = run_self({s}, 0.5, 9.0, 170, QMMM_RDF_METHOD_BRUTE);
    const auto b = run_self({s}, 0.5, 9.0, 170, QMMM_RDF_METHOD_CELLS);
    EXPECT_EQ(a.h, b.h);
}

TEST(RdfCpu, TriclinicLatticeEqualsOrthorhombic) {
    // The sc lattice 8x8x8 in its cubic cell and in a skewed cell of the same lattice (b = (8, 8, 0)), and
    // then everything rotated: the same shells and counts.
    const auto sc = rdfref::simple_cubic(8, 1.0);
    const auto ortho = run_self({sc}, 0.025, 2.775, 55, QMMM_RDF_METHOD_BRUTE);
    System skew = sc;
    skew.box[3] = 8, skew.box[4] = 8;
    const auto tri = run_self({skew}, 0.025, 2.775, 55, QMMM_RDF_METHOD_BRUTE);
    EXPECT_EQ(ortho.h, tri.h);
    const double c = std::cos(0.3), s = std::sin(0.3);
    auto rot = [&](const double *v, double *o) { o[0] = c * v[0] - s * v[1], o[1] = s * v[0] + c * v[1], o[2] = v[2]; };
    System rotd = skew;
    for (int64_t i = 0; i < rotd.n(); ++i) rot(&skew.xyz[3 * i], &rotd.xyz[3 * i]);
    for (int v = 0; v < 3; ++v) rot(&skew.box[3 * v], &rotd.box[3 * v]);
    const auto r = run_self({rotd}, 0.025, 2.775, 55, QMMM_RDF_METHOD_BRUTE);
    EXPECT_EQ(ortho.h, r.h);
}

TEST(RdfCpu, TriclinicGasAgainstReference) {
    // A strongly skewed cell, random gas: float counts against the double reference with its 27-image
    // search (a pair may move across a bin edge by float rounding: allow 2), and cells == brute bitwise.
    const double box[9] = {16, 0, 0, 5, 15, 0, -4, 3, 17};
    double lim = 0;
    ASSERT_EQ(qmmm_rdf_box_limit(box, &lim), QMMM_SUCCESS);
    const auto s = rdfref::gas(1500, box, 3);
    std::vector<int64_t> key(s.n());
    std::iota(key.begin(), key.end(), 0);
    const auto ref = rdfref::count(s, key, s, key, true, 0.0, 0.98 * lim, 60);
    const auto a = run_self({s}, 0.0, 0.98 * lim, 60, QMMM_RDF_METHOD_BRUTE);
    int64_t moved = 0;
    for (int k = 0; k < 60; ++k) moved += std::llabs(ref[k] - a.h[k]);
    EXPECT_LE(moved, 2);
    EXPECT_EQ(std::accumulate(ref.begin(), ref.end(), int64_t{0}), std::accumulate(a.h.begin(), a.h.end(), int64_t{0}));
    // A bigger copy of the same cell for the cell list.
    double big[9];
    for (int i = 0; i < 9; ++i) big[i] = 3 * box[i];
    const auto s3 = rdfref::gas(20000, big, 4);
    EXPECT_EQ(run_self({s3}, 0.0, lim, 60, QMMM_RDF_METHOD_BRUTE).h, run_self({s3}, 0.0, lim, 60, QMMM_RDF_METHOD_CELLS).h);
}

TEST(RdfCpu, MoleculeExclusionsAndNormalisation) {
    // Triatomic "molecules" (bond 1) placed at random: intermolecular g(r) against the reference, and
    // g -> 1 at large r with N_pairs counting only intermolecular pairs.
    const double box[9] = {18, 0, 0, 0, 18, 0, 0, 0, 18};
    auto centres = rdfref::gas(600, box, 11);
    System s;
    std::copy(box, box + 9, s.box);
    std::vector<int64_t> mol;
    for (int64_t m = 0; m < centres.n(); ++m)
        for (int a = 0; a < 3; ++a) {
            const double *c = &centres.xyz[3 * m];
            s.xyz.insert(s.xyz.end(), {c[0] + (a == 1), c[1] + (a == 2), c[2]});
            mol.push_back(1000 + m);
        }
    const auto ref = rdfref::count(s, mol, s, mol, true, 0.0, 8.0, 32);
    const auto res = run_self({s}, 0.0, 8.0, 32, QMMM_RDF_METHOD_AUTO, mol.data());
    int64_t moved = 0;
    for (int k = 0; k < 32; ++k) moved += std::llabs(ref[k] - res.h[k]);
    EXPECT_LE(moved, 2);
    EXPECT_DOUBLE_EQ(res.st.n_pairs, 0.5 * (1800.0 * 1800.0 - 600 * 9));
    double mean = 0;
    for (int k = 16; k < 32; ++k) mean += res.g[k] / 16;
    EXPECT_NEAR(mean, 1.0, 0.03);
}

TEST(RdfCpu, OverlappingSelectionsWithIds) {
    // sel1 = atoms 0..699, sel2 = atoms 400..1099 of one gas: the 300 shared atoms are never paired with
    // themselves; ordered pairs against the reference, N_pairs = 700 * 700 - 300.
    const double box[9] = {15, 0, 0, 0, 15, 0, 0, 0, 15};
    const auto all = rdfref::gas(1100, box, 5);
    System s1, s2;
    std::copy(box, box + 9, s1.box), std::copy(box, box + 9, s2.box);
    std::vector<int64_t> id1, id2;
    for (int64_t i = 0; i < 700; ++i) s1.xyz.insert(s1.xyz.end(), &all.xyz[3 * i], &all.xyz[3 * i + 3]), id1.push_back(i);
    for (int64_t i = 400; i < 1100; ++i) s2.xyz.insert(s2.xyz.end(), &all.xyz[3 * i], &all.xyz[3 * i + 3]), id2.push_back(i);
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = QMMM_BACKEND_CPU;
    qmmm_rdf h;
    ASSERT_EQ(qmmm_rdf_create(&h, 0.0, 7.0, 28, &o), 0);
    ASSERT_EQ(qmmm_rdf_set_selections(h, 700, id1.data(), nullptr, 700, id2.data(), nullptr), 0) << qmmm_error_message();
    ASSERT_EQ(qmmm_rdf_add_frame(h, s1.xyz.data(), s2.xyz.data(), box), 0) << qmmm_error_message();
    std::vector<int64_t> hist(28);
    ASSERT_EQ(qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), nullptr, nullptr), 0);
    qmmm_rdf_stats st;
    qmmm_rdf_stats_last(h, &st);
    EXPECT_EQ(st.identical, 0);
    EXPECT_DOUBLE_EQ(st.n_pairs, 700.0 * 700.0 - 300.0);
    const auto ref = rdfref::count(s1, id1, s2, id2, false, 0.0, 7.0, 28);
    int64_t moved = 0;
    for (int k = 0; k < 28; ++k) moved += std::llabs(ref[k] - hist[k]);
    // Positions are rounded to 2^-23 of the cell (1.8e-6 A here): of the 2e5 pairs, the few within ~3e-6 A of
    // one of the 28 bin edges may land in the neighbour bin (~5 expected; each moved pair counts 2 here).
    EXPECT_LE(moved, 16);
    // Identical id lists are detected as one selection: unordered pairs.
    ASSERT_EQ(qmmm_rdf_set_selections(h, 700, id1.data(), nullptr, 700, id1.data(), nullptr), 0);
    ASSERT_EQ(qmmm_rdf_add_frame(h, s1.xyz.data(), nullptr, box), 0) << qmmm_error_message();
    qmmm_rdf_stats_last(h, &st);
    EXPECT_EQ(st.identical, 1);
    EXPECT_DOUBLE_EQ(st.n_pairs, 700.0 * 699.0 / 2);
    EXPECT_EQ(qmmm_rdf_destroy(h), 0);
}

TEST(RdfCpu, ThreadCountDoesNotChangeCounts) {
    const double box[9] = {25, 0, 0, 0, 25, 0, 0, 0, 25};
    const auto s = rdfref::gas(5000, box, 9);
    std::vector<int64_t> base;
    for (int nt : {1, 2, 3}) {
        qmmm_rdf_options o;
        qmmm_rdf_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.n_threads = nt;
        qmmm_rdf h;
        ASSERT_EQ(qmmm_rdf_create(&h, 0.0, 10.0, 100, &o), 0);
        ASSERT_EQ(qmmm_rdf_set_selection_self(h, s.n(), nullptr), 0);
        ASSERT_EQ(qmmm_rdf_add_frame(h, s.xyz.data(), nullptr, box), 0);
        std::vector<int64_t> hist(100);
        qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), nullptr, nullptr);
        if (base.empty()) base = hist;
        EXPECT_EQ(hist, base) << nt << " threads";
        qmmm_rdf_destroy(h);
    }
}

// Called from inside a caller's parallel region with nesting off, the library gets a team of one thread, fewer
// than it asks for; its cell sort once filled only the first thread's share of the atoms then (g(r) off by a
// factor, found with OMP_THREAD_LIMIT=1 on a 100,000-atom DCD). The counts must not depend on the team.
TEST(RdfCpu, TeamSmallerThanAskedGivesTheSameCounts) {
    const double box[9] = {30, 0, 0, 0, 30, 0, 0, 0, 30};
    const auto s = rdfref::gas(20000, box, 11);
    auto run = [&](bool nested) {
        qmmm_rdf_options o;
        qmmm_rdf_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.n_threads = 4, o.method = QMMM_RDF_METHOD_CELLS;
        qmmm_rdf h;
        EXPECT_EQ(qmmm_rdf_create(&h, 0.0, 6.0, 60, &o), 0);
        EXPECT_EQ(qmmm_rdf_set_selection_self(h, s.n(), nullptr), 0);
        if (nested) {
            const int levels = omp_get_max_active_levels();
            omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
#pragma omp single
            EXPECT_EQ(qmmm_rdf_add_frame(h, s.xyz.data(), nullptr, box), 0);
            omp_set_max_active_levels(levels);
        } else {
            EXPECT_EQ(qmmm_rdf_add_frame(h, s.xyz.data(), nullptr, box), 0);
        }
        std::vector<int64_t> hist(60);
        qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), nullptr, nullptr);
        qmmm_rdf_destroy(h);
        return hist;
    };
    const auto free_team = run(false), one_thread = run(true);
    EXPECT_GT(std::accumulate(free_team.begin(), free_team.end(), int64_t{0}), 0);
    EXPECT_EQ(one_thread, free_team);
}

}  // namespace

// qmmm_rdf_add_frames is frame-by-frame counting to the bit (histogram, g, n, average volume), for boxes that
// change between frames, orthorhombic and triclinic, brute force and cell list.
TEST(RdfCpuFrames, BatchEqualsFrameByFrame) {
    for (bool tri : {false, true}) {
        const auto fs = rdfframes::frames(4, 2500, tri, 40);
        for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_AUTO}) {
            const auto one = rdfframes::run(fs, false, QMMM_BACKEND_CPU, {}, 9.0, 90, {}, method);
            const auto all = rdfframes::run(fs, true, QMMM_BACKEND_CPU, {}, 9.0, 90, {}, method);
            rdfframes::expect_same(one, all, tri ? "triclinic" : "orthorhombic");
            EXPECT_EQ(all.frames, 4);
            if (method == QMMM_RDF_METHOD_BRUTE) EXPECT_EQ(all.st.pairs_visited, 4 * one.st.pairs_visited);
        }
    }
}

// A bad frame in a batch: the status and a message naming the frame; nothing of the batch is added.
TEST(RdfCpuFrames, BadFrameAddsNothing) {
    auto fs = rdfframes::frames(4, 500, false, 50);
    for (int d : {0, 4, 8}) fs[2].box[d] = 15.0;  // r_max = 9 is beyond this box's limit 7.5
    const auto r = rdfframes::run(fs, true, QMMM_BACKEND_CPU, {}, 9.0, 90);
    EXPECT_EQ(r.status, QMMM_ERR_INVALID_ARG);
    EXPECT_NE(r.message.find("frame 2"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("7.5"), std::string::npos) << r.message;
    EXPECT_EQ(r.frames, 0);
    int64_t total = 0;
    for (auto v : r.hist) total += v;
    EXPECT_EQ(total, 0);
}

// The CPU counter's two builds (FMA instruction, vectorised; library fmaf) give the same bits.
TEST(RdfCpuFrames, FmaAndLibraryFmafAgree) {
    const auto fs = rdfframes::frames(2, 1500, true, 90);
    for (int method : {QMMM_RDF_METHOD_BRUTE, QMMM_RDF_METHOD_AUTO}) {
        const auto a = rdfframes::run(fs, true, QMMM_BACKEND_CPU, {}, 9.0, 90, {}, method);
        setenv("QMMM_RDF_CPU_NO_FMA", "1", 1);
        const auto b = rdfframes::run(fs, true, QMMM_BACKEND_CPU, {}, 9.0, 90, {}, method);
        unsetenv("QMMM_RDF_CPU_NO_FMA");
        rdfframes::expect_same(a, b, "fma instruction vs library fmaf");
    }
}

// A knob's value outside its accepted set fails the count that reads it, with a message naming the knob; nothing is
// guessed (before, any value not starting with 0 meant 1).
TEST(RdfCpuFrames, BadKnobValueFailsTheCount) {
    const auto fs = rdfframes::frames(1, 300, false, 91);
    for (const char *bad : {"2", "yes", "1x"}) {
        setenv("QMMM_RDF_CPU_NO_FMA", bad, 1);
        const auto r = rdfframes::run(fs, true, QMMM_BACKEND_CPU, {}, 9.0, 90);
        unsetenv("QMMM_RDF_CPU_NO_FMA");
        EXPECT_EQ(r.status, QMMM_ERR_INVALID_ARG) << bad;
        EXPECT_NE(r.message.find("QMMM_RDF_CPU_NO_FMA"), std::string::npos) << r.message;
        EXPECT_EQ(r.frames, 0) << bad;
    }
    setenv("QMMM_RDF_CPU_NO_FMA", "0", 1);
    const auto ok = rdfframes::run(fs, true, QMMM_BACKEND_CPU, {}, 9.0, 90);
    unsetenv("QMMM_RDF_CPU_NO_FMA");
    EXPECT_EQ(ok.status, QMMM_SUCCESS) << ok.message;
    EXPECT_EQ(ok.frames, 1);
}
