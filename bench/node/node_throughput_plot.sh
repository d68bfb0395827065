#!/usr/bin/env bash
# node_throughput_plot.sh OUT_DIR -- OUT_DIR/node_throughput.png from bench/node/node_throughput.sh's
# OUT_DIR/node_throughput.json: walker-sweeps per second against the MPI ranks of a configuration, one series
# per kind (CPU field; MPI-only ranks on the GPU without and with MPS; ranks x threads + GPU, where the threads
# fill the node), each point labelled ranks x threads, and the node's CPU and GPU limits as horizontal lines. Needs gnuplot (the GPU
# machine has none: run the bench there, this here). Rows that did not run are left out.
set -euo pipefail
out=${1:?usage: node_throughput_plot.sh OUT_DIR}
js="$out/node_throughput.json"
[[ -s $js ]] || { echo "no $js: run bench/node/node_throughput.sh first"; exit 2; }
command -v gnuplot > /dev/null || { echo "no gnuplot here (scripts/install_deps.sh installs gnuplot-nox)"; exit 2; }
num() { grep -o "\"$1\": [^,}]*" <<<"$2" | head -1 | sed 's/.*: //; s/"//g'; }
# One data file per series: ranks, throughput, label (the run lines are one JSON object each).
series=(cpu gpu_plain gpu_mps hybrid_plain hybrid_mps)
for s in "${series[@]}"; do : > "$out/plot_$s.dat"; done
while IFS= read -r line; do
  tp=$(num walker_sweeps_per_s "$line"); [[ $tp == null ]] && continue
  kind=$(num kind "$line"); mps=$(num mps "$line")
  case $kind in
    cpu) s=cpu ;;
    gpu | gpu_mpi) s=gpu_$([[ $mps == on ]] && echo mps || echo plain) ;;
    hybrid) s=hybrid_$([[ $mps == on ]] && echo mps || echo plain) ;;
    *) continue ;;
  esac
  echo "$(num ranks "$line") $tp $(num ranks "$line")x$(num threads "$line")" >> "$out/plot_$s.dat"
done < <(grep '^ *,\?{"name"' "$js")
lim() { grep -o "\"$1\": [^,}]*" "$js" | head -1 | sed 's/.*: //'; }
cpu_limit=$(lim cpu_walker_sweeps_per_s); gpu_limit=$(lim gpu_walker_sweeps_per_s)
gpu=$(grep -o '"gpu_name": "[^"]*"' "$js" | sed 's/.*: "//; s/"$//')
title="glycine fragment 1: $(lim walkers) walkers x $(lim sweeps) sweeps, $(lim cores) cores, ${gpu:-no GPU}"
plots=()
add() {   # file title style
  [[ -s $out/plot_$1.dat ]] || return 0
  plots+=("'$out/plot_$1.dat' using 1:2 with linespoints $3 title '$2'")
  plots+=("'$out/plot_$1.dat' using 1:2:3 with labels offset 0,0.8 font ',8' notitle")
}
add cpu "CPU field (double)" "pt 7 lc rgb '#555555'"
add gpu_plain "MPI ranks + GPU, plain" "pt 5 lc rgb '#d62728'"
add gpu_mps "MPI ranks + GPU, MPS" "pt 5 lc rgb '#ff7f0e'"
add hybrid_plain "ranks x threads + GPU" "pt 9 lc rgb '#1f77b4'"
add hybrid_mps "ranks x threads + GPU, MPS" "pt 9 lc rgb '#2ca02c'"
[[ $cpu_limit != null ]] && plots+=("$cpu_limit with lines dt 2 lc rgb '#555555' title 'CPU limit (wavefunction only, all cores)'")
[[ $gpu_limit != null ]] && plots+=("$gpu_limit with lines dt 3 lc rgb '#9467bd' title 'GPU limit (field pair rate)'")
(( ${#plots[@]} > 0 )) || { echo "no finished configuration in $js: nothing to plot"; exit 1; }
term="pngcairo size 1000,650"
gnuplot -e "set terminal pngcairo" > /dev/null 2>&1 || term="png size 1000,650"
IFS=,; plot_cmd="${plots[*]}"; unset IFS
gnuplot <<GP
set terminal $term
set output '$out/node_throughput.png'
set title "$title"
set xlabel 'MPI ranks on the node (label: ranks x threads)'
set ylabel 'walker-sweeps per second'
set logscale xy 2
set format y '%.0s%c'
set grid
set key bottom right
set xrange [0.7:$(( $(lim cores) * 3 / 2 ))]
set yrange [*:*]
set offsets 0, 0, graph 0.08, 0
plot $plot_cmd
GP
echo "plot: $out/node_throughput.png"
