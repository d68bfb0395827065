#!/usr/bin/env python3
"""precision_study_report.py OUT_DIR -- the table of bench/vmc/precision_study.sh (Markdown on stdout and in
OUT_DIR/precision_study.md, JSON in OUT_DIR/precision_study.json) and OUT_DIR/precision_study.dat: per block,
the running mean energy of each precision minus CPU double's (same configurations, so this is the field's
rounding alone, accumulated as a QMC run accumulates it)."""
import json, os, sys

out = sys.argv[1]
meta = json.load(open(os.path.join(out, "meta.json")))
runs = [l.split() for l in open(os.path.join(out, "runs.txt")) if l.strip()]
res = {}
for name, ranks in runs:
    j = json.load(open(os.path.join(out, name + ".json")))
    j["wall"] = float(open(os.path.join(out, name + ".wall")).read())
    j["ranks_used"] = int(ranks)
    setup_max = max(r["time"]["setup"] for r in j["ranks"])
    j["sampling"] = j["time"]["total"] - setup_max
    b = j["block_energies"]
    j["running"] = [sum(b[:k + 1]) / (k + 1) for k in range(len(b))]
    res[name] = j
base = res.get("cpu_double")
if base is None:
    sys.exit("precision_study_report: no cpu_double run to compare with")
lines = []
p = lines.append
p(f"Glycine fragment 1 in fragments 2+3 (268,938 cells), {meta['walkers']} walkers, {meta['blocks']} blocks x "
  f"{meta['steps_per_block']} sweeps, seed 4; {meta['tag']}: {meta['cores']} cores ({meta['cpu']}), "
  f"{meta['gpus']} x {meta['gpu_name'] or 'no GPU'}.")
p("")
p("| field | MPI ranks | energy (hartree) | error bar | deviation from CPU double | |dev| / error bar | "
  "max running deviation | wall (s) | speed-up | sampling (s) | speed-up |")
p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
table = []
for name, j in res.items():
    dev = j["energy"] - base["energy"]
    run_dev = [a - c for a, c in zip(j["running"], base["running"])]
    same = j["final_position_checksum"] == base["final_position_checksum"]
    row = {"run": name, "ranks": j["ranks_used"], "energy": j["energy"], "error": j["error"], "deviation": dev,
           "deviation_over_error": abs(dev) / j["error"], "max_running_deviation": max(abs(d) for d in run_dev),
           "running_deviation": run_dev, "wall_s": j["wall"], "speedup_wall": base["wall"] / j["wall"],
           "sampling_s": j["sampling"], "speedup_sampling": base["sampling"] / j["sampling"],
           "same_configurations": same, "variance": j["variance"]}
    table.append(row)
    label = name.replace("_", " ").replace("cpu", "CPU").replace("cuda", "CUDA")
    p(f"| {label} | {row['ranks']} | {j['energy']:.8f} | {j['error']:.5f} | {dev:+.2e} | {row['deviation_over_error']:.1e} | "
      f"{row['max_running_deviation']:.1e} | {j['wall']:.2f} | {row['speedup_wall']:.1f} | {j['sampling']:.3f} | "
      f"{row['speedup_sampling']:.1f} |")
p("")
p("Same seed: every run visits the same configurations (final positions identical: " +
  ", ".join(f"{r['run']} {'yes' if r['same_configurations'] else 'NO'}" for r in table) + "). "
  "wall: the whole job; sampling: after the slowest rank's set-up; speed-ups over CPU double with its ranks.")
text = "\n".join(lines)
print(text)
open(os.path.join(out, "precision_study.md"), "w").write(text + "\n")
json.dump({"meta": meta, "runs": table}, open(os.path.join(out, "precision_study.json"), "w"), indent=1)
names = [r["run"] for r in table if r["run"] != "cpu_double"]
with open(os.path.join(out, "precision_study.dat"), "w") as f:
    f.write("# block " + " ".join(names) + "   (running mean minus CPU double's, hartree)\n")
    for k in range(len(base["running"])):
        f.write(f"{k + 1} " + " ".join(f"{next(r for r in table if r['run'] == n)['running_deviation'][k]:.6e}"
                                        for n in names) + "\n")
