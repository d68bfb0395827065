// test_field_walkers.cpp -- crowds: qmmm_field_eval_walkers (and its async twin) against one qmmm_field_eval_sum per
// walker (bitwise) and against a long-double sum per walker; every precision, DIRECT and SPLIT, density cells,
// MM charges with every screening, nuclei alone; the device-resident calls' refusals and (CUDA) their bits; many
// host threads, each with its own handle or sharing one. Built twice: test_field_walkers (backend CPU) and
// test_field_walkers_gpu (backend CUDA, QMMM_TEST_CUDA; skips visibly without a GPU).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "field_claims.hpp"
#include "field_reference.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"
#ifdef QMMM_TEST_CUDART
#include <cuda_runtime.h>
#endif

namespace {

using qmmm_test::kBackend;

// The sources of one field, as a long-double reference sees them: cells (+q/d) or physical charges (-q/d, screened),
// and nuclei (-Z/d).
enum class Kind { Cells, Charges, Exp, Gaussian, NucleiOnly };
const char *name(Kind k) {
    switch (k) {
        case Kind::Cells: return "cells";
        case Kind::Charges: return "charges";
        case Kind::Exp: return "EXP charges";
        case Kind::Gaussian: return "GAUSSIAN charges";
        default: return "nuclei only";
    }
}

struct Sources {
    Kind kind;
    std::vector<double> xyz, q, a, b, nuc_xyz, nuc_z;
};

Sources make_sources(Kind kind, int64_t m, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-10, 10), chg(-0.8, 0.8), pop(1e-4, 1e-2), amp(0.2, 1.0), ex(0.3, 2.0);
    Sources s{kind, {}, {}, {}, {}, {0.5, 0.2, -0.3, -1.4, 0.9, 0.4}, {8, 1}};
    if (kind == Kind::NucleiOnly) m = 0;
    for (int64_t i = 0; i < m; ++i) {
        for (int k = 0; k < 3; ++k) s.xyz.push_back(pos(g));
        s.q.push_back(kind == Kind::Cells ? pop(g) : chg(g));
        const bool screened = i % 3 == 0;
        s.a.push_back(!screened ? 0.0 : kind == Kind::Exp ? amp(g) : kind == Kind::Gaussian ? ex(g) : 0.0);
        s.b.push_back(screened && kind == Kind::Exp ? ex(g) : 0.0);
    }
    return s;
}

// U(p) in long double, and sum |term| (the normwise scale).
void reference(const Sources &s, const double *p, long double *u, long double *scale) {
    long double sum = 0, w = 0;
    for (size_t m = 0; m < s.q.size(); ++m) {
        const long double dx = (long double)p[0] - s.xyz[3 * m], dy = (long double)p[1] - s.xyz[3 * m + 1],
                          dz = (long double)p[2] - s.xyz[3 * m + 2];
        const long double d = sqrtl(dx * dx + dy * dy + dz * dz), q = s.q[m];
        long double t;
        if (s.kind == Kind::Cells) t = q / d;
        else if (s.kind == Kind::Exp && s.a[m] != 0) t = -q * ((1 - (long double)s.a[m]) - s.a[m] * expm1l(-s.b[m] * d * d)) / d;
        else if (s.kind == Kind::Gaussian && s.a[m] != 0) t = -q * erfl(d / s.a[m]) / d;
        else t = -q / d;
        sum += t, w += fabsl(t);
    }
    for (size_t b = 0; b < s.nuc_z.size(); ++b) {
        const long double dx = (long double)p[0] - s.nuc_xyz[3 * b], dy = (long double)p[1] - s.nuc_xyz[3 * b + 1],
                          dz = (long double)p[2] - s.nuc_xyz[3 * b + 2];
        const long double t = -s.nuc_z[b] / sqrtl(dx * dx + dy * dy + dz * dz);
        sum += t, w += fabsl(t);
    }
    *u = sum, *scale = w;
}

// SPLIT: a QM region of 6 bohr; the crowds' points reach a little beyond it (those are summed directly).
const double kRegion[6] = {-3, -3, -3, 3, 3, 3};

qmmm_field create(const Sources &s, int precision, int method, int n_threads = 0) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = precision, o.method = method, o.n_threads = n_threads;
    if (method == QMMM_METHOD_SPLIT) o.tolerance = 1e-6, o.region = kRegion;
    qmmm_field f = nullptr;
    const int64_t n = static_cast<int64_t>(s.q.size()), k = static_cast<int64_t>(s.nuc_z.size());
    int st;
    if (s.kind == Kind::Cells) {
        st = qmmm_field_create(&f, n, s.xyz.data(), s.q.data(), k, s.nuc_xyz.data(), s.nuc_z.data(), &o);
    } else {
        const int scr = s.kind == Kind::Exp ? QMMM_SCREEN_EXP : s.kind == Kind::Gaussian ? QMMM_SCREEN_GAUSSIAN
                                                                                       : QMMM_SCREEN_NONE;
        st = qmmm_field_create_charges(&f, n, s.xyz.data(), s.xyz.data() + 1, s.xyz.data() + 2, 3, s.q.data(), scr,
                                       s.a.data(), s.b.data(), k, s.nuc_xyz.data(), s.nuc_z.data(), &o);
    }
    EXPECT_EQ(st, QMMM_SUCCESS) << qmmm_error_message();
    return f;
}

// A crowd: walker w has counts[w] points (0 included), laid out walker by walker after `skip` points not read.
struct Crowd {
    std::vector<int64_t> offsets;
    std::vector<double> xyz;
    int64_t n_walkers() const { return static_cast<int64_t>(offsets.size()) - 1; }
};

Crowd make_crowd(const std::vector<int64_t> &counts, int64_t skip, unsigned seed, double half = 8.5) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-half, half);
    Crowd c;
    c.offsets.push_back(skip);
    for (int64_t n : counts) c.offsets.push_back(c.offsets.back() + n);
    c.xyz.resize(static_cast<size_t>(3 * c.offsets.back()));
    for (double &v : c.xyz) v = pos(g);
    return c;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Walker sizes around the paths' limits (a CUDA call of at most 8 points takes the latency path): mixed sizes go
// walker by walker, sizes above 8 share one call.
const std::vector<std::vector<int64_t>> kCrowds = {
    {22}, {22, 0, 9, 64, 22, 13}, {1, 5, 8, 0, 22, 2}, std::vector<int64_t>(17, 22), {0, 0}, {}};

// Sums and values against qmmm_field_eval_sum and qmmm_field_eval walker by walker, bit for bit; sums against the
// long-double sum of each walker within the precision's claim (SPLIT: its tolerance) relative to sum |term|.
void check_crowds(const Sources &s, int precision, int method) {
    qmmm_field f = create(s, precision, method);
    ASSERT_NE(f, nullptr);
    const double bound = method == QMMM_METHOD_SPLIT ? 1e-6
                         : precision == QMMM_PRECISION_SINGLE ? 3e-5 : qmmm_claims::bound(precision);
    unsigned seed = 11;
    for (const auto &counts : kCrowds)
        for (int64_t skip : {0, 3}) {
            const std::string what = std::string(name(s.kind)) + ", precision " + std::to_string(precision) +
                                     ", method " + std::to_string(method) + ", " + std::to_string(counts.size()) +
                                     " walkers, skip " + std::to_string(skip);
            const Crowd c = make_crowd(counts, skip, seed++, method == QMMM_METHOD_SPLIT ? 3.2 : 8.5);
            const int64_t W = c.n_walkers(), total = c.offsets.back();
            std::vector<double> sums(static_cast<size_t>(W), -1.0), u(static_cast<size_t>(total), -1.0);
            ASSERT_EQ(qmmm_field_eval_walkers(f, W, c.offsets.data(), c.xyz.data(), sums.data(), u.data()), QMMM_SUCCESS)
                << what << ": " << qmmm_error_message();
            std::vector<double> sums2(static_cast<size_t>(W), -1.0);  // without u
            ASSERT_EQ(qmmm_field_eval_walkers(f, W, c.offsets.data(), c.xyz.data(), sums2.data(), nullptr), QMMM_SUCCESS);
            std::vector<double> sums3(static_cast<size_t>(W), -1.0), u3(static_cast<size_t>(total), -1.0);
            ASSERT_EQ(qmmm_field_eval_walkers_async(f, W, c.offsets.data(), c.xyz.data(), sums3.data(), u3.data()),
                      QMMM_SUCCESS) << what << ": " << qmmm_error_message();
            ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
            for (int64_t w = 0; w < W; ++w) {
                const int64_t b = c.offsets[w], n = c.offsets[w + 1] - b;
                double one = -1.0;
                ASSERT_EQ(qmmm_field_eval_sum(f, n, c.xyz.data() + 3 * b, &one), QMMM_SUCCESS) << qmmm_error_message();
                EXPECT_TRUE(same_bits(sums[w], one)) << what << ", walker " << w << ": " << sums[w] << " vs " << one;
                EXPECT_TRUE(same_bits(sums2[w], one)) << what << ", walker " << w << " (u NULL)";
                EXPECT_TRUE(same_bits(sums3[w], one)) << what << ", walker " << w << " (async)";
                std::vector<double> uw(static_cast<size_t>(n));
                ASSERT_EQ(qmmm_field_eval(f, n, c.xyz.data() + 3 * b, uw.data()), QMMM_SUCCESS);
                long double ref = 0, scale = 0;
                for (int64_t i = 0; i < n; ++i) {
                    EXPECT_TRUE(same_bits(u[b + i], uw[i])) << what << ", walker " << w << ", point " << i;
                    EXPECT_TRUE(same_bits(u3[b + i], uw[i])) << what << ", walker " << w << ", point " << i << " (async)";
                    long double r, sc;
                    reference(s, &c.xyz[3 * (b + i)], &r, &sc);
                    ref += r, scale += sc;
                }
                if (n > 0) {
                    const double err = static_cast<double>(fabsl(sums[w] - ref) / scale);
                    EXPECT_LE(err, bound) << what << ", walker " << w;
                }
            }
            for (int64_t i = 0; i < skip; ++i) EXPECT_EQ(u[i], -1.0) << "u before offsets[0] is not written";
        }
    qmmm_field_destroy(f);
}

TEST(FieldWalkers, DirectEveryPrecisionAndSourceKind) {
    REQUIRE_BACKEND();
    for (Kind k : {Kind::Cells, Kind::Charges, Kind::Exp, Kind::Gaussian, Kind::NucleiOnly})
        for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED})
            for (int64_t m : {300, 5000}) check_crowds(make_sources(k, m, 7 + static_cast<unsigned>(m)), p, QMMM_METHOD_DIRECT);
}

TEST(FieldWalkers, SplitCellsAndCharges) {
    REQUIRE_BACKEND();
    for (Kind k : {Kind::Cells, Kind::Charges})
        for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_MIXED})
            check_crowds(make_sources(k, 2000, 29), p, QMMM_METHOD_SPLIT);
}

// The arguments' checks, and singular points named from offsets[0].
TEST(FieldWalkers, BadArguments) {
    REQUIRE_BACKEND();
    const Sources s = make_sources(Kind::Charges, 50, 3);
    qmmm_field f = create(s, QMMM_PRECISION_DOUBLE, QMMM_METHOD_DIRECT);
    const Crowd c = make_crowd({10, 10}, 0, 5);
    double sums[2];
    EXPECT_EQ(qmmm_field_eval_walkers(f, -1, c.offsets.data(), c.xyz.data(), sums, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("n_walkers"), std::string::npos) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval_walkers(f, 2, nullptr, c.xyz.data(), sums, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_eval_walkers(f, 2, c.offsets.data(), c.xyz.data(), nullptr, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_eval_walkers(f, 2, c.offsets.data(), nullptr, sums, nullptr), QMMM_ERR_NULL_ARG);
    const int64_t down[3] = {0, 12, 11};
    EXPECT_EQ(qmmm_field_eval_walkers(f, 2, down, c.xyz.data(), sums, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("walker 1"), std::string::npos) << qmmm_error_message();
    const int64_t neg[3] = {-1, 5, 9};
    EXPECT_EQ(qmmm_field_eval_walkers(f, 2, neg, c.xyz.data(), sums, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_eval_walkers(f, 0, nullptr, nullptr, nullptr, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_eval_walkers(nullptr, 2, c.offsets.data(), c.xyz.data(), sums, nullptr), QMMM_ERR_BAD_HANDLE);
    std::vector<double> bad = c.xyz;
    bad[3 * 13 + 1] = NAN;
    EXPECT_EQ(qmmm_field_eval_walkers(f, 2, c.offsets.data(), bad.data(), sums, nullptr), QMMM_ERR_NONFINITE);
    bad = c.xyz;
    std::copy(s.xyz.begin() + 3 * 4, s.xyz.begin() + 3 * 5, bad.begin() + 3 * 13);  // point 13 on charge 4
    for (auto fn : {qmmm_field_eval_walkers, qmmm_field_eval_walkers_async}) {
        int st = fn(f, 2, c.offsets.data(), bad.data(), sums, nullptr);
        if (st == QMMM_SUCCESS) st = qmmm_field_wait(f);
        EXPECT_EQ(st, QMMM_ERR_SINGULAR);
        EXPECT_NE(std::string(qmmm_error_message()).find("point 13"), std::string::npos) << qmmm_error_message();
        EXPECT_NE(std::string(qmmm_error_message()).find("charge 4"), std::string::npos) << qmmm_error_message();
    }
    // One pending evaluation per handle.
    ASSERT_EQ(qmmm_field_eval_walkers_async(f, 2, c.offsets.data(), c.xyz.data(), sums, nullptr), QMMM_SUCCESS);
    double other[2];
    EXPECT_EQ(qmmm_field_eval_walkers(f, 2, c.offsets.data(), c.xyz.data(), other, nullptr), QMMM_ERR_BUSY);
    EXPECT_EQ(qmmm_field_wait(f), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
}

#ifndef QMMM_TEST_CUDA
// A CPU field refuses device-resident calls with a status and a message that says what to use instead.
TEST(FieldWalkers, CpuFieldRefusesDeviceCalls) {
    const Sources s = make_sources(Kind::Cells, 50, 3);
    qmmm_field f = create(s, QMMM_PRECISION_DOUBLE, QMMM_METHOD_DIRECT);
    std::vector<double> xyz(30, 1.0), u(10);
    double sums[1];
    const int64_t off[2] = {0, 10};
    EXPECT_EQ(qmmm_field_eval_device(f, 10, xyz.data(), u.data(), nullptr), QMMM_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(qmmm_error_message()).find("CPU field"), std::string::npos) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval_walkers_device(f, 1, off, xyz.data(), sums, nullptr, nullptr), QMMM_ERR_UNSUPPORTED);
    EXPECT_EQ(qmmm_field_eval_device(f, -1, xyz.data(), u.data(), nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_eval_device(f, 10, nullptr, u.data(), nullptr), QMMM_ERR_NULL_ARG);
    qmmm_field_destroy(f);
}
#elif defined(QMMM_TEST_CUDART)
// Device-resident points and values: the bits of qmmm_field_eval (more than 8 points) and of qmmm_field_eval_walkers;
// a host pointer is refused; a field without device calls says so.
TEST(FieldWalkers, DeviceResidentMatchesHostCalls) {
    REQUIRE_BACKEND();
    for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        const Sources s = make_sources(Kind::Charges, 5000, 41);
        qmmm_field f = create(s, p, QMMM_METHOD_DIRECT);
        const Crowd c = make_crowd(std::vector<int64_t>(64, 22), 0, 9);
        const int64_t W = c.n_walkers(), n = c.offsets.back();
        std::vector<double> sums(W), u(n);
        ASSERT_EQ(qmmm_field_eval_walkers(f, W, c.offsets.data(), c.xyz.data(), sums.data(), u.data()), QMMM_SUCCESS);
        double *d_xyz = nullptr, *d_u = nullptr, *d_sums = nullptr;
        ASSERT_EQ(cudaMalloc(&d_xyz, 3 * n * sizeof(double)), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&d_u, n * sizeof(double)), cudaSuccess);
        ASSERT_EQ(cudaMalloc(&d_sums, W * sizeof(double)), cudaSuccess);
        cudaStream_t st;
        ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
        ASSERT_EQ(cudaMemcpyAsync(d_xyz, c.xyz.data(), 3 * n * sizeof(double), cudaMemcpyHostToDevice, st), cudaSuccess);
        ASSERT_EQ(qmmm_field_eval_walkers_device(f, W, c.offsets.data(), d_xyz, d_sums, d_u, st), QMMM_SUCCESS)
            << qmmm_error_message();
        std::vector<double> sums_d(W), u_d(n), u_e(n);
        ASSERT_EQ(cudaMemcpyAsync(sums_d.data(), d_sums, W * sizeof(double), cudaMemcpyDeviceToHost, st), cudaSuccess);
        ASSERT_EQ(cudaMemcpyAsync(u_d.data(), d_u, n * sizeof(double), cudaMemcpyDeviceToHost, st), cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
        for (int64_t w = 0; w < W; ++w) EXPECT_TRUE(same_bits(sums_d[w], sums[w])) << "precision " << p << ", walker " << w;
        for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(same_bits(u_d[i], u[i])) << "precision " << p << ", point " << i;
        // The field's own stream (NULL), then a host-array call: ordered after it.
        ASSERT_EQ(qmmm_field_eval_device(f, n, d_xyz, d_u, nullptr), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval(f, n, c.xyz.data(), u_e.data()), QMMM_SUCCESS);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(u_d.data(), d_u, n * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
        for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(same_bits(u_d[i], u_e[i])) << "precision " << p << ", point " << i;
        // Host memory where device memory is required.
        EXPECT_EQ(qmmm_field_eval_device(f, n, c.xyz.data(), d_u, st), QMMM_ERR_INVALID_ARG);
        EXPECT_NE(std::string(qmmm_error_message()).find("d_xyz"), std::string::npos) << qmmm_error_message();
        EXPECT_EQ(qmmm_field_eval_device(f, n, d_xyz, u.data(), st), QMMM_ERR_INVALID_ARG);
        cudaFree(d_xyz), cudaFree(d_u), cudaFree(d_sums), cudaStreamDestroy(st);
        qmmm_field_destroy(f);
    }
    const Sources e = make_sources(Kind::Exp, 500, 4);
    qmmm_field g = create(e, QMMM_PRECISION_DOUBLE, QMMM_METHOD_DIRECT);
    double *d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(double)), cudaSuccess);
    EXPECT_EQ(qmmm_field_eval_device(g, 16, d, d + 48, nullptr), QMMM_ERR_UNSUPPORTED);
    cudaFree(d);
    qmmm_field_destroy(g);
}
#endif

// Eight crowds of 16 walkers x 22 electrons on 3,000 point charges, and each crowd's sums from one serial handle.
struct HandlesCase {
    static constexpr int kCrowds = 8;
    Sources s = make_sources(Kind::Charges, 3000, 13);
    std::vector<Crowd> crowds;
    std::vector<std::vector<double>> expect;
    HandlesCase() {
        for (int t = 0; t < kCrowds; ++t) crowds.push_back(make_crowd(std::vector<int64_t>(16, 22), 0, 100 + t));
        qmmm_field serial = create(s, QMMM_PRECISION_DOUBLE, QMMM_METHOD_DIRECT, 1);
        for (int t = 0; t < kCrowds; ++t) {
            expect.emplace_back(16);
            EXPECT_EQ(qmmm_field_eval_walkers(serial, 16, crowds[t].offsets.data(), crowds[t].xyz.data(),
                                              expect[t].data(), nullptr), QMMM_SUCCESS);
        }
        qmmm_field_destroy(serial);
    }
    // Crowd t's steps on a handle of its own (1 + t % 2 CPU threads: the helper pool serves several callers at once),
    // synchronous and asynchronous in turn, each followed by a call on the shared handle under `lock` (none: one
    // thread); the sums that fail or differ from the serial run's bits.
    int steps(int t, int n_steps, qmmm_field shared, std::mutex *lock) const {
        const Crowd &c = crowds[t];
        qmmm_field own = create(s, QMMM_PRECISION_DOUBLE, QMMM_METHOD_DIRECT, 1 + t % 2);
        std::vector<double> sums(16);
        int bad = 0;
        for (int step = 0; step < n_steps; ++step) {
            const bool async = step % 2 == 1;
            int st = (async ? qmmm_field_eval_walkers_async : qmmm_field_eval_walkers)(own, 16, c.offsets.data(),
                                                                                     c.xyz.data(), sums.data(), nullptr);
            if (st == QMMM_SUCCESS && async) st = qmmm_field_wait(own);
            for (int w = 0; w < 16; ++w) bad += st != QMMM_SUCCESS || !same_bits(sums[w], expect[t][w]);
            {
                std::unique_lock<std::mutex> held;
                if (lock) held = std::unique_lock<std::mutex>(*lock);
                st = qmmm_field_eval_walkers(shared, 16, c.offsets.data(), c.xyz.data(), sums.data(), nullptr);
            }
            for (int w = 0; w < 16; ++w) bad += st != QMMM_SUCCESS || !same_bits(sums[w], expect[t][w]);
        }
        qmmm_field_destroy(own);
        return bad;
    }
};

// Crowds on many host threads: each with its own handle of the same sources, and all sharing one handle with the
// calls serialised by the caller (what the header allows); every sum has the bits of the serial run. Also run under
// ThreadSanitizer (a -fsanitize=thread build of the CPU path; the target_clones kernels are left uninstrumented, as
// their resolvers run before the sanitizer starts).
TEST(FieldWalkers, ManyThreadsOwnAndSharedHandles) {
    REQUIRE_BACKEND();
    const HandlesCase h;
    qmmm_field shared = create(h.s, QMMM_PRECISION_DOUBLE, QMMM_METHOD_DIRECT, 1);
    std::mutex shared_lock;
    std::atomic<int> bad{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < HandlesCase::kCrowds; ++t) pool.emplace_back([&, t] { bad += h.steps(t, 6, shared, &shared_lock); });
    for (auto &th : pool) th.join();
    EXPECT_EQ(bad.load(), 0);
    qmmm_field_destroy(shared);
}

// The same handles and calls on one host thread, crowd after crowd: the kernels that the threads above launch, for
// compute-sanitizer's racecheck (tests/field/CMakeLists.txt says why the threads are not run under it).
TEST(FieldWalkers, OwnAndSharedHandlesOnOneThread) {
    REQUIRE_BACKEND();
    const HandlesCase h;
    qmmm_field shared = create(h.s, QMMM_PRECISION_DOUBLE, QMMM_METHOD_DIRECT, 1);
    int bad = 0;
    for (int t = 0; t < HandlesCase::kCrowds; ++t) bad += h.steps(t, 2, shared, nullptr);
    EXPECT_EQ(bad, 0);
    qmmm_field_destroy(shared);
}

}  // namespace
