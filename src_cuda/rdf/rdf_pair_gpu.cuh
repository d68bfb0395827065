// rdf_pair_gpu.cuh -- the RDF kernels' pair term: a pair's bin from the atoms' fixed-point coordinates, and the block's
// shared-memory counters it is added to. Device code only, included by rdf_gpu_kernels.cu (the layouts and dispatch).
//
// Histograms live in shared memory as 32-bit counters with atomic increments (as in the published GPU RDF scheme this
// library started from), one copy per warp where the bins fit, then go to the device's 64-bit histogram with integer
// atomics.
//
// The plain arithmetic (rdf_shared.hpp's dist2 and pair_bin, as the CPU runs it) needs per pair three int-to-float
// conversions, a float-to-int conversion and a reciprocal square root, all on the 16-lane/SM conversion/SFU pipe;
// that pipe caps it near 740 G pairs/s (one H100, 4e5 atoms). Here the differences become floats through a bit
// pattern and one FMA (rdf_shared.hpp), the bin through a round-down add, which leaves one SFU operation per pair
// inside r_max.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "rdf_backend.hpp"
#include "rdf_gpu.cuh"

namespace qmmm::cuda::rdf_gpu {
namespace {

constexpr uint32_t kFloat23 = 0x4B000000u;  // bit pattern of 2^23

// ---------------------------------------------------------------- the block's counters
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

// ---------------------------------------------------------------- the pair term
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

}  // namespace
}  // namespace qmmm::cuda::rdf_gpu
