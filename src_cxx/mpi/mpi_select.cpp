// mpi_select.cpp -- qmmm_mpi_select_device: the node-local rank of the calling process in a
// communicator (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED), then qmmm_pick_device's rule.
// Built only where MPI is found, into libqmmm_accel_mpi, so libqmmm_accel itself never needs MPI.
// The communicator comes as a Fortran handle (MPI_Fint) because Fortran codes are the main callers.
// Errors go through qmmm_mpi_record_error: this library cannot see libqmmm_accel's internal error state.
#include <mpi.h>

#include <string>

#include "qmmm_accel_mpi.h"

namespace {

int fail(int status, const std::string &msg) { return qmmm_mpi_record_error(status, msg.c_str()); }

int mpi_fail(int rc, const char *what) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) len = 0;
    s[len] = '\0';
    return fail(QMMM_ERR_MPI, std::string("qmmm_mpi_select_device: ") + what + " failed: " + s);
}

}  // namespace

QMMM_API int qmmm_mpi_select_device(int comm_f, const char *spec, int *device, int *local_rank, int *local_size) {
    try {
        if (!device) return fail(QMMM_ERR_NULL_ARG, "qmmm_mpi_select_device: device is NULL");
        *device = -1;
        int init = 0;
        MPI_Initialized(&init);
        if (!init) return fail(QMMM_ERR_MPI, "qmmm_mpi_select_device: MPI is not initialised");
        MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(comm_f)), node = MPI_COMM_NULL;
        // Errors must come back as statuses, not abort the job from inside the library.
        MPI_Errhandler old;
        MPI_Comm_get_errhandler(comm, &old);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        int rank = 0, rc = MPI_Comm_rank(comm, &rank);
        if (rc == MPI_SUCCESS) rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_set_errhandler(comm, old);
        MPI_Errhandler_free(&old);
        if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
        int lr = 0, ls = 1;
        MPI_Comm_rank(node, &lr);
        MPI_Comm_size(node, &ls);
        MPI_Comm_free(&node);
        if (local_rank) *local_rank = lr;
        if (local_size) *local_size = ls;
        qmmm_set_node_ranks(ls);  // the default CPU threads: this node's cores shared by its ranks
        int n = 0;
        if (int s = qmmm_cuda_device_count(&n)) return s;
        return qmmm_pick_device(lr, ls, n, spec, device);
    } catch (...) {  // nothing may escape into C or Fortran callers
        return fail(QMMM_ERR_INTERNAL, "qmmm_mpi_select_device: unexpected exception");
    }
}
