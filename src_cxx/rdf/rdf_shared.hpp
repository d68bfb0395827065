// rdf_shared.hpp -- the one definition of a pair's histogram bin, compiled for the CPU and the GPU alike.
//
// Atoms are fixed-point fractional coordinates plus an exclusion key. Each coordinate word holds the 32-bit
// fraction f = round(s * 2^32) of s in [0, 1) as its nearest 23-bit value v = round(f / 2^9) mod 2^23 in the low
// bits and the signed rest f - 2^9 v (9 bits, two's complement) in the high bits (fix32 reassembles f).
//
// The fast path (every pair) uses v only. The wrapped difference of two atoms is the difference modulo 2^23,
// centred on zero: modular arithmetic gives the minimum image in fractional rounding (exact for r < half the
// smallest perpendicular width, see qmmm_accel_rdf.h), with no branch and no error. That difference
// (|d| <= 2^22) is exactly a float, and the cell matrix entries have at most 22 significant bits, so the GPU can
// form h * d without an integer-to-float conversion (a quarter-rate instruction): the bit pattern
// 0x4B000000 | (d + 2^22) is the float 1.5 * 2^23 + d, and fma(h, that, -1.5 * 2^23 * h) equals the correctly
// rounded h * d (the subtrahend is exact). Everything after that is float with each operation correctly rounded
// in one fixed order, FMAs only where written (r^2 = fma(dz, dz, fma(dy, dy, dx * dx)); no other contraction:
// the CPU files are built with -ffp-contract=off, the GPU uses __f*_rn; the CPU counter uses the FMA
// instruction where the processor has one and the exactly rounded library fmaf otherwise).
//
// The bin is decided as exact arithmetic decides it: GRO files store 0.001 nm, so many pair
// distances lie exactly on 0.02 A bin edges, where a float distance falls on either side at random. The float
// r^2 of a pair differs from the double-precision r^2 of the same atoms (exact_bin: the 32-bit fractions, the
// unrounded cell) by less than Geom::guard (make_geom derives the bound from the cell, r_max and every rounding
// on the way). A pair whose float r^2 is farther than guard from both edges of its bin is in that bin; any
// other pair (about 2 * guard / (2 r dr) of them) is decided by exact_bin, in double, where a distance within
// Geom::tol of an edge (4e-8 to 2e-7 A for 20-200 A boxes: the 32-bit fractions' own rounding) counts as on it,
// so it goes to the upper bin as r = edge does in exact arithmetic. The CPU and the GPU run this same code, so
// they put every pair in the same bin and their integer histograms are equal.
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
    uint32_t x, y, z;  // fractional coordinates: 23-bit value (low bits) and the 9-bit signed rest (high bits)
    int32_t key;       // exclusion key: pairs with equal keys are not counted
};

// Lower-triangular cell (a along x, b in the xy plane), scaled by 2^-23 so a fixed-point difference times h
// is a length; each h has at most 22 significant bits (1.5 * 2^23 * h is then exact). Bin edges: r_min + k * dr.
// Pairs closer than r_low = max(r_min, cut) are not counted.
struct Geom {
    float hxx, hyx, hyy, hzx, hzy, hzz;  // a = (hxx,0,0), b = (hyx,hyy,0), c = (hzx,hzy,hzz)
    float rmin, rmin2, rmax2, inv_dr;    // rmin2 = r_low^2, rmax2 = r_max^2 (float, nearest)
    float dr;                            // bin width (float, nearest)
    float lo2, hi2;                      // float r^2 outside [lo2, hi2) is certainly not counted
    float guard;                         // bound on |float r^2 - exact_bin's r^2| plus the edges' rounding
    int32_t n_bins;
    int32_t triclinic;  // 0: hyx = hzx = hzy = 0 (the same bins either way; only fewer operations)
    // exact_bin: the cell in double scaled by 2^-32 (a 32-bit fraction difference times h is a length), the
    // bins in double and the tie tolerance (Angstrom, or the caller's length unit)
    double dhxx, dhyx, dhyy, dhzx, dhzy, dhzz;
    double drmin, drlow, drmax, dinv_dr, tol;
};

#ifdef __CUDACC__
RDF_HD float rmul(float a, float b) { return __fmul_rn(a, b); }
RDF_HD float radd(float a, float b) { return __fadd_rn(a, b); }
RDF_HD float rsub(float a, float b) { return __fsub_rn(a, b); }
RDF_HD float rsqrt_exact(float a) { return __fsqrt_rn(a); }
RDF_HD float i2f(int32_t a) { return __int2float_rn(a); }
RDF_HD float rfma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
RDF_HD double dmul(double a, double b) { return __dmul_rn(a, b); }
RDF_HD double dadd(double a, double b) { return __dadd_rn(a, b); }
RDF_HD double dsub(double a, double b) { return __dsub_rn(a, b); }
RDF_HD double dsqrt(double a) { return __dsqrt_rn(a); }
#else
RDF_HD float rmul(float a, float b) { return a * b; }
RDF_HD float radd(float a, float b) { return a + b; }
RDF_HD float rsub(float a, float b) { return a - b; }
RDF_HD float rsqrt_exact(float a) { return __builtin_sqrtf(a); }
RDF_HD float i2f(int32_t a) { return static_cast<float>(a); }
RDF_HD float rfma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }  // exact: fma insn or libm
RDF_HD double dmul(double a, double b) { return a * b; }
RDF_HD double dadd(double a, double b) { return a + b; }
RDF_HD double dsub(double a, double b) { return a - b; }
RDF_HD double dsqrt(double a) { return __builtin_sqrt(a); }
#endif

// The 32-bit fraction of a coordinate word: (23-bit value << 9) + the signed 9-bit rest, modulo 2^32.
RDF_HD uint32_t fix32(uint32_t u) {
    return ((u & kFixMask) << 9) + static_cast<uint32_t>(static_cast<int32_t>(u) >> kFixBits);
}
// A coordinate word from a 32-bit fraction (the inverse of fix32).
RDF_HD uint32_t pack32(uint32_t f) {
    const uint32_t v = static_cast<uint32_t>((uint64_t{f} + 256u) >> 9);  // nearest 23-bit value, up to 2^23
    const int32_t rest = static_cast<int32_t>(f - (v << 9));  // in [-256, 255] (modulo 2^32: v = 2^23 is 0)
    return (v & kFixMask) | (static_cast<uint32_t>(rest) << kFixBits);
}

// The cell of an atom in an nc[0] x nc[1] x nc[2] grid over the box (x fastest), from its 23-bit values. The one
// definition for the host's counting sort and the GPU's radix sort (rdf_gpu.cu), so both lists are the same.
RDF_HD int32_t cell_of(const Atom &a, const int32_t nc0, const int32_t nc1, const int32_t nc2) {
    const auto c = [](uint32_t u, int32_t n) {
        return static_cast<int32_t>((static_cast<uint64_t>(u & kFixMask) * static_cast<uint64_t>(n)) >> kFixBits);
    };
    return c(a.x, nc0) + nc0 * (c(a.y, nc1) + nc1 * c(a.z, nc2));
}

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

// The bin of a pair as exact arithmetic decides it, or -1 (not counted): the distance in double from the
// 32-bit fractions (minimum image by the centred 32-bit difference) and the unrounded cell; a distance within
// tol of an edge counts as on it (r_low <= r < r_max, bin k for edge_k <= r < edge_k+1).
RDF_HD int exact_bin(const Geom &g, const Atom &a, const Atom &b) {
    const double sx = static_cast<double>(static_cast<int32_t>(fix32(a.x) - fix32(b.x)));
    const double sy = static_cast<double>(static_cast<int32_t>(fix32(a.y) - fix32(b.y)));
    const double sz = static_cast<double>(static_cast<int32_t>(fix32(a.z) - fix32(b.z)));
    const double dx = dadd(dadd(dmul(g.dhxx, sx), dmul(g.dhyx, sy)), dmul(g.dhzx, sz));
    const double dy = dadd(dmul(g.dhyy, sy), dmul(g.dhzy, sz));
    const double dz = dmul(g.dhzz, sz);
    const double r = dadd(dsqrt(dadd(dadd(dmul(dx, dx), dmul(dy, dy)), dmul(dz, dz))), g.tol);
    if (!(r >= g.drlow) || !(r < g.drmax)) return -1;
    int k = static_cast<int>(dmul(dsub(r, g.drmin), g.dinv_dr));
    k = k < 0 ? 0 : k;
    return k >= g.n_bins ? g.n_bins - 1 : k;
}

// Whether a float r^2 in the candidate bin [lo, hi) (its edges squared, float) is certainly in it.
RDF_HD bool certain(const Geom &g, float r2, float lo, float hi) {
    return rsub(r2, lo) >= g.guard && rsub(hi, r2) > g.guard;
}

// The bin of a pair from its float r^2 (dist2): the float candidate where it is certain, else exact_bin.
// The GPU's fast kernels find the candidate without the square root where they can (rdf_gpu.cu) and end the
// same way.
RDF_HD int pair_bin(const Geom &g, float r2, const Atom &a, const Atom &b) {
    if (!(r2 < g.hi2) || r2 < g.lo2) return -1;
    // Clamped as a float: a candidate beyond int's range (r - rmin huge against dr) is undefined as an int.
    const float kf = rmul(rsub(rsqrt_exact(r2), g.rmin), g.inv_dr);
    const int k = !(kf >= 0.0f) ? 0 : (kf >= static_cast<float>(g.n_bins) ? g.n_bins - 1 : static_cast<int>(kf));
    const float e0 = radd(g.rmin, rmul(static_cast<float>(k), g.dr));
    const float e1 = radd(g.rmin, rmul(static_cast<float>(k + 1), g.dr));
    const float sq0 = rmul(e0, e0);
    return certain(g, r2, sq0 > g.rmin2 ? sq0 : g.rmin2, rmul(e1, e1)) ? k : exact_bin(g, a, b);
}

}  // namespace qmmm::rdf
