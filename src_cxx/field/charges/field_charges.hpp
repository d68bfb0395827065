// field_charges.hpp -- MM point charges as a field (qmmm_field_create_charges): the screened charges' term on the
// CPU and the GPU, and the backend that adds it to a direct field of the unscreened charges and the nuclei.
//
// Every charge enters as the electron feels it, -q (the field is the electron's energy, as a density cell's q is its
// electron population): unscreened charges (QMMM_SCREEN_NONE, or a = 0, b = 0, sigma = 0) become cells of charge
// -q, so they take every path the density cells take (the lean path for small sets, the SIMD and GPU kernels for large ones). Screened
// charges are summed apart, per point in a fixed order, in double (DOUBLE, MIXED) or float (SINGLE) on the
// backend of the field; u = (cells + nuclei) + screened, so a point's value does not depend on the batch.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/field_backend.hpp"
#include "charges/field_charges_shared.hpp"

namespace qmmm {

// The screened charges, validated. q: -(the caller's q), as the cells carry it (negation is exact: the terms are
// the bits of -q * term); a and b as field_charges_shared.hpp takes them (GAUSSIAN: a = 1 / sigma).
struct ScreenedCharges {
    int kind = 0;
    int64_t n = 0;
    std::vector<double> x, y, z, q, a, b, cut2;
    std::vector<int64_t> index;  // the caller's index of each charge (messages)
};

// Adds sum_m term_m(point) to u[i] for n points (factories: make_screened_cpu and ScreenedGpu, field_factory.hpp);
// the GPU twin (src_cuda/field/charges/field_charges_gpu.cu) starts it asynchronously and adds in finish().
class ScreenedTerm {
public:
    virtual ~ScreenedTerm() = default;
    virtual int start(int64_t n, const double *xyz) = 0;  // xyz is read before the return
    virtual int finish(int64_t n, double *u) = 0;         // u[i] += the point's screened sum
};

}  // namespace qmmm
