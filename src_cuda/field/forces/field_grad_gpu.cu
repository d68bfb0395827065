// field_grad_gpu.cu -- the gradient dU/dr at points on the GPU, and the forces' GPU backend (ForcesGpu): sources,
// buffers, the accumulator's sums (and its field gradient's) on
// the device (the CPU twin: src_cxx/field/forces/field_grad_cpu.cpp).
//
// Gradient: a grid of (point blocks) x (slices of kSlice plain sites); a thread takes two (DOUBLE) or three (SINGLE)
// points, one on the row layout, against its slice, the sites through shared memory in tiles, summed in T and
// flushed into double every kFieldChunk sites; its partial goes to part[slice][point]. A second kernel adds a point's
// slices in slice order, then its screened charges in index order. No atomics on values (one integer flag says a
// value was not finite); a point's bits depend on neither the batch nor the launch shape.
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

// Points per launch round: bounds the partial sums' buffer (slices x points x 4 doubles).
constexpr int64_t kRound = 65536;
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

// One point's sums over the plain sites [b, e) in the careful form (the block's threads load the tiles together): a
// site within the singular radius gives its on-value for 1/d (self_inv_r of a density cell, NaN otherwise) and no
// gradient; beyond it, the fast forms' terms.
template <class T>
__device__ __forceinline__ void slice_sum_careful(const ForceDev<T> &s, int64_t b, int64_t e, T px, T py, T pz,
                                                  Quad<T> *sh, double *acc) {
    T au = 0, ax = 0, ay = 0, az = 0;
    for (int64_t t0 = b; t0 < e; t0 += kBlock) {
        const int cnt = load_tile(s, t0, e, sh);
#pragma unroll 4
        for (int j = 0; j < cnt; ++j) {
            const Quad<T> q = sh[j];
            const T dx = px - q.x, dy = py - q.y, dz = pz - q.z;
            const T d2 = dx * dx + dy * dy + dz * dz;
            const T ck = q.w;
            const bool on = d2 < T(kSingularRadius2);
            const T inv = on ? T(0) : inv_sqrt(d2);
            au += ck * (on ? (t0 + j < s.n_self ? s.self : s.bad) : inv);
            const T g = (ck * inv) * (inv * inv);
            ax -= g * dx, ay -= g * dy, az -= g * dz;
        }
        if ((t0 + kBlock - b) % kFieldChunk == 0 || t0 + kBlock >= e) {
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
#pragma unroll 2
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
        const T lim = s.sum_lim[t0 / kFieldChunk];
        if (lim != T(0)) tile_terms<T, kP, false>(sh, cnt, p, au, ax, ay, az, top);
        else tile_terms<T, kP, true>(sh, cnt, p, au, ax, ay, az, top);
        if ((t0 + kBlock - b) % kFieldChunk == 0 || t0 + kBlock >= e) {
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

// part[slice][i] = point i's sums over the slice's plain sites; a thread takes points i, i + kBlock, ... of its
// block's kGradPoints<T> x kBlock. A point whose sums or largest 1/d say a site may be within the singular radius takes
// the slice again in the careful form: its bits are those of its own form, whatever shares its block.
template <class T>
__global__ void __launch_bounds__(kBlock) grad_plain_kernel(ForceDev<T> s, int64_t n, const double *__restrict__ xyz,
                                                            double *__restrict__ part) {
    __shared__ Quad<T> sh[kBlock];
    const int64_t i0 = blockIdx.x * static_cast<int64_t>(kGradPoints<T> * kBlock) + threadIdx.x;
    const int64_t slice = blockIdx.y, b = slice * kSlice, e = b + kSlice < s.n_plain ? b + kSlice : s.n_plain;
    T p[kGradPoints<T>][3];
    double acc[kGradPoints<T>][4];
    int top[kGradPoints<T>];
    for (int m = 0; m < kGradPoints<T>; ++m) {
        const int64_t i = i0 + m * kBlock;
        for (int c = 0; c < 3; ++c) p[m][c] = i < n ? static_cast<T>(xyz[3 * i + c] - s.origin[c]) : T(0);
        for (int c = 0; c < 4; ++c) acc[m][c] = 0;
        top[m] = 0;
    }
    slice_sum_fast<T, kGradPoints<T>>(s, b, e, p, sh, acc, top);
    for (int m = 0; m < kGradPoints<T>; ++m) {
        const int64_t i = i0 + m * kBlock;
        const bool near = i < n && top[m] >= near_word<T>();
        if (__syncthreads_or(near)) {
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
        if ((t0 + kBlock - b) % kFieldChunk == 0 || t0 + kBlock >= e) {
            acc[0] += au, acc[1 + a] -= gu, acc[1 + av] -= gv, acc[1 + aw] -= gw;
            au = gu = gv = gw = 0;
        }
    }
    *near = flag;
}

// grad_plain_kernel on the row layout: the same partials (part[slice][i]) to rounding, the same careful form where a
// row's sum says a site may be within the singular radius (slice_sum_careful's, which that point takes whatever shares its
// block; beyond the radius it is the fast form's sum in another order).
template <class T>
__global__ void __launch_bounds__(kBlock) grad_rows_kernel(ForceDev<T> s, int64_t n, const double *__restrict__ xyz,
                                                           double *__restrict__ part) {
    __shared__ Quad<T> sh[kBlock];
    __shared__ Pair2<T> shc[kBlock];
    __shared__ GradRow<T> shr[kBlock];
    const int64_t i = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x;
    const int64_t slice = blockIdx.y, b = slice * kSlice, e = b + kSlice < s.n_plain ? b + kSlice : s.n_plain;
    T p[3] = {0, 0, 0};
    if (i < n)
        for (int c = 0; c < 3; ++c) p[c] = static_cast<T>(xyz[3 * i + c] - s.origin[c]);
    double acc[4] = {0, 0, 0, 0};
    bool flag = false;
    row_slice_sum<T>(s, b, e, p, shr, shc, acc, &flag);
    const bool near = i < n && flag;
    if (__syncthreads_or(near)) {
        double careful[4] = {0, 0, 0, 0};
        slice_sum_careful<T>(s, b, e, p[0], p[1], p[2], sh, careful);
        if (near)
            for (int j = 0; j < 4; ++j) acc[j] = careful[j];
    }
    if (i < n)
        for (int j = 0; j < 4; ++j) part[(slice * n + i) * 4 + j] = acc[j];
}

// out[4i..]: the slices' partials in slice order, then the screened charges in index order; flag set when a value
// is not finite.
template <class T>
__global__ void grad_finish_kernel(ForceDev<T> s, int64_t n, int64_t slices, const double *__restrict__ xyz,
                                   const double *__restrict__ part, double *__restrict__ out, int *flag) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    double a[4] = {0, 0, 0, 0};
    for (int64_t sl = 0; sl < slices; ++sl)
        for (int j = 0; j < 4; ++j) a[j] += part[(sl * n + i) * 4 + j];
    if (s.n_screened > 0) {
        const T px = static_cast<T>(xyz[3 * i] - s.origin[0]), py = static_cast<T>(xyz[3 * i + 1] - s.origin[1]);
        const T pz = static_cast<T>(xyz[3 * i + 2] - s.origin[2]);
        T v = 0, gx = 0, gy = 0, gz = 0;
        for (int64_t m = 0; m < s.n_screened; ++m) {
            const T dx = px - s.sx[m], dy = py - s.sy[m], dz = pz - s.sz[m];
            const T d2 = dx * dx + dy * dy + dz * dz;
            T gv, h;
            if (d2 >= s.cut2[m]) {
                const T inv = inv_sqrt(d2);
                gv = inv, h = -inv * inv * inv;
            } else {
                gv = screened_inv_r_xyz<T>(s.kind, dx, dy, dz, s.sa[m], s.sb[m]);
                h = d2 > T(0) ? screened_grad_h<T>(s.kind, d2, s.sa[m], s.sb[m]) : T(0);
            }
            const T cm = s.sc[m];
            v += cm * gv;
            const T ch = cm * h;
            gx += ch * dx, gy += ch * dy, gz += ch * dz;
        }
        a[0] += v, a[1] += gx, a[2] += gy, a[3] += gz;
    }
    bool ok = true;
    for (int j = 0; j < 4; ++j) out[4 * i + j] = a[j], ok &= isfinite(a[j]);
    if (!ok) atomicOr(flag, 1);  // an integer flag, not a value
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
            flag_.ensure(1, "flag"), flag_host_.ensure(1, "flag"), site_flag_.ensure(1, "flag");
            wave_blocks_ = sites_wave_blocks<T>();
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
        xyz_dev_.ensure(static_cast<size_t>(3 * n), "points"), out_dev_.ensure(static_cast<size_t>(4 * n), "gradients");
        const int64_t slices = std::max<int64_t>(1, (s_.n_plain + kSlice - 1) / kSlice);
        part_.ensure(static_cast<size_t>(slices * std::min(n, kRound) * 4), "gradient partial sums");
        std::copy(xyz, xyz + 3 * n, xyz_host_.p);
        check(cudaMemcpyAsync(xyz_dev_.p, xyz_host_.p, static_cast<size_t>(3 * n) * sizeof(double),
                              cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (points)");
        check(cudaMemsetAsync(flag_.p, 0, sizeof(int), stream_), "cudaMemsetAsync (flag)");
        for (int64_t r = 0; r < n; r += kRound) {
            const int64_t nr = std::min(kRound, n - r);
            if (s_.n_plain > 0) {
                const dim3 grid(blocks(nr, kBlock), static_cast<unsigned>(slices));
                if (s_.axis >= 0) grad_rows_kernel<T><<<grid, kBlock, 0, stream_>>>(s_, nr, xyz_dev_.p + 3 * r, part_.p);
                else
                    grad_plain_kernel<T><<<dim3(blocks(nr, kGradPoints<T> * kBlock), grid.y), kBlock, 0, stream_>>>(
                        s_, nr, xyz_dev_.p + 3 * r, part_.p);
            } else {
                check(cudaMemsetAsync(part_.p, 0, static_cast<size_t>(nr * 4) * sizeof(double), stream_), "cudaMemset");
            }
            grad_finish_kernel<T><<<blocks(nr, kBlock), kBlock, 0, stream_>>>(s_, nr, slices, xyz_dev_.p + 3 * r,
                                                                              part_.p, out_dev_.p + 4 * r, flag_.p);
        }
        check(cudaGetLastError(), "gradient kernel launch");
        check(cudaMemcpyAsync(out_host_.p, out_dev_.p, static_cast<size_t>(4 * n) * sizeof(double),
                              cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (gradients)");
        check(cudaMemcpyAsync(flag_host_.p, flag_.p, sizeof(int), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    }
    void grad_finish(bool *bad) override {
        DeviceScope scope(dev_);
        check(cudaStreamSynchronize(stream_), "gradient kernels (cudaStreamSynchronize)");
        for (int64_t i = 0; i < n_; ++i) {
            u_[i] = out_host_.p[4 * i];
            for (int c = 0; c < 3; ++c) grad_[3 * i + c] = out_host_.p[4 * i + 1 + c];
        }
        *bad = flag_host_.p[0] != 0;
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
        check(cudaMemsetAsync(flag_.p, 0, sizeof(int), stream_), "cudaMemsetAsync (flag)");
        launch_sites_grad<T>(s_, n, pts_dev_.p, cell_on, call_g_.p, flag_.p, stream_);
        check(cudaMemcpyAsync(flag_host_.p, flag_.p, sizeof(int), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
        if (egrad) {
            call_g_host_.ensure(m6, "site field gradient");
            check(cudaMemcpyAsync(call_g_host_.p, call_g_.p, 6 * static_cast<size_t>(m_) * sizeof(double),
                                  cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (site field gradient)");
        }
        check(cudaStreamSynchronize(stream_), "site field gradient kernel (cudaStreamSynchronize)");
        *bad = flag_host_.p[0] != 0;
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
        const int64_t chunks = (np + kFieldChunk - 1) / kFieldChunk;
        std::vector<T> lim(static_cast<size_t>(std::max<int64_t>(chunks, 1)), T(0));
        for (int64_t k = 0; k < chunks; ++k)
            lim[k] = sign_sum_limit<T>(c, k * kFieldChunk, std::min(np, (k + 1) * kFieldChunk), 1.0);
        sum_lim_.ensure(lim.size(), "gradient bounds");
        check(cudaMemcpy(sum_lim_.p, lim.data(), lim.size() * sizeof(T), cudaMemcpyHostToDevice),
              "cudaMemcpy (gradient bounds)");
        s_.sum_lim = sum_lim_.p;
    }

    void release() {
        rows_.release(), tile_rows_.release(), sum_lim_.release();
        call_g_.release(), acc_g_.release(), call_g_host_.release();
        planes_.release(), to_caller_.release(), call_.release(), acc_[0].release(), acc_[1].release();
        flag_.release(), xyz_dev_.release(), out_dev_.release(), part_.release(), pts_dev_.release();
        site_part_.release();
        flag_host_.release(), site_flag_.release(), xyz_host_.release(), out_host_.release(), pts_host_.release(), call_host_.release();
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
    DeviceBuf<double> call_, xyz_dev_, out_dev_, part_, call_g_, acc_g_;
    DeviceBuf<double> site_part_;  // the site field's partial sums per chunk (launch_sites)
    int64_t wave_blocks_ = 1;      // the site field kernel's blocks that the device holds at once
    DeviceBuf<int> flag_, tile_rows_;
    DeviceBuf<GradRow<T>> rows_;
    PinnedBuf<int> flag_host_, site_flag_;
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
