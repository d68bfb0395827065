// rdf_gpu.cu -- RDF pair counting on one GPU: the brute-force and cell-list kernels and the per-thread
// device state (RdfDevice in rdf_backend.hpp).
//
// Histograms live in shared memory as 32-bit counters with atomic increments (as in the published GPU RDF
// scheme this library started from), one copy per warp where the bins fit, then go to the device's 64-bit
// histogram with integer atomics. Blocks are persistent: each takes work items until none is left and flushes
// its counters before they could overflow, so no counter overflows at any selection size and the sums are exact
// (no floating-point atomics).
//
// Why the brute-force kernel is fast (one H100, 4e5 atoms): the plain arithmetic (rdf_shared.hpp's dist2 and
// pair_bin, as the CPU runs it) needs per pair three int-to-float conversions, a float-to-int conversion and a
// reciprocal square root, all on the 16-lane/SM conversion/SFU pipe; that pipe caps it near 740 G pairs/s. Here
// the differences become floats through a bit pattern and one FMA (rdf_shared.hpp), the bin through a
// round-down add, which leaves one SFU operation per pair inside r_max. Each thread holds two sel1 atoms against
// every staged sel2 atom (one shared load per two pairs), and sel1 is sorted into small cells (rdf_prepare.cpp)
// so a warp's 32 atoms are neighbours: for most sel2 atoms the whole warp is inside or outside r_max and skips
// the binning together.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <memory>
#include <string>
#include <vector>

#include "core_gpu.cuh"
#include "error.hpp"
#include "rdf_backend.hpp"

namespace qmmm::cuda {

using rdf::Atom;
using rdf::Geom;
using rdf::RdfDevice;
using rdf::RdfGpu;

namespace {

constexpr int kBlock = 256;
constexpr int kPer = 2;                   // brute force: sel1 atoms per thread
constexpr int kRowAtoms = kBlock * kPer;  // brute force: sel1 atoms per item (a row of the pair matrix)
constexpr int kTile = 512;                // brute force: sel2 atoms staged in shared memory per step
constexpr int kRun = 2048;                // brute force: sel2 atoms per item (kRunSmall below kSmallN atoms)
constexpr int kRunSmall = 512;
constexpr int64_t kSmallN = 250000;
// Shared histogram budget per block (copies x bins x 4 bytes): with the brute-force tile (8 kB) and a few
// bytes of static shared memory it stays under the 48 kB a block gets without opting in.
constexpr int kHistBytes = 40 * 1024 - 64;
constexpr int kMaxStencil = 125 * 3;
constexpr uint32_t kFloat23 = 0x4B000000u;  // bit pattern of 2^23
static_assert(kRun % kTile == 0 && kRunSmall % kTile == 0 && kRowAtoms == kTile,
              "the diagonal of a row is its first tile");

__constant__ int32_t c_stencil[kMaxStencil];

__device__ __forceinline__ int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }

__device__ __forceinline__ void zero_shared(uint32_t *h, int n) {
    for (int b = threadIdx.x; b < n; b += blockDim.x) h[b] = 0;
}

// Adds the block's copies of the histogram to the device histogram (integer atomics: exact in any order).
__device__ __forceinline__ void flush(uint32_t *h, int copies, int nb, int b0, unsigned long long *hist, bool rezero) {
    for (int b = threadIdx.x; b < nb; b += blockDim.x) {
        unsigned long long s = 0;
        for (int c = 0; c < copies; ++c) s += h[c * nb + b], h[c * nb + b] = rezero ? 0u : h[c * nb + b];
        if (s) atomicAdd(hist + b0 + b, s);
    }
}

// The same bins with fewer slow instructions (see the top of the file and rdf_shared.hpp).
struct Fast {
    float hxx, hyx, hyy, hzx, hzy, hzz;  // cell matrix
    float kxx, kyx, kyy, kzx, kzy, kzz;  // 1.5 * 2^23 * h (exact)
    float rmin, rmin2, lo2, hi2, inv_dr, dr, guard, top;  // top = n_bins - 1
    __device__ explicit Fast(const Geom &g)
        : hxx(g.hxx), hyx(g.hyx), hyy(g.hyy), hzx(g.hzx), hzy(g.hzy), hzz(g.hzz), kxx(12582912.f * g.hxx),
          kyx(12582912.f * g.hyx), kyy(12582912.f * g.hyy), kzx(12582912.f * g.hzx), kzy(12582912.f * g.hzy),
          kzz(12582912.f * g.hzz), rmin(g.rmin), rmin2(g.rmin2), lo2(g.lo2), hi2(g.hi2), inv_dr(g.inv_dr), dr(g.dr),
          guard(g.guard), top(static_cast<float>(g.n_bins - 1)) {}
};

// An atom with 2^22 added to its coordinates: (a + 2^22 - b) mod 2^23 is then the centred difference + 2^22.
__device__ __forceinline__ Atom biased(Atom a) {
    return Atom{a.x + rdf::kFixHalf, a.y + rdf::kFixHalf, a.z + rdf::kFixHalf, a.key};
}
__device__ __forceinline__ Atom unbiased(Atom a) {
    return Atom{a.x - rdf::kFixHalf, a.y - rdf::kFixHalf, a.z - rdf::kFixHalf, a.key};
}
__device__ __forceinline__ float big(uint32_t a, uint32_t b) {  // 1.5 * 2^23 + centred difference
    return __uint_as_float(((a - b) & rdf::kFixMask) | kFloat23);
}

// How a pair's bin is found. kTable: the lookup table (Frame::thr), r_min = 0 and all bins in this unit -- no
// square root and no range tests beyond r_max; kRoot: the square root and the tests, floor by a round-down
// add (n_bins <= 2^23); kRootBig: the same with a float-to-int conversion (more bins).
enum Mode { kTable = 0, kRoot = 1, kRootBig = 2 };
constexpr int kTableMax = 8192;

struct Bins {  // shared-memory tables for kTable
    const float *thr;
    const uint16_t *tab;
    int shift, base, last;  // last = the table's last cell
};

// a is biased (see biased). A pair's bin is its float candidate when that is certain (rdf_shared.hpp: r^2 farther
// than guard from both edges of the candidate bin), else rdf::exact_bin in double (about 1-3 % of counted pairs).
template <bool Tri, bool Excl, int M>
__device__ __forceinline__ void pair_fast(const Fast &g, const Geom &geom, const Bins &t, const Atom &a, const Atom &b,
                                          uint32_t *h, int b0, int nb) {
    if (Excl && a.key == b.key) return;
    const float fx = big(a.x, b.x), fy = big(a.y, b.y), fz = big(a.z, b.z);
    float dx, dy;
    if (Tri) {
        dx = __fadd_rn(__fadd_rn(__fmaf_rn(fx, g.hxx, -g.kxx), __fmaf_rn(fy, g.hyx, -g.kyx)), __fmaf_rn(fz, g.hzx, -g.kzx));
        dy = __fadd_rn(__fmaf_rn(fy, g.hyy, -g.kyy), __fmaf_rn(fz, g.hzy, -g.kzy));
    } else {
        dx = __fmaf_rn(fx, g.hxx, -g.kxx);
        dy = __fmaf_rn(fy, g.hyy, -g.kyy);
    }
    const float dz = __fmaf_rn(fz, g.hzz, -g.kzz);
    const float r2 = __fmaf_rn(dz, dz, __fmaf_rn(dy, dy, __fmul_rn(dx, dx)));  // rdf::dist2
    if (M == kTable) {  // r_min = 0, no cut, all bins in this unit (b0 = 0)
        if (r2 < g.hi2) {
            const int c = min(max(static_cast<int>(__float_as_uint(r2) >> t.shift) - t.base, 0), t.last);
            int bin = t.tab[c];
            const float up = t.thr[bin + 1];
            const bool ge = r2 >= up;
            bin += ge ? 1 : 0;
            const float other = t.thr[ge ? bin + 1 : bin];
            if (__fsub_rn(r2, ge ? up : other) >= g.guard && __fsub_rn(ge ? other : up, r2) > g.guard) {
                atomicAdd(h + bin, 1u);
            } else {
                bin = rdf::exact_bin(geom, unbiased(a), b);
                if (bin >= 0) atomicAdd(h + bin, 1u);
            }
        }
    } else if (r2 < g.hi2 && r2 >= g.lo2) {
        // floor(min(max(x, 0), n_bins - 1)): the candidate, as rdf::pair_bin finds it
        const float x = fminf(fmaxf(__fmul_rn(__fsub_rn(__fsqrt_rn(r2), g.rmin), g.inv_dr), 0.f), g.top);
        int bin = M == kRootBig ? __float2int_rz(x) : __float_as_int(__fadd_rd(x, 8388608.f)) - int(kFloat23);
        const float e0 = __fadd_rn(g.rmin, __fmul_rn(static_cast<float>(bin), g.dr));
        const float e1 = __fadd_rn(g.rmin, __fmul_rn(static_cast<float>(bin + 1), g.dr));
        const float sq0 = __fmul_rn(e0, e0), lo = sq0 > g.rmin2 ? sq0 : g.rmin2, hi = __fmul_rn(e1, e1);
        if (!(__fsub_rn(r2, lo) >= g.guard && __fsub_rn(hi, r2) > g.guard)) bin = rdf::exact_bin(geom, unbiased(a), b);
        bin -= b0;
        if (bin + b0 >= 0 && static_cast<unsigned>(bin) < static_cast<unsigned>(nb)) atomicAdd(h + bin, 1u);
    }
}

// Copies the lookup tables (global) to shared memory; returns where they are.
__device__ __forceinline__ Bins load_bins(unsigned char *at, const float *thr, int n_thr, const uint16_t *tab, int n_tab,
                                          int shift, int base) {
    float *s_thr = reinterpret_cast<float *>(at);
    uint16_t *s_tab = reinterpret_cast<uint16_t *>(at + 4 * n_thr);
    for (int q = threadIdx.x; q < n_thr; q += blockDim.x) s_thr[q] = thr[q];
    for (int q = threadIdx.x; q < n_tab; q += blockDim.x) s_tab[q] = tab[q];
    return Bins{s_thr, s_tab, shift, base, n_tab - 1};
}

struct TableArgs {
    const float *thr;
    const uint16_t *tab;
    int n_thr, n_tab, shift, base;
};

// Brute force, persistent blocks. Item k of [k0, k1): row r (sel1 atoms [512 r, 512 r + 512), two per
// thread) against sel2 atoms [j0, j0 + 2048). Identical selections: row r starts at j = 512 r (its first
// tile is the diagonal, where only j > i counts) and rows[] holds each row's first item; otherwise every row
// has the same number of items. Blocks take items from *counter and flush every `flush_every` items.
template <bool Tri, bool Id, bool Excl, int M>
__global__ void __launch_bounds__(kBlock, 4)
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
#pragma unroll 4
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
__global__ void __launch_bounds__(kBlock, 4)
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

template <class T>
void ensure(T *&p, size_t &cap, size_t n, const char *what) {
    if (n <= cap) return;
    if (p) cudaFree(p);
    p = nullptr;
    cap = 0;
    check(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)), what);
    cap = n;
}

int64_t brute_rows(const rdf::Frame &f) { return (int64_t(f.a1.size()) + kRowAtoms - 1) / kRowAtoms; }

// sel2 atoms per item: shorter runs for small selections, so every block gets many items (a short tail).
int brute_run(const rdf::Frame &f) {
    const int64_t n2 = f.identical ? int64_t(f.a1.size()) : int64_t(f.a2.size());
    return n2 < kSmallN ? kRunSmall : kRun;
}

// Identical selections: first item of each row (rows + 1 entries).
void brute_row_starts(const rdf::Frame &f, std::vector<int64_t> &rows) {
    const int64_t n = static_cast<int64_t>(f.a1.size()), nr = brute_rows(f);
    rows.resize(nr + 1);
    rows[0] = 0;
    const int run = brute_run(f);
    for (int64_t r = 0; r < nr; ++r) rows[r + 1] = rows[r] + (n - r * kRowAtoms + run - 1) / run;
}

// Launches one of the 24 variants of a kernel template (triclinic, identical, exclusions, bin mode).
#define RDF_DISPATCH(KERNEL, GRID, SMEM, STREAM, ...)                                                             \
    do {                                                                                                          \
        switch ((tri ? 12 : 0) + (id ? 6 : 0) + (excl ? 3 : 0) + mode) {                                          \
        case 0: KERNEL<false, false, false, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 1: KERNEL<false, false, false, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 2: KERNEL<false, false, false, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 3: KERNEL<false, false, true, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 4: KERNEL<false, false, true, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 5: KERNEL<false, false, true, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 6: KERNEL<false, true, false, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 7: KERNEL<false, true, false, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 8: KERNEL<false, true, false, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 9: KERNEL<false, true, true, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 10: KERNEL<false, true, true, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 11: KERNEL<false, true, true, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 12: KERNEL<true, false, false, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 13: KERNEL<true, false, false, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 14: KERNEL<true, false, false, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 15: KERNEL<true, false, true, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 16: KERNEL<true, false, true, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 17: KERNEL<true, false, true, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 18: KERNEL<true, true, false, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 19: KERNEL<true, true, false, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 20: KERNEL<true, true, false, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 21: KERNEL<true, true, true, kTable><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 22: KERNEL<true, true, true, kRoot><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        case 23: KERNEL<true, true, true, kRootBig><<<GRID, kBlock, SMEM, STREAM>>>(__VA_ARGS__); break; \
        }                                                                                                         \
    } while (0)

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

int32_t rdf_dev_max_bins() { return kHistBytes / 4; }

int64_t rdf_dev_items(const rdf::Frame &f) {
    const int64_t n1 = static_cast<int64_t>(f.a1.size());
    const int64_t n2 = f.identical ? n1 : static_cast<int64_t>(f.a2.size());
    if (f.method == QMMM_RDF_METHOD_CELLS) return (n1 + kBlock - 1) / kBlock;
    if (!f.identical) return brute_rows(f) * ((n2 + brute_run(f) - 1) / brute_run(f));
    std::vector<int64_t> rows;
    brute_row_starts(f, rows);
    return rows.back();
}

RdfDev *rdf_dev_open(int device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    auto d = std::make_unique<RdfDev>();
    d->device = device;
    check(cudaDeviceGetAttribute(&d->n_sm, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    for (auto &s : d->stream) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaStreamCreateWithFlags(&d->copy, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreateWithFlags(&d->copied, cudaEventDisableTiming), "cudaEventCreate");
    for (auto &b : d->buf) {
        for (auto &e : b.done) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
        check(cudaEventCreateWithFlags(&b.staged, cudaEventDisableTiming), "cudaEventCreate");
    }
    check(cudaMalloc(&d->counter, 2 * sizeof(unsigned long long)), "cudaMalloc (counters)");
    return d.release();
}

void rdf_dev_close(RdfDev *d) noexcept {
    if (!d) return;
    for (auto &b : d->buf) {
        cudaFree(b.a1), cudaFree(b.a2), cudaFree(b.cell1), cudaFree(b.start), cudaFree(b.rows), cudaFree(b.max_cell);
        cudaFree(b.thr), cudaFree(b.tab);
        for (auto e : b.done)
            if (e) cudaEventDestroy(e);
        if (b.staged) cudaEventSynchronize(b.staged), cudaEventDestroy(b.staged);
    }
    cudaFree(d->hist), cudaFree(d->counter);
    cudaFree(d->raw), cudaFree(d->keys), cudaFree(d->keys_out), cudaFree(d->idx), cudaFree(d->idx_out);
    cudaFree(d->sort_tmp);
    if (d->copied) cudaEventDestroy(d->copied);
    if (d->copy) cudaStreamDestroy(d->copy);
    for (auto s : d->stream)
        if (s) cudaStreamDestroy(s);
    delete d;
}

void rdf_dev_wait(RdfDev *d, int slot) { check(cudaStreamSynchronize(d->stream[slot & 1]), "RDF kernel"); }

// Sorts n atoms (host memory, input order) by cell into out on stream st, stably, as sort_by_cell
// does on the host: cells (if not null) gets each sorted atom's cell, start (if not null) the n_cells + 1 offsets
// and max_cell the fullest cell. `host` must stay unchanged until the copy is done (an event after it).
void sort_on_device(RdfDev *d, const Atom *host, int64_t n, const int32_t nc[3], Atom *out, int32_t *cells,
                    int32_t *start, int32_t *max_cell, cudaStream_t st) {
    const int64_t n_cells = int64_t{nc[0]} * nc[1] * nc[2];
    int bits = 1;
    while (bits < 32 && (int64_t{1} << bits) < n_cells) ++bits;
    const size_t un = static_cast<size_t>(n);
    ensure(d->raw, d->cap_raw, un, "cudaMalloc (cell sort)");
    ensure(d->keys, d->cap_keys, un, "cudaMalloc (cell sort)");
    ensure(d->keys_out, d->cap_keys_out, un, "cudaMalloc (cell sort)");
    ensure(d->idx, d->cap_idx, un, "cudaMalloc (cell sort)");
    ensure(d->idx_out, d->cap_idx_out, un, "cudaMalloc (cell sort)");
    check(cudaMemcpyAsync(d->raw, host, un * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy atoms");
    const unsigned grid = static_cast<unsigned>((n + kBlock - 1) / kBlock);
    cell_keys<<<grid, kBlock, 0, st>>>(d->raw, n, nc[0], nc[1], nc[2], d->keys, d->idx);
    check(cudaGetLastError(), "cell keys launch");
    uint32_t *sorted_keys = cells ? reinterpret_cast<uint32_t *>(cells) : d->keys_out;
    size_t tmp = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, tmp, d->keys, sorted_keys, d->idx, d->idx_out, n, 0, bits, st),
          "cub radix sort (size)");
    ensure(d->sort_tmp, d->cap_sort_tmp, tmp, "cudaMalloc (cell sort)");
    check(cub::DeviceRadixSort::SortPairs(d->sort_tmp, tmp, d->keys, sorted_keys, d->idx, d->idx_out, n, 0, bits, st),
          "cub radix sort");
    cell_gather<<<grid, kBlock, 0, st>>>(d->raw, d->idx_out, n, out);
    check(cudaGetLastError(), "cell gather launch");
    if (start) {
        cell_starts<<<static_cast<unsigned>((n + kBlock) / kBlock), kBlock, 0, st>>>(sorted_keys, n, n_cells, start);
        check(cudaGetLastError(), "cell starts launch");
        check(cudaMemsetAsync(max_cell, 0, sizeof(int32_t), st), "cudaMemsetAsync (fullest cell)");
        const unsigned g = static_cast<unsigned>(std::min<int64_t>((n_cells + kBlock - 1) / kBlock, 4 * d->n_sm));
        cell_max<<<g, kBlock, 0, st>>>(start, n_cells, max_cell);
        check(cudaGetLastError(), "fullest cell launch");
    }
}

// Copies the frame into the other buffer on the copy stream: it waits (on the device) only for the kernels of
// the frame that buffer held before, not for the ones now running. The frames of the GPU path are page-locked
// (Frame::pinned): their copies run asynchronously at full PCIe speed and the buffer's `staged` event marks their
// end (reuse_wait); a pageable copy would hold the host thread for the whole transfer. The kernel streams wait
// for the copies (event). c_stencil is shared: a different stencil waits for all queued kernels first.
void rdf_dev_upload(RdfDev *d, const rdf::Frame &f) {
    FrameBuf &prev = d->buf[d->cur];
    if (prev.used)  // the previous frame's kernels so far (launches after this upload belong to the new frame)
        for (int k = 0; k < 2; ++k) check(cudaEventRecord(prev.done[k], d->stream[k]), "cudaEventRecord");
    d->cur ^= 1;
    FrameBuf &b = d->buf[d->cur];
    cudaStream_t st = d->copy;
    if (b.used)
        for (int k = 0; k < 2; ++k) check(cudaStreamWaitEvent(st, b.done[k], 0), "cudaStreamWaitEvent");
    const size_t n1 = f.a1.size(), n2 = f.a2.size();
    ensure(b.a1, b.cap_a1, n1, "cudaMalloc (sel1)");
    if (!f.identical) ensure(b.a2, b.cap_a2, n2, "cudaMalloc (sel2)");
    const bool cells = f.method == QMMM_RDF_METHOD_CELLS;
    if (f.device_cells) {
        if (!cells) {  // brute force: sel1 into small cells (a warp's atoms are neighbours), sel2 as it is
            sort_on_device(d, f.a1.data(), int64_t(n1), f.nc, b.a1, nullptr, nullptr, nullptr, st);
            if (!f.identical)
                check(cudaMemcpyAsync(b.a2, f.a2.data(), n2 * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy sel2");
        } else {
            ensure(b.cell1, b.cap_cell1, n1, "cudaMalloc (cells)");
            ensure(b.start, b.cap_start, size_t(f.nc[0]) * f.nc[1] * f.nc[2] + 1, "cudaMalloc (cell starts)");
            ensure(b.max_cell, b.cap_max_cell, 1, "cudaMalloc (fullest cell)");
            if (f.identical) {
                sort_on_device(d, f.a1.data(), int64_t(n1), f.nc, b.a1, b.cell1, b.start, b.max_cell, st);
            } else {
                sort_on_device(d, f.a1.data(), int64_t(n1), f.nc, b.a1, b.cell1, nullptr, nullptr, st);
                sort_on_device(d, f.a2.data(), int64_t(n2), f.nc, b.a2, nullptr, b.start, b.max_cell, st);
            }
        }
    } else {
        check(cudaMemcpyAsync(b.a1, f.a1.data(), n1 * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy sel1");
        if (!f.identical)
            check(cudaMemcpyAsync(b.a2, f.a2.data(), n2 * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy sel2");
    }
    check(cudaEventRecord(b.staged, st), "cudaEventRecord");  // the copies out of host memory end here
    if (cells && !f.device_cells) {
        ensure(b.cell1, b.cap_cell1, f.cell1.size(), "cudaMalloc (cells)");
        ensure(b.start, b.cap_start, f.start.size(), "cudaMalloc (cell starts)");
        check(cudaMemcpyAsync(b.cell1, f.cell1.data(), f.cell1.size() * 4, cudaMemcpyHostToDevice, st), "copy cells");
        check(cudaMemcpyAsync(b.start, f.start.data(), f.start.size() * 4, cudaMemcpyHostToDevice, st),
              "copy cell starts");
    }
    if (cells) {
        if (f.stencil.size() > size_t(kMaxStencil)) throw Error(QMMM_ERR_INTERNAL, "cell stencil too large");
        if (f.stencil != d->stencil) {  // kernels of earlier frames may still read c_stencil
            rdf_dev_wait(d, 0), rdf_dev_wait(d, 1);
            check(cudaMemcpyToSymbolAsync(c_stencil, f.stencil.data(), f.stencil.size() * 4, 0, cudaMemcpyHostToDevice, st),
                  "copy stencil");
            d->stencil = f.stencil;
        }
    } else if (f.identical) {
        brute_row_starts(f, d->host_rows);
        ensure(b.rows, b.cap_rows, d->host_rows.size(), "cudaMalloc (rows)");
        check(cudaMemcpyAsync(b.rows, d->host_rows.data(), d->host_rows.size() * 8, cudaMemcpyHostToDevice, st),
              "copy rows");
    }
    if (f.tab_ok && f.table.size() <= size_t(kTableMax)) {
        ensure(b.thr, b.cap_thr, f.thr.size(), "cudaMalloc (bin thresholds)");
        ensure(b.tab, b.cap_tab, f.table.size(), "cudaMalloc (bin table)");
        check(cudaMemcpyAsync(b.thr, f.thr.data(), f.thr.size() * 4, cudaMemcpyHostToDevice, st), "copy thresholds");
        check(cudaMemcpyAsync(b.tab, f.table.data(), f.table.size() * 2, cudaMemcpyHostToDevice, st), "copy table");
    }
    check(cudaEventRecord(d->copied, st), "cudaEventRecord");
    for (auto k : d->stream) check(cudaStreamWaitEvent(k, d->copied, 0), "cudaStreamWaitEvent");
    b.used = true;
}

// The buffer the next upload takes holds the frame of two uploads ago: its copies out of host memory (the
// staged event) and its kernels must be done before the host rewrites that frame.
void rdf_dev_reuse_wait(RdfDev *d) {
    FrameBuf &b = d->buf[d->cur ^ 1];
    check(cudaEventSynchronize(b.staged), "waiting for a frame's copies");
    if (b.used)
        for (auto e : b.done) check(cudaEventSynchronize(e), "waiting for a frame's kernels");
}

void rdf_dev_zero(RdfDev *d, int32_t n_bins) {
    rdf_dev_wait(d, 0), rdf_dev_wait(d, 1);
    ensure(d->hist, d->cap_hist, size_t(n_bins), "cudaMalloc (histogram)");
    check(cudaMemsetAsync(d->hist, 0, size_t(n_bins) * 8, d->stream[0]), "cudaMemsetAsync");
    rdf_dev_wait(d, 0);
}

void rdf_dev_launch(RdfDev *d, const rdf::Frame &f, int64_t k0, int64_t k1, int32_t b0, int32_t nb, int slot) {
    if (k1 <= k0) return;
    const bool tri = f.g.triclinic != 0, id = f.identical, excl = f.exclusions;
    const FrameBuf &fb = d->buf[d->cur];
    const Atom *s = id ? fb.a1 : fb.a2;
    const int64_t n1 = static_cast<int64_t>(f.a1.size());
    const int64_t n2 = id ? n1 : static_cast<int64_t>(f.a2.size());
    // Shared memory: [brute-force tile] histogram copies [thresholds, table]; the table mode when it fits.
    const size_t tables = f.tab_ok ? (4 * f.thr.size() + 2 * f.table.size() + 3) / 4 * 4 : 0;
    const bool table = f.tab_ok && f.table.size() <= size_t(kTableMax) && f.g.rmin == 0.f && f.g.rmin2 == 0.f && b0 == 0 &&
                       nb == f.g.n_bins && tables + 4 * size_t(nb) <= size_t(kHistBytes);
    const int mode = table ? kTable : (f.g.n_bins > (1 << 23) ? kRootBig : kRoot);
    const size_t room = size_t(kHistBytes) - (table ? tables : 0);
    const int copies = static_cast<int>(std::clamp<size_t>(room / (4 * size_t(nb)), 1, 8));
    const size_t hist_bytes = size_t(copies) * nb * 4 + (table ? tables : 0);  // + the tables behind the copies
    TableArgs ta{fb.thr, fb.tab, static_cast<int>(f.thr.size()), static_cast<int>(f.table.size()), f.tab_shift,
                 f.tab_base};
    cudaStream_t st = d->stream[slot & 1];
    if (f.method == QMMM_RDF_METHOD_BRUTE) {
        const size_t sm = kTile * sizeof(Atom) + hist_bytes;
        int per_sm = 1;
        check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, brute_items<false, true, false, kTable>, kBlock, sm),
              "occupancy");
        const int64_t blocks = std::min<int64_t>(k1 - k0, int64_t(std::max(per_sm, 1)) * d->n_sm);
        unsigned long long *ctr = d->counter + (slot & 1);
        check(cudaMemsetAsync(ctr, 0, sizeof *ctr, st), "cudaMemsetAsync (counter)");
        const int run = brute_run(f);
        const int64_t per_row = (n2 + run - 1) / run;
        // An item adds at most 512 x 2048 = 2^20 pairs to a counter: flush before 4095 items.
        const int flush_every = 4095;
        const dim3 grid(static_cast<unsigned>(blocks));
        RDF_DISPATCH(brute_items, grid, sm, st, f.g, fb.a1, n1, s, n2, fb.rows, brute_rows(f), per_row, k0, k1, run,
                     b0, nb, copies, flush_every, ta, ctr, d->hist);
        check(cudaGetLastError(), "brute-force kernel launch");
    } else {
        const int n_st = static_cast<int>(f.stencil.size() / 3);
        const dim3 grid(static_cast<unsigned>(k1 - k0));
        RDF_DISPATCH(cells_items, grid, hist_bytes, st, f.g, fb.a1, fb.cell1, n1, k0, s, fb.start,
                     f.device_cells ? fb.max_cell : nullptr, n_st, f.nc[0],
                     f.nc[1], f.nc[2], b0, nb, copies, ta, d->hist);
        check(cudaGetLastError(), "cell-list kernel launch");
    }
}

void rdf_dev_add_hist(RdfDev *d, int32_t n_bins, uint64_t *hist) {
    rdf_dev_wait(d, 0), rdf_dev_wait(d, 1);
    d->host_hist.resize(n_bins);
    check(cudaMemcpyAsync(d->host_hist.data(), d->hist, size_t(n_bins) * 8, cudaMemcpyDeviceToHost, d->stream[0]),
          "copy histogram");
    rdf_dev_wait(d, 0);
    for (int32_t b = 0; b < n_bins; ++b) hist[b] += d->host_hist[b];
}

class RdfDeviceImpl final : public RdfDevice {
public:
    explicit RdfDeviceImpl(int device) : d_(rdf_dev_open(device)) {}
    ~RdfDeviceImpl() override { rdf_dev_close(d_); }
    void upload(const rdf::Frame &f) override { rdf_dev_upload(d_, f); }
    void reuse_wait() override { rdf_dev_reuse_wait(d_); }
    void zero(int32_t n_bins) override { rdf_dev_zero(d_, n_bins); }
    void launch(const rdf::Frame &f, int64_t k0, int64_t k1, int32_t b0, int32_t nb, int slot) override {
        rdf_dev_launch(d_, f, k0, k1, b0, nb, slot);
    }
    void wait(int slot) override { rdf_dev_wait(d_, slot); }
    void add_hist(int32_t n_bins, uint64_t *hist) override { rdf_dev_add_hist(d_, n_bins, hist); }

private:
    RdfDev *d_;
};

// Page-locked memory for the frames of qmmm_rdf_add_frames (portable: any device may copy from it).
class PinnedMemory final : public rdf::HostMemory {
public:
    void *alloc(size_t bytes) const override {
        void *p = nullptr;
        check(cudaHostAlloc(&p, std::max<size_t>(bytes, 1), cudaHostAllocPortable), "cudaHostAlloc (frame atoms)");
        return p;
    }
    void release(void *p) const noexcept override {
        if (p) cudaFreeHost(p);
    }
};
const PinnedMemory pinned_memory;

class RdfGpuImpl final : public RdfGpu {
public:
    const rdf::HostMemory *host_memory() const override { return &pinned_memory; }
    std::unique_ptr<RdfDevice> open(int device) const override { return std::make_unique<RdfDeviceImpl>(device); }
    int32_t max_bins() const override { return rdf_dev_max_bins(); }
    int64_t items(const rdf::Frame &f) const override { return rdf_dev_items(f); }
};
const RdfGpuImpl impl;
const GpuRegistry<RdfGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
