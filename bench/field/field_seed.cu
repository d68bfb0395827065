// field_seed.cu -- seed 004 (Eqs. 5-8) as published; see field_seed.hpp.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "field_seed.hpp"

namespace {

constexpr int kBlocks = 120, kThreads = 256;
__constant__ float c_point_f[3];
__constant__ double c_point_d[3];

template <class T>
__device__ T point(int k);
template <>
__device__ float point<float>(int k) { return c_point_f[k]; }
template <>
__device__ double point<double>(int k) { return c_point_d[k]; }

template <class T, bool kCoalesced>
__global__ void seed_kernel(const T *x, const T *y, const T *z, const T *q, int64_t m, int nloop, T *block_sum) {
    __shared__ T sh[kThreads];
    const int64_t base = static_cast<int64_t>(blockIdx.x) * kThreads * nloop;
    T s = 0;
    for (int k = 0; k < nloop; ++k) {
        const int64_t j = kCoalesced ? base + static_cast<int64_t>(k) * kThreads + threadIdx.x
                                     : base + static_cast<int64_t>(threadIdx.x) * nloop + k;
        if (j < m) {
            const T dx = point<T>(0) - x[j], dy = point<T>(1) - y[j], dz = point<T>(2) - z[j];
            s += q[j] / sqrt(dx * dx + dy * dy + dz * dz);
        }
    }
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) block_sum[blockIdx.x] = sh[0];
}

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("seed baseline: ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace

struct SeedField {
    int64_t m = 0;
    int nloop = 0;
    bool dbl = false;
    void *x = nullptr, *y = nullptr, *z = nullptr, *q = nullptr, *sums = nullptr, *host_sums = nullptr;
    cudaStream_t stream = nullptr;
};

template <class T>
static void upload(SeedField *s, const double *xyz, const double *q) {
    std::vector<T> h(s->m);
    void **dst[4] = {&s->x, &s->y, &s->z, &s->q};
    for (int k = 0; k < 4; ++k) {
        for (int64_t j = 0; j < s->m; ++j) h[j] = static_cast<T>(k < 3 ? xyz[3 * j + k] : q[j]);
        check(cudaMalloc(dst[k], s->m * sizeof(T)), "cudaMalloc");
        check(cudaMemcpy(*dst[k], h.data(), s->m * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    check(cudaMalloc(&s->sums, kBlocks * sizeof(T)), "cudaMalloc");
    check(cudaHostAlloc(&s->host_sums, kBlocks * sizeof(T), cudaHostAllocDefault), "cudaHostAlloc");
}

SeedField *seed_create(int64_t m, const double *cell_xyz, const double *cell_q, bool double_precision) {
    auto *s = new SeedField;
    s->m = m, s->dbl = double_precision;
    s->nloop = static_cast<int>((m + kBlocks * kThreads - 1) / (kBlocks * kThreads));
    check(cudaStreamCreate(&s->stream), "cudaStreamCreate");
    if (double_precision) upload<double>(s, cell_xyz, cell_q);
    else upload<float>(s, cell_xyz, cell_q);
    return s;
}

template <class T>
static double eval(SeedField *s, const double *p, bool coalesced) {
    const T pt[3] = {static_cast<T>(p[0]), static_cast<T>(p[1]), static_cast<T>(p[2])};
    if constexpr (sizeof(T) == 4) check(cudaMemcpyToSymbolAsync(c_point_f, pt, sizeof pt, 0, cudaMemcpyHostToDevice, s->stream), "point");
    else check(cudaMemcpyToSymbolAsync(c_point_d, pt, sizeof pt, 0, cudaMemcpyHostToDevice, s->stream), "point");
    auto *x = static_cast<const T *>(s->x), *y = static_cast<const T *>(s->y), *z = static_cast<const T *>(s->z),
         *q = static_cast<const T *>(s->q);
    if (coalesced) seed_kernel<T, true><<<kBlocks, kThreads, 0, s->stream>>>(x, y, z, q, s->m, s->nloop, static_cast<T *>(s->sums));
    else seed_kernel<T, false><<<kBlocks, kThreads, 0, s->stream>>>(x, y, z, q, s->m, s->nloop, static_cast<T *>(s->sums));
    check(cudaGetLastError(), "launch");
    check(cudaMemcpyAsync(s->host_sums, s->sums, kBlocks * sizeof(T), cudaMemcpyDeviceToHost, s->stream), "copy back");
    check(cudaStreamSynchronize(s->stream), "synchronize");
    T sum = 0;  // block partials summed on the host, as published
    for (int b = 0; b < kBlocks; ++b) sum += static_cast<const T *>(s->host_sums)[b];
    return sum;
}

double seed_eval(SeedField *s, const double *point, bool coalesced) {
    return s->dbl ? eval<double>(s, point, coalesced) : eval<float>(s, point, coalesced);
}

void seed_destroy(SeedField *s) {
    if (!s) return;
    for (void *p : {s->x, s->y, s->z, s->q, s->sums}) cudaFree(p);
    cudaFreeHost(s->host_sums);
    cudaStreamDestroy(s->stream);
    delete s;
}
