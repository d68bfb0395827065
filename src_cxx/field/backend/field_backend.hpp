// field_backend.hpp -- what every backend of the embedding field implements (the factories: field_factory.hpp), the
// validated host copy of the field that they are built from, and what they share: the nuclear term, MIXED's dominant
// cells and cell layout, the Morton order (field_data.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/field_shared.hpp"
#include "qmmm_accel_field.h"

namespace qmmm {

// The field as the caller gave it, validated; coordinates interleaved x y z (bohr).
struct FieldData {
    int64_t n_cells = 0, n_nuclei = 0;
    std::vector<double> cell_xyz, cell_q, nuc_xyz, nuc_z;
    double cell_volume = 0.0;  // bohr^3, 0 = unknown
    bool point_charges = false;  // MM point charges (qmmm_field_create_charges), not density cells: SPLIT's alpha
    // 1/r used for a cell when the point is on its centre: C / h, or NaN when the volume is unknown
    // (the NaN reaches the result and qmmm_field_eval reports QMMM_ERR_SINGULAR).
    double cell_self_inv_r = 0.0;
    // MIXED: the cells whose charges dominate (field_take_heavy), summed in double with the nuclei (add_nuclear_term)
    // and absent from cell_xyz / cell_q.
    std::vector<double> heavy_xyz, heavy_q;
};

class FieldBackend {
public:
    virtual ~FieldBackend() = default;
    // u[i] = U_ES(point i); points are finite (checked by the caller). A point on a nucleus, or on a cell centre
    // with cell_volume unknown, gets a non-finite value, which the caller reports.
    virtual int eval(int64_t n, const double *xyz, double *u) = 0;
    // Default: synchronous work, nothing pending.
    virtual int eval_async(int64_t n, const double *xyz, double *u) { return eval(n, xyz, u); }
    virtual int wait() { return QMMM_SUCCESS; }
    virtual int backend() const = 0;
    virtual int precision() const = 0;
    virtual int device() const { return -1; }
    // qmmm_field_runtime: the CPU kernel set the pair terms run (a QMMM_CPU_ISA_*; NONE on the GPU), and the
    // low-latency kernel's state (CUDA only: running now, launches so far).
    virtual int cpu_isa() const { return QMMM_CPU_ISA_NONE; }
    virtual void low_latency(int *running, int64_t *launches) const { *running = 0, *launches = 0; }
    // A backend that wraps another (point charges around their cells' backend): the wrapped one, for its reports.
    virtual const FieldBackend *wrapped() const { return nullptr; }
    // Crowds (api/field_walkers.cpp). merge_from: calls of at least this many points give every point the bits it gets
    // in any other such call, so a crowd's walkers of at least this many points each may share one call; INT64_MAX
    // (the default): a point's bits may depend on the call (the batch's path or make-up), so walkers go one by one.
    virtual int64_t merge_from() const { return INT64_MAX; }
    // Device-resident points and values (CUDA DIRECT fields): d_u[i] = U_ES(point i) enqueued on `stream` (a
    // cudaStream_t; null: the field's own), not waited for; with d_sums, also d_sums[w] = the values of walker w
    // (offsets, host memory, relative to d_xyz) added in index order on the device. d_u null: the backend's own buffer.
    // The default refuses with QMMM_ERR_UNSUPPORTED (field_data.cpp), naming what the field is.
    virtual int eval_device(int64_t n, const double *d_xyz, double *d_u, int64_t n_walkers, const int64_t *offsets,
                            double *d_sums, void *stream);
    // Blocks until the last device-resident call is done (qmmm_field_wait); nothing to wait for by default.
    virtual int wait_device() { return QMMM_SUCCESS; }
};

// A value backend that also gives the gradient from its own kernels (the CPU's MIXED direct field: the value call's
// float pair terms, with its bits for U). The forces engine asks it first (field_forces.hpp): own_grad returns false
// where it takes no point of the field's (then the engine's kernels take the call), else u[i] = U as eval gives it and
// g[3i..3i+2] = dU/dr at every point it takes, and out[i] = 1 at those it leaves to the engine (each point's choice
// depends on the point alone). A point without a finite value gets non-finite outputs (the engine recomputes or
// reports it).
class FieldGradOwn {
public:
    virtual ~FieldGradOwn() = default;
    virtual bool own_grad(int64_t n, const double *xyz, double *u, double *g, std::vector<char> &out) = 0;
};

// add_nuclear_term's u and its gradient: g[3i..3i+2] gains the heavy cells' q (R - r) / d^3 (none within the singular
// radius: the cube's self term) and the nuclei's -Z (R - r) / d^3; u as add_nuclear_term gives it, bit for bit.
void add_nuclear_grad(const FieldData &d, int64_t n, const double *xyz, double *u, double *g, int threads = 1);

// sum_b -Z_b / |r - R_b| added to u (double precision, fixed order); shared by all backends. A point within the
// singular radius of a nucleus gets NaN (the API turns it into QMMM_ERR_SINGULAR naming the nucleus). The heavy cells'
// terms (singular rule of the cells) come in first: u becomes (u + heavy) - nuclear. Points are spread over `threads`
// OpenMP threads (each point's sum is the same either way).
void add_nuclear_term(const FieldData &d, int64_t n, const double *xyz, double *u, int threads = 1);

// MIXED's float terms have ~1e-7 relative rounding errors that average out over cells only where many cells share
// the sum: a normwise error ~2e-7 / sqrt(N_eff), N_eff = (sum |q|)^2 / sum q^2. A real density's core cells make
// N_eff small: water 2's cube has N_eff 298 of 21,268 cells, and MIXED reached 1.4e-8 at water 1's electrons, over
// its 1e-8 claim. field_take_heavy moves the cells of largest |q| (ties: the lower index) to heavy_xyz / heavy_q
// until the rest's sum q^2 is at most (sum |q|)^2 / kMixedHeavyNeff, at most kMixedMaxHeavy cells (random fields of
// 2e5 cells take none). Tests FieldCpu.MixedErrorsAverageOutOnWaterDimer and DominantCellsKeepMixedWithinTheClaim
// hold water 1's electrons and a field of a few dominant cells to MIXED's claim with it.
constexpr double kMixedHeavyNeff = 16384;
constexpr int64_t kMixedMaxHeavy = 1024;
void field_take_heavy(FieldData &d);

// MIXED precision's cell layout, one for the CPU and the CUDA backend (the same float data, so the same
// answer): cells in Morton order (field_morton_order), cut into chunks of `chunk` cells padded with zero
// charges at `far`; per chunk a double origin (centre of its bounding box); per cell its offset from it as
// a float pair hi + lo and a float charge; plus the double copy (absolute) for cells near a point.
// Errors that would not average out over the 10^6 points of a VMC run are removed at the source:
// - hi is a multiple of kMixedGrid (lo the rest, |lo| <= kMixedGrid / 2), and so is the point's hi offset
//   (field_mixed_split), so hi_point - hi_cell is exact up to 256 bohr: a plain float difference rounds
//   the cell to the grid of ulp(|point offset|), the same for every point in a binade, a fixed position
//   error (+2.2e-9 hartree per point on the water dimer);
// - charges are rounded with the residual carried to the next cell of the chunk (error diffusion), so
//   each chunk's charge is exact to half a float ulp (plain rounding: -2.9e-9 hartree per point there).
struct MixedCells {
    int64_t n_chunks = 0;
    std::vector<double> origin;                 // 3 per chunk
    std::vector<float> x, y, z, q, xl, yl, zl;  // per padded cell: offset hi, charge, offset lo
    std::vector<double> xd, yd, zd, qd;         // per padded cell: absolute position, charge
    std::vector<double> lo_mean;                // 4 per chunk: its cells' mean lo x, y, z and mean |lo|^2
};

MixedCells field_mixed_cells(const FieldData &d, int64_t chunk, float far);

// Cells sorted by the Z-curve index of their position (deterministic).
std::vector<int64_t> field_morton_order(const FieldData &d, int64_t chunk);

// The low 21 bits of v moved to every third bit (bit b to bit 3b): axis k's box index spread and shifted by k makes a
// Z-curve code (field_morton_order for the cells, split_point_order for a batch of points).
inline uint64_t morton_spread(uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL, v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL, v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    return (v | v << 2) & 0x1249249249249249ULL;
}

}  // namespace qmmm
