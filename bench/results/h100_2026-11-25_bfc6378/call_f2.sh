#!/usr/bin/env bash
# Call F2 (bfc6378, the final code of this stop): precision study and node throughput (double, single) for the README.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=bfc63785d500e719b4a49df52d57798fc191e4e7 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_bfc6378; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callF2.sh $D/call_f2.sh; tar czf $OUT/f2.tgz $D; }
timeout 70 bash bench/run_bench.sh $D/precision -- bash bench/precision_study.sh $B $D/precision > /dev/null 2>&1
echo "precision rc=$? t=$(( $(date +%s)-t0 ))"
pack
PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 120 bash bench/run_bench.sh $D/node_double -- bash bench/node_throughput.sh $B $D/node_double > /dev/null 2>&1
echo "node double rc=$? t=$(( $(date +%s)-t0 ))"
pack
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout $(( 580 - ($(date +%s)-t0) )) bash bench/run_bench.sh $D/node_single -- bash bench/node_throughput.sh $B $D/node_single > /dev/null 2>&1
echo "node single rc=$? t=$(( $(date +%s)-t0 ))"
pack
