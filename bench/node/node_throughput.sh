#!/usr/bin/env bash
# node_throughput.sh BUILD_DIR OUT_DIR -- walker-sweeps per second of one node on the glycine case (fragment 1
# in the field of fragments 2+3, 268,938 cells; bench/vmc/glycine_nml.sh), fixed walkers and sweeps, in one run:
#   cpu_1          1 rank x 1 thread, CPU field, double
#   cpu_N          NCORES ranks x 1 thread, CPU field, double (no GPU)
#   gpu_1          1 rank x 1 thread + GPU field (PRECISION)
#   gpu_N_plain    NCORES MPI-only ranks sharing the GPU, no MPS (their pipe directory is an empty one)
#   gpu_N_mps      the same under CUDA MPS (the script starts the daemon when it runs as root and
#                  nvidia-cuda-mps-control exists, and stops it on exit; a daemon already running is used as
#                  it is and left running)
#   hyb_RxT[_mps]  R ranks x T threads + GPU field, for each RxT of HYBRID (R > 1: also under MPS)
# and the two limits of the node, measured in the same run:
#   CPU limit      NCORES independent one-core jobs at once (taskset, one per core), wavefunction only (no
#                  cubes: the field is off), WALKERS/NCORES walkers each: the sum of their walker-sweeps/s
#                  (as the CEILING mode of bench/node/mpi_scaling.sh, without the field)
#   GPU limit      the field's measured pair rate (bench field_bench, PRECISION, one call of WALKERS x electrons
#                  points, as one rank with every walker on threads makes) over the pair evaluations per
#                  walker-sweep, electrons x cells / ENERGY_EVERY (field_calls 'measured': all electrons at each
#                  measured sweep, none in between)
# Throughput = WALKERS x (EQUIL + SWEEPS) / sampling, sampling = the driver's "sampling" time: rank 0's total
# minus its setup (reading the cube, building the field); the ranks wait for each other before sampling. A configuration that fails
# or cannot run here is a row that says why; the script goes on. Writes OUT_DIR/node_throughput.{md,json}
# and every run's input, log and JSON; bench/node/node_throughput_plot.sh OUT_DIR draws the plot (gnuplot).
# Run from the repository root. Environment (defaults in brackets):
#   WALKERS [512]  SWEEPS [8, an even number: 2 blocks of SWEEPS/2]  EQUIL [0]  ENERGY_EVERY [1]
#   PRECISION [single: the GPU rows' field; CPU rows are double]  FIELD_CALLS [measured]
#   NCORES [nproc]  HYBRID ["1xNCORES 2x(NCORES/2) 4x(NCORES/4)"]  RUN_TIMEOUT [600 s per run]
#   MPIEXEC [$QMMM_MPIEXEC, else mpiexec.mpich; may carry flags]
#   BIND [core: every rank bound to its own THREADS cores (hydra's -bind-to core:T; taskset for one rank),
#        OpenMP threads to cores (OMP_PLACES=cores, OMP_PROC_BIND=close), as the CPU-limit jobs are; none: free]
#   ONLY [all: the configurations to run, by name, e.g. "cpu_16 hyb_2x8"; the two limits always run]
set -uo pipefail
build=${1:?usage: node_throughput.sh BUILD_DIR OUT_DIR}
out=${2:?usage: node_throughput.sh BUILD_DIR OUT_DIR}
walkers=${WALKERS:-512}; sweeps=${SWEEPS:-8}; equil=${EQUIL:-0}; every=${ENERGY_EVERY:-1}
prec=${PRECISION:-single}; calls=${FIELD_CALLS:-measured}
ncores=${NCORES:-$(nproc)}
hybrid=${HYBRID:-$(for r in 1 2 4; do (( r <= ncores )) && printf '%s ' "${r}x$((ncores / r))"; done)}
mpiexec=${MPIEXEC:-${QMMM_MPIEXEC:-mpiexec.mpich}}
run_timeout=${RUN_TIMEOUT:-600}
bind=${BIND:-core}; only=${ONLY:-}
exe="$build/vmc_driver/qmmm_vmc"
fbench="$build/field_bench"
source "$(dirname "$0")/../vmc/glycine_nml.sh"
mkdir -p "$out"
out=$(cd "$out" && pwd)
(( sweeps >= 2 && sweeps % 2 == 0 )) || { echo "SWEEPS=$sweeps: give an even number >= 2"; exit 2; }
(( (sweeps / 2) % every == 0 )) || { echo "ENERGY_EVERY=$every must divide SWEEPS/2 = $((sweeps / 2))"; exit 2; }
[[ -x $exe ]] || { echo "no $exe: build qmmm_vmc first"; exit 2; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
cpu_name=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
echo "machine: $(hostname), $(nproc) cores ($cpu_name), NCORES=$ncores, $ngpu GPU(s) ${gpu_name:+($gpu_name)}"
echo "glycine fragment 1, $walkers walkers x $sweeps sweeps (+$equil equilibration), energy every $every," \
     "field_calls $calls, GPU field $prec; launcher: $mpiexec"

get() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/.*: //; s/"//g'; }
maxof() { grep -o "\"$2\": [^,}]*" "$1" | sed 's/.*: //' | awk 'NR==1||$1>m{m=$1} END{print m}'; }
nml() {   # file backend precision threads [no_cubes]
  glycine_nml "$walkers" "$equil" 2 $((sweeps / 2)) "$2" "$3" "$calls" "$every" "$4" > "$1"
  [[ ${5:-} == no_cubes ]] && sed -i '/^ *cubes *=/d' "$1"
}
with_timeout() { if command -v timeout > /dev/null; then timeout "$run_timeout" "$@"; else "$@"; fi; }

rows=()   # one JSON object per configuration, in run order
row() {   # name kind ranks threads gpu mps status [sampling wall energy field wf setup mps_ranks]
  local name=$1 kind=$2 r=$3 t=$4 gpu=$5 mps=$6 status=$7
  local s=${8:-null} w=${9:-null} e=${10:-null} f=${11:-null} wf=${12:-null} su=${13:-null} mr=${14:-null} tp=null
  [[ $s != null ]] && awk "BEGIN{exit !($s > 0)}" && tp=$(awk "BEGIN{printf \"%.6g\", $walkers * ($equil + $sweeps) / $s}")
  rows+=("{\"name\": \"$name\", \"kind\": \"$kind\", \"ranks\": $r, \"threads\": $t, \"cores\": $((r * t)), \"gpu\": $gpu, \"mps\": \"$mps\", \"status\": \"$status\", \"sampling_s\": $s, \"wall_s\": $w, \"walker_sweeps_per_s\": $tp, \"energy\": $e, \"field_s\": $f, \"wavefunction_s\": $wf, \"setup_max_s\": $su, \"ranks_reporting_mps_on\": $mr}")
  printf '%-16s %3s x %-3s mps %-4s %s\n' "$name" "$r" "$t" "$mps" "$status$([[ $tp != null ]] && echo " ($tp walker-sweeps/s)")"
}

# run name kind ranks threads backend precision mps_mode(n/a|off|on): one qmmm_vmc job, recorded as a row.
run() {
  local name=$1 kind=$2 r=$3 t=$4 backend=$5 p=$6 mode=$7 gpu=false t0 t1 rc pin=() mflags=()
  [[ -n $only && " $only " != *" $name "* ]] && return
  [[ $backend == cuda ]] && gpu=true
  if [[ $bind == core ]]; then
    mflags=(-bind-to "core:$t")
    command -v taskset > /dev/null && pin=(taskset -c "0-$((t - 1))")
  fi
  if (( r * t > $(nproc) )); then row "$name" "$kind" "$r" "$t" "$gpu" "$mode" "skipped: $((r * t)) cores > $(nproc) here"; return; fi
  if (( r > walkers )); then row "$name" "$kind" "$r" "$t" "$gpu" "$mode" "skipped: more ranks than walkers"; return; fi
  nml "$out/$name.nml" "$backend" "$p" "$t"
  t0=$(date +%s.%N)
  (
    export OMP_NUM_THREADS="$t"
    [[ $bind == core ]] && export OMP_PLACES=cores OMP_PROC_BIND=close
    [[ $mode == off ]] && export CUDA_MPS_PIPE_DIRECTORY="$out/no_mps_pipe"   # no control pipe there: no MPS
    [[ $mode == on ]] && export CUDA_MPS_PIPE_DIRECTORY="$mps_pipe"
    if (( r == 1 )); then
      with_timeout "${pin[@]}" "$exe" "$out/$name.nml" "$out/$name.json"
    else
      with_timeout $mpiexec "${mflags[@]}" -n "$r" "$exe" "$out/$name.nml" "$out/$name.json"
    fi
  ) > "$out/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if (( rc != 0 )) || [[ ! -s $out/$name.json ]]; then
    local why   # the first error line (rank 0's message, before MPI's abort noise), else the last line
    why=$( { grep -m1 -i 'error' "$out/$name.log" || grep -v '^ *$' "$out/$name.log" | tail -1; } | tr -d '"\\|' | cut -c1-200)
    (( rc == 124 )) && why="timed out after ${run_timeout} s"
    row "$name" "$kind" "$r" "$t" "$gpu" "$mode" "failed (exit $rc): $why"; return
  fi
  local j=$out/$name.json su mr=null
  su=$(maxof "$j" setup)   # the driver waits for every rank's setup before sampling: rank 0's sampling is the job's
  [[ $gpu == true ]] && mr=$(grep -c '"mps": "on"' "$j")
  local s; s=$(get "$j" sampling)
  row "$name" "$kind" "$r" "$t" "$gpu" "$mode" ok "$s" "$(awk "BEGIN{printf \"%.3f\", $t1 - $t0}")" \
      "$(get "$j" energy)" "$(get "$j" field)" "$(get "$j" wavefunction)" "$su" "$mr"
}

# ---- MPS: which pipe directory, and whether this script owns the daemon ----
mps_pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
mps_log=${CUDA_MPS_LOG_DIRECTORY:-/tmp/nvidia-log}
mps_state="" mps_started=0
mkdir -p "$out/no_mps_pipe"
stop_mps() {
  if [[ $mps_started == 1 ]]; then
    echo quit | CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" nvidia-cuda-mps-control > /dev/null 2>&1
    mps_started=0
  fi
}
trap stop_mps EXIT
trap 'exit 130' INT TERM
start_mps() {   # sets mps_state: "" = MPS on; otherwise why the MPS rows cannot run
  if (( ngpu == 0 )); then mps_state="no GPU"; return; fi
  if [[ -p $mps_pipe/control || -S $mps_pipe/control ]]; then echo "MPS: a daemon already serves $mps_pipe; used as it is"; return; fi
  if ! command -v nvidia-cuda-mps-control > /dev/null; then mps_state="no nvidia-cuda-mps-control here"; return; fi
  if [[ $(id -u) != 0 ]]; then mps_state="not root: start MPS as root first (docs/user-guide/mpi-and-mps.md)"; return; fi
  mkdir -p "$mps_pipe" "$mps_log"
  if ! CUDA_MPS_PIPE_DIRECTORY="$mps_pipe" CUDA_MPS_LOG_DIRECTORY="$mps_log" nvidia-cuda-mps-control -d \
       > "$out/mps_start.log" 2>&1; then
    mps_state="nvidia-cuda-mps-control -d failed: $(tail -1 "$out/mps_start.log" | tr -d '"\\')"; return
  fi
  mps_started=1
  local i
  for ((i = 0; i < 50; i++)); do [[ -p $mps_pipe/control || -S $mps_pipe/control ]] && break; sleep 0.1; done
  if [[ -p $mps_pipe/control || -S $mps_pipe/control ]]; then echo "MPS: daemon started (pipe $mps_pipe, log $mps_log)"
  else
    ls -la "$mps_pipe" "$mps_log" >> "$out/mps_start.log" 2>&1; cat "$mps_log"/control.log >> "$out/mps_start.log" 2>/dev/null
    mps_state="the daemon started but made no $mps_pipe/control (mps_start.log)"
  fi
}
no_gpu() { row "$1" "$2" "$3" "$4" true "$5" "skipped: no GPU"; }

# ---- the configurations: everything without MPS first, then the same GPU sharing under MPS ----
run cpu_1 cpu 1 1 cpu double n/a
run "cpu_$ncores" cpu "$ncores" 1 cpu double n/a
if (( ngpu > 0 )); then
  run gpu_1 gpu 1 1 cuda "$prec" off
  run "gpu_${ncores}_plain" gpu_mpi "$ncores" 1 cuda "$prec" off
  for h in $hybrid; do run "hyb_$h" hybrid "${h%x*}" "${h#*x}" cuda "$prec" off; done
  start_mps
else
  mps_state="no GPU"
  no_gpu gpu_1 gpu 1 1 off
  no_gpu "gpu_${ncores}_plain" gpu_mpi "$ncores" 1 off
  for h in $hybrid; do no_gpu "hyb_$h" hybrid "${h%x*}" "${h#*x}" off; done
fi
mps_rows() {   # under MPS, or rows that say why not
  local name=$1 kind=$2 r=$3 t=$4
  if [[ -z $mps_state ]]; then run "$name" "$kind" "$r" "$t" cuda "$prec" on
  else row "$name" "$kind" "$r" "$t" true on "skipped: $mps_state"; fi
}
mps_rows "gpu_${ncores}_mps" gpu_mpi "$ncores" 1
for h in $hybrid; do
  (( ${h%x*} > 1 )) && mps_rows "hyb_${h}_mps" hybrid "${h%x*}" "${h#*x}"
done
stop_mps

# ---- CPU limit: NCORES independent one-core wavefunction-only jobs at once ----
cpu_limit=null cpu_limit_note=""
nml "$out/ceil.nml" cpu double 1 no_cubes
sed -i "s/n_walkers = $walkers,/n_walkers = $(( walkers / ncores > 0 ? walkers / ncores : 1 )),/" "$out/ceil.nml"
pids=()
for ((c = 0; c < ncores; c++)); do
  pin=(); command -v taskset > /dev/null && (( c < $(nproc) )) && pin=(taskset -c "$c")
  OMP_NUM_THREADS=1 with_timeout "${pin[@]}" "$exe" "$out/ceil.nml" "$out/ceil_$c.json" > "$out/ceil_$c.log" 2>&1 &
  pids+=($!)
done
failed=0
for c in "${!pids[@]}"; do wait "${pids[$c]}" || failed=$((failed + 1)); done
if (( failed == 0 )); then
  cpu_limit=$(for ((c = 0; c < ncores; c++)); do
      j=$out/ceil_$c.json
      echo "$(get "$j" n_walkers) $(get "$j" total) $(maxof "$j" setup)"
    done | awk -v sw=$((equil + sweeps)) '{t += $1 * sw / ($2 - $3)} END{printf "%.6g", t}')
  cpu_limit_note="$ncores one-core jobs of $(get "$out/ceil_0.json" n_walkers) walkers, wavefunction only"
else
  cpu_limit_note="failed: $failed of $ncores jobs (see $out/ceil_*.log)"
fi
echo "CPU limit: $cpu_limit walker-sweeps/s ($cpu_limit_note)"

# ---- GPU limit: the field's measured pair rate over the pairs of one walker-sweep ----
gpu_limit=null gpu_rate=null gpu_limit_note=""
ref=$out/cpu_1.json; [[ -s $ref ]] || ref=$(ls "$out"/*.json 2>/dev/null | grep -v 'ceil_\|node_throughput' | head -1)
ne=$( [[ -n $ref && -s $ref ]] && get "$ref" n_electrons); ncells=$( [[ -n $ref && -s $ref ]] && get "$ref" n_cells)
if (( ngpu == 0 )); then
  gpu_limit_note="no GPU"
elif [[ -z $ne || -z $ncells ]]; then
  gpu_limit_note="no run finished, so electrons and cells are unknown"
elif [[ ! -x $fbench ]]; then
  gpu_limit_note="no $fbench"
else
  pts=$((walkers * ne))
  pe=$every; [[ $calls != measured ]] && pe=1   # the other modes evaluate the moved electron at every step
  if with_timeout "$fbench" --only-cuda --cells "$ncells" --points "$pts" --handles 0 --min-time 0.5 \
       --json "$out/field_bench.json" > "$out/field_bench.log" 2>&1; then
    gpu_rate=$(tr -d ' \n' < "$out/field_bench.json" | grep -o "{[^{}]*\"impl\":\"cuda_$prec\"[^{}]*}" |
               grep -o '"gpairs_per_s":[^,}]*' | head -1 | sed 's/.*://')
    if [[ -n $gpu_rate ]]; then
      gpu_limit=$(awk "BEGIN{printf \"%.6g\", $gpu_rate * 1e9 * $pe / ($ne * $ncells)}")
      gpu_limit_note="cuda_$prec at $pts points per call: $gpu_rate G pairs/s over $ne electrons x $ncells cells / $pe"
    else
      gpu_rate=null; gpu_limit_note="field_bench wrote no cuda_$prec row"
    fi
  else
    gpu_limit_note="field_bench failed: $(tail -1 "$out/field_bench.log" | tr -d '"\\')"
  fi
fi
echo "GPU limit: $gpu_limit walker-sweeps/s ($gpu_limit_note)"
node_limit=$(awk -v a="$cpu_limit" -v b="$gpu_limit" 'BEGIN{
  if (a == "null" && b == "null") print "null"; else if (a == "null") print b; else if (b == "null") print a;
  else print (a + 0 < b + 0 ? a : b)}')

# ---- table and JSON ----
{
  echo "Glycine fragment 1 in fragments 2+3 (${ncells:-?} cells, ${ne:-?} electrons), $walkers walkers x $sweeps sweeps" \
       "(+$equil equilibration), energy every $every, field_calls $calls, seed 4; GPU rows: $prec field; CPU rows: double."
  echo "Machine $(hostname): $ncores of $(nproc) cores ($cpu_name), $ngpu x ${gpu_name:-no GPU}; launcher $mpiexec, binding $bind."
  echo ""
  echo "| configuration | ranks x threads | GPU | MPS | walker-sweeps/s | % of node limit | sampling (s) | wall (s) | field (s) | wavefunction (s) | energy (hartree) | status |"
  echo "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  for r in "${rows[@]}"; do
    jq_() { grep -o "\"$1\": [^,}]*" <<<"$r" | head -1 | sed 's/.*: //; s/"//g'; }
    tp=$(jq_ walker_sweeps_per_s) gpu=$(jq_ gpu)
    pct="-"
    [[ $tp != null && $gpu == true && $node_limit != null ]] && pct=$(awk "BEGIN{printf \"%.0f %%\", 100 * $tp / $node_limit}")
    f3() { [[ $1 == null ]] && echo "-" || awk "BEGIN{printf \"%.3f\", $1}"; }
    mpsw=$(jq_ mps); [[ $gpu == true && $(jq_ ranks_reporting_mps_on) != null ]] && mpsw="$mpsw ($(jq_ ranks_reporting_mps_on) on)"
    echo "| $(jq_ name) | $(jq_ ranks) x $(jq_ threads) | $gpu | $mpsw | $([[ $tp == null ]] && echo - || printf '%.4g' "$tp") | $pct |" \
         "$(f3 "$(jq_ sampling_s)") | $(f3 "$(jq_ wall_s)") | $(f3 "$(jq_ field_s)") | $(f3 "$(jq_ wavefunction_s)") |" \
         "$([[ $(jq_ energy) == null ]] && echo - || awk "BEGIN{printf \"%.10f\", $(jq_ energy)}") | $(grep -o '"status": "[^"]*"' <<<"$r" | sed 's/"status": "//; s/"$//') |"
  done
  echo ""
  echo "- CPU limit: $([[ $cpu_limit == null ]] && echo - || printf '%.4g' "$cpu_limit") walker-sweeps/s ($cpu_limit_note)."
  echo "- GPU limit: $([[ $gpu_limit == null ]] && echo - || printf '%.4g' "$gpu_limit") walker-sweeps/s ($gpu_limit_note)."
  best=$(printf '%s\n' "${rows[@]}" | grep '"gpu": true' | grep -o '"walker_sweeps_per_s": [0-9.e+-]*' |
         sed 's/.*: //' | sort -g | tail -1)
  cpun=$(printf '%s\n' "${rows[@]}" | grep "\"name\": \"cpu_$ncores\"" | grep -o '"walker_sweeps_per_s": [0-9.e+-]*' |
         sed 's/.*: //')
  [[ -n $best && -n $cpun ]] && echo "- Best GPU configuration over cpu_$ncores (the node's cores, double, no GPU):" \
       "$(awk "BEGIN{printf \"%.1f\", $best / $cpun}") (seed 004's merit factor when PRECISION=double)."
  echo "- Node limit = min(CPU limit, GPU limit) = $([[ $node_limit == null ]] && echo - || printf '%.4g' "$node_limit");" \
       "% of node limit is shown for GPU rows. MPS column: the mode asked for (and how many ranks' reports said 'mps on')."
} > "$out/node_throughput.md"
cat "$out/node_throughput.md"
esc() { tr -d '"\\' <<<"$1"; }
{
  echo "{\"system\": \"glycine fragment 1 + fragments 2+3\", \"n_cells\": ${ncells:-null}, \"n_electrons\": ${ne:-null},"
  echo " \"walkers\": $walkers, \"sweeps\": $sweeps, \"equil\": $equil, \"energy_every\": $every, \"field_calls\": \"$calls\","
  echo " \"gpu_precision\": \"$prec\", \"cores\": $ncores, \"host_cores\": $(nproc), \"gpus\": $ngpu, \"gpu_name\": \"$(esc "$gpu_name")\","
  echo " \"cpu\": \"$(esc "$cpu_name")\", \"mpiexec\": \"$(esc "$mpiexec")\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo " \"commit\": \"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\","
  echo " \"throughput\": \"walkers x (equil + sweeps) / sampling; sampling = rank 0 total - rank 0 setup (the driver's ranks start sampling together, after a barrier)\","
  echo " \"limits\": {\"cpu_walker_sweeps_per_s\": $cpu_limit, \"cpu_note\": \"$(esc "$cpu_limit_note")\","
  echo "   \"gpu_walker_sweeps_per_s\": $gpu_limit, \"gpu_field_gpairs_per_s\": $gpu_rate, \"gpu_note\": \"$(esc "$gpu_limit_note")\","
  echo "   \"node_walker_sweeps_per_s\": $node_limit},"
  echo " \"runs\": ["
  sep=""
  for r in "${rows[@]}"; do echo "  $sep$r"; sep=","; done
  echo " ]}"
} > "$out/node_throughput.json"
echo "JSON: $out/node_throughput.json (plot: bench/node/node_throughput_plot.sh $out)"
