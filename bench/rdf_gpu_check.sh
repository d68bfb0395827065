#!/usr/bin/env bash
# rdf_gpu_check.sh BUILD_DIR OUT_DIR -- the RDF work of issues 18 (item 9: exact bin edges) and 20 (frames,
# pairs, XTC) on a GPU machine, in one call. BUILD_DIR: a Release build with CUDA (and GROMACS's library for
# the XTC rows: libgromacs-dev). Run from the repository root. Outputs in OUT_DIR:
#   device.txt          the GPU
#   rdf_tests.txt       every RDF test (ctest -R rdf|Rdf), GPU ones required (QMMM_REQUIRE_GPU=1): the exact
#                       edges on the GPU (RdfExact.*), GPU == CPU bitwise (RdfGpu.*), the tool and readers
#   sanitizer.txt       compute-sanitizer memcheck and racecheck on the exact-edge GPU test
#   rdf_bench.txt/.json the RDF benchmark rows of rdf_bench (compare with an earlier run: the cost of the
#                       exact edges and of the parallel cell sort), 1e5..1e6 atoms, the seed kernel as baseline
#   pipeline.txt/.json  whole-frame time for 1M water-like atoms at 12 A (one pair, and O-O/O-H/H-H as three
#                       pairs), and qmmm-rdf on a 1M-atom 50-frame DCD and XTC against the reader alone
set -uo pipefail
build=${1:?usage: rdf_gpu_check.sh BUILD_DIR OUT_DIR}; out=${2:?OUT_DIR}
export QMMM_REQUIRE_GPU=1
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/device.txt"

ctest --test-dir "$build" -R "rdf|Rdf" --output-on-failure --timeout 900 > "$out/rdf_tests.txt" 2>&1 || status=1
grep -E "tests passed|tests failed|FAILED|Failed|\*\*\*" "$out/rdf_tests.txt"

san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
exe=$(find "$build" -maxdepth 3 -name test_rdf_exact -type f | head -1)
: > "$out/sanitizer.txt"
for tool in memcheck racecheck; do
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool test_rdf_exact" >> "$out/sanitizer.txt"
  "$san" --tool "$tool" "${extra[@]}" --error-exitcode 3 "$exe" --gtest_filter='RdfExact.GroQuantisedEdgesOnTheGpuEqualCpu' \
    2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" >> "$out/sanitizer.txt" || status=1
done
cat "$out/sanitizer.txt"

"$build/rdf_bench" --sizes 100000,400000,1000000 --frames 5 --json "$out/rdf_bench.json" > "$out/rdf_bench.txt" 2>&1 || status=1
cat "$out/rdf_bench.txt"

mkdir -p "$out/tmp"
"$build/rdf_pipeline_bench" --atoms 1000000 --frames 20 --traj-frames 50 --tool "$build/qmmm-rdf" --tmp "$out/tmp" \
  --json "$out/pipeline.json" > "$out/pipeline.txt" 2>&1 || status=1
rm -rf "$out/tmp"
cat "$out/pipeline.txt"
exit $status
