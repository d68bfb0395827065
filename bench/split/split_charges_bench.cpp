// split_charges_bench -- QMMM_METHOD_SPLIT on MM point charges around a QM region, beside the direct sum of the same
// field in the same run.
//
// The environment: M point charges of +-0.3 .. 0.8 e (alternating signs), uniform where they are 5-15 bohr from the
// nearest nucleus of a 26-electron molecule (C, N, O and 5 H within 4 bohr); region = the nuclei + 4 bohr (so some
// charges lie inside it); tolerance 1e-7. Points: normal (sigma 1 bohr) about the nuclei, fixed seed. For each
// backend (the CPU with all threads; the GPU where present): qmmm_field_create_charges' wall time with SPLIT, the
// alpha and R_c it chose, its grid values, microseconds per point for calls of N points through the split and
// through the direct sum (DOUBLE), their ratio, and the max normwise error of the split against the direct double
// sum. Units: seconds, microseconds, bohr.
//
//   split_charges_bench [--charges M] [--points N] [--tolerance t] [--margin bohr] [--min-time s] [--json file]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
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

struct Env {
    std::vector<double> xyz, q, nuc_xyz, nuc_z;
};

Env make_env(int64_t m) {
    Env e;
    e.nuc_xyz = {0, 0, 0, 2.7, 0, 0, -1.3, 2.3, 0, -1.0, -1.7, 0.9, 3.6, 1.6, 0.5, 3.5, -1.5, -0.6, -0.7, 3.9, 0.6,
                 -1.6, -1.0, -1.9};
    e.nuc_z = {6, 7, 8, 1, 1, 1, 1, 1};
    std::mt19937_64 g(5);
    std::uniform_real_distribution<double> box(-17, 17), mag(0.3, 0.8);
    while (static_cast<int64_t>(e.q.size()) < m) {
        const double p[3] = {box(g), box(g), box(g)};
        double dmin = 1e9;
        for (size_t b = 0; b < e.nuc_z.size(); ++b)
            dmin = std::min(dmin, std::hypot(p[0] - e.nuc_xyz[3 * b], p[1] - e.nuc_xyz[3 * b + 1], p[2] - e.nuc_xyz[3 * b + 2]));
        if (dmin < 5 || dmin > 15) continue;
        e.xyz.insert(e.xyz.end(), p, p + 3);
        e.q.push_back((e.q.size() % 2 ? -1 : 1) * mag(g));
    }
    return e;
}

qmmm_field make(const Env &e, int backend, int method, double tol, const double *region) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = backend, o.method = method, o.tolerance = tol, o.region = method == QMMM_METHOD_SPLIT ? region : nullptr;
    qmmm_field f = nullptr;
    ok(qmmm_field_create_charges(&f, static_cast<int64_t>(e.q.size()), e.xyz.data(), e.xyz.data() + 1,
                                 e.xyz.data() + 2, 3, e.q.data(), QMMM_SCREEN_NONE, nullptr, nullptr,
                                 static_cast<int64_t>(e.nuc_z.size()), e.nuc_xyz.data(), e.nuc_z.data(), &o),
       "qmmm_field_create_charges");
    return f;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"SPLIT on MM point charges around a QM region, against the direct sum"};
    int64_t m = 100000;
    int n = 1024;
    double tol = 1e-7, margin = 4.0, min_time = 1.0;
    std::string json_path;
    app.add_option("--charges", m, "point charges M")->check(CLI::Range(int64_t{1000}, int64_t{100000000}));
    app.add_option("--points", n, "points a call N")->check(CLI::Range(1, 1 << 20));
    app.add_option("--tolerance", tol, "SPLIT's tolerance")->check(CLI::Range(1e-11, 1e-3));
    app.add_option("--margin", margin, "region = nuclei + this (bohr)")->check(CLI::Range(0.5, 20.0));
    app.add_option("--min-time", min_time, "seconds of timed calls per measurement")->check(CLI::Range(0.01, 100.0));
    app.add_option("--json", json_path, "write the rows here");
    CLI11_PARSE(app, argc, argv);
    try {
        const Env e = make_env(m);
        double region[6];
        ok(qmmm_region_around(static_cast<int64_t>(e.nuc_z.size()), e.nuc_xyz.data(), margin, region), "region");
        std::mt19937_64 g(11);
        std::normal_distribution<double> nd(0, 1);
        std::vector<double> pts(3 * static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < 3; ++k) pts[3 * i + k] = e.nuc_xyz[3 * (i % e.nuc_z.size()) + k] + nd(g);
        int n_gpu = 0;
        qmmm_cuda_device_count(&n_gpu);
        std::vector<int> backends = {QMMM_BACKEND_CPU};
        if (n_gpu > 0) backends.push_back(QMMM_BACKEND_CUDA);
        nlohmann::json rows = nlohmann::json::array();
        std::printf("SPLIT on %lld MM charges 5-15 bohr from a 26-electron molecule, region nuclei + %g bohr, "
                    "tolerance %g, %d points a call\n", static_cast<long long>(m), margin, tol, n);
        std::printf("%-5s %9s %7s %7s %12s %11s %12s %9s %11s\n", "", "setup s", "alpha", "R_c", "grid values",
                    "split us/pt", "direct us/pt", "speed-up", "max error");
        for (int b : backends) {
            const auto t0 = Clock::now();
            qmmm_field s = make(e, b, QMMM_METHOD_SPLIT, tol, region);
            const double setup = seconds(t0);
            qmmm_field d = make(e, b, QMMM_METHOD_DIRECT, tol, region);
            double alpha = 0, r_cut = 0, est = 0;
            int64_t grid = 0;
            ok(qmmm_field_split_params(s, &alpha, &r_cut, nullptr, &est), "split_params");
            ok(qmmm_field_split_stats(s, &grid, nullptr, nullptr, nullptr), "split_stats");
            std::vector<double> us(n), ud(n), ref(n);
            const double ts = time_call([&] { ok(qmmm_field_eval(s, n, pts.data(), us.data()), "split eval"); }, min_time);
            const double td = time_call([&] { ok(qmmm_field_eval(d, n, pts.data(), ud.data()), "direct eval"); }, min_time);
            // the error against the direct double sum on the CPU, relative to sum |terms|
            qmmm_field cpu = make(e, QMMM_BACKEND_CPU, QMMM_METHOD_DIRECT, tol, region);
            ok(qmmm_field_eval(cpu, n, pts.data(), ref.data()), "reference eval");
            double worst = 0;
            for (int i = 0; i < n; i += std::max(1, n / 256)) {
                const double *p = &pts[3 * i];
                double scale = 0;
                for (size_t k = 0; k < e.q.size(); ++k)
                    scale += std::fabs(e.q[k]) / std::hypot(p[0] - e.xyz[3 * k], p[1] - e.xyz[3 * k + 1], p[2] - e.xyz[3 * k + 2]);
                for (size_t k = 0; k < e.nuc_z.size(); ++k)
                    scale += e.nuc_z[k] / std::hypot(p[0] - e.nuc_xyz[3 * k], p[1] - e.nuc_xyz[3 * k + 1], p[2] - e.nuc_xyz[3 * k + 2]);
                worst = std::max(worst, std::fabs(us[i] - ref[i]) / scale);
            }
            const char *label = b == QMMM_BACKEND_CPU ? "cpu" : "gpu";
            int threads = 0;
            qmmm_default_threads(&threads);
            std::printf("%-5s %9.2f %7.3f %7.3f %12lld %11.3f %12.3f %9.1f %11.2e\n", label, setup, alpha, r_cut,
                        static_cast<long long>(grid), 1e6 * ts / n, 1e6 * td / n, td / ts, worst);
            rows.push_back({{"backend", label}, {"charges", m}, {"points_per_call", n}, {"tolerance", tol},
                            {"margin", margin}, {"cpu_threads", threads}, {"setup_s", setup}, {"alpha", alpha},
                            {"r_cut", r_cut}, {"grid_values", grid}, {"error_estimate", est},
                            {"split_us_per_point", 1e6 * ts / n}, {"direct_us_per_point", 1e6 * td / n},
                            {"speedup", td / ts}, {"max_error", worst}});
            qmmm_field_destroy(cpu), qmmm_field_destroy(d), qmmm_field_destroy(s);
        }
        if (!json_path.empty()) {
            bench::write_json(json_path, nlohmann::json{{"benchmark", "split_charges_bench"}, {"rows", rows}});
        }
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "split_charges_bench: %s\n", ex.what());
        return 1;
    }
    return 0;
}
