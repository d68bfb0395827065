// field_charges.hpp -- MM point charges as a field (qmmm_field_create_charges): the screened charges' term on the
// CPU and the GPU, and the backend that adds it to a direct field of the unscreened charges and the nuclei.
//
// Unscreened charges (QMMM_SCREEN_NONE, or a = 0, b = 0, sigma = 0) become cells of charge -q, so they take every
// path the density cells take (the lean path for small sets, the SIMD and GPU kernels for large ones). Screened
// charges are summed apart, per point in a fixed order, in double (DOUBLE, MIXED) or float (SINGLE) on the
// backend of the field; u = (cells + nuclei) + screened, so a point's value does not depend on the batch.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "field_backend.hpp"
#include "field_charges_shared.hpp"

namespace qmmm {

// The screened charges, validated. a and b as field_charges_shared.hpp takes them (GAUSSIAN: a = 1 / sigma).
struct ScreenedCharges {
    int kind = 0;
    int64_t n = 0;
    std::vector<double> x, y, z, q, a, b, cut2;
    std::vector<int64_t> index;  // the caller's index of each charge (messages)
};

// Adds sum_m term_m(point) to u[i] for n points; the GPU twin (src_cuda/field/field_charges_gpu.cu) starts it
// asynchronously and adds in finish().
class ScreenedTerm {
public:
    virtual ~ScreenedTerm() = default;
    virtual int start(int64_t n, const double *xyz) = 0;  // xyz is read before the return
    virtual int finish(int64_t n, double *u) = 0;         // u[i] += the point's screened sum
};

std::unique_ptr<ScreenedTerm> make_screened_cpu(const ScreenedCharges &c, int precision, int n_threads);

class ScreenedGpu {
public:
    virtual ~ScreenedGpu() = default;
    virtual std::unique_ptr<ScreenedTerm> make(const ScreenedCharges &c, int precision, int device) const = 0;
};

// inner: the direct field of the unscreened charges and the nuclei (null when it has neither); screened: null when
// no charge is screened.
std::unique_ptr<FieldBackend> make_field_charges(std::unique_ptr<FieldBackend> inner,
                                                 std::unique_ptr<ScreenedTerm> screened, int backend,
                                                 int precision, int device);

// The lean direct sum for fields of at most kSmallCells cells in DOUBLE or SINGLE (field_cpu_small.cpp): cells
// unpadded, no per-call allocation, the caller's thread unless the call is large. Up to one chunk it is the faster
// (EPYC, AVX-512, one thread: 0.22 against 0.43 us a point at 511 cells, level at 1,000, the chunked kernels ~10 %
// ahead at 2,000-4,000).
constexpr int64_t kSmallCells = 1024;
std::unique_ptr<FieldBackend> make_field_cpu_small(const FieldData &d, const qmmm_options &opt);

}  // namespace qmmm
