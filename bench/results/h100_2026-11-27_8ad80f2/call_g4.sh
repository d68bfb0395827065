#!/usr/bin/env bash
# Call G4 (8ad80f2): the corrected 1/r ceiling beside SINGLE on the cube's cells (rows), for the %ceiling column.
set -uo pipefail
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_8ad80f2; mkdir -p $D
cp .devkit/callG4.sh $D/call_g4.sh
export QMMM_BENCH_COMMIT=$(cat .devkit/commit)
timeout 60 bash bench/run_bench.sh $D/cube_rows -- $B/field_bench --only-cuda --cube data/glycine_trimer/fragments23_density.cube.gz --points 1024 8192 --handles 0 --min-time 0.3 --json $D/cube_rows.json > /dev/null 2>&1
echo "rc=$?"; grep -E "limits|cuda_single " $D/cube_rows.log
tar czf $OUT/g4.tgz $D
