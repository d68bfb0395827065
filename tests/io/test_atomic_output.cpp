// test_atomic_output.cpp -- the tools' all-or-nothing outputs (src_cxx/io/atomic_output.hpp): an interrupted
// program leaves no temporary file, whatever thread the signals reach.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "atomic_output.hpp"

namespace {

std::vector<std::string> entries(const std::string &dir) {
    std::vector<std::string> names;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (const dirent *e = ::readdir(d))
            if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
        ::closedir(d);
    }
    return names;
}

// A child with four busy threads (as qmmm-dcs has during its map) that opens three outputs and drops them again, over
// and over, gets SIGTERM twice at once, as `timeout` sends it (to the process, then to its group). Before, the first
// signal's handler reset the action to the default on entry, so the second, taken by another thread, ended the
// program while the handler was still removing the temporary files, and a file being made was not yet registered:
// hidden files were left behind.
TEST(AtomicOutput, TwoSignalsAtOnceLeaveNoTemporaryFile) {
    char templ[] = "/tmp/qmmm-atomic-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    const std::string dir = templ;
    int left = 0;
    for (int run = 0; run < 40; ++run) {
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(ready[0]);
            std::atomic<bool> stop{false};
            std::vector<std::thread> busy;
            for (int t = 0; t < 4; ++t)
                busy.emplace_back([&stop] {
                    volatile double x = 0;
                    while (!stop.load(std::memory_order_relaxed)) x = x + 1;
                });
            const char c = 1;
            if (::write(ready[1], &c, 1) != 1) std::_Exit(3);
            // Outputs opened and dropped again and again, so the signals find every stage: being made, open, being
            // removed (a program's start and end).
            for (;;) {
                std::vector<std::unique_ptr<qmmm::tools::AtomicOutput>> outs;
                for (const char *name : {"/map.dx", "/map.cube", "/ions.pdb"})
                    outs.push_back(std::make_unique<qmmm::tools::AtomicOutput>(dir + name, false));
            }
        }
        ::close(ready[1]);
        char c = 0;
        ASSERT_EQ(::read(ready[0], &c, 1), 1);
        ::close(ready[0]);
        ::usleep(static_cast<useconds_t>(200 + 300 * (run % 10)));
        ::kill(pid, SIGTERM);
        ::kill(pid, SIGTERM);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
        const auto names = entries(dir);
        if (!names.empty()) ++left;
        for (const auto &n : names) ::unlink((dir + "/" + n).c_str());
    }
    ::rmdir(dir.c_str());
    EXPECT_EQ(left, 0) << "runs of 40 that left a temporary file";
}

}  // namespace
