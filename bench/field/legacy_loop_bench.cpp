// legacy_loop_bench -- the library at a legacy QMC code's point-charge call site, against the loop it replaces.
//
// For each M charges (random in a 60-bohr box, |q| < 1) and N electrons a call (random in the box's central
// 20 bohr), the energy sum_i sum_m -q_m / |r_i - R_m| by: the naive double loop (legacy_loop.cpp, one thread);
// qmmm_field_create_charges + qmmm_field_eval_sum with n_threads = 1; the same with the default threads
// (n_threads = 0: cores / ranks on the node, small calls on the caller's thread); the same on the GPU where one is
// present. Times are microseconds per call, the median of several timed blocks (each at least --min-time / 5).
// A row passes when the one-thread library call costs at most max(0.8 x loop, loop + 0.1 us), and at most
// 0.5 x loop from M x N >= 2,000 pair terms up. The values must agree to rounding (1e-13 + 1e-15 sqrt(pairs)).
// --screening gives every charge a screening (the loop then is legacy_screened_energy): exp-soft (a = 1, b = 0.3
// bohr^-2: most charges within their cut-off), exp-hard (a = 1, b = 5), gaussian (sigma = 1 bohr).
//
//   legacy_loop_bench [--charges M...] [--electrons N...] [--min-time s] [--screening kind] [--json file]
//   legacy_loop_bench --one M N --threads T [--min-time s]      one configuration, one line (for many ranks at once)
//   legacy_loop_bench --cold M N [--threads T]   the first call of a configuration inside a code: before each timed
//       call the caches are evicted (64 MB written and read: beyond the last-level cache), as a legacy code's own
//       work between two calls does; the library's call and the loop's, each timed alone, median of 501 calls,
//       beside their back-to-back (warm) times. The cold-minus-warm difference is what a call touches; qmmm_field_sizes
//       cold (a call that only enters the library and finds the handle) says how much of it is the entry.
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
#include "legacy_loop.hpp"
#include "qmmm_accel.h"

namespace {

using Clock = std::chrono::steady_clock;

void ok(int status, const std::string &what) {
    if (status != QMMM_SUCCESS)
        throw std::runtime_error(what + ": " + qmmm_status_string(status) + ": " + qmmm_error_message());
}

// Per function, the median over `blocks` blocks of the mean time per call (us); the functions' blocks alternate, so
// a drift of the host's clock speed falls on all of them alike. Each block runs at least min_time / blocks and one
// call. One block: a single call after no warm-up (the 10^9-pair rows, where one loop call takes seconds).
std::vector<double> time_us(const std::vector<std::function<void()>> &fs, double min_time, int n_blocks = 5) {
    if (n_blocks > 1)
        for (auto &f : fs) f();  // warm-up (first-touch, GPU upload paths)
    std::vector<std::vector<double>> blocks(fs.size());
    for (int b = 0; b < n_blocks; ++b)
        for (size_t i = 0; i < fs.size(); ++i) {
            int reps = 0;
            const auto t0 = Clock::now();
            double s = 0;
            do fs[i](), ++reps, s = std::chrono::duration<double>(Clock::now() - t0).count();
            while (s < min_time / n_blocks);
            blocks[i].push_back(1e6 * s / reps);
        }
    std::vector<double> med;
    for (auto &v : blocks) std::sort(v.begin(), v.end()), med.push_back(v[v.size() / 2]);
    return med;
}
double time_us(const std::function<void()> &f, double min_time, int n_blocks = 5) {
    return time_us(std::vector<std::function<void()>>{f}, min_time, n_blocks)[0];
}

struct System {
    std::vector<double> x, y, z, q, coord;
    int screening = QMMM_SCREEN_NONE;
    std::vector<double> a, b;  // per charge: EXP a, b; GAUSSIAN sigma in a
};

// The screening kinds of --screening: name, QMMM_SCREEN_*, a (or sigma), b.
struct Screening {
    const char *name;
    int kind;
    double a, b;
};
constexpr Screening kScreenings[] = {{"none", QMMM_SCREEN_NONE, 0, 0},
                                     {"exp-soft", QMMM_SCREEN_EXP, 1.0, 0.3},
                                     {"exp-hard", QMMM_SCREEN_EXP, 1.0, 5.0},
                                     {"gaussian", QMMM_SCREEN_GAUSSIAN, 1.0, 0.0}};

System make_system(int64_t m, int64_t n, unsigned seed, const Screening &sc = kScreenings[0]) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> box(-30, 30), inner(-10, 10), chg(-1, 1);
    System s;
    for (int64_t i = 0; i < m; ++i) s.x.push_back(box(g)), s.y.push_back(box(g)), s.z.push_back(box(g)), s.q.push_back(chg(g));
    for (int64_t i = 0; i < 3 * n; ++i) s.coord.push_back(inner(g));
    s.screening = sc.kind;
    if (sc.kind != QMMM_SCREEN_NONE) s.a.assign(static_cast<size_t>(m), sc.a), s.b.assign(static_cast<size_t>(m), sc.b);
    return s;
}

double loop_energy(const System &s) {
    const int m = static_cast<int>(s.q.size()), n = static_cast<int>(s.coord.size() / 3);
    if (s.screening == QMMM_SCREEN_NONE)
        return legacy_point_charge_energy(m, s.x.data(), s.y.data(), s.z.data(), s.q.data(), n, s.coord.data());
    return legacy_screened_energy(s.screening, m, s.x.data(), s.y.data(), s.z.data(), s.q.data(), s.a.data(),
                                  s.b.data(), n, s.coord.data());
}

qmmm_field make_field(const System &s, int backend, int threads) {
    qmmm_options o;
    ok(qmmm_options_default(&o), "qmmm_options_default");
    o.backend = backend, o.n_threads = threads;
    qmmm_field f;
    const bool screened = s.screening != QMMM_SCREEN_NONE;
    ok(qmmm_field_create_charges(&f, static_cast<int64_t>(s.q.size()), s.x.data(), s.y.data(), s.z.data(), 1, s.q.data(),
                                 s.screening, screened ? s.a.data() : nullptr,
                                 s.screening == QMMM_SCREEN_EXP ? s.b.data() : nullptr, 0, nullptr, nullptr, &o),
       "qmmm_field_create_charges");
    return f;
}

double lib_time(const System &s, int backend, int threads, double min_time, int blocks, double *value) {
    qmmm_field f = make_field(s, backend, threads);
    const int64_t n = static_cast<int64_t>(s.coord.size() / 3);
    double e = 0;
    const double t =
        time_us([&] { ok(qmmm_field_eval_sum(f, n, s.coord.data(), &e), "qmmm_field_eval_sum"); }, min_time, blocks);
    qmmm_field_destroy(f);
    *value = e;
    return t;
}

// The CPU library with one thread and with the default threads, timed in alternating blocks: t[0] and t[1].
std::vector<double> lib_times_cpu(const System &s, double min_time, int blocks, double *e1, double *ed) {
    qmmm_field f1 = make_field(s, QMMM_BACKEND_CPU, 1), fd = make_field(s, QMMM_BACKEND_CPU, 0);
    const int64_t n = static_cast<int64_t>(s.coord.size() / 3);
    const auto t = time_us({[&] { ok(qmmm_field_eval_sum(f1, n, s.coord.data(), e1), "qmmm_field_eval_sum"); },
                            [&] { ok(qmmm_field_eval_sum(fd, n, s.coord.data(), ed), "qmmm_field_eval_sum"); }},
                           min_time, blocks);
    qmmm_field_destroy(f1), qmmm_field_destroy(fd);
    return t;
}

// The median time (us) of one call of f, each call after `before` (untimed).
double median_call_us(const std::function<void()> &f, const std::function<void()> &before, int calls) {
    std::vector<double> t(static_cast<size_t>(calls));
    for (int i = 0; i < calls; ++i) {
        before();
        const auto t0 = Clock::now();
        f();
        t[static_cast<size_t>(i)] = 1e6 * std::chrono::duration<double>(Clock::now() - t0).count();
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// --cold: the call after the caches were evicted, against the same call back to back; the loop alike.
int cold_mode(int64_t m, int64_t n, int threads, const Screening &sc) {
    const System s = make_system(m, n, 7, sc);
    qmmm_field f = make_field(s, QMMM_BACKEND_CPU, threads);
    std::vector<double> evict(size_t{8} << 20, 1.0);  // 64 MB
    double sink = 0;
    const auto flush = [&] {
        for (size_t i = 0; i < evict.size(); i += 8) evict[i] += 1.0;
        sink += evict[evict.size() / 2];
    };
    const auto none = [] {};
    double e = 0, el = 0;
    const auto lib = [&] { ok(qmmm_field_eval_sum(f, n, s.coord.data(), &e), "qmmm_field_eval_sum"); };
    const auto loop = [&] { el = loop_energy(s); };
    lib(), loop();
    constexpr int kCalls = 501;
    const double lib_cold = median_call_us(lib, flush, kCalls), loop_cold = median_call_us(loop, flush, kCalls);
    const double lib_warm = median_call_us(lib, none, kCalls), loop_warm = median_call_us(loop, none, kCalls);
    int64_t nc = 0;
    const auto entry = [&] { ok(qmmm_field_sizes(f, &nc, nullptr), "qmmm_field_sizes"); };
    const double entry_cold = median_call_us(entry, flush, kCalls), entry_warm = median_call_us(entry, none, kCalls);
    qmmm_field_destroy(f);
    std::printf("M %lld N %lld threads %d: cold lib %.3f us, loop %.3f us; warm lib %.3f us, loop %.3f us; "
                "cold - warm: lib %.3f us, loop %.3f us; entry (qmmm_field_sizes) cold %.3f us, warm %.3f us "
                "(energy %.15g, loop %.15g%s)\n",
                static_cast<long long>(m), static_cast<long long>(n), threads, lib_cold, loop_cold, lib_warm, loop_warm,
                lib_cold - lib_warm, loop_cold - loop_warm, entry_cold, entry_warm, e, el, std::isfinite(sink) ? "" : " ");
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"legacy_loop_bench: the library against the point-charge loop it replaces"};
    std::vector<int64_t> charges = {10, 40, 100, 1000, 10000, 100000, 1000000};
    std::vector<int64_t> electrons = {1, 22, 128, 2200};
    double min_time = 0.2;
    std::string json_path;
    std::vector<int64_t> one;
    int threads = 0;
    std::string screening_name = "none";
    app.add_option("--screening", screening_name, "screening of every charge")
        ->check(CLI::IsMember({"none", "exp-soft", "exp-hard", "gaussian"}));
    app.add_option("--charges", charges, "M values")->check(CLI::Range(int64_t{1}, int64_t{100000000}));
    app.add_option("--electrons", electrons, "N values")->check(CLI::Range(int64_t{1}, int64_t{1000000}));
    app.add_option("--min-time", min_time, "seconds per timing (5 blocks)")->check(CLI::Range(0.0, 3600.0));
    app.add_option("--json", json_path, "write the table as JSON");
    app.add_option("--one", one, "M N: one configuration, one line")->expected(2);
    app.add_option("--threads", threads, "n_threads for --one and --cold (0: the default)")->check(CLI::Range(0, 1024));
    std::vector<int64_t> cold;
    app.add_option("--cold", cold, "M N: the first call of a configuration (caches evicted before each call)")
        ->expected(2)->check(CLI::Range(int64_t{1}, int64_t{100000000}));
    CLI11_PARSE(app, argc, argv);
    Screening screening = kScreenings[0];
    for (const Screening &k : kScreenings)
        if (screening_name == k.name) screening = k;
    try {
        if (!cold.empty()) return cold_mode(cold[0], cold[1], threads, screening);
        if (!one.empty()) {
            const System s = make_system(one[0], one[1], 7, screening);
            double e;
            const double t = lib_time(s, QMMM_BACKEND_CPU, threads, min_time, 5, &e);
            int dt = 0;
            qmmm_default_threads(&dt);
            std::printf("M %lld N %lld threads %d (default %d): %.3f us per call, energy %.15g hartree\n",
                        static_cast<long long>(one[0]), static_cast<long long>(one[1]), threads, dt, t, e);
            return 0;
        }
        int n_dev = 0;
        ok(qmmm_cuda_device_count(&n_dev), "qmmm_cuda_device_count");
        int dt = 0;
        ok(qmmm_default_threads(&dt), "qmmm_default_threads");
        std::printf("legacy_loop_bench: us per call (median of 5 blocks), double; default threads here: %d; GPU: %s%s%s\n",
                    dt, n_dev ? "yes" : "no", screening.kind ? "; screening: " : "", screening.kind ? screening.name : "");
        std::printf("%9s %6s %12s %12s %12s %12s %9s %9s %6s\n", "charges", "points", "loop", "lib 1 thr",
                    "lib default", "lib GPU", "1thr/loop", "dflt/1thr", "target");
        // Before the first row, the host's clock is brought to speed: the published run at a126dc1 timed its first
        // row (10 x 1) at 0.231 us a call, slower than the 40 x 1 row after it (0.200 us) with 4x the work.
        {
            const System w = make_system(100, 22, 1);
            const auto t0 = Clock::now();
            double sink = 0;
            while (std::chrono::duration<double>(Clock::now() - t0).count() < 0.5)
                sink += legacy_point_charge_energy(100, w.x.data(), w.y.data(), w.z.data(), w.q.data(), 22, w.coord.data());
            if (!std::isfinite(sink)) throw std::runtime_error("warm-up: non-finite energy");
        }
        nlohmann::json rows = nlohmann::json::array();
        int failed = 0;
        for (int64_t m : charges)
            for (int64_t n : electrons) {
                const System s = make_system(m, n, static_cast<unsigned>(m * 31 + n), screening);
                const double pairs = static_cast<double>(m) * static_cast<double>(n);
                // The slowest loops (10^6 x 2,200: ~10 s a call) are timed once; large ones with a block's worth.
                const double mt = pairs > 5e7 ? 0.0 : min_time;
                const int blocks = pairs > 5e8 ? 1 : 5;
                double e_loop = 0, e1 = 0, ed = 0, eg = 0;
                const double t_loop = time_us([&] { e_loop = loop_energy(s); }, mt, blocks);
                const auto tc = lib_times_cpu(s, mt, blocks, &e1, &ed);
                const double t1 = tc[0], td = tc[1];
                const double tg = n_dev ? lib_time(s, QMMM_BACKEND_CUDA, 0, mt, 5, &eg) : NAN;
                const double limit = pairs >= 2000 ? 0.5 * t_loop : std::max(0.8 * t_loop, t_loop + 0.1);
                const bool pass = t1 <= limit;
                // Both sums add the same terms in other orders: they agree to rounding, which grows like
                // sqrt(pairs) (1e-12 relative at 2.2e9 pairs, measured).
                const double agree = std::max(std::fabs(e1 - e_loop), std::fabs(ed - e_loop)) / std::max(1.0, std::fabs(e_loop));
                const double agree_bound = 1e-13 + 1e-15 * std::sqrt(pairs);
                if (!pass) ++failed;
                if (agree > agree_bound) {
                    std::fprintf(stderr, "legacy_loop_bench: M %lld N %lld: library %.17g, loop %.17g\n",
                                 static_cast<long long>(m), static_cast<long long>(n), e1, e_loop);
                    return 1;
                }
                std::printf("%9lld %6lld %12.2f %12.2f %12.2f %12.2f %9.3f %9.3f %6s\n", static_cast<long long>(m),
                            static_cast<long long>(n), t_loop, t1, td, tg, t1 / t_loop, td / t1, pass ? "met" : "MISSED");
                std::fflush(stdout);
                nlohmann::json r = {{"charges", m},         {"points", n},        {"loop_us", t_loop},
                                    {"lib_1thread_us", t1}, {"lib_default_us", td}, {"ratio_1thread_loop", t1 / t_loop},
                                    {"ratio_default_1thread", td / t1}, {"target_us", limit}, {"met", pass},
                                    {"default_threads", dt}, {"max_rel_diff", agree}};
                if (screening.kind) r["screening"] = screening.name;
                if (n_dev) r["lib_gpu_us"] = tg, r["ratio_gpu_loop"] = tg / t_loop;
                rows.push_back(r);
            }
        std::printf("%d of %zu rows miss the target\n", failed, rows.size());
        if (!json_path.empty()) {
            bench::write_json(json_path, nlohmann::json{{"benchmark", "legacy_loop_bench"},
                                                        {"units", "microseconds per call; bohr, hartree"},
                                                        {"default_threads", dt}, {"gpu", n_dev > 0}, {"rows", rows}});
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "legacy_loop_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
