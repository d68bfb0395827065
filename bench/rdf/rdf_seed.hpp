// rdf_seed.hpp -- the published GPU RDF scheme, kept outside the library as the baseline of bench/rdf/rdf_bench:
// brute force over all pairs of one selection with itself, a tile of 4000 atoms in constant memory, one atom
// per thread looping over the tile, one shared-memory histogram of 32-bit counters per block, orthorhombic
// boxes, float arithmetic (minimum image by rounding, sqrtf, bin = (r - r_min) / dr). Its float bins can
// differ from the library's exact ones for pairs within float rounding of a bin edge.
#pragma once
#include <cstdint>

struct RdfSeed;
// n atoms on GPU `device`, bins [r_min, r_max) in n_bins (at most 8192). Throws std::runtime_error on a
// CUDA failure.
RdfSeed *rdf_seed_create(int device, int64_t n, double r_min, double r_max, int n_bins);
// Adds the unordered pairs of one frame (xyz: 3n doubles, box: the three edge lengths) to hist (n_bins).
// Returns the seconds from the upload of the atoms to the histogram on the host (the conversion of the
// coordinates to float, the preparation, is left out).
double rdf_seed_count(RdfSeed *s, const double *xyz, const double box[3], int64_t *hist);
void rdf_seed_destroy(RdfSeed *s);
