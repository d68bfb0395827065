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
// A chunk is summed in kSub quarters of kQuarter cells by different thread groups (throughput path).
constexpr int kSub = 4;
constexpr int kQuarter = kChunk / kSub;
// Latency paths (few points): one block per chunk, consecutive threads on consecutive cells (seed Eq. 8).
constexpr int kLatencyThreads = 256;
constexpr int kLatencyMaxPoints = 8;
// Throughput path: at most this many segments (groups of consecutive chunks, one block row each); depends
// on M only.
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

// Per chunk quarter, what lets the hot loops skip a per-pair test (see field_gpu_kernels.cu):
// - bound (SINGLE, DOUBLE): 5e9 x the smallest non-zero |q| of the quarter when all its charges have one sign
//   (+inf when none is non-zero), 0 when the signs are mixed. A point within the singular radius (1e-10 bohr)
//   of a cell makes that cell's term at least 1e10 |q|, so a quarter partial whose magnitude stays below the
//   bound (and is finite) had no singular cell; otherwise the quarter is summed again with the singular rule.
// - box (MIXED): centre of the quarter's cells as an offset from the chunk origin (x, y, z) and the radius of
//   the sphere around it that holds them (w), so a warp whose points are all farther than the near radius
//   from the sphere needs no per-pair near test.
struct QuarterInfo {
    float bound;
    float4 box;
};

struct DeviceCells {
    const void *cells = nullptr;       // n_chunks * kChunk entries
    const Cell64 *cells64 = nullptr;   // MIXED: the same cells, absolute coordinates and charges in double
    const double *origin = nullptr;    // 3 per chunk (MIXED only)
    const QuarterInfo *quarters = nullptr;  // n_chunks * kSub
    int64_t n_chunks = 0;
    double self = 0;                   // 1/r for a point on a cell centre (C/h or NaN)
    const void *nuclei = nullptr;      // Cell64 (x, y, z, Z), for the throughput path
    int64_t n_nuclei = 0;
};

// Points travel inside the launch (kernel parameters live in constant memory: the seed's choice).
struct LatencyPoints {
    double xyz[3 * kLatencyMaxPoints];
    int n;
};

// The results of the latency paths go straight to mapped host memory: chunk ch writes its partials
// part[ch * kLatencyMaxPoints + p] and then seq[ch] = the call's sequence number; the host waits for every
// seq and adds the partials in chunk order (no grid-wide synchronisation on the GPU, no copy, no stream sync).
struct HostPartials {
    double *part = nullptr;      // device view of mapped host memory, n_chunks * kLatencyMaxPoints
    unsigned *seq = nullptr;     // device view, n_chunks
};

// Low-latency mode: a persistent kernel waits for requests in this mapped host memory (written by the host:
// the points and n first, then seq; quit ends the kernel).
struct Mailbox {
    unsigned seq;
    unsigned quit;
    int n;
    int pad;
    double xyz[3 * kLatencyMaxPoints];
};

// Low-latency mode, on the device: block 0 alone polls the host's mailbox and relays each request here, in device
// memory, where the other blocks wait. (Every block polling mapped host memory put one PCIe read per SM in flight
// all the time and made a call take ~0.9 ms on the H100 instead of a few microseconds.) The host sets seq to the
// kernel's first sequence number and stop to 0 before each launch, in the kernel's stream.
struct Relay {
    unsigned seq;   // written last (release, GPU scope)
    unsigned stop;  // 1: quit or idle, every block returns
    int n;
    int pad;
    double xyz[3 * kLatencyMaxPoints];
};

// Electron term of n <= kLatencyMaxPoints points (one launch).
cudaError_t launch_latency(int precision, const DeviceCells &c, const LatencyPoints &p, HostPartials out,
                           unsigned seq, cudaStream_t s);

// The persistent kernel of the low-latency mode: `blocks` blocks take chunks blockIdx.x, + blocks, ...; each
// request's results go to `out` as in launch_latency. It returns when mb->quit is set or after idle_ns without
// a request (the host relaunches it on the next call).
cudaError_t launch_persistent(int precision, const DeviceCells &c, const Mailbox *mb, Relay *relay, HostPartials out,
                              int blocks, unsigned first_seq, unsigned long long idle_ns, cudaStream_t s);

// Electron and nuclear terms. Segments of chunks_per_segment chunks; partials: n_segments * n doubles;
// out: n doubles (a point within the singular radius of a nucleus gets NaN, which the API reports).
// config: 0 = by n, or P * 1000 + G (points per thread, threads per chunk quarter) to force a tile shape for
// tuning (8032, 4064, 4032, 2064, 2032, 1064, 1032); results do not depend on it.
cudaError_t launch_throughput(int precision, const DeviceCells &c, int chunks_per_segment, int n_segments,
                              int64_t n, const double *xyz, double *partials, double *out, int config, cudaStream_t s);

}  // namespace qmmm::cuda::field
