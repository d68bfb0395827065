#!/usr/bin/env bash
# mpi_scaling.sh BUILD_DIR [OUT_DIR] -- seed 004's Table 5 for qmmm_vmc: the glycine case (fragment 1 in the
# field of fragments 2+3, 268,938 cells; data/glycine_trimer/frag1_vmc.nml with the settings below) at a
# fixed total number of walkers and sweeps, run with 1, 2, 4, 8, 16 MPI ranks CPU-only (one core each,
# n_threads = 1) and with GPUs (device = node-local rank mod GPUs: ranks = GPUs, then several ranks per GPU).
# Prints Markdown tables (wall and sampling time, speed-up, parallel efficiency, the merit factor of seed
# 004's Table 8: the node with its GPU(s) against the same node's CPU cores all busy, same run) and writes
# OUT_DIR/mpi_scaling.json (bench/node/mpi_scaling_report.py makes the tables; it needs python3).
# Run from the repository root. Environment knobs (defaults in brackets):
#   WALKERS [512]  SWEEPS [10]  PRECISION [double]  CPU_RANKS ["1 2 4 8 16"]  GPU_RANKS ["1 2 4 8 16"]
#   MPIEXEC [mpiexec; may carry flags, e.g. "mpiexec -bind-to core"]  TAG [a name for this machine in the JSON]
#   BALANCE [0; 1: balance_walkers = .true., walker shares by each rank's equilibration speed, so one slow
#   core does not hold up the rest]  EQUIL [5: equilibration sweeps, which are also what BALANCE measures]
#   REPEAT [1: runs of each row; the fastest (wall) is kept, for machines whose speed drifts between runs]
#   CEILING [0; 1: for each CPU rank count N > 1 also run N independent one-rank jobs at once, pinned one per
#   core (taskset), each with WALKERS/N walkers: the node's own limit (memory, clocks, neighbours) on
#   N-core throughput, which no MPI code can beat; reported next to the MPI efficiency]
# Same seed and walkers => every rank count visits the same configurations; the energies are compared too.
set -euo pipefail
build=${1:?usage: mpi_scaling.sh BUILD_DIR [OUT_DIR]}
out=${2:-mpi_scaling_out}
walkers=${WALKERS:-512}; sweeps=${SWEEPS:-10}; prec=${PRECISION:-double}
cpu_ranks=${CPU_RANKS-"1 2 4 8 16"}; gpu_ranks=${GPU_RANKS-"1 2 4 8 16"}
mpiexec=${MPIEXEC:-mpiexec}
exe="$build/vmc_driver/qmmm_vmc"
source "$(dirname "$0")/../vmc/glycine_nml.sh"
mkdir -p "$out"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
ncores=$(nproc)
echo "machine: $(hostname), $ncores cores ($(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)), $ngpu GPU(s)"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c || true

glycine_nml "$walkers" "${EQUIL:-5}" 2 $((sweeps / 2)) cpu "$prec" > "$out/cpu.nml"
glycine_nml "$walkers" "${EQUIL:-5}" 2 $((sweeps / 2)) cuda "$prec" > "$out/cuda.nml"
if [[ ${BALANCE:-0} == 1 ]]; then
  sed -i 's|^/$|  balance_walkers = .true.\n/|' "$out/cpu.nml" "$out/cuda.nml"
fi

runs=()
run() {   # name backend ranks; REPEAT times, the fastest kept as name.{json,log,wall}
  local t0 t1 i w best=""
  for ((i = 1; i <= ${REPEAT:-1}; i++)); do
    t0=$(date +%s.%N)
    OMP_NUM_THREADS=1 $mpiexec -n "$3" "$exe" "$out/$2.nml" "$out/$1.try.json" > "$out/$1.try.log" 2>&1 || {
      echo "$1 failed:"; tail -5 "$out/$1.try.log"; return 1; }
    t1=$(date +%s.%N)
    w=$(awk "BEGIN{print $t1 - $t0}")
    printf '%-12s %3s ranks  wall %8.3f s\n' "$1" "$3" "$w"
    if [[ -z $best ]] || awk "BEGIN{exit !($w < $best)}"; then
      best=$w; mv "$out/$1.try.json" "$out/$1.json"; mv "$out/$1.try.log" "$out/$1.log"; echo "$w" > "$out/$1.wall"
    fi
  done
  rm -f "$out/$1.try.json" "$out/$1.try.log"
  runs+=("$1")
}
ceiling() {   # N independent one-rank jobs at once, one per core, WALKERS/N walkers each
  local n=$1 c
  glycine_nml $((walkers / n)) "${EQUIL:-5}" 2 $((sweeps / 2)) cpu "$prec" > "$out/ceil_$n.nml"
  local pids=() failed=0
  for ((c = 0; c < n; c++)); do
    OMP_NUM_THREADS=1 taskset -c "$c" "$exe" "$out/ceil_$n.nml" "$out/ceil_${n}_$c.json" > "$out/ceil_${n}_$c.log" 2>&1 &
    pids+=($!)
  done
  for c in "${!pids[@]}"; do
    wait "${pids[$c]}" || { failed=1; echo "ceiling_$n job $c failed:"; tail -3 "$out/ceil_${n}_$c.log"; }
  done
  [[ $failed == 0 ]] || return 1
  printf 'ceiling_%-4s %3s independent one-rank jobs\n' "$n" "$n"
}
for n in $cpu_ranks; do
  [ "$n" -le "$ncores" ] || { echo "skipping cpu_$n: only $ncores cores"; continue; }
  run "cpu_$n" cpu "$n"
  [[ ${CEILING:-0} == 1 && $n -gt 1 ]] && ceiling "$n"
done
if [ "$ngpu" -gt 0 ]; then
  for n in $gpu_ranks; do run "gpu_$n" cuda "$n"; done
fi
printf '%s\n' "${runs[@]}" > "$out/runs.txt"
cat > "$out/meta.json" <<JSON
{"tag": "${TAG:-$(hostname)}", "cores": $ncores, "gpus": $ngpu, "gpu_name": "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)",
 "cpu": "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)", "walkers": $walkers, "sweeps": $sweeps, "precision": "$prec",
 "equil": ${EQUIL:-5}, "repeat": ${REPEAT:-1}, "balance": ${BALANCE:-0}, "mpiexec": "$mpiexec"}
JSON
if command -v python3 > /dev/null; then
  python3 bench/node/mpi_scaling_report.py "$out"
else
  echo "(no python3 here: run 'python3 bench/node/mpi_scaling_report.py $out' where there is one)"
fi
