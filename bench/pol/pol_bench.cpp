// pol_bench.cpp -- the induced-dipole solve (qmmm_pol_solve) on a box of polarizable water: about N sites (N/3
// molecules on a cubic lattice at liquid density, 5.86 bohr apart, randomly turned, less a 6-bohr cavity; charges
// -0.67/+0.335, permanent dipoles, anisotropic polarizabilities, each site excluding its molecule) in the field of
// a QM region (a +1 charge and a 0.8 e bohr dipole in the cavity). Reports per size: the set-up (checks, exclusions, the permanent field), the
// solve, iterations, the true final relative residual and the polarization energy. The residual is checked against
// the tolerance; the exit status is 1 when a solve fails or misses it.
// The permanent field is summed on the CPU at set-up; --backend says where the solve's products run. Each JSON row
// names the size asked for (sites_requested) beside the sites built, so that a published table finds its row.
//   pol_bench --sites 10000 --threads 0 --tolerance 1e-8 [--backend auto|cpu|cuda] [--damp] [--json pol.json]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "qmmm_accel.h"

namespace {

struct Box {
    int64_t n = 0;
    std::vector<double> xyz, q, dip, alpha, e_ext;
    std::vector<int64_t> excl;
};

Box water_box(int64_t n_sites, unsigned seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> nd(0, 1);
    const int64_t n_mol = n_sites / 3;
    const int side = static_cast<int>(std::ceil(std::cbrt(static_cast<double>(n_mol))));
    const double a = 5.86, bond = 1.81, half = 1.824;  // lattice spacing, O-H (bohr), half the H-O-H angle (rad)
    // The QM region: off the lattice near the box centre, in a cavity (no molecule within 6 bohr).
    const double qm[3] = {a * (0.5 * (side - 1) + 0.37), a * (0.5 * (side - 1) + 0.41), a * (0.5 * (side - 1) + 0.29)};
    Box b;
    for (int64_t m = 0; m < n_mol; ++m) {
        const double o[3] = {a * (m % side), a * ((m / side) % side), a * (m / side / side)};
        double d2 = 0;
        for (int d = 0; d < 3; ++d) d2 += (o[d] - qm[d]) * (o[d] - qm[d]);
        if (d2 < 36) continue;
        const int64_t first = b.n;
        b.n += 3;
        // a random orthonormal frame (u, v): the molecule's plane and bisector
        double u[3] = {nd(g), nd(g), nd(g)}, v[3] = {nd(g), nd(g), nd(g)};
        double nu = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        for (double &x : u) x /= nu;
        const double uv = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
        for (int d = 0; d < 3; ++d) v[d] -= uv * u[d];
        const double nv = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (double &x : v) x /= nv;
        for (int s = 0; s < 3; ++s) {
            const double sgn = s == 1 ? 1.0 : -1.0;
            for (int d = 0; d < 3; ++d)
                b.xyz.push_back(o[d] +
                                (s == 0 ? 0.0 : bond * (std::cos(half / 2) * u[d] + sgn * std::sin(half / 2) * v[d])));
            b.q.push_back(s == 0 ? -0.67 : 0.335);
            for (int d = 0; d < 3; ++d) b.dip.push_back(s == 0 ? 0.2 * u[d] : -0.1 * u[d]);
            const double iso = s == 0 ? 5.7 : 2.3;
            const double t[6] = {iso + 0.3 * u[0] * u[0], 0.3 * u[0] * u[1], 0.3 * u[0] * u[2],
                                 iso + 0.3 * u[1] * u[1], 0.3 * u[1] * u[2], iso + 0.3 * u[2] * u[2]};
            b.alpha.insert(b.alpha.end(), t, t + 6);
            for (int k = 0; k < 3; ++k)
                if (k != s) b.excl.push_back(first + k);
        }
    }
    // the QM region's field at every site: +1 charge and a dipole along z
    const double qm_q = 1.0, qm_p[3] = {0, 0, 0.8};
    for (int64_t i = 0; i < b.n; ++i) {
        double r[3];
        for (int d = 0; d < 3; ++d) r[d] = b.xyz[3 * i + d] - qm[d];
        const double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], rr = std::sqrt(r2);
        const double pr = r[0] * qm_p[0] + r[1] * qm_p[1] + r[2] * qm_p[2];
        for (int d = 0; d < 3; ++d)
            b.e_ext.push_back(qm_q * r[d] / (r2 * rr) + 3 * pr * r[d] / (r2 * r2 * rr) - qm_p[d] / (r2 * rr));
    }
    return b;
}

}  // namespace

int main(int argc, char **argv) {
    namespace cli = qmmm::cli;
    CLI::App app{"The induced-dipole solve on a box of polarizable water"};
    std::vector<int64_t> sizes{10000};
    int threads = 0, repeat = 1;
    double tol = 1e-8;
    bool damp = false;
    std::string json, backend = "auto";
    app.add_option("--sites", sizes, "sites (a multiple of 3 is used)")->check(cli::int_in(3, 1000000));
    app.add_option("--threads", threads, "CPU threads, 0 = the library's default")->check(cli::int_in(0, 1024));
    app.add_option("--tolerance", tol, "relative residual")->check(cli::finite_in(1e-15, 0.1));
    app.add_option("--repeat", repeat, "solves per size (the best time is kept)")->check(cli::int_in(1, 100));
    app.add_option("--backend", backend, "where the solver's products run")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_flag("--damp", damp, "Thole-damp the dipole-dipole and permanent fields (CPPE's exponential model)");
    app.add_option("--json", json, "write the rows here");
    if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;

    nlohmann::json rows = nlohmann::json::array();
    int status = 0;
    std::printf("%9s %8s %10s %10s %6s %10s %16s\n", "sites", "threads", "setup_s", "solve_s", "iter", "residual",
                "e_pol (hartree)");
    for (int64_t want : sizes) {
        const Box b = water_box(want, 7);
        qmmm_pol_options o;
        qmmm_pol_options_default(&o);
        o.n_threads = threads;
        o.tolerance = tol;
        o.damp_induced = o.damp_multipole = damp ? 1 : 0;
        o.backend = backend == "cpu" ? QMMM_BACKEND_CPU : backend == "cuda" ? QMMM_BACKEND_CUDA : QMMM_BACKEND_AUTO;
        const auto t0 = std::chrono::steady_clock::now();
        qmmm_pol p = nullptr;
        if (qmmm_pol_create(&p, b.n, b.xyz.data(), b.q.data(), b.dip.data(), 6, b.alpha.data(), 2, b.excl.data(), &o)) {
            std::fprintf(stderr, "pol_bench: %s\n", qmmm_error_message());
            return 1;
        }
        const double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<double> mu(3 * b.n);
        qmmm_pol_stats best{};
        best.seconds = 1e300;
        for (int r = 0; r < repeat; ++r) {
            qmmm_pol_stats st{};
            if (qmmm_pol_solve(p, b.e_ext.data(), mu.data(), &st)) {
                std::fprintf(stderr, "pol_bench: %s\n", qmmm_error_message());
                status = 1;
                break;
            }
            if (st.seconds < best.seconds) best = st;
        }
        qmmm_pol_destroy(p);
        if (status) break;
        if (!(best.residual <= tol)) {
            std::fprintf(stderr, "pol_bench: residual %.3g above the tolerance %.3g\n", best.residual, tol);
            status = 1;
        }
        std::printf("%9lld %8d %10.3f %10.3f %6d %10.2e %16.10f\n", static_cast<long long>(b.n), best.n_threads, setup,
                    best.seconds, best.iterations, best.residual, best.e_pol);
        rows.push_back({{"sites", b.n}, {"sites_requested", want}, {"backend", backend}, {"threads", best.n_threads},
                        {"damp", damp}, {"tolerance", tol}, {"setup_seconds", setup}, {"solve_seconds", best.seconds},
                        {"iterations", best.iterations}, {"residual", best.residual}, {"e_pol", best.e_pol}, {"e_pol_ext", best.e_pol_ext},
                        {"e_pol_mm", best.e_pol_mm}});
    }
    if (!json.empty()) std::ofstream(json) << rows.dump(2) << "\n";
    return status;
}
