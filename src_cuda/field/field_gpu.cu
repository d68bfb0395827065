// field_gpu.cu -- the CUDA backend of the embedding field (host side; kernels in field_gpu_kernels.cu): device layout at create, per
// handle one stream, pinned staging buffers and device buffers grown on demand; the nuclear term is done
// on the host (double, fixed order) while the GPU works.
//
// Paths, chosen by n: n <= kLatencyMaxPoints -> latency path (points in the launch parameters, one kernel,
// results and a sequence flag written straight into mapped pinned host memory, which the host polls:
// one launch, no copies, no stream synchronisation; nuclear term on the host meanwhile); otherwise the
// throughput path (copy in, tile kernel + segment sum with the nuclear term, copy out). A point's value
// depends only on the point, the field, the precision and the path; both paths are bitwise repeatable.
//
// Cells are put in Morton (Z-curve) order at create: a chunk then covers a compact region, so MIXED
// offsets from the chunk origin are small (its float rounding error shrinks accordingly).
//
// Thread safety: as the C API: one handle is used by one thread at a time; handles are independent (own
// stream, buffers and device), so different handles may run on different threads and GPUs at once.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core_gpu.cuh"
#include "error.hpp"
#include "field_backend.hpp"
#include "field_gpu.cuh"

namespace qmmm::cuda {
namespace {

using namespace field;

class FieldCudaBackend final : public FieldBackend {
public:
    FieldCudaBackend(const FieldData &d, const qmmm_options &opt) : precision_(opt.precision) {
        // The device index was checked by the API (check_device).
        if (opt.device >= 0) dev_ = opt.device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        // Tuning only: QMMM_CUDA_TILE=P*1000+G forces the throughput tile shape (results are the same bits).
        if (const char *t = std::getenv("QMMM_CUDA_TILE")) tile_config_ = std::atoi(t);
        DeviceScope scope(dev_);
        try {
            build(d);
        } catch (...) {
            release();
            throw;
        }
    }
    ~FieldCudaBackend() override {
        int saved = -1;
        cudaGetDevice(&saved);
        cudaSetDevice(dev_);
        if (stream_) cudaStreamSynchronize(stream_);
        release();
        if (saved >= 0) cudaSetDevice(saved);
    }

    int backend() const override { return QMMM_BACKEND_CUDA; }
    int precision() const override { return precision_; }
    int device() const override { return dev_; }

    int eval(int64_t n, const double *xyz, double *u) override {
        if (int s = eval_async(n, xyz, u)) return s;
        return wait();
    }

    int eval_async(int64_t n, const double *xyz, double *u) override {
        DeviceScope scope(dev_);
        n_ = n, u_ = u;
        out_.ensure(static_cast<size_t>(n), "results");
        latency_ = cells_.p && n <= kLatencyMaxPoints;
        host_nuclear_ = !cells_.p || latency_;
        if (cells_.p) {
            if (latency_) {
                LatencyPoints lp{};
                std::memcpy(lp.xyz, xyz, static_cast<size_t>(3 * n) * sizeof(double));
                lp.n = static_cast<int>(n);
                ++seq_;
                check(launch_latency(precision_, dc_, lp, lat_part_.p, counter_.p, out_.dev, flag_.dev, seq_, stream_),
                      "latency kernel launch");
            } else {
                const int64_t batch = std::min(n, kMaxBatch);
                xyz_host_.ensure(static_cast<size_t>(3 * n), "points");
                std::memcpy(xyz_host_.p, xyz, static_cast<size_t>(3 * n) * sizeof(double));
                xyz_dev_.ensure(static_cast<size_t>(3 * n), "points");
                seg_part_.ensure(static_cast<size_t>(n_segments_ * batch), "segment partials");
                out_dev_.ensure(static_cast<size_t>(n), "results");
                check(cudaMemcpyAsync(xyz_dev_.p, xyz_host_.p, static_cast<size_t>(3 * n) * sizeof(double),
                                      cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (points)");
                for (int64_t b = 0; b < n; b += batch) {
                    const int64_t m = std::min(batch, n - b);
                    check(launch_throughput(precision_, dc_, chunks_per_segment_, n_segments_, m, xyz_dev_.p + 3 * b,
                                            seg_part_.p, out_dev_.p + b, tile_config_, stream_), "throughput kernel launch");
                }
                check(cudaMemcpyAsync(out_.p, out_dev_.p, static_cast<size_t>(n) * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (results)");
            }
        }
        if (host_nuclear_) {  // few points: on the host while the GPU works
            nuc_.assign(static_cast<size_t>(n), 0.0);
            add_nuclear_term(nuclei_, n, xyz, nuc_.data());
        }
        return QMMM_SUCCESS;
    }

    int wait() override {
        DeviceScope scope(dev_);
        if (latency_) poll();
        else check(cudaStreamSynchronize(stream_), "field kernels (cudaStreamSynchronize)");
        if (!host_nuclear_) {
            std::memcpy(u_, out_.p, static_cast<size_t>(n_) * sizeof(double));
        } else {
            // u = electron + (-nuclear): bitwise what u -= nuclear gives.
            for (int64_t p = 0; p < n_; ++p) u_[p] = (cells_.p ? out_.p[p] : 0.0) + nuc_[p];
        }
        return QMMM_SUCCESS;
    }

private:
    // Spins on the flag the latency kernel writes last; asks the stream now and then so that a failed
    // kernel (which never writes the flag) becomes an error instead of a hang.
    void poll() {
        const volatile unsigned *flag = flag_.p;
        auto next_query = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        while (*flag != seq_) {
            if (std::chrono::steady_clock::now() < next_query) continue;
            const cudaError_t e = cudaStreamQuery(stream_);
            if (e == cudaErrorNotReady) {
                next_query = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
                continue;
            }
            check(e, "latency kernel (cudaStreamQuery)");
            if (*flag != seq_) throw Error(QMMM_ERR_INTERNAL, "latency kernel finished without writing its result flag");
        }
        std::atomic_thread_fence(std::memory_order_acquire);
    }

    void build(const FieldData &d) {
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        nuclei_.n_nuclei = d.n_nuclei, nuclei_.nuc_xyz = d.nuc_xyz, nuclei_.nuc_z = d.nuc_z;
        out_.ensure(kLatencyMaxPoints, "results");
        flag_.ensure(1, "result flag");
        *flag_.p = seq_;
        if (d.n_nuclei) {
            std::vector<Cell64> h(static_cast<size_t>(d.n_nuclei));
            for (int64_t b = 0; b < d.n_nuclei; ++b)
                h[b] = Cell64{d.nuc_xyz[3 * b], d.nuc_xyz[3 * b + 1], d.nuc_xyz[3 * b + 2], d.nuc_z[b]};
            nuc_dev_.ensure(h.size() * 4, "nuclei");
            check(cudaMemcpy(nuc_dev_.p, h.data(), h.size() * sizeof(Cell64), cudaMemcpyHostToDevice), "cudaMemcpy (nuclei)");
            dc_.nuclei = nuc_dev_.p, dc_.n_nuclei = d.n_nuclei;
        }
        const int64_t nc = (d.n_cells + kChunk - 1) / kChunk;
        if (nc == 0) return;
        const size_t padded = static_cast<size_t>(nc * kChunk);
        std::vector<double> origin(3 * static_cast<size_t>(nc), 0.0);
        if (precision_ == QMMM_PRECISION_MIXED) {
            // The CPU backend's layout (field_mixed_cells: the same float data, so the same answer), padding
            // at 1e15 (d2 stays finite in float: the Newton step of mixed_term needs that).
            MixedCells m = field_mixed_cells(d, kChunk, kMixedFar);
            origin = std::move(m.origin);
            std::vector<MixedCell> h(padded);
            std::vector<Cell64> h64(padded);
            for (size_t i = 0; i < padded; ++i) {
                h[i] = MixedCell{float4{m.x[i], m.y[i], m.z[i], m.q[i]}, float4{m.xl[i], m.yl[i], m.zl[i], 0.0f}};
                h64[i] = Cell64{m.xd[i], m.yd[i], m.zd[i], m.qd[i]};
            }
            upload(h);
            cells64_.ensure(4 * padded, "cells (double copy)");
            check(cudaMemcpy(cells64_.p, h64.data(), padded * sizeof(Cell64), cudaMemcpyHostToDevice), "cudaMemcpy (cells64)");
            dc_.cells64 = reinterpret_cast<const Cell64 *>(cells64_.p);
        } else {
            const std::vector<int64_t> order = field_morton_order(d, kChunk);
            auto X = [&](int64_t m, int k) { return d.cell_xyz[3 * order[m] + k]; };
            if (precision_ == QMMM_PRECISION_DOUBLE) {
                // Padding far away but inside the float seed's range (see chunk_fast).
                std::vector<Cell64> h(padded, Cell64{1e15, 1e15, 1e15, 0.0});
                for (int64_t m = 0; m < d.n_cells; ++m) h[m] = Cell64{X(m, 0), X(m, 1), X(m, 2), d.cell_q[order[m]]};
                upload(h);
            } else {
                std::vector<float4> h(padded, float4{1e30f, 1e30f, 1e30f, 0.0f});
                for (int64_t m = 0; m < d.n_cells; ++m)
                    h[m] = float4{static_cast<float>(X(m, 0)), static_cast<float>(X(m, 1)), static_cast<float>(X(m, 2)),
                                  static_cast<float>(d.cell_q[order[m]])};
                upload(h);
            }
        }
        origin_.ensure(origin.size(), "chunk origins");
        check(cudaMemcpy(origin_.p, origin.data(), origin.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (origins)");
        lat_part_.ensure(static_cast<size_t>(kLatencyMaxPoints * nc), "latency partials");
        counter_.ensure(1, "block counter");
        check(cudaMemset(counter_.p, 0, sizeof(unsigned)), "cudaMemset (block counter)");
        // Segments depend on M only, so a point's value never depends on how many points come with it.
        chunks_per_segment_ = static_cast<int>((nc + kMaxSegments - 1) / kMaxSegments);
        n_segments_ = static_cast<int>((nc + chunks_per_segment_ - 1) / chunks_per_segment_);
        dc_.cells = cells_.p, dc_.origin = origin_.p, dc_.n_chunks = nc, dc_.self = d.cell_self_inv_r;
        check(cudaDeviceSynchronize(), "field upload");
    }

    template <class T>
    void upload(const std::vector<T> &h) {
        const size_t bytes = h.size() * sizeof(T);
        cells_.ensure((bytes + 15) / 16, "cells");
        check(cudaMemcpy(cells_.p, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (cells)");
    }

    void release() {
        cells_.release(), cells64_.release(), origin_.release(), nuc_dev_.release(), flag_.release(), lat_part_.release(), counter_.release(), seg_part_.release();
        xyz_dev_.release(), out_dev_.release(), out_.release(), xyz_host_.release();
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
    }

    int precision_;
    int dev_ = 0;
    cudaStream_t stream_ = nullptr;
    FieldData nuclei_;
    DeviceCells dc_;
    int chunks_per_segment_ = 1, n_segments_ = 1;
    DeviceBuf<float4> cells_;  // raw storage; Cell64 for DOUBLE (float4 units keep the 16-byte alignment)
    DeviceBuf<double> nuc_dev_, cells64_;
    PinnedBuf<unsigned> flag_;
    unsigned seq_ = 0;
    int tile_config_ = 0;
    bool latency_ = false, host_nuclear_ = true;
    DeviceBuf<double> origin_, lat_part_, seg_part_, xyz_dev_, out_dev_;
    DeviceBuf<unsigned> counter_;
    PinnedBuf<double> out_, xyz_host_;
    std::vector<double> nuc_;
    int64_t n_ = 0;
    double *u_ = nullptr;
};

}  // namespace

namespace {
class FieldGpuImpl final : public FieldGpu {
public:
    std::unique_ptr<FieldBackend> make(const FieldData &d, const qmmm_options &opt) const override {
        return std::make_unique<FieldCudaBackend>(d, opt);
    }
};
const FieldGpuImpl impl;
const GpuRegistry<FieldGpu>::Registration registration(impl);
}  // namespace

}  // namespace qmmm::cuda
