// dcs_api.cpp -- the C API of DCS potential maps: argument checks, backend choice, progress, and ion
// placement. The sums are done by dcs_cpu.cpp and (through dcs_pool.cpp) src_cuda/dcs/dcs_gpu.cu; the limits of
// each precision and the points near atoms, the same for every backend, by dcs_limits.cpp.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core_backend.hpp"
#include "dcs_backend.hpp"
#include "dcs_limits.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"

namespace {

using qmmm::Error;
using qmmm::strfmt;

void check_finite(const char *name, const double *a, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(a[i]))
            throw Error(QMMM_ERR_NONFINITE, std::string(name) + ": element " + std::to_string(i) + " is " +
                                                (std::isnan(a[i]) ? "NaN" : "Inf"));
}

// The count and pointers; reads no atom.
void check_atom_args(int64_t n_atoms, const double *xyz, const double *q) {
    if (n_atoms < 0) throw Error(QMMM_ERR_INVALID_ARG, "n_atoms = " + std::to_string(n_atoms) + " is negative");
    if (n_atoms > 0 && !xyz) throw Error(QMMM_ERR_NULL_ARG, "xyz is NULL with n_atoms > 0");
    if (n_atoms > 0 && !q) throw Error(QMMM_ERR_NULL_ARG, "q is NULL with n_atoms > 0");
}

void check_atoms(int64_t n_atoms, const double *xyz, const double *q) {
    check_atom_args(n_atoms, xyz, q);
    check_finite("xyz", xyz, 3 * n_atoms);
    check_finite("q", q, n_atoms);
}

int64_t check_lattice(const qmmm_dcs_lattice *lat) {
    if (!lat) throw Error(QMMM_ERR_NULL_ARG, "lat is NULL");
    const char *ax = "xyz";
    int64_t total = 1;
    for (int d = 0; d < 3; ++d) {
        if (!std::isfinite(lat->origin[d]))
            throw Error(QMMM_ERR_NONFINITE, std::string("lat->origin[") + ax[d] + "] is not finite");
        if (!std::isfinite(lat->spacing[d]) || lat->spacing[d] <= 0)
            throw Error(QMMM_ERR_INVALID_ARG, std::string("lat->spacing[") + ax[d] + "] = " +
                                                  std::to_string(lat->spacing[d]) + " bohr must be finite and > 0");
        if (lat->count[d] < 1)
            throw Error(QMMM_ERR_INVALID_ARG, std::string("lat->count[") + ax[d] + "] = " +
                                                  std::to_string(lat->count[d]) + " must be >= 1");
        // 2^58 points = 2 EiB of doubles: no machine has that, and it keeps index arithmetic safe.
        if (lat->count[d] > (int64_t{1} << 58) / total)
            throw Error(QMMM_ERR_OUT_OF_MEMORY, "lattice too large: " + std::to_string(lat->count[0]) + " x " +
                                                    std::to_string(lat->count[1]) + " x " +
                                                    std::to_string(lat->count[2]) + " points cannot be addressed");
        total *= lat->count[d];
    }
    return total;
}

std::vector<int> check_devices(const qmmm_dcs_options &o) {
    return qmmm::check_devices(o.devices, o.n_devices, QMMM_DCS_MAX_DEVICES, "opt->devices");
}

void check_options(const qmmm_dcs_options &o) {
    if (o.backend < QMMM_BACKEND_AUTO || o.backend > QMMM_BACKEND_CUDA)
        throw Error(QMMM_ERR_INVALID_ARG, "opt->backend = " + std::to_string(o.backend) + " (0 AUTO, 1 CPU, 2 CUDA)");
    if (o.precision < QMMM_PRECISION_DOUBLE || o.precision > QMMM_PRECISION_MIXED)
        throw Error(QMMM_ERR_INVALID_ARG,
                    "opt->precision = " + std::to_string(o.precision) + " (0 DOUBLE, 1 SINGLE, 2 MIXED)");
    qmmm::check_threads(o.n_threads, "opt->n_threads");
    if (o.kernel != QMMM_DCS_KERNEL_FAST)
        throw Error(QMMM_ERR_INVALID_ARG, "opt->kernel = " + std::to_string(o.kernel) + " (0 FAST, the only kernel)");
    if (o.on_atom != QMMM_DCS_ON_ATOM_ERROR && o.on_atom != QMMM_DCS_ON_ATOM_OTHERS)
        throw Error(QMMM_ERR_INVALID_ARG, "opt->on_atom = " + std::to_string(o.on_atom) + " (0 ERROR, 1 OTHERS)");
    if (!std::isfinite(o.max_device_bytes) || o.max_device_bytes < 0)
        throw Error(QMMM_ERR_INVALID_ARG, "opt->max_device_bytes must be finite and >= 0");
}

// CPU: planes in chunks so the progress callback runs between them on the calling thread.
void cpu_map(const qmmm::DcsProblem &p, double *map, const qmmm_dcs_options &o, int64_t *pieces) {
    const int64_t plane = p.n[0] * p.n[1], nz = p.n[2];
    const int64_t work_per_plane = std::max<int64_t>(1, plane * std::max<int64_t>(1, p.n_atoms));
    const int64_t chunk = std::clamp<int64_t>(int64_t{2'000'000'000} / work_per_plane, 1, nz);
    auto last = std::chrono::steady_clock::now();
    *pieces = 0;
    for (int64_t k0 = 0; k0 < nz; k0 += chunk) {
        const int64_t nk = std::min(chunk, nz - k0);
        qmmm::dcs_cpu_planes(p, k0, nk, map + k0 * plane);
        ++*pieces;
        const auto now = std::chrono::steady_clock::now();
        if (o.progress && (now - last > std::chrono::milliseconds(200) || k0 + nk == nz)) {
            last = now;
            if (o.progress(k0 + nk, nz, o.progress_user)) throw Error(QMMM_ERR_INVALID_ARG, "cancelled by the progress callback");
        }
    }
}

// Marks points closer than r to c as excluded.
void stamp(const qmmm_dcs_lattice &l, const double *c, double r, std::vector<uint8_t> &mask) {
    if (r <= 0) return;
    int64_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
        // Clamped in double before the conversion: a far centre or a huge radius gives indices no int64_t holds.
        const double first = std::floor((c[d] - r - l.origin[d]) / l.spacing[d]);
        const double last = std::ceil((c[d] + r - l.origin[d]) / l.spacing[d]);
        const double top = static_cast<double>(l.count[d] - 1);
        if (!(last >= 0 && first <= top)) return;
        lo[d] = static_cast<int64_t>(std::max(0.0, first));
        hi[d] = static_cast<int64_t>(std::min(top, last));
    }
    for (int64_t k = lo[2]; k <= hi[2]; ++k)
        for (int64_t j = lo[1]; j <= hi[1]; ++j)
            for (int64_t i = lo[0]; i <= hi[0]; ++i) {
                const double dx = l.origin[0] + i * l.spacing[0] - c[0], dy = l.origin[1] + j * l.spacing[1] - c[1],
                             dz = l.origin[2] + k * l.spacing[2] - c[2];
                if (dx * dx + dy * dy + dz * dz < r * r) mask[i + l.count[0] * (j + l.count[1] * k)] = 1;
            }
}

}  // namespace

extern "C" {

QMMM_API int qmmm_dcs_options_default(qmmm_dcs_options *opt) {
    return qmmm::api_guard("qmmm_dcs_options_default", [&]() -> int {
        if (!opt) throw Error(QMMM_ERR_NULL_ARG, "opt is NULL");
        std::memset(opt, 0, sizeof *opt);
        opt->backend = QMMM_BACKEND_AUTO;
        opt->precision = QMMM_PRECISION_SINGLE;
        opt->kernel = QMMM_DCS_KERNEL_FAST;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_dcs_map(int64_t n_atoms, const double *xyz, const double *q, const qmmm_dcs_lattice *lat,
                          double *map, const qmmm_dcs_options *opt, qmmm_dcs_stats *stats) {
    return qmmm::api_guard("qmmm_dcs_map", [&]() -> int {
        check_atom_args(n_atoms, xyz, q);
        const int64_t total = check_lattice(lat);
        if (!map) throw Error(QMMM_ERR_NULL_ARG, "map is NULL");
        qmmm_dcs_options o;
        qmmm_dcs_options_default(&o);
        if (opt) o = *opt;
        check_options(o);
        const int backend = qmmm::resolve_backend(o.backend);
        std::vector<int> devices;
        if (backend == QMMM_BACKEND_CUDA) devices = check_devices(o);
        // Before any atom is read: a count far beyond the caller's arrays is refused, not read.
        qmmm::dcs_check_memory(n_atoms, backend,
                               backend == QMMM_BACKEND_CUDA ? static_cast<int>(devices.size())
                                                            : (o.n_threads > 0 ? o.n_threads : qmmm::default_threads()));
        check_finite("xyz", xyz, 3 * n_atoms);
        check_finite("q", q, n_atoms);
        qmmm::dcs_check_magnitudes(n_atoms, xyz, q, *lat, o.precision);
        const qmmm::DcsNearPoints near = qmmm::dcs_near_points(n_atoms, xyz, q, *lat, o.precision, o.on_atom);

        qmmm::DcsProblem p;
        p.n_atoms = n_atoms;
        p.x.resize(n_atoms), p.y.resize(n_atoms), p.z.resize(n_atoms), p.q.assign(q, q + n_atoms);
        for (int64_t a = 0; a < n_atoms; ++a)
            p.x[a] = xyz[3 * a] - lat->origin[0], p.y[a] = xyz[3 * a + 1] - lat->origin[1],
            p.z[a] = xyz[3 * a + 2] - lat->origin[2];
        for (int d = 0; d < 3; ++d) p.h[d] = lat->spacing[d], p.n[d] = lat->count[d];
        p.precision = o.precision, p.n_threads = o.n_threads;
        p.max_device_bytes = o.max_device_bytes;

        const auto t0 = std::chrono::steady_clock::now();
        int64_t pieces = 0;
        if (n_atoms == 0) {
            std::fill(map, map + total, 0.0);
        } else if (backend == QMMM_BACKEND_CUDA) {
            qmmm::DcsRunInfo info;
            qmmm::dcs_gpu_map(p, devices, map, o.progress, o.progress_user, &info);
            pieces = info.n_pieces;
        } else {
            cpu_map(p, map, o, &pieces);
        }
        if (n_atoms > 0) qmmm::dcs_fix_points(near, n_atoms, xyz, q, *lat, map);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (stats) {
            stats->backend = backend;
            stats->n_workers = backend == QMMM_BACKEND_CUDA ? static_cast<int32_t>(devices.size())
                                                            : (o.n_threads > 0 ? o.n_threads : qmmm::default_threads());
            stats->n_pieces = pieces;
            stats->seconds = secs;
            stats->gevals_per_s = secs > 0 ? static_cast<double>(n_atoms) * static_cast<double>(total) / secs / 1e9 : 0;
        }
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_dcs_place_ions(int64_t n_atoms, const double *xyz, const double *q,
                                 const qmmm_dcs_lattice *lat, double *map, int64_t n_ions, double ion_charge,
                                 double min_dist_atoms, double min_dist_ions, double *ion_xyz,
                                 double *ion_energy) {
    return qmmm::api_guard("qmmm_dcs_place_ions", [&]() -> int {
        check_atoms(n_atoms, xyz, q);
        const int64_t total = check_lattice(lat);
        if (!map) throw Error(QMMM_ERR_NULL_ARG, "map is NULL");
        if (n_ions < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_ions = %lld is negative",
                                    static_cast<long long>(n_ions)));
        if (n_ions > 0 && !ion_xyz) throw Error(QMMM_ERR_NULL_ARG, "ion_xyz is NULL");
        if (!std::isfinite(ion_charge) || ion_charge == 0)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("ion_charge = %g must be finite and nonzero", ion_charge));
        if (!std::isfinite(min_dist_atoms) || min_dist_atoms < 0)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("min_dist_atoms = %g must be finite and >= 0",
                        min_dist_atoms));
        if (!std::isfinite(min_dist_ions) || min_dist_ions < 0)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("min_dist_ions = %g must be finite and >= 0",
                        min_dist_ions));
        check_finite("map", map, total);
        const qmmm_dcs_lattice &l = *lat;
        // The ions' terms, at most |ion_charge| / (the smallest spacing) each, must stay within double beside the
        // map (a spacing of 5e-261 bohr and a charge of 1e53 made -2e313 = -Inf with success).
        const double h_min = std::min({l.spacing[0], l.spacing[1], l.spacing[2]});
        double map_max = 0;
        for (int64_t i = 0; i < total; ++i) map_max = std::max(map_max, std::fabs(map[i]));
        const double phi_max = map_max + static_cast<double>(n_ions) * (std::fabs(ion_charge) / h_min);
        if (!(phi_max <= 1e300))
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("%lld ions of charge %g at a spacing of %g bohr: their potential (up to %g / %g per "
                               "ion) would leave double's range (1e300) beside the map's %g",
                               static_cast<long long>(n_ions), ion_charge, h_min, std::fabs(ion_charge), h_min,
                               map_max));
        // An ion's energy, ion_charge times the potential there (the earlier ions' included), within double too:
        // charges of 1e95..1e202 on maps of large values gave -Inf energies with success.
        if (n_ions > 0 && !(std::fabs(ion_charge) * phi_max <= 1e300))
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("ion_charge = %g: the ions' energies (the charge times a potential of up to %g "
                               "hartree/e: the map's %g and the ions' own) would leave double's range (1e300)",
                               ion_charge, phi_max, map_max));
        std::vector<uint8_t> excluded(total, 0);
        for (int64_t a = 0; a < n_atoms; ++a) stamp(l, xyz + 3 * a, min_dist_atoms, excluded);

        for (int64_t n = 0; n < n_ions; ++n) {
            // Lowest q*phi, ties to the lowest index: per-thread bests combined in thread order.
            double best = std::numeric_limits<double>::infinity();
            int64_t best_i = -1;
#pragma omp parallel
            {
                double b = std::numeric_limits<double>::infinity();
                int64_t bi = -1;
#pragma omp for schedule(static) nowait
                for (int64_t i = 0; i < total; ++i)
                    if (!excluded[i] && ion_charge * map[i] < b) b = ion_charge * map[i], bi = i;
#pragma omp critical
                if (bi >= 0 && (b < best || (b == best && bi < best_i))) best = b, best_i = bi;
            }
            if (best_i < 0)
                throw Error(QMMM_ERR_INVALID_ARG, strfmt("no lattice point is left for ion %lld (%lld placed): the lattice is too "
                            "small for the minimum distances",
                            static_cast<long long>(n + 1), static_cast<long long>(n)));
            const int64_t nx = l.count[0], ny = l.count[1];
            const int64_t i = best_i % nx, j = (best_i / nx) % ny, k = best_i / (nx * ny);
            double *c = ion_xyz + 3 * n;
            c[0] = l.origin[0] + i * l.spacing[0], c[1] = l.origin[1] + j * l.spacing[1],
            c[2] = l.origin[2] + k * l.spacing[2];
            if (ion_energy) ion_energy[n] = best;
            excluded[best_i] = 1;
            stamp(l, c, min_dist_ions, excluded);
            // The ion's own point keeps its value (1/0 has none); it can never be chosen again.
#pragma omp parallel for schedule(static)
            for (int64_t p = 0; p < total; ++p) {
                if (p == best_i) continue;
                const int64_t pi = p % nx, pj = (p / nx) % ny, pk = p / (nx * ny);
                const double dx = (pi - i) * l.spacing[0], dy = (pj - j) * l.spacing[1], dz = (pk - k) * l.spacing[2];
                // hypot scales before squaring: squares of spacings below 1e-154 bohr underflow to 0 (a finite term
                // became Inf) and those of spacings that differ by 1e300 lose the small one.
                map[p] += ion_charge / std::hypot(dx, dy, dz);
            }
        }
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_dcs_release(void) {
    return qmmm::api_guard("qmmm_dcs_release", [&]() -> int {
        qmmm::dcs_gpu_release();
        return QMMM_SUCCESS;
    });
}

}  // extern "C"
