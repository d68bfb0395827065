#!/usr/bin/env bash
# cusp_bias.sh -- the long runs behind the VMC tests' expected offsets: the energy of an HF determinant with
# cusp-corrected MOs (no Jastrow, no environment) minus psi4's HF energy. The corrected MOs leave the Gaussian
# basis, so their determinant's energy is not exactly psi4's; vmc_water_hf, vmc_water_dimer_embedded and
# vmc_glycine_hf expect this offset with its error bar (vmc_driver/tests/vmc_tests.cmake reads the JSON).
#   bash bench/vmc/cusp_bias.sh BUILD_DIR OUT_JSON RANKS SECONDS_WATER SECONDS_GLYCINE [SEED]
# The tests read data/cusp_bias.json: write the new run there to change what they expect.
# Each system runs for about its SECONDS on RANKS MPI ranks (the sweeps are sized from a short timing run), at the
# default cusp radii, then bench/vmc/cusp_bias_report.py writes OUT_JSON: per system the VMC energy, its reblocked error
# bar, psi4's reference, the offset and the walker-sweeps; plus date, commit and host.
set -euo pipefail
build=${1:?BUILD_DIR}; out_json=${2:?OUT_JSON}; ranks=${3:?RANKS}
secs_w=${4:?SECONDS_WATER}; secs_g=${5:?SECONDS_GLYCINE}; seed=${6:-7401}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
launch=()
[[ $ranks -gt 1 ]] && launch=("${QMMM_MPIEXEC:-mpiexec.mpich}" -n "$ranks")
cd "$root"

# run NAME MOLDEN REF_KEY WALKERS_PER_RANK STEPS_PER_BLOCK: one run of 20 blocks, energy every 4 sweeps.
run() {
  cat > "$work/$1.nml" <<NML
&vmc
  molden = '$2'
  jastrow = .false.
  n_walkers = $(( $4 * ranks )), n_equil = 300, n_blocks = 20, steps_per_block = $5, energy_every = 4
  seed = $seed, output_json = '$work/$1.json'
/
NML
  "${launch[@]}" "$build/vmc_driver/qmmm_vmc" "$work/$1.nml" > "$work/$1.txt"
}

# Sweeps per block for about SECONDS: a timing run of 300 + 20 x 200 sweeps (long enough that the start-up does
# not count), scaled to a multiple of 4.
size() {
  local t0 t1; t0=$(date +%s.%N)
  run "$1_probe" "$2" "$3" 64 200
  t1=$(date +%s.%N)
  python3 -c "import sys; t=float(sys.argv[2])-float(sys.argv[1]); print(max(40, int((float(sys.argv[3]) * 4300 / t - 300) / 20) // 4 * 4))" \
    "$t0" "$t1" "$4"
}

timed() {
  local t0; t0=$(date +%s)
  run "$@"
  echo $(( $(date +%s) - t0 )) > "$work/$1.wall"
}

spb_w=$(size water data/water/water.molden total_energy "$secs_w")
spb_g=$(size glycine data/glycine_trimer/frag1_embedded.molden energy_without_environment_terms "$secs_g")
echo "cusp_bias: water $spb_w, glycine $spb_g sweeps a block, 64 walkers a rank, $ranks ranks"
timed water data/water/water.molden total_energy 64 "$spb_w"
timed glycine data/glycine_trimer/frag1_embedded.molden energy_without_environment_terms 64 "$spb_g"
python3 "$root/bench/vmc/cusp_bias_report.py" "$out_json" \
  "water=$work/water.json=data/water/reference.json=total_energy=$(cat "$work/water.wall")" \
  "glycine=$work/glycine.json=data/glycine_trimer/reference.json=energy_without_environment_terms=$(cat "$work/glycine.wall")"
