// legacy_loop.hpp -- the naive point-charge loop legacy_loop_bench compares the library with (legacy_loop.cpp).
#pragma once

// sum_i sum_m -q_m / |r_i - R_m| (hartree; bohr, e), coord(3, n_electrons) as Fortran stores it.
double legacy_point_charge_energy(int n_charges, const double *x, const double *y, const double *z, const double *q,
                                  int n_electrons, const double *coord);

// The same with screened charges, as a QM/MM code writes them: kind 1 (EXP) -q_m (1 - a_m exp(-b_m d^2)) / d, kind 2
// (GAUSSIAN) -q_m erf(d / sigma_m) / d with sigma_m in a (field_charges_shared.hpp has the library's forms).
double legacy_screened_energy(int kind, int n_charges, const double *x, const double *y, const double *z,
                              const double *q, const double *a, const double *b, int n_electrons, const double *coord);
