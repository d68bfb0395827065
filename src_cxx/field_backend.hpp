// field_backend.hpp -- what every backend of the embedding field implements (CPU here, CUDA in
// src_cuda/), and the validated host copy of the field that they are built from.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "qmmm_accel.h"

namespace qmmm {

// Points closer than this (bohr) to a cell centre or nucleus are "on" it (see qmmm_field_eval).
constexpr double kSingularRadius = 1e-10;
// Potential at the centre of a uniformly charged cube of unit side and unit charge:
// 6 ln((1 + sqrt 3) / sqrt 2) - pi / 2.
constexpr double kCubeSelfPotential = 2.380077363979553;  // 6 ln((1+sqrt3)/sqrt2) - pi/2

// The field as the caller gave it, validated; coordinates interleaved x y z (bohr).
struct FieldData {
    int64_t n_cells = 0, n_nuclei = 0;
    std::vector<double> cell_xyz, cell_q, nuc_xyz, nuc_z;
    double cell_volume = 0.0;  // bohr^3, 0 = unknown
    // 1/r used for a cell when the point is on its centre: C / h, or NaN when the volume is unknown
    // (the NaN reaches the result and qmmm_field_eval reports QMMM_ERR_SINGULAR).
    double cell_self_inv_r = 0.0;
};

class FieldBackend {
public:
    virtual ~FieldBackend() = default;
    // u[i] = U_ES(point i); points are finite and not on a nucleus (checked by the caller).
    virtual int eval(int64_t n, const double *xyz, double *u) = 0;
    // Default: synchronous work, nothing pending.
    virtual int eval_async(int64_t n, const double *xyz, double *u) { return eval(n, xyz, u); }
    virtual int wait() { return QMMM_SUCCESS; }
    virtual int backend() const = 0;
    virtual int precision() const = 0;
    virtual int device() const { return -1; }
};

// sum_b -Z_b / |r - R_b| added to u (double precision, fixed order); shared by all backends.
void add_nuclear_term(const FieldData &d, int64_t n, const double *xyz, double *u);

// Throws qmmm::Error on failure.
std::unique_ptr<FieldBackend> make_field_cpu(const FieldData &d, const qmmm_options &opt);

}  // namespace qmmm
