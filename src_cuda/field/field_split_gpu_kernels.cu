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

__global__ void split_kernel(SplitView v, bool interp, double self, int64_t n, const double *__restrict__ xyz,
                             double *__restrict__ out) {
    const int lane = threadIdx.x & 31;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
    if (i >= n) return;  // whole warps leave together
    const double p[3] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
    double s = interp ? interp_share(v.grid, p, lane) : 0.0;
    int64_t base = 0;  // cells of the point's earlier ranges
    split_for_ranges(v.cells, p, v.rc2, [&](int64_t b, int64_t e) {
        for (int64_t m = b + ((lane - base) % 32 + 32) % 32; m < e; m += 32) {
            const double dx = p[0] - v.cells.x[m], dy = p[1] - v.cells.y[m], dz = p[2] - v.cells.z[m];
            s += split_pair(v, v.cells.q[m], dx * dx + dy * dy + dz * dz, self);
        }
        base += e - b;
    });
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) out[i] = s;
}

}  // namespace

cudaError_t launch_split(const SplitView &v, bool interp, double self, int64_t n, const double *xyz, double *out,
                         cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    const int64_t blocks = (n + kWarpsPerBlock - 1) / kWarpsPerBlock;
    split_kernel<<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, s>>>(v, interp, self, n, xyz, out);
    return cudaGetLastError();
}

}  // namespace qmmm::cuda::split
