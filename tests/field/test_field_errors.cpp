// test_field_errors.cpp -- bad input gets its own status and a message naming the argument.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

const double kCells[6] = {0, 0, 0, 1, 1, 1}, kQ[2] = {0.1, 0.2}, kNuc[3] = {2, 0, 0}, kZ[1] = {1};

qmmm_options opts(int backend = QMMM_BACKEND_CPU, int precision = QMMM_PRECISION_DOUBLE) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = backend, o.precision = precision;
    return o;
}

void expect_message(const char *fragment) {
    EXPECT_NE(std::strstr(qmmm_error_message(), fragment), nullptr)
        << "message '" << qmmm_error_message() << "' should mention '" << fragment << "'";
}

int create(qmmm_field *f, int64_t nc, const double *cx, const double *cq, int64_t nn, const double *nx,
           const double *nz, const qmmm_options *o) {
    return qmmm_field_create(f, nc, cx, cq, nn, nx, nz, o);
}

}  // namespace

TEST(FieldErrors, NullHandleOutAndArrays) {
    auto o = opts();
    qmmm_field f = nullptr;
    EXPECT_EQ(create(nullptr, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_NULL_ARG);
    expect_message("f ");
    EXPECT_EQ(create(&f, 2, nullptr, kQ, 1, kNuc, kZ, &o), QMMM_ERR_NULL_ARG);
    expect_message("cell_xyz");
    EXPECT_EQ(create(&f, 2, kCells, nullptr, 1, kNuc, kZ, &o), QMMM_ERR_NULL_ARG);
    expect_message("cell_q");
    EXPECT_EQ(create(&f, 2, kCells, kQ, 1, nullptr, kZ, &o), QMMM_ERR_NULL_ARG);
    expect_message("nuc_xyz");
    EXPECT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, nullptr, &o), QMMM_ERR_NULL_ARG);
    expect_message("nuc_z");
    EXPECT_EQ(f, nullptr);
}

TEST(FieldErrors, NegativeCounts) {
    auto o = opts();
    qmmm_field f = nullptr;
    EXPECT_EQ(create(&f, -1, kCells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    expect_message("n_cells");
    EXPECT_EQ(create(&f, 2, kCells, kQ, -3, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    expect_message("n_nuclei");
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    double p[3] = {5, 5, 5}, u[1];
    EXPECT_EQ(qmmm_field_eval(f, -1, p, u), QMMM_ERR_INVALID_ARG);
    expect_message("n_points");
    EXPECT_EQ(qmmm_field_eval(f, 1, nullptr, u), QMMM_ERR_NULL_ARG);
    expect_message("xyz");
    EXPECT_EQ(qmmm_field_eval(f, 1, p, nullptr), QMMM_ERR_NULL_ARG);
    expect_message("u is NULL");
    EXPECT_EQ(qmmm_field_eval(f, 0, nullptr, nullptr), QMMM_SUCCESS) << "zero points is a valid no-op";
    qmmm_field_destroy(f);
}

TEST(FieldErrors, EmptyTermsAreAllowed) {
    auto o = opts();
    qmmm_field f = nullptr;
    double p[3] = {0, 0, 3}, u = 1;
    ASSERT_EQ(create(&f, 0, nullptr, nullptr, 1, kNuc, kZ, &o), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS);
    EXPECT_DOUBLE_EQ(u, -1.0 / std::sqrt(13.0));
    qmmm_field_destroy(f);
    ASSERT_EQ(create(&f, 2, kCells, kQ, 0, nullptr, nullptr, &o), QMMM_SUCCESS) << qmmm_error_message();
    ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS);
    EXPECT_NEAR(u, 0.1 / 3 + 0.2 / std::sqrt(1 + 1 + 4.0), 1e-16);
    qmmm_field_destroy(f);
    // Neither term: a field made before the environment was read is an error, not a field that returns 0.
    EXPECT_EQ(create(&f, 0, nullptr, nullptr, 0, nullptr, nullptr, &o), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(f, nullptr);
}

TEST(FieldErrors, NonFiniteInputs) {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    auto o = opts();
    qmmm_field f = nullptr;
    double bad_cells[6] = {0, 0, 0, 1, nan, 1}, bad_q[2] = {0.1, inf}, bad_z[1] = {nan};
    EXPECT_EQ(create(&f, 2, bad_cells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_NONFINITE);
    expect_message("cell_xyz: element 1 of entry 1 is NaN");
    EXPECT_EQ(create(&f, 2, kCells, bad_q, 1, kNuc, kZ, &o), QMMM_ERR_NONFINITE);
    expect_message("cell_q");
    EXPECT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, bad_z, &o), QMMM_ERR_NONFINITE);
    expect_message("nuc_z");
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    double p[6] = {5, 5, 5, 0, inf, 0}, u[2];
    EXPECT_EQ(qmmm_field_eval(f, 2, p, u), QMMM_ERR_NONFINITE);
    expect_message("entry 1 is Inf");
    qmmm_field_destroy(f);
}

TEST(FieldErrors, UnknownOptions) {
    qmmm_field f = nullptr;
    auto o = opts(7);
    EXPECT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    expect_message("backend");
    o = opts(QMMM_BACKEND_CPU, 5);
    EXPECT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    expect_message("precision");
    o = opts();
    o.cell_volume = -1;
    EXPECT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    expect_message("cell_volume");
    o = opts();
    o.n_threads = -2;
    EXPECT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    expect_message("n_threads");
    EXPECT_EQ(qmmm_options_default(nullptr), QMMM_ERR_NULL_ARG);
}

TEST(FieldErrors, CudaWithoutGpu) {
    int count = 0;
    ASSERT_EQ(qmmm_cuda_device_count(&count), QMMM_SUCCESS);
    if (count > 0) QMMM_SKIP("a CUDA device is present; this test covers machines without one");
    auto o = opts(QMMM_BACKEND_CUDA);
    qmmm_field f = nullptr;
    int s = create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o);
    EXPECT_TRUE(s == QMMM_ERR_NO_CUDA || s == QMMM_ERR_NO_DEVICE) << qmmm_status_string(s);
    EXPECT_GT(std::strlen(qmmm_error_message()), 20u);
    EXPECT_EQ(f, nullptr);
}

TEST(FieldErrors, DestroyedHandleIsDetected) {
    auto o = opts();
    qmmm_field f = nullptr;
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    double p[3] = {5, 5, 5}, u[1];
    EXPECT_EQ(qmmm_field_eval(f, 1, p, u), QMMM_ERR_BAD_HANDLE);
    expect_message("destroyed");
    EXPECT_EQ(qmmm_field_destroy(f), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_field_destroy(nullptr), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_field_backend(nullptr, nullptr, nullptr, nullptr), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_field_wait(f), QMMM_ERR_BAD_HANDLE);
}

// A handle names one object for the life of the process: after destroy f, the next field g (which the allocator
// may put at f's old address: it did, before handles were tokens) is not reachable through f, so destroying f twice
// is BAD_HANDLE and leaves g alive. The same for environments and RDF handles.
TEST(FieldErrors, DestroyedHandleNeverNamesALaterObject) {
    auto o = opts();
    double p[3] = {5, 5, 5}, u = 0;
    for (int rep = 0; rep < 50; ++rep) {
        qmmm_field f = nullptr, g = nullptr;
        ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
        ASSERT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
        ASSERT_EQ(create(&g, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
        EXPECT_NE(f, g);
        EXPECT_EQ(qmmm_field_destroy(f), QMMM_ERR_BAD_HANDLE);
        EXPECT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_ERR_BAD_HANDLE);
        ASSERT_EQ(qmmm_field_eval(g, 1, p, &u), QMMM_SUCCESS) << "g was destroyed through f";
        EXPECT_EQ(qmmm_field_destroy(g), QMMM_SUCCESS);
    }
    qmmm_env e = nullptr, e2 = nullptr;
    ASSERT_EQ(qmmm_env_create(&e), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_env_destroy(e), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_env_create(&e2), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_env_destroy(e), QMMM_ERR_BAD_HANDLE);
    int64_t n = -1;
    EXPECT_EQ(qmmm_env_sizes(e2, &n, nullptr, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_env_destroy(e2), QMMM_SUCCESS);
    // A made-up pointer is no handle either.
    double not_a_field[8] = {};
    EXPECT_EQ(qmmm_field_eval(reinterpret_cast<qmmm_field>(not_a_field), 1, p, &u), QMMM_ERR_BAD_HANDLE);
}

// A handle of one kind is no handle of another: every call refuses the other kinds' handles and leaves their
// objects alive. Before, each kind counted its own tokens, so the first field, environment and RDF handle of a
// process were the same token and qmmm_env_destroy((qmmm_env)field) destroyed the environment.
TEST(FieldErrors, HandleOfAnotherKindIsBadHandle) {
    auto o = opts();
    double p[3] = {5, 5, 5}, u = 0;
    qmmm_field f = nullptr;
    qmmm_env e = nullptr;
    qmmm_rdf r = nullptr;
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_env_create(&e), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_rdf_create(&r, 0, 1, 10, nullptr), QMMM_SUCCESS);
    const auto as_field = [](const void *h) { return reinterpret_cast<qmmm_field>(const_cast<void *>(h)); };
    const auto as_env = [](const void *h) { return reinterpret_cast<qmmm_env>(const_cast<void *>(h)); };
    const auto as_rdf = [](const void *h) { return reinterpret_cast<qmmm_rdf>(const_cast<void *>(h)); };
    int64_t n = -1;
    for (const void *other : {static_cast<const void *>(e), static_cast<const void *>(r)}) {
        EXPECT_EQ(qmmm_field_eval(as_field(other), 1, p, &u), QMMM_ERR_BAD_HANDLE);
        EXPECT_EQ(qmmm_field_destroy(as_field(other)), QMMM_ERR_BAD_HANDLE);
    }
    for (const void *other : {static_cast<const void *>(f), static_cast<const void *>(r)}) {
        EXPECT_EQ(qmmm_env_sizes(as_env(other), &n, nullptr, nullptr), QMMM_ERR_BAD_HANDLE);
        EXPECT_EQ(qmmm_env_destroy(as_env(other)), QMMM_ERR_BAD_HANDLE);
    }
    for (const void *other : {static_cast<const void *>(f), static_cast<const void *>(e)}) {
        EXPECT_EQ(qmmm_rdf_reset(as_rdf(other)), QMMM_ERR_BAD_HANDLE);
        EXPECT_EQ(qmmm_rdf_destroy(as_rdf(other)), QMMM_ERR_BAD_HANDLE);
    }
    // Each object is still there.
    ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_env_sizes(e, &n, nullptr, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(n, 0);
    EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_env_destroy(e), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_rdf_destroy(r), QMMM_SUCCESS);
}

// A C caller's index base survives the Fortran interfaces' calls: they set 1 around their call and restore the
// caller's base after it (they reset it to 0 before). The module-free subroutines are in the library itself.
extern "C" void qmmm_f77_default_threads_(int *n, int *status);
extern "C" void qmmm_f77_field_eval_(const int64_t *f, const int *n_points, const double *xyz, double *u,
                                     int *status);

TEST(FieldErrors, CallersIndexBaseSurvivesFortranCalls) {
    auto o = opts();
    qmmm_field f = nullptr;
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    const double on_nucleus[6] = {5, 5, 5, 2, 0, 0};  // point 2 (from 1) is on nucleus 1
    double u[2];
    for (int base : {1, 0}) {
        ASSERT_EQ(qmmm_set_index_base(base), QMMM_SUCCESS);
        int n = 0, status = -1, got = -1;
        qmmm_f77_default_threads_(&n, &status);
        ASSERT_EQ(status, QMMM_SUCCESS);
        ASSERT_EQ(qmmm_get_index_base(&got), QMMM_SUCCESS);
        EXPECT_EQ(got, base) << "after qmmm_f77_default_threads";
        const int64_t token = static_cast<int64_t>(reinterpret_cast<intptr_t>(f));
        const int np = 2;
        qmmm_f77_field_eval_(&token, &np, on_nucleus, u, &status);
        EXPECT_EQ(status, QMMM_ERR_SINGULAR);
        expect_message("point 2 ");  // the Fortran call counts from 1
        ASSERT_EQ(qmmm_get_index_base(&got), QMMM_SUCCESS);
        EXPECT_EQ(got, base) << "after a failed qmmm_f77_field_eval";
        EXPECT_EQ(qmmm_field_eval(f, 2, on_nucleus, u), QMMM_ERR_SINGULAR);
        expect_message(base == 1 ? "point 2 " : "point 1 ");  // and C calls count from the caller's base
    }
    EXPECT_EQ(qmmm_get_index_base(nullptr), QMMM_ERR_NULL_ARG);
    qmmm_field_destroy(f);
}

// A count is no index: the dipoles' messages quote n_sites as given under either base (under base 1, as every
// Fortran call runs, "n_sites = -2 is negative" read -1, and an update's "n_sites = 3, but f has 0" read 4 and 1;
// fuzz_capi's base-crossing check).
extern "C" void qmmm_f77_set_dipoles_(const int64_t *f, const int *n_sites, const double *site_xyz, const double *mu,
                                      int *status);
extern "C" void qmmm_f77_update_dipoles_(const int64_t *f, const int *n_sites, const double *mu, int *status);

TEST(FieldErrors, DipoleCountsAreQuotedAsGivenUnderEitherBase) {
    auto o = opts();
    qmmm_field f = nullptr;
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    const int64_t token = static_cast<int64_t>(reinterpret_cast<intptr_t>(f));
    const double xyz[9] = {7, 7, 7, 8, 8, 8, 9, 9, 9}, mu[9] = {0};
    for (int base : {0, 1}) {
        SCOPED_TRACE(base);
        ASSERT_EQ(qmmm_set_index_base(base), QMMM_SUCCESS);
        EXPECT_EQ(qmmm_field_set_dipoles(f, -2, xyz, mu), QMMM_ERR_INVALID_ARG);
        expect_message("n_sites = -2 is negative");
        EXPECT_EQ(qmmm_field_update_dipoles(f, 3, mu), QMMM_ERR_INVALID_ARG);
        expect_message("n_sites = 3, but f has 0 dipole sites");
        int status = -1;
        const int minus2 = -2, three = 3;
        qmmm_f77_set_dipoles_(&token, &minus2, xyz, mu, &status);
        EXPECT_EQ(status, QMMM_ERR_INVALID_ARG);
        expect_message("n_sites = -2 is negative");
        qmmm_f77_update_dipoles_(&token, &three, mu, &status);
        EXPECT_EQ(status, QMMM_ERR_INVALID_ARG);
        expect_message("n_sites = 3, but f has 0 dipole sites");
    }
    ASSERT_EQ(qmmm_set_index_base(0), QMMM_SUCCESS);
    qmmm_field_destroy(f);
}

// qmmm_error_message() is the error of the thread's last call: a successful call clears it (it kept the last
// failure's text). The index-base calls, which the Fortran interfaces make after a failing call, leave it.
TEST(FieldErrors, SuccessClearsTheMessage) {
    auto o = opts();
    qmmm_field f = nullptr;
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    double p[3] = {5, 5, 5}, u = 0;
    EXPECT_EQ(qmmm_field_eval(f, -1, p, &u), QMMM_ERR_INVALID_ARG);
    expect_message("n_points");
    int base = -1;
    ASSERT_EQ(qmmm_get_index_base(&base), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_set_index_base(base), QMMM_SUCCESS);
    expect_message("n_points");
    ASSERT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS);
    EXPECT_STREQ(qmmm_error_message(), "");
    // Every family's calls go through the same guard: an RDF failure, then an environment call that succeeds.
    qmmm_env e = nullptr;
    EXPECT_EQ(qmmm_rdf_create(nullptr, 0, 1, 10, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_STRNE(qmmm_error_message(), "");
    ASSERT_EQ(qmmm_env_create(&e), QMMM_SUCCESS);
    EXPECT_STREQ(qmmm_error_message(), "");
    EXPECT_EQ(qmmm_env_destroy(e), QMMM_SUCCESS);
    qmmm_field_destroy(f);
}

// A thread remembers its last handle lookup (the per-call cost of a few-charge field). A destroy on another thread
// must still make that thread's next call on the handle BAD_HANDLE, and a call on a second handle in between must
// not revive the first.
TEST(FieldErrors, DestroyOnAnotherThreadReachesARememberedHandle) {
    auto o = opts();
    double p[3] = {5, 5, 5}, u = 0;
    qmmm_field f = nullptr, g = nullptr;
    ASSERT_EQ(create(&f, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    ASSERT_EQ(create(&g, 2, kCells, kQ, 1, kNuc, kZ, &o), QMMM_SUCCESS);
    std::atomic<int> stage{0};
    int before = -1, after = -1, other = -1, again = -1;
    std::thread t([&] {
        before = qmmm_field_eval(f, 1, p, &u);  // remembered
        stage = 1;
        while (stage.load() != 2) std::this_thread::yield();
        after = qmmm_field_eval(f, 1, p, &u);
        other = qmmm_field_eval(g, 1, p, &u);
        again = qmmm_field_eval(f, 1, p, &u);
    });
    while (stage.load() != 1) std::this_thread::yield();
    ASSERT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    stage = 2;
    t.join();
    EXPECT_EQ(before, QMMM_SUCCESS);
    EXPECT_EQ(after, QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(other, QMMM_SUCCESS);
    EXPECT_EQ(again, QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_field_destroy(g), QMMM_SUCCESS);
}

// Charges beyond what a precision sums without overflow are refused at create with the true reason (they were taken,
// and an eval then reported "within 1e-10 bohr of a cell", which was false).
TEST(FieldErrors, ChargesBeyondThePrecisionsRange) {
    const double big[2] = {0.1, 1e300}, huge[2] = {0.1, 1e308}, p[3] = {0.3, 0.2, 0.1};
    double u = 0;
    for (int prec : {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        auto o = opts(QMMM_BACKEND_CPU, prec);
        qmmm_field f = nullptr;
        EXPECT_EQ(create(&f, 2, kCells, big, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG) << prec;
        expect_message("cell_q: entry 1 is 1e+300");
        expect_message("without overflow");
        EXPECT_EQ(f, nullptr);
        const double q[1] = {-1e300}, x[1] = {1}, y[1] = {2}, z[1] = {3};
        EXPECT_EQ(qmmm_field_create_charges(&f, 1, x, y, z, 1, q, QMMM_SCREEN_NONE, nullptr, nullptr, 0, nullptr,
                                            nullptr, &o),
                  QMMM_ERR_INVALID_ARG);
        expect_message("q: entry 0");
    }
    auto o = opts();
    qmmm_field f = nullptr;
    EXPECT_EQ(create(&f, 2, kCells, huge, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    expect_message("1e+308");
    // DOUBLE takes 1e300: a finite value at a point 0.3 bohr from it
    ASSERT_EQ(create(&f, 2, kCells, big, 1, kNuc, kZ, &o), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval(f, 1, p, &u), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_TRUE(std::isfinite(u));
    EXPECT_GT(u, 1e299);
    qmmm_field_destroy(f);
}

// Destroy while another thread is inside eval: BUSY, and the field stays usable (before: SIGSEGV).
TEST(FieldErrors, DestroyWhileAnotherThreadEvaluatesIsBusy) {
    std::vector<double> cells(3 * 200000), q(200000, 1e-3);
    for (size_t i = 0; i < cells.size(); ++i) cells[i] = static_cast<double>((i * 7919) % 1000) * 0.01;
    auto o = opts();
    o.n_threads = 1;
    qmmm_field f = nullptr;
    ASSERT_EQ(create(&f, 200000, cells.data(), q.data(), 0, nullptr, nullptr, &o), QMMM_SUCCESS);
    std::vector<double> pts(3 * 1024, 20.0), u(1024);
    std::atomic<bool> started{false};
    std::atomic<int> status{-1};
    std::thread t([&] {
        started = true;
        status = qmmm_field_eval(f, 1024, pts.data(), u.data());  // 2e8 pair terms: >= 60 ms on one thread
    });
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // inside the call by now
    int busy = 0;
    for (int i = 0; i < 2000 && !busy; ++i) {
        const int s = qmmm_field_destroy(f);
        if (s == QMMM_ERR_BUSY) busy = 1;
        else if (s == QMMM_SUCCESS) break;  // the call had not started or had ended: nothing to see
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    t.join();
    if (busy) {
        EXPECT_EQ(status.load(), QMMM_SUCCESS);
        expect_message("another thread is inside a call on f");
        EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
    } else {
        ADD_FAILURE() << "destroy never saw the call in progress (it returned success first)";
    }
}

TEST(FieldErrors, StatusStringsAndVersion) {
    EXPECT_STREQ(qmmm_status_string(QMMM_ERR_SINGULAR), "QMMM_ERR_SINGULAR");
    EXPECT_STREQ(qmmm_status_string(12345), "QMMM_ERR_UNKNOWN_STATUS");
    int a = -1, b = -1, c = -1;
    ASSERT_EQ(qmmm_version(&a, &b, &c), QMMM_SUCCESS);
    EXPECT_EQ(std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c), qmmm_version_string());
    EXPECT_EQ(qmmm_version(nullptr, &b, &c), QMMM_ERR_NULL_ARG);
}

TEST(FieldErrors, MessagesArePerThread) {
    auto o = opts();
    qmmm_field f = nullptr;
    EXPECT_EQ(create(&f, -1, kCells, kQ, 1, kNuc, kZ, &o), QMMM_ERR_INVALID_ARG);
    std::string other;
    std::thread t([&] { other = qmmm_error_message(); });
    t.join();
    EXPECT_EQ(other, "") << "another thread must not see this thread's error";
    expect_message("n_cells");
}
