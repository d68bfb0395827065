// field_dipoles_shared.hpp -- the pair term of a point dipole, as the CPU and the GPU both compute it.
//
// A dipole mu (physical, e bohr) at R has the potential phi(r) = mu . d / |d|^3, d = r - R; an electron there has the
// energy U = -phi (the field's U is an electron's energy, as -q is a charge's term). With u = d / |d| and s = 1/|d|:
//   U      = -(mu . u) s^2
//   dU/dr  = (3 (mu . u) u - mu) s^3
// Products of the unit vector, so no intermediate is larger than the result (mu . d overflows first: 1e300 e bohr at
// 1e10 bohr). T is double for DOUBLE and MIXED, float for SINGLE (offsets from the sites' origin, dipole_origin); the
// same operations in either type.
#pragma once
#include <cmath>

#include "backend/field_shared.hpp"

namespace qmmm {

// SINGLE's site slice: a point's float sums run over kDipoleSlice sites (by index, whatever the batch) and the
// slices' sums are added in double in slice order, on the CPU and the GPU (whose blocks take one slice each).
constexpr int64_t kDipoleSlice = 256;

// The dipole (mx, my, mz) at offset (dx, dy, dz) = r - R, s = 1 / |d| (the caller's 1 / sqrt(d^2): the CPU's
// correctly rounded builtin, which vectorises; the GPU's rsqrt, within an ulp or two of it): adds U to u and dU/dr
// to (gx, gy, gz).
template <class T>
QMMM_HOST_DEVICE inline void dipole_pair(T dx, T dy, T dz, T s, T mx, T my, T mz, T &u, T &gx, T &gy, T &gz) {
    const T ux = dx * s, uy = dy * s, uz = dz * s;
    const T mu_u = mx * ux + my * uy + mz * uz;
    const T s2 = s * s, s3 = s2 * s;
    u -= mu_u * s2;
    gx += (T(3) * mu_u * ux - mx) * s3, gy += (T(3) * mu_u * uy - my) * s3, gz += (T(3) * mu_u * uz - mz) * s3;
}

// dipole_pair's U alone (the same operations, so the same bits), for calls that want no gradient.
template <class T>
QMMM_HOST_DEVICE inline void dipole_pair_u(T dx, T dy, T dz, T s, T mx, T my, T mz, T &u) {
    const T ux = dx * s, uy = dy * s, uz = dz * s;
    const T mu_u = mx * ux + my * uy + mz * uz;
    u -= mu_u * (s * s);
}

}  // namespace qmmm
