#!/usr/bin/env bash
# precision_study.sh BUILD_DIR [OUT_DIR] -- the glycine case (fragment 1 in fragments 2+3, 268,938 cells)
# with one seed in CPU double, CUDA double, CUDA single and CUDA mixed. Acceptance never uses the field,
# so all four visit the same configurations and every difference in energy is the field's precision.
# Then bench/vmc/precision_study_report.py prints the Markdown table (energy, error bar, deviation from CPU
# double, wall time, speed-up) and writes OUT_DIR/precision_study.json and the running deviation per block
# (precision_study.dat); bench/vmc/precision_study.gp plots it (gnuplot, PNG). Run from the repository root.
# Knobs: WALKERS [256] BLOCKS [20] STEPS [5] CPU_RANKS [min(16, cores)] GPU_RANKS [GPUs] MPIEXEC [mpiexec]
set -euo pipefail
build=${1:?usage: precision_study.sh BUILD_DIR [OUT_DIR]}
out=${2:-precision_study_out}
walkers=${WALKERS:-256}; blocks=${BLOCKS:-20}; steps=${STEPS:-5}
ncores=$(nproc); ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
cpu_ranks=${CPU_RANKS:-$(( ncores < 16 ? ncores : 16 ))}; gpu_ranks=${GPU_RANKS:-$(( ngpu > 0 ? ngpu : 1 ))}
mpiexec=${MPIEXEC:-mpiexec}
source "$(dirname "$0")/glycine_nml.sh"
exe="$build/vmc_driver/qmmm_vmc"
mkdir -p "$out"
runs=${PRECISION_RUNS:-"cpu_double cuda_double cuda_single cuda_mixed"}
: > "$out/runs.txt"
for r in $runs; do
  be=${r%_*}; pr=${r#*_}
  n=$([ "$be" = cpu ] && echo "$cpu_ranks" || echo "$gpu_ranks")
  glycine_nml "$walkers" 10 "$blocks" "$steps" "$be" "$pr" > "$out/$r.nml"
  t0=$(date +%s.%N)
  if OMP_NUM_THREADS=1 "$mpiexec" -n "$n" "$exe" "$out/$r.nml" "$out/$r.json" > "$out/$r.log" 2>&1; then
    t1=$(date +%s.%N)
    awk "BEGIN{print $t1 - $t0}" > "$out/$r.wall"
    echo "$r $n" >> "$out/runs.txt"
    echo "$r: $n ranks, $(cat "$out/$r.wall") s"
  else
    echo "$r failed:"; tail -3 "$out/$r.log"
  fi
done
cat > "$out/meta.json" <<JSON
{"tag": "${TAG:-$(hostname)}", "cores": $ncores, "gpus": $ngpu, "gpu_name": "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)",
 "cpu": "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)", "walkers": $walkers, "blocks": $blocks, "steps_per_block": $steps}
JSON
if command -v python3 > /dev/null; then
  python3 bench/vmc/precision_study_report.py "$out"
  if command -v gnuplot > /dev/null; then gnuplot -e "dir='$out'" bench/vmc/precision_study.gp && echo "plot: $out/precision_study.png"; fi
else
  echo "(no python3 here: run 'python3 bench/vmc/precision_study_report.py $out; gnuplot -e \"dir='$out'\" bench/vmc/precision_study.gp')"
fi
