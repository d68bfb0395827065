// gpu_test.hpp -- how a test that needs a GPU runs, skips or fails.
//
// QMMM_REQUIRE_GPU_OR_SKIP(): a failing device count fails the test (a broken driver is an error, not "no GPU");
// no usable device skips it, saying why with a "qmmm-skip: " line -- the only text that makes ctest report a
// skip (so a test that fails in its set-up is a failure) -- unless the environment variable QMMM_REQUIRE_GPU is
// set (not "0"), as on the GPU machine (bench/common/gpu_verify.sh): then a missing GPU or a build without CUDA fails.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "qmmm_accel.h"

namespace qmmm_test {

inline bool gpu_required() {
    const char *e = std::getenv("QMMM_REQUIRE_GPU");
    return e && *e && std::string(e) != "0";
}

}  // namespace qmmm_test

// Skips the current test with a reason that ctest sees.
#define QMMM_SKIP(reason)                                        \
    do {                                                         \
        std::printf("qmmm-skip: %s\n", std::string(reason).c_str()); \
        GTEST_SKIP() << (reason);                                \
    } while (0)

#define QMMM_REQUIRE_GPU_OR_SKIP()                                                                          \
    do {                                                                                                    \
        int qmmm_n_dev_ = 0;                                                                                \
        ASSERT_EQ(qmmm_cuda_device_count(&qmmm_n_dev_), QMMM_SUCCESS)                                       \
            << "counting CUDA devices failed: " << qmmm_error_message();                                    \
        if (qmmm_n_dev_ == 0) {                                                                             \
            if (qmmm_test::gpu_required())                                                                  \
                FAIL() << "QMMM_REQUIRE_GPU is set, but no CUDA device is usable (or the build has no CUDA)"; \
            QMMM_SKIP("no CUDA device (or a build without CUDA)");                                          \
        }                                                                                                   \
    } while (0)

// A test file built twice, for backend CPU and (compiled with QMMM_TEST_CUDA) for backend CUDA: the backend its
// fields ask for, and REQUIRE_BACKEND() at the top of each test (the CUDA build skips or fails as above).
namespace qmmm_test {
#ifdef QMMM_TEST_CUDA
constexpr int kBackend = QMMM_BACKEND_CUDA;
#else
constexpr int kBackend = QMMM_BACKEND_CPU;
#endif
}  // namespace qmmm_test
#ifdef QMMM_TEST_CUDA
#define REQUIRE_BACKEND() QMMM_REQUIRE_GPU_OR_SKIP()
#else
#define REQUIRE_BACKEND() \
    do {                  \
    } while (0)
#endif
