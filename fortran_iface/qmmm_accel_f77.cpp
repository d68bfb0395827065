// qmmm_accel_f77.cpp -- the module-free Fortran interface (FFTW's legacy interface is the model): external
// subroutines that any Fortran compiler calls without a .mod file, from fixed or free form, whatever the code's own
// module names. Every argument is passed by reference, as Fortran 77 passes it; handles are INTEGER*8, counts and
// statuses default INTEGER, reals DOUBLE PRECISION. The last argument is always the status (0 = success).
// Messages count points, charges and nuclei from 1. Constants: include 'qmmm_accel_f77.fi'.
//
// Names: lower case with one trailing underscore (gfortran, Intel, NVIDIA, Flang, Cray on Linux) and with two
// (g77 and gfortran -fsecond-underscore), both defined here.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "error.hpp"
#include "qmmm_accel.h"

namespace {

qmmm_field handle(const int64_t *h) { return reinterpret_cast<qmmm_field>(static_cast<intptr_t>(*h)); }

qmmm_options options(const int *backend, const int *precision, const int *n_threads) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = *backend, o.precision = *precision, o.n_threads = *n_threads;
    return o;
}

}  // namespace

#define QMMM_F77_ALIAS(name) extern "C" QMMM_API decltype(name##_) name##__ __attribute__((alias(#name "_")));

extern "C" {

// CALL QMMM_F77_CHARGES_CREATE(H, N, X, Y, Z, Q, SCREENING, A, B, NNUC, NUCXYZ, NUCZ, BACKEND, PRECISION,
//                              NTHREADS, STATUS)
// Point charges with physical sign at X(M), Y(M), Z(M) (bohr), charges Q(M) (e); SCREENING 0 none, 1 EXP (A(M),
// B(M)), 2 GAUSSIAN (A(M) = sigma); arrays not used may be any variable. NUCXYZ(3,NNUC), NUCZ(NNUC) optional
// (NNUC = 0). BACKEND 0 auto, 1 CPU, 2 CUDA; PRECISION 0 double, 1 single, 2 mixed; NTHREADS 0 = the default.
QMMM_API void qmmm_f77_charges_create_(int64_t *h, const int *n, const double *x, const double *y, const double *z,
                                       const double *q, const int *screening, const double *a, const double *b,
                                       const int *nnuc, const double *nucxyz, const double *nucz, const int *backend,
                                       const int *precision, const int *n_threads, int *status) {
    qmmm::IndexBase base(1);
    const qmmm_options o = options(backend, precision, n_threads);
    qmmm_field f = nullptr;
    *status = qmmm_field_create_charges(&f, *n, x, y, z, 1, q, *screening, a, b, *nnuc, nucxyz, nucz, &o);
    *h = static_cast<int64_t>(reinterpret_cast<intptr_t>(f));
}
QMMM_F77_ALIAS(qmmm_f77_charges_create)

// CALL QMMM_F77_CHARGES_CREATE_XYZ(H, N, XYZ, Q, SCREENING, A, B, NNUC, NUCXYZ, NUCZ, BACKEND, PRECISION,
//                                  NTHREADS, STATUS): as above with positions XYZ(3,N).
QMMM_API void qmmm_f77_charges_create_xyz_(int64_t *h, const int *n, const double *xyz, const double *q,
                                           const int *screening, const double *a, const double *b, const int *nnuc,
                                           const double *nucxyz, const double *nucz, const int *backend,
                                           const int *precision, const int *n_threads, int *status) {
    qmmm::IndexBase base(1);
    const qmmm_options o = options(backend, precision, n_threads);
    qmmm_field f = nullptr;
    *status = qmmm_field_create_charges(&f, *n, xyz, xyz + 1, xyz + 2, 3, q, *screening, a, b, *nnuc, nucxyz, nucz, &o);
    *h = static_cast<int64_t>(reinterpret_cast<intptr_t>(f));
}
QMMM_F77_ALIAS(qmmm_f77_charges_create_xyz)

// CALL QMMM_F77_FIELD_CREATE(H, NCELLS, CELLXYZ, CELLQ, NNUC, NUCXYZ, NUCZ, BACKEND, PRECISION, NTHREADS, STATUS)
// Density cells (electron populations, qmmm_field_create's convention) and nuclei.
QMMM_API void qmmm_f77_field_create_(int64_t *h, const int *ncells, const double *cellxyz, const double *cellq,
                                     const int *nnuc, const double *nucxyz, const double *nucz, const int *backend,
                                     const int *precision, const int *n_threads, int *status) {
    qmmm::IndexBase base(1);
    const qmmm_options o = options(backend, precision, n_threads);
    qmmm_field f = nullptr;
    *status = qmmm_field_create(&f, *ncells, cellxyz, cellq, *nnuc, nucxyz, nucz, &o);
    *h = static_cast<int64_t>(reinterpret_cast<intptr_t>(f));
}
QMMM_F77_ALIAS(qmmm_f77_field_create)

// CALL QMMM_F77_FIELD_EVAL(H, N, XYZ, U, STATUS): U(I) = the potential at XYZ(:,I), hartree.
QMMM_API void qmmm_f77_field_eval_(const int64_t *h, const int *n, const double *xyz, double *u, int *status) {
    qmmm::IndexBase base(1);
    *status = qmmm_field_eval(handle(h), *n, xyz, u);
}
QMMM_F77_ALIAS(qmmm_f77_field_eval)

// CALL QMMM_F77_FIELD_EVAL_SUM(H, N, COORD, USUM, STATUS): USUM = sum over I of the potential at COORD(:,I).
QMMM_API void qmmm_f77_field_eval_sum_(const int64_t *h, const int *n, const double *coord, double *usum,
                                       int *status) {
    qmmm::IndexBase base(1);
    *status = qmmm_field_eval_sum(handle(h), *n, coord, usum);
}
QMMM_F77_ALIAS(qmmm_f77_field_eval_sum)

// CALL QMMM_F77_FIELD_BACKEND(H, BACKEND, PRECISION, STATUS): what the field runs on.
QMMM_API void qmmm_f77_field_backend_(const int64_t *h, int *backend, int *precision, int *status) {
    *status = qmmm_field_backend(handle(h), backend, precision, nullptr);
}
QMMM_F77_ALIAS(qmmm_f77_field_backend)

// CALL QMMM_F77_FIELD_DESTROY(H, STATUS): H becomes 0.
QMMM_API void qmmm_f77_field_destroy_(int64_t *h, int *status) {
    *status = qmmm_field_destroy(handle(h));
    if (*status == QMMM_SUCCESS) *h = 0;
}
QMMM_F77_ALIAS(qmmm_f77_field_destroy)

// CALL QMMM_F77_DEFAULT_THREADS(N, STATUS)
QMMM_API void qmmm_f77_default_threads_(int *n, int *status) { *status = qmmm_default_threads(n); }
QMMM_F77_ALIAS(qmmm_f77_default_threads)

// CALL QMMM_F77_ERROR_MESSAGE(MSG, STATUS): the calling thread's last message, blank-padded or cut to LEN(MSG).
// The character length comes as the hidden trailing argument every Fortran compiler on 64-bit Linux passes by
// value (size_t).
QMMM_API void qmmm_f77_error_message_(char *msg, int *status, size_t len) {
    const char *m = qmmm_error_message();
    const size_t k = std::min(len, std::strlen(m));
    std::memcpy(msg, m, k);
    std::memset(msg + k, ' ', len - k);
    *status = QMMM_SUCCESS;
}
QMMM_F77_ALIAS(qmmm_f77_error_message)

}  // extern "C"
