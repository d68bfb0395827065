// qmmm_cuda.h -- the one internal header that declares every CUDA entry point of the library
// (VMD's organisation: one header, one .cu per kernel family). Host C++ code includes it; when the
// library is built without CUDA, src_cxx/cuda_stub.cpp defines the same functions to say so.
// Nothing here is public API.
#pragma once
#include <cstdint>
#include <memory>

#include "field_backend.hpp"

namespace qmmm::cuda {

// ---- device management (src_cuda/device.cu) ----
// Number of usable CUDA devices; 0 (and QMMM_SUCCESS) where there is no driver or no GPU.
int device_count(int *count);

// ---- embedding field (src_cuda/field_*.cu) ----
// Throws qmmm::Error (QMMM_ERR_NO_CUDA, _NO_DEVICE, _CUDA, _OUT_OF_MEMORY) on failure.
std::unique_ptr<FieldBackend> make_field(const FieldData &d, const qmmm_options &opt);

// ---- DCS potential maps (src_cuda/dcs*.cu) ----

// ---- RDF histograms (src_cuda/rdf*.cu) ----

}  // namespace qmmm::cuda
