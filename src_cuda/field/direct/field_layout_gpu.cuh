// field_layout_gpu.cuh -- the layouts of the field's throughput sweep (field_gpu_kernels.cu): how a chunk's cells sit
// in shared memory and how one chunk quarter's partials of P points are summed from them, per precision, with the
// careful sums that take over where a fast sum cannot be trusted. The sweep, the same for every layout, loads a
// chunk (Layout::chunk) and hands the partials to its join (field_join_gpu.cuh).
//
// - TileLayout: cells in chunk order, r^2 from three differences (dist2).
// - RowLayout (lattice cells, DeviceCells::rows): a quarter's cells in rows of one (y, z); a row's dy^2 + dz^2 once
//   per point, then a subtraction and a fused multiply-add per pair.
// The pair terms are field_pair_gpu.cuh's (Pair<PREC>).
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "direct/field_careful_gpu.cuh"
#include "direct/field_gpu.cuh"
#include "direct/field_pair_gpu.cuh"

namespace qmmm::cuda::field {
namespace {

// ---------------------------------------------------------------- quarter sums
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
                if constexpr (PREC == QMMM_PRECISION_MIXED && TRACK) dmin[k] = fminf(dmin[k], d2);
                Pair<PREC>::tile(cell, d2, run[k], corr[k]);
            }
        }
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] += static_cast<Acc>(run[k]);
    }
#pragma unroll
    for (int k = 0; k < P; ++k) part[k] = Pair<PREC>::finish(part[k], corr[k]);
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
    float unused = 0;  // MIXED's correction, none here
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
                Pair<PREC>::row(c.y, d2, run[k], unused);
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
    F part = 0;
    for (int r = 0; r < n_rows; ++r) {
        const RowHead<F> h = rows[r];
        const F dy = pw.v[1] - h.y, dz = pw.v[2] - h.z, s = fma(dz, dz, dy * dy);
        F run = 0;
        for (int j = h.first; j < h.end; ++j) {
            const F dx = pw.v[0] - cells[j].x, d2 = fma(dx, dx, s);
            run += Pair<PREC>::exact(cells[j].y, d2, self);
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
                Pair<QMMM_PRECISION_MIXED>::row(c.z, d2, run[k], corr[k]);
            }
        }
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] += static_cast<double>(run[k]);
    }
#pragma unroll
    for (int k = 0; k < P; ++k) part[k] = Pair<QMMM_PRECISION_MIXED>::finish(part[k], corr[k]);
}

// ---------------------------------------------------------------- the points a thread keeps across chunks
// Thread lane l of a group has points first + k G (k < P), the last point repeated past n. Two ways to hold them,
// as measured per layout and precision (below):
// - HeldPoints: read once into double registers;
// - ReadPoints: read again for each chunk (L1 hits), which leaves the registers to the pair loop.
template <int P, int G>
struct HeldPoints {
    double pt[P][3];
    __device__ __forceinline__ HeldPoints(const double *__restrict__ xyz, int64_t first, int64_t n) {
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const int64_t i = min(first + static_cast<int64_t>(k) * G, n - 1);
            for (int d = 0; d < 3; ++d) pt[k][d] = xyz[3 * i + d];
        }
    }
    __device__ __forceinline__ const double *at(int k) const { return pt[k]; }
};
template <int P, int G>
struct ReadPoints {
    const double *__restrict__ xyz;
    int64_t first, n;
    __device__ __forceinline__ ReadPoints(const double *__restrict__ x, int64_t f, int64_t m) : xyz(x), first(f), n(m) {}
    __device__ __forceinline__ const double *at(int k) const {
        return xyz + 3 * min(first + static_cast<int64_t>(k) * G, n - 1);
    }
};

// ---------------------------------------------------------------- layout policies
// A layout policy gives the sweep:
// - Acc: the type of a quarter's partial; kMinBlocks: the occupancy bound (Traits, field_tuning.hpp);
// - Points<P, G>: how a thread holds its points;
// - Tile<QUARTER>: its shared memory (a whole chunk, or with QUARTER one quarter: one-quarter blocks);
// - chunk<P, G, THREADS, QUARTER>(c, ch, sub, tile, points, partial, done): loads chunk ch (between two barriers of
//   the block's THREADS threads), writes quarter sub's partial of each of the thread's P points and calls done(k,
//   partial[k]) as each point's partial is final (a join that keeps running totals adds it there). A point's partial
//   is the same bits for every P, G and join.

// The tile layout. SINGLE and DOUBLE: points held in registers. MIXED: points read again for each chunk (they take 7
// float words a chunk besides). Where the fast sum cannot be trusted, the precision's careful-sum policy
// (Careful<PREC>, field_careful_gpu.cuh) sums the quarter again from the tile.
template <int PREC>
struct TileLayout {
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    using Cell = typename Traits<PREC>::Cell;
    static constexpr int kMinBlocks = Traits<PREC>::kMinBlocks;
    template <int P, int G>
    using Points = std::conditional_t<PREC == QMMM_PRECISION_MIXED, ReadPoints<P, G>, HeldPoints<P, G>>;
    template <bool QUARTER>
    struct Tile {
        Cell cell[QUARTER ? kQuarter : kChunk];
    };

    template <int P, int G, int THREADS, bool QUARTER, class Done>
    __device__ static __forceinline__ void chunk(const DeviceCells &c, int64_t ch, int sub, Tile<QUARTER> &tile,
                                                 const Points<P, G> &pts, Acc *partial, Done &&done) {
        __syncthreads();  // the previous chunk's tile (and the join's shared memory) are no longer read
        const Cell *src = static_cast<const Cell *>(c.cells) + ch * kChunk + (QUARTER ? sub * kQuarter : 0);
        for (int j = threadIdx.x; j < (QUARTER ? kQuarter : kChunk); j += THREADS) tile.cell[j] = src[j];
        __syncthreads();
        const Cell *mine = tile.cell + (QUARTER ? 0 : sub * kQuarter);
        F q[P][kPointWords<PREC>];
#pragma unroll
        for (int k = 0; k < P; ++k) {
            if constexpr (PREC == QMMM_PRECISION_MIXED) {
                const double *x = pts.at(k);
                const double p[3] = {__ldg(x), __ldg(x + 1), __ldg(x + 2)};
                local_point<PREC>(c, ch, p, q[k]);
            } else {
                local_point<PREC>(c, ch, pts.at(k), q[k]);
            }
        }
        const int64_t at = ch * kChunk + sub * kQuarter;
        careful_quarter<PREC, P>(
            c.quarters[ch * kSub + sub], q, partial,
            [&](auto track, float *dmin) { quarter_sum<PREC, P, decltype(track)::value>(mine, q, partial, dmin); },
            [&](int k) { return Careful<PREC>::quarter(mine, point_words<PREC>(q[k]), c, at, pts.at(k)); }, done);
    }
};

// The row layout (lattice cells): blocks of four quarters only (a row's head is chunk-local). SINGLE and DOUBLE:
// points read again for each chunk as offsets from its origin; a point's careful sum runs over the rows
// (row_quarter_exact). MIXED: points held in registers; a point's careful sum is Careful<MIXED>::quarter over the tile
// layout's cells (global memory). When each is taken is the precision's policy (field_careful_gpu.cuh), as on tiles.
template <int PREC>
struct RowLayout {
    static constexpr bool kMixed = PREC == QMMM_PRECISION_MIXED;
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    using Cell = std::conditional_t<kMixed, float4, RowCell<PREC>>;
    using Head = std::conditional_t<kMixed, float4, RowHead<F>>;
    static constexpr int kMinBlocks = Traits<PREC>::kMinBlocks;
    template <int P, int G>
    using Points = std::conditional_t<kMixed, HeldPoints<P, G>, ReadPoints<P, G>>;
    template <bool QUARTER>
    struct Tile {
        static_assert(!QUARTER, "the row layout takes blocks of four quarters");
        Cell cells[kChunk];
        Head heads[kChunk];
    };

    template <int P, int G, int THREADS, bool QUARTER, class Done>
    __device__ static __forceinline__ void chunk(const DeviceCells &c, int64_t ch, int sub, Tile<QUARTER> &tile,
                                                 const Points<P, G> &pts, Acc *partial, Done &&done) {
        const QuarterInfo *qi = c.quarters + ch * kSub;
        const int chunk_rows = qi[kSub - 1].row_begin + qi[kSub - 1].n_rows;
        __syncthreads();  // the previous chunk's rows (and the join's shared memory) are no longer read
        const auto *row_cells = static_cast<const Cell *>(c.row_cells);
        const auto *row_heads = static_cast<const Head *>(c.rows);
        for (int j = threadIdx.x; j < kChunk; j += THREADS) tile.cells[j] = row_cells[ch * kChunk + j];
        for (int j = threadIdx.x; j < chunk_rows; j += THREADS) tile.heads[j] = row_heads[ch * kChunk + j];
        __syncthreads();
        if constexpr (kMixed) {
            float q[P][kPointWords<QMMM_PRECISION_MIXED>];
#pragma unroll
            for (int k = 0; k < P; ++k) local_point<QMMM_PRECISION_MIXED>(c, ch, pts.at(k), q[k]);
            const QuarterInfo info = qi[sub];
            const float4 *mine = tile.cells + sub * kQuarter;
            const int64_t at = ch * kChunk + sub * kQuarter;
            careful_quarter<PREC, P>(
                info, q, partial,
                [&](auto track, float *dmin) {
                    mixed_row_quarter_sum<P, decltype(track)::value>(tile.heads, mine, q, partial, dmin);
                },
                [&](int k) {
                    return Careful<PREC>::quarter(static_cast<const MixedCell *>(c.cells) + at,
                                                  point_words<PREC>(q[k]), c, at, pts.at(k));
                },
                done);
        } else {
            // The opaque move stops the compiler from recomputing the offsets inside the pair loop (FP64 work per
            // pair in SINGLE).
            F q[P][3];
#pragma unroll
            for (int k = 0; k < P; ++k) {
                const double *x = pts.at(k);
                for (int d = 0; d < 3; ++d) {
                    q[k][d] = static_cast<F>(__ldg(&x[d]) - c.origin[3 * ch + d]);
                    if constexpr (PREC == QMMM_PRECISION_SINGLE) asm volatile("mov.b32 %0, %0;" : "+f"(q[k][d]));
                }
            }
            const QuarterInfo info = qi[sub];
            careful_quarter<PREC, P>(
                info, q, partial,
                [&](auto, float *) {
                    row_quarter_sum<PREC, P>(tile.heads + info.row_begin, info.n_rows, tile.cells, q, partial);
                },
                [&](int k) {
                    return row_quarter_exact<PREC>(tile.heads + info.row_begin, info.n_rows, tile.cells,
                                                   point_words<PREC>(q[k]), static_cast<F>(c.self));
                },
                done);
        }
    }
};

}  // namespace
}  // namespace qmmm::cuda::field
