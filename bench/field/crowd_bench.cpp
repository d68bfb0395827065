// crowd_bench -- crowds of walkers at the field, the batched QMC pattern: T host threads, each with its own crowd of W
// walkers of E electrons and its own field handle; a step is one qmmm_field_eval_walkers call per crowd (all threads
// at once), one MM energy per walker. Rows per charge count M (default 1e4 and 1e5 MM charges, random in a 40-bohr
// box, +-0.8 e) and precision: the CPU (each handle one thread: T threads are T cores) and, where present, the GPU in
// the same run: host arrays (qmmm_field_eval_walkers) and device-resident positions and sums
// (qmmm_field_eval_walkers_device on the handle's stream, then qmmm_field_wait). Reported: us a step, walkers a second,
// pair terms a second, the GPU's speed-up over the CPU (the targets: >= 10x at 1e5 charges, >= 1x at 1e4), and
// each row's largest difference from the CPU's DOUBLE sums relative to the walker's sum |q|/d. Time: whole steps,
// after one untimed step, until min-time has passed; the median of 3 such runs.
//
//   crowd_bench [--threads T] [--walkers W] [--electrons E] [--charges M,M,...] [--precision double,single,mixed]
//               [--min-time s] [--cpu-only] [--json file]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/bench_json.hpp"
#include "qmmm_accel.h"
#ifdef QMMM_BENCH_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

void ok(int status, const std::string &what) {
    if (status != QMMM_SUCCESS)
        throw std::runtime_error(what + ": " + qmmm_status_string(status) + ": " + qmmm_error_message());
}

struct Charges {
    std::vector<double> xyz, q;
};

Charges make_charges(int64_t m, unsigned seed) {
    Charges c;
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> box(-20, 20), chg(-0.8, 0.8);
    for (int64_t i = 0; i < m; ++i)
        c.xyz.push_back(box(g)), c.xyz.push_back(box(g)), c.xyz.push_back(box(g)), c.q.push_back(chg(g));
    return c;
}

// A crowd: W walkers of E electrons, normal about the box centre (sigma 2 bohr), walker by walker.
struct Crowd {
    std::vector<int64_t> offsets;
    std::vector<double> xyz;
};

Crowd make_crowd(int w, int e, unsigned seed) {
    Crowd c;
    std::mt19937_64 g(seed);
    std::normal_distribution<double> nd(0, 2);
    for (int k = 0; k <= w; ++k) c.offsets.push_back(static_cast<int64_t>(k) * e);
    c.xyz.resize(3 * static_cast<size_t>(w) * e);
    for (double &v : c.xyz) v = nd(g);
    return c;
}

qmmm_field make(const Charges &c, int backend, int precision, int n_threads) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = backend, o.precision = precision, o.n_threads = n_threads;
    qmmm_field f = nullptr;
    const int64_t m = static_cast<int64_t>(c.q.size());
    ok(qmmm_field_create_charges(&f, m, c.xyz.data(), c.xyz.data() + 1, c.xyz.data() + 2, 3, c.q.data(),
                                 QMMM_SCREEN_NONE, nullptr, nullptr, 0, nullptr, nullptr, &o),
       "create");
    return f;
}

const char *precision_name(int p) {
    return p == QMMM_PRECISION_DOUBLE ? "double" : p == QMMM_PRECISION_SINGLE ? "single" : "mixed";
}

enum class Mode { Cpu, GpuHost, GpuDevice };
const char *mode_name(Mode m) { return m == Mode::Cpu ? "cpu" : m == Mode::GpuHost ? "gpu" : "gpu-device"; }

// One thread's state: its handle, its crowd, its sums, and (device mode) the crowd in device memory.
struct Lane {
    qmmm_field f = nullptr;
    const Crowd *crowd = nullptr;
    std::vector<double> sums;
    double *d_xyz = nullptr, *d_sums = nullptr;
};

void step(Lane &l, Mode mode) {
    const int64_t w = static_cast<int64_t>(l.sums.size());
    if (mode != Mode::GpuDevice) {
        ok(qmmm_field_eval_walkers(l.f, w, l.crowd->offsets.data(), l.crowd->xyz.data(), l.sums.data(), nullptr),
           "eval_walkers");
        return;
    }
    ok(qmmm_field_eval_walkers_device(l.f, w, l.crowd->offsets.data(), l.d_xyz, l.d_sums, nullptr, nullptr),
       "eval_walkers_device");
    ok(qmmm_field_wait(l.f), "wait");
}

// Seconds a step (all lanes at once, each on its own thread): steps until min_time, after one untimed step.
double time_steps(std::vector<Lane> &lanes, Mode mode, double min_time) {
    int steps = 1;
    double t = 0;
    for (int round = 0;; ++round) {
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> pool;
        std::vector<std::string> errors(lanes.size());
        for (size_t i = 0; i < lanes.size(); ++i)
            pool.emplace_back([&, i] {
                try {
                    step(lanes[i], mode);  // untimed
                    ++ready;
                    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
                    for (int s = 0; s < steps; ++s) step(lanes[i], mode);
                } catch (const std::exception &ex) {
                    errors[i] = ex.what();
                    ++ready;
                }
            });
        while (ready.load() < static_cast<int>(lanes.size())) std::this_thread::yield();
        const auto t0 = Clock::now();
        go.store(true, std::memory_order_release);
        for (auto &th : pool) th.join();
        t = std::chrono::duration<double>(Clock::now() - t0).count();
        for (const auto &e : errors)
            if (!e.empty()) throw std::runtime_error(e);
        if (t >= min_time || round > 20) break;
        steps = std::max(steps + 1, static_cast<int>(steps * 1.2 * min_time / std::max(t, 1e-6)));
    }
    return t / steps;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Crowds of walkers at the field: one batched call per crowd and step, the CPU against the GPU"};
    int threads = 16, walkers = 64, electrons = 22;
    std::vector<int64_t> charges = {10000, 100000};
    std::vector<std::string> precisions = {"double", "single", "mixed"};
    double min_time = 1.0;
    bool cpu_only = false;
    std::string json_path = "crowd_bench.json";
    app.add_option("--threads", threads, "host threads T, one crowd and one handle each")->check(CLI::Range(1, 1024));
    app.add_option("--walkers", walkers, "walkers W a crowd")->check(CLI::Range(1, 1 << 16));
    app.add_option("--electrons", electrons, "electrons E a walker")->check(CLI::Range(1, 1 << 12));
    app.add_option("--charges", charges, "MM charge counts M (comma-separated)")
        ->delimiter(',')->check(CLI::Range(int64_t{1}, int64_t{100000000}));
    app.add_option("--precision", precisions, "precisions (comma-separated)")
        ->delimiter(',')->check(CLI::IsMember({"double", "single", "mixed"}));
    app.add_option("--min-time", min_time, "seconds of timed steps per measurement")->check(CLI::Range(0.01, 100.0));
    app.add_flag("--cpu-only", cpu_only, "the CPU rows alone, even where a GPU is present");
    app.add_option("--json", json_path, "write the rows here (default crowd_bench.json)");
    CLI11_PARSE(app, argc, argv);
    try {
        int n_gpu = 0;
        qmmm_cuda_device_count(&n_gpu);
        std::vector<Mode> modes = {Mode::Cpu};
        if (n_gpu > 0 && !cpu_only) modes.push_back(Mode::GpuHost);
#ifdef QMMM_BENCH_CUDA
        if (n_gpu > 0 && !cpu_only) modes.push_back(Mode::GpuDevice);
#endif
        std::vector<Crowd> crowds;
        for (int t = 0; t < threads; ++t) crowds.push_back(make_crowd(walkers, electrons, 100 + static_cast<unsigned>(t)));
        const int64_t points = static_cast<int64_t>(threads) * walkers * electrons;
        std::printf("crowd_bench: %d threads x %d walkers x %d electrons (%lld points a step); GPUs %d\n", threads,
                    walkers, electrons, static_cast<long long>(points), n_gpu);
        std::printf("%9s %-7s %-10s %12s %12s %10s %9s %10s\n", "charges", "prec", "backend", "us/step", "walkers/s",
                    "Gpairs/s", "vs cpu", "max diff");
        nlohmann::json rows = nlohmann::json::array();
        for (int64_t m : charges) {
            const Charges c = make_charges(m, 7);
            // The reference: the CPU's DOUBLE sums, and each walker's sum |q|/d (the scale of its differences).
            std::vector<std::vector<double>> ref(threads, std::vector<double>(walkers)), scale = ref;
            {
                qmmm_field f = make(c, QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE, 0);
                for (int t = 0; t < threads; ++t) {
                    ok(qmmm_field_eval_walkers(f, walkers, crowds[t].offsets.data(), crowds[t].xyz.data(),
                                               ref[t].data(), nullptr), "reference");
                    for (int w = 0; w < walkers; ++w)
                        for (int e = 0; e < electrons; ++e) {
                            const double *p = &crowds[t].xyz[3 * (static_cast<size_t>(w) * electrons + e)];
                            for (int64_t k = 0; k < m; ++k) {
                                const double dx = p[0] - c.xyz[3 * k], dy = p[1] - c.xyz[3 * k + 1],
                                             dz = p[2] - c.xyz[3 * k + 2];
                                scale[t][w] += std::fabs(c.q[k]) / std::sqrt(dx * dx + dy * dy + dz * dz);
                            }
                        }
                }
                qmmm_field_destroy(f);
            }
            for (const std::string &pname : precisions) {
                const int prec = pname == "double" ? QMMM_PRECISION_DOUBLE
                                 : pname == "single" ? QMMM_PRECISION_SINGLE : QMMM_PRECISION_MIXED;
                double cpu_step = 0;
                for (Mode mode : modes) {
                    std::vector<Lane> lanes(threads);
                    for (int t = 0; t < threads; ++t) {
                        lanes[t].f = make(c, mode == Mode::Cpu ? QMMM_BACKEND_CPU : QMMM_BACKEND_CUDA, prec,
                                          mode == Mode::Cpu ? 1 : 0);
                        lanes[t].crowd = &crowds[t];
                        lanes[t].sums.assign(walkers, 0.0);
#ifdef QMMM_BENCH_CUDA
                        if (mode == Mode::GpuDevice) {
                            const size_t bytes = crowds[t].xyz.size() * sizeof(double);
                            if (cudaMalloc(&lanes[t].d_xyz, bytes) != cudaSuccess ||
                                cudaMalloc(&lanes[t].d_sums, walkers * sizeof(double)) != cudaSuccess ||
                                cudaMemcpy(lanes[t].d_xyz, crowds[t].xyz.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess)
                                throw std::runtime_error("device memory for the crowds");
                        }
#endif
                    }
                    std::vector<double> t3;
                    for (int r = 0; r < 3; ++r) t3.push_back(time_steps(lanes, mode, min_time / 3));
                    std::sort(t3.begin(), t3.end());
                    const double ts = t3[1];
                    if (mode == Mode::Cpu) cpu_step = ts;
                    double worst = 0;
                    for (int t = 0; t < threads; ++t) {
#ifdef QMMM_BENCH_CUDA
                        if (mode == Mode::GpuDevice)
                            cudaMemcpy(lanes[t].sums.data(), lanes[t].d_sums, walkers * sizeof(double), cudaMemcpyDeviceToHost);
#endif
                        for (int w = 0; w < walkers; ++w)
                            worst = std::max(worst, std::fabs(lanes[t].sums[w] - ref[t][w]) / scale[t][w]);
                    }
                    const double pairs = static_cast<double>(points) * static_cast<double>(m);
                    const double speedup = cpu_step / ts;
                    std::printf("%9lld %-7s %-10s %12.1f %12.4g %10.3f %9.2f %10.2e\n", static_cast<long long>(m),
                                pname.c_str(), mode_name(mode), 1e6 * ts, threads * walkers / ts, pairs / ts / 1e9,
                                speedup, worst);
                    rows.push_back({{"charges", m}, {"precision", pname}, {"backend", mode_name(mode)},
                                    {"threads", threads}, {"walkers", walkers}, {"electrons", electrons},
                                    {"step_us", 1e6 * ts}, {"walkers_per_s", threads * walkers / ts},
                                    {"pairs_per_s", pairs / ts}, {"speedup_vs_cpu", speedup},
                                    {"max_rel_diff_vs_cpu_double", worst}});
                    for (Lane &l : lanes) {
#ifdef QMMM_BENCH_CUDA
                        if (l.d_xyz) cudaFree(l.d_xyz);
                        if (l.d_sums) cudaFree(l.d_sums);
#endif
                        qmmm_field_destroy(l.f);
                    }
                }
            }
        }
        if (!json_path.empty()) {
            bench::write_json(json_path, nlohmann::json{{"benchmark", "crowd_bench"}, {"rows", rows}});
        }
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "crowd_bench: %s\n", ex.what());
        return 1;
    }
    return 0;
}
