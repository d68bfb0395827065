// field_split_gpu_kernels.cu -- the kernel of the range-split field (see field_split_gpu.cuh).
#include "field_split_gpu.cuh"

namespace qmmm::cuda::split {
namespace {

// Lane `lane`'s share of the point's L: stencil rows (i, j) = lane and lane + 32 of the 64, 8 values each.
__device__ double interp_share(const SplitGridView &g, const double *p, int lane) {
    const SplitBlock &b = g.blocks[split_leaf(g, p)];
    const double *grid;
    int64_t n[3];
    double lo[3], inv;
    int32_t ni[3];
    if (b.offset < 0) {
        grid = g.g0, inv = g.inv_h;
        for (int k = 0; k < 3; ++k) lo[k] = g.lo[k], ni[k] = g.nint[k];
    } else {
        grid = g.pool + b.offset, inv = 1.0 / b.h;
        for (int k = 0; k < 3; ++k) lo[k] = b.lo[k], ni[k] = b.n_int[k];
    }
    double t[3], w[3][kSplitOrder];
    int32_t c[3];
    for (int k = 0; k < 3; ++k) {
        n[k] = ni[k] + kSplitOrder - 1;
        c[k] = split_locate(p[k], lo[k], inv, ni[k], &t[k]);
        split_weights(t[k], w[k]);
    }
    double s = 0.0;
    for (int r = lane; r < kSplitOrder * kSplitOrder; r += 32) {
        const int i = r / kSplitOrder, j = r % kSplitOrder;
        const double *row = grid + ((c[0] + i) * n[1] + (c[1] + j)) * n[2] + c[2];
        double sk = 0.0;
        for (int k = 0; k < kSplitOrder; ++k) sk += w[2][k] * row[k];
        s += w[0][i] * w[1][j] * sk;
    }
    return s;
}

// The point's column ranges at most (R_c / 3 bins: 7 x 7 columns, 8 x 8 where rounding adds a bin); more (never
// with today's bins) takes the lane-redundant walk of split_for_ranges instead.
constexpr int kMaxColumns = 64;

// One cell's short-range term as split_pair, with f's coefficients from shared memory (t) and the device's double
// reciprocal square root (one rounding more than 1.0 / sqrt: the tests hold GPU and CPU to 1e-12).
__device__ __forceinline__ double pair_term(const SplitView &v, const SplitTableView &t, double q, double d2, double self) {
    if (!(d2 < v.rc2)) return 0.0;
    if (d2 < kSingularRadius2) return q * (self - v.f0);
    return q * (rsqrt(d2) - split_f(t, d2));
}

// Cell k of the point's concatenated column ranges goes to lane k mod 32, in increasing k: the lanes first find
// the ranges (lane l: columns l and l + 32) and their offsets (an integer warp scan), then walk the cells.
__global__ void __launch_bounds__(32 * kWarpsPerBlock, 4) split_kernel(SplitView v, bool interp, double self, SplitNuclei nuc, int64_t n,
                             const double *__restrict__ xyz, double *__restrict__ out) {
    __shared__ double coef[kSplitMaxTerms];
    __shared__ int64_t col_begin[kWarpsPerBlock][kMaxColumns];
    __shared__ int64_t col_first[kWarpsPerBlock][kMaxColumns + 1];  // flat index of each column's first cell
    for (int j = threadIdx.x; j < v.table.n; j += blockDim.x) coef[j] = v.table.c[j];
    __syncthreads();
    SplitTableView table = v.table;
    table.c = coef;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + w;
    if (i >= n) return;  // whole warps leave together, after the block's only barrier
    const double p[3] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
    double s = interp ? interp_share(v.grid, p, lane) : 0.0;
    int32_t i0[3], i1[3];
    if (split_bin_bounds(v.cells, p, v.rc2, i0, i1)) {
        const int ny = i1[1] - i0[1] + 1, ncol = ny * (i1[2] - i0[2] + 1);
        if (ncol <= kMaxColumns) {
            int64_t len[2];
            for (int h = 0; h < 2; ++h) {
                const int col = lane + 32 * h;
                int64_t b = 0, e = 0;
                if (col < ncol) split_column_range(v.cells, p, v.rc2, i0[1] + col % ny, i0[2] + col / ny, &b, &e);
                col_begin[w][col] = b;
                len[h] = e - b;
            }
            // Inclusive scans of the two halves' lengths, then the second half after the first's total.
            int64_t inc[2] = {len[0], len[1]};
            for (int off = 1; off < 32; off <<= 1)
                for (int h = 0; h < 2; ++h) {
                    const int64_t up = __shfl_up_sync(0xffffffffu, inc[h], off);
                    if (lane >= off) inc[h] += up;
                }
            const int64_t first_total = __shfl_sync(0xffffffffu, inc[0], 31);
            col_first[w][lane + 1] = inc[0];
            col_first[w][lane + 33] = first_total + inc[1];
            if (lane == 0) col_first[w][0] = 0;
            __syncwarp();
            const int64_t total = col_first[w][kMaxColumns];
            int c = 0;
            for (int64_t k = lane; k < total; k += 32) {
                while (col_first[w][c + 1] <= k) ++c;  // k grows: each lane's column only moves forward
                const int64_t m = col_begin[w][c] + (k - col_first[w][c]);
                const double dx = p[0] - v.cells.x[m], dy = p[1] - v.cells.y[m], dz = p[2] - v.cells.z[m];
                s += pair_term(v, table, v.cells.q[m], dx * dx + dy * dy + dz * dz, self);
            }
        } else {
            int64_t base = 0;  // cells of the point's earlier ranges
            split_for_ranges(v.cells, p, v.rc2, [&](int64_t b, int64_t e) {
                for (int64_t m = b + ((lane - base) % 32 + 32) % 32; m < e; m += 32) {
                    const double dx = p[0] - v.cells.x[m], dy = p[1] - v.cells.y[m], dz = p[2] - v.cells.z[m];
                    s += pair_term(v, table, v.cells.q[m], dx * dx + dy * dy + dz * dz, self);
                }
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
    if (lane == 0) out[i] = on ? __longlong_as_double(0x7ff8000000000000LL) : s;  // NaN on a nucleus, as on the host
}

}  // namespace

cudaError_t launch_split(const SplitView &v, bool interp, double self, const SplitNuclei &nuc, int64_t n, const double *xyz,
                         double *out, cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    const int64_t blocks = (n + kWarpsPerBlock - 1) / kWarpsPerBlock;
    split_kernel<<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, s>>>(v, interp, self, nuc, n, xyz, out);
    return cudaGetLastError();
}

}  // namespace qmmm::cuda::split
