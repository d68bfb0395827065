// rdf_gpu.cu -- RDF pair counting on one GPU, host side: the per-thread device state (rdf_gpu.cuh: two frame
// buffers so that a frame's copies overlap the previous frame's kernels, streams, the 64-bit histogram, the cell
// sort's scratch) and the dispatch (uploads, the cell list built on the device, which kernel variant a unit takes
// and its shared memory). The kernels are rdf_gpu_kernels.cu's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <memory>
#include <string>
#include <vector>

#include "core_gpu.cuh"
#include "error.hpp"
#include "rdf_backend.hpp"
#include "rdf_gpu.cuh"

namespace qmmm::cuda {

using rdf::Atom;
using rdf::Geom;
using rdf::RdfDevice;
using rdf::RdfGpu;

namespace {

using namespace rdf_gpu;

template <class T>
void ensure(T *&p, size_t &cap, size_t n, const char *what) {
    if (n <= cap) return;
    if (p) cudaFree(p);
    p = nullptr;
    cap = 0;
    check(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)), what);
    cap = n;
}

int64_t brute_rows(const rdf::Frame &f) { return (int64_t(f.a1.size()) + kRowAtoms - 1) / kRowAtoms; }

// sel2 atoms per item: shorter runs for small selections, so every block gets many items (a short tail).
int brute_run(const rdf::Frame &f) {
    const int64_t n2 = f.identical ? int64_t(f.a1.size()) : int64_t(f.a2.size());
    return n2 < kSmallN ? kRunSmall : kRun;
}

// Identical selections: first item of each row (rows + 1 entries).
void brute_row_starts(const rdf::Frame &f, std::vector<int64_t> &rows) {
    const int64_t n = static_cast<int64_t>(f.a1.size()), nr = brute_rows(f);
    rows.resize(nr + 1);
    rows[0] = 0;
    const int run = brute_run(f);
    for (int64_t r = 0; r < nr; ++r) rows[r + 1] = rows[r] + (n - r * kRowAtoms + run - 1) / run;
}

int32_t rdf_dev_max_bins() { return kHistBytes / 4; }

int64_t rdf_dev_items(const rdf::Frame &f) {
    const int64_t n1 = static_cast<int64_t>(f.a1.size());
    const int64_t n2 = f.identical ? n1 : static_cast<int64_t>(f.a2.size());
    if (f.method == QMMM_RDF_METHOD_CELLS) return (n1 + kBlock - 1) / kBlock;
    if (!f.identical) return brute_rows(f) * ((n2 + brute_run(f) - 1) / brute_run(f));
    std::vector<int64_t> rows;
    brute_row_starts(f, rows);
    return rows.back();
}

RdfDev *rdf_dev_open(int device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    auto d = std::make_unique<RdfDev>();
    d->device = device;
    check(cudaDeviceGetAttribute(&d->n_sm, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    for (auto &s : d->stream) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaStreamCreateWithFlags(&d->copy, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreateWithFlags(&d->copied, cudaEventDisableTiming), "cudaEventCreate");
    for (auto &b : d->buf) {
        for (auto &e : b.done) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
        check(cudaEventCreateWithFlags(&b.staged, cudaEventDisableTiming), "cudaEventCreate");
    }
    check(cudaMalloc(&d->counter, 2 * sizeof(unsigned long long)), "cudaMalloc (counters)");
    return d.release();
}

void rdf_dev_close(RdfDev *d) noexcept {
    if (!d) return;
    for (auto &b : d->buf) {
        cudaFree(b.a1), cudaFree(b.a2), cudaFree(b.cell1), cudaFree(b.start), cudaFree(b.rows), cudaFree(b.max_cell);
        cudaFree(b.thr), cudaFree(b.tab);
        for (auto e : b.done)
            if (e) cudaEventDestroy(e);
        if (b.staged) cudaEventSynchronize(b.staged), cudaEventDestroy(b.staged);
    }
    cudaFree(d->hist), cudaFree(d->counter);
    cudaFree(d->raw), cudaFree(d->keys), cudaFree(d->keys_out), cudaFree(d->idx), cudaFree(d->idx_out);
    cudaFree(d->sort_tmp);
    if (d->copied) cudaEventDestroy(d->copied);
    if (d->copy) cudaStreamDestroy(d->copy);
    for (auto s : d->stream)
        if (s) cudaStreamDestroy(s);
    delete d;
}

void rdf_dev_wait(RdfDev *d, int slot) { check(cudaStreamSynchronize(d->stream[slot & 1]), "RDF kernel"); }

// Sorts n atoms (host memory, input order) by cell into out on stream st, stably, as sort_by_cell
// does on the host: cells (if not null) gets each sorted atom's cell, start (if not null) the n_cells + 1 offsets
// and max_cell the fullest cell. `host` must stay unchanged until the copy is done (an event after it).
void sort_on_device(RdfDev *d, const Atom *host, int64_t n, const int32_t nc[3], Atom *out, int32_t *cells,
                    int32_t *start, int32_t *max_cell, cudaStream_t st) {
    const int64_t n_cells = int64_t{nc[0]} * nc[1] * nc[2];
    int bits = 1;
    while (bits < 32 && (int64_t{1} << bits) < n_cells) ++bits;
    const size_t un = static_cast<size_t>(n);
    ensure(d->raw, d->cap_raw, un, "cudaMalloc (cell sort)");
    ensure(d->keys, d->cap_keys, un, "cudaMalloc (cell sort)");
    ensure(d->keys_out, d->cap_keys_out, un, "cudaMalloc (cell sort)");
    ensure(d->idx, d->cap_idx, un, "cudaMalloc (cell sort)");
    ensure(d->idx_out, d->cap_idx_out, un, "cudaMalloc (cell sort)");
    check(cudaMemcpyAsync(d->raw, host, un * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy atoms");
    const unsigned grid = static_cast<unsigned>((n + kBlock - 1) / kBlock);
    launch_cell_keys(grid, st, d->raw, n, nc[0], nc[1], nc[2], d->keys, d->idx);
    check(cudaGetLastError(), "cell keys launch");
    uint32_t *sorted_keys = cells ? reinterpret_cast<uint32_t *>(cells) : d->keys_out;
    size_t tmp = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, tmp, d->keys, sorted_keys, d->idx, d->idx_out, n, 0, bits, st),
          "cub radix sort (size)");
    ensure(d->sort_tmp, d->cap_sort_tmp, tmp, "cudaMalloc (cell sort)");
    check(cub::DeviceRadixSort::SortPairs(d->sort_tmp, tmp, d->keys, sorted_keys, d->idx, d->idx_out, n, 0, bits, st),
          "cub radix sort");
    launch_cell_gather(grid, st, d->raw, d->idx_out, n, out);
    check(cudaGetLastError(), "cell gather launch");
    if (start) {
        launch_cell_starts(static_cast<unsigned>((n + kBlock) / kBlock), st, sorted_keys, n, n_cells, start);
        check(cudaGetLastError(), "cell starts launch");
        check(cudaMemsetAsync(max_cell, 0, sizeof(int32_t), st), "cudaMemsetAsync (fullest cell)");
        const unsigned g = static_cast<unsigned>(std::min<int64_t>((n_cells + kBlock - 1) / kBlock, 4 * d->n_sm));
        launch_cell_max(g, st, start, n_cells, max_cell);
        check(cudaGetLastError(), "fullest cell launch");
    }
}

// Copies the frame into the other buffer on the copy stream: it waits (on the device) only for the kernels of
// the frame that buffer held before, not for the ones now running. The frames of the GPU path are page-locked
// (Frame::pinned): their copies run asynchronously at full PCIe speed and the buffer's `staged` event marks their
// end (reuse_wait); a pageable copy would hold the host thread for the whole transfer. The kernel streams wait
// for the copies (event). c_stencil is shared: a different stencil waits for all queued kernels first.
void rdf_dev_upload(RdfDev *d, const rdf::Frame &f) {
    FrameBuf &prev = d->buf[d->cur];
    if (prev.used)  // the previous frame's kernels so far (launches after this upload belong to the new frame)
        for (int k = 0; k < 2; ++k) check(cudaEventRecord(prev.done[k], d->stream[k]), "cudaEventRecord");
    d->cur ^= 1;
    FrameBuf &b = d->buf[d->cur];
    cudaStream_t st = d->copy;
    if (b.used)
        for (int k = 0; k < 2; ++k) check(cudaStreamWaitEvent(st, b.done[k], 0), "cudaStreamWaitEvent");
    const size_t n1 = f.a1.size(), n2 = f.a2.size();
    ensure(b.a1, b.cap_a1, n1, "cudaMalloc (sel1)");
    if (!f.identical) ensure(b.a2, b.cap_a2, n2, "cudaMalloc (sel2)");
    const bool cells = f.method == QMMM_RDF_METHOD_CELLS;
    if (f.device_cells) {
        if (!cells) {  // brute force: sel1 into small cells (a warp's atoms are neighbours), sel2 as it is
            sort_on_device(d, f.a1.data(), int64_t(n1), f.nc, b.a1, nullptr, nullptr, nullptr, st);
            if (!f.identical)
                check(cudaMemcpyAsync(b.a2, f.a2.data(), n2 * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy sel2");
        } else {
            ensure(b.cell1, b.cap_cell1, n1, "cudaMalloc (cells)");
            ensure(b.start, b.cap_start, size_t(f.nc[0]) * f.nc[1] * f.nc[2] + 1, "cudaMalloc (cell starts)");
            ensure(b.max_cell, b.cap_max_cell, 1, "cudaMalloc (fullest cell)");
            if (f.identical) {
                sort_on_device(d, f.a1.data(), int64_t(n1), f.nc, b.a1, b.cell1, b.start, b.max_cell, st);
            } else {
                sort_on_device(d, f.a1.data(), int64_t(n1), f.nc, b.a1, b.cell1, nullptr, nullptr, st);
                sort_on_device(d, f.a2.data(), int64_t(n2), f.nc, b.a2, nullptr, b.start, b.max_cell, st);
            }
        }
    } else {
        check(cudaMemcpyAsync(b.a1, f.a1.data(), n1 * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy sel1");
        if (!f.identical)
            check(cudaMemcpyAsync(b.a2, f.a2.data(), n2 * sizeof(Atom), cudaMemcpyHostToDevice, st), "copy sel2");
    }
    check(cudaEventRecord(b.staged, st), "cudaEventRecord");  // the copies out of host memory end here
    if (cells && !f.device_cells) {
        ensure(b.cell1, b.cap_cell1, f.cell1.size(), "cudaMalloc (cells)");
        ensure(b.start, b.cap_start, f.start.size(), "cudaMalloc (cell starts)");
        check(cudaMemcpyAsync(b.cell1, f.cell1.data(), f.cell1.size() * 4, cudaMemcpyHostToDevice, st), "copy cells");
        check(cudaMemcpyAsync(b.start, f.start.data(), f.start.size() * 4, cudaMemcpyHostToDevice, st),
              "copy cell starts");
    }
    if (cells) {
        if (f.stencil.size() > size_t(kMaxStencil)) throw Error(QMMM_ERR_INTERNAL, "cell stencil too large");
        if (f.stencil != d->stencil) {  // kernels of earlier frames may still read c_stencil
            rdf_dev_wait(d, 0), rdf_dev_wait(d, 1);
            check(copy_stencil(f.stencil.data(), f.stencil.size(), st), "copy stencil");
            d->stencil = f.stencil;
        }
    } else if (f.identical) {
        brute_row_starts(f, d->host_rows);
        ensure(b.rows, b.cap_rows, d->host_rows.size(), "cudaMalloc (rows)");
        check(cudaMemcpyAsync(b.rows, d->host_rows.data(), d->host_rows.size() * 8, cudaMemcpyHostToDevice, st),
              "copy rows");
    }
    if (f.tab_ok && f.table.size() <= size_t(kTableMax)) {
        ensure(b.thr, b.cap_thr, f.thr.size(), "cudaMalloc (bin thresholds)");
        ensure(b.tab, b.cap_tab, f.table.size(), "cudaMalloc (bin table)");
        check(cudaMemcpyAsync(b.thr, f.thr.data(), f.thr.size() * 4, cudaMemcpyHostToDevice, st), "copy thresholds");
        check(cudaMemcpyAsync(b.tab, f.table.data(), f.table.size() * 2, cudaMemcpyHostToDevice, st), "copy table");
    }
    check(cudaEventRecord(d->copied, st), "cudaEventRecord");
    for (auto k : d->stream) check(cudaStreamWaitEvent(k, d->copied, 0), "cudaStreamWaitEvent");
    b.used = true;
}

// The buffer the next upload takes holds the frame of two uploads ago: its copies out of host memory (the
// staged event) and its kernels must be done before the host rewrites that frame.
void rdf_dev_reuse_wait(RdfDev *d) {
    FrameBuf &b = d->buf[d->cur ^ 1];
    check(cudaEventSynchronize(b.staged), "waiting for a frame's copies");
    if (b.used)
        for (auto e : b.done) check(cudaEventSynchronize(e), "waiting for a frame's kernels");
}

void rdf_dev_zero(RdfDev *d, int32_t n_bins) {
    rdf_dev_wait(d, 0), rdf_dev_wait(d, 1);
    ensure(d->hist, d->cap_hist, size_t(n_bins), "cudaMalloc (histogram)");
    check(cudaMemsetAsync(d->hist, 0, size_t(n_bins) * 8, d->stream[0]), "cudaMemsetAsync");
    rdf_dev_wait(d, 0);
}

void rdf_dev_launch(RdfDev *d, const rdf::Frame &f, int64_t k0, int64_t k1, int32_t b0, int32_t nb, int slot) {
    if (k1 <= k0) return;
    const bool tri = f.g.triclinic != 0, id = f.identical, excl = f.exclusions;
    const FrameBuf &fb = d->buf[d->cur];
    const Atom *s = id ? fb.a1 : fb.a2;
    const int64_t n1 = static_cast<int64_t>(f.a1.size());
    const int64_t n2 = id ? n1 : static_cast<int64_t>(f.a2.size());
    // Shared memory: [brute-force tile] histogram copies [thresholds, table]; the table mode when it fits.
    const size_t tables = f.tab_ok ? (4 * f.thr.size() + 2 * f.table.size() + 3) / 4 * 4 : 0;
    const bool table = f.tab_ok && f.table.size() <= size_t(kTableMax) && f.g.rmin == 0.f && f.g.rmin2 == 0.f && b0 == 0 &&
                       nb == f.g.n_bins && tables + 4 * size_t(nb) <= size_t(kHistBytes);
    const int mode = table ? kTable : (f.g.n_bins > (1 << 23) ? kRootBig : kRoot);
    const size_t room = size_t(kHistBytes) - (table ? tables : 0);
    const int copies = static_cast<int>(std::clamp<size_t>(room / (4 * size_t(nb)), 1, 8));
    const size_t hist_bytes = size_t(copies) * nb * 4 + (table ? tables : 0);  // + the tables behind the copies
    TableArgs ta{fb.thr, fb.tab, static_cast<int>(f.thr.size()), static_cast<int>(f.table.size()), f.tab_shift,
                 f.tab_base};
    cudaStream_t st = d->stream[slot & 1];
    if (f.method == QMMM_RDF_METHOD_BRUTE) {
        const size_t sm = kTile * sizeof(Atom) + hist_bytes;
        int per_sm = 1;
        check(brute_blocks_per_sm(&per_sm, sm), "occupancy");
        const int64_t blocks = std::min<int64_t>(k1 - k0, int64_t(std::max(per_sm, 1)) * d->n_sm);
        unsigned long long *ctr = d->counter + (slot & 1);
        check(cudaMemsetAsync(ctr, 0, sizeof *ctr, st), "cudaMemsetAsync (counter)");
        const int run = brute_run(f);
        const int64_t per_row = (n2 + run - 1) / run;
        // An item adds at most 512 x 2048 = 2^20 pairs to a counter: flush before 4095 items.
        const int flush_every = 4095;
        const dim3 grid(static_cast<unsigned>(blocks));
        launch_brute(tri, id, excl, mode, grid, sm, st, f.g, fb.a1, n1, s, n2, fb.rows, brute_rows(f), per_row, k0, k1,
                     run, b0, nb, copies, flush_every, ta, ctr, d->hist);
        check(cudaGetLastError(), "brute-force kernel launch");
    } else {
        const int n_st = static_cast<int>(f.stencil.size() / 3);
        const dim3 grid(static_cast<unsigned>(k1 - k0));
        launch_cells(tri, id, excl, mode, grid, hist_bytes, st, f.g, fb.a1, fb.cell1, n1, k0, s, fb.start,
                     f.device_cells ? fb.max_cell : nullptr, n_st, f.nc[0], f.nc[1], f.nc[2], b0, nb, copies, ta,
                     d->hist);
        check(cudaGetLastError(), "cell-list kernel launch");
    }
}

void rdf_dev_add_hist(RdfDev *d, int32_t n_bins, uint64_t *hist) {
    rdf_dev_wait(d, 0), rdf_dev_wait(d, 1);
    d->host_hist.resize(n_bins);
    check(cudaMemcpyAsync(d->host_hist.data(), d->hist, size_t(n_bins) * 8, cudaMemcpyDeviceToHost, d->stream[0]),
          "copy histogram");
    rdf_dev_wait(d, 0);
    for (int32_t b = 0; b < n_bins; ++b) hist[b] += d->host_hist[b];
}

class RdfDeviceImpl final : public RdfDevice {
public:
    explicit RdfDeviceImpl(int device) : d_(rdf_dev_open(device)) {}
    ~RdfDeviceImpl() override { rdf_dev_close(d_); }
    void upload(const rdf::Frame &f) override { rdf_dev_upload(d_, f); }
    void reuse_wait() override { rdf_dev_reuse_wait(d_); }
    void zero(int32_t n_bins) override { rdf_dev_zero(d_, n_bins); }
    void launch(const rdf::Frame &f, int64_t k0, int64_t k1, int32_t b0, int32_t nb, int slot) override {
        rdf_dev_launch(d_, f, k0, k1, b0, nb, slot);
    }
    void wait(int slot) override { rdf_dev_wait(d_, slot); }
    void add_hist(int32_t n_bins, uint64_t *hist) override { rdf_dev_add_hist(d_, n_bins, hist); }

private:
    RdfDev *d_;
};

// Page-locked memory for the frames of qmmm_rdf_add_frames (portable: any device may copy from it).
class PinnedMemory final : public rdf::HostMemory {
public:
    void *alloc(size_t bytes) const override {
        void *p = nullptr;
        check(cudaHostAlloc(&p, std::max<size_t>(bytes, 1), cudaHostAllocPortable), "cudaHostAlloc (frame atoms)");
        return p;
    }
    void release(void *p) const noexcept override {
        if (p) cudaFreeHost(p);
    }
};
const PinnedMemory pinned_memory;

class RdfGpuImpl final : public RdfGpu {
public:
    const rdf::HostMemory *host_memory() const override { return &pinned_memory; }
    std::unique_ptr<RdfDevice> open(int device) const override { return std::make_unique<RdfDeviceImpl>(device); }
    int32_t max_bins() const override { return rdf_dev_max_bins(); }
    int64_t items(const rdf::Frame &f) const override { return rdf_dev_items(f); }
};
const RdfGpuImpl impl;
const GpuRegistry<RdfGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
