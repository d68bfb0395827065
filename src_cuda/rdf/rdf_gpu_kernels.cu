// rdf_gpu_kernels.cu -- RDF pair counting on one GPU, in the field's layers: the pair term and the block's counters
// (rdf_pair_gpu.cuh), the two layouts of the pairs -- brute force over tiles of sel2 atoms and the cell list -- as
// kernels here, the dispatch of a unit to one of their 24 variants (for_variant), and the tuning (rdf_tuning_gpu.cuh);
// the cell list's construction kernels and the launchers (rdf_gpu.cuh). The device state and the choice of a kernel
// are rdf_gpu.cu's.
//
// Blocks are persistent: each takes work items until none is left and flushes its counters before they could
// overflow, so no counter overflows at any selection size and the sums are exact (no floating-point atomics).
//
// Why the brute-force kernel is fast (one H100, 4e5 atoms): one SFU operation per pair inside r_max (the pair term,
// rdf_pair_gpu.cuh). Each thread holds two sel1 atoms against every staged sel2 atom (one shared load per two
// pairs), and sel1 is sorted into small cells (rdf_prepare.cpp) so a warp's 32 atoms are neighbours: for most sel2
// atoms the whole warp is inside or outside r_max and skips the binning together.
#include <cuda_runtime.h>

#include <type_traits>

#include "rdf_backend.hpp"
#include "rdf_gpu.cuh"
#include "rdf_pair_gpu.cuh"
#include "rdf_tuning_gpu.cuh"

namespace qmmm::cuda::rdf_gpu {
namespace {

__constant__ int32_t c_stencil[kMaxStencil];

__device__ __forceinline__ int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }

// Brute force, persistent blocks. Item k of [k0, k1): row r (sel1 atoms [512 r, 512 r + 512), two per
// thread) against sel2 atoms [j0, j0 + 2048). Identical selections: row r starts at j = 512 r (its first
// tile is the diagonal, where only j > i counts) and rows[] holds each row's first item; otherwise every row
// has the same number of items. Blocks take items from *counter and flush every `flush_every` items.
template <bool Tri, bool Id, bool Excl, int M>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    brute_items(Geom geom, const Atom *__restrict__ a1, int64_t n1, const Atom *__restrict__ a2, int64_t n2,
                const int64_t *__restrict__ rows, int64_t n_rows, int64_t per_row, int64_t k0, int64_t k1,
                int run, int b0, int nb, int copies, int flush_every, TableArgs ta, unsigned long long *__restrict__ counter,
                unsigned long long *__restrict__ hist) {
    extern __shared__ __align__(16) unsigned char smem[];
    Atom *tile = reinterpret_cast<Atom *>(smem);
    uint32_t *h = reinterpret_cast<uint32_t *>(smem + kTile * sizeof(Atom));
    __shared__ int64_t s_item[3];
    const Fast g(geom);
    const Bins t = M == kTable ? load_bins(reinterpret_cast<unsigned char *>(h + copies * nb), ta.thr, ta.n_thr,
                                           ta.tab, ta.n_tab, ta.shift, ta.base)
                               : Bins{};
    zero_shared(h, copies * nb);
    uint32_t *mine = h + ((threadIdx.x >> 5) % copies) * nb;
    int since_flush = 0;
    for (;;) {
        if (threadIdx.x == 0) {
            const int64_t k = k0 + static_cast<int64_t>(atomicAdd(counter, 1ull));
            int64_t r = 0, first = 0;
            if (k < k1) {
                if (Id) {  // last row with rows[r] <= k
                    int64_t lo = 0, hi = n_rows - 1;
                    while (lo < hi) {
                        const int64_t mid = (lo + hi + 1) / 2;
                        if (rows[mid] <= k) lo = mid;
                        else hi = mid - 1;
                    }
                    r = lo, first = rows[lo];
                } else {
                    r = k / per_row, first = r * per_row;
                }
            }
            s_item[0] = k, s_item[1] = r, s_item[2] = (Id ? r * kRowAtoms : 0) + (k - first) * run;
        }
        __syncthreads();
        const int64_t k = s_item[0], r = s_item[1], j0 = s_item[2];
        if (k >= k1) break;
        const int64_t j1 = lmin(n2, j0 + run);
        const int64_t i0 = r * kRowAtoms + threadIdx.x, i1 = i0 + kBlock;
        const bool v0 = i0 < n1, v1 = i1 < n1;
        const Atom a0 = biased(v0 ? a1[i0] : Atom{}), a1v = biased(v1 ? a1[i1] : Atom{});
        for (int64_t t0 = j0; t0 < j1; t0 += kTile) {
            const int n = static_cast<int>(lmin(kTile, j1 - t0));
            __syncthreads();
            for (int q = threadIdx.x; q < n; q += kBlock) tile[q] = a2[t0 + q];
            __syncthreads();
            if (Id && t0 == r * kRowAtoms) {  // the diagonal tile: only j > i
                for (int q = 0; q < n; ++q) {
                    const Atom b = tile[q];
                    if (v0 && t0 + q > i0) pair_fast<Tri, Excl, M>(g, geom, t, a0, b, mine, b0, nb);
                    if (v1 && t0 + q > i1) pair_fast<Tri, Excl, M>(g, geom, t, a1v, b, mine, b0, nb);
                }
            } else if (v1) {
#pragma unroll kBruteUnroll
                for (int q = 0; q < n; ++q) {
                    const Atom b = tile[q];
                    pair_fast<Tri, Excl, M>(g, geom, t, a0, b, mine, b0, nb);
                    pair_fast<Tri, Excl, M>(g, geom, t, a1v, b, mine, b0, nb);
                }
            } else if (v0) {
                for (int q = 0; q < n; ++q) pair_fast<Tri, Excl, M>(g, geom, t, a0, tile[q], mine, b0, nb);
            }
        }
        if (++since_flush == flush_every) {  // uniform: every thread counts the same items
            __syncthreads();
            flush(h, copies, nb, b0, hist, true);
            since_flush = 0;
        }
        __syncthreads();
    }
    __syncthreads();
    if (since_flush) flush(h, copies, nb, b0, hist, false);
}

// Stencil entry q of cell (cx, cy, cz), wrapped periodically.
__device__ __forceinline__ int stencil_cell(int cx, int cy, int cz, int q, int nx, int ny, int nz) {
    int x = cx + c_stencil[3 * q], y = cy + c_stencil[3 * q + 1], z = cz + c_stencil[3 * q + 2];
    x += x < 0 ? nx : (x >= nx ? -nx : 0);
    y += y < 0 ? ny : (y >= ny ? -ny : 0);
    z += z < 0 ? nz : (z >= nz ? -nz : 0);
    return x + nx * (y + ny * z);
}

// One atom's cell-list pairs counted into the 64-bit device histogram (the overflow fallback of cells_items).
template <bool Tri, bool Id>
__device__ void cells_direct(const Geom &g, const Atom &a, int64_t p, int c, const Atom *__restrict__ s,
                             const int32_t *__restrict__ start, int n_st, int nx, int ny, int nz, int b0, int nb,
                             unsigned long long *__restrict__ hist) {
    const auto one = [&](const Atom &b) {
        if (a.key == b.key) return;
        const float r2 = rdf::dist2<Tri>(g, a.x, a.y, a.z, b.x, b.y, b.z);
        if (!(r2 < g.hi2)) return;
        const int bin = rdf::pair_bin(g, r2, a, b) - b0;
        if (static_cast<unsigned>(bin) < static_cast<unsigned>(nb)) atomicAdd(hist + b0 + bin, 1ull);
    };
    const int cx = c % nx, cy = (c / nx) % ny, cz = c / (nx * ny);
    if (Id)
        for (int j = static_cast<int>(p) + 1, e = start[c + 1]; j < e; ++j) one(s[j]);
    for (int q = 0; q < n_st; ++q) {
        const int cq = stencil_cell(cx, cy, cz, q, nx, ny, nz);
        for (int j = start[cq], e = start[cq + 1]; j < e; ++j) one(s[j]);
    }
}

// The cell list built on the device (Frame::device_cells): each atom's cell (the shared rdf::cell_of), a stable
// radix sort of (cell, input index) pairs (CUB), the atoms gathered in that order -- the order of the host's
// counting sort -- and start[k] = the first sorted atom with cell >= k (each k written by one thread).
__global__ void cell_keys(const Atom *__restrict__ a, int64_t n, int nx, int ny, int nz, uint32_t *__restrict__ key,
                          int32_t *__restrict__ idx) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) key[i] = static_cast<uint32_t>(rdf::cell_of(a[i], nx, ny, nz)), idx[i] = static_cast<int32_t>(i);
}
__global__ void cell_gather(const Atom *__restrict__ raw, const int32_t *__restrict__ idx, int64_t n,
                            Atom *__restrict__ out) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = raw[idx[i]];
}
__global__ void cell_starts(const uint32_t *__restrict__ key, int64_t n, int64_t n_cells, int32_t *__restrict__ start) {
    const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p > n) return;
    const int64_t c = p < n ? int64_t(key[p]) : n_cells, prev = p > 0 ? int64_t(key[p - 1]) : -1;
    for (int64_t k = prev + 1; k <= c; ++k) start[k] = static_cast<int32_t>(p);
}
// The fullest cell (integer atomicMax of warp maxima: the same result in any order).
__global__ void cell_max(const int32_t *__restrict__ start, int64_t n_cells, int32_t *__restrict__ max_cell) {
    int m = 0;
    for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n_cells; k += int64_t(gridDim.x) * blockDim.x)
        m = max(m, start[k + 1] - start[k]);
    m = __reduce_max_sync(0xffffffffu, m);
    if ((threadIdx.x & 31) == 0) atomicMax(max_cell, m);
}

// Cell list: a block per item of 256 sel1 atoms (sorted by cell, so a warp mostly shares its cells); each
// atom visits the stencil's cells; for identical selections the own cell's later atoms and a half stencil.
// A block's counts stay below 2^32 (checked on the host: 256 x (stencil + 1) x fullest cell).
template <bool Tri, bool Id, bool Excl, int M>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    cells_items(Geom geom, const Atom *__restrict__ a1, const int32_t *__restrict__ cell1, int64_t n1, int64_t k0,
                const Atom *__restrict__ s, const int32_t *__restrict__ start, const int32_t *__restrict__ max_cell,
                int n_st, int nx, int ny, int nz, int b0, int nb, int copies, TableArgs ta,
                unsigned long long *__restrict__ hist) {
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *h = reinterpret_cast<uint32_t *>(smem);
    const Fast g(geom);
    const Bins t = M == kTable ? load_bins(reinterpret_cast<unsigned char *>(h + copies * nb), ta.thr, ta.n_thr,
                                           ta.tab, ta.n_tab, ta.shift, ta.base)
                               : Bins{};
    zero_shared(h, copies * nb);
    __syncthreads();
    uint32_t *mine = h + ((threadIdx.x >> 5) % copies) * nb;
    const int64_t p = (k0 + blockIdx.x) * kBlock + threadIdx.x;
    // A list the device sorted (max_cell given) was not checked on the host: if a block's 32-bit counters could
    // overflow (256 atoms x stencil x fullest cell >= 2^32: >= 133,153 atoms in one cell), the block counts
    // straight into the 64-bit histogram with the shared definition of a pair's bin. Never in a real system.
    if (max_cell && 256ull * static_cast<unsigned long long>(n_st + 1) * static_cast<unsigned long long>(*max_cell) >=
                        4294967295ull) {
        if (p < n1) cells_direct<Tri, Id>(geom, a1[p], p, cell1[p], s, start, n_st, nx, ny, nz, b0, nb, hist);
        return;
    }
    if (p < n1) {
        const Atom a = biased(a1[p]);
        const int c = cell1[p];
        const int cx = c % nx, cy = (c / nx) % ny, cz = c / (nx * ny);
        if (Id)
            for (int j = static_cast<int>(p) + 1, e = start[c + 1]; j < e; ++j)
                pair_fast<Tri, Excl, M>(g, geom, t, a, s[j], mine, b0, nb);
        for (int q = 0; q < n_st; ++q) {
            const int cq = stencil_cell(cx, cy, cz, q, nx, ny, nz);
            for (int j = start[cq], e = start[cq + 1]; j < e; ++j) pair_fast<Tri, Excl, M>(g, geom, t, a, s[j], mine, b0, nb);
        }
    }
    __syncthreads();
    flush(h, copies, nb, b0, hist, false);
}

// Calls f(tri, id, excl, mode) for the variant a unit takes (each as a std::integral_constant): the 24 variants of a
// kernel template (triclinic, identical selections, exclusions, bin mode), one instantiation each.
template <class F>
void for_variant(bool tri, bool id, bool excl, int mode, F &&f) {
    const auto modes = [&](auto t, auto i, auto e) {
        switch (mode) {
            case kTable: f(t, i, e, std::integral_constant<int, kTable>{}); break;
            case kRoot: f(t, i, e, std::integral_constant<int, kRoot>{}); break;
            case kRootBig: f(t, i, e, std::integral_constant<int, kRootBig>{}); break;
        }
    };
    const auto excls = [&](auto t, auto i) {
        if (excl) modes(t, i, std::true_type{});
        else modes(t, i, std::false_type{});
    };
    const auto ids = [&](auto t) {
        if (id) excls(t, std::true_type{});
        else excls(t, std::false_type{});
    };
    if (tri) ids(std::true_type{});
    else ids(std::false_type{});
}

}  // namespace

void launch_brute(bool tri, bool id, bool excl, int mode, dim3 grid, size_t smem, cudaStream_t st, const Geom &g,
                  const Atom *a1, int64_t n1, const Atom *a2, int64_t n2, const int64_t *rows, int64_t n_rows,
                  int64_t per_row, int64_t k0, int64_t k1, int run, int b0, int nb, int copies, int flush_every,
                  TableArgs ta, unsigned long long *counter, unsigned long long *hist) {
    for_variant(tri, id, excl, mode, [&](auto t, auto i, auto e, auto m) {
        brute_items<decltype(t)::value, decltype(i)::value, decltype(e)::value, decltype(m)::value>
            <<<grid, kBlock, smem, st>>>(g, a1, n1, a2, n2, rows, n_rows, per_row, k0, k1, run, b0, nb, copies,
                                         flush_every, ta, counter, hist);
    });
}

void launch_cells(bool tri, bool id, bool excl, int mode, dim3 grid, size_t smem, cudaStream_t st, const Geom &g,
                  const Atom *a1, const int32_t *cell1, int64_t n1, int64_t k0, const Atom *s, const int32_t *start,
                  const int32_t *max_cell, int n_st, int nx, int ny, int nz, int b0, int nb, int copies, TableArgs ta,
                  unsigned long long *hist) {
    for_variant(tri, id, excl, mode, [&](auto t, auto i, auto e, auto m) {
        cells_items<decltype(t)::value, decltype(i)::value, decltype(e)::value, decltype(m)::value>
            <<<grid, kBlock, smem, st>>>(g, a1, cell1, n1, k0, s, start, max_cell, n_st, nx, ny, nz, b0, nb, copies,
                                         ta, hist);
    });
}

cudaError_t brute_blocks_per_sm(int *per_sm, size_t smem) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, brute_items<false, true, false, kTable>, kBlock, smem);
}

cudaError_t copy_stencil(const int32_t *stencil, size_t n, cudaStream_t st) {
    return cudaMemcpyToSymbolAsync(c_stencil, stencil, n * 4, 0, cudaMemcpyHostToDevice, st);
}

void launch_cell_keys(unsigned grid, cudaStream_t st, const Atom *a, int64_t n, int nx, int ny, int nz, uint32_t *key,
                      int32_t *idx) {
    cell_keys<<<grid, kBlock, 0, st>>>(a, n, nx, ny, nz, key, idx);
}
void launch_cell_gather(unsigned grid, cudaStream_t st, const Atom *raw, const int32_t *idx, int64_t n, Atom *out) {
    cell_gather<<<grid, kBlock, 0, st>>>(raw, idx, n, out);
}
void launch_cell_starts(unsigned grid, cudaStream_t st, const uint32_t *key, int64_t n, int64_t n_cells, int32_t *start) {
    cell_starts<<<grid, kBlock, 0, st>>>(key, n, n_cells, start);
}
void launch_cell_max(unsigned grid, cudaStream_t st, const int32_t *start, int64_t n_cells, int32_t *max_cell) {
    cell_max<<<grid, kBlock, 0, st>>>(start, n_cells, max_cell);
}

}  // namespace qmmm::cuda::rdf_gpu
