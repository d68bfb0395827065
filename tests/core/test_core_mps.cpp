// test_core_mps.cpp -- qmmm_gpu_mps_active against pipe directories made here: a FIFO or a UNIX socket named
// "control" (what the MPS control daemon creates, by driver version) is "on"; no directory, no control entry,
// or a control entry that is a plain file is "off". The reference for CUDA's default directory is std::filesystem's own FIFO test.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "qmmm_accel.h"

namespace fs = std::filesystem;

namespace {

// A fresh directory for one test, and CUDA_MPS_PIPE_DIRECTORY set for the test's length (restored after).
class MpsDir : public ::testing::Test {
protected:
    void SetUp() override {
        if (const char *v = std::getenv("CUDA_MPS_PIPE_DIRECTORY")) saved_ = v;
        char tmpl[] = "/tmp/qmmm_mps_test_XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr) << std::strerror(errno);
        dir_ = tmpl;
    }
    void TearDown() override {
        if (saved_) ::setenv("CUDA_MPS_PIPE_DIRECTORY", saved_->c_str(), 1);
        else ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    void point_at(const fs::path &p) { ASSERT_EQ(::setenv("CUDA_MPS_PIPE_DIRECTORY", p.c_str(), 1), 0); }
    int active() {
        int a = -7;
        EXPECT_EQ(qmmm_gpu_mps_active(&a), QMMM_SUCCESS) << qmmm_error_message();
        return a;
    }
    fs::path dir_;
    std::optional<std::string> saved_;
};

TEST_F(MpsDir, ControlFifoIsOn) {
    ASSERT_EQ(::mkfifo((dir_ / "control").c_str(), 0600), 0) << std::strerror(errno);
    point_at(dir_);
    EXPECT_EQ(active(), 1);
    // The daemon's other pipes beside it change nothing.
    ASSERT_EQ(::mkfifo((dir_ / "control_0").c_str(), 0600), 0);
    EXPECT_EQ(active(), 1);
}

// Newer drivers (580 on the H100 machine) make "control" a UNIX domain socket, not a FIFO.
TEST_F(MpsDir, ControlSocketIsOn) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = (dir_ / "control").string();
    ASSERT_LT(path.size(), sizeof(addr.sun_path));
    std::strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0) << std::strerror(errno);
    point_at(dir_);
    EXPECT_EQ(active(), 1);
    ::close(fd);
}

TEST_F(MpsDir, EmptyDirectoryIsOff) {
    point_at(dir_);
    EXPECT_EQ(active(), 0);
}

TEST_F(MpsDir, MissingDirectoryIsOff) {
    point_at(dir_ / "no_such_dir");
    EXPECT_EQ(active(), 0);
    point_at(dir_ / "no_such_dir" / "deeper");
    EXPECT_EQ(active(), 0);
}

TEST_F(MpsDir, ControlThatIsNoFifoIsOff) {
    std::ofstream(dir_ / "control") << "not a pipe\n";
    point_at(dir_);
    EXPECT_EQ(active(), 0);
    fs::remove(dir_ / "control");
    fs::create_directory(dir_ / "control");
    EXPECT_EQ(active(), 0);
}

TEST_F(MpsDir, PipeDirectoryThatIsAFileIsOff) {   // ENOTDIR: the path's parent is a plain file
    std::ofstream(dir_ / "file") << "x";
    point_at(dir_ / "file");
    EXPECT_EQ(active(), 0);
}

TEST_F(MpsDir, UnsetOrEmptyVariableMeansCudasDefault) {
    std::error_code ec;
    const int expected = fs::is_fifo("/tmp/nvidia-mps/control", ec) ? 1 : 0;
    ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_EQ(active(), expected);
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", "", 1);
    EXPECT_EQ(active(), expected);
}

TEST_F(MpsDir, TheVariableIsReadAtEachCall) {   // not cached: a daemon started later is seen
    point_at(dir_);
    EXPECT_EQ(active(), 0);
    ASSERT_EQ(::mkfifo((dir_ / "control").c_str(), 0600), 0);
    EXPECT_EQ(active(), 1);
    fs::remove(dir_ / "control");
    EXPECT_EQ(active(), 0);
}

// A control entry stat cannot resolve for another reason than "absent" (here a symlink loop, which root meets
// too, unlike a directory without search permission) leaves the answer unknown: an error, not "off".
TEST_F(MpsDir, UninspectableControlIsAnErrorNotOff) {
    ASSERT_EQ(::symlink("control", (dir_ / "control").c_str()), 0) << std::strerror(errno);
    point_at(dir_);
    int a = -7;
    EXPECT_EQ(qmmm_gpu_mps_active(&a), QMMM_ERR_FILE_OPEN);
    EXPECT_EQ(a, 0);
    EXPECT_NE(std::strstr(qmmm_error_message(), (dir_ / "control").c_str()), nullptr) << qmmm_error_message();
}

TEST_F(MpsDir, SymlinkToTheFifoIsOn) {   // stat follows links, as a client opening the pipe does
    ASSERT_EQ(::mkfifo((dir_ / "real_control").c_str(), 0600), 0);
    ASSERT_EQ(::symlink("real_control", (dir_ / "control").c_str()), 0);
    point_at(dir_);
    EXPECT_EQ(active(), 1);
}

TEST(Mps, NullArgument) {
    EXPECT_EQ(qmmm_gpu_mps_active(nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_NE(std::strstr(qmmm_error_message(), "qmmm_gpu_mps_active: active is NULL"), nullptr) << qmmm_error_message();
}

}  // namespace
