// field_gpu.cu -- the CUDA backend of the embedding field, host side: the device state (layout at create, per handle
// one stream, pinned buffers and device buffers grown on demand) and the dispatch (path by n; tile shape and layout
// from the tuning table, src_cxx/field/direct/field_tuning.hpp). Kernels: field_gpu_kernels.cu (throughput),
// field_latency_gpu_kernels.cu, field_persistent_gpu_kernels.cu.
//
// Paths, chosen by n:
// - n <= kLatencyMaxPoints: the latency path. The points travel in the launch parameters; one block per chunk
//   writes its partials as LL words (field_gpu.cuh) straight into mapped pinned host memory, which the host
//   polls and adds in chunk order: one launch, no copy, no stream synchronisation, no fence or atomic on the
//   GPU; the nuclear term is computed on the host meanwhile.
//   With QMMM_FLAG_LOW_LATENCY the same work is done by a persistent kernel (one block per SM) that waits for
//   the points as LL words in a mapped mailbox: no launch at all.
// - otherwise the throughput path: copy in, tile kernel + segment sum with the nuclear term, copy out. Up to
//   kSmallMaxPoints points (the small-call form) the segment sum writes LL words to mapped host memory that the host
//   polls, as the latency path: no copy out, no stream synchronisation (and on few segments no copy in either: the
//   kernels read the mapped points). The same kernels, so the same bits.
// A point's value depends only on the point, the field, the precision and the path; both are bitwise repeatable
// (the latency kernel and the persistent kernel compute the same bits).
//
// Cells are put in Morton (Z-curve) order at create: a chunk then covers a compact region, so MIXED
// offsets from the chunk origin are small and the quarter spheres (near test) tight.
//
// Thread safety: as the C API: one handle is used by one thread at a time; handles are independent (own
// streams, buffers and device), so different handles may run on different threads and GPUs at once.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core_gpu.cuh"
#include "error.hpp"
#include "backend/field_backend.hpp"
#include "backend/field_factory.hpp"
#include "direct/field_gpu.cuh"
#include "direct/field_layout.hpp"
#include "direct/field_tuning_gpu.cuh"
#include "direct/field_walkers_gpu.cuh"
#include "tuning_env.hpp"

namespace qmmm::cuda {
namespace {

using namespace field;
using Clock = std::chrono::steady_clock;

// Low-latency mode: the persistent kernel ends after this long without a request (so a program that stops
// calling gets its SMs back); the host reuses a running kernel only within half of it, so a request never meets
// a kernel that is timing out.
constexpr unsigned long long kIdleNs = 200'000'000ULL;
constexpr auto kReuseWindow = std::chrono::milliseconds(100);

// The row layout (DeviceCells::rows) of SINGLE (F = float, C2 = float2) or DOUBLE (double, double2) from the rows
// field_rows builds (direct/field_layout.hpp) for cells in Morton order X(m, k), charges Q(m): per chunk the origin,
// per row its head (y, z offsets, first and end slot), per slot (x offset, q) of its cell. SINGLE's origin is the
// centre of the chunk's box, so float offsets round by the chunk's size, not the box's. DOUBLE's is 0: an offset
// rounds by its own size, and a point 1e-3 bohr from a cell would lose ~1e-13 of that term to two offsets rounded by
// the chunk's size (the difference of the absolute coordinates rounds once, as in the tile layout).
template <class F, class C2, class PosFn, class QFn>
void row_words(const FieldRows &r, int64_t n_cells, PosFn X, QFn Q, std::vector<double> &origin,
               std::vector<QuarterInfo> &quarters, std::vector<C2> &cells, std::vector<RowHead<F>> &rows) {
    const size_t padded = static_cast<size_t>(r.n_chunks * kChunk);
    cells.assign(padded, C2{0, 0});  // padding: never in a row
    rows.assign(padded, RowHead<F>{0, 0, 0, 0});
    for (int64_t ch = 0; ch < r.n_chunks; ++ch) {
        const int64_t b = ch * kChunk, e = std::min(n_cells, b + kChunk);
        double *o = &origin[3 * ch];
        for (int k = 0; k < 3 && sizeof(F) == 4; ++k) {  // DOUBLE keeps o = 0
            double lo = X(b, k), hi = lo;
            for (int64_t m = b; m < e; ++m) lo = std::min(lo, X(m, k)), hi = std::max(hi, X(m, k));
            o[k] = 0.5 * (lo + hi);
        }
        for (int g = 0; g < kSub; ++g) {
            const size_t qi = static_cast<size_t>(ch * kSub + g);
            quarters[qi].row_begin = r.quarter_row_begin[qi], quarters[qi].n_rows = r.quarter_rows[qi];
        }
        const int n_rows = r.quarter_row_begin[static_cast<size_t>(ch * kSub + kSub - 1)] +
                           r.quarter_rows[static_cast<size_t>(ch * kSub + kSub - 1)];
        for (int row = 0; row < n_rows; ++row) {
            const size_t at = static_cast<size_t>(b + row);
            const int64_t head = r.cell[static_cast<size_t>(b + r.row_first[at])];
            rows[at] = RowHead<F>{static_cast<F>(X(head, 1) - o[1]), static_cast<F>(X(head, 2) - o[2]), r.row_first[at],
                                  r.row_end[at]};
        }
        for (int64_t slot = b; slot < b + kChunk; ++slot)
            if (const int64_t m = r.cell[static_cast<size_t>(slot)]; m >= 0)
                cells[static_cast<size_t>(slot)] = C2{static_cast<F>(X(m, 0) - o[0]), static_cast<F>(Q(m))};
    }
}

class FieldCudaBackend final : public FieldBackend {
public:
    FieldCudaBackend(const FieldData &d, const qmmm_options &opt)
        : precision_(opt.precision), low_latency_((opt.flags & QMMM_FLAG_LOW_LATENCY) != 0) {
        // The device index was checked by the API (check_device).
        if (opt.device >= 0) dev_ = opt.device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        // Tuning only: QMMM_CUDA_TILE forces the throughput tile shape (results are the same bits). Tuning and tests:
        // QMMM_CUDA_ROWS=0 or 1 keeps the throughput path off or on the row layout, whatever the cells. Parsed and
        // range-checked by tuning_env (a bad value fails the create call).
        forced_tile_ = qmmm::tuning::cuda_tile(kFieldTileShapes, kNumFieldTileShapes);
        rows_mode_ = qmmm::tuning::cuda_rows();
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
        if (ll_running_) stop_persistent();
        if (stream_) cudaStreamSynchronize(stream_);
        if (device_done_) cudaEventSynchronize(device_done_);  // a device-resident call on the caller's stream
        release();
        if (saved >= 0) cudaSetDevice(saved);
    }

    int backend() const override { return QMMM_BACKEND_CUDA; }
    int precision() const override { return precision_; }
    int device() const override { return dev_; }
    // Read from the stream, not from ll_running_: the kernel may have ended on its own (idle timeout).
    void low_latency(int *running, int64_t *launches) const override {
        *running = ll_running_ && cudaStreamQuery(ll_stream_) == cudaErrorNotReady ? 1 : 0;
        *launches = ll_launches_;
    }

    int eval(int64_t n, const double *xyz, double *u) override {
        if (int s = eval_async(n, xyz, u)) return s;
        return wait();
    }

    int eval_async(int64_t n, const double *xyz, double *u) override {
        DeviceScope scope(dev_);
        after_device_calls(stream_);
        n_ = n, u_ = u;
        out_.ensure(static_cast<size_t>(n), "results");
        latency_ = cells_.p && n <= kLatencyMaxPoints;
        small_ = cells_.p && !latency_ && small_calls_ && n <= kSmallMaxPoints;
        host_nuclear_ = !cells_.p || latency_;
        if (latency_ && low_latency_) {
            start_persistent();
            seq_ = ll_next(seq_);
            // One 8-byte store per word (atomic on x86-64): each word is whole, old or new, when the GPU reads it.
            volatile unsigned long long *w = mailbox_.p->w;
            for (int64_t k = 0; k < 3 * n; ++k) {
                unsigned long long bits;
                std::memcpy(&bits, &xyz[k], sizeof bits);
                w[1 + 2 * k] = ll_word(seq_, static_cast<unsigned>(bits));
                w[2 + 2 * k] = ll_word(seq_, static_cast<unsigned>(bits >> 32));
            }
            w[0] = ll_word(seq_, static_cast<unsigned>(n));
            ll_last_ = Clock::now();
        } else if (latency_) {
            LatencyPoints lp{};
            std::memcpy(lp.xyz, xyz, static_cast<size_t>(3 * n) * sizeof(double));
            lp.n = static_cast<int>(n);
            seq_ = ll_next(seq_);
            check(launch_latency(precision_, dc_, lp, lat_out(), seq_, stream_), "latency kernel launch");
        } else if (cells_.p) {
            const int64_t batch = std::min(n, kMaxBatch);
            xyz_host_.ensure(static_cast<size_t>(3 * n), "points");
            std::memcpy(xyz_host_.p, xyz, static_cast<size_t>(3 * n) * sizeof(double));
            xyz_dev_.ensure(static_cast<size_t>(3 * n), "points");
            seg_part_.ensure(static_cast<size_t>(n_segments_ * batch), "segment partials");
            // Where one-quarter blocks meet (SegmentJoin): the tile layout of a precision whose row of the tuning table
            // takes them (the device's row, which launch_throughput is given).
            if (tuning_->quarter_blocks && !dc_.rows) {
                const size_t qp = static_cast<size_t>(n_segments_ * quarter_points(batch));
                join_totals_.ensure(kSub * qp, "quarter totals");
                if (join_counts_.n < qp / 32) {  // new counters start at zero; every launch leaves them so
                    join_counts_.ensure(qp / 32, "quarter counters");
                    check(cudaMemsetAsync(join_counts_.p, 0, join_counts_.n * sizeof(unsigned), stream_),
                          "cudaMemsetAsync (counters)");
                }
            }
            out_dev_.ensure(static_cast<size_t>(n), "results");
            // A small call on few segments reads its points from the mapped host buffer (a few hundred bytes per
            // block, no copy); otherwise they are copied once for the many blocks that read them.
            const bool zero_copy = small_ && n_segments_ <= kSmallZeroCopySegments;
            const double *pts = zero_copy ? xyz_host_.dev : xyz_dev_.p;
            if (!zero_copy)
                check(cudaMemcpyAsync(xyz_dev_.p, xyz_host_.p, static_cast<size_t>(3 * n) * sizeof(double),
                                      cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (points)");
            SmallOut so{};
            if (small_) seq_ = ll_next(seq_), so = SmallOut{small_out_.dev, seq_};
            for (int64_t b = 0; b < n; b += batch) {
                const int64_t m = std::min(batch, n - b);
                // The tuning table's shape for the batch, or the forced one (the same bits either way).
                const TileShape shape = forced_tile_.empty() ? field_tile_for(*tuning_, m) : forced_tile_;
                check(launch_throughput(precision_, dc_, chunks_per_segment_, n_segments_, m, pts + 3 * b,
                                        seg_part_.p, out_dev_.p + b, shape, tuning_->quarter_blocks,
                                        QuarterJoin{join_totals_.p, join_counts_.p}, stream_, so),
                      "throughput kernel launch");
            }
            if (!small_)
                check(cudaMemcpyAsync(out_.p, out_dev_.p, static_cast<size_t>(n) * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (results)");
        }
        if (host_nuclear_) {  // few points: on the host while the GPU works
            nuc_.assign(static_cast<size_t>(n), 0.0);
            add_nuclear_term(nuclei_, n, xyz, nuc_.data());
        }
        return QMMM_SUCCESS;
    }

    int wait() override {
        DeviceScope scope(dev_);
        if (latency_) {
            poll(low_latency_ ? ll_stream_ : stream_);
            // u = (partials in chunk order) + (-nuclear): bitwise what u -= nuclear gives (with MIXED's heavy cells,
            // + (heavy - nuclear)).
            for (int64_t p = 0; p < n_; ++p) {
                const unsigned long long *w = result_.p + 2 * p * n_chunks_;
                double s = 0;
                for (int64_t ch = 0; ch < n_chunks_; ++ch) {
                    const unsigned long long bits = static_cast<unsigned long long>(ll_data(w[2 * ch])) |
                                                    static_cast<unsigned long long>(ll_data(w[2 * ch + 1])) << 32;
                    double v;
                    std::memcpy(&v, &bits, sizeof v);
                    s += v;
                }
                u_[p] = s + nuc_[p];
            }
            return QMMM_SUCCESS;
        }
        if (small_) {
            poll_words(stream_, small_out_.p, 2 * n_);
            for (int64_t p = 0; p < n_; ++p) {
                const unsigned long long bits = static_cast<unsigned long long>(ll_data(small_out_.p[2 * p])) |
                                                static_cast<unsigned long long>(ll_data(small_out_.p[2 * p + 1])) << 32;
                std::memcpy(&u_[p], &bits, sizeof(double));
            }
            return QMMM_SUCCESS;
        }
        check(cudaStreamSynchronize(stream_), "field kernels (cudaStreamSynchronize)");
        if (!host_nuclear_) std::memcpy(u_, out_.p, static_cast<size_t>(n_) * sizeof(double));
        else std::copy(nuc_.begin(), nuc_.end(), u_);  // no cells: the nuclear term alone
        return QMMM_SUCCESS;
    }

    // A point's bits depend on the path alone: the throughput path's segments depend on M only, its tile shape and
    // batches change nothing (field_gpu.cuh), so every call of more than kLatencyMaxPoints points gives a point the
    // same bits. Without cells the nuclear term is per point on the host.
    int64_t merge_from() const override { return cells_.p ? kLatencyMaxPoints + 1 : 1; }

    // Device-resident points and values: the throughput path on the caller's stream (whatever n: the latency paths
    // read the points on the host), reading d_xyz and writing d_u (or out_dev_) in place; with d_sums, the walkers'
    // sums after it. The field's buffers (segment partials, quarter totals) are shared by its calls, so each call
    // waits on the GPU for the previous device-resident one (device_done_) when it runs on another stream.
    int eval_device(int64_t n, const double *d_xyz, double *d_u, int64_t n_walkers, const int64_t *offsets,
                    double *d_sums, void *stream) override {
        DeviceScope scope(dev_);
        if (!cells_.p)
            throw Error(QMMM_ERR_UNSUPPORTED, "f has nuclei only (no cells or unscreened charges): its term is summed "
                                              "on the host; use qmmm_field_eval or qmmm_field_eval_walkers");
        const int64_t o0 = n_walkers > 0 ? offsets[0] : 0;
        if (n > 0) check_device_memory("d_xyz", d_xyz);
        if (d_u && n > 0) check_device_memory("d_u", d_u);
        if (d_sums) check_device_memory("d_sums", d_sums);
        const cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : stream_;
        after_device_calls(s);
        if (n > 0) {
            const double *p = d_xyz + 3 * o0;
            double *out = d_u ? d_u + o0 : nullptr;
            if (!out) out_dev_.ensure(static_cast<size_t>(n), "results"), out = out_dev_.p;
            const int64_t batch = std::min(n, kMaxBatch);
            seg_part_.ensure(static_cast<size_t>(n_segments_ * batch), "segment partials");
            if (tuning_->quarter_blocks && !dc_.rows) {
                const size_t qp = static_cast<size_t>(n_segments_ * quarter_points(batch));
                join_totals_.ensure(kSub * qp, "quarter totals");
                if (join_counts_.n < qp / 32) {
                    join_counts_.ensure(qp / 32, "quarter counters");
                    check(cudaMemsetAsync(join_counts_.p, 0, join_counts_.n * sizeof(unsigned), s),
                          "cudaMemsetAsync (counters)");
                }
            }
            for (int64_t b = 0; b < n; b += batch) {
                const int64_t m = std::min(batch, n - b);
                const TileShape shape = forced_tile_.empty() ? field_tile_for(*tuning_, m) : forced_tile_;
                check(launch_throughput(precision_, dc_, chunks_per_segment_, n_segments_, m, p + 3 * b, seg_part_.p,
                                        out + b, shape, tuning_->quarter_blocks,
                                        QuarterJoin{join_totals_.p, join_counts_.p}, s),
                      "throughput kernel launch");
            }
            if (d_sums) {
                // The crowd's layout rarely changes: the offsets go to the GPU when they do (a pageable copy is staged
                // before cudaMemcpyAsync returns, so walk_host_ may change afterwards).
                if (walk_host_.size() != static_cast<size_t>(n_walkers + 1) ||
                    !std::equal(walk_host_.begin(), walk_host_.end(), offsets)) {
                    walk_host_.assign(offsets, offsets + n_walkers + 1);
                    walk_dev_.ensure(walk_host_.size(), "walker offsets");
                    check(cudaMemcpyAsync(walk_dev_.p, walk_host_.data(), walk_host_.size() * sizeof(int64_t),
                                          cudaMemcpyHostToDevice, s), "cudaMemcpyAsync (walker offsets)");
                }
                check(launch_walker_sums(out, walk_dev_.p, n_walkers, d_sums, s), "walker sums launch");
            }
        } else if (d_sums && n_walkers > 0) {
            check(cudaMemsetAsync(d_sums, 0, static_cast<size_t>(n_walkers) * sizeof(double), s), "cudaMemsetAsync (sums)");
        }
        if (!device_done_) check(cudaEventCreateWithFlags(&device_done_, cudaEventDisableTiming), "cudaEventCreate");
        check(cudaEventRecord(device_done_, s), "cudaEventRecord");
        return QMMM_SUCCESS;
    }

    int wait_device() override {
        if (!device_done_) return QMMM_SUCCESS;
        DeviceScope scope(dev_);
        check(cudaEventSynchronize(device_done_), "device-resident call (cudaEventSynchronize)");
        return QMMM_SUCCESS;
    }

private:
    LatencyOut lat_out() const { return LatencyOut{result_.dev}; }

    // Work on s that uses the field's buffers waits (on the GPU) for the last device-resident call.
    void after_device_calls(cudaStream_t s) {
        if (device_done_) check(cudaStreamWaitEvent(s, device_done_, 0), "cudaStreamWaitEvent");
    }

    // Device memory of the field's device, or managed memory; host memory (pinned or not) and other devices' memory
    // are refused with QMMM_ERR_INVALID_ARG.
    void check_device_memory(const char *name, const void *p) const {
        cudaPointerAttributes a{};
        const cudaError_t e = cudaPointerGetAttributes(&a, p);
        if (e != cudaSuccess) {
            cudaGetLastError();
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s is not memory CUDA knows (%s): device-resident calls take "
                                                     "device memory", name, cudaGetErrorString(e)));
        }
        if (a.type == cudaMemoryTypeManaged) return;
        if (a.type != cudaMemoryTypeDevice)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s is host memory: device-resident calls take device memory of "
                                                     "the field's device %d (cudaMalloc, OpenACC host_data use_device, "
                                                     "OpenMP use_device_ptr); with host arrays use qmmm_field_eval",
                                                     name, dev_));
        if (a.device != dev_)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s is memory of device %d; the field is on device %d", name,
                                                     a.device, dev_));
    }

    // Spins until every word of the result carries the current sequence number; asks the stream now and then, so
    // that a failed (or vanished) kernel becomes an error instead of a hang.
    void poll(cudaStream_t s) { poll_words(s, result_.p, 2 * n_ * n_chunks_); }
    void poll_words(cudaStream_t s, const volatile unsigned long long *words, int64_t count) {
        auto next_query = Clock::now() + std::chrono::microseconds(200);
        for (int64_t k = 0; k < count; ++k) {
            while (ll_seq(words[k]) != seq_) {
                if (Clock::now() < next_query) continue;
                const cudaError_t e = cudaStreamQuery(s);
                if (e == cudaErrorNotReady) {
                    next_query = Clock::now() + std::chrono::microseconds(50);
                    continue;
                }
                check(e, "latency kernel (cudaStreamQuery)");
                if (ll_seq(words[k]) != seq_) {
                    ll_running_ = false;
                    throw Error(QMMM_ERR_INTERNAL, "field kernel finished without writing result word " + std::to_string(k));
                }
            }
        }
        std::atomic_thread_fence(std::memory_order_acquire);
    }

    // Low-latency mode: a running kernel is reused while it cannot be timing out; otherwise it is stopped and
    // a new one started (the first call after a pause pays one launch).
    void start_persistent() {
        if (ll_running_ && Clock::now() - ll_last_ < kReuseWindow) return;
        if (ll_running_) stop_persistent();
        *reinterpret_cast<volatile unsigned *>(&mailbox_.p->quit) = 0u;
        // Stream-ordered before the kernel; a past kernel left stop = 1.
        check(cudaMemsetAsync(relay_.p, 0, sizeof(Relay), ll_stream_), "relay reset");
        check(launch_persistent(precision_, dc_, mailbox_.dev, relay_.p, lat_out(), ll_blocks_, seq_, kIdleNs,
                                ll_stream_), "persistent kernel launch");
        ll_running_ = true;
        ++ll_launches_;
        ll_last_ = Clock::now();
    }
    void stop_persistent() noexcept {
        *reinterpret_cast<volatile unsigned *>(&mailbox_.p->quit) = 1u;
        cudaStreamSynchronize(ll_stream_);  // returns once every block has seen quit (or timed out)
        cudaGetLastError();
        ll_running_ = false;
    }

    void build(const FieldData &d) {
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaDeviceGetAttribute(&n_sm_, cudaDevAttrMultiProcessorCount, dev_), "cudaDeviceGetAttribute");
        int cc_major = 0, cc_minor = 0;
        check(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, dev_), "cudaDeviceGetAttribute");
        check(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, dev_), "cudaDeviceGetAttribute");
        tuning_ = &field_tuning(precision_, 10 * cc_major + cc_minor);  // the chain of field_tuning.hpp
        nuclei_.n_nuclei = d.n_nuclei, nuclei_.nuc_xyz = d.nuc_xyz, nuclei_.nuc_z = d.nuc_z;
        nuclei_.heavy_xyz = d.heavy_xyz, nuclei_.heavy_q = d.heavy_q, nuclei_.cell_self_inv_r = d.cell_self_inv_r;
        out_.ensure(kLatencyMaxPoints, "results");
        // The throughput path's segment sum adds the nuclei and MIXED's heavy cells.
        dc_.nuclei = upload_points(d.nuc_xyz, d.nuc_z, nuc_dev_, "nuclei"), dc_.n_nuclei = d.n_nuclei;
        dc_.heavy = upload_points(d.heavy_xyz, d.heavy_q, heavy_dev_, "heavy cells");
        dc_.n_heavy = static_cast<int64_t>(d.heavy_q.size());
        const int64_t nc = (d.n_cells + kChunk - 1) / kChunk;
        n_chunks_ = nc;
        if (nc == 0) return;
        const size_t padded = static_cast<size_t>(nc * kChunk);
        std::vector<double> origin(3 * static_cast<size_t>(nc), 0.0);
        std::vector<QuarterInfo> quarters(static_cast<size_t>(nc * kSub));
        if (precision_ == QMMM_PRECISION_MIXED) {
            // The CPU backend's layout (field_mixed_cells: the same float data, so the same answer).
            MixedCells m = field_mixed_cells(d, kChunk, kMixedFar);
            origin = std::move(m.origin);
            std::vector<MixedCell> h(padded);
            std::vector<Cell64> h64(padded);
            for (size_t i = 0; i < padded; ++i) {
                // twice the low parts (exact), as dist2 takes them
                h[i] = MixedCell{float4{m.x[i], m.y[i], m.z[i], m.q[i]},
                                 float4{2.0f * m.xl[i], 2.0f * m.yl[i], 2.0f * m.zl[i], 0.0f}};
                h64[i] = Cell64{m.xd[i], m.yd[i], m.zd[i], m.qd[i]};
            }
            for (size_t qi = 0; qi < quarters.size(); ++qi) quarters[qi].box = quarter_box(h, qi, d.n_cells);
            take_mixed_rows(m, h, d.n_cells, nc, quarters);
            upload(h);
            lo_mean_.ensure(m.lo_mean.size(), "chunk low-part means");
            check(cudaMemcpy(lo_mean_.p, m.lo_mean.data(), m.lo_mean.size() * sizeof(double), cudaMemcpyHostToDevice),
                  "cudaMemcpy (low-part means)");
            dc_.lo_mean = lo_mean_.p;
            cells64_.ensure(4 * padded, "cells (double copy)");
            check(cudaMemcpy(cells64_.p, h64.data(), padded * sizeof(Cell64), cudaMemcpyHostToDevice), "cudaMemcpy (cells64)");
            dc_.cells64 = reinterpret_cast<const Cell64 *>(cells64_.p);
        } else {
            const std::vector<int64_t> order = field_morton_order(d, kChunk);
            auto X = [&](int64_t m, int k) { return d.cell_xyz[3 * order[m] + k]; };
            if (precision_ == QMMM_PRECISION_DOUBLE) {
                std::vector<Cell64> h(padded, Cell64{1e15, 1e15, 1e15, 0.0});  // padding far away, zero charge
                for (int64_t m = 0; m < d.n_cells; ++m) h[m] = Cell64{X(m, 0), X(m, 1), X(m, 2), d.cell_q[order[m]]};
                std::vector<double> q(padded);
                for (size_t i = 0; i < padded; ++i) q[i] = h[i].w;
                for (size_t qi = 0; qi < quarters.size(); ++qi)
                    quarters[qi].bound = field_quarter_bound(&q[qi * kQuarter], kQuarter);
                upload(h);
                take_rows<double, double2>(d, nc, X, [&](int64_t m) { return d.cell_q[order[m]]; }, origin, quarters);
            } else {
                std::vector<float4> h(padded, float4{1e30f, 1e30f, 1e30f, 0.0f});
                for (int64_t m = 0; m < d.n_cells; ++m)
                    h[m] = float4{static_cast<float>(X(m, 0)), static_cast<float>(X(m, 1)), static_cast<float>(X(m, 2)),
                                  static_cast<float>(d.cell_q[order[m]])};
                std::vector<float> q(padded);
                for (size_t i = 0; i < padded; ++i) q[i] = h[i].w;
                for (size_t qi = 0; qi < quarters.size(); ++qi)
                    quarters[qi].bound = field_quarter_bound(&q[qi * kQuarter], kQuarter);
                upload(h);
                take_rows<float, float2>(d, nc, X, [&](int64_t m) { return d.cell_q[order[m]]; }, origin, quarters);
            }
        }
        origin_.ensure(origin.size(), "chunk origins");
        check(cudaMemcpy(origin_.p, origin.data(), origin.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (origins)");
        quarters_.ensure(quarters.size(), "chunk quarters");
        check(cudaMemcpy(quarters_.p, quarters.data(), quarters.size() * sizeof(QuarterInfo), cudaMemcpyHostToDevice),
              "cudaMemcpy (quarters)");
        small_out_.ensure(static_cast<size_t>(2 * kSmallMaxPoints), "small-call results");
        std::fill(small_out_.p, small_out_.p + 2 * kSmallMaxPoints, 0ULL);  // sequence 0: never current
        xyz_host_.ensure(static_cast<size_t>(3 * kSmallMaxPoints), "points");  // small calls' buffer never moves
        result_.ensure(static_cast<size_t>(2 * kLatencyMaxPoints * nc), "latency partials");
        std::fill(result_.p, result_.p + 2 * kLatencyMaxPoints * nc, 0ULL);  // sequence 0: never current
        if (low_latency_) {
            mailbox_.ensure(1, "low-latency mailbox");
            relay_.ensure(1, "low-latency relay");
            std::memset(mailbox_.p, 0, sizeof(Mailbox));
            check(cudaStreamCreateWithFlags(&ll_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            ll_blocks_ = static_cast<int>(std::min<int64_t>(nc, n_sm_));
        }
        // Segments depend on M only, so a point's value never depends on how many points come with it.
        chunks_per_segment_ = static_cast<int>((nc + kMaxSegments - 1) / kMaxSegments);
        n_segments_ = static_cast<int>((nc + chunks_per_segment_ - 1) / chunks_per_segment_);
        dc_.cells = cells_.p, dc_.origin = origin_.p, dc_.n_chunks = nc, dc_.self = d.cell_self_inv_r;
        dc_.quarters = quarters_.p;
        check(cudaDeviceSynchronize(), "field upload");
    }

    // Whether the row layout may be taken at all: QMMM_CUDA_ROWS, else the tuning table's choice for lattice cells.
    bool rows_wanted() const { return rows_mode_ > 0 || (rows_mode_ < 0 && tuning_->rows_on_lattice); }

    // SINGLE, DOUBLE: the row layout, taken when rows are long (kFieldMinCellsPerRow, field_tuning.hpp) and the
    // tuning table takes rows on lattice cells, or when QMMM_CUDA_ROWS=1.
    template <class F, class C2, class PosFn, class QFn>
    void take_rows(const FieldData &d, int64_t nc, PosFn X, QFn Q, std::vector<double> &origin,
                   std::vector<QuarterInfo> &quarters) {
        if (!rows_wanted()) return;
        std::vector<double> xyz(static_cast<size_t>(3 * d.n_cells));
        for (int64_t m = 0; m < d.n_cells; ++m)
            for (int k = 0; k < 3; ++k) xyz[static_cast<size_t>(3 * m + k)] = X(m, k);
        const FieldRows r = field_rows(d.n_cells, xyz.data());
        std::vector<C2> rc;
        std::vector<RowHead<F>> rw;
        row_words<F>(r, d.n_cells, X, Q, origin, quarters, rc, rw);  // origin and quarters' rows set either way
        if (rows_mode_ < 0 && kFieldMinCellsPerRow * r.n_rows > d.n_cells) return;
        const size_t cell_bytes = rc.size() * sizeof(C2), row_bytes = rw.size() * sizeof(RowHead<F>);
        row_cells_.ensure(cell_bytes, "row cells");
        rows_.ensure(row_bytes, "rows");
        check(cudaMemcpy(row_cells_.p, rc.data(), cell_bytes, cudaMemcpyHostToDevice), "cudaMemcpy (row cells)");
        check(cudaMemcpy(rows_.p, rw.data(), row_bytes, cudaMemcpyHostToDevice), "cudaMemcpy (rows)");
        dc_.row_cells = row_cells_.p, dc_.rows = rows_.p;
    }

    // MIXED: the row layout (DeviceCells::rows) on the same condition as take_rows (by default never: the tuning
    // table keeps MIXED on tiles, measured faster on lattice cells too), from the tile cells h (twice
    // the low parts, as dist2 takes them) in the order of field_rows, as SINGLE and DOUBLE; a cell that starts a row
    // carries the row's chunk-local index. Padding keeps its place (far, zero charge, no row). The tile
    // layout stays: the careful sum of near cells reads it.
    void take_mixed_rows(const MixedCells &m, const std::vector<MixedCell> &h, int64_t n_cells, int64_t nc,
                         std::vector<QuarterInfo> &quarters) {
        if (!rows_wanted()) return;
        std::vector<double> xyz(static_cast<size_t>(3 * n_cells));
        for (int64_t i = 0; i < n_cells; ++i)
            xyz[3 * i] = m.xd[i], xyz[3 * i + 1] = m.yd[i], xyz[3 * i + 2] = m.zd[i];
        const FieldRows r = field_rows(n_cells, xyz.data());
        for (size_t qi = 0; qi < quarters.size(); ++qi)  // set either way
            quarters[qi].row_begin = r.quarter_row_begin[qi], quarters[qi].n_rows = r.quarter_rows[qi];
        if (rows_mode_ < 0 && kFieldMinCellsPerRow * r.n_rows > n_cells) return;
        const size_t padded = static_cast<size_t>(nc * kChunk);
        const float none = bits_as_float(-1);
        std::vector<float4> rc(padded), rw(padded, float4{0, 0, 0, 0});
        for (size_t i = 0; i < padded; ++i) rc[i] = float4{h[i].h.x, h[i].l.x, h[i].h.w, none};  // padding in place
        for (int64_t ch = 0; ch < nc; ++ch) {
            const int64_t b = ch * kChunk;
            for (int g = 0; g < kSub; ++g) {
                const size_t qi = static_cast<size_t>(ch * kSub + g);
                for (int row = r.quarter_row_begin[qi]; row < r.quarter_row_begin[qi] + r.quarter_rows[qi]; ++row) {
                    const size_t at = static_cast<size_t>(b + row);
                    const size_t c = static_cast<size_t>(r.cell[static_cast<size_t>(b + r.row_first[at])]);
                    rw[at] = float4{h[c].h.y, h[c].h.z, h[c].l.y, h[c].l.z};
                }
            }
            for (int64_t slot = b; slot < b + kChunk; ++slot)
                if (const int64_t c = r.cell[static_cast<size_t>(slot)]; c >= 0)
                    rc[static_cast<size_t>(slot)] = float4{h[c].h.x, h[c].l.x, h[c].h.w, none};
            for (int row = 0; row < r.quarter_row_begin[static_cast<size_t>(ch * kSub + kSub - 1)] +
                                        r.quarter_rows[static_cast<size_t>(ch * kSub + kSub - 1)]; ++row)
                rc[static_cast<size_t>(b + r.row_first[static_cast<size_t>(b + row)])].w = bits_as_float(row);
        }
        const size_t bytes = padded * sizeof(float4);
        row_cells_.ensure(bytes, "row cells");
        rows_.ensure(bytes, "rows");
        check(cudaMemcpy(row_cells_.p, rc.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (row cells)");
        check(cudaMemcpy(rows_.p, rw.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (rows)");
        dc_.row_cells = row_cells_.p, dc_.rows = rows_.p;
    }
    static float bits_as_float(int32_t v) {
        float f;
        std::memcpy(&f, &v, sizeof f);
        return f;
    }

    // MIXED: the sphere around a quarter's cells (offsets from the chunk origin); padding cells do not count.
    static float4 quarter_box(const std::vector<MixedCell> &h, size_t qi, int64_t n_cells) {
        float lo[3] = {3e38f, 3e38f, 3e38f}, hi[3] = {-3e38f, -3e38f, -3e38f};
        const size_t b = qi * kQuarter, e = std::min<size_t>(b + kQuarter, static_cast<size_t>(n_cells));
        if (e <= b) return float4{0, 0, 0, -3e38f};  // padding only: never near
        auto at = [&](size_t i, int k) {
            const float4 &a = h[i].h, &l = h[i].l;
            return k == 0 ? a.x + 0.5f * l.x : k == 1 ? a.y + 0.5f * l.y : a.z + 0.5f * l.z;
        };
        for (size_t i = b; i < e; ++i)
            for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], at(i, k)), hi[k] = std::max(hi[k], at(i, k));
        const float c[3] = {0.5f * (lo[0] + hi[0]), 0.5f * (lo[1] + hi[1]), 0.5f * (lo[2] + hi[2])};
        double r2 = 0;
        for (size_t i = b; i < e; ++i) {
            double s = 0;
            for (int k = 0; k < 3; ++k) s += (static_cast<double>(at(i, k)) - c[k]) * (static_cast<double>(at(i, k)) - c[k]);
            r2 = std::max(r2, s);
        }
        return float4{c[0], c[1], c[2], static_cast<float>(std::sqrt(r2) * (1 + 1e-6) + 1e-6)};
    }

    // Charges w at xyz as Cell64 in buf (null when there are none).
    static const Cell64 *upload_points(const std::vector<double> &xyz, const std::vector<double> &w,
                                       DeviceBuf<double> &buf, const char *what) {
        if (w.empty()) return nullptr;
        std::vector<Cell64> h(w.size());
        for (size_t m = 0; m < h.size(); ++m) h[m] = Cell64{xyz[3 * m], xyz[3 * m + 1], xyz[3 * m + 2], w[m]};
        buf.ensure(h.size() * 4, what);
        check(cudaMemcpy(buf.p, h.data(), h.size() * sizeof(Cell64), cudaMemcpyHostToDevice),
              (std::string("cudaMemcpy (") + what + ")").c_str());
        return reinterpret_cast<const Cell64 *>(buf.p);
    }

    template <class T>
    void upload(const std::vector<T> &h) {
        const size_t bytes = h.size() * sizeof(T);
        cells_.ensure((bytes + 15) / 16, "cells");
        check(cudaMemcpy(cells_.p, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy (cells)");
    }

    void release() {
        cells_.release(), cells64_.release(), origin_.release(), lo_mean_.release(), quarters_.release(), nuc_dev_.release();
        heavy_dev_.release();
        row_cells_.release(), rows_.release();
        result_.release(), small_out_.release(), mailbox_.release(), relay_.release(), seg_part_.release();
        join_totals_.release(), join_counts_.release();
        xyz_dev_.release(), out_dev_.release(), out_.release(), xyz_host_.release();
        walk_dev_.release();
        if (device_done_) cudaEventDestroy(device_done_);
        device_done_ = nullptr;
        if (stream_) cudaStreamDestroy(stream_);
        if (ll_stream_) cudaStreamDestroy(ll_stream_);
        stream_ = ll_stream_ = nullptr;
    }

    int precision_;
    bool low_latency_;
    int dev_ = 0, n_sm_ = 1;
    cudaStream_t stream_ = nullptr, ll_stream_ = nullptr;
    FieldData nuclei_;
    DeviceCells dc_;
    int64_t n_chunks_ = 0;
    int chunks_per_segment_ = 1, n_segments_ = 1;
    DeviceBuf<float4> cells_;  // raw storage; Cell64 / MixedCell for DOUBLE / MIXED (float4 units: 16-byte aligned)
    DeviceBuf<double> nuc_dev_, cells64_, heavy_dev_;
    DeviceBuf<QuarterInfo> quarters_;
    DeviceBuf<unsigned char> row_cells_, rows_;  // the row layout's bytes (float2 / double2 / float4, RowHead<F> / float4)
    int rows_mode_ = -1;  // QMMM_CUDA_ROWS: -1 by the cells and the tuning table, 0 tiles, 1 rows
    const FieldTuning *tuning_ = &field_tuning(QMMM_PRECISION_DOUBLE, kFieldPolicies[0].arch);  // set in build
    PinnedBuf<unsigned long long> result_;     // the latency paths' partials (LL words)
    PinnedBuf<unsigned long long> small_out_;  // small calls' values (LL words)
    PinnedBuf<Mailbox> mailbox_;
    DeviceBuf<Relay> relay_;
    unsigned seq_ = 0;
    TileShape forced_tile_;  // QMMM_CUDA_TILE, empty: the tuning table's by batch size
    bool latency_ = false, small_ = false, host_nuclear_ = true;
    bool small_calls_ = tuning::cuda_small_calls();
    bool ll_running_ = false;
    int64_t ll_launches_ = 0;
    int ll_blocks_ = 1;
    Clock::time_point ll_last_{};
    DeviceBuf<double> origin_, lo_mean_, seg_part_, xyz_dev_, out_dev_, join_totals_;
    DeviceBuf<unsigned> join_counts_;
    PinnedBuf<double> out_, xyz_host_;
    std::vector<double> nuc_;
    int64_t n_ = 0;
    double *u_ = nullptr;
    // Device-resident calls: the last one's completion on its stream, the walkers' offsets (host copy, device copy).
    cudaEvent_t device_done_ = nullptr;
    std::vector<int64_t> walk_host_;
    DeviceBuf<int64_t> walk_dev_;
};

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
