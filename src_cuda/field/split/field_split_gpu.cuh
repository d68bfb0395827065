// field_split_gpu.cuh -- the CUDA kernels of the range-split field (field_split_gpu_kernels.cu); the host side is
// field_split_gpu.cu, the formulas field_split_shared.hpp (the same functions as the CPU backend).
//
// One warp per point: the lanes share the point's cell ranges (cell k of the concatenated ranges goes to lane
// k mod 32) and the values of its interpolation stencil, then add their partial sums in a fixed shuffle tree. A
// point's value is therefore one fixed sequence of operations: the same bits for any batch, no atomics.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "split/field_split_shared.hpp"

namespace qmmm::cuda::split {

// Four warps (four points) per block. One warp a block freed its slot as soon as its point was done, but 8,192
// one-warp blocks a call were 6-13 % slower than 4-warp blocks at 1,024 and 8,192 points (the block scheduler's rate;
// 2 and 8 warps in between; H100, docs/design/gpu-kernels.md). Points taken in spatial order (a Morton sort
// on the device) gained 1-5 % in the kernel and cost ~15 us a call to sort: not done.
constexpr int kWarpsPerBlock = 4;
// Warps per SM the launch bound asks for (64 registers a thread; an SM holds at most 32 blocks). Two warps a block at 40
// per SM (48 registers, with spills) was slower (H100).
constexpr int kResidentWarps = 32;

// The environment's nuclei on the device (n = 0: none added).
struct SplitNuclei {
    const double *xyz = nullptr, *z = nullptr;
    int64_t n = 0;
};

// A cell as the pair loop reads it: two 16-byte loads instead of four 8-byte ones from four arrays.
struct alignas(32) SplitCellGpu {
    double x, y, z, q;
};

// f's power coefficients, zero above the table's n terms: passed by value, so that the kernel reads them as
// constant-bank operands of its fused multiply-adds (no load per term), and Horner over the padded list gives the
// bits of split_f (0 * x + 0 = 0, then 0 * x + c = c).
struct SplitCoefs {
    double c[kSplitMaxTerms];
    float cs[kSplitMaxTermsSingle];  // MIXED's single-precision h (SplitModel::table_single), zero-padded the same way
    float scale_single = 0, exp_single = 0;
    int32_t n_single = 0;  // its terms (0: none; MIXED then evaluates in double)
};

// What the kernel reads: v with device pointers (v.cells.x for the columns' end trimming, cells for the pairs).
struct SplitDevice {
    SplitView v;
    const SplitCellGpu *cells = nullptr;
    int64_t pad = 0;  // a padding cell (kSplitCellPadding): zero charge, far from everything
    SplitCoefs coef{};
};

// The direct sum of the cells at the grid's nodes (field_split.hpp's SplitEngine::coulomb_rows): a thread takes up to
// kGridNodes nodes of one z-row (task: first node << 3 | count - 1) and shares each cell's x-y distance among them;
// blockIdx.y takes cells [y per_segment, (y + 1) per_segment) and writes part[y n + node], summed by the host in
// segment order. 1/r from the double MUFU seed and one Newton step, (q/2) y0 (3 - d2 y0^2): 6 FP64 operations per pair
// and 4 per cell shared by the thread's nodes, 7 per pair in all (against 13 for a general point); relative error below
// ~1e-13 (the seed's 2^-22 squared), far under the smallest tolerance (1e-11). A node whose thread met a cell within the
// singular radius gets NaN (the host sums it again).
constexpr int kGridNodes = 4;
constexpr int kGridThreads = 128;
constexpr int kGridTile = 256;  // cells per shared-memory tile
cudaError_t grid_coulomb_blocks_per_sm(int *blocks);  // resident blocks of the row kernel per SM
cudaError_t launch_grid_coulomb(const SplitCellGpu *cells, int64_t n_cells, int segments, int64_t per_segment,
                                const int64_t *tasks, int64_t n_tasks, const double *xyz, int64_t n, double *part,
                                cudaStream_t s);

// A call's values streamed out of the kernel (launch_split): the kernel sets done[c] = seq once the values of chunk c
// (points [c chunk, (c + 1) chunk)) are in out, and the host copies them while later chunks are computed. done: mapped
// host memory; count (blocks done, zero between calls) and values (n): device memory. seq grows by one a call, from 1;
// done starts at 0. Nothing in the kernel waits for the host (a launch that blocks, as under CUDA_LAUNCH_BLOCKING=1,
// cannot deadlock).
struct SplitStream {
    unsigned long long *done = nullptr;  // nullptr: not streamed
    uint32_t *count = nullptr;
    double *values = nullptr;
    unsigned long long seq = 0;
    int chunk = 0;  // points per chunk: a multiple of kWarpsPerBlock
};

// out[i] = (interp ? L(p_i) : 0) + S(p_i) - sum_b Z_b / |p_i - R_b| with the singular-cell 1/r `self` (NaN on a
// nucleus, as the host's add_nuclear_term; nucleus b in lane b mod 32, in the warp's fixed shuffle tree). With
// interp, a point outside the grid's region gets NaN too (the host tells the two apart). xyz and out may be mapped
// host memory. mixed: the cells' terms in single precision (pair_term's MIXED case), everything else as without.
// st: see SplitStream (a point's value does not depend on it).
cudaError_t launch_split(const SplitDevice &d, bool interp, bool mixed, double self, const SplitNuclei &nuc, int64_t n,
                         const double *xyz, double *out, const SplitStream &st, cudaStream_t s);

// The gradient (field_split.hpp's SplitGradModel): out[4i] = U(p_i), out[4i+1..4i+3] = dU/dr, by split_grad_point
// (the CPU backend's formulas, one thread a point, the terms in the same order) and the nuclei in index order (a
// nucleus within the singular radius: NaN). A point outside the grid's region gets NaN in all four (the host sums
// it directly). v holds device pointers (cells, f and f' tables, grid).
cudaError_t launch_split_grad(const SplitGradView &v, double self, const SplitNuclei &nuc, int64_t n, const double *xyz,
                              double *out, cudaStream_t s);

}  // namespace qmmm::cuda::split
