/**
 * @file qmmm_accel_core.h
 * @brief C API of qmmm-accel, core: statuses, backends, units and the library calls shared by every family.
 * It includes no other qmmm-accel header; every family header includes it (qmmm_accel.h gathers them all).
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
 * Besides the statuses each call lists, any call may return QMMM_ERR_OUT_OF_MEMORY (an allocation failed)
 * and QMMM_ERR_INTERNAL (a bug).
 *
 * Thread safety: different handles may be used from different threads at once. One handle must not be
 * used from two threads at the same time (calls on one handle are not serialised by the library).
 */
#ifndef QMMM_ACCEL_CORE_H
#define QMMM_ACCEL_CORE_H

#include <stdint.h>

/**
 * Marks the functions of the shared library's interface. Building the library (QMMM_ACCEL_BUILDING, defined by
 * its CMake target only) exports them; a program using it imports them on Windows and sees them with default
 * visibility elsewhere (the library is compiled with hidden visibility, so only QMMM_API functions are exported).
 */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(QMMM_ACCEL_BUILDING)
#define QMMM_API __declspec(dllexport)
#else
#define QMMM_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define QMMM_API __attribute__((visibility("default")))
#else
#define QMMM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes (stable values: Fortran has the same named constants) ---- */
/** Statuses: what every call returns. Stable values; Fortran has the same named constants. */
enum {
    QMMM_SUCCESS = 0,            /**< the call did what it was asked */
    QMMM_ERR_NULL_ARG = 1,       /**< a required pointer argument is NULL */
    QMMM_ERR_INVALID_ARG = 2,    /**< a count is negative, a size, option or device index is out of range */
    QMMM_ERR_NONFINITE = 3,      /**< NaN or Inf in coordinates, charges or parameters */
    QMMM_ERR_BAD_HANDLE = 4,     /**< handle is NULL, destroyed, or not of this kind */
    QMMM_ERR_NO_CUDA = 5,        /**< CUDA asked for, but the library was built without CUDA */
    QMMM_ERR_NO_DEVICE = 6,      /**< CUDA asked for, but no usable GPU */
    QMMM_ERR_CUDA = 7,           /**< a CUDA runtime or kernel failure */
    QMMM_ERR_OUT_OF_MEMORY = 8,  /**< host or device allocation failed */
    QMMM_ERR_FILE_OPEN = 9,      /**< a file could not be opened */
    QMMM_ERR_FILE_FORMAT = 10,   /**< a file is malformed (the message names file and line) */
    QMMM_ERR_SINGULAR = 11,      /**< a point lies on a point charge (see qmmm_field_eval) */
    QMMM_ERR_UNSUPPORTED = 12,   /**< valid request that this build or backend cannot do */
    QMMM_ERR_MPI = 13,           /**< an MPI call failed */
    QMMM_ERR_BUSY = 14,          /**< an asynchronous evaluation is pending on this handle */
    QMMM_ERR_NOT_CONVERGED = 15, /**< an iterative solver did not reach its tolerance (the message says how far) */
    QMMM_ERR_INTERNAL = 99       /**< a bug: please report it with the message */
};

/* ---- backends and precisions (shared by every family) ---- */
/** Backends (the backend field of every options struct). */
enum {
    QMMM_BACKEND_AUTO = 0, /**< CUDA when the library has it and a GPU is present, else the CPU (env QMMM_BACKEND) */
    QMMM_BACKEND_CPU = 1,  /**< the CPU (OpenMP + SIMD) */
    QMMM_BACKEND_CUDA = 2  /**< a CUDA GPU */
};
/** Precisions (the precision field of the options structs; each family says what they mean for it). */
enum {
    QMMM_PRECISION_DOUBLE = 0, /**< double-precision terms and sums */
    QMMM_PRECISION_SINGLE = 1, /**< single-precision terms and sums */
    QMMM_PRECISION_MIXED = 2   /**< single-precision terms, double-precision sums */
};

/* ---- units: the library's one set of conversion constants (CODATA 2018; Fortran has the same parameters) ---- */
#define QMMM_BOHR_ANGSTROM 0.529177210903        /**< bohr in Angstrom (CODATA 2018) */
#define QMMM_HARTREE_EV 27.211386245988          /**< hartree in eV (so hartree/e in V; CODATA 2018) */
#define QMMM_BOLTZMANN_EV_K 8.617333262e-5       /**< k_B in eV/K (exact in SI 2019) */

/* ---- library ---- */
/**
 * @brief The error of the calling thread's last call.
 * @return What was wrong and with which argument; "" when that call succeeded (a successful call clears the
 *         message; qmmm_set_index_base, qmmm_get_index_base, qmmm_status_string and this function leave it) or
 *         no call of this thread has failed. Valid until the next call on this thread. Never NULL.
 * @threading Per thread: each thread sees its own last error.
 */
QMMM_API const char *qmmm_error_message(void);
/**
 * @brief The short name of a status.
 * @param status a status returned by any call
 * @return e.g. "QMMM_ERR_NULL_ARG"; "QMMM_ERR_UNKNOWN_STATUS" for a value that is not a status. Static
 *         storage, never NULL.
 * @threading Safe from any thread.
 */
QMMM_API const char *qmmm_status_string(int status);
/**
 * @brief The library's version.
 * @param[out] major major version
 * @param[out] minor minor version
 * @param[out] patch patch version
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG an output is NULL
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_version(int *major, int *minor, int *patch);
/**
 * @brief The library's version as text.
 * @return "major.minor.patch" (static storage, never NULL).
 * @threading Safe from any thread.
 */
QMMM_API const char *qmmm_version_string(void);
/**
 * @brief How many CUDA devices this process can use.
 *
 * 0 in a build without CUDA, where no NVIDIA driver is installed, or where there is no GPU. A driver that is
 * installed but fails (e.g. older than the CUDA runtime) is QMMM_ERR_CUDA with the reason, not 0.
 * @param[out] count the number of usable devices
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG count is NULL
 * @retval QMMM_ERR_CUDA the driver is installed but fails
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_cuda_device_count(int *count);
/**
 * @brief Whether a CUDA MPS (Multi-Process Service) control daemon serves this process.
 *
 * *active = 1 when the pipe directory CUDA clients use ($CUDA_MPS_PIPE_DIRECTORY, unset or empty:
 * /tmp/nvidia-mps) holds the daemon's FIFO or UNIX socket "control" (by driver version), else 0. Under MPS,
 * processes sharing a GPU run their kernels concurrently instead of time-slicing it (many MPI ranks per GPU).
 * A file check: no CUDA call, works without CUDA or a GPU.
 *
 * Limits of the test: it sees that a daemon was started for this pipe directory, not that this process's
 * CUDA context goes through it. A daemon killed without "quit" can leave a stale entry (1 although none
 * runs); a daemon serving other GPUs (its CUDA_VISIBLE_DEVICES), another user's daemon (whose server
 * refuses this user), a GPU in a compute mode that refuses MPS, or a container that does not share the
 * directory all give 1 or 0 regardless of what CUDA will do.
 * @param[out] active 1 if a daemon's control pipe is there, else 0
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG active is NULL
 * @retval QMMM_ERR_FILE_OPEN a control pipe that cannot be inspected (a directory this user may not search):
 *         the message names the path, and *active = 0
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_gpu_mps_active(int *active);

/* ---- threads and messages (the library's behaviour inside MPI codes and Fortran callers) ---- */
/**
 * @brief The CPU threads n_threads = 0 stands for.
 *
 * OMP_NUM_THREADS where it is set, else the cores this process may run on divided by the processes of the job on
 * this node (MPI_LOCALNRANKS of MPICH's Hydra, OMPI_COMM_WORLD_LOCAL_SIZE of Open MPI, MV2_COMM_WORLD_LOCAL_SIZE,
 * PALS_LOCAL_SIZE, PMIX_LOCAL_SIZE, PMI_LOCAL_SIZE, SLURM_NTASKS_PER_NODE, or qmmm_set_node_ranks). Whatever
 * n_threads says, a call with fewer than 131,072 pair terms runs on the caller's thread and a larger one uses at
 * most one thread per 65,536 pair terms; results do not depend on it.
 * @param[out] n the default thread count
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG n is NULL
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_default_threads(int *n);
/**
 * @brief How many processes of the job share this node, for the default of qmmm_default_threads.
 *
 * qmmm_mpi_select_device sets it.
 * @param n processes on this node, >= 1; 0 returns to the environment's count
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_INVALID_ARG n < 0 or n > 2^20
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_set_node_ranks(int n);
/**
 * @brief Where the calling thread's messages count points, cells, charges and nuclei from.
 * @param base 0 (C, the default) or 1 (Fortran; the Fortran interfaces set it around their calls and restore the
 *             caller's afterwards)
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_INVALID_ARG base is neither 0 nor 1
 * @threading Per thread: sets the calling thread's base.
 */
QMMM_API int qmmm_set_index_base(int base);
/**
 * @brief The calling thread's index base (qmmm_set_index_base): what an interface saves before setting its own and
 * restores after its call, so that a caller's base survives the interface's calls.
 * @param[out] base 0 or 1
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG base is NULL
 * @threading Per thread: the calling thread's base.
 */
QMMM_API int qmmm_get_index_base(int *base);
/**
 * @brief Records message as the calling thread's error message (qmmm_error_message) and returns status.
 *
 * For wrappers that fail before calling the library (a Fortran shape check).
 * @param status the status to return
 * @param message the message to record (NULL records "")
 * @return status
 * @threading Per thread: sets the calling thread's error.
 */
QMMM_API int qmmm_set_error(int status, const char *message);

#ifdef __cplusplus
}
#endif

#endif /* QMMM_ACCEL_CORE_H */
