// test_rdf_frames.hpp -- frame batches for the RDF tests: several frames (different atoms and boxes) counted
// frame by frame or in one qmmm_rdf_add_frames call, with every result kept for bitwise comparison.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "qmmm_accel.h"
#include "test_rdf_reference.hpp"

namespace rdfframes {

struct Out {
    std::vector<int64_t> hist;
    std::vector<double> g, n;
    int64_t frames = 0;
    double volume = 0;
    qmmm_rdf_stats st{};
    int status = 0;
    std::string message;
};

// Frames of n atoms in boxes that change from frame to frame (orthorhombic, then triclinic if tri).
inline std::vector<rdfref::System> frames(int count, int64_t n, bool tri, uint64_t seed) {
    std::vector<rdfref::System> fs;
    for (int f = 0; f < count; ++f) {
        const double L = 30.0 + 0.7 * f;
        double box[9] = {L, 0, 0, 0, L + 1, 0, 0, 0, L - 1};
        if (tri) box[3] = 4.0 + f, box[6] = -3.0, box[7] = 2.5;
        fs.push_back(rdfref::gas(n, box, seed + f));
    }
    return fs;
}

// batch: one qmmm_rdf_add_frames call (else qmmm_rdf_add_frame per frame). mol: molecule ids or empty.
inline Out run(const std::vector<rdfref::System> &fs, bool batch, int backend, std::vector<int> devices, double rmax,
               int nb, const std::vector<int64_t> &mol = {}, int method = QMMM_RDF_METHOD_AUTO) {
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    o.backend = backend, o.method = method;
    o.n_devices = static_cast<int32_t>(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) o.devices[i] = devices[i];
    qmmm_rdf h = nullptr;
    Out r;
    EXPECT_EQ(qmmm_rdf_create(&h, 0.0, rmax, nb, &o), 0) << qmmm_error_message();
    EXPECT_EQ(qmmm_rdf_set_selection_self(h, fs[0].n(), mol.empty() ? nullptr : mol.data()), 0);
    if (batch) {
        std::vector<double> xyz, box;
        for (const auto &f : fs) xyz.insert(xyz.end(), f.xyz.begin(), f.xyz.end()), box.insert(box.end(), f.box, f.box + 9);
        r.status = qmmm_rdf_add_frames(h, static_cast<int64_t>(fs.size()), xyz.data(), nullptr, box.data());
    } else {
        for (const auto &f : fs)
            if ((r.status = qmmm_rdf_add_frame(h, f.xyz.data(), nullptr, f.box)) != 0) break;
    }
    if (r.status) r.message = qmmm_error_message();
    r.hist.resize(nb), r.g.resize(nb), r.n.resize(nb);
    EXPECT_EQ(qmmm_rdf_results(h, nullptr, r.g.data(), r.n.data(), r.hist.data(), &r.frames, &r.volume), 0);
    qmmm_rdf_stats_last(h, &r.st);
    qmmm_rdf_destroy(h);
    return r;
}

// Everything bitwise equal (EXPECT_EQ on doubles on purpose).
inline void expect_same(const Out &a, const Out &b, const std::string &what) {
    EXPECT_EQ(a.status, b.status) << what;
    EXPECT_EQ(a.hist, b.hist) << what;
    EXPECT_EQ(a.g, b.g) << what;
    EXPECT_EQ(a.n, b.n) << what;
    EXPECT_EQ(a.frames, b.frames) << what;
    EXPECT_EQ(a.volume, b.volume) << what;
}

}  // namespace rdfframes
