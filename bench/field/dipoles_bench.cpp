// dipoles_bench -- the field of K point dipoles (qmmm_field_set_dipoles) beside the field of K plain charges, in one
// run, on the CPU and (where present) the GPU.
//
// K sites random in a 40-bohr box (charges 0.3 e; dipoles up to 0.1 e bohr a component), N points a call (default
// 8,192; normal, sigma 2 bohr, about the box centre). Per backend and precision: us a call of qmmm_field_eval and
// qmmm_field_eval_grad on the charges' field and on a field whose only term is the dipoles', their ratios (the issue's
// target: the dipoles' field <= 2x the charges' at N = 8,192 on the GPU), and the cost of qmmm_field_update_dipoles.
// Times: median of 5 blocks of at least min-time / 5 each, after one untimed call.
//
//   dipoles_bench [--sites K] [--points N] [--min-time s] [--cpu-only] [--json file]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bench_json.hpp"
#include "common/bench_timing.hpp"
#include "qmmm_accel.h"

namespace {

using bench::Clock;
using bench::ok;
using bench::seconds;
using bench::time_call;

const char *precision_name(int p) {
    return p == QMMM_PRECISION_DOUBLE ? "double" : p == QMMM_PRECISION_SINGLE ? "single" : "mixed";
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"The field of K point dipoles beside the field of K plain charges"};
    int64_t k = 10000;
    int n = 8192;
    double min_time = 1.0;
    bool cpu_only = false;
    std::string json_path = "dipoles_bench.json";
    app.add_option("--sites", k, "dipole sites K (and charges K)")->check(CLI::Range(int64_t{1}, int64_t{10000000}));
    app.add_option("--points", n, "points N a call")->check(CLI::Range(1, 1 << 20));
    app.add_option("--min-time", min_time, "seconds of timed calls per measurement")->check(CLI::Range(0.01, 100.0));
    app.add_flag("--cpu-only", cpu_only, "the CPU rows alone, even where a GPU is present");
    app.add_option("--json", json_path, "write the rows here (default dipoles_bench.json)");
    CLI11_PARSE(app, argc, argv);
    try {
        int n_gpu = 0;
        qmmm_cuda_device_count(&n_gpu);
        std::vector<int> backends = {QMMM_BACKEND_CPU};
        if (n_gpu > 0 && !cpu_only) backends.push_back(QMMM_BACKEND_CUDA);
        int threads = 0;
        qmmm_default_threads(&threads);
        std::mt19937_64 g(3);
        std::uniform_real_distribution<double> box(-20, 20), dip(-0.1, 0.1);
        std::normal_distribution<double> nd(0, 2);
        std::vector<double> xyz(3 * static_cast<size_t>(k)), mu(3 * static_cast<size_t>(k)), q(k, 0.3);
        for (double &v : xyz) v = box(g);
        for (double &v : mu) v = dip(g);
        std::vector<double> pts(3 * static_cast<size_t>(n));
        for (double &v : pts) v = nd(g);
        const double far[3] = {500, 500, 500}, zero_z[1] = {0};
        nlohmann::json rows = nlohmann::json::array();
        std::printf("%lld sites, %d points a call; CPU threads %d\n", static_cast<long long>(k), n, threads);
        std::printf("%-5s %-7s %11s %11s %11s %11s %7s %7s %10s\n", "", "prec", "q eval us", "mu eval us", "q grad us",
                    "mu grad us", "eval x", "grad x", "update us");
        for (int b : backends)
            for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
                qmmm_options o;
                qmmm_options_default(&o);
                o.backend = b, o.precision = prec;
                qmmm_field fq = nullptr, fd = nullptr;
                ok(qmmm_field_create_charges(&fq, k, xyz.data(), xyz.data() + 1, xyz.data() + 2, 3, q.data(),
                                             QMMM_SCREEN_NONE, nullptr, nullptr, 0, nullptr, nullptr, &o),
                   "create charges");
                // The dipoles' field alone: one nucleus of Z = 0 far away (a field needs a source) and the dipoles.
                ok(qmmm_field_create(&fd, 0, nullptr, nullptr, 1, far, zero_z, &o), "create");
                ok(qmmm_field_set_dipoles(fd, k, xyz.data(), mu.data()), "set_dipoles");
                std::vector<double> u(n), gr(3 * static_cast<size_t>(n));
                const double tqe =
                    time_call([&] { ok(qmmm_field_eval(fq, n, pts.data(), u.data()), "eval"); }, min_time);
                const double tde =
                    time_call([&] { ok(qmmm_field_eval(fd, n, pts.data(), u.data()), "eval"); }, min_time);
                const double tqg = time_call(
                    [&] { ok(qmmm_field_eval_grad(fq, n, pts.data(), u.data(), gr.data()), "eval_grad"); }, min_time);
                const double tdg = time_call(
                    [&] { ok(qmmm_field_eval_grad(fd, n, pts.data(), u.data(), gr.data()), "eval_grad"); }, min_time);
                const double tu = time_call([&] { ok(qmmm_field_update_dipoles(fd, k, mu.data()), "update"); },
                                            std::min(min_time, 0.1));
                const char *label = b == QMMM_BACKEND_CPU ? "cpu" : "gpu";
                std::printf("%-5s %-7s %11.1f %11.1f %11.1f %11.1f %7.2f %7.2f %10.1f\n", label, precision_name(prec),
                            1e6 * tqe, 1e6 * tde, 1e6 * tqg, 1e6 * tdg, tde / tqe, tdg / tqg, 1e6 * tu);
                rows.push_back({{"backend", label}, {"precision", precision_name(prec)}, {"sites", k},
                                {"points_per_call", n}, {"cpu_threads", threads}, {"charges_eval_us", 1e6 * tqe},
                                {"dipoles_eval_us", 1e6 * tde}, {"charges_grad_us", 1e6 * tqg},
                                {"dipoles_grad_us", 1e6 * tdg}, {"eval_ratio", tde / tqe}, {"grad_ratio", tdg / tqg},
                                {"update_us", 1e6 * tu}});
                qmmm_field_destroy(fq);
                qmmm_field_destroy(fd);
            }
        if (!json_path.empty()) {
            bench::write_json(json_path, nlohmann::json{{"benchmark", "dipoles_bench"}, {"rows", rows}});
        }
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "dipoles_bench: %s\n", ex.what());
        return 1;
    }
    return 0;
}
