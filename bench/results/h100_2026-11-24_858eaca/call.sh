#!/usr/bin/env bash
# Call I: the split field's GPU tests (QMMM_REQUIRE_GPU=1) and field_split_bench: pinned copies, nuclei over the lanes, 4 blocks per SM (858eaca).
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; R=bench/results/h100_2026-11-24_858eaca; mkdir -p $R
t0=$(date +%s)
timeout 150 $B/test_field_split_gpu > $R/split_gpu.txt 2>&1; echo "test_field_split_gpu rc=$?" >> $R/split_gpu.txt
grep -E "glycine on the GPU|CUDA split|PASSED|FAILED|rc=|Failure" $R/split_gpu.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 400 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 \
  --min-time 0.2 --json $R/field_split_bench.json > $R/field_split_bench.txt 2>&1; echo "bench rc=$?" >> $R/field_split_bench.txt
grep -E "setup|gpu|rc=|16 cores" $R/field_split_bench.txt; echo "t=$(( $(date +%s)-t0 ))"
tar czf $OUT/callG.tgz $R
