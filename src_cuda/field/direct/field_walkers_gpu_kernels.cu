// field_walkers_gpu_kernels.cu -- the per-walker sums of device-resident values (field_walkers_gpu.cuh).
#include "direct/field_walkers_gpu.cuh"

namespace qmmm::cuda::field {

namespace {

__global__ void walker_sums_kernel(const double *__restrict__ u, const int64_t *__restrict__ offsets, int64_t n_walkers,
                                   double *__restrict__ sums) {
    const int64_t w = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (w >= n_walkers) return;
    const int64_t o0 = offsets[0], e = offsets[w + 1] - o0;
    double s = 0;
    for (int64_t i = offsets[w] - o0; i < e; ++i) s += u[i];  // additions only: nothing to contract
    sums[w] = s;
}

}  // namespace

cudaError_t launch_walker_sums(const double *u, const int64_t *offsets, int64_t n_walkers, double *sums, cudaStream_t s) {
    if (n_walkers <= 0) return cudaSuccess;
    constexpr int kThreads = 128;
    const unsigned blocks = static_cast<unsigned>((n_walkers + kThreads - 1) / kThreads);
    walker_sums_kernel<<<blocks, kThreads, 0, s>>>(u, offsets, n_walkers, sums);
    return cudaGetLastError();
}

}  // namespace qmmm::cuda::field
