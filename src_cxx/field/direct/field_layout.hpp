// field_layout.hpp -- the host side of the CUDA direct sum's cell layouts (src_cuda/field/direct/field_gpu.cu uploads
// them; the device types are in field_gpu.cuh), in plain C++ so that they are built and tested without a GPU
// (tests/field/test_field_layout.cpp).
//
// Both layouts keep the cells in Morton order (field_morton_order) cut into chunks of kFieldChunk, padded to whole
// chunks, each chunk summed in kFieldQuarters quarters of kFieldQuarterCells cells by different thread groups:
// - the tile layout: the cells as they are; per quarter a bound that lets the hot loop skip the singular test
//   (field_quarter_bound);
// - the row layout (cells of a cube's lattice): per quarter its cells sorted by (z, y, x) and cut into rows where y
//   or z changes, so a row's y-z distance serves all its cells (field_rows). One builder for every precision: the
//   GPU side writes each precision's words from the order it gives.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/field_shared.hpp"

namespace qmmm {

constexpr int kFieldQuarters = 4;
constexpr int kFieldQuarterCells = kFieldChunk / kFieldQuarters;

// The row layout of n_cells cells (xyz: 3 per cell, in the layout's order, absolute bohr), padded to whole chunks.
// Indices of cells are into xyz; a chunk's rows and slots are counted from the chunk's start (chunk-local).
struct FieldRows {
    int64_t n_chunks = 0;
    int64_t n_rows = 0;  // over all chunks
    // Per padded slot (n_chunks * kFieldChunk): the cell there, in row order, or -1 for padding (never in a row).
    // A quarter's slots hold that quarter's cells, sorted by (z, y, x), ties by index.
    std::vector<int64_t> cell;
    // Per chunk and row r < the chunk's row count, at ch * kFieldChunk + r (0 beyond): the row's first slot and one
    // past its last (chunk-local). The row's y and z are those of the cell in its first slot. A chunk's rows run
    // quarter by quarter.
    std::vector<int32_t> row_first, row_end;
    // Per quarter (n_chunks * kFieldQuarters): its first row (chunk-local) and its number of rows.
    std::vector<int32_t> quarter_row_begin, quarter_rows;
};

FieldRows field_rows(int64_t n_cells, const double *xyz);

// Per tile-layout quarter, the bound of QuarterInfo (field_gpu.cuh) for its charges q[0 .. n) (padding included:
// zero charges): 5e9 x the smallest non-zero |q| when all have one sign (+inf when none is non-zero), 0 when the
// signs are mixed. A point within the singular radius (1e-10 bohr) of a cell makes that cell's term at least 1e10 |q|,
// so a quarter partial below the bound had no singular cell.
float field_quarter_bound(const double *q, int n);
float field_quarter_bound(const float *q, int n);

}  // namespace qmmm
