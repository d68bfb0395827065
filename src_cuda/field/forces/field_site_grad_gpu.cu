// field_site_grad_gpu.cu -- the gradient of the field that n weighted points put on the sites, on the GPU (the CPU
// twin: src_cxx/field/forces/field_site_grad_cpu.cpp). One thread per plain site (the engine refuses screened ones);
// the points pass through shared memory in tiles, in index order, summed in T and flushed into double every
// kFieldChunk points: a site's bits depend on neither the launch shape nor the other sites.
// dE_a/dR_b = sum_i w_i (delta_ab / d^3 - 3 d_a d_b / d^5), d = R_k - r_i.
#include <cuda_runtime.h>

#include "core_gpu.cuh"
#include "forces/field_forces_gpu.cuh"
#include "forces/field_forces_shared.hpp"

namespace qmmm::cuda::forces {
namespace {

// out[6k..6k+5] = site k's xx xy xz yy yz zz. Within the singular radius a site takes cell_on (0: a density cell
// with its self term, whose field is flat at its centre) or NaN for each term; a value that is not finite sets *flag
// (mapped host memory) to 1.
template <class T>
__global__ void __launch_bounds__(kBlock) sites_grad_kernel(ForceDev<T> s, int64_t n, const T *__restrict__ pts,
                                                            T cell_on, double *__restrict__ out, int *flag) {
    __shared__ Quad<T> sh[kBlock];
    const int64_t k = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x;
    const bool live = k < s.n_plain;
    T X = 0, Y = 0, Z = 0;
    if (live) X = s.x[k], Y = s.y[k], Z = s.z[k];
    const T on_value = k < s.n_self ? cell_on : s.bad;
    double acc[6] = {0, 0, 0, 0, 0, 0};
    T a[6] = {0, 0, 0, 0, 0, 0};
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
                const T dx = X - q.x, dy = Y - q.y, dz = Z - q.z;
                const T d2 = dx * dx + dy * dy + dz * dz;
                const bool on = d2 < T(kSingularRadius2);
                const T inv = on ? T(0) : inv_sqrt(d2), i2 = inv * inv;
                const T t3 = on ? on_value : ((q.w * inv) * inv) * inv;
                const T t5 = on ? on_value : T(3) * t3 * i2;
                a[0] += t3 - t5 * dx * dx, a[1] -= t5 * dx * dy, a[2] -= t5 * dx * dz;
                a[3] += t3 - t5 * dy * dy, a[4] -= t5 * dy * dz, a[5] += t3 - t5 * dz * dz;
            }
        }
        if ((t0 + kBlock) % kFieldChunk == 0 || t0 + kBlock >= n) {
            for (int c = 0; c < 6; ++c) acc[c] += a[c], a[c] = 0;
        }
    }
    if (!live) return;
    bool ok = true;
    for (int c = 0; c < 6; ++c) out[6 * k + c] = acc[c], ok &= isfinite(acc[c]);
    if (!ok) *flag = 1;  // every writer stores the same value: no atomic needed
}

}  // namespace

template <class T>
void launch_sites_grad(const ForceDev<T> &s, int64_t n, const T *pts, T cell_on, double *out, int *flag,
                       cudaStream_t stream) {
    if (s.n_plain > 0)
        sites_grad_kernel<T><<<static_cast<unsigned>((s.n_plain + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
            s, n, pts, cell_on, out, flag);
    check(cudaGetLastError(), "site field gradient kernel launch");
}

template void launch_sites_grad<float>(const ForceDev<float> &, int64_t, const float *, float, double *, int *,
                                       cudaStream_t);
template void launch_sites_grad<double>(const ForceDev<double> &, int64_t, const double *, double, double *, int *,
                                        cudaStream_t);

}  // namespace qmmm::cuda::forces
