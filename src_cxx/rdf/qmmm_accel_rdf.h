/**
 * @file qmmm_accel_rdf.h
 * @brief The rdf family of the qmmm-accel C API (included by qmmm_accel.h).
 *
 * Radial distribution functions between two selections over any number of frames:
 *
 *     g(r_k) = H_k / ( F * N_pairs * (4 pi / 3) (r_{k+1}^3 - r_k^3) / \<V\> )
 *
 * H_k: pairs counted in bin k over all F frames (64-bit integers), \<V\>: the average box volume,
 * N_pairs: the pairs that can be counted in one frame. Pairs of an atom with itself and pairs excluded by
 * molecule ids are neither counted nor in N_pairs, so g -> 1 for an ideal gas in every case.
 *   identical selections (sel2 is sel1): unordered pairs, N_pairs = (N1^2 - sum_m c_m^2) / 2
 *   otherwise:                           ordered pairs (i in sel1, j in sel2), N_pairs = N1 N2 - sum_m c1_m c2_m
 * (c_m: atoms with exclusion key m; the key is the molecule id if given, else the atom id).
 * n(r_{k+1}) = sum_{k' <= k} H_k' (x 2 for identical selections) / (F N1): non-excluded sel2 neighbours of a
 * sel1 atom closer than r_{k+1}, cumulative coordination number.
 *
 * Units: lengths in the unit of the coordinates and box (Angstrom for the trajectory formats of the qmmm-rdf
 * tool; bohr if the caller works in atomic units). Bins are uniform: dr = (r_max - r_min) / n_bins; a pair
 * at distance r is counted in bin floor((r - r_min) / dr) if r_min <= r < r_max.
 *
 * Periodic boxes: box = 9 doubles, the cell vectors a, b, c one after the other (a Fortran real(8) :: box(3,3)
 * with vectors as columns). Any cell (orthorhombic or triclinic) with positive volume. Distances use the
 * minimum image; r_max may not exceed half the smallest perpendicular width of the cell (qmmm_rdf_box_limit),
 * the largest r at which no pair has two images closer than r.
 *
 * Exactness: every pair is put in the bin exact arithmetic puts it in. Positions become 32-bit fixed-point
 * fractional coordinates (rounded to 2^-33 of the cell: 2.5e-8 Angstrom in a 215 Angstrom box). Distances are
 * computed in float from their top 23 bits; a pair whose float r^2 is farther from both edges of its bin than
 * a proven bound of the float error is in that bin, any other (about 1-3 % of the counted pairs in a
 * 50-200 Angstrom box with 0.02 Angstrom bins) is decided in double from the 32-bit coordinates, where a
 * distance within the 32-bit rounding of an edge (at most 2 x 2^-32 of the cell, 1e-7 Angstrom in a
 * 215 Angstrom box) counts as on the edge and goes to the upper bin. So pairs that lie exactly on an edge, as
 * many do in files with few decimals (GRO: 0.001 nm, and 0.02 Angstrom bins), are counted in the upper bin,
 * as a double-precision or exact reference counts them. The CPU and the GPU run the same operations, so both
 * backends (and any thread count, device list, frame batching or method) give bitwise identical histograms.
 *
 * Several GPUs (opt->devices): frames are the natural unit. qmmm_rdf_add_frames hands whole frames to the
 * devices (a faster one takes more; each device's host thread prepares its next frame while the GPU counts);
 * only the last frames, when fewer remain than devices, are split. A single frame (qmmm_rdf_add_frame) is
 * split into work units shared by the devices only if it has at least 1e10 distance evaluations per device
 * used (about 10 ms of one H100); a smaller frame runs on the first listed devices only (the upload, the
 * wake-up of the host threads and the tails of the units cost more than the second device gains: a 5e9-pair
 * frame split over two H200s took as long as on one). The integer histograms are
 * summed, so every split gives the same bits as one device and the CPU.
 *
 * Frame pipeline on a GPU: the host converts a frame to fixed point (opt->n_threads threads; the NaN/Inf check
 * is in the same pass) into page-locked memory; the device sorts its copy into the cell list (a
 * stable radix sort, the order of the CPU's counting sort) and counts, while the host prepares the next frame.
 * 1M atoms at r_max 12 A: about 6 ms per frame on an H100 (README, table rdf_frames).
 */
#ifndef QMMM_ACCEL_RDF_H
#define QMMM_ACCEL_RDF_H
#include "qmmm_accel_core.h"
#ifdef __cplusplus
extern "C" {
#endif

#define QMMM_RDF_MAX_DEVICES 16 /**< entries of qmmm_rdf_options.devices */

/** Pair search (qmmm_rdf_options.method). */
enum {
    QMMM_RDF_METHOD_AUTO = 0,  /**< a cell list when every perpendicular width of the box is at least 2.5 r_max
                                    (each cell at least r_max / 2 wide), brute force over all pairs otherwise */
    QMMM_RDF_METHOD_BRUTE = 1, /**< every pair */
    QMMM_RDF_METHOD_CELLS = 2  /**< a cell list (the box must be at least 2.5 r_max wide) */
};
/** GPU kernels (qmmm_rdf_options.kernel). */
enum {
    QMMM_RDF_KERNEL_FAST = 0 /**< the only kernel (the field keeps its place for others; other values are refused) */
};

/** Options of an RDF. Fill with qmmm_rdf_options_default first. */
typedef struct qmmm_rdf_options {
    int32_t backend;   /**< QMMM_BACKEND_*; AUTO = CUDA when built with it and a GPU is present (env QMMM_BACKEND) */
    int32_t n_threads; /**< CPU threads (counting on the CPU; with a GPU, preparing frames), 0 = OpenMP default */
    int32_t method;    /**< QMMM_RDF_METHOD_* */
    int32_t kernel;    /**< QMMM_RDF_KERNEL_FAST (default and only value) */
    int32_t n_devices; /**< entries in devices; 0 = device 0 only. A device may be listed twice. */
    int32_t devices[QMMM_RDF_MAX_DEVICES]; /**< CUDA devices to use */
    int32_t reserved[8]; /**< zero; room for later options */
} qmmm_rdf_options;

/** What the last qmmm_rdf_add_frame (or qmmm_rdf_add_frames) did. */
typedef struct qmmm_rdf_stats {
    int32_t backend;     /**< QMMM_BACKEND_CPU or _CUDA */
    int32_t method;      /**< QMMM_RDF_METHOD_BRUTE or _CELLS */
    int32_t n_workers;   /**< CPU threads or host threads (one per listed device) */
    int32_t identical;   /**< 1 if sel2 is sel1 */
    int64_t n_units;     /**< work units handed out (GPU) */
    int64_t units_per_worker[QMMM_RDF_MAX_DEVICES]; /**< how many units each device listing took (GPU) */
    double pairs_visited;/**< distances computed in the frame */
    double n_pairs;      /**< N_pairs of the normalisation */
    double seconds;      /**< wall time of the frame's pair counting (excluding the preparation) */
    double prep_seconds; /**< wall time of the preparation (fractional coordinates, cell sort) */
} qmmm_rdf_stats;

/** An RDF accumulator: bins, selections and the histogram over the frames so far (opaque handle). */
typedef struct qmmm_rdf_s *qmmm_rdf;

/**
 * @brief Fills opt with the defaults: backend AUTO, method AUTO, kernel FAST, everything else 0.
 * @param[out] opt the options to fill
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG opt is NULL
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_rdf_options_default(qmmm_rdf_options *opt);

/**
 * @brief Creates an RDF over n_bins uniform bins of [r_min, r_max).
 * @param[out] h the new RDF
 * @param r_min lower edge of the first bin, >= 0 (length unit of the coordinates)
 * @param r_max upper edge of the last bin, > r_min
 * @param n_bins number of bins, 1 .. 2^24
 * @param opt options (qmmm_rdf_options_default), or NULL for the defaults
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG h is NULL
 * @retval QMMM_ERR_NONFINITE r_min or r_max is NaN or Inf
 * @retval QMMM_ERR_INVALID_ARG r_min, r_max or n_bins out of range, an option out of range (backend, method,
 *         kernel, n_threads, devices)
 * @retval QMMM_ERR_NO_CUDA backend CUDA in a build without CUDA
 * @retval QMMM_ERR_NO_DEVICE backend CUDA and no usable GPU
 * @threading Safe from any thread; the new handle belongs to the caller (one thread at a time).
 */
QMMM_API int qmmm_rdf_create(qmmm_rdf *h, double r_min, double r_max, int32_t n_bins, const qmmm_rdf_options *opt);

/**
 * @brief The two selections, fixed for the handle (clears accumulated frames).
 *
 * If id1 and id2 are equal element by element, the selections are identical (unordered pairs, each counted
 * once). An atom present in both selections is never paired with itself.
 * @param h the RDF
 * @param n1 atoms in selection 1, >= 1 (at most 2^31 - 1)
 * @param id1 atom identities of selection 1 (e.g. indices in the whole system), n1 values; or NULL (with id2)
 *        for disjoint selections
 * @param mol1 molecule ids of selection 1, n1 values, or NULL (with mol2); when given, pairs in the same
 *        molecule are excluded
 * @param n2 atoms in selection 2, >= 1 (at most 2^31 - 1)
 * @param id2 atom identities of selection 2, n2 values, or NULL
 * @param mol2 molecule ids of selection 2, n2 values, or NULL
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @retval QMMM_ERR_NULL_ARG only one of id1, id2 (or of mol1, mol2) is given
 * @retval QMMM_ERR_INVALID_ARG an empty or too large selection, or no pair left to count
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_rdf_set_selections(qmmm_rdf h, int64_t n1, const int64_t *id1, const int64_t *mol1,
                                     int64_t n2, const int64_t *id2, const int64_t *mol2);
/**
 * @brief One selection paired with itself (identical selections; clears accumulated frames).
 * @param h the RDF
 * @param n atoms, >= 1 (at most 2^31 - 1)
 * @param mol molecule ids, n values, or NULL; when given, pairs in the same molecule are excluded
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @retval QMMM_ERR_INVALID_ARG an empty or too large selection, or no pair left to count
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_rdf_set_selection_self(qmmm_rdf h, int64_t n, const int64_t *mol);

/**
 * @brief Leaves out pairs closer than r_cut, like gmx rdf -cut.
 *
 * The bins below r_cut stay empty (or partly filled where r_cut is inside a bin) and N_pairs, g's normalisation,
 * is unchanged. Set before the first frame (or after qmmm_rdf_reset).
 * @param h the RDF
 * @param r_cut 0 <= r_cut < r_max (length unit of the coordinates); 0, the default, leaves out none
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @retval QMMM_ERR_NONFINITE r_cut is NaN or Inf
 * @retval QMMM_ERR_INVALID_ARG r_cut out of range, or frames were already added
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_rdf_set_cut(qmmm_rdf h, double r_cut);

/**
 * @brief Counts one frame. Coordinates may lie outside the cell (they are wrapped).
 * @param h the RDF
 * @param xyz1 selection 1, 3*n1 doubles, x y z interleaved (length unit of the caller)
 * @param xyz2 selection 2, 3*n2 doubles; NULL for identical selections
 * @param box the cell vectors a, b, c, 9 doubles (see above)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @retval QMMM_ERR_NULL_ARG xyz1, box, or xyz2 of disjoint selections is NULL
 * @retval QMMM_ERR_INVALID_ARG no selections yet; a box with no volume; r_max beyond qmmm_rdf_box_limit;
 *         method CELLS in a box narrower than 2.5 r_max
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a coordinate or the box
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle (the library's own threads count the frame).
 */
QMMM_API int qmmm_rdf_add_frame(qmmm_rdf h, const double *xyz1, const double *xyz2, const double *box);

/**
 * @brief Counts n_frames frames at once.
 *
 * The same results, to the bit, as n_frames calls of qmmm_rdf_add_frame, but several GPUs count whole frames in
 * parallel and the preparation of a frame overlaps the counting of the previous one. On error nothing is added;
 * the message names the lowest failing frame. qmmm_rdf_stats_last then describes the batch (pairs_visited
 * summed, seconds = wall time of the call, prep_seconds = preparation summed over the host threads, n_units =
 * whole frames handed out plus the units of split frames, units_per_worker = both per device listing).
 * @param h the RDF
 * @param n_frames number of frames, >= 0
 * @param xyz1 n_frames blocks of 3*n1 doubles
 * @param xyz2 n_frames blocks of 3*n2 doubles; NULL for identical selections
 * @param box n_frames blocks of 9 doubles
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @retval QMMM_ERR_NULL_ARG xyz1, box, or xyz2 of disjoint selections is NULL
 * @retval QMMM_ERR_INVALID_ARG n_frames < 0, or as qmmm_rdf_add_frame for a frame
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a coordinate or a box
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading One thread at a time per handle (the library's own threads count the frames).
 */
QMMM_API int qmmm_rdf_add_frames(qmmm_rdf h, int64_t n_frames, const double *xyz1, const double *xyz2,
                                 const double *box);

/**
 * @brief Half the smallest perpendicular width of box: the largest r_max it allows.
 * @param box the cell vectors a, b, c, 9 doubles
 * @param[out] r_limit the limit (length unit of box)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG box or r_limit is NULL
 * @retval QMMM_ERR_NONFINITE NaN or Inf in box
 * @retval QMMM_ERR_INVALID_ARG a box with no volume
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_rdf_box_limit(const double *box, double *r_limit);

/**
 * @brief Results over the frames so far; each output may be NULL. g and n_cum are 0 while no frame was added.
 * @param h the RDF
 * @param[out] r_mid bin centres, n_bins doubles
 * @param[out] g g(r), n_bins doubles
 * @param[out] n_cum cumulative coordination number at the upper edge of each bin, n_bins doubles
 * @param[out] hist pair counts H_k, n_bins int64
 * @param[out] n_frames frames added
 * @param[out] avg_volume the average box volume \<V\> (length unit cubed)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_rdf_results(qmmm_rdf h, double *r_mid, double *g, double *n_cum, int64_t *hist,
                              int64_t *n_frames, double *avg_volume);
/**
 * @brief What the last qmmm_rdf_add_frame or qmmm_rdf_add_frames did.
 * @param h the RDF
 * @param[out] stats the statistics
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @retval QMMM_ERR_NULL_ARG stats is NULL
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_rdf_stats_last(qmmm_rdf h, qmmm_rdf_stats *stats);
/**
 * @brief Forgets the frames, keeps the selections.
 * @param h the RDF
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is not a live RDF
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_rdf_reset(qmmm_rdf h);
/**
 * @brief Destroys an RDF.
 * @param h the RDF
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE h is NULL or already destroyed
 * @threading One thread at a time per handle; not while another thread uses h.
 */
QMMM_API int qmmm_rdf_destroy(qmmm_rdf h);
/**
 * @brief Ends the persistent per-GPU host threads (they start with the first GPU frame and are shared).
 * @retval QMMM_SUCCESS
 * @threading Safe from any thread; waits for frames being counted on a GPU.
 */
QMMM_API int qmmm_rdf_release(void);

#ifdef __cplusplus
}
#endif
#endif
