// field_checks.hpp -- the checks of the field's C API on what the caller passes (field_api.cpp): each throws
// qmmm::Error with the status and a message that names the argument and the entry.
#pragma once
#include <cstdint>

#include "qmmm_accel_field.h"

namespace qmmm {

// NONFINITE naming the first NaN or Inf of a (n entries of stride doubles).
void check_array(const char *name, const double *a, int64_t n, int64_t stride);

// The largest |charge| a precision sums without overflow: float pair terms and sums (SINGLE, MIXED) overflow at
// ~3.4e38 (a charge of 1e30 at 1e-8 bohr: 1e38), double ones at ~1.8e308 (1e300 at 1e-8 bohr). Refused at create:
// otherwise the overflowed sum reached eval as a non-finite value and was reported as a point on a cell.
double max_charge(int precision);

// INVALID_ARG for a finite |a[i]| beyond max_charge (NaN and Inf: NONFINITE, checked apart).
void check_magnitude(const char *name, const double *a, int64_t n, int precision);

// OUT_OF_MEMORY when n cells or charges (charges: point charges) and n_nuclei nuclei would not fit this machine's
// memory at create's peak in this precision, said before any array is read (2e9 nuclei had scanned for 40 s).
void check_field_memory(const char *what, int64_t n, int64_t n_nuclei, int precision, bool charges);

// The smallest Gaussian smearing width (bohr) of a screened charge (qmmm_field_create_charges).
constexpr double kMinSigma = 1e-6;

// The largest coordinate (bohr) a field takes: a squared distance of two such coordinates must not overflow, or a
// term turns into 0 (or NaN) silently. DOUBLE: (2e150)^2 = 4e300; float (SINGLE, MIXED): (2e18)^2 = 4e36 < 3.4e38.
double max_coordinate(int precision);

// INVALID_ARG for a finite coordinate beyond max_coordinate (NaN and Inf: NONFINITE, checked apart).
void check_reach(const char *name, const double *a, int64_t n, int64_t stride, int precision);

// Every field of qmmm_options (the split's: check_split_options).
void check_options(const qmmm_options &o);

// A point's three coordinates in the caller's array (bytes).
constexpr double kPointBytes = 24;

// n_points of any evaluation, before anything is read or allocated: negative, or more points than this machine's
// memory holds as coordinates (INVALID_ARG: n = INT64_MAX made 3 n wrap and the call read past the array), or more
// than the memory the call itself takes per point, scratch_bytes_each (OUT_OF_MEMORY).
void check_point_count(int64_t n, double scratch_bytes_each);

// The points of an evaluation: count, pointers, finite coordinates within the precision's reach.
void check_points(int64_t n, const double *xyz, const double *u, int precision);

}  // namespace qmmm
