#!/usr/bin/env bash
# Call E (8f31edd, the code of 34ca15d): the README's other measured tables on the current code: field_bench (direct sum, GPU and
# CPU rows), the node throughput (single; double against seed 004's merit factor) and the precision study.
set -uo pipefail
export QMMM_BENCH_COMMIT=8f31eddca9c031f0069eb7092326dd95d2e210cd QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_8f31edd; mkdir -p $D
t0=$(date +%s)
timeout 100 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_|cpu_" $D/field.log | head -24
timeout 100 bash bench/run_bench.sh $D/precision -- bash bench/precision_study.sh $B $D/precision > /dev/null 2>&1
echo "precision rc=$? t=$(( $(date +%s)-t0 ))"; tail -6 $D/precision.log
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 260 bash bench/run_bench.sh $D/node_single -- bash bench/node_throughput.sh $B $D/node_single > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "^\| |^- " $D/node_single/node_throughput.md | cut -c1-160 | head -20
PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 120 bash bench/run_bench.sh $D/node_double -- bash bench/node_throughput.sh $B $D/node_double > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "^\| |^- " $D/node_double/node_throughput.md | cut -c1-160 | head -14
cp .devkit/callE.sh $D/call.sh
tar czf $OUT/callE.tgz $D
