// rdf_pool.cpp -- one or several GPUs counting frames: a persistent host thread per listed device.
//
// The threads (gpu_worker.hpp) live from the first GPU frame until qmmm_rdf_release(). Each device sums
// into its own 64-bit histogram; the host adds them (integers, so any split gives the same bits as one device).
//
// Several frames (gpu_count_frames): the natural unit is the frame. The threads take whole frames from a
// shared counter (a faster GPU takes more); a thread prepares its next frame on the host while its GPU counts
// the previous one. Frames left over when fewer remain than devices are split like single frames.
// One frame (gpu_count): cut into units (a range of work items x a range of histogram bins) that the threads
// take from a shared counter as they finish, with two units in flight per device so one starts while the
// other drains (dynamic load balancing). A frame with fewer than kMinSplitPairs distance evaluations
// per device is not split: the upload and synchronisation would cost more than the second GPU gains.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "error.hpp"
#include "gpu_worker.hpp"
#include "rdf_backend.hpp"
#include "tuning_env.hpp"

namespace qmmm::rdf {
namespace {

constexpr int64_t kMinItemsPerUnit = 4 * 528;  // 4 items x (4 blocks x 132 SMs of an H100/H200)

using Worker = GpuWorker<RdfDevice>;

struct Pool {
    std::mutex use;  // one call at a time through the pool
    WorkerMap<Worker> workers;
    // Per worker: the frame its GPU counts and the one being prepared, kept between calls (fresh multi-MB
    // buffers would cost page faults on every frame).
    std::map<Worker *, std::unique_ptr<Frame[]>> frames;
};

Pool &pool() {  // never destroyed: at exit the CUDA runtime may be gone; qmmm_rdf_release() is the clean way
    static Pool *p = new Pool;
    return *p;
}

std::unique_ptr<RdfDevice> open_device(int device) { return GpuRegistry<RdfGpu>::get().open(device); }

// How a frame is cut: n_ranges histogram ranges of nb bins, items per unit.
struct Plan {
    int64_t items = 0, per_unit = 0, n_units = 0;
    int32_t n_ranges = 1, nb = 0;
    int32_t n_bins = 0;
    void unit(int64_t u, int64_t &k0, int64_t &k1, int32_t &b0, int32_t &n) const {
        const int64_t t = u / n_ranges, r = u % n_ranges;
        k0 = t * per_unit, k1 = std::min(items, k0 + per_unit);
        b0 = static_cast<int32_t>(r * nb), n = static_cast<int32_t>(std::min<int64_t>(nb, n_bins - b0));
    }
};

Plan plan(const Frame &f, int64_t units_wanted) {
    Plan p;
    p.n_bins = f.g.n_bins;
    const int32_t max_nb = GpuRegistry<RdfGpu>::get().max_bins();
    p.n_ranges = (f.g.n_bins + max_nb - 1) / max_nb;
    p.nb = (f.g.n_bins + p.n_ranges - 1) / p.n_ranges;
    p.items = std::max<int64_t>(GpuRegistry<RdfGpu>::get().items(f), 1);
    const int64_t tiles = std::clamp<int64_t>((units_wanted + p.n_ranges - 1) / p.n_ranges, 1, p.items);
    p.per_unit = (p.items + tiles - 1) / tiles;
    p.n_units = ((p.items + p.per_unit - 1) / p.per_unit) * p.n_ranges;
    return p;
}

// Counts a whole frame on one device (already uploaded), all bin ranges, without waiting.
void launch_frame(RdfDevice *dev, const Frame &f) {
    const Plan p = plan(f, 1);
    for (int64_t u = 0; u < p.n_units; ++u) {
        int64_t k0, k1;
        int32_t b0, nb;
        p.unit(u, k0, k1, b0, nb);
        dev->launch(f, k0, k1, b0, nb, 0);
    }
}

}  // namespace

void gpu_count(const Frame &f, const std::vector<int> &devices, uint64_t *hist, GpuRunInfo *info) {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    auto ws = workers_for(pl.workers, devices, open_device);
    // Too small to gain from more devices: fewer workers (the first listed ones). The environment variable
    // QMMM_RDF_MIN_SPLIT_PAIRS overrides the threshold (tests split small frames with it; tuning_env.hpp).
    const double min_split = qmmm::tuning::rdf_min_split_pairs(kMinSplitPairs);
    const size_t useful =
        min_split > 0 ? static_cast<size_t>(std::max(1.0, f.pairs_visited / min_split)) : ws.size();
    if (ws.size() > useful) ws.resize(useful);
    const int64_t W = static_cast<int64_t>(ws.size());
    // One device: one unit per bin range. Several: up to 8 units per device, so a faster one can take more,
    // but no unit smaller than ~4 items per block slot of a GPU (a unit's tail costs about one item).
    const int64_t items = GpuRegistry<RdfGpu>::get().items(f);
    const int64_t wanted = std::clamp<int64_t>(items / kMinItemsPerUnit, W, 8 * W);
    const Plan p = plan(f, W == 1 ? 1 : wanted);
    GpuJob job(static_cast<int>(W));
    std::atomic<int64_t> next{0};
    std::vector<std::vector<uint64_t>> parts(W, std::vector<uint64_t>(f.g.n_bins, 0));
    std::vector<int64_t> taken(devices.size(), 0);
    for (int64_t w = 0; w < W; ++w) {
        Worker *wk = ws[w];
        wk->submit([&, w, wk](RdfDevice *dev) {
            job.guarded(wk->device(), [&] {
                if (!dev) throw wk->open_error();
                dev->upload(f);
                dev->zero(f.g.n_bins);
                int slot = 0;
                for (int64_t u; !job.abort && (u = next++) < p.n_units; slot ^= 1) {
                    int64_t k0, k1;
                    int32_t b0, nb;
                    p.unit(u, k0, k1, b0, nb);
                    dev->wait(slot);  // at most two units in flight
                    dev->launch(f, k0, k1, b0, nb, slot);
                    ++taken[w];
                }
                dev->add_hist(f.g.n_bins, parts[w].data());
            });
            job.done();
        });
    }
    job.wait();
    for (const auto &q : parts)
        for (int32_t b = 0; b < f.g.n_bins; ++b) hist[b] += q[b];
    if (info) {
        info->n_units = p.n_units, info->units_per_worker = taken, info->pairs_visited = f.pairs_visited;
    }
}

void gpu_count_frames(int64_t n_frames, const PrepareFn &prepare, const std::vector<int> &devices, uint64_t *hist,
                      std::vector<double> &volumes, GpuRunInfo *info, int n_threads) {
    volumes.assign(n_frames, 0.0);
    const int64_t W = static_cast<int64_t>(devices.size());
    // Whole frames while every device can have one; the rest are split (W == 1: every frame is whole).
    const int64_t whole = W == 1 ? n_frames : n_frames / W * W;
    std::vector<uint64_t> acc;
    GpuRunInfo total;
    total.units_per_worker.assign(W, 0);
    {
        Pool &pl = pool();
        std::lock_guard<std::mutex> use(pl.use);
        auto ws = workers_for(pl.workers, devices, open_device);
        GpuJob job(static_cast<int>(W));
        std::atomic<int64_t> next{0};
        std::vector<std::vector<uint64_t>> parts(W);
        std::vector<double> pairs(W, 0.0), prep_s(W, 0.0);
        const int all = n_threads > 0 ? n_threads : omp_get_num_procs();
        const int nt = std::max(1, all / static_cast<int>(W));  // preparation threads per worker
        for (int64_t w = 0; w < W && whole > 0; ++w) {
            Worker *wk = ws[w];
            auto &slot = pl.frames[wk];
            if (!slot) {  // page-locked atoms: the upload copies them with no staging copy (rdf_gpu.cu)
                const HostMemory *pin = GpuRegistry<RdfGpu>::get().host_memory();
                slot.reset(new Frame[2]{Frame(pin), Frame(pin)});
            }
            Frame *fr = slot.get();
            wk->submit([&, w, wk, fr](RdfDevice *dev) {
                int cur = 0;
                bool launched = false, zeroed = false;
                job.guarded(wk->device(), [&] {
                    if (!dev) throw wk->open_error();
                    for (int64_t k; !job.abort && (k = next++) < whole;) {
                        Frame &f = fr[cur ^ 1];
                        dev->reuse_wait();  // f was uploaded two frames ago and may still be copied from
                        const auto t0 = std::chrono::steady_clock::now();
                        try {
                            volumes[k] = prepare(k, f, nt);
                        } catch (const Error &e) {
                            job.failed(e.status, "frame " + std::to_string(k) + ": " + e.what(), k);
                            return;
                        }
                        prep_s[w] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                        if (!zeroed) dev->zero(f.g.n_bins), zeroed = true;
                        dev->upload(f);  // overlaps the previous frame's kernels (two device buffers)
                        launch_frame(dev, f);
                        launched = true;
                        pairs[w] += f.pairs_visited;
                        ++total.units_per_worker[w];
                        cur ^= 1;
                    }
                    if (launched) {
                        parts[w].assign(fr[cur].g.n_bins, 0);
                        dev->add_hist(fr[cur].g.n_bins, parts[w].data());
                    }
                });
                job.done();
            });
        }
        if (whole > 0) job.wait();
        for (const auto &q : parts) {
            if (acc.empty()) acc.assign(q.size(), 0);
            for (size_t b = 0; b < q.size(); ++b) acc[b] += q[b];
        }
        for (int64_t w = 0; w < W; ++w) total.pairs_visited += pairs[w], total.prep_seconds += prep_s[w];
        total.n_units = whole;
    }
    // The remaining frames (fewer than the devices): one at a time over all devices.
    Frame f(GpuRegistry<RdfGpu>::get().host_memory());
    for (int64_t k = whole; k < n_frames; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        try {
            volumes[k] = prepare(k, f, n_threads);
        } catch (const Error &e) {
            throw Error(e.status, "frame " + std::to_string(k) + ": " + e.what());
        }
        total.prep_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (acc.empty()) acc.assign(f.g.n_bins, 0);
        GpuRunInfo one;
        gpu_count(f, devices, acc.data(), &one);
        total.pairs_visited += one.pairs_visited;
        total.n_units += one.n_units;
        for (size_t w = 0; w < one.units_per_worker.size() && w < size_t(W); ++w)
            total.units_per_worker[w] += one.units_per_worker[w];
    }
    for (size_t b = 0; b < acc.size(); ++b) hist[b] += acc[b];
    if (info) *info = total;
}

void gpu_release() {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    pl.frames.clear();  // page-locked frames first, while the devices' contexts are certainly alive
    pl.workers.clear();
}

}  // namespace qmmm::rdf
