// gpu_worker.hpp -- the persistent host thread per listed GPU behind the multi-GPU pools (DCS, RDF).
//
// A host thread binds its CUDA context to one GPU with its first CUDA call and keeps it (as the published
// multi-GPU RDF and DCS codes do); binding costs 0.1-1 s, more than a small map or frame. So a worker thread lives
// from its family's first GPU call until the family's release call and keeps its device state (Dev: streams,
// buffers, made by the family's GPU interface), opened on first use and destroyed on the same thread. A device may be listed twice; each listing
// gets its own worker (own thread and stream), so one GPU can be fed from two threads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "error.hpp"

namespace qmmm {

// open(device) binds the calling thread to `device`, returns the device state and may throw Error; the state
// is destroyed on the same thread.
template <class Dev>
class GpuWorker {
public:
    using Open = std::function<std::unique_ptr<Dev>(int)>;
    GpuWorker(int device, Open open) : device_(device), open_(std::move(open)), th_([this] { loop(); }) {}
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
            if (!dev_) dev_ = open();
            job(dev_.get());
            lk.lock();
        }
        lk.unlock();
        dev_.reset();  // on the thread that owns the context binding
    }
    std::unique_ptr<Dev> open() {
        try {
            return open_(device_);
        } catch (const Error &e) {
            open_error_ = e;
            return nullptr;
        }
    }

    int device_;
    Open open_;
    Error open_error_{QMMM_ERR_INTERNAL, ""};
    std::mutex m_;
    std::condition_variable cv_;
    std::function<void(Dev *)> job_;
    bool stop_ = false;
    std::unique_ptr<Dev> dev_;
    std::thread th_;  // last: starts after the members it uses exist
};

// A pool's workers by (device, listing): the k-th listing of a device is the same thread on every call.
template <class W>
using WorkerMap = std::map<std::pair<int, int>, std::unique_ptr<W>>;

template <class W>
std::vector<W *> workers_for(WorkerMap<W> &workers, const std::vector<int> &devices, const typename W::Open &open) {
    std::vector<W *> ws;
    std::map<int, int> seen;
    for (int d : devices) {
        auto &slot = workers[{d, seen[d]++}];
        if (!slot) slot = std::make_unique<W>(d, open);
        ws.push_back(slot.get());
    }
    return ws;
}

// One call's work spread over workers: how many are still running, and the error that wins -- the one with
// the lowest `order` (e.g. the frame), then the first reported -- so the message does not depend on thread
// timing. A failure raises `abort` so the other workers stop taking work.
struct GpuJob {
    std::mutex m;
    std::condition_variable cv;
    int remaining = 0;
    std::atomic<bool> abort{false};
    int status = QMMM_SUCCESS;
    int64_t order = std::numeric_limits<int64_t>::max();
    std::string message;

    explicit GpuJob(int workers) : remaining(workers) {}
    void failed(int s, const std::string &msg, int64_t at = std::numeric_limits<int64_t>::max() - 1) {
        std::lock_guard<std::mutex> g(m);
        if (status == QMMM_SUCCESS || at < order) status = s, message = msg, order = at;
        abort = true;
    }
    // Runs f() on a worker thread; an exception becomes failed("device N: ...").
    template <class F>
    void guarded(int device, F &&f) {
        const std::string who = "device " + std::to_string(device) + ": ";
        try {
            f();
        } catch (const Error &e) {
            failed(e.status, who + e.what());
        } catch (const std::bad_alloc &) {
            failed(QMMM_ERR_OUT_OF_MEMORY, who + "out of host memory");
        } catch (const std::exception &e) {
            failed(QMMM_ERR_INTERNAL, who + e.what());
        }
    }
    void done() {
        std::lock_guard<std::mutex> g(m);
        if (--remaining == 0) cv.notify_all();
    }
    // True when every worker is done (waits at most `most`).
    bool wait_for(std::chrono::milliseconds most) {
        std::unique_lock<std::mutex> lk(m);
        return cv.wait_for(lk, most, [&] { return remaining == 0; });
    }
    // Waits for every worker, then throws the winning error, if any.
    void wait() {
        {
            std::unique_lock<std::mutex> lk(m);
            cv.wait(lk, [&] { return remaining == 0; });
        }
        throw_if_failed();
    }
    void throw_if_failed() const {
        if (status != QMMM_SUCCESS) throw Error(status, message);
    }
};

}  // namespace qmmm
