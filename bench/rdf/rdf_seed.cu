// rdf_seed.cu -- the published GPU RDF scheme; see rdf_seed.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "rdf_seed.hpp"

namespace {

constexpr int kBlock = 256;
constexpr int kTile = 4000;  // atoms per constant-memory tile (64 kB)
constexpr int kMaxBins = 8192;

__constant__ float4 c_tile[kTile];

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct Params {
    float lx, ly, lz, ilx, ily, ilz;  // box edges and their inverses
    float rmin, rmin2, rmax2, inv_dr;
    int nb;
};

// Thread j pairs atom j with the tile's atoms i < j.
__global__ void __launch_bounds__(kBlock) seed_kernel(Params p, int n_tile, int64_t tile0, const float4 *__restrict__ a,
                                                      int64_t n, unsigned long long *__restrict__ hist) {
    extern __shared__ unsigned int h[];
    for (int b = threadIdx.x; b < p.nb; b += blockDim.x) h[b] = 0;
    __syncthreads();
    const int64_t j = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
    if (j < n) {
        const float4 b = a[j];
        const int m = static_cast<int>(min(static_cast<int64_t>(n_tile), max(int64_t{0}, j - tile0)));
        for (int k = 0; k < m; ++k) {
            const float4 t = c_tile[k];
            float dx = b.x - t.x, dy = b.y - t.y, dz = b.z - t.z;
            dx -= p.lx * rintf(dx * p.ilx);
            dy -= p.ly * rintf(dy * p.ily);
            dz -= p.lz * rintf(dz * p.ilz);
            const float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < p.rmax2 && r2 >= p.rmin2) {
                const int bin = static_cast<int>((sqrtf(r2) - p.rmin) * p.inv_dr);
                if (bin >= 0 && bin < p.nb) atomicAdd(h + bin, 1u);
            }
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < p.nb; b += blockDim.x)
        if (h[b]) atomicAdd(hist + b, static_cast<unsigned long long>(h[b]));
}

}  // namespace

struct RdfSeed {
    int device = 0;
    int64_t n = 0;
    double r_min = 0, r_max = 0;
    int n_bins = 0;
    float4 *d_atoms = nullptr;
    unsigned long long *d_hist = nullptr;
    std::vector<float4> h_atoms;
    std::vector<unsigned long long> h_hist;
    cudaStream_t stream = nullptr;
};

RdfSeed *rdf_seed_create(int device, int64_t n, double r_min, double r_max, int n_bins) {
    if (n_bins < 1 || n_bins > kMaxBins) throw std::runtime_error("rdf_seed: n_bins must be 1.." + std::to_string(kMaxBins));
    auto *s = new RdfSeed;
    s->device = device, s->n = n, s->r_min = r_min, s->r_max = r_max, s->n_bins = n_bins;
    s->h_atoms.resize(static_cast<size_t>(n));
    s->h_hist.resize(static_cast<size_t>(n_bins));
    try {
        check(cudaSetDevice(device), "cudaSetDevice");
        check(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaMalloc(&s->d_atoms, std::max<int64_t>(n, 1) * sizeof(float4)), "cudaMalloc (atoms)");
        check(cudaMalloc(&s->d_hist, n_bins * sizeof(unsigned long long)), "cudaMalloc (histogram)");
    } catch (...) {
        rdf_seed_destroy(s);
        throw;
    }
    return s;
}

double rdf_seed_count(RdfSeed *s, const double *xyz, const double box[3], int64_t *hist) {
    check(cudaSetDevice(s->device), "cudaSetDevice");
    for (int64_t i = 0; i < s->n; ++i)
        s->h_atoms[i] = float4{static_cast<float>(xyz[3 * i]), static_cast<float>(xyz[3 * i + 1]),
                               static_cast<float>(xyz[3 * i + 2]), 0.f};
    Params p;
    p.lx = static_cast<float>(box[0]), p.ly = static_cast<float>(box[1]), p.lz = static_cast<float>(box[2]);
    p.ilx = 1.f / p.lx, p.ily = 1.f / p.ly, p.ilz = 1.f / p.lz;
    p.rmin = static_cast<float>(s->r_min), p.rmin2 = p.rmin * p.rmin;
    p.rmax2 = static_cast<float>(s->r_max * s->r_max);
    p.inv_dr = static_cast<float>(s->n_bins / (s->r_max - s->r_min));
    p.nb = s->n_bins;
    const auto t0 = std::chrono::steady_clock::now();
    check(cudaMemcpyAsync(s->d_atoms, s->h_atoms.data(), s->n * sizeof(float4), cudaMemcpyHostToDevice, s->stream),
          "copy atoms");
    check(cudaMemsetAsync(s->d_hist, 0, s->n_bins * sizeof(unsigned long long), s->stream), "cudaMemsetAsync");
    const dim3 grid(static_cast<unsigned>((s->n + kBlock - 1) / kBlock));
    for (int64_t t0i = 0; t0i < s->n; t0i += kTile) {
        const int m = static_cast<int>(std::min<int64_t>(kTile, s->n - t0i));
        check(cudaMemcpyToSymbolAsync(c_tile, s->h_atoms.data() + t0i, m * sizeof(float4), 0, cudaMemcpyHostToDevice,
                                      s->stream),
              "copy tile");
        seed_kernel<<<grid, kBlock, s->n_bins * sizeof(unsigned int), s->stream>>>(p, m, t0i, s->d_atoms, s->n,
                                                                                     s->d_hist);
        check(cudaGetLastError(), "seed kernel launch");
    }
    check(cudaMemcpyAsync(s->h_hist.data(), s->d_hist, s->n_bins * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                          s->stream),
          "copy histogram");
    check(cudaStreamSynchronize(s->stream), "seed kernel");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int b = 0; b < s->n_bins; ++b) hist[b] += static_cast<int64_t>(s->h_hist[b]);
    return seconds;
}

void rdf_seed_destroy(RdfSeed *s) {
    if (!s) return;
    cudaSetDevice(s->device);
    cudaFree(s->d_atoms);
    cudaFree(s->d_hist);
    if (s->stream) cudaStreamDestroy(s->stream);
    delete s;
}
