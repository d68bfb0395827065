// tile_probe.cu -- is the SINGLE tile kernel's hot loop limited by its 8 instructions a pair? A replica of
// tile_kernel<SINGLE, 8, 32> (4 groups of 32 threads, each a quarter of a 1024-cell chunk, 8 points a thread, runs
// of 8 cells) with the pair term in three forms:
//   V0 difference: dx, dy, dz (3 FADD), r^2 (FMUL + 2 FFMA), MUFU.RSQ, FFMA     -- the library's loop
//   V1 expanded:   r^2 = |p'|^2 + (|m'|^2 - 2 p'.m') with p', m' from the quarter's centre: 3 FFMA + FADD
//   V2 expanded + the smallest r^2 a point meets (what a near-cell test would need): + FMNMX
// Random cells (24 bohr box, Morton-free: each quarter is a 3 bohr cube so quarter centres mean something) and
// random points; rates from CUDA events, best of 20 launches; accuracy of V1 against a double sum on the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#define OK(x)                                                                               \
    do {                                                                                    \
        cudaError_t e = (x);                                                                \
        if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } \
    } while (0)

constexpr int kChunk = 1024, kSub = 4, kQuarter = 256, kRun = 8, G = 32;

__device__ __forceinline__ float rs(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

template <int V, int P, int MINB, int C = 1>
__global__ void __launch_bounds__(128, MINB) tile(const float4 *cells, const float *qs, const float4 *centre, int n,
                                               const float *pts, float *part, float *dminv) {
    __shared__ float4 t4[kChunk];
    __shared__ float tq[kChunk];
    __shared__ float red[kSub - 1][G * 8];
    const int seg = blockIdx.y, sub = threadIdx.x / G, lane = threadIdx.x % G;
    const int first = blockIdx.x * G * P + lane;
    float pt[P][3];
#pragma unroll
    for (int k = 0; k < P; ++k)
        for (int d = 0; d < 3; ++d) pt[k][d] = pts[3 * min(first + k * G, n - 1) + d];
    float q[P][3], pp[P], part_[P], dmin[P];
#pragma unroll
    for (int k = 0; k < P; ++k) part_[k] = 0, dmin[k] = 3e38f;
    for (int ch = seg * C; ch < seg * C + C; ++ch) {
    __syncthreads();
    for (int j = threadIdx.x; j < kChunk; j += 128) {
        t4[j] = cells[ch * kChunk + j];
        if (V > 0) tq[j] = qs[ch * kChunk + j];
    }
    __syncthreads();
    const float4 c = centre[ch * kSub + sub];
#pragma unroll
    for (int k = 0; k < P; ++k) {
        if (V > 0) {
            q[k][0] = pt[k][0] - c.x, q[k][1] = pt[k][1] - c.y, q[k][2] = pt[k][2] - c.z;
            pp[k] = q[k][0] * q[k][0] + q[k][1] * q[k][1] + q[k][2] * q[k][2];
        } else {
            q[k][0] = pt[k][0], q[k][1] = pt[k][1], q[k][2] = pt[k][2];
        }
    }
    const float4 *s = t4 + sub * kQuarter;
    const float *sq = tq + sub * kQuarter;
#pragma unroll 2
    for (int j = 0; j < kQuarter; j += kRun) {
        float run[P];
#pragma unroll
        for (int k = 0; k < P; ++k) run[k] = 0;
#pragma unroll
        for (int r = 0; r < kRun; ++r) {
            const float4 m = s[j + r];
            const float w = V > 0 ? sq[j + r] : m.w;
#pragma unroll
            for (int k = 0; k < P; ++k) {
                float d2;
                if (V == 0) {
                    const float dx = q[k][0] - m.x, dy = q[k][1] - m.y, dz = q[k][2] - m.z;
                    d2 = dx * dx + dy * dy + dz * dz;
                } else {
                    d2 = fmaf(q[k][2], m.z, fmaf(q[k][1], m.y, fmaf(q[k][0], m.x, m.w))) + pp[k];
                    if (V == 2) dmin[k] = fminf(dmin[k], d2);
                }
                run[k] = fmaf(w, rs(d2), run[k]);
            }
        }
#pragma unroll
        for (int k = 0; k < P; ++k) part_[k] += run[k];
    }
    }
#pragma unroll
    for (int k = 0; k < P; ++k)
        if (sub > 0) red[sub - 1][lane + k * G] = part_[k];
    __syncthreads();
    if (sub == 0) {
#pragma unroll
        for (int k = 0; k < P; ++k) {
            float v = part_[k];
            for (int g = 0; g < kSub - 1; ++g) v += red[g][lane + k * G];
            const int i = first + k * G;
            if (i < n) part[seg * n + i] = v;
        }
    }
    if (V == 2 && sub == 0 && first < n) dminv[first] = dmin[0];
}

int main() {
    const int n_chunks = 264, M = n_chunks * kChunk, n = 8192;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u01(0, 1);
    // Each quarter fills one 3-bohr cube of an 8 x 8 x 8 grid of cubes (24 bohr box): compact quarters, as Morton
    // order gives; charges of one sign (density), points anywhere in the box (some inside quarters).
    std::vector<double> cx(M), cy(M), cz(M), cq(M);
    std::vector<float4> diff(M), expd(M), centre(n_chunks * kSub);
    std::vector<float> qs(M);
    for (int qd = 0; qd < n_chunks * kSub; ++qd) {
        const int b = qd % 512;
        const double ox = 3.0 * (b % 8), oy = 3.0 * ((b / 8) % 8), oz = 3.0 * (b / 64);
        const double ccx = ox + 1.5, ccy = oy + 1.5, ccz = oz + 1.5;
        centre[qd] = make_float4(float(ccx), float(ccy), float(ccz), 0);
        for (int j = 0; j < kQuarter; ++j) {
            const int m = qd * kQuarter + j;
            cx[m] = ox + 3 * u01(rng), cy[m] = oy + 3 * u01(rng), cz[m] = oz + 3 * u01(rng), cq[m] = -1e-3 * (0.5 + u01(rng));
            diff[m] = make_float4(float(cx[m]), float(cy[m]), float(cz[m]), float(cq[m]));
            // offsets from the float centre, in float (what the library would store)
            const float mx = float(cx[m] - centre[qd].x), my = float(cy[m] - centre[qd].y), mz = float(cz[m] - centre[qd].z);
            expd[m] = make_float4(-2 * mx, -2 * my, -2 * mz, mx * mx + my * my + mz * mz);
            qs[m] = float(cq[m]);
        }
    }
    std::vector<float> pts(3 * n);
    for (auto &v : pts) v = float(24 * u01(rng));
    float4 *d_diff, *d_exp, *d_c;
    float *d_q, *d_p, *d_part, *d_dmin;
    OK(cudaMalloc(&d_diff, M * sizeof(float4)));
    OK(cudaMalloc(&d_exp, M * sizeof(float4)));
    OK(cudaMalloc(&d_c, centre.size() * sizeof(float4)));
    OK(cudaMalloc(&d_q, M * sizeof(float)));
    OK(cudaMalloc(&d_p, 3 * n * sizeof(float)));
    OK(cudaMalloc(&d_part, size_t(n_chunks) * n * sizeof(float)));
    OK(cudaMalloc(&d_dmin, n * sizeof(float)));
    OK(cudaMemcpy(d_diff, diff.data(), M * sizeof(float4), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(d_exp, expd.data(), M * sizeof(float4), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(d_c, centre.data(), centre.size() * sizeof(float4), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(d_q, qs.data(), M * sizeof(float), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(d_p, pts.data(), 3 * n * sizeof(float), cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    std::vector<std::vector<float>> res(2, std::vector<float>(size_t(n_chunks) * n));
    auto time = [&](const char *name, auto launch, int keep) {
        float best = 1e30f;
        for (int rep = 0; rep < 20; ++rep) {
            cudaEventRecord(a);
            launch();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            best = std::min(best, ms);
        }
        if (cudaGetLastError() != cudaSuccess) std::printf("%s: launch failed\n", name);
        if (keep >= 0) cudaMemcpy(res[keep].data(), d_part, res[keep].size() * sizeof(float), cudaMemcpyDeviceToHost);
        std::printf("%-28s %8.1f us %6.0f G pairs/s\n", name, 1e3 * best, double(M) * n / (best * 1e-3) / 1e9);
    };
    const dim3 g8(n / (G * 8), n_chunks), g4(n / (G * 4), n_chunks);
    for (int round = 0; round < 2; ++round) {
        time("V0 diff P8 minB8 (library)", [&] { tile<0, 8, 8><<<g8, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, 0);
        time("V1 expd P8 minB8", [&] { tile<1, 8, 8><<<g8, 128>>>(d_exp, d_q, d_c, n, d_p, d_part, d_dmin); }, 1);
        time("V2 expd+min P8 minB8", [&] { tile<2, 8, 8><<<g8, 128>>>(d_exp, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
        time("V0 diff P4 minB8", [&] { tile<0, 4, 8><<<g4, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
        time("V0 diff P4 minB12", [&] { tile<0, 4, 12><<<g4, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
        time("V0 diff P4 minB16", [&] { tile<0, 4, 16><<<g4, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
        time("V0 diff P8 minB12", [&] { tile<0, 8, 12><<<g8, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
        for (int cc : {2, 4, 8}) {
            const dim3 h8(n / (G * 8), (n_chunks + cc - 1) / cc), h4(n / (G * 4), (n_chunks + cc - 1) / cc);
            char name[64];
            std::snprintf(name, sizeof name, "V0 diff P8 minB8 C%d", cc);
            if (cc == 2) time(name, [&] { tile<0, 8, 8, 2><<<h8, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
            if (cc == 4) time(name, [&] { tile<0, 8, 8, 4><<<h8, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
            if (cc == 8) time(name, [&] { tile<0, 8, 8, 8><<<h8, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
            std::snprintf(name, sizeof name, "V0 diff P4 minB12 C%d", cc);
            if (cc == 2) time(name, [&] { tile<0, 4, 12, 2><<<h4, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
            if (cc == 4) time(name, [&] { tile<0, 4, 12, 4><<<h4, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
            if (cc == 8) time(name, [&] { tile<0, 4, 12, 8><<<h4, 128>>>(d_diff, d_q, d_c, n, d_p, d_part, d_dmin); }, -1);
        }
    }
    // Accuracy over the first 256 points: normwise |u - u_double| / sum |q|/r, per form.
    double worst[2] = {0, 0}, mean[2] = {0, 0};
    int cnt = 0;
    for (int i = 0; i < 256; ++i) {
        double ref = 0, norm = 0, dmin2 = 1e30;
        for (int m = 0; m < M; ++m) {
            const double dx = pts[3 * i] - cx[m], dy = pts[3 * i + 1] - cy[m], dz = pts[3 * i + 2] - cz[m];
            const double d2 = dx * dx + dy * dy + dz * dz;
            dmin2 = std::min(dmin2, d2);
            ref += cq[m] / std::sqrt(d2), norm += std::fabs(cq[m]) / std::sqrt(d2);
        }
        for (int f = 0; f < 2; ++f) {
            double u = 0;
            for (int ch = 0; ch < n_chunks; ++ch) u += res[f][size_t(ch) * n + i];
            const double e = std::fabs(u - ref) / norm;
            worst[f] = std::max(worst[f], e), mean[f] += e;
        }
        ++cnt;
        if (i < 4) std::printf("point %d: nearest cell %.3g bohr\n", i, std::sqrt(dmin2));
    }
    std::printf("normwise error over %d points: difference max %.2e mean %.2e; expanded max %.2e mean %.2e\n", cnt,
                worst[0], mean[0] / cnt, worst[1], mean[1] / cnt);
    return 0;
}
