// rdf_gpu_pool.cpp -- one or several GPUs counting one frame: a persistent host thread per listed device.
//
// Seed 000 (section 2.4.2): binding a host thread to a GPU costs 0.1-1 s, so the threads live from the first
// GPU frame until qmmm_rdf_release(), each keeping its stream and buffers. A frame is cut into work units,
// (tile of sel1) x (range of histogram bins), that the threads take from a shared counter as they finish the
// previous one: a faster GPU simply takes more units (dynamic load balancing). Each device sums into its own
// 64-bit histogram; the host adds them (integers, so the order does not matter). A device may be listed twice.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "../src_cuda/qmmm_cuda.h"
#include "error.hpp"
#include "rdf_backend.hpp"

namespace qmmm::rdf {
namespace {

class Worker {
public:
    explicit Worker(int device) : device_(device), th_([this] { loop(); }) {}
    ~Worker() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
        }
        cv_.notify_all();
        th_.join();
    }
    void submit(std::function<void(cuda::RdfDevice *)> job) {
        {
            std::lock_guard<std::mutex> g(m_);
            job_ = std::move(job);
        }
        cv_.notify_all();
    }
    int device() const { return device_; }
    Error open_error{QMMM_ERR_INTERNAL, ""};

private:
    void loop() {
        std::unique_lock<std::mutex> lk(m_);
        for (;;) {
            cv_.wait(lk, [&] { return stop_ || job_; });
            if (stop_) break;
            auto job = std::move(job_);
            job_ = nullptr;
            lk.unlock();
            job(dev_ ? dev_ : (dev_ = open()));
            lk.lock();
        }
        lk.unlock();
        if (dev_) cuda::rdf_device_close(dev_);  // on the thread bound to the device
    }
    cuda::RdfDevice *open() {
        try {
            return cuda::rdf_device_open(device_);
        } catch (const Error &e) {
            open_error = e;
            return nullptr;
        }
    }

    int device_;
    std::mutex m_;
    std::condition_variable cv_;
    std::function<void(cuda::RdfDevice *)> job_;
    bool stop_ = false;
    cuda::RdfDevice *dev_ = nullptr;
    std::thread th_;  // last: starts after the members it uses exist
};

struct Pool {
    std::mutex use;  // one frame at a time through the pool
    std::map<std::pair<int, int>, std::unique_ptr<Worker>> workers;  // (device, listing) -> thread
};

Pool &pool() {  // never destroyed: at exit the CUDA runtime may be gone; qmmm_rdf_release() is the clean way
    static Pool *p = new Pool;
    return *p;
}

struct Job {
    std::mutex m;
    std::condition_variable cv;
    int remaining = 0;
    std::atomic<int64_t> next{0};
    std::atomic<bool> abort{false};
    int status = QMMM_SUCCESS;
    std::string message;
    void failed(int s, const std::string &msg) {
        std::lock_guard<std::mutex> g(m);
        if (status == QMMM_SUCCESS) status = s, message = msg;
        abort = true;
    }
};

}  // namespace

void gpu_count(const Frame &f, const std::vector<int> &devices, int kernel, uint64_t *hist, GpuRunInfo *info) {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    std::vector<Worker *> ws;
    std::map<int, int> seen;
    for (int d : devices) {
        auto &slot = pl.workers[{d, seen[d]++}];
        if (!slot) slot = std::make_unique<Worker>(d);
        ws.push_back(slot.get());
    }
    const int64_t W = static_cast<int64_t>(ws.size()), n1 = static_cast<int64_t>(f.a1.size());
    const int32_t max_nb = cuda::rdf_max_bins_per_unit();
    const int32_t n_ranges = (f.g.n_bins + max_nb - 1) / max_nb;
    const int32_t nb = (f.g.n_bins + n_ranges - 1) / n_ranges;
    // One GPU: one tile per bin range. Several: ~16 units per GPU so the faster ones can take more, in
    // tiles of whole 256-atom blocks.
    const int64_t blocks = (n1 + 255) / 256;
    const int64_t tiles = W == 1 ? 1 : std::clamp<int64_t>((16 * W + n_ranges - 1) / n_ranges, 1, blocks);
    const int64_t tile = (blocks + tiles - 1) / tiles * 256;
    const int64_t n_tiles = (n1 + tile - 1) / tile;
    const int64_t n_units = n_tiles * n_ranges;

    Job job;
    job.remaining = static_cast<int>(W);
    std::vector<std::vector<uint64_t>> parts(W, std::vector<uint64_t>(f.g.n_bins, 0));
    std::vector<int64_t> taken(W, 0);
    for (int64_t w = 0; w < W; ++w) {
        Worker *wk = ws[w];
        wk->submit([&, w, wk](cuda::RdfDevice *dev) {
            try {
                if (!dev) throw wk->open_error;
                cuda::rdf_device_set_frame(dev, f);
                for (int64_t k; !job.abort && (k = job.next++) < n_units;) {
                    const int64_t t = k / n_ranges, r = k % n_ranges;
                    cuda::RdfUnit u{t * tile, std::min(n1, (t + 1) * tile), static_cast<int32_t>(r * nb),
                                    static_cast<int32_t>(std::min<int64_t>(nb, f.g.n_bins - r * nb))};
                    cuda::rdf_device_unit(dev, f, u, kernel);
                    ++taken[w];
                }
                if (!job.abort) cuda::rdf_device_add_hist(dev, f, parts[w].data());
            } catch (const Error &e) {
                job.failed(e.status, "device " + std::to_string(wk->device()) + ": " + e.what());
            } catch (const std::bad_alloc &) {
                job.failed(QMMM_ERR_OUT_OF_MEMORY, "device " + std::to_string(wk->device()) + ": out of host memory");
            } catch (const std::exception &e) {
                job.failed(QMMM_ERR_INTERNAL, "device " + std::to_string(wk->device()) + ": " + e.what());
            }
            std::lock_guard<std::mutex> g(job.m);
            if (--job.remaining == 0) job.cv.notify_all();
        });
    }
    {
        std::unique_lock<std::mutex> lk(job.m);
        job.cv.wait(lk, [&] { return job.remaining == 0; });
    }
    if (job.status != QMMM_SUCCESS) throw Error(job.status, job.message);
    for (const auto &p : parts)
        for (int32_t b = 0; b < f.g.n_bins; ++b) hist[b] += p[b];
    if (info) info->n_units = n_units, info->units_per_worker = taken;
}

void gpu_release() {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    pl.workers.clear();
}

}  // namespace qmmm::rdf
