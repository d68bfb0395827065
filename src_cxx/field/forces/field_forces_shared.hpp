// field_forces_shared.hpp -- the pair term of the forces (gradient at the points, field at the sites), as the CPU and
// the GPU both compute it.
//
// One pair: a site at R with kernel g(d) (d = |r - R|) and a point at r. The value term is g(d), the vector term
// h(d) = g'(d) / d, so that grad_r g = h (r - R) and grad_R g = -h (r - R):
//   plain (cells, unscreened charges, nuclei): g = 1/d, h = -1/d^3;
//   EXP:      g = (1 - a e^-x) / d, x = b d^2;  h = (a expm1(-x) - (1 - a)) / d^3 + 2 a b e^-x / d;
//   GAUSSIAN: g = erf(s d) / d (s = 1 / sigma);  h = (2 s / sqrt(pi) t e^-t^2 - erf(t)) / d^3, t = s d.
// The Gaussian's h cancels to O(t^2) of its terms at small t: below t^2 = 0.09 it is its series,
//   h = 2 s^3 / sqrt(pi) sum_{n>=1} (-1)^n 2n / ((2n + 1) n!) t^(2n-2)   (-> -4 s^3 / (3 sqrt(pi)) at d = 0),
// ten terms (the eleventh is below 1e-17 of the first there). The EXP form has no such cancellation (a = 1:
// h = b/d (expm1(-x)/x + 2 e^-x), -1 + 2 at x -> 0). The EXP charge with a = 1 is a cone at its centre
// (g -> b d): the gradient's magnitude tends to |q| b, its direction to that of r - R; on the centre itself
// (d = 0) the vector term is 0, the mean over the directions (and what a central difference gives there).
#pragma once
#include <cmath>

#include "charges/field_charges_shared.hpp"

namespace qmmm {

// h(d) of a screened site; d2 = d^2 > 0 (d = 0: the caller uses 0 for the vector term). kind and a, b as
// screened_inv_r takes them (GAUSSIAN: a = 1 / sigma).
template <class T>
QMMM_HOST_DEVICE inline T screened_grad_h(int kind, T d2, T a, T b) {
    using std::erf;
    using std::exp;
    using std::expm1;
    using std::sqrt;
    const T d = sqrt(d2);
    if (kind == kScreenExp) {
        const T x = b * d2;
        return (a * expm1(-x) - (T(1) - a)) / (d2 * d) + T(2) * a * b * exp(-x) / d;
    }
    const T t2 = a * a * d2;
    const T k = T(1.1283791670955126);  // 2 / sqrt(pi)
    if (t2 < T(0.09)) {
        // sum_{n=1..10} (-1)^n 2n / ((2n + 1) n!) t^(2n-2), by Horner from n = 10
        const T c[10] = {T(-2.0 / 3.0),          T(2.0 / 5.0),          T(-1.0 / 7.0),
                         T(1.0 / 27.0),          T(-1.0 / 132.0),       T(1.0 / 780.0),
                         T(-1.0 / 5400.0),       T(1.0 / 42840.0),      T(-1.0 / 383040.0),
                         T(1.0 / 3810240.0)};
        T s = c[9];
        for (int n = 8; n >= 0; --n) s = s * t2 + c[n];
        return k * a * a * a * s;
    }
    const T t = a * d;
    return (k * t * exp(-t2) - erf(t)) / (d2 * d);
}

}  // namespace qmmm
