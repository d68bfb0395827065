// field_gpu_kernels.cu -- the embedding-field kernels: the latency paths for a few points (one launch per
// call, or a persistent kernel in the low-latency mode) and the throughput path (cells tiled through shared
// memory, several points per thread).
//
// Precision semantics follow src_cxx/field/field_cpu.cpp: SINGLE = float terms and sums; MIXED = float pair
// terms from offsets to the chunk's double origin, double accumulation (runs of kRun float terms, then the run
// into a double); DOUBLE throughout.
//
// What a pair costs in the hot loops (throughput path, per 32 pairs of a warp): SINGLE 3 FADD + FMUL + 2 FFMA
// for r^2, one MUFU.RSQ and one FFMA -- the minimum -- plus one shared load per P points. On lattice cells every
// precision takes a row layout (row_quarter_sum, mixed_row_quarter_sum), where r^2 costs less. The per-pair tests of
// earlier versions are gone: singular cells (a point within 1e-10 bohr of a cell centre) are found after a
// quarter of a chunk from its partial (QuarterInfo::bound), and MIXED's near cells per warp from a sphere
// around the quarter's cells (QuarterInfo::box).
//
// DOUBLE: 1/r from the double-precision MUFU seed (rsqrt.approx.f64, ~2^-22) and one third-order correction,
// with e = 1 - d2 y0^2: 1/r = y0 (1 + e/2 + 3e^2/8) + O(e^3 y0), full double precision in 12 FP64 operations
// per pair and no float/double conversions (which share the FP64 pipe on this GPU).
//
// MIXED accuracy (max |u - u_double| / sum|terms| <= 1e-8, and errors that average out over points: a VMC
// energy adds 10^6 values). Systematic float errors removed: (1) MUFU.RSQ (rsqrt.approx) has a relative
// error up to ~2^-22.9 that is not zero on average: one Newton step, q/r = q y0 + (q y0 e)/2 with
// e = 1 - d2 y0^2 (mixed_term). The correction q y0 e is ~1 ulp of the term, so it is summed in its own
// float (corr) over the quarter: added to the run of terms, most of it was rounded away and the MUFU bias
// stayed (-6.7e-9 hartree per point on the water dimer, test MixedErrorsAverageOutOnWaterDimer).
// (2) Offsets of the point and of the cells from the chunk origin are hi + lo float pairs with hi on a
// 2^-16 bohr grid (field_mixed_cells, shared with the CPU): hi - hi is exact, so neither is rounded the
// same way for many points. (3) Float charges are error-diffused within a chunk. (4) Cells within
// sqrt(kNearRadius2) of the point are summed in double (chunk_near_mixed): a near term can be most of the sum.
// No floating-point atomics anywhere.
#include <cub/block/block_reduce.cuh>

#include <type_traits>

#include "field_gpu.cuh"
#include "qmmm_accel.h"

namespace qmmm::cuda::field {
namespace {

constexpr int kRun = 8;
constexpr double kEps2 = kSingularRadius2;
// A warp takes MIXED's careful loop when one of its points is this close to a quarter's sphere: the near
// radius plus room for the float rounding of the test itself.
constexpr float kNearTest = 0.5f + 1e-3f;

template <int PREC>
struct Traits;
template <>
struct Traits<QMMM_PRECISION_SINGLE> {
    using Cell = float4;
    using F = float;
    using Acc = float;
    static constexpr int kMinBlocks = 8;  // 128-thread blocks: <= 64 registers, 50 % occupancy
};
template <>
struct Traits<QMMM_PRECISION_MIXED> {
    using Cell = MixedCell;
    using F = float;
    using Acc = double;
    // <= 80 registers (ptxas: no spills at P <= 2 in mixed_quarter_kernel): 24 warps an SM. With tile_kernel's
    // four-group blocks that is 6 blocks an SM (as many as their 33.5 KB tiles allow) against 4 at <= 128 registers.
    // H100, N = 8,192: 1,162-1,168 against 1,091-1,100 G pairs/s (docs/design/gpu-kernels.md).
    static constexpr int kMinBlocks = 6;
};
template <>
struct Traits<QMMM_PRECISION_DOUBLE> {
    using Cell = Cell64;
    using F = double;
    using Acc = double;
    static constexpr int kMinBlocks = 6;
};

// MUFU.RSQ alone: the non-ftz form adds a denormal fix-up to every pair. Flushed d2 are < kEps2 anyway.
__device__ __forceinline__ float rs(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
// The double-precision seed (MUFU.RSQ64H on the high word): ~22 bits, no conversion.
__device__ __forceinline__ double rs_seed(double x) {
    double r;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    return r;
}
// 1/sqrt(x) to full double precision (the careful paths).
__device__ __forceinline__ double rs(double x) { return rsqrt(x); }

// The point as the precision sees it against chunk ch: q[0..2] (and in MIXED q[3..5], twice the low parts of
// the offset from the chunk origin: offset = q[k] + q[k + 3] / 2, and q[6] the mean |b|^2 over the chunk's cells,
// field_mixed_b2; see dist2).
template <int PREC>
__device__ __forceinline__ void local_point(const DeviceCells &c, int64_t ch, const double *p,
                                            typename Traits<PREC>::F *q) {
    if constexpr (PREC == QMMM_PRECISION_MIXED) {
        // hi on the grid of the cells' hi parts (field_mixed_split), so hi - cell hi is exact.
        for (int k = 0; k < 3; ++k) qmmm::field_mixed_split(p[k] - c.origin[3 * ch + k], q[k], q[k + 3]);
        q[6] = qmmm::field_mixed_b2(c.lo_mean + 4 * ch, q + 3);
        for (int k = 3; k < 6; ++k) q[k] *= 2.0f;  // exact
    } else {
        for (int k = 0; k < 3; ++k) q[k] = static_cast<typename Traits<PREC>::F>(p[k]);
    }
}

// Number of point components local_point writes.
template <int PREC>
constexpr int kPointWords = PREC == QMMM_PRECISION_MIXED ? 7 : 3;

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
        // d = a + b with a = hi - hi (exact, both on the grid) and b = lo - lo (the words hold 2b): d^2 summed as
        // a (a + 2b) onto the chunk's mean |b|^2 (q[6], field_mixed_b2), as the CPU's mixed_d2 (field_cpu_simd_kernels.hpp:
        // why the two cheaper forms fail a claim: d rounded to float repeats its error along a lattice's planes;
        // squares of a added last have a mean error). 12 instructions: 9 FADD, 3 FFMA.
        const F ax = q[0] - cell.h.x, ay = q[1] - cell.h.y, az = q[2] - cell.h.z;
        const F bx = q[3] - cell.l.x, by = q[4] - cell.l.y, bz = q[5] - cell.l.z;
        return fmaf(az, az + bz, fmaf(ay, ay + by, fmaf(ax, ax + bx, q[6])));
    } else {
        const F dx = q[0] - cell.x, dy = q[1] - cell.y, dz = q[2] - cell.z;
        return dx * dx + dy * dy + dz * dz;
    }
}

// MIXED pair term: y0 = MUFU 1/sqrt(d2), e = 1 - d2 y0^2; q / r = q y0 (1 + e/2): q y0 goes into the run,
// q y0 e into corr (the caller adds corr / 2 once per quarter).
__device__ __forceinline__ void mixed_term(float q, float d2, float &run, float &corr) {
    const float y0 = rs(d2);
    const float e = fmaf(-(d2 * y0), y0, 1.0f);
    run = fmaf(q, y0, run);
    corr = fmaf(q * y0, e, corr);
}

// DOUBLE pair term (see the top of the file).
__device__ __forceinline__ double double_term(double q, double d2) {
    const double y0 = rs_seed(d2);
    const double e = fma(-d2, y0 * y0, 1.0);
    return q * y0 * fma(e, fma(e, 0.375, 0.5), 1.0);
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

// Sum over a warp, the same bits in every lane (xor butterfly: each step adds the same two values everywhere).
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// ---------------------------------------------------------------- latency paths
// The partials of chunk ch for n points with one block of kLatencyThreads threads (consecutive threads on
// consecutive cells: every load is coalesced), to the host as LL words of sequence number seq.
template <int PREC>
__device__ __forceinline__ void chunk_partials(const DeviceCells &c, int64_t ch, const double *xyz, int n,
                                               const LatencyOut &out, unsigned seq,
                                               typename cub::BlockReduce<typename Traits<PREC>::Acc,
                                                                         kLatencyThreads>::TempStorage &tmp) {
    using T = Traits<PREC>;
    using F = typename T::F;
    using Acc = typename T::Acc;
    using Reduce = cub::BlockReduce<Acc, kLatencyThreads>;
    const auto *cells = static_cast<const typename T::Cell *>(c.cells) + ch * kChunk;
    const F self = static_cast<F>(c.self), eps2 = static_cast<F>(kEps2);
    for (int p = 0; p < n; ++p) {
        F q[kPointWords<PREC>];
        local_point<PREC>(c, ch, &xyz[3 * p], q);
        Acc a = 0;
        float corr = 0;  // MIXED
#pragma unroll
        for (int j = threadIdx.x; j < kChunk; j += kLatencyThreads) {
            const auto cell = cells[j];
            const F d2 = dist2<PREC>(q, cell);
            if constexpr (PREC == QMMM_PRECISION_MIXED) {
                double near = 0;
                float t = 0;
                mixed_careful(cell, d2, &c.cells64[ch * kChunk + j], &xyz[3 * p], c.self, t, corr, near);
                a += static_cast<double>(t) + near;
            } else {
                const F inv = d2 < eps2 ? self : rs(d2);
                a += static_cast<Acc>(cell.w * inv);
            }
        }
        if constexpr (PREC == QMMM_PRECISION_MIXED) a += 0.5 * static_cast<double>(corr);
        const Acc b = Reduce(tmp).Sum(a);
        if (threadIdx.x == 0) {  // two LL words in one 16-byte store, straight to the host
            const auto bits = static_cast<unsigned long long>(__double_as_longlong(static_cast<double>(b)));
            unsigned long long *w = &out.result[2 * (p * c.n_chunks + ch)];
            const unsigned long long lo = ll_word(seq, static_cast<unsigned>(bits)), hi = ll_word(seq, static_cast<unsigned>(bits >> 32));
            asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(w), "l"(lo), "l"(hi) : "memory");
        }
        __syncthreads();  // tmp is reused
    }
}

__device__ __forceinline__ void store_sys(unsigned long long *p, unsigned long long v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long load_sys(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned load_sys(const unsigned *p) {
    unsigned v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

template <int PREC>
__global__ void __launch_bounds__(kLatencyThreads) latency_kernel(DeviceCells c, LatencyPoints pts, LatencyOut out,
                                                                  unsigned seq) {
    __shared__ typename cub::BlockReduce<typename Traits<PREC>::Acc, kLatencyThreads>::TempStorage tmp;
    chunk_partials<PREC>(c, blockIdx.x, pts.xyz, pts.n, out, seq, tmp);
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Warp 0: waits until words[] holds a whole request with sequence number `want` (one round trip per try: the
// header and the first point come together, larger requests need one more), copies its words' data to
// data[0 .. 6n) and returns n; or returns -1 when *stop becomes non-zero or, with idle_ns > 0, after idle_ns.
__device__ int ll_receive(const unsigned long long *words, const unsigned *stop, unsigned want,
                          unsigned long long since, unsigned long long idle_ns, unsigned *data) {
    const int lane = threadIdx.x % 32;
    int limit = 7;  // words read per try: the header and one point until n is known
    for (;;) {
        const unsigned long long a = lane < limit ? load_sys(&words[lane]) : 0ULL;
        const unsigned long long b = lane + 32 < limit ? load_sys(&words[lane + 32]) : 0ULL;
        const unsigned quit = lane == 31 ? load_sys(stop) : 0u;
        const unsigned long long h = __shfl_sync(0xffffffffu, a, 0);
        if (ll_seq(h) == want) {
            const int n = static_cast<int>(ll_data(h)), need = 1 + 6 * n;
            const bool ok = (lane >= need || ll_seq(a) == want) && (lane + 32 >= need || ll_seq(b) == want);
            if (need <= limit && __all_sync(0xffffffffu, ok)) {
                if (lane >= 1 && lane < need) data[lane - 1] = ll_data(a);
                if (lane + 32 < need) data[lane + 31] = ll_data(b);
                __syncwarp();
                return n;
            }
            limit = need;
        }
        const bool idle = idle_ns && lane == 0 && global_ns() - since > idle_ns;
        if (__any_sync(0xffffffffu, quit != 0 || idle)) return -1;
    }
}

// Low-latency mode: block 0's warp 0 waits for the host's next request in the mailbox (mapped host memory) and
// relays it through device memory (Relay), where the other blocks' warp 0 wait; every block then computes its
// chunks and writes their partials as latency_kernel does. No launch per call, one PCIe poller; each
// block holds its SM share (one block of 256 threads) while it waits. Ends on mb->quit or after idle_ns without
// a request.
template <int PREC>
__global__ void __launch_bounds__(kLatencyThreads) persistent_kernel(DeviceCells c, const Mailbox *mb, Relay *relay,
                                                                     LatencyOut out, unsigned last,
                                                                     unsigned long long idle_ns) {
    __shared__ typename cub::BlockReduce<typename Traits<PREC>::Acc, kLatencyThreads>::TempStorage tmp;
    __shared__ double xyz[3 * kLatencyMaxPoints];
    __shared__ int n_sh;
    unsigned long long since = global_ns();
    for (;;) {
        const unsigned want = ll_next(last);
        if (threadIdx.x < 32) {
            unsigned *data = reinterpret_cast<unsigned *>(xyz);
            int n;
            if (blockIdx.x == 0) {
                n = ll_receive(mb->w, &mb->quit, want, since, idle_ns, data);
                const int lane = threadIdx.x;
                if (n < 0) {
                    if (lane == 0) *reinterpret_cast<volatile unsigned *>(&relay->stop) = 1u;
                } else {
                    const int need = 1 + 6 * n;
                    for (int k = lane; k < need; k += 32)
                        store_sys(&relay->w[k], ll_word(want, k == 0 ? static_cast<unsigned>(n) : data[k - 1]));
                }
            } else {
                n = ll_receive(relay->w, &relay->stop, want, 0, 0, data);
            }
            if (threadIdx.x == 0) n_sh = n;
        }
        __syncthreads();
        const int n = n_sh;
        if (n < 0) return;
        for (int64_t ch = blockIdx.x; ch < c.n_chunks; ch += gridDim.x) chunk_partials<PREC>(c, ch, xyz, n, out, want, tmp);
        last = want;
        since = global_ns();
        __syncthreads();  // xyz and n_sh are rewritten by the next request
    }
}

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

template <int PREC>
cudaError_t latency(const DeviceCells &c, const LatencyPoints &p, LatencyOut out, unsigned seq, cudaStream_t s) {
    latency_kernel<PREC><<<static_cast<unsigned>(c.n_chunks), kLatencyThreads, 0, s>>>(c, p, out, seq);
    return cudaGetLastError();
}

template <int PREC>
cudaError_t persistent(const DeviceCells &c, const Mailbox *mb, Relay *relay, LatencyOut out, int blocks,
                       unsigned last, unsigned long long idle_ns, cudaStream_t s) {
    persistent_kernel<PREC><<<static_cast<unsigned>(blocks), kLatencyThreads, 0, s>>>(c, mb, relay, out, last, idle_ns);
    return cudaGetLastError();
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

// Every configuration gives a point the same operations in the same order (bitwise equal results);
// smaller batches take blocks with fewer points. config = P * 1000 + G forces one (tuning), 0 = by n.
template <int PREC>
cudaError_t throughput(const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz, double *part,
                       double *out, int config, QuarterJoin join, cudaStream_t s) {
    if (config == 0) {
        // MIXED keeps 2 points a thread for large n too (its points hold 6 words): H100, N = 8,192, 1,076 G pairs/s
        // against 930 with 4. SINGLE takes 4 points for large n as well, its loop not being bound by the shared loads
        // that 8 points save: H100, N = 8,192, 2,637 against 2,507-2,537 with 8 (docs/design/gpu-kernels.md).
        if constexpr (PREC == QMMM_PRECISION_SINGLE) config = n >= 512 ? 4032 : n >= 128 ? 2032 : 1032;
        else if constexpr (PREC == QMMM_PRECISION_MIXED) config = n >= 512 ? 2032 : 1032;
        else config = n >= 4096 ? 4032 : n >= 512 ? 2032 : 1032;
    }
    switch (config) {
        case 8032: tile<PREC, 8, 32>(c, cps, nseg, n, xyz, part, join, s); break;
        case 4064: tile<PREC, 4, 64>(c, cps, nseg, n, xyz, part, join, s); break;
        case 4032: tile<PREC, 4, 32>(c, cps, nseg, n, xyz, part, join, s); break;
        case 2064: tile<PREC, 2, 64>(c, cps, nseg, n, xyz, part, join, s); break;
        case 2032: tile<PREC, 2, 32>(c, cps, nseg, n, xyz, part, join, s); break;
        case 1064: tile<PREC, 1, 64>(c, cps, nseg, n, xyz, part, join, s); break;
        default: tile<PREC, 1, 32>(c, cps, nseg, n, xyz, part, join, s); break;
    }
    segment_sum_kernel<PREC><<<static_cast<unsigned>((32 * n + 255) / 256), 256, 0, s>>>(
        part, nseg, n, xyz, c, out);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_latency(int precision, const DeviceCells &c, const LatencyPoints &p, LatencyOut out,
                           unsigned seq, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return latency<QMMM_PRECISION_SINGLE>(c, p, out, seq, s);
        case QMMM_PRECISION_MIXED: return latency<QMMM_PRECISION_MIXED>(c, p, out, seq, s);
        default: return latency<QMMM_PRECISION_DOUBLE>(c, p, out, seq, s);
    }
}

cudaError_t launch_persistent(int precision, const DeviceCells &c, const Mailbox *mb, Relay *relay, LatencyOut out,
                              int blocks, unsigned last, unsigned long long idle_ns, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return persistent<QMMM_PRECISION_SINGLE>(c, mb, relay, out, blocks, last, idle_ns, s);
        case QMMM_PRECISION_MIXED: return persistent<QMMM_PRECISION_MIXED>(c, mb, relay, out, blocks, last, idle_ns, s);
        default: return persistent<QMMM_PRECISION_DOUBLE>(c, mb, relay, out, blocks, last, idle_ns, s);
    }
}

cudaError_t launch_throughput(int precision, const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz,
                              double *partials, double *out, int config, QuarterJoin join, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return throughput<QMMM_PRECISION_SINGLE>(c, cps, nseg, n, xyz, partials, out, config, join, s);
        case QMMM_PRECISION_MIXED: return throughput<QMMM_PRECISION_MIXED>(c, cps, nseg, n, xyz, partials, out, config, join, s);
        default: return throughput<QMMM_PRECISION_DOUBLE>(c, cps, nseg, n, xyz, partials, out, config, join, s);
    }
}

}  // namespace qmmm::cuda::field
