// pol_shared.hpp -- what the CPU and the GPU solver both compute: the Thole factors and the dipole field of one pair,
// so that the two agree to rounding.
#pragma once
#include <cmath>

#if defined(__CUDACC__)
#define QMMM_POL_HD __host__ __device__
#else
#define QMMM_POL_HD
#endif

namespace qmmm {

// Thole damping of CPPE and PElib (exponential model): v = a r / (abar_i abar_j)^(1/6); f_E scales rank-1 field
// terms (q r / r^3 and the -p / r^3 part of a dipole's field), f_T the rank-2 part 3 (r.p) r / r^5.
// v is capped at 800, where exp(-v) is 0 and both factors 1 exactly: far apart, v^3 would overflow and 0 * Inf give
// NaN.
QMMM_POL_HD inline void thole(double v, double &fe, double &ft) {
    const double w = v < 800.0 ? v : 800.0;
    const double ev = exp(-w);
    fe = 1.0 - (1.0 + w + 0.5 * w * w) * ev;
    ft = fe - (w * w * w / 6.0) * ev;
}

}  // namespace qmmm
