// rdf_shared.hpp -- the one definition of a pair's histogram bin, compiled for the CPU and the GPU alike.
//
// Atoms are 23-bit fixed-point fractional coordinates (v = floor(s * 2^23) mod 2^23, s in [0,1)) plus an
// exclusion key. The wrapped difference of two atoms is the difference modulo 2^23, centred on zero: modular
// arithmetic gives the minimum image in fractional rounding (exact for r < half the smallest perpendicular
// width, see qmmm_accel_rdf.h), with no branch and no error. That difference (|d| <= 2^22) is exactly a
// float, and the cell matrix entries have at most 22 significant bits, so the GPU can form h * d without an
// integer-to-float conversion (a quarter-rate instruction): the bit pattern 0x4B000000 | (d + 2^22) is the
// float 1.5 * 2^23 + d, and fma(h, that, -1.5 * 2^23 * h) equals the correctly rounded h * d (the subtrahend
// is exact). Everything after that is float with each operation correctly rounded in one fixed order, FMAs
// only where written (r^2 = fma(dz, dz, fma(dy, dy, dx * dx)); no other contraction: the CPU files are built
// with -ffp-contract=off, the GPU uses __f*_rn; the CPU counter uses the FMA instruction where the processor
// has one and the exactly rounded library fmaf otherwise), so the CPU and the GPU put every pair in the same
// bin and their integer histograms are equal.
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define RDF_HD __device__ __forceinline__  // nvcc compiles them for the GPU only; g++ for the CPU
#else
#define RDF_HD inline
#endif

namespace qmmm::rdf {

constexpr int kFixBits = 23;
constexpr uint32_t kFixMask = (1u << kFixBits) - 1;
constexpr uint32_t kFixHalf = 1u << (kFixBits - 1);

struct alignas(16) Atom {
    uint32_t x, y, z;  // 23-bit fractional coordinates
    int32_t key;       // exclusion key: pairs with equal keys are not counted
};

// Lower-triangular cell (a along x, b in the xy plane), scaled by 2^-23 so a fixed-point difference times h
// is a length; each h has at most 22 significant bits (1.5 * 2^23 * h is then exact). Bin edges: r_min + k * dr.
struct Geom {
    float hxx, hyx, hyy, hzx, hzy, hzz;  // a = (hxx,0,0), b = (hyx,hyy,0), c = (hzx,hzy,hzz)
    float rmin, rmin2, rmax2, inv_dr;
    int32_t n_bins;
    int32_t triclinic;  // 0: hyx = hzx = hzy = 0 (the same bins either way; only fewer operations)
};

#ifdef __CUDACC__
RDF_HD float rmul(float a, float b) { return __fmul_rn(a, b); }
RDF_HD float radd(float a, float b) { return __fadd_rn(a, b); }
RDF_HD float rsub(float a, float b) { return __fsub_rn(a, b); }
RDF_HD float rsqrt_exact(float a) { return __fsqrt_rn(a); }
RDF_HD float i2f(int32_t a) { return __int2float_rn(a); }
RDF_HD float rfma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
#else
RDF_HD float rmul(float a, float b) { return a * b; }
RDF_HD float radd(float a, float b) { return a + b; }
RDF_HD float rsub(float a, float b) { return a - b; }
RDF_HD float rsqrt_exact(float a) { return __builtin_sqrtf(a); }
RDF_HD float i2f(int32_t a) { return static_cast<float>(a); }
RDF_HD float rfma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }  // exact: fma insn or libm
#endif

// The centred wrapped difference a - b (mod 2^23) in [-2^22, 2^22), as a float (exact).
RDF_HD float fdiff(uint32_t a, uint32_t b) {
    return i2f(static_cast<int32_t>((a - b + kFixHalf) & kFixMask) - static_cast<int32_t>(kFixHalf));
}

// Squared minimum-image distance of two atoms.
template <bool Tri>
RDF_HD float dist2(const Geom &g, uint32_t ax, uint32_t ay, uint32_t az, uint32_t bx, uint32_t by, uint32_t bz) {
    const float sx = fdiff(ax, bx), sy = fdiff(ay, by), sz = fdiff(az, bz);
    float dx, dy, dz;
    if (Tri) {
        dx = radd(radd(rmul(g.hxx, sx), rmul(g.hyx, sy)), rmul(g.hzx, sz));
        dy = radd(rmul(g.hyy, sy), rmul(g.hzy, sz));
    } else {
        dx = rmul(g.hxx, sx);
        dy = rmul(g.hyy, sy);
    }
    dz = rmul(g.hzz, sz);
    return rfma(dz, dz, rfma(dy, dy, rmul(dx, dx)));
}

// Bin of a squared distance, or -1 outside [r_min, r_max). The GPU's fast kernel computes the same integer
// as floor(min(max(x, 0), n_bins - 1)) (rdf_gpu.cu); for x >= 0 truncation is floor.
RDF_HD int bin_of(const Geom &g, float r2) {
    if (!(r2 < g.rmax2) || r2 < g.rmin2) return -1;
    int b = static_cast<int>(rmul(rsub(rsqrt_exact(r2), g.rmin), g.inv_dr));
    b = b < 0 ? 0 : b;
    return b >= g.n_bins ? g.n_bins - 1 : b;
}

}  // namespace qmmm::rdf
