// field_factory.hpp -- every backend of the embedding field, as its factory, and the one function per source kind
// that picks among them (field_factory.cpp): the C API (api/field_api.cpp) calls make_field_backend for density
// cells and make_charges_backend for point charges; nothing else builds a backend.
//
// A factory throws qmmm::Error on failure. The GPU factories are interfaces that the CUDA side registers
// (GpuRegistry<...>::get() throws NO_CUDA in a build without CUDA), so no src_cxx file includes a src_cuda header.
#pragma once
#include <cstdint>
#include <memory>

#include "backend/field_backend.hpp"
#include "gpu_registry.hpp"
#include "qmmm_accel_field.h"

namespace qmmm {

struct ScreenedCharges;  // charges/field_charges.hpp
class ScreenedTerm;

// ---- the choice (field_factory.cpp) ----

// The backend of a validated field of density cells: the method, backend (AUTO resolved here) and precision of o,
// around a local origin where SINGLE needs one (origin/field_local_origin.hpp). d's cells are moved out; its nuclei
// may be moved too (the API keeps its own copy for messages).
std::unique_ptr<FieldBackend> make_field_backend(FieldData &d, const qmmm_options &o);

// Point-charge fields with backend AUTO and at most this many charges and nuclei run on the CPU (QMMM_BACKEND or an
// explicit backend still decide): a GPU call costs 9-40 us whatever its size.
constexpr int64_t kChargesAutoCpu = 2048;

// The backend of a point-charge field (qmmm_field_create_charges): cells holds the unscreened charges as cells and
// the nuclei, screened the rest (charges/field_charges.hpp); either may be empty, not both. Both may be moved.
std::unique_ptr<FieldBackend> make_charges_backend(FieldData &cells, ScreenedCharges &screened, qmmm_options o);

// ---- CPU backends ----

// The chunked direct sum (direct/field_cpu.cpp): every precision, any size.
std::unique_ptr<FieldBackend> make_field_cpu(const FieldData &d, const qmmm_options &opt);

// The lean direct sum for fields of at most kSmallCells cells in DOUBLE or SINGLE (direct/field_cpu_small.cpp): cells
// unpadded, no per-call allocation, the caller's thread unless the call is large. Up to one chunk it is the faster
// (EPYC, AVX-512, one thread: 0.22 against 0.43 us a point at 511 cells, level at 1,000, the chunked kernels ~10 %
// ahead at 2,000-4,000).
constexpr int64_t kSmallCells = 1024;
std::unique_ptr<FieldBackend> make_field_cpu_small(const FieldData &d, const qmmm_options &opt);

// The range-split method (split/field_split_cpu.cpp).
std::unique_ptr<FieldBackend> make_field_split_cpu(const FieldData &d, const qmmm_options &opt);

// The screened charges' term (charges/field_charges.cpp).
std::unique_ptr<ScreenedTerm> make_screened_cpu(const ScreenedCharges &c, int precision, int n_threads);

// ---- wrappers (any backend inside) ----

// A point-charge field (charges/field_charges.cpp): inner, the direct field of the unscreened charges and the
// nuclei (null when it has neither), plus the screened term (null when no charge is screened).
std::unique_ptr<FieldBackend> make_field_charges(std::unique_ptr<FieldBackend> inner,
                                                 std::unique_ptr<ScreenedTerm> screened, int backend,
                                                 int precision, int device);

// Moves every point by -origin (in double) before it reaches inner (origin/field_local_origin.cpp).
std::unique_ptr<FieldBackend> wrap_local_origin(std::unique_ptr<FieldBackend> inner, const double origin[3]);

// ---- GPU backends (src_cuda/field/<room>/ registers each) ----

// The direct sum (src_cuda/field/direct/field_gpu.cu). make() checks the device and throws Error (NO_DEVICE,
// INVALID_ARG, CUDA, OUT_OF_MEMORY).
class FieldGpu {
public:
    virtual ~FieldGpu() = default;
    virtual std::unique_ptr<FieldBackend> make(const FieldData &d, const qmmm_options &opt) const = 0;
};

// The range-split method (src_cuda/field/split/field_split_gpu.cu).
class FieldSplitGpu {
public:
    virtual ~FieldSplitGpu() = default;
    virtual std::unique_ptr<FieldBackend> make(const FieldData &d, const qmmm_options &opt) const = 0;
};

// The screened charges' term (src_cuda/field/charges/field_charges_gpu.cu).
class ScreenedGpu {
public:
    virtual ~ScreenedGpu() = default;
    virtual std::unique_ptr<ScreenedTerm> make(const ScreenedCharges &c, int precision, int device) const = 0;
};

}  // namespace qmmm
