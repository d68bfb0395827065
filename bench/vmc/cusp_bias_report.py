#!/usr/bin/env python3
"""cusp_bias_report.py OUT_JSON NAME=RUN_JSON=REFERENCE_JSON=KEY=WALL_SECONDS... -- the offset of each qmmm_vmc run from
psi4's energy (REFERENCE_JSON[KEY], hartree), with the run's reblocked error bar, written to OUT_JSON with the
date, commit (QMMM_BENCH_COMMIT or git) and host (QMMM_BENCH_DEVICE or the host name), and printed as a table."""
import datetime
import json
import os
import platform
import subprocess
import sys

out, specs = sys.argv[1], sys.argv[2:]
commit = os.environ.get("QMMM_BENCH_COMMIT")
if not commit:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
systems = {}
print(f"{'system':10} {'VMC (Ha)':>14} {'error':>10} {'psi4 (Ha)':>14} {'offset (mHa)':>13} {'sigma':>7} {'walker-sweeps':>14} {'wall (s)':>9}")
for spec in specs:
    name, run_path, ref_path, key, wall = spec.split("=")
    run = json.load(open(run_path))
    ref = json.load(open(ref_path))[key]
    cfg = run.get("n_walkers", 0) * run.get("n_blocks", 0) * run.get("steps_per_block", 0)
    off = run["energy"] - ref
    if not run.get("reblock_converged", False):
        sys.exit(f"{name}: reblocking did not converge; run longer")
    systems[name] = {"energy": run["energy"], "error": run["error"], "variance": run["variance"],
                     "reference": ref, "reference_key": key, "offset": off, "offset_error": run["error"],
                     "walker_sweeps": cfg, "seed": run.get("seed"), "ranks": run.get("n_ranks"),
                     "wall_s": float(wall)}
    print(f"{name:10} {run['energy']:14.6f} {run['error']:10.6f} {ref:14.6f} {off * 1e3:+13.2f} "
          f"{off / run['error']:+7.2f} {cfg:14.3e} {float(wall):9.0f}")
doc = {"what": "VMC energy of the cusp-corrected HF determinant (no Jastrow, default cusp radii) minus psi4's "
               "HF energy; hartree", "date": datetime.date.today().isoformat(), "commit": commit,
       "host": os.environ.get("QMMM_BENCH_DEVICE", platform.node()), "systems": systems}
tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(tmp, out)
print(f"wrote {out}")
