// field_forces_sign.hpp -- the singular test from the value sums, one bound for the CPU's AVX-512 loops
// (field_forces_avx512.hpp) and the GPU's gradient (field_grad_gpu.cu). Where every term of a sum has one sign, the
// rounded sum is at least its largest term in magnitude (rounding is monotonic, a fused multiply-add too), and a pair
// within the singular radius has |c / d| >= |c|_min / radius: a sum not below that bound (lowered a little) says a
// site may be within the radius, with no running minimum a pair. A false alarm only costs the careful pass, whose
// pairs outside the radius give the fast pass's bits. Plain C++ (tested without a GPU).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/field_shared.hpp"

namespace qmmm {

// The bound for terms of weight c_min, where the loop's reciprocal gives recip / d: c_min recip / radius, lowered by
// 2^-10 (far beyond the reciprocal's error: 2^-22.9 for the GPU's float seed); 0 where that is not a normal finite T
// (the loop then keeps its running minimum).
template <class T>
inline T sum_flag_limit(double c_min, double recip) {
    const double lim = c_min * recip / kSingularRadius * (1.0 - 0x1p-10);
    return lim >= double(std::numeric_limits<T>::min()) && lim <= double(std::numeric_limits<T>::max()) ? T(lim) : T(0);
}

// The bound for the charges c[b, e) as the loop holds them, signed as they are: nonzero where all are nonzero, of one
// sign and within 2^20 of each other in magnitude (a false alarm then needs a point within about kFieldChunk 2^20
// radius ~ 0.1 bohr of a site), else 0.
template <class T>
inline T sign_sum_limit(const T *c, int64_t b, int64_t e, double recip) {
    if (e <= b) return T(0);
    double lo = INFINITY, hi = 0;
    const bool positive = c[b] > T(0);
    for (int64_t k = b; k < e; ++k) {
        if (!(positive ? c[k] > T(0) : c[k] < T(0))) return T(0);
        const double a = std::fabs(double(c[k]));
        lo = a < lo ? a : lo, hi = a > hi ? a : hi;
    }
    if (hi > lo * 0x1p20) return T(0);
    const T lim = sum_flag_limit<T>(lo, recip);
    return positive ? lim : -lim;
}

}  // namespace qmmm
