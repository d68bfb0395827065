// cpu_node_load.hpp -- how many pool helpers the other processes on this node leave room for (cpu_pool.cpp).
//
// A helper on a core that another process keeps busy gets a share of it, and the OS takes it off mid-tile for a
// time slice (milliseconds) while the caller waits for its tile: one process asking for the 16 cores of a node with
// 15 busy ones took 1.32-1.38x one thread's time on the H100 host's Xeon, however the pool's helper cap reacted to
// the waits (cpu_helper_cap.hpp). So the pool also reads the kernel's per-CPU times (/proc/stat) of the CPUs this
// process may run on, at most every kLoadInterval, and counts the busy time that is not this process's own CPU time
// (CLOCK_PROCESS_CPUTIME_ID): the cores other processes kept busy over the interval. A call then posts at most the
// free cores less the caller's as helpers. Where /proc/stat cannot be read there is no limit. Which thread computes
// a tile never changes a value: results do not depend on it.
#pragma once
#include <cstddef>
#include <vector>

namespace qmmm {

// The interval between two readings: /proc/stat counts in ticks of 10 ms per CPU, so a shorter one is mostly noise.
constexpr double kLoadInterval = 0.2;

// The busy time (user, nice, system, irq, softirq, steal: not idle or iowait), in ticks, summed over the "cpuN"
// lines of /proc/stat's text whose N is set in `in_set` (N beyond its end: not in the set). False when no such line
// parses.
bool proc_stat_busy_ticks(const char *text, size_t len, const std::vector<bool> &in_set, double *ticks);

// The runnable threads of the whole system now, from /proc/stat's "procs_running N" line (the kernel's instantaneous
// count, the calling thread among them). False when the text has no such line.
bool proc_stat_procs_running(const char *text, size_t len, int *running);

// The helpers a call may post when `set_cpus` CPUs are usable and other processes kept `others_busy` of them busy
// (in cores, averaged over the interval): the free cores, rounded, less the caller's own; at least 0.
int helpers_for_load(int set_cpus, double others_busy);

// The limit now: from the busy ticks of the last interval; before a process has two readings (its first interval),
// from the runnable threads at the first reading less the caller (a process started on a busy node posts no helpers
// onto busy cores in its first 0.2 s either); a large number where /proc/stat cannot be read. Cheap between readings
// (one clock read); a reading costs tens of microseconds, once per kLoadInterval, taken by one calling thread.
int node_load_helper_limit();

}  // namespace qmmm
