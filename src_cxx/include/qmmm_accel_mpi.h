/* qmmm_accel_mpi.h -- the mpi family of the qmmm-accel C API (included by qmmm_accel.h). */
#ifndef QMMM_ACCEL_MPI_H
#define QMMM_ACCEL_MPI_H
#include "qmmm_accel.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
