// rdf_kernels.cu -- RDF pair counting on one GPU: the fast brute-force and cell-list kernels, the seed's
// scheme (the benchmark baseline), and the per-thread device state.
//
// Histograms live in shared memory as 32-bit counters with atomic increments (seed 000, section 2.4); a
// block counts at most 256 x 65536 pairs (brute force) or 256 x stencil x fullest cell (cell list, checked on
// the host), far below 2^32, then adds its counters to the device's 64-bit histogram with integer atomics.
// So no counter overflows at any selection size, and the sums are exact (no floating-point atomics).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "error.hpp"
#include "qmmm_cuda.h"

namespace qmmm::cuda {

using rdf::Atom;
using rdf::Geom;

namespace {

constexpr int kBlock = 256;
constexpr int kTile = 512;            // brute force: sel2 atoms staged in shared memory per step
constexpr int kMaxSeg = 65536;        // brute force: sel2 atoms per block (bounds a block's counts)
constexpr int kHistBytes = 40 * 1024; // shared histogram budget per block (copies x bins x 4 bytes)
constexpr int kMaxStencil = 125 * 3;
constexpr int kSeedTile = 4000;       // seed: sel1 atoms per constant-memory tile (64 kB)

__constant__ int32_t c_stencil[kMaxStencil];
__constant__ Atom c_seed_tile[kSeedTile];

void check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return;
    cudaGetLastError();
    throw Error(e == cudaErrorMemoryAllocation ? QMMM_ERR_OUT_OF_MEMORY : QMMM_ERR_CUDA,
                std::string(what) + ": " + cudaGetErrorString(e));
}

__device__ __forceinline__ int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ int64_t lmax(int64_t a, int64_t b) { return a > b ? a : b; }

__device__ __forceinline__ void zero_shared(uint32_t *h, int n) {
    for (int b = threadIdx.x; b < n; b += blockDim.x) h[b] = 0;
}

// Adds the block's copies of the histogram to the device histogram (integer atomics: exact in any order).
__device__ __forceinline__ void flush(const uint32_t *h, int copies, int nb, int b0, unsigned long long *hist) {
    for (int b = threadIdx.x; b < nb; b += blockDim.x) {
        unsigned long long s = 0;
        for (int c = 0; c < copies; ++c) s += h[c * nb + b];
        if (s) atomicAdd(hist + b0 + b, s);
    }
}

template <bool Tri>
__device__ __forceinline__ void tally(const Geom &g, const Atom &a, const Atom &b, uint32_t *h, int b0, int nb) {
    if (a.key == b.key) return;
    const float r2 = rdf::dist2<Tri>(g, a.x, a.y, a.z, b.x, b.y, b.z);
    if (!(r2 < g.rmax2)) return;
    const int bin = rdf::bin_of(g, r2) - b0;
    if (static_cast<unsigned>(bin) < static_cast<unsigned>(nb)) atomicAdd(h + bin, 1u);
}

// Brute force: a thread keeps one sel1 atom in registers; blockIdx.y picks a segment of sel2, staged in
// shared memory in tiles that every thread reads at once (broadcast). Warps spread their increments over
// `copies` histograms to cut contention on busy bins.
template <bool Tri, bool Identical>
__global__ void __launch_bounds__(kBlock) brute_fast(Geom g, const Atom *__restrict__ a1, int64_t i0, int64_t i1,
                                                     const Atom *__restrict__ a2, int64_t n2, int seg, int b0, int nb,
                                                     int copies, unsigned long long *__restrict__ hist) {
    extern __shared__ __align__(16) unsigned char smem[];
    Atom *tile = reinterpret_cast<Atom *>(smem);
    uint32_t *h = reinterpret_cast<uint32_t *>(smem + kTile * sizeof(Atom));
    const int64_t first = i0 + int64_t(blockIdx.x) * kBlock;
    const int64_t i = first + threadIdx.x;
    int64_t j0 = int64_t(blockIdx.y) * seg;
    const int64_t j1 = lmin(n2, j0 + seg);
    if (Identical) {
        if (j1 <= first + 1) return;  // every j <= every i of the block (uniform for the block)
        j0 = lmax(j0, first + 1);
    }
    zero_shared(h, copies * nb);
    const bool valid = i < i1;
    const Atom a = valid ? a1[i] : Atom{0, 0, 0, 0};
    uint32_t *mine = h + ((threadIdx.x >> 5) % copies) * nb;
    __syncthreads();
    for (int64_t t0 = j0; t0 < j1; t0 += kTile) {
        const int n = static_cast<int>(lmin(kTile, j1 - t0));
        for (int k = threadIdx.x; k < n; k += kBlock) tile[k] = a2[t0 + k];
        __syncthreads();
        if (valid) {
            int k = 0;
            if (Identical) k = static_cast<int>(lmax(0, lmin(n, i + 1 - t0)));
#pragma unroll 4
            for (; k < n; ++k) tally<Tri>(g, a, tile[k], mine, b0, nb);
        }
        __syncthreads();
    }
    flush(h, copies, nb, b0, hist);
}

// Cell list: a thread takes one sel1 atom (atoms sorted by cell, so a warp mostly shares its cells) and
// visits the stencil's cells; for identical selections the own cell's later atoms and a half stencil.
template <bool Tri, bool Identical>
__global__ void __launch_bounds__(kBlock) cells_fast(Geom g, const Atom *__restrict__ a1, const int32_t *__restrict__ cell1,
                                                     int64_t p0, int64_t p1, const Atom *__restrict__ s,
                                                     const int32_t *__restrict__ start, int n_st, int nx, int ny,
                                                     int nz, int b0, int nb, int copies,
                                                     unsigned long long *__restrict__ hist) {
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *h = reinterpret_cast<uint32_t *>(smem);
    zero_shared(h, copies * nb);
    __syncthreads();
    const int64_t p = p0 + int64_t(blockIdx.x) * kBlock + threadIdx.x;
    uint32_t *mine = h + ((threadIdx.x >> 5) % copies) * nb;
    if (p < p1) {
        const Atom a = a1[p];
        const int c = cell1[p];
        const int cx = c % nx, cy = (c / nx) % ny, cz = c / (nx * ny);
        if (Identical)
            for (int j = static_cast<int>(p) + 1, e = start[c + 1]; j < e; ++j) tally<Tri>(g, a, s[j], mine, b0, nb);
        for (int k = 0; k < n_st; ++k) {
            int x = cx + c_stencil[3 * k], y = cy + c_stencil[3 * k + 1], z = cz + c_stencil[3 * k + 2];
            x += x < 0 ? nx : (x >= nx ? -nx : 0);
            y += y < 0 ? ny : (y >= ny ? -ny : 0);
            z += z < 0 ? nz : (z >= nz ? -nz : 0);
            const int q = x + nx * (y + ny * z);
            for (int j = start[q], e = start[q + 1]; j < e; ++j) tally<Tri>(g, a, s[j], mine, b0, nb);
        }
    }
    __syncthreads();
    flush(h, copies, nb, b0, hist);
}

// The seed's scheme: a tile of sel1 in constant memory, one sel2 atom per thread looping over the tile,
// one shared histogram per block. Orthorhombic only, as in the seed.
template <bool Identical>
__global__ void __launch_bounds__(kBlock) seed_kernel(Geom g, int n_tile, int64_t tile0, const Atom *__restrict__ a2,
                                                      int64_t n2, int b0, int nb, unsigned long long *__restrict__ hist) {
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *h = reinterpret_cast<uint32_t *>(smem);
    zero_shared(h, nb);
    __syncthreads();
    const int64_t j = int64_t(blockIdx.x) * kBlock + threadIdx.x;
    if (j < n2) {
        const Atom b = a2[j];
        int n = n_tile;
        if (Identical) n = static_cast<int>(lmax(0, lmin(n_tile, j - tile0)));  // i < j
        for (int k = 0; k < n; ++k) tally<false>(g, c_seed_tile[k], b, h, b0, nb);
    }
    __syncthreads();
    flush(h, 1, nb, b0, hist);
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

}  // namespace

struct RdfDevice {
    int device = 0;
    cudaStream_t stream = nullptr;
    int n_sm = 1;
    Atom *a1 = nullptr, *a2 = nullptr;
    int32_t *cell1 = nullptr, *start = nullptr;
    unsigned long long *hist = nullptr;
    size_t cap_a1 = 0, cap_a2 = 0, cap_cell1 = 0, cap_start = 0, cap_hist = 0;
    std::vector<unsigned long long> host_hist;
};

int32_t rdf_max_bins_per_unit() { return kHistBytes / 4; }

RdfDevice *rdf_device_open(int device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    auto d = std::make_unique<RdfDevice>();
    d->device = device;
    check(cudaDeviceGetAttribute(&d->n_sm, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    check(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    return d.release();
}

void rdf_device_close(RdfDevice *d) noexcept {
    if (!d) return;
    cudaFree(d->a1), cudaFree(d->a2), cudaFree(d->cell1), cudaFree(d->start), cudaFree(d->hist);
    if (d->stream) cudaStreamDestroy(d->stream);
    delete d;
}

void rdf_device_set_frame(RdfDevice *d, const rdf::Frame &f) {
    const size_t n1 = f.a1.size(), n2 = f.a2.size();
    ensure(d->a1, d->cap_a1, n1, "cudaMalloc (sel1)");
    check(cudaMemcpyAsync(d->a1, f.a1.data(), n1 * sizeof(Atom), cudaMemcpyHostToDevice, d->stream), "copy sel1");
    if (!f.identical) {
        ensure(d->a2, d->cap_a2, n2, "cudaMalloc (sel2)");
        check(cudaMemcpyAsync(d->a2, f.a2.data(), n2 * sizeof(Atom), cudaMemcpyHostToDevice, d->stream), "copy sel2");
    }
    if (f.method == QMMM_RDF_METHOD_CELLS) {
        if (f.stencil.size() > size_t(kMaxStencil)) throw Error(QMMM_ERR_INTERNAL, "cell stencil too large");
        ensure(d->cell1, d->cap_cell1, f.cell1.size(), "cudaMalloc (cells)");
        ensure(d->start, d->cap_start, f.start.size(), "cudaMalloc (cell starts)");
        check(cudaMemcpyAsync(d->cell1, f.cell1.data(), f.cell1.size() * 4, cudaMemcpyHostToDevice, d->stream), "copy cells");
        check(cudaMemcpyAsync(d->start, f.start.data(), f.start.size() * 4, cudaMemcpyHostToDevice, d->stream),
              "copy cell starts");
        check(cudaMemcpyToSymbolAsync(c_stencil, f.stencil.data(), f.stencil.size() * 4, 0, cudaMemcpyHostToDevice,
                                      d->stream),
              "copy stencil");
    }
    ensure(d->hist, d->cap_hist, size_t(f.g.n_bins), "cudaMalloc (histogram)");
    check(cudaMemsetAsync(d->hist, 0, size_t(f.g.n_bins) * 8, d->stream), "cudaMemsetAsync");
}

void rdf_device_unit(RdfDevice *d, const rdf::Frame &f, const RdfUnit &u, int kernel) {
    const int64_t ni = u.i1 - u.i0;
    if (ni <= 0) return;
    const bool tri = f.g.triclinic != 0, id = f.identical;
    const Atom *s = id ? d->a1 : d->a2;
    const int64_t n2 = id ? int64_t(f.a1.size()) : int64_t(f.a2.size());
    const int copies = std::clamp(kHistBytes / (4 * u.nb), 1, 8);
    const size_t hist_bytes = size_t(copies) * u.nb * 4;
    const int64_t bx = (ni + kBlock - 1) / kBlock;
    if (kernel == QMMM_RDF_KERNEL_SEED) {
        if (tri) throw Error(QMMM_ERR_UNSUPPORTED, "the seed kernel handles orthorhombic boxes only");
        for (int64_t t0 = u.i0; t0 < u.i1; t0 += kSeedTile) {
            const int n = static_cast<int>(std::min<int64_t>(kSeedTile, u.i1 - t0));
            check(cudaMemcpyToSymbolAsync(c_seed_tile, f.a1.data() + t0, n * sizeof(Atom), 0, cudaMemcpyHostToDevice,
                                          d->stream),
                  "copy seed tile");
            const dim3 grid(static_cast<unsigned>((n2 + kBlock - 1) / kBlock));
            if (id)
                seed_kernel<true><<<grid, kBlock, u.nb * 4, d->stream>>>(f.g, n, t0, s, n2, u.b0, u.nb, d->hist);
            else
                seed_kernel<false><<<grid, kBlock, u.nb * 4, d->stream>>>(f.g, n, t0, s, n2, u.b0, u.nb, d->hist);
            check(cudaGetLastError(), "seed kernel launch");
        }
    } else if (f.method == QMMM_RDF_METHOD_BRUTE) {
        // Enough blocks to fill the GPU several times over, segments no longer than kMaxSeg.
        int64_t seg = (n2 * bx) / (int64_t(8) * d->n_sm * 4);
        seg = std::clamp<int64_t>((seg + kTile - 1) / kTile * kTile, kTile, kMaxSeg);
        const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>((n2 + seg - 1) / seg));
        const size_t sm = kTile * sizeof(Atom) + hist_bytes;
        const int sg = static_cast<int>(seg);
#define RDF_BRUTE(T, I)                                                                                     \
    brute_fast<T, I><<<grid, kBlock, sm, d->stream>>>(f.g, d->a1, u.i0, u.i1, s, n2, sg, u.b0, u.nb, copies, \
                                                      d->hist)
        if (tri && id) RDF_BRUTE(true, true);
        else if (tri) RDF_BRUTE(true, false);
        else if (id) RDF_BRUTE(false, true);
        else RDF_BRUTE(false, false);
#undef RDF_BRUTE
        check(cudaGetLastError(), "brute-force kernel launch");
    } else {
        const int n_st = static_cast<int>(f.stencil.size() / 3);
        const dim3 grid(static_cast<unsigned>(bx));
#define RDF_CELLS(T, I)                                                                                       \
    cells_fast<T, I><<<grid, kBlock, hist_bytes, d->stream>>>(f.g, d->a1, d->cell1, u.i0, u.i1, s, d->start, n_st, \
                                                              f.nc[0], f.nc[1], f.nc[2], u.b0, u.nb, copies, d->hist)
        if (tri && id) RDF_CELLS(true, true);
        else if (tri) RDF_CELLS(true, false);
        else if (id) RDF_CELLS(false, true);
        else RDF_CELLS(false, false);
#undef RDF_CELLS
        check(cudaGetLastError(), "cell-list kernel launch");
    }
    check(cudaStreamSynchronize(d->stream), "RDF kernel");
}

void rdf_device_add_hist(RdfDevice *d, const rdf::Frame &f, uint64_t *hist) {
    d->host_hist.resize(f.g.n_bins);
    check(cudaMemcpyAsync(d->host_hist.data(), d->hist, size_t(f.g.n_bins) * 8, cudaMemcpyDeviceToHost, d->stream),
          "copy histogram");
    check(cudaStreamSynchronize(d->stream), "copy histogram");
    for (int32_t b = 0; b < f.g.n_bins; ++b) hist[b] += d->host_hist[b];
}

}  // namespace qmmm::cuda
