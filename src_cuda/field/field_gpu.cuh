// field_gpu.cuh -- the device layout of the embedding field and the launchers of its kernels
// (field_gpu_kernels.cu); the host side is field_gpu.cu.
//
// Cells are cut into chunks of kChunk (padded with zero charges far away), the same chunks as the CPU
// backend, so MIXED uses the same per-chunk double origins. A chunk is the unit of fixed-order summation:
// every path computes a point's chunk partial with one fixed sequence of operations and adds the partials
// in a fixed order, so results are bitwise repeatable and independent of the other points.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "field_shared.hpp"

namespace qmmm::cuda::field {

constexpr int kChunk = kFieldChunk;
// Latency path (few points): one block per chunk, consecutive threads on consecutive cells (seed Eq. 8).
constexpr int kLatencyThreads = 256;
constexpr int kLatencyMaxPoints = 8;
// Throughput path: cells tiled through shared memory, each chunk split into four ranges summed by four
// thread groups, each thread carrying up to 8 points.
// At most this many segments (groups of consecutive chunks, one block row each); depends on M only.
constexpr int kMaxSegments = 512;
// Points per throughput launch (bounds the partials buffer: segments x batch doubles).
constexpr int64_t kMaxBatch = 16384;

// (x, y, z, q): float4 for SINGLE (absolute), Cell64 for DOUBLE, MixedCell for MIXED (h: offset from the
// chunk origin on the kMixedGrid grid and the charge; l: the offset's low parts; see MixedCells).
struct alignas(32) Cell64 {
    double x, y, z, w;
};
struct alignas(32) MixedCell {
    float4 h, l;
};

// MIXED: a point nearer than sqrt(kNearRadius2) to a cell gets that cell's chunk quarter summed with the
// cells within the radius in double from cells64 (float cell offsets and charges would cost ~2^-24 of the
// near term, which dominates the sum when the point is close).

struct DeviceCells {
    const void *cells = nullptr;     // n_chunks * kChunk entries
    const Cell64 *cells64 = nullptr;  // MIXED: the same cells, absolute coordinates and charges in double
    const double *origin = nullptr;  // 3 per chunk (MIXED only)
    int64_t n_chunks = 0;
    double self = 0;  // 1/r for a point on a cell centre (C/h or NaN)
    const void *nuclei = nullptr;  // Cell64 (x, y, z, Z), for the throughput path
    int64_t n_nuclei = 0;
};

// Points travel inside the launch (kernel parameters live in constant memory: the seed's choice).
struct LatencyPoints {
    double xyz[3 * kLatencyMaxPoints];
    int n;
};

// Electron term only. Partials: kLatencyMaxPoints * n_chunks doubles; *counter is 0 before and after;
// out: n doubles, then *flag = seq (both may be mapped host memory, which the host may poll).
cudaError_t launch_latency(int precision, const DeviceCells &c, const LatencyPoints &p, double *partials,
                           unsigned *counter, double *out, unsigned *flag, unsigned seq, cudaStream_t s);

// Electron and nuclear terms. Segments of chunks_per_segment chunks; partials: n_segments * n doubles;
// out: n doubles. config: 0 = by n, or P * 1000 + G (points per thread, threads per chunk quarter) to force
// a tile shape for tuning (8032, 4064, 2064, 4032, 2032, 1032); results do not depend on it.
cudaError_t launch_throughput(int precision, const DeviceCells &c, int chunks_per_segment, int n_segments,
                              int64_t n, const double *xyz, double *partials, double *out, int config, cudaStream_t s);

}  // namespace qmmm::cuda::field
