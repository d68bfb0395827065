// dcs_gpu.cu -- DCS potential maps on one GPU, host side: the per-thread device state (dcs_gpu.cuh: stream, atoms,
// pieces of planes) and the dispatch that computes slabs of planes in pieces that fit the GPU's memory. The kernels
// are dcs_gpu_kernels.cu's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core_gpu.cuh"
#include "dcs_backend.hpp"
#include "dcs_gpu.cuh"
#include "error.hpp"

namespace qmmm::cuda {
namespace dcs {

DeviceState::DeviceState(int dev) : device(dev) {
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
}
DeviceState::~DeviceState() {
    cudaFree(d_atoms);
    cudaFree(d_piece);
    cudaFreeHost(h_piece);
    if (stream) cudaStreamDestroy(stream);
}
void DeviceState::ensure_atoms(size_t bytes) {
    if (bytes <= atoms_bytes) return;
    cudaFree(d_atoms);
    d_atoms = nullptr, atoms_bytes = 0;
    check(cudaMalloc(&d_atoms, bytes), "cudaMalloc (atoms)");
    atoms_bytes = bytes;
}
void DeviceState::ensure_piece(size_t bytes) {
    if (bytes <= piece_bytes) return;
    cudaFree(d_piece);
    cudaFreeHost(h_piece);
    d_piece = h_piece = nullptr, piece_bytes = 0;
    check(cudaMalloc(&d_piece, bytes), "cudaMalloc (map piece)");
    check(cudaMallocHost(&h_piece, bytes), "cudaMallocHost (map piece)");
    piece_bytes = bytes;
}

}  // namespace dcs

namespace {

using namespace dcs;

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

class DcsDeviceImpl final : public DcsDevice {
public:
    explicit DcsDeviceImpl(int dev) : d(dev) {}
    void set_atoms(const DcsProblem &p) override;
    int64_t planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out) override;

private:
    DeviceState d;
};

void DcsDeviceImpl::set_atoms(const DcsProblem &p) {
    const int64_t padded = round_up(std::max<int64_t>(p.n_atoms, 1), kAtomTile);
    if (padded / kAtomTile > (1 << 30)) throw Error(QMMM_ERR_INVALID_ARG, "too many atoms for one GPU map");
    d.n_tiles = static_cast<int>(padded / kAtomTile);
    const bool dbl = p.precision == QMMM_PRECISION_DOUBLE;
    const size_t bytes = padded * (dbl ? sizeof(double4_32a) : sizeof(float4));
    d.ensure_atoms(bytes);
    if (dbl) {
        std::vector<double4_32a> h(padded, double4_32a{kFar, kFar, kFar, 0.0});
        for (int64_t a = 0; a < p.n_atoms; ++a) h[a] = double4_32a{p.x[a], p.y[a], p.z[a], p.q[a]};
        check(cudaMemcpy(d.d_atoms, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (atoms)");
    } else {
        std::vector<float4> h(padded, float4{kFar, kFar, kFar, 0.f});
        for (int64_t a = 0; a < p.n_atoms; ++a)
            h[a] = float4{static_cast<float>(p.x[a]), static_cast<float>(p.y[a]), static_cast<float>(p.z[a]),
                          static_cast<float>(p.q[a])};
        check(cudaMemcpy(d.d_atoms, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (atoms)");
    }
}

int64_t DcsDeviceImpl::planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out) {
    const int64_t nx = p.n[0], ny = p.n[1], nxp = round_up(nx, kTileX), nyp = round_up(ny, kPadY);
    const size_t elem = p.precision == QMMM_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
    const size_t plane_bytes = static_cast<size_t>(nxp * nyp) * elem;
    if (nxp / kTileX > (1u << 31) - 1 || nyp > 65535 * 8) throw Error(QMMM_ERR_INVALID_ARG, "lattice rows too long for the GPU grid");
    // Pieces: as many planes as the budget holds (maps larger than GPU memory go through in parts).
    double budget = p.max_device_bytes;
    if (budget <= 0) {
        size_t free_b = 0, total_b = 0;
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        budget = 0.8 * static_cast<double>(free_b + d.piece_bytes);
    }
    const int64_t fit = static_cast<int64_t>(budget / static_cast<double>(plane_bytes));
    if (fit < 1)
        throw Error(QMMM_ERR_OUT_OF_MEMORY, "one padded plane needs " + std::to_string(plane_bytes) +
                                                " bytes of GPU memory but the budget is " +
                                                std::to_string(static_cast<long long>(budget)) + " bytes");
    const int64_t per = std::min<int64_t>({nk, fit, 65535});
    d.ensure_piece(static_cast<size_t>(per) * plane_bytes);
    int64_t pieces = 0;
    for (int64_t s = 0; s < nk; s += per, ++pieces) {
        const int64_t m = std::min(per, nk - s);
        check(launch_planes(p.precision, d.d_atoms, d.n_tiles, d.d_piece, static_cast<int>(nxp), static_cast<int>(nyp),
                            static_cast<int>(m), p.h, static_cast<int>(k0 + s), d.stream),
              "DCS kernel launch");
        check(cudaMemcpyAsync(d.h_piece, d.d_piece, m * plane_bytes, cudaMemcpyDeviceToHost, d.stream),
              "cudaMemcpyAsync (map piece)");
        check(cudaStreamSynchronize(d.stream), "DCS kernel");
        dcs_copy_piece(d.h_piece, elem == sizeof(float), nxp, nyp, nx, ny, m, out + s * nx * ny);
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
