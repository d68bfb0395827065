// dcs_gpu.cu -- DCS potential maps on one GPU: the fast kernel, the seed's version-4 kernel (the
// benchmark baseline), and the per-thread device state that computes slabs of planes in pieces.
//
// Layout on the device: a piece of nk planes, each padded to nyp x nxp points (nxp a multiple of 128,
// nyp of 16), so no thread tests an edge (seed 002: padding instead of branches); the padding is
// dropped when the piece is copied into the caller's map.
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

constexpr int kTileX = 128;       // both kernels: 128 points in x per block
constexpr int kPadY = 16;         // VMD4 blocks are 16 rows; the fast kernel's 8 divide it
constexpr int kAtomTile = 256;    // fast kernel: atoms staged in shared memory per step
constexpr int kVmdBatch = 4000;   // VMD4: atoms per constant-memory batch (seed 002)
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

// The seed's version 4 (seed 002), kept as written apart from the 3-D grid over a slab of planes
// (dz is then computed per atom instead of stored per slice): atoms in constant memory in batches of
// 4000, 16 x 16 threads, 8 points per thread a half-warp (16 points) apart, added to the map at the end.
__constant__ float4 c_atominfo[kVmdBatch];

template <bool kSlice>
__global__ void dcs_vmd4(int numatoms, float *energygrid, int nxp, int nyp, float hx, float hy, float hz, int k0) {
    const unsigned xindex = blockIdx.x * blockDim.x * 8 + threadIdx.x;
    const unsigned yindex = blockIdx.y * blockDim.y + threadIdx.y;
    const size_t outaddr = (static_cast<size_t>(blockIdx.z) * nyp + yindex) * nxp + xindex;
    const float coorx = hx * xindex, coory = hy * yindex, coorz = hz * (k0 + static_cast<int>(blockIdx.z));
    const float gridspacing_coalesce = hx * 16;
    float energyvalx1 = 0, energyvalx2 = 0, energyvalx3 = 0, energyvalx4 = 0, energyvalx5 = 0, energyvalx6 = 0,
          energyvalx7 = 0, energyvalx8 = 0;
    for (int atomid = 0; atomid < numatoms; atomid++) {
        const float dy = coory - c_atominfo[atomid].y;
        float dyz2;
        if (kSlice) {  // the seed: .z holds dz^2 for this plane
            dyz2 = (dy * dy) + c_atominfo[atomid].z;
        } else {
            const float dz = coorz - c_atominfo[atomid].z;
            dyz2 = (dy * dy) + dz * dz;
        }
        const float dx1 = coorx - c_atominfo[atomid].x;
        const float dx2 = dx1 + gridspacing_coalesce;
        const float dx3 = dx2 + gridspacing_coalesce;
        const float dx4 = dx3 + gridspacing_coalesce;
        const float dx5 = dx4 + gridspacing_coalesce;
        const float dx6 = dx5 + gridspacing_coalesce;
        const float dx7 = dx6 + gridspacing_coalesce;
        const float dx8 = dx7 + gridspacing_coalesce;
        const float w = c_atominfo[atomid].w;
        energyvalx1 += w * rsqrtf(dx1 * dx1 + dyz2);
        energyvalx2 += w * rsqrtf(dx2 * dx2 + dyz2);
        energyvalx3 += w * rsqrtf(dx3 * dx3 + dyz2);
        energyvalx4 += w * rsqrtf(dx4 * dx4 + dyz2);
        energyvalx5 += w * rsqrtf(dx5 * dx5 + dyz2);
        energyvalx6 += w * rsqrtf(dx6 * dx6 + dyz2);
        energyvalx7 += w * rsqrtf(dx7 * dx7 + dyz2);
        energyvalx8 += w * rsqrtf(dx8 * dx8 + dyz2);
    }
    energygrid[outaddr] += energyvalx1;
    energygrid[outaddr + 1 * 16] += energyvalx2;
    energygrid[outaddr + 2 * 16] += energyvalx3;
    energygrid[outaddr + 3 * 16] += energyvalx4;
    energygrid[outaddr + 4 * 16] += energyvalx5;
    energygrid[outaddr + 5 * 16] += energyvalx6;
    energygrid[outaddr + 6 * 16] += energyvalx7;
    energygrid[outaddr + 7 * 16] += energyvalx8;
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
    std::vector<float4> h_atoms;  // VMD4 batches go through constant memory from here
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
        d->h_atoms.assign(padded, float4{kFar, kFar, kFar, 0.f});
        for (int64_t a = 0; a < p.n_atoms; ++a)
            d->h_atoms[a] = float4{static_cast<float>(p.x[a]), static_cast<float>(p.y[a]), static_cast<float>(p.z[a]),
                                   static_cast<float>(p.q[a])};
        check(cudaMemcpy(d->d_atoms, d->h_atoms.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (atoms)");
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
        if (p.kernel == QMMM_DCS_KERNEL_VMD4_SLICE) {
            // As the seed launches it: per plane, per batch of 4000 atoms, dz^2 computed on the host.
            check(cudaMemsetAsync(d->d_piece, 0, m * plane_bytes, d->stream), "cudaMemsetAsync");
            const dim3 block(16, 16), grid(static_cast<unsigned>(nxp / kTileX), static_cast<unsigned>(nyp / 16), 1);
            std::vector<float4> batch(kVmdBatch);
            for (int64_t k = 0; k < m; ++k) {
                const float z = static_cast<float>((k0 + s + k) * p.h[2]);
                for (int64_t a0 = 0; a0 < p.n_atoms; a0 += kVmdBatch) {
                    const int cnt = static_cast<int>(std::min<int64_t>(kVmdBatch, p.n_atoms - a0));
                    for (int a = 0; a < cnt; ++a) {
                        const float4 at = d->h_atoms[a0 + a];
                        const float dz = z - at.z;
                        batch[a] = float4{at.x, at.y, dz * dz, at.w};
                    }
                    // From pageable memory: returns once staged, so `batch` may be refilled (seed: the
                    // host shuffles atom data in for each pass).
                    check(cudaMemcpyToSymbolAsync(c_atominfo, batch.data(), cnt * sizeof(float4), 0,
                                                  cudaMemcpyHostToDevice, d->stream),
                          "cudaMemcpyToSymbolAsync");
                    dcs_vmd4<true><<<grid, block, 0, d->stream>>>(
                        cnt, static_cast<float *>(d->d_piece) + k * nxp * nyp, static_cast<int>(nxp),
                        static_cast<int>(nyp), hx, hy, hz, kz);
                }
            }
        } else if (p.kernel == QMMM_DCS_KERNEL_VMD4) {
            check(cudaMemsetAsync(d->d_piece, 0, m * plane_bytes, d->stream), "cudaMemsetAsync");
            const dim3 block(16, 16), grid(static_cast<unsigned>(nxp / kTileX), static_cast<unsigned>(nyp / 16),
                                           static_cast<unsigned>(m));
            for (int64_t a0 = 0; a0 < p.n_atoms; a0 += kVmdBatch) {
                const int cnt = static_cast<int>(std::min<int64_t>(kVmdBatch, p.n_atoms - a0));
                check(cudaMemcpyToSymbolAsync(c_atominfo, d->h_atoms.data() + a0, cnt * sizeof(float4), 0,
                                              cudaMemcpyHostToDevice, d->stream),
                      "cudaMemcpyToSymbolAsync");
                dcs_vmd4<false><<<grid, block, 0, d->stream>>>(cnt, static_cast<float *>(d->d_piece), static_cast<int>(nxp),
                                                       static_cast<int>(nyp), hx, hy, hz, kz);
            }
        } else {
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
        }
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
