#!/usr/bin/env bash
# Call G3: test_field_gpu_rows after its bits-differ threshold was fixed, plain and under memcheck.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_57169af; mkdir -p $D
$B/test_field_gpu_rows > $D/rows_test_g3.txt 2>&1; echo "rows test rc=$?" >> $D/rows_test_g3.txt
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_rows 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 >> $D/rows_test_g3.txt; echo "rows memcheck rc=${PIPESTATUS[0]}" >> $D/rows_test_g3.txt
cp .devkit/callG3.sh $D/call_g3.sh; cat $D/rows_test_g3.txt | tail -12; tar czf $OUT/g3.tgz $D/rows_test_g3.txt $D/call_g3.sh
