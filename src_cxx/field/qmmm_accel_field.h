/**
 * @file qmmm_accel_field.h
 * @brief The embedding field of the qmmm-accel C API (included by qmmm_accel.h).
 *
 *     U_ES(r) = sum_m q_m / |r - r_m|  -  sum_b Z_b / |r - R_b|      (hartree)
 *
 * felt by one electron at r, from M density cells (centre r_m, electron population q_m = rho(r_m) dV)
 * and K environment nuclei (position R_b, charge Z_b). Atomic units: bohr, e, hartree.
 */
#ifndef QMMM_ACCEL_FIELD_H
#define QMMM_ACCEL_FIELD_H
#include "qmmm_accel_core.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---- options of a field ---- */
/** Methods (qmmm_options.method). */
enum {
    QMMM_METHOD_DIRECT = 0, /**< every cell summed at every point (the reference) */
    QMMM_METHOD_SPLIT = 1   /**< the range-split field for static environments (see qmmm_options) */
};
/** Flags (bits of qmmm_options.flags). */
enum {
    /** On CUDA, calls with at most 8 points go to a persistent kernel that waits for them on the GPU (no launch
     *  per call; the CPU ignores it). What it holds on the GPU while it runs, and when it stops (200 ms without
     *  a call, and always in qmmm_field_destroy): docs/design/gpu-kernels.md, "Cost of the low-latency mode to
     *  other work". */
    QMMM_FLAG_LOW_LATENCY = 1
};

/**
 * @brief Options of a field. Interoperable with Fortran's type(qmmm_options), bind(c). Fill with
 * qmmm_options_default first.
 *
 * SPLIT (method QMMM_METHOD_SPLIT), for an environment that stays fixed while many points are evaluated (a QMC
 * run): each pair term is split, 1/d = erf(a d)/d + erfc(a d)/d. The smooth long-range part is computed once by
 * the direct sum on a grid over opt.region and interpolated (order-8 Lagrange, refined in bricks where an error
 * estimate asks for it); the short-range part is summed over the cells within R_c of the point (a cell list);
 * nuclei stay direct. a, R_c and the grid spacing follow from opt.tolerance so that, in the region,
 * max |u - u_direct| / (sum_m |q_m|/|r - r_m| + sum_b Z_b/|r - R_b|) <= tolerance
 * (tests/field/test_field_split*.cpp check it against the direct double sum). Points outside the region are
 * summed directly (DIRECT's value, slower) and counted (qmmm_field_split_stats). opt.precision DOUBLE or MIXED
 * (SINGLE is refused): MIXED lets the CUDA backend compute each near cell's term in single precision (sums,
 * coordinates and interpolation stay double) where create measures that rounding to fit the tolerance (it is
 * then part of the error estimate); elsewhere, and on the CPU, MIXED evaluates in double. qmmm_field_backend
 * reports which. CPU and CUDA; the singular-point rules of qmmm_field_eval hold. Cost: create evaluates the
 * direct sum once per grid value (see qmmm_field_split_stats); then a point costs about as much as 10^3 direct
 * pair terms, whatever n_cells is. Design: docs/design/split.md.
 */
typedef struct qmmm_options {
    int32_t backend;    /**< QMMM_BACKEND_*; AUTO = CUDA when built with it and a GPU is present, else CPU.
                             The environment variable QMMM_BACKEND=cpu|cuda overrides AUTO (only AUTO). */
    int32_t precision;  /**< QMMM_PRECISION_*: DOUBLE; SINGLE (float pair terms and sums); MIXED (float pair
                             terms from coordinates relative to a nearby double origin, double sums; cells within
                             0.5 bohr of the point and the few cells that dominate sum q^2 in double) */
    int32_t device;     /**< CUDA device index; -1 = the current device of the calling thread (default) */
    int32_t n_threads;  /**< CPU threads, 0 .. 1024; 0 = the library default (qmmm_default_threads) */
    double cell_volume; /**< dV of one density cell in bohr^3; > 0 enables the self-potential of a point on a
                             cell centre (see qmmm_field_eval); 0 = unknown (default) */
    int32_t method;     /**< QMMM_METHOD_DIRECT (default) or QMMM_METHOD_SPLIT */
    int32_t flags;      /**< QMMM_FLAG_* bits; 0 = none (default) */
    double tolerance;   /**< SPLIT: requested max normwise error, 1e-11 .. 1e-3 (default 1e-7); anything else,
                             0 included, is QMMM_ERR_INVALID_ARG. DIRECT does not use it (0 stays valid there);
                             for every method it must be finite and >= 0 */
    const double *region; /**< SPLIT: the QM region where points are interpolated, 6 doubles lo_x lo_y lo_z hi_x
                               hi_y hi_z (bohr; qmmm_region_around makes one), read by create only; required for
                               SPLIT */
    int32_t reserved[2];/**< zero; room for later options without breaking the ABI (sizeof = 56 bytes) */
} qmmm_options;

/** A field: the cells and nuclei of one environment on one backend (opaque handle). */
typedef struct qmmm_field_s *qmmm_field;

/**
 * @brief Fills opt with the defaults: backend AUTO, precision DOUBLE, device -1, threads 0, cell_volume 0,
 * method DIRECT, no flags, tolerance 1e-7, region NULL.
 * @param[out] opt the options to fill
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG opt is NULL
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_options_default(qmmm_options *opt);

/* ---- the embedding field ---- */
/**
 * @brief Creates a field from density cells and nuclei.
 *
 * Copies the cells and nuclei (the caller may free its arrays afterwards). n_cells or n_nuclei may be 0
 * (then the other term alone; the arrays of an empty term may be NULL).
 * @param[out] f the new field (NULL on error)
 * @param n_cells number of density cells, >= 0
 * @param cell_xyz cell centres, 3*n_cells doubles, x y z interleaved (bohr)
 * @param cell_q cell electron populations q_m = rho(r_m) dV, n_cells doubles (e, positive for electrons)
 * @param n_nuclei number of nuclei, >= 0
 * @param nuc_xyz nuclear positions, 3*n_nuclei doubles (bohr)
 * @param nuc_z nuclear charges Z_b, n_nuclei doubles (e)
 * @param opt options (qmmm_options_default), or NULL for the defaults
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG f is NULL, or an array of a non-empty term is NULL
 * @retval QMMM_ERR_INVALID_ARG a negative count, an option out of range (backend, precision, device, method,
 *         flags, tolerance, region; SINGLE with SPLIT), a |charge| beyond what the precision sums without overflow
 *         (1e300 DOUBLE, 1e30 SINGLE and MIXED), a coordinate beyond what it squares without overflow (|x| > 1e150
 *         bohr DOUBLE, 1e18 SINGLE and MIXED)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a coordinate or charge
 * @retval QMMM_ERR_NO_CUDA backend CUDA in a build without CUDA
 * @retval QMMM_ERR_NO_DEVICE backend CUDA and no usable GPU
 * @retval QMMM_ERR_CUDA a CUDA failure while uploading
 * @retval QMMM_ERR_OUT_OF_MEMORY host or device memory
 * @threading Safe from any thread; the new handle belongs to the caller (one thread at a time).
 */
QMMM_API int qmmm_field_create(qmmm_field *f, int64_t n_cells, const double *cell_xyz, const double *cell_q,
                               int64_t n_nuclei, const double *nuc_xyz, const double *nuc_z,
                               const qmmm_options *opt);

/**
 * @brief Evaluates the field at n_points points: u[i] = U_ES(xyz[3i..3i+2]) in hartree.
 *
 * A point's value depends only on the point, the field, the precision and backend, and n_points (the path
 * taken) -- not on the other points, nor on thread counts; repeated calls give bitwise identical values.
 *
 * Singular points: a point within 1e-10 bohr of a cell centre takes, for that cell, the exact potential at
 * the centre of a uniformly charged cube of volume cell_volume, q * C / h with h = cell_volume^(1/3) and
 * C = 6 ln((1 + sqrt 3) / sqrt 2) - pi / 2 = 2.3800773640; if cell_volume is 0 this is QMMM_ERR_SINGULAR.
 * A point within 1e-10 bohr of a nucleus is QMMM_ERR_SINGULAR (a point charge has no finite potential there).
 * SINGLE rounds coordinates to float: a field far from the coordinate origin (beyond 16 bohr and four half-widths
 * of its box) is summed around the centre of its box, so its error is SINGLE's wherever the system sits.
 * Near a site that rounding dominates: a point at distance d from a cell or charge has that term's error up to
 * about sqrt(3) 2^-23 X / d of the term (X: the largest coordinate's distance from the summing origin; X = 3 bohr:
 * 1e-5 of the term at d = 0.06 bohr, 0.1 at 6e-6 bohr), and below d ~ X 2^-23 the term is known to a factor of
 * 3.5 only. A point that float puts on a site is recomputed in double: its value is DOUBLE's, the self-potential
 * only on a cell it is on in double. Nuclei, and MIXED's terms within 0.5 bohr, are summed in double.
 * On any error u is left unspecified.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles, x y z interleaved (bohr)
 * @param[out] u the values, n_points doubles (hartree)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG xyz or u is NULL with n_points > 0
 * @retval QMMM_ERR_INVALID_ARG n_points < 0, or a coordinate beyond 1e150 bohr (DOUBLE) or 1e18 bohr (SINGLE, MIXED)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a point, or a value beyond the precision's range (charges near 1e300)
 * @retval QMMM_ERR_SINGULAR a point on a nucleus, or on a cell centre with cell_volume 0
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f (call qmmm_field_wait)
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle; different fields may be evaluated from different threads.
 */
QMMM_API int qmmm_field_eval(qmmm_field f, int64_t n_points, const double *xyz, double *u);

/**
 * @brief Asynchronous form of qmmm_field_eval: starts the evaluation and returns.
 *
 * xyz is copied before the return, u is written by the time qmmm_field_wait(f) returns success. On the CPU
 * backend the work is done inside this call. At most one evaluation may be pending per handle.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles (bohr); may be reused as soon as the call returns
 * @param[out] u the values, n_points doubles (hartree), valid after qmmm_field_wait succeeds
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BUSY an evaluation is already pending on f
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG xyz or u is NULL with n_points > 0
 * @retval QMMM_ERR_INVALID_ARG n_points < 0, or a coordinate beyond 1e150 bohr (DOUBLE) or 1e18 bohr (SINGLE, MIXED)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a point, or a value beyond the precision's range (charges near 1e300)
 * @retval QMMM_ERR_CUDA a CUDA failure
 * Singular points (as qmmm_field_eval) are reported by qmmm_field_wait.
 * @threading One thread at a time per handle (the same or another thread may call qmmm_field_wait later).
 */
QMMM_API int qmmm_field_eval_async(qmmm_field f, int64_t n_points, const double *xyz, double *u);
/**
 * @brief Waits for the pending asynchronous evaluation of f, and for its last device-resident call
 * (qmmm_field_eval_device); returns at once if none is pending.
 * @param f the field
 * @retval QMMM_SUCCESS u of the pending evaluation is written
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_SINGULAR a point of the pending evaluation was singular (u unspecified)
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_wait(qmmm_field f);

/**
 * @brief The bounding box of n points grown by margin: a region for QMMM_METHOD_SPLIT.
 * @param n number of points, >= 1 (e.g. the QM nuclei)
 * @param xyz the points, 3*n doubles (bohr)
 * @param margin how far the box is grown on every side, >= 0 (bohr)
 * @param[out] region 6 doubles lo_x lo_y lo_z hi_x hi_y hi_z (bohr)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG xyz or region is NULL
 * @retval QMMM_ERR_INVALID_ARG n < 1, or margin negative or not finite
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a point, or a value beyond the precision's range (charges near 1e300)
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_region_around(int64_t n, const double *xyz, double margin, double *region);

/**
 * @brief What create chose for a SPLIT field. Any output may be NULL.
 * @param f the field (method SPLIT)
 * @param[out] alpha the splitting parameter a (1/bohr)
 * @param[out] r_cut the short-range cut-off R_c (bohr)
 * @param[out] spacing the grid spacing at level 0 (bohr; refined bricks use spacing / 2^level)
 * @param[out] error_estimate normwise: the truncation bound plus the larger of the interpolation estimate and
 *             the error measured at random points of the region (dimensionless)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_UNSUPPORTED f is a DIRECT field
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_split_params(qmmm_field f, double *alpha, double *r_cut, double *spacing,
                                     double *error_estimate);
/**
 * @brief Sizes and counters of a SPLIT field. Any output may be NULL.
 * @param f the field (method SPLIT)
 * @param[out] grid_values grid values over all levels
 * @param[out] bytes memory of the method's tables and direct fallback, host + device (bytes)
 * @param[out] n_points points evaluated so far
 * @param[out] n_outside how many of them lay outside the region (summed directly)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_UNSUPPORTED f is a DIRECT field
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_split_stats(qmmm_field f, int64_t *grid_values, int64_t *bytes, int64_t *n_points,
                                    int64_t *n_outside);
/**
 * @brief How qmmm_field_eval_grad computes a SPLIT field's gradient; the first call (this or a gradient) prepares it.
 * Inside the region the gradient is the split's: the interpolant's analytic derivative plus the exact derivative of
 * the short-range terms within r_cut, error-controlled like the value: per component, relative to
 * sum_m |q_m|/d_m^2 + sum_b Z_b/d_b^2, within opt.tolerance (a measured estimate; docs/design/split.md). Where the
 * value's grid does not reach that, a finer grid of its own is built (twice at most); where none does, the gradient
 * is the direct sum (exact, DIRECT's cost) and *is_split is 0. Points outside the region: the direct sum. Any output
 * may be NULL.
 * @param f the field (method SPLIT)
 * @param[out] r_cut the gradient's short-range cut-off R_g >= R_c (bohr; 0 when not split)
 * @param[out] error_estimate the gradient's truncation bound plus 2x its largest error at 1,024 random points of the
 *             region (0 when not split)
 * @param[out] grid_values grid values of the gradient's own grid (0: it interpolates the value's grid, or not split)
 * @param[out] is_split 1: the split's gradient, 0: the direct sum
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_UNSUPPORTED f is a DIRECT field
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_split_grad_params(qmmm_field f, double *r_cut, double *error_estimate, int64_t *grid_values,
                                         int *is_split);

/**
 * @brief The backend and precision actually in use. Any output may be NULL.
 * @param f the field
 * @param[out] backend QMMM_BACKEND_CPU or QMMM_BACKEND_CUDA
 * @param[out] precision a QMMM_PRECISION_* (SPLIT with MIXED: the one create chose, see qmmm_options)
 * @param[out] device the CUDA device; -1 on the CPU
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_backend(qmmm_field f, int *backend, int *precision, int *device);
/** CPU kernel sets a field's pair terms run on (qmmm_field_runtime). */
enum {
    QMMM_CPU_ISA_NONE = -1,   /**< none: the pair terms run on the GPU */
    QMMM_CPU_ISA_GENERIC = 0, /**< compiler-vectorised C++, 1/r correctly rounded */
    QMMM_CPU_ISA_AVX2 = 1,    /**< hand-written AVX2 + FMA kernels */
    QMMM_CPU_ISA_AVX512 = 2   /**< hand-written AVX-512 kernels */
};
/**
 * @brief What a field runs now: its CPU kernel set and the state of its low-latency kernel. Any output may be
 * NULL.
 *
 * The kernel set is fixed at create: the widest this CPU runs, or the one the environment variable
 * QMMM_CPU_ISA=avx512|avx2|generic forces (DIRECT fields; SPLIT's short-range sums follow the CPU alone). SIMD
 * results are not bitwise equal to GENERIC's (docs/design/precision.md). Cells or points beyond 1e17 bohr take
 * the generic kernels whatever it says. The low-latency kernel (QMMM_FLAG_LOW_LATENCY, CUDA) starts with the
 * first call of at most 8 points and ends 200 ms after the last, or in qmmm_field_destroy; running is read
 * from the GPU's stream, so an idle stop shows.
 * @param f the field
 * @param[out] cpu_isa a QMMM_CPU_ISA_* (QMMM_CPU_ISA_NONE for a CUDA field)
 * @param[out] ll_running 1 while the low-latency kernel runs on the GPU, else 0 (always 0 on the CPU)
 * @param[out] ll_launches how many times it has been started on this field
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_runtime(qmmm_field f, int *cpu_isa, int *ll_running, int64_t *ll_launches);
/**
 * @brief The numbers of cells and nuclei of a field. Any output may be NULL.
 * @param f the field
 * @param[out] n_cells density cells
 * @param[out] n_nuclei nuclei
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_sizes(qmmm_field f, int64_t *n_cells, int64_t *n_nuclei);
/**
 * @brief Destroys a field (waits for a pending evaluation and stops a low-latency kernel first).
 * @param f the field
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is NULL or already destroyed (destroying twice is detected; a handle is never
 *         given out again, so a destroyed f never names a later field)
 * @retval QMMM_ERR_BUSY another thread is inside qmmm_field_eval, _eval_sum, their async forms or _wait on f
 *         (f stays alive)
 * @threading One thread at a time per handle. Destroying f while another thread uses it is undefined behaviour;
 *            BUSY is returned where that is seen (the other call has already started).
 */
QMMM_API int qmmm_field_destroy(qmmm_field f);

/* ---- MM point charges (the call site of a QM/MM QMC code) ---- */
/** Screening of point charges, per charge (qmmm_field_create_charges); d = |r - R_m| in bohr. */
enum {
    QMMM_SCREEN_NONE = 0,    /**< -q_m / d */
    QMMM_SCREEN_EXP = 1,     /**< -q_m (1 - a_m exp(-b_m d^2)) / d; a_m dimensionless, b_m >= 0 in bohr^-2
                                  (a_m = 0 or b_m = 0: NONE) */
    QMMM_SCREEN_GAUSSIAN = 2 /**< -q_m erf(d / sigma_m) / d, a smeared charge; sigma_m = 0 (NONE) or
                                  >= 1e-6 bohr */
};

/**
 * @brief A field of MM point charges with PHYSICAL sign and, optionally, nuclei.
 *
 * A positive charge lowers an electron's energy: an electron at r feels -q_m / |r - R_m| hartree; nuclei as in
 * qmmm_field_create (-Z_b / |r - R_b|). The data are copied. The field is evaluated by qmmm_field_eval / _sum and
 * their async forms like any other. A point within 1e-10 bohr of an unscreened charge, of an EXP-screened one with
 * a_m != 1, or of a nucleus is QMMM_ERR_SINGULAR; on an EXP charge with a_m = 1 or a GAUSSIAN one the potential is
 * finite (-q_m a_m b_m d -> 0 and -q_m 2 / (sigma_m sqrt(pi))). Unscreened charges take the paths of density cells
 * (so the precisions' claims hold for them); screened charges are summed in double (DOUBLE, MIXED) or float
 * (SINGLE), on the CPU or the GPU of the field. Messages count charges from 0 (from 1 for Fortran callers:
 * qmmm_set_index_base).
 * @param[out] f the new field
 * @param n_charges number of point charges, >= 0
 * @param x x of charge m at x[m * stride] (bohr)
 * @param y y of charge m at y[m * stride] (bohr)
 * @param z z of charge m at z[m * stride] (bohr)
 * @param stride 1 for three arrays x(:), y(:), z(:); 3 for one array xyz(3,n) passed as x = xyz, y = xyz + 1,
 *        z = xyz + 2
 * @param q the charges, n_charges doubles (e)
 * @param screening a QMMM_SCREEN_*
 * @param screen_a a_m (EXP, dimensionless) or sigma_m (GAUSSIAN, bohr), n_charges doubles; NULL when unused
 * @param screen_b b_m (EXP, bohr^-2), n_charges doubles; NULL when unused
 * @param n_nuclei number of nuclei, >= 0
 * @param nuc_xyz nuclear positions, 3*n_nuclei doubles (bohr)
 * @param nuc_z nuclear charges, n_nuclei doubles (e)
 * @param opt as for qmmm_field_create (cell_volume 0); NULL = defaults. Backend AUTO with at most 2,048 charges
 *            and nuclei means the CPU (a GPU call costs 9-40 us, more than such a sum), unless QMMM_BACKEND is set.
 *            Method SPLIT (unscreened charges only) takes an alpha from the charges' density around opt->region,
 *            so that a point meets ~512 charges within R_c (docs/design/split.md, "Point charges")
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG f, or an array that the counts and the screening need, is NULL
 * @retval QMMM_ERR_INVALID_ARG counts, stride, screening, b_m < 0, sigma_m < 0, no charge and no nucleus,
 *         cell_volume != 0, an option out of range, or a |charge|, b_m or |a_m| beyond 1e300 (DOUBLE) or 1e30
 *         (SINGLE, MIXED)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a position, charge or screening parameter
 * @retval QMMM_ERR_UNSUPPORTED method SPLIT with screening other than QMMM_SCREEN_NONE
 * @retval QMMM_ERR_NO_CUDA backend CUDA in a build without CUDA
 * @retval QMMM_ERR_NO_DEVICE backend CUDA and no usable GPU
 * @retval QMMM_ERR_CUDA a CUDA failure while uploading
 * @threading Safe from any thread; the new handle belongs to the caller (one thread at a time).
 */
QMMM_API int qmmm_field_create_charges(qmmm_field *f, int64_t n_charges, const double *x, const double *y,
                                       const double *z, int64_t stride, const double *q, int32_t screening,
                                       const double *screen_a, const double *screen_b, int64_t n_nuclei,
                                       const double *nuc_xyz, const double *nuc_z, const qmmm_options *opt);

/**
 * @brief *sum = sum_i U(xyz[3i..3i+2]) over n_points points, added in point order.
 *
 * The energy of a configuration's electrons in the field, without a caller array for the values. The same values
 * as qmmm_field_eval, so the same singular-point rules; *sum is 0 for n_points = 0 and unspecified on error. No
 * allocation per call once the handle has seen a call of this size.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles, x y z interleaved (bohr)
 * @param[out] sum the sum (hartree)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG sum is NULL, or xyz with n_points > 0
 * @retval QMMM_ERR_NONFINITE as qmmm_field_eval, or finite values whose sum leaves double's range
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_INVALID_ARG, QMMM_ERR_SINGULAR, QMMM_ERR_BUSY, QMMM_ERR_CUDA as
 *         qmmm_field_eval
 * @threading One thread at a time per handle; different fields may be evaluated from different threads.
 */
QMMM_API int qmmm_field_eval_sum(qmmm_field f, int64_t n_points, const double *xyz, double *sum);
/**
 * @brief Asynchronous form of qmmm_field_eval_sum: xyz is copied before the return; *sum is written by
 * qmmm_field_wait.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles (bohr); may be reused as soon as the call returns
 * @param[out] sum the sum (hartree), valid after qmmm_field_wait succeeds
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BUSY an evaluation is already pending on f
 * @retval QMMM_ERR_NULL_ARG sum is NULL, or xyz with n_points > 0
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_INVALID_ARG, QMMM_ERR_NONFINITE, QMMM_ERR_CUDA as qmmm_field_eval_async
 *         (qmmm_field_wait: QMMM_ERR_NONFINITE also for finite values whose sum leaves double's range)
 * @threading One thread at a time per handle (the same or another thread may call qmmm_field_wait later).
 */
QMMM_API int qmmm_field_eval_sum_async(qmmm_field f, int64_t n_points, const double *xyz, double *sum);

/* ---- crowds: many walkers in one call; points and values in device memory ---- */
/**
 * @brief The sums of n_walkers walkers' points in one call: sums[w] = the sum of U over points offsets[w] to
 * offsets[w+1] - 1, added in point order, and, if u is not NULL, u[i] = U(point i) for those points.
 *
 * A crowd's walkers laid out walker by walker in one array: walker w's points are xyz[3 offsets[w]] to
 * xyz[3 offsets[w+1] - 1] (offsets non-decreasing; points before offsets[0] are not read). Each sums[w] has the same
 * bits as qmmm_field_eval_sum on that walker's points alone, and each u[i] those of qmmm_field_eval on them, whatever
 * n_walkers and the other walkers are (a walker without points gets 0). Where the backend gives a point the same bits
 * in any call (every CPU field; CUDA DIRECT fields when every walker has more than 8 points) all points go to the
 * backend at once (one launch of each kernel on CUDA); otherwise (CUDA SPLIT, CUDA walkers of 1-8 points) walker by
 * walker. The singular-point rules of qmmm_field_eval hold; messages count points from offsets[0]. On any error sums
 * and u are unspecified.
 * @param f the field
 * @param n_walkers number of walkers, >= 0
 * @param offsets n_walkers + 1 non-decreasing indices of points, offsets[0] >= 0 (host memory)
 * @param xyz the points, at least 3*offsets[n_walkers] doubles, x y z interleaved (bohr)
 * @param[out] sums one sum per walker, n_walkers doubles (hartree)
 * @param[out] u the values at points offsets[0] to offsets[n_walkers] - 1, indexed as xyz (u[i] for point i), or NULL
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG offsets or sums is NULL with n_walkers > 0, or xyz with points to evaluate
 * @retval QMMM_ERR_INVALID_ARG n_walkers < 0, offsets[0] < 0 or decreasing offsets (the message names the walker), or
 *         as qmmm_field_eval
 * @retval QMMM_ERR_NONFINITE as qmmm_field_eval, or a walker's finite values whose sum leaves double's range (the
 *         message names the walker)
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_SINGULAR, QMMM_ERR_BUSY, QMMM_ERR_CUDA as qmmm_field_eval
 * @threading One thread at a time per handle (calls on one handle from several threads must be serialised by the
 *         caller: a second thread's call while one runs is undefined, a destroy meanwhile is QMMM_ERR_BUSY);
 *         different handles, of the same sources or not, may be used from different threads at once. A crowd per
 *         thread: one handle per thread.
 */
QMMM_API int qmmm_field_eval_walkers(qmmm_field f, int64_t n_walkers, const int64_t *offsets, const double *xyz,
                                     double *sums, double *u);
/**
 * @brief Asynchronous form of qmmm_field_eval_walkers: offsets and xyz are read before the return; sums (and u) are
 * written by the time qmmm_field_wait(f) returns success. The same bits as qmmm_field_eval_walkers. Where the walkers
 * go to the backend one by one (see there) the work is done inside this call. At most one evaluation may be pending
 * per handle.
 * @param f the field
 * @param n_walkers number of walkers, >= 0
 * @param offsets n_walkers + 1 non-decreasing point indices (host memory); may be reused when the call returns
 * @param xyz the points (bohr); may be reused when the call returns
 * @param[out] sums one sum per walker (hartree), valid after qmmm_field_wait succeeds
 * @param[out] u the per-point values, or NULL; valid after qmmm_field_wait succeeds
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BUSY an evaluation is already pending on f
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_NULL_ARG, QMMM_ERR_INVALID_ARG, QMMM_ERR_NONFINITE, QMMM_ERR_CUDA as
 *         qmmm_field_eval_walkers (singular points are reported by qmmm_field_wait)
 * @threading As qmmm_field_eval_walkers (the same or another thread may call qmmm_field_wait later).
 */
QMMM_API int qmmm_field_eval_walkers_async(qmmm_field f, int64_t n_walkers, const int64_t *offsets, const double *xyz,
                                           double *sums, double *u);
/**
 * @brief Device-resident evaluation (CUDA fields): d_u[i] = U(d_xyz[3i..3i+2]) with points and values in device
 * memory, enqueued on a stream; no copy to or from the host, no wait.
 *
 * The work is ordered on `stream` (a cudaStream_t; NULL: the field's own stream, not the legacy default stream) after
 * what the caller enqueued there before, and d_u is written when the stream reaches it (cudaStreamSynchronize, an
 * event, or later work on the stream; qmmm_field_wait(f) blocks until it is done, for callers without the stream:
 * OpenACC and OpenMP data regions). The field's next call of any kind waits for it on the GPU. The values are those
 * of qmmm_field_eval for calls of more than 8 points (the throughput path, whatever n_points); the points are not
 * checked on the host (a NaN point gives a NaN value), and a point on a nucleus, or on a cell centre with cell_volume
 * 0, gives NaN in d_u instead of QMMM_ERR_SINGULAR. CUDA DIRECT fields of density cells or unscreened charges; other
 * fields (CPU, SPLIT, screened charges, a SINGLE field on a local origin, nuclei only) are refused.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param d_xyz the points, 3*n_points doubles in device memory of the field's device (bohr)
 * @param[out] d_u the values, n_points doubles in device memory (hartree)
 * @param stream a cudaStream_t of the field's device, or NULL
 * @retval QMMM_SUCCESS the work is enqueued
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG d_xyz or d_u is NULL with n_points > 0
 * @retval QMMM_ERR_INVALID_ARG n_points < 0, or d_xyz or d_u is host memory or memory of another device
 *         (cudaPointerGetAttributes; managed memory is taken)
 * @retval QMMM_ERR_UNSUPPORTED f is a CPU field, or a CUDA field of a kind named above
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_CUDA a CUDA failure (enqueueing; a failure of the kernels shows on the stream)
 * @threading As qmmm_field_eval_walkers.
 */
QMMM_API int qmmm_field_eval_device(qmmm_field f, int64_t n_points, const double *d_xyz, double *d_u, void *stream);
/**
 * @brief Device-resident walkers (CUDA fields): qmmm_field_eval_device on the points from d_xyz[3 offsets[0]] to
 * d_xyz[3 offsets[n_walkers] - 1], then d_sums[w] = the sum of d_u over walker w's points in point order, on the GPU (one
 * thread a walker, no atomics): bitwise what qmmm_field_eval_walkers gives when every walker has more than 8 points.
 * offsets are in host memory (the layout of a crowd rarely changes); d_u may be NULL (the values are then kept in the
 * field's own device buffer).
 * @param f the field
 * @param n_walkers number of walkers, >= 0
 * @param offsets n_walkers + 1 non-decreasing point indices, host memory
 * @param d_xyz the points, device memory (bohr)
 * @param[out] d_sums one sum per walker, n_walkers doubles in device memory (hartree)
 * @param[out] d_u the per-point values indexed as d_xyz, device memory, or NULL
 * @param stream a cudaStream_t of the field's device, or NULL (the field's own)
 * @retval QMMM_SUCCESS the work is enqueued
 * @retval QMMM_ERR_NULL_ARG offsets or d_sums NULL with n_walkers > 0, or d_xyz with points
 * @retval QMMM_ERR_INVALID_ARG as qmmm_field_eval_walkers and qmmm_field_eval_device (a host pointer)
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_UNSUPPORTED, QMMM_ERR_BUSY, QMMM_ERR_CUDA as qmmm_field_eval_device
 * @threading As qmmm_field_eval_walkers.
 */
QMMM_API int qmmm_field_eval_walkers_device(qmmm_field f, int64_t n_walkers, const int64_t *offsets,
                                            const double *d_xyz, double *d_sums, double *d_u, void *stream);

/* ---- forces: the gradient at points, the field at the sites ---- */
/**
 * @brief The value and the gradient of the field at n_points points: u[i] = U_ES(r_i) (hartree) and
 * grad[3i..3i+2] = dU_ES/dr at r_i (hartree/bohr).
 *
 * U is the energy of an electron, so the force of the environment on an electron at r is -grad, and on a point of
 * physical charge Q (a QM nucleus: Q = Z) it is +Q grad. Every source kind (density cells, MM charges with any
 * screening, nuclei), every method and precision; forces.md (docs/user-guide) has the conventions.
 * A SPLIT field's gradient (and its u here) is the split's own at the points inside its region: each component
 * within the tolerance relative to sum |q_m|/d_m^2 + sum Z_b/d_b^2 (the first call may build a grid of its own for
 * it: qmmm_field_split_grad_params), the direct sum elsewhere and where the split's cannot reach the tolerance.
 * Precisions: DOUBLE evaluates in double (error per component at most 1e-13 relative to sum |q|/d^2, and u's to
 * sum |q|/d; measured ~5e-16), and so does MIXED for point charges, lattice cells (a cube's) and on the GPU; MIXED's
 * density cells anywhere on the CPU take qmmm_field_eval's float pair terms (u is then eval's, bit for bit; the
 * gradient within 2e-8 of sum |q|/d^2 where the float terms' errors average out over many cells, as the value's 1e-8;
 * measured up to 1.1e-8); SINGLE uses float pair terms (offsets from the centre of the sites' box) and
 * float sums over runs of 1,024 sources, added in double (at most 1e-5 relative to the same norms: ~1e-6 from the
 * float terms, the rest from rounding coordinates to float next to a site; measured up to 2.3e-6), except near a cell
 * or charge: a point at distance d from one has that term's gradient wrong by up to about 3 sqrt(3) 2^-23 X / d of
 * |q|/d^2 (X as qmmm_field_eval's; X = 3 bohr: 1e-5 at d = 0.2 bohr, 2e-3 at 1e-3 bohr), and below
 * d ~ 2 sqrt(3) 2^-23 X it is known to an order of magnitude only (u: as qmmm_field_eval). A point that float puts on
 * a site is recomputed in double on the host (either backend): DOUBLE's values, the self-potential only on a cell
 * it is on in double.
 * u agrees with qmmm_field_eval
 * within the precision's and method's error, not bit for bit (MIXED's float terms above excepted). A point's values depend only on the point, the field,
 * its backend and precision: not on the other points, nor on thread counts or batch sizes.
 * Singular points: as qmmm_field_eval. On a density cell centre with cell_volume set the cell adds its self
 * potential to u and nothing to grad (the cube's field vanishes at its centre); on an EXP-screened charge with a = 1
 * or a GAUSSIAN one the gradient is finite (EXP with a = 1 is a cone, |grad| -> |q| b, and exactly on the charge its
 * term is 0; GAUSSIAN's term -> 0 linearly); a point on a nucleus, an unscreened charge, an EXP charge with a != 1,
 * or a cell centre with cell_volume 0 is QMMM_ERR_SINGULAR. On any error u and grad are unspecified.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles, x y z interleaved (bohr)
 * @param[out] u the values, n_points doubles (hartree); may be NULL (then not written)
 * @param[out] grad the gradients, 3*n_points doubles, x y z interleaved (hartree/bohr)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG xyz or grad is NULL with n_points > 0
 * @retval QMMM_ERR_INVALID_ARG n_points < 0, or a coordinate beyond 1e150 bohr (DOUBLE) or 1e18 bohr (SINGLE, MIXED)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a point, or a value beyond the precision's range
 * @retval QMMM_ERR_SINGULAR a point on a site without a finite potential (see above)
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f (call qmmm_field_wait)
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle; different fields may be evaluated from different threads.
 */
QMMM_API int qmmm_field_eval_grad(qmmm_field f, int64_t n_points, const double *xyz, double *u, double *grad);
/**
 * @brief Asynchronous form of qmmm_field_eval_grad: xyz is copied before the return; u and grad are written by the
 * time qmmm_field_wait(f) returns success (on the CPU backend the work is done inside this call). The same values,
 * bit for bit, as qmmm_field_eval_grad. At most one evaluation (value or gradient) may be pending per handle.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles (bohr); may be reused as soon as the call returns
 * @param[out] u the values, n_points doubles (hartree), or NULL; valid after qmmm_field_wait succeeds
 * @param[out] grad the gradients, 3*n_points doubles (hartree/bohr), valid after qmmm_field_wait succeeds
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BUSY an evaluation is already pending on f
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_NULL_ARG, QMMM_ERR_INVALID_ARG, QMMM_ERR_NONFINITE, QMMM_ERR_CUDA as
 *         qmmm_field_eval_grad (singular points are reported by qmmm_field_wait)
 * @threading One thread at a time per handle (the same or another thread may call qmmm_field_wait later).
 */
QMMM_API int qmmm_field_eval_grad_async(qmmm_field f, int64_t n_points, const double *xyz, double *u, double *grad);
/**
 * @brief *sum_u = sum_i U(r_i) added in point order, and the per-point gradients: qmmm_field_eval_grad without a
 * caller array for the values (the same values and gradients, bit for bit; *sum_u as qmmm_field_eval_sum adds them).
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles (bohr)
 * @param[out] sum_u the sum of the values (hartree); 0 for n_points = 0
 * @param[out] grad the gradients, 3*n_points doubles (hartree/bohr)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG sum_u is NULL, or xyz or grad with n_points > 0
 * @retval QMMM_ERR_NONFINITE as qmmm_field_eval_grad, or finite values whose sum leaves double's range
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_INVALID_ARG, QMMM_ERR_SINGULAR, QMMM_ERR_BUSY, QMMM_ERR_CUDA as
 *         qmmm_field_eval_grad
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_eval_grad_sum(qmmm_field f, int64_t n_points, const double *xyz, double *sum_u, double *grad);

/**
 * @brief The potential and the electric field that n_points points of physical charges w put on every site of the
 * field (the reverse of qmmm_field_eval_grad).
 *
 * Sites, M = n_cells + n_nuclei of qmmm_field_sizes, in this order: the density cells (qmmm_field_create) or the MM
 * charges (qmmm_field_create_charges) as the caller gave them, then the nuclei. With g_k the site's kernel (1/d,
 * or its screening's form: the same pair term as the forward call):
 *   phi[k] = sum_i w_i g_k(|R_k - r_i|)                 (hartree/e: the potential of the points at R_k)
 *   efield[3k..3k+2] = E_k = -grad_{R_k} phi[k]          (hartree/(e bohr))
 * so the force on a site of physical charge Q_k is Q_k E_k (Q_k = q_m of an MM charge, Z_b of a nucleus, -q_m of a
 * density cell); for electrons w_i = -1, for QM nuclei w_i = +Z. Newton's third law holds between the two calls:
 * sum_k Q_k E_k + sum_i w_i grad_i = 0 (grad_i from qmmm_field_eval_grad at r_i). A point on a site without a finite
 * potential is QMMM_ERR_SINGULAR as in qmmm_field_eval_grad; a point on a cell centre with cell_volume set adds
 * w C / h to that cell's phi and nothing to its field.
 * Per site a fixed order: the points in index order (DOUBLE and MIXED: double; SINGLE: float terms and float sums
 * over runs of 1,024 points, added in double); the same bits whatever the thread count. Errors as
 * qmmm_field_eval_grad's, relative to sum_i |w_i|/d^2 per component, near a site too (SINGLE: a call with a point
 * that float puts on a site is recomputed in double on the host, for either backend, the accumulator's too).
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles (bohr)
 * @param w the points' physical charges, n_points doubles (e)
 * @param[out] phi the potential at each site, M doubles (hartree/e)
 * @param[out] efield the field at each site, 3*M doubles, x y z interleaved (hartree/(e bohr))
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG phi or efield is NULL, or xyz or w with n_points > 0
 * @retval QMMM_ERR_INVALID_ARG n_points < 0, a coordinate beyond the precision's reach, or |w_i| beyond 1e300
 *         (DOUBLE) or 1e30 (SINGLE, MIXED)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a point or a weight, or a value beyond the precision's range
 * @retval QMMM_ERR_SINGULAR a point on a site without a finite potential
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_site_field(qmmm_field f, int64_t n_points, const double *xyz, const double *w, double *phi,
                                   double *efield);
/**
 * @brief Sets the site accumulator of f to zero: its sums of phi and E at every site (and of the field gradient where
 * qmmm_field_site_accum_set_grad keeps them), its summed weight and its count of calls (a field starts with them
 * zero).
 * @param f the field
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_site_accum_reset(qmmm_field f);
/**
 * @brief Adds weight times qmmm_field_site_field's phi and E of these points to the site accumulator, and weight to
 * its summed weight. The sums stay where the field computes (on the GPU for CUDA): a run adds at every step and
 * reads once (qmmm_field_site_accum_read). Each site's sums grow by the call's values in call order: the same calls
 * give the same bits. With qmmm_field_site_accum_set_grad on, the field gradient's sums grow too
 * (qmmm_field_site_field_grad's values). A failed call leaves the accumulator (every sum) as it was.
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles (bohr)
 * @param w the points' physical charges, n_points doubles (e)
 * @param weight the configuration's weight (1 for VMC; a DMC walker's weight), finite
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NONFINITE weight is NaN or Inf, or as qmmm_field_site_field
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_NULL_ARG, QMMM_ERR_INVALID_ARG, QMMM_ERR_SINGULAR, QMMM_ERR_BUSY,
 *         QMMM_ERR_CUDA as qmmm_field_site_field (NULL phi and efield excepted: there are none)
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_site_accum_add(qmmm_field f, int64_t n_points, const double *xyz, const double *w,
                                       double weight);
/**
 * @brief Reads the site accumulator: the weighted sums of phi (M doubles) and E (3*M doubles), the summed weight and
 * the count of calls since the last reset. The averages are phi / weight_sum and efield / weight_sum.
 * @param f the field
 * @param[out] phi sum of weight * phi per site, M doubles (hartree/e)
 * @param[out] efield sum of weight * E per site, 3*M doubles (hartree/(e bohr))
 * @param[out] weight_sum the summed weight; may be NULL
 * @param[out] n_calls the calls added; may be NULL
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG phi or efield is NULL
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_site_accum_read(qmmm_field f, double *phi, double *efield, double *weight_sum,
                                        int64_t *n_calls);
/**
 * @brief The gradient of the electric field that n_points points of physical charges w put on every site of the
 * field: the symmetric tensor dE_a/dR_b of qmmm_field_site_field's E_k, 6 values a site in the order xx, xy, xz,
 * yy, yz, zz (hartree/(e bohr^2)). With it the force on a point dipole mu_k at site k is (mu_k . grad) E_k, component
 * a: sum_b mu_b egrad_ab (the force on a polarizable site is Q_k E_k + (mu_k . grad) E_k).
 *   egrad_ab[k] = sum_i w_i (delta_ab / d^3 - 3 d_a d_b / d^5),  d = R_k - r_i, d = |d|
 * Sites, order and the rules on them as qmmm_field_site_field: a point on a cell centre with cell_volume set adds
 * nothing (the cube's field is flat there), a point on another site is QMMM_ERR_SINGULAR. Per site a fixed order
 * (the points in index order; DOUBLE and MIXED in double, SINGLE in float terms and float sums over runs of 1,024
 * points, added in double): the same bits whatever the thread count. Error per component, relative to
 * sum_i |w_i|/d^3: DOUBLE and MIXED ~5e-15, SINGLE ~2e-5 (float terms and the points' offsets rounded to float; a
 * call with a point that float puts on a site is recomputed in double on the host). Screened charges
 * (QMMM_SCREEN_EXP or QMMM_SCREEN_GAUSSIAN with a screened site) have no field gradient yet: QMMM_ERR_UNSUPPORTED (a
 * screened site's E is the field its smeared charge feels, while a point dipole there feels the bare field: which
 * gradient a caller wants is not one answer).
 * @param f the field
 * @param n_points number of points, >= 0
 * @param xyz the points, 3*n_points doubles (bohr)
 * @param w the points' physical charges, n_points doubles (e)
 * @param[out] egrad the field gradient at each site, 6*M doubles, xx xy xz yy yz zz per site (hartree/(e bohr^2))
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG egrad is NULL, or xyz or w with n_points > 0
 * @retval QMMM_ERR_UNSUPPORTED the field has screened charges
 * @retval QMMM_ERR_BAD_HANDLE, QMMM_ERR_INVALID_ARG, QMMM_ERR_NONFINITE, QMMM_ERR_SINGULAR, QMMM_ERR_BUSY,
 *         QMMM_ERR_CUDA as qmmm_field_site_field
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_site_field_grad(qmmm_field f, int64_t n_points, const double *xyz, const double *w,
                                        double *egrad);
/**
 * @brief Makes the site accumulator of f also keep the sums of the field gradient (qmmm_field_site_field_grad's 6
 * values a site), or stop keeping them, and sets the accumulator to zero (as qmmm_field_site_accum_reset). While on,
 * every qmmm_field_site_accum_add adds weight times the points' field gradient too, in call order, on the device for
 * CUDA (no copy per call); qmmm_field_site_accum_read_grad reads the sums. Off when a field is made.
 * An option of the accumulator rather than an accumulator of its own: one add a step feeds both sums, with one
 * count of calls and one summed weight, and a failed add leaves both as they were.
 * @param f the field
 * @param on nonzero: keep the gradient sums; 0: do not
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_UNSUPPORTED on, and the field has screened charges
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_site_accum_set_grad(qmmm_field f, int on);
/**
 * @brief Reads the field-gradient sums of the site accumulator (kept after qmmm_field_site_accum_set_grad(f, 1)):
 * sum of weight * egrad per site, 6*M doubles (xx xy xz yy yz zz; hartree/(e bohr^2)); the average is egrad /
 * weight_sum of qmmm_field_site_accum_read. Does not reset.
 * @param f the field
 * @param[out] egrad the sums, 6*M doubles
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG egrad is NULL
 * @retval QMMM_ERR_INVALID_ARG the accumulator does not keep the gradient (qmmm_field_site_accum_set_grad)
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_site_accum_read_grad(qmmm_field f, double *egrad);

/**
 * @brief Attaches point dipoles to f (the permanent and induced dipoles of polarizable MM sites), or replaces the
 * ones attached before: from now on qmmm_field_eval (and its sum and async forms) and qmmm_field_eval_grad add
 *   U_dip(r) = -sum_k mu_k . (r - R_k) / |r - R_k|^3        (hartree; the energy of an electron at r)
 * and its gradient to what the field's sources give. mu is the physical dipole (e bohr; the potential of a dipole
 * is +mu . d / d^3 and an electron's energy is minus the potential, as a charge's term is -q/d). The dipoles change
 * without rebuilding anything with qmmm_field_update_dipoles, the cheap call of a self-consistent loop.
 * The term is summed per point over the sites in index order, the same bits whatever the batch and thread count, on
 * both backends alike:
 * - DOUBLE and MIXED: in double (error ~1e-16 relative to sum_k |mu_k| / d_k^2 for U and sum_k 2 |mu_k| / d_k^3 for
 *   each gradient component; at most 1e-14). MIXED keeps double here: its claim (1e-8, errors that average out) would
 *   not hold with float dipole terms, whose error near a site does not average, and on GPUs with full-rate FP64 the
 *   double term costs MIXED about what it costs DOUBLE.
 * - SINGLE: float pair terms of the offsets from the sites' origin (the centre of their box in whole bohr, so
 *   rounding follows the sites' extent, not their place), float sums over slices of 256 sites, added in double: at
 *   most 1e-5 relative to the same norms (measured up to 2e-6), except near a site: a point at distance d from one has
 *   that term wrong by up to about 2 sqrt(3) 2^-23 X / d for U and 3 sqrt(3) 2^-23 X / d for the gradient (X: the
 *   largest offset from the origin; X = 3 bohr: 1e-5 at d = 0.2 bohr), and below d ~ 2 sqrt(3) 2^-23 X it is known to
 *   an order of magnitude only. A point that float puts on a site, or whose float term overflows, is recomputed in
 *   double on the host (either backend): DOUBLE's term. A SINGLE field takes SINGLE's limits for the sites and dipoles
 *   (1e18 bohr, 1e30 e bohr), as for its charges.
 * The term is not part of qmmm_field_site_field's sites (the field at the dipole sites is that of a field built on
 * them: see docs/user-guide/polarizable.md). A point within 1e-10 bohr of a dipole site is QMMM_ERR_SINGULAR
 * (whatever the dipole, also 0). n_sites = 0 removes the dipoles.
 * @param f the field
 * @param n_sites number of dipole sites, >= 0
 * @param site_xyz the sites' positions, 3*n_sites doubles, x y z interleaved (bohr); copied
 * @param mu the dipoles, 3*n_sites doubles, x y z interleaved (e bohr), or NULL: all zero until updated
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG site_xyz is NULL with n_sites > 0
 * @retval QMMM_ERR_INVALID_ARG n_sites < 0, a coordinate beyond 1e150 bohr or a component beyond 1e300 (SINGLE:
 * 1e18 bohr, 1e30)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in site_xyz or mu
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_OUT_OF_MEMORY, QMMM_ERR_CUDA the dipoles' copy could not be made (f keeps its former dipoles)
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_set_dipoles(qmmm_field f, int64_t n_sites, const double *site_xyz, const double *mu);
/**
 * @brief Replaces the dipoles of the sites attached by qmmm_field_set_dipoles (the sites stay): a copy of 3*n_sites
 * doubles (and one transfer to the GPU), nothing rebuilt. On failure the former dipoles stay.
 * @param f the field
 * @param n_sites the number of dipole sites attached (a check of mu's size)
 * @param mu the dipoles, 3*n_sites doubles (e bohr)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG mu is NULL with n_sites > 0
 * @retval QMMM_ERR_INVALID_ARG n_sites is not the number attached, or a component beyond 1e300 (SINGLE: 1e30)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in mu
 * @retval QMMM_ERR_BUSY an asynchronous evaluation is pending on f
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_field_update_dipoles(qmmm_field f, int64_t n_sites, const double *mu);
/**
 * @brief The number of dipole sites attached to f (0 when none).
 * @param f the field
 * @param[out] n_sites the number of dipole sites
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE f is not a live field
 * @retval QMMM_ERR_NULL_ARG n_sites is NULL
 * @threading Any thread.
 */
QMMM_API int qmmm_field_dipole_count(qmmm_field f, int64_t *n_sites);

#ifdef __cplusplus
}
#endif
#endif
