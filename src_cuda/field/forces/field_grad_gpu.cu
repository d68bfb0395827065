// field_grad_gpu.cu -- the gradient dU/dr at points on the GPU, and the forces' GPU backend (ForcesGpu): sources,
// buffers, the accumulator's sums (and its field gradient's) on
// the device (the CPU twin: src_cxx/field/forces/field_grad_cpu.cpp).
//
// Gradient: a point's terms are summed in T over each chunk of kGradChunk sites in index order and flushed into double;
// the chunks add up in order within each slice of kSlice plain sites, the slices in order, then the screened charges'
// chunks in order. Two grids give those sums. By slices (a batch that fills the GPU): (point blocks) x (slices), a
// thread takes two (DOUBLE) or three (SINGLE) points, one on the row layout, the sites through shared memory in tiles,
// and its slice's partial goes to part[slice][point]. By chunks (a call of few points, such as a QMC step's): (point
// blocks) x (chunks), a point a thread, a chunk's partial to part[chunk][point]. The screened charges take a grid of
// (point blocks) x (their chunks). A last kernel adds a point's partials in that order (by chunks, a block a point, the
// partials loaded side by side). No atomics on values (one integer flag in mapped host memory says a value was not
// finite; the values go to mapped host memory too); a point's bits depend on neither the batch nor the grid.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "core_gpu.cuh"
#include "forces/field_forces_gpu.cuh"
#include "forces/field_forces_shared.hpp"
#include "forces/field_forces.hpp"
#include "forces/field_forces_rows.hpp"
#include "forces/field_forces_sign.hpp"

namespace qmmm::cuda::forces {
namespace {

// Points per launch round at most, and the most memory their partial sums by slices take (rounds of fewer points
// beyond it); by chunks (16 times as many partials) at most kChunkPartBytes, else by slices.
constexpr int64_t kRound = 65536;
constexpr int64_t kPartBytes = int64_t(512) << 20;
constexpr int64_t kChunkPartBytes = int64_t(128) << 20;
constexpr int64_t kMaxGridY = 65535;  // a launch's grid y at most (the plain sites by chunks take one launch)
// The row layout is taken where rows average at least this many sites: a row costs a head's load and three
// products per point besides its pairs.
constexpr int64_t kMinRow = 8;

// A site of a row tile in shared memory: its coordinate along the row and its charge (one load).
template <class T>
struct alignas(2 * sizeof(T)) Pair2 {
    T x, y;
};

// The sites [t0, min(e, t0 + kBlock)) into sh, the block's threads a site each (after every thread is done with the
// previous tile); returns how many.
template <class T>
__device__ __forceinline__ int load_tile(const ForceDev<T> &s, int64_t t0, int64_t e, Quad<T> *sh) {
    __syncthreads();
    const int64_t k = t0 + threadIdx.x;
    if (k < e) sh[threadIdx.x] = Quad<T>{s.x[k], s.y[k], s.z[k], s.c[k]};
    __syncthreads();
    return static_cast<int>(e - t0 < kBlock ? e - t0 : kBlock);
}

// A pair of the careful form (site q, index k): a site within the singular radius gives its on-value for 1/d
// (self_inv_r of a density cell, NaN otherwise) and no gradient; beyond it, the fast forms' terms.
template <class T>
__device__ __forceinline__ void careful_pair(const ForceDev<T> &s, const Quad<T> &q, int64_t k, T px, T py, T pz, T &au,
                                             T &ax, T &ay, T &az) {
    const T dx = px - q.x, dy = py - q.y, dz = pz - q.z;
    const T d2 = dx * dx + dy * dy + dz * dz;
    const T ck = q.w;
    const bool on = d2 < T(kSingularRadius2);
    const T inv = on ? T(0) : inv_sqrt(d2);
    au += ck * (on ? (k < s.n_self ? s.self : s.bad) : inv);
    const T g = (ck * inv) * (inv * inv);
    ax -= g * dx, ay -= g * dy, az -= g * dz;
}

// One point's sums over the plain sites [b, e) (b a multiple of kGradChunk) in the careful form, the block's threads
// loading the tiles together; flushed into acc every kGradChunk sites.
template <class T>
__device__ __forceinline__ void slice_sum_careful(const ForceDev<T> &s, int64_t b, int64_t e, T px, T py, T pz,
                                                  Quad<T> *sh, double *acc) {
    T au = 0, ax = 0, ay = 0, az = 0;
    for (int64_t t0 = b; t0 < e; t0 += kBlock) {
        const int cnt = load_tile(s, t0, e, sh);
#pragma unroll 4
        for (int j = 0; j < cnt; ++j) careful_pair(s, sh[j], t0 + j, px, py, pz, au, ax, ay, az);
        if ((t0 + kBlock - b) % kGradChunk == 0 || t0 + kBlock >= e) {
            acc[0] += au, acc[1] += ax, acc[2] += ay, acc[3] += az;
            au = ax = ay = az = 0;
        }
    }
}

// slice_sum_careful by one thread alone, the sites read from global memory: the same terms and flushes, so the same
// bits.
template <class T>
__device__ void range_sum_careful(const ForceDev<T> &s, int64_t b, int64_t e, T px, T py, T pz, double *acc) {
    T au = 0, ax = 0, ay = 0, az = 0;
    for (int64_t k = b; k < e; ++k) {
        careful_pair(s, Quad<T>{s.x[k], s.y[k], s.z[k], s.c[k]}, k, px, py, pz, au, ax, ay, az);
        if ((k + 1 - b) % kGradChunk == 0 || k + 1 == e) {
            acc[0] += au, acc[1] += ax, acc[2] += ay, acc[3] += az;
            au = ax = ay = az = 0;
        }
    }
}

// The bits of a positive value as an int: ordered as the values (the high word for double), so a running integer max
// keeps the largest 1/d without a floating-point compare (which takes the FP64 pipe in DOUBLE and an issue slot
// beside the FP32 work in SINGLE). +inf (d^2 = 0) and NaN give the largest words.
__device__ __forceinline__ int order_word(float v) { return __float_as_int(v); }
__device__ __forceinline__ int order_word(double v) { return __double2hiint(v); }
// 1/d at the singular radius, less 1e-3 for the hardware seed's error (SINGLE 2^-22.9): a point whose largest 1/d
// reaches it may have a site within the radius and takes the careful form (which beyond the radius gives the
// same sums).
template <class T>
__device__ __forceinline__ int near_word() {
    return order_word(static_cast<T>(0.999 / kSingularRadius));
}

// A tile's pairs (sites sh[0, cnt)) for kP points: each site's shared-memory load serves kP points, and every point
// keeps its own sums in the order of kP = 1. A pair: d^2, 1/d, t = c/d, c/d^3 as t (1/d)^2, and its three products
// (DOUBLE 18 FP64 operations, SINGLE 13 FP32). kMax: top[m] also keeps the largest 1/d's order_word (on the integer
// pipe, but an issue slot a pair: 14 against 13 in SINGLE).
template <class T, int kP, bool kMax>
__device__ __forceinline__ void tile_terms(const Quad<T> *sh, int cnt, const T (&p)[kP][3], T (&au)[kP], T (&ax)[kP],
                                           T (&ay)[kP], T (&az)[kP], int (&top)[kP]) {
    // One point a thread (a call of few points: each thread's chunk is its serial path) needs more pairs in flight. On an
    // H100, 10^5 cells, 22 points, DOUBLE (chunks of 1,024): unroll 2 / 4 / 8 / 16 took 100 / 82 / 92 / 95 us a call.
    constexpr int kUnroll = kP == 1 ? 4 : 2;
#pragma unroll kUnroll
    for (int j = 0; j < cnt; ++j) {
        const Quad<T> q = sh[j];
#pragma unroll
        for (int m = 0; m < kP; ++m) {
            const T dx = p[m][0] - q.x, dy = p[m][1] - q.y, dz = p[m][2] - q.z;
            const T d2 = dx * dx + dy * dy + dz * dz;
            const T inv = inv_sqrt(d2), t = q.w * inv, g = t * (inv * inv);
            au[m] += t, ax[m] -= g * dx, ay[m] -= g * dy, az[m] -= g * dz;
            if (kMax) top[m] = max(top[m], order_word(inv));
        }
    }
}

// The fast form of slice_sum_careful for kP points a thread (point m is p[m]). top[m] ends at or above near_word where
// a site may be within the singular radius of point m: in a chunk whose charges allow it (s.sum_lim nonzero: one sign,
// none zero, within 2^20), the chunk's value sum tells (field_forces_sign.hpp) and no pair keeps a max; elsewhere the
// largest 1/d's order_word. The branch is the block's (every thread has the same tile).
template <class T, int kP>
__device__ __forceinline__ void slice_sum_fast(const ForceDev<T> &s, int64_t b, int64_t e, const T (&p)[kP][3],
                                               Quad<T> *sh, double (&acc)[kP][4], int (&top)[kP]) {
    T au[kP], ax[kP], ay[kP], az[kP];
    for (int k = 0; k < kP; ++k) au[k] = ax[k] = ay[k] = az[k] = 0;
    for (int64_t t0 = b; t0 < e; t0 += kBlock) {
        const int cnt = load_tile(s, t0, e, sh);
        const T lim = s.sum_lim[t0 / kGradChunk];
        if (lim != T(0)) tile_terms<T, kP, false>(sh, cnt, p, au, ax, ay, az, top);
        else tile_terms<T, kP, true>(sh, cnt, p, au, ax, ay, az, top);
        if ((t0 + kBlock - b) % kGradChunk == 0 || t0 + kBlock >= e) {
            const T sgn = lim > T(0) ? T(1) : T(-1);
            for (int m = 0; m < kP; ++m) {
                if (lim != T(0) && !(au[m] * sgn < lim * sgn)) top[m] = INT_MAX;  // an infinite sum too (1/0)
                acc[m][0] += au[m], acc[m][1] += ax[m], acc[m][2] += ay[m], acc[m][3] += az[m];
                au[m] = ax[m] = ay[m] = az[m] = 0;
            }
        }
    }
}

// Points a thread of grad_plain_kernel takes, sharing each site's shared-memory load. Measured on an H100 (268,782
// random cells, 8,192 points, kernel alone): DOUBLE 2,991 / 2,846 / 2,942 / 2,904 us at 1 / 2 / 3 / 4 points, SINGLE
// 1,399 / 1,358 / 1,273 / 1,286 us.
template <class T>
constexpr int kGradPoints = sizeof(T) == 4 ? 3 : 2;

// part[y][i] = point i's sums over the plain sites [y span, (y + 1) span), y = blockIdx.y; a thread takes points
// i, i + kBlock, ... of its block's kP x kBlock. By slices (span kSlice, near_out NULL): a point whose sums or largest
// 1/d say a site may be within the singular radius takes the slice again in the careful form, so its bits are those of
// its own form, whatever shares its block. By chunks (span kGradChunk): near_out[y][i] says so instead, and
// grad_finish_kernel takes that point's slice in the careful form.
template <class T, int kP>
__global__ void __launch_bounds__(kBlock) grad_plain_kernel(ForceDev<T> s, int64_t n, const double *__restrict__ xyz,
                                                            int64_t span, double *__restrict__ part,
                                                            unsigned char *__restrict__ near_out) {
    __shared__ Quad<T> sh[kBlock];
    const int64_t i0 = blockIdx.x * static_cast<int64_t>(kP * kBlock) + threadIdx.x;
    const int64_t slice = blockIdx.y, b = slice * span, e = b + span < s.n_plain ? b + span : s.n_plain;
    T p[kP][3];
    double acc[kP][4];
    int top[kP];
    for (int m = 0; m < kP; ++m) {
        const int64_t i = i0 + m * kBlock;
        for (int c = 0; c < 3; ++c) p[m][c] = i < n ? static_cast<T>(xyz[3 * i + c] - s.origin[c]) : T(0);
        for (int c = 0; c < 4; ++c) acc[m][c] = 0;
        top[m] = 0;
    }
    slice_sum_fast<T, kP>(s, b, e, p, sh, acc, top);
    for (int m = 0; m < kP; ++m) {
        const int64_t i = i0 + m * kBlock;
        const bool near = i < n && top[m] >= near_word<T>();
        if (near_out) {
            if (i < n) near_out[slice * n + i] = near;
        } else if (__syncthreads_or(near)) {
            double careful[4] = {0, 0, 0, 0};
            slice_sum_careful<T>(s, b, e, p[m][0], p[m][1], p[m][2], sh, careful);
            if (near)
                for (int c = 0; c < 4; ++c) acc[m][c] = careful[c];
        }
        if (i < n)
            for (int c = 0; c < 4; ++c) part[(slice * n + i) * 4 + c] = acc[m][c];
    }
}

// The fast sum of grad_plain_kernel on the row layout (lattice cells): per row, the point's offsets across the row
// (dv, dw) and their squares' sum once; per pair, du, d^2 from one fused multiply-add, 1/d, the term, and the
// gradient along the row; across it, dv and dw times the row's sum of q/d^3, which also tells whether a site of the
// row may be within the singular radius (GradRow::lim), so no pair keeps a smallest distance. SINGLE: 8 FP32
// instructions and the MUFU.RSQ a pair against 13 in slice_sum_fast; DOUBLE: 13 FP64 against 18. acc: U, then dU/dr in
// x y z; *near set where the careful form must take over.
template <class T>
__device__ __forceinline__ void row_slice_sum(const ForceDev<T> &s, int64_t b, int64_t e, const T (&p)[3],
                                              GradRow<T> *shr, Pair2<T> *shc, double *acc, bool *near) {
    const int a = s.axis, av = a == 2 ? 0 : a + 1, aw = a == 0 ? 2 : a - 1;
    const T pu = p[a], pv = p[av], pw = p[aw];
    const T *u = a == 0 ? s.x : a == 1 ? s.y : s.z;
    T au = 0, gu = 0, gv = 0, gw = 0;
    bool flag = false;
    for (int64_t t0 = b; t0 < e; t0 += kBlock) {
        const int64_t tile = t0 / kBlock;
        const int r0 = s.tile_rows[tile], nr = s.tile_rows[tile + 1] - r0;
        __syncthreads();
        const int64_t k = t0 + threadIdx.x;
        if (k < e) shc[threadIdx.x] = Pair2<T>{u[k], s.c[k]};
        for (int j = threadIdx.x; j < nr; j += kBlock) shr[j] = s.rows[r0 + j];
        __syncthreads();
        for (int r = 0; r < nr; ++r) {
            const GradRow<T> h = shr[r];
            const T dv = pv - h.v, dw = pw - h.w, sq = dv * dv + dw * dw;
            T gs = 0;
#pragma unroll 4
            for (int j = h.first; j < h.end; ++j) {
                const Pair2<T> q = shc[j];
                const T du = pu - q.x, d2 = du * du + sq;
                const T inv = inv_sqrt(d2), t = q.y * inv, g = t * (inv * inv);
                au += t, gu += g * du, gs += g;
            }
            gv += gs * dv, gw += gs * dw;
            flag |= !(gs * h.sgn < h.lim);
        }
        if ((t0 + kBlock - b) % kGradChunk == 0 || t0 + kBlock >= e) {
            acc[0] += au, acc[1 + a] -= gu, acc[1 + av] -= gv, acc[1 + aw] -= gw;
            au = gu = gv = gw = 0;
        }
    }
    *near = flag;
}

// grad_plain_kernel on the row layout, by slices or chunks (span, near_out) as it: the same partials to rounding, the
// same careful form where a row's sum says a site may be within the singular radius (slice_sum_careful's, which that
// point takes whatever shares its block; beyond the radius it is the fast form's sum in another order).
template <class T>
__global__ void __launch_bounds__(kBlock) grad_rows_kernel(ForceDev<T> s, int64_t n, const double *__restrict__ xyz,
                                                           int64_t span, double *__restrict__ part,
                                                           unsigned char *__restrict__ near_out) {
    __shared__ Quad<T> sh[kBlock];
    __shared__ Pair2<T> shc[kBlock];
    __shared__ GradRow<T> shr[kBlock];
    const int64_t i = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x;
    const int64_t slice = blockIdx.y, b = slice * span, e = b + span < s.n_plain ? b + span : s.n_plain;
    T p[3] = {0, 0, 0};
    if (i < n)
        for (int c = 0; c < 3; ++c) p[c] = static_cast<T>(xyz[3 * i + c] - s.origin[c]);
    double acc[4] = {0, 0, 0, 0};
    bool flag = false;
    row_slice_sum<T>(s, b, e, p, shr, shc, acc, &flag);
    const bool near = i < n && flag;
    if (near_out) {
        if (i < n) near_out[slice * n + i] = near;
    } else if (__syncthreads_or(near)) {
        double careful[4] = {0, 0, 0, 0};
        slice_sum_careful<T>(s, b, e, p[0], p[1], p[2], sh, careful);
        if (near)
            for (int j = 0; j < 4; ++j) acc[j] = careful[j];
    }
    if (i < n)
        for (int j = 0; j < 4; ++j) part[(slice * n + i) * 4 + j] = acc[j];
}

// One screened charge's terms at a point (offsets dx dy dz, charge c, kernel a b, cut2: beyond it 1/d): U += c g,
// dU/dr += c h d (field_forces_shared.hpp).
template <class T>
__device__ __forceinline__ void screened_pair(int kind, T dx, T dy, T dz, T c, T a, T b, T cut2, T &v, T &gx, T &gy,
                                              T &gz) {
    T gv, h;
    screened_g_h<T>(kind, dx, dy, dz, dx * dx + dy * dy + dz * dz, a, b, cut2, gv, h);
    v += c * gv;
    const T ch = c * h;
    gx += ch * dx, gy += ch * dy, gz += ch * dz;
}

// part[y][i] = point i's sums over the screened charges [y kGradChunk, (y + 1) kGradChunk) (y = y0 + blockIdx.y), in
// index order in T; a thread a point, the charges through shared memory (two Quads a charge: x y z c, a b cut2).
template <class T>
__global__ void __launch_bounds__(kBlock) grad_screened_kernel(ForceDev<T> s, int64_t n, const double *__restrict__ xyz,
                                                               int64_t y0, double *__restrict__ part) {
    __shared__ Quad<T> sh[2 * kBlock];
    const int64_t i = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x, y = y0 + blockIdx.y;
    const int64_t b = y * kGradChunk, e = b + kGradChunk < s.n_screened ? b + kGradChunk : s.n_screened;
    T p[3] = {0, 0, 0};
    if (i < n)
        for (int c = 0; c < 3; ++c) p[c] = static_cast<T>(xyz[3 * i + c] - s.origin[c]);
    T v = 0, gx = 0, gy = 0, gz = 0;
    for (int64_t t0 = b; t0 < e; t0 += kBlock) {
        load_screened_tile<T>(s.sx, s.sy, s.sz, s.sc, s.sa, s.sb, s.cut2, t0, e, sh);
        const int cnt = static_cast<int>(e - t0 < kBlock ? e - t0 : kBlock);
        for (int j = 0; j < cnt; ++j) {
            const Quad<T> q = sh[2 * j], r = sh[2 * j + 1];
            screened_pair<T>(s.kind, p[0] - q.x, p[1] - q.y, p[2] - q.z, q.w, r.x, r.y, r.z, v, gx, gy, gz);
        }
    }
    if (i < n) {
        double *o = part + (y * n + i) * 4;
        o[0] = v, o[1] = gx, o[2] = gy, o[3] = gz;
    }
}

// Point i's sum over the slice of partials [p0, p1) of part (parts of the plain sites, kGradChunk or kSlice each):
// added from 0 in order (a slice's chunks, as the slice kernel's flushes), or, where near (by chunks, else NULL) marks
// one of them, the slice in the careful form, as the slice kernel takes it.
template <class T>
__device__ __forceinline__ void slice_total(const ForceDev<T> &s, int64_t n, int64_t i, int64_t p0, int64_t p1,
                                            const unsigned char *__restrict__ near, const double *__restrict__ xyz,
                                            const double *__restrict__ part, double (&sl)[4]) {
    bool careful = false;
    if (near)
        for (int64_t c = p0; c < p1; ++c) careful |= near[c * n + i] != 0;
    for (int j = 0; j < 4; ++j) sl[j] = 0;
    if (careful) {
        T p[3];
        for (int c = 0; c < 3; ++c) p[c] = static_cast<T>(xyz[3 * i + c] - s.origin[c]);
        const int64_t e = p1 * kGradChunk < s.n_plain ? p1 * kGradChunk : s.n_plain;
        range_sum_careful<T>(s, p0 * kGradChunk, e, p[0], p[1], p[2], sl);
    } else {
        for (int64_t c = p0; c < p1; c += 4) {  // four chunks' loads ahead of their additions, which keep their order
            double v[4][4];
#pragma unroll
            for (int q = 0; q < 4; ++q)
                for (int j = 0; j < 4; ++j) v[q][j] = c + q < p1 ? part[((c + q) * n + i) * 4 + j] : 0.0;
#pragma unroll
            for (int q = 0; q < 4; ++q)
                if (c + q < p1)
                    for (int j = 0; j < 4; ++j) sl[j] += v[q][j];
        }
    }
}

// Point i's sums a to out[4i..]; *flag (mapped host memory, cleared by the caller) set to 1 when a value is not finite.
__device__ __forceinline__ void finish_point(int64_t i, const double (&a)[4], double *__restrict__ out, int *flag) {
    bool ok = true;
    for (int j = 0; j < 4; ++j) out[4 * i + j] = a[j], ok &= isfinite(a[j]);
    if (!ok) *flag = 1;  // every writer stores the same value: no atomic needed
}

// Term k of point i's sum: the plain sites' slice k (slice_total: parts of kGradChunk sites by chunks, near their
// flags, else of kSlice), or for k >= slices the screened charges' chunk k - slices (part_s).
template <class T>
__device__ __forceinline__ void term(const ForceDev<T> &s, int64_t n, int64_t i, int64_t k, int64_t slices,
                                     int64_t parts, const unsigned char *__restrict__ near,
                                     const double *__restrict__ xyz, const double *__restrict__ part,
                                     const double *__restrict__ part_s, double (&t)[4]) {
    if (k >= slices) {
        for (int j = 0; j < 4; ++j) t[j] = part_s[((k - slices) * n + i) * 4 + j];
        return;
    }
    const int64_t g = near ? kSlice / kGradChunk : 1, p1 = (k + 1) * g < parts ? (k + 1) * g : parts;
    slice_total<T>(s, n, i, k * g, p1, near, xyz, part, t);
}

// out[4i..]: point i's terms added from 0 in order, the plain sites' slices, then the screened charges' chunks (a
// thread a point).
template <class T>
__global__ void grad_finish_kernel(ForceDev<T> s, int64_t n, int64_t slices, int64_t s_chunks,
                                   const double *__restrict__ xyz, const double *__restrict__ part,
                                   const double *__restrict__ part_s, double *__restrict__ out, int *flag) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    double a[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < slices + s_chunks; ++k) {
        double t[4];
        term<T>(s, n, i, k, slices, slices, nullptr, xyz, part, part_s, t);
        for (int j = 0; j < 4; ++j) a[j] += t[j];  // a slice: a += 0 + part, a's bits (a is never -0)
    }
    finish_point(i, a, out, flag);
}

// grad_finish_kernel by chunks of plain sites (part: a partial a chunk; near: their flags), a block a point: thread t
// takes terms t, t + kBlock, ..., thread 0 adds them in order. The same additions, so the same bits; a few points' many
// partials load side by side.
template <class T>
__global__ void __launch_bounds__(kBlock) grad_finish_chunks_kernel(ForceDev<T> s, int64_t n, int64_t chunks,
                                                                    int64_t s_chunks,
                                                                    const unsigned char *__restrict__ near,
                                                                    const double *__restrict__ xyz,
                                                                    const double *__restrict__ part,
                                                                    const double *__restrict__ part_s,
                                                                    double *__restrict__ out, int *flag) {
    __shared__ double sums[kBlock][4];
    const int64_t i = blockIdx.x;
    const int64_t slices = (chunks + kSlice / kGradChunk - 1) / (kSlice / kGradChunk), terms = slices + s_chunks;
    double a[4] = {0, 0, 0, 0};
    for (int64_t b = 0; b < terms; b += kBlock) {
        double t[4] = {0, 0, 0, 0};
        if (b + threadIdx.x < terms) term<T>(s, n, i, b + threadIdx.x, slices, chunks, near, xyz, part, part_s, t);
        for (int j = 0; j < 4; ++j) sums[threadIdx.x][j] = t[j];
        __syncthreads();
        if (threadIdx.x == 0)
            for (int q = 0; q < kBlock && b + q < terms; ++q)
                for (int j = 0; j < 4; ++j) a[j] += sums[q][j];
        __syncthreads();
    }
    if (threadIdx.x == 0) finish_point(i, a, out, flag);
}

// acc += weight * call, the product rounded before the sum (no contraction into an FMA): the CPU's bits.
__global__ void accumulate_kernel(int64_t m4, double weight, const double *__restrict__ call, double *__restrict__ acc) {
    const int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (k < m4) acc[k] = __dadd_rn(acc[k], __dmul_rn(weight, call[k]));
}

unsigned blocks(int64_t n, int per) { return static_cast<unsigned>((n + per - 1) / per); }

template <class T>
class ForceCuda final : public ForceKernels {
public:
    explicit ForceCuda(const ForceSources &src) : m_(static_cast<int64_t>(src.site_index.size())) {
        if (src.device >= 0) dev_ = src.device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        DeviceScope scope(dev_);
        try {
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            ForceDev<T> &s = s_;
            s.n_plain = src.n_plain, s.n_self = src.n_self, s.n_screened = src.n_screened, s.kind = src.kind;
            // SINGLE: a point that float puts on a cell it is not on in double must not take the cell's self term
            // (23.8 hartree for 5e7 at 1e-8 bohr): NaN there, and the engine recomputes the point in double, as the
            // CPU kernels do.
            s.self = std::is_same<T, float>::value ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(src.self_inv_r);
            s.bad = std::numeric_limits<T>::quiet_NaN();
            if (std::is_same<T, float>::value && (src.n_plain || src.n_screened)) {
                // As the CPU: the centre of the sites' box in whole bohr.
                double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
                auto grow = [&](double a, double b, double c) {
                    const double v[3] = {a, b, c};
                    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], v[k]), hi[k] = std::max(hi[k], v[k]);
                };
                for (int64_t m = 0; m < src.n_plain; ++m) grow(src.x[m], src.y[m], src.z[m]);
                for (int64_t m = 0; m < src.n_screened; ++m) grow(src.sx[m], src.sy[m], src.sz[m]);
                for (int k = 0; k < 3; ++k) s.origin[k] = std::round(0.5 * (lo[k] + hi[k]));
            }
            const size_t np = static_cast<size_t>(src.n_plain), ns = static_cast<size_t>(src.n_screened);
            std::vector<T> planes;
            planes.reserve(4 * np + 7 * ns);
            auto put = [&](const std::vector<double> &v, double o) {
                for (double e : v) planes.push_back(static_cast<T>(e - o));
            };
            put(src.x, s.origin[0]), put(src.y, s.origin[1]), put(src.z, s.origin[2]), put(src.c, 0);
            put(src.sx, s.origin[0]), put(src.sy, s.origin[1]), put(src.sz, s.origin[2]), put(src.sc, 0);
            put(src.sa, 0), put(src.sb, 0);
            for (int64_t m = 0; m < src.n_screened; ++m)
                planes.push_back(static_cast<T>(charges_cut2(src.kind, src.sa[m], src.sb[m])));
            planes_.ensure(std::max<size_t>(planes.size(), 1), "force sources");
            check(cudaMemcpy(planes_.p, planes.data(), planes.size() * sizeof(T), cudaMemcpyHostToDevice),
                  "cudaMemcpy (force sources)");
            const T *p = planes_.p;
            s.x = p, s.y = p + np, s.z = p + 2 * np, s.c = p + 3 * np;
            p += 4 * np;
            s.sx = p, s.sy = p + ns, s.sz = p + 2 * ns, s.sc = p + 3 * ns, s.sa = p + 4 * ns, s.sb = p + 5 * ns;
            s.cut2 = p + 6 * ns;
            build_rows(planes, src.c.data(), src.n_plain);
            build_sum_limits(planes.data() + 3 * np, src.n_plain);
            // Each site's place in the caller's order (the plain sites', then the screened sites'): site_index
            // names every site once.
            std::vector<int64_t> to_caller(std::max<size_t>(np + ns, 1), -1);
            for (int64_t k = 0; k < m_; ++k) {
                const int64_t j = src.site_index[static_cast<size_t>(k)];
                to_caller[static_cast<size_t>(j >= 0 ? j : static_cast<int64_t>(np) - 1 - j)] = k;
            }
            to_caller_.ensure(to_caller.size(), "site order");
            check(cudaMemcpy(to_caller_.p, to_caller.data(), to_caller.size() * sizeof(int64_t),
                             cudaMemcpyHostToDevice), "cudaMemcpy (site order)");
            call_.ensure(4 * static_cast<size_t>(std::max<int64_t>(m_, 1)), "site field");
            acc_[0].ensure(4 * static_cast<size_t>(std::max<int64_t>(m_, 1)), "site accumulator");
            check(cudaMemsetAsync(acc_[0].p, 0, 4 * static_cast<size_t>(m_) * sizeof(double), stream_), "cudaMemset");
            grad_flag_.ensure(1, "flag"), site_flag_.ensure(1, "flag");
            wave_blocks_ = sites_wave_blocks<T>();
            int sms = 0, per_sm = 0;
            check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_), "cudaDeviceGetAttribute");
            check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grad_plain_kernel<T, kGradPoints<T>>, kBlock,
                                                                0),
                  "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
            grad_wave_ = static_cast<int64_t>(sms) * std::max(per_sm, 1);
            check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        } catch (...) {
            release();
            throw;
        }
    }
    ~ForceCuda() override {
        DeviceScope scope(dev_);
        if (stream_) cudaStreamSynchronize(stream_);
        release();
    }

    void grad_start(int64_t n, const double *xyz, double *u, double *grad) override {
        DeviceScope scope(dev_);
        n_ = n, u_ = u, grad_ = grad;
        xyz_host_.ensure(static_cast<size_t>(3 * n), "points"), out_host_.ensure(static_cast<size_t>(4 * n), "gradients");
        xyz_dev_.ensure(static_cast<size_t>(3 * n), "points");
        const int64_t slices = (s_.n_plain + kSlice - 1) / kSlice, chunks = (s_.n_plain + kGradChunk - 1) / kGradChunk;
        const int64_t s_chunks = (s_.n_screened + kGradChunk - 1) / kGradChunk;
        const int kp = s_.axis >= 0 ? 1 : kGradPoints<T>;
        // Points a launch round: their partial sums by slices within kPartBytes.
        const int64_t round =
            std::clamp<int64_t>(kPartBytes / (32 * std::max<int64_t>(slices + s_chunks, 1)), 1, kRound);
        std::copy(xyz, xyz + 3 * n, xyz_host_.p);
        check(cudaMemcpyAsync(xyz_dev_.p, xyz_host_.p, static_cast<size_t>(3 * n) * sizeof(double),
                              cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (points)");
        grad_flag_.p[0] = 0;  // no kernel that writes it runs (the engine admits one call at a time, each synchronized)
        for (int64_t r = 0; r < n; r += round) {
            const int64_t nr = std::min(round, n - r);
            const double *pts = xyz_dev_.p + 3 * r;
            // By chunks where the slices' blocks would leave the device part idle (few points: a QMC step's call).
            const bool by_chunk = s_.n_plain > 0 && chunks <= kMaxGridY &&
                                  static_cast<int64_t>(blocks(nr, kp * kBlock)) * slices < grad_wave_ &&
                                  32 * (chunks + s_chunks) * nr <= kChunkPartBytes;
            const int64_t parts = by_chunk ? chunks : slices;
            part_.ensure(static_cast<size_t>(std::max<int64_t>((parts + s_chunks) * nr * 4, 1)),
                         "gradient partial sums");
            double *part_s = part_.p + parts * nr * 4;
            if (by_chunk) near_.ensure(static_cast<size_t>(parts * nr), "gradient near flags");
            unsigned char *near = by_chunk ? near_.p : nullptr;
            const int64_t span = by_chunk ? kGradChunk : kSlice;
            double *out = out_host_.dev + 4 * r;  // mapped: the results go straight to the host, no copy
            if (s_.n_plain > 0) {
                const dim3 grid(blocks(nr, kBlock), static_cast<unsigned>(parts));
                if (s_.axis >= 0)
                    grad_rows_kernel<T><<<grid, kBlock, 0, stream_>>>(s_, nr, pts, span, part_.p, near);
                else if (by_chunk)
                    grad_plain_kernel<T, 1><<<grid, kBlock, 0, stream_>>>(s_, nr, pts, span, part_.p, near);
                else
                    grad_plain_kernel<T, kGradPoints<T>><<<dim3(blocks(nr, kp * kBlock), grid.y), kBlock, 0, stream_>>>(
                        s_, nr, pts, span, part_.p, nullptr);
            }
            for (int64_t y0 = 0; y0 < s_chunks; y0 += kMaxGridY) {
                const dim3 grid(blocks(nr, kBlock), static_cast<unsigned>(std::min(s_chunks - y0, kMaxGridY)));
                grad_screened_kernel<T><<<grid, kBlock, 0, stream_>>>(s_, nr, pts, y0, part_s);
            }
            if (by_chunk)
                grad_finish_chunks_kernel<T><<<static_cast<unsigned>(nr), kBlock, 0, stream_>>>(
                    s_, nr, parts, s_chunks, near, pts, part_.p, part_s, out, grad_flag_.dev);
            else
                grad_finish_kernel<T><<<blocks(nr, kBlock), kBlock, 0, stream_>>>(s_, nr, parts, s_chunks, pts, part_.p,
                                                                                  part_s, out, grad_flag_.dev);
        }
        check(cudaGetLastError(), "gradient kernel launch");
    }
    void grad_finish(bool *bad) override {
        DeviceScope scope(dev_);
        check(cudaStreamSynchronize(stream_), "gradient kernels (cudaStreamSynchronize)");
        for (int64_t i = 0; i < n_; ++i) {
            u_[i] = out_host_.p[4 * i];
            for (int c = 0; c < 3; ++c) grad_[3 * i + c] = out_host_.p[4 * i + 1 + c];
        }
        *bad = static_cast<volatile int *>(grad_flag_.p)[0] != 0;
    }

    // The points in T (offsets from the origin) with their weights onto the device. Returns their one weight where
    // they all have it (launch_sites), else NaN.
    double put_points(int64_t n, const double *xyz, const double *w) {
        pts_host_.ensure(static_cast<size_t>(4 * std::max<int64_t>(n, 1)), "points");
        pts_dev_.ensure(static_cast<size_t>(4 * std::max<int64_t>(n, 1)), "points");
        for (int64_t i = 0; i < n; ++i) {
            for (int k = 0; k < 3; ++k) pts_host_.p[4 * i + k] = static_cast<T>(xyz[3 * i + k] - s_.origin[k]);
            pts_host_.p[4 * i + 3] = static_cast<T>(w[i]);
        }
        if (n > 0)
            check(cudaMemcpyAsync(pts_dev_.p, pts_host_.p, static_cast<size_t>(4 * n) * sizeof(T),
                                  cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (points)");
        const bool one = n > 0 && std::all_of(w, w + n, [&](double v) { return v == w[0]; });
        return one ? w[0] : std::numeric_limits<double>::quiet_NaN();
    }

    // One launch a call: the kernels write each site's values in the caller's order, into call_ or, accumulating,
    // into the spare sums as running sums + weight x values; the spare becomes the sums once every value is finite
    // (so a failed call leaves the sums as they were). The flag lives in mapped host memory: no copy, no clear.
    void sites(int64_t n, const double *xyz, const double *w, double *phi, double *efield, bool accumulate,
               double weight, bool *bad) override {
        DeviceScope scope(dev_);
        const double w1 = put_points(n, xyz, w);
        SitesOut o;
        o.to_caller_p = to_caller_.p, o.to_caller_s = to_caller_.p + s_.n_plain;
        if (accumulate) {
            acc_[1 - cur_].ensure(4 * static_cast<size_t>(std::max<int64_t>(m_, 1)), "site accumulator");
            o.dst = acc_[1 - cur_].p, o.acc_in = acc_[cur_].p, o.weight = weight;
        } else {
            o.dst = call_.p;
        }
        site_flag_.p[0] = 0;  // the stream's earlier kernels that write it have finished (each call ends synchronized)
        o.flag = site_flag_.dev;
        const int64_t per_launch = sites_chunks_per_launch(s_.n_plain, s_.n_screened, n, wave_blocks_);
        if (per_launch > 1)
            site_part_.ensure(static_cast<size_t>((per_launch + 1) * 4 * m_), "site field partial sums");
        launch_sites<T>(s_, n, pts_dev_.p, w1, o, per_launch, site_part_.p, stream_);
        if (!accumulate) {
            call_host_.ensure(4 * static_cast<size_t>(m_), "site field");
            check(cudaMemcpyAsync(call_host_.p, call_.p, 4 * static_cast<size_t>(m_) * sizeof(double),
                                  cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (site field)");
        }
        check(cudaStreamSynchronize(stream_), "site field kernels (cudaStreamSynchronize)");
        *bad = static_cast<volatile int *>(site_flag_.p)[0] != 0;
        if (*bad) return;
        if (accumulate) {
            cur_ = 1 - cur_;
            return;
        }
        for (int64_t k = 0; k < m_; ++k) {
            phi[k] = call_host_.p[4 * k];
            for (int c = 0; c < 3; ++c) efield[3 * k + c] = call_host_.p[4 * k + 1 + c];
        }
    }
    void accum_reset() override {
        DeviceScope scope(dev_);
        check(cudaMemsetAsync(acc_[cur_].p, 0, 4 * static_cast<size_t>(m_) * sizeof(double), stream_), "cudaMemsetAsync");
    }
    // Values the engine recomputed in double on the host (SINGLE, a point that float puts on a site): onto the device
    // in the accumulator's layout (phi, E per site, caller order) and added as a call's.
    bool accum_add_values(const double *phi, const double *efield, double weight) override {
        DeviceScope scope(dev_);
        call_host_.ensure(4 * static_cast<size_t>(std::max<int64_t>(m_, 1)), "site field");
        for (int64_t k = 0; k < m_; ++k) {
            call_host_.p[4 * k] = phi[k];
            for (int c = 0; c < 3; ++c) call_host_.p[4 * k + 1 + c] = efield[3 * k + c];
        }
        check(cudaMemcpyAsync(call_.p, call_host_.p, 4 * static_cast<size_t>(m_) * sizeof(double),
                              cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (site field)");
        accumulate_kernel<<<blocks(4 * m_, 256), 256, 0, stream_>>>(4 * m_, weight, call_.p, acc_[cur_].p);
        check(cudaGetLastError(), "site accumulator kernel launch");
        check(cudaStreamSynchronize(stream_), "site accumulator (cudaStreamSynchronize)");  // call_host_ is reused
        return true;
    }
    void accum_read(double *phi, double *efield) override {
        DeviceScope scope(dev_);
        call_host_.ensure(4 * static_cast<size_t>(std::max<int64_t>(m_, 1)), "site accumulator");
        check(cudaMemcpyAsync(call_host_.p, acc_[cur_].p, 4 * static_cast<size_t>(m_) * sizeof(double),
                              cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (site accumulator)");
        check(cudaStreamSynchronize(stream_), "site accumulator (cudaStreamSynchronize)");
        for (int64_t k = 0; k < m_; ++k) {
            phi[k] = call_host_.p[4 * k];
            for (int c = 0; c < 3; ++c) efield[3 * k + c] = call_host_.p[4 * k + 1 + c];
        }
    }

    // Plain sites only (the engine refuses screened ones): the caller's order is the plain sites' own. The staged
    // values (egrad NULL) stay on the device for accum_commit_grad; the gradient's buffers are made on first use.
    void sites_grad(int64_t n, const double *xyz, const double *w, double *egrad, bool *bad) override {
        DeviceScope scope(dev_);
        const size_t m6 = 6 * static_cast<size_t>(std::max<int64_t>(m_, 1));
        call_g_.ensure(m6, "site field gradient");
        put_points(n, xyz, w);
        // SINGLE: a point that float puts on a cell it is not on must not take the cell's flat term (NaN there, and
        // the engine recomputes in double), as the CPU.
        const T cell_on = std::is_same<T, float>::value || !(s_.self == s_.self) ? std::numeric_limits<T>::quiet_NaN()
                                                                                 : T(0);
        site_flag_.p[0] = 0;  // as in sites()
        launch_sites_grad<T>(s_, n, pts_dev_.p, cell_on, call_g_.p, site_flag_.dev, stream_);
        if (egrad) {
            call_g_host_.ensure(m6, "site field gradient");
            check(cudaMemcpyAsync(call_g_host_.p, call_g_.p, 6 * static_cast<size_t>(m_) * sizeof(double),
                                  cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (site field gradient)");
        }
        check(cudaStreamSynchronize(stream_), "site field gradient kernel (cudaStreamSynchronize)");
        *bad = static_cast<volatile int *>(site_flag_.p)[0] != 0;
        if (egrad && !*bad) std::copy(call_g_host_.p, call_g_host_.p + 6 * m_, egrad);
    }
    void accum_grad_reset() override {
        DeviceScope scope(dev_);
        acc_g_.ensure(6 * static_cast<size_t>(std::max<int64_t>(m_, 1)), "site accumulator (field gradient)");
        check(cudaMemsetAsync(acc_g_.p, 0, 6 * static_cast<size_t>(m_) * sizeof(double), stream_), "cudaMemsetAsync");
    }
    void accum_commit_grad(double weight, const double *egrad) override {
        DeviceScope scope(dev_);
        if (!acc_g_.p) accum_grad_reset();
        if (egrad) {  // values recomputed on the host: onto the device first
            const size_t m6 = 6 * static_cast<size_t>(std::max<int64_t>(m_, 1));
            call_g_.ensure(m6, "site field gradient"), call_g_host_.ensure(m6, "site field gradient");
            std::copy(egrad, egrad + 6 * m_, call_g_host_.p);
            check(cudaMemcpyAsync(call_g_.p, call_g_host_.p, 6 * static_cast<size_t>(m_) * sizeof(double),
                                  cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (site field gradient)");
        }
        accumulate_kernel<<<blocks(6 * m_, 256), 256, 0, stream_>>>(6 * m_, weight, call_g_.p, acc_g_.p);
        check(cudaGetLastError(), "site accumulator kernel launch");
        if (egrad) check(cudaStreamSynchronize(stream_), "site accumulator (cudaStreamSynchronize)");
    }
    void accum_read_grad(double *egrad) override {
        DeviceScope scope(dev_);
        if (!acc_g_.p) accum_grad_reset();
        const size_t m6 = 6 * static_cast<size_t>(std::max<int64_t>(m_, 1));
        call_g_host_.ensure(m6, "site accumulator (field gradient)");
        check(cudaMemcpyAsync(call_g_host_.p, acc_g_.p, 6 * static_cast<size_t>(m_) * sizeof(double),
                              cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (site accumulator)");
        check(cudaStreamSynchronize(stream_), "site accumulator (cudaStreamSynchronize)");
        std::copy(call_g_host_.p, call_g_host_.p + 6 * m_, egrad);
    }

private:
    // The gradient's row layout (s_.axis, rows, tile_rows) where the plain sites (planes: x, y, z of each, in T; q
    // their charges) come in rows (field_forces_rows.hpp), cut at the tiles' bounds, with each row's sites as indices
    // within its tile.
    void build_rows(const std::vector<T> &planes, const double *q, int64_t np) {
        const ForceRows<T> fr =
            force_rows<T>(planes.data(), planes.data() + np, planes.data() + 2 * np, q, np, kBlock, kMinRow);
        if (fr.axis < 0) return;
        std::vector<GradRow<T>> rows;
        rows.reserve(fr.rows.size());
        std::vector<int> tile_rows(fr.group_rows.begin(), fr.group_rows.end());
        for (size_t t = 0; t + 1 < fr.group_rows.size(); ++t) {
            const int64_t t0 = static_cast<int64_t>(t) * kBlock;
            for (int64_t i = fr.group_rows[t]; i < fr.group_rows[t + 1]; ++i) {
                const ForceRow<T> &r = fr.rows[i];
                rows.push_back(GradRow<T>{r.v, r.w, r.sgn, r.lim, static_cast<int>(r.first - t0),
                                          static_cast<int>(r.end - t0)});
            }
        }
        rows_.ensure(rows.size(), "gradient rows"), tile_rows_.ensure(tile_rows.size(), "gradient rows");
        check(cudaMemcpy(rows_.p, rows.data(), rows.size() * sizeof(GradRow<T>), cudaMemcpyHostToDevice),
              "cudaMemcpy (gradient rows)");
        check(cudaMemcpy(tile_rows_.p, tile_rows.data(), tile_rows.size() * sizeof(int), cudaMemcpyHostToDevice),
              "cudaMemcpy (gradient rows)");
        s_.axis = fr.axis, s_.rows = rows_.p, s_.tile_rows = tile_rows_.p;
    }

    // s_.sum_lim: each chunk's bound from its charges c (in T, as the kernels sum them; inv_sqrt gives 1/d).
    void build_sum_limits(const T *c, int64_t np) {
        const int64_t chunks = (np + kGradChunk - 1) / kGradChunk;
        std::vector<T> lim(static_cast<size_t>(std::max<int64_t>(chunks, 1)), T(0));
        for (int64_t k = 0; k < chunks; ++k)
            lim[k] = sign_sum_limit<T>(c, k * kGradChunk, std::min(np, (k + 1) * kGradChunk), 1.0);
        sum_lim_.ensure(lim.size(), "gradient bounds");
        check(cudaMemcpy(sum_lim_.p, lim.data(), lim.size() * sizeof(T), cudaMemcpyHostToDevice),
              "cudaMemcpy (gradient bounds)");
        s_.sum_lim = sum_lim_.p;
    }

    void release() {
        rows_.release(), tile_rows_.release(), sum_lim_.release();
        call_g_.release(), acc_g_.release(), call_g_host_.release();
        planes_.release(), to_caller_.release(), call_.release(), acc_[0].release(), acc_[1].release();
        xyz_dev_.release(), part_.release(), near_.release(), pts_dev_.release();
        site_part_.release();
        grad_flag_.release(), site_flag_.release(), xyz_host_.release(), out_host_.release(), pts_host_.release();
        call_host_.release();
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
    }

    int64_t m_;
    int dev_ = 0;
    cudaStream_t stream_ = nullptr;
    ForceDev<T> s_;
    DeviceBuf<T> planes_, pts_dev_, sum_lim_;
    DeviceBuf<int64_t> to_caller_;
    DeviceBuf<double> acc_[2];  // the site accumulator's sums (acc_[cur_]) and their spare
    int cur_ = 0;
    DeviceBuf<double> call_, xyz_dev_, part_, call_g_, acc_g_;
    DeviceBuf<unsigned char> near_;  // the gradient's near flags by chunks (grad_plain_kernel)
    DeviceBuf<double> site_part_;  // the site field's partial sums per chunk (launch_sites)
    int64_t wave_blocks_ = 1;      // the site field kernel's blocks that the device holds at once
    int64_t grad_wave_ = 1;        // the gradient kernel's (by slices)
    DeviceBuf<int> tile_rows_;
    DeviceBuf<GradRow<T>> rows_;
    PinnedBuf<int> grad_flag_, site_flag_;  // mapped: the kernels set them, no copy
    PinnedBuf<double> xyz_host_, out_host_, call_host_, call_g_host_;
    PinnedBuf<T> pts_host_;
    int64_t n_ = 0;
    double *u_ = nullptr, *grad_ = nullptr;
};

class ForcesGpuImpl final : public ForcesGpu {
public:
    std::unique_ptr<ForceKernels> make(const ForceSources &s) const override {
        if (s.precision == QMMM_PRECISION_SINGLE) return std::make_unique<ForceCuda<float>>(s);
        return std::make_unique<ForceCuda<double>>(s);
    }
};
const ForcesGpuImpl impl;
const GpuRegistry<ForcesGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda::forces
