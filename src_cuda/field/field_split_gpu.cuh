// field_split_gpu.cuh -- the CUDA kernels of the range-split field (field_split_gpu_kernels.cu); the host side is
// field_split_gpu.cu, the formulas field_split_shared.hpp (the same functions as the CPU backend).
//
// One warp per point: the lanes share the point's cell ranges (cell k of the concatenated ranges goes to lane
// k mod 32) and the values of its interpolation stencil, then add their partial sums in a fixed shuffle tree. A
// point's value is therefore one fixed sequence of operations: the same bits for any batch, no atomics.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "field_split_shared.hpp"

namespace qmmm::cuda::split {

// One warp (one point) per block: a block frees its slot as soon as its point is done (with 8 warps a block, the
// slowest of 8 points held it; a point's cell count varies about 2x).
constexpr int kWarpsPerBlock = 1;

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
};

// What the kernel reads: v with device pointers (v.cells.x for the columns' end trimming, cells for the pairs).
struct SplitDevice {
    SplitView v;
    const SplitCellGpu *cells = nullptr;
    SplitCoefs coef{};
};

// out[i] = (interp ? L(p_i) : 0) + S(p_i) - sum_b Z_b / |p_i - R_b| with the singular-cell 1/r `self` (NaN on a
// nucleus, as the host's add_nuclear_term; nucleus b in lane b mod 32, in the warp's fixed shuffle tree). With
// interp, a point outside the grid's region gets NaN too (the host tells the two apart). xyz and out may be mapped
// host memory.
cudaError_t launch_split(const SplitDevice &d, bool interp, double self, const SplitNuclei &nuc, int64_t n, const double *xyz,
                         double *out, cudaStream_t s);

}  // namespace qmmm::cuda::split
