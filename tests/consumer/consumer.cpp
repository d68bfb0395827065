// Uses the installed library: one cell of 1 e at the origin, seen from (0, 0, 2) bohr: U = 0.5 hartree.
#include <qmmm_accel.h>

#include <cmath>
#include <cstdio>

int main() {
    const double cell[3] = {0, 0, 0}, q = 1.0, p[3] = {0, 0, 2};
    qmmm_field f = nullptr;
    if (qmmm_field_create(&f, 1, cell, &q, 0, nullptr, nullptr, nullptr) != QMMM_SUCCESS) return 1;
    double u = 0;
    if (qmmm_field_eval(f, 1, p, &u) != QMMM_SUCCESS || std::fabs(u - 0.5) > 1e-15) return 2;
    qmmm_field_destroy(f);
    std::printf("consumer_cxx: U = %.15f (qmmm-accel %s)\n", u, qmmm_version_string());
    return 0;
}
