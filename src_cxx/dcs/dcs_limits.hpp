// dcs_limits.hpp -- what qmmm_dcs_map checks and mends around the backends, so that every backend (CPU and
// CUDA alike, whose kernels know nothing of it) gives a finite map or a clear error: the memory of the host atom
// copies, the charges and lengths each precision can square and sum, a bound on the map's values, and the lattice
// points too close to an atom for the backend's arithmetic (recomputed on the host in double).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "qmmm_accel_dcs.h"

namespace qmmm {

// A lattice point within this distance of an atom is on the atom (bohr).
constexpr double kDcsOnAtom = 1e-10;

// Throws QMMM_ERR_OUT_OF_MEMORY when the host copies of the atoms that a map makes (the API's, the CPU kernel's
// or each GPU's upload buffer) exceed this machine's physical memory. Reads no atom, so it comes before any read.
void dcs_check_memory(int64_t n_atoms, int backend, int n_workers);

// Throws QMMM_ERR_INVALID_ARG, naming the entry and the limit, for a charge, an atom's distance from the lattice
// origin along an axis, a spacing or a lattice extent beyond what `precision` squares and sums without overflow.
void dcs_check_magnitudes(int64_t n_atoms, const double *xyz, const double *q, const qmmm_dcs_lattice &l,
                          int precision);

// The lattice points whose values the host computes in double after the backend: those nearer an atom than the
// backend's arithmetic resolves, and those on an atom (within kDcsOnAtom), where that atom is left out.
struct DcsNearPoints {
    std::vector<int64_t> points;                        // sorted, unique
    std::vector<std::pair<int64_t, int64_t>> left_out;  // (point, atom), sorted
};

// Finds the near points. Throws QMMM_ERR_SINGULAR for a point on an atom when on_atom is
// QMMM_DCS_ON_ATOM_ERROR, and QMMM_ERR_INVALID_ARG when the map could leave the precision's range (the bound
// sum_a |q_a| / nearest distance at which a's term is summed) or the spacing is finer than the precision resolves.
DcsNearPoints dcs_near_points(int64_t n_atoms, const double *xyz, const double *q, const qmmm_dcs_lattice &l,
                              int precision, int on_atom);

// Overwrites the near points of map with the direct sum in double over the atoms, leaving out the left-out pairs.
void dcs_fix_points(const DcsNearPoints &np, int64_t n_atoms, const double *xyz, const double *q,
                    const qmmm_dcs_lattice &l, double *map);

}  // namespace qmmm
