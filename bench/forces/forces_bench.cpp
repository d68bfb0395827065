// forces_bench -- the forces beside the potential-only call, in one run, on the CPU and (where present) the GPU.
//
// Gradient: qmmm_field_eval_grad against qmmm_field_eval on the same field and points: M density cells (default
// 268,782, the glycine environment's size; random in a 40-bohr box, populations 1e-6..1e-2) and 8 nuclei, N points a
// call (default 8,192; normal, sigma 2 bohr, about the box centre), per precision (DOUBLE, SINGLE, MIXED): us a call of
// each, their ratio (the targets: <= 1.6 on the GPU, <= 2 on the CPU), and the gradient's max normwise error
// per component against the CPU's DOUBLE gradient (relative to sum |q|/d^2, on up to 64 of the points). With --cube,
// the same rows (kind "gradient_cube") again on a density cube's cells and nuclei, a lattice (the value call's and the
// gradient's row layouts on the GPU), the points about the centre of its cells' box.
// Reverse field: qmmm_field_site_field and qmmm_field_site_accum_add (the accumulating form a run uses) against the
// forward qmmm_field_eval at --sites sites (default 1e5 cells and the nuclei) and N = 22, 1,024 and 8,192 points
// (weights -1), per precision (MIXED's reverse field is DOUBLE's, against MIXED's forward call): pair rates (N x M
// pairs a second) and the reverse rate as a fraction of the forward one (the target: >= 0.8); also as a
// fraction of the forward call with the gradient (qmmm_field_eval_grad: the same pair term, read the other way). Beside them the
// field gradient at the sites, qmmm_field_site_field_grad, and the accumulator's add with its gradient option on (the
// dipoles' forces): their times over the site field's and the plain add's. Times: median of 5 blocks of at least
// min-time / 5 each, after one untimed call.
// A QMC code's call site (kind "gradient_call"): the same two calls at few points and at 8,192, DOUBLE and SINGLE, on
// --sites cells (the reverse rows' field) and on 10^4 MM charges of which every one is Gaussian-screened (widths 0.5
// to 1.5 bohr, charges -0.8..0.8 e, random in a 50-bohr box; the screened kernels' own grid on the GPU).
// Split gradient (--split, the CPU): a QMMM_METHOD_SPLIT field (tolerance --split-tol) of a density on a lattice
// (--split-cells cells, 0.3 bohr apart, a Gaussian of width 3 bohr, as a molecule's environment; random point-like
// cells would ask the grid for deep refinement around each) and the 8 nuclei, over the box [-3, 3]^3 bohr, N points
// inside it: the split's value call and gradient call, their ratio, the DIRECT double gradient of the same points
// beside them, the gradient's first-call setup (its check and any grid of its own) and its max error per component
// against the DIRECT gradient (on up to 64 points).
//
//   forces_bench [--cells M] [--points N] [--sites M2] [--min-time s] [--cpu-only] [--cube FILE [--threshold t]]
//                [--split [--split-cells M3] [--split-tol t]] [--json file]
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
    int64_t sites() const { return static_cast<int64_t>(q.size() + nuc_z.size()); }
};

// A density on a lattice: k^3 >= m cells 0.3 bohr apart about the origin, populations of a Gaussian of width 3 bohr
// (a molecule's density, as the split's tests use), and make_env's nuclei.
Env make_density(int64_t m, const Env &nuclei) {
    Env e;
    int k = 1;
    while (static_cast<int64_t>(k) * k * k < m) ++k;
    const double h = 0.3;
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j)
            for (int l = 0; l < k; ++l) {
                const double x = (i - 0.5 * (k - 1)) * h, y = (j - 0.5 * (k - 1)) * h, z = (l - 0.5 * (k - 1)) * h;
                e.xyz.insert(e.xyz.end(), {x, y, z});
                e.q.push_back(std::exp(-(x * x + y * y + z * z) / 9.0) * h * h * h);
            }
    e.nuc_xyz = nuclei.nuc_xyz, e.nuc_z = nuclei.nuc_z;
    return e;
}

Env make_env(int64_t m, unsigned seed) {
    Env e;
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> box(-20, 20), pop(1e-6, 1e-2);
    for (int64_t i = 0; i < m; ++i) e.xyz.push_back(box(g)), e.xyz.push_back(box(g)), e.xyz.push_back(box(g)), e.q.push_back(pop(g));
    e.nuc_xyz = {0, 0, 0, 2.7, 0, 0, -1.3, 2.3, 0, -1.0, -1.7, 0.9, 3.6, 1.6, 0.5, 3.5, -1.5, -0.6, -0.7, 3.9, 0.6,
                 -1.6, -1.0, -1.9};
    e.nuc_z = {6, 7, 8, 1, 1, 1, 1, 1};
    return e;
}

std::vector<double> make_points(int n, unsigned seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> nd(0, 2);
    std::vector<double> p(3 * static_cast<size_t>(n));
    for (double &v : p) v = nd(g);
    return p;
}

// Gaussian-screened MM charges (every one), random in a 50-bohr box, and make_env's first two nuclei.
struct Screened {
    std::vector<double> xyz, q, a, b, nuc_xyz = {0, 0, 0, 2.7, 0, 0}, nuc_z = {8, 1};
};
Screened make_screened(int64_t m, unsigned seed) {
    Screened e;
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> box(-25, 25), chg(-0.8, 0.8), width(0.5, 1.5);
    for (int64_t i = 0; i < m; ++i) {
        e.xyz.insert(e.xyz.end(), {box(g), box(g), box(g)});
        e.q.push_back(chg(g)), e.a.push_back(width(g)), e.b.push_back(0.0);
    }
    return e;
}

qmmm_field make(const Env &e, int backend, int precision) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = backend, o.precision = precision;
    qmmm_field f = nullptr;
    ok(qmmm_field_create(&f, static_cast<int64_t>(e.q.size()), e.xyz.data(), e.q.data(),
                         static_cast<int64_t>(e.nuc_z.size()), e.nuc_xyz.data(), e.nuc_z.data(), &o),
       "create");
    return f;
}

const char *precision_name(int p) {
    return p == QMMM_PRECISION_DOUBLE ? "double" : p == QMMM_PRECISION_SINGLE ? "single" : "mixed";
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"The forces (gradient at points, field at the sites) beside the potential-only call"};
    int64_t m = 268782, m_sites = 100000;
    int n = 8192;
    double min_time = 1.0;
    bool cpu_only = false;
    std::string json_path = "forces_bench.json";
    app.add_option("--cells", m, "cells M of the gradient rows")->check(CLI::Range(int64_t{1}, int64_t{100000000}));
    app.add_option("--points", n, "points N of the gradient rows")->check(CLI::Range(1, 1 << 20));
    app.add_option("--sites", m_sites, "cells of the reverse-field rows")->check(CLI::Range(int64_t{1}, int64_t{100000000}));
    app.add_option("--min-time", min_time, "seconds of timed calls per measurement")->check(CLI::Range(0.01, 100.0));
    app.add_flag("--cpu-only", cpu_only, "the CPU rows alone, even where a GPU is present");
    bool split = false;
    double split_tol = 1e-7;
    int64_t split_cells = 100000;
    app.add_option("--split-cells", split_cells, "cells of the split rows' lattice")->check(CLI::Range(int64_t{8}, int64_t{10000000}));
    app.add_flag("--split", split, "also the split gradient's rows (QMMM_METHOD_SPLIT, CPU)");
    app.add_option("--split-tol", split_tol, "the split field's tolerance")->check(CLI::Range(1e-11, 1e-3));
    app.add_option("--json", json_path, "write the rows here (default forces_bench.json)");
    std::string cube;
    double threshold = 4.1e-4;  // the glycine environment's cells (data/glycine_trimer: 268,938)
    app.add_option("--cube", cube, "also the gradient rows on this density cube's cells (a lattice)");
    app.add_option("--threshold", threshold, "the cube's density threshold, e/bohr^3 (default 4.1e-4)")->check(CLI::Range(0.0, 1e6));
    CLI11_PARSE(app, argc, argv);
    try {
        int n_gpu = 0;
        qmmm_cuda_device_count(&n_gpu);
        std::vector<int> backends = {QMMM_BACKEND_CPU};
        if (n_gpu > 0 && !cpu_only) backends.push_back(QMMM_BACKEND_CUDA);
        int threads = 0;
        qmmm_default_threads(&threads);
        nlohmann::json rows = nlohmann::json::array();

        // ---- gradient against the potential-only call ----
        auto gradient_rows = [&](const Env &e, const std::vector<double> &pts, const char *kind, const char *what) {
            const int64_t m = static_cast<int64_t>(e.q.size());
            const int n_check = std::min(n, 64);
            std::vector<double> ref_g(3 * static_cast<size_t>(n_check)), scale(static_cast<size_t>(n_check), 0.0);
            {
                qmmm_field ref = make(e, QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE);
                std::vector<double> u(n_check);
                ok(qmmm_field_eval_grad(ref, n_check, pts.data(), u.data(), ref_g.data()), "reference gradient");
                qmmm_field_destroy(ref);
                for (int i = 0; i < n_check; ++i) {
                    const double *p = &pts[3 * i];
                    for (size_t k = 0; k < e.q.size(); ++k) {
                        const double dx = p[0] - e.xyz[3 * k], dy = p[1] - e.xyz[3 * k + 1], dz = p[2] - e.xyz[3 * k + 2];
                        scale[i] += std::fabs(e.q[k]) / (dx * dx + dy * dy + dz * dz);
                    }
                    for (size_t k = 0; k < e.nuc_z.size(); ++k) {
                        const double dx = p[0] - e.nuc_xyz[3 * k], dy = p[1] - e.nuc_xyz[3 * k + 1],
                                     dz = p[2] - e.nuc_xyz[3 * k + 2];
                        scale[i] += e.nuc_z[k] / (dx * dx + dy * dy + dz * dz);
                    }
                }
            }
            std::printf("gradient vs potential, %s: %lld cells + %zu nuclei, %d points a call; CPU threads %d\n", what,
                        static_cast<long long>(m), e.nuc_z.size(), n, threads);
            std::printf("%-5s %-7s %12s %12s %7s %11s\n", "", "prec", "eval us", "grad us", "ratio", "grad error");
            for (int b : backends)
                for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
                    qmmm_field f = make(e, b, prec);
                    std::vector<double> u(n), g(3 * static_cast<size_t>(n));
                    const double te =
                        time_call([&] { ok(qmmm_field_eval(f, n, pts.data(), u.data()), "eval"); }, min_time);
                    const double tg = time_call(
                        [&] { ok(qmmm_field_eval_grad(f, n, pts.data(), u.data(), g.data()), "eval_grad"); }, min_time);
                    double worst = 0;
                    for (int i = 0; i < n_check; ++i)
                        for (int k = 0; k < 3; ++k)
                            worst = std::max(worst, std::fabs(g[3 * i + k] - ref_g[3 * i + k]) / scale[i]);
                    const char *label = b == QMMM_BACKEND_CPU ? "cpu" : "gpu";
                    std::printf("%-5s %-7s %12.1f %12.1f %7.2f %11.2e\n", label, precision_name(prec), 1e6 * te,
                                1e6 * tg, tg / te, worst);
                    rows.push_back({{"kind", kind}, {"backend", label}, {"precision", precision_name(prec)},
                                    {"cells", m}, {"points_per_call", n}, {"cpu_threads", threads},
                                    {"eval_us", 1e6 * te}, {"grad_us", 1e6 * tg}, {"ratio", tg / te},
                                    {"grad_max_error", worst}});
                    qmmm_field_destroy(f);
                }
        };
        const Env e = make_env(m, 3);
        gradient_rows(e, make_points(n, 4), "gradient", "random cells");
        if (!cube.empty()) {  // the cube's cells and nuclei; the points about the centre of its cells' box
            qmmm_env env = nullptr;
            ok(qmmm_cube_read(&env, cube.c_str(), threshold), "cube read");
            int64_t nc = 0, nn = 0;
            double dv = 0;
            qmmm_env_sizes(env, &nc, &nn, &dv);
            Env c;
            c.xyz.resize(3 * nc), c.q.resize(nc), c.nuc_xyz.resize(3 * nn), c.nuc_z.resize(nn);
            qmmm_env_copy(env, c.xyz.data(), c.q.data(), c.nuc_xyz.data(), c.nuc_z.data());
            qmmm_env_destroy(env);
            double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
            for (int64_t k = 0; k < nc; ++k)
                for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], c.xyz[3 * k + a]), hi[a] = std::max(hi[a], c.xyz[3 * k + a]);
            std::vector<double> pts = make_points(n, 4);
            for (size_t i = 0; i < pts.size(); ++i) pts[i] += 0.5 * (lo[i % 3] + hi[i % 3]);
            gradient_rows(c, pts, "gradient_cube", cube.c_str());
        }

        // ---- a QMC code's call site: few points (and 8,192), cells and screened charges ----
        {
            const Env c = make_env(m_sites, 5);
            const Screened sc = make_screened(10000, 8);
            std::printf("\ngradient vs potential at a call site: %lld cells + %zu nuclei; 10,000 Gaussian-screened "
                        "charges + %zu nuclei\n", static_cast<long long>(c.q.size()), c.nuc_z.size(), sc.nuc_z.size());
            std::printf("%-5s %-7s %-9s %6s %12s %12s %7s\n", "", "prec", "sources", "N", "eval us", "grad us", "ratio");
            for (int b : backends)
                for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE})
                    for (int screened : {0, 1}) {
                        qmmm_field f = nullptr;
                        if (screened) {
                            qmmm_options o;
                            qmmm_options_default(&o);
                            o.backend = b, o.precision = prec;
                            ok(qmmm_field_create_charges(&f, static_cast<int64_t>(sc.q.size()), sc.xyz.data(),
                                                         sc.xyz.data() + 1, sc.xyz.data() + 2, 3, sc.q.data(),
                                                         QMMM_SCREEN_GAUSSIAN, sc.a.data(), sc.b.data(),
                                                         static_cast<int64_t>(sc.nuc_z.size()), sc.nuc_xyz.data(),
                                                         sc.nuc_z.data(), &o),
                               "create_charges");
                        } else {
                            f = make(c, b, prec);
                        }
                        for (int np : {22, 1024, 8192}) {
                            const std::vector<double> p = make_points(np, 9);
                            std::vector<double> u(np), g(3 * static_cast<size_t>(np));
                            const double te =
                                time_call([&] { ok(qmmm_field_eval(f, np, p.data(), u.data()), "eval"); }, min_time);
                            const double tg = time_call(
                                [&] { ok(qmmm_field_eval_grad(f, np, p.data(), u.data(), g.data()), "eval_grad"); },
                                min_time);
                            const char *label = b == QMMM_BACKEND_CPU ? "cpu" : "gpu";
                            const char *sources = screened ? "screened" : "cells";
                            std::printf("%-5s %-7s %-9s %6d %12.1f %12.1f %7.2f\n", label, precision_name(prec),
                                        sources, np, 1e6 * te, 1e6 * tg, tg / te);
                            rows.push_back({{"kind", "gradient_call"}, {"backend", label},
                                            {"precision", precision_name(prec)}, {"sources", sources},
                                            {"sites", screened ? static_cast<int64_t>(sc.q.size() + sc.nuc_z.size())
                                                               : c.sites()},
                                            {"points_per_call", np}, {"cpu_threads", threads}, {"eval_us", 1e6 * te},
                                            {"grad_us", 1e6 * tg}, {"ratio", tg / te}});
                        }
                        qmmm_field_destroy(f);
                    }
        }

        // ---- the split's gradient against its value call and the DIRECT gradient (CPU) ----
        if (split) {
            const Env e = make_density(split_cells, make_env(0, 3));
            const int64_t m = static_cast<int64_t>(e.q.size());
            const double region[6] = {-3, -3, -3, 3, 3, 3};
            std::vector<double> sp = make_points(n, 7);
            for (double &v : sp) v = std::clamp(0.6 * v, -2.95, 2.95);
            const int nc = std::min(n, 64);
            std::vector<double> u(n), g(3 * static_cast<size_t>(n)), gd(3 * static_cast<size_t>(n)), sc(nc, 0.0);
            for (int i = 0; i < nc; ++i) {
                const double *p = &sp[3 * i];
                for (size_t k = 0; k < e.q.size(); ++k) {
                    const double dx = p[0] - e.xyz[3 * k], dy = p[1] - e.xyz[3 * k + 1], dz = p[2] - e.xyz[3 * k + 2];
                    sc[i] += e.q[k] / (dx * dx + dy * dy + dz * dz);
                }
                for (size_t k = 0; k < e.nuc_z.size(); ++k) {
                    const double dx = p[0] - e.nuc_xyz[3 * k], dy = p[1] - e.nuc_xyz[3 * k + 1], dz = p[2] - e.nuc_xyz[3 * k + 2];
                    sc[i] += e.nuc_z[k] / (dx * dx + dy * dy + dz * dz);
                }
            }
            qmmm_field d = make(e, QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE);
            const double td = time_call([&] { ok(qmmm_field_eval_grad(d, n, sp.data(), u.data(), gd.data()), "direct grad"); },
                                        min_time);
            qmmm_field_destroy(d);
            qmmm_options o;
            qmmm_options_default(&o);
            o.backend = QMMM_BACKEND_CPU, o.method = QMMM_METHOD_SPLIT, o.tolerance = split_tol, o.region = region;
            qmmm_field f = nullptr;
            auto t0 = Clock::now();
            ok(qmmm_field_create(&f, static_cast<int64_t>(e.q.size()), e.xyz.data(), e.q.data(),
                                 static_cast<int64_t>(e.nuc_z.size()), e.nuc_xyz.data(), e.nuc_z.data(), &o),
               "split create");
            const double setup = seconds(t0);
            t0 = Clock::now();
            double rg = 0, est = 0;
            int64_t own = 0;
            int is_split = 0;
            ok(qmmm_field_split_grad_params(f, &rg, &est, &own, &is_split), "split_grad_params");
            const double grad_setup = seconds(t0);
            const double te = time_call([&] { ok(qmmm_field_eval(f, n, sp.data(), u.data()), "split eval"); }, min_time);
            const double tg = time_call(
                [&] { ok(qmmm_field_eval_grad(f, n, sp.data(), u.data(), g.data()), "split eval_grad"); }, min_time);
            double worst = 0;
            for (int i = 0; i < nc; ++i)
                for (int k = 0; k < 3; ++k) worst = std::max(worst, std::fabs(g[3 * i + k] - gd[3 * i + k]) / sc[i]);
            std::printf("\nsplit gradient (CPU): %lld cells (a density), region 6 bohr, tolerance %.0e, %d points a call; setup %.1f s, "
                        "gradient's first call %.1f s (%s, R_g %.3f bohr, own grid %lld values, estimate %.1e)\n",
                        static_cast<long long>(m), split_tol, n, setup, grad_setup, is_split ? "split" : "direct", rg,
                        static_cast<long long>(own), est);
            std::printf("%12s %12s %7s %15s %11s\n", "eval us", "grad us", "ratio", "direct grad us", "grad error");
            std::printf("%12.1f %12.1f %7.2f %15.1f %11.2e\n", 1e6 * te, 1e6 * tg, tg / te, 1e6 * td, worst);
            rows.push_back({{"kind", "split_gradient"}, {"backend", "cpu"}, {"precision", "double"}, {"cells", m},
                            {"points_per_call", n}, {"cpu_threads", threads}, {"tolerance", split_tol},
                            {"setup_s", setup}, {"grad_setup_s", grad_setup}, {"grad_is_split", is_split},
                            {"grad_r_cut", rg}, {"grad_own_grid_values", own}, {"grad_error_estimate", est},
                            {"eval_us", 1e6 * te}, {"grad_us", 1e6 * tg}, {"ratio", tg / te},
                            {"direct_grad_us", 1e6 * td}, {"grad_max_error", worst}});
            qmmm_field_destroy(f);
        }

        // ---- reverse field against the forward call ----
        const Env s = make_env(m_sites, 5);
        std::printf("\nreverse field vs forward: %lld sites (cells + nuclei); rates in 1e9 pairs/s\n",
                    static_cast<long long>(s.sites()));
        std::printf("%-5s %-7s %6s %10s %10s %10s %10s %8s %8s %8s %8s %8s\n", "", "prec", "N", "forward", "fwd grad",
                    "sites", "accum", "sites/f", "accum/f", "accum/fg", "grad/s", "accg/acc");
        for (int b : backends)
            for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
                qmmm_field f = make(s, b, prec);
                for (int np : {22, 1024, 8192}) {
                    const std::vector<double> p = make_points(np, 6);
                    std::vector<double> u(np), w(np, -1.0), phi(s.sites()), ef(3 * static_cast<size_t>(s.sites())),
                        eg(6 * static_cast<size_t>(s.sites()));
                    const double tf = time_call([&] { ok(qmmm_field_eval(f, np, p.data(), u.data()), "eval"); }, min_time);
                    // The forward call with the gradient: the same pair term as the reverse field (a potential and
                    // three field components a pair), read the other way.
                    std::vector<double> gp(3 * static_cast<size_t>(np));
                    const double tfg = time_call(
                        [&] { ok(qmmm_field_eval_grad(f, np, p.data(), u.data(), gp.data()), "eval_grad"); }, min_time);
                    const double ts = time_call(
                        [&] { ok(qmmm_field_site_field(f, np, p.data(), w.data(), phi.data(), ef.data()), "site_field"); },
                        min_time);
                    ok(qmmm_field_site_accum_reset(f), "accum_reset");
                    const double ta = time_call(
                        [&] { ok(qmmm_field_site_accum_add(f, np, p.data(), w.data(), 1.0), "accum_add"); }, min_time);
                    const double tg = time_call(
                        [&] { ok(qmmm_field_site_field_grad(f, np, p.data(), w.data(), eg.data()), "site_field_grad"); },
                        min_time);
                    ok(qmmm_field_site_accum_set_grad(f, 1), "accum_set_grad");
                    const double tag = time_call(
                        [&] { ok(qmmm_field_site_accum_add(f, np, p.data(), w.data(), 1.0), "accum_add (gradient)"); },
                        min_time);
                    ok(qmmm_field_site_accum_set_grad(f, 0), "accum_set_grad");
                    const double pairs = static_cast<double>(np) * static_cast<double>(s.sites());
                    const char *label = b == QMMM_BACKEND_CPU ? "cpu" : "gpu";
                    std::printf("%-5s %-7s %6d %10.3f %10.3f %10.3f %10.3f %8.2f %8.2f %8.2f %8.2f %8.2f\n", label,
                                precision_name(prec), np, pairs / tf / 1e9, pairs / tfg / 1e9, pairs / ts / 1e9,
                                pairs / ta / 1e9, tf / ts, tf / ta, tfg / ta, tg / ts, tag / ta);
                    rows.push_back({{"kind", "reverse"}, {"backend", label}, {"precision", precision_name(prec)},
                                    {"sites", s.sites()}, {"points_per_call", np}, {"cpu_threads", threads},
                                    {"forward_us", 1e6 * tf}, {"site_field_us", 1e6 * ts}, {"accum_add_us", 1e6 * ta},
                                    {"forward_pairs_per_s", pairs / tf}, {"site_field_pairs_per_s", pairs / ts},
                                    {"accum_add_pairs_per_s", pairs / ta}, {"site_field_rate_fraction", tf / ts},
                                    {"accum_add_rate_fraction", tf / ta}, {"forward_grad_us", 1e6 * tfg},
                                    {"forward_grad_pairs_per_s", pairs / tfg},
                                    {"site_field_grad_rate_fraction", tfg / ts},
                                    {"accum_add_grad_rate_fraction", tfg / ta}, {"site_field_grad_us", 1e6 * tg},
                                    {"accum_add_with_grad_us", 1e6 * tag}, {"site_field_grad_over_site_field", tg / ts},
                                    {"accum_add_with_grad_over_accum_add", tag / ta}});
                }
                qmmm_field_destroy(f);
            }
        if (!json_path.empty()) {
            bench::write_json(json_path, nlohmann::json{{"benchmark", "forces_bench"}, {"rows", rows}});
        }
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "forces_bench: %s\n", ex.what());
        return 1;
    }
    return 0;
}
