// tuning_env.hpp -- the environment variables that steer the library's kernels for tuning and tests, each parsed and
// range-checked here and nowhere else (docs/user-guide/tuning-knobs.md lists them).
//
// None of them changes what a result means. QMMM_CUDA_TILE and QMMM_RDF_MIN_SPLIT_PAIRS do not change the bits;
// QMMM_CUDA_ROWS chooses the embedding field's layout on the GPU (its own fixed summation order, the same claim);
// QMMM_RDF_CPU_NO_FMA chooses between two builds of the CPU counter that give the same bits.
//
// Each variable is read when it is used (a field handle's creation, an RDF count), so a test may set it between
// calls. Unset or empty: the default. A value outside the accepted set is never guessed at or ignored in silence:
// the reader throws qmmm::Error(QMMM_ERR_INVALID_ARG, "QMMM_...=\"value\": ...") and the API call that read it fails
// with that status and message (error.hpp). Nothing is printed.
#pragma once

namespace qmmm::tuning {

// A throughput tile shape of the CUDA embedding field: points per thread (P) and threads per chunk quarter (G).
struct TileShape {
    int points_per_thread = 0;
    int group_threads = 0;
    constexpr bool empty() const { return points_per_thread == 0; }
    friend constexpr bool operator==(const TileShape &a, const TileShape &b) {
        return a.points_per_thread == b.points_per_thread && a.group_threads == b.group_threads;
    }
};

// QMMM_CUDA_TILE: "PxG" (e.g. "4x32"), or the older integer form P * 1000 + G ("4032"); "0" or unset: the tuning
// table's choice by batch size (returned as an empty shape). The shape must be one of allowed[0 .. n_allowed).
TileShape cuda_tile(const TileShape *allowed, int n_allowed);

// QMMM_CUDA_ROWS: "0" keeps the field's throughput path on the tile layout, "1" puts it on the row layout whatever the
// cells; unset: -1, the tuning table's choice by the cells.
int cuda_rows();

// QMMM_RDF_MIN_SPLIT_PAIRS: pairs a frame must visit per GPU before a count is split over several GPUs; a finite
// number >= 0 (0: always split). Unset: fallback.
double rdf_min_split_pairs(double fallback);

// QMMM_RDF_CPU_NO_FMA: "1" makes the CPU counter use library fmaf instead of the FMA instruction (the same bits;
// tests compare the two), "0" or unset: the instruction where the CPU has it.
bool rdf_cpu_no_fma();

}  // namespace qmmm::tuning
