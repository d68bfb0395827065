// atomic_output.cpp -- temporary files renamed into place, removed on errors and signals (atomic_output.hpp).
#include "atomic_output.hpp"

#include <filesystem>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include "error.hpp"
#include "qmmm_accel.h"

namespace qmmm::tools {
namespace {

// The registry the signal handler reads: fixed storage (no allocation in a handler); a slot's path is written
// before it is marked used and unmarked before it is freed.
constexpr int kSlots = 16;
char g_paths[kSlots][4096];
volatile sig_atomic_t g_used[kSlots];
std::mutex g_mutex;  // slots and handler installation, between threads
int g_open = 0;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3], g_old_xfsz;

// A temporary file being made (mkstemp, then its slot) is not yet in the registry: the handler waits for it, and
// once a handler has started no new one is made. Lock-free atomics are safe in a handler.
std::atomic<int> g_creating{0};
std::atomic<bool> g_dying{false};

// The signal may reach any thread, and a second one (`timeout` signals the process, then its group) another thread
// while this handler runs: so the action stays this handler until every file is removed (a second handler removes
// them too) and the three signals are blocked in it. Before, SA_RESETHAND made the action the default on entry,
// and a second signal taken by another thread ended the program before the files were removed.
extern "C" void remove_temporaries(int sig) {
    g_dying.store(true);
    while (g_creating.load() != 0) {
    }
    for (int i = 0; i < kSlots; ++i)
        if (g_used[i]) ::unlink(g_paths[i]);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    // Blocked in this handler: the signal ends the program, as it would have, once the handler returns.
    ::raise(sig);
}

// Blocks the three signals in this thread and counts a temporary file being made, for the scope; a program
// already being ended by a signal makes no new file (it waits for the end, which the other thread's handler
// brings once it has removed the registered files).
class Creating {
public:
    Creating() {
        sigset_t block;
        sigemptyset(&block);
        for (int s : kSignals) sigaddset(&block, s);
        pthread_sigmask(SIG_BLOCK, &block, &old_);
        g_creating.fetch_add(1);
        if (g_dying.load()) {
            g_creating.fetch_sub(1);
            for (;;) ::pause();
        }
    }
    ~Creating() {
        g_creating.fetch_sub(1);
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    Creating(const Creating &) = delete;
    Creating &operator=(const Creating &) = delete;

private:
    sigset_t old_;
};

// The handlers are held from before a temporary file is made until it is removed or kept: the first holder
// installs them (and ignores SIGXFSZ); the last one restores what was there, so a program that embeds a tool (the
// fuzzers) keeps its own handlers between runs.
void hold_handlers() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_open++ != 0) return;
    struct sigaction sa {};
    sa.sa_handler = remove_temporaries;
    sigemptyset(&sa.sa_mask);
    for (int s : kSignals) sigaddset(&sa.sa_mask, s);
    // A signal ignored by the caller (nohup: SIGHUP) stays ignored.
    for (int k = 0; k < 3; ++k) {
        sigaction(kSignals[k], nullptr, &g_old[k]);
        if (g_old[k].sa_handler != SIG_IGN) sigaction(kSignals[k], &sa, nullptr);
    }
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &g_old_xfsz);
}

void release_handlers() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (--g_open == 0) {
        for (int k = 0; k < 3; ++k) sigaction(kSignals[k], &g_old[k], nullptr);
        sigaction(SIGXFSZ, &g_old_xfsz, nullptr);
    }
}

int take_slot(const std::string &path) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (path.size() >= sizeof g_paths[0]) throw Error(QMMM_ERR_FILE_OPEN, path + ": path too long");
    for (int i = 0; i < kSlots; ++i) {
        if (g_used[i]) continue;
        std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
        g_used[i] = 1;
        return i;
    }
    throw Error(QMMM_ERR_INTERNAL, "more than 16 temporary output files open");
}

// Frees the slot and releases the handlers its file held.
void free_slot(int i) {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_used[i] = 0;
    }
    release_handlers();
}

std::string folder_of(const std::string &path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string &path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

[[noreturn]] void fail(const std::string &what) {
    throw Error(QMMM_ERR_FILE_OPEN, what + " (" + std::strerror(errno) + ")");
}

// The checks of an output name, before its temporary file is made; returns the name.
const std::string &checked(const std::string &path, bool force) {
    if (path.empty() || path.back() == '/') throw Error(QMMM_ERR_FILE_OPEN, "'" + path + "': not a file name");
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) throw Error(QMMM_ERR_FILE_OPEN, path + ": is a folder, not a file name");
        // A device or pipe cannot be replaced by a rename (and /dev/full must not become a regular file).
        if (!S_ISREG(st.st_mode))
            throw Error(QMMM_ERR_FILE_OPEN, path + ": not a regular file (a device or pipe); outputs are written to "
                                                   "a temporary file and renamed, so give a file name");
        if (!force) throw Error(QMMM_ERR_FILE_OPEN, path + ": exists; add --force to replace it");
    } else if (!force && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        // A dangling symbolic link: the final hard link would find the name taken after all the work (and the
        // message would blame a file made meanwhile), so it is refused here, for what it is.
        char target[4096];
        const ssize_t k = ::readlink(path.c_str(), target, sizeof target - 1);
        target[k > 0 ? k : 0] = '\0';
        throw Error(QMMM_ERR_FILE_OPEN, path + ": a symbolic link to '" + target + "', which does not exist; give the "
                                               "file's own name, or add --force to replace the link");
    }
    return path;
}

}  // namespace

TempFile::TempFile(const std::string &near) {
    const std::string dir = folder_of(near);
    std::string templ = dir + "/." + base_of(near) + ".XXXXXX";
    const Creating creating;  // from the file's making to its registration
    hold_handlers();          // before the file exists: a signal from now on finds the handler
    const int fd = ::mkstemp(templ.data());
    if (fd < 0) {
        release_handlers();
        fail(near + ": cannot write into " + dir);
    }
    // mkstemp makes the file 0600; an output gets the permissions of any new file (0666 less the umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    path_ = templ;
    try {
        slot_ = take_slot(path_);
    } catch (...) {
        ::close(fd), ::unlink(path_.c_str());
        release_handlers();
        throw;
    }
    f_ = ::fdopen(fd, "wb");
    if (!f_) {
        const int err = errno;
        ::close(fd), ::unlink(path_.c_str());
        free_slot(slot_);  // the destructor does not run for a constructor that throws
        slot_ = -1;
        errno = err;
        fail(near + ": cannot open " + path_);
    }
}

TempFile::~TempFile() {
    if (f_) std::fclose(f_);
    if (slot_ >= 0) {
        ::unlink(path_.c_str());
        free_slot(slot_);
    }
}

void TempFile::close(const std::string &name) {
    if (!f_) return;
    FILE *f = f_;
    f_ = nullptr;
    errno = 0;
    bool ok = std::fflush(f) == 0 && !std::ferror(f) && ::fsync(fileno(f)) == 0;
    int err = errno;
    if (std::fclose(f) != 0 && ok) ok = false, err = errno;
    if (!ok) {
        errno = err ? err : EIO;
        fail(name + ": write failed");
    }
}

void TempFile::keep() {
    if (slot_ >= 0) free_slot(slot_);
    slot_ = -1;
}

AtomicOutput::AtomicOutput(const std::string &path, bool force)
    : path_(path), force_(force), tmp_(checked(path, force)) {}

void AtomicOutput::write(const std::string &s) {
    if (!tmp_.file()) throw Error(QMMM_ERR_INTERNAL, path_ + ": written after finish()");
    if (std::fwrite(s.data(), 1, s.size(), tmp_.file()) != s.size()) fail(path_ + ": write failed");
}

void AtomicOutput::commit() {
    finish();
    if (force_) {
        if (::rename(tmp_.path().c_str(), path_.c_str()) != 0) fail(path_ + ": cannot rename " + tmp_.path() + " to it");
    } else if (::link(tmp_.path().c_str(), path_.c_str()) == 0) {
        ::unlink(tmp_.path().c_str());  // a hard link never replaces a file that appeared since the check
    } else if (errno == EEXIST) {
        throw Error(QMMM_ERR_FILE_OPEN, path_ + ": exists (made while this program ran); add --force to replace it");
    } else {
        // A file system without hard links: the check of the constructor stands.
        struct stat st {};
        if (::stat(path_.c_str(), &st) == 0)
            throw Error(QMMM_ERR_FILE_OPEN, path_ + ": exists (made while this program ran); add --force to replace it");
        if (::rename(tmp_.path().c_str(), path_.c_str()) != 0) fail(path_ + ": cannot rename " + tmp_.path() + " to it");
    }
    tmp_.keep();
}

bool same_path(const std::string &a, const std::string &b) {
    const auto norm = [](const std::string &p) {
        std::error_code ec;
        const std::filesystem::path c = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
        return ec ? p : c.string();
    };
    return norm(a) == norm(b);
}

}  // namespace qmmm::tools
