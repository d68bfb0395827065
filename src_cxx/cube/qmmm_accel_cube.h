/* qmmm_accel_cube.h -- the cube family of the qmmm-accel C API (included by qmmm_accel.h).
 *
 * Builds the embedding environment from Gaussian cube files (electron densities, e.g. psi4's Dt.cube).
 *
 * What is read from one cube file:
 *   - grid point p = origin + i*a1 + j*a2 + k*a3 (i slowest, k fastest, as the format stores them); the
 *     voxel axes a1, a2, a3 need not be orthogonal. Each grid point is the centre of one cell of volume
 *     dV = |det(a1, a2, a3)| (bohr^3).
 *   - a cell is kept when its density rho >= threshold (e/bohr^3); its population q = rho * dV
 *     (electrons, positive). Density values are taken as e/bohr^3 whatever the length unit.
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
#include "qmmm_accel.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct qmmm_env_s *qmmm_env;

/* An empty environment. */
QMMM_API int qmmm_env_create(qmmm_env *env);
/* Appends the cells (rho >= threshold) and the nuclei of one cube file. threshold in e/bohr^3, finite;
 * threshold <= 0 keeps every grid point. On error env is left as it was. */
QMMM_API int qmmm_env_add_cube(qmmm_env env, const char *path, double threshold);
/* Counts, and the cell volume dV (bohr^3) shared by all cubes added; cell_volume is 0 when the cubes
 * have different dV (relative difference above 1e-12) or when none was added. Any output may be NULL. */
QMMM_API int qmmm_env_sizes(qmmm_env env, int64_t *n_cells, int64_t *n_nuclei, double *cell_volume);
/* Copies into caller arrays: cell_xyz[3*n_cells] (bohr), cell_q[n_cells] (electrons), nuc_xyz[3*n_nuclei]
 * (bohr), nuc_z[n_nuclei]. Any array may be NULL to skip it. */
QMMM_API int qmmm_env_copy(qmmm_env env, double *cell_xyz, double *cell_q, double *nuc_xyz, double *nuc_z);
QMMM_API int qmmm_env_destroy(qmmm_env env);

/* One file in one call: creates *env and adds the cube (on error *env is NULL). */
QMMM_API int qmmm_cube_read(qmmm_env *env, const char *path, double threshold);

/* The field of the environment (see qmmm_field_create). When opt is NULL or opt->cell_volume is 0, the
 * field's cell_volume is the environment's dV, so a point on a cell centre gets the uniform-cube
 * self-potential instead of QMMM_ERR_SINGULAR. The environment may be destroyed afterwards. */
QMMM_API int qmmm_field_create_from_env(qmmm_field *f, qmmm_env env, const qmmm_options *opt);
/* C convenience: the field of n_files cubes read with one threshold. */
QMMM_API int qmmm_field_create_from_cubes(qmmm_field *f, int n_files, const char *const *paths, double threshold,
                                          const qmmm_options *opt);

#ifdef __cplusplus
}
#endif
#endif
