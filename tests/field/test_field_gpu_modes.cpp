// test_field_gpu_modes.cpp -- the CUDA field's low-latency mode (persistent kernel), many handles on one GPU
// at once, and the cases the hot loops leave to their careful paths (mixed-sign charges, points within or just
// outside the singular radius of a cell, nuclei on the latency and asynchronous paths). References: the
// long-double sum of field_reference.hpp, held to the claims of field_claims.hpp, and the ordinary latency path
// (the same bits).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "field_claims.hpp"
#include "field_reference.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"

using qmmm_test::System;

namespace {

const int kPrecisions[3] = {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE};


struct Field {
    qmmm_field f = nullptr;
    Field(const System &s, int precision, int flags = 0, double cell_volume = 0) {
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CUDA, o.precision = precision, o.flags = flags, o.cell_volume = cell_volume;
        EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(),
                                    s.nuc_xyz.data(), s.nuc_z.data(), &o),
                  QMMM_SUCCESS)
            << qmmm_error_message();
    }
    ~Field() {
        if (f) qmmm_field_destroy(f);
    }
    std::vector<double> eval(const std::vector<double> &pts) const {
        std::vector<double> u(pts.size() / 3, NAN);
        EXPECT_EQ(qmmm_field_eval(f, static_cast<int64_t>(u.size()), pts.data(), u.data()), QMMM_SUCCESS)
            << qmmm_error_message();
        return u;
    }
};

bool same_bits(const std::vector<double> &a, const std::vector<double> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The largest normwise error over the points in units of the claim for `prec` (tests/field/field_claims.hpp: DOUBLE
// 5e-15, MIXED 1e-8, SINGLE 2e-6 plus its coordinate rounding part): below 1 is within the claim at every point.
double worst(const System &s, const std::vector<double> &pts, const std::vector<double> &u, int prec, double dv = 0) {
    double e = 0;
    for (size_t p = 0; p < u.size(); ++p) {
        double scale = 0;
        const double ref = qmmm_test::reference_u(s, &pts[3 * p], dv, &scale);
        const double err = std::fabs(u[p] - ref) / scale;
        double allowed = qmmm_claims::bound(prec);
        if (prec == QMMM_PRECISION_SINGLE && err >= allowed)
            allowed += qmmm_claims::single_coordinate_part(s, &pts[3 * p]);
        e = std::max(e, err / allowed);
    }
    return e;
}

TEST(FieldCudaModes, LowLatencyGivesTheLatencyPathsBits) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const System s = qmmm_test::random_system(268782, 20, 41);
    const auto pts = qmmm_test::random_points(64, 42);
    for (int prec : kPrecisions) {
        Field plain(s, prec), fast(s, prec, QMMM_FLAG_LOW_LATENCY);
        for (int n : {1, 3, 8}) {
            for (int rep = 0; rep < 3; ++rep) {
                std::vector<double> sub(pts.begin() + 3 * rep * n, pts.begin() + 3 * (rep + 1) * n);
                const auto a = plain.eval(sub), b = fast.eval(sub);
                EXPECT_TRUE(same_bits(a, b)) << "precision " << prec << ", n " << n;
                EXPECT_LT(worst(s, sub, b, prec), 1.0) << "precision " << prec << ", n " << n;
            }
        }
        // Larger calls on the same handle take the throughput path beside the persistent kernel.
        std::vector<double> many(pts.begin(), pts.begin() + 3 * 40);
        EXPECT_LT(worst(s, many, fast.eval(many), prec), 1.0) << "precision " << prec;
        // After a pause the kernel has ended (idle timeout) and the next call starts a new one.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::vector<double> one(pts.begin(), pts.begin() + 3);
        EXPECT_TRUE(same_bits(plain.eval(one), fast.eval(one))) << "after a pause, precision " << prec;
    }
}

TEST(FieldCudaModes, LowLatencyEndsWithTheHandleAndWhenCallsStop) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const System s = qmmm_test::random_system(50000, 3, 43);
    const auto pts = qmmm_test::random_points(2, 44);
    // Destroyed right after a call: destroy ends the kernel (a hang here would be the failure).
    for (int rep = 0; rep < 5; ++rep) {
        Field f(s, QMMM_PRECISION_SINGLE, QMMM_FLAG_LOW_LATENCY);
        f.eval(pts);
    }
    // A thread calls, then stops without destroying; the kernel ends on its own; destroy from another thread.
    auto *f = new Field(s, QMMM_PRECISION_MIXED, QMMM_FLAG_LOW_LATENCY);
    std::vector<double> first;
    std::thread caller([&] { first = f->eval(pts); });
    caller.join();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(same_bits(first, f->eval(pts)));
    const auto t0 = std::chrono::steady_clock::now();
    delete f;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

// The idle stop, observed through qmmm_field_runtime (read from the GPU's stream): the kernel starts with the first
// call, is reused by the next, has ended 200 ms (+ polling slack) after the last call and not before 150 ms, and
// the next call starts it again. A CUDA field reports no CPU kernel set.
TEST(FieldCudaModes, LowLatencyIdleStopIsObservable) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    using Clock = std::chrono::steady_clock;
    const System s = qmmm_test::random_system(20000, 2, 45);
    const auto pts = qmmm_test::random_points(3, 46);
    Field f(s, QMMM_PRECISION_DOUBLE, QMMM_FLAG_LOW_LATENCY);
    int isa = 99, running = -1;
    int64_t launches = -1;
    ASSERT_EQ(qmmm_field_runtime(f.f, &isa, &running, &launches), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(isa, QMMM_CPU_ISA_NONE);
    EXPECT_EQ(running, 0);
    EXPECT_EQ(launches, 0);
    const auto first = f.eval(pts);
    f.eval(pts);
    auto t_last = Clock::now();
    ASSERT_EQ(qmmm_field_runtime(f.f, nullptr, &running, &launches), QMMM_SUCCESS);
    EXPECT_EQ(running, 1);
    EXPECT_EQ(launches, 1) << "the second call within the reuse window started a new kernel";
    double stopped_after = -1;
    while (true) {
        const double t = std::chrono::duration<double>(Clock::now() - t_last).count();
        ASSERT_EQ(qmmm_field_runtime(f.f, nullptr, &running, nullptr), QMMM_SUCCESS);
        if (!running) {
            stopped_after = t;
            break;
        }
        if (t > 2.0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_GE(stopped_after, 0.15) << "stopped before the idle time";
    EXPECT_LE(stopped_after, 0.40) << "still running " << stopped_after << " s after the last call (idle stop: 200 ms)";
    EXPECT_TRUE(same_bits(first, f.eval(pts)));
    ASSERT_EQ(qmmm_field_runtime(f.f, nullptr, &running, &launches), QMMM_SUCCESS);
    EXPECT_EQ(running, 1);
    EXPECT_EQ(launches, 2);
    // A field without the flag never starts one.
    Field plain(s, QMMM_PRECISION_DOUBLE);
    plain.eval(pts);
    ASSERT_EQ(qmmm_field_runtime(plain.f, nullptr, &running, &launches), QMMM_SUCCESS);
    EXPECT_EQ(running, 0);
    EXPECT_EQ(launches, 0);
}

TEST(FieldCudaModes, SixteenHandlesOnSixteenThreads) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const System s = qmmm_test::random_system(100003, 7, 45);
    const auto pts = qmmm_test::random_points(1024, 46);
    const int kThreads = 16;
    std::vector<std::unique_ptr<Field>> fields;
    std::vector<std::vector<double>> serial(kThreads), batch(kThreads), ones(kThreads);
    for (int h = 0; h < kThreads; ++h) {
        fields.push_back(std::make_unique<Field>(s, kPrecisions[h % 3], h % 4 == 3 ? QMMM_FLAG_LOW_LATENCY : 0));
        serial[h] = fields[h]->eval(pts);
    }
    std::vector<std::thread> threads;
    for (int h = 0; h < kThreads; ++h)
        threads.emplace_back([&, h] {
            for (int rep = 0; rep < 8; ++rep) {
                batch[h] = fields[h]->eval(pts);
                ones[h] = fields[h]->eval({pts[0], pts[1], pts[2]});
            }
        });
    for (auto &t : threads) t.join();
    for (int h = 0; h < kThreads; ++h) {
        EXPECT_TRUE(same_bits(serial[h], batch[h])) << "handle " << h;
        EXPECT_LT(worst(s, pts, batch[h], kPrecisions[h % 3]), 1.0) << "handle " << h;
        EXPECT_LT(worst(s, {pts[0], pts[1], pts[2]}, ones[h], kPrecisions[h % 3]), 1.0) << "handle " << h;
    }
}

TEST(FieldCudaModes, ChargesOfBothSigns) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    System s = qmmm_test::random_system(30011, 4, 47);
    for (size_t m = 0; m < s.cell_q.size(); m += 7) s.cell_q[m] = -3 * s.cell_q[m];  // point charges of an MM region
    const auto pts = qmmm_test::random_points(2000, 48);
    for (int prec : kPrecisions) {
        Field f(s, prec);
        EXPECT_LT(worst(s, pts, f.eval(pts), prec), 1.0) << "precision " << prec;
        std::vector<double> few(pts.begin(), pts.begin() + 15);
        EXPECT_LT(worst(s, few, f.eval(few), prec), 1.0) << "precision " << prec;
    }
}

TEST(FieldCudaModes, PointsAtAndNearTheSingularRadiusOfACell) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const double dv = 0.008;
    const System s = qmmm_test::random_system(20000, 2, 49);
    auto pts = qmmm_test::random_points(300, 50);
    // On a cell, 3e-11 bohr from one (inside the singular radius), and 5e-10 / 1e-6 bohr from one (outside:
    // ordinary, very large terms).
    const double offsets[4] = {0, 3e-11, 5e-10, 1e-6};
    for (int i = 0; i < 4; ++i) {
        const int64_t m = 1000 * (i + 1) + 17;
        for (int k = 0; k < 3; ++k) pts[3 * (10 * i + 5) + k] = s.cell_xyz[3 * m + k] + (k == 0 ? offsets[i] : 0.0);
    }
    for (int prec : {QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE}) {  // SINGLE cannot place a point 1e-10 away
        Field f(s, prec, 0, dv);
        EXPECT_LT(worst(s, pts, f.eval(pts), prec, dv), 1.0) << "precision " << prec;
        for (int i = 0; i < 4; ++i) {
            std::vector<double> one(pts.begin() + 3 * (10 * i + 5), pts.begin() + 3 * (10 * i + 6));
            EXPECT_LT(worst(s, one, f.eval(one), prec, dv), 1.0) << "precision " << prec << ", offset " << offsets[i];
        }
    }
    Field f(s, QMMM_PRECISION_SINGLE, 0, dv);  // SINGLE: exactly on a cell (the float coordinates coincide)
    std::vector<double> on(pts.begin() + 3 * 5, pts.begin() + 3 * 6), batch(pts.begin(), pts.begin() + 3 * 12);
    EXPECT_LT(worst(s, on, f.eval(on), QMMM_PRECISION_SINGLE, dv), 1.0);
    EXPECT_LT(worst(s, batch, f.eval(batch), QMMM_PRECISION_SINGLE, dv), 1.0);
}

// Small calls (9 to 128 points) write their values to mapped host memory and the host polls them; they must be the
// bits of the copied-back form (QMMM_CUDA_SMALL_CALLS=0, read at create) and within the claim, on few segments (the
// points read from the mapped buffer) and on many (copied in), with nuclei, every precision, synchronous and
// asynchronous, and a larger call on the same handle between them.
TEST(FieldCudaModes, SmallCallsGiveTheCopiedBackBits) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const auto pts = qmmm_test::random_points(300, 61);
    for (int64_t m : {10, 3000, 40000}) {
        const System s = qmmm_test::random_system(m, 4, 62);
        for (int prec : kPrecisions) {
            setenv("QMMM_CUDA_SMALL_CALLS", "0", 1);
            Field copied(s, prec);
            unsetenv("QMMM_CUDA_SMALL_CALLS");
            Field small(s, prec);
            for (int n : {9, 22, 128, 300, 64}) {
                std::vector<double> sub(pts.begin(), pts.begin() + 3 * n);
                const auto a = copied.eval(sub), b = small.eval(sub);
                EXPECT_TRUE(same_bits(a, b)) << "M " << m << ", precision " << prec << ", n " << n;
                EXPECT_LT(worst(s, sub, b, prec), 1.0) << "M " << m << ", precision " << prec << ", n " << n;
                std::vector<double> c(n, NAN);
                ASSERT_EQ(qmmm_field_eval_async(small.f, n, sub.data(), c.data()), QMMM_SUCCESS) << qmmm_error_message();
                std::fill(sub.begin(), sub.end(), 1e3);  // the points were taken at the call
                ASSERT_EQ(qmmm_field_wait(small.f), QMMM_SUCCESS) << qmmm_error_message();
                EXPECT_TRUE(same_bits(a, c)) << "async, M " << m << ", precision " << prec << ", n " << n;
            }
        }
    }
}

TEST(FieldCudaModes, PointOnANucleusOnEveryPath) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const System s = qmmm_test::random_system(5000, 6, 51);
    auto pts = qmmm_test::random_points(100, 52);
    std::copy_n(&s.nuc_xyz[3 * 4], 3, &pts[3 * 2]);
    pts[3 * 2] += 4e-11;  // inside the singular radius
    for (int flags : {0, static_cast<int>(QMMM_FLAG_LOW_LATENCY)}) {
        Field f(s, QMMM_PRECISION_SINGLE, flags);
        for (int64_t n : {3, 100, 22}) {
            std::vector<double> u(n);
            EXPECT_EQ(qmmm_field_eval(f.f, n, pts.data(), u.data()), QMMM_ERR_SINGULAR) << "n " << n;
            EXPECT_NE(std::strstr(qmmm_error_message(), "point 2 "), nullptr) << qmmm_error_message();
            EXPECT_NE(std::strstr(qmmm_error_message(), "nucleus 4"), nullptr) << qmmm_error_message();
            std::vector<double> copy(pts.begin(), pts.begin() + 3 * n);
            ASSERT_EQ(qmmm_field_eval_async(f.f, n, copy.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
            std::fill(copy.begin(), copy.end(), 0.0);  // the message must not depend on the caller's array now
            EXPECT_EQ(qmmm_field_wait(f.f), QMMM_ERR_SINGULAR) << "n " << n;
            EXPECT_NE(std::strstr(qmmm_error_message(), "nucleus 4"), nullptr) << qmmm_error_message();
        }
    }
}

}  // namespace
