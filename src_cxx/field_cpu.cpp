// field_cpu.cpp -- the CPU backend of the embedding field: the reference every other path is checked
// against.
//
// Determinism: cells are cut into fixed chunks of kChunk (padded with zero charges far away). A chunk's
// partial sum is computed by one function with kLanes independent accumulators, summed in a fixed order;
// a point's value is the chunk partials added in chunk order. Threads only decide who computes which
// (point, chunk) pair, so the value is bitwise the same for any thread count or batch.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "error.hpp"
#include "field_backend.hpp"

namespace qmmm {
namespace {

constexpr int kLanes = 16;
constexpr int64_t kChunk = 1024;
constexpr double kEps2 = kSingularRadius * kSingularRadius;
// Padding cells sit here with zero charge; 1/r underflows to 0 there for any sensible point.
constexpr double kFarD = 1e300;
constexpr float kFarF = 1e30f;

template <class T>
T lane_sum(const T *acc) {
    // Pairwise, fixed order.
    T s[kLanes / 2];
    for (int l = 0; l < kLanes / 2; ++l) s[l] = acc[l] + acc[l + kLanes / 2];
    for (int w = kLanes / 4; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) s[l] += s[l + w];
    return s[0];
}

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

QMMM_CLONES double chunk_double(const double *__restrict x, const double *__restrict y,
                                const double *__restrict z, const double *__restrict q, double px,
                                double py, double pz, double self) {
    double acc[kLanes] = {};
    for (int64_t i = 0; i < kChunk; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const double dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const double d2 = dx * dx + dy * dy + dz * dz;
            const double inv = d2 < kEps2 ? self : 1.0 / std::sqrt(d2);
            acc[l] += q[i + l] * inv;
        }
    }
    return lane_sum(acc);
}

QMMM_CLONES float chunk_single(const float *__restrict x, const float *__restrict y,
                               const float *__restrict z, const float *__restrict q, float px, float py,
                               float pz, float self) {
    float acc[kLanes] = {};
    const float eps2 = static_cast<float>(kEps2);
    for (int64_t i = 0; i < kChunk; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const float dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const float d2 = dx * dx + dy * dy + dz * dz;
            const float inv = d2 < eps2 ? self : 1.0f / std::sqrt(d2);
            acc[l] += q[i + l] * inv;
        }
    }
    return lane_sum(acc);
}

// Float pair terms from offsets to the chunk's double origin; double accumulation.
QMMM_CLONES double chunk_mixed(const float *__restrict x, const float *__restrict y,
                               const float *__restrict z, const float *__restrict q, float px, float py,
                               float pz, float self) {
    double acc[kLanes] = {};
    const float eps2 = static_cast<float>(kEps2);
    for (int64_t i = 0; i < kChunk; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const float dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const float d2 = dx * dx + dy * dy + dz * dz;
            const float inv = d2 < eps2 ? self : 1.0f / std::sqrt(d2);
            acc[l] += static_cast<double>(q[i + l] * inv);
        }
    }
    return lane_sum(acc);
}

class FieldCpu final : public FieldBackend {
public:
    FieldCpu(const FieldData &d, const qmmm_options &opt)
        : data_(d), precision_(opt.precision), threads_(opt.n_threads) {
        n_chunks_ = (d.n_cells + kChunk - 1) / kChunk;
        const size_t padded = static_cast<size_t>(n_chunks_ * kChunk);
        if (precision_ == QMMM_PRECISION_DOUBLE) {
            xd_.assign(padded, kFarD), yd_.assign(padded, kFarD), zd_.assign(padded, kFarD);
            qd_.assign(padded, 0.0);
            for (int64_t m = 0; m < d.n_cells; ++m) {
                xd_[m] = d.cell_xyz[3 * m], yd_[m] = d.cell_xyz[3 * m + 1], zd_[m] = d.cell_xyz[3 * m + 2];
                qd_[m] = d.cell_q[m];
            }
        } else {
            xf_.assign(padded, kFarF), yf_.assign(padded, kFarF), zf_.assign(padded, kFarF);
            qf_.assign(padded, 0.0f);
            origin_.assign(3 * static_cast<size_t>(n_chunks_), 0.0);
            for (int64_t c = 0; c < n_chunks_; ++c) {
                const int64_t b = c * kChunk, e = std::min(d.n_cells, b + kChunk);
                double o[3] = {0, 0, 0};
                if (precision_ == QMMM_PRECISION_MIXED) {
                    // Centre of the chunk's bounding box: offsets stay as small as the chunk.
                    for (int k = 0; k < 3; ++k) {
                        double lo = d.cell_xyz[3 * b + k], hi = lo;
                        for (int64_t m = b; m < e; ++m)
                            lo = std::min(lo, d.cell_xyz[3 * m + k]), hi = std::max(hi, d.cell_xyz[3 * m + k]);
                        o[k] = 0.5 * (lo + hi);
                    }
                }
                for (int k = 0; k < 3; ++k) origin_[3 * c + k] = o[k];
                for (int64_t m = b; m < e; ++m) {
                    xf_[m] = static_cast<float>(d.cell_xyz[3 * m] - o[0]);
                    yf_[m] = static_cast<float>(d.cell_xyz[3 * m + 1] - o[1]);
                    zf_[m] = static_cast<float>(d.cell_xyz[3 * m + 2] - o[2]);
                    qf_[m] = static_cast<float>(d.cell_q[m]);
                }
            }
        }
        // The cells now live in the layouts above.
        data_.cell_xyz.clear(), data_.cell_xyz.shrink_to_fit();
        data_.cell_q.clear(), data_.cell_q.shrink_to_fit();
    }

    int backend() const override { return QMMM_BACKEND_CPU; }
    int precision() const override { return precision_; }

    int eval(int64_t n, const double *xyz, double *u) override {
        const int nt = threads_ > 0 ? threads_ : omp_get_max_threads();
        if (n_chunks_ > 0) {
            if (n >= nt) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
                for (int64_t p = 0; p < n; ++p) u[p] = electron_term(xyz + 3 * p);
            } else {
                // Few points: spread the chunks over threads, then add partials in chunk order.
                std::vector<double> part(static_cast<size_t>(n_chunks_));
                for (int64_t p = 0; p < n; ++p) {
#pragma omp parallel for schedule(static) num_threads(nt)
                    for (int64_t c = 0; c < n_chunks_; ++c) part[c] = chunk(c, xyz + 3 * p);
                    u[p] = sum_partials(part.data());
                }
            }
        } else {
            std::fill(u, u + n, 0.0);
        }
        add_nuclear_term(data_, n, xyz, u);
        return QMMM_SUCCESS;
    }

private:
    // Partial of chunk c; in SINGLE the float value is carried in a double exactly.
    double chunk(int64_t c, const double *p) const {
        const size_t b = static_cast<size_t>(c * kChunk);
        const double self = data_.cell_self_inv_r;
        switch (precision_) {
            case QMMM_PRECISION_DOUBLE:
                return chunk_double(&xd_[b], &yd_[b], &zd_[b], &qd_[b], p[0], p[1], p[2], self);
            case QMMM_PRECISION_SINGLE:
                return chunk_single(&xf_[b], &yf_[b], &zf_[b], &qf_[b], static_cast<float>(p[0]),
                                    static_cast<float>(p[1]), static_cast<float>(p[2]),
                                    static_cast<float>(self));
            default: {
                const double *o = &origin_[3 * static_cast<size_t>(c)];
                return chunk_mixed(&xf_[b], &yf_[b], &zf_[b], &qf_[b], static_cast<float>(p[0] - o[0]),
                                   static_cast<float>(p[1] - o[1]), static_cast<float>(p[2] - o[2]),
                                   static_cast<float>(self));
            }
        }
    }
    double sum_partials(const double *part) const {
        if (precision_ == QMMM_PRECISION_SINGLE) {
            float s = 0.0f;
            for (int64_t c = 0; c < n_chunks_; ++c) s += static_cast<float>(part[c]);
            return s;
        }
        double s = 0.0;
        for (int64_t c = 0; c < n_chunks_; ++c) s += part[c];
        return s;
    }
    double electron_term(const double *p) const {
        if (precision_ == QMMM_PRECISION_SINGLE) {
            float s = 0.0f;
            for (int64_t c = 0; c < n_chunks_; ++c) s += static_cast<float>(chunk(c, p));
            return s;
        }
        double s = 0.0;
        for (int64_t c = 0; c < n_chunks_; ++c) s += chunk(c, p);
        return s;
    }

    FieldData data_;
    int precision_, threads_;
    int64_t n_chunks_ = 0;
    std::vector<double> xd_, yd_, zd_, qd_;
    std::vector<float> xf_, yf_, zf_, qf_;
    std::vector<double> origin_;
};

}  // namespace

void add_nuclear_term(const FieldData &d, int64_t n, const double *xyz, double *u) {
    for (int64_t p = 0; p < n; ++p) {
        double s = 0.0;
        for (int64_t b = 0; b < d.n_nuclei; ++b) {
            const double dx = xyz[3 * p] - d.nuc_xyz[3 * b], dy = xyz[3 * p + 1] - d.nuc_xyz[3 * b + 1],
                         dz = xyz[3 * p + 2] - d.nuc_xyz[3 * b + 2];
            s += d.nuc_z[b] / std::sqrt(dx * dx + dy * dy + dz * dz);
        }
        u[p] -= s;
    }
}

std::unique_ptr<FieldBackend> make_field_cpu(const FieldData &d, const qmmm_options &opt) {
    return std::make_unique<FieldCpu>(d, opt);
}

}  // namespace qmmm
