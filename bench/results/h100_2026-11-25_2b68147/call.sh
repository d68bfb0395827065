#!/usr/bin/env bash
# Call G (2b68147, the code of f7473ef): every measured README table on the final code: field_bench (direct sum, GPU and
# CPU rows), the node throughput (single; double against seed 004's merit factor), the precision study, the split field.
set -uo pipefail
export QMMM_BENCH_COMMIT=2b68147847a89cced2320667fac0fa8d5909a518 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_2b68147; mkdir -p $D
t0=$(date +%s)
pack() { cp .devkit/callG.sh $D/call.sh; tar czf $OUT/callG.tgz $D; }
timeout 100 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_|cpu_" $D/field.log | head -24
pack
timeout 100 bash bench/run_bench.sh $D/precision -- bash bench/precision_study.sh $B $D/precision > /dev/null 2>&1
echo "precision rc=$? t=$(( $(date +%s)-t0 ))"; tail -6 $D/precision.log
pack
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 260 bash bench/run_bench.sh $D/node_single -- bash bench/node_throughput.sh $B $D/node_single > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "^\| |^- " $D/node_single/node_throughput.md | cut -c1-160 | head -20
pack
PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 120 bash bench/run_bench.sh $D/node_double -- bash bench/node_throughput.sh $B $D/node_double > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "^\| |^- " $D/node_double/node_throughput.md | cut -c1-160 | head -14
pack
timeout $(( 575 - ($(date +%s)-t0) )) bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double|direct single +gpu" $D/field_split_bench.log | head -40
cp .devkit/callG.sh $D/call.sh
tar czf $OUT/callG.tgz $D
