// legacy_loop.hpp -- the naive point-charge loop legacy_loop_bench compares the library with (legacy_loop.cpp).
#pragma once

// sum_i sum_m -q_m / |r_i - R_m| (hartree; bohr, e), coord(3, n_electrons) as Fortran stores it.
double legacy_point_charge_energy(int n_charges, const double *x, const double *y, const double *z, const double *q,
                                  int n_electrons, const double *coord);
