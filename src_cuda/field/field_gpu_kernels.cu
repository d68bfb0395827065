// field_gpu_kernels.cu -- the embedding-field kernels: a latency path (one launch for a few points) and a
// throughput path (cells tiled through shared memory, several points per thread).
//
// Precision semantics follow src_cxx/field/field_cpu.cpp: SINGLE = float terms and sums; MIXED = float pair
// terms from offsets to the chunk's double origin, double accumulation (the throughput path adds runs of
// kRun float terms, then the run into a double); DOUBLE throughout.
//
// MIXED accuracy (max |u - u_double| / sum|terms| <= 1e-8, and errors that average out over points: a VMC
// energy adds 10^6 values). Systematic float errors removed: (1) MUFU.RSQ (rsqrt.approx) has a relative
// error up to ~2^-22.9 that is not zero on average: one Newton step, q/r = q y0 + (q y0 e)/2 with
// e = 1 - d2 y0^2 (mixed_term). The correction q y0 e is ~1 ulp of the term, so it is summed in its own
// float (corr) over the chunk: added to the run of terms, most of it was rounded away and the MUFU bias
// stayed (-6.7e-9 hartree per point on the water dimer, test MixedErrorsAverageOutOnWaterDimer).
// (2) Offsets of the point and of the cells from the chunk origin are hi + lo float pairs with hi on a
// 2^-16 bohr grid (field_mixed_cells, shared with the CPU): hi - hi is exact, so neither is rounded the
// same way for many points (a plain float difference snaps the cell to the grid of ulp(|point offset|):
// +2.2e-9 hartree per point on the water dimer). (3) Float charges are error-diffused within a chunk.
// (4) Cells within kNearRadius2 of the point are summed in double (chunk_near_mixed): a near term can be
// most of the sum.
// No floating-point atomics: the only atomic is the integer "blocks done" counter of the latency path.
#include <cub/block/block_reduce.cuh>

#include "field_gpu.cuh"
#include "qmmm_accel.h"

namespace qmmm::cuda::field {
namespace {

constexpr int kRun = 8;
// The throughput path splits each chunk into kSub ranges summed by different threads.
constexpr int kSub = 4;
constexpr int kSubCells = kChunk / kSub;
constexpr double kEps2 = kSingularRadius2;

template <int PREC>
struct Traits;
template <>
struct Traits<QMMM_PRECISION_SINGLE> {
    using Cell = float4;
    using F = float;
    using Acc = float;
};
template <>
struct Traits<QMMM_PRECISION_MIXED> {
    using Cell = MixedCell;
    using F = float;
    using Acc = double;
};
template <>
struct Traits<QMMM_PRECISION_DOUBLE> {
    using Cell = Cell64;
    using F = double;
    using Acc = double;
};

// MUFU.RSQ alone: the non-ftz form adds a denormal fix-up to every pair. Flushed d2 are < kEps2 anyway.
__device__ __forceinline__ float rs(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ double rs(double x) { return rsqrt(x); }

// The point as the precision sees it against chunk ch: q[0..2] (and in MIXED q[3..5], the low parts of
// the offset from the chunk origin: offset = q[k] + q[k + 3]).
template <int PREC>
__device__ __forceinline__ void local_point(const DeviceCells &c, int64_t ch, const double *p,
                                            typename Traits<PREC>::F *q) {
    if constexpr (PREC == QMMM_PRECISION_MIXED) {
        // hi on the grid of the cells' hi parts (field_mixed_split), so hi - cell hi is exact.
        for (int k = 0; k < 3; ++k) qmmm::field_mixed_split(p[k] - c.origin[3 * ch + k], q[k], q[k + 3]);
    } else {
        for (int k = 0; k < 3; ++k) q[k] = static_cast<typename Traits<PREC>::F>(p[k]);
    }
}

// Number of point components local_point writes.
template <int PREC>
constexpr int kPointWords = PREC == QMMM_PRECISION_MIXED ? 6 : 3;

// A point's words by value: the careful paths are __noinline__, and a pointer argument would put the
// caller's point array in local memory.
template <int PREC>
struct PointWords {
    typename Traits<PREC>::F v[kPointWords<PREC>];
};

// Squared distance from the point q to a cell.
template <int PREC, class Cell, class F>
__device__ __forceinline__ F dist2(const F *q, const Cell &cell) {
    if constexpr (PREC == QMMM_PRECISION_MIXED) {
        // hi - hi exact (both on the grid), then the low parts: no fixed error per cell
        const F dx = (q[0] - cell.h.x) + (q[3] - cell.l.x), dy = (q[1] - cell.h.y) + (q[4] - cell.l.y),
                dz = (q[2] - cell.h.z) + (q[5] - cell.l.z);
        return dx * dx + dy * dy + dz * dz;
    } else {
        const F dx = q[0] - cell.x, dy = q[1] - cell.y, dz = q[2] - cell.z;
        return dx * dx + dy * dy + dz * dz;
    }
}

// MIXED pair term: y0 = MUFU 1/sqrt(d2), e = 1 - d2 y0^2; q / r = q y0 (1 + e/2): q y0 goes into the run,
// q y0 e into corr (the caller adds corr / 2 once per chunk).
__device__ __forceinline__ void mixed_term(float q, float d2, float &run, float &corr) {
    const float y0 = rs(d2);
    const float e = fmaf(-(d2 * y0), y0, 1.0f);
    run = fmaf(q, y0, run);
    corr = fmaf(q * y0, e, corr);
}

// MIXED: the term of a cell near the point, in double (singular rule as the CPU double path).
__device__ __forceinline__ double near_term(const Cell64 &c, const double *p, double self) {
    const double dx = p[0] - c.x, dy = p[1] - c.y, dz = p[2] - c.z;
    const double d2 = dx * dx + dy * dy + dz * dz;
    return c.w * (d2 < kEps2 ? self : 1.0 / sqrt(d2));
}

// MIXED: one cell's term: near cells in double (into near), others in float (run, corr). d2 beyond float
// range (where the Newton step would give inf * 0) adds nothing: the term is 0 to float precision.
__device__ __forceinline__ void mixed_careful(const MixedCell &cell, float d2, const Cell64 *c64, const double *p,
                                              double self, float &run, float &corr, double &near) {
    if (d2 < kNearRadius2) near += near_term(*c64, p, self);  // the double copy is read only here
    else if (d2 <= 3.0e38f) mixed_term(cell.h.w, d2, run, corr);
}

// ---------------------------------------------------------------- latency path
template <int PREC>
__global__ void __launch_bounds__(kLatencyThreads)
    latency_kernel(DeviceCells c, LatencyPoints pts, double *part, unsigned *counter, double *out,
                   unsigned *flag, unsigned seq) {
    using T = Traits<PREC>;
    using F = typename T::F;
    using Acc = typename T::Acc;
    using Reduce = cub::BlockReduce<Acc, kLatencyThreads>;
    __shared__ typename Reduce::TempStorage tmp;
    __shared__ bool last;
    const int64_t ch = blockIdx.x, nc = gridDim.x;
    const auto *cells = static_cast<const typename T::Cell *>(c.cells) + ch * kChunk;
    const F self = static_cast<F>(c.self), eps2 = static_cast<F>(kEps2);
    for (int p = 0; p < pts.n; ++p) {
        F q[kPointWords<PREC>];
        local_point<PREC>(c, ch, &pts.xyz[3 * p], q);
        Acc a = 0;
        float corr = 0;  // MIXED
        // Consecutive threads on consecutive cells: every load is coalesced (seed Eq. 8).
#pragma unroll
        for (int j = threadIdx.x; j < kChunk; j += kLatencyThreads) {
            const auto cell = cells[j];
            const F d2 = dist2<PREC>(q, cell);
            if constexpr (PREC == QMMM_PRECISION_MIXED) {
                double near = 0;
                float t = 0;
                mixed_careful(cell, d2, &c.cells64[ch * kChunk + j], &pts.xyz[3 * p], c.self, t, corr, near);
                a += static_cast<double>(t) + near;
            } else {
                const F inv = d2 < eps2 ? self : rs(d2);
                a += static_cast<Acc>(cell.w * inv);
            }
        }
        if constexpr (PREC == QMMM_PRECISION_MIXED) a += 0.5 * static_cast<double>(corr);
        const Acc b = Reduce(tmp).Sum(a);
        if (threadIdx.x == 0) part[p * nc + ch] = static_cast<double>(b);
        __syncthreads();
    }
    // The last block to finish adds the chunk partials in a fixed order (no second launch).
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(counter, 1u) == static_cast<unsigned>(nc - 1);
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (int p = 0; p < pts.n; ++p) {
        Acc a = 0;
        for (int64_t i = threadIdx.x; i < nc; i += kLatencyThreads) a += static_cast<Acc>(__ldcg(&part[p * nc + i]));
        const Acc s = Reduce(tmp).Sum(a);
        if (threadIdx.x == 0) out[p] = static_cast<double>(s);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        *counter = 0;
        // Results first, then the flag the host polls (both may be mapped host memory).
        __threadfence_system();
        *reinterpret_cast<volatile unsigned *>(flag) = seq;
    }
}

// ---------------------------------------------------------------- throughput path
// Chunk partials of P points from the tile in shared memory. The singular-cell test is taken out of the
// inner loop: each point keeps a guard, and a point whose guard says it came within the singular radius
// of a cell (or, in DOUBLE, left the range of the float seed) gets its partial recomputed by chunk_exact.
template <int PREC, int P>
__device__ __forceinline__ void chunk_fast(const typename Traits<PREC>::Cell *s, const typename Traits<PREC>::F (*q)[kPointWords<PREC>],
                                           typename Traits<PREC>::Acc *part, bool *suspect) {
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    if constexpr (PREC == QMMM_PRECISION_DOUBLE) {
        // 1/r from a float seed y0 = rsqrtf(d2) (rel. error ~1e-7) and one third-order correction:
        // with e = 1 - d2 y0^2, 1/r = y0 (1 + e/2 + 3e^2/8) + O(e^3 y0): full double precision in
        // 12 FP64 operations per pair (CUDA's rsqrt(double) costs more); the guards use the FP32 pipe.
        float ymin[P], ymax[P];
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] = 0, ymin[k] = 1e30f, ymax[k] = 0.0f;
#pragma unroll 2
        for (int j = 0; j < kSubCells; j += kRun) {
            double run[P];
#pragma unroll
            for (int k = 0; k < P; ++k) run[k] = 0;
#pragma unroll
            for (int r = 0; r < kRun; ++r) {
                const auto cell = s[j + r];
#pragma unroll
                for (int k = 0; k < P; ++k) {
                    const double dx = q[k][0] - cell.x, dy = q[k][1] - cell.y, dz = q[k][2] - cell.z;
                    const double d2 = dx * dx + dy * dy + dz * dz;
                    const float yf = rs(static_cast<float>(d2));
                    ymin[k] = fminf(ymin[k], yf), ymax[k] = fmaxf(ymax[k], yf);
                    const double y0 = yf;
                    const double e = fma(-d2, y0 * y0, 1.0);
                    run[k] = fma(cell.w * y0, fma(e, fma(e, 0.375, 0.5), 1.0), run[k]);
                }
            }
#pragma unroll
            for (int k = 0; k < P; ++k) part[k] += run[k];
        }
        // y0 >= 5e9: d2 may be < 1e-20 (singular); y0 < 1e-18: d2 > 1e36 (seed out of float range).
#pragma unroll
        for (int k = 0; k < P; ++k) suspect[k] = ymax[k] >= 5e9f || ymin[k] < 1e-18f;
    } else {
        F dmin[P], corr[P];
#pragma unroll
        for (int k = 0; k < P; ++k) part[k] = 0, dmin[k] = static_cast<F>(1e30), corr[k] = 0;
#pragma unroll 2
        for (int j = 0; j < kSubCells; j += kRun) {
            F run[P];
#pragma unroll
            for (int k = 0; k < P; ++k) run[k] = 0;
#pragma unroll
            for (int r = 0; r < kRun; ++r) {
                const auto cell = s[j + r];
#pragma unroll
                for (int k = 0; k < P; ++k) {
                    const F d2 = dist2<PREC>(q[k], cell);
                    dmin[k] = fminf(dmin[k], d2);
                    if constexpr (PREC == QMMM_PRECISION_MIXED) mixed_term(cell.h.w, d2, run[k], corr[k]);
                    else run[k] += cell.w * rs(d2);
                }
            }
#pragma unroll
            for (int k = 0; k < P; ++k) part[k] += static_cast<Acc>(run[k]);
        }
        // MIXED: a point near a cell, or a NaN partial (a d2 beyond float range), takes chunk_near_mixed.
#pragma unroll
        for (int k = 0; k < P; ++k) {
            if constexpr (PREC == QMMM_PRECISION_MIXED) {
                part[k] += 0.5 * static_cast<double>(corr[k]);
                suspect[k] = dmin[k] < kNearRadius2 || isnan(part[k]);
            }
            else suspect[k] = dmin[k] < static_cast<F>(kEps2);
        }
    }
}

template <int PREC>
__device__ __noinline__ typename Traits<PREC>::Acc chunk_exact(const typename Traits<PREC>::Cell *s,
                                                                const PointWords<PREC> pw,
                                                                typename Traits<PREC>::F self) {
    const auto *q = pw.v;
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    const F eps2 = static_cast<F>(kEps2);
    Acc part = 0;
    for (int j = 0; j < kSubCells; j += kRun) {
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
// p: the point, absolute). Same runs as chunk_fast; near terms go into their own double sum.
__device__ __noinline__ double chunk_near_mixed(const MixedCell *s, const PointWords<QMMM_PRECISION_MIXED> pw,
                                                const Cell64 *g, const double px, const double py, const double pz,
                                                double self) {
    const float *q = pw.v;
    const double p[3] = {px, py, pz};
    double part = 0, near = 0;
    float corr = 0;
    for (int j = 0; j < kSubCells; j += kRun) {
        float run = 0;
        for (int r = 0; r < kRun; ++r)
            mixed_careful(s[j + r], dist2<QMMM_PRECISION_MIXED>(q, s[j + r]), g + j + r, p, self, run, corr, near);
        part += static_cast<double>(run);
    }
    return (part + 0.5 * static_cast<double>(corr)) + near;
}

// Block (x, y) = kSub groups of G threads; group g sums cells [g * kSubCells, (g + 1) * kSubCells) of every
// chunk of segment y for the block's G * P points (thread lane l has points l, l + G, ...). A point's
// chunk partial is ((s0 + s1) + s2) + s3 over the groups: the same for every G and P, and four times the
// parallelism of one thread per point and chunk (small batches still fill the GPU).
template <int PREC, int P, int G>
__global__ void __launch_bounds__(kSub * G)
    tile_kernel(DeviceCells c, int chunks_per_segment, int64_t n, const double *__restrict__ xyz,
                double *__restrict__ part) {
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    using Cell = typename Traits<PREC>::Cell;
    constexpr int T = kSub * G;
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
    const Cell *mine = tile + sub * kSubCells;
    for (int64_t ch = ch0; ch < ch1; ++ch) {
        __syncthreads();  // the previous chunk's tile and red are no longer read
        const Cell *src = static_cast<const Cell *>(c.cells) + ch * kChunk;
        for (int j = threadIdx.x; j < kChunk; j += T) tile[j] = src[j];
        __syncthreads();
        F q[P][kPointWords<PREC>];
#pragma unroll
        for (int k = 0; k < P; ++k) local_point<PREC>(c, ch, pt[k], q[k]);
        Acc partial[P];
        bool suspect[P];
        chunk_fast<PREC, P>(mine, q, partial, suspect);
#pragma unroll
        for (int k = 0; k < P; ++k) {
            if (suspect[k]) {
                PointWords<PREC> pw;
#pragma unroll
                for (int w = 0; w < kPointWords<PREC>; ++w) pw.v[w] = q[k][w];
                if constexpr (PREC == QMMM_PRECISION_MIXED)
                    partial[k] = chunk_near_mixed(mine, pw, c.cells64 + ch * kChunk + sub * kSubCells, pt[k][0], pt[k][1],
                                                  pt[k][2], c.self);
                else
                    partial[k] = chunk_exact<PREC>(mine, pw, self);
            }
            if (sub > 0) red[sub - 1][lane + k * G] = partial[k];
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
    if (sub != 0) return;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int64_t i = first + static_cast<int64_t>(k) * G;
        if (i < n) part[static_cast<int64_t>(seg) * n + i] = static_cast<double>(total[k]);
    }
}

// u[i] = segment partials of point i added in segment order, minus the nuclear term (double, nuclei in
// order, as add_nuclear_term on the host).
template <int PREC>
__global__ void segment_sum_kernel(const double *__restrict__ part, int n_segments, int64_t n,
                                   const double *__restrict__ xyz, const Cell64 *__restrict__ nuc, int64_t n_nuc,
                                   double *__restrict__ out) {
    using Acc = typename Traits<PREC>::Acc;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Acc s = 0;
    for (int g = 0; g < n_segments; ++g) s += static_cast<Acc>(part[g * n + i]);
    const double px = xyz[3 * i], py = xyz[3 * i + 1], pz = xyz[3 * i + 2];
    double v = 0;
    for (int64_t b = 0; b < n_nuc; ++b) {
        const double dx = px - nuc[b].x, dy = py - nuc[b].y, dz = pz - nuc[b].z;
        v += nuc[b].w / sqrt(dx * dx + dy * dy + dz * dz);
    }
    out[i] = static_cast<double>(s) - v;
}

template <int PREC>
cudaError_t latency(const DeviceCells &c, const LatencyPoints &p, double *part, unsigned *counter, double *out,
                    unsigned *flag, unsigned seq, cudaStream_t s) {
    latency_kernel<PREC><<<static_cast<unsigned>(c.n_chunks), kLatencyThreads, 0, s>>>(c, p, part, counter, out, flag, seq);
    return cudaGetLastError();
}

template <int PREC, int P, int G>
void tile(const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz, double *part, cudaStream_t s) {
    const int64_t per_block = static_cast<int64_t>(G) * P;
    const dim3 grid(static_cast<unsigned>((n + per_block - 1) / per_block), static_cast<unsigned>(nseg));
    tile_kernel<PREC, P, G><<<grid, kSub * G, 0, s>>>(c, cps, n, xyz, part);
}

// Every configuration gives a point the same operations in the same order (bitwise equal results);
// smaller batches take blocks with fewer points. config = P * 1000 + G forces one (tuning), 0 = by n.
template <int PREC>
cudaError_t throughput(const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz, double *part,
                       double *out, int config, cudaStream_t s) {
    if (config == 0) config = n >= 4096 ? 4064 : n >= 512 ? 4032 : n >= 128 ? 2032 : 1032;
    switch (config) {
        case 8032: tile<PREC, 8, 32>(c, cps, nseg, n, xyz, part, s); break;
        case 4064: tile<PREC, 4, 64>(c, cps, nseg, n, xyz, part, s); break;
        case 2064: tile<PREC, 2, 64>(c, cps, nseg, n, xyz, part, s); break;
        case 4032: tile<PREC, 4, 32>(c, cps, nseg, n, xyz, part, s); break;
        case 2032: tile<PREC, 2, 32>(c, cps, nseg, n, xyz, part, s); break;
        default: tile<PREC, 1, 32>(c, cps, nseg, n, xyz, part, s); break;
    }
    segment_sum_kernel<PREC><<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(part, nseg, n, xyz,
        static_cast<const Cell64 *>(c.nuclei), c.n_nuclei, out);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_latency(int precision, const DeviceCells &c, const LatencyPoints &p, double *partials,
                           unsigned *counter, double *out, unsigned *flag, unsigned seq, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return latency<QMMM_PRECISION_SINGLE>(c, p, partials, counter, out, flag, seq, s);
        case QMMM_PRECISION_MIXED: return latency<QMMM_PRECISION_MIXED>(c, p, partials, counter, out, flag, seq, s);
        default: return latency<QMMM_PRECISION_DOUBLE>(c, p, partials, counter, out, flag, seq, s);
    }
}

cudaError_t launch_throughput(int precision, const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz,
                              double *partials, double *out, int config, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return throughput<QMMM_PRECISION_SINGLE>(c, cps, nseg, n, xyz, partials, out, config, s);
        case QMMM_PRECISION_MIXED: return throughput<QMMM_PRECISION_MIXED>(c, cps, nseg, n, xyz, partials, out, config, s);
        default: return throughput<QMMM_PRECISION_DOUBLE>(c, cps, nseg, n, xyz, partials, out, config, s);
    }
}

}  // namespace qmmm::cuda::field
