// cpu_pool.cpp -- parallel_tiles_pooled (cpu_parallel.hpp): one process-wide pool of helper threads, started on
// first use and grown to the largest team asked for; it lives until the process ends.
//
// The protocol, and why it is safe when a helper arrives late: a job lives on its caller's stack. A helper joins it
// only under the pool's mutex while the job is posted, and counts itself in `active`; the caller takes the job down
// under the same mutex once it finds no tile left, then waits until `active` is 0. So no helper touches a job after
// its caller returns, and the caller never waits for a helper that did not join.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cpu_helper_cap.hpp"
#include "cpu_node_load.hpp"
#include "cpu_parallel.hpp"
#include "cpu_simd.hpp"
#include "cpu_threads.hpp"

namespace qmmm {

namespace {

struct Job {
    void (*fn)(const void *, int64_t);
    const void *ctx;
    int64_t n_tiles;
    std::atomic<int64_t> next{0};
    std::atomic<int> active{0};  // helpers inside run(); changed by joining (under the mutex) and leaving
    int seats = 0;               // helpers that may still join; guarded by the pool's mutex
};

void run(Job &j) {
    for (int64_t t; (t = j.next.fetch_add(1, std::memory_order_relaxed)) < j.n_tiles;) j.fn(j.ctx, t);
}

class Pool {
public:
    // Posts j with up to `helpers` seats, growing the pool to that many threads. False when another call holds the
    // pool (j then runs on its caller alone).
    bool post(Job &j, int helpers) {
        {
            std::lock_guard<std::mutex> g(m_);
            if (job_) return false;
            try {
                while (threads_ < helpers) {
                    std::thread([this] { work(); }).detach();
                    ++threads_;
                }
            } catch (...) {  // the system refused a thread: the ones there are will do
            }
            j.seats = std::min(helpers, threads_);
            if (j.seats == 0) return false;
            job_ = &j;
        }
        cv_.notify_all();
        return true;
    }
    // After the caller found no tile left: no helper joins any more; wait for those inside.
    void retire(Job &j) {
        {
            std::lock_guard<std::mutex> g(m_);
            job_ = nullptr;
        }
        for (int spin = 0; j.active.load(std::memory_order_acquire) > 0; ++spin)
            if (spin > 64) std::this_thread::yield();
    }

private:
    void work() {
        std::unique_lock<std::mutex> l(m_);
        for (;;) {
            cv_.wait(l, [&] { return job_ && job_->seats > 0; });
            Job &j = *job_;
            --j.seats;
            j.active.fetch_add(1, std::memory_order_relaxed);
            l.unlock();
            run(j);
            simd_clear_upper();
            j.active.fetch_sub(1, std::memory_order_release);  // the last touch of j
            l.lock();
        }
    }

    std::mutex m_;
    std::condition_variable cv_;
    Job *job_ = nullptr;  // the posted job, if any
    int threads_ = 0;
};

Pool &pool() {
    static Pool *p = new Pool;  // never destroyed: its detached helpers sleep on it until the process ends
    return *p;
}

HelperCap g_cap(kMaxThreads - 1);  // the helpers a call may use on this node now (cpu_helper_cap.hpp)

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int parallel_width(int nt) {
    if (nt <= 1) return 1;
    return 1 + std::min({nt - 1, node_load_helper_limit(), g_cap.cap()});
}

void parallel_tiles_pooled(int nt, int64_t n_tiles, void (*fn)(const void *, int64_t), const void *ctx) {
    Job j;
    j.fn = fn, j.ctx = ctx, j.n_tiles = n_tiles;
    // At most the cores other processes leave free (cpu_node_load.hpp), then the cap that the waits set.
    const int wanted = static_cast<int>(std::min<int64_t>({nt - 1, n_tiles - 1, kMaxThreads - 1}));
    const int helpers = std::min(node_load_helper_limit(), g_cap.take(wanted));
    const bool posted = helpers > 0 && pool().post(j, helpers);
    const auto t0 = std::chrono::steady_clock::now();
    run(j);
    if (!posted) return;
    const double own = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    pool().retire(j);
    g_cap.report(helpers, own, seconds_since(t1));
}

}  // namespace qmmm
