// gpu_worker.hpp -- the persistent host thread per listed GPU behind the multi-GPU pools (DCS, RDF).
//
// Seed 000 (section 2.4.2) and seed 002: a host thread binds its CUDA context to one GPU with its first
// CUDA call and keeps it; binding costs 0.1-1 s, more than a small map or frame. So a worker thread lives
// from its family's first GPU call until the family's release call and keeps its device state (Dev: streams,
// buffers), opened on first use and closed on the same thread. A device may be listed twice; each listing
// gets its own worker (own thread and stream), so one GPU can be fed from two threads.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "error.hpp"

namespace qmmm {

// Open(device) binds the calling thread to `device` and may throw Error; Close runs on the same thread.
template <class Dev, Dev *(*Open)(int), void (*Close)(Dev *)>
class GpuWorker {
public:
    explicit GpuWorker(int device) : device_(device), th_([this] { loop(); }) {}
    GpuWorker(const GpuWorker &) = delete;
    GpuWorker &operator=(const GpuWorker &) = delete;
    ~GpuWorker() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
        }
        cv_.notify_all();
        th_.join();
    }
    // Runs job on this worker's thread with its device state; with null when the device failed to open
    // (open_error() says why, read it from the job; the next job tries to open again). One job at a time:
    // the caller waits for a job's end before submitting the next one.
    void submit(std::function<void(Dev *)> job) {
        {
            std::lock_guard<std::mutex> g(m_);
            job_ = std::move(job);
        }
        cv_.notify_all();
    }
    int device() const { return device_; }
    const Error &open_error() const { return open_error_; }

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
        if (dev_) Close(dev_);  // on the thread that owns the context binding
    }
    Dev *open() {
        try {
            return Open(device_);
        } catch (const Error &e) {
            open_error_ = e;
            return nullptr;
        }
    }

    int device_;
    Error open_error_{QMMM_ERR_INTERNAL, ""};
    std::mutex m_;
    std::condition_variable cv_;
    std::function<void(Dev *)> job_;
    bool stop_ = false;
    Dev *dev_ = nullptr;
    std::thread th_;  // last: starts after the members it uses exist
};

// A pool's workers by (device, listing): the k-th listing of a device is the same thread on every call.
template <class W>
using WorkerMap = std::map<std::pair<int, int>, std::unique_ptr<W>>;

template <class W>
std::vector<W *> workers_for(WorkerMap<W> &workers, const std::vector<int> &devices) {
    std::vector<W *> ws;
    std::map<int, int> seen;
    for (int d : devices) {
        auto &slot = workers[{d, seen[d]++}];
        if (!slot) slot = std::make_unique<W>(d);
        ws.push_back(slot.get());
    }
    return ws;
}

}  // namespace qmmm
