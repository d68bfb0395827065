#!/usr/bin/env bash
# vmc_wf_profile.sh BUILD_DIR [OUT_DIR] [WALKERS] [SWEEPS] [REPEAT] -- the wavefunction's cost per walker-sweep
# on one core: glycine fragment 1 (18 electrons, 40 cartesian 6-31G* functions, Jastrow b_ee 3, b_en 30 as in
# data/glycine_trimer/frag1_vmc.nml) without the environment (the field is measured by vmc_bench.sh and
# vmc_field_modes.sh), a local energy every sweep (as vmc_bench.sh), one thread.
#  1. timing: the driver's wavefunction time / (walkers x sweeps, equilibration included), best of REPEAT runs
#     (default 3; WALKERS 128, SWEEPS 40: 10 equilibration + 30 accumulation);
#  2. valgrind --tool=callgrind on a short run (16 walkers, 4 + 8 sweeps), collecting inside the wavefunction's
#     entry points only (wf_ratio, wf_accept, wf_local_energy, wf_invert: moves, updates, local energies,
#     recomputations, not the setup; the same names in every version of the driver): exact instruction
#     counts per walker-sweep and the functions that spend them (callgrind_annotate, inclusive and self).
# Writes OUT_DIR/wf_profile.txt (everything printed) and OUT_DIR/wf_profile.json. From the repository root.
set -euo pipefail
build=${1:?usage: vmc_wf_profile.sh BUILD_DIR [OUT_DIR] [WALKERS] [SWEEPS] [REPEAT]}
out=${2:-vmc_wf_profile_out}; walkers=${3:-128}; sweeps=${4:-40}; repeat=${5:-3}
exe="$build/vmc_driver/qmmm_vmc_nompi"; [[ -x $exe ]] || exe="$build/vmc_driver/qmmm_vmc"
mkdir -p "$out"
nml() {   # WALKERS EQUIL BLOCKS STEPS
  cat <<NML
&vmc
  molden = 'data/glycine_trimer/frag1_embedded.molden'
  jastrow = .true., b_ee = 3.0, b_en = 30.0
  n_walkers = $1, n_equil = $2, n_blocks = $3, steps_per_block = $4, energy_every = 1
  seed = 4, n_threads = 1
/
NML
}
get() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/.*: //'; }
acc=$(( sweeps - 10 )); spb=$(( acc / 2 ))
nml "$walkers" 10 2 "$spb" > "$out/timing.nml"
best=""
{
  echo "== timing: $walkers walkers x $((10 + 2 * spb)) sweeps, one thread, best of $repeat ($exe)"
  for r in $(seq "$repeat"); do
    OMP_NUM_THREADS=1 "$exe" "$out/timing.nml" "$out/timing.json" > "$out/timing.log"
    w=$(get "$out/timing.json" wavefunction)
    us=$(awk "BEGIN{printf \"%.2f\", 1e6*$w/($walkers*(10 + 2*$spb))}")
    echo "run $r: wavefunction $w s = $us us per walker-sweep; energy $(get "$out/timing.json" energy)"
    if [[ -z $best ]] || awk "BEGIN{exit !($us < $best)}"; then best=$us; fi
  done
  echo "best: $best us per walker-sweep"
  nml 16 4 2 4 > "$out/callgrind.nml"
  OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
    --toggle-collect='__vmc_wavefunction_MOD_wf_ratio' --toggle-collect='__vmc_wavefunction_MOD_wf_accept' \
    --toggle-collect='__vmc_wavefunction_MOD_wf_local_energy' --toggle-collect='__vmc_wavefunction_MOD_wf_invert' \
    "$exe" "$out/callgrind.nml" \
    "$out/callgrind.json" > "$out/callgrind.log" 2> "$out/callgrind.err"
  callgrind_annotate "$out/callgrind.out" > "$out/callgrind_self.txt" 2>/dev/null
  callgrind_annotate --inclusive=yes "$out/callgrind.out" > "$out/callgrind_inclusive.txt" 2>/dev/null
  total=$(awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1; exit}' "$out/callgrind_self.txt")
  echo "== callgrind: 16 walkers x 12 sweeps = 192 walker-sweeps, $total instructions in the wavefunction," \
       "$(awk "BEGIN{printf \"%.0f\", $total/192}") per walker-sweep (wavefunction only)"
  echo "== self cost (top 15)"
  sed -n '/^Ir/,$p' "$out/callgrind_self.txt" | sed -n '3,17p'
  echo "== inclusive cost (top 20)"
  sed -n '/^Ir/,$p' "$out/callgrind_inclusive.txt" | sed -n '3,22p'
} | tee "$out/wf_profile.txt"
echo "{\"system\": \"glycine fragment 1, no environment, jastrow\", \"walkers\": $walkers, \"sweeps\": $((10 + 2 * spb)), \"us_per_walker_sweep_best\": $best, \"callgrind_instructions_192_walker_sweeps\": ${total:-0}}" > "$out/wf_profile.json"
