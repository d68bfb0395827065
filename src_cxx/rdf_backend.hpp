// rdf_backend.hpp -- what the RDF API hands to its CPU and GPU pair counters: one prepared frame.
// Preparation (rdf_prepare.cpp) is shared, so both backends count exactly the same pair set.
#pragma once
#include <cstdint>
#include <vector>

#include "../src_cuda/rdf_pair.cuh"
#include "qmmm_accel.h"

namespace qmmm::rdf {

struct Frame {
    Geom g{};
    bool identical = false;  // sel2 is sel1: unordered pairs, a2 empty
    int method = QMMM_RDF_METHOD_BRUTE;
    std::vector<Atom> a1, a2;  // BRUTE: input order; CELLS: sorted by cell
    // CELLS: cells per axis, the cell of each a1 atom, the first atom of each cell in the searched
    // selection (a1 if identical, else a2; n_cells + 1 entries), and the stencil of cell offsets.
    // For identical selections the stencil is half of the (2m+1)^3 block without (0,0,0), which is
    // handled separately (later atoms of the own cell only).
    int32_t nc[3] = {1, 1, 1};
    std::vector<int32_t> cell1;
    std::vector<int32_t> start;
    std::vector<int32_t> stencil;  // dx,dy,dz triples
    int32_t max_cell = 0;          // most atoms in one cell of the searched selection
    std::vector<Atom> scratch;     // reused between frames: fresh 16 MB buffers cost page faults every frame
    std::vector<int32_t> scratch_cells, scratch_start;
    double pairs_visited = 0;
};

// Geometry from cell vectors (row-major a, b, c) and bins; throws Error on bad boxes. Sets volume and limit.
void make_geom(const double *box, double r_min, double r_max, int32_t n_bins, Geom &g, double &volume,
               double &limit, double frac[9], double widths[3]);
// Fills f from coordinates (3*n doubles) and keys. method AUTO picks; throws Error (r_max beyond the limit).
void prepare_frame(Frame &f, const double *box, double r_min, double r_max, int32_t n_bins, int method,
                   const double *xyz1, const std::vector<int32_t> &key1, const double *xyz2,
                   const std::vector<int32_t> &key2, bool identical, double &volume);

// CPU: adds the frame's counts to hist (n_bins). Threads keep private histograms merged at the end.
void cpu_count(const Frame &f, int n_threads, uint64_t *hist);

struct GpuRunInfo {
    int64_t n_units = 0;
    std::vector<int64_t> units_per_worker;
};
// GPU: adds the frame's counts to hist through the persistent per-device threads (rdf_gpu_pool.cpp).
void gpu_count(const Frame &f, const std::vector<int> &devices, int kernel, uint64_t *hist, GpuRunInfo *info);
void gpu_release();

}  // namespace qmmm::rdf
