// field_site_field_gpu.cu -- the potential and field that n weighted points put on the sites, on the GPU (the CPU
// twin: src_cxx/field/forces/field_site_field_cpu.cpp). kSitePoints sites a thread; the points pass through shared memory
// in tiles, in index order, summed in T and flushed into double every kFieldChunk points: a site's bits depend on
// neither the launch shape nor the other sites. E_k = -sum_i w_i h(d) (R_k - r_i) (field_forces_shared.hpp).
#include <cuda_runtime.h>

#include <algorithm>

#include "core_gpu.cuh"
#include "forces/field_forces_gpu.cuh"
#include "forces/field_forces_shared.hpp"

namespace qmmm::cuda::forces {
namespace {

// Sites a thread takes: each point loaded from shared memory serves P sites, so a pair costs its arithmetic and not a
// shared load (one site a thread: the accumulating form at 0.55-0.62 of the forward pair rate at 1,024 and 8,192
// points and 10^5 sites on the H200, forces_bench). A site's operations and their order do not depend on P: its bits
// neither. Screened sites keep one a thread (their near form branches per pair).
template <class T>
constexpr int kSitePoints = sizeof(T) == 4 ? 4 : 2;

// P sites' sums over the n points (the block's threads load the tiles together). Plain sites: the fast form skips
// the singular test and keeps the smallest d^2; the careful form gives a point within the singular radius the site's
// on-value for 1/d (self_inv_r of a density cell, NaN otherwise) and no field. Screened sites take their forms.
template <class T, int P, bool kScreened, bool kCareful>
__device__ __forceinline__ void site_sum(const ForceDev<T> &s, int64_t n, const T *__restrict__ pts, Quad<T> *sh,
                                         const bool (&live)[P], const T (&X)[P], const T (&Y)[P], const T (&Z)[P],
                                         T a, T b, T cut2, const T (&on_value)[P], double (&acc)[P][4],
                                         T (&d2_min)[P]) {
    T ph[P], ex[P], ey[P], ez[P];
#pragma unroll
    for (int k = 0; k < P; ++k) ph[k] = ex[k] = ey[k] = ez[k] = 0;
    bool any = false;
#pragma unroll
    for (int k = 0; k < P; ++k) any |= live[k];
    for (int64_t t0 = 0; t0 < n; t0 += kBlock) {
        __syncthreads();
        if (t0 + threadIdx.x < n) {
            const T *q = pts + 4 * (t0 + threadIdx.x);
            sh[threadIdx.x] = Quad<T>{q[0], q[1], q[2], q[3]};
        }
        __syncthreads();
        const int cnt = static_cast<int>(n - t0 < kBlock ? n - t0 : kBlock);
        if (any) {
#pragma unroll 2
            for (int j = 0; j < cnt; ++j) {
                const Quad<T> q = sh[j];
                const T w = q.w;
#pragma unroll
                for (int k = 0; k < P; ++k) {
                    const T dx = X[k] - q.x, dy = Y[k] - q.y, dz = Z[k] - q.z;
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
                        g = on ? on_value[k] : inv, h = -inv * inv * inv;
                    } else {
                        const T inv = inv_sqrt(d2);
                        g = inv, h = -inv * inv * inv;
                        d2_min[k] = d2 < d2_min[k] ? d2 : d2_min[k];
                    }
                    ph[k] += w * g;
                    const T f = -w * h;
                    ex[k] += f * dx, ey[k] += f * dy, ez[k] += f * dz;
                }
            }
        }
        if ((t0 + kBlock) % kFieldChunk == 0 || t0 + kBlock >= n) {
#pragma unroll
            for (int k = 0; k < P; ++k) {
                acc[k][0] += ph[k], acc[k][1] += ex[k], acc[k][2] += ey[k], acc[k][3] += ez[k];
                ph[k] = ex[k] = ey[k] = ez[k] = 0;
            }
        }
    }
}

// out[4k..] = site k's phi and E; a thread's sites are k0, k0 + kBlock, ... A block of plain sites with a point within
// the singular radius of one of them sums again in the careful form, which that site (only) takes: every site's bits
// are those of its own form.
template <class T, int P, bool kScreened>
__global__ void __launch_bounds__(kBlock) sites_kernel(ForceDev<T> s, int64_t n, const T *__restrict__ pts,
                                                       double *__restrict__ out) {
    static_assert(!kScreened || P == 1, "screened sites: one a thread");
    __shared__ Quad<T> sh[kBlock];
    const int64_t m = kScreened ? s.n_screened : s.n_plain;
    const int64_t k0 = blockIdx.x * static_cast<int64_t>(kBlock * P) + threadIdx.x;
    bool live[P];
    T X[P], Y[P], Z[P], on_value[P], dmin[P];
    T a = 0, b = 0, cut2 = 0;
    double acc[P][4];
#pragma unroll
    for (int p = 0; p < P; ++p) {
        const int64_t k = k0 + p * kBlock;
        live[p] = k < m;
        X[p] = Y[p] = Z[p] = 0, dmin[p] = T(1e30);
        if (live[p]) {
            if (kScreened) X[p] = s.sx[k], Y[p] = s.sy[k], Z[p] = s.sz[k], a = s.sa[k], b = s.sb[k], cut2 = s.cut2[k];
            else X[p] = s.x[k], Y[p] = s.y[k], Z[p] = s.z[k];
        }
        on_value[p] = k < s.n_self ? s.self : s.bad;
        for (int j = 0; j < 4; ++j) acc[p][j] = 0;
    }
    if (kScreened) {
        site_sum<T, P, true, false>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, acc, dmin);
    } else {
        site_sum<T, P, false, false>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, acc, dmin);
        bool near[P], any = false;
#pragma unroll
        for (int p = 0; p < P; ++p) near[p] = live[p] && !(dmin[p] >= T(kSingularRadius2)), any |= near[p];
        if (__syncthreads_or(any)) {
            double careful[P][4];
#pragma unroll
            for (int p = 0; p < P; ++p)
                for (int j = 0; j < 4; ++j) careful[p][j] = 0;
            site_sum<T, P, false, true>(s, n, pts, sh, live, X, Y, Z, a, b, cut2, on_value, careful, dmin);
#pragma unroll
            for (int p = 0; p < P; ++p)
                if (near[p])
                    for (int j = 0; j < 4; ++j) acc[p][j] = careful[p][j];
        }
    }
#pragma unroll
    for (int p = 0; p < P; ++p)
        if (live[p])
            for (int j = 0; j < 4; ++j) out[4 * (k0 + p * kBlock) + j] = acc[p][j];
}

}  // namespace

template <class T>
void launch_sites(const ForceDev<T> &s, int64_t n, const T *pts, double *out_p, double *out_s, cudaStream_t stream) {
    constexpr int P = kSitePoints<T>;
    if (s.n_plain > 0)
        sites_kernel<T, P, false><<<static_cast<unsigned>((s.n_plain + kBlock * P - 1) / (kBlock * P)), kBlock, 0,
                                    stream>>>(s, n, pts, out_p);
    if (s.n_screened > 0)
        sites_kernel<T, 1, true><<<static_cast<unsigned>((s.n_screened + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
            s, n, pts, out_s);
    check(cudaGetLastError(), "site field kernel launch");
}

template void launch_sites<float>(const ForceDev<float> &, int64_t, const float *, double *, double *, cudaStream_t);
template void launch_sites<double>(const ForceDev<double> &, int64_t, const double *, double *, double *, cudaStream_t);

}  // namespace qmmm::cuda::forces
