// field_factory.cpp -- which backend a field gets (field_factory.hpp): by method, backend, precision and size, with
// the wrappers (local origin, point charges) around it.
#include "backend/field_factory.hpp"

#include "charges/field_charges.hpp"
#include "core_backend.hpp"
#include "cpu_simd.hpp"
#include "origin/field_local_origin.hpp"
#include "tuning_env.hpp"

namespace qmmm {

namespace {

// The backend of a validated field, where its coordinates are: the method, backend (resolved) and precision of o;
// d's cells are moved out.
std::unique_ptr<FieldBackend> make_in_place(FieldData &d, const qmmm_options &o) {
    // MIXED direct sums take the dominant cells apart (summed in double; field_backend.hpp says why).
    if (o.precision == QMMM_PRECISION_MIXED && o.method != QMMM_METHOD_SPLIT) field_take_heavy(d);
    std::unique_ptr<FieldBackend> b;
    if (o.backend == QMMM_BACKEND_CUDA) {
        const FieldGpu &gpu = GpuRegistry<FieldGpu>::get();
        check_device(o.device, "opt->device");
        b = o.method == QMMM_METHOD_SPLIT ? GpuRegistry<FieldSplitGpu>::get().make(d, o) : gpu.make(d, o);
    } else if (o.method == QMMM_METHOD_SPLIT) {
        b = make_field_split_cpu(d, o);
    } else if (o.precision != QMMM_PRECISION_MIXED && d.n_cells <= kSmallCells) {
        b = make_field_cpu_small(d, o);
    } else {
        b = make_field_cpu(d, o);
    }
    d.cell_xyz = {}, d.cell_q = {}, d.heavy_xyz = {}, d.heavy_q = {};
    return b;
}

// QMMM_CPU_ISA, checked once for every CPU field, whatever kernels it ends up with (screened charges alone run
// none of the sets, and took any value before).
void check_cpu_isa(const qmmm_options &o) {
    if (o.backend == QMMM_BACKEND_CPU) cpu_isa_choose();
}

}  // namespace

std::unique_ptr<FieldBackend> make_field_backend(FieldData &d, const qmmm_options &opt) {
    qmmm_options o = opt;
    o.backend = resolve_backend(o.backend);
    check_cpu_isa(o);
    // SINGLE far from the origin: the cells and nuclei around a local origin, the points moved by the wrapper.
    double origin[3];
    if (!local_origin(d, o, origin)) return make_in_place(d, o);
    move_field(d, origin);
    return wrap_local_origin(make_in_place(d, o), origin);
}

std::unique_ptr<FieldBackend> make_charges_backend(FieldData &d, ScreenedCharges &sc, qmmm_options o) {
    // AUTO with a small charge set: the CPU. A GPU call costs ~10 us (1 point) to ~35 us (9-128 points) whatever
    // its size (launches, polling); one CPU thread sums 22 electrons on 1,000 charges in 17.5 us and 10^4 in 113 us
    // (legacy_loop_bench on the H200 host), so for a configuration of ~22 electrons the two meet near 2,000 charges.
    // With 128 electrons the GPU wins from ~400 charges; the choice is made at create, by M alone, for the common
    // case. QMMM_BACKEND or an explicit backend still decide.
    if (o.backend == QMMM_BACKEND_AUTO && tuning::backend() < 0 && d.n_cells + sc.n + d.n_nuclei <= kChargesAutoCpu)
        o.backend = QMMM_BACKEND_CPU;
    o.backend = resolve_backend(o.backend);
    // CUDA asked for: a device is needed even when no charge is left to sum (every charge zero), as for any field.
    if (o.backend == QMMM_BACKEND_CUDA) check_device(o.device, "opt->device");
    check_cpu_isa(o);
    // SINGLE far from the origin: the cells, nuclei and screened charges around a local origin, the points moved by
    // the wrapper (origin/field_local_origin.hpp).
    double origin[3];
    const bool moved = local_origin(d, o, origin, sc.x, sc.y, sc.z);
    if (moved) {
        move_field(d, origin);
        for (int64_t m = 0; m < sc.n; ++m) sc.x[m] -= origin[0], sc.y[m] -= origin[1], sc.z[m] -= origin[2];
    }
    std::unique_ptr<ScreenedTerm> screened;
    if (sc.n > 0) {
        if (o.backend == QMMM_BACKEND_CUDA) {
            check_device(o.device, "opt->device");
            screened = GpuRegistry<ScreenedGpu>::get().make(sc, o.precision, o.device);
        } else {
            screened = make_screened_cpu(sc, o.precision, o.n_threads);
        }
    }
    std::unique_ptr<FieldBackend> inner;
    if (d.n_cells > 0 || d.n_nuclei > 0) inner = make_in_place(d, o);
    int device = -1;
    if (inner) device = inner->device();
    else if (o.backend == QMMM_BACKEND_CUDA) device = o.device;  // -1: the current device
    std::unique_ptr<FieldBackend> b = make_field_charges(std::move(inner), std::move(screened), o.backend, o.precision,
                                                         device);
    if (moved) b = wrap_local_origin(std::move(b), origin);
    return b;
}

}  // namespace qmmm
