// dcs_gpu.cu -- DCS potential maps on one GPU: the fast kernels (float, mixed, double) and the per-thread
// device state that computes slabs of planes in pieces.
//
// Layout on the device: a piece of nk planes, each padded to nyp x nxp points (nxp a multiple of 128,
// nyp of 16), so no thread tests an edge (padding instead of branches, as in VMD's DCS kernels); the padding
// is dropped when the piece is copied into the caller's map.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core_gpu.cuh"
#include "dcs_backend.hpp"
#include "error.hpp"

namespace qmmm::cuda {
namespace {

constexpr int kTileX = 128;       // 128 points in x per block
constexpr int kPadY = 16;         // rows padded to a multiple of 16 (blocks take 8 rows)
constexpr int kAtomTile = 256;    // atoms staged in shared memory per step
static_assert(kAtomTile == kDcsMixedBlock, "MIXED partial sums must match the CPU's blocks");
constexpr float kFar = 1e6f;      // padding atoms: q = 0 far away, so 0 * finite = 0

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

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

class DcsDeviceImpl final : public DcsDevice {
public:
    explicit DcsDeviceImpl(int dev) : device(dev) {
        check(cudaSetDevice(device), "cudaSetDevice");
        check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    }
    ~DcsDeviceImpl() override {
        cudaFree(d_atoms);
        cudaFree(d_piece);
        cudaFreeHost(h_piece);
        if (stream) cudaStreamDestroy(stream);
    }
    void set_atoms(const DcsProblem &p) override;
    int64_t planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out) override;

    int device = 0;
    cudaStream_t stream = nullptr;
    void *d_atoms = nullptr;
    size_t atoms_bytes = 0;
    int n_tiles = 0;
    void *d_piece = nullptr, *h_piece = nullptr;  // device piece and its pinned host copy
    size_t piece_bytes = 0;
};

void DcsDeviceImpl::set_atoms(const DcsProblem &p) {
    DcsDeviceImpl *d = this;
    const int64_t padded = round_up(std::max<int64_t>(p.n_atoms, 1), kAtomTile);
    if (padded / kAtomTile > (1 << 30)) throw Error(QMMM_ERR_INVALID_ARG, "too many atoms for one GPU map");
    d->n_tiles = static_cast<int>(padded / kAtomTile);
    const bool dbl = p.precision == QMMM_PRECISION_DOUBLE;
    const size_t bytes = padded * (dbl ? sizeof(double4_32a) : sizeof(float4));
    if (bytes > d->atoms_bytes) {
        cudaFree(d->d_atoms);
        d->d_atoms = nullptr, d->atoms_bytes = 0;
        check(cudaMalloc(&d->d_atoms, bytes), "cudaMalloc (atoms)");
        d->atoms_bytes = bytes;
    }
    if (dbl) {
        std::vector<double4_32a> h(padded, double4_32a{kFar, kFar, kFar, 0.0});
        for (int64_t a = 0; a < p.n_atoms; ++a) h[a] = double4_32a{p.x[a], p.y[a], p.z[a], p.q[a]};
        check(cudaMemcpy(d->d_atoms, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (atoms)");
    } else {
        std::vector<float4> h(padded, float4{kFar, kFar, kFar, 0.f});
        for (int64_t a = 0; a < p.n_atoms; ++a)
            h[a] = float4{static_cast<float>(p.x[a]), static_cast<float>(p.y[a]), static_cast<float>(p.z[a]),
                          static_cast<float>(p.q[a])};
        check(cudaMemcpy(d->d_atoms, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (atoms)");
    }
}

int64_t DcsDeviceImpl::planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out) {
    DcsDeviceImpl *d = this;
    const int64_t nx = p.n[0], ny = p.n[1], nxp = round_up(nx, kTileX), nyp = round_up(ny, kPadY);
    const size_t elem = p.precision == QMMM_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
    const size_t plane_bytes = static_cast<size_t>(nxp * nyp) * elem;
    if (nxp / kTileX > (1u << 31) - 1 || nyp > 65535 * 8) throw Error(QMMM_ERR_INVALID_ARG, "lattice rows too long for the GPU grid");
    // Pieces: as many planes as the budget holds (maps larger than GPU memory go through in parts).
    double budget = p.max_device_bytes;
    if (budget <= 0) {
        size_t free_b = 0, total_b = 0;
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        budget = 0.8 * static_cast<double>(free_b + d->piece_bytes);
    }
    const int64_t fit = static_cast<int64_t>(budget / static_cast<double>(plane_bytes));
    if (fit < 1)
        throw Error(QMMM_ERR_OUT_OF_MEMORY, "one padded plane needs " + std::to_string(plane_bytes) +
                                                " bytes of GPU memory but the budget is " +
                                                std::to_string(static_cast<long long>(budget)) + " bytes");
    const int64_t per = std::min<int64_t>({nk, fit, 65535});
    const size_t need = static_cast<size_t>(per) * plane_bytes;
    if (need > d->piece_bytes) {
        cudaFree(d->d_piece);
        cudaFreeHost(d->h_piece);
        d->d_piece = d->h_piece = nullptr, d->piece_bytes = 0;
        check(cudaMalloc(&d->d_piece, need), "cudaMalloc (map piece)");
        check(cudaMallocHost(&d->h_piece, need), "cudaMallocHost (map piece)");
        d->piece_bytes = need;
    }
    int64_t pieces = 0;
    for (int64_t s = 0; s < nk; s += per, ++pieces) {
        const int64_t m = std::min(per, nk - s);
        const int kz = static_cast<int>(k0 + s);
        const float hx = static_cast<float>(p.h[0]), hy = static_cast<float>(p.h[1]), hz = static_cast<float>(p.h[2]);
        const dim3 block(32, 4), grid(static_cast<unsigned>(nxp / kTileX), static_cast<unsigned>(nyp / 8),
                                      static_cast<unsigned>(m));
        const int ixp = static_cast<int>(nxp), iyp = static_cast<int>(nyp);
        if (p.precision == QMMM_PRECISION_DOUBLE)
            dcs_fast_double<<<grid, block, 0, d->stream>>>(static_cast<const double4_32a *>(d->d_atoms), d->n_tiles,
                                                           static_cast<double *>(d->d_piece), ixp, iyp, p.h[0],
                                                           p.h[1], p.h[2], kz);
        else if (p.precision == QMMM_PRECISION_MIXED)
            dcs_fast<true, double><<<grid, block, 0, d->stream>>>(static_cast<const float4 *>(d->d_atoms),
                                                                  d->n_tiles, static_cast<double *>(d->d_piece),
                                                                  ixp, iyp, hx, hy, hz, kz);
        else
            dcs_fast<false, float><<<grid, block, 0, d->stream>>>(static_cast<const float4 *>(d->d_atoms),
                                                                  d->n_tiles, static_cast<float *>(d->d_piece),
                                                                  ixp, iyp, hx, hy, hz, kz);
        check(cudaGetLastError(), "DCS kernel launch");
        check(cudaMemcpyAsync(d->h_piece, d->d_piece, m * plane_bytes, cudaMemcpyDeviceToHost, d->stream),
              "cudaMemcpyAsync (map piece)");
        check(cudaStreamSynchronize(d->stream), "DCS kernel");
        dcs_copy_piece(d->h_piece, elem == sizeof(float), nxp, nyp, nx, ny, m, out + s * nx * ny);
    }
    return pieces;
}

class DcsGpuImpl final : public DcsGpu {
public:
    std::unique_ptr<DcsDevice> open(int device) const override { return std::make_unique<DcsDeviceImpl>(device); }
};
const DcsGpuImpl impl;
const GpuRegistry<DcsGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
