/**
 * @file qmmm_accel_dcs.h
 * @brief The dcs family of the qmmm-accel C API (included by qmmm_accel.h).
 *
 * Direct Coulomb summation (DCS) potential maps, as VMD computes them for ion placement:
 *
 *     map[i + nx*(j + ny*k)] = sum_a q_a / |r_ijk - r_a|,   r_ijk = origin + (i*hx, j*hy, k*hz)
 *
 * Units: atomic units. Positions, origin and spacing in bohr, charges in e, the map in hartree/e
 * (1 hartree/e = 27.211386 V). The qmmm-dcs tool reads Angstrom files and converts.
 * Layout: x fastest (Fortran real(8) :: map(nx, ny, nz) passes as is).
 *
 * Precision (qmmm_dcs_options.precision), as error / sum_a |q_a|/r_a at each point; u is the pair terms' unit
 * roundoff (2^-53 DOUBLE, 2^-24 = 6e-8 SINGLE and MIXED); the rounding errors of a sum of n terms add like a
 * random walk, ~u sqrt(n) of the sum of |terms|:
 *   DOUBLE  double pair terms, one double sum over all atoms per point: 2 u sqrt(n_atoms) from the sum
 *           (~1e-15 for a few thousand atoms; 8e-14 measured with 10^6 same-sign charges).
 *   SINGLE  float pair terms (coordinates relative to the lattice origin), one float sum over all atoms per
 *           point: 2 u sqrt(n_atoms) from the sum (1.0e-5 measured with 10^5 same-sign charges).
 *   MIXED   float pair terms, float partial sums over fixed blocks of 256 atoms added in double: 2 u sqrt(256)
 *           = 1.9e-6 from the sum whatever n_atoms (2.6e-8 measured with 10^5 same-sign charges).
 *   All:    plus the pair terms' rounding, u (8 + (2 |p - origin|_1 + |r_a - origin|_1) / r_a) relative per term,
 *           which matters within a fraction of a bohr of an atom (1500 random atoms around a 131x19x9
 *           lattice: SINGLE and MIXED 5.7e-6 on the CPU, 4.4e-6 on the GPU). The tests check this bound at
 *           every point (tests/dcs/dcs_claims.hpp).
 * Points nearer an atom than 100 u |r_a - origin|_1 + 1e-10 bohr (where the terms above lose their digits, and a
 * float distance may round to 0) are recomputed on the host in double after the backend, whatever the backend.
 * A point's value is bitwise reproducible for the same input, precision, backend and device kind,
 * whatever the thread count, device list or piece size.
 *
 * CUDA: the map is cut into slabs of z planes taken dynamically by one persistent host thread per listed
 * device (created at the first CUDA map, bound to its device for good, keeping its stream and buffers
 * until qmmm_dcs_release). Maps larger than GPU memory are computed in pieces (max_device_bytes).
 * Concurrent qmmm_dcs_map calls from several threads are safe; CUDA maps are then done one at a time.
 */
#ifndef QMMM_ACCEL_DCS_H
#define QMMM_ACCEL_DCS_H
#include "qmmm_accel_core.h"
#ifdef __cplusplus
extern "C" {
#endif

#define QMMM_DCS_MAX_DEVICES 16 /**< entries of qmmm_dcs_options.devices */

/** A regular lattice of points: point (i, j, k) at origin + (i spacing[0], j spacing[1], k spacing[2]). */
typedef struct qmmm_dcs_lattice {
    double origin[3];  /**< bohr: position of point (0,0,0) */
    double spacing[3]; /**< bohr, each > 0 */
    int64_t count[3];  /**< points per axis, each >= 1 */
} qmmm_dcs_lattice;

/**
 * Progress callback of qmmm_dcs_map: called on the calling thread about every 0.2 s with planes done and total;
 * return nonzero to cancel (the call then returns QMMM_ERR_INVALID_ARG with the message "cancelled").
 */
typedef int (*qmmm_dcs_progress_fn)(int64_t done, int64_t total, void *user);

/** Kernels (qmmm_dcs_options.kernel). */
enum {
    QMMM_DCS_KERNEL_FAST = 0 /**< the only kernel (the field keeps its place for others; other values are refused) */
};

/** What a lattice point within 1e-10 bohr of an atom gets (qmmm_dcs_options.on_atom). */
enum {
    QMMM_DCS_ON_ATOM_ERROR = 0, /**< refused: QMMM_ERR_SINGULAR naming the atom and the point (default) */
    QMMM_DCS_ON_ATOM_OTHERS = 1 /**< the potential of the other atoms there: the atom's own term, infinite at
                                     r = 0, is left out (as quantum chemistry codes report the potential at a
                                     nucleus); computed in double on the host */
};

/** Options of qmmm_dcs_map. Fill with qmmm_dcs_options_default first. */
typedef struct qmmm_dcs_options {
    int32_t backend;    /**< QMMM_BACKEND_*; AUTO as for the field (QMMM_BACKEND env, else CUDA if a GPU) */
    int32_t precision;  /**< QMMM_PRECISION_* (see above); default SINGLE */
    int32_t n_threads;  /**< CPU threads, 0 = OpenMP default */
    int32_t n_devices;  /**< number of entries in devices; 0 = device 0 only. A device may be listed twice
                             (two host threads share it). */
    int32_t devices[QMMM_DCS_MAX_DEVICES]; /**< CUDA devices to use */
    int32_t kernel;     /**< QMMM_DCS_KERNEL_FAST (default and only value) */
    int32_t on_atom;    /**< QMMM_DCS_ON_ATOM_* for a lattice point on an atom; default ERROR */
    double max_device_bytes; /**< per-device memory budget for map pieces; 0 = 80% of free memory */
    qmmm_dcs_progress_fn progress; /**< may be NULL */
    void *progress_user;           /**< passed to progress as user */
    int32_t reserved[8];           /**< zero; room for later options */
} qmmm_dcs_options;

/** What a qmmm_dcs_map call did (optional output). */
typedef struct qmmm_dcs_stats {
    int32_t backend;   /**< QMMM_BACKEND_CPU or _CUDA */
    int32_t n_workers; /**< host threads (one per listed device) or CPU threads */
    int64_t n_pieces;  /**< slabs of planes handed out */
    double seconds;    /**< wall time of the computation */
    double gevals_per_s; /**< n_atoms * n_points / seconds / 1e9 */
} qmmm_dcs_stats;

/**
 * @brief Fills opt with the defaults: backend AUTO, precision SINGLE, kernel FAST, on_atom ERROR, everything else
 * 0 / NULL.
 * @param[out] opt the options to fill
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG opt is NULL
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_dcs_options_default(qmmm_dcs_options *opt);

/**
 * @brief Fills map with the potential of the atoms on the lattice.
 * @param n_atoms number of atoms, >= 0 (0: a map of zeros)
 * @param xyz atom positions, 3*n_atoms doubles, x y z interleaved (bohr)
 * @param q atom charges, n_atoms doubles (e)
 * @param lat the lattice (bohr)
 * @param[out] map count[0]*count[1]*count[2] doubles, x fastest (hartree/e)
 * @param opt options (qmmm_dcs_options_default), or NULL for the defaults
 * @param[out] stats what the call did, or NULL
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG lat or map is NULL, or xyz or q with n_atoms > 0
 * @retval QMMM_ERR_INVALID_ARG n_atoms < 0, a spacing <= 0 or count < 1, an option out of range (backend,
 *         precision, n_threads, kernel, on_atom, max_device_bytes, devices), the progress callback cancelled, or
 *         a magnitude beyond the precision (the message names the entry and the limit): |q| above 1e30 (SINGLE,
 *         MIXED) or 1e300 (DOUBLE); a spacing, the lattice's extent or an atom's distance from the origin along
 *         an axis above 1e18 or 1e150 bohr; a map that may exceed 1e38 or 1e300 hartree/e (the bound sum_a
 *         |q_a| / distance of a to its nearest lattice point); more than 64 lattice points of one atom within
 *         the distance the precision resolves (a spacing too fine for it)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a position, charge or the origin
 * @retval QMMM_ERR_SINGULAR a lattice point within 1e-10 bohr of an atom, with on_atom ERROR
 * @retval QMMM_ERR_NO_CUDA backend CUDA in a build without CUDA
 * @retval QMMM_ERR_NO_DEVICE backend CUDA and no usable GPU
 * @retval QMMM_ERR_OUT_OF_MEMORY the map or one padded plane does not fit (host, or max_device_bytes), or the
 *         host copies of the atoms exceed this machine's memory (estimated before any atom is read)
 * @retval QMMM_ERR_CUDA a CUDA failure
 * @threading Concurrent calls from several threads are safe; CUDA maps are then done one at a time.
 */
QMMM_API int qmmm_dcs_map(int64_t n_atoms, const double *xyz, const double *q, const qmmm_dcs_lattice *lat,
                          double *map, const qmmm_dcs_options *opt, qmmm_dcs_stats *stats);

/**
 * @brief Ion placement (VMD's method) on a potential map.
 *
 * n_ions times: among lattice points at least min_dist_atoms from every atom and min_dist_ions from every ion
 * placed so far, take the one of lowest ion_charge * map (the minimum potential for a cation, the maximum for an
 * anion; ties go to the lowest index), put an ion of charge ion_charge there and add its potential to map (in
 * double, on the host, so every backend gives the same ions for the same map).
 * @param n_atoms number of atoms, >= 0
 * @param xyz atom positions, 3*n_atoms doubles (bohr)
 * @param q atom charges, n_atoms doubles (e)
 * @param lat the lattice of map (bohr)
 * @param[in,out] map the potential of the atoms on lat (from qmmm_dcs_map; hartree/e); the ions' potential is
 *                added
 * @param n_ions ions to place, >= 0
 * @param ion_charge the charge of each ion (e), finite and nonzero
 * @param min_dist_atoms least distance of an ion from every atom (bohr), >= 0
 * @param min_dist_ions least distance between ions (bohr), >= 0
 * @param[out] ion_xyz the ions' positions, 3*n_ions doubles (bohr)
 * @param[out] ion_energy n_ions doubles (hartree: q * potential before placement), or NULL
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG lat, map or ion_xyz is NULL, or xyz or q with n_atoms > 0
 * @retval QMMM_ERR_INVALID_ARG a count, charge or distance out of range (also where the ions' potential, or
 *         ion_charge times the potential, could exceed 1e300), or no lattice point is left (the message says how
 *         many ions were placed)
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a position or charge
 * @threading Safe from any thread (map must not be used by another thread meanwhile).
 */
QMMM_API int qmmm_dcs_place_ions(int64_t n_atoms, const double *xyz, const double *q,
                                 const qmmm_dcs_lattice *lat, double *map, int64_t n_ions, double ion_charge,
                                 double min_dist_atoms, double min_dist_ions, double *ion_xyz,
                                 double *ion_energy);

/**
 * @brief Ends the persistent per-GPU host threads and frees their device memory (they start again on the next
 * CUDA map). Optional: call before exit for leak checkers.
 * @retval QMMM_SUCCESS
 * @threading Safe from any thread; waits for maps in progress.
 */
QMMM_API int qmmm_dcs_release(void);

#ifdef __cplusplus
}
#endif
#endif
