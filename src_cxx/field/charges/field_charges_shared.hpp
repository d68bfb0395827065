// field_charges_shared.hpp -- the potential of one screened point charge at an electron, as the CPU and the GPU
// both compute it (one formula, so both give the same answer to rounding).
//
// A physical charge q at R acts on an electron at r (d = |r - R|, atomic units) with
//   EXP:      -q (1 - a exp(-b d^2)) / d      (a: dimensionless, b: bohr^-2)
//   GAUSSIAN: -q erf(d / sigma) / d           (sigma: bohr; carried as s = 1 / sigma)
// Near the charge (b d^2 <= ln 2) the EXP factor is written (1 - a) - a expm1(-b d^2): it keeps its accuracy where
// the screening cancels the singularity (a = 1: the term goes to -q a b d at d -> 0, and is 0 on the charge).
// Farther out it is 1 - a exp(-b d^2), so that a large a does not leave the difference of two terms of size a
// (a = 1e20 gave 0: (1 - a) - a expm1 cancels to the last bit). A charge beyond its cut-off
// radius (charges_cut2) acts as -q / d to the last bit, which is how the sums skip the transcendental functions.
#pragma once
#include <cmath>

#include "backend/field_shared.hpp"

namespace qmmm {

enum ScreenKind { kScreenExp = 1, kScreenGaussian = 2 };

// Beyond this d^2 the screening changes the term by less than 2^-60 of it: a exp(-b d^2) < 2^-60 (b d^2 > 41.6 +
// ln a) and erfc(d s) < 2^-60 (d s > 6.1). Margins: 45 and 6.5^2.
QMMM_HOST_DEVICE inline double charges_cut2(int kind, double a, double b) {
    if (kind == kScreenExp) return (45.0 + (std::fabs(a) > 1 ? std::log(std::fabs(a)) : 0.0)) / b;
    return 42.25 / (a * a);  // GAUSSIAN: a holds 1 / sigma
}

// The EXP screening factor 1 - a exp(x), x = -b d^2 <= 0 (the comment at the top says which form where and why).
constexpr double kExpFormSwitch = -0.69314718055994531;  // x = -ln 2: exp(x) = 1/2
template <class T>
QMMM_HOST_DEVICE inline T exp_screen_factor(T a, T x) {
    using std::exp;
    using std::expm1;
    return x < T(kExpFormSwitch) ? T(1) - a * exp(x) : (T(1) - a) - a * expm1(x);
}

// 1/d times the screening factor, T = float or double; d2 = d^2. Non-finite where the charge has no finite
// potential (EXP with a != 1 within the singular radius, as for an unscreened charge): the API reports it.
template <class T>
QMMM_HOST_DEVICE inline T screened_inv_r(int kind, T d2, T a, T b) {
    using std::erf;
    using std::expm1;
    using std::sqrt;
    const T d = sqrt(d2);
    if (kind == kScreenExp) {
        if (d2 == T(0)) return a == T(1) ? T(0) : T(1) / d;  // a = 1: the limit -> a b d = 0; else 1/0 = Inf
        if (a != T(1) && d2 < T(kSingularRadius2)) return T(1) / T(0);  // (1 - a) / d: SINGULAR, as the header says
        return exp_screen_factor(a, -b * d2) / d;
    }
    if (d2 == T(0)) return a * T(1.1283791670955126);  // 2 / sqrt(pi) / sigma
    return erf(d * a) / d;
}

// screened_inv_r of the offsets dx, dy, dz (point - charge). Where d^2 leaves T's normal range (d below 1.5e-154 bohr
// in double, 1.1e-19 bohr in float) d^2 has underflowed, and EXP with a = 1 would be 0 there instead of b d (b = 1e300
// at d = 1e-170 gave 0 for 1e130): then d comes from the offsets scaled by the largest, and the factor from b d times
// d. b <= max_charge (1e300 double, 1e30 float) keeps x = b d^2 below 3e-8 there, so 1 - x/2 is its series to 1e-16.
template <class T>
QMMM_HOST_DEVICE inline T screened_inv_r_xyz(int kind, T dx, T dy, T dz, T a, T b) {
    using std::expm1;
    using std::fabs;
    using std::sqrt;
    const T d2 = dx * dx + dy * dy + dz * dz;
    const T normal_min = sizeof(T) == 4 ? T(1.17549435e-38f) : T(2.2250738585072014e-308);
    if (kind != kScreenExp || a != T(1) || !(d2 < normal_min)) return screened_inv_r(kind, d2, a, b);
    const T ax = fabs(dx), ay = fabs(dy), az = fabs(dz);
    const T s = ax > ay ? (ax > az ? ax : az) : (ay > az ? ay : az);
    if (s == T(0)) return T(0);  // on the charge: the limit a b d = 0
    const T ux = dx / s, uy = dy / s, uz = dz / s;
    const T d = s * sqrt(ux * ux + uy * uy + uz * uz);
    const T bd = b * d, x = bd * d;
    return x < T(1e-4) ? bd * (T(1) - T(0.5) * x) : -expm1(-x) / d;
}

}  // namespace qmmm
