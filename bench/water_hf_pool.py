#!/usr/bin/env python3
"""water_hf_pool.py REFERENCE_JSON RUN_JSON... -- pools independent qmmm_vmc runs (different seeds, same input)
by inverse variance and compares the pooled energy with psi4's (REFERENCE_JSON's total_energy, hartree).
Each run's error bar is its own reblocked one; independent seeds make the runs independent Markov chains."""
import json
import sys

ref = json.load(open(sys.argv[1]))["total_energy"]
runs = [json.load(open(f)) for f in sys.argv[2:]]
for f, r in zip(sys.argv[2:], runs):
    d = r["energy"] - ref
    print(f"{f}: {r['energy']:.6f} +- {r['error']:.6f} (variance {r['variance']:.2f}): "
          f"{d * 1e3:+.2f} mHa = {d / r['error']:+.2f} error bars")
w = [1 / r["error"] ** 2 for r in runs]
e = sum(wi * r["energy"] for wi, r in zip(w, runs)) / sum(w)
err = sum(w) ** -0.5
d = e - ref
label = "water HF" if len(runs) == 1 else f"water HF, {len(runs)} runs pooled"
print(f"{label}: VMC {e:.6f} +- {err:.6f}, psi4 {ref:.6f}: {d * 1e3:+.2f} mHa = {d / err:+.2f} error bars")
