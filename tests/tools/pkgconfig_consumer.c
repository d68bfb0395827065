/* A C program built only with `pkg-config --cflags --libs qmmm_accel` against an installed tree.
 * Field of a 2 e cell at (0, 0, 4) and a Z = 1 nucleus at the origin, seen from (0, 0, 2) bohr:
 * U = 2/2 - 1/2 = 0.5 hartree exactly. Also a status check: a NULL handle is QMMM_ERR_NULL_ARG. */
#include <math.h>
#include <qmmm_accel.h>
#include <stdio.h>

int main(void) {
    const double cell[3] = {0, 0, 4}, q = 2.0, nuc[3] = {0, 0, 0}, z = 1.0, p[3] = {0, 0, 2};
    qmmm_field f = NULL;
    double u = 0;
    int s = qmmm_field_create(&f, 1, cell, &q, 1, nuc, &z, NULL);
    if (s != QMMM_SUCCESS) return fprintf(stderr, "create: %s: %s\n", qmmm_status_string(s), qmmm_error_message()), 1;
    s = qmmm_field_eval(f, 1, p, &u);
    qmmm_field_destroy(f);
    if (s != QMMM_SUCCESS || fabs(u - 0.5) > 1e-15) return fprintf(stderr, "eval: status %d, U = %.17g\n", s, u), 2;
    if (qmmm_field_create(NULL, 1, cell, &q, 0, NULL, NULL, NULL) != QMMM_ERR_NULL_ARG) return 3;
    printf("pkgconfig consumer: U = %.15f hartree (qmmm-accel %s)\n", u, qmmm_version_string());
    return 0;
}
