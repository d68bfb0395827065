/*
 * qmmm_accel.h -- C API of qmmm-accel.
 *
 * Electrostatics for QM/MM quantum Monte Carlo: the FMO embedding field
 *
 *     U_ES(r) = sum_m q_m / |r - r_m|  -  sum_b Z_b / |r - R_b|      (hartree)
 *
 * felt by one electron at r, from M density cells (centre r_m, electron population q_m = rho(r_m) dV)
 * and K environment nuclei (position R_b, charge Z_b).
 *
 * Units: atomic units throughout (positions in bohr, charges in e, energies in hartree).
 * Coordinates are passed as 3*n doubles, x y z interleaved, so a Fortran real(8) :: xyz(3,n) passes as is.
 *
 * Error model: every call returns an int status, QMMM_SUCCESS (0) on success. On failure
 * qmmm_error_message() returns what was wrong and with which argument (per thread, until the next
 * failing call on that thread). The library never prints to stdout, never calls exit or abort.
 *
 * Thread safety: different handles may be used from different threads at once. One handle must not be
 * used from two threads at the same time (calls on one handle are not serialised by the library).
 */
#ifndef QMMM_ACCEL_H
#define QMMM_ACCEL_H

#include <stdint.h>

#if defined(_WIN32)
#define QMMM_API __declspec(dllexport)
#else
#define QMMM_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes (stable values: Fortran has the same named constants) ---- */
enum {
    QMMM_SUCCESS = 0,
    QMMM_ERR_NULL_ARG = 1,       /* a required pointer argument is NULL */
    QMMM_ERR_INVALID_ARG = 2,    /* a count is negative, a size or option is out of range */
    QMMM_ERR_NONFINITE = 3,      /* NaN or Inf in coordinates, charges or parameters */
    QMMM_ERR_BAD_HANDLE = 4,     /* handle is NULL, destroyed, or not of this kind */
    QMMM_ERR_NO_CUDA = 5,        /* CUDA asked for, but the library was built without CUDA */
    QMMM_ERR_NO_DEVICE = 6,      /* CUDA asked for, but no usable GPU (or no such device index) */
    QMMM_ERR_CUDA = 7,           /* a CUDA runtime or kernel failure */
    QMMM_ERR_OUT_OF_MEMORY = 8,  /* host or device allocation failed */
    QMMM_ERR_FILE_OPEN = 9,      /* a file could not be opened */
    QMMM_ERR_FILE_FORMAT = 10,   /* a file is malformed (the message names file and line) */
    QMMM_ERR_SINGULAR = 11,      /* a point lies on a point charge (see qmmm_field_eval) */
    QMMM_ERR_UNSUPPORTED = 12,   /* valid request that this build or backend cannot do */
    QMMM_ERR_MPI = 13,           /* an MPI call failed */
    QMMM_ERR_BUSY = 14,          /* an asynchronous evaluation is pending on this handle */
    QMMM_ERR_INTERNAL = 99       /* a bug: please report it with the message */
};

/* ---- options ---- */
enum { QMMM_BACKEND_AUTO = 0, QMMM_BACKEND_CPU = 1, QMMM_BACKEND_CUDA = 2 };
enum { QMMM_PRECISION_DOUBLE = 0, QMMM_PRECISION_SINGLE = 1, QMMM_PRECISION_MIXED = 2 };

/* Interoperable with Fortran's type(qmmm_options), bind(c). Fill with qmmm_options_default first. */
typedef struct qmmm_options {
    int32_t backend;    /* QMMM_BACKEND_*; AUTO = CUDA when built with it and a GPU is present, else CPU.
                           The environment variable QMMM_BACKEND=cpu|cuda overrides AUTO (only AUTO). */
    int32_t precision;  /* QMMM_PRECISION_*: DOUBLE; SINGLE (float pair terms and sums); MIXED (float pair
                           terms from coordinates relative to a nearby double origin, double sums) */
    int32_t device;     /* CUDA device index; -1 = the current device of the calling thread (default) */
    int32_t n_threads;  /* CPU threads; 0 = OpenMP's default (OMP_NUM_THREADS) */
    double cell_volume; /* dV of one density cell in bohr^3; > 0 enables the self-potential of a point on a
                           cell centre (see qmmm_field_eval); 0 = unknown (default) */
    int32_t reserved[8];/* zero; room for later options without breaking the ABI */
} qmmm_options;

typedef struct qmmm_field_s *qmmm_field;

/* ---- library ---- */
QMMM_API int qmmm_options_default(qmmm_options *opt);
QMMM_API const char *qmmm_error_message(void);       /* last error of the calling thread; "" if none */
QMMM_API const char *qmmm_status_string(int status); /* short name of a status, e.g. "QMMM_ERR_NULL_ARG" */
QMMM_API int qmmm_version(int *major, int *minor, int *patch);
QMMM_API const char *qmmm_version_string(void);
/* Whether this build has CUDA and how many devices it sees (0 where none, never an error for that). */
QMMM_API int qmmm_cuda_device_count(int *count);

/* ---- the embedding field ---- */
/* Copies the cells and nuclei (the caller may free its arrays afterwards). n_cells or n_nuclei may be 0
 * (then the other term alone; the arrays of an empty term may be NULL). opt may be NULL for the defaults. */
QMMM_API int qmmm_field_create(qmmm_field *f, int64_t n_cells, const double *cell_xyz, const double *cell_q,
                               int64_t n_nuclei, const double *nuc_xyz, const double *nuc_z,
                               const qmmm_options *opt);

/* u[i] = U_ES(xyz[3i..3i+2]) in hartree. A point's value depends only on the point, the field, the
 * precision and backend, and n_points (the path taken) -- not on the other points, nor on thread counts;
 * repeated calls give bitwise identical values.
 * Singular points: a point within 1e-10 bohr of a cell centre takes, for that cell, the exact potential at
 * the centre of a uniformly charged cube of volume cell_volume, q * C / h with h = cell_volume^(1/3) and
 * C = 6 ln((1 + sqrt 3) / sqrt 2) - pi / 2 = 2.3800773640; if cell_volume is 0 this is QMMM_ERR_SINGULAR.
 * A point within 1e-10 bohr of a nucleus is QMMM_ERR_SINGULAR (a point charge has no finite potential there).
 * On any error u is left unspecified. */
QMMM_API int qmmm_field_eval(qmmm_field f, int64_t n_points, const double *xyz, double *u);

/* Asynchronous form: starts the evaluation and returns; xyz is copied before the return, u is written
 * by the time qmmm_field_wait(f) returns success. On the CPU backend the work is done inside this call.
 * At most one evaluation may be pending per handle (QMMM_ERR_BUSY otherwise). */
QMMM_API int qmmm_field_eval_async(qmmm_field f, int64_t n_points, const double *xyz, double *u);
QMMM_API int qmmm_field_wait(qmmm_field f);

/* Backend (QMMM_BACKEND_CPU or _CUDA) and precision actually in use; device is -1 on the CPU. */
QMMM_API int qmmm_field_backend(qmmm_field f, int *backend, int *precision, int *device);
QMMM_API int qmmm_field_sizes(qmmm_field f, int64_t *n_cells, int64_t *n_nuclei);
/* Destroying NULL is QMMM_ERR_BAD_HANDLE; destroying twice is detected (QMMM_ERR_BAD_HANDLE). */
QMMM_API int qmmm_field_destroy(qmmm_field f);

#ifdef __cplusplus
}
#endif

/* Families of the library, each in its own header. */
#include "qmmm_accel_cube.h"
#include "qmmm_accel_dcs.h"
#include "qmmm_accel_rdf.h"
#include "qmmm_accel_mpi.h"

#endif /* QMMM_ACCEL_H */
