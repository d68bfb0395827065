// fuzz_common.hpp -- what every libFuzzer target here shares: the fuzz input as a file the readers can
// open by name, and invariant checks that abort (libFuzzer then saves the input as a crash).
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// An invariant of the code under test: on violation print what and where, then abort so that libFuzzer
// records the input (ASan/UBSan findings abort by themselves).
#define FUZZ_CHECK(cond, ...)                                                                   \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d): ", #cond, __FILE__, __LINE__); \
            std::fprintf(stderr, __VA_ARGS__);                                                  \
            std::fputc('\n', stderr);                                                           \
            std::abort();                                                                       \
        }                                                                                       \
    } while (0)

namespace fuzz {

// The readers take a path: the input goes into one memfd per process, rewritten for every input and
// opened by the reader as /proc/self/fd/N (a fresh open file description, so offset 0 each time). No disk
// traffic, nothing left behind, and parallel fuzzing jobs never share a file.
class MemFile {
public:
    explicit MemFile(const char *name) {
        fd_ = memfd_create(name, 0);
        if (fd_ < 0) {
            std::perror("memfd_create");
            std::abort();
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    MemFile(const MemFile &) = delete;
    MemFile &operator=(const MemFile &) = delete;
    ~MemFile() {
        for (const auto &l : links_) unlink(l.c_str());
        if (!dir_.empty()) rmdir(dir_.c_str());
        close(fd_);
    }
    const std::string &write(const uint8_t *data, size_t size) {
        if (ftruncate(fd_, 0) != 0) std::abort();
        for (size_t done = 0; done < size;) {
            const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
            if (n <= 0) std::abort();
            done += static_cast<size_t>(n);
        }
        return path_;
    }
    const std::string &path() const { return path_; }
    // The same file under a name ending in `ext` (for readers that go by the extension): a symlink in a private
    // temporary folder, made once per extension and removed with the MemFile.
    const std::string &path_with_extension(const std::string &ext) {
        if (dir_.empty()) {
            char tmpl[] = "/tmp/qmmm-fuzz-XXXXXX";
            if (!mkdtemp(tmpl)) std::abort();
            dir_ = tmpl;
        }
        for (const auto &l : links_)
            if (l.size() >= ext.size() && l.compare(l.size() - ext.size(), ext.size(), ext) == 0) return l;
        links_.push_back(dir_ + "/input" + ext);
        const std::string target = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd_);
        if (symlink(target.c_str(), links_.back().c_str()) != 0) std::abort();
        return links_.back();
    }

private:
    int fd_ = -1;
    std::string path_, dir_;
    std::vector<std::string> links_;
};

inline bool all_finite(const double *v, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (!std::isfinite(v[i])) return false;
    return true;
}

// Every target: one OpenMP thread unless the input asks for more (runs stay fast and reproducible), and
// no backend override from the environment (the build has no CUDA; AUTO must mean CPU). Inputs ask for up to 1024
// threads (n_threads at its limit), and the OpenMP runtime keeps a team of the largest size asked for alive: under
// ASan each of those threads keeps its allocator caches, so the process grew by ~220 MB a pass over a 912-input
// corpus (754 -> 1,201 MB over three passes, quarantine off; 336 MB with the teams capped at 2; the uninstrumented
// replay 300 MB, no growth) and long runs hit libFuzzer's 2 GB limit after 17,000-30,000 inputs. OMP_THREAD_LIMIT
// caps the teams; the library still takes n_threads as the input gives it.
inline void init_environment() {
    setenv("OMP_NUM_THREADS", "1", 0);
    setenv("OMP_THREAD_LIMIT", "4", 0);
    setenv("KMP_WARNINGS", "0", 0);  // LLVM's runtime: no warning that it formed a smaller team than asked
    unsetenv("QMMM_BACKEND");
    unsetenv("QMMM_DEVICE");
}

}  // namespace fuzz
