#!/usr/bin/env bash
# Call M2 (c34be6b): precision study and node throughput (double, single) for the README.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=c34be6b4abb8851c6d5911efb28afcccabd40665 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_c34be6b; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callM2.sh $D/call_m2.sh; tar czf $OUT/m2.tgz $D; }
timeout 70 bash bench/run_bench.sh $D/precision -- bash bench/precision_study.sh $B $D/precision > /dev/null 2>&1
echo "precision rc=$? t=$(( $(date +%s)-t0 ))"
pack
PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 120 bash bench/run_bench.sh $D/node_double -- bash bench/node_throughput.sh $B $D/node_double > /dev/null 2>&1
echo "node double rc=$? t=$(( $(date +%s)-t0 ))"
pack
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout $(( 580 - ($(date +%s)-t0) )) bash bench/run_bench.sh $D/node_single -- bash bench/node_throughput.sh $B $D/node_single > /dev/null 2>&1
echo "node single rc=$? t=$(( $(date +%s)-t0 ))"
pack
