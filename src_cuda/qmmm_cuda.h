// qmmm_cuda.h -- the one internal header that declares every CUDA entry point of the library
// (VMD's organisation: one header, one .cu per kernel family). Host C++ code includes it; when the
// library is built without CUDA, src_cxx/cuda_stub.cpp defines the same functions to say so.
// Nothing here is public API.
#pragma once
#include <cstdint>
#include <memory>

#include "field_backend.hpp"
#include "dcs_backend.hpp"
#include "rdf_backend.hpp"

namespace qmmm::cuda {

// ---- device management (src_cuda/device.cu) ----
// Number of usable CUDA devices; 0 (and QMMM_SUCCESS) where there is no driver or no GPU.
int device_count(int *count);

// ---- embedding field (src_cuda/field_*.cu) ----
// Throws qmmm::Error (QMMM_ERR_NO_CUDA, _NO_DEVICE, _CUDA, _OUT_OF_MEMORY) on failure.
std::unique_ptr<FieldBackend> make_field(const FieldData &d, const qmmm_options &opt);

// ---- DCS potential maps (src_cuda/dcs*.cu) ----
// One DcsDevice per persistent host thread (src_cxx/dcs_gpu_pool.cpp): stream, atoms and piece buffers
// on one device. Every call throws qmmm::Error (QMMM_ERR_NO_CUDA from src_cxx/dcs_cuda_stub.cpp).
struct DcsDevice;
// Binds the calling thread to `device` for good (cudaSetDevice) and makes its state.
DcsDevice *dcs_device_open(int device);
void dcs_device_close(DcsDevice *d) noexcept;
void dcs_device_set_atoms(DcsDevice *d, const DcsProblem &p);
// Planes [k0, k0+nk) of the map into out (nx*ny*nk doubles), in pieces that fit the memory budget;
// returns the number of pieces.
int64_t dcs_device_planes(DcsDevice *d, const DcsProblem &p, int64_t k0, int64_t nk, double *out);

// ---- RDF histograms (src_cuda/rdf_kernels.cu): declared in src_cxx/rdf_device.hpp, which the CUDA and the
// stub sides share, so the per-GPU pool (rdf_gpu_pool.cpp) builds the same with and without CUDA.

}  // namespace qmmm::cuda
