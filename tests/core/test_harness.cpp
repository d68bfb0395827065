// test_harness.cpp -- the test harness's own test (harness_selftest, tests/core/harness_selftest.cmake): a program
// registered through qmmm_add_gtest like every other, whose tests must come out of ctest as written below. A set-up
// that fails (googletest 1.12 prints its tests as "[  SKIPPED ]") must be a failure, a skip must say why
// (QMMM_SKIP's "qmmm-skip: " line), a skip without that line fails. Not part of the suite's own tests: its ctest
// file is a folder of its own.
#include <gtest/gtest.h>

#include "gpu_test.hpp"

namespace {

class HarnessFailingFixture : public ::testing::Test {
protected:
    static void SetUpTestSuite() { ASSERT_TRUE(false) << "harness self-test: a set-up that fails"; }
};

// must be reported failed
TEST_F(HarnessFailingFixture, TestAfterAFailedSetUp) { SUCCEED(); }

// must be reported failed
TEST(HarnessFail, FailsInItsBody) { EXPECT_EQ(1, 2) << "harness self-test: a test that fails"; }

// must be reported skipped, with its reason
TEST(HarnessSkip, WithItsReason) { QMMM_SKIP("harness self-test: a skip with its reason"); }

// must be reported failed: a skip that gives ctest no reason
TEST(HarnessSkip, WithoutAReason) { GTEST_SKIP() << "no qmmm-skip line"; }

// must be reported passed
TEST(HarnessPass, Passes) { SUCCEED(); }

}  // namespace
