// field_seed.hpp -- seed 004's GPU algorithm as published, kept outside the library as the baseline of
// bench/field/field_bench: 120 blocks x 256 threads, Nloop = ceil(M / (120 * 256)), the point in constant
// memory, one point per call, block partials copied back and summed on the host. Electron term only.
#pragma once
#include <cstdint>

struct SeedField;
// double_precision: the seed's double variant; otherwise float throughout on the GPU.
SeedField *seed_create(int64_t m, const double *cell_xyz, const double *cell_q, bool double_precision);
// coalesced: Eq. 8 (thread t takes cells t, t + 256, ...); otherwise Eq. 7 (thread t takes Nloop
// consecutive cells). Throws std::runtime_error on a CUDA failure.
double seed_eval(SeedField *s, const double *point, bool coalesced);
void seed_destroy(SeedField *s);
