// test_field_tuning.cpp -- the CUDA embedding field's tuning table (src_cxx/field/direct/field_tuning.hpp), checked
// without a GPU: which architecture's policy a GPU of each compute capability takes (the chain falls back to the
// nearest lower architecture measured, below the lowest to the lowest), on the library's chain and on chains built
// here; the rows' tile steps against the shapes compiled.
#include <gtest/gtest.h>

#include <cstdint>

#include "direct/field_tuning.hpp"
#include "qmmm_accel_field.h"

namespace {

using qmmm::field_policy;
using qmmm::field_policy_index;
using qmmm::field_tuning;
using qmmm::FieldTuning;
using qmmm::kFieldPolicies;
using qmmm::kFieldTileShapes;
using qmmm::kNumFieldPolicies;
using qmmm::kNumFieldTileShapes;
using qmmm::TileShape;

constexpr int kPrecisions[] = {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE};
// Volta, Ampere (A100, consumer), Ada, Hopper, Blackwell: 10 * major + minor.
constexpr int kCcs[] = {70, 80, 86, 89, 90, 100};

// The chain's rule written out: the highest architecture at or below cc, else the lowest.
int expected_index(const int *archs, int n, int cc) {
    int best = -1;
    for (int i = 0; i < n; ++i)
        if (archs[i] <= cc && (best < 0 || archs[i] > archs[best])) best = i;
    if (best >= 0) return best;
    int lowest = 0;
    for (int i = 1; i < n; ++i)
        if (archs[i] < archs[lowest]) lowest = i;
    return lowest;
}

TEST(FieldTuningChain, LibraryChainIsOrderedHighestFirst) {
    ASSERT_GE(kNumFieldPolicies, 1);
    for (int i = 1; i < kNumFieldPolicies; ++i) EXPECT_GT(kFieldPolicies[i - 1].arch, kFieldPolicies[i].arch) << i;
}

// Only sm_90 is measured: every GPU takes its policy (10.0 as the nearest lower architecture, 7.0 to 8.9 as the end
// of the chain), and each precision its own row of it.
TEST(FieldTuningChain, EachComputeCapabilityTakesTheSm90Policy) {
    int archs[kNumFieldPolicies];
    for (int i = 0; i < kNumFieldPolicies; ++i) archs[i] = kFieldPolicies[i].arch;
    for (int cc : kCcs) {
        SCOPED_TRACE(cc);
        const qmmm::FieldPolicy &p = field_policy(cc);
        EXPECT_EQ(&p, &kFieldPolicies[expected_index(archs, kNumFieldPolicies, cc)]);
        EXPECT_EQ(p.arch, 90);
        EXPECT_EQ(&field_tuning(QMMM_PRECISION_SINGLE, cc), &p.single);
        EXPECT_EQ(&field_tuning(QMMM_PRECISION_MIXED, cc), &p.mixed);
        EXPECT_EQ(&field_tuning(QMMM_PRECISION_DOUBLE, cc), &p.dbl);
    }
    // The compile-time form the kernels use (launch bounds) is the same accessor.
    static_assert(field_tuning(QMMM_PRECISION_MIXED, 90).quarter_blocks);
    static_assert(!field_tuning(QMMM_PRECISION_SINGLE, 80).quarter_blocks);
    static_assert(qmmm::field_join_taken(QMMM_PRECISION_MIXED, true));
    static_assert(!qmmm::field_join_taken(QMMM_PRECISION_DOUBLE, true));
}

// The rule on chains of several architectures (as a second measured architecture would make the library's).
TEST(FieldTuningChain, FallsBackToTheNearestLowerArchitecture) {
    const int three[] = {100, 90, 80};
    const int want3[] = {2, 2, 2, 2, 1, 0};  // for kCcs: 7.0 below the lowest takes 8.0; 8.6, 8.9 take 8.0
    const int two[] = {100, 89};
    const int want2[] = {1, 1, 1, 1, 1, 0};
    const int one[] = {90};
    for (size_t i = 0; i < sizeof(kCcs) / sizeof(kCcs[0]); ++i) {
        SCOPED_TRACE(kCcs[i]);
        EXPECT_EQ(field_policy_index(three, 3, kCcs[i]), want3[i]);
        EXPECT_EQ(field_policy_index(three, 3, kCcs[i]), expected_index(three, 3, kCcs[i]));
        EXPECT_EQ(field_policy_index(two, 2, kCcs[i]), want2[i]);
        EXPECT_EQ(field_policy_index(one, 1, kCcs[i]), 0);
    }
    EXPECT_EQ(field_policy_index(three, 3, 120), 0);  // above the highest: the highest
    EXPECT_EQ(field_policy_index(three, 3, 0), 2);
}

bool compiled(TileShape s) {
    for (int i = 0; i < kNumFieldTileShapes; ++i)
        if (kFieldTileShapes[i] == s) return true;
    return false;
}

// Every row's tile steps name compiled shapes, largest batch first, the last step from 0 points; field_tile_for takes
// the first step a batch reaches.
TEST(FieldTuningChain, TileStepsUseCompiledShapes) {
    for (const qmmm::FieldPolicy &p : kFieldPolicies)
        for (int prec : kPrecisions) {
            SCOPED_TRACE(prec);
            const FieldTuning &t = p.of(prec);
            EXPECT_GT(t.min_blocks, 0);
            for (int k = 0; k < 3; ++k) {
                EXPECT_TRUE(compiled(t.tiles[k].shape)) << k;
                EXPECT_EQ(t.tiles[k].shape.group_threads % 32, 0) << k;
                if (k > 0) EXPECT_LE(t.tiles[k].min_points, t.tiles[k - 1].min_points) << k;
            }
            EXPECT_EQ(t.tiles[2].min_points, 0);
            for (int64_t n : {int64_t{1}, int64_t{127}, int64_t{128}, int64_t{511}, int64_t{512}, int64_t{4095},
                              int64_t{4096}, int64_t{1} << 20}) {
                const TileShape got = qmmm::field_tile_for(t, n);
                int k = 0;
                while (n < t.tiles[k].min_points) ++k;
                EXPECT_TRUE(got == t.tiles[k].shape) << n;
            }
        }
    // The sm_90 rows as gpu-layers.md's table states them.
    EXPECT_TRUE(qmmm::field_tile_for(field_tuning(QMMM_PRECISION_SINGLE, 90), 512) == (TileShape{4, 32}));
    EXPECT_TRUE(qmmm::field_tile_for(field_tuning(QMMM_PRECISION_MIXED, 90), 511) == (TileShape{1, 32}));
    EXPECT_TRUE(qmmm::field_tile_for(field_tuning(QMMM_PRECISION_DOUBLE, 90), 4096) == (TileShape{4, 32}));
    EXPECT_TRUE(field_tuning(QMMM_PRECISION_DOUBLE, 90).rows_on_lattice);
    EXPECT_FALSE(field_tuning(QMMM_PRECISION_MIXED, 90).rows_on_lattice);
}

}  // namespace
