// field_bench -- the embedding field on the GPU against its baselines, measured in one run:
// seed 004's algorithm as published (coalesced Eq. 8 and non-coalesced Eq. 7, float and double), the CPU
// backend in double on 1 thread and on all threads, and the library's CUDA backend in SINGLE, MIXED and
// DOUBLE, for several field sizes M and points per call N. Prints a table and writes JSON.
//
// Error: max over the N points of |u - u_cpu_double| / sum|terms| (sum|terms| = sum |q|/r + sum Z/r),
// the CPU double backend on all threads being the reference. Ratios: time per point of the seed's
// coalesced kernel of the same precision family (float for SINGLE/MIXED, double for DOUBLE and CPU)
// divided by the row's time per point. Units: atomic (bohr, e, hartree); times in microseconds.
//
// CPU rates (also alone, without a GPU: --cpu-only): the CPU backend in DOUBLE, SINGLE and MIXED on one
// thread and on all threads, pair evaluations per second per core, and each precision's speed-up over
// DOUBLE on the same threads.
//
// Beside the rows, the same run measures the hardware's limits (field_ceiling.cu): the 1/r ceiling (a
// micro-kernel doing only MUFU.RSQ + FFMA) -- every CUDA row prints its percentage of it -- and the transport
// floors of a synchronous call (launch + mapped-memory flag; persistent kernel + mailbox). Rows "_lowlatency"
// use QMMM_FLAG_LOW_LATENCY; "cuda_single_16handles" is 16 host threads with one handle each, at once.
// --cube takes the cells and nuclei of a density cube instead of random cells: a lattice, which SINGLE sums by
// rows (QMMM_CUDA_ROWS=0 in the environment times the tile layout on the same cells).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli_checks.hpp"
#include "field_ceiling.hpp"
#include "field_reference.hpp"
#include "field_seed.hpp"
#include "qmmm_accel.h"
#include "split/field_split_bench.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
    double mean_us = 0, median_us = 0;
    int reps = 0;
};

// Calls f until min_time has passed (at least once, at most max_reps), after one warm-up call when
// a call is short.
Timing time_calls(const std::function<void()> &f, double min_time, int max_reps = 20000) {
    auto t0 = Clock::now();
    f();
    const double first = std::chrono::duration<double>(Clock::now() - t0).count();
    std::vector<double> t;
    if (first > min_time) t.push_back(first);
    double total = 0;
    while (t.empty() || (total < min_time && static_cast<int>(t.size()) < max_reps)) {
        auto a = Clock::now();
        f();
        const double d = std::chrono::duration<double>(Clock::now() - a).count();
        t.push_back(d), total += d;
    }
    Timing r;
    r.reps = static_cast<int>(t.size());
    double s = 0;
    for (double x : t) s += x;
    r.mean_us = 1e6 * s / t.size();
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    r.median_us = 1e6 * t[t.size() / 2];
    return r;
}

void ok(int status, const char *what) {
    if (status != QMMM_SUCCESS)
        throw std::runtime_error(std::string(what) + ": " + qmmm_status_string(status) + ": " + qmmm_error_message());
}

qmmm_field make(const qmmm_test::System &s, int backend, int precision, int threads = 0, int flags = 0) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = backend, o.precision = precision, o.n_threads = threads, o.flags = flags;
    qmmm_field f = nullptr;
    ok(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(), s.nuc_xyz.data(),
                         s.nuc_z.data(), &o), "qmmm_field_create");
    return f;
}

double nuclear(const qmmm_test::System &s, const double *p) {
    double sum = 0;
    for (int64_t b = 0; b < s.n_nuclei(); ++b) {
        const double dx = p[0] - s.nuc_xyz[3 * b], dy = p[1] - s.nuc_xyz[3 * b + 1], dz = p[2] - s.nuc_xyz[3 * b + 2];
        sum += s.nuc_z[b] / std::sqrt(dx * dx + dy * dy + dz * dz);
    }
    return sum;
}

struct Row {
    int64_t m, n;
    std::string impl;
    Timing t;
    double err = NAN;
    double ratio = NAN;
};

struct CpuRate {
    int64_t m, n;
    std::string precision;
    int threads;
    Timing t;
    double err, gpairs_per_core, speedup_vs_double;
};

const char *precision_name(int p) {
    return p == QMMM_PRECISION_DOUBLE ? "double" : p == QMMM_PRECISION_SINGLE ? "single" : "mixed";
}

// `handles` host threads, one CUDA SINGLE handle each, evaluating n points per call at the same time for about
// min_time: the aggregate rate (time per call = wall time / all calls). Every thread checks its values.
template <class ErrFn>
Row many_handles(const qmmm_test::System &sys, const std::vector<double> &pts, int64_t n_max, int handles, int64_t n,
                 double min_time, ErrFn max_err, const std::vector<double> &) {
    n = std::min(n, n_max);
    std::vector<qmmm_field> fs(handles);
    for (auto &f : fs) f = make(sys, QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE);
    std::vector<int64_t> calls(handles, 0);
    std::vector<double> errs(handles, 0);
    std::vector<std::string> fails(handles);
    std::vector<std::thread> th;
    const auto t0 = Clock::now();
    const auto t_end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(min_time));
    for (int h = 0; h < handles; ++h)
        th.emplace_back([&, h] {
            std::vector<double> u(n);
            while (Clock::now() < t_end) {
                if (qmmm_field_eval(fs[h], n, pts.data(), u.data()) != QMMM_SUCCESS) {
                    fails[h] = qmmm_error_message();
                    return;
                }
                ++calls[h];
            }
            errs[h] = max_err(u, n);
        });
    for (auto &t : th) t.join();
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    for (auto &f : fs) qmmm_field_destroy(f);
    for (const auto &m : fails)
        if (!m.empty()) throw std::runtime_error("many handles: " + m);
    int64_t total = 0;
    for (int64_t c : calls) total += c;
    Timing t;
    t.reps = static_cast<int>(total);
    t.mean_us = t.median_us = 1e6 * wall / std::max<int64_t>(total, 1);
    Row r{sys.n_cells(), n, "cuda_single_" + std::to_string(handles) + "handles", t,
          *std::max_element(errs.begin(), errs.end())};
    return r;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"field_bench: the embedding field, CUDA backend vs seed 004 and the CPU backend"};
    std::string json_path = "field_bench.json";
    std::vector<int64_t> sizes = {10000, 268782, 1000000}, npts = {1, 32, 256, 1024, 8192};
    double min_time = 0.2, cpu1_limit = 2.5e9;
    int n_nuclei = 30;
    bool only_cuda = false, cpu_only = false;
    int64_t cpu_points = 256;
    // Every number through the tools' checks (src_cxx/tools/cli_checks.hpp): finite, in range, exit 2 otherwise.
    namespace cli = qmmm::cli;
    app.add_option("--json", json_path, "JSON output path");
    app.add_option("--cells", sizes, "field sizes M")->check(cli::int_in(1, 1'000'000'000));
    app.add_option("--points", npts, "points per call N")->check(cli::int_in(1, 1 << 24));
    app.add_option("--min-time", min_time, "seconds of timed calls per measurement")->check(cli::finite_in(0, 3600, "s"));
    app.add_option("--cpu1-limit", cpu1_limit, "largest M*N timed on one CPU thread")->check(cli::finite_in(0, 1e18));
    app.add_option("--nuclei", n_nuclei, "environment nuclei")->check(cli::int_in(0, 1'000'000));
    std::string cube;
    double threshold = 4.1e-4;
    app.add_option("--cube", cube, "cells from this density cube (a lattice: the row layout of SINGLE) instead of random "
                                   "cells; --cells is then ignored")->check(CLI::ExistingFile);
    app.add_option("--threshold", threshold, "the cube's density threshold, e/bohr^3")->check(cli::finite_in(0, 1e6));
    bool split = false;
    app.add_flag("--split", split,
                 "also the range-split method's rows (QMMM_METHOD_SPLIT; bench/split/field_split_bench.cpp)");
    app.add_flag("--only-cuda", only_cuda, "time the CUDA backend only (no seed or CPU baselines; for tuning)");
    app.add_flag("--cpu-only", cpu_only, "CPU rates only (DOUBLE/SINGLE/MIXED, 1 and all threads); needs no GPU");
    app.add_option("--cpu-points", cpu_points, "points per call for the CPU rates")->check(cli::int_in(1, 1 << 24));
    int handles = 16;
    app.add_option("--handles", handles, "host threads (one handle each) of the many-handles row (0: none)")
        ->check(cli::int_in(0, 1024));
    if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;
    qmmm_test::System cube_sys;
    if (!cube.empty()) {  // the cube's cells and nuclei; points in the box of its cells
        qmmm_env env = nullptr;
        if (qmmm_cube_read(&env, cube.c_str(), threshold) != QMMM_SUCCESS) {
            std::fprintf(stderr, "field_bench: error: %s\n", qmmm_error_message());
            return 2;
        }
        int64_t nc = 0, nn = 0;
        double dv = 0;
        qmmm_env_sizes(env, &nc, &nn, &dv);
        cube_sys.cell_xyz.resize(3 * nc), cube_sys.cell_q.resize(nc), cube_sys.nuc_xyz.resize(3 * nn), cube_sys.nuc_z.resize(nn);
        qmmm_env_copy(env, cube_sys.cell_xyz.data(), cube_sys.cell_q.data(), cube_sys.nuc_xyz.data(), cube_sys.nuc_z.data());
        qmmm_env_destroy(env);
        sizes = {nc};
    }
    if (sizes.empty() || npts.empty()) {
        std::fprintf(stderr, "field_bench: error: --cells and --points need at least one value\n");
        return cli::kUsageError;
    }
    try {  // the largest field (cells: x y z q) and the points with their results, before anything is timed
        const double m_max = static_cast<double>(*std::max_element(sizes.begin(), sizes.end()));
        const double n_max = static_cast<double>(std::max(*std::max_element(npts.begin(), npts.end()), cpu_points));
        cli::check_fits_memory(4 * m_max + 6 * n_max, sizeof(double), "the largest case", "use smaller --cells or --points");
    } catch (const qmmm::Error &e) {
        std::fprintf(stderr, "field_bench: error: %s\n", e.what());
        return e.status;
    }

    int n_dev = 0;
    qmmm_cuda_device_count(&n_dev);
    if (n_dev == 0 && !cpu_only) {
        std::fprintf(stderr, "field_bench: no CUDA device; nothing to compare (--cpu-only times the CPU backend alone)\n");
        return 2;
    }
    if (cpu_only) npts = {cpu_points};
    const int64_t n_max = std::max(*std::max_element(npts.begin(), npts.end()), cpu_points);
    std::vector<Row> rows;
    std::vector<CpuRate> cpu_rates;
    try {
        for (int64_t m : sizes) {
            auto sys = cube.empty() ? qmmm_test::random_system(m, n_nuclei, 1234 + m) : cube_sys;
            auto pts = qmmm_test::random_points(n_max, 4321 + m);
            if (!cube.empty()) {  // random_points fills [-12, 12)^3: mapped onto the box of the cells
                double lo[3], hi[3];
                for (int k = 0; k < 3; ++k) lo[k] = hi[k] = sys.cell_xyz[k];
                for (int64_t c = 0; c < m; ++c)
                    for (int k = 0; k < 3; ++k)
                        lo[k] = std::min(lo[k], sys.cell_xyz[3 * c + k]), hi[k] = std::max(hi[k], sys.cell_xyz[3 * c + k]);
                for (int64_t p = 0; p < n_max; ++p)
                    for (int k = 0; k < 3; ++k) pts[3 * p + k] = lo[k] + (pts[3 * p + k] / 24.0 + 0.5) * (hi[k] - lo[k]);
            }
            std::vector<double> ring(pts);
            ring.insert(ring.end(), pts.begin(), pts.end());
            // Reference and scale on the CPU in double (all threads).
            std::vector<double> ref(n_max), scale(n_max);
            qmmm_field cpu = make(sys, QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE);
            ok(qmmm_field_eval(cpu, n_max, pts.data(), ref.data()), "reference");
            {
                auto abs_sys = sys;
                for (auto &z : abs_sys.nuc_z) z = -z;  // populations are positive already
                qmmm_field a = make(abs_sys, QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE);
                ok(qmmm_field_eval(a, n_max, pts.data(), scale.data()), "scale");
                qmmm_field_destroy(a);
            }
            auto max_err = [&](const std::vector<double> &u, int64_t n) {
                double e = 0;
                for (int64_t p = 0; p < n; ++p) e = std::max(e, std::fabs(u[p] - ref[p]) / scale[p]);
                return e;
            };
            // CPU backend per precision, one thread and all threads.
            for (int threads : {1, omp_get_max_threads()}) {
                if (only_cuda) break;
                double t_double = NAN;
                for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
                    qmmm_field f = make(sys, QMMM_BACKEND_CPU, prec, threads);
                    std::vector<double> u(cpu_points);
                    Timing t = time_calls([&] { ok(qmmm_field_eval(f, cpu_points, pts.data(), u.data()), "cpu eval"); }, min_time);
                    qmmm_field_destroy(f);
                    if (prec == QMMM_PRECISION_DOUBLE) t_double = t.mean_us;
                    const double gpc = static_cast<double>(m) * cpu_points / (t.mean_us * 1e-6) / 1e9 / threads;
                    cpu_rates.push_back({m, cpu_points, precision_name(prec), threads, t, max_err(u, cpu_points), gpc, t_double / t.mean_us});
                }
                if (omp_get_max_threads() == 1) break;
            }
            if (cpu_only) {
                qmmm_field_destroy(cpu);
                continue;
            }
            // Seed baselines: one point per call.
            double seed_us[2] = {0, 0};  // [float, double], coalesced
            for (int dbl = 0; dbl < 2 && !only_cuda; ++dbl) {
                SeedField *sf = seed_create(m, sys.cell_xyz.data(), sys.cell_q.data(), dbl);
                for (int coal = 1; coal >= 0; --coal) {
                    int64_t i = 0;
                    Timing t = time_calls([&] {
                        const double *p = &pts[3 * (i++ % n_max)];
                        volatile double u = seed_eval(sf, p, coal) - nuclear(sys, p);
                        (void)u;
                    }, min_time);
                    std::vector<double> u(64);
                    for (int p = 0; p < 64; ++p) u[p] = seed_eval(sf, &pts[3 * p], coal) - nuclear(sys, &pts[3 * p]);
                    if (coal) seed_us[dbl] = t.mean_us;
                    Row r{m, 1, std::string("seed004_") + (dbl ? "double" : "single") + (coal ? "_coalesced" : "_noncoalesced"),
                          t, max_err(u, 64)};
                    r.ratio = seed_us[dbl] / t.mean_us;
                    rows.push_back(r);
                }
                seed_destroy(sf);
            }
            // CPU double, one thread and all threads; CUDA in three precisions.
            struct Impl {
                std::string name;
                int backend, precision, threads;
                int seed;  // which seed time to compare with
                int flags = 0;
            };
            const Impl impls[] = {{"cpu_double_1thread", QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE, 1, 1},
                                  {"cpu_double_" + std::to_string(omp_get_max_threads()) + "threads", QMMM_BACKEND_CPU,
                                   QMMM_PRECISION_DOUBLE, 0, 1},
                                  {"cuda_single", QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE, 0, 0},
                                  {"cuda_mixed", QMMM_BACKEND_CUDA, QMMM_PRECISION_MIXED, 0, 0},
                                  {"cuda_double", QMMM_BACKEND_CUDA, QMMM_PRECISION_DOUBLE, 0, 1},
                                  {"cuda_single_lowlatency", QMMM_BACKEND_CUDA, QMMM_PRECISION_SINGLE, 0, 0,
                                   QMMM_FLAG_LOW_LATENCY},
                                  {"cuda_mixed_lowlatency", QMMM_BACKEND_CUDA, QMMM_PRECISION_MIXED, 0, 0,
                                   QMMM_FLAG_LOW_LATENCY}};
            for (const auto &im : impls) {
                if (only_cuda && im.backend != QMMM_BACKEND_CUDA) continue;
                qmmm_field f = make(sys, im.backend, im.precision, im.threads, im.flags);
                for (int64_t n : npts) {
                    if (im.threads == 1 && static_cast<double>(m) * n > cpu1_limit) continue;
                    if (im.flags && n > 8) continue;  // the low-latency mode is for calls of a few points
                    std::vector<double> u(n);
                    int64_t call = 0;
                    // Successive calls move along the point list (as walkers do), wrapping around: a slice of
                    // the list read twice over is one pointer, so the timed loop holds only the library's call
                    // (copying the slice with a modulo per point added 10-57 us to a call of 8,192 points on
                    // an H100).
                    Timing t = time_calls([&] {
                        const int64_t off = (call++ * n) % n_max;
                        ok(qmmm_field_eval(f, n, &ring[3 * off], u.data()), "qmmm_field_eval");
                    }, min_time);
                    ok(qmmm_field_eval(f, n, pts.data(), u.data()), "qmmm_field_eval");
                    Row r{m, n, im.name, t, max_err(u, n)};
                    r.ratio = seed_us[im.seed] * n / t.mean_us;
                    rows.push_back(r);
                }
                qmmm_field_destroy(f);
            }
            if (handles > 0) rows.push_back(many_handles(sys, pts, n_max, handles, 1024, min_time, max_err, ref));
            qmmm_field_destroy(cpu);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "field_bench: %s\n", e.what());
        return 1;
    }

    double ceiling = NAN, floor_launch = NAN, floor_persistent = NAN;
    if (!cpu_only) {
        try {
            ceiling = ceiling_rsqrt_gps(std::max(0.5, min_time));
            floor_launch = floor_launch_us(2000);
            floor_persistent = floor_persistent_us(2000);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "field_bench: limits: %s\n", e.what());
            return 1;
        }
        std::printf("limits of this GPU: 1/r ceiling (MUFU.RSQ + FFMA micro-kernel) %.0f G/s; one synchronous call's "
                    "transport floor: launch + mapped flag %.2f us, persistent kernel + mailbox %.2f us\n\n",
                    ceiling, floor_launch, floor_persistent);
    }
    std::printf("%-9s %-6s %-28s %12s %12s %10s %10s %11s %9s\n", "M", "N", "implementation", "us/call", "median_us",
                "Gpair/s", "max_rel_err", "x_vs_seed", "%ceiling");
    nlohmann::json js;
    js["units"] = "times in microseconds per call; pair rate in 1e9 cell-point pairs per second";
    js["cells_from"] = cube.empty() ? std::string("random cells in a 20-bohr box (qmmm_test::random_system)")
                                    : "cube " + cube + " at threshold " + std::to_string(threshold) + " e/bohr^3";
    js["error"] = "max over points of |u - u_cpu_double| / sum|terms|";
    js["ratio"] = "seed 004 coalesced time per point (float seed for single/mixed, double seed otherwise) / time per point";
    for (const auto &r : rows) {
        const double gps = static_cast<double>(r.m) * r.n / (r.t.mean_us * 1e-6) / 1e9;
        const double pct = r.impl.rfind("cuda_", 0) == 0 ? 100 * gps / ceiling : NAN;
        std::printf("%-9lld %-6lld %-28s %12.2f %12.2f %10.1f %10.2e %11.2f %9.1f\n", (long long)r.m, (long long)r.n,
                    r.impl.c_str(), r.t.mean_us, r.t.median_us, gps, r.err, r.ratio, pct);
        js["rows"].push_back({{"cells", r.m}, {"points", r.n}, {"impl", r.impl}, {"us_per_call", r.t.mean_us},
                              {"median_us", r.t.median_us}, {"reps", r.t.reps}, {"gpairs_per_s", gps},
                              {"max_rel_err", r.err}, {"ratio_vs_seed", r.ratio},
                              {"percent_of_rsqrt_ceiling", std::isfinite(pct) ? nlohmann::json(pct) : nlohmann::json()}});
    }
    if (!cpu_rates.empty()) {
        std::printf("\nCPU backend (%d hardware threads available): pair evaluations per second per core\n", omp_get_max_threads());
        std::printf("%-9s %-6s %-8s %8s %12s %14s %12s %11s\n", "M", "N", "prec", "threads", "us/call", "Gpair/s/core",
                    "x_vs_double", "max_rel_err");
    }
    for (const auto &c : cpu_rates) {
        std::printf("%-9lld %-6lld %-8s %8d %12.1f %14.3f %12.2f %11.2e\n", (long long)c.m, (long long)c.n, c.precision.c_str(),
                    c.threads, c.t.mean_us, c.gpairs_per_core, c.speedup_vs_double, c.err);
        js["cpu_rates"].push_back({{"cells", c.m}, {"points", c.n}, {"precision", c.precision}, {"threads", c.threads},
                                   {"us_per_call", c.t.mean_us}, {"reps", c.t.reps}, {"gpairs_per_s_per_core", c.gpairs_per_core},
                                   {"speedup_vs_double_same_threads", c.speedup_vs_double}, {"max_rel_err", c.err}});
    }
    if (!cpu_only)
        js["limits"] = {{"rsqrt_ceiling_gpairs_per_s", ceiling}, {"floor_launch_us", floor_launch},
                        {"floor_persistent_us", floor_persistent}};
    try {
        if (split) split_rows(js, !cpu_only, min_time);  // QMMM_METHOD_SPLIT's rows (bench/split/field_split_bench.cpp)
    } catch (const std::exception &e) {
        std::fprintf(stderr, "field_bench: split rows: %s\n", e.what());
        return 1;
    }
    std::ofstream(json_path) << js.dump(2) << "\n";
    std::printf("JSON written to %s\n", json_path.c_str());
    return 0;
}
