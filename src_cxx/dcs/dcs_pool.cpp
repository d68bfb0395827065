// dcs_pool.cpp -- several GPUs for one DCS map: one persistent host thread per listed device.
//
// The threads (gpu_worker.hpp) live from the first CUDA map until qmmm_dcs_release(), each keeping its
// stream and buffers, and a map is cut into slabs of z planes that the threads take from a shared counter
// (dynamic balance: a faster or less busy GPU simply takes more slabs).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

#include "dcs_backend.hpp"
#include "error.hpp"
#include "gpu_worker.hpp"

namespace qmmm {
namespace {

using Worker = GpuWorker<DcsDevice>;

struct Pool {
    std::mutex use;  // one map at a time through the pool
    WorkerMap<Worker> workers;
};

// Never destroyed: at exit the CUDA runtime may already be gone; qmmm_dcs_release() is the clean way.
Pool &pool() {
    static Pool *p = new Pool;
    return *p;
}

}  // namespace

void dcs_gpu_map(const DcsProblem &p, const std::vector<int> &devices, double *map,
                 qmmm_dcs_progress_fn progress, void *user, DcsRunInfo *info) {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    const DcsGpu &gpu = GpuRegistry<DcsGpu>::get();
    std::vector<Worker *> ws = workers_for(pl.workers, devices, [&gpu](int d) { return gpu.open(d); });
    const int64_t nz = p.n[2], plane = p.n[0] * p.n[1], W = static_cast<int64_t>(ws.size());
    // Several slabs per thread for balance, but at least ~2M points each so one slab fills a GPU.
    const int64_t per = std::min(nz, std::max((nz + 4 * W - 1) / (4 * W), ((int64_t{1} << 21) + plane - 1) / plane));
    const int64_t n_slabs = (nz + per - 1) / per;

    GpuJob job(static_cast<int>(W));
    std::atomic<int64_t> next{0}, planes_done{0}, pieces{0};
    for (Worker *w : ws) {
        w->submit([&, w](DcsDevice *dev) {
            job.guarded(w->device(), [&] {
                if (!dev) throw w->open_error();
                dev->set_atoms(p);
                for (int64_t s; !job.abort && (s = next++) < n_slabs;) {
                    const int64_t k0 = s * per, nk = std::min(per, nz - k0);
                    pieces += dev->planes(p, k0, nk, map + k0 * plane);
                    planes_done += nk;
                }
            });
            job.done();
        });
    }
    bool cancelled = false;
    while (!job.wait_for(std::chrono::milliseconds(200)))
        if (progress && !cancelled && (cancelled = progress(planes_done.load(), nz, user) != 0)) job.abort = true;
    job.throw_if_failed();
    if (cancelled) throw Error(QMMM_ERR_INVALID_ARG, "cancelled by the progress callback");
    if (progress && progress(nz, nz, user)) throw Error(QMMM_ERR_INVALID_ARG, "cancelled by the progress callback");
    if (info) info->n_pieces = pieces;
}

void dcs_gpu_release() {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    pl.workers.clear();
}

}  // namespace qmmm
