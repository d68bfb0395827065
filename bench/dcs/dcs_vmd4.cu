// dcs_vmd4.cu -- VMD's version-4 DCS kernel as published; see dcs_vmd4.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "dcs_vmd4.hpp"

namespace {

constexpr int kTileX = 128;      // 16 threads x 8 points in x per block
constexpr int kPadY = 16;        // 16 rows per block
constexpr int kVmdBatch = 4000;  // atoms per constant-memory batch (64 kB)

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

// Kept as written apart from the 3-D grid over a slab of planes (kSlice = false: dz is then computed per
// atom instead of stored per slice).
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
        if (kSlice) {  // .z holds dz^2 for this plane
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

}  // namespace

double dcs_vmd4_map(int64_t n_atoms, const double *xyz, const double *q, const double origin[3],
                    const double spacing[3], const int64_t count[3], double *map, bool slice, int device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaFree(nullptr), "CUDA context");
    const int64_t nx = count[0], ny = count[1], nz = count[2], nxp = round_up(nx, kTileX), nyp = round_up(ny, kPadY);
    const size_t plane_bytes = static_cast<size_t>(nxp * nyp) * sizeof(float);
    // Pieces of as many planes as 80 % of the free memory holds (at most 65,535, the grid's z limit).
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const int64_t fit = static_cast<int64_t>(0.8 * static_cast<double>(free_b) / 2 / static_cast<double>(plane_bytes));
    if (fit < 1) throw std::runtime_error("dcs_vmd4_map: one padded plane does not fit in GPU memory");
    const int64_t per = std::min<int64_t>({nz, fit, 65535});
    float *d_piece = nullptr, *h_piece = nullptr;
    cudaStream_t stream = nullptr;
    check(cudaMalloc(&d_piece, per * plane_bytes), "cudaMalloc (map piece)");
    check(cudaMallocHost(&h_piece, per * plane_bytes), "cudaMallocHost (map piece)");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    const float hx = static_cast<float>(spacing[0]), hy = static_cast<float>(spacing[1]),
                hz = static_cast<float>(spacing[2]);
    std::vector<float4> batch(kVmdBatch);
    // Timed from here (the library's maps keep their buffers between calls too).
    const auto t0 = std::chrono::steady_clock::now();
    // Atoms relative to the lattice origin, in float.
    std::vector<float4> atoms(static_cast<size_t>(n_atoms));
    for (int64_t a = 0; a < n_atoms; ++a)
        atoms[a] = float4{static_cast<float>(xyz[3 * a] - origin[0]), static_cast<float>(xyz[3 * a + 1] - origin[1]),
                          static_cast<float>(xyz[3 * a + 2] - origin[2]), static_cast<float>(q[a])};
    try {
        for (int64_t s = 0; s < nz; s += per) {
            const int64_t m = std::min(per, nz - s);
            const int kz = static_cast<int>(s);
            check(cudaMemsetAsync(d_piece, 0, m * plane_bytes, stream), "cudaMemsetAsync");
            if (slice) {
                // As VMD launches it: per plane, per batch of 4000 atoms, dz^2 computed on the host.
                const dim3 block(16, 16), grid(static_cast<unsigned>(nxp / kTileX), static_cast<unsigned>(nyp / 16), 1);
                for (int64_t k = 0; k < m; ++k) {
                    const float z = static_cast<float>((s + k) * spacing[2]);
                    for (int64_t a0 = 0; a0 < n_atoms; a0 += kVmdBatch) {
                        const int cnt = static_cast<int>(std::min<int64_t>(kVmdBatch, n_atoms - a0));
                        for (int a = 0; a < cnt; ++a) {
                            const float4 at = atoms[a0 + a];
                            const float dz = z - at.z;
                            batch[a] = float4{at.x, at.y, dz * dz, at.w};
                        }
                        // From pageable memory: returns once staged, so `batch` may be refilled (VMD's host
                        // shuffles atom data in for each pass).
                        check(cudaMemcpyToSymbolAsync(c_atominfo, batch.data(), cnt * sizeof(float4), 0,
                                                      cudaMemcpyHostToDevice, stream),
                              "cudaMemcpyToSymbolAsync");
                        dcs_vmd4<true><<<grid, block, 0, stream>>>(cnt, d_piece + k * nxp * nyp, static_cast<int>(nxp),
                                                                   static_cast<int>(nyp), hx, hy, hz, kz);
                    }
                }
            } else {
                const dim3 block(16, 16), grid(static_cast<unsigned>(nxp / kTileX), static_cast<unsigned>(nyp / 16),
                                               static_cast<unsigned>(m));
                for (int64_t a0 = 0; a0 < n_atoms; a0 += kVmdBatch) {
                    const int cnt = static_cast<int>(std::min<int64_t>(kVmdBatch, n_atoms - a0));
                    check(cudaMemcpyToSymbolAsync(c_atominfo, atoms.data() + a0, cnt * sizeof(float4), 0,
                                                  cudaMemcpyHostToDevice, stream),
                          "cudaMemcpyToSymbolAsync");
                    dcs_vmd4<false><<<grid, block, 0, stream>>>(cnt, d_piece, static_cast<int>(nxp),
                                                                static_cast<int>(nyp), hx, hy, hz, kz);
                }
            }
            check(cudaGetLastError(), "VMD4 kernel launch");
            check(cudaMemcpyAsync(h_piece, d_piece, m * plane_bytes, cudaMemcpyDeviceToHost, stream),
                  "cudaMemcpyAsync (map piece)");
            check(cudaStreamSynchronize(stream), "VMD4 kernel");
            for (int64_t k = 0; k < m; ++k)
                for (int64_t j = 0; j < ny; ++j)
                    for (int64_t i = 0; i < nx; ++i)
                        map[i + nx * (j + ny * (s + k))] = h_piece[(k * nyp + j) * nxp + i];
        }
    } catch (...) {
        cudaStreamDestroy(stream), cudaFree(d_piece), cudaFreeHost(h_piece);
        throw;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cudaStreamDestroy(stream), cudaFree(d_piece), cudaFreeHost(h_piece);
    return seconds;
}
