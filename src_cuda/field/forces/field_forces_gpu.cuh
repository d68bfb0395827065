// field_forces_gpu.cuh -- the forces' sources on the GPU and the kernels' launches (field_grad_gpu.cu: the gradient at
// points and the backend object; field_site_field_gpu.cu: the field at the sites; field_site_grad_gpu.cu: its
// gradient). The pair terms are field_forces_shared.hpp's, as on the CPU; a target's sum has a fixed order (no
// atomics on values).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/field_shared.hpp"
#include "charges/field_charges_gpu.cuh"  // Quad, inv_sqrt, screened_inv_d
#include "forces/field_forces_shared.hpp"

namespace qmmm::cuda::forces {

constexpr int kBlock = 128;
// Plain sites per slice of the gradient's grid (a multiple of kGradChunk and kBlock): the partial sums of one slice
// are added in slice order, so a point's bits do not depend on the batch.
constexpr int64_t kSlice = 4096;
// Plain sites (and screened charges) per chunk of the gradient: a point's terms over a chunk are summed in T in index
// order and flushed into its double sums; a call of few points takes a block per chunk, so a chunk's length is the
// serial part of such a call. On an H100 (10^5 random cells, 22 points, the whole call): 1,024 sites a chunk DOUBLE
// 68 us, SINGLE 42 us; 512: 50, 34; 256: 41, 31; at 8,192 points (by slices) -1 % to +5 %, within the spread of runs.
constexpr int64_t kGradChunk = 256;
static_assert(kSlice % kGradChunk == 0 && kGradChunk % kBlock == 0, "slices of whole chunks of whole tiles");

// A row of the gradient's row layout as the kernels read it: ForceRow (field_forces_rows.hpp: v, w, sgn, lim) with
// its sites first..end-1 as indices within its tile.
template <class T>
struct GradRow {
    T v, w, sgn, lim;
    int first, end;
};

// The sources as the kernels read them, in T (offsets from origin for float).
template <class T>
struct ForceDev {
    int64_t n_plain = 0, n_self = 0, n_screened = 0;
    int kind = 0;
    T self = 0, bad = 0;  // self: C / h of a density cell; bad: NaN (a plain site without a finite potential)
    double origin[3] = {0, 0, 0};
    const T *x = nullptr, *y = nullptr, *z = nullptr, *c = nullptr;
    const T *sx = nullptr, *sy = nullptr, *sz = nullptr, *sc = nullptr, *sa = nullptr, *sb = nullptr, *cut2 = nullptr;
    // The gradient's row layout, where the plain sites come in rows (lattice cells): axis (0..2) the one a row runs
    // along, -1 without rows; tile t (kBlock sites) has rows[tile_rows[t] .. tile_rows[t + 1]).
    int axis = -1;
    const GradRow<T> *rows = nullptr;
    const int *tile_rows = nullptr;
    // Per chunk of kGradChunk plain sites: the singular test's bound on the chunk's value sum (sign_sum_limit,
    // field_forces_sign.hpp), 0 where the chunk keeps the running max of 1/d.
    const T *sum_lim = nullptr;
};

// A screened site's pair term (field_forces_shared.hpp) at offsets dx dy dz (d2 their squares' sum): g, its 1/d
// (screened_inv_d), and h, with the term's gradient h d: beyond the cut-off -1/d^3, within it the screened form's (0 on
// the charge). The gradient's and the site field's kernels take it.
template <class T>
__device__ __forceinline__ void screened_g_h(int kind, T dx, T dy, T dz, T d2, T a, T b, T cut2, T &g, T &h) {
    g = screened_inv_d<T>(kind, dx, dy, dz, d2, a, b, cut2);
    h = d2 >= cut2 ? -g * g * g : d2 > T(0) ? screened_grad_h<T>(kind, d2, a, b) : T(0);
}

// Where launch_sites puts each site's four values (phi, E): at 4 to_caller_p[k] of dst for plain site k, 4
// to_caller_s[k] for screened site k (the caller's order); the value itself, or with acc_in dst = acc_in + weight x
// value, the product rounded before the sum (the CPU accumulator's bits), so that a call whose values are not all
// finite leaves acc_in as it was. *flag (mapped host memory, cleared by the caller) is set to 1 where a value is not
// finite.
struct SitesOut {
    const int64_t *to_caller_p = nullptr, *to_caller_s = nullptr;
    double *dst = nullptr;
    const double *acc_in = nullptr;
    double weight = 0;
    int *flag = nullptr;
};

// Where the sites' blocks fill the GPU this many times over, a site field launch takes every chunk of points in
// each block (the last, partial wave is then at most a quarter of the launch); below it, each chunk in its own block
// (grid y). On an H100, 1e5 sites (782 blocks) and 8,192 points, accumulating: DOUBLE 1,165 -> 1,072 us, SINGLE 508 ->
// 509 us (the same bits).
constexpr int64_t kSiteSplitWaves = 4;
// The most memory the chunks' partial sums take (launches of fewer chunks beyond it): 10 chunks of 1e5 sites.
constexpr int64_t kSiteSplitBytes = int64_t(32) << 20;

// Blocks of the site field's kernel that the device holds at once (its SMs x the kernel's occupancy).
template <class T>
int64_t sites_wave_blocks();
// Chunks of kFieldChunk points that one launch of launch_sites takes side by side: 1 (every chunk in each block) where
// the points are one chunk or the sites' blocks fill the GPU kSiteSplitWaves times, else as many as kSiteSplitBytes
// of partial sums hold. launch_sites' part then holds (that + 1) x 4 x (n_plain + n_screened) doubles.
int64_t sites_chunks_per_launch(int64_t n_plain, int64_t n_screened, int64_t n, int64_t wave_blocks);

// The field at the sites of n points (pts: x y z w per point, in T and offsets from the origin) into o, in launches of
// per_launch chunks (sites_chunks_per_launch; part: their partial sums, unused at 1). w1: the points' one weight where
// they all have it (the plain sites' terms then leave it out), else NaN. Asynchronous on stream.
template <class T>
void launch_sites(const ForceDev<T> &s, int64_t n, const T *pts, double w1, const SitesOut &o, int64_t per_launch,
                  double *part, cudaStream_t stream);

// The field gradient at the plain sites of n points (as launch_sites): 6 doubles per site (xx xy xz yy yz zz) into
// out; *flag (mapped host memory, cleared by the caller) set to 1 where a value is not finite. cell_on: a density
// cell's term on its centre (0, or NaN where the self term does not apply). Asynchronous on stream
// (field_site_grad_gpu.cu).
template <class T>
void launch_sites_grad(const ForceDev<T> &s, int64_t n, const T *pts, T cell_on, double *out, int *flag,
                       cudaStream_t stream);

}  // namespace qmmm::cuda::forces
