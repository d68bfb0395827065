// Build: nvcc -arch=sm_90 -O2 pcie.cu -o build-tests/pcie
// Blocks of 128 threads, each reading its 12 doubles (4 points) and writing 4 values: from mapped host memory or
// device memory. Times with events, median of 50.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
__global__ void k(const double *__restrict__ xyz, double *__restrict__ out, int n) {
    __shared__ double pts[12];
    const int first = blockIdx.x * 4;
    if (threadIdx.x < 12) pts[threadIdx.x] = xyz[3 * first + threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 4) out[first + threadIdx.x] = pts[3 * threadIdx.x] + pts[3 * threadIdx.x + 1] + pts[3 * threadIdx.x + 2];
}
int main() {
    const int nmax = 8192;
    double *h, *hd, *d, *o, *ho, *hod;
    cudaHostAlloc(&h, 3 * nmax * 8, cudaHostAllocMapped); cudaHostGetDevicePointer(&hd, h, 0);
    cudaHostAlloc(&ho, nmax * 8, cudaHostAllocMapped); cudaHostGetDevicePointer(&hod, ho, 0);
    cudaMalloc(&d, 3 * nmax * 8); cudaMalloc(&o, nmax * 8);
    for (int i = 0; i < 3 * nmax; ++i) h[i] = i;
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int n : {1024, 4096, 8192}) for (int src = 0; src < 4; ++src) {
        std::vector<float> t;
        for (int r = 0; r < 60; ++r) {
            cudaEventRecord(a);
            if (src == 2 || src == 3) cudaMemcpyAsync(d, h, 3 * n * 8, cudaMemcpyHostToDevice);
            k<<<n / 4, 128>>>(src == 0 ? hd : d, src == 3 || src == 0 ? hod : o, n);
            cudaEventRecord(b); cudaEventSynchronize(b);
            float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 10) t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        const char *name[] = {"mapped points, mapped values", "device points, device values", "DMA + device points, device values", "DMA + device points, mapped values"};
        std::printf("n %5d %-40s median %.1f us min %.1f\n", n, name[src], t[t.size() / 2], t[0]);
    }
}
