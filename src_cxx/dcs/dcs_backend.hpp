// dcs_backend.hpp -- the validated DCS problem shared by the CPU kernel, the GPU pool and the CUDA code, and
// the GPU interface (implemented by src_cuda/dcs/dcs_gpu.cu, reached through GpuRegistry<DcsGpu>).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu_registry.hpp"
#include "qmmm_accel_dcs.h"

namespace qmmm {

// Atoms relative to the lattice origin (bohr), so single precision keeps its digits near the map.
struct DcsProblem {
    int64_t n_atoms = 0;
    std::vector<double> x, y, z, q;  // relative to origin
    double h[3] = {1, 1, 1};
    int64_t n[3] = {1, 1, 1};
    int precision = QMMM_PRECISION_SINGLE;
    int n_threads = 0;
    double max_device_bytes = 0;
};

// Atoms per partial sum in MIXED precision (same on CPU and GPU).
constexpr int kDcsMixedBlock = 256;

// CPU: planes [k0, k0+nk) of the map into out (nx*ny*nk doubles). OpenMP inside.
void dcs_cpu_planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out);

// One GPU's DCS state (stream, atoms, piece buffers), used by one persistent host thread (dcs_pool.cpp).
// Every call throws qmmm::Error.
class DcsDevice {
public:
    virtual ~DcsDevice() = default;
    virtual void set_atoms(const DcsProblem &p) = 0;
    // Planes [k0, k0+nk) of the map into out (nx*ny*nk doubles), in pieces that fit the memory budget;
    // returns the number of pieces.
    virtual int64_t planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out) = 0;
};
class DcsGpu {
public:
    virtual ~DcsGpu() = default;
    // Binds the calling thread to `device` for good and makes its state.
    virtual std::unique_ptr<DcsDevice> open(int device) const = 0;
};

// GPUs: the whole map, slabs handed to one persistent host thread per listed device. Throws qmmm::Error.
struct DcsRunInfo {
    int64_t n_pieces = 0;
};
void dcs_gpu_map(const DcsProblem &p, const std::vector<int> &devices, double *map,
                 qmmm_dcs_progress_fn progress, void *user, DcsRunInfo *info);
void dcs_gpu_release();

// Padded device piece (m planes of nyp x nxp, float or double) into the map (nx x ny x m), OpenMP.
void dcs_copy_piece(const void *src, bool is_float, int64_t nxp, int64_t nyp, int64_t nx, int64_t ny, int64_t m,
                    double *out);

}  // namespace qmmm
