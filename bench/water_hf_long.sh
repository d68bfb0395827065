#!/usr/bin/env bash
# water_hf_long.sh -- the long run of issue 5: water, HF determinant (cusp-corrected MOs), no Jastrow, no
# environment, against psi4's HF energy (data/water/reference.json), with an error bar of ~0.5 mHa.
#   bash bench/water_hf_long.sh BUILD_DIR OUT_DIR RANKS SWEEPS [SEED] [CUSP_RC_Z CUSP_RC_MAX]
# SWEEPS: accumulation sweeps of 1000 walkers (20 blocks); a local energy every 4 sweeps. 0.5 mHa takes
# ~8e8 walker-sweeps: SWEEPS = 800000, ~1 h on 2 cores, ~8 min on 16. Runs with different SEEDs are
# independent (pool them by inverse variance). Writes OUT_DIR/water_hf_long.json and .txt; prints the
# deviation from psi4 in error bars.
set -euo pipefail
build=${1:?BUILD_DIR}; out=${2:?OUT_DIR}; ranks=${3:?RANKS}; sweeps=${4:?SWEEPS}; seed=${5:-7001}
rcz=${6:-0.5}; rcmax=${7:-0.2}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"; out=$(cd "$out" && pwd)
spb=$(( (sweeps / 20 + 3) / 4 * 4 ))
cat > "$out/water_hf_long.nml" <<NML
&vmc
  molden = 'data/water/water.molden'
  jastrow = .false.
  n_walkers = 1000, n_equil = 200, n_blocks = 20, steps_per_block = $spb, energy_every = 4
  cusp_rc_z = $rcz, cusp_rc_max = $rcmax
  seed = $seed, output_json = '$out/water_hf_long.json'
/
NML
cd "$root"
launch=()
[[ $ranks -gt 1 ]] && launch=("${QMMM_MPIEXEC:-mpiexec.mpich}" -n "$ranks")
"${launch[@]}" "$build/vmc_driver/qmmm_vmc" "$out/water_hf_long.nml" | tee "$out/water_hf_long.txt"
python3 "$root/bench/water_hf_pool.py" "$root/data/water/reference.json" "$out/water_hf_long.json"
