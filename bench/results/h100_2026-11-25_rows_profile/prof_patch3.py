import sys
root='/work/main/'
p=root+'src_cxx/field/field_split.cpp'
s=open(p).read()
s=s.replace('namespace qmmm {\n\nnamespace {\n','namespace qmmm {\n\nnamespace {\nstruct Prof { long long calls=0, nodes=0, slots=0; double fill_coul=0, fill_short=0, fill_map=0, est=0, refine=0, sample=0, assemble=0, cells=0, table=0, ready=0, grid=0; } g_prof;\ninline double secs(std::chrono::steady_clock::time_point t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); }\n',1)
a='''            e.coulomb_rows(static_cast<int64_t>(want.size()), pts.data(), rows, c.data());
            e.short_range(m, static_cast<int64_t>(want.size()), pts.data(), m.build_self, sr.data());'''
b='''            auto tc = std::chrono::steady_clock::now();
            ++g_prof.calls, g_prof.nodes += (long long)want.size();
            for (size_t r = 0; r + 1 < rows.size(); ++r) g_prof.slots += 4 * ((rows[r + 1] - rows[r] + 3) / 4);
            e.coulomb_rows(static_cast<int64_t>(want.size()), pts.data(), rows, c.data());
            g_prof.fill_coul += secs(tc); tc = std::chrono::steady_clock::now();
            e.short_range(m, static_cast<int64_t>(want.size()), pts.data(), m.build_self, sr.data());
            g_prof.fill_short += secs(tc);'''
assert a in s; s=s.replace(a,b)
a='''        std::vector<uint64_t> want;'''
b='''        const auto tf = std::chrono::steady_clock::now();
        std::vector<uint64_t> want;'''
assert a in s; s=s.replace(a,b)
# total fill time: measure at end of fill
a='''            for (size_t g = 0; g < at[t].size(); ++g) L[t][g] = lv_[at[t][g]], C[t][g] = cv_[at[t][g]];
        }
    }'''
b='''            for (size_t g = 0; g < at[t].size(); ++g) L[t][g] = lv_[at[t][g]], C[t][g] = cv_[at[t][g]];
        }
        g_prof.fill_map += secs(tf);
    }'''
assert a in s; s=s.replace(a,b)
a='''#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < nb; ++b) {'''
b='''    const auto te = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < nb; ++b) {'''
assert a in s; s=s.replace(a,b)
a='''    // The blocks' own corners (the level-0 ones keep l0 as their lattice, so remember their corners apart).'''
b='''    g_prof.est += secs(te);
    // The blocks' own corners (the level-0 ones keep l0 as their lattice, so remember their corners apart).'''
assert a in s; s=s.replace(a,b)
a='''    auto refine = [&](const std::vector<int64_t> &todo) {'''
b='''    auto refine = [&](const std::vector<int64_t> &todo) {
        const auto tr = std::chrono::steady_clock::now();
        struct R { std::chrono::steady_clock::time_point t; ~R() { g_prof.refine += secs(t); } } rr{tr};'''
assert a in s; s=s.replace(a,b)
a='''    std::vector<double> exact_c(kSamplePoints), exact_s(kSamplePoints);
    e.coulomb(kSamplePoints, sample.data(), exact_c.data());
    e.short_range(m, kSamplePoints, sample.data(), m.build_self, exact_s.data());'''
b='''    std::vector<double> exact_c(kSamplePoints), exact_s(kSamplePoints);
    const auto ts = std::chrono::steady_clock::now();
    e.coulomb(kSamplePoints, sample.data(), exact_c.data());
    e.short_range(m, kSamplePoints, sample.data(), m.build_self, exact_s.data());
    g_prof.sample += secs(ts);'''
assert a in s; s=s.replace(a,b)
a='''    double sampled = 0;
    for (int round = 0;; ++round) {'''
b='''    double sampled = 0;
    const auto ta = std::chrono::steady_clock::now();
    for (int round = 0;; ++round) {'''
assert a in s; s=s.replace(a,b)
a='''    double est = 0;
    int max_level = 0;'''
b='''    g_prof.assemble += secs(ta);
    double est = 0;
    int max_level = 0;'''
assert a in s; s=s.replace(a,b)
a='''    build_cells(m, d, rc);
    // f's error e adds at most e R_c to a cell's term relative to |q|/d: 1e-3 of the tolerance, or rounding.
    build_table(m, alpha, rc, std::max(1e-3 * tol / rc, 1e-15 * static_cast<double>(f_exact(alpha, 0))));
    engine.cells_ready(m);
    build_grid(m, d, engine, o.region, tol, choose_spacing(tol));'''
b='''    g_prof = Prof{};
    auto tt = Clock::now();
    build_cells(m, d, rc);
    g_prof.cells = secs(tt); tt = Clock::now();
    // f's error e adds at most e R_c to a cell's term relative to |q|/d: 1e-3 of the tolerance, or rounding.
    build_table(m, alpha, rc, std::max(1e-3 * tol / rc, 1e-15 * static_cast<double>(f_exact(alpha, 0))));
    g_prof.table = secs(tt); tt = Clock::now();
    engine.cells_ready(m);
    g_prof.ready = secs(tt); tt = Clock::now();
    build_grid(m, d, engine, o.region, tol, choose_spacing(tol));
    g_prof.grid = secs(tt);
    if (std::getenv("QMMM_SPLIT_PROFILE"))
        std::fprintf(stderr, "SETUPPROF M=%lld cells %.3f table %.3f ready %.3f grid %.3f [fill(%lld calls, %lld nodes, %lld slots): coulomb %.3f short %.3f total %.3f; estimate %.3f; refine %.3f; sample %.3f; assemble %.3f]\\n",
                     (long long)d.n_cells, g_prof.cells, g_prof.table, g_prof.ready, g_prof.grid, g_prof.calls, g_prof.nodes, g_prof.slots, g_prof.fill_coul, g_prof.fill_short, g_prof.fill_map, g_prof.est, g_prof.refine, g_prof.sample, g_prof.assemble);'''
assert a in s; s=s.replace(a,b)
s=s.replace('#include <random>\n','#include <random>\n#include <cstdio>\n#include <cstdlib>\n',1)
open(p,'w').write(s)
p=root+'src_cuda/field/field_split_gpu.cu'
s=open(p).read()
a='''            direct_ = GpuRegistry<FieldGpu>::get().make(split_direct_data(d), od);
            split_build(model_, d, opt, *this);
            upload_grid();'''
b='''            auto t0 = std::chrono::steady_clock::now();
            direct_ = GpuRegistry<FieldGpu>::get().make(split_direct_data(d), od);
            const double td = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            split_build(model_, d, opt, *this);
            t0 = std::chrono::steady_clock::now();
            upload_grid();
            if (std::getenv("QMMM_SPLIT_PROFILE")) std::fprintf(stderr, "SETUPPROF cuda: direct backend %.3f upload_grid %.3f\\n", td, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());'''
assert a in s; s=s.replace(a,b)
s=s.replace('#include <vector>\n','#include <vector>\n#include <chrono>\n#include <cstdio>\n#include <cstdlib>\n',1)
open(p,'w').write(s)
print("patched")
