// field_site_field_gpu.cu -- the potential and field that n weighted points put on the sites, on the GPU (the CPU
// twin: src_cxx/field/forces/field_site_field_cpu.cpp). One thread per site; the points pass through shared memory
// in tiles, in index order, summed in T and flushed into double every kFieldChunk points (points of one weight: their
// terms without it, each flush times it): a site's bits depend on neither the launch shape nor the other sites.
// E_k = -sum_i w_i h(d) (R_k - r_i) (field_forces_shared.hpp).
#include <cuda_runtime.h>

#include <algorithm>

#include "core_gpu.cuh"
#include "forces/field_forces_gpu.cuh"
#include "forces/field_forces_shared.hpp"
#include "forces/field_forces_sign.hpp"

namespace qmmm::cuda::forces {
namespace {

// One site's sums over the n points (the block's threads load the tiles together). Plain sites: the fast form skips
// the singular test; the careful form gives a point within the singular radius the site's on-value for 1/d
// (self_inv_r of a density cell, NaN otherwise) and no field. Screened sites take their forms. kOne (plain sites,
// points that all have one weight w1): the terms leave the weight out and each flush takes it (as the CPU's loops),
// and the fast form's unweighted sums of 1/d > 0 tell a point within the radius (sum_flag_limit, field_forces_sign.hpp:
// a sum not below lim1); otherwise the fast form keeps the smallest d^2 in *d2_min. *near (fast form): either says so.
template <class T, bool kScreened, bool kCareful, bool kOne>
__device__ __forceinline__ void site_sum(const ForceDev<T> &s, int64_t n, const T *__restrict__ pts, Quad<T> *sh,
                                         bool live, T X, T Y, T Z, T a, T b, T cut2, T on_value, double w1, T lim1,
                                         double *acc, bool *near) {
    T ph = 0, ex = 0, ey = 0, ez = 0, dmin = T(1e30);
    bool flag = false;
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
                if (kOne) {  // 1/d and d/d^3 (R - r), unweighted
                    const bool on = kCareful && d2 < T(kSingularRadius2);
                    const T inv = on ? T(0) : inv_sqrt(d2);
                    ph += on ? on_value : inv;
                    const T f = inv * (inv * inv);
                    ex += f * dx, ey += f * dy, ez += f * dz;
                    continue;
                }
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
            if (kOne) {
                flag |= !kCareful && !(ph < lim1);  // an infinite sum too (1/0)
                acc[0] += w1 * ph, acc[1] += w1 * ex, acc[2] += w1 * ey, acc[3] += w1 * ez;
            } else {
                acc[0] += ph, acc[1] += ex, acc[2] += ey, acc[3] += ez;
            }
            ph = ex = ey = ez = 0;
        }
    }
    if (near) *near = flag || !(dmin >= T(kSingularRadius2));
}

// Site k's phi and E to o (SitesOut). A block of plain sites with a point within the singular radius of one of them
// sums again in the careful form, which that site (only) takes: every site's bits are those of its own form.
template <class T, bool kScreened, bool kOne>
__global__ void __launch_bounds__(kBlock) sites_kernel(ForceDev<T> s, int64_t n, const T *__restrict__ pts, double w1,
                                                       T lim1, SitesOut o) {
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
        site_sum<T, true, false, false>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, w1, lim1, acc, nullptr);
    } else {
        bool flag = false;
        site_sum<T, false, false, kOne>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, w1, lim1, acc, &flag);
        const bool near = live && flag;
        if (__syncthreads_or(near)) {
            double careful[4] = {0, 0, 0, 0};
            site_sum<T, false, true, kOne>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, w1, lim1, careful,
                                           nullptr);
            if (near)
                for (int j = 0; j < 4; ++j) acc[j] = careful[j];
        }
    }
    if (!live) return;
    const int64_t c = 4 * (kScreened ? o.to_caller_s : o.to_caller_p)[k];
    bool ok = true;
    for (int j = 0; j < 4; ++j) {
        ok &= isfinite(acc[j]);
        o.dst[c + j] = o.acc_in ? __dadd_rn(o.acc_in[c + j], __dmul_rn(o.weight, acc[j])) : acc[j];
    }
    if (!ok) *o.flag = 1;  // every writer stores the same value: no atomic needed (host memory)
}

}  // namespace

template <class T>
void launch_sites(const ForceDev<T> &s, int64_t n, const T *pts, double w1, const SitesOut &o, cudaStream_t stream) {
    const unsigned plain = static_cast<unsigned>((s.n_plain + kBlock - 1) / kBlock);
    const T lim1 = sum_flag_limit<T>(1.0, 1.0);  // inv_sqrt gives 1/d
    if (s.n_plain > 0 && w1 == w1)
        sites_kernel<T, false, true><<<plain, kBlock, 0, stream>>>(s, n, pts, w1, lim1, o);
    else if (s.n_plain > 0)
        sites_kernel<T, false, false><<<plain, kBlock, 0, stream>>>(s, n, pts, w1, lim1, o);
    if (s.n_screened > 0)
        sites_kernel<T, true, false><<<static_cast<unsigned>((s.n_screened + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
            s, n, pts, w1, lim1, o);
    check(cudaGetLastError(), "site field kernel launch");
}

template void launch_sites<float>(const ForceDev<float> &, int64_t, const float *, double, const SitesOut &,
                                  cudaStream_t);
template void launch_sites<double>(const ForceDev<double> &, int64_t, const double *, double, const SitesOut &,
                                   cudaStream_t);

}  // namespace qmmm::cuda::forces
