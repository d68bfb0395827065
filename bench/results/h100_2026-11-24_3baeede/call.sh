#!/usr/bin/env bash
# Call D: every GPU test of the final tree with QMMM_REQUIRE_GPU=1 (a skip is a failure); the split field's GPU
# test binary run directly as well, so its printed errors and setup times are kept.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-24_3baeede; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $D/device.txt; echo "commit 3baeede2cd3359afd5a825dcdfe1d0b99348162e" >> $D/device.txt
timeout 200 $B/test_field_split_gpu > $D/split_gpu.txt 2>&1; echo "test_field_split_gpu rc=$?" >> $D/split_gpu.txt
grep -E "glycine on the GPU|CUDA split|PASSED|FAILED|rc=" $D/split_gpu.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 330 ctest --test-dir $B -L gpu -E test_field_split_gpu --output-on-failure --timeout 250 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
tar czf $OUT/callD.tgz $D
