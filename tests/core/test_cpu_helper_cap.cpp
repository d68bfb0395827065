// test_cpu_helper_cap.cpp -- the policy that caps a parallel CPU call's pool helpers on a loaded node
// (src_cxx/core/cpu_helper_cap.hpp): halved after a call whose caller waited longer for its helpers than it
// computed (a helper descheduled mid-tile), doubled back after 16 calls in a row that waited little, the caller
// alone at 0 with one helper tried again every 64th call; a wait under 0.5 ms (a tile's end, a helper's wake-up)
// changes nothing.
#include <gtest/gtest.h>

#include "cpu_helper_cap.hpp"

namespace {

constexpr double kOwn = 100e-6;     // the caller's own computing in a call of 100k charges x a few points
constexpr double kSlice = 4e-3;     // a helper descheduled for a time slice
constexpr double kTileEnd = 10e-6;  // the last helper's tile ending after the caller's: an idle node

}  // namespace

TEST(CpuHelperCap, HalvesAfterEachCallThatWaitedOnALateHelper) {
    qmmm::HelperCap cap(1023);
    EXPECT_EQ(cap.take(7), 7);  // unlimited until a call waits
    cap.report(7, kOwn, kSlice);
    EXPECT_EQ(cap.take(7), 3);
    cap.report(3, kOwn, kSlice);
    EXPECT_EQ(cap.take(7), 1);
    cap.report(1, kOwn, kSlice);
    EXPECT_EQ(cap.cap(), 0);
}

TEST(CpuHelperCap, AloneAtZeroThenOneHelperEvery64thCall) {
    qmmm::HelperCap cap(1023);
    cap.report(1, kOwn, kSlice);
    ASSERT_EQ(cap.cap(), 0);
    for (int call = 1; call < qmmm::HelperCap::kProbeAfter; ++call) ASSERT_EQ(cap.take(7), 0) << "call " << call;
    EXPECT_EQ(cap.take(7), 1);  // the probe
    cap.report(1, kOwn, kSlice);  // still loaded: alone again, for another 63 calls
    for (int call = 1; call < qmmm::HelperCap::kProbeAfter; ++call) ASSERT_EQ(cap.take(7), 0) << "call " << call;
    EXPECT_EQ(cap.take(7), 1);
}

TEST(CpuHelperCap, GrowsBackAfter16QuietCallsUpToWhatCallsAsk) {
    qmmm::HelperCap cap(1023);
    cap.report(3, kOwn, kSlice);  // 3 / 2 = 1
    ASSERT_EQ(cap.cap(), 1);
    for (int call = 1; call < qmmm::HelperCap::kGrowAfter; ++call) cap.report(1, kOwn, kTileEnd);
    EXPECT_EQ(cap.cap(), 1);
    cap.report(1, kOwn, kTileEnd);
    EXPECT_EQ(cap.cap(), 2);
    for (int call = 0; call < qmmm::HelperCap::kGrowAfter; ++call) cap.report(2, kOwn, 0.0);
    EXPECT_EQ(cap.cap(), 4);
    // A wait between an eighth of the call and all of it neither shrinks the cap nor counts as a quiet call.
    for (int call = 0; call < qmmm::HelperCap::kGrowAfter - 1; ++call) cap.report(4, kOwn, 0.0);
    cap.report(4, kOwn, kOwn / 2);
    cap.report(4, kOwn, 0.0);
    EXPECT_EQ(cap.cap(), 8) << "the 16th quiet call since the last growth grows it";
    // The cap does not grow beyond the helpers calls use: 16 quiet calls of 2 helpers leave 8.
    for (int call = 0; call < qmmm::HelperCap::kGrowAfter; ++call) cap.report(2, kOwn, 0.0);
    EXPECT_EQ(cap.cap(), 8);
}

TEST(CpuHelperCap, ShortWaitsNeverShrinkIt) {
    qmmm::HelperCap cap(1023);
    for (int call = 0; call < 100; ++call) cap.report(7, 50e-6, 400e-6);  // longer than the call, but under 0.5 ms
    EXPECT_EQ(cap.take(7), 7);
    cap.report(7, 0.0, 0.0);  // nothing computed, nothing waited
    EXPECT_EQ(cap.take(7), 7);
}
