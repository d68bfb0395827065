// cpu_pool.cpp -- parallel_tiles (cpu_pool.hpp): one process-wide pool of helper threads, started on first use.
#include "cpu_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "cpu_simd.hpp"
#include "cpu_threads.hpp"

namespace qmmm {

namespace {

struct Job {
    const std::function<void(int64_t)> *f = nullptr;
    int64_t total = 0;
    std::atomic<int64_t> next{0}, done{0};
    int helpers_wanted = 0;  // guarded by the pool's mutex
};

// Claims and runs tiles until none is left. f is touched only for a claimed tile, and the caller of parallel_tiles
// returns only when every claimed tile is done, so f outlives every use even when a helper arrives late.
void run(Job &j) {
    for (;;) {
        const int64_t t = j.next.fetch_add(1, std::memory_order_relaxed);
        if (t >= j.total) break;
        (*j.f)(t);
        j.done.fetch_add(1, std::memory_order_release);
    }
    simd_clear_upper();
}

class Pool {
public:
    void submit(const std::shared_ptr<Job> &j, int helpers) {
        std::lock_guard<std::mutex> g(m_);
        while (workers_ < helpers && workers_ < kMaxThreads - 1) {
            std::thread([this] { work(); }).detach();  // lives as long as the process; sleeps when idle
            ++workers_;
        }
        j->helpers_wanted = helpers;
        jobs_.push_back(j);
        cv_.notify_all();
    }
    void retire(const std::shared_ptr<Job> &j) {
        std::lock_guard<std::mutex> g(m_);
        jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), j), jobs_.end());
    }

private:
    void work() {
        for (;;) {
            std::shared_ptr<Job> j;
            {
                std::unique_lock<std::mutex> l(m_);
                cv_.wait(l, [&] {
                    for (auto &c : jobs_)
                        if (c->helpers_wanted > 0 && c->next.load(std::memory_order_relaxed) < c->total) return true;
                    return false;
                });
                for (auto &c : jobs_)
                    if (c->helpers_wanted > 0 && c->next.load(std::memory_order_relaxed) < c->total) {
                        j = c, --c->helpers_wanted;
                        break;
                    }
            }
            run(*j);
        }
    }

    std::mutex m_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<Job>> jobs_;
    int workers_ = 0;
};

Pool &pool() {
    static Pool *p = new Pool;  // never destroyed: detached helpers may still wait on it at exit
    return *p;
}

}  // namespace

void parallel_tiles_pooled(int nt, int64_t n_tiles, const std::function<void(int64_t)> &f) {
    auto j = std::make_shared<Job>();
    j->f = &f, j->total = n_tiles;
    pool().submit(j, static_cast<int>(std::min<int64_t>(nt - 1, n_tiles - 1)));
    run(*j);
    // Only tiles a helper is computing now remain: wait for them, politely.
    for (int spin = 0; j->done.load(std::memory_order_acquire) < n_tiles; ++spin)
        if (spin > 64) std::this_thread::yield();
    pool().retire(j);
}

}  // namespace qmmm
