// cpu_node_load.cpp -- the other processes' load on this process's CPUs, from /proc/stat (cpu_node_load.hpp).
#include "cpu_node_load.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "cpu_threads.hpp"

namespace qmmm {

namespace {

// Calls f(line, end of line) for each line of text (the last one may lack its newline).
template <class F>
void for_each_line(const char *text, size_t len, F &&f) {
    for (const char *p = text, *end = text + len; p < end;) {
        const char *eol = std::find(p, end, '\n');
        f(p, eol);
        p = eol + 1;
    }
}

}  // namespace

bool proc_stat_busy_ticks(const char *text, size_t len, const std::vector<bool> &in_set, double *ticks) {
    double sum = 0;
    bool any = false;
    for_each_line(text, len, [&](const char *p, const char *eol) {
        // "cpuN user nice system idle iowait irq softirq steal ...": the aggregate "cpu " line has no N.
        if (eol - p > 4 && p[0] == 'c' && p[1] == 'p' && p[2] == 'u' && p[3] >= '0' && p[3] <= '9') {
            char *q = nullptr;
            const unsigned long cpu = std::strtoul(p + 3, &q, 10);
            unsigned long long f[8] = {};
            int k = 0;
            for (; k < 8 && q < eol; ++k) {
                char *r = nullptr;
                f[k] = std::strtoull(q, &r, 10);
                if (r == q || r > eol) break;
                q = r;
            }
            if (k == 8 && cpu < in_set.size() && in_set[cpu]) {
                sum += static_cast<double>(f[0] + f[1] + f[2] + f[5] + f[6] + f[7]);
                any = true;
            }
        }
    });
    *ticks = sum;
    return any;
}

bool proc_stat_procs_running(const char *text, size_t len, int *running) {
    static const char kKey[] = "procs_running ";
    const size_t key_len = sizeof(kKey) - 1;
    bool found = false;
    for_each_line(text, len, [&](const char *p, const char *eol) {
        if (found || static_cast<size_t>(eol - p) <= key_len || !std::equal(kKey, kKey + key_len, p)) return;
        long v = 0;
        const char *q = p + key_len;
        for (; q < eol && *q >= '0' && *q <= '9' && v < 1000000000L; ++q) v = 10 * v + (*q - '0');
        if (q > p + key_len) *running = static_cast<int>(v), found = true;
    });
    return found;
}

int helpers_for_load(int set_cpus, double others_busy) {
    const double free_cores = static_cast<double>(set_cpus) - std::max(0.0, others_busy);
    return std::max(0, static_cast<int>(std::lround(free_cores)) - 1);
}

namespace {

struct Reading {
    double busy_s = 0, own_s = 0, at_s = 0;
    int running = -1;  // procs_running, -1 where the line was not read
};

class NodeLoad {
public:
    int limit() {
        const double now = seconds_now();
        if (now - last_try_.load(std::memory_order_relaxed) < kLoadInterval) return limit_.load(std::memory_order_relaxed);
        std::unique_lock<std::mutex> l(m_, std::try_to_lock);
        if (!l.owns_lock()) return limit_.load(std::memory_order_relaxed);  // another thread is reading
        if (now - last_try_.load(std::memory_order_relaxed) < kLoadInterval) return limit_.load(std::memory_order_relaxed);
        last_try_.store(now, std::memory_order_relaxed);
        Reading r;
        if (!read(now, &r)) {
            have_ = false;  // /proc/stat unreadable: no limit
            limit_.store(kMaxThreads, std::memory_order_relaxed);
            return kMaxThreads;
        }
        if (have_ && r.at_s > last_.at_s) {
            const double wall = r.at_s - last_.at_s;
            const double others = (r.busy_s - last_.busy_s - (r.own_s - last_.own_s)) / wall;
            limit_.store(helpers_for_load(n_set_, others), std::memory_order_relaxed);
        } else if (!have_ && r.running > 0) {  // the first reading: the runnable threads now, less the caller
            limit_.store(helpers_for_load(n_set_, r.running - 1), std::memory_order_relaxed);
        }
        last_ = r, have_ = true;
        return limit_.load(std::memory_order_relaxed);
    }

private:
    static double seconds_now() {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    bool read(double now, Reading *r) {
        if (!set_known_) {
            set_known_ = true;
            cpu_set_t mask;
            CPU_ZERO(&mask);
            if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return false;
            for (int c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &mask)) {
                    if (static_cast<size_t>(c) >= in_set_.size()) in_set_.resize(static_cast<size_t>(c) + 1, false);
                    in_set_[static_cast<size_t>(c)] = true, ++n_set_;
                }
            tick_s_ = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
        }
        if (n_set_ == 0 || !(tick_s_ > 0)) return false;
        const int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        size_t len = 0;
        for (ssize_t got; len < sizeof(buf_) && (got = ::read(fd, buf_ + len, sizeof(buf_) - len)) > 0;)
            len += static_cast<size_t>(got);
        close(fd);
        timespec ts{};
        if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return false;
        double ticks = 0;
        // A file longer than the buffer (thousands of CPUs) is read up to it: the CPUs it holds are counted.
        if (!proc_stat_busy_ticks(buf_, len, in_set_, &ticks)) return false;
        if (!proc_stat_procs_running(buf_, len, &r->running)) r->running = -1;
        r->busy_s = ticks * tick_s_;
        r->own_s = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
        r->at_s = now;
        return true;
    }

    std::mutex m_;
    std::atomic<double> last_try_{-1e300};
    std::atomic<int> limit_{kMaxThreads};
    bool set_known_ = false, have_ = false;
    std::vector<bool> in_set_;
    int n_set_ = 0;
    double tick_s_ = 0;
    Reading last_;
    char buf_[1 << 16];
};

}  // namespace

int node_load_helper_limit() {
    static NodeLoad *load = new NodeLoad;  // never destroyed: calls may come from threads that outlive statics
    return load->limit();
}

}  // namespace qmmm
