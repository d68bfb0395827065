// cube_api.cpp -- the C API of the cube family: environment handles built from cube files, and fields
// built from them (qmmm_accel_cube.h).
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cube_reader.hpp"
#include "error.hpp"
#include "handle_registry.hpp"

struct qmmm_env_s {
    std::vector<double> cell_xyz, cell_q, nuc_xyz, nuc_z;
    double cell_volume = 0;  // common dV of the cubes added; 0 if none or they differ
    int n_cubes = 0;
};

namespace {

using qmmm::Error;

qmmm::HandleRegistry<qmmm_env_s> g_envs;

qmmm_env_s *live(qmmm_env env) {
    qmmm_env_s *e = g_envs.get(env);
    if (!e) throw Error(QMMM_ERR_BAD_HANDLE, std::string("env is ") + (env ? "not a live qmmm_env (destroyed?)" : "NULL"));
    return e;
}

// Appends the arrays to e's; into an empty environment they are moved, not copied (a 64e6-cell cube is 2 GB of
// cells: a copy would double the peak).
void append(qmmm_env_s *e, std::vector<double> &cell_xyz, std::vector<double> &cell_q, std::vector<double> &nuc_xyz,
            std::vector<double> &nuc_z) {
    const std::pair<std::vector<double> *, std::vector<double> *> parts[] = {
        {&e->cell_xyz, &cell_xyz}, {&e->cell_q, &cell_q}, {&e->nuc_xyz, &nuc_xyz}, {&e->nuc_z, &nuc_z}};
    for (const auto &[to, from] : parts) {
        if (to->empty()) *to = std::move(*from);
        else to->insert(to->end(), from->begin(), from->end());
    }
}

void add_cube(qmmm_env_s *e, const char *path, double threshold) {
    if (!path) throw Error(QMMM_ERR_NULL_ARG, "path is NULL");
    if (!std::isfinite(threshold)) throw Error(QMMM_ERR_NONFINITE, qmmm::strfmt("threshold is %g", threshold));
    qmmm::CubeCells c = qmmm::read_cube(path, threshold);
    // A mixed environment keeps cell_volume 0: there is no single cube for the self-potential rule.
    if (e->n_cubes == 0) e->cell_volume = c.cell_volume;
    else if (std::fabs(c.cell_volume - e->cell_volume) > 1e-12 * c.cell_volume) e->cell_volume = 0;
    append(e, c.cell_xyz, c.cell_q, c.nuc_xyz, c.nuc_z);
    ++e->n_cubes;
}

bool mixed_volumes(const qmmm_env_s *e) { return e->n_cubes > 0 && e->cell_volume == 0; }

}  // namespace

extern "C" {

QMMM_API int qmmm_env_create(qmmm_env *env) {
    return qmmm::api_guard("qmmm_env_create", [&]() -> int {
        if (!env) throw Error(QMMM_ERR_NULL_ARG, "env (the handle to fill) is NULL");
        *env = nullptr;
        *env = g_envs.add(std::make_unique<qmmm_env_s>());
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_env_add_cube(qmmm_env env, const char *path, double threshold) {
    return qmmm::api_guard("qmmm_env_add_cube", [&]() -> int {
        qmmm_env_s *const ev = live(env);
        // Read into a copy of the counters only: on error the environment is unchanged.
        qmmm_env_s staged;
        staged.n_cubes = ev->n_cubes;
        staged.cell_volume = ev->cell_volume;
        add_cube(&staged, path, threshold);
        append(ev, staged.cell_xyz, staged.cell_q, staged.nuc_xyz, staged.nuc_z);
        ev->cell_volume = staged.cell_volume;
        ev->n_cubes = staged.n_cubes;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_env_sizes(qmmm_env env, int64_t *n_cells, int64_t *n_nuclei, double *cell_volume) {
    return qmmm::api_guard("qmmm_env_sizes", [&]() -> int {
        qmmm_env_s *const ev = live(env);
        if (n_cells) *n_cells = static_cast<int64_t>(ev->cell_q.size());
        if (n_nuclei) *n_nuclei = static_cast<int64_t>(ev->nuc_z.size());
        if (cell_volume) *cell_volume = mixed_volumes(ev) ? 0.0 : ev->cell_volume;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_env_copy(qmmm_env env, double *cell_xyz, double *cell_q, double *nuc_xyz, double *nuc_z) {
    return qmmm::api_guard("qmmm_env_copy", [&]() -> int {
        qmmm_env_s *const ev = live(env);
        if (cell_xyz) std::copy(ev->cell_xyz.begin(), ev->cell_xyz.end(), cell_xyz);
        if (cell_q) std::copy(ev->cell_q.begin(), ev->cell_q.end(), cell_q);
        if (nuc_xyz) std::copy(ev->nuc_xyz.begin(), ev->nuc_xyz.end(), nuc_xyz);
        if (nuc_z) std::copy(ev->nuc_z.begin(), ev->nuc_z.end(), nuc_z);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_env_destroy(qmmm_env env) {
    return qmmm::api_guard("qmmm_env_destroy", [&]() -> int {
        if (!g_envs.remove(env))
            throw Error(QMMM_ERR_BAD_HANDLE,
                        std::string("env is ") + (env ? "not a live qmmm_env (destroyed twice?)" : "NULL"));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_cube_read(qmmm_env *env, const char *path, double threshold) {
    return qmmm::api_guard("qmmm_cube_read", [&]() -> int {
        if (!env) throw Error(QMMM_ERR_NULL_ARG, "env (the handle to fill) is NULL");
        *env = nullptr;
        auto e = std::make_unique<qmmm_env_s>();
        add_cube(e.get(), path, threshold);
        *env = g_envs.add(std::move(e));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_create_from_env(qmmm_field *f, qmmm_env env, const qmmm_options *opt) {
    return qmmm::api_guard("qmmm_field_create_from_env", [&]() -> int {
        if (!f) throw Error(QMMM_ERR_NULL_ARG, "f (the handle to fill) is NULL");
        *f = nullptr;
        qmmm_env_s *const ev = live(env);
        qmmm_options o;
        qmmm_options_default(&o);
        if (opt) o = *opt;
        if (o.cell_volume == 0 && !mixed_volumes(ev)) o.cell_volume = ev->cell_volume;
        return qmmm_field_create(f, static_cast<int64_t>(ev->cell_q.size()), ev->cell_xyz.data(),
                                 ev->cell_q.data(), static_cast<int64_t>(ev->nuc_z.size()), ev->nuc_xyz.data(),
                                 ev->nuc_z.data(), &o);
    });
}

QMMM_API int qmmm_field_create_from_cubes(qmmm_field *f, int n_files, const char *const *paths, double threshold,
                                          const qmmm_options *opt) {
    return qmmm::api_guard("qmmm_field_create_from_cubes", [&]() -> int {
        if (!f) throw Error(QMMM_ERR_NULL_ARG, "f (the handle to fill) is NULL");
        *f = nullptr;
        if (n_files < 1) throw Error(QMMM_ERR_INVALID_ARG, qmmm::strfmt("n_files = %d (need at least 1)", n_files));
        if (!paths) throw Error(QMMM_ERR_NULL_ARG, "paths is NULL");
        qmmm_env_s e;
        for (int i = 0; i < n_files; ++i) {
            try {
                add_cube(&e, paths[i], threshold);
            } catch (const Error &err) {
                throw Error(err.status, qmmm::strfmt("file %d of %d: ", i + 1, n_files) + err.what());
            }
        }
        auto *h = g_envs.add(std::make_unique<qmmm_env_s>(std::move(e)));
        int s = qmmm_field_create_from_env(f, h, opt);
        g_envs.remove(h);
        return s;
    });
}

}  // extern "C"
