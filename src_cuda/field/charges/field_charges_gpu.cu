// field_charges_gpu.cu -- the screened charges' term of a point-charge field on the GPU (the CPU twin is
// ScreenedCpu in src_cxx/field/charges/field_charges.cpp; the pair term is field_charges_shared.hpp's, so both agree to
// rounding). One block per point: its threads stride over the charges, then a fixed-order tree in shared memory
// (no atomics), so a point's value is the same bits whatever the batch.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "backend/field_factory.hpp"
#include "core_gpu.cuh"
#include "charges/field_charges.hpp"

namespace qmmm::cuda {
namespace {

constexpr int kThreads = 256;

// Charges as seven planes of m values: x, y, z, q, a, b, cut2 (field_charges.hpp).
template <class T>
__global__ void __launch_bounds__(kThreads) screened_kernel(int64_t m, int kind, const T *__restrict__ c,
                                                            const double *__restrict__ xyz, double *__restrict__ out) {
    __shared__ T part[kThreads];
    const int64_t p = blockIdx.x;
    const T px = static_cast<T>(xyz[3 * p]), py = static_cast<T>(xyz[3 * p + 1]), pz = static_cast<T>(xyz[3 * p + 2]);
    const T *x = c, *y = c + m, *z = c + 2 * m, *q = c + 3 * m, *a = c + 4 * m, *b = c + 5 * m, *cut2 = c + 6 * m;
    T acc = 0;
    for (int64_t i = threadIdx.x; i < m; i += kThreads) {
        const T dx = px - x[i], dy = py - y[i], dz = pz - z[i];
        const T d2 = dx * dx + dy * dy + dz * dz;
        const T inv = d2 >= cut2[i] ? T(1) / sqrt(d2) : screened_inv_r_xyz<T>(kind, dx, dy, dz, a[i], b[i]);
        acc += q[i] * inv;
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[p] = static_cast<double>(part[0]);
}

template <class T>
class ScreenedCuda final : public ScreenedTerm {
public:
    ScreenedCuda(const ScreenedCharges &c, int device) : kind_(c.kind), m_(c.n) {
        if (device >= 0) dev_ = device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        DeviceScope scope(dev_);
        try {
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            std::vector<T> planes;
            planes.reserve(7 * static_cast<size_t>(m_));
            for (const std::vector<double> *v : {&c.x, &c.y, &c.z, &c.q, &c.a, &c.b, &c.cut2})
                for (double e : *v) planes.push_back(static_cast<T>(e));
            charges_.ensure(planes.size(), "screened charges");
            check(cudaMemcpy(charges_.p, planes.data(), planes.size() * sizeof(T), cudaMemcpyHostToDevice),
                  "cudaMemcpy (screened charges)");
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
        xyz_host_.ensure(static_cast<size_t>(3 * n), "screened points");
        out_host_.ensure(static_cast<size_t>(n), "screened results");
        xyz_dev_.ensure(static_cast<size_t>(3 * n), "screened points");
        out_dev_.ensure(static_cast<size_t>(n), "screened results");
        std::copy(xyz, xyz + 3 * n, xyz_host_.p);
        check(cudaMemcpyAsync(xyz_dev_.p, xyz_host_.p, static_cast<size_t>(3 * n) * sizeof(double),
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (screened points)");
        for (int64_t b = 0; b < n; b += kMaxGrid) {  // grid.x limit
            const int64_t nb = std::min<int64_t>(kMaxGrid, n - b);
            screened_kernel<T><<<static_cast<unsigned>(nb), kThreads, 0, stream_>>>(m_, kind_, charges_.p,
                                                                                    xyz_dev_.p + 3 * b, out_dev_.p + b);
        }
        check(cudaGetLastError(), "screened kernel launch");
        check(cudaMemcpyAsync(out_host_.p, out_dev_.p, static_cast<size_t>(n) * sizeof(double), cudaMemcpyDeviceToHost,
                              stream_),
              "cudaMemcpyAsync (screened results)");
        return QMMM_SUCCESS;
    }
    int finish(int64_t n, double *u) override {
        DeviceScope scope(dev_);
        check(cudaStreamSynchronize(stream_), "screened kernel (cudaStreamSynchronize)");
        for (int64_t p = 0; p < n; ++p) u[p] += out_host_.p[p];
        return QMMM_SUCCESS;
    }

private:
    static constexpr int64_t kMaxGrid = 1 << 30;
    void release() {
        charges_.release(), xyz_dev_.release(), out_dev_.release();
        xyz_host_.release(), out_host_.release();
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
    }

    int kind_;
    int64_t m_;
    int dev_ = 0;
    cudaStream_t stream_ = nullptr;
    DeviceBuf<T> charges_;
    DeviceBuf<double> xyz_dev_, out_dev_;
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
