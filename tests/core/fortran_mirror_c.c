/* fortran_mirror_c.c -- the C side of test_fortran_mirror: sizes and field offsets of every struct the Fortran
 * module mirrors with a bind(c) type, straight from the public headers. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "qmmm_accel.h"

#define FIELD(S, F)                                   \
    if (strcmp(s, #S) == 0 && strcmp(f, #F) == 0) {   \
        *offset = (int64_t)offsetof(S, F);            \
        return 0;                                     \
    }
#define SIZE(S)                       \
    if (strcmp(s, #S) == 0) {         \
        *size = (int64_t)sizeof(S);   \
        return 0;                     \
    }

/* 0 and *size, or 1 for an unknown struct. */
int qmmm_mirror_sizeof(const char *s, int64_t *size) {
    SIZE(qmmm_options)
    SIZE(qmmm_dcs_lattice)
    SIZE(qmmm_dcs_options)
    SIZE(qmmm_rdf_options)
    return 1;
}

/* 0 and *offset, or 1 for an unknown struct or field. */
int qmmm_mirror_offsetof(const char *s, const char *f, int64_t *offset) {
    FIELD(qmmm_options, backend) FIELD(qmmm_options, precision) FIELD(qmmm_options, device)
    FIELD(qmmm_options, n_threads) FIELD(qmmm_options, cell_volume) FIELD(qmmm_options, method)
    FIELD(qmmm_options, flags) FIELD(qmmm_options, tolerance) FIELD(qmmm_options, region)
    FIELD(qmmm_options, reserved)
    FIELD(qmmm_dcs_lattice, origin) FIELD(qmmm_dcs_lattice, spacing) FIELD(qmmm_dcs_lattice, count)
    FIELD(qmmm_dcs_options, backend) FIELD(qmmm_dcs_options, precision) FIELD(qmmm_dcs_options, n_threads)
    FIELD(qmmm_dcs_options, n_devices) FIELD(qmmm_dcs_options, devices) FIELD(qmmm_dcs_options, kernel)
    FIELD(qmmm_dcs_options, on_atom) FIELD(qmmm_dcs_options, max_device_bytes) FIELD(qmmm_dcs_options, progress)
    FIELD(qmmm_dcs_options, progress_user) FIELD(qmmm_dcs_options, reserved)
    FIELD(qmmm_rdf_options, backend) FIELD(qmmm_rdf_options, n_threads) FIELD(qmmm_rdf_options, method)
    FIELD(qmmm_rdf_options, kernel) FIELD(qmmm_rdf_options, n_devices) FIELD(qmmm_rdf_options, devices)
    FIELD(qmmm_rdf_options, reserved)
    return 1;
}
