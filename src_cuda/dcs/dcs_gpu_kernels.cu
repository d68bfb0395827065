// dcs_gpu_kernels.cu -- the DCS kernel, one template over the precision (its pair term dcs_pair_gpu.cuh, its tuning
// dcs_tuning_gpu.cuh), and its launcher; the device state and the dispatch over pieces of planes are dcs_gpu.cu's.
#include <cuda_runtime.h>

#include "dcs_gpu.cuh"
#include "dcs_pair_gpu.cuh"
#include "dcs_tuning_gpu.cuh"
#include "qmmm_accel_dcs.h"

namespace qmmm::cuda::dcs {
namespace {

// Block 32 x 4 threads; a thread owns 4 points in x, 32 apart (a warp writes 128 consecutive bytes per store), times 2
// rows in y sharing dx. Atoms come through shared memory in tiles of kAtomTile and are read by all threads at once
// (broadcast). Per pair: one fused multiply-add for r^2 and the pair term (DcsPair<PREC>::add: in float one MUFU and
// one FFMA). MIXED adds each tile's float sums into doubles.
template <int PREC>
__global__ void __launch_bounds__(128) dcs_planes(const typename DcsPair<PREC>::Atom *__restrict__ atoms, int n_tiles,
                                                  typename DcsPair<PREC>::Out *__restrict__ out, int nxp, int nyp,
                                                  typename DcsPair<PREC>::F hx, typename DcsPair<PREC>::F hy,
                                                  typename DcsPair<PREC>::F hz, int k0) {
    using Pair = DcsPair<PREC>;
    using F = typename Pair::F;
    using Atom = typename Pair::Atom;
    using Out = typename Pair::Out;
    constexpr int kUnroll = kDcsTuning<PREC>.atom_unroll;
    __shared__ Atom tile[kAtomTile];
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int i0 = blockIdx.x * kTileX + threadIdx.x;
    const int j0 = blockIdx.y * 8 + threadIdx.y * 2;
    const F py0 = j0 * hy, py1 = (j0 + 1) * hy, pz = (k0 + static_cast<int>(blockIdx.z)) * hz;
    F px[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) px[u] = (i0 + 32 * u) * hx;
    F acc[2][4] = {};
    double tot[2][4] = {};  // MIXED
    for (int t = 0; t < n_tiles; ++t) {
        __syncthreads();
        tile[tid] = atoms[t * kAtomTile + tid];
        tile[tid + 128] = atoms[t * kAtomTile + 128 + tid];
        __syncthreads();
#pragma unroll kUnroll
        for (int a = 0; a < kAtomTile; ++a) {
            const Atom at = tile[a];
            const F dz = pz - at.z, dy0 = py0 - at.y, dy1 = py1 - at.y;
            const F dz2 = dz * dz;
            const F r0 = fma(dy0, dy0, dz2), r1 = fma(dy1, dy1, dz2);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const F dx = px[u] - at.x;
                acc[0][u] = Pair::add(at.w, fma(dx, dx, r0), acc[0][u]);
                acc[1][u] = Pair::add(at.w, fma(dx, dx, r1), acc[1][u]);
            }
        }
        if constexpr (Pair::kTileSums) {
#pragma unroll
            for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int u = 0; u < 4; ++u) tot[r][u] += acc[r][u], acc[r][u] = 0;
        }
    }
    const size_t base = (static_cast<size_t>(blockIdx.z) * nyp + j0) * nxp + i0;
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int u = 0; u < 4; ++u)
            out[base + static_cast<size_t>(r) * nxp + 32 * u] = Pair::kTileSums ? static_cast<Out>(tot[r][u])
                                                                               : static_cast<Out>(acc[r][u]);
}

template <int PREC>
void planes(const void *atoms, int n_tiles, void *out, int nxp, int nyp, const double h[3], int k0, dim3 grid,
            cudaStream_t s) {
    using Pair = DcsPair<PREC>;
    using F = typename Pair::F;
    dcs_planes<PREC><<<grid, dim3(32, 4), 0, s>>>(static_cast<const typename Pair::Atom *>(atoms), n_tiles,
                                                  static_cast<typename Pair::Out *>(out), nxp, nyp,
                                                  static_cast<F>(h[0]), static_cast<F>(h[1]), static_cast<F>(h[2]), k0);
}

}  // namespace

cudaError_t launch_planes(int precision, const void *atoms, int n_tiles, void *out, int nxp, int nyp, int n_planes,
                          const double h[3], int k0, cudaStream_t s) {
    const dim3 grid(static_cast<unsigned>(nxp / kTileX), static_cast<unsigned>(nyp / 8),
                    static_cast<unsigned>(n_planes));
    switch (precision) {
        case QMMM_PRECISION_DOUBLE: planes<QMMM_PRECISION_DOUBLE>(atoms, n_tiles, out, nxp, nyp, h, k0, grid, s); break;
        case QMMM_PRECISION_MIXED: planes<QMMM_PRECISION_MIXED>(atoms, n_tiles, out, nxp, nyp, h, k0, grid, s); break;
        default: planes<QMMM_PRECISION_SINGLE>(atoms, n_tiles, out, nxp, nyp, h, k0, grid, s); break;
    }
    return cudaGetLastError();
}

}  // namespace qmmm::cuda::dcs
