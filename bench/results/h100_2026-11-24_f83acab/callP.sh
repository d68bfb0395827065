#!/usr/bin/env bash
# Call P (f83acab): racecheck on the split kernel with narrow filters (the full filter ran past 100 s in call O).
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; R=/tmp/res/P; mkdir -p $R
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for filter in 'SplitGpuNuclei.*' 'SplitGpuEdges.*'; do
  echo "== racecheck test_field_split_gpu ($filter)"
  timeout 200 "$san" --tool racecheck --error-exitcode 3 "$B/test_field_split_gpu" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|SKIPPED|RACECHECK SUMMARY|rror:" | head -8
  echo "rc=${PIPESTATUS[0]}"
done | tee $R/racecheck.txt
tar czf $OUT/callP.tgz -C /tmp/res P
