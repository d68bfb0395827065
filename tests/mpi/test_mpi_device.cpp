// test_mpi_device.cpp -- qmmm_pick_device on made-up node layouts: which GPU each rank of a node gets.
// The expected devices are written out by hand from the rule in qmmm_accel_mpi.h.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "qmmm_accel.h"

namespace {

// Devices of ranks 0..local_size-1 of one node.
std::vector<int> node(int local_size, int n_devices, const char *spec) {
    std::vector<int> d(static_cast<size_t>(local_size), -99);
    for (int r = 0; r < local_size; ++r) EXPECT_EQ(qmmm_pick_device(r, local_size, n_devices, spec, &d[r]), QMMM_SUCCESS)
        << qmmm_error_message();
    return d;
}

void expect_message(const char *fragment) {
    EXPECT_NE(std::strstr(qmmm_error_message(), fragment), nullptr)
        << "message '" << qmmm_error_message() << "' should mention '" << fragment << "'";
}

TEST(PickDevice, RoundRobinOverTheNodesGpus) {
    EXPECT_EQ(node(1, 1, ""), (std::vector<int>{0}));
    EXPECT_EQ(node(4, 4, ""), (std::vector<int>{0, 1, 2, 3}));                  // one rank per GPU
    EXPECT_EQ(node(8, 4, ""), (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3}));      // two ranks per GPU
    EXPECT_EQ(node(16, 1, ""), std::vector<int>(16, 0));                       // 16 ranks share one H100
    EXPECT_EQ(node(3, 2, ""), (std::vector<int>{0, 1, 0}));                     // uneven sharing
    EXPECT_EQ(node(2, 8, ""), (std::vector<int>{0, 1}));                        // fewer ranks than GPUs
}

TEST(PickDevice, NoGpuMeansMinusOne) {
    EXPECT_EQ(node(3, 0, ""), (std::vector<int>{-1, -1, -1}));
}

TEST(PickDevice, SpecFixesOrListsDevices) {
    EXPECT_EQ(node(3, 4, "2"), (std::vector<int>{2, 2, 2}));
    EXPECT_EQ(node(5, 4, "1,3"), (std::vector<int>{1, 3, 1, 3, 1}));
    EXPECT_EQ(node(4, 4, " 3 , 2,1,0 "), (std::vector<int>{3, 2, 1, 0}));
    EXPECT_EQ(node(2, 4, "   "), (std::vector<int>{0, 1}));  // blank = not set
}

TEST(PickDevice, EnvironmentWhenSpecIsNull) {
    ::setenv("QMMM_DEVICE", "1", 1);
    EXPECT_EQ(node(3, 2, nullptr), (std::vector<int>{1, 1, 1}));
    EXPECT_EQ(node(3, 2, ""), (std::vector<int>{0, 1, 0}));  // an explicit spec wins over the environment
    ::setenv("QMMM_DEVICE", "0,x", 1);
    int d = 0;
    EXPECT_EQ(qmmm_pick_device(0, 1, 2, nullptr, &d), QMMM_ERR_INVALID_ARG);
    expect_message("environment variable QMMM_DEVICE = '0,x'");
    ::unsetenv("QMMM_DEVICE");
    EXPECT_EQ(node(3, 2, nullptr), (std::vector<int>{0, 1, 0}));
}

TEST(PickDevice, BadArguments) {
    int d = 0;
    EXPECT_EQ(qmmm_pick_device(0, 1, 1, "", nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_pick_device(3, 3, 1, "", &d), QMMM_ERR_INVALID_ARG);
    expect_message("local_rank = 3, local_size = 3");
    EXPECT_EQ(qmmm_pick_device(-1, 3, 1, "", &d), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_pick_device(0, 0, 1, "", &d), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_pick_device(0, 1, -2, "", &d), QMMM_ERR_INVALID_ARG);
    for (const char *bad : {"a", "1,", ",1", "1,,2", "-1", "1.5", "1 2", "9999999"}) {
        EXPECT_EQ(qmmm_pick_device(0, 1, 4, bad, &d), QMMM_ERR_INVALID_ARG) << bad;
        expect_message("is not a device index");
    }
    EXPECT_EQ(qmmm_pick_device(1, 2, 2, "0,2", &d), QMMM_ERR_INVALID_ARG);  // device 2 does not exist: a bad index
    expect_message("names device 2 but this process sees 2 CUDA device(s)");
    EXPECT_EQ(d, -1);
    EXPECT_EQ(qmmm_pick_device(0, 1, 0, "0", &d), QMMM_ERR_NO_DEVICE);   // asks for a GPU on a node without one
}

}  // namespace
