// rdf_api.cpp -- the C API of radial distribution functions: argument checks, selections and exclusion
// keys, backend choice, accumulation over frames and the normalisation (qmmm_accel_rdf.h).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core_backend.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"
#include "handle_registry.hpp"
#include "rdf_backend.hpp"

using qmmm::Error;

struct qmmm_rdf_s {
    double r_min = 0, r_max = 0, cut = 0;
    int32_t n_bins = 0;
    qmmm_rdf_options opt{};
    int backend = QMMM_BACKEND_CPU;
    std::vector<int> devices;
    bool have_sel = false, identical = false;
    bool exclusions = true;  // some pair of the two selections shares an exclusion key
    std::vector<int32_t> key1, key2;
    double n_pairs = 0;
    std::vector<uint64_t> hist;
    int64_t frames = 0;
    double volume_sum = 0;
    qmmm_rdf_stats last{};
    qmmm::rdf::Frame frame;  // kept between frames: its buffers are reused
};

namespace {

qmmm::HandleRegistry<qmmm_rdf_s> &registry() {
    static qmmm::HandleRegistry<qmmm_rdf_s> r;
    return r;
}

qmmm_rdf_s *live(qmmm_rdf h) {
    if (!h) throw Error(QMMM_ERR_BAD_HANDLE, "h is NULL");
    qmmm_rdf_s *obj = registry().get(h);
    if (!obj) throw Error(QMMM_ERR_BAD_HANDLE, "h is not a live RDF handle (destroyed?)");
    return obj;
}

std::vector<int> check_devices(const qmmm_rdf_options &o) {
    return qmmm::check_devices(o.devices, o.n_devices, QMMM_RDF_MAX_DEVICES, "opt->devices");
}

// Dense exclusion keys for two lists of ids (shared numbering) and the pairs they exclude.
void dense_keys(int64_t n1, const int64_t *v1, int64_t n2, const int64_t *v2, std::vector<int32_t> &k1,
                std::vector<int32_t> &k2) {
    std::unordered_map<int64_t, int32_t> rank;
    rank.reserve(static_cast<size_t>(n1 + n2));
    const auto key = [&](int64_t v) {
        auto it = rank.emplace(v, static_cast<int32_t>(rank.size())).first;
        return it->second;
    };
    k1.resize(n1);
    for (int64_t i = 0; i < n1; ++i) k1[i] = key(v1[i]);
    k2.resize(n2);
    for (int64_t i = 0; i < n2; ++i) k2[i] = key(v2[i]);
}

double excluded_ordered(const std::vector<int32_t> &k1, const std::vector<int32_t> &k2) {
    std::unordered_map<int32_t, double> c1;
    for (int32_t k : k1) c1[k] += 1;
    double s = 0;
    for (int32_t k : k2)
        if (auto it = c1.find(k); it != c1.end()) s += it->second;
    return s;
}

void finish_selections(qmmm_rdf_s *h) {
    const double n1 = double(h->key1.size()), n2 = double(h->key2.size());
    const double excluded = h->identical ? excluded_ordered(h->key1, h->key1) - n1 : excluded_ordered(h->key1, h->key2);
    h->exclusions = excluded > 0;  // identical: beyond each atom with itself
    h->n_pairs = h->identical ? 0.5 * (n1 * n1 - n1 - excluded) : n1 * n2 - excluded;
    if (!(h->n_pairs > 0))
        throw Error(QMMM_ERR_INVALID_ARG, "the selections leave no pair to count (every pair is excluded)");
    h->have_sel = true;
    h->hist.assign(h->n_bins, 0);
    h->frames = 0;
    h->volume_sum = 0;
}


void check_frames(qmmm_rdf_s *h, int64_t n_frames, const double *xyz1, const double *xyz2, const double *box) {
    if (!h->have_sel) throw Error(QMMM_ERR_INVALID_ARG, "no selections: call qmmm_rdf_set_selections first");
    if (!xyz1) throw Error(QMMM_ERR_NULL_ARG, "xyz1 is NULL");
    if (!h->identical && !xyz2) throw Error(QMMM_ERR_NULL_ARG, "xyz2 is NULL (the selections are not identical)");
    if (!box) throw Error(QMMM_ERR_NULL_ARG, "box is NULL");
    (void)n_frames;  // the coordinates are checked frame by frame as they are converted (rdf_prepare.cpp, to_fixed)
}

// One frame made ready for counting (thread-safe: only reads the handle); returns the box volume.
double prepare_one(const qmmm_rdf_s *h, qmmm::rdf::Frame &f, const double *xyz1, const double *xyz2,
                   const double *box, int n_threads) {
    const bool sort = h->backend == QMMM_BACKEND_CUDA;
    double volume = 0;
    qmmm::rdf::prepare_frame(f, box, h->r_min, h->r_max, h->n_bins, h->cut, h->opt.method, xyz1, h->key1, xyz2,
                             h->key2, h->identical, volume, sort, n_threads);
    // A block's 32-bit shared counters must not overflow within one item: 256 atoms x stencil x fullest cell.
    // (A cell list the GPU sorts itself has max_cell 0 here: its kernel reads the device's count and counts
    // straight into the 64-bit histogram when that bound fails.)
    if (f.method == QMMM_RDF_METHOD_CELLS && 256.0 * double(f.stencil.size() / 3 + 1) * double(f.max_cell) >= 4294967295.0)
        qmmm::rdf::prepare_frame(f, box, h->r_min, h->r_max, h->n_bins, h->cut, QMMM_RDF_METHOD_BRUTE, xyz1, h->key1, xyz2,
                                 h->key2, h->identical, volume, sort, n_threads);
    f.exclusions = h->exclusions;
    return volume;
}

void set_gpu_stats(const qmmm_rdf_s *h, const qmmm::rdf::GpuRunInfo &info, qmmm_rdf_stats &st) {
    st.n_workers = static_cast<int32_t>(h->devices.size());
    st.n_units = info.n_units;
    for (size_t w = 0; w < info.units_per_worker.size() && w < QMMM_RDF_MAX_DEVICES; ++w)
        st.units_per_worker[w] = info.units_per_worker[w];
}

}  // namespace

extern "C" {

int qmmm_rdf_options_default(qmmm_rdf_options *opt) {
    return qmmm::api_guard("qmmm_rdf_options_default", [&] {
        if (!opt) throw Error(QMMM_ERR_NULL_ARG, "opt is NULL");
        std::memset(opt, 0, sizeof *opt);
        opt->backend = QMMM_BACKEND_AUTO;
        opt->method = QMMM_RDF_METHOD_AUTO;
        opt->kernel = QMMM_RDF_KERNEL_FAST;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_create(qmmm_rdf *out, double r_min, double r_max, int32_t n_bins, const qmmm_rdf_options *opt) {
    return qmmm::api_guard("qmmm_rdf_create", [&] {
        if (!out) throw Error(QMMM_ERR_NULL_ARG, "h (the output handle) is NULL");
        *out = nullptr;
        if (!std::isfinite(r_min) || !std::isfinite(r_max))
            throw Error(QMMM_ERR_NONFINITE, "r_min and r_max must be finite");
        if (r_min < 0 || !(r_max > r_min))
            throw Error(QMMM_ERR_INVALID_ARG, "need 0 <= r_min < r_max (r_min = " + std::to_string(r_min) +
                                                  ", r_max = " + std::to_string(r_max) + ")");
        // The kernels square bin edges in float: below 1e-6 they leave the normal floats (1/width becomes Inf and a pair
        // at distance 0 a NaN bin), above 1e15 the squares near float's limit.
        if (r_max < 1e-6 || r_max > 1e15)
            throw Error(QMMM_ERR_INVALID_ARG, qmmm::strfmt("r_max = %g is outside [1e-6, 1e15] (bin edges are squared "
                                                           "in float)", r_max));
        if (n_bins < 1 || n_bins > (1 << 24))
            throw Error(QMMM_ERR_INVALID_ARG, "n_bins = " + std::to_string(n_bins) + " (1..16777216)");
        auto h = std::make_unique<qmmm_rdf_s>();
        if (opt) qmmm_rdf_options_default(&h->opt), h->opt = *opt;
        else qmmm_rdf_options_default(&h->opt);
        const auto &o = h->opt;
        if (o.backend < QMMM_BACKEND_AUTO || o.backend > QMMM_BACKEND_CUDA)
            throw Error(QMMM_ERR_INVALID_ARG, "opt->backend = " + std::to_string(o.backend) + " (0 AUTO, 1 CPU, 2 CUDA)");
        if (o.method < QMMM_RDF_METHOD_AUTO || o.method > QMMM_RDF_METHOD_CELLS)
            throw Error(QMMM_ERR_INVALID_ARG, "opt->method = " + std::to_string(o.method) + " (0 AUTO, 1 BRUTE, 2 CELLS)");
        if (o.kernel != QMMM_RDF_KERNEL_FAST)
            throw Error(QMMM_ERR_INVALID_ARG, "opt->kernel = " + std::to_string(o.kernel) + " (0 FAST, the only kernel)");
        qmmm::check_threads(o.n_threads, "opt->n_threads");
        h->backend = qmmm::resolve_backend(o.backend);
        if (h->backend == QMMM_BACKEND_CUDA) {
            h->devices = check_devices(o);
            // page-locked atoms: the GPU copies them asynchronously, with no staging copy (rdf_gpu.cu)
            h->frame = qmmm::rdf::Frame(qmmm::GpuRegistry<qmmm::rdf::RdfGpu>::get().host_memory());
        }
        h->r_min = r_min, h->r_max = r_max, h->n_bins = n_bins;
        h->hist.assign(n_bins, 0);
        *out = registry().add(std::move(h));
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_set_selections(qmmm_rdf hh, int64_t n1, const int64_t *id1, const int64_t *mol1, int64_t n2,
                            const int64_t *id2, const int64_t *mol2) {
    return qmmm::api_guard("qmmm_rdf_set_selections", [&] {
        qmmm_rdf_s *h = live(hh);
        h->have_sel = false;
        if (n1 < 1) throw Error(QMMM_ERR_INVALID_ARG, "n1 = " + std::to_string(n1) + ": selection 1 is empty");
        if (n2 < 1) throw Error(QMMM_ERR_INVALID_ARG, "n2 = " + std::to_string(n2) + ": selection 2 is empty");
        if (n1 > INT32_MAX || n2 > INT32_MAX) throw Error(QMMM_ERR_INVALID_ARG, "a selection has more than 2^31-1 atoms");
        if (!id1 != !id2) throw Error(QMMM_ERR_NULL_ARG, "id1 and id2 must both be given or both be NULL");
        if (!mol1 != !mol2) throw Error(QMMM_ERR_NULL_ARG, "mol1 and mol2 must both be given or both be NULL");
        h->identical = id1 && n1 == n2 && std::equal(id1, id1 + n1, id2);
        if (mol1) dense_keys(n1, mol1, n2, mol2, h->key1, h->key2);
        else if (id1) dense_keys(n1, id1, n2, id2, h->key1, h->key2);
        else h->key1.assign(n1, -1), h->key2.assign(n2, -2);
        if (h->identical) h->key2.clear();
        finish_selections(h);
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_set_selection_self(qmmm_rdf hh, int64_t n, const int64_t *mol) {
    return qmmm::api_guard("qmmm_rdf_set_selection_self", [&] {
        qmmm_rdf_s *h = live(hh);
        h->have_sel = false;
        if (n < 1) throw Error(QMMM_ERR_INVALID_ARG, "n = " + std::to_string(n) + ": the selection is empty");
        if (n > INT32_MAX) throw Error(QMMM_ERR_INVALID_ARG, "the selection has more than 2^31-1 atoms");
        h->identical = true;
        std::vector<int32_t> none;
        if (mol) dense_keys(n, mol, 0, nullptr, h->key1, none);
        else {
            h->key1.resize(n);
            for (int64_t i = 0; i < n; ++i) h->key1[i] = static_cast<int32_t>(i);
        }
        h->key2.clear();
        finish_selections(h);
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_set_cut(qmmm_rdf hh, double r_cut) {
    return qmmm::api_guard("qmmm_rdf_set_cut", [&] {
        qmmm_rdf_s *h = live(hh);
        if (!std::isfinite(r_cut)) throw Error(QMMM_ERR_NONFINITE, "r_cut is not finite");
        if (r_cut < 0 || !(r_cut < h->r_max))
            throw Error(QMMM_ERR_INVALID_ARG, "need 0 <= r_cut < r_max (r_cut = " + std::to_string(r_cut) +
                                                  ", r_max = " + std::to_string(h->r_max) + ")");
        if (h->frames > 0)
            throw Error(QMMM_ERR_INVALID_ARG, "r_cut must be set before the first frame (or after qmmm_rdf_reset)");
        h->cut = r_cut;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_add_frame(qmmm_rdf hh, const double *xyz1, const double *xyz2, const double *box) {
    return qmmm::api_guard("qmmm_rdf_add_frame", [&] {
        qmmm_rdf_s *h = live(hh);
        check_frames(h, 1, xyz1, xyz2, box);
        const auto t0 = std::chrono::steady_clock::now();
        auto &f = h->frame;
        const double volume = prepare_one(h, f, xyz1, xyz2, box, h->opt.n_threads);
        const auto t1 = std::chrono::steady_clock::now();
        std::vector<uint64_t> add(h->n_bins, 0);
        qmmm_rdf_stats st{};
        if (h->backend == QMMM_BACKEND_CUDA) {
            qmmm::rdf::GpuRunInfo info;
            qmmm::rdf::gpu_count(f, h->devices, add.data(), &info);
            set_gpu_stats(h, info, st);
        } else {
            qmmm::rdf::cpu_count(f, h->opt.n_threads, add.data());
            st.n_workers = h->opt.n_threads > 0 ? h->opt.n_threads : qmmm::default_threads();
        }
        const auto t2 = std::chrono::steady_clock::now();
        for (int32_t b = 0; b < h->n_bins; ++b) h->hist[b] += add[b];
        h->frames += 1;
        h->volume_sum += volume;
        st.backend = h->backend;
        st.method = f.method;
        st.identical = h->identical;
        st.pairs_visited = f.pairs_visited;
        st.n_pairs = h->n_pairs;
        st.seconds = std::chrono::duration<double>(t2 - t1).count();
        st.prep_seconds = std::chrono::duration<double>(t1 - t0).count();
        h->last = st;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_add_frames(qmmm_rdf hh, int64_t n_frames, const double *xyz1, const double *xyz2, const double *box) {
    return qmmm::api_guard("qmmm_rdf_add_frames", [&] {
        qmmm_rdf_s *h = live(hh);
        if (n_frames < 0) throw Error(QMMM_ERR_INVALID_ARG, "n_frames = " + std::to_string(n_frames) + " < 0");
        if (n_frames == 0) return QMMM_SUCCESS;
        check_frames(h, n_frames, xyz1, xyz2, box);
        const int64_t n1 = static_cast<int64_t>(h->key1.size()), n2 = static_cast<int64_t>(h->key2.size());
        const auto frame_xyz = [&](int64_t k, const double *&x1, const double *&x2) {
            x1 = xyz1 + 3 * n1 * k;
            x2 = h->identical ? nullptr : xyz2 + 3 * n2 * k;
        };
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<uint64_t> add(h->n_bins, 0);
        std::vector<double> volumes(n_frames, 0.0);
        qmmm_rdf_stats st{};
        int method = QMMM_RDF_METHOD_BRUTE;
        if (h->backend == QMMM_BACKEND_CUDA) {
            std::mutex m;
            const qmmm::rdf::PrepareFn prep = [&](int64_t k, qmmm::rdf::Frame &f, int nt) {
                const double *x1, *x2;
                frame_xyz(k, x1, x2);
                const double v = prepare_one(h, f, x1, x2, box + 9 * k, nt);
                std::lock_guard<std::mutex> g(m);
                method = f.method;  // the same for every frame of a fixed box shape; the last one's is reported
                return v;
            };
            qmmm::rdf::GpuRunInfo info;
            qmmm::rdf::gpu_count_frames(n_frames, prep, h->devices, add.data(), volumes, &info,
                                        h->opt.n_threads);
            set_gpu_stats(h, info, st);
            st.pairs_visited = info.pairs_visited;
            st.prep_seconds = info.prep_seconds;
        } else {
            auto &f = h->frame;
            double prep = 0;
            for (int64_t k = 0; k < n_frames; ++k) {
                const double *x1, *x2;
                frame_xyz(k, x1, x2);
                const auto p0 = std::chrono::steady_clock::now();
                try {
                    volumes[k] = prepare_one(h, f, x1, x2, box + 9 * k, h->opt.n_threads);
                } catch (const Error &e) {
                    throw Error(e.status, "frame " + std::to_string(k) + ": " + e.what());
                }
                prep += std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
                qmmm::rdf::cpu_count(f, h->opt.n_threads, add.data());
                st.pairs_visited += f.pairs_visited;
                method = f.method;
            }
            st.n_workers = h->opt.n_threads > 0 ? h->opt.n_threads : qmmm::default_threads();
            st.prep_seconds = prep;
        }
        const auto t1 = std::chrono::steady_clock::now();
        for (int32_t b = 0; b < h->n_bins; ++b) h->hist[b] += add[b];
        h->frames += n_frames;
        for (double v : volumes) h->volume_sum += v;  // in frame order: the same bits as frame by frame
        st.backend = h->backend;
        st.method = method;
        st.identical = h->identical;
        st.n_pairs = h->n_pairs;
        st.seconds = std::chrono::duration<double>(t1 - t0).count();
        h->last = st;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_box_limit(const double *box, double *r_limit) {
    return qmmm::api_guard("qmmm_rdf_box_limit", [&] {
        if (!box) throw Error(QMMM_ERR_NULL_ARG, "box is NULL");
        if (!r_limit) throw Error(QMMM_ERR_NULL_ARG, "r_limit is NULL");
        qmmm::rdf::Geom g{};
        double v, lim, frac[9], w[3];
        qmmm::rdf::make_geom(box, 0.0, 1.0, 1, 0.0, g, v, lim, frac, w);
        *r_limit = lim;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_results(qmmm_rdf hh, double *r_mid, double *g, double *n_cum, int64_t *hist, int64_t *n_frames,
                     double *avg_volume) {
    return qmmm::api_guard("qmmm_rdf_results", [&] {
        qmmm_rdf_s *h = live(hh);
        const double dr = (h->r_max - h->r_min) / h->n_bins;
        const double vbar = h->frames ? h->volume_sum / double(h->frames) : 0.0;
        const double n1 = double(h->key1.size());
        const double per_pair = h->identical ? 2.0 : 1.0;  // unordered pairs count for both atoms
        constexpr double kFourThirdsPi = 4.18879020478639098;
        double cum = 0;
        for (int32_t k = 0; k < h->n_bins; ++k) {
            const double lo = h->r_min + k * dr, hi = h->r_min + (k + 1) * dr;
            if (r_mid) r_mid[k] = h->r_min + (k + 0.5) * dr;
            const double cnt = double(h->hist[k]);
            if (g) {
                const double ideal = double(h->frames) * h->n_pairs * kFourThirdsPi * (hi * hi * hi - lo * lo * lo) / (vbar > 0 ? vbar : 1);
                // A shell whose volume rounds to 0 (bins of ~1e-100) has no ideal count: g is 0 there, never NaN
                // (found by fuzz_capi).
                g[k] = h->frames && ideal > 0 && std::isfinite(ideal) ? cnt / ideal : 0.0;
            }
            cum += cnt * per_pair;
            if (n_cum) n_cum[k] = h->frames && n1 > 0 ? cum / (double(h->frames) * n1) : 0.0;
            if (hist) hist[k] = static_cast<int64_t>(h->hist[k]);
        }
        if (n_frames) *n_frames = h->frames;
        if (avg_volume) *avg_volume = vbar;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_stats_last(qmmm_rdf hh, qmmm_rdf_stats *stats) {
    return qmmm::api_guard("qmmm_rdf_stats_last", [&] {
        qmmm_rdf_s *h = live(hh);
        if (!stats) throw Error(QMMM_ERR_NULL_ARG, "stats is NULL");
        *stats = h->last;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_reset(qmmm_rdf hh) {
    return qmmm::api_guard("qmmm_rdf_reset", [&] {
        qmmm_rdf_s *h = live(hh);
        h->hist.assign(h->n_bins, 0);
        h->frames = 0;
        h->volume_sum = 0;
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_destroy(qmmm_rdf hh) {
    return qmmm::api_guard("qmmm_rdf_destroy", [&] {
        if (!hh) throw Error(QMMM_ERR_BAD_HANDLE, "h is NULL");
        if (!registry().remove(hh)) throw Error(QMMM_ERR_BAD_HANDLE, "h is not a live RDF handle (destroyed twice?)");
        return QMMM_SUCCESS;
    });
}

int qmmm_rdf_release(void) {
    return qmmm::api_guard("qmmm_rdf_release", [&] {
        qmmm::rdf::gpu_release();
        return QMMM_SUCCESS;
    });
}

}  // extern "C"
