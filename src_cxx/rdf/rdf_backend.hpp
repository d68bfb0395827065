// rdf_backend.hpp -- what the RDF API hands to its CPU and GPU pair counters: one prepared frame, and the GPU
// interface (src_cuda/rdf/rdf_gpu.cu implements it, reached through GpuRegistry<RdfGpu>). Preparation
// (rdf_prepare.cpp) is shared, so both backends count exactly the same pair set.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "gpu_registry.hpp"
#include "qmmm_accel_rdf.h"
#include "rdf_shared.hpp"

namespace qmmm::rdf {

// Page-locked host memory (the CUDA backend's cudaHostAlloc), for the atoms of frames a GPU copies
// asynchronously: the host converts a frame straight into memory the copy engine reads, with no staging copy.
class HostMemory {
public:
    virtual ~HostMemory() = default;
    virtual void *alloc(size_t bytes) const = 0;  // throws Error
    virtual void release(void *p) const noexcept = 0;
};
// A vector allocator over HostMemory, or the heap where mem is null. Swapping vectors swaps their memory kinds.
template <class T>
struct HostAlloc {
    using value_type = T;
    using propagate_on_container_swap = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_copy_assignment = std::true_type;
    using is_always_equal = std::false_type;
    const HostMemory *mem = nullptr;
    HostAlloc() = default;
    explicit HostAlloc(const HostMemory *m) : mem(m) {}
    template <class U>
    HostAlloc(const HostAlloc<U> &o) : mem(o.mem) {}
    T *allocate(size_t n) {
        return static_cast<T *>(mem ? mem->alloc(n * sizeof(T)) : std::allocator<T>().allocate(n));
    }
    void deallocate(T *p, size_t n) noexcept {
        if (mem) mem->release(p);
        else std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const HostAlloc<U> &o) const { return mem == o.mem; }
    template <class U>
    bool operator!=(const HostAlloc<U> &o) const { return mem != o.mem; }
};
using AtomVec = std::vector<Atom, HostAlloc<Atom>>;

struct Frame {
    Frame() = default;
    // pinned: page-locked memory for a1 and a2 (every frame of the GPU path), or null
    explicit Frame(const HostMemory *pinned) : a1(HostAlloc<Atom>(pinned)), a2(HostAlloc<Atom>(pinned)) {}
    bool pinned() const { return a1.get_allocator().mem != nullptr; }

    Geom g{};
    bool identical = false;  // sel2 is sel1: unordered pairs, a2 empty
    bool exclusions = true;  // some counted-pair candidates share a key (false: the GPU skips the key test)
    int method = QMMM_RDF_METHOD_BRUTE;
    AtomVec a1, a2;  // BRUTE: input order; CELLS: sorted by cell (on the CPU)
    // CELLS: cells per axis (BRUTE with device_cells: the small cells sel1 is sorted by), the cell of each a1
    // atom, the first atom of each cell in the searched selection (a1 if identical, else a2; n_cells + 1
    // entries), and the stencil of cell offsets.
    // For identical selections the stencil is half of the (2m+1)^3 block without (0,0,0), which is
    // handled separately (later atoms of the own cell only).
    int32_t nc[3] = {1, 1, 1};
    std::vector<int32_t> cell1;
    std::vector<int32_t> start;
    std::vector<int32_t> stencil;  // dx,dy,dz triples
    int32_t max_cell = 0;          // most atoms in one cell of the searched selection
    // For the GPU's fast kernels a1 and a2 stay in input order and each device sorts its copy by the cells nc
    // (the same stable order as sort_by_cell, rdf_gpu.cu). CELLS: cell1, start and max_cell are left empty;
    // BRUTE (sel1 of 4096 atoms or more): only sel1 is sorted, into small cells, so a warp's atoms are neighbours.
    bool device_cells = false;
    // GPU bin lookup without a square root (rdf_prepare.cpp, make_bin_table; r_min = 0 and no cut):
    // thr[k] = edge_k^2 (float; thr[n_bins] = thr[n_bins + 1] = r_max^2); table[c] = the bin of the lowest
    // r^2 whose float bits >> tab_shift equal tab_base + c, built so that no cell holds more than one threshold:
    // candidate bin = table[c] + (r^2 >= thr[table[c] + 1]), then checked against its two edges (rdf_shared.hpp,
    // certain). tab_ok = false when the bins are too many or too fine for that (the GPU then takes the root).
    std::vector<float> thr;
    std::vector<uint16_t> table;
    int32_t tab_shift = 0, tab_base = 0;
    bool tab_ok = false;
    float tab_key[4] = {-1, -1, -1, -1};  // rmin, inv_dr, rmax2, n_bins the table was made for
    AtomVec scratch;               // reused between frames: fresh 16 MB buffers cost page faults every frame
    std::vector<int32_t> scratch_cells, scratch_start;
    double pairs_visited = 0;
};

// Geometry from cell vectors (row-major a, b, c) and bins; throws Error on bad boxes. Sets volume and limit.
// cut: pairs closer than max(r_min, cut) are not counted.
void make_geom(const double *box, double r_min, double r_max, int32_t n_bins, double cut, Geom &g, double &volume,
               double &limit, double frac[9], double widths[3]);
// Fills f from coordinates (3*n doubles) and keys. method AUTO picks; throws Error (r_max beyond the limit, a
// coordinate that is NaN or Inf).
// gpu_fast: for the GPU's fast kernels: brute force with sel1 sorted into small cells (so a warp's atoms are
// neighbours; counts are the same in any order), the cell list sorted by the device (Frame::device_cells), and
// the bin lookup table.
// n_threads: OpenMP threads for the preparation (0: the default).
void prepare_frame(Frame &f, const double *box, double r_min, double r_max, int32_t n_bins, double cut, int method,
                   const double *xyz1, const std::vector<int32_t> &key1, const double *xyz2,
                   const std::vector<int32_t> &key2, bool identical, double &volume, bool gpu_fast = false,
                   int n_threads = 0);

// CPU: adds the frame's counts to hist (n_bins). Threads keep private histograms merged at the end.
void cpu_count(const Frame &f, int n_threads, uint64_t *hist);

// One GPU's RDF state (stream pair, the frame's atoms, a 64-bit histogram), owned by one host thread of the
// per-GPU pool (rdf_pool.cpp). Work in a frame is a list of items (brute force: a 512-atom tile of sel1
// against a run of sel2; cell list: 256 sel1 atoms); a unit is a
// range of items times a range of histogram bins. Every call throws qmmm::Error.
class RdfDevice {
public:
    virtual ~RdfDevice() = default;
    // Uploads the frame's atoms into the other of two device buffers on a copy stream, so the copy overlaps the
    // counting of the previous frame (it waits for the frame before that); later launches count this frame.
    // Returns when the host may change f, except for a page-locked frame (Frame::pinned; every frame of the GPU
    // path), which is copied asynchronously: see reuse_wait.
    virtual void upload(const Frame &f) = 0;
    // Before the host rewrites the frame it uploaded two uploads ago (gpu_count_frames alternates two frames and
    // the device two buffers): waits until the device is done with that frame's host memory, which a
    // page-locked frame (Frame::pinned) is copied from asynchronously.
    virtual void reuse_wait() = 0;
    virtual void zero(int32_t n_bins) = 0;  // zeroes the device histogram
    // Queues items [k0, k1) x bins [b0, b0 + nb) on stream `slot` (0 or 1) and returns; the two streams let a
    // unit start while the previous one drains. Adds into the device histogram.
    virtual void launch(const Frame &f, int64_t k0, int64_t k1, int32_t b0, int32_t nb, int slot) = 0;
    virtual void wait(int slot) = 0;
    // Waits for all queued work and adds the device histogram to hist (n_bins).
    virtual void add_hist(int32_t n_bins, uint64_t *hist) = 0;
};
class RdfGpu {
public:
    virtual ~RdfGpu() = default;
    virtual std::unique_ptr<RdfDevice> open(int device) const = 0;  // binds the calling thread to `device`
    virtual int32_t max_bins() const = 0;                             // bins one unit may cover
    virtual int64_t items(const Frame &f) const = 0;
    virtual const HostMemory *host_memory() const = 0;  // page-locked memory for Frame(pinned)
};

struct GpuRunInfo {
    int64_t n_units = 0;
    std::vector<int64_t> units_per_worker;
    double pairs_visited = 0;  // summed over the frames
    double prep_seconds = 0;   // host preparation, summed over the workers (overlaps the counting)
};
// GPU: adds the frame's counts to hist through the persistent per-device threads (rdf_pool.cpp).
// A frame is split over several devices only when it is large enough to gain (kMinSplitPairs per device);
// otherwise the first listed device counts it alone.
constexpr double kMinSplitPairs = 1e10;  // ~10 ms of one H100 (measured: 5e9 pairs split over 2 H200s gained nothing)
// Returns when the devices are done with f (its host memory too).
void gpu_count(const Frame &f, const std::vector<int> &devices, uint64_t *hist, GpuRunInfo *info);

// GPU, many frames: prepare(k, frame, n_threads) fills frame k (and returns its volume). Whole frames go to the
// devices (each device's thread prepares its next frame while its GPU counts the previous one); when fewer
// frames than devices remain, they are split over all devices like single frames. volumes[k] is set for
// every frame. On error nothing is added to hist and the error of the lowest failing frame is thrown.
// n_threads: host threads shared by the devices' preparations (0: every core), so a caller that reads and
// gathers frames on other threads (qmmm-rdf) can keep cores for them.
using PrepareFn = std::function<double(int64_t k, Frame &f, int n_threads)>;
void gpu_count_frames(int64_t n_frames, const PrepareFn &prepare, const std::vector<int> &devices, uint64_t *hist,
                      std::vector<double> &volumes, GpuRunInfo *info, int n_threads = 0);
void gpu_release();

}  // namespace qmmm::rdf
