// Scratch: hashes of the CUDA field's values (every precision, random cells and a lattice) to compare two builds bitwise.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>
#include "qmmm_accel.h"
static uint64_t fnv(const double *u, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = reinterpret_cast<const unsigned char *>(u);
    for (size_t i = 0; i < n * sizeof(double); ++i) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}
int main() {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> box(-10, 10), q(-0.01, 0.02), pt(-12, 12);
    for (int lattice = 0; lattice < 2; ++lattice) {
        std::vector<double> xyz, cq, nx, nz;
        if (!lattice) {
            for (int m = 0; m < 268782; ++m) { for (int k = 0; k < 3; ++k) xyz.push_back(box(rng)); cq.push_back(q(rng)); }
        } else {
            for (int i = 0; i < 64; ++i) for (int j = 0; j < 64; ++j) for (int k = 0; k < 64; ++k) {
                xyz.push_back(-8 + 0.25 * i); xyz.push_back(-8 + 0.25 * j); xyz.push_back(-8 + 0.25 * k); cq.push_back(std::abs(q(rng)));
            }
        }
        for (int b = 0; b < 30; ++b) { for (int k = 0; k < 3; ++k) nx.push_back(box(rng)); nz.push_back(1 + b % 8); }
        std::vector<double> p(3 * 20011);
        for (auto &v : p) v = pt(rng);
        for (int prec = 0; prec < 3; ++prec) {
            qmmm_options o; qmmm_options_default(&o); o.backend = QMMM_BACKEND_CUDA; o.precision = prec; o.cell_volume = 0.015625;
            qmmm_field f = nullptr;
            if (qmmm_field_create(&f, cq.size(), xyz.data(), cq.data(), nz.size(), nx.data(), nz.data(), &o)) { std::printf("create: %s\n", qmmm_error_message()); return 1; }
            for (int64_t n : {1, 1024, 8192, 20011}) {
                std::vector<double> u(n);
                if (qmmm_field_eval(f, n, p.data(), u.data())) { std::printf("eval: %s\n", qmmm_error_message()); return 1; }
                std::printf("lattice %d precision %d n %6lld hash %016llx u0 %.17g\n", lattice, prec, (long long)n, (unsigned long long)fnv(u.data(), n), u[0]);
            }
            qmmm_field_destroy(f);
        }
    }
}
