/**
 * @file qmmm_accel_cube.h
 * @brief The cube family of the qmmm-accel C API (included by qmmm_accel.h).
 *
 * Builds the embedding environment from Gaussian cube files (electron densities, e.g. psi4's Dt.cube).
 *
 * What is read from one cube file:
 *   - grid point p = origin + i*a1 + j*a2 + k*a3 (i slowest, k fastest, as the format stores them); the
 *     voxel axes a1, a2, a3 need not be orthogonal. Each grid point is the centre of one cell of volume
 *     dV = |det(a1, a2, a3)| (bohr^3).
 *   - a cell is kept when its density rho >= threshold (e/bohr^3), and every cell when threshold <= 0
 *     (negative densities too); its population q = rho * dV (electrons, positive for a density). Density values are taken as e/bohr^3 whatever the length unit.
 *   - every atom line gives a nucleus: charge = the atom line's second column (the nuclear charge the
 *     format allows for, e.g. a valence charge with pseudopotentials) when it is non-zero, else the atomic
 *     number; position as given.
 *   - lengths are bohr when the first voxel count is positive and Angstrom when it is negative (the
 *     format's flag; 1 A = 1/QMMM_BOHR_ANGSTROM bohr, CODATA 2018); the sign applies to the
 *     origin, axes and atoms; mixed signs are a format error.
 *   - a negative atom count means a DSET_IDS line follows the atoms (MO cubes); only one value per point
 *     is supported (QMMM_ERR_UNSUPPORTED otherwise). Files ending in .gz (or any gzip stream) are read
 *     through zlib.
 *   Errors: missing or unreadable file -> QMMM_ERR_FILE_OPEN; truncated data, wrong counts, non-numeric
 *   or non-finite fields, an empty grid -> QMMM_ERR_FILE_FORMAT with "file:line: what" in the message.
 *
 * Sign convention, the same as qmmm_field_create: cell_q is the electron population (positive), nuclei
 * carry +Z, and U_ES(r) = sum q/|r - r_m| - sum Z/|r - R_b| is the energy of one electron (hartree),
 * i.e. minus the electrostatic potential of the environment.
 *
 * An environment (qmmm_env) collects the cells and nuclei of one or more cubes (e.g. fragments 2 and 3),
 * in the order they were added; it can be copied into caller arrays or turned into a field.
 */
#ifndef QMMM_ACCEL_CUBE_H
#define QMMM_ACCEL_CUBE_H
#include "qmmm_accel_core.h"
#include "qmmm_accel_field.h"
#ifdef __cplusplus
extern "C" {
#endif

/** An environment: the cells and nuclei of one or more cubes, in the order they were added (opaque handle). */
typedef struct qmmm_env_s *qmmm_env;

/**
 * @brief Creates an empty environment.
 * @param[out] env the new environment
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG env is NULL
 * @threading Safe from any thread; the new handle belongs to the caller (one thread at a time).
 */
QMMM_API int qmmm_env_create(qmmm_env *env);
/**
 * @brief Appends the cells (rho >= threshold) and the nuclei of one cube file. On error env is left as it was.
 * @param env the environment
 * @param path the cube file (.cube, or gzip-compressed)
 * @param threshold the density a cell must reach to be kept (e/bohr^3), finite; <= 0 keeps every grid point
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE env is NULL or not a live environment
 * @retval QMMM_ERR_NULL_ARG path is NULL
 * @retval QMMM_ERR_NONFINITE threshold is NaN or Inf
 * @retval QMMM_ERR_FILE_OPEN the file is missing or unreadable
 * @retval QMMM_ERR_FILE_FORMAT truncated data, wrong counts, non-numeric or non-finite fields, an empty grid
 *         (the message says "file:line: what")
 * @retval QMMM_ERR_UNSUPPORTED more than one value per point (DSET_IDS)
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_env_add_cube(qmmm_env env, const char *path, double threshold);
/**
 * @brief Counts, and the cell volume dV shared by all cubes added. Any output may be NULL.
 * @param env the environment
 * @param[out] n_cells cells kept
 * @param[out] n_nuclei nuclei
 * @param[out] cell_volume dV (bohr^3); 0 when the cubes have different dV (relative difference above 1e-12)
 *             or when none was added
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE env is NULL or not a live environment
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_env_sizes(qmmm_env env, int64_t *n_cells, int64_t *n_nuclei, double *cell_volume);
/**
 * @brief Copies the environment into caller arrays (sizes from qmmm_env_sizes). Any array may be NULL to skip it.
 * @param env the environment
 * @param[out] cell_xyz cell centres, 3*n_cells doubles (bohr)
 * @param[out] cell_q cell populations, n_cells doubles (electrons, positive)
 * @param[out] nuc_xyz nuclear positions, 3*n_nuclei doubles (bohr)
 * @param[out] nuc_z nuclear charges, n_nuclei doubles (e)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE env is NULL or not a live environment
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_env_copy(qmmm_env env, double *cell_xyz, double *cell_q, double *nuc_xyz, double *nuc_z);
/**
 * @brief Destroys an environment (fields made from it keep their own copy).
 * @param env the environment
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE env is NULL or already destroyed
 * @threading One thread at a time per handle; not while another thread uses env.
 */
QMMM_API int qmmm_env_destroy(qmmm_env env);

/**
 * @brief One file in one call: creates *env and adds the cube (on error *env is NULL).
 * @param[out] env the new environment
 * @param path the cube file (.cube, or gzip-compressed)
 * @param threshold the density a cell must reach to be kept (e/bohr^3), finite; <= 0 keeps every grid point
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG env or path is NULL
 * @retval QMMM_ERR_NONFINITE threshold is NaN or Inf
 * @retval QMMM_ERR_FILE_OPEN the file is missing or unreadable
 * @retval QMMM_ERR_FILE_FORMAT truncated data, wrong counts, non-numeric or non-finite fields, an empty grid
 *         (the message says "file:line: what")
 * @retval QMMM_ERR_UNSUPPORTED more than one value per point (DSET_IDS)
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_cube_read(qmmm_env *env, const char *path, double threshold);

/**
 * @brief The field of an environment (see qmmm_field_create). The environment may be destroyed afterwards.
 *
 * When opt is NULL or opt->cell_volume is 0, the field's cell_volume is the environment's dV, so a point on a
 * cell centre gets the uniform-cube self-potential instead of QMMM_ERR_SINGULAR.
 * @param[out] f the new field
 * @param env the environment
 * @param opt options (qmmm_options_default), or NULL for the defaults
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG f is NULL
 * @retval QMMM_ERR_BAD_HANDLE env is NULL or not a live environment
 * @retval QMMM_ERR_INVALID_ARG an option out of range (as qmmm_field_create)
 * @retval QMMM_ERR_NO_CUDA backend CUDA in a build without CUDA
 * @retval QMMM_ERR_NO_DEVICE backend CUDA and no usable GPU
 * @retval QMMM_ERR_CUDA a CUDA failure while uploading
 * @threading One thread at a time per env handle.
 */
QMMM_API int qmmm_field_create_from_env(qmmm_field *f, qmmm_env env, const qmmm_options *opt);
/**
 * @brief C convenience: the field of n_files cubes read with one threshold (as qmmm_env_add_cube for each,
 * then qmmm_field_create_from_env).
 * @param[out] f the new field
 * @param n_files number of files, >= 1
 * @param paths the n_files cube files
 * @param threshold the density a cell must reach to be kept (e/bohr^3), finite; <= 0 keeps every grid point
 * @param opt options (qmmm_options_default), or NULL for the defaults
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG f, paths or a path is NULL
 * @retval QMMM_ERR_INVALID_ARG n_files < 1, or an option out of range
 * @retval QMMM_ERR_NONFINITE threshold is NaN or Inf
 * @retval QMMM_ERR_FILE_OPEN the file is missing or unreadable
 * @retval QMMM_ERR_FILE_FORMAT truncated data, wrong counts, non-numeric or non-finite fields, an empty grid
 *         (the message says "file:line: what")
 * @retval QMMM_ERR_UNSUPPORTED more than one value per point (DSET_IDS)
 * @retval QMMM_ERR_NO_CUDA backend CUDA in a build without CUDA
 * @retval QMMM_ERR_NO_DEVICE backend CUDA and no usable GPU
 * @retval QMMM_ERR_CUDA a CUDA failure while uploading
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_field_create_from_cubes(qmmm_field *f, int n_files, const char *const *paths, double threshold,
                                          const qmmm_options *opt);

#ifdef __cplusplus
}
#endif
#endif
