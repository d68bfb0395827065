// rdf_gpu.cuh -- RDF pair counting on one GPU: the constants shared by the kernels (rdf_gpu_kernels.cu) and the host
// side (rdf_gpu.cu; the tuning's are rdf_tuning_gpu.cuh), the kernels' launchers, and the per-thread device state
// (two frame buffers, streams, the histogram).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rdf_backend.hpp"
#include "rdf_tuning_gpu.cuh"

namespace qmmm::cuda::rdf_gpu {

using rdf::Atom;
using rdf::Geom;

// kBlock, the brute force's tile and runs: the tuning (rdf_tuning_gpu.cuh).
constexpr int kPer = 2;                   // brute force: sel1 atoms per thread
constexpr int kRowAtoms = kBlock * kPer;  // brute force: sel1 atoms per item (a row of the pair matrix)
// Shared histogram budget per block (copies x bins x 4 bytes): with the brute-force tile (8 kB) and a few
// bytes of static shared memory it stays under the 48 kB a block gets without opting in.
constexpr int kHistBytes = 40 * 1024 - 64;
constexpr int kMaxStencil = 125 * 3;
static_assert(kRun % kTile == 0 && kRunSmall % kTile == 0 && kRowAtoms == kTile,
              "the diagonal of a row is its first tile");

// How a pair's bin is found. kTable: the lookup table (Frame::thr), r_min = 0 and all bins in this unit -- no
// square root and no range tests beyond r_max; kRoot: the square root and the tests, floor by a round-down
// add (n_bins <= 2^23); kRootBig: the same with a float-to-int conversion (more bins).
enum Mode { kTable = 0, kRoot = 1, kRootBig = 2 };
constexpr int kTableMax = 8192;

struct TableArgs {
    const float *thr;
    const uint16_t *tab;
    int n_thr, n_tab, shift, base;
};

// One frame's data on the device. Two of them: a frame is copied into one (on the copy stream) while the
// kernels of the previous frame read the other, so copies and counting overlap.
struct FrameBuf {
    Atom *a1 = nullptr, *a2 = nullptr;
    int32_t *cell1 = nullptr, *start = nullptr;
    int32_t *max_cell = nullptr;  // the fullest cell of a list the device sorted
    int64_t *rows = nullptr;
    float *thr = nullptr;
    uint16_t *tab = nullptr;
    size_t cap_a1 = 0, cap_a2 = 0, cap_cell1 = 0, cap_start = 0, cap_rows = 0, cap_thr = 0, cap_tab = 0, cap_max_cell = 0;
    cudaEvent_t done[2] = {nullptr, nullptr};  // the kernels of the frame it holds, on stream 0 and 1
    cudaEvent_t staged = nullptr;              // the copies out of the frame's host memory
    bool used = false;
};

struct RdfDev {
    int device = 0;
    cudaStream_t stream[2] = {nullptr, nullptr};
    cudaStream_t copy = nullptr;     // uploads
    cudaEvent_t copied = nullptr;    // the last upload's end (the kernel streams wait for it)
    int n_sm = 1;
    FrameBuf buf[2];
    int cur = 0;                     // the buffer of the last uploaded frame
    std::vector<int32_t> stencil;    // what c_stencil holds
    // Cell-list construction (copy stream only): the atoms in input order, sort keys and indices, CUB's scratch.
    Atom *raw = nullptr;
    uint32_t *keys = nullptr, *keys_out = nullptr;
    int32_t *idx = nullptr, *idx_out = nullptr;
    unsigned char *sort_tmp = nullptr;
    size_t cap_raw = 0, cap_keys = 0, cap_keys_out = 0, cap_idx = 0, cap_idx_out = 0, cap_sort_tmp = 0;
    unsigned long long *hist = nullptr, *counter = nullptr;
    size_t cap_hist = 0;
    std::vector<int64_t> host_rows;
    std::vector<unsigned long long> host_hist;
};

// ---------------------------------------------------------------- launchers (rdf_gpu_kernels.cu)
// Brute force (brute_items) and cell list (cells_items): one of the 24 variants of each (triclinic, identical
// selections, exclusions, bin mode), kBlock threads a block, smem bytes of dynamic shared memory.
void launch_brute(bool tri, bool id, bool excl, int mode, dim3 grid, size_t smem, cudaStream_t st, const Geom &g,
                  const Atom *a1, int64_t n1, const Atom *a2, int64_t n2, const int64_t *rows, int64_t n_rows,
                  int64_t per_row, int64_t k0, int64_t k1, int run, int b0, int nb, int copies, int flush_every,
                  TableArgs ta, unsigned long long *counter, unsigned long long *hist);
void launch_cells(bool tri, bool id, bool excl, int mode, dim3 grid, size_t smem, cudaStream_t st, const Geom &g,
                  const Atom *a1, const int32_t *cell1, int64_t n1, int64_t k0, const Atom *s, const int32_t *start,
                  const int32_t *max_cell, int n_st, int nx, int ny, int nz, int b0, int nb, int copies, TableArgs ta,
                  unsigned long long *hist);
// Resident brute-force blocks an SM with smem bytes of dynamic shared memory.
cudaError_t brute_blocks_per_sm(int *per_sm, size_t smem);
// The cell stencil (3 ints a cell) into constant memory, on stream st; n <= kMaxStencil ints.
cudaError_t copy_stencil(const int32_t *stencil, size_t n, cudaStream_t st);
// The cell list's construction on the device (sort_on_device in rdf_gpu.cu), kBlock threads a block.
void launch_cell_keys(unsigned grid, cudaStream_t st, const Atom *a, int64_t n, int nx, int ny, int nz, uint32_t *key,
                      int32_t *idx);
void launch_cell_gather(unsigned grid, cudaStream_t st, const Atom *raw, const int32_t *idx, int64_t n, Atom *out);
void launch_cell_starts(unsigned grid, cudaStream_t st, const uint32_t *key, int64_t n, int64_t n_cells, int32_t *start);
void launch_cell_max(unsigned grid, cudaStream_t st, const int32_t *start, int64_t n_cells, int32_t *max_cell);

}  // namespace qmmm::cuda::rdf_gpu
