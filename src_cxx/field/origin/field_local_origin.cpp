// field_local_origin.cpp -- the local origin of SINGLE fields far from the coordinate origin (field_local_origin.hpp).
#include "origin/field_local_origin.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/field_factory.hpp"

namespace qmmm {

namespace {

class FieldLocalOrigin final : public FieldBackend {
public:
    FieldLocalOrigin(std::unique_ptr<FieldBackend> inner, const double o[3]) : inner_(std::move(inner)) {
        std::copy(o, o + 3, origin_);
    }
    // The moved points live in a buffer of the field (grown, not allocated per call); every backend has read them
    // when eval_async returns (the CUDA backend copies them to its staging memory first), so the next call may
    // overwrite them.
    int eval(int64_t n, const double *xyz, double *u) override { return inner_->eval(n, moved(n, xyz), u); }
    int eval_async(int64_t n, const double *xyz, double *u) override {
        return inner_->eval_async(n, moved(n, xyz), u);
    }
    int wait() override { return inner_->wait(); }
    int backend() const override { return inner_->backend(); }
    int precision() const override { return inner_->precision(); }
    int device() const override { return inner_->device(); }
    int cpu_isa() const override { return inner_->cpu_isa(); }
    void low_latency(int *running, int64_t *launches) const override { inner_->low_latency(running, launches); }
    const FieldBackend *wrapped() const override { return inner_.get(); }
    int64_t merge_from() const override { return inner_->merge_from(); }  // points moved one by one

private:
    const double *moved(int64_t n, const double *xyz) {
        if (static_cast<int64_t>(buf_.size()) < 3 * n) buf_.resize(static_cast<size_t>(3 * n));
        for (int64_t i = 0; i < 3 * n; ++i) buf_[i] = xyz[i] - origin_[i % 3];
        return buf_.data();
    }

    std::unique_ptr<FieldBackend> inner_;
    double origin_[3];
    std::vector<double> buf_;
};

}  // namespace

std::unique_ptr<FieldBackend> wrap_local_origin(std::unique_ptr<FieldBackend> inner, const double origin[3]) {
    return std::make_unique<FieldLocalOrigin>(std::move(inner), origin);
}

void move_field(FieldData &d, const double origin[3]) {
    for (std::vector<double> *v : {&d.cell_xyz, &d.nuc_xyz, &d.heavy_xyz})
        for (size_t i = 0; i < v->size(); ++i) (*v)[i] -= origin[i % 3];
}

bool local_origin(const FieldData &d, const qmmm_options &o, double origin[3], const std::vector<double> &sx,
                  const std::vector<double> &sy, const std::vector<double> &sz) {
    if (o.precision != QMMM_PRECISION_SINGLE || o.method == QMMM_METHOD_SPLIT) return false;
    double lo[3], hi[3];
    std::fill(lo, lo + 3, std::numeric_limits<double>::infinity());
    std::fill(hi, hi + 3, -std::numeric_limits<double>::infinity());
    for (const std::vector<double> *v : {&d.cell_xyz, &d.nuc_xyz})
        for (size_t i = 0; i < v->size(); ++i)
            lo[i % 3] = std::min(lo[i % 3], (*v)[i]), hi[i % 3] = std::max(hi[i % 3], (*v)[i]);
    int k = 0;
    for (const std::vector<double> *v : {&sx, &sy, &sz}) {
        for (double c : *v) lo[k] = std::min(lo[k], c), hi[k] = std::max(hi[k], c);
        ++k;
    }
    bool far = false;
    for (k = 0; k < 3; ++k) {
        if (!(lo[k] <= hi[k])) return false;  // no cells, nuclei or screened charges
        origin[k] = std::nearbyint(0.5 * lo[k] + 0.5 * hi[k]);
        // Worth it where the box is small beside its distance: offsets then round finer than the coordinates.
        const double reach = std::max(std::fabs(lo[k]), std::fabs(hi[k])), half_width = 0.5 * (hi[k] - lo[k]);
        far = far || reach > std::max(kLocalOriginMin, 4 * half_width);
    }
    return far;
}

}  // namespace qmmm
