// field_site_field_gpu.cu -- the potential and field that n weighted points put on the sites, on the GPU (the CPU
// twin: src_cxx/field/forces/field_site_field_cpu.cpp). One thread per site; the points pass through shared memory
// in tiles, in index order, summed in T and flushed into double every kFieldChunk points (points of one weight: their
// terms without it, each flush times it): a site's value is 0 + c_1 + c_2 + ... over its chunks' flushed sums c_j,
// added in chunk order. Where the sites alone do not fill the GPU, a launch takes each chunk in its own block (grid
// y) and a second kernel adds the chunks' sums in order: the same additions, so a site's bits depend on neither the
// launch shape nor the other sites. E_k = -sum_i w_i h(d) (R_k - r_i) (field_forces_shared.hpp).
#include <cuda_runtime.h>

#include <algorithm>

#include "core_gpu.cuh"
#include "forces/field_forces_gpu.cuh"
#include "forces/field_forces_shared.hpp"
#include "forces/field_forces_sign.hpp"

namespace qmmm::cuda::forces {
namespace {

// One site's sums over the points [b0, n), b0 a multiple of kFieldChunk (the block's threads load the tiles
// together). Plain sites: the fast form skips the singular test; the careful form gives a point within the singular
// radius the site's on-value for 1/d (self_inv_r of a density cell, NaN otherwise) and no field. Screened sites take
// their forms. kOne (plain sites, points that all have one weight w1): the terms leave the weight out and each flush
// takes it (as the CPU's loops), and the fast form's unweighted sums of 1/d > 0 tell a point within the radius
// (sum_flag_limit, field_forces_sign.hpp: a sum not below lim1); otherwise the fast form keeps the smallest d^2. *near
// (fast form): a point within the radius, by either test.
template <class T, bool kScreened, bool kCareful, bool kOne>
__device__ __forceinline__ void site_sum(const ForceDev<T> &s, int64_t b0, int64_t n, const T *__restrict__ pts,
                                         Quad<T> *sh, bool live, T X, T Y, T Z, T a, T b, T cut2, T on_value, double w1,
                                         T lim1, double *acc, bool *near) {
    T ph = 0, ex = 0, ey = 0, ez = 0, dmin = T(1e30);
    bool flag = false;
    for (int64_t t0 = b0; t0 < n; t0 += kBlock) {
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
                    screened_g_h<T>(s.kind, dx, dy, dz, d2, a, b, cut2, g, h);
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

// Site k's phi and E (acc) to o (SitesOut); k indexes the plain sites or (kScreened) the screened ones.
template <bool kScreened>
__device__ __forceinline__ void put_site(const SitesOut &o, int64_t k, const double *acc) {
    const int64_t c = 4 * (kScreened ? o.to_caller_s : o.to_caller_p)[k];
    bool ok = true;
    for (int j = 0; j < 4; ++j) {
        ok &= isfinite(acc[j]);
        o.dst[c + j] = o.acc_in ? __dadd_rn(o.acc_in[c + j], __dmul_rn(o.weight, acc[j])) : acc[j];
    }
    if (!ok) *o.flag = 1;  // every writer stores the same value: no atomic needed (host memory)
}

// The sums of the plain sites or (kScreened) the screened ones: without part, a block's sites over all n points, to o;
// with it, over chunk c = c0 + blockIdx.y, to part[(blockIdx.y * 4 + j) * total + k'] (k' = k for a plain site, n_plain
// + k for a screened one; total = n_plain + n_screened). A block of plain sites with a point within the singular
// radius of one of them sums again in the careful form, which that site (only) takes; beyond the radius the two forms
// give the same bits.
template <class T, bool kScreened, bool kOne>
__global__ void __launch_bounds__(kBlock) sites_kernel(ForceDev<T> s, int64_t n, int64_t c0, const T *__restrict__ pts,
                                                       double w1, T lim1, SitesOut o, double *__restrict__ part) {
    __shared__ Quad<T> sh[kBlock];
    const int64_t m = kScreened ? s.n_screened : s.n_plain;
    const int64_t k = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x;
    const bool live = k < m;
    int64_t b0 = 0, e = n;
    if (part) b0 = (c0 + blockIdx.y) * kFieldChunk, e = b0 + kFieldChunk < n ? b0 + kFieldChunk : n;
    T X = 0, Y = 0, Z = 0, a = 0, b = 0, cut2 = 0;
    if (live) {
        if (kScreened) X = s.sx[k], Y = s.sy[k], Z = s.sz[k], a = s.sa[k], b = s.sb[k], cut2 = s.cut2[k];
        else X = s.x[k], Y = s.y[k], Z = s.z[k];
    }
    const T on_value = k < s.n_self ? s.self : s.bad;
    double acc[4] = {0, 0, 0, 0};
    if (kScreened) {
        site_sum<T, true, false, false>(s, b0, e, pts, sh, live, X, Y, Z, a, b, cut2, on_value, w1, lim1, acc, nullptr);
    } else {
        bool flag = false;
        site_sum<T, false, false, kOne>(s, b0, e, pts, sh, live, X, Y, Z, a, b, cut2, on_value, w1, lim1, acc, &flag);
        const bool near = live && flag;
        if (__syncthreads_or(near)) {
            double careful[4] = {0, 0, 0, 0};
            site_sum<T, false, true, kOne>(s, b0, e, pts, sh, live, X, Y, Z, a, b, cut2, on_value, w1, lim1, careful,
                                           nullptr);
            if (near)
                for (int j = 0; j < 4; ++j) acc[j] = careful[j];
        }
    }
    if (!live) return;
    if (!part) return put_site<kScreened>(o, k, acc);
    const int64_t total = s.n_plain + s.n_screened, kk = kScreened ? s.n_plain + k : k;
    for (int j = 0; j < 4; ++j) part[(blockIdx.y * 4 + j) * total + kk] = acc[j];
}

// Adds chunks 0..nc-1 of part to each site's running sum in chunk order, from 0 (first) or from the sums that the
// previous launch left in carry; the last launch puts them to o, the others to carry.
__global__ void __launch_bounds__(kBlock) sites_add_kernel(int64_t n_plain, int64_t total, int nc, bool first,
                                                           bool last, const double *__restrict__ part, double *carry,
                                                           SitesOut o) {
    const int64_t k = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x;
    if (k >= total) return;
    double acc[4];
    for (int j = 0; j < 4; ++j) acc[j] = first ? 0.0 : carry[j * total + k];
    for (int c = 0; c < nc; ++c)
        for (int j = 0; j < 4; ++j) acc[j] += part[(c * 4 + j) * total + k];
    if (!last) {
        for (int j = 0; j < 4; ++j) carry[j * total + k] = acc[j];
    } else if (k < n_plain) {
        put_site<false>(o, k, acc);
    } else {
        put_site<true>(o, k - n_plain, acc);
    }
}

}  // namespace

template <class T>
int64_t sites_wave_blocks() {
    int dev = 0, sms = 0, per_sm = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sites_kernel<T, false, true>, kBlock, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return static_cast<int64_t>(sms) * std::max(per_sm, 1);
}

int64_t sites_chunks_per_launch(int64_t n_plain, int64_t n_screened, int64_t n, int64_t wave_blocks) {
    const int64_t chunks = (n + kFieldChunk - 1) / kFieldChunk, total = n_plain + n_screened;
    const int64_t site_blocks = (n_plain + kBlock - 1) / kBlock + (n_screened + kBlock - 1) / kBlock;
    if (chunks <= 1 || site_blocks >= kSiteSplitWaves * wave_blocks) return 1;
    const int64_t fit = kSiteSplitBytes / (4 * static_cast<int64_t>(sizeof(double)) * std::max<int64_t>(total, 1));
    return std::max<int64_t>(2, std::min({chunks, fit, int64_t{65535}}));  // 65,535: grid y
}

template <class T>
void launch_sites(const ForceDev<T> &s, int64_t n, const T *pts, double w1, const SitesOut &o, int64_t per_launch,
                  double *part, cudaStream_t stream) {
    const unsigned plain = static_cast<unsigned>((s.n_plain + kBlock - 1) / kBlock);
    const unsigned screened = static_cast<unsigned>((s.n_screened + kBlock - 1) / kBlock);
    const T lim1 = sum_flag_limit<T>(1.0, 1.0);  // inv_sqrt gives 1/d
    const int64_t chunks = (n + kFieldChunk - 1) / kFieldChunk, total = s.n_plain + s.n_screened;
    double *to = per_launch > 1 ? part : nullptr, *carry = to ? part + per_launch * 4 * total : nullptr;
    for (int64_t c0 = 0; c0 < std::max<int64_t>(chunks, 1); c0 += per_launch) {
        const dim3 grid_p(plain, per_launch > 1 ? static_cast<unsigned>(std::min(per_launch, chunks - c0)) : 1);
        const dim3 grid_s(screened, grid_p.y);
        if (s.n_plain > 0 && w1 == w1)
            sites_kernel<T, false, true><<<grid_p, kBlock, 0, stream>>>(s, n, c0, pts, w1, lim1, o, to);
        else if (s.n_plain > 0)
            sites_kernel<T, false, false><<<grid_p, kBlock, 0, stream>>>(s, n, c0, pts, w1, lim1, o, to);
        if (s.n_screened > 0)
            sites_kernel<T, true, false><<<grid_s, kBlock, 0, stream>>>(s, n, c0, pts, w1, lim1, o, to);
        if (to)
            sites_add_kernel<<<static_cast<unsigned>((total + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
                s.n_plain, total, static_cast<int>(grid_p.y), c0 == 0, c0 + per_launch >= chunks, part, carry, o);
        if (!to) break;
    }
    check(cudaGetLastError(), "site field kernel launch");
}

template int64_t sites_wave_blocks<float>();
template int64_t sites_wave_blocks<double>();
template void launch_sites<float>(const ForceDev<float> &, int64_t, const float *, double, const SitesOut &, int64_t,
                                  double *, cudaStream_t);
template void launch_sites<double>(const ForceDev<double> &, int64_t, const double *, double, const SitesOut &,
                                   int64_t, double *, cudaStream_t);

}  // namespace qmmm::cuda::forces
