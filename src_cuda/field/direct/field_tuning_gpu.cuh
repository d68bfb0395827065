// field_tuning_gpu.cuh -- the tuning table of the CUDA embedding field: what each precision's throughput path takes
// (tile shape by batch size, layout on lattice cells, join of a chunk's quarters, occupancy bound), each value with
// the measurement behind it. Nothing here changes a point's bits except the layout (tile or row: each its own fixed
// summation order); every shape and bound gives the same bits (docs/design/gpu-layers.md).
//
// One architecture is measured: sm_90 (H100, H200), the code the library builds (CMAKE_CUDA_ARCHITECTURES 90). Other
// GPUs run its PTX with this row until they have measurements of their own: a new row goes beside kSm90 and
// field_tuning() picks it by compute capability; the compile-time fields (min_blocks, quarter_blocks) apply to the
// code of every architecture built.
#pragma once
#include <cstdint>

#include "qmmm_accel_field.h"
#include "tuning_env.hpp"

namespace qmmm::cuda::field {

using TileShape = qmmm::tuning::TileShape;  // points a thread (P) x threads a chunk quarter (G)

// The tile shapes compiled (field_gpu_kernels.cu instantiates the sweep for each); QMMM_CUDA_TILE may force any of
// them (tuning_env.hpp), which gives the same bits.
constexpr TileShape kTileShapes[] = {{8, 32}, {4, 64}, {4, 32}, {2, 64}, {2, 32}, {1, 64}, {1, 32}};
constexpr int kNumTileShapes = sizeof(kTileShapes) / sizeof(kTileShapes[0]);

// A batch of at least min_points points takes shape (the first step that fits, largest first).
struct TileStep {
    int64_t min_points;
    TileShape shape;
};

struct FieldTuning {
    // __launch_bounds__: resident 128-thread blocks an SM the register budget must allow (the throughput kernels'
    // minimum blocks = min_blocks * 128 / threads a block). Compile time.
    int min_blocks;
    // MIXED on the tile layout: one block per chunk quarter, the four meeting through global memory (join: segment);
    // otherwise blocks of four quarters meeting in shared memory (join: block). Compile time.
    bool quarter_blocks;
    // The throughput tile shape by batch size.
    TileStep tiles[3];
    // Lattice cells (rows of at least min_cells_per_row cells on average) take the row layout by default.
    bool rows_on_lattice;
};

// Rows must hold this many cells on average for the row layout (otherwise the tile layout): cube cells make ~7 a
// row per quarter (glycine, 4.1e-4 e/bohr^3); cells in general position make rows of one, where tiles are faster.
constexpr int kMinCellsPerRow = 3;

// sm_90 (H100, H200).
constexpr FieldTuning kSm90Single{
    // 8: <= 64 registers, 50 % occupancy with 128-thread blocks (the SINGLE kernels' budget since the first tuning).
    8,
    // false: one-quarter blocks were 4-6 % slower than blocks of four quarters for SINGLE on an H200 (more waits on
    // the MUFU queue; the measurement that gave MIXED one-quarter blocks, field_join_gpu.cuh).
    false,
    // 4x32 from 512 points: H100, N = 8,192, 2,637 against 2,507-2,537 G pairs/s with 8 points a thread (the loop is
    // not bound by the shared loads that 8 points save). 2x32 from 128, 1x32 below: fewer points a block keep small
    // batches' blocks many (no separate measurement recorded).
    {{512, {4, 32}}, {128, {2, 32}}, {0, {1, 32}}},
    // rows: glycine cube, H200, 8,192 points 2,864.3 against 2,682.1 G pairs/s on tiles; 1,024 points 2,178.3 against
    // 2,113.6 (docs/performance.md, table field_gpu_cube, run of a126dc1).
    true,
};
constexpr FieldTuning kSm90Mixed{
    // 6: <= 80 registers (no spills at P <= 2), 24 warps an SM. H100, N = 8,192: 1,162-1,168 against 1,091-1,100 G
    // pairs/s at <= 128 registers (docs/design/gpu-kernels.md).
    6,
    // true: one-quarter blocks 5-8 % faster than blocks of four on an H200: in those a warp with a near cell's careful
    // sum held the other three at the barrier, 34 % of MIXED's stall cycles (docs/design/gpu-kernels.md).
    true,
    // 2x32 from 512 points (its points hold 7 words): H100, N = 8,192, 1,076 G pairs/s against 930 with 4 points a
    // thread. 1x32 below (no separate measurement recorded).
    {{512, {2, 32}}, {0, {1, 32}}, {0, {1, 32}}},
    // tiles: glycine cube, H200, 8,192 points 1,015.7 G pairs/s on tiles against 1,000.9 on rows; 1,024 points 789.6
    // against 702.9 (docs/performance.md, table field_gpu_cube, run of a126dc1); 1,040 against 1,011 at 8,192
    // in the measurement that made tiles the default.
    false,
};
constexpr FieldTuning kSm90Double{
    // 6: <= 80 registers with 128-thread blocks (the value since the first tuning; no DOUBLE measurement of it
    // recorded; its FP64 pipe is 90 % busy on tiles, docs/design/gpu-kernels.md).
    6,
    // false: one-quarter blocks measured the same as blocks of four for DOUBLE on an H200 (the same measurement).
    false,
    // 4x32 from 4,096 points, 2x32 from 512, 1x32 below (no separate measurement recorded).
    {{4096, {4, 32}}, {512, {2, 32}}, {0, {1, 32}}},
    // rows: glycine cube, H200, 8,192 points 1,357.9 against 1,168.5 G pairs/s on tiles; 1,024 points 1,161.0 against
    // 1,013.4 (docs/performance.md, table field_gpu_cube, run of a126dc1).
    true,
};

constexpr const FieldTuning &sm90_tuning(int precision) {
    return precision == QMMM_PRECISION_SINGLE  ? kSm90Single
           : precision == QMMM_PRECISION_MIXED ? kSm90Mixed
                                               : kSm90Double;
}

// The row of the table for a precision on a GPU of compute capability cc_major.cc_minor (only sm_90 measured).
inline const FieldTuning &field_tuning(int precision, int /*cc_major*/ = 9, int /*cc_minor*/ = 0) {
    return sm90_tuning(precision);
}

// The tile shape the table gives a batch of n points.
inline TileShape tile_for(const FieldTuning &t, int64_t n) {
    for (const TileStep &s : t.tiles)
        if (n >= s.min_points) return s.shape;
    return t.tiles[2].shape;
}

}  // namespace qmmm::cuda::field
