// field_charges_gpu.cu -- the screened charges' term of a point-charge field on the GPU (the CPU twin is
// ScreenedCpu in src_cxx/field/charges/field_charges.cpp; the pair term is field_charges_shared.hpp's, so both agree to
// rounding). A thread a point, the charges through shared memory in tiles that every point of the block shares. A
// point's sum is fixed by the point alone: each chunk of kChunk charges is summed in T in index order, the chunks'
// sums in double in order within slices, the slices' in order (no atomics), so its value has the same bits whatever
// the batch. A call whose blocks of points fill the GPU takes every chunk in each block; a call of few points (a QMC
// code's walker) takes a block per (points, chunk), and a second kernel adds each point's chunks in the same order.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "backend/field_factory.hpp"
#include "charges/field_charges.hpp"
#include "charges/field_charges_gpu.cuh"
#include "core_gpu.cuh"

namespace qmmm::cuda {
namespace {

constexpr int kBlock = 128;  // points a block, a thread each; also charges a tile
// Charges a chunk: a call of few points sums one chunk a thread, so its length is that call's serial part. On an H100
// (10^4 and 10^5 EXP and Gaussian charges, 1 to 65,536 points, both precisions), the geometric mean of the calls' times
// against chunks of 256, no unroll: chunks of 128 0.90, the pair loop unrolled 2 0.84, 4 0.83; chunks of 64 0.91, 0.86
// unrolled 2 (the second kernel then adding every chunk in turn: more of them at 10^5 charges).
constexpr int64_t kChunk = 128;
constexpr int kUnroll = 4;
// Chunks a slice: a point's chunk sums are added in slices, then the slices in order, so the second kernel's serial
// additions are a slice's and the slices' (a warp a point, a lane a slice) instead of every chunk's. Against every
// chunk in turn, same H100 and calls: 0.88 in geometric mean (10^5 Gaussian charges, 22 points, DOUBLE: 55 -> 41 us).
constexpr int kSliceChunks = 32;
static_assert(kChunk % kBlock == 0, "chunks of whole tiles");
constexpr int64_t kPartBytes = int64_t(128) << 20;  // the chunks' partial sums of a round of points, at most
constexpr int64_t kMaxGridY = 65535;

// The charges as seven planes of m values: x, y, z, q, a, b, cut2 (field_charges.hpp).
template <class T>
struct Planes {
    const T *c = nullptr;
    int64_t m = 0;
    int kind = 0;
};

// A charge's term at the point p: q (x y z q) and its kernel s (a b cut2 -); beyond the cut-off q/d, where the
// screening leaves the term to the last bit (field_charges_shared.hpp), with 1/d from the hardware seed (the gradient's
// form). At 8,192 points on 10^4 Gaussian charges (H100, chunks of 256) against a correctly rounded q / sqrt(d^2):
// DOUBLE 306 -> 221 us a call, SINGLE 182 -> 127.
template <class T>
__device__ __forceinline__ T screened_term(int kind, T px, T py, T pz, const Quad<T> &q, const Quad<T> &s) {
    const T dx = px - q.x, dy = py - q.y, dz = pz - q.z;
    return q.w * screened_inv_d<T>(kind, dx, dy, dz, dx * dx + dy * dy + dz * dz, s.x, s.y, s.z);
}

// out[i stride + blockIdx.y] = point i's sum over the chunks [(y0 + blockIdx.y) per, (y0 + blockIdx.y + 1) per): each
// chunk's terms in T in index order; the chunks' sums in double from 0 in chunk order within each slice of
// kSliceChunks, the slices' sums in double from 0 in order. per = every chunk: the point's sum; per = 1: one chunk's,
// which screened_finish_kernel adds in the same order, so the bits are the same.
template <class T>
__global__ void __launch_bounds__(kBlock) screened_kernel(Planes<T> c, int64_t n, const double *__restrict__ xyz,
                                                          int64_t y0, int64_t per, int64_t stride,
                                                          double *__restrict__ out) {
    __shared__ Quad<T> sh[2 * kBlock];
    const int64_t m = c.m, i = blockIdx.x * static_cast<int64_t>(kBlock) + threadIdx.x;
    const T *x = c.c, *y = x + m, *z = y + m, *q = z + m, *a = q + m, *b = a + m, *cut2 = b + m;
    const T px = i < n ? static_cast<T>(xyz[3 * i]) : T(0), py = i < n ? static_cast<T>(xyz[3 * i + 1]) : T(0),
            pz = i < n ? static_cast<T>(xyz[3 * i + 2]) : T(0);
    const int64_t c0 = (y0 + blockIdx.y) * per * kChunk, c1 = c0 + per * kChunk < m ? c0 + per * kChunk : m;
    double acc = 0, slice = 0;
    for (int64_t b0 = c0; b0 < c1; b0 += kChunk) {
        const int64_t e = b0 + kChunk < c1 ? b0 + kChunk : c1;
        T v = 0;
        for (int64_t t0 = b0; t0 < e; t0 += kBlock) {
            load_screened_tile<T>(x, y, z, q, a, b, cut2, t0, e, sh);
            const int cnt = static_cast<int>(e - t0 < kBlock ? e - t0 : kBlock);
#pragma unroll kUnroll
            for (int j = 0; j < cnt; ++j) v += screened_term<T>(c.kind, px, py, pz, sh[2 * j], sh[2 * j + 1]);
        }
        slice += static_cast<double>(v);
        if ((b0 / kChunk + 1) % kSliceChunks == 0 || b0 + kChunk >= c1) acc += slice, slice = 0;
    }
    if (i < n) out[i * stride + blockIdx.y] = acc;
}

// out[i] = point i's chunk sums part[i chunks + k] added as screened_kernel adds them, a warp a point: lane l adds the
// chunks of slices l, l + 32, ... (their loads side by side), then every lane adds the slices' sums in order (the same
// additions in each lane). A thread adding every chunk would wait on its loads one group after another.
__global__ void screened_finish_kernel(int64_t n, int64_t chunks, const double *__restrict__ part,
                                       double *__restrict__ out) {
    const int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (i >= n) return;  // the warp's lanes all leave or all stay
    const double *p = part + i * chunks;
    const int64_t slices = (chunks + kSliceChunks - 1) / kSliceChunks;
    double acc = 0;
    for (int64_t s0 = 0; s0 < slices; s0 += 32) {
        double slice = 0;
        if (s0 + lane < slices) {
            const int64_t k0 = (s0 + lane) * kSliceChunks;
            const int cnt = chunks - k0 < kSliceChunks ? static_cast<int>(chunks - k0) : kSliceChunks;
            double v[kSliceChunks];
#pragma unroll
            for (int j = 0; j < kSliceChunks; ++j) v[j] = j < cnt ? p[k0 + j] : 0.0;
#pragma unroll
            for (int j = 0; j < kSliceChunks; ++j)
                if (j < cnt) slice += v[j];
        }
        const int cnt = slices - s0 < 32 ? static_cast<int>(slices - s0) : 32;
        for (int j = 0; j < cnt; ++j) acc += __shfl_sync(0xffffffffu, slice, j);
    }
    if (lane == 0) out[i] = acc;
}

unsigned blocks(int64_t n, int64_t per) { return static_cast<unsigned>((n + per - 1) / per); }

template <class T>
class ScreenedCuda final : public ScreenedTerm {
public:
    ScreenedCuda(const ScreenedCharges &c, int device) : m_(c.n) {
        if (device >= 0) dev_ = device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        DeviceScope scope(dev_);
        try {
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            std::vector<T> planes;
            planes.reserve(7 * static_cast<size_t>(m_));
            for (const std::vector<double> *v : {&c.x, &c.y, &c.z, &c.q, &c.a, &c.b, &c.cut2})
                for (double e : *v) planes.push_back(static_cast<T>(e));
            charges_.ensure(std::max<size_t>(planes.size(), 1), "screened charges");
            check(cudaMemcpy(charges_.p, planes.data(), planes.size() * sizeof(T), cudaMemcpyHostToDevice),
                  "cudaMemcpy (screened charges)");
            planes_ = Planes<T>{charges_.p, m_, c.kind};
            int sms = 0, per_sm = 0;
            check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_), "cudaDeviceGetAttribute");
            check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, screened_kernel<T>, kBlock, 0),
                  "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
            wave_ = static_cast<int64_t>(sms) * std::max(per_sm, 1);
        } catch (...) {
            release();
            throw;
        }
    }
    ~ScreenedCuda() override {
        DeviceScope scope(dev_);
        if (stream_) cudaStreamSynchronize(stream_);
        release();
    }
    int start(int64_t n, const double *xyz) override {
        DeviceScope scope(dev_);
        xyz_host_.ensure(static_cast<size_t>(std::max<int64_t>(3 * n, 1)), "screened points");
        out_host_.ensure(static_cast<size_t>(std::max<int64_t>(n, 1)), "screened results");
        xyz_dev_.ensure(static_cast<size_t>(std::max<int64_t>(3 * n, 1)), "screened points");
        std::copy(xyz, xyz + 3 * n, xyz_host_.p);
        check(cudaMemcpyAsync(xyz_dev_.p, xyz_host_.p, static_cast<size_t>(3 * n) * sizeof(double),
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (screened points)");
        const int64_t chunks = (m_ + kChunk - 1) / kChunk;
        // Points a round of the chunks' launch: their partial sums within kPartBytes (a round is at least a block).
        const int64_t round =
            std::max<int64_t>(kBlock, kPartBytes / (8 * std::max<int64_t>(chunks, 1)) / kBlock * kBlock);
        if (chunks <= 1 || static_cast<int64_t>(blocks(n, kBlock)) >= wave_) {
            // The points' blocks fill the GPU: each takes every chunk. Results go to mapped host memory (no copy back).
            if (n > 0)
                screened_kernel<T><<<blocks(n, kBlock), kBlock, 0, stream_>>>(planes_, n, xyz_dev_.p, 0,
                                                                            std::max<int64_t>(chunks, 1), 1,
                                                                            out_host_.dev);
        } else {
            part_.ensure(static_cast<size_t>(chunks * std::min(n, round)), "screened partial sums");
            for (int64_t r = 0; r < n; r += round) {
                const int64_t nr = std::min(round, n - r);
                for (int64_t y0 = 0; y0 < chunks; y0 += kMaxGridY) {
                    const dim3 grid(blocks(nr, kBlock), static_cast<unsigned>(std::min(kMaxGridY, chunks - y0)));
                    screened_kernel<T><<<grid, kBlock, 0, stream_>>>(planes_, nr, xyz_dev_.p + 3 * r, y0, 1, chunks,
                                                                     part_.p + y0);
                }
                screened_finish_kernel<<<blocks(32 * nr, kBlock), kBlock, 0, stream_>>>(nr, chunks, part_.p,
                                                                                        out_host_.dev + r);
            }
        }
        check(cudaGetLastError(), "screened kernel launch");
        return QMMM_SUCCESS;
    }
    int finish(int64_t n, double *u) override {
        DeviceScope scope(dev_);
        check(cudaStreamSynchronize(stream_), "screened kernel (cudaStreamSynchronize)");
        for (int64_t p = 0; p < n; ++p) u[p] += out_host_.p[p];
        return QMMM_SUCCESS;
    }

private:
    void release() {
        charges_.release(), xyz_dev_.release(), part_.release();
        xyz_host_.release(), out_host_.release();
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
    }

    int64_t m_;
    int dev_ = 0;
    int64_t wave_ = 1;  // blocks of screened_kernel the device holds at once (its SMs x the kernel's occupancy)
    cudaStream_t stream_ = nullptr;
    Planes<T> planes_;
    DeviceBuf<T> charges_;
    DeviceBuf<double> xyz_dev_, part_;
    PinnedBuf<double> xyz_host_, out_host_;
};

class ScreenedGpuImpl final : public ScreenedGpu {
public:
    std::unique_ptr<ScreenedTerm> make(const ScreenedCharges &c, int precision, int device) const override {
        if (precision == QMMM_PRECISION_SINGLE) return std::make_unique<ScreenedCuda<float>>(c, device);
        return std::make_unique<ScreenedCuda<double>>(c, device);
    }
};
const ScreenedGpuImpl impl;
const GpuRegistry<ScreenedGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
