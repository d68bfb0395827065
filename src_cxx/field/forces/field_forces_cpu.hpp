// field_forces_cpu.hpp -- the CPU kernels of the forces (field_grad_cpu.cpp: the gradient at points;
// field_site_field_cpu.cpp: the field at the sites; field_site_grad_cpu.cpp: its gradient), on the sources in the
// working type T (double for DOUBLE and MIXED, float for SINGLE: offsets from the centre of the sites' box, as the
// value path's local origin).
#pragma once
#include <cstdint>
#include <vector>

#include "forces/field_forces_rows.hpp"

namespace qmmm {

template <class T>
struct ForceSourcesCpu {
    static constexpr T kPre = sizeof(T) == 4 ? T(0.125) : T(1);
    int64_t n_plain = 0, n_self = 0, n_screened = 0;
    int kind = 0;
    // c: the plain sites' charges times kPre, and the loops' points carry their weights times kPre (float: 1/8, the
    // scale the AVX-512 pair term takes, so that it spends no multiply on it; a power of two: exact)
    std::vector<T> x, y, z, c, sx, sy, sz, sc, sa, sb, cut2;
    T self_inv_r = 0;
    double origin[3] = {0, 0, 0};  // subtracted from every point (in double) before it is rounded to T
    int n_threads = 0;
    // The gradient's row layout for the AVX-512 loops where the plain sites come in rows (lattice cells), in groups of
    // kFieldChunk sites; axis -1 without.
    ForceRows<T> rows;
    // The AVX-512 gradient's singular test per chunk of kFieldChunk plain sites, for its density cells ([2c]) and its
    // other sites ([2c + 1]) apart: avx512_forces::grad_sign_limit (0: the running minimum). Empty without AVX-512.
    std::vector<T> sign_lim;
};

// Each point's U and dU/dr: u[i], g[3i..3i+2]. Returns true when every output is finite.
template <class T>
bool force_grad_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, double *u, double *g);

// in + weight * v with the product rounded on its own: the empty asm hides it from the compiler, which would otherwise
// contract the multiply and the add into one fused multiply-add (other bits than the caller adding weight times the
// plain call's values). The AVX-512 loops' form: avx512_forces::product.
inline double add_weighted(double in, double weight, double v) {
    double p = weight * v;
    __asm__("" : "+x"(p));
    return in + p;
}

// The site accumulator's running sums in the kernels' order (the plain sites, then the screened ones at n_plain), one
// array each for phi, Ex, Ey, Ez: a call reads in and writes out[q][k] = add_weighted(in[q][k], weight, value). out is
// other storage than in (the accumulator's spare copy), so a call that fails leaves the sums in `in` as they were.
struct SiteAccum {
    const double *in[4];
    double *out[4];
    double weight;
};

// Each site's potential and field from n points with weights w: plain sites into phi_p[k], e_p[3k..], screened ones
// into phi_s[k], e_s[3k..]; with acc, into the accumulator's arrays instead (the outputs are not written). Returns
// true when every value is finite.
template <class T>
bool force_sites_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, const double *w, double *phi_p,
                     double *e_p, double *phi_s, double *e_s, const SiteAccum *acc = nullptr);

// Each plain site's field gradient from n points with weights w: egrad[6k..6k+5] (xx xy xz yy yz zz), k in the plain
// sites' order (field_site_grad_cpu.cpp). With acc_in (the accumulator's gradient sums, other storage than egrad):
// egrad = add_weighted(acc_in, weight, value), as SiteAccum. Returns true when every value
// is finite.
template <class T>
bool force_sites_grad_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, const double *w, double *egrad,
                          const double *acc_in = nullptr, double weight = 0.0);

}  // namespace qmmm
