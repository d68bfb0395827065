// A/B of the split evaluation's point order (temporary env toggles QMMM_SPLIT_UNSORTED, QMMM_SPLIT_WPB), one handle,
// variants interleaved, best of reps, values compared bitwise between variants.
#include <chrono>
#include <algorithm>
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
static void ok(int s, const char *w) { if (s) { std::fprintf(stderr, "%s: %d\n", w, s); std::exit(1); } }
int main(int argc, char **argv) {
    if (argc < 7) { std::fprintf(stderr, "ab cube threshold reps threads cpu|cuda double|mixed\n"); return 2; }
    const char *cube = argv[1]; double thr = atof(argv[2]); int reps = atoi(argv[3]); int thr_n = atoi(argv[4]);
    const bool gpu = std::string(argv[5]) == "cuda"; const bool mixed = std::string(argv[6]) == "mixed";
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
    o.method = QMMM_METHOD_SPLIT; o.tolerance = 1e-7; o.region = region;
    qmmm_field f = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    ok(qmmm_field_create(&f, nc, xyz.data(), q.data(), nn, nxyz.data(), nz.data(), &o), "create");
    std::printf("%s %s cells %lld setup %.2f s\n", argv[5], argv[6], (long long)nc, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    omp_set_num_threads(thr_n);
    const int64_t nmax = 8192 * 4;
    std::vector<double> pts(3 * nmax);
    std::mt19937_64 rng(16); std::normal_distribution<double> g(0, 1); std::discrete_distribution<int> pick({7,6,1,1,1,1,1});
    for (int64_t p = 0; p < nmax; ++p) { int a = pick(rng); for (int k = 0; k < 3; ++k) pts[3*p+k] = qm[a][k] + g(rng); }
    struct V { const char *name; bool unsorted; const char *wpb; bool presort; };
    std::vector<V> vs = {{"unsorted wpb1", true, "1", false}, {"sorted wpb1", false, "1", false}};
    if (gpu) vs = {{"u4r32 (now)", true, "0", false}, {"u8r24", true, "1", false}, {"u8r32", true, "2", false},
                   {"u2r40", true, "3", false}, {"u4r32 again", true, "0", false}};
    // Host Morton order of the points (the library's boxes: 32 a side over the region, at least R_c / 2 = 0.5 bohr).
    auto presort = [&](const double *p, int64_t n, std::vector<double> &out, std::vector<int64_t> &perm) {
        double box = 0.5; for (int k = 0; k < 3; ++k) box = std::max(box, (region[3+k] - region[k]) / 32.0);
        std::vector<std::pair<uint32_t, int64_t>> key(n);
        for (int64_t i = 0; i < n; ++i) { uint32_t m = 0;
            for (int k = 0; k < 3; ++k) { uint32_t b = (uint32_t)std::min(31.0, std::max(0.0, (p[3*i+k] - region[k]) / box));
                for (int bit = 0; bit < 5; ++bit) m |= ((b >> bit) & 1u) << (3*bit + k); }
            key[i] = {m, i}; }
        std::sort(key.begin(), key.end());
        out.resize(3 * n); perm.resize(n);
        for (int64_t j = 0; j < n; ++j) { perm[j] = key[j].second; for (int k = 0; k < 3; ++k) out[3*j+k] = p[3*key[j].second+k]; }
    };
    for (int64_t n : {1024, 8192}) {
        std::vector<std::vector<double>> u(vs.size(), std::vector<double>(n));
        std::vector<double> best(vs.size(), 1e30);
        for (int r = 0; r < reps; ++r) for (size_t s = 0; s < vs.size(); ++s) {
            if (vs[s].unsorted) setenv("QMMM_SPLIT_UNSORTED", "1", 1); else unsetenv("QMMM_SPLIT_UNSORTED");
            setenv("QMMM_SPLIT_VARIANT", vs[s].wpb, 1);
            const double *p = pts.data() + 3 * ((r * n) % (nmax - n));
            std::vector<double> sp, su(n); std::vector<int64_t> perm;
            if (vs[s].presort) presort(p, n, sp, perm), p = sp.data();
            auto a = std::chrono::steady_clock::now();
            ok(qmmm_field_eval(f, n, p, vs[s].presort ? su.data() : u[s].data()), "eval");
            double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
            if (vs[s].presort) for (int64_t j = 0; j < n; ++j) u[s][perm[j]] = su[j];
            if (t < best[s]) best[s] = t;
            if (s && std::memcmp(u[0].data(), u[s].data(), 8 * n)) std::printf("BITS DIFFER n=%lld %s\n", (long long)n, vs[s].name);
        }
        for (size_t s = 0; s < vs.size(); ++s)
            std::printf("%s %s N=%5lld threads %d: %-14s %.4f us/pt  (x%.3f vs first)\n", argv[5], argv[6], (long long)n, thr_n, vs[s].name, 1e6*best[s]/n, best[0]/best[s]);
    }
    qmmm_field_destroy(f); qmmm_env_destroy(env);
}
