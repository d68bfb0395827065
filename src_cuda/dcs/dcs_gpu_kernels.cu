// dcs_gpu_kernels.cu -- the DCS kernels (float, mixed, double) and their launcher; the device state and the dispatch
// over pieces of planes are dcs_gpu.cu's.
#include <cuda_runtime.h>

#include "dcs_gpu.cuh"
#include "qmmm_accel_dcs.h"

namespace qmmm::cuda::dcs {
namespace {

// Bare MUFU.RSQ: rsqrtf() without -ftz adds denormal handling around it, which costs issue slots in a
// loop bound by the special-function unit. Lattice-atom distances are never denormal (max rel. error
// of the approximation 2^-22.9).
__device__ __forceinline__ float rsqrt_ftz(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// Fast kernel: block 32 x 4 threads; a thread owns 4 points in x, 32 apart (a warp writes 128
// consecutive bytes per store), times 2 rows in y sharing dx. Atoms come through shared memory in tiles
// of 256 and are read by all threads at once (broadcast). Per pair: one FFMA (r^2), one MUFU, one FFMA.
template <bool kMixed, class OutT>
__global__ void __launch_bounds__(128) dcs_fast(const float4 *__restrict__ atoms, int n_tiles,
                                                OutT *__restrict__ out, int nxp, int nyp, float hx, float hy,
                                                float hz, int k0) {
    __shared__ float4 tile[kAtomTile];
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int i0 = blockIdx.x * kTileX + threadIdx.x;
    const int j0 = blockIdx.y * 8 + threadIdx.y * 2;
    const float py0 = j0 * hy, py1 = (j0 + 1) * hy, pz = (k0 + static_cast<int>(blockIdx.z)) * hz;
    float px[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) px[u] = (i0 + 32 * u) * hx;
    float acc[2][4] = {};
    double tot[2][4] = {};
    for (int t = 0; t < n_tiles; ++t) {
        __syncthreads();
        tile[tid] = atoms[t * kAtomTile + tid];
        tile[tid + 128] = atoms[t * kAtomTile + 128 + tid];
        __syncthreads();
#pragma unroll 4
        for (int a = 0; a < kAtomTile; ++a) {
            const float4 at = tile[a];
            const float dz = pz - at.z, dy0 = py0 - at.y, dy1 = py1 - at.y;
            const float dz2 = dz * dz;
            const float r0 = fmaf(dy0, dy0, dz2), r1 = fmaf(dy1, dy1, dz2);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const float dx = px[u] - at.x;
                acc[0][u] = fmaf(at.w, rsqrt_ftz(fmaf(dx, dx, r0)), acc[0][u]);
                acc[1][u] = fmaf(at.w, rsqrt_ftz(fmaf(dx, dx, r1)), acc[1][u]);
            }
        }
        if (kMixed) {
#pragma unroll
            for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int u = 0; u < 4; ++u) tot[r][u] += acc[r][u], acc[r][u] = 0.f;
        }
    }
    const size_t base = (static_cast<size_t>(blockIdx.z) * nyp + j0) * nxp + i0;
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int u = 0; u < 4; ++u)
            out[base + static_cast<size_t>(r) * nxp + 32 * u] = kMixed ? static_cast<OutT>(tot[r][u])
                                                                       : static_cast<OutT>(acc[r][u]);
}

// Double precision: same decomposition, double pairs (rsqrt() is ~1 ulp in double).
__global__ void __launch_bounds__(128) dcs_fast_double(const double4_32a *__restrict__ atoms, int n_tiles,
                                                       double *__restrict__ out, int nxp, int nyp, double hx,
                                                       double hy, double hz, int k0) {
    __shared__ double4_32a tile[kAtomTile];
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int i0 = blockIdx.x * kTileX + threadIdx.x;
    const int j0 = blockIdx.y * 8 + threadIdx.y * 2;
    const double py0 = j0 * hy, py1 = (j0 + 1) * hy, pz = (k0 + static_cast<int>(blockIdx.z)) * hz;
    double px[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) px[u] = (i0 + 32 * u) * hx;
    double acc[2][4] = {};
    for (int t = 0; t < n_tiles; ++t) {
        __syncthreads();
        tile[tid] = atoms[t * kAtomTile + tid];
        tile[tid + 128] = atoms[t * kAtomTile + 128 + tid];
        __syncthreads();
#pragma unroll 2
        for (int a = 0; a < kAtomTile; ++a) {
            const double4_32a at = tile[a];
            const double dz = pz - at.z, dy0 = py0 - at.y, dy1 = py1 - at.y;
            const double dz2 = dz * dz;
            const double r0 = fma(dy0, dy0, dz2), r1 = fma(dy1, dy1, dz2);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const double dx = px[u] - at.x;
                acc[0][u] = fma(at.w, rsqrt(fma(dx, dx, r0)), acc[0][u]);
                acc[1][u] = fma(at.w, rsqrt(fma(dx, dx, r1)), acc[1][u]);
            }
        }
    }
    const size_t base = (static_cast<size_t>(blockIdx.z) * nyp + j0) * nxp + i0;
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int u = 0; u < 4; ++u) out[base + static_cast<size_t>(r) * nxp + 32 * u] = acc[r][u];
}

}  // namespace

cudaError_t launch_planes(int precision, const void *atoms, int n_tiles, void *out, int nxp, int nyp, int n_planes,
                          const double h[3], int k0, cudaStream_t s) {
    const float hx = static_cast<float>(h[0]), hy = static_cast<float>(h[1]), hz = static_cast<float>(h[2]);
    const dim3 block(32, 4), grid(static_cast<unsigned>(nxp / kTileX), static_cast<unsigned>(nyp / 8),
                                  static_cast<unsigned>(n_planes));
    if (precision == QMMM_PRECISION_DOUBLE)
        dcs_fast_double<<<grid, block, 0, s>>>(static_cast<const double4_32a *>(atoms), n_tiles,
                                               static_cast<double *>(out), nxp, nyp, h[0], h[1], h[2], k0);
    else if (precision == QMMM_PRECISION_MIXED)
        dcs_fast<true, double><<<grid, block, 0, s>>>(static_cast<const float4 *>(atoms), n_tiles,
                                                      static_cast<double *>(out), nxp, nyp, hx, hy, hz, k0);
    else
        dcs_fast<false, float><<<grid, block, 0, s>>>(static_cast<const float4 *>(atoms), n_tiles,
                                                      static_cast<float *>(out), nxp, nyp, hx, hy, hz, k0);
    return cudaGetLastError();
}

}  // namespace qmmm::cuda::dcs
