// dcs_backend.hpp -- the validated DCS problem shared by the CPU kernel, the GPU pool and the CUDA code.
#pragma once
#include <cstdint>
#include <vector>

#include "qmmm_accel.h"

namespace qmmm {

// Atoms relative to the lattice origin (bohr), so single precision keeps its digits near the map.
struct DcsProblem {
    int64_t n_atoms = 0;
    std::vector<double> x, y, z, q;  // relative to origin
    double h[3] = {1, 1, 1};
    int64_t n[3] = {1, 1, 1};
    int precision = QMMM_PRECISION_SINGLE;
    int kernel = QMMM_DCS_KERNEL_FAST;
    int n_threads = 0;
    double max_device_bytes = 0;
};

// Atoms per partial sum in MIXED precision (same on CPU and GPU).
constexpr int kDcsMixedBlock = 256;

// CPU: planes [k0, k0+nk) of the map into out (nx*ny*nk doubles). OpenMP inside.
void dcs_cpu_planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out);

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
