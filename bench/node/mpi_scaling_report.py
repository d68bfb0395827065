#!/usr/bin/env python3
"""mpi_scaling_report.py OUT_DIR -- tables of bench/node/mpi_scaling.sh's runs (seed 004 Table 5 and Table 8 shape).

wall: the whole job (mpiexec to exit, measured outside: MPI start, reading Molden and cube on every rank,
building the field, CUDA contexts). sampling: rank 0's run time minus the slowest rank's setup, i.e. the
Monte Carlo itself once every rank is ready. Efficiency = T_1 / (N T_N) against the 1-rank run of the
same kind (CPU: 1 core; GPU: 1 rank on 1 GPU). Merit factor (Table 8): the node's CPU cores all busy
(largest CPU run) over the node with its GPU(s) (fastest GPU run), same input, same precision.
Node ceiling (CEILING=1): N independent one-rank jobs at once, one per core, WALKERS/N walkers each; its
efficiency is T_1 / (N x mean job sampling time): the node's N-core throughput, the most an N-rank run with
perfectly balanced walkers can reach on it (the JSON also keeps the slowest job, the limit of equal shares).
Writes OUT_DIR/mpi_scaling.md and OUT_DIR/mpi_scaling.json."""
import json, os, sys

out = sys.argv[1]
meta = json.load(open(os.path.join(out, "meta.json")))
runs = [r for r in open(os.path.join(out, "runs.txt")).read().split() if r]
rows = []
for name in runs:
    j = json.load(open(os.path.join(out, name + ".json")))
    wall = float(open(os.path.join(out, name + ".wall")).read())
    setup_max = max(r["time"]["setup"] for r in j["ranks"])
    devices = sorted({r["device"] for r in j["ranks"] if r["device"] >= 0})
    rows.append(dict(name=name, kind=name.split("_")[0], ranks=j["n_ranks"], gpus=len(devices), wall=wall,
                     total=j["time"]["total"], sampling=j["time"]["total"] - setup_max, setup_max=setup_max,
                     field_max=max(r["time"]["field"] for r in j["ranks"]),
                     wf_max=max(r["time"]["wavefunction"] for r in j["ranks"]),
                     energy=j["energy"], error=j["error"], checksum=j["final_position_checksum"]))

lines = []
p = lines.append
p(f"Glycine fragment 1 in fragments 2+3 (268,938 cells), {meta['walkers']} walkers x {meta['sweeps']} sweeps "
  f"(+{meta.get('equil', 5)} equilibration; best of {meta.get('repeat', 1)} runs; balance_walkers {meta.get('balance', 0)}), {meta['precision']} precision, seed 4; machine {meta['tag']}: {meta['cores']} cores "
  f"({meta['cpu']}), {meta['gpus']} x {meta['gpu_name'] or 'no GPU'}.")
p("")
ref_cpu = next((r for r in rows if r["kind"] == "cpu" and r["ranks"] == 1), None)
result = {"meta": meta, "runs": rows}


def ceiling(n):
    """Sampling times of the N independent one-rank jobs, or None when they were not run."""
    files = [os.path.join(out, f"ceil_{n}_{c}.json") for c in range(n)]
    if n < 2 or not all(os.path.exists(f) for f in files):
        return None
    js = [json.load(open(f)) for f in files]
    return [j["time"]["total"] - j["ranks"][0]["time"]["setup"] for j in js]


def table(kind, title, base):
    sel = [r for r in rows if r["kind"] == kind]
    if not sel or base is None:
        return
    p(f"**{title}**")
    p("")
    p("| MPI ranks | GPUs | wall (s) | speed-up | efficiency | sampling (s) | speed-up | efficiency | "
      "node ceiling | energy (hartree) | same as CPU 1 rank |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in sel:
        n = r["ranks"] if kind == "cpu" else max(r["gpus"], 1)
        r["speedup_wall"] = base["wall"] / r["wall"]
        r["speedup_sampling"] = base["sampling"] / r["sampling"]
        # Parallel efficiency per resource that grows: cores (CPU) or GPUs (GPU runs).
        r["efficiency_wall"] = r["speedup_wall"] / n
        r["efficiency_sampling"] = r["speedup_sampling"] / n
        same = "-"
        if ref_cpu is not None:
            d = r["energy"] - ref_cpu["energy"]
            same = "bitwise" if d == 0 and r["checksum"] == ref_cpu["checksum"] else f"dE = {d:.2e}"
            r["energy_deviation_from_cpu1"] = d
        ceil = ceiling(n) if kind == "cpu" else None
        ceil_txt = "-"
        if ceil is not None:
            work = n * (meta["walkers"] // n) / meta["walkers"]   # share of the walkers the N jobs ran
            r["ceiling_job_sampling_s"] = ceil
            r["ceiling_efficiency"] = base["sampling"] * work / sum(ceil)
            r["ceiling_efficiency_equal_shares"] = base["sampling"] * work / (n * max(ceil))
            ceil_txt = f"{100 * r['ceiling_efficiency']:.0f} %"
        p(f"| {r['ranks']} | {r['gpus']} | {r['wall']:.2f} | {r['speedup_wall']:.2f} | {100 * r['efficiency_wall']:.0f} % | "
          f"{r['sampling']:.3f} | {r['speedup_sampling']:.2f} | {100 * r['efficiency_sampling']:.0f} % | "
          f"{ceil_txt} | {r['energy']:.10f} | {same} |")
    p("")


table("cpu", "CPU only (one core per rank; efficiency per core)", ref_cpu)
ref_gpu = next((r for r in rows if r["kind"] == "gpu" and r["ranks"] == 1), None)
table("gpu", "CPU with GPU (device = local rank mod GPUs; speed-up over 1 rank on 1 GPU; efficiency per GPU)",
      ref_gpu)

cpu_sel = [r for r in rows if r["kind"] == "cpu"]
gpu_sel = [r for r in rows if r["kind"] == "gpu"]
if cpu_sel and gpu_sel:
    node_cpu = max(cpu_sel, key=lambda r: r["ranks"])
    p("**Merit factor (seed 004 Table 8): the node with its GPU(s) against the node's CPU cores all busy**")
    p("")
    p("| measure | CPU: ranks | time (s) | GPU: ranks | time (s) | merit factor | vs 1 CPU core |")
    p("| --- | --- | --- | --- | --- | --- | --- |")
    result["merit"] = {}
    for key in ("wall", "sampling"):
        best = min(gpu_sel, key=lambda r: r[key])
        m = node_cpu[key] / best[key]
        one = ref_cpu[key] / best[key] if ref_cpu else float("nan")
        result["merit"][key] = {"cpu_ranks": node_cpu["ranks"], "cpu_s": node_cpu[key], "gpu_ranks": best["ranks"],
                                "gpu_s": best[key], "merit_factor": m, "speedup_vs_one_core": one}
        p(f"| {key} | {node_cpu['ranks']} | {node_cpu[key]:.3f} | {best['ranks']} | {best[key]:.3f} | **{m:.1f}** | {one:.1f} |")
    p("")
    if node_cpu["ranks"] < meta["cores"]:
        p(f"(the largest CPU run has {node_cpu['ranks']} ranks on {meta['cores']} cores)")
p("wall: the whole job, measured outside mpiexec (start-up, every rank reading the Molden and 5 MB cube file, "
  "building the field, CUDA contexts). sampling: rank 0's time after the slowest rank's set-up. node ceiling: "
  "N independent one-rank jobs at once (one per core, same total walkers), T_1 / (N x their mean sampling time).")
text = "\n".join(lines)
print(text)
open(os.path.join(out, "mpi_scaling.md"), "w").write(text + "\n")
json.dump(result, open(os.path.join(out, "mpi_scaling.json"), "w"), indent=1)
