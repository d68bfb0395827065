// field_gpu_kernels.cu -- the throughput path of the embedding field: cells tiled through shared memory against
// several points a thread, a chunk's quarters joined in a fixed order, then a segment sum with the nuclear term.
// The pair terms per precision are field_pair_gpu.cuh's; the latency paths are field_latency_gpu_kernels.cu and
// field_persistent_gpu_kernels.cu; the tile shapes and layouts the host picks are field_tuning_gpu.cuh's.
#include <type_traits>

#include "field_gpu.cuh"
#include "field_pair_gpu.cuh"
#include "field_tuning_gpu.cuh"
#include "qmmm_accel.h"

namespace qmmm::cuda::field {
namespace {

// ---------------------------------------------------------------- throughput path
// One quarter's partials of P points from the tile in shared memory, no per-pair test. With TRACK (MIXED's
// careful loop) the smallest d2 per point is kept as well; the partials are the same bits either way.
template <int PREC, int P, bool TRACK>
__device__ __forceinline__ void quarter_sum(const typename Traits<PREC>::Cell *s,
                                            const typename Traits<PREC>::F (*q)[kPointWords<PREC>],
                                            typename Traits<PREC>::Acc *part, float *dmin) {
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    float corr[P];  // MIXED
#pragma unroll
    for (int k = 0; k < P; ++k) part[k] = 0, corr[k] = 0, dmin[k] = 3.0e38f;
#pragma unroll 2
    for (int j = 0; j < kQuarter; j += kRun) {
        F run[P];
#pragma unroll
        for (int k = 0; k < P; ++k) run[k] = 0;
#pragma unroll
        for (int r = 0; r < kRun; ++r) {
            const auto cell = s[j + r];
#pragma unroll
            for (int k = 0; k < P; ++k) {
                const F d2 = dist2<PREC>(q[k], cell);
                if constexpr (PREC == QMMM_PRECISION_MIXED) {
                    if constexpr (TRACK) dmin[k] = fminf(dmin[k], d2);
                    mixed_term(cell.h.w, d2, run[k], corr[k]);
                } else if constexpr (PREC == QMMM_PRECISION_DOUBLE) {
                    run[k] += double_term(cell.w, d2);
                } else {
                    run[k] = fmaf(cell.w, rs(d2), run[k]);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] += static_cast<Acc>(run[k]);
    }
    if constexpr (PREC == QMMM_PRECISION_MIXED) {
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] += 0.5 * static_cast<double>(corr[k]);
    }
}

// A quarter's partial again with the singular rule on every pair (SINGLE, DOUBLE; full-precision 1/r in DOUBLE).
template <int PREC>
__device__ __noinline__ typename Traits<PREC>::Acc quarter_exact(const typename Traits<PREC>::Cell *s,
                                                                  const PointWords<PREC> pw,
                                                                  typename Traits<PREC>::F self) {
    const auto *q = pw.v;
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    const F eps2 = static_cast<F>(kEps2);
    Acc part = 0;
    for (int j = 0; j < kQuarter; j += kRun) {
        F run = 0;
        for (int r = 0; r < kRun; ++r) {
            const auto cell = s[j + r];
            const F d2 = dist2<PREC>(q, cell);
            run += cell.w * (d2 < eps2 ? self : rs(d2));
        }
        part += static_cast<Acc>(run);
    }
    return part;
}

// MIXED: a quarter's partial again, with the cells near the point in double (g: the quarter in cells64;
// p: the point, absolute). Same runs as quarter_sum; near terms go into their own double sum.
__device__ __noinline__ double quarter_near_mixed(const MixedCell *s, const PointWords<QMMM_PRECISION_MIXED> pw,
                                                  const Cell64 *g, const double px, const double py, const double pz,
                                                  double self) {
    const float *q = pw.v;
    const double p[3] = {px, py, pz};
    double part = 0, near = 0;
    float corr = 0;
    for (int j = 0; j < kQuarter; j += kRun) {
        float run = 0;
        for (int r = 0; r < kRun; ++r)
            mixed_careful(s[j + r], dist2<QMMM_PRECISION_MIXED>(q, s[j + r]), g + j + r, p, self, run, corr, near);
        part += static_cast<double>(run);
    }
    return (part + 0.5 * static_cast<double>(corr)) + near;
}

// SINGLE and DOUBLE on lattice cells: a quarter's partials of P points by rows (cells with one y and z). The row's
// dy^2 + dz^2 is computed once per point, so a pair costs a subtraction and a fused multiply-add for r^2 instead of
// six operations (the DCS kernel's lattice trick): SINGLE FADD + FFMA + MUFU.RSQ + FFMA, DOUBLE 8 FP64 operations
// against 12 (double_term's correction, with its product and sum fused). Coordinates are offsets from the chunk
// origin (SINGLE: the chunk's centre, so float rounding scales with the chunk, ~2 bohr, not the box; DOUBLE: 0).
template <int PREC>
using RowCell = std::conditional_t<PREC == QMMM_PRECISION_SINGLE, float2, double2>;

template <int PREC, int P>
__device__ __forceinline__ void row_quarter_sum(const RowHead<typename Traits<PREC>::F> *rows, int n_rows,
                                                const RowCell<PREC> *cells, const typename Traits<PREC>::F (*q)[3],
                                                typename Traits<PREC>::F *part) {
    using F = typename Traits<PREC>::F;
#pragma unroll
    for (int k = 0; k < P; ++k) part[k] = 0;
    for (int r = 0; r < n_rows; ++r) {
        const RowHead<F> h = rows[r];
        F s[P], run[P];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const F dy = q[k][1] - h.y, dz = q[k][2] - h.z;
            s[k] = fma(dz, dz, dy * dy), run[k] = 0;
        }
#pragma unroll 2
        for (int j = h.first; j < h.end; ++j) {
            const RowCell<PREC> c = cells[j];
#pragma unroll
            for (int k = 0; k < P; ++k) {
                const F dx = q[k][0] - c.x, d2 = fma(dx, dx, s[k]);
                if constexpr (PREC == QMMM_PRECISION_SINGLE) {
                    run[k] = fmaf(c.y, rs(d2), run[k]);
                } else {
                    const double y0 = rs_seed(d2), e = fma(-d2, y0 * y0, 1.0);
                    run[k] = fma(c.y * y0, fma(e, fma(e, 0.375, 0.5), 1.0), run[k]);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] += run[k];
    }
}

// The same sum for one point with the singular rule on every pair (full-precision 1/r in DOUBLE).
template <int PREC>
__device__ __noinline__ typename Traits<PREC>::F row_quarter_exact(const RowHead<typename Traits<PREC>::F> *rows,
                                                                    int n_rows, const RowCell<PREC> *cells,
                                                                    const PointWords<PREC> pw,
                                                                    typename Traits<PREC>::F self) {
    using F = typename Traits<PREC>::F;
    const F eps2 = static_cast<F>(kEps2);
    F part = 0;
    for (int r = 0; r < n_rows; ++r) {
        const RowHead<F> h = rows[r];
        const F dy = pw.v[1] - h.y, dz = pw.v[2] - h.z, s = fma(dz, dz, dy * dy);
        F run = 0;
        for (int j = h.first; j < h.end; ++j) {
            const F dx = pw.v[0] - cells[j].x, d2 = fma(dx, dx, s);
            run += cells[j].y * (d2 < eps2 ? self : rs(d2));
        }
        part += run;
    }
    return part;
}

// MIXED on the row layout: a quarter's partials of P points (q: local_point's words) over its cells in row order,
// in runs of kRun as quarter_sum (a fixed trip count: the four groups of a block finish together). A cell that
// starts a row (its w: the row's index, the same for every lane) has the row's s = dy^2 + dz^2 formed first, as
// dist2 forms it (a (a + 2b) per axis onto the mean |b|^2); then d^2 = ax (ax + 2bx) + s costs 3 FADD and an FFMA,
// and a pair the MUFU.RSQ and mixed_term's Newton step besides: 10 instructions against ~19 in the tile loop. With
// TRACK the smallest d2 per point is kept (the partials are the same bits either way).
template <int P, bool TRACK>
__device__ __forceinline__ void mixed_row_quarter_sum(const float4 *heads, const float4 *cells, const float (*q)[7],
                                                      double *part, float *dmin) {
    float corr[P], s[P];
#pragma unroll
    for (int k = 0; k < P; ++k) part[k] = 0, corr[k] = 0, dmin[k] = 3.0e38f, s[k] = 0;
#pragma unroll 2
    for (int j = 0; j < kQuarter; j += kRun) {
        float run[P];
#pragma unroll
        for (int k = 0; k < P; ++k) run[k] = 0;
#pragma unroll
        for (int r = 0; r < kRun; ++r) {
            const float4 c = cells[j + r];
            const int row = __float_as_int(c.w);
            if (row >= 0) {
                const float4 h = heads[row];
#pragma unroll
                for (int k = 0; k < P; ++k) {
                    const float ay = q[k][1] - h.x, az = q[k][2] - h.y, by = q[k][4] - h.z, bz = q[k][5] - h.w;
                    s[k] = fmaf(az, az + bz, fmaf(ay, ay + by, q[k][6]));
                }
            }
#pragma unroll
            for (int k = 0; k < P; ++k) {
                const float ax = q[k][0] - c.x, bx = q[k][3] - c.y, d2 = fmaf(ax, ax + bx, s[k]);
                if constexpr (TRACK) dmin[k] = fminf(dmin[k], d2);
                mixed_term(c.z, d2, run[k], corr[k]);
            }
        }
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] += static_cast<double>(run[k]);
    }
#pragma unroll
    for (int k = 0; k < P; ++k) part[k] += 0.5 * static_cast<double>(corr[k]);
}

// A chunk's quarter partials joined in group 0 as ((s0 + s1) + s2) + s3 and added to its totals; the block waits
// for every group's partial first (tile_kernel, row_tile_kernel).
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

// SINGLE and DOUBLE on the tile layout (MIXED: mixed_quarter_kernel). Block (x, y) = kSub groups of G threads;
// group g sums quarter g of every chunk of segment y for the block's G * P points (thread lane l has points l,
// l + G, ...). A point's chunk partial is ((s0 + s1) + s2) + s3 over the groups: the same for every G and P, and
// four times the parallelism of one thread per point and chunk (small batches still fill the GPU). G is a
// multiple of 32, so a warp lies in one group and every branch on the quarter is uniform in it.
template <int PREC, int P, int G>
__global__ void __launch_bounds__(kSub * G, Traits<PREC>::kMinBlocks * 128 / (kSub * G))
    tile_kernel(DeviceCells c, int chunks_per_segment, int64_t n, const double *__restrict__ xyz,
                double *__restrict__ part) {
    static_assert(PREC != QMMM_PRECISION_MIXED, "MIXED takes mixed_quarter_kernel");
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    using Cell = typename Traits<PREC>::Cell;
    constexpr int T = kSub * G;
    static_assert(G % 32 == 0, "a warp must lie in one group");
    __shared__ Cell tile[kChunk];
    __shared__ Acc red[kSub - 1][G * P];
    const int seg = blockIdx.y, sub = threadIdx.x / G, lane = threadIdx.x % G;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * G * P + lane;
    double pt[P][3];
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int64_t i = min(first + static_cast<int64_t>(k) * G, n - 1);
        for (int d = 0; d < 3; ++d) pt[k][d] = xyz[3 * i + d];
    }
    Acc total[P];
#pragma unroll
    for (int k = 0; k < P; ++k) total[k] = 0;
    const int64_t ch0 = static_cast<int64_t>(seg) * chunks_per_segment;
    const int64_t ch1 = min(ch0 + chunks_per_segment, c.n_chunks);
    const F self = static_cast<F>(c.self);
    const Cell *mine = tile + sub * kQuarter;
    for (int64_t ch = ch0; ch < ch1; ++ch) {
        __syncthreads();  // the previous chunk's tile and red are no longer read
        const Cell *src = static_cast<const Cell *>(c.cells) + ch * kChunk;
        for (int j = threadIdx.x; j < kChunk; j += T) tile[j] = src[j];
        __syncthreads();
        F q[P][kPointWords<PREC>];
#pragma unroll
        for (int k = 0; k < P; ++k) local_point<PREC>(c, ch, pt[k], q[k]);
        const QuarterInfo info = c.quarters[ch * kSub + sub];
        Acc partial[P];
        float dmin[P];
        bool suspect[P];
        // bound 0: charges of both signs in the quarter, where a large term could be cancelled -- every point takes
        // the careful sum.
        if (info.bound > 0.0f) {
            quarter_sum<PREC, P, false>(mine, q, partial, dmin);
#pragma unroll
            for (int k = 0; k < P; ++k) suspect[k] = !(fabs(partial[k]) < static_cast<Acc>(info.bound));
        } else {
#pragma unroll
            for (int k = 0; k < P; ++k) suspect[k] = true;
        }
#pragma unroll
        for (int k = 0; k < P; ++k) {
            if (suspect[k]) {
                PointWords<PREC> pw;
#pragma unroll
                for (int w = 0; w < kPointWords<PREC>; ++w) pw.v[w] = q[k][w];
                partial[k] = quarter_exact<PREC>(mine, pw, self);
            }
        }
        join_quarters<Acc, P, G>(partial, red, sub, lane, total);
    }
    store_totals<Acc, P, G>(total, sub, first, seg, n, part);
}

// MIXED: whether a point of the warp lies within the near radius of the quarter's sphere (QuarterInfo::box), plus room
// for the float rounding of the test itself. Such a warp keeps the smallest d2 of each point; a point with a cell
// inside the near radius has the quarter summed again with the near cells in double (quarter_near_mixed).
template <int P>
__device__ __forceinline__ bool warp_near(const float (*q)[kPointWords<QMMM_PRECISION_MIXED>], const float4 &box) {
    bool near = false;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const float dx = fmaf(0.5f, q[k][3], q[k][0]) - box.x, dy = fmaf(0.5f, q[k][4], q[k][1]) - box.y,
                    dz = fmaf(0.5f, q[k][5], q[k][2]) - box.z;
        near |= sqrtf(dx * dx + dy * dy + dz * dz) < box.w + kNearTest;
    }
    return __any_sync(0xffffffffu, near);
}

// MIXED on the tile layout: one block per chunk quarter. Block (x, y, z) = G threads that sum quarter z of every
// chunk of segment y for the block's G * P points (thread l has points l, l + G, ...), each chunk's quarter as
// tile_kernel's group z does. The kSub blocks of a group of points and segment meet through
// global memory: each writes its totals (over the segment's chunks) and counts itself in; the last to arrive adds
// them as ((T0 + T1) + T2) + T3, writes the segment's partials and sets the counter back to zero. Integer atomics
// only; with one chunk a segment (fields below 512 Ki cells) these are tile_kernel's bits. No warp waits for
// another: in tile_kernel's blocks of four groups a warp with a point near a cell (the careful sum) held the other
// three at the block's barrier, 34 % of MIXED's stall cycles there. Against tile_kernel on an H200: MIXED 5-8 %
// faster; SINGLE 4-6 % slower (more waits on the MUFU queue) and DOUBLE the same, so they keep tile_kernel; blocks
// that loop over several segments (fewer, longer-lived blocks) were 14 % slower (docs/design/gpu-kernels.md).
template <int P, int G>
__global__ void __launch_bounds__(G, Traits<QMMM_PRECISION_MIXED>::kMinBlocks * 128 / G)
    mixed_quarter_kernel(DeviceCells c, int chunks_per_segment, int n_segments, int64_t n,
                         const double *__restrict__ xyz, double *__restrict__ part, QuarterJoin join) {
    constexpr int PREC = QMMM_PRECISION_MIXED;
    __shared__ MixedCell tile[kQuarter];
    __shared__ unsigned arrived;
    const int sub = blockIdx.z, lane = threadIdx.x;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * G * P + lane;
    // A point's coordinates are read again for each chunk (L1 hits) rather than kept in double registers.
    auto point = [&](int k) { return xyz + 3 * min(first + static_cast<int64_t>(k) * G, n - 1); };
    const int seg = blockIdx.y;
    double total[P];
#pragma unroll
    for (int k = 0; k < P; ++k) total[k] = 0;
    const int64_t ch0 = static_cast<int64_t>(seg) * chunks_per_segment;
    const int64_t ch1 = min(ch0 + chunks_per_segment, c.n_chunks);
    for (int64_t ch = ch0; ch < ch1; ++ch) {
        __syncthreads();  // the previous quarter is no longer read
        const MixedCell *src = static_cast<const MixedCell *>(c.cells) + ch * kChunk + sub * kQuarter;
        for (int j = lane; j < kQuarter; j += G) tile[j] = src[j];
        __syncthreads();
        float q[P][kPointWords<PREC>];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const double *x = point(k);
            const double p[3] = {__ldg(x), __ldg(x + 1), __ldg(x + 2)};
            local_point<PREC>(c, ch, p, q[k]);
        }
        const QuarterInfo info = c.quarters[ch * kSub + sub];
        double partial[P];
        float dmin[P];
        if (warp_near<P>(q, info.box)) quarter_sum<PREC, P, true>(tile, q, partial, dmin);
        else quarter_sum<PREC, P, false>(tile, q, partial, dmin);
#pragma unroll
        for (int k = 0; k < P; ++k) {
            if (dmin[k] < kNearRadius2 || isnan(partial[k])) {
                PointWords<PREC> pw;
#pragma unroll
                for (int w = 0; w < kPointWords<PREC>; ++w) pw.v[w] = q[k][w];
                const double *x = point(k);
                partial[k] = quarter_near_mixed(tile, pw, c.cells64 + ch * kChunk + sub * kQuarter, x[0], x[1], x[2],
                                                c.self);
            }
            total[k] += partial[k];
        }
    }
    // The join (CUDA's threadFenceReduction pattern): totals out, fence, count in; the last block reads all four.
    const int64_t group = static_cast<int64_t>(seg) * gridDim.x + blockIdx.x;
    double *totals = join.totals + group * kSub * (G * P);
#pragma unroll
    for (int k = 0; k < P; ++k) totals[sub * (G * P) + lane + k * G] = total[k];
    __threadfence();
    __syncthreads();
    if (lane == 0) arrived = atomicAdd(&join.counts[group], 1u);
    __syncthreads();
    if (arrived != kSub - 1) return;  // the same for the whole block
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

// tile_kernel for SINGLE and DOUBLE on the row layout (DeviceCells::rows): the same blocks, segments and quarter
// order, the singular rule by QuarterInfo::bound as there; the points as offsets from each chunk's origin.
template <int PREC, int P, int G>
__global__ void __launch_bounds__(kSub * G, Traits<PREC>::kMinBlocks * 128 / (kSub * G))
    row_tile_kernel(DeviceCells c, int chunks_per_segment, int64_t n, const double *__restrict__ xyz,
                    double *__restrict__ part) {
    using F = typename Traits<PREC>::F;
    constexpr int T = kSub * G;
    static_assert(G % 32 == 0, "a warp must lie in one group");
    __shared__ RowCell<PREC> cells[kChunk];
    __shared__ RowHead<F> rows[kChunk];
    __shared__ F red[kSub - 1][G * P];
    const int seg = blockIdx.y, sub = threadIdx.x / G, lane = threadIdx.x % G;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * G * P + lane;
    F total[P];
#pragma unroll
    for (int k = 0; k < P; ++k) total[k] = 0;
    const int64_t ch0 = static_cast<int64_t>(seg) * chunks_per_segment;
    const int64_t ch1 = min(ch0 + chunks_per_segment, c.n_chunks);
    const F self = static_cast<F>(c.self);
    const auto *row_cells = static_cast<const RowCell<PREC> *>(c.row_cells);
    const auto *row_heads = static_cast<const RowHead<F> *>(c.rows);
    for (int64_t ch = ch0; ch < ch1; ++ch) {
        const QuarterInfo *qi = c.quarters + ch * kSub;
        const int chunk_rows = qi[kSub - 1].row_begin + qi[kSub - 1].n_rows;
        __syncthreads();  // the previous chunk's tile and red are no longer read
        for (int j = threadIdx.x; j < kChunk; j += T) cells[j] = row_cells[ch * kChunk + j];
        for (int j = threadIdx.x; j < chunk_rows; j += T) rows[j] = row_heads[ch * kChunk + j];
        __syncthreads();
        // The points are read again for each chunk (L1 hits) rather than kept in double registers, and the opaque
        // move stops the compiler from recomputing the offsets inside the pair loop (FP64 work per pair in SINGLE).
        F q[P][3];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const int64_t i = min(first + static_cast<int64_t>(k) * G, n - 1);
            for (int d = 0; d < 3; ++d) {
                q[k][d] = static_cast<F>(__ldg(&xyz[3 * i + d]) - c.origin[3 * ch + d]);
                if constexpr (PREC == QMMM_PRECISION_SINGLE) asm volatile("mov.b32 %0, %0;" : "+f"(q[k][d]));
            }
        }
        const QuarterInfo info = qi[sub];
        F partial[P];
        bool suspect[P];
        if (info.bound > 0.0f) {  // as tile_kernel: 0 means charges of both signs, every point sums carefully
            row_quarter_sum<PREC, P>(rows + info.row_begin, info.n_rows, cells, q, partial);
#pragma unroll
            for (int k = 0; k < P; ++k) suspect[k] = !(fabs(partial[k]) < static_cast<F>(info.bound));
        } else {
#pragma unroll
            for (int k = 0; k < P; ++k) suspect[k] = true;
        }
#pragma unroll
        for (int k = 0; k < P; ++k)
            if (suspect[k])
                partial[k] = row_quarter_exact<PREC>(rows + info.row_begin, info.n_rows, cells,
                                                     PointWords<PREC>{{q[k][0], q[k][1], q[k][2]}}, self);
        join_quarters<F, P, G>(partial, red, sub, lane, total);
    }
    store_totals<F, P, G>(total, sub, first, seg, n, part);
}

// MIXED on the row layout (MixedRowHead): tile_kernel's blocks of four groups, segments and quarter order, and
// mixed_quarter_kernel's near test per warp (warp_near) and careful sum. A point with a cell inside the near radius has its quarter summed
// again by quarter_near_mixed from the tile layout's cells (global memory): its value still depends on the point only.
template <int P, int G>
__global__ void __launch_bounds__(kSub * G, Traits<QMMM_PRECISION_MIXED>::kMinBlocks * 128 / (kSub * G))
    mixed_row_kernel(DeviceCells c, int chunks_per_segment, int64_t n, const double *__restrict__ xyz,
                     double *__restrict__ part) {
    constexpr int T = kSub * G;
    static_assert(G % 32 == 0, "a warp must lie in one group");
    __shared__ float4 cells[kChunk];
    __shared__ float4 heads[kChunk];
    __shared__ double red[kSub - 1][G * P];
    const int seg = blockIdx.y, sub = threadIdx.x / G, lane = threadIdx.x % G;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * G * P + lane;
    double pt[P][3];
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int64_t i = min(first + static_cast<int64_t>(k) * G, n - 1);
        for (int d = 0; d < 3; ++d) pt[k][d] = xyz[3 * i + d];
    }
    double total[P];
#pragma unroll
    for (int k = 0; k < P; ++k) total[k] = 0;
    const int64_t ch0 = static_cast<int64_t>(seg) * chunks_per_segment;
    const int64_t ch1 = min(ch0 + chunks_per_segment, c.n_chunks);
    const auto *row_cells = static_cast<const float4 *>(c.row_cells);
    const auto *row_heads = static_cast<const float4 *>(c.rows);
    const auto *tiles = static_cast<const MixedCell *>(c.cells);
    for (int64_t ch = ch0; ch < ch1; ++ch) {
        const QuarterInfo *qi = c.quarters + ch * kSub;
        const int chunk_rows = qi[kSub - 1].row_begin + qi[kSub - 1].n_rows;
        __syncthreads();  // the previous chunk's rows and red are no longer read
        for (int j = threadIdx.x; j < kChunk; j += T) cells[j] = row_cells[ch * kChunk + j];
        for (int j = threadIdx.x; j < chunk_rows; j += T) heads[j] = row_heads[ch * kChunk + j];
        __syncthreads();
        float q[P][kPointWords<QMMM_PRECISION_MIXED>];
#pragma unroll
        for (int k = 0; k < P; ++k) local_point<QMMM_PRECISION_MIXED>(c, ch, pt[k], q[k]);
        const QuarterInfo info = qi[sub];
        double partial[P];
        float dmin[P];
        const float4 *mine = cells + sub * kQuarter;
        if (warp_near<P>(q, info.box)) mixed_row_quarter_sum<P, true>(heads, mine, q, partial, dmin);
        else mixed_row_quarter_sum<P, false>(heads, mine, q, partial, dmin);
#pragma unroll
        for (int k = 0; k < P; ++k) {
            if (dmin[k] < kNearRadius2 || isnan(partial[k])) {
                PointWords<QMMM_PRECISION_MIXED> pw;
#pragma unroll
                for (int w = 0; w < 6; ++w) pw.v[w] = q[k][w];
                const int64_t at = ch * kChunk + sub * kQuarter;
                partial[k] = quarter_near_mixed(tiles + at, pw, c.cells64 + at, pt[k][0], pt[k][1], pt[k][2], c.self);
            }
        }
        join_quarters<double, P, G>(partial, red, sub, lane, total);
    }
    store_totals<double, P, G>(total, sub, first, seg, n, part);
}

// One warp per point: u[i] = its segment partials (lanes take segments lane, lane + 32, ...) plus MIXED's heavy cells
// (double, the cells' singular rule) minus the nuclear term (double, lanes over nuclei), each summed lanes-then-butterfly
// in a fixed order. A point within the singular radius of a nucleus gets NaN (the API reports it with the nucleus).
template <int PREC>
__global__ void __launch_bounds__(256) segment_sum_kernel(const double *__restrict__ part, int n_segments, int64_t n,
                                                         const double *__restrict__ xyz, DeviceCells c,
                                                         double *__restrict__ out) {
    using Acc = typename Traits<PREC>::Acc;
    const int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (i >= n) return;  // i is the same for the whole warp
    Acc s = 0;
    const double *mine = part + i * n_segments;
    for (int g = lane; g < n_segments; g += 32) s += static_cast<Acc>(mine[g]);
    s = warp_sum(s);
    const double px = xyz[3 * i], py = xyz[3 * i + 1], pz = xyz[3 * i + 2];
    auto d2_to = [&](const Cell64 &a) {
        const double dx = px - a.x, dy = py - a.y, dz = pz - a.z;
        return dx * dx + dy * dy + dz * dz;
    };
    double h = 0;
    const auto *heavy = static_cast<const Cell64 *>(c.heavy);
    for (int64_t m = lane; m < c.n_heavy; m += 32) {
        const double d2 = d2_to(heavy[m]);
        h += heavy[m].w * (d2 < kEps2 ? c.self : 1.0 / sqrt(d2));
    }
    h = warp_sum(h);
    double v = 0;
    bool on = false;
    const auto *nuc = static_cast<const Cell64 *>(c.nuclei);
    for (int64_t b = lane; b < c.n_nuclei; b += 32) {
        const double d2 = d2_to(nuc[b]);
        on |= d2 < kEps2;
        v += nuc[b].w / sqrt(d2);
    }
    v = warp_sum(v);
    on = __any_sync(0xffffffffu, on);
    if (lane == 0) out[i] = on ? __longlong_as_double(0x7ff8000000000000LL) : (static_cast<double>(s) + h) - v;
}

template <int PREC, int P, int G>
void tile(const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz, double *part, QuarterJoin join,
          cudaStream_t s) {
    const int64_t per_block = static_cast<int64_t>(G) * P;
    const dim3 grid(static_cast<unsigned>((n + per_block - 1) / per_block), static_cast<unsigned>(nseg));
    if (c.rows) {
        if constexpr (PREC == QMMM_PRECISION_MIXED) mixed_row_kernel<P, G><<<grid, kSub * G, 0, s>>>(c, cps, n, xyz, part);
        else row_tile_kernel<PREC, P, G><<<grid, kSub * G, 0, s>>>(c, cps, n, xyz, part);
        return;
    }
    if constexpr (PREC == QMMM_PRECISION_MIXED) {
        mixed_quarter_kernel<P, G><<<dim3(grid.x, grid.y, kSub), G, 0, s>>>(c, cps, nseg, n, xyz, part, join);
    } else {
        tile_kernel<PREC, P, G><<<grid, kSub * G, 0, s>>>(c, cps, n, xyz, part);
    }
}

// Every tile shape gives a point the same operations in the same order (bitwise equal results); the host picks one
// from the tuning table by batch size or QMMM_CUDA_TILE (field_tuning_gpu.cuh).
template <int PREC>
cudaError_t throughput(const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz, double *part,
                       double *out, TileShape shape, QuarterJoin join, cudaStream_t s) {
    switch (shape.points_per_thread * 1000 + shape.group_threads) {
        case 8032: tile<PREC, 8, 32>(c, cps, nseg, n, xyz, part, join, s); break;
        case 4064: tile<PREC, 4, 64>(c, cps, nseg, n, xyz, part, join, s); break;
        case 4032: tile<PREC, 4, 32>(c, cps, nseg, n, xyz, part, join, s); break;
        case 2064: tile<PREC, 2, 64>(c, cps, nseg, n, xyz, part, join, s); break;
        case 2032: tile<PREC, 2, 32>(c, cps, nseg, n, xyz, part, join, s); break;
        case 1064: tile<PREC, 1, 64>(c, cps, nseg, n, xyz, part, join, s); break;
        case 1032: tile<PREC, 1, 32>(c, cps, nseg, n, xyz, part, join, s); break;
        default: return cudaErrorInvalidValue;  // not in kTileShapes
    }
    segment_sum_kernel<PREC><<<static_cast<unsigned>((32 * n + 255) / 256), 256, 0, s>>>(
        part, nseg, n, xyz, c, out);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_throughput(int precision, const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz,
                              double *partials, double *out, TileShape shape, QuarterJoin join, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return throughput<QMMM_PRECISION_SINGLE>(c, cps, nseg, n, xyz, partials, out, shape, join, s);
        case QMMM_PRECISION_MIXED: return throughput<QMMM_PRECISION_MIXED>(c, cps, nseg, n, xyz, partials, out, shape, join, s);
        default: return throughput<QMMM_PRECISION_DOUBLE>(c, cps, nseg, n, xyz, partials, out, shape, join, s);
    }
}

}  // namespace qmmm::cuda::field
