// pol_gpu.cu -- the induced-dipole solver's products y = B x = alpha^-1 x - T x on the GPU (the CPU's is apply_b in
// src_cxx/pol/pol_solver.cpp; the Thole factors are pol_shared.hpp's). The conjugate-gradient loop stays on the host
// (its dot products in site order, as on the CPU); each product copies x in and y out.
//
// One thread a row (a polarizable site k): the block loads tiles of the other sites (position, Thole scale, x) into
// shared memory, and every thread sums them in index order, skipping itself and its exclusions (sorted: a pointer that
// advances with m). In double, no atomics: the same bits for the same x, run after run.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core_gpu.cuh"
#include "pol_shared.hpp"
#include "pol_solver.hpp"

namespace qmmm::cuda {
namespace {

constexpr int kThreads = 128;

// Planes of np values: px, py, pz, s6. alpha_inv: 6 per site; excl_start (np + 1) and excl: the exclusions among
// polarizable sites in compact indices, sorted per site. x, y: 3 per site.
template <bool Damp>
__global__ void __launch_bounds__(kThreads)
    product_kernel(int64_t np, const double *__restrict__ planes, const double *__restrict__ alpha_inv,
                   const int64_t *__restrict__ excl_start, const int64_t *__restrict__ excl, double a,
                   const double *__restrict__ x, double *__restrict__ y) {
    __shared__ double tile[7][kThreads];  // x y z s6 and the dipole's x y z
    const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    const bool live = k < np;
    const double *px = planes, *py = planes + np, *pz = planes + 2 * np, *s6 = planes + 3 * np;
    const double xi = live ? px[k] : 0.0, yi = live ? py[k] : 0.0, zi = live ? pz[k] : 0.0;
    const double ak = live ? a * s6[k] : 0.0;
    int64_t e = live ? excl_start[k] : 0;
    const int64_t e_end = live ? excl_start[k + 1] : 0;
    double ex = 0, ey = 0, ez = 0;
    for (int64_t base = 0; base < np; base += kThreads) {
        const int64_t m = base + threadIdx.x;
        const bool in = m < np;
        tile[0][threadIdx.x] = in ? px[m] : 0.0;
        tile[1][threadIdx.x] = in ? py[m] : 0.0;
        tile[2][threadIdx.x] = in ? pz[m] : 0.0;
        tile[3][threadIdx.x] = in ? s6[m] : 0.0;
        tile[4][threadIdx.x] = in ? x[3 * m] : 0.0;
        tile[5][threadIdx.x] = in ? x[3 * m + 1] : 0.0;
        tile[6][threadIdx.x] = in ? x[3 * m + 2] : 0.0;
        __syncthreads();
        const int cnt = static_cast<int>(min(static_cast<int64_t>(kThreads), np - base));
        if (live)
            for (int j = 0; j < cnt; ++j) {
                const int64_t mm = base + j;
                if (mm == k) continue;
                if (e < e_end && excl[e] == mm) {
                    ++e;
                    continue;
                }
                const double dx = xi - tile[0][j], dy = yi - tile[1][j], dz = zi - tile[2][j];
                const double r2 = dx * dx + dy * dy + dz * dz;
                const double rinv = 1.0 / sqrt(r2);
                double rinv3 = rinv * rinv * rinv;
                const double xs = tile[4][j], ys = tile[5][j], zs = tile[6][j];
                double t = 3.0 * (dx * xs + dy * ys + dz * zs) * rinv3 * rinv * rinv;
                if (Damp) {
                    double fe, ft;
                    thole(ak * r2 * rinv * tile[3][j], fe, ft);
                    t *= ft;
                    rinv3 *= fe;
                }
                ex += t * dx - xs * rinv3;
                ey += t * dy - ys * rinv3;
                ez += t * dz - zs * rinv3;
            }
        __syncthreads();
    }
    if (!live) return;
    const double *ai = alpha_inv + 6 * k, *xk = x + 3 * k;
    y[3 * k] = ai[0] * xk[0] + ai[1] * xk[1] + ai[2] * xk[2] - ex;
    y[3 * k + 1] = ai[1] * xk[0] + ai[3] * xk[1] + ai[4] * xk[2] - ey;
    y[3 * k + 2] = ai[2] * xk[0] + ai[4] * xk[1] + ai[5] * xk[2] - ez;
}

class PolCuda final : public PolProduct {
public:
    PolCuda(const PolSystem &s, int device)
        : np_(static_cast<int64_t>(s.pol_site.size())), damp_(s.opt.damp_induced != 0), a_(s.opt.damping_induced) {
        if (device >= 0) dev_ = device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        DeviceScope scope(dev_);
        try {
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            std::vector<double> planes;
            planes.reserve(4 * static_cast<size_t>(np_));
            for (const std::vector<double> *v : {&s.px, &s.py, &s.pz, &s.s6})
                planes.insert(planes.end(), v->begin(), v->end());
            upload(planes_, planes.data(), planes.size(), "polarizable sites");
            upload(alpha_inv_, s.alpha_inv.data(), s.alpha_inv.size(), "inverse polarizabilities");
            upload(excl_start_, s.pexcl_start.data(), s.pexcl_start.size(), "exclusions");
            excl_.ensure(std::max<size_t>(1, s.pexcl.size()), "exclusions");
            if (!s.pexcl.empty())
                check(cudaMemcpy(excl_.p, s.pexcl.data(), s.pexcl.size() * sizeof(int64_t), cudaMemcpyHostToDevice),
                      "cudaMemcpy (exclusions)");
            x_.ensure(static_cast<size_t>(3 * np_), "dipoles");
            y_.ensure(static_cast<size_t>(3 * np_), "products");
        } catch (...) {
            release();
            throw;
        }
    }
    ~PolCuda() override {
        DeviceScope scope(dev_);
        if (stream_) cudaStreamSynchronize(stream_);
        release();
    }
    void apply(const double *x, double *y) override {
        DeviceScope scope(dev_);
        const size_t bytes = static_cast<size_t>(3 * np_) * sizeof(double);
        check(cudaMemcpyAsync(x_.p, x, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (dipoles)");
        const unsigned blocks = static_cast<unsigned>((np_ + kThreads - 1) / kThreads);
        if (damp_)
            product_kernel<true><<<blocks, kThreads, 0, stream_>>>(np_, planes_.p, alpha_inv_.p, excl_start_.p,
                                                                   excl_.p, a_, x_.p, y_.p);
        else
            product_kernel<false><<<blocks, kThreads, 0, stream_>>>(np_, planes_.p, alpha_inv_.p, excl_start_.p,
                                                                    excl_.p, a_, x_.p, y_.p);
        check(cudaGetLastError(), "dipole product kernel launch");
        check(cudaMemcpyAsync(y, y_.p, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (products)");
        check(cudaStreamSynchronize(stream_), "dipole product kernel (cudaStreamSynchronize)");
    }

private:
    template <class T>
    static void upload(DeviceBuf<T> &b, const T *h, size_t n, const char *what) {
        b.ensure(std::max<size_t>(1, n), what);
        if (n) check(cudaMemcpy(b.p, h, n * sizeof(T), cudaMemcpyHostToDevice), what);
    }
    void release() {
        planes_.release(), alpha_inv_.release(), excl_start_.release(), excl_.release(), x_.release(), y_.release();
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
    }

    int64_t np_;
    bool damp_;
    double a_;
    int dev_ = 0;
    cudaStream_t stream_ = nullptr;
    DeviceBuf<double> planes_, alpha_inv_, x_, y_;
    DeviceBuf<int64_t> excl_start_, excl_;
};

class PolGpuImpl final : public PolGpu {
public:
    std::unique_ptr<PolProduct> make(const PolSystem &s, int device) const override {
        return std::make_unique<PolCuda>(s, device);
    }
};
const PolGpuImpl impl;
const GpuRegistry<PolGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
