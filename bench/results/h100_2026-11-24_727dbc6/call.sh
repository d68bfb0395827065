#!/usr/bin/env bash
# Call C: node throughput with binding: single precision, all rows; double precision (seed 004's merit factor), the
# node's 16 CPU ranks against the GPU configurations.
set -uo pipefail
export QMMM_BENCH_COMMIT=727dbc623a96d5c0bf5231098ca4f4b9108130aa QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-24_727dbc6; mkdir -p $D
t0=$(date +%s)
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 300 bash bench/run_bench.sh $D/node_single -- bash bench/node_throughput.sh $B $D/node_single > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "^\| |^- " $D/node_single/node_throughput.md | cut -c1-200
PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 200 bash bench/run_bench.sh $D/node_double -- bash bench/node_throughput.sh $B $D/node_double > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "^\| |^- " $D/node_double/node_throughput.md | cut -c1-200
tar czf $OUT/callC.tgz $D
