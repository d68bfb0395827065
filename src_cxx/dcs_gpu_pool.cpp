// dcs_gpu_pool.cpp -- several GPUs for one DCS map: one persistent host thread per listed device.
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

#include "../src_cuda/qmmm_cuda.h"
#include "dcs_backend.hpp"
#include "error.hpp"
#include "gpu_worker.hpp"

namespace qmmm {
namespace {

using Worker = GpuWorker<cuda::DcsDevice, cuda::dcs_device_open, cuda::dcs_device_close>;

struct Pool {
    std::mutex use;  // one map at a time through the pool
    WorkerMap<Worker> workers;
};

// Never destroyed: at exit the CUDA runtime may already be gone; qmmm_dcs_release() is the clean way.
Pool &pool() {
    static Pool *p = new Pool;
    return *p;
}

struct Job {
    std::mutex m;
    std::condition_variable cv;
    int remaining = 0;
    std::atomic<int64_t> next{0}, planes_done{0}, pieces{0};
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

void dcs_gpu_map(const DcsProblem &p, const std::vector<int> &devices, double *map,
                 qmmm_dcs_progress_fn progress, void *user, DcsRunInfo *info) {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    std::vector<Worker *> ws = workers_for(pl.workers, devices);
    const int64_t nz = p.n[2], plane = p.n[0] * p.n[1], W = static_cast<int64_t>(ws.size());
    // Several slabs per thread for balance, but at least ~2M points each so one slab fills a GPU.
    const int64_t per = std::min(nz, std::max((nz + 4 * W - 1) / (4 * W), ((int64_t{1} << 21) + plane - 1) / plane));
    const int64_t n_slabs = (nz + per - 1) / per;

    Job job;
    job.remaining = static_cast<int>(W);
    for (Worker *w : ws) {
        w->submit([&job, &p, map, per, n_slabs, nz, plane, w](cuda::DcsDevice *dev) {
            try {
                if (!dev) throw w->open_error();
                cuda::dcs_device_set_atoms(dev, p);
                for (int64_t s; !job.abort && (s = job.next++) < n_slabs;) {
                    const int64_t k0 = s * per, nk = std::min(per, nz - k0);
                    job.pieces += cuda::dcs_device_planes(dev, p, k0, nk, map + k0 * plane);
                    job.planes_done += nk;
                }
            } catch (const Error &e) {
                job.failed(e.status, "device " + std::to_string(w->device()) + ": " + e.what());
            } catch (const std::bad_alloc &) {
                job.failed(QMMM_ERR_OUT_OF_MEMORY, "device " + std::to_string(w->device()) + ": out of host memory");
            } catch (const std::exception &e) {
                job.failed(QMMM_ERR_INTERNAL, "device " + std::to_string(w->device()) + ": " + e.what());
            }
            std::lock_guard<std::mutex> g(job.m);
            if (--job.remaining == 0) job.cv.notify_all();
        });
    }
    bool cancelled = false;
    {
        std::unique_lock<std::mutex> lk(job.m);
        while (!job.cv.wait_for(lk, std::chrono::milliseconds(200), [&] { return job.remaining == 0; })) {
            if (progress && !cancelled) {
                lk.unlock();
                cancelled = progress(job.planes_done.load(), nz, user) != 0;
                lk.lock();
                if (cancelled) job.abort = true;
            }
        }
    }
    if (job.status != QMMM_SUCCESS) throw Error(job.status, job.message);
    if (cancelled) throw Error(QMMM_ERR_INVALID_ARG, "cancelled by the progress callback");
    if (progress && progress(nz, nz, user)) throw Error(QMMM_ERR_INVALID_ARG, "cancelled by the progress callback");
    if (info) info->n_pieces = job.pieces;
}

void dcs_gpu_release() {
    Pool &pl = pool();
    std::lock_guard<std::mutex> use(pl.use);
    pl.workers.clear();
}

}  // namespace qmmm
