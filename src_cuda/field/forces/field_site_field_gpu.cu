// field_site_field_gpu.cu -- the potential and field that n weighted points put on the sites, on the GPU (the CPU
// twin: src_cxx/field/forces/field_site_field_cpu.cpp). One thread per site; the points pass through shared memory
// in tiles, in index order, summed in T and flushed into double every kFieldChunk points: a site's bits depend on
// neither the launch shape nor the other sites. E_k = -sum_i w_i h(d) (R_k - r_i) (field_forces_shared.hpp).
#include <cuda_runtime.h>

#include <algorithm>

#include "core_gpu.cuh"
#include "field_forces_gpu.cuh"
#include "forces/field_forces_shared.hpp"

namespace qmmm::cuda::forces {
namespace {

template <class T, bool kScreened>
__global__ void __launch_bounds__(kBlock) sites_kernel(ForceDev<T> s, int64_t n, const T *__restrict__ pts,
                                                       double *__restrict__ out) {
    __shared__ T sh[4][kBlock];
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
    T ph = 0, ex = 0, ey = 0, ez = 0;
    for (int64_t t0 = 0; t0 < n; t0 += kBlock) {
        __syncthreads();
        if (t0 + threadIdx.x < n)
            for (int j = 0; j < 4; ++j) sh[j][threadIdx.x] = pts[4 * (t0 + threadIdx.x) + j];
        __syncthreads();
        const int cnt = static_cast<int>(n - t0 < kBlock ? n - t0 : kBlock);
        if (live) {
            for (int j = 0; j < cnt; ++j) {
                const T dx = X - sh[0][j], dy = Y - sh[1][j], dz = Z - sh[2][j], w = sh[3][j];
                const T d2 = dx * dx + dy * dy + dz * dz;
                T g, h;
                if (kScreened) {
                    if (d2 >= cut2) {
                        const T inv = inv_sqrt(d2);
                        g = inv, h = -inv * inv * inv;
                    } else {
                        g = screened_inv_r<T>(s.kind, d2, a, b);
                        h = d2 > T(0) ? screened_grad_h<T>(s.kind, d2, a, b) : T(0);
                    }
                } else {
                    const bool on = d2 < T(kSingularRadius2);
                    const T inv = on ? T(0) : inv_sqrt(d2);
                    g = on ? on_value : inv, h = -inv * inv * inv;
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
