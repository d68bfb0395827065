// field_forces.hpp -- the forces of a field: the gradient dU/dr at points (qmmm_field_eval_grad) and the potential and
// field that weighted points put on the environment's sites (qmmm_field_site_field, the site accumulator) and its
// gradient (qmmm_field_site_field_grad, the accumulator's gradient sums).
//
// An engine of its own beside the value backends: it keeps the field's sources as the caller gave them (ForceSources,
// made at create, before the value backend reorders, moves or splits them) and runs its own kernels on the CPU
// (field_grad_cpu.cpp, field_site_field_cpu.cpp) or the GPU (src_cuda/field/forces, reached through ForcesGpu).
// Every method and precision of the value path maps onto one direct sum here, except two gradients that the value
// backend gives itself: a SPLIT field's, the split's own (split/field_split.hpp's SplitGradStats) at the points inside
// its region, this engine's direct sum at the others (and at all of them where the split's gradient does not reach the
// tolerance); and a MIXED field's of density cells anywhere on the CPU, from the value call's float pair terms
// (backend/field_backend.hpp's FieldGradOwn; lattice cells keep this engine's rows). field_forces.cpp builds the
// engine on first use.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu_registry.hpp"
#include "qmmm_accel_field.h"

namespace qmmm {

class DipoleTerm;      // dipoles/field_dipoles.hpp
class FieldGradOwn;    // backend/field_backend.hpp
class SplitGradStats;  // split/field_split.hpp

// The sources of a field, in the pair terms' convention: the energy of an electron at r is
// U(r) = sum_k c_k g_k(|r - R_k|) with c_k = -Q_k (Q_k the site's physical charge: -q_m of a density cell, q_m of
// an MM charge, Z_b of a nucleus) and g_k = 1/d or a screened kernel (field_forces_shared.hpp).
struct ForceSources {
    // Plain sites (g = 1/d): density cells or unscreened charges, then the nuclei. The first n_self are density cells
    // that take the uniform-cube self term (1/r -> self_inv_r) within the singular radius; other plain sites there
    // have no finite potential (the engine reports SINGULAR).
    int64_t n_plain = 0, n_self = 0;
    std::vector<double> x, y, z, c;
    double self_inv_r = 0.0;  // C / h of qmmm_field_eval, NaN when cell_volume is 0 (then n_self is 0)
    // Screened charges (kind kScreenExp or kScreenGaussian; a, b as screened_inv_r takes them).
    int kind = 0;
    int64_t n_screened = 0;
    std::vector<double> sx, sy, sz, sc, sa, sb;
    // The caller's site order (qmmm_field_site_field): cells or charges as given, then the nuclei. site k is plain
    // site site_index[k] when >= 0, screened site -1 - site_index[k] otherwise. n_first: the cells or charges.
    std::vector<int64_t> site_index;
    int64_t n_first = 0;
    bool charges = false;  // point charges (messages say "charge"), else density cells
    std::vector<char> singular;  // per caller site: no finite potential within the singular radius
    int backend = QMMM_BACKEND_CPU, precision = QMMM_PRECISION_DOUBLE, device = -1, n_threads = 0;
};

// The kernels of one backend. Every call is synchronous except grad_start (finished by grad_finish). Outputs are
// written in double; a pair on a site without a finite potential makes the outputs of its point (grad) or site
// (sites) non-finite, and the call returns false in *bad (the engine names the point and the site).
class ForceKernels {
public:
    virtual ~ForceKernels() = default;
    // u[i] = U(point i), grad[3i..3i+2] = dU/dr; *bad when a value is not finite.
    virtual void grad_start(int64_t n, const double *xyz, double *u, double *grad) = 0;
    virtual void grad_finish(bool *bad) = 0;
    // The sites' potential and field of n points with weights w (physical charges). With accumulate: the running
    // sums (kept by the backend: on the GPU's memory for CUDA) grow by weight * the call's values, and phi / efield
    // are not written; a call that is *bad leaves them as they were.
    virtual void sites(int64_t n, const double *xyz, const double *w, double *phi, double *efield, bool accumulate,
                       double weight, bool *bad) = 0;
    virtual void accum_reset() = 0;
    virtual void accum_read(double *phi, double *efield) = 0;
    // The field gradient at the sites of n points with weights w (6 a site: xx xy xz yy yz zz; plain sites only, the
    // engine refuses a field with screened ones), in the caller's site order. egrad NULL (the default accum_stage_grad
    // only, which the CPU backend replaces): the values stay staged on the GPU's memory for accum_commit_grad. *bad as
    // sites().
    virtual void sites_grad(int64_t n, const double *xyz, const double *w, double *egrad, bool *bad) = 0;
    // The gradient sums (allocated and zeroed by accum_grad_reset) grow by weight * the staged values of the last
    // sites_grad (egrad NULL), or by weight * egrad given on the host (the engine's double recomputation).
    virtual void accum_grad_reset() = 0;
    virtual void accum_commit_grad(double weight, const double *egrad) = 0;
    // An accumulating call's gradient, staged for accum_commit_grad(weight, NULL); *bad as sites_grad. A backend may
    // stage the running sums + weight x values themselves (the CPU: no pass over the values at the commit).
    virtual void accum_stage_grad(int64_t n, const double *xyz, const double *w, double weight, bool *bad) {
        (void)weight;
        sites_grad(n, xyz, w, nullptr, bad);
    }
    virtual void accum_read_grad(double *egrad) = 0;
    // The running sums grow by weight * phi / efield given in the caller's site order (values the engine recomputed
    // on the host; the CUDA backend uploads them); false where a backend cannot (then the engine reports the call).
    // Whether the gradient sums lattice cells by rows (the CPU's AVX-512 loops; the engine then keeps its kernels
    // for a MIXED field rather than the value backend's own gradient).
    virtual bool grad_rows() const { return false; }
    virtual bool accum_add_values(const double *phi, const double *efield, double weight) {
        (void)phi, (void)efield, (void)weight;
        return false;
    }
};

std::unique_ptr<ForceKernels> make_force_kernels_cpu(const ForceSources &s);

// The GPU side (src_cuda/field/forces/field_grad_gpu.cu registers it).
class ForcesGpu {
public:
    virtual ~ForcesGpu() = default;
    virtual std::unique_ptr<ForceKernels> make(const ForceSources &s) const = 0;
};

// The engine of one field: the checks that need the sources, the messages, the pending state of an asynchronous
// gradient and the accumulator's summed weight (field_forces.cpp).
class ForceEngine {
public:
    explicit ForceEngine(ForceSources s) : s_(std::move(s)) {}
    // U and dU/dr (g NULL: U alone) at one point in double on the host, term by term (a site of zero charge adds
    // nothing); false when not finite (a point on a site without a finite potential, or an overflow). The value
    // path's fallback for a point without a finite value (qmmm_field_eval): one that SINGLE's float coordinates put
    // on a site, or a screened term that overflowed in the kernels' order.
    bool grad_host(const double *p, double *u, double *g) const;
    // The sites' potential and field of n points in double on the host, each site's points in index order; false when
    // not finite. The fallback of SINGLE's site field where float's coordinates put a point on a site.
    bool sites_host(int64_t n, const double *xyz, const double *w, double *phi, double *efield) const;
    ~ForceEngine();
    ForceEngine(const ForceEngine &) = delete;
    ForceEngine &operator=(const ForceEngine &) = delete;
    const ForceSources &sources() const { return s_; }
    int64_t n_sites() const { return static_cast<int64_t>(s_.site_index.size()); }
    // Throw Error (SINGULAR, NONFINITE, CUDA, ...) as the API says.
    void grad(int64_t n, const double *xyz, double *u, double *grad, double *sum_u);
    void grad_async(int64_t n, const double *xyz, double *u, double *grad, double *sum_u);
    bool pending() const { return pending_; }
    void wait();
    void sites(int64_t n, const double *xyz, const double *w, double *phi, double *efield);
    void accum_reset();
    void accum_add(int64_t n, const double *xyz, const double *w, double weight);
    void accum_read(double *phi, double *efield, double *weight_sum, int64_t *n_calls);
    // The field gradient at the sites (qmmm_field_site_field_grad) and the accumulator's gradient sums.
    void sites_grad(int64_t n, const double *xyz, const double *w, double *egrad);
    void accum_set_grad(bool on);
    bool accum_grad() const { return accum_grad_; }
    void accum_read_grad(double *egrad);
    // The field gradient of n points in double on the host, each site's points in index order; false when not
    // finite. The fallback of SINGLE's field gradient where float's coordinates put a point on a site.
    bool sites_grad_host(int64_t n, const double *xyz, const double *w, double *egrad) const;
    // Throws UNSUPPORTED where the field has screened charges (their pair terms have no second derivative here).
    void require_grad_sites() const;
    // Point dipoles attached to the field (qmmm_field_set_dipoles): grad and wait add their term to u and grad.
    void set_dipoles(std::shared_ptr<DipoleTerm> d) { dipoles_ = std::move(d); }
    // A SPLIT field's gradient (owned by the field's value backend, which outlives the engine).
    void set_split(SplitGradStats *s) { split_ = s; }
    // A value backend's own gradient (the CPU's MIXED direct field, which also outlives the engine): asked before the
    // engine's kernels.
    void set_own(FieldGradOwn *o) { own_ = o; }

private:
    ForceKernels &kernels();
    // The split's gradient with the direct sum at the points outside its region; false (nothing written) where the
    // field has none or it does not reach the tolerance. *bad: a value is not finite.
    bool split_grad(int64_t n, const double *xyz, double *u, double *grad, bool *bad);
    // The value backend's own gradient (set_own) where it takes the call, as split_grad.
    bool own_grad(int64_t n, const double *xyz, double *u, double *grad, bool *bad);
    // The points split_grad or own_grad left (split_out_) by the engine's kernels; *bad gains a non-finite output.
    void finish_rest(int64_t n, const double *xyz, double *u, double *grad, bool *bad);
    void grad_checked(int64_t n, const double *xyz, double *u, double *grad, bool bad);
    double site_charge(int64_t k) const;
    // skip_zero: the sites of zero charge are not named (the gradient: they add nothing, even on their centre).
    [[noreturn]] void report_singular(int64_t n, const double *xyz, const char *what, bool skip_zero = false);
    ForceSources s_;
    std::unique_ptr<ForceKernels> k_;
    bool pending_ = false;
    int64_t pending_n_ = 0;
    double *pending_u_ = nullptr, *pending_sum_ = nullptr, *pending_grad_ = nullptr;
    std::vector<double> pending_xyz_, scratch_u_, host_phi_, host_e_;
    double weight_sum_ = 0.0;
    int64_t n_calls_ = 0;
    bool accum_grad_ = false;  // the accumulator keeps the field gradient's sums too
    std::vector<double> host_g_;
    std::shared_ptr<DipoleTerm> dipoles_;
    SplitGradStats *split_ = nullptr;
    FieldGradOwn *own_ = nullptr;
    std::vector<char> split_out_;  // the points split_grad or own_grad leave to the kernels
    // a pending gradient that split_grad or own_grad computed in full
    bool pending_split_ = false, pending_bad_ = false;
};

}  // namespace qmmm

namespace qmmm {

// The sources of qmmm_field_create's and qmmm_field_create_charges' arrays (already validated); o is resolved (its
// backend CPU or CUDA).
ForceSources force_sources_cells(int64_t n_cells, const double *cell_xyz, const double *cell_q, int64_t n_nuclei,
                                 const double *nuc_xyz, const double *nuc_z, const qmmm_options &o);
ForceSources force_sources_charges(int64_t n, const double *x, const double *y, const double *z, int64_t stride,
                                   const double *q, int screening, const double *screen_a, const double *screen_b,
                                   int64_t n_nuclei, const double *nuc_xyz, const double *nuc_z, const qmmm_options &o);

// field_api.cpp: runs body(engine, pending) for the live field f, counted as a call inside f (destroy is BUSY
// meanwhile); pending is the field's flag of a pending asynchronous call (value or gradient). Throws BAD_HANDLE.
int field_forces_call(qmmm_field f, int (*body)(ForceEngine &, bool &pending, void *ctx), void *ctx);

}  // namespace qmmm
