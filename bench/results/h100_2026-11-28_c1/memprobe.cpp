// Build: g++ -O2 -std=c++17 -I/usr/local/cuda/include memprobe.cpp -L/usr/local/cuda/lib64 -lcudart -o build-tests/memprobe
// memcpy of a call's points (8,192 x 3 doubles) into pinned mapped memory, as the split stages them.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
int main() {
    for (size_t n : {1024, 2048, 4096, 8192}) {
        size_t bytes = n * 24;
        void *p; cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
        std::vector<double> src(3 * n, 1.5);
        std::vector<double> t;
        for (int r = 0; r < 200; ++r) {
            for (auto &v : src) v += 1e-9;  // the source as a caller's just-written array
            auto a = std::chrono::steady_clock::now();
            std::memcpy(p, src.data(), bytes);
            t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
        }
        std::sort(t.begin(), t.end());
        std::printf("points %zu bytes %zu memcpy us: min %.2f median %.2f p90 %.2f\n", n, bytes, t[0], t[t.size() / 2], t[t.size() * 9 / 10]);
        cudaFreeHost(p);
    }
}
