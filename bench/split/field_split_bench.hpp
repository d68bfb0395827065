// field_split_bench.hpp -- the range-split method's rows of field_bench (bench/split/field_split_bench.cpp), also run
// alone by field_split_bench (a CPU-only build has it too).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct SplitBenchOptions {
    std::string data_dir;                           // data/glycine_trimer of the repository
    std::vector<double> thresholds = {4.1e-4, 0.0};  // 268,938 and 1,099,098 cells
    double tolerance = 1e-7;
    double margin = 4.0;                            // bohr around fragment 1's nuclei: the region
    std::vector<int64_t> points = {1, 1024, 8192};   // per call
    double min_time = 0.3;                          // seconds of timed calls per row
    bool gpu = true;                                // CUDA rows when a device is present
    bool cpu = true;                                // CPU split rows (the CPU reference is computed either way)
};

// Prints the table and adds js["split"]; throws std::runtime_error on a library failure.
void split_rows(const SplitBenchOptions &o, nlohmann::json &js);
// The defaults, with the repository's data (QMMM_SOURCE_DIR), CUDA rows when `gpu`, min_time seconds per row.
void split_rows(nlohmann::json &js, bool gpu, double min_time);
