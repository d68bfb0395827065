// bench_json.hpp -- a benchmark's JSON result written whole or not at all: into PATH.tmp, then renamed over PATH, so
// a run that fails (or is stopped) never leaves a half-written result for the tables to read.
#pragma once
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace bench {

inline void write_json(const std::string &path, const nlohmann::json &j) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        out << j.dump(1) << "\n";
        if (!out.flush()) {
            std::remove(tmp.c_str());
            throw std::runtime_error("cannot write " + tmp);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw std::runtime_error("cannot write " + path);
    }
}

}  // namespace bench
