#!/usr/bin/env bash
# Call B: MPS test and shared-GPU test (QMMM_REQUIRE_GPU=1), node throughput (single, 1024 walkers x 48 sweeps),
# GPU field modes, precision study.
set -uo pipefail
export QMMM_BENCH_COMMIT=4ca84e98a67563831e3cbfc6fc6068e21492e728 QMMM_MPIEXEC=mpiexec MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-24_4ca84e9; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $D/device.txt
QMMM_REQUIRE_GPU=1 timeout 150 ctest --test-dir $B -R "vmc_mpi_gpu_mps|vmc_mpi_gpu_shared|Mps" --output-on-failure > $D/mps_tests.txt 2>&1
echo "ctest rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "PASSED|FAILED|tests passed|Failed|Skipped|mps on" $D/mps_tests.txt | head
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 300 bash bench/run_bench.sh $D/node -- bash bench/node_throughput.sh $B $D/node > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "^\| |^- " $D/node/node_throughput.md | cut -c1-250
timeout 60 bash bench/run_bench.sh $D/field_modes_gpu -- bash bench/vmc_field_modes.sh $B $D/field_modes_gpu cuda 512 16 4 > /dev/null 2>&1
echo "modes rc=$? t=$(( $(date +%s)-t0 ))"; cat $D/field_modes_gpu.log | tail -8
timeout 120 bash bench/run_bench.sh $D/precision -- bash bench/precision_study.sh $B $D/precision > /dev/null 2>&1
echo "precision rc=$? t=$(( $(date +%s)-t0 ))"; tail -12 $D/precision.log
tar czf $OUT/callB.tgz $D
