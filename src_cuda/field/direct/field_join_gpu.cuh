// field_join_gpu.cuh -- the joins of the field's throughput sweep (field_gpu_kernels.cu): how the four quarter
// partials of a chunk meet, always as ((s0 + s1) + s2) + s3, and how a block's totals reach the segment partials.
//
// - BlockJoin: a block holds kSub groups of G threads, group g on quarter g; the groups meet in shared memory after
//   every chunk (join_quarters) and group 0 keeps the totals.
// - SegmentJoin: one block per chunk quarter (grid z = quarter), G threads; each block sums its quarter over the
//   segment's chunks and the kSub blocks of a group of points meet once, through global memory (QuarterJoin). No warp
//   waits for another: in blocks of four groups a warp with a point near a cell (MIXED's careful sum) held the other
//   three at the block's barrier, 34 % of MIXED's stall cycles there. Against BlockJoin on an H200: MIXED 5-8 %
//   faster; SINGLE 4-6 % slower (more waits on the MUFU queue) and DOUBLE the same, so they keep BlockJoin
//   (field_tuning.hpp, quarter_blocks); blocks that loop over several segments (fewer, longer-lived blocks) were
//   14 % slower (docs/design/gpu-kernels.md).
// A join policy gives the sweep: kThreads<G> (threads a block), kQuarterTile (whether a block loads one quarter),
// sub<G>() and lane<G>() of the thread, Shared<Acc, P, G> (its shared memory), point (as a point's chunk partial is
// final), chunk (after each chunk) and finish (the segment's partials).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "direct/field_gpu.cuh"

namespace qmmm::cuda::field {
namespace {


// A chunk's quarter partials joined in group 0 as ((s0 + s1) + s2) + s3 and added to its totals; the block waits
// for every group's partial first (BlockJoin).
template <class Acc, int P, int G>
__device__ __forceinline__ void join_quarters(const Acc *partial, Acc (*red)[G * P], int sub, int lane, Acc *total) {
    if (sub > 0) {
#pragma unroll
        for (int k = 0; k < P; ++k) red[sub - 1][lane + k * G] = partial[k];
    }
    __syncthreads();
    if (sub == 0) {
#pragma unroll
        for (int k = 0; k < P; ++k) {
            Acc c_part = partial[k];
            for (int g = 0; g < kSub - 1; ++g) c_part += red[g][lane + k * G];
            total[k] += c_part;
        }
    }
}

// Group 0's totals to the segment's partials (points past n are not written). A point's partials lie together,
// part[i * n_segments + seg], so that segment_sum_kernel's warp reads them as one coalesced run: segment-major, its
// lanes each read a 32-byte sector for 8 useful bytes, 16 us of an 8,192-point call on the H200 (ncu;
// docs/design/gpu-kernels.md); these scattered stores cost nothing that shows beside the pair loop.
template <class Acc, int P, int G>
__device__ __forceinline__ void store_totals(const Acc *total, int sub, int64_t first, int seg, int64_t n, double *part) {
    if (sub != 0) return;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int64_t i = first + static_cast<int64_t>(k) * G;
        if (i < n) part[i * gridDim.y + seg] = static_cast<double>(total[k]);
    }
}

struct BlockJoin {
    template <int G>
    static constexpr int kThreads = kSub * G;
    static constexpr bool kQuarterTile = false;
    template <class Acc, int P, int G>
    struct Shared {
        Acc red[kSub - 1][G * P];
    };
    template <int G>
    __device__ static __forceinline__ int sub() { return threadIdx.x / G; }
    template <int G>
    __device__ static __forceinline__ int lane() { return threadIdx.x % G; }
    template <class Acc>
    __device__ static __forceinline__ void point(int, Acc, Acc *) {}
    template <class Acc, int P, int G>
    __device__ static __forceinline__ void chunk(const Acc *partial, Shared<Acc, P, G> &sh, int sub, int lane,
                                                 Acc *total) {
        join_quarters<Acc, P, G>(partial, sh.red, sub, lane, total);
    }
    template <class Acc, int P, int G>
    __device__ static __forceinline__ void finish(const Acc *total, Shared<Acc, P, G> &, int sub, int lane,
                                                  int64_t first, int seg, int /*n_segments: gridDim.y*/, int64_t n,
                                                  double *part, const QuarterJoin &) {
        store_totals<Acc, P, G>(total, sub, first, seg, n, part);
    }
};

// The meeting through global memory is CUDA's threadFenceReduction pattern: totals out, fence, count in; the last
// block of the four to arrive reads all four, writes the segment's partials and sets the counter back to zero.
// Integer atomics only; with one chunk a segment (fields below 512 Ki cells) these are BlockJoin's bits.
struct SegmentJoin {
    template <int G>
    static constexpr int kThreads = G;
    static constexpr bool kQuarterTile = true;
    template <class Acc, int P, int G>
    struct Shared {
        unsigned arrived;
    };
    template <int G>
    __device__ static __forceinline__ int sub() { return blockIdx.z; }
    template <int G>
    __device__ static __forceinline__ int lane() { return threadIdx.x; }
    // Each block keeps its quarter's totals over the segment's chunks, a point's partial added as soon as it is final.
    template <class Acc>
    __device__ static __forceinline__ void point(int k, Acc partial, Acc *total) { total[k] += partial; }
    template <class Acc, int P, int G>
    __device__ static __forceinline__ void chunk(const Acc *, Shared<Acc, P, G> &, int, int, Acc *) {}
    template <class Acc, int P, int G>
    __device__ static __forceinline__ void finish(const Acc *total, Shared<Acc, P, G> &sh, int sub, int lane,
                                                  int64_t first, int seg, int n_segments, int64_t n, double *part,
                                                  const QuarterJoin &join) {
        static_assert(sizeof(Acc) == sizeof(double), "the totals travel as doubles");
        const int64_t group = static_cast<int64_t>(seg) * gridDim.x + blockIdx.x;
        double *totals = join.totals + group * kSub * (G * P);
#pragma unroll
        for (int k = 0; k < P; ++k) totals[sub * (G * P) + lane + k * G] = total[k];
        __threadfence();
        __syncthreads();
        if (lane == 0) sh.arrived = atomicAdd(&join.counts[group], 1u);
        __syncthreads();
        if (sh.arrived != kSub - 1) return;  // the same for the whole block
        __threadfence();
        const volatile double *t = totals;
#pragma unroll
        for (int k = 0; k < P; ++k) {
            double s = t[lane + k * G];
            for (int g = 1; g < kSub; ++g) s += t[g * (G * P) + lane + k * G];
            const int64_t i = first + static_cast<int64_t>(k) * G;
            if (i < n) part[i * n_segments + seg] = s;
        }
        if (lane == 0) join.counts[group] = 0;  // for the next launch, which the stream orders after this one
    }
};

}  // namespace
}  // namespace qmmm::cuda::field
