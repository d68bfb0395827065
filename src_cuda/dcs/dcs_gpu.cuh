// dcs_gpu.cuh -- DCS potential maps on one GPU: the device layout shared by the kernels (dcs_gpu_kernels.cu) and the
// host side (dcs_gpu.cu), the kernels' launcher, and the per-thread device state.
//
// Layout on the device: a piece of nk planes, each padded to nyp x nxp points (nxp a multiple of 128,
// nyp of 16), so no thread tests an edge (padding instead of branches, as in VMD's DCS kernels); the padding
// is dropped when the piece is copied into the caller's map.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "dcs_backend.hpp"

namespace qmmm::cuda::dcs {

constexpr int kTileX = 128;       // 128 points in x per block
constexpr int kPadY = 16;         // rows padded to a multiple of 16 (blocks take 8 rows)
constexpr int kAtomTile = 256;    // atoms staged in shared memory per step
static_assert(kAtomTile == kDcsMixedBlock, "MIXED partial sums must match the CPU's blocks");
constexpr float kFar = 1e6f;      // padding atoms: q = 0 far away, so 0 * finite = 0

// The map points of planes k0 .. k0 + n_planes - 1 of a piece (nxp x nyp each, spacing h) against the atoms (n_tiles
// tiles of kAtomTile: float4 in SINGLE and MIXED, double4_32a in DOUBLE; padding q = 0 at kFar) into out (float in
// SINGLE, double otherwise). Launches one kernel in stream s; returns its launch status.
cudaError_t launch_planes(int precision, const void *atoms, int n_tiles, void *out, int nxp, int nyp, int n_planes,
                          const double h[3], int k0, cudaStream_t s);

// A thread's device state (one per pool thread and GPU): its stream, the atoms and a piece of planes on the device
// with its pinned host copy, grown on demand and kept between calls.
struct DeviceState {
    int device = 0;
    cudaStream_t stream = nullptr;
    void *d_atoms = nullptr;
    size_t atoms_bytes = 0;
    int n_tiles = 0;
    void *d_piece = nullptr, *h_piece = nullptr;  // device piece and its pinned host copy
    size_t piece_bytes = 0;

    explicit DeviceState(int dev);
    ~DeviceState();
    DeviceState(const DeviceState &) = delete;
    DeviceState &operator=(const DeviceState &) = delete;
    // The atoms' buffer holds at least bytes (its contents are not kept).
    void ensure_atoms(size_t bytes);
    // The piece buffers hold at least bytes (contents not kept).
    void ensure_piece(size_t bytes);
};

}  // namespace qmmm::cuda::dcs
