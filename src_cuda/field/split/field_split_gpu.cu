// field_split_gpu.cu -- the CUDA backend of the range-split field (field_split.hpp), host side: the tables built by
// split_build (field_split.cpp, shared with the CPU backend) with this GPU as its engine -- the direct CUDA backend
// (DOUBLE, through FieldGpu) for the grid's direct sums and the split kernel (field_split_gpu_kernels.cu) for its
// short-range sums -- then copied to the device. An evaluation sends the points inside the region to the split
// kernel, which adds the nuclear term too, and the others to the direct backend, their nuclear term on the host
// (double, the nuclei in order, in both places).
//
// Thread safety: as the C API (one handle, one thread at a time); each handle owns its stream and buffers.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <vector>

#include "core_gpu.cuh"
#include "cpu_threads.hpp"
#include "backend/field_factory.hpp"
#include "error.hpp"
#include "split/field_split.hpp"
#include "split/field_split_gpu.cuh"

namespace qmmm::cuda {
namespace {

template <class T>
void upload(DeviceBuf<T> &buf, const std::vector<T> &h, const char *what) {
    buf.ensure(h.empty() ? 1 : h.size(), what);
    if (!h.empty()) check(cudaMemcpy(buf.p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), what);
}

class FieldSplitCudaBackend final : public FieldBackend, public SplitStats, public SplitGradStats, private SplitEngine {
public:
    FieldSplitCudaBackend(const FieldData &d, const qmmm_options &opt) {
        if (opt.device >= 0) dev_ = opt.device;
        else check(cudaGetDevice(&dev_), "cudaGetDevice");
        DeviceScope scope(dev_);
        try {
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            check(cudaStreamCreateWithFlags(&stream2_, cudaStreamNonBlocking), "cudaStreamCreate");
            nuclei_.n_nuclei = d.n_nuclei, nuclei_.nuc_xyz = d.nuc_xyz, nuclei_.nuc_z = d.nuc_z;
            upload(nx_, d.nuc_xyz, "split nuclei"), upload(nz_, d.nuc_z, "split nuclear charges");
            nuc_.xyz = nx_.p, nuc_.z = nz_.p, nuc_.n = d.n_nuclei;
            qmmm_options od = opt;
            od.method = QMMM_METHOD_DIRECT, od.precision = QMMM_PRECISION_DOUBLE, od.region = nullptr, od.device = dev_;
            od.flags = 0;
            // The direct fallback (~0.25 s of host work for 1.1M cells) is made on another thread while the grid is built;
            // the grid needs it only for a node on a cell centre (direct()), and create waits for it below.
            pending_ = std::async(std::launch::async, [this, dd = split_direct_data(d), od] {
                DeviceScope in(dev_);
                return GpuRegistry<FieldGpu>::get().make(dd, od);
            });
            split_build(model_, d, opt, *this);
            direct();
            upload_grid();
            // What the gradient's first call may need to build a grid of its own (split_grad_prepare).
            cell_volume_ = d.cell_volume, point_charges_ = d.point_charges, opt_ = opt;
            std::copy(opt.region, opt.region + 6, region_);
            opt_.region = region_;
        } catch (...) {
            if (pending_.valid()) pending_.wait();  // d's arrays and this GPU's stream outlive the thread
            release();
            throw;
        }
    }
    ~FieldSplitCudaBackend() override {
        int saved = -1;
        cudaGetDevice(&saved);
        cudaSetDevice(dev_);
        if (stream_) cudaStreamSynchronize(stream_);
        if (stream2_) cudaStreamSynchronize(stream2_);
        release();
        if (saved >= 0) cudaSetDevice(saved);
    }

    int backend() const override { return QMMM_BACKEND_CUDA; }
    // What the evaluation computes in: MIXED only where its single-precision terms fit the tolerance (split_build).
    int precision() const override { return model_.info.single_pairs ? QMMM_PRECISION_MIXED : QMMM_PRECISION_DOUBLE; }
    int device() const override { return dev_; }

    int eval(int64_t n, const double *xyz, double *u) override {
        DeviceScope scope(dev_);
        points_ += n;
        // Every point through the kernel first: it gives a point outside the region NaN, and a NaN (rare: outside, or
        // on a nucleus) sends the host through the points once (a pass up front cost ~40 us per 8,192 points).
        if (!run(true, model_.info.single_pairs, model_.self, nuc_, n, xyz, u)) return QMMM_SUCCESS;
        out_pts_.clear(), out_idx_.clear();
        for (int64_t i = 0; i < n; ++i)
            if (std::isnan(u[i]) && !split_inside(model_.gv, xyz + 3 * i)) {
                out_idx_.push_back(i);
                out_pts_.insert(out_pts_.end(), xyz + 3 * i, xyz + 3 * i + 3);
            }
        outside_ += static_cast<int64_t>(out_idx_.size());
        if (!out_idx_.empty()) {  // the direct sum, plus the singular-cell rule it was built without, and the nuclei
            const int64_t m = static_cast<int64_t>(out_idx_.size());
            std::vector<double> v(out_idx_.size());
            if (int s = direct().eval(m, out_pts_.data(), v.data())) return s;
            for (int64_t k = 0; k < m; ++k) v[k] += split_singular_fix(model_, &out_pts_[3 * k]);
            add_nuclear_term(nuclei_, m, out_pts_.data(), v.data());
            for (int64_t k = 0; k < m; ++k) u[out_idx_[k]] = v[k];
        }
        return QMMM_SUCCESS;
    }

    // SplitGradStats: the gradient's tables on first use. The check evaluates split_grad_point on the host (1,024
    // points; the kernel runs the same function); a grid of the gradient's own is built with this GPU as the engine,
    // which loads that model's cells into the value path's device tables, so those are loaded again afterwards (the
    // same data: the value path's bits do not change).
    const SplitGradInfo &split_grad_info() override {
        if (grad_.info.ready) return grad_.info;
        DeviceScope scope(dev_);
        settle();
        const SplitGradEval eval = [](const SplitGradView &v, double self, int64_t n, const double *xyz, double *u,
                                      double *g) {
            for (int64_t i = 0; i < n; ++i) split_grad_point(v, xyz + 3 * i, self, u + i, g + 3 * i);
        };
        try {
            split_grad_prepare(grad_, model_, split_model_data(model_, nuclei_, cell_volume_, point_charges_), opt_,
                               *this, eval, default_threads());
        } catch (...) {
            cells_ready(model_), upload_grid();
            throw;
        }
        cells_ready(model_), upload_grid();
        if (grad_.info.split) upload_grad();
        return grad_.info;
    }
    bool split_grad(int64_t n, const double *xyz, double *u, double *grad, std::vector<char> &out) override {
        if (!split_grad_info().split) return false;
        DeviceScope scope(dev_);
        settle();
        out.assign(static_cast<size_t>(n), 0);
        constexpr int64_t kBatch = int64_t{1} << 20;
        for (int64_t b = 0; b < n; b += kBatch) {
            const int64_t m = std::min(kBatch, n - b);
            gpts_.ensure(static_cast<size_t>(3 * m), "split gradient points");
            gout_.ensure(static_cast<size_t>(4 * m), "split gradient values");
            check(cudaMemcpyAsync(gpts_.p, xyz + 3 * b, static_cast<size_t>(3 * m) * sizeof(double),
                                  cudaMemcpyHostToDevice, stream_), "split gradient points");
            check(split::launch_split_grad(gdev_, grad_.self, nuc_, m, gpts_.p, gout_.p, stream_), "split gradient launch");
            std::vector<double> h(static_cast<size_t>(4 * m));
            check(cudaMemcpyAsync(h.data(), gout_.p, h.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_),
                  "split gradient values");
            check(cudaStreamSynchronize(stream_), "split gradient kernel (cudaStreamSynchronize)");
            for (int64_t k = 0; k < m; ++k) {
                const int64_t i = b + k;
                if (!split_inside(grad_.view.v.grid, xyz + 3 * i)) {
                    out[static_cast<size_t>(i)] = 1;
                    continue;
                }
                u[i] = h[4 * k], grad[3 * i] = h[4 * k + 1], grad[3 * i + 1] = h[4 * k + 2], grad[3 * i + 2] = h[4 * k + 3];
            }
        }
        return true;
    }

    const SplitInfo &split_info() const override { return model_.info; }
    int64_t points() const override { return points_; }
    int64_t points_outside() const override { return outside_; }
    // Host tables, their device copies (the cells as x alone and x y z q together: one double more per cell), and
    // the direct backend's device cells (4 doubles per cell).
    // With the gradient: its device tables (and its own grid's host tables).
    int64_t bytes() const override {
        const int64_t grad = !grad_.info.split ? 0 : grad_.own ? 2 * grad_.own->bytes() : model_.bytes();
        return 2 * model_.bytes() + 40 * static_cast<int64_t>(model_.x.size()) + grad;
    }

private:
    // SplitEngine.
    void coulomb(int64_t n, const double *xyz, double *out) override {
        if (int s = direct().eval(n, xyz, out)) throw Error(s, "direct sum for the split grid failed");
    }
    // The grid's rows through the row kernel (field_split_gpu.cuh). Every block does the same work (its tasks against
    // its segment's cells), so the blocks run in waves of (resident blocks per SM) x SMs: the cells are cut into
    // segments for at least 8 waves, with a last wave as full as a choice among the next segment counts allows (2.3
    // waves of whole-cell blocks kept the FP64 pipe 73 % busy on an H100: docs/design/gpu-kernels.md). The host
    // adds a node's segment partials in segment order, and sums a node that came within the singular radius of a cell
    // again with the direct backend.
    void coulomb_rows(int64_t n, const double *xyz, const std::vector<int64_t> &row, double *out) override {
        const int64_t nc = static_cast<int64_t>(model_.x.size()) - kSplitCellPadding;
        if (n == 0) return;
        if (nc <= 0) return std::fill(out, out + n, 0.0);
        std::vector<int64_t> task;
        for (size_t r = 0; r + 1 < row.size(); ++r)
            for (int64_t b = row[r]; b < row[r + 1]; b += split::kGridNodes)
                task.push_back(b << 3 | (std::min<int64_t>(split::kGridNodes, row[r + 1] - b) - 1));
        const int64_t nt = static_cast<int64_t>(task.size());
        int sms = 0, per_sm = 0;
        check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_), "cudaDeviceGetAttribute");
        check(split::grid_coulomb_blocks_per_sm(&per_sm), "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        const int64_t wave = std::max<int64_t>(1, int64_t{sms} * per_sm);
        const int64_t blocks = (nt + split::kGridThreads - 1) / split::kGridThreads;
        const int64_t tiles = (nc + split::kGridTile - 1) / split::kGridTile;
        const int64_t max_seg = std::max<int64_t>(1, std::min<int64_t>(tiles / 16, 65535 / 2));
        auto segments = [&](int64_t want) {  // tiles per segment for about `want` segments, and the segment count
            const int64_t per = (tiles + want - 1) / want;
            return std::pair<int64_t, int64_t>(per, (tiles + per - 1) / per);
        };
        int64_t per_tiles = tiles, seg = 1;
        double best = -1;
        const int64_t s0 = std::clamp<int64_t>((8 * wave + blocks - 1) / blocks, 1, max_seg);
        for (int64_t w = s0; w <= std::min(2 * s0, max_seg); ++w) {
            const auto [p, sg] = segments(w);
            const double waves = static_cast<double>(blocks * sg) / static_cast<double>(wave);
            const double use = waves / std::ceil(waves);  // the busy share of the waves' time
            if (use > best + 1e-9) best = use, per_tiles = p, seg = sg;
        }
        const int64_t per = per_tiles * split::kGridTile;
        struct Bufs {  // freed on every way out
            DeviceBuf<double> pts, part;
            DeviceBuf<int64_t> tasks;
            ~Bufs() { pts.release(), part.release(), tasks.release(); }
        } d;
        d.tasks.ensure(task.size(), "split grid tasks");
        d.pts.ensure(static_cast<size_t>(3 * n), "split grid nodes");
        d.part.ensure(static_cast<size_t>(seg * n), "split grid partials");
        // On the stream: a pageable cudaMemcpy may return before its last DMA ends, and stream_ does not wait for it.
        check(cudaMemcpyAsync(d.tasks.p, task.data(), task.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream_),
              "split grid tasks");
        check(cudaMemcpyAsync(d.pts.p, xyz, static_cast<size_t>(3 * n) * sizeof(double), cudaMemcpyHostToDevice, stream_),
              "split grid nodes");
        check(split::launch_grid_coulomb(cells_.p, nc, static_cast<int>(seg), per, d.tasks.p, nt, d.pts.p, n, d.part.p,
                                         stream_),
              "split grid kernel launch");
        std::vector<double> h(static_cast<size_t>(seg * n));
        check(cudaMemcpyAsync(h.data(), d.part.p, h.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_), "split grid partials");
        check(cudaStreamSynchronize(stream_), "split grid kernel (cudaStreamSynchronize)");
        std::vector<double> again_pts;
        std::vector<int64_t> again;
        for (int64_t i = 0; i < n; ++i) {
            double v = 0;
            for (int64_t s = 0; s < seg; ++s) v += h[s * n + i];
            out[i] = v;
            if (std::isnan(v)) again.push_back(i), again_pts.insert(again_pts.end(), xyz + 3 * i, xyz + 3 * i + 3);
        }
        if (again.empty()) return;
        std::vector<double> v(again.size());
        coulomb(static_cast<int64_t>(again.size()), again_pts.data(), v.data());
        for (size_t k = 0; k < again.size(); ++k) out[again[k]] = v[k];
    }
    void cells_ready(const SplitModel &m) override {
        if (m.x.size() >= static_cast<size_t>(INT32_MAX - 32))  // the kernel's cell indices are int32
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("split on CUDA: %zu cells (with padding); at most %d", m.x.size(), INT32_MAX - 33));
        std::vector<split::SplitCellGpu> packed(m.x.size());
        for (size_t i = 0; i < packed.size(); ++i) packed[i] = {m.x[i], m.y[i], m.z[i], m.q[i]};
        upload(x_, m.x, "split cells x"), upload(cells_, packed, "split cells"), upload(start_, m.start, "split cell list");
        if (m.table.size() > static_cast<size_t>(kSplitMaxTerms)) throw Error(QMMM_ERR_INTERNAL, "split f-table too long");
        dev_view_.v = m.view();
        SplitView &v = dev_view_.v;
        v.cells.x = x_.p, v.cells.y = v.cells.z = v.cells.q = nullptr;  // the kernel reads dev_view_.cells
        v.cells.start = m.start.empty() ? nullptr : start_.p;
        v.table.c = nullptr;  // in dev_view_.coef
        dev_view_.cells = cells_.p;
        dev_view_.pad = std::max<int64_t>(0, static_cast<int64_t>(m.x.size()) - kSplitCellPadding);
        dev_view_.coef = split::SplitCoefs{};
        std::copy(m.table.begin(), m.table.end(), dev_view_.coef.c);
        std::copy(m.table_single.begin(), m.table_single.end(), dev_view_.coef.cs);
        dev_view_.coef.scale_single = m.scale_single, dev_view_.coef.exp_single = m.exp_single;
        dev_view_.coef.n_single = static_cast<int32_t>(m.table_single.size());
        check(cudaDeviceSynchronize(), "split cells upload");  // the kernels run on stream_, which the copies do not order
    }
    void short_range(const SplitModel &, int64_t n, const double *xyz, double self, double *out) override {
        run(false, false, self, split::SplitNuclei{}, n, xyz, out);
    }
    bool short_range_mixed(const SplitModel &, int64_t n, const double *xyz, double self, double *out) override {
        const int ns = dev_view_.coef.n_single;
        if (ns < 1 || ns > kSplitMaxTermsSingle) return false;  // no single-precision f: MIXED evaluates in double
        run(false, true, self, split::SplitNuclei{}, n, xyz, out);
        return true;
    }

    // The points through a page-locked buffer that the kernel reads, and the values through one it writes (mapped
    // host memory: no copy calls; a pageable copy is staged by the driver and cost ~50 us per 8,192 points). A DMA of
    // the points to device memory first made the kernel ~8 % faster at 8,192 points but the call no faster, and a
    // one-point call ~8 us slower; four chunks on two streams, to overlap the copies and launches with the kernel,
    // made 8,192 points ~10 us slower: four small kernels leave the GPU part-empty (H100; docs/design/gpu-kernels.md).
    // From kStreamMin points the values stream out of the one kernel instead (SplitStream): the host takes each
    // chunk's values as soon as the kernel has finished it. That costs the kernel ~8 us (its chunk protocol) and
    // saves about as much on the host: 0-3 % a call at 8,192 points, the same bits. Streaming the points in as well,
    // with the kernel's blocks waiting for the host's flags, gained no more and would deadlock a blocking launch.
    // Large calls take two launches on two streams (kTwoLaunchMin): unlike the four one-shot kernels above, each is
    // at least half a call and streams its values.
    // Returns whether a value is NaN (copied and checked in one pass).
    bool run(bool interp, bool mixed, double self, const split::SplitNuclei &nuc, int64_t n, const double *xyz, double *out) {
        constexpr int64_t kBatch = int64_t{1} << 20;
        bool nan = false;
        for (int64_t b = 0; b < n; b += kBatch) {
            const int64_t m = std::min(kBatch, n - b);
            nan |= interp && m >= kStreamMin ? run_streamed(mixed, self, nuc, m, xyz + 3 * b, out + b)
                                             : run_once(interp, mixed, self, nuc, m, xyz + 3 * b, out + b);
        }
        return nan;
    }

    // The first `copy` of m points into the mapped buffer, both mapped buffers large enough for m (a streamed kernel
    // may still be ending: it no longer reads the points, but a buffer that grows moves).
    void stage_points(int64_t m, const double *xyz, int64_t copy) {
        if (pin_pts_.n < static_cast<size_t>(3 * m) || pin_res_.n < static_cast<size_t>(m)) settle();
        pin_pts_.ensure(static_cast<size_t>(3 * m), "split points (pinned)");
        pin_res_.ensure(static_cast<size_t>(m), "split results (pinned)");
        std::memcpy(pin_pts_.p, xyz, static_cast<size_t>(3 * copy) * sizeof(double));
    }

    bool run_once(bool interp, bool mixed, double self, const split::SplitNuclei &nuc, int64_t m, const double *xyz, double *out) {
        stage_points(m, xyz, m);
        check(split::launch_split(dev_view_, interp, mixed, self, nuc, m, pin_pts_.dev, pin_res_.dev, split::SplitStream{}, stream_),
              "split kernel launch");
        check(cudaStreamSynchronize(stream_), "split kernel (cudaStreamSynchronize)");
        return copy_values(pin_res_.p, m, out);
    }

    bool run_streamed(bool mixed, double self, const split::SplitNuclei &nuc, int64_t m, const double *xyz, double *out) {
        const int64_t chunks = (m + kStreamChunk - 1) / kStreamChunk;
        if (values_.n < static_cast<size_t>(m) || done_.n < static_cast<size_t>(chunks)) {
            settle();  // the buffers may move
            values_.ensure(static_cast<size_t>(m), "split values");
            if (done_.n < static_cast<size_t>(chunks)) {  // the flags start at 0 (seq_ counts from 1)
                const size_t k = static_cast<size_t>(chunks);
                done_.ensure(k, "split chunk flags (pinned)"), count_.ensure(k, "split chunk counts");
                std::fill(done_.p, done_.p + k, 0ull);
                check(cudaMemsetAsync(count_.p, 0, k * sizeof(uint32_t), stream_), "split chunk counts");
                check(cudaStreamSynchronize(stream_), "split chunk counts");  // before either stream's kernel
            }
        }
        const unsigned long long seq = ++seq_;
        const int64_t first = m >= kTwoLaunchMin ? chunks / 2 * kStreamChunk : m;
        second_from_ = first < m ? first / kStreamChunk : chunks;  // one launch: every chunk on stream_
        stage_points(m, xyz, first);
        launch_part(mixed, self, nuc, 0, first, seq, stream_);
        if (first < m) {
            std::memcpy(pin_pts_.p + 3 * first, xyz + 3 * first, static_cast<size_t>(3 * (m - first)) * sizeof(double));
            launch_part(mixed, self, nuc, first, m - first, seq, stream2_);
        }
        in_flight_ = true;
        bool nan = false;
        for (int64_t c = 0; c < chunks; ++c) {
            wait_done(c, seq);
            const int64_t a = c * kStreamChunk;
            nan |= copy_values(pin_res_.p + a, std::min(m, a + kStreamChunk) - a, out + a);
        }
        return nan;
    }

    // Points [a, a + n) of a streamed call (a: a whole number of chunks), on stream s.
    void launch_part(bool mixed, double self, const split::SplitNuclei &nuc, int64_t a, int64_t n, unsigned long long seq,
                     cudaStream_t s) {
        const int64_t c = a / kStreamChunk;
        const split::SplitStream st{done_.dev + c, count_.p + c, values_.p + a, seq, kStreamChunk};
        check(split::launch_split(dev_view_, true, mixed, self, nuc, n, pin_pts_.dev + 3 * a, pin_res_.dev + a, st, s),
              "split kernel launch");
    }

    // Until done[c] reaches seq; a kernel that failed (or ended without setting it) throws instead of hanging.
    void wait_done(int64_t c, unsigned long long seq) {
        auto reached = [&] { return __atomic_load_n(done_.p + c, __ATOMIC_ACQUIRE) >= seq; };
        for (uint32_t k = 1; !reached(); ++k) {
            if (k % 1024) continue;
            const cudaError_t e = cudaStreamQuery(c < second_from_ ? stream_ : stream2_);
            if (e == cudaErrorNotReady) continue;
            if (e != cudaSuccess) in_flight_ = false, check(e, "split kernel");
            if (!reached()) {
                in_flight_ = false;
                throw Error(QMMM_ERR_INTERNAL, "split kernel ended without its values");
            }
        }
    }

    static bool copy_values(const double *r, int64_t m, double *o) {
        bool nan = false;
        for (int64_t i = 0; i < m; ++i) {
            o[i] = r[i];
            nan |= r[i] != r[i];
        }
        return nan;
    }

    // A streamed call returns once its values are in; its kernel may still be ending.
    void settle() {
        if (!in_flight_) return;
        in_flight_ = false;
        check(cudaStreamSynchronize(stream_), "split kernel (cudaStreamSynchronize)");
        check(cudaStreamSynchronize(stream2_), "split kernel (cudaStreamSynchronize)");
    }

    void upload_grid() {
        upload(g0_, model_.g0, "split grid"), upload(pool_, model_.pool, "split grid blocks");
        upload(brick_, model_.brick, "split bricks"), upload(blocks_, model_.blocks, "split blocks");
        SplitGridView &g = dev_view_.v.grid;
        g = model_.gv;
        g.g0 = g0_.p, g.pool = pool_.p, g.brick = brick_.p, g.blocks = blocks_.p;
        check(cudaDeviceSynchronize(), "split tables upload");
    }

    // The gradient model's tables on the device (gdev_: grad_.view with device pointers), its own or the value's.
    void upload_grad() {
        const SplitModel &m = grad_.own ? *grad_.own : model_;
        upload(gx_, m.x, "split gradient cells x"), upload(gy_, m.y, "split gradient cells y");
        upload(gz_, m.z, "split gradient cells z"), upload(gq_, m.q, "split gradient cells q");
        upload(gstart_, m.start, "split gradient cell list"), upload(gtab_, m.table, "split gradient f table");
        upload(gfp_, grad_.fp, "split gradient f' table");
        upload(gg0_, m.g0, "split gradient grid"), upload(gpool_, m.pool, "split gradient grid blocks");
        upload(gbrick_, m.brick, "split gradient bricks"), upload(gblocks_, m.blocks, "split gradient blocks");
        gdev_ = grad_.view;
        SplitCellsView &c = gdev_.v.cells;
        c.x = gx_.p, c.y = gy_.p, c.z = gz_.p, c.q = gq_.p, c.start = m.start.empty() ? nullptr : gstart_.p;
        gdev_.v.table.c = gtab_.p, gdev_.fp.c = gfp_.p;
        SplitGridView &g = gdev_.v.grid;
        g.g0 = gg0_.p, g.pool = gpool_.p, g.brick = gbrick_.p, g.blocks = gblocks_.p;
        check(cudaDeviceSynchronize(), "split gradient tables upload");
    }

    void release() {
        for (auto *b : {&x_, &g0_, &pool_, &nx_, &nz_}) b->release();
        cells_.release(), start_.release(), brick_.release(), blocks_.release(), pin_pts_.release(), pin_res_.release();
        done_.release(), count_.release(), values_.release();
        for (auto *b : {&gx_, &gy_, &gz_, &gq_, &gtab_, &gfp_, &gg0_, &gpool_, &gpts_, &gout_}) b->release();
        gstart_.release(), gbrick_.release(), gblocks_.release();
        if (stream_) cudaStreamDestroy(stream_);
        if (stream2_) cudaStreamDestroy(stream2_);
        stream_ = stream2_ = nullptr;
    }

    FieldBackend &direct() {
        if (!direct_) direct_ = pending_.get();
        return *direct_;
    }

    int dev_ = 0;
    cudaStream_t stream_ = nullptr, stream2_ = nullptr;
    int64_t second_from_ = 0;  // the last streamed call's first chunk on stream2_
    std::future<std::unique_ptr<FieldBackend>> pending_;
    FieldData nuclei_;
    std::unique_ptr<FieldBackend> direct_;
    SplitModel model_;
    split::SplitDevice dev_view_;
    DeviceBuf<double> x_, g0_, pool_, nx_, nz_;
    DeviceBuf<split::SplitCellGpu> cells_;
    PinnedBuf<double> pin_pts_, pin_res_;
    // SplitStream's buffers; seq_: the last streamed call's number (its chunks' done flags once it is done).
    // From kTwoLaunchMin points a streamed call goes out in two launches, the first half's chunks on stream_ and the
    // rest on stream2_: the host stages the second half while the first runs, and the second kernel's blocks take the
    // SM slots that the first's free. 3-5 % a call at 8,192 points, the same bits; at 4,096 points, which one wave of
    // resident blocks holds (4,224 on an H100), 2-5 % slower than one launch (docs/design/gpu-kernels.md). Copying the
    // points to device memory by DMA first, for either launch, gained nothing.
    static constexpr int64_t kStreamMin = 2048;
    static constexpr int64_t kTwoLaunchMin = 6144;
    static constexpr int kStreamChunk = 1024;
    PinnedBuf<unsigned long long> done_;
    DeviceBuf<uint32_t> count_;
    DeviceBuf<double> values_;
    unsigned long long seq_ = 0;
    bool in_flight_ = false;  // a streamed kernel may still be ending
    split::SplitNuclei nuc_;
    std::vector<double> out_pts_;  // an evaluation's points outside the region (reused)
    std::vector<int64_t> out_idx_;
    DeviceBuf<int64_t> start_;
    DeviceBuf<int32_t> brick_;
    DeviceBuf<SplitBlock> blocks_;
    int64_t points_ = 0, outside_ = 0;
    // The gradient (SplitGradStats): its model, its device tables and a call's buffers; what its own grid is built from.
    SplitGradModel grad_;
    SplitGradView gdev_;
    DeviceBuf<double> gx_, gy_, gz_, gq_, gtab_, gfp_, gg0_, gpool_, gpts_, gout_;
    DeviceBuf<int64_t> gstart_;
    DeviceBuf<int32_t> gbrick_;
    DeviceBuf<SplitBlock> gblocks_;
    double cell_volume_ = 0;
    bool point_charges_ = false;
    qmmm_options opt_{};
    double region_[6] = {0, 0, 0, 0, 0, 0};
};

class FieldSplitGpuImpl final : public FieldSplitGpu {
public:
    std::unique_ptr<FieldBackend> make(const FieldData &d, const qmmm_options &opt) const override {
        return std::make_unique<FieldSplitCudaBackend>(d, opt);
    }
};
const FieldSplitGpuImpl impl;
const GpuRegistry<FieldSplitGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
