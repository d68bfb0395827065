// test_rdf_errors.cpp -- bad input gets a clear status and a message naming what was wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "qmmm_accel.h"

namespace {

bool says(const char *what) { return std::string(qmmm_error_message()).find(what) != std::string::npos; }

qmmm_rdf make(double rmax = 5.0) {
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = QMMM_BACKEND_CPU;
    qmmm_rdf h = nullptr;
    EXPECT_EQ(qmmm_rdf_create(&h, 0.0, rmax, 50, &o), QMMM_SUCCESS);
    return h;
}

TEST(RdfErrors, Create) {
    qmmm_rdf h;
    EXPECT_EQ(qmmm_rdf_create(nullptr, 0, 1, 10, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_rdf_create(&h, 2, 1, 10, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("r_min"));
    EXPECT_EQ(qmmm_rdf_create(&h, 0, NAN, 10, nullptr), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_rdf_create(&h, 0, 1, 0, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("n_bins"));
    // r_max whose float square leaves the normal floats: refused, not a NaN bin for a pair at distance 0.
    EXPECT_EQ(qmmm_rdf_create(&h, 0, 1e-300, 1, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("r_max = 1e-300 is outside [1e-6, 1e15]"));
    EXPECT_EQ(qmmm_rdf_create(&h, 0, 1e20, 10, nullptr), QMMM_ERR_INVALID_ARG);
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.method = 7;
    EXPECT_EQ(qmmm_rdf_create(&h, 0, 1, 10, &o), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("opt->method"));
    qmmm_rdf_options_default(&o);
    o.backend = QMMM_BACKEND_CUDA;
    o.n_devices = 1, o.devices[0] = 999;
    // Without CUDA or a GPU: no CUDA / no device. With a GPU (found when this ran on the H100): device 999 is
    // not one of the visible devices.
    int n_dev = 0;
    const bool gpu = qmmm_cuda_device_count(&n_dev) == QMMM_SUCCESS && n_dev > 0;
    const int s = qmmm_rdf_create(&h, 0, 1, 10, &o);
    if (gpu) {
        EXPECT_EQ(s, QMMM_ERR_INVALID_ARG);
        EXPECT_TRUE(says("opt->devices[0] = 999")) << qmmm_error_message();
    } else {
        EXPECT_TRUE(s == QMMM_ERR_NO_CUDA || s == QMMM_ERR_NO_DEVICE) << s;
        EXPECT_TRUE(says("CUDA") || says("device")) << qmmm_error_message();
    }
}

TEST(RdfErrors, SelectionsAndFrames) {
    qmmm_rdf h = make();
    const double box[9] = {20, 0, 0, 0, 20, 0, 0, 0, 20};
    std::vector<double> xyz(30, 1.0);
    for (int i = 0; i < 10; ++i) xyz[3 * i] = i;
    EXPECT_EQ(qmmm_rdf_add_frame(h, xyz.data(), nullptr, box), QMMM_ERR_INVALID_ARG);  // no selection yet
    EXPECT_TRUE(says("set_selections"));
    EXPECT_EQ(qmmm_rdf_set_selection_self(h, 0, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("empty"));
    EXPECT_EQ(qmmm_rdf_set_selections(h, 10, nullptr, nullptr, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("n2"));
    const int64_t id[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    EXPECT_EQ(qmmm_rdf_set_selections(h, 10, id, nullptr, 10, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    const int64_t one_mol[10] = {0};
    EXPECT_EQ(qmmm_rdf_set_selection_self(h, 10, one_mol), QMMM_ERR_INVALID_ARG);  // all in one molecule
    EXPECT_TRUE(says("no pair"));
    ASSERT_EQ(qmmm_rdf_set_selection_self(h, 10, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_rdf_add_frame(h, nullptr, nullptr, box), QMMM_ERR_NULL_ARG);
    EXPECT_TRUE(says("xyz1"));
    EXPECT_EQ(qmmm_rdf_add_frame(h, xyz.data(), nullptr, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_TRUE(says("box"));
    xyz[7] = INFINITY;
    EXPECT_EQ(qmmm_rdf_add_frame(h, xyz.data(), nullptr, box), QMMM_ERR_NONFINITE);
    EXPECT_TRUE(says("xyz1") && says("atom 2"));
    xyz[7] = 1;
    const double flat[9] = {20, 0, 0, 0, 20, 0, 10, 10, 0};
    EXPECT_EQ(qmmm_rdf_add_frame(h, xyz.data(), nullptr, flat), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("volume"));
    const double small[9] = {9, 0, 0, 0, 20, 0, 0, 0, 20};  // limit 4.5 < r_max 5
    EXPECT_EQ(qmmm_rdf_add_frame(h, xyz.data(), nullptr, small), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("r_max") && says("4.5")) << qmmm_error_message();
    int64_t nf = -1;
    ASSERT_EQ(qmmm_rdf_results(h, nullptr, nullptr, nullptr, nullptr, &nf, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(nf, 0);  // failed frames add nothing
    EXPECT_EQ(qmmm_rdf_add_frame(h, xyz.data(), nullptr, box), QMMM_SUCCESS);
    // CELLS where the box is too narrow for it
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = QMMM_BACKEND_CPU, o.method = QMMM_RDF_METHOD_CELLS;
    qmmm_rdf c;
    ASSERT_EQ(qmmm_rdf_create(&c, 0, 9, 10, &o), 0);
    ASSERT_EQ(qmmm_rdf_set_selection_self(c, 10, nullptr), 0);
    EXPECT_EQ(qmmm_rdf_add_frame(c, xyz.data(), nullptr, box), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says("CELLS"));
    EXPECT_EQ(qmmm_rdf_destroy(c), 0);
    EXPECT_EQ(qmmm_rdf_destroy(h), QMMM_SUCCESS);
}

// Method CELLS takes every box at least 2.5 r_max wide, as the header says, and counts what BRUTE counts; a
// narrower one is refused with a message whose numbers agree. Before, a width of exactly 2.5 r_max and a cell very
// long along another axis (7.67 x 7.67 x 1e8 with r_max 0.21) were refused, with "needs >= X; this box's is Y",
// Y >= X.
TEST(RdfErrors, CellsTakesEveryBoxTheHeaderAllows) {
    struct Case {
        double r_max, box[9];
    };
    const Case cases[] = {{4.8, {12, 0, 0, 0, 12.5, 0, 0, 0, 13}},
                          {0.21, {7.67, 0, 0, 0, 7.67, 0, 0, 0, 1e8}},
                          {0.21, {7.67, 0, 0, 0, 7.67, 0, 0, 0, 7.67}}};
    std::vector<double> xyz;
    for (int i = 0; i < 40; ++i)
        xyz.insert(xyz.end(), {std::fmod(1.3 * i, 7.6), std::fmod(0.7 * i * i, 7.6), std::fmod(2.9 * i, 7.6)});
    for (const Case &c : cases) {
        std::vector<int64_t> hist[2];
        for (int method : {QMMM_RDF_METHOD_CELLS, QMMM_RDF_METHOD_BRUTE}) {
            qmmm_rdf_options o;
            qmmm_rdf_options_default(&o);
            o.backend = QMMM_BACKEND_CPU, o.method = method;
            qmmm_rdf h = nullptr;
            ASSERT_EQ(qmmm_rdf_create(&h, 0.0, c.r_max, 20, &o), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_rdf_set_selection_self(h, 40, nullptr), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_rdf_add_frame(h, xyz.data(), xyz.data(), c.box), QMMM_SUCCESS)
                << "r_max " << c.r_max << ": " << qmmm_error_message();
            auto &hh = hist[method == QMMM_RDF_METHOD_CELLS ? 0 : 1];
            hh.assign(20, -1);
            ASSERT_EQ(qmmm_rdf_results(h, nullptr, nullptr, nullptr, hh.data(), nullptr, nullptr), QMMM_SUCCESS);
            qmmm_rdf_destroy(h);
        }
        EXPECT_EQ(hist[0], hist[1]) << "r_max " << c.r_max;
    }
    // 2.5 * 3.07 = 7.675 > 7.67: refused, and the message's numbers say why.
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = QMMM_BACKEND_CPU, o.method = QMMM_RDF_METHOD_CELLS;
    qmmm_rdf h = nullptr;
    ASSERT_EQ(qmmm_rdf_create(&h, 0.0, 3.07, 20, &o), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_rdf_set_selection_self(h, 40, nullptr), QMMM_SUCCESS);
    const double box[9] = {7.67, 0, 0, 0, 7.67, 0, 0, 0, 7.67};
    EXPECT_EQ(qmmm_rdf_add_frame(h, xyz.data(), xyz.data(), box), QMMM_ERR_INVALID_ARG);
    EXPECT_TRUE(says(">= 2.5 r_max = 7.675; this box's smallest is 7.67")) << qmmm_error_message();
    qmmm_rdf_destroy(h);
}

TEST(RdfErrors, Handles) {
    qmmm_rdf h = make();
    EXPECT_EQ(qmmm_rdf_destroy(h), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_rdf_destroy(h), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_rdf_reset(h), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_rdf_destroy(nullptr), QMMM_ERR_BAD_HANDLE);
    qmmm_rdf_stats st;
    EXPECT_EQ(qmmm_rdf_stats_last(nullptr, &st), QMMM_ERR_BAD_HANDLE);
    double lim;
    EXPECT_EQ(qmmm_rdf_box_limit(nullptr, &lim), QMMM_ERR_NULL_ARG);
    const double box[9] = {10, 0, 0, 0, 12, 0, 0, 0, 14};
    ASSERT_EQ(qmmm_rdf_box_limit(box, &lim), 0);
    EXPECT_DOUBLE_EQ(lim, 5.0);
    EXPECT_EQ(qmmm_rdf_release(), QMMM_SUCCESS);
}

TEST(RdfErrors, Cut) {
    qmmm_rdf h = make();  // r_max 5
    EXPECT_EQ(qmmm_rdf_set_cut(nullptr, 1.0), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_rdf_set_cut(h, std::nan("")), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_rdf_set_cut(h, -0.5), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_rdf_set_cut(h, 5.0), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("r_cut"), std::string::npos) << qmmm_error_message();
    EXPECT_EQ(qmmm_rdf_set_cut(h, 1.5), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_rdf_set_selection_self(h, 2, nullptr), QMMM_SUCCESS);
    const double box[9] = {12, 0, 0, 0, 12, 0, 0, 0, 12}, xyz[6] = {1, 1, 1, 2, 1, 1};
    ASSERT_EQ(qmmm_rdf_add_frame(h, xyz, nullptr, box), QMMM_SUCCESS);
    int64_t hist[50];
    ASSERT_EQ(qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist, nullptr, nullptr), QMMM_SUCCESS);
    int64_t total = 0;
    for (auto v : hist) total += v;
    EXPECT_EQ(total, 0);  // the one pair (r = 1) is closer than the cut
    EXPECT_EQ(qmmm_rdf_set_cut(h, 0.5), QMMM_ERR_INVALID_ARG);  // frames counted with the other cut
    EXPECT_EQ(qmmm_rdf_reset(h), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_rdf_set_cut(h, 0.5), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_rdf_add_frame(h, xyz, nullptr, box), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist, nullptr, nullptr), QMMM_SUCCESS);
    total = 0;
    for (auto v : hist) total += v;
    EXPECT_EQ(total, 1);
    EXPECT_EQ(qmmm_rdf_destroy(h), QMMM_SUCCESS);
}

}  // namespace
