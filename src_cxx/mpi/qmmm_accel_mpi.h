/**
 * @file qmmm_accel_mpi.h
 * @brief The mpi family of the qmmm-accel C API (included by qmmm_accel.h): which GPU a process should use when several MPI ranks share a node's GPUs.
 *
 * Rule (the same for every code that links the library):
 *   spec "" (or unset)  -> device = local_rank mod n_devices   (-1 where the node has no GPU)
 *   spec "2"            -> device 2 for every rank of the node
 *   spec "0,2,3"        -> the list dealt round robin: device = list[local_rank mod 3]
 * where local_rank is the rank among the processes of the same node (MPI_COMM_TYPE_SHARED) and
 * spec comes from the caller (an input key) or, when the caller passes NULL, from the environment
 * variable QMMM_DEVICE. Listed devices must exist (0 <= d < n_devices). Several ranks may share a
 * device; each then has its own CUDA context (time-sliced by the driver; MPS makes them concurrent).
 * CUDA_VISIBLE_DEVICES set per rank by a batch system simply gives n_devices = 1 and device 0.
 */
#ifndef QMMM_ACCEL_MPI_H
#define QMMM_ACCEL_MPI_H
#include "qmmm_accel_core.h"
#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief The rule above as a pure function of the node layout (no MPI, no CUDA call): testable on made-up layouts.
 * @param local_rank the rank among the processes of the node, 0 .. local_size - 1
 * @param local_size the processes of the node, >= 1
 * @param n_devices the GPUs the process sees, >= 0
 * @param spec "" (round robin), "d" or "d0,d1,...", or NULL to take QMMM_DEVICE from the environment (unset or
 *        empty = round robin)
 * @param[out] device the device to use; -1 where no GPU is to be used
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG device is NULL
 * @retval QMMM_ERR_INVALID_ARG local_rank outside 0..local_size-1, n_devices < 0, spec not a comma-separated
 *         list of integers >= 0
 * @retval QMMM_ERR_NO_DEVICE a listed device >= n_devices
 * @threading Safe from any thread.
 */
QMMM_API int qmmm_pick_device(int local_rank, int local_size, int n_devices, const char *spec, int *device);

/**
 * @brief The same for the calling process of an MPI communicator.
 *
 * Collective over comm: splits it by node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED), counts the GPUs this
 * process sees, applies the rule. Only in libqmmm_accel_mpi (built where MPI is found; link target
 * qmmm_accel::qmmm_accel_mpi).
 * @param comm_f the communicator as its Fortran handle (MPI_Fint; from C pass MPI_Comm_c2f(comm); from mpi_f08
 *        pass comm%MPI_VAL)
 * @param spec as qmmm_pick_device (NULL: QMMM_DEVICE from the environment)
 * @param[out] device the device to use; -1 where no GPU is to be used
 * @param[out] local_rank the rank among the processes of the node; may be NULL
 * @param[out] local_size the processes of the node; may be NULL
 * @retval QMMM_SUCCESS
 * @retval QMMM_ERR_NULL_ARG device is NULL
 * @retval QMMM_ERR_INVALID_ARG spec is not a comma-separated list of integers >= 0
 * @retval QMMM_ERR_NO_DEVICE a listed device does not exist
 * @retval QMMM_ERR_MPI an MPI call failed
 * @retval QMMM_ERR_CUDA the CUDA driver is installed but fails (as qmmm_cuda_device_count)
 * @threading Collective: every process of comm calls it, from the thread that makes its MPI calls.
 */
QMMM_API int qmmm_mpi_select_device(int comm_f, const char *spec, int *device, int *local_rank, int *local_size);

/**
 * @brief Records message as the calling thread's error (what qmmm_error_message() returns) and returns status.
 *
 * libqmmm_accel_mpi reports its MPI failures through it, so both libraries share one error state.
 * @param status the status to return
 * @param message the message to record (NULL records "")
 * @return status
 * @threading Per thread: sets the calling thread's error.
 */
QMMM_API int qmmm_mpi_record_error(int status, const char *message);

#ifdef __cplusplus
}
#endif
#endif
