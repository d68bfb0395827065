// field_tuning.hpp -- the tuning table of the CUDA embedding field (src_cuda/field/direct/), by architecture: for each
// compute capability measured a policy with one row per precision (tile shape by batch size, layout on lattice cells,
// join of a chunk's quarters, occupancy bound), a chain from the highest architecture down, and one accessor,
// field_tuning(precision, cc). In plain C++ so that the host's choice is built and tested without a GPU
// (tests/field/test_field_tuning.cpp); the kernels read the compile-time fields through field_tuning_gpu.cuh.
//
// Nothing here changes a point's bits except the layout (tile or row: each its own fixed summation order); every
// shape, join and bound gives the same bits (docs/design/gpu-layers.md).
//
// The chain (CUB's policy hub is the model): a GPU of compute capability cc takes the policy of the highest
// architecture measured at or below cc; a GPU below every measured architecture takes the lowest. One architecture
// is measured, sm_90 (H100, H200), so every GPU takes its policy today: 10.0 as the nearest lower one, 7.0 to 8.9
// as the end of the chain (docs/design/gpu-layers.md#the-tuning-table). A new architecture's policy goes into
// kFieldPolicies at its place in the order, each value with its measurement; nothing else changes.
#pragma once
#include <cstdint>

#include "qmmm_accel_field.h"
#include "tuning_env.hpp"

namespace qmmm {

using TileShape = tuning::TileShape;  // points a thread (P) x threads a chunk quarter (G)

// The tile shapes compiled (src_cuda's throughput() instantiates the sweep for each, generated from this list);
// QMMM_CUDA_TILE may force any of them (tuning_env.hpp), which gives the same bits.
constexpr TileShape kFieldTileShapes[] = {{8, 32}, {4, 64}, {4, 32}, {2, 64}, {2, 32}, {1, 64}, {1, 32}};
constexpr int kNumFieldTileShapes = sizeof(kFieldTileShapes) / sizeof(kFieldTileShapes[0]);

// A batch of at least min_points points takes shape (the first step that fits, largest first).
struct FieldTileStep {
    int64_t min_points;
    TileShape shape;
};

// One precision's row of a policy.
struct FieldTuning {
    // __launch_bounds__: resident 128-thread blocks an SM the register budget must allow (the throughput kernels'
    // minimum blocks = min_blocks * 128 / threads a block). Compile time: the kernels take the row of the
    // architecture they are compiled for (field_tuning_gpu.cuh).
    int min_blocks;
    // MIXED on the tile layout: one block per chunk quarter, the four meeting through global memory (join: segment);
    // otherwise blocks of four quarters meeting in shared memory (join: block). The host launches the join of the
    // device's row; only the joins some policy takes are compiled.
    bool quarter_blocks;
    // The throughput tile shape by batch size.
    FieldTileStep tiles[3];
    // Lattice cells (rows of at least kFieldMinCellsPerRow cells on average) take the row layout by default.
    bool rows_on_lattice;
};

// The rows of one architecture. arch: the compute capability it was measured on, 10 * major + minor.
struct FieldPolicy {
    int arch;
    FieldTuning single, mixed, dbl;
    constexpr const FieldTuning &of(int precision) const {
        return precision == QMMM_PRECISION_SINGLE ? single : precision == QMMM_PRECISION_MIXED ? mixed : dbl;
    }
};

// Rows must hold this many cells on average for the row layout (otherwise the tile layout): cube cells make ~7 a
// row per quarter (glycine, 4.1e-4 e/bohr^3); cells in general position make rows of one, where tiles are faster.
constexpr int kFieldMinCellsPerRow = 3;

// sm_90 (H100, H200). The measurements are those of the tuning table in docs/design/gpu-layers.md (each value's
// source named there); the layouts' speeds on lattice cells are the field_gpu_cube table of docs/performance.md
// (the cube_glycine_rows and cube_glycine_tiles results).
constexpr FieldPolicy kFieldPolicySm90{
    90,
    // SINGLE: 8 blocks (<= 64 registers, 50 % occupancy); blocks of four quarters (one-quarter blocks measured
    // slower, gpu-layers.md); 4x32 from 512 points, 2x32 from 128, 1x32 below; rows on lattice cells (field_gpu_cube).
    {8, false, {{512, {4, 32}}, {128, {2, 32}}, {0, {1, 32}}}, true},
    // MIXED: 6 blocks (<= 80 registers, no spills at P <= 2; gpu-kernels.md); one-quarter blocks (a warp's careful
    // sum held the other three at the barrier of a block of four, gpu-kernels.md); 2x32 from 512 points (its points
    // hold 7 words), 1x32 below; tiles on lattice cells (field_gpu_cube: rows are not faster).
    {6, true, {{512, {2, 32}}, {0, {1, 32}}, {0, {1, 32}}}, false},
    // DOUBLE: 6 blocks (<= 80 registers; no DOUBLE measurement of it recorded); blocks of four quarters (one-quarter
    // blocks measured the same); 4x32 from 4,096 points, 2x32 from 512, 1x32 below (no measurement recorded); rows
    // on lattice cells (field_gpu_cube).
    {6, false, {{4096, {4, 32}}, {512, {2, 32}}, {0, {1, 32}}}, true},
};

// The chain, highest architecture first.
constexpr FieldPolicy kFieldPolicies[] = {kFieldPolicySm90};
constexpr int kNumFieldPolicies = sizeof(kFieldPolicies) / sizeof(kFieldPolicies[0]);

// Where a GPU of compute capability cc (10 * major + minor) enters a chain of architectures archs[0 .. n), highest
// first: the first at or below cc, else the last (the lowest answers for every GPU below it).
constexpr int field_policy_index(const int *archs, int n, int cc) {
    for (int i = 0; i < n; ++i)
        if (archs[i] <= cc) return i;
    return n - 1;
}

// The policy of a GPU of compute capability cc (10 * major + minor): the one accessor of the table.
constexpr const FieldPolicy &field_policy(int cc) {
    int archs[kNumFieldPolicies] = {};
    for (int i = 0; i < kNumFieldPolicies; ++i) archs[i] = kFieldPolicies[i].arch;
    return kFieldPolicies[field_policy_index(archs, kNumFieldPolicies, cc)];
}
constexpr const FieldTuning &field_tuning(int precision, int cc) { return field_policy(cc).of(precision); }

// Whether some policy's row of a precision takes one-quarter blocks (quarter = true) or blocks of four (false): the
// joins the throughput path compiles for it.
constexpr bool field_join_taken(int precision, bool quarter) {
    for (const FieldPolicy &p : kFieldPolicies)
        if (p.of(precision).quarter_blocks == quarter) return true;
    return false;
}

// The tile shape a row gives a batch of n points.
constexpr TileShape field_tile_for(const FieldTuning &t, int64_t n) {
    for (const FieldTileStep &s : t.tiles)
        if (n >= s.min_points) return s.shape;
    return t.tiles[2].shape;
}

}  // namespace qmmm
