// standalone_main.cpp -- a main() for the fuzz targets without libFuzzer (the idea of LLVM's
// StandaloneFuzzTargetMain.c): any compiler, no sanitizer needed. Each argument is a file, or a folder whose
// regular files are taken in name order; every file is passed once to LLVMFuzzerTestOneInput. The ordinary
// test build replays the committed corpora and regression inputs this way (tests/fuzz/replay_tests.cmake):
// a broken invariant aborts (FUZZ_CHECK), so the test fails on the input named last on stderr. Arguments that start
// with '-' are libFuzzer flags (a target's LLVMFuzzerInitialize may add one) and are skipped.
//   fuzz_cube_replay tests/fuzz/regressions/fuzz_cube tests/fuzz/corpus/fuzz_cube
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

namespace {

bool is_dir(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The regular files of a folder (not recursive), sorted, so runs are reproducible.
std::vector<std::string> files_in(const std::string &dir) {
    std::vector<std::string> out;
    if (DIR *d = opendir(dir.c_str())) {
        while (const dirent *e = readdir(d)) {
            const std::string p = dir + "/" + e->d_name;
            struct stat st;
            if (e->d_name[0] != '.' && stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(p);
        }
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool read_file(const std::string &path, std::vector<uint8_t> &buf) {
    FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    buf.clear();
    uint8_t chunk[65536];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) buf.insert(buf.end(), chunk, chunk + n);
    const bool ok = !std::ferror(f);
    std::fclose(f);
    return ok;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE|FOLDER ...  (each file once through LLVMFuzzerTestOneInput)\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    std::vector<std::string> inputs;
    for (int i = 1; i < argc; ++i) {
        if (argv[i][0] == '-') continue;  // a libFuzzer flag (LLVMFuzzerInitialize may add some): not an input
        if (is_dir(argv[i])) {
            const auto f = files_in(argv[i]);
            inputs.insert(inputs.end(), f.begin(), f.end());
        } else {
            inputs.push_back(argv[i]);
        }
    }
    std::vector<uint8_t> buf;
    for (const auto &path : inputs) {
        if (!read_file(path, buf)) {
            std::fprintf(stderr, "cannot read %s\n", path.c_str());
            return 1;
        }
        // Named before the call: if the target aborts, the input is the last line on stderr.
        std::fprintf(stderr, "input %s (%zu bytes)\n", path.c_str(), buf.size());
        // A copy of exactly `size` bytes: reading past the end is then an error ASan or valgrind can see.
        std::vector<uint8_t> exact(buf);
        static const uint8_t kEmpty = 0;  // libFuzzer never passes NULL, even for an empty input
        LLVMFuzzerTestOneInput(exact.empty() ? &kEmpty : exact.data(), exact.size());
    }
    std::printf("replayed %zu inputs\n", inputs.size());
    return inputs.empty() ? 1 : 0;
}
