// A/B of split evaluation variants (temporary env toggles read at each call: QMMM_AB_PIECE, QMMM_AB_FENCE here), variants
// interleaved on one handle, best and median of reps, values compared bitwise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <omp.h>
#include "qmmm_accel.h"
#include "qmmm_accel_field.h"
#include "qmmm_accel_cube.h"
static void ok(int s, const char *w) { if (s) { std::fprintf(stderr, "%s: %d %s\n", w, s, qmmm_error_message()); std::exit(1); } }
int main(int argc, char **argv) {
    if (argc < 7) { std::fprintf(stderr, "ab cube threshold reps threads cpu|cuda double|mixed [variants: VAR=v,VAR=v ...]\n"); return 2; }
    const char *cube = argv[1]; double thr = atof(argv[2]); int reps = atoi(argv[3]); int thr_n = atoi(argv[4]);
    const bool gpu = std::string(argv[5]) == "cuda"; const bool mixed = std::string(argv[6]) == "mixed";
    std::vector<std::string> vs;
    for (int i = 7; i < argc; ++i) vs.push_back(argv[i]);
    if (vs.empty()) vs = {"X=0"};
    qmmm_env env = nullptr;
    ok(qmmm_cube_read(&env, cube, thr), "cube");
    int64_t nc, nn; double dv; qmmm_env_sizes(env, &nc, &nn, &dv);
    std::vector<double> xyz(3*nc), q(nc), nxyz(3*nn), nz(nn);
    qmmm_env_copy(env, xyz.data(), q.data(), nxyz.data(), nz.data());
    const double qm[7][4] = {{5.834605001396063, -0.7186061537278483, -0.39638895207603403, 7},
                             {6.879661343296751, 1.7009235882633365, -1.3250570619097746, 6},
                             {5.238112949895299, -1.7392661313488758, -1.9209444010503915, 1},
                             {4.234630582754684, -0.32631790734405774, 0.6121767783420634, 1},
                             {5.40210338306253, 2.764688218806057, -2.304445420950803, 1},
                             {8.439649157123442, 1.3185941985607088, -2.6267382116476354, 1},
                             {7.607252124299044, 2.8495814248893683, 0.2221917679545034, 1}};
    std::vector<double> nuc; for (auto &a : qm) nuc.insert(nuc.end(), a, a + 3);
    double region[6]; ok(qmmm_region_around(7, nuc.data(), 4.0, region), "region");
    qmmm_options o; qmmm_options_default(&o);
    o.backend = gpu ? QMMM_BACKEND_CUDA : QMMM_BACKEND_CPU;
    o.precision = mixed ? QMMM_PRECISION_MIXED : QMMM_PRECISION_DOUBLE; o.cell_volume = dv;
    o.method = QMMM_METHOD_SPLIT; o.tolerance = 1e-7; o.region = region; o.n_threads = thr_n;
    qmmm_field f = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    ok(qmmm_field_create(&f, nc, xyz.data(), q.data(), nn, nxyz.data(), nz.data(), &o), "create");
    double al = 0, rc = 0, hh = 0, est = 0;
    ok(qmmm_field_split_params(f, &al, &rc, &hh, &est), "params");
    int gotp = 0; qmmm_field_backend(f, nullptr, &gotp, nullptr);
    std::printf("alpha %.3f R_c %.4f h %.3f estimate %.3e precision %d\n", al, rc, hh, est, gotp);
    std::printf("%s %s cells %lld setup %.2f s threads %d\n", argv[5], argv[6], (long long)nc, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), thr_n);
    const int64_t nmax = 8192 * 4;
    std::vector<double> pts(3 * nmax);
    std::mt19937_64 rng(16); std::normal_distribution<double> g(0, 1); std::discrete_distribution<int> pick({7,6,1,1,1,1,1});
    // Inside the region (clamped): the points the bench draws (no direct fallback in the timings).
    for (int64_t p = 0; p < nmax; ++p) { int a = pick(rng); for (int k = 0; k < 3; ++k) pts[3*p+k] = std::clamp(qm[a][k] + g(rng), region[k], region[3+k]); }
    {
        qmmm_options od; qmmm_options_default(&od); od.backend = QMMM_BACKEND_CPU; od.precision = QMMM_PRECISION_DOUBLE;
        od.cell_volume = dv;
        std::vector<double> qa(q), za(nz);
        for (auto &v : qa) v = std::fabs(v);
        for (auto &v : za) v = -std::fabs(v);
        qmmm_field d = nullptr, a = nullptr;
        ok(qmmm_field_create(&d, nc, xyz.data(), q.data(), nn, nxyz.data(), nz.data(), &od), "direct");
        ok(qmmm_field_create(&a, nc, xyz.data(), qa.data(), nn, nxyz.data(), za.data(), &od), "abs");
        const int64_t m = 8192;
        std::vector<double> r(m), sc(m), uu(m);
        ok(qmmm_field_eval(d, m, pts.data(), r.data()), "ref"); ok(qmmm_field_eval(a, m, pts.data(), sc.data()), "scale");
        ok(qmmm_field_eval(f, m, pts.data(), uu.data()), "split");
        double w = 0, mean = 0;
        for (int64_t i = 0; i < m; ++i) w = std::max(w, std::fabs(uu[i] - r[i]) / sc[i]), mean += (uu[i] - r[i]) / m;
        std::printf("max normwise error %.3e (8192 points), mean error %.3e hartree\n", w, mean);
        qmmm_field_destroy(d); qmmm_field_destroy(a);
    }
    for (int64_t n : {1024, 4096, 8192}) {
        std::vector<std::vector<double>> u(vs.size(), std::vector<double>(n));
        std::vector<std::vector<double>> t(vs.size());
        for (int r = 0; r < reps; ++r) for (size_t s = 0; s < vs.size(); ++s) {
            const std::string &v = vs[s];
            size_t a0 = 0;
            while (a0 < v.size()) {
                size_t e = v.find(',', a0); if (e == std::string::npos) e = v.size();
                const std::string kv = v.substr(a0, e - a0); const size_t eq = kv.find('=');
                setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
                a0 = e + 1;
            }
            const double *p = pts.data() + 3 * ((r * n) % (nmax - n));
            std::vector<double> uu(n);
            auto a = std::chrono::steady_clock::now();
            ok(qmmm_field_eval(f, n, p, uu.data()), "eval");
            t[s].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
            if (r == 0) u[s] = uu;
            if (r == 0 && s && std::memcmp(u[0].data(), u[s].data(), 8 * n)) std::printf("BITS DIFFER n=%lld %s\n", (long long)n, v.c_str());
        }
        double b0 = 0, m0 = 0;
        for (size_t s = 0; s < vs.size(); ++s) {
            auto x = t[s]; std::sort(x.begin(), x.end());
            const double best = x[0], med = x[x.size() / 2];
            if (s == 0) b0 = best, m0 = med;
            std::printf("%s %s cells %lld N=%5lld threads %2d %-34s best %.4f us/pt median %.4f  (x%.3f / x%.3f vs first)\n", argv[5], argv[6], (long long)nc, (long long)n, thr_n, vs[s].c_str(), 1e6*best/n, 1e6*med/n, b0/best, m0/med);
        }
    }
    qmmm_field_destroy(f); qmmm_env_destroy(env);
}
