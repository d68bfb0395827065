// dcs_vmd4.hpp -- VMD's published DCS kernel ("version 4"), kept outside the library as the baseline of
// bench/dcs/dcs_bench: atoms in constant memory in batches of 4000, 16 x 16 threads, 8 points per thread a
// half-warp (16 points) apart, float throughout, added to the map at the end of each batch.
#pragma once
#include <cstdint>

// Fills map (count[0] * count[1] * count[2] doubles, x fastest) with sum_a q_a / |r_ijk - r_a| on GPU
// `device`, lattice point (i, j, k) at origin + (i, j, k) * spacing (bohr). slice: launched as VMD launches
// it (one launch per plane and batch, dz^2 computed on the host); otherwise one launch per batch over a 3-D
// grid of planes (dz computed per atom). Returns the seconds from the atoms' conversion to the map on the host
// (the device buffers are allocated before). Throws std::runtime_error on a CUDA failure.
double dcs_vmd4_map(int64_t n_atoms, const double *xyz, const double *q, const double origin[3],
                    const double spacing[3], const int64_t count[3], double *map, bool slice, int device);
