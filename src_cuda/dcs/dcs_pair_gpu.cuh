// dcs_pair_gpu.cuh -- the DCS pair term per precision (the kernel's layers: this pair term, the tiling of
// dcs_gpu_kernels.cu, the dispatch of launch_planes, the tuning of dcs_tuning_gpu.cuh): the types a precision
// computes in and the term q / r one atom adds to one map point. Device code only.
//
// SINGLE: float terms and sums. MIXED: float terms, summed in float over a tile of kAtomTile atoms (the CPU's blocks,
// kDcsMixedBlock), each tile's sum added into a double. DOUBLE: double terms and sums, rsqrt() (~1 ulp).
#pragma once
#include <cuda_runtime.h>

#include "dcs_gpu.cuh"
#include "qmmm_accel_dcs.h"

namespace qmmm::cuda::dcs {
namespace {

// Bare MUFU.RSQ: rsqrtf() without -ftz adds denormal handling around it, which costs issue slots in a
// loop bound by the special-function unit. Lattice-atom distances are never denormal (max rel. error
// of the approximation 2^-22.9).
__device__ __forceinline__ float rsqrt_ftz(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// A precision's types (F: coordinates and terms; Atom: an atom as the kernel reads it; Out: a map value) and its pair
// term, acc + q / sqrt(r2) in one fused multiply-add. kTileSums: whether each tile's sum goes into a double.
template <int PREC>
struct DcsPair;
template <>
struct DcsPair<QMMM_PRECISION_SINGLE> {
    using F = float;
    using Atom = float4;
    using Out = float;
    static constexpr bool kTileSums = false;
    __device__ static __forceinline__ float add(float q, float r2, float acc) { return fmaf(q, rsqrt_ftz(r2), acc); }
};
// MIXED: SINGLE's pair term, each tile's sum added into a double map value.
template <>
struct DcsPair<QMMM_PRECISION_MIXED> : DcsPair<QMMM_PRECISION_SINGLE> {
    using Out = double;
    static constexpr bool kTileSums = true;
};
template <>
struct DcsPair<QMMM_PRECISION_DOUBLE> {
    using F = double;
    using Atom = double4_32a;
    using Out = double;
    static constexpr bool kTileSums = false;
    __device__ static __forceinline__ double add(double q, double r2, double acc) { return fma(q, rsqrt(r2), acc); }
};

}  // namespace
}  // namespace qmmm::cuda::dcs
