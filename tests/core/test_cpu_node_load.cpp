// test_cpu_node_load.cpp -- the other processes' load that limits a parallel CPU call's pool helpers
// (cpu_node_load.hpp): /proc/stat's per-CPU busy ticks, the helpers a load leaves room for, and the live limit with
// this machine's other CPUs kept busy by child processes.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_node_load.hpp"
#include "cpu_parallel.hpp"

namespace {

using qmmm::helpers_for_load;
using qmmm::proc_stat_busy_ticks;

// A /proc/stat as Linux writes it: the aggregate line, then one per CPU (user nice system idle iowait irq softirq
// steal guest guest_nice), then the rest.
const std::string kStat =
    "cpu  70 9 15 900 30 9 9 11 0 0\n"
    "cpu0 10 1 2 100 5 3 4 6 0 0\n"
    "cpu1 20 2 3 200 5 1 1 1 0 0\n"
    "cpu3 40 6 10 600 20 5 4 4 7 0\n"
    "intr 123 4 5 6\n"
    "ctxt 99\n"
    "cpu9 1 1 1 1 1\n";  // too few fields: not a CPU line

TEST(CpuNodeLoad, BusyTicksOfTheCpusInTheSet) {
    double t = -1;
    // busy = user + nice + system + irq + softirq + steal; idle and iowait (and guest, inside user) are not.
    ASSERT_TRUE(proc_stat_busy_ticks(kStat.data(), kStat.size(), {true, false, false, true}, &t));
    EXPECT_EQ(t, (10 + 1 + 2 + 3 + 4 + 6) + (40 + 6 + 10 + 5 + 4 + 4));
    ASSERT_TRUE(proc_stat_busy_ticks(kStat.data(), kStat.size(), {false, true}, &t));
    EXPECT_EQ(t, 20 + 2 + 3 + 1 + 1 + 1);
    // A CPU beyond the set's end, or a short line, is not counted; no CPU line of the set: false.
    EXPECT_FALSE(proc_stat_busy_ticks(kStat.data(), kStat.size(), {false, false, true}, &t));
    std::vector<bool> nine(10, false);
    nine[9] = true;
    EXPECT_FALSE(proc_stat_busy_ticks(kStat.data(), kStat.size(), nine, &t));
    const std::string cut = "cpu0 10 1 2";  // a file cut short inside a line
    EXPECT_FALSE(proc_stat_busy_ticks(cut.data(), cut.size(), {true}, &t));
    EXPECT_FALSE(proc_stat_busy_ticks("", 0, {true}, &t));
}

TEST(CpuNodeLoad, ProcsRunningLine) {
    const std::string stat = kStat + "btime 1700000000\nprocs_running 17\nprocs_blocked 0\n";
    int r = -1;
    ASSERT_TRUE(qmmm::proc_stat_procs_running(stat.data(), stat.size(), &r));
    EXPECT_EQ(r, 17);
    EXPECT_FALSE(qmmm::proc_stat_procs_running(kStat.data(), kStat.size(), &r));  // no such line
    const std::string bad = "procs_running x\n", cut = "procs_running ";
    EXPECT_FALSE(qmmm::proc_stat_procs_running(bad.data(), bad.size(), &r));
    EXPECT_FALSE(qmmm::proc_stat_procs_running(cut.data(), cut.size(), &r));
    const std::string last = "procs_running 3";  // the last line without its newline
    ASSERT_TRUE(qmmm::proc_stat_procs_running(last.data(), last.size(), &r));
    EXPECT_EQ(r, 3);
}

TEST(CpuNodeLoad, HelpersAreTheFreeCoresLessTheCaller) {
    EXPECT_EQ(helpers_for_load(16, 0.0), 15);
    EXPECT_EQ(helpers_for_load(16, 0.3), 15);
    EXPECT_EQ(helpers_for_load(16, 8.0), 7);
    EXPECT_EQ(helpers_for_load(16, 14.7), 0);  // 1.3 cores free: the caller's
    EXPECT_EQ(helpers_for_load(16, 15.0), 0);
    EXPECT_EQ(helpers_for_load(16, 40.0), 0);  // more runnable than cores
    EXPECT_EQ(helpers_for_load(2, 1.0), 0);
    EXPECT_EQ(helpers_for_load(4, -0.2), 3);   // ticks' rounding: never more than the set
    EXPECT_EQ(helpers_for_load(1, 0.0), 0);
}

// Children spinning on all but one of this process's CPUs: at the first reading and over an interval, the limit leaves
// no helper, and a call's width (parallel_width) is the caller alone.
TEST(CpuNodeLoad, OtherProcessesOnEveryOtherCpuLeaveNoHelper) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
    const int n = CPU_COUNT(&mask);
    struct Kids {  // killed however the test ends: a failed assertion must not leave children spinning
        std::vector<pid_t> pids;
        ~Kids() {
            for (pid_t k : pids) kill(k, SIGKILL);
            for (pid_t k : pids) waitpid(k, nullptr, 0);
        }
    } kids_guard;
    std::vector<pid_t> &kids = kids_guard.pids;
    for (int i = 0; i + 1 < n; ++i) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0) << std::strerror(errno);
        if (pid == 0) {
            for (volatile unsigned long k = 0;; k = k + 1) {
            }
        }
        kids.push_back(pid);
    }
    // The process's first reading (ctest runs each test in its own process; the tests above never read the load):
    // the runnable threads now, the children among them, leave no helper either.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(qmmm::node_load_helper_limit(), 0) << "first reading; " << n << " CPUs, " << kids.size() << " busy children";
    // The limit reads every kLoadInterval and compares two readings: three intervals hold one whole loaded one.
    int limit = -1;
    for (int r = 0; r < 3; ++r) {
        std::this_thread::sleep_for(std::chrono::duration<double>(1.5 * qmmm::kLoadInterval));
        limit = qmmm::node_load_helper_limit();
    }
    EXPECT_EQ(limit, 0) << n << " CPUs, " << kids.size() << " busy children";
    // What a call cuts its work for: the caller alone, whatever it asks.
    EXPECT_EQ(qmmm::parallel_width(64), 1);
    EXPECT_EQ(qmmm::parallel_width(1), 1);
}

}  // namespace
