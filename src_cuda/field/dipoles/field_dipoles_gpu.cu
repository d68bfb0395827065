// field_dipoles_gpu.cu -- point dipoles' term on the GPU (the CPU twin is DipoleCpu in
// src_cxx/field/dipoles/field_dipoles.cpp; the pair term is field_dipoles_shared.hpp's, so both agree to rounding).
// The sites are cut into fixed slices of kSlice (by index, whatever the batch): a block takes kThreads points and one
// slice, loads the slice's sites into shared memory tile by tile, and every thread sums them in index order (the
// gradient only where asked for); a second kernel adds each point's slices in slice order, in double. T is double
// for DOUBLE and MIXED; float for SINGLE (offsets from the sites' origin, float sums within a slice, as the CPU's).
// So a point's value is the same bits whatever the batch, no atomics (the flag of a point on a site is a plain store
// of 1), and a few thousand points still fill the device (8,192 points and 10^4 sites: 2,560 blocks).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>

#include "core_gpu.cuh"
#include "dipoles/field_dipoles.hpp"
#include "dipoles/field_dipoles_shared.hpp"

namespace qmmm::cuda {
namespace {

constexpr int kThreads = 128;
// Sites a block sums. 256 gives 8,192 points on 10^4 sites 2,560 blocks (about 20 per SM on the H200's 132), where
// 1,024 gave 640 and left the double units waiting on latency.
constexpr int64_t kSlice = kDipoleSlice;
constexpr int64_t kPartialDoubles = 1 << 22;  // the slices' partial sums of one launch, at most (32 MB)

// Sites as six planes of m values of T: x, y, z (SINGLE: offsets from o), mu_x, mu_y, mu_z. part: per slice W
// doubles a point (U, then with GRAD dU/dx, dU/dy, dU/dz) of the n points; *near is set to 1 when a point is within
// the singular radius of a site (that pair adds nothing; SINGLE also writes NaN for the point, so that the host
// finds it and recomputes it in double). Without GRAD the gradient is not formed: U's operations are the same, so
// its bits too.
template <class T, bool GRAD>
__global__ void __launch_bounds__(kThreads) dipole_slice_kernel(int64_t m, const T *__restrict__ s, int64_t n,
                                                                const double *__restrict__ xyz, double3 o,
                                                                double *__restrict__ part, int *__restrict__ near) {
    constexpr int W = GRAD ? 4 : 1;
    constexpr bool kSingle = std::is_same<T, float>::value;
    __shared__ T tile[6][kThreads];
    const int64_t p = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    const int64_t k0 = static_cast<int64_t>(blockIdx.y) * kSlice, k1 = min(m, k0 + kSlice);
    const bool live = p < n;
    // DOUBLE and MIXED: the point as given (o is 0 and unused); SINGLE: its offset from o, rounded once to float.
    T px = 0, py = 0, pz = 0;
    if (live) {
        if constexpr (kSingle)
            px = static_cast<T>(xyz[3 * p] - o.x), py = static_cast<T>(xyz[3 * p + 1] - o.y),
            pz = static_cast<T>(xyz[3 * p + 2] - o.z);
        else
            px = xyz[3 * p], py = xyz[3 * p + 1], pz = xyz[3 * p + 2];
    }
    T u = 0, gx = 0, gy = 0, gz = 0;
    int on = 0;
    for (int64_t base = k0; base < k1; base += kThreads) {
        const int64_t k = base + threadIdx.x;
        for (int c = 0; c < 6; ++c) tile[c][threadIdx.x] = k < k1 ? s[c * m + k] : T(0);
        __syncthreads();
        const int cnt = static_cast<int>(min(static_cast<int64_t>(kThreads), k1 - base));
        for (int j = 0; j < cnt; ++j) {
            const T dx = px - tile[0][j], dy = py - tile[1][j], dz = pz - tile[2][j];
            const T d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < T(kSingularRadius2)) {
                on = 1;
                continue;
            }
            // rsqrt: within an ulp (double; float's rsqrtf two) of the CPU's correctly rounded 1 / sqrt, at a
            // fraction of sqrt and a division.
            if constexpr (GRAD) dipole_pair(dx, dy, dz, rsqrt(d2), tile[3][j], tile[4][j], tile[5][j], u, gx, gy, gz);
            else dipole_pair_u(dx, dy, dz, rsqrt(d2), tile[3][j], tile[4][j], tile[5][j], u);
        }
        __syncthreads();
    }
    if (!live) return;
    if constexpr (kSingle)
        if (on) u = T(NAN);
    double *out = part + static_cast<int64_t>(blockIdx.y) * W * n + W * p;
    out[0] = u;
    if constexpr (GRAD) out[1] = gx, out[2] = gy, out[3] = gz;
    if (on) *near = 1;
}

// out[p * W + c] = the point's slices added in slice order (the first taken as it is); *near for a sum not finite.
__global__ void dipole_join_kernel(int64_t values, int64_t slices, const double *__restrict__ part,
                                   double *__restrict__ out, int *__restrict__ near) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= values) return;
    double v = part[i];
    for (int64_t sl = 1; sl < slices; ++sl) v += part[sl * values + i];
    out[i] = v;
    if (!isfinite(v)) *near = 1;
}

// T: the kernels' type (double: DOUBLE and MIXED; float: SINGLE).
template <class T>
class DipoleCuda final : public DipoleKernels {
public:
    DipoleCuda(const std::vector<double> &xyz, int device) : m_(static_cast<int64_t>(xyz.size() / 3)) {
        if ((m_ + kSlice - 1) / kSlice > 65535)  // the slices are the grid's y dimension
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("%lld dipole sites: the GPU takes at most %lld", static_cast<long long>(m_),
                               static_cast<long long>(65535 * kSlice)));
        double origin[3] = {0, 0, 0};
        if (kSingle) dipole_origin(xyz, origin);
        origin_ = make_double3(origin[0], origin[1], origin[2]);
        if (device >= 0) dev_ = device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        DeviceScope scope(dev_);
        try {
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            planes_.ensure(static_cast<size_t>(6 * m_), "dipole sites");
            mu_host_.ensure(static_cast<size_t>(3 * m_), "dipoles");
            std::vector<T> pos(static_cast<size_t>(3 * m_));
            for (int64_t k = 0; k < m_; ++k)
                for (int c = 0; c < 3; ++c) pos[c * m_ + k] = static_cast<T>(xyz[3 * k + c] - origin[c]);
            check(cudaMemcpy(planes_.p, pos.data(), pos.size() * sizeof(T), cudaMemcpyHostToDevice),
                  "cudaMemcpy (dipole sites)");
            flag_.ensure(1, "dipole flag");
        } catch (...) {
            release();
            throw;
        }
    }
    ~DipoleCuda() override {
        DeviceScope scope(dev_);
        if (stream_) cudaStreamSynchronize(stream_);
        release();
    }
    void set_mu(const double *mu) override {
        DeviceScope scope(dev_);
        check(cudaStreamSynchronize(stream_), "dipoles (cudaStreamSynchronize)");  // the last copy has left mu_host_
        for (int64_t k = 0; k < m_; ++k)
            for (int c = 0; c < 3; ++c) mu_host_.p[c * m_ + k] = static_cast<T>(mu[3 * k + c]);
        check(cudaMemcpyAsync(planes_.p + 3 * m_, mu_host_.p, static_cast<size_t>(3 * m_) * sizeof(T),
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (dipoles)");
    }
    bool add(int64_t n, const double *xyz, double *u, double *grad, char *bad) override {
        DeviceScope scope(dev_);
        check(cudaStreamSynchronize(stream_), "dipoles (cudaStreamSynchronize)");  // buffers free to grow
        xyz_host_.ensure(static_cast<size_t>(3 * n), "dipole points");
        out_host_.ensure(static_cast<size_t>(4 * n + 1), "dipole results");  // + the flag
        xyz_dev_.ensure(static_cast<size_t>(3 * n), "dipole points");
        out_dev_.ensure(static_cast<size_t>(4 * n), "dipole results");
        std::copy(xyz, xyz + 3 * n, xyz_host_.p);
        check(cudaMemsetAsync(flag_.p, 0, sizeof(int), stream_), "cudaMemsetAsync (dipole flag)");
        check(cudaMemcpyAsync(xyz_dev_.p, xyz_host_.p, static_cast<size_t>(3 * n) * sizeof(double),
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (dipole points)");
        const int64_t slices = (m_ + kSlice - 1) / kSlice;
        const int w = grad ? 4 : 1;  // doubles a point: U, then the gradient
        // Points a launch takes: the slices' partial sums within kPartialDoubles, whole blocks.
        const int64_t batch = std::max<int64_t>(kThreads, kPartialDoubles / (w * slices) / kThreads * kThreads);
        part_.ensure(static_cast<size_t>(w * slices * std::min(n, batch)), "dipole partial sums");
        for (int64_t b = 0; b < n; b += batch) {
            const int64_t nb = std::min(batch, n - b);
            const dim3 grid(static_cast<unsigned>((nb + kThreads - 1) / kThreads), static_cast<unsigned>(slices));
            if (grad)
                dipole_slice_kernel<T, true><<<grid, kThreads, 0, stream_>>>(m_, planes_.p, nb, xyz_dev_.p + 3 * b,
                                                                             origin_, part_.p, flag_.p);
            else
                dipole_slice_kernel<T, false><<<grid, kThreads, 0, stream_>>>(m_, planes_.p, nb, xyz_dev_.p + 3 * b,
                                                                              origin_, part_.p, flag_.p);
            const unsigned join_blocks = static_cast<unsigned>((w * nb + 255) / 256);
            dipole_join_kernel<<<join_blocks, 256, 0, stream_>>>(w * nb, slices, part_.p, out_dev_.p + w * b, flag_.p);
        }
        check(cudaGetLastError(), "dipole kernel launch");
        check(cudaMemcpyAsync(out_host_.p, out_dev_.p, static_cast<size_t>(w * n) * sizeof(double),
                              cudaMemcpyDeviceToHost, stream_),
              "cudaMemcpyAsync (dipole results)");
        check(cudaMemcpyAsync(out_host_.p + w * n, flag_.p, sizeof(int), cudaMemcpyDeviceToHost, stream_),
              "cudaMemcpyAsync (dipole flag)");
        check(cudaStreamSynchronize(stream_), "dipole kernel (cudaStreamSynchronize)");
        int flag = 0;
        std::copy_n(reinterpret_cast<const unsigned char *>(out_host_.p + w * n), sizeof(int),
                    reinterpret_cast<unsigned char *>(&flag));
        for (int64_t p = 0; p < n; ++p) {
            const double *o = out_host_.p + w * p;
            // With bad (SINGLE): a point that is not finite (on a site in float: NaN) is left for the caller.
            if (bad && flag && !(std::isfinite(o[0]) && (!grad || (std::isfinite(o[1]) && std::isfinite(o[2]) &&
                                                                   std::isfinite(o[3]))))) {
                bad[p] = 1;
                continue;
            }
            u[p] += o[0];
            if (grad)
                for (int c = 0; c < 3; ++c) grad[3 * p + c] += o[1 + c];
        }
        return flag == 0;
    }

private:
    static constexpr bool kSingle = std::is_same<T, float>::value;
    void release() {
        planes_.release(), xyz_dev_.release(), out_dev_.release(), part_.release(), flag_.release();
        xyz_host_.release(), out_host_.release(), mu_host_.release();
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
    }

    int64_t m_;
    int dev_ = 0;
    double3 origin_;
    cudaStream_t stream_ = nullptr;
    DeviceBuf<T> planes_;
    DeviceBuf<double> xyz_dev_, out_dev_, part_;
    DeviceBuf<int> flag_;
    PinnedBuf<double> xyz_host_, out_host_;
    PinnedBuf<T> mu_host_;
};

class DipolesGpuImpl final : public DipolesGpu {
public:
    std::unique_ptr<DipoleKernels> make(const std::vector<double> &xyz, int device, int precision) const override {
        if (precision == QMMM_PRECISION_SINGLE) return std::make_unique<DipoleCuda<float>>(xyz, device);
        return std::make_unique<DipoleCuda<double>>(xyz, device);
    }
};
const DipolesGpuImpl impl;
const GpuRegistry<DipolesGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
