// rdf_pipeline_bench.cpp -- whole-frame RDF throughput, with its baselines in the same run:
//
//  frame rows   N water-like atoms (a third "O", two thirds "H", uniform at 0.1 / A^3), r_max 12 A, cell list,
//               --frames frames in one qmmm_rdf_add_frames call per handle (after a warm-up call): ms per frame
//               of the whole call (preparation, copies, counting), the median of 5 calls (1 and 3 pairs alternate). "1 pair" = all atoms with themselves;
//               "3 pairs" = O-O, O-H and H-H through three handles: the same pairs split three ways, so
//               hist(OO) + hist(OH) + hist(HH) must equal hist(all) ("equal" column) and the ratio
//               3 pairs / 1 pair is the cost of asking for them separately.
//  tool rows    (--tool PATH_TO_qmmm-rdf) an N-atom, --traj-frames DCD (and XTC when built with GROMACS) written
//               to --tmp; the reader alone (open, next() for every frame: the I/O limit) against the qmmm-rdf
//               tool on the same file (one pair, all atoms; and the three pairs). The tool's rate is taken between
//               a short and the full run (frames difference / time difference; each run twice, the faster
//               kept), so start-up (process, GPU context) is not counted; the whole-run rate is printed as well.
// Prints a table and writes JSON (--json).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "qmmm_accel.h"
#include "rdf_io.hpp"
#ifdef QMMM_RDF_GROMACS
#include <gromacs/fileio/trxio.h>
#include <gromacs/trajectory/trajectoryframe.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Sys {
    int64_t n, n_o;
    double L;
    std::vector<double> xyz;  // atoms [0, n_o) are "O", the rest "H"
};

Sys make_sys(int64_t n, uint64_t seed) {
    Sys s;
    s.n = n, s.n_o = n / 3, s.L = std::cbrt(n / 0.1);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, s.L);
    s.xyz.resize(3 * n);
    for (auto &v : s.xyz) v = u(rng);
    return s;
}

// One handle over frames (batch of nf identical-shape frames), wall seconds of the timed call.
struct Handle {
    qmmm_rdf h = nullptr;
    ~Handle() {
        if (h) qmmm_rdf_destroy(h);
    }
};

void ok(int s, const char *what) {
    if (s != QMMM_SUCCESS) {
        std::fprintf(stderr, "rdf_pipeline_bench: %s: %s\n", what, qmmm_error_message());
        std::exit(1);
    }
}

// Frame rows: one pair (all atoms with themselves) or three (O-O, O-H, H-H through three handles) over nf copies
// of the frame. time() makes one timed call per handle and returns its seconds; prep_ms: the library's
// preparation per frame in that call (qmmm_rdf_stats::prep_seconds, summed over the handles; it overlaps the
// counting); hist: the last call's counts summed over the handles.
struct FrameCase {
    const Sys &s;
    int nf;
    bool three;
    int bins;
    std::vector<Handle> hs;
    std::vector<double> all, o_xyz, h_xyz, boxes;

    FrameCase(const Sys &sys, int frames, int backend, bool three_pairs, int n_bins)
        : s(sys), nf(frames), three(three_pairs), bins(n_bins), hs(three_pairs ? 3 : 1) {
        qmmm_rdf_options o;
        qmmm_rdf_options_default(&o);
        o.backend = backend;
        const int64_t n_h = s.n - s.n_o;
        std::vector<int64_t> ids(s.n);
        for (int64_t i = 0; i < s.n; ++i) ids[i] = i;
        for (auto &h : hs) ok(qmmm_rdf_create(&h.h, 0.0, 12.0, bins, &o), "create");
        if (!three) ok(qmmm_rdf_set_selection_self(hs[0].h, s.n, nullptr), "selection");
        else {
            ok(qmmm_rdf_set_selection_self(hs[0].h, s.n_o, nullptr), "O-O");
            ok(qmmm_rdf_set_selections(hs[1].h, s.n_o, ids.data(), nullptr, n_h, ids.data() + s.n_o, nullptr), "O-H");
            ok(qmmm_rdf_set_selection_self(hs[2].h, n_h, nullptr), "H-H");
        }
        // nf copies of the frame (each handle reads its own selection's block: O first, then H)
        const double box[9] = {s.L, 0, 0, 0, s.L, 0, 0, 0, s.L};
        for (int f = 0; f < nf; ++f) {
            if (!three) all.insert(all.end(), s.xyz.begin(), s.xyz.end());
            else {
                o_xyz.insert(o_xyz.end(), s.xyz.begin(), s.xyz.begin() + 3 * s.n_o);
                h_xyz.insert(h_xyz.end(), s.xyz.begin() + 3 * s.n_o, s.xyz.end());
            }
            boxes.insert(boxes.end(), box, box + 9);
        }
        time(1);  // warm-up (one frame: threads, device buffers)
    }
    double time(int64_t k, double *prep_ms = nullptr) {
        for (auto &h : hs) ok(qmmm_rdf_reset(h.h), "reset");
        const auto t0 = Clock::now();
        if (!three) ok(qmmm_rdf_add_frames(hs[0].h, k, all.data(), nullptr, boxes.data()), "frames");
        else {
            ok(qmmm_rdf_add_frames(hs[0].h, k, o_xyz.data(), nullptr, boxes.data()), "O-O frames");
            ok(qmmm_rdf_add_frames(hs[1].h, k, o_xyz.data(), h_xyz.data(), boxes.data()), "O-H frames");
            ok(qmmm_rdf_add_frames(hs[2].h, k, h_xyz.data(), nullptr, boxes.data()), "H-H frames");
        }
        const double t = since(t0);
        if (prep_ms) {
            *prep_ms = 0;
            for (auto &h : hs) {
                qmmm_rdf_stats st{};
                ok(qmmm_rdf_stats_last(h.h, &st), "stats");
                *prep_ms += 1e3 * st.prep_seconds / double(k);
            }
        }
        return t;
    }
    std::vector<int64_t> hist() {
        std::vector<int64_t> sum(bins, 0), one(bins);
        for (auto &h : hs) {
            ok(qmmm_rdf_results(h.h, nullptr, nullptr, nullptr, one.data(), nullptr, nullptr), "results");
            for (int b = 0; b < bins; ++b) sum[b] += one[b];
        }
        return sum;
    }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void write_dcd(const std::string &path, const Sys &s, int frames) {
    std::ofstream f(path, std::ios::binary);
    const auto rec = [&](const void *p, int32_t n) {
        f.write(reinterpret_cast<const char *>(&n), 4), f.write(static_cast<const char *>(p), n), f.write(reinterpret_cast<const char *>(&n), 4);
    };
    char hdr[84] = {'C', 'O', 'R', 'D'};
    int32_t ic[20] = {frames, 0, 1, frames};
    ic[10] = 1, ic[19] = 24;  // unit cell, CHARMM 24
    std::memcpy(hdr + 4, ic, 80);
    rec(hdr, 84);
    char title[84] = {1, 0, 0, 0};
    rec(title, 84);
    const int32_t n = static_cast<int32_t>(s.n);
    rec(&n, 4);
    std::vector<float> c(s.n);
    const double cell[6] = {s.L, 0, s.L, 0, 0, s.L};
    for (int fr = 0; fr < frames; ++fr) {
        rec(cell, 48);
        for (int d = 0; d < 3; ++d) {
            for (int64_t i = 0; i < s.n; ++i) c[i] = static_cast<float>(std::fmod(s.xyz[3 * i + d] + 0.37 * fr, s.L));
            rec(c.data(), 4 * n);
        }
    }
    if (!f) std::fprintf(stderr, "rdf_pipeline_bench: cannot write %s\n", path.c_str()), std::exit(1);
}

#ifdef QMMM_RDF_GROMACS
void write_xtc(const std::string &path, const Sys &s, int frames) {
    t_trxstatus *out = open_trx(path.c_str(), "w");
    std::vector<float> x(3 * s.n);
    t_trxframe fr;
    clear_trxframe(&fr, true);
    fr.natoms = static_cast<int>(s.n), fr.bX = true, fr.x = reinterpret_cast<rvec *>(x.data());
    fr.bBox = true, fr.bStep = true, fr.bTime = true, fr.bPrec = true, fr.prec = 1000;  // 0.001 nm, gmx's default
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) fr.box[a][b] = a == b ? static_cast<float>(s.L / 10) : 0.f;
    for (int f = 0; f < frames; ++f) {
        for (int64_t i = 0; i < 3 * s.n; ++i) x[i] = static_cast<float>(std::fmod(s.xyz[i] + 0.37 * f, s.L) / 10);
        fr.step = f, fr.time = f;
        write_trxframe(out, &fr, nullptr);
    }
    close_trx(out);
}
#endif

double reader_fps(const std::string &path, int64_t &frames) {
    const auto t0 = Clock::now();
    auto r = qmmm::rdfio::open_trajectory(path);
    qmmm::rdfio::Frame f;
    frames = 0;
    while (r->next(f)) ++frames;
    return frames / since(t0);
}

// Runs the tool; returns its wall time (seconds) and checks its exit code.
double run_tool(const std::string &cmd) {
    const auto t0 = Clock::now();
    const int rc = std::system(cmd.c_str());
    const double t = since(t0);
    if (rc != 0) std::fprintf(stderr, "rdf_pipeline_bench: '%s' exited with %d\n", cmd.c_str(), rc), std::exit(1);
    return t;
}

}  // namespace

int main(int argc, char **argv) {
    namespace cli = qmmm::cli;
    CLI::App app{"rdf_pipeline_bench: whole-frame RDF time, one pair against three, and qmmm-rdf on DCD/XTC "
                 "against the reader alone"};
    int64_t n = 1000000;
    int frames = 20, traj_frames = 50, bins = 500;
    std::string tool, tmp = "/tmp", json = "rdf_pipeline_bench.json", backend = "auto";
    app.add_option("--atoms", n, "atoms (water-like: a third O)")->capture_default_str()->check(cli::int_in(3000, 100000000));
    app.add_option("--frames", frames, "frames per timed call (frame rows)")->capture_default_str()->check(cli::int_in(1, 1000));
    app.add_option("--traj-frames", traj_frames, "frames in the trajectories (tool rows)")->capture_default_str()
        ->check(cli::int_in(11, 100000));
    app.add_option("--bins", bins, "bins")->capture_default_str()->check(cli::int_in(1, 1 << 20));
    app.add_option("--backend", backend, "cpu, cuda or auto")->capture_default_str()->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--tool", tool, "path of qmmm-rdf: adds the tool rows");
    app.add_option("--tmp", tmp, "folder for the trajectories")->capture_default_str();
    app.add_option("--json", json, "JSON output")->capture_default_str();
    if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;
    const int be = backend == "cpu" ? QMMM_BACKEND_CPU : backend == "cuda" ? QMMM_BACKEND_CUDA : QMMM_BACKEND_AUTO;
    cli::check_fits_memory(3.0 * n * (frames + 2), 8.0, "the frames", "use fewer --frames or --atoms");

    nlohmann::json out = {{"bench", "rdf_pipeline"}, {"atoms", n}, {"r_max", 12.0}, {"bins", bins}};
    const Sys s = make_sys(n, 7);
    std::printf("%-8s %-10s %10s %12s %12s %8s\n", "rows", "config", "N", "ms/frame", "prep ms", "equal");
    // The two cases alternate, 5 timed calls each, and the medians are kept: the host is shared, and its load
    // changes over seconds.
    FrameCase c1(s, frames, be, false, bins), c3(s, frames, be, true, bins);
    std::vector<double> t1, t3, p1, p3;
    for (int rep = 0; rep < 5; ++rep) {
        double p;
        t1.push_back(1e3 * c1.time(frames, &p) / frames), p1.push_back(p);
        t3.push_back(1e3 * c3.time(frames, &p) / frames), p3.push_back(p);
    }
    const double one = median(t1), three = median(t3), prep1 = median(p1), prep3 = median(p3);
    const bool equal = c1.hist() == c3.hist();
    std::printf("%-8s %-10s %10lld %12.3f %12.3f %8s\n", "frame", "1 pair", (long long)n, one, prep1, "-");
    std::printf("%-8s %-10s %10lld %12.3f %12.3f %8s\n", "frame", "3 pairs", (long long)n, three, prep3, equal ? "yes" : "NO");
    std::printf("  3 pairs / 1 pair per frame: %.2f (median of 5 alternating calls; the five ratios:", three / one);
    for (int rep = 0; rep < 5; ++rep) std::printf(" %.2f", t3[rep] / t1[rep]);
    std::printf(")\n");
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = be;
    qmmm_rdf probe;
    ok(qmmm_rdf_create(&probe, 0, 1, 1, &o), "probe");
    ok(qmmm_rdf_set_selection_self(probe, 2, nullptr), "probe");
    const double pb[9] = {10, 0, 0, 0, 10, 0, 0, 0, 10}, px[6] = {1, 1, 1, 2, 2, 2};
    ok(qmmm_rdf_add_frame(probe, px, nullptr, pb), "probe");
    qmmm_rdf_stats st{};
    qmmm_rdf_stats_last(probe, &st);
    qmmm_rdf_destroy(probe);
    out["backend"] = st.backend == QMMM_BACKEND_CUDA ? "cuda" : "cpu";
    out["frame_rows"] = {{"frames", frames}, {"ms_per_frame_1pair", one}, {"ms_per_frame_3pairs", three},
                         {"ratio_3_to_1", three / one}, {"hist_3pairs_equal_1pair", equal},
                         {"prep_ms_per_frame_1pair", prep1}, {"prep_ms_per_frame_3pairs", prep3},
                         {"calls_ms_per_frame_1pair", t1}, {"calls_ms_per_frame_3pairs", t3}};
    // the same as records, for tables (scripts/readme_tables.py)
    out["frame_list"] = {{{"config", "1 pair"}, {"ms_per_frame", one}, {"prep_ms_per_frame", prep1}, {"ratio_to_1pair", 1.0}},
                         {{"config", "3 pairs"}, {"ms_per_frame", three}, {"prep_ms_per_frame", prep3},
                          {"ratio_to_1pair", three / one}}};

    if (!tool.empty()) {
        std::vector<std::pair<std::string, std::string>> files = {{"dcd", tmp + "/rdf_pipeline_bench.dcd"}};
#ifdef QMMM_RDF_GROMACS
        files.push_back({"xtc", tmp + "/rdf_pipeline_bench.xtc"});
#else
        std::printf("  (no XTC rows: built without GROMACS)\n");
#endif
        const std::string o_sel = "index 0-" + std::to_string(s.n_o - 1),
                          h_sel = "index " + std::to_string(s.n_o) + "-" + std::to_string(s.n - 1);
        const std::string three_pairs = " --pairs '" + o_sel + ":" + o_sel + "' '" + o_sel + ":" + h_sel + "' '" + h_sel +
                                        ":" + h_sel + "'";
        nlohmann::json rows = nlohmann::json::array();
        std::printf("\n%-5s %-12s %12s %12s %10s\n", "file", "config", "frames/s", "whole run", "of reader");
        for (const auto &[fmt, path] : files) {
            const auto tw = Clock::now();
            if (fmt == "dcd") write_dcd(path, s, traj_frames);
#ifdef QMMM_RDF_GROMACS
            else write_xtc(path, s, traj_frames);
#endif
            std::printf("  (wrote %s in %.1f s)\n", path.c_str(), since(tw));
            int64_t nf = 0;
            reader_fps(path, nf);  // warm the page cache
            const double rfps = reader_fps(path, nf);
            std::printf("%-5s %-12s %12.1f %12s %10s\n", fmt.c_str(), "reader", rfps, "-", "1.00");
            rows.push_back({{"file", fmt}, {"config", "reader"}, {"frames_per_second", rfps}, {"frames", nf}});
            for (const std::string cfg : {"1 pair", "3 pairs", "read-only"}) {
                std::string cmd = "'" + tool + "' '" + path + "' --rmax 12 --bins " + std::to_string(bins) +
                                  " --backend " + backend + " --no-progress -q";
                cmd += cfg == "3 pairs" ? three_pairs : cfg == "read-only" ? " --read-only" : " --sel1 all";
                const int k = 10;  // the short run's frames
                // each run twice, the faster kept: start-up (process, GPU context) varies by a tenth of a second
                const double t_short = std::min(run_tool(cmd + " --last " + std::to_string(k - 1)),
                                                run_tool(cmd + " --last " + std::to_string(k - 1)));
                const double t_full = std::min(run_tool(cmd), run_tool(cmd));
                const double whole = traj_frames / t_full;
                // the rate between the runs; where the difference is within timing noise, the whole run's
                const double fps = t_full > 1.05 * t_short ? (traj_frames - k) / (t_full - t_short) : whole;
                std::printf("%-5s %-12s %12.1f %12.1f %10.2f\n", fmt.c_str(), cfg.c_str(), fps, whole, fps / rfps);
                rows.push_back({{"file", fmt}, {"config", cfg}, {"frames_per_second", fps},
                                {"whole_run_frames_per_second", whole}, {"fraction_of_reader", fps / rfps}});
            }
            std::remove(path.c_str());
        }
        out["tool_rows"] = rows;
    }
    std::ofstream(json) << out.dump(1) << "\n";
    return equal ? 0 : 1;
}
