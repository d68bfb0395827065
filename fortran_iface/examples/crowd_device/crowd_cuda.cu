// crowd_cuda.cu -- a crowd of walkers whose electrons live in GPU memory, from CUDA C++: the positions are written
// on the device (here copied once), one qmmm_field_eval_walkers_device call per step on the caller's stream gives one
// MM energy per walker in device memory, and the host reads them when the stream says so. The sums are compared with
// the host call qmmm_field_eval_walkers (the same bits). Without a GPU it says so.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "qmmm_accel.h"

int main() {
    constexpr int64_t kWalkers = 64, kElectrons = 22, kCharges = 2000;
    std::mt19937_64 g(7);
    std::uniform_real_distribution<double> box(-10, 10), el(-8, 8), chg(-0.5, 0.5);
    std::vector<double> x(kCharges), y(kCharges), z(kCharges), q(kCharges);
    for (int64_t m = 0; m < kCharges; ++m) x[m] = box(g), y[m] = box(g), z[m] = box(g), q[m] = chg(g);
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CUDA;
    qmmm_field mm = nullptr;
    if (qmmm_field_create_charges(&mm, kCharges, x.data(), y.data(), z.data(), 1, q.data(), QMMM_SCREEN_NONE, nullptr,
                                  nullptr, 0, nullptr, nullptr, &o) != QMMM_SUCCESS) {
        std::printf("qmmm-skip: crowd_cuda: no CUDA field here: %s\n", qmmm_error_message());
        return 0;
    }
    const int64_t n = kWalkers * kElectrons;
    std::vector<int64_t> offsets(kWalkers + 1);  // walker w: points offsets[w] .. offsets[w+1]-1
    for (int64_t w = 0; w <= kWalkers; ++w) offsets[w] = w * kElectrons;
    std::vector<double> xyz(3 * n), sums(kWalkers), host(kWalkers);
    for (double &v : xyz) v = el(g);

    cudaStream_t s;
    double *d_xyz, *d_sums;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMalloc(&d_xyz, 3 * n * sizeof(double));
    cudaMalloc(&d_sums, kWalkers * sizeof(double));
    cudaMemcpyAsync(d_xyz, xyz.data(), 3 * n * sizeof(double), cudaMemcpyHostToDevice, s);  // the wavefunction's job
    // One step: enqueued on s after the positions, no host round trip; d_u NULL (the values are not needed).
    int st = qmmm_field_eval_walkers_device(mm, kWalkers, offsets.data(), d_xyz, d_sums, nullptr, s);
    if (st != QMMM_SUCCESS) {
        std::printf("crowd_cuda: %s\n", qmmm_error_message());
        return 1;
    }
    cudaMemcpyAsync(sums.data(), d_sums, kWalkers * sizeof(double), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    st = qmmm_field_eval_walkers(mm, kWalkers, offsets.data(), xyz.data(), host.data(), nullptr);
    for (int64_t w = 0; w < kWalkers; ++w)
        if (st != QMMM_SUCCESS || std::memcmp(&sums[w], &host[w], sizeof(double)) != 0) {
            std::printf("crowd_cuda: walker %lld: %.17g (device) vs %.17g (host)\n", static_cast<long long>(w), sums[w],
                        host[w]);
            return 1;
        }
    std::printf("crowd_cuda: all passed\n");
    cudaFree(d_xyz), cudaFree(d_sums), cudaStreamDestroy(s);
    qmmm_field_destroy(mm);
    return 0;
}
