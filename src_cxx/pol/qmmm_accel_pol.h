/**
 * @file qmmm_accel_pol.h
 * @brief The pol family of the qmmm-accel C API (included by qmmm_accel.h): polarizable MM sites and their
 * induced dipoles, the polarizable-embedding model of CPPE and PElib (docs/user-guide/polarizable.md).
 *
 * A qmmm_pol holds N sites: positions r_i (bohr), permanent charges q_i (e, physical sign: an oxygen of water
 * is negative), optional permanent dipoles p_i (e bohr) and polarizabilities alpha_i (bohr^3; isotropic, or
 * the symmetric 3x3 tensor, components xx xy xz yy yz zz), with exclusion lists. A site whose polarizability
 * is zero is not polarizable (its induced dipole is 0); any other must be positive definite.
 *
 * Exclusions: sites i and j do not interact (no permanent field of one at the other, no dipole coupling) when
 * either lists the other; a site never interacts with itself. Typically a site excludes its own molecule.
 *
 * qmmm_pol_solve finds the induced dipoles mu_i of the polarizable sites from
 *
 *     mu_i = alpha_i ( E_ext,i + E_mm,i + sum_{j not excluded} T_ij mu_j )
 *
 * E_ext,i: the field at site i from the QM side (electrons and nuclei), given by the caller. E_mm,i: the
 * field of the permanent charges and dipoles of the sites i does not exclude (qmmm_pol_static_field).
 * T_ij = (3 r r^T - r^2 I) / r^5, r = r_i - r_j: the field at i of a unit dipole at j. Fields are physical
 * (E = -grad phi, hartree / (e bohr)).
 *
 * Thole damping (off by default, as in CPPE and PElib; docs/user-guide/polarizable.md): the exponential
 * model of CPPE and PElib with v = a r / (abar_i abar_j)^(1/6) (abar: the isotropic polarizability, a third of
 * the trace); a field term of rank 1 is scaled by f_E = 1 - (1 + v + v^2/2) exp(-v), the rank-2 part r r^T/r^5
 * of T by f_T = f_E - (v^3/6) exp(-v). damp_induced damps T; damp_multipole damps the permanent field between
 * two polarizable sites.
 *
 * The solver: preconditioned conjugate gradients on (alpha^-1 - T) mu = E_ext + E_mm with the Jacobi
 * preconditioner alpha_i, starting from mu = alpha (E_ext + E_mm) or the caller's dipoles, stopped when the
 * residual's 2-norm is at most tolerance times the right-hand side's. Matrix-free O(N^2) products on the CPU;
 * the sums have a fixed order, so the dipoles are the same bits for any thread count.
 *
 * Energies (the polarization energy of CPPE and PElib): E_pol = -1/2 sum_i mu_i . (E_ext,i + E_mm,i), and its
 * parts -1/2 mu . E_ext and -1/2 mu . E_mm (qmmm_pol_stats).
 */
#ifndef QMMM_ACCEL_POL_H
#define QMMM_ACCEL_POL_H
#include "qmmm_accel_core.h"
#ifdef __cplusplus
extern "C" {
#endif

/** Settings of a qmmm_pol (qmmm_pol_options_default fills the defaults). */
typedef struct qmmm_pol_options {
    int32_t n_threads;        /**< CPU threads for the solve, 0 = the library's default (qmmm_default_threads) */
    int32_t max_iter;         /**< conjugate-gradient iterations at most, 1 .. 100000 (default 200) */
    int32_t damp_induced;     /**< 1: Thole-damp the dipole-dipole tensor T (default 0, as CPPE and PElib) */
    int32_t damp_multipole;   /**< 1: Thole-damp the permanent field between polarizable sites (default 0) */
    double tolerance;         /**< relative residual norm to reach, 1e-15 .. 1e-1 (default 1e-8) */
    double damping_induced;   /**< Thole parameter a of damp_induced, > 0 (default 2.1304) */
    double damping_multipole; /**< Thole parameter a of damp_multipole, > 0 (default 2.1304) */
    int32_t start_from_mu;    /**< 1: qmmm_pol_solve starts from the dipoles passed in mu (e.g. the last solve's, in a
                                   self-consistent loop); 0 (default): from alpha (E_ext + E_mm) */
    int32_t backend;          /**< where the solver's products run: QMMM_BACKEND_AUTO (default: the GPU when there is
                                   one and more than 1,024 polarizable sites; env QMMM_BACKEND), _CPU or _CUDA */
    int32_t device;           /**< the GPU of backend CUDA: -1 (default) the current one, else its index */
    int32_t reserved[5];      /**< zero; room for later options */
} qmmm_pol_options;

/** What the last qmmm_pol_solve did. */
typedef struct qmmm_pol_stats {
    int32_t iterations;  /**< conjugate-gradient iterations (0: the start was converged, e.g. no field) */
    int32_t n_threads;   /**< CPU threads used */
    double residual;     /**< final |r| / |E_ext + E_mm| (2-norms over the polarizable sites; 0 when E is 0) */
    double e_pol;        /**< -1/2 sum mu . (E_ext + E_mm) (hartree) */
    double e_pol_ext;    /**< -1/2 sum mu . E_ext (hartree) */
    double e_pol_mm;     /**< -1/2 sum mu . E_mm (hartree) */
    double seconds;      /**< wall time of the solve */
} qmmm_pol_stats;

/** Polarizable sites with their permanent field (opaque handle). */
typedef struct qmmm_pol_s *qmmm_pol;

/**
 * @brief Fills opt with the defaults: max_iter 200, tolerance 1e-8, no damping, damping parameters 2.1304,
 * everything else 0.
 * @param[out] opt the options to fill
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG opt is NULL
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_pol_options_default(qmmm_pol_options *opt);

/**
 * @brief Creates polarizable sites from arrays (copied) and computes their permanent field E_mm.
 * @param[out] p the new sites
 * @param n_sites number of sites, 1 .. 2^31 - 1
 * @param xyz positions, 3*n_sites doubles (bohr)
 * @param charge permanent charges, n_sites doubles (e), or NULL for none
 * @param dipole permanent dipoles, 3*n_sites doubles (e bohr), or NULL for none
 * @param alpha_components 1 (isotropic: one value per site) or 6 (xx xy xz yy yz zz per site)
 * @param alpha polarizabilities, alpha_components*n_sites doubles (bohr^3), or NULL for none; a site's zero
 *        polarizability makes it non-polarizable
 * @param excl_width exclusions per site, >= 0
 * @param excl n_sites rows of excl_width site indices counted from 0 (row i: the sites i excludes), -1 pads a
 *        row; may be NULL when excl_width is 0
 * @param opt options (qmmm_pol_options_default), or NULL for the defaults
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG p or xyz is NULL, or excl is NULL with excl_width > 0
 * @retval QMMM_ERR_INVALID_ARG n_sites, alpha_components, excl_width or an option out of range; an exclusion
 *         index out of range; a polarizability that is neither zero nor positive definite; two sites at the
 *         same position that do not exclude each other
 * @retval QMMM_ERR_NONFINITE NaN or Inf in a position, charge, dipole, polarizability or option
 * @threading Safe from any thread; the new handle belongs to the caller (one thread at a time).
 */
QMMM_API int qmmm_pol_create(qmmm_pol *p, int64_t n_sites, const double *xyz, const double *charge,
                             const double *dipole, int32_t alpha_components, const double *alpha, int32_t excl_width,
                             const int64_t *excl, const qmmm_pol_options *opt);

/**
 * @brief Creates polarizable sites from a potential file (.pot of PElib, CPPE and PyFraME;
 * docs/user-guide/pot-format.md):
 * \@COORDINATES (AA or AU), \@MULTIPOLES ORDER 0 and ORDER 1, \@POLARIZABILITIES ORDER 1 1 and EXCLISTS. Higher
 * multipole orders are refused (QMMM_ERR_UNSUPPORTED), not dropped.
 * @param[out] p the new sites (NULL on error)
 * @param path the file
 * @param opt options (qmmm_pol_options_default), or NULL for the defaults
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG p or path is NULL
 * @retval QMMM_ERR_FILE_OPEN the file is missing or unreadable
 * @retval QMMM_ERR_FILE_FORMAT a malformed file (the message says "file:line: what")
 * @retval QMMM_ERR_UNSUPPORTED multipoles of order 2 or more, polarizabilities other than ORDER 1 1
 * @retval QMMM_ERR_INVALID_ARG an option out of range, or as qmmm_pol_create for the sites read
 * @retval QMMM_ERR_NONFINITE NaN or Inf in an option
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_pol_create_from_pot(qmmm_pol *p, const char *path, const qmmm_pol_options *opt);

/**
 * @brief Counts. Any output may be NULL.
 * @param p the sites
 * @param[out] n_sites sites
 * @param[out] n_polarizable sites with a non-zero polarizability
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE p is NULL or not a live qmmm_pol
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_pol_sizes(qmmm_pol p, int64_t *n_sites, int64_t *n_polarizable);

/**
 * @brief Copies the sites into caller arrays (n_sites from qmmm_pol_sizes). Any array may be NULL to skip it.
 * @param p the sites
 * @param[out] xyz positions, 3*n_sites doubles (bohr)
 * @param[out] charge charges, n_sites doubles (e)
 * @param[out] dipole permanent dipoles, 3*n_sites doubles (e bohr)
 * @param[out] alpha polarizability tensors, 6*n_sites doubles (xx xy xz yy yz zz, bohr^3)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE p is NULL or not a live qmmm_pol
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_pol_sites(qmmm_pol p, double *xyz, double *charge, double *dipole, double *alpha);

/**
 * @brief The permanent field E_mm at every site (the charges and permanent dipoles of the sites it does not
 * exclude; damped as damp_multipole says).
 * @param p the sites
 * @param[out] field 3*n_sites doubles (hartree / (e bohr))
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE p is NULL or not a live qmmm_pol
 * @retval QMMM_ERR_NULL_ARG field is NULL
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_pol_static_field(qmmm_pol p, double *field);

/**
 * @brief Solves for the induced dipoles in the external field e_ext (see the file's description).
 * @param p the sites
 * @param e_ext the field at every site from the QM side, 3*n_sites doubles (hartree / (e bohr)), or NULL for
 *        none; the values at non-polarizable sites are not used
 * @param[in,out] mu induced dipoles, 3*n_sites doubles (e bohr); 0 at non-polarizable sites. With
 *        opt->start_from_mu, its values at the polarizable sites are the starting point (finite)
 * @param[out] stats iterations, residual and energies, or NULL
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE p is NULL or not a live qmmm_pol
 * @retval QMMM_ERR_NULL_ARG mu is NULL
 * @retval QMMM_ERR_NONFINITE NaN or Inf in e_ext, or in the starting dipoles of start_from_mu
 * @retval QMMM_ERR_NOT_CONVERGED max_iter iterations did not reach the tolerance, or the system is not positive
 *         definite (a polarization catastrophe: sites too close for their polarizabilities without damping);
 *         mu and stats hold the last iterate, the message the residual reached
 * @threading One thread at a time per handle (the library's own threads share the products).
 */
QMMM_API int qmmm_pol_solve(qmmm_pol p, const double *e_ext, double *mu, qmmm_pol_stats *stats);

/**
 * @brief Changes the tolerance of the next solves (opt->tolerance at create): a self-consistent loop can solve
 * loosely where a looser answer is enough, e.g. each sampling block's field for the dipoles' error bars, and
 * tightly for the dipoles it keeps.
 * @param p the sites
 * @param tolerance relative residual norm to reach, 1e-15 .. 1e-1
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE p is NULL or not a live qmmm_pol
 * @retval QMMM_ERR_NONFINITE tolerance is NaN or Inf
 * @retval QMMM_ERR_INVALID_ARG tolerance is outside 1e-15 .. 1e-1
 * @threading One thread at a time per handle.
 */
QMMM_API int qmmm_pol_set_tolerance(qmmm_pol p, double tolerance);

/**
 * @brief Destroys the sites.
 * @param p the sites
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_BAD_HANDLE p is NULL or already destroyed
 * @threading One thread at a time per handle; not while another thread uses p.
 */
QMMM_API int qmmm_pol_destroy(qmmm_pol p);

#ifdef __cplusplus
}
#endif
#endif
