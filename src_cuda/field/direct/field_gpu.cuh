// field_gpu.cuh -- the device layout of the embedding field and the launchers of its kernels (throughput:
// field_gpu_kernels.cu; latency: field_latency_gpu_kernels.cu; low-latency mode: field_persistent_gpu_kernels.cu);
// the host side (device state and dispatch) is field_gpu.cu, the tuning table src_cxx/field/direct/field_tuning.hpp.
//
// Cells are cut into chunks of kChunk (padded with zero charges far away), the same chunks as the CPU
// backend, so MIXED uses the same per-chunk double origins. A chunk is the unit of fixed-order summation:
// every path computes a point's chunk partial with one fixed sequence of operations and adds the partials
// in a fixed order, so results are bitwise repeatable and independent of the other points.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/field_shared.hpp"
#include "direct/field_layout.hpp"
#include "direct/field_tuning_gpu.cuh"

namespace qmmm::cuda::field {

constexpr int kChunk = kFieldChunk;
// A chunk is summed in kSub quarters of kQuarter cells by different thread groups (throughput path); the host
// builds their layouts (direct/field_layout.hpp).
constexpr int kSub = kFieldQuarters;
constexpr int kQuarter = kFieldQuarterCells;
// Latency paths (few points): one block per chunk, consecutive threads on consecutive cells (coalesced, as
// the published FMO-QMC kernel orders them).
constexpr int kLatencyThreads = 256;
constexpr int kLatencyMaxPoints = 8;
// Calls of more points, up to kSmallMaxPoints (a legacy code's electrons of one configuration), take the throughput
// kernels with their values written to mapped host memory and polled (SmallOut): the same bits, without the copy back
// and the stream synchronisation. With at most kSmallZeroCopySegments segments (M <= 16 chunks) the kernels read
// the points straight from the mapped host buffer as well.
constexpr int kSmallMaxPoints = 128;
constexpr int kSmallZeroCopySegments = 16;
// Throughput path: at most this many segments (groups of consecutive chunks, one block row each); depends
// on M only.
constexpr int kMaxSegments = 512;
// Points per throughput launch (bounds the partials buffer: segments x batch doubles).
constexpr int64_t kMaxBatch = 16384;

// (x, y, z, q): float4 for SINGLE (absolute), Cell64 for DOUBLE, MixedCell for MIXED (h: offset from the
// chunk origin on the kMixedGrid grid and the charge; l: twice the offset's low parts, see MixedCells and the
// kernels' dist2).
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
// - row_begin, n_rows (on lattice cells): the quarter's rows in DeviceCells::rows, from the chunk's first.
struct QuarterInfo {
    float bound;
    int row_begin, n_rows;
    float4 box;
};

// A row of the row layout (DeviceCells::rows): 16 bytes in SINGLE (one shared-memory load), 24 in DOUBLE.
template <class F>
struct alignas(sizeof(F) == 4 ? 16 : 8) RowHead {
    F y, z;
    int first, end;
};

struct DeviceCells {
    const void *cells = nullptr;       // n_chunks * kChunk entries
    const Cell64 *cells64 = nullptr;   // MIXED: the same cells, absolute coordinates and charges in double
    const double *origin = nullptr;    // 3 per chunk (MIXED, and SINGLE with rows)
    const double *lo_mean = nullptr;   // MIXED: 4 per chunk (MixedCells::lo_mean, for field_mixed_b2)
    const QuarterInfo *quarters = nullptr;  // n_chunks * kSub
    // Cells that share rows (a cube's lattice): the throughput path's row layout, null otherwise. A row is a
    // quarter's cells with one (y, z): RowHead (y, z as offsets from the chunk origin; first, end: the chunk-local
    // range of row_cells, which hold (x offset, q) in row order); see row_quarter_sum. MIXED: a row's head is a float4
    // (y hi, z hi, 2 y lo, 2 z lo) as MixedCell holds them, and its cells float4 (x hi, 2 x lo, q, start), where
    // start is the chunk-local index of the row that begins at the cell (int bits), -1 elsewhere
    // (mixed_row_quarter_sum).
    const void *row_cells = nullptr;  // n_chunks * kChunk float2 (SINGLE), double2 (DOUBLE) or float4 (MIXED)
    const void *rows = nullptr;       // n_chunks * kChunk RowHead<F> or float4 (the first n of each chunk used)
    int64_t n_chunks = 0;
    double self = 0;                   // 1/r for a point on a cell centre (C/h or NaN)
    const void *nuclei = nullptr;      // Cell64 (x, y, z, Z), for the throughput path
    int64_t n_nuclei = 0;
    const void *heavy = nullptr;       // MIXED: Cell64 (x, y, z, q) of FieldData::heavy_*, for the throughput path
    int64_t n_heavy = 0;
};

// Points travel inside the launch (kernel parameters live in constant memory, as the published
// FMO-QMC kernel keeps its point).
struct LatencyPoints {
    double xyz[3 * kLatencyMaxPoints];
    int n;
};

// Small messages between host and GPU travel as "LL" words (NCCL's low-latency protocol): 8 bytes that hold 32
// bits of data and the call's sequence number, written by one 8-byte store. A reader knows a word is current
// from the word itself, so a whole message is read in one round trip, with no flag written after a fence.
// Sequence numbers skip 0 (ll_next), so zeroed memory is never current.
__host__ __device__ inline unsigned long long ll_word(unsigned seq, unsigned data) {
    return (static_cast<unsigned long long>(seq) << 32) | data;
}
__host__ __device__ inline unsigned ll_seq(unsigned long long w) { return static_cast<unsigned>(w >> 32); }
__host__ __device__ inline unsigned ll_data(unsigned long long w) { return static_cast<unsigned>(w); }
__host__ __device__ inline unsigned ll_next(unsigned s) { return s + 1u == 0u ? 1u : s + 1u; }

// A request of n points: word 0 holds n, words 1 + 2k and 2 + 2k the low and high halves of xyz[k].
constexpr int kRequestWords = 1 + 6 * kLatencyMaxPoints;

// Where the latency paths put a call's work: every chunk's block writes its partial of point p as two LL words
// (low and high halves) at result[2 (p n_chunks + ch)], mapped host memory, with one 16-byte store and no fence;
// the host waits for every word of the call and adds the partials in chunk order. A last-block sum on the GPU needs
// a fence and an atomic per block: 0.3-2 us slower per call on an H100 (docs/design/gpu-kernels.md).
struct LatencyOut {
    unsigned long long *result = nullptr;  // device view, 2 * kLatencyMaxPoints * n_chunks LL words
};

// Low-latency mode: a persistent kernel waits for requests in this mapped host memory (LL words written by the
// host; quit ends the kernel).
struct Mailbox {
    unsigned long long w[kRequestWords];
    unsigned quit;
    unsigned pad;
};

// Low-latency mode, on the device: block 0 alone polls the host's mailbox and relays each request here, in device
// memory, as the same LL words, where the other blocks wait. (Every block polling mapped host memory put one PCIe
// read per SM in flight all the time and made a call take ~0.9 ms on the H100 instead of a few microseconds.)
// The host zeroes it before each launch, in the kernel's stream.
struct Relay {
    unsigned long long w[kRequestWords];
    unsigned stop;  // 1: quit or idle, every block returns
    unsigned pad;
};

// Electron term of n <= kLatencyMaxPoints points (one launch).
cudaError_t launch_latency(int precision, const DeviceCells &c, const LatencyPoints &p, LatencyOut out,
                           unsigned seq, cudaStream_t s);

// The persistent kernel of the low-latency mode: `blocks` blocks take chunks blockIdx.x, + blocks, ...; each
// request's results go to `out` as in launch_latency. It waits for the request after `last`, returns when
// mb->quit is set or after idle_ns without a request (the host relaunches it on the next call).
cudaError_t launch_persistent(int precision, const DeviceCells &c, const Mailbox *mb, Relay *relay, LatencyOut out,
                              int blocks, unsigned last, unsigned long long idle_ns, cudaStream_t s);

// Where MIXED's quarter blocks on the tile layout meet (launch_throughput; SegmentJoin, field_join_gpu.cuh): each
// block's quarter totals, kSub * n_segments * quarter_points(n) doubles, and one counter per group of points and
// segment, n_segments * quarter_points(n) / 32, zero before the first launch (each launch leaves them zero). Unused
// otherwise.
struct QuarterJoin {
    double *totals = nullptr;
    unsigned *counts = nullptr;
};
// n rounded up to whole blocks of the largest tile shape (8 points a thread, 32 threads).
inline int64_t quarter_points(int64_t n) { return (n + 255) / 256 * 256; }

// Electron and nuclear terms. Segments of chunks_per_segment chunks; partials: n * n_segments doubles (point-major);
// out: n doubles (a point within the singular radius of a nucleus gets NaN, which the API reports).
// shape: one of kFieldTileShapes (field_tuning.hpp; the host picks it from the tuning table or QMMM_CUDA_TILE);
// results do not depend on it. The layout is the cells': rows where c.rows is set, tiles otherwise; on tiles
// quarter_blocks (the device's row of the tuning table) picks the join, which does not change results either.
// small (words set): the values go as LL words of sequence seq to words[2i], [2i + 1] (mapped host memory, polled by
// the host) instead of out: a small call needs no copy back and no stream synchronisation.
struct SmallOut {
    unsigned long long *words = nullptr;  // device view of mapped host memory, 2 n LL words
    unsigned seq = 0;
};
cudaError_t launch_throughput(int precision, const DeviceCells &c, int chunks_per_segment, int n_segments,
                              int64_t n, const double *xyz, double *partials, double *out, TileShape shape,
                              bool quarter_blocks, QuarterJoin join, cudaStream_t s, SmallOut small = {});

}  // namespace qmmm::cuda::field
