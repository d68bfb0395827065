// field_split_gpu_kernels.cu -- the kernel of the range-split field (see field_split_gpu.cuh).
#include <math_constants.h>

#include "split/field_split_gpu.cuh"

namespace qmmm::cuda::split {
namespace {

// Weight k of split_weights at t, with its bits, from k's own products: left (t - o_0) ... (t - o_{k-1}) and right
// (t - o_7) ... (t - o_{k+1}) in split_weights' orders (a product's first factor times 1.0 is exact). One weight a
// lane, shuffled to the lanes that use it: every lane computing all 24 cost ~100 FP64 instructions a point.
__device__ __forceinline__ double one_weight(double t, int k) {
    static_assert(kSplitOrder == 8, "split_weights' denominators");
    const double den = k < 4 ? (k < 2 ? (k == 0 ? -1.0 / 5040 : 1.0 / 720) : (k == 2 ? -1.0 / 240 : 1.0 / 144))
                             : (k < 6 ? (k == 4 ? -1.0 / 144 : 1.0 / 240) : (k == 6 ? -1.0 / 720 : 1.0 / 5040));
    double left = 1.0, right = 1.0;
#pragma unroll
    for (int m = 0; m < kSplitOrder; ++m)
        if (m < k) left *= t - (m - kSplitLow);
#pragma unroll
    for (int m = kSplitOrder - 1; m > 0; --m)
        if (m > k) right *= t - (m - kSplitLow);
    return left * right * den;
}

// Lane l's share of the point's L: element k = l mod 8 of the stencil rows (i, j), j = l / 8 and l / 8 + 4, i = 0..7,
// times its three weights. Eight neighbouring lanes read one row's 64 contiguous bytes, so each load instruction
// fetches four whole rows (lane-per-row reads touched 32 rows per instruction, 8 bytes of each). Lane l computes
// weight l mod 8 of axis l / 8 (lanes 24-31 repeat axis z's).
__device__ double interp_share(const SplitGridView &g, const double *p, int lane) {
    const SplitBlock &b = g.blocks[split_leaf(g, p)];
    const double *grid;
    double lo[3], inv;
    int32_t ni[3];
    if (b.offset < 0) {
        grid = g.g0, inv = g.inv_h;
        for (int k = 0; k < 3; ++k) lo[k] = g.lo[k], ni[k] = g.nint[k];
    } else {
        grid = g.pool + b.offset, inv = b.inv_h;
        for (int k = 0; k < 3; ++k) lo[k] = b.lo[k], ni[k] = b.n_int[k];
    }
    double t[3];
    int32_t c[3];
    for (int k = 0; k < 3; ++k) c[k] = split_locate(p[k], lo[k], inv, ni[k], &t[k]);
    const int kz = lane & 7, jy = lane >> 3;
    const int64_t ny = ni[1] + kSplitOrder - 1, nz = ni[2] + kSplitOrder - 1;
    const double *row = grid + (static_cast<int64_t>(c[0]) * ny + c[1] + jy) * nz + c[2] + kz;
    const double w = one_weight(jy == 0 ? t[0] : (jy == 1 ? t[1] : t[2]), kz);
    double wx[kSplitOrder];
#pragma unroll
    for (int i = 0; i < kSplitOrder; ++i) wx[i] = __shfl_sync(0xffffffffu, w, i);
    const double wy0 = __shfl_sync(0xffffffffu, w, 8 + jy), wy1 = __shfl_sync(0xffffffffu, w, 12 + jy);
    const double wz = __shfl_sync(0xffffffffu, w, 16 + kz);
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < kSplitOrder; ++i, row += ny * nz) s = fma(wx[i], fma(wy0, row[0], wy1 * row[4 * nz]), s);
    return s * wz;
}

// The point's column ranges at most (R_c / 3 bins: 7 x 7 columns, 8 x 8 where rounding adds a bin); more (never
// with today's bins) takes the lane-redundant walk of split_for_ranges instead.
constexpr int kMaxColumns = 64;
constexpr int kBitmapWords = 128;  // a window of column starts: 4,096 cells

// f(s) as split_f, over NT (>= the table's n) zero-padded coefficients held in the kernel's parameter space.
template <int NT>
__device__ __forceinline__ double f_poly(const SplitCoefs &cf, double scale, double s) {
    const double x = fma(s, scale, -1.0);
    double r = cf.c[NT - 1];
#pragma unroll
    for (int j = NT - 2; j >= 0; --j) r = fma(r, x, cf.c[j]);
    return r;
}

// MIXED's h as split_h_single, over NT (>= n_single) zero-padded float coefficients.
template <int NT>
__device__ __forceinline__ float h_poly_single(const SplitCoefs &cf, float d) {
    const float u = fmaf(d, cf.scale_single, -1.0f);
    float r = cf.cs[NT - 1];
#pragma unroll
    for (int j = NT - 2; j >= 0; --j) r = fmaf(r, u, cf.cs[j]);
    return r;
}

// One cell's short-range term as split_pair; both cases computed, one selected: no branch per cell.
// DOUBLE: the device's double reciprocal square root (one rounding more than 1.0 / sqrt: the tests hold GPU and CPU
// to 1e-12), f from the double table.
// MIXED: erfc(a d) / d = (1/d) 2^(-a^2 d^2 / ln 2) h(d) in single precision from the double d2 (the coordinates'
// difference stays double: 10 bohr apart in float would cost 1e-6 bohr), with the hardware's approximate rsqrt and
// exp2 (~2^-22 relative each) and h from a float table: ~20 single-precision instructions a pair against ~36 FP64 ones,
// and its rounding a few ulps of the term itself, which split_build measures (MIXED is kept only within the
// tolerance). CUDA's erfcf cost ~75 instructions a pair, half of the kernel's; 1/d - f(d^2) in float cancels near
// R_c and lost 20x more to rounding (docs/design/gpu-kernels.md).
template <int NT, bool kMixed>
__device__ __forceinline__ double pair_term(const SplitView &v, const SplitCoefs &cf, const SplitCellGpu *cells, int64_t m,
                                            const double *p, double self) {
    const double2 xy = __ldg(reinterpret_cast<const double2 *>(cells + m));
    const double2 zq = __ldg(reinterpret_cast<const double2 *>(cells + m) + 1);
    const double dx = p[0] - xy.x, dy = p[1] - xy.y, dz = p[2] - zq.x;
    const double d2 = dx * dx + dy * dy + dz * dz;
    double e;
    if constexpr (kMixed) {
        const float d2f = __double2float_rn(d2);
        float r, g;
        asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d2f));
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(g) : "f"(d2f * cf.exp_single));
        e = static_cast<double>(r * (g * h_poly_single<NT>(cf, d2f * r)));
    } else {
        e = rsqrt(d2) - f_poly<NT>(cf, v.table.scale, d2);
    }
    const double t = d2 < kSingularRadius2 ? zq.y * (self - v.f0) : zq.y * e;
    return d2 < v.rc2 ? t : 0.0;
}

// Cell k of the point's concatenated column ranges goes to lane k mod 32, in increasing k: the lanes first find
// the ranges (lane l: columns l and l + 32) and their offsets (an integer warp scan), keep the non-empty ones, then
// walk the cells 32 at a time. A step's lanes find their columns without a search: the columns that start within the
// step set their bits in a warp-wide mask, and a lane's column is the one of the last bit at or below it (a scan of
// column boundaries per lane cost a fifth of the kernel's instructions and diverged: split_table's SASS counts).
// Point p's value in every lane: NaN outside the region (with interp: the host sends it to the direct sum) or on a
// nucleus. col_base, starts: the warp's shared scratch.
template <int NT, bool kMixed>
__device__ __forceinline__ double point_value(const SplitDevice &d, bool interp, double self, const SplitNuclei &nuc,
                                              const double *p, int32_t *col_base, unsigned *starts) {
    const SplitView &v = d.v;
    const int lane = threadIdx.x & 31;
    if (interp && !split_inside(v.grid, p)) return __longlong_as_double(0x7ff8000000000000LL);
    double s = interp ? interp_share(v.grid, p, lane) : 0.0;
    int32_t i0[3], i1[3];
    if (split_bin_bounds(v.cells, p, v.rc2, i0, i1)) {
        const int ny = i1[1] - i0[1] + 1, ncol = ny * (i1[2] - i0[2] + 1);
        if (ncol <= kMaxColumns) {
            int64_t beg[2];
            int len[2];
            for (int h = 0; h < 2; ++h) {
                const int col = lane + 32 * h;
                int64_t b = 0, e = 0;
                if (col < ncol) split_column_range(v.cells, p, v.rc2, i0[1] + col % ny, i0[2] + col / ny, &b, &e);
                beg[h] = b, len[h] = static_cast<int>(e - b);
            }
            // Inclusive scans of the two halves' lengths, then the second half after the first's total.
            int inc[2] = {len[0], len[1]};
            for (int off = 1; off < 32; off <<= 1)
                for (int h = 0; h < 2; ++h) {
                    const int up = __shfl_up_sync(0xffffffffu, inc[h], off);
                    if (lane >= off) inc[h] += up;
                }
            const int first_total = __shfl_sync(0xffffffffu, inc[0], 31);
            const int total = first_total + __shfl_sync(0xffffffffu, inc[1], 31);
            const int first[2] = {inc[0] - len[0], first_total + inc[1] - len[1]};  // each column's offset
            // The non-empty columns, in order (their offsets differ: one bit each in a step's mask).
            const unsigned below = (1u << lane) - 1u, upto = below | (1u << lane);
            const unsigned ne0 = __ballot_sync(0xffffffffu, len[0] > 0), ne1 = __ballot_sync(0xffffffffu, len[1] > 0);
            // Step k0's cell for this lane: the mask of the columns that start within the step (bit o: at k0 + o) counts,
            // below and at the lane, the columns the lane is past. The masks are words of a bitmap of the column starts,
            // built once a window of 32 kBitmapWords cells (one window below 4,096 cells: every point of the glycine
            // fields), so a step reads its word instead of OR-reducing the lanes' starts over the warp (3 % a call at
            // 8,192 points on an H100, the same bits). A lane past the end gets a padding
            // cell (zero charge, far: its term is exactly 0), so that a step has no branch and the unrolled steps' loads
            // are in flight together. Cell indices fit int32 (launch_split).
            if (len[0] > 0) col_base[__popc(ne0 & below)] = static_cast<int32_t>(beg[0] - first[0]);
            if (len[1] > 0) col_base[__popc(ne0) + __popc(ne1 & below)] = static_cast<int32_t>(beg[1] - first[1]);
            const int pad = static_cast<int>(d.pad);
            int before = 0;  // non-empty columns that start before the step
            for (int w0 = 0; w0 < total; w0 += 32 * kBitmapWords) {
                const int wend = min(total, w0 + 32 * kBitmapWords);
                __syncwarp();
                for (int j = lane; j < (wend - w0 + 31) / 32; j += 32) starts[j] = 0u;
                __syncwarp();
                for (int h = 0; h < 2; ++h) {
                    const int o = first[h] - w0;
                    if (len[h] > 0 && o >= 0 && o < 32 * kBitmapWords) atomicOr(starts + (o >> 5), 1u << (o & 31));
                }
                __syncwarp();
                auto cell = [&](int k0) {
                    const unsigned mask = starts[(k0 - w0) >> 5];
                    const int c = max(before + __popc(mask & upto) - 1, 0);
                    before += __popc(mask);
                    const int k = k0 + lane;
                    return k < total ? col_base[c] + k : pad;
                };
                int k0 = w0;
                for (; k0 + 3 * 32 < wend; k0 += 4 * 32) {  // four steps, each with at least one cell
                    int m[4];
                    double t[4];
#pragma unroll
                    for (int j = 0; j < 4; ++j) m[j] = cell(k0 + 32 * j);
#pragma unroll
                    for (int j = 0; j < 4; ++j) t[j] = pair_term<NT, kMixed>(v, d.coef, d.cells, m[j], p, self);
#pragma unroll
                    for (int j = 0; j < 4; ++j) s += t[j];
                }
                for (; k0 < wend; k0 += 32) s += pair_term<NT, kMixed>(v, d.coef, d.cells, cell(k0), p, self);
            }
        } else {
            int64_t base = 0;  // cells of the point's earlier ranges
            split_for_ranges(v.cells, p, v.rc2, [&](int64_t b, int64_t e) {
                for (int64_t m = b + ((lane - base) % 32 + 32) % 32; m < e; m += 32)
                    s += pair_term<NT, kMixed>(v, d.coef, d.cells, m, p, self);
                base += e - b;
            });
        }
    }
    // The nuclear term (the host's add_nuclear_term cost more than this kernel: 8,192 points x 19 nuclei, ~0.5 ms of
    // scalar divisions per call): lane l takes nuclei l, l + 32, ...; the lanes' sums join the cells' in the tree.
    bool on = false;
    for (int64_t b = lane; b < nuc.n; b += 32) {
        const double dx = p[0] - nuc.xyz[3 * b], dy = p[1] - nuc.xyz[3 * b + 1], dz = p[2] - nuc.xyz[3 * b + 2];
        const double d2 = dx * dx + dy * dy + dz * dz;
        on |= d2 < kSingularRadius2;
        s -= nuc.z[b] * rsqrt(d2);
    }
    on = __any_sync(0xffffffffu, on);
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    return on ? __longlong_as_double(0x7ff8000000000000LL) : s;  // NaN on a nucleus, as on the host (lane 0's is the sum)
}

// One warp per point. Streamed (st.done set): the values go to st.values, and the last block of a chunk copies the
// chunk's values to out and sets done[c] to seq, so that the host takes them while later chunks are computed;
// otherwise each block writes its values to out.
template <int NT, bool kMixed>
__global__ void __launch_bounds__(32 * kWarpsPerBlock, kResidentWarps / kWarpsPerBlock)
    split_kernel(const __grid_constant__ SplitDevice d, bool interp, double self, SplitNuclei nuc, int n,
                 const double *__restrict__ xyz, double *__restrict__ out, SplitStream st) {
    __shared__ int32_t col_base[kWarpsPerBlock][kMaxColumns];  // non-empty column j's first cell, minus its offset
    __shared__ unsigned starts[kWarpsPerBlock][kBitmapWords];  // a window's column starts, one bit a cell
    __shared__ bool last;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int first = blockIdx.x * kWarpsPerBlock, i = first + w;
    const int c = st.done ? first / st.chunk : 0;
    // The block's points (12 contiguous doubles) in one request, its values out in one: each warp's own reads of
    // mapped memory made 3 PCIe requests a point: 3-11 % a call at 8,192 points on an H100
    // (docs/design/gpu-kernels.md). Plain loads: "volatile" ones (ld.cv) queued behind each other, 3.6x the
    // kernel's time.
    __shared__ double pts[3 * kWarpsPerBlock], vals[kWarpsPerBlock];
    const int here = max(0, min(kWarpsPerBlock, n - first));
    if (threadIdx.x < 3 * here) pts[threadIdx.x] = xyz[3 * first + threadIdx.x];
    __syncthreads();
    if (i < n) {
        const double p[3] = {pts[3 * w], pts[3 * w + 1], pts[3 * w + 2]};
        const double u = point_value<NT, kMixed>(d, interp, self, nuc, p, col_base[w], starts[w]);
        if (lane == 0) {
            if (!st.done) vals[w] = u;
            else st.values[i] = u;
        }
    }
    if (!st.done) {
        __syncthreads();
        if (threadIdx.x < here) out[first + threadIdx.x] = vals[threadIdx.x];
        return;
    }
    __syncthreads();
    const int c0 = c * st.chunk, c1 = min(c0 + st.chunk, n);
    if (threadIdx.x == 0) {
        // One fence for the block's values, before its count: the barrier above orders the warps' stores before it,
        // and a fence orders what its thread has seen (PTX's fences are cumulative). A fence a warp cost 0-5 % a call
        // at 8,192 points (H100).
        __threadfence();
        const unsigned blocks = static_cast<unsigned>((c1 - c0 + kWarpsPerBlock - 1) / kWarpsPerBlock);
        last = atomicAdd(st.count + c, 1u) == blocks - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();  // the chunk's other blocks' values, counted above, are visible from here on
    for (int k = c0 + threadIdx.x; k < c1; k += blockDim.x) out[k] = __ldcg(st.values + k);
    __threadfence_system();  // every thread's values reach the host before the flag
    __syncthreads();
    if (threadIdx.x == 0) {
        st.count[c] = 0;  // for the next call (stream-ordered after this kernel)
        __threadfence_system();
        *static_cast<volatile unsigned long long *>(st.done + c) = st.seq;
    }
}

// See launch_grid_coulomb (field_split_gpu.cuh).
__global__ void __launch_bounds__(kGridThreads) grid_coulomb_kernel(const SplitCellGpu *__restrict__ cells, int64_t n_cells,
                                                                   int64_t per_segment, const int64_t *__restrict__ tasks,
                                                                   int64_t n_tasks, const double *__restrict__ xyz, int64_t n,
                                                                   double *__restrict__ part) {
    __shared__ SplitCellGpu tile[kGridTile];  // q holds q / 2
    const int64_t t = static_cast<int64_t>(blockIdx.x) * kGridThreads + threadIdx.x;
    const int64_t task = tasks[t < n_tasks ? t : n_tasks - 1];
    const int64_t first = task >> 3;
    const int count = static_cast<int>(task & 7) + 1;
    const double px = xyz[3 * first], py = xyz[3 * first + 1];
    double pz[kGridNodes], acc[kGridNodes];
#pragma unroll
    for (int k = 0; k < kGridNodes; ++k) pz[k] = xyz[3 * (first + min(k, count - 1)) + 2], acc[k] = 0.0;
    // d2 < kSingularRadius2 implies this on d2's high word (an integer test: the FP64 pipe is the bottleneck)
    const int eps_hi = __double2hiint(kSingularRadius2);
    bool near = false;
    const int64_t c0 = static_cast<int64_t>(blockIdx.y) * per_segment, c1 = min(c0 + per_segment, n_cells);
    for (int64_t b = c0; b < c1; b += kGridTile) {
        __syncthreads();
        for (int j = threadIdx.x; j < kGridTile; j += kGridThreads) {
            SplitCellGpu c{1e30, 1e30, 1e30, 0.0};  // past the segment: far, no charge
            if (b + j < c1) c = cells[b + j], c.q *= 0.5;
            tile[j] = c;
        }
        __syncthreads();
#pragma unroll 2
        for (int j = 0; j < kGridTile; ++j) {
            const SplitCellGpu c = tile[j];
            const double dx = px - c.x, dy = py - c.y;
            const double dxy2 = fma(dy, dy, dx * dx);
#pragma unroll
            for (int k = 0; k < kGridNodes; ++k) {
                const double dz = pz[k] - c.z;
                const double d2 = fma(dz, dz, dxy2);
                near |= __double2hiint(d2) <= eps_hi;
                double y0;
                asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y0) : "d"(d2));
                acc[k] = fma(c.q * y0, fma(-(d2 * y0), y0, 3.0), acc[k]);
            }
        }
    }
    if (t >= n_tasks) return;
    double *out = part + static_cast<int64_t>(blockIdx.y) * n + first;
#pragma unroll
    for (int k = 0; k < kGridNodes; ++k)
        if (k < count) out[k] = near ? __longlong_as_double(0x7ff8000000000000LL) : acc[k];
}

template <int NT, bool kMixed = false>
void launch(unsigned blocks, const SplitDevice &d, bool interp, double self, const SplitNuclei &nuc, int n, const double *xyz,
            double *out, const SplitStream &st, cudaStream_t s) {
    split_kernel<NT, kMixed><<<blocks, 32 * kWarpsPerBlock, 0, s>>>(d, interp, self, nuc, n, xyz, out, st);
}

}  // namespace

cudaError_t grid_coulomb_blocks_per_sm(int *blocks) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, grid_coulomb_kernel, kGridThreads, 0);
}

cudaError_t launch_grid_coulomb(const SplitCellGpu *cells, int64_t n_cells, int segments, int64_t per_segment,
                                const int64_t *tasks, int64_t n_tasks, const double *xyz, int64_t n, double *part,
                                cudaStream_t s) {
    if (n_tasks == 0) return cudaSuccess;
    const int64_t blocks = (n_tasks + kGridThreads - 1) / kGridThreads;
    if (blocks > (int64_t{1} << 31) - 1 || segments < 1 || segments > 65535) return cudaErrorInvalidValue;
    grid_coulomb_kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(segments)), kGridThreads, 0, s>>>(
        cells, n_cells, per_segment, tasks, n_tasks, xyz, n, part);
    return cudaGetLastError();
}

cudaError_t launch_split(const SplitDevice &d, bool interp, bool mixed, double self, const SplitNuclei &nuc, int64_t n,
                         const double *xyz, double *out, const SplitStream &st, cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    if (n > (int64_t{1} << 30)) return cudaErrorInvalidValue;  // the host batches far below this
    if (d.pad < 0 || d.pad >= INT32_MAX - 32) return cudaErrorInvalidValue;  // cell indices are int32 (field_split_gpu.cu)
    if (st.done && (st.chunk < kWarpsPerBlock || st.chunk % kWarpsPerBlock || !st.count || !st.values))
        return cudaErrorInvalidValue;  // a block's points must lie in one chunk
    const unsigned blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
    const int m = static_cast<int>(n), nt = d.v.table.n;
    // The fewest padded terms that hold the table (at most 3 extra fused multiply-adds per pair).
    static_assert(kSplitMaxTerms == 40, "instantiations below cover 8..40 terms");
    static_assert(kSplitMaxTermsSingle == 24, "instantiations below cover 1..24 single-precision terms");
    const int ns = d.coef.n_single;
    if (mixed && (ns < 1 || ns > kSplitMaxTermsSingle)) return cudaErrorInvalidValue;
    if (mixed) {  // at most one padded term (a term is ~1/80 of a MIXED pair's instructions)
        if (ns <= 12) launch<12, true>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
        else if (ns <= 14) launch<14, true>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
        else if (ns <= 16) launch<16, true>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
        else if (ns <= 18) launch<18, true>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
        else if (ns <= 20) launch<20, true>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
        else launch<24, true>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    } else if (nt <= 8) launch<8>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    else if (nt <= 12) launch<12>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    else if (nt <= 16) launch<16>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    else if (nt <= 20) launch<20>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    else if (nt <= 24) launch<24>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    else if (nt <= 28) launch<28>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    else if (nt <= 32) launch<32>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    else launch<40>(blocks, d, interp, self, nuc, m, xyz, out, st, s);
    return cudaGetLastError();
}

namespace {

constexpr int kGradThreads = 128;

__global__ void __launch_bounds__(kGradThreads) split_grad_kernel(SplitGradView v, double self, SplitNuclei nuc, int64_t n,
                                                                  const double *__restrict__ xyz, double *__restrict__ out) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * kGradThreads + threadIdx.x;
    if (i >= n) return;
    const double p[3] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
    double *o = out + 4 * i;
    if (!split_inside(v.v.grid, p)) {
        o[0] = o[1] = o[2] = o[3] = CUDART_NAN;
        return;
    }
    double u, g[3];
    split_grad_point(v, p, self, &u, g);
    for (int64_t b = 0; b < nuc.n; ++b) {  // - Z / d and its gradient Z (r - R) / d^3
        const double dx = p[0] - nuc.xyz[3 * b], dy = p[1] - nuc.xyz[3 * b + 1], dz = p[2] - nuc.xyz[3 * b + 2];
        const double d2 = dx * dx + dy * dy + dz * dz, z = nuc.z[b];
        if (d2 < kSingularRadius2) {
            u = CUDART_NAN;
            continue;
        }
        const double inv = 1.0 / sqrt(d2), c = ((z * inv) * inv) * inv;
        u -= z * inv, g[0] += c * dx, g[1] += c * dy, g[2] += c * dz;
    }
    o[0] = u, o[1] = g[0], o[2] = g[1], o[3] = g[2];
}

}  // namespace

cudaError_t launch_split_grad(const SplitGradView &v, double self, const SplitNuclei &nuc, int64_t n, const double *xyz,
                              double *out, cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    if (n > (int64_t{1} << 30)) return cudaErrorInvalidValue;  // the host batches far below this
    const unsigned blocks = static_cast<unsigned>((n + kGradThreads - 1) / kGradThreads);
    split_grad_kernel<<<blocks, kGradThreads, 0, s>>>(v, self, nuc, n, xyz, out);
    return cudaGetLastError();
}

}  // namespace qmmm::cuda::split
