#!/usr/bin/env bash
# Call F2b (library of 00a3341, see .devkit/commit): the README's other field-dependent tables on this code -- precision
# study and node throughput (double, single); the RDF pipeline's code did not change.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_$(cat .devkit/commit); mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callF2b.sh $D/call_f2b.sh; tar czf $OUT/f2b.tgz $D; }
timeout 70 bash bench/run_bench.sh $D/precision -- bash bench/precision_study.sh $B $D/precision > /dev/null 2>&1
echo "precision rc=$? t=$(( $(date +%s)-t0 ))"
pack
PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 120 bash bench/run_bench.sh $D/node_double -- bash bench/node_throughput.sh $B $D/node_double > /dev/null 2>&1
echo "node double rc=$? t=$(( $(date +%s)-t0 ))"
pack
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 260 bash bench/run_bench.sh $D/node_single -- bash bench/node_throughput.sh $B $D/node_single > /dev/null 2>&1
echo "node single rc=$? t=$(( $(date +%s)-t0 ))"
pack
echo "t=$(( $(date +%s)-t0 ))"
