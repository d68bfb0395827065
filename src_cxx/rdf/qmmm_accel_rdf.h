/* qmmm_accel_rdf.h -- the rdf family of the qmmm-accel C API (included by qmmm_accel.h).
 *
 * Radial distribution functions between two selections over any number of frames:
 *
 *     g(r_k) = H_k / ( F * N_pairs * (4 pi / 3) (r_{k+1}^3 - r_k^3) / <V> )
 *
 * H_k: pairs counted in bin k over all F frames (64-bit integers), <V>: the average box volume,
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
#include "qmmm_accel.h"
#ifdef __cplusplus
extern "C" {
#endif

#define QMMM_RDF_MAX_DEVICES 16

/* Pair search: AUTO = a cell list when every perpendicular width of the box is at least 2.5 r_max (each cell
 * at least r_max / 2 wide), brute force over all pairs otherwise. */
enum { QMMM_RDF_METHOD_AUTO = 0, QMMM_RDF_METHOD_BRUTE = 1, QMMM_RDF_METHOD_CELLS = 2 };
/* GPU kernels: FAST, the only one (the field keeps its place for other kernels; other values are refused). */
enum { QMMM_RDF_KERNEL_FAST = 0 };

typedef struct qmmm_rdf_options {
    int32_t backend;   /* QMMM_BACKEND_*; AUTO = CUDA when built with it and a GPU is present (env QMMM_BACKEND) */
    int32_t n_threads; /* CPU threads (counting on the CPU; with a GPU, preparing frames), 0 = OpenMP default */
    int32_t method;    /* QMMM_RDF_METHOD_* */
    int32_t kernel;    /* QMMM_RDF_KERNEL_FAST (default and only value) */
    int32_t n_devices; /* entries in devices; 0 = device 0 only. A device may be listed twice. */
    int32_t devices[QMMM_RDF_MAX_DEVICES];
    int32_t reserved[8];
} qmmm_rdf_options;

/* What the last qmmm_rdf_add_frame did. */
typedef struct qmmm_rdf_stats {
    int32_t backend;     /* QMMM_BACKEND_CPU or _CUDA */
    int32_t method;      /* QMMM_RDF_METHOD_BRUTE or _CELLS */
    int32_t n_workers;   /* CPU threads or host threads (one per listed device) */
    int32_t identical;   /* 1 if sel2 is sel1 */
    int64_t n_units;     /* work units handed out (GPU) */
    int64_t units_per_worker[QMMM_RDF_MAX_DEVICES]; /* how many units each device listing took (GPU) */
    double pairs_visited;/* distances computed in the frame */
    double n_pairs;      /* N_pairs of the normalisation */
    double seconds;      /* wall time of the frame's pair counting (excluding the preparation) */
    double prep_seconds; /* wall time of the preparation (fractional coordinates, cell sort) */
} qmmm_rdf_stats;

typedef struct qmmm_rdf_s *qmmm_rdf;

QMMM_API int qmmm_rdf_options_default(qmmm_rdf_options *opt);

/* r_min >= 0, r_max > r_min, n_bins >= 1 (at most 2^24). opt may be NULL (defaults). */
QMMM_API int qmmm_rdf_create(qmmm_rdf *h, double r_min, double r_max, int32_t n_bins, const qmmm_rdf_options *opt);

/* The two selections, fixed for the handle (clears accumulated frames). n1, n2 >= 1.
 * id1, id2: atom identities (e.g. indices in the whole system), or both NULL for disjoint selections; an atom
 * present in both is never paired with itself. If id1 and id2 are equal element by element, the selections
 * are identical (unordered pairs, each counted once).
 * mol1, mol2: molecule ids, or both NULL; when given, pairs in the same molecule are excluded. */
QMMM_API int qmmm_rdf_set_selections(qmmm_rdf h, int64_t n1, const int64_t *id1, const int64_t *mol1,
                                     int64_t n2, const int64_t *id2, const int64_t *mol2);
/* One selection paired with itself (identical selections); mol may be NULL. */
QMMM_API int qmmm_rdf_set_selection_self(qmmm_rdf h, int64_t n, const int64_t *mol);

/* Leaves out pairs closer than r_cut (0 <= r_cut < r_max; 0, the default, leaves out none), like gmx rdf -cut:
 * the bins below r_cut stay empty (or partly filled where r_cut is inside a bin) and N_pairs, g's
 * normalisation, is unchanged. Set before the first frame (or after qmmm_rdf_reset). */
QMMM_API int qmmm_rdf_set_cut(qmmm_rdf h, double r_cut);

/* Counts one frame. xyz1: 3*n1, xyz2: 3*n2 (x y z interleaved; NULL for identical selections), box: 9.
 * Coordinates may lie outside the cell (they are wrapped). */
QMMM_API int qmmm_rdf_add_frame(qmmm_rdf h, const double *xyz1, const double *xyz2, const double *box);

/* Counts n_frames frames at once (n_frames >= 0): xyz1 holds n_frames blocks of 3*n1 doubles, xyz2 n_frames
 * blocks of 3*n2 (NULL for identical selections), box n_frames blocks of 9. The same results, to the bit, as
 * n_frames calls of qmmm_rdf_add_frame, but several GPUs count whole frames in parallel and the preparation
 * of a frame overlaps the counting of the previous one. On error nothing is added; the message names the
 * lowest failing frame. qmmm_rdf_stats_last then describes the batch (pairs_visited summed, seconds = wall
 * time of the call, prep_seconds = preparation summed over the host threads, n_units = whole frames handed
 * out plus the units of split frames, units_per_worker = both per device listing). */
QMMM_API int qmmm_rdf_add_frames(qmmm_rdf h, int64_t n_frames, const double *xyz1, const double *xyz2,
                                 const double *box);

/* Half the smallest perpendicular width of box: the largest r_max it allows. */
QMMM_API int qmmm_rdf_box_limit(const double *box, double *r_limit);

/* Results over the frames so far; each output may be NULL. r_mid, g, n_cum: n_bins doubles (n_cum at the
 * upper edge of each bin); hist: n_bins int64. g and n_cum are 0 while no frame was added. */
QMMM_API int qmmm_rdf_results(qmmm_rdf h, double *r_mid, double *g, double *n_cum, int64_t *hist,
                              int64_t *n_frames, double *avg_volume);
QMMM_API int qmmm_rdf_stats_last(qmmm_rdf h, qmmm_rdf_stats *stats);
QMMM_API int qmmm_rdf_reset(qmmm_rdf h); /* forget the frames, keep the selections */
QMMM_API int qmmm_rdf_destroy(qmmm_rdf h);
/* Ends the persistent per-GPU host threads (they start with the first GPU frame and are shared). */
QMMM_API int qmmm_rdf_release(void);

#ifdef __cplusplus
}
#endif
#endif
