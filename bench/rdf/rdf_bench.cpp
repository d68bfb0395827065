// rdf_bench.cpp -- RDF throughput: ms per frame and pairs per second on the CPU, one GPU and all listed GPUs,
// with the published GPU RDF scheme (bench/rdf/rdf_seed.cu: a tile of sel1 in constant memory, shared-memory
// histogram, brute force, float bins) as the baseline in the same run. Workloads (one selection paired with
// itself, uniform random atoms):
//   brute  N atoms at water's all-atom density 0.1 / A^3, r_max = half the box, all N(N-1)/2 pairs
//   cells  N atoms at density 0.1 / A^3 (water, all atoms), r_max = 12 A, cell list
//   oxygen N atoms at water's oxygen density 0.0334 / A^3, r_max = 12 A (110,592 = a 14.9 nm SPC box)
// Every configuration's histogram is checked equal to the first one's for the same workload, except the seed's:
// its float bins may differ for pairs within rounding of an edge, so its row shows the fraction of counts that
// differ instead. Configurations: cpu; gpu0 seed (the published scheme, CUDA builds only); gpu0 and gpuXY (one
// frame per qmmm_rdf_add_frame: a frame is split over the GPUs when large enough); "batch" rows give --frames
// frames to one call of qmmm_rdf_add_frames (whole frames per GPU, preparation overlapped with counting).
// Prints a table and writes JSON (--json). Single-frame rows: median over --frames frames after one warm-up
// frame; "count" excludes the host preparation (fractional coordinates, cell sort), "frame" includes it.
// Batch rows: both are the wall time of the call / frames (after a warm-up call), preparation included.
// Exit status: 0, 1 when a run fails or histograms differ, 2 on a usage error, 8 when the largest size cannot fit.
// Efficiency of W GPUs = t(gpu0) / (W t(all)), single frames on count ms, batches on frame ms.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "qmmm_accel.h"
#ifdef QMMM_BENCH_RDF_SEED
#include "rdf_seed.hpp"
#endif

namespace {

struct Row {
    std::string workload, config;
    int64_t n;
    double rmax, count_ms, frame_ms, pairs, gpairs_s;
    bool equal;
    std::vector<int64_t> units;
    std::string equal_note;  // what the "equal" column shows when not yes/NO
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"rdf_bench: RDF pairs per second and ms per frame, CPU / one GPU / several GPUs / the seed's kernel"};
    std::vector<int64_t> sizes = {10000, 100000, 400000, 1000000};
    std::vector<std::string> workloads = {"brute", "cells", "oxygen"};
    std::vector<int> devices;
    int frames = 3, threads = 0;
    int64_t cpu_brute_max = 30000, seed_max = 1000000, cpu_cells_max = 1000000;
    bool no_cpu = false, no_gpu = false;
    std::string json = "rdf_bench.json";
    namespace cli = qmmm::cli;
    const long long kMaxAtoms = 1'000'000'000;
    app.add_option("--sizes", sizes, "atoms per selection")->delimiter(',')->check(cli::int_in(2, kMaxAtoms));
    app.add_option("--workloads", workloads, "brute, cells, oxygen")->delimiter(',')
        ->check(CLI::IsMember({"brute", "cells", "oxygen"}));
    app.add_option("--devices", devices, "GPUs for the all-GPU rows, e.g. 0,1 (default: every visible GPU)")->delimiter(',')
        ->check(cli::int_in(0, 1023));
    app.add_option("--frames", frames, "timed frames per configuration")->capture_default_str()->check(cli::int_in(1, 10000));
    app.add_option("--threads", threads, "CPU threads (0: OpenMP default)")->check(cli::int_in(0, 4096));
    app.add_option("--cpu-brute-max", cpu_brute_max, "largest N for CPU brute force")->capture_default_str()
        ->check(cli::int_in(0, kMaxAtoms));
    app.add_option("--cpu-cells-max", cpu_cells_max, "largest N for the CPU cell list")->capture_default_str()
        ->check(cli::int_in(0, kMaxAtoms));
    app.add_option("--seed-max", seed_max, "largest N for the seed baseline")->capture_default_str()
        ->check(cli::int_in(0, kMaxAtoms));
    app.add_flag("--no-cpu", no_cpu, "skip the CPU rows");
    app.add_flag("--no-gpu", no_gpu, "skip the GPU rows");
    app.add_option("--json", json, "JSON output file")->capture_default_str();
    if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;
    if (devices.size() > QMMM_RDF_MAX_DEVICES) {
        std::fprintf(stderr, "rdf_bench: error: --devices lists %zu GPUs; at most %d\n", devices.size(), QMMM_RDF_MAX_DEVICES);
        return cli::kUsageError;
    }
    try {  // the largest size: its coordinates once and, for the batch rows, --frames copies
        const double n_max = sizes.empty() ? 0.0 : static_cast<double>(*std::max_element(sizes.begin(), sizes.end()));
        cli::check_fits_memory(3 * n_max * (1 + frames), sizeof(double), "the largest size",
                               "use smaller --sizes or fewer --frames");
    } catch (const qmmm::Error &e) {
        std::fprintf(stderr, "rdf_bench: error: %s\n", e.what());
        return e.status;
    }

    int n_gpu = 0;
    qmmm_cuda_device_count(&n_gpu);
    if (no_gpu) n_gpu = 0;
    if (devices.empty())
        for (int d = 0; d < n_gpu; ++d) devices.push_back(d);
    std::vector<Row> rows;
    std::printf("%-7s %9s %7s %-14s %11s %11s %12s %8s %s\n", "work", "N", "r_max", "config", "count ms", "frame ms",
                "G pairs/s", "equal", "units/worker");
    for (const auto &w : workloads) {
        for (int64_t n : sizes) {
            const double density = w == "oxygen" ? 0.0334 : 0.1;
            const double L = std::cbrt(n / density);
            const double rmax = w == "brute" ? 0.5 * L * (1 - 1e-9) : 12.0;
            if (w != "brute" && L < 2.5 * rmax) continue;  // too small a box for a cell list at 12 A
            std::mt19937_64 rng(42 + n);
            std::uniform_real_distribution<double> u(0, L);
            std::vector<double> xyz(3 * n);
            for (auto &v : xyz) v = u(rng);
            const double box[9] = {L, 0, 0, 0, L, 0, 0, 0, L};
            [[maybe_unused]] const double box_len[3] = {L, L, L};
            struct Config {
                std::string name;
                int backend;
                std::vector<int> devs;
                bool batch = false;
            };
            std::vector<Config> cfgs;
            const bool brute = w == "brute";
            if (!no_cpu && n <= (brute ? cpu_brute_max : cpu_cells_max)) cfgs.push_back({"cpu", QMMM_BACKEND_CPU, {}});
            if (n_gpu > 0) {
#ifdef QMMM_BENCH_RDF_SEED
                if (brute && n <= seed_max) cfgs.push_back({"gpu0 seed", QMMM_BACKEND_CUDA, {devices[0]}});
#endif
                cfgs.push_back({"gpu0", QMMM_BACKEND_CUDA, {devices[0]}});
                std::string nm = "gpu";
                for (int d : devices) nm += std::to_string(d);
                if (devices.size() > 1) cfgs.push_back({nm, QMMM_BACKEND_CUDA, devices});
                cfgs.push_back({"gpu0 batch", QMMM_BACKEND_CUDA, {devices[0]}, true});
                if (devices.size() > 1) cfgs.push_back({nm + " batch", QMMM_BACKEND_CUDA, devices, true});
            }
            std::vector<int64_t> first_hist;
            for (const auto &c : cfgs) {
#ifdef QMMM_BENCH_RDF_SEED
                if (c.name == "gpu0 seed") {  // the published scheme, outside the library (bench/rdf/rdf_seed.cu)
                    std::vector<int64_t> hist(500, 0);
                    std::vector<double> count_s;
                    try {
                        RdfSeed *sd = rdf_seed_create(c.devs[0], n, 0.0, rmax, 500);
                        for (int f = 0; f <= frames; ++f) {
                            std::fill(hist.begin(), hist.end(), 0);
                            const double s = rdf_seed_count(sd, xyz.data(), box_len, hist.data());
                            if (f > 0) count_s.push_back(s);  // frame 0: warm-up
                        }
                        rdf_seed_destroy(sd);
                    } catch (const std::exception &e) {
                        std::fprintf(stderr, "%s: %s\n", c.name.c_str(), e.what());
                        return 1;
                    }
                    if (first_hist.empty()) first_hist = hist;
                    int64_t diff = 0, total = 0;
                    for (size_t b = 0; b < hist.size(); ++b)
                        diff += std::llabs(hist[b] - first_hist[b]), total += first_hist[b];
                    char note[32];
                    std::snprintf(note, sizeof note, "%.1e", total ? static_cast<double>(diff) / total : 0.0);
                    const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
                    const double ms = 1e3 * median(count_s);
                    Row r{w, c.name, n, rmax, ms, ms, pairs, pairs / (ms * 1e-3) / 1e9, true, {}, note};
                    std::printf("%-7s %9lld %7.2f %-14s %11.3f %11.3f %12.2f %8s %s\n", w.c_str(), static_cast<long long>(n),
                                rmax, c.name.c_str(), r.count_ms, r.frame_ms, r.gpairs_s, note, "");
                    std::fflush(stdout);
                    rows.push_back(r);
                    continue;
                }
#endif
                qmmm_rdf_options o;
                qmmm_rdf_options_default(&o);
                o.backend = c.backend, o.n_threads = threads;
                o.method = brute ? QMMM_RDF_METHOD_BRUTE : QMMM_RDF_METHOD_AUTO;
                o.n_devices = static_cast<int32_t>(c.devs.size());
                std::copy(c.devs.begin(), c.devs.end(), o.devices);
                qmmm_rdf h;
                if (qmmm_rdf_create(&h, 0.0, rmax, 500, &o) || qmmm_rdf_set_selection_self(h, n, nullptr)) {
                    std::fprintf(stderr, "%s: %s\n", c.name.c_str(), qmmm_error_message());
                    return 1;
                }
                std::vector<double> count_s, frame_s;
                qmmm_rdf_stats st{};
                if (c.batch) {
                    std::vector<double> many(xyz.size() * frames), boxes(9 * frames);
                    for (int f = 0; f < frames; ++f)
                        std::copy(xyz.begin(), xyz.end(), many.begin() + f * xyz.size()),
                            std::copy(box, box + 9, boxes.begin() + 9 * f);
                    const int warm = std::min<int>(frames, static_cast<int>(c.devs.size()));
                    for (int rep = 0; rep < 2; ++rep) {  // a warm-up call, then the timed one
                        const int nf = rep == 0 ? warm : frames;
                        const auto t0 = std::chrono::steady_clock::now();
                        if (qmmm_rdf_add_frames(h, nf, many.data(), nullptr, boxes.data())) {
                            std::fprintf(stderr, "%s: %s\n", c.name.c_str(), qmmm_error_message());
                            return 1;
                        }
                        const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                        qmmm_rdf_stats_last(h, &st);
                        if (rep == 1) count_s.push_back(dt / nf), frame_s.push_back(dt / nf);
                    }
                    st.pairs_visited /= frames;
                }
                for (int f = 0; f <= (c.batch ? -1 : frames); ++f) {
                    const auto t0 = std::chrono::steady_clock::now();
                    if (qmmm_rdf_add_frame(h, xyz.data(), nullptr, box)) {
                        std::fprintf(stderr, "%s: %s\n", c.name.c_str(), qmmm_error_message());
                        return 1;
                    }
                    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                    qmmm_rdf_stats_last(h, &st);
                    if (f == 0) continue;  // warm-up: thread pool, device buffers
                    count_s.push_back(st.seconds), frame_s.push_back(dt);
                }
                std::vector<int64_t> hist(500);
                int64_t nf;
                qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist.data(), &nf, nullptr);
                for (auto &x : hist) x /= nf;  // per frame (all frames are the same)
                if (first_hist.empty()) first_hist = hist;
                qmmm_rdf_destroy(h);
                Row r{w, c.name, n, rmax, 1e3 * median(count_s), 1e3 * median(frame_s), st.pairs_visited, 0, hist == first_hist, {}, ""};
                r.gpairs_s = r.pairs / (r.count_ms * 1e-3) / 1e9;
                std::string units;
                for (size_t k = 0; k < c.devs.size(); ++k) r.units.push_back(st.units_per_worker[k]),
                                                           units += (k ? "/" : "") + std::to_string(st.units_per_worker[k]);
                std::printf("%-7s %9lld %7.2f %-14s %11.3f %11.3f %12.2f %8s %s\n", w.c_str(), static_cast<long long>(n), rmax,
                            c.name.c_str(), r.count_ms, r.frame_ms, r.gpairs_s, r.equal ? "yes" : "NO", units.c_str());
                std::fflush(stdout);
                rows.push_back(r);
            }
        }
    }
    // Ratios within the same run: fast kernel vs the seed's, and multi-GPU efficiency.
    std::printf("\nratios (same workload and N):\n");
    std::string js = "{\n \"bench\": \"rdf\",\n \"units\": \"ms per frame; pairs = distances computed\",\n \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto &r = rows[i];
        char b[512];
        std::string u;
        for (size_t k = 0; k < r.units.size(); ++k) u += (k ? "," : "") + std::to_string(r.units[k]);
        const std::string eq = !r.equal_note.empty() ? "null, \"count_diff_fraction\": " + r.equal_note
                               : r.equal                ? "true"
                                                        : "false";
        std::snprintf(b, sizeof b,
                      "  {\"workload\": \"%s\", \"n\": %lld, \"r_max\": %.6f, \"config\": \"%s\", \"count_ms\": %.6f, "
                      "\"frame_ms\": %.6f, \"pairs\": %.6g, \"gpairs_per_s\": %.4f, \"equal_counts\": %s, \"units\": [%s]}%s\n",
                      r.workload.c_str(), static_cast<long long>(r.n), r.rmax, r.config.c_str(), r.count_ms, r.frame_ms,
                      r.pairs, r.gpairs_s, eq.c_str(), u.c_str(), i + 1 < rows.size() ? "," : "");
        js += b;
        for (const auto &o : rows) {
            if (o.workload != r.workload || o.n != r.n) continue;
            if (r.config == "gpu0" && o.config == "gpu0 seed")
                std::printf("  %-6s N=%-8lld fast / seed speed-up     %.2f\n", r.workload.c_str(), (long long)r.n, o.count_ms / r.count_ms);
            if (r.config == "gpu0" && o.config == "cpu")
                std::printf("  %-6s N=%-8lld gpu0 / cpu speed-up      %.2f\n", r.workload.c_str(), (long long)r.n, o.count_ms / r.count_ms);
            const double W = static_cast<double>(devices.size());
            const bool multi = o.config.rfind("gpu", 0) == 0 && o.config != "gpu0" && o.config != "gpu0 seed" &&
                               o.config != "gpu0 batch";
            if (r.config == "gpu0" && multi && o.config.find("batch") == std::string::npos)
                std::printf("  %-6s N=%-8lld %s efficiency (one frame)   %.1f %%\n", r.workload.c_str(), (long long)r.n,
                            o.config.c_str(), 100.0 * r.count_ms / (W * o.count_ms));
            if (r.config == "gpu0 batch" && multi && o.config.find("batch") != std::string::npos)
                std::printf("  %-6s N=%-8lld %s efficiency (frames)      %.1f %%\n", r.workload.c_str(), (long long)r.n,
                            o.config.c_str(), 100.0 * r.frame_ms / (W * o.frame_ms));
        }
    }
    js += " ]\n}\n";
    std::ofstream(json) << js;
    bool ok = true;
    for (const auto &r : rows) ok = ok && r.equal;
    std::printf("%s\n", ok ? "all histograms equal" : "HISTOGRAMS DIFFER");
    return ok ? 0 : 1;  // 2 is kept for usage errors
}
