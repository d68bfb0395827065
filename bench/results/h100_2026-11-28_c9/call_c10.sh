#!/usr/bin/env bash
# Call C10 (experiment): alpha 4.5 at 1e-7 (the formula's cap; QMMM_AB_AMAX) with C9's kernel (QMMM_AB_K=3):
# every split test, CPU and GPU, on the device host.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_AB_K=3
D=$OUT/c10; mkdir -p $D; t0=$(date +%s)
ctest --test-dir /work/main/build-tests -R "Split|split" -j 4 --timeout 400 --output-on-failure > $D/ctest_split.txt 2>&1; echo "ctest rc=$?"
tail -8 $D/ctest_split.txt; echo "t=$(( $(date +%s)-t0 ))"
/work/main/build-tests/test_field_split_glycine --gtest_brief=1 > $D/glycine_cpu.txt 2>&1; echo "glycine cpu rc=$?"
grep -E "setup|alpha|PASSED|FAILED" $D/glycine_cpu.txt | cut -c1-400
echo "t=$(( $(date +%s)-t0 ))"
/work/main/build-tests/test_field_split_gpu --gtest_brief=1 > $D/gpu.txt 2>&1; echo "gpu rc=$?"; grep -E "alpha|PASSED|FAILED|precision|MIXED" $D/gpu.txt | cut -c1-300
