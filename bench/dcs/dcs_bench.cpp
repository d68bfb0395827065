// dcs_bench.cpp -- DCS throughput (G atom-evaluations/s = atoms x lattice points / s / 1e9) for the fast
// kernel in single, mixed and double precision on one GPU and on all listed GPUs, with VMD's published
// version-4 kernel (bench/dcs/dcs_vmd4.cu: constant-memory batches of 4000, 8 points a half-warp apart) as the
// baseline in the same run: "vmd4" launched as VMD launches it (one launch per plane and batch), "vmd4g" over a
// 3-D grid. Without CUDA the baseline rows are left out (their ratios print as 0).
// par.eff = one-GPU time / (n GPUs x all-GPU time). Prints a table and writes JSON. Times include the copy of the map back to the host.
//   dcs_bench --atoms 20000,100000 --sizes 128,256 --devices 0,1 --json dcs.json
// Exit status: 0, 1 when a run fails, 2 on a usage error, 8 when the largest case cannot fit in memory.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "qmmm_accel.h"
#ifdef QMMM_BENCH_VMD4
#include "dcs_vmd4.hpp"
#endif

namespace {

struct Row {
    std::string kernel, precision;
    int n_gpus;
    long long atoms, size;
    double seconds, gevals, vs_baseline, vs_grid, efficiency;
};

double run(const std::vector<double> &xyz, const std::vector<double> &q, const qmmm_dcs_lattice &l,
           std::vector<double> &map, int precision, const std::vector<int> &devs, int repeat,
           int backend = QMMM_BACKEND_CUDA) {
    qmmm_dcs_options o;
    qmmm_dcs_options_default(&o);
    o.backend = backend, o.precision = precision;
    o.n_devices = static_cast<int>(devs.size());
    std::copy(devs.begin(), devs.end(), o.devices);
    double best = 1e300;
    for (int r = 0; r < repeat; ++r) {
        qmmm_dcs_stats st{};
        if (qmmm_dcs_map(static_cast<int64_t>(q.size()), xyz.data(), q.data(), &l, map.data(), &o, &st)) {
            std::fprintf(stderr, "dcs_bench: %s\n", qmmm_error_message());
            return -1;
        }
        best = std::min(best, st.seconds);
    }
    return best;
}

// VMD's version-4 kernel on one device (bench/dcs/dcs_vmd4.cu), best of repeat; -1 on failure, 0 without CUDA.
double run_vmd4(const std::vector<double> &xyz, const std::vector<double> &q, const qmmm_dcs_lattice &l,
                std::vector<double> &map, bool slice, int device, int repeat) {
#ifdef QMMM_BENCH_VMD4
    double best = 1e300;
    try {
        for (int r = 0; r < repeat; ++r)
            best = std::min(best, dcs_vmd4_map(static_cast<int64_t>(q.size()), xyz.data(), q.data(), l.origin,
                                               l.spacing, l.count, map.data(), slice, device));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "dcs_bench: %s\n", e.what());
        return -1;
    }
    return best;
#else
    (void)xyz, (void)q, (void)l, (void)map, (void)slice, (void)device, (void)repeat;
    return 0;
#endif
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"DCS benchmark: G atom-evaluations/s, fast kernel vs VMD's version-4 kernel"};
    std::vector<long long> atoms{20000, 100000, 200000}, sizes{128, 256};
    std::vector<int> devices{0};
    std::vector<std::string> precisions{"single", "mixed", "double"};
    std::string json = "dcs_bench.json";
    int repeat = 2;
    long long double_max_work = 4'000'000'000'000LL;
    bool cpu = false;
    namespace cli = qmmm::cli;
    app.add_option("--atoms", atoms, "atom counts")->delimiter(',')->check(cli::int_in(1, 100'000'000));
    app.add_option("--sizes", sizes, "lattice edge (points per axis)")->delimiter(',')->check(cli::int_in(2, 1 << 14));
    app.add_option("--devices", devices, "GPUs for the all-GPU runs (the one-GPU runs use the first)")->delimiter(',')
        ->check(cli::int_in(0, 1023));
    app.add_option("--precisions", precisions, "single, mixed, double")->delimiter(',')
        ->check(CLI::IsMember({"single", "mixed", "double"}));
    app.add_option("--repeat", repeat, "timed runs per case (best is reported)")->check(cli::int_in(1, 1000));
    app.add_option("--double-max-work", double_max_work, "skip mixed/double cases above this many atom-evaluations")
        ->check(cli::int_in(0, 1'000'000'000'000'000'000LL));
    app.add_flag("--cpu", cpu, "also time the CPU backend (single) on the smallest case");
    app.add_option("--json", json, "JSON output");
    if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;
    if (atoms.empty() || sizes.empty() || devices.empty() || devices.size() > QMMM_DCS_MAX_DEVICES) {
        std::fprintf(stderr, "dcs_bench: error: --atoms, --sizes and --devices (at most %d) need at least one value\n",
                     QMMM_DCS_MAX_DEVICES);
        return cli::kUsageError;
    }
    try {  // the largest case's atoms, charges and map
        const double n_max = static_cast<double>(*std::max_element(atoms.begin(), atoms.end()));
        const double s_max = static_cast<double>(*std::max_element(sizes.begin(), sizes.end()));
        cli::check_fits_memory(4 * n_max + s_max * s_max * s_max, sizeof(double), "the largest case",
                               "use smaller --atoms or --sizes");
    } catch (const qmmm::Error &e) {
        std::fprintf(stderr, "dcs_bench: error: %s\n", e.what());
        return e.status;
    }

    std::vector<Row> rows;
    std::mt19937_64 g(42);
    for (long long n : atoms)
        for (long long s : sizes) {
            qmmm_dcs_lattice l{};
            const double h = 0.5 / QMMM_BOHR_ANGSTROM;  // 0.5 Angstrom in bohr
            for (int d = 0; d < 3; ++d) l.origin[d] = 0, l.spacing[d] = h, l.count[d] = s;
            std::uniform_real_distribution<double> pos(0.013, s * h - 0.017), chg(-1, 1);
            std::vector<double> xyz(3 * n), q(n);
            for (auto &v : xyz) v = pos(g);
            for (auto &v : q) v = chg(g);
            std::vector<double> map(static_cast<size_t>(s * s * s));
            const double work = static_cast<double>(n) * s * s * s;
            std::vector<int> one{devices[0]};
            run(xyz, q, l, map, QMMM_PRECISION_SINGLE, devices, 1);  // warm every thread
            // Baselines: version 4 launched as VMD launches it (per plane and batch), and over a 3-D grid.
            const double base = run_vmd4(xyz, q, l, map, true, devices[0], repeat);
            const double grid = run_vmd4(xyz, q, l, map, false, devices[0], repeat);
            if (base < 0 || grid < 0) return 1;
            if (base > 0) rows.push_back({"vmd4", "single", 1, n, s, base, work / base / 1e9, 1.0, grid / base, 1.0});
            if (grid > 0) rows.push_back({"vmd4g", "single", 1, n, s, grid, work / grid / 1e9, base / grid, 1.0, 1.0});
            for (const auto &p : precisions) {
                const int prec = p == "double" ? QMMM_PRECISION_DOUBLE : p == "mixed" ? QMMM_PRECISION_MIXED
                                                                                      : QMMM_PRECISION_SINGLE;
                if (prec != QMMM_PRECISION_SINGLE && work > static_cast<double>(double_max_work)) continue;
                const double t1 = run(xyz, q, l, map, prec, one, repeat);
                if (t1 <= 0) return 1;
                rows.push_back({"fast", p, 1, n, s, t1, work / t1 / 1e9, base / t1, grid / t1, 1.0});
                if (devices.size() > 1) {
                    const double tn = run(xyz, q, l, map, prec, devices, repeat);
                    if (tn <= 0) return 1;
                    rows.push_back({"fast", p, static_cast<int>(devices.size()), n, s, tn, work / tn / 1e9,
                                    base / tn, grid / tn, t1 / tn / devices.size()});
                }
            }
            if (cpu && n == atoms.front() && s == sizes.front()) {
                const double tc = run(xyz, q, l, map, QMMM_PRECISION_SINGLE, {}, 1, QMMM_BACKEND_CPU);
                rows.push_back({"cpu", "single", 0, n, s, tc, work / tc / 1e9, base / tc, grid / tc, 1.0});
            }
        }
    std::printf("%-6s %-7s %5s %8s %6s %10s %12s %8s %8s %8s\n", "kernel", "prec", "gpus", "atoms", "size", "seconds",
                "Gevals/s", "vs_vmd4", "vs_vmd4g", "par.eff");
    for (const auto &r : rows)
        std::printf("%-6s %-7s %5d %8lld %5lld^3 %10.4f %12.1f %8.2f %8.2f %8.3f\n", r.kernel.c_str(), r.precision.c_str(),
                    r.n_gpus, r.atoms, r.size, r.seconds, r.gevals, r.vs_baseline, r.vs_grid, r.efficiency);
    std::ofstream js(json);
    js << "{\n  \"benchmark\": \"dcs\",\n  \"units\": \"G atom-evaluations per second\",\n  \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto &r = rows[i];
        js << "    {\"kernel\": \"" << r.kernel << "\", \"precision\": \"" << r.precision << "\", \"gpus\": " << r.n_gpus
           << ", \"atoms\": " << r.atoms << ", \"size\": " << r.size << ", \"seconds\": " << r.seconds
           << ", \"gevals_per_s\": " << r.gevals << ", \"vs_vmd4\": " << r.vs_baseline << ", \"vs_vmd4_grid\": " << r.vs_grid
           << ", \"parallel_efficiency\": " << r.efficiency << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    js << "  ]\n}\n";
    qmmm_dcs_release();
    return 0;
}
