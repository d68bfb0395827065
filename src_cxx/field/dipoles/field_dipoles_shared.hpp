// field_dipoles_shared.hpp -- the pair term of a point dipole, as the CPU and the GPU both compute it.
//
// A dipole mu (physical, e bohr) at R has the potential phi(r) = mu . d / |d|^3, d = r - R; an electron there has the
// energy U = -phi (the field's U is an electron's energy, as -q is a charge's term). With u = d / |d| and s = 1/|d|:
//   U      = -(mu . u) s^2
//   dU/dr  = (3 (mu . u) u - mu) s^3
// Products of the unit vector, so no intermediate is larger than the result (mu . d overflows first: 1e300 e bohr at
// 1e10 bohr). Double on every backend and precision.
#pragma once
#include <cmath>

#include "backend/field_shared.hpp"

namespace qmmm {

// The dipole (mx, my, mz) at offset (dx, dy, dz) = r - R, s = 1 / |d| (the caller's correctly rounded 1 / sqrt(d^2):
// the CPU's builtin, which vectorises; the GPU's rsqrt, within an ulp of it): adds U to u and dU/dr to (gx, gy, gz).
QMMM_HOST_DEVICE inline void dipole_pair(double dx, double dy, double dz, double s, double mx, double my, double mz,
                                         double &u, double &gx, double &gy, double &gz) {
    const double ux = dx * s, uy = dy * s, uz = dz * s;
    const double mu_u = mx * ux + my * uy + mz * uz;
    const double s2 = s * s, s3 = s2 * s;
    u -= mu_u * s2;
    gx += (3.0 * mu_u * ux - mx) * s3, gy += (3.0 * mu_u * uy - my) * s3, gz += (3.0 * mu_u * uz - mz) * s3;
}

// dipole_pair's U alone (the same operations, so the same bits), for calls that want no gradient.
QMMM_HOST_DEVICE inline void dipole_pair_u(double dx, double dy, double dz, double s, double mx, double my, double mz,
                                           double &u) {
    const double ux = dx * s, uy = dy * s, uz = dz * s;
    const double mu_u = mx * ux + my * uy + mz * uz;
    u -= mu_u * (s * s);
}

}  // namespace qmmm
