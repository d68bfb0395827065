#!/usr/bin/env bash
# Call O (f83acab): compute-sanitizer on the final split kernel (racecheck: its per-warp shared column tables;
# memcheck, synccheck) and on the RDF GPU tests after the cell-sort fix, QMMM_REQUIRE_GPU=1.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; R=/tmp/res/O; mkdir -p $R
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
while read -r tool exe filter; do
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool $exe ($filter)"
  timeout 100 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 "$B/$exe" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|SKIPPED|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|rror:" | head -8
  echo "rc=${PIPESTATUS[0]}"
done <<'LIST' | tee $R/sanitizers.txt
racecheck test_field_split_gpu Tolerances/SplitGpu.*:SplitGpuEdges.*:SplitGpuNuclei.*
memcheck test_field_split_gpu Tolerances/SplitGpu.*:SplitGpuEdges.*:SplitGpuNuclei.*
synccheck test_field_split_gpu SplitGpuEdges.*:SplitGpuNuclei.*
memcheck test_rdf_gpu RdfGpu.*
racecheck test_rdf_gpu RdfGpu.IdenticalSelectionEqualsCpu:RdfGpu.DisjointAndOverlappingEqualCpu
LIST
tar czf $OUT/callO.tgz -C /tmp/res O
