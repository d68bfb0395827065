// test_cpu_helper_cap.cpp -- the policy that caps a parallel CPU call's pool helpers on a loaded node
// (src_cxx/core/cpu_helper_cap.hpp): halved after a call whose caller waited longer for its helpers than it
// computed (a helper descheduled mid-tile) or that took 1.1x longer than the caller alone would have, doubled back
// after 16 quiet calls in a row, the caller alone at 0 with one helper tried again every 64th call; each shrink
// doubles the quiet calls the next growth needs and each failed probe the calls before the next, until the cap no
// longer limits the calls; a wait under 0.5 ms (a tile's end, a helper's wake-up) changes nothing.
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

TEST(CpuHelperCap, AloneAtZeroThenOneHelperEvery64thCallEachFailedProbeDoublingIt) {
    qmmm::HelperCap cap(1023);
    cap.report(1, kOwn, kSlice);
    ASSERT_EQ(cap.cap(), 0);
    for (int call = 1; call < qmmm::HelperCap::kProbeAfter; ++call) ASSERT_EQ(cap.take(7), 0) << "call " << call;
    EXPECT_EQ(cap.take(7), 1);  // the probe
    cap.report(1, kOwn, kSlice);  // still loaded: alone again, for twice as many calls
    ASSERT_EQ(cap.probe_after(), 2 * qmmm::HelperCap::kProbeAfter);
    for (int call = 1; call < 2 * qmmm::HelperCap::kProbeAfter; ++call) ASSERT_EQ(cap.take(7), 0) << "call " << call;
    EXPECT_EQ(cap.take(7), 1);
}

TEST(CpuHelperCap, GrowsBackAfterQuietCallsUpToWhatCallsAsk) {
    qmmm::HelperCap cap(1023);
    EXPECT_EQ(cap.grow_after(), qmmm::HelperCap::kGrowAfter);
    cap.report(3, kOwn, kSlice);  // 3 / 2 = 1; the next growth needs twice the quiet calls
    ASSERT_EQ(cap.cap(), 1);
    const int after = 2 * qmmm::HelperCap::kGrowAfter;
    ASSERT_EQ(cap.grow_after(), after);
    for (int call = 1; call < after; ++call) cap.report(1, kOwn, kTileEnd);
    EXPECT_EQ(cap.cap(), 1);
    cap.report(1, kOwn, kTileEnd);
    EXPECT_EQ(cap.cap(), 2);
    for (int call = 0; call < after; ++call) cap.report(2, kOwn, 0.0);
    EXPECT_EQ(cap.cap(), 4);
    // A wait between an eighth of the call and all of it neither shrinks the cap nor counts as a quiet call.
    for (int call = 0; call < after - 1; ++call) cap.report(4, kOwn, 0.0);
    cap.report(4, kOwn, kOwn / 2);
    cap.report(4, kOwn, 0.0);
    EXPECT_EQ(cap.cap(), 8) << "the last quiet call needed since the last growth grows it";
    // The cap does not grow beyond the helpers calls use: quiet calls of 2 helpers leave 8, and since the cap no
    // longer limits them the backoff starts over.
    for (int call = 0; call < after; ++call) cap.report(2, kOwn, 0.0);
    EXPECT_EQ(cap.cap(), 8);
    EXPECT_EQ(cap.grow_after(), qmmm::HelperCap::kGrowAfter);
}

// A call that took longer than the caller alone would have (a helper on the caller's core, the caller descheduled:
// no long wait at the end) halves the cap; a call that ran less than 1.25x faster than alone is not quiet.
TEST(CpuHelperCap, SlowerThanTheCallerAloneHalvesIt) {
    constexpr double kAlone = 4e-3;  // 268,938 charges x 18 points on one core
    qmmm::HelperCap cap(1023);
    cap.report(15, 0.3e-3, kTileEnd, 1.05 * kAlone, kAlone);  // within 1.1x of alone: nothing changes
    EXPECT_EQ(cap.cap(), 1023);
    cap.report(15, 0.3e-3, kTileEnd, 1.2 * kAlone, kAlone);
    EXPECT_EQ(cap.cap(), 7);
    // 0.9x of alone with a short wait: neither slow nor quiet, the cap stays.
    for (int call = 0; call < 100; ++call) cap.report(7, 0.5e-3, kTileEnd, 0.9 * kAlone, kAlone);
    EXPECT_EQ(cap.cap(), 7);
    // Without an estimate (no tile of the caller's) only the wait counts.
    for (int call = 0; call < cap.grow_after(); ++call) cap.report(7, 0.5e-3, kTileEnd, 2 * kAlone, 0.0);
    EXPECT_EQ(cap.cap(), 14);
}

// On a node that stays loaded each shrink doubles the quiet calls a growth needs, up to kMaxGrowAfter, and each
// failed probe the calls alone before the next, up to kMaxProbeAfter.
TEST(CpuHelperCap, BackoffIsBounded) {
    qmmm::HelperCap cap(1023);
    int calls = 0;
    for (int k = 0; k < 20; ++k) {
        while (cap.take(1) == 0) ++calls;  // alone until the probe (the first call: the whole cap)
        cap.report(1, kOwn, kSlice);        // its one helper stalls: alone again
        EXPECT_EQ(cap.cap(), 0);
    }
    EXPECT_GT(calls, 15 * qmmm::HelperCap::kMaxProbeAfter);
    EXPECT_EQ(cap.grow_after(), qmmm::HelperCap::kMaxGrowAfter);
    EXPECT_EQ(cap.probe_after(), qmmm::HelperCap::kMaxProbeAfter);
}

TEST(CpuHelperCap, ShortWaitsNeverShrinkIt) {
    qmmm::HelperCap cap(1023);
    for (int call = 0; call < 100; ++call) cap.report(7, 50e-6, 400e-6);  // longer than the call, but under 0.5 ms
    EXPECT_EQ(cap.take(7), 7);
    cap.report(7, 0.0, 0.0);  // nothing computed, nothing waited
    EXPECT_EQ(cap.take(7), 7);
}
