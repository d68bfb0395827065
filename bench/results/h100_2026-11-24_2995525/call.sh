#!/usr/bin/env bash
# Call A (session 2026-11-24 evening): field_bench for the README tables (run_bench.sh record), the node throughput
# bench (issue 14) with and without MPS, and the wavefunction timing on one core of the H100 host.
set -uo pipefail
export QMMM_BENCH_COMMIT=29955256066baf731a9a79038f1c9b253b5bdb63 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-24_2995525; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $D/device.txt; nproc >> $D/device.txt; id -u >> $D/device.txt
timeout 170 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_single |cuda_mixed |cuda_double " $D/field.log | head -20
RUN_TIMEOUT=150 timeout 330 bash bench/run_bench.sh $D/node -- bash bench/node_throughput.sh $B $D/node > /dev/null 2>&1
echo "node rc=$? t=$(( $(date +%s)-t0 ))"; cat $D/node/node_throughput.md 2>/dev/null | head -40
timeout 60 bash bench/vmc_wf_profile.sh $B /tmp/wf 128 40 3 > /tmp/wf.txt 2>&1; mkdir -p $D/wf; grep -E "run |best" /tmp/wf/wf_profile.txt /tmp/wf.txt | tee $D/wf/timing.txt
echo "t=$(( $(date +%s)-t0 ))"
tar czf $OUT/callA.tgz $D
