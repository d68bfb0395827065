// field_site_field_gpu.cu -- the potential and field that n weighted points put on the sites, on the GPU (the CPU
// twin: src_cxx/field/forces/field_site_field_cpu.cpp). One thread per site; the points pass through shared memory
// in tiles, in index order, summed in T and flushed into double every kFieldChunk points: a site's bits depend on
// neither the launch shape nor the other sites. E_k = -sum_i w_i h(d) (R_k - r_i) (field_forces_shared.hpp).
#include <cuda_runtime.h>

#include <algorithm>

#include "core_gpu.cuh"
#include "forces/field_forces_gpu.cuh"
#include "forces/field_forces_shared.hpp"

namespace qmmm::cuda::forces {
namespace {

// One site's sums over the n points (the block's threads load the tiles together). Plain sites: the fast form skips
// the singular test and keeps the smallest d^2; the careful form gives a point within the singular radius the site's
// on-value for 1/d (self_inv_r of a density cell, NaN otherwise) and no field. Screened sites take their forms.
template <class T, bool kScreened, bool kCareful>
__device__ __forceinline__ void site_sum(const ForceDev<T> &s, int64_t n, const T *__restrict__ pts, Quad<T> *sh,
                                         bool live, T X, T Y, T Z, T a, T b, T cut2, T on_value, double *acc,
                                         T *d2_min) {
    T ph = 0, ex = 0, ey = 0, ez = 0, dmin = d2_min ? *d2_min : T(0);
    for (int64_t t0 = 0; t0 < n; t0 += kBlock) {
        __syncthreads();
        if (t0 + threadIdx.x < n) {
            const T *q = pts + 4 * (t0 + threadIdx.x);
            sh[threadIdx.x] = Quad<T>{q[0], q[1], q[2], q[3]};
        }
        __syncthreads();
        const int cnt = static_cast<int>(n - t0 < kBlock ? n - t0 : kBlock);
        if (live) {
#pragma unroll 4
            for (int j = 0; j < cnt; ++j) {
                const Quad<T> q = sh[j];
                const T dx = X - q.x, dy = Y - q.y, dz = Z - q.z, w = q.w;
                const T d2 = dx * dx + dy * dy + dz * dz;
                T g, h;
                if (kScreened) {
                    if (d2 >= cut2) {
                        const T inv = inv_sqrt(d2);
                        g = inv, h = -inv * inv * inv;
                    } else {
                        g = screened_inv_r_xyz<T>(s.kind, dx, dy, dz, a, b);
                        h = d2 > T(0) ? screened_grad_h<T>(s.kind, d2, a, b) : T(0);
                    }
                } else if (kCareful) {
                    const bool on = d2 < T(kSingularRadius2);
                    const T inv = on ? T(0) : inv_sqrt(d2);
                    g = on ? on_value : inv, h = -inv * inv * inv;
                } else {
                    const T inv = inv_sqrt(d2);
                    g = inv, h = -inv * inv * inv;
                    dmin = d2 < dmin ? d2 : dmin;
                }
                ph += w * g;
                const T f = -w * h;
                ex += f * dx, ey += f * dy, ez += f * dz;
            }
        }
        if ((t0 + kBlock) % kFieldChunk == 0 || t0 + kBlock >= n) {
            acc[0] += ph, acc[1] += ex, acc[2] += ey, acc[3] += ez;
            ph = ex = ey = ez = 0;
        }
    }
    if (d2_min) *d2_min = dmin;
}

// out[4k..] = site k's phi and E. A block of plain sites with a point within the singular radius of one of them sums
// again in the careful form, which that site (only) takes: every site's bits are those of its own form.
template <class T, bool kScreened>
__global__ void __launch_bounds__(kBlock) sites_kernel(ForceDev<T> s, int64_t n, const T *__restrict__ pts,
                                                       double *__restrict__ out) {
    __shared__ Quad<T> sh[kBlock];
    const int64_t m = kScreened ? s.n_screened : s.n_plain;
    const int64_t k = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x;
    const bool live = k < m;
    T X = 0, Y = 0, Z = 0, a = 0, b = 0, cut2 = 0;
    if (live) {
        if (kScreened) X = s.sx[k], Y = s.sy[k], Z = s.sz[k], a = s.sa[k], b = s.sb[k], cut2 = s.cut2[k];
        else X = s.x[k], Y = s.y[k], Z = s.z[k];
    }
    const T on_value = k < s.n_self ? s.self : s.bad;
    double acc[4] = {0, 0, 0, 0};
    if (kScreened) {
        site_sum<T, true, false>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, acc, nullptr);
    } else {
        T dmin = T(1e30);
        site_sum<T, false, false>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, acc, &dmin);
        const bool near = live && !(dmin >= T(kSingularRadius2));
        if (__syncthreads_or(near)) {
            double careful[4] = {0, 0, 0, 0};
            site_sum<T, false, true>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, careful, nullptr);
            if (near)
                for (int j = 0; j < 4; ++j) acc[j] = careful[j];
        }
    }
    if (live)
        for (int j = 0; j < 4; ++j) out[4 * k + j] = acc[j];
}

}  // namespace

template <class T>
void launch_sites(const ForceDev<T> &s, int64_t n, const T *pts, double *out_p, double *out_s, cudaStream_t stream) {
    if (s.n_plain > 0)
        sites_kernel<T, false><<<static_cast<unsigned>((s.n_plain + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
            s, n, pts, out_p);
    if (s.n_screened > 0)
        sites_kernel<T, true><<<static_cast<unsigned>((s.n_screened + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
            s, n, pts, out_s);
    check(cudaGetLastError(), "site field kernel launch");
}

template void launch_sites<float>(const ForceDev<float> &, int64_t, const float *, double *, double *, cudaStream_t);
template void launch_sites<double>(const ForceDev<double> &, int64_t, const double *, double *, double *, cudaStream_t);

}  // namespace qmmm::cuda::forces
