#!/usr/bin/env bash
# Call P4 (011eb27): CUDA split setup, A/B alternated in one run -- new = 4c7bd31, waves = 011eb27 (segments for
# full waves); prof = 011eb27 with the setup-phase timers (/tmp/prof_patch4.py, an experiment build); then every GPU
# test on 011eb27 and memcheck of the split GPU tests.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_setup_waves; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callP4.sh $D/call_p4.sh; tar czf $OUT/p4.tgz $D; }
for v in new prof; do mkdir -p /tmp/$v; xz -dc .devkit/vars/$v.so.xz > /tmp/$v/libqmmm_accel.so.0; done
run() { local v=$1 r=$2; if [ $v = waves ]; then L=""; else L=/tmp/$v:; fi
  LD_LIBRARY_PATH=$L$LD_LIBRARY_PATH timeout 100 $B/field_split_bench --data data/glycine_trimer --thresholds 0 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.05 --no-cpu > $D/setup_${v}_$r.txt 2>&1
  echo "$v $r: $(grep -E 'split setup' $D/setup_${v}_$r.txt | sed -E 's/: alpha.*//; s/split setup cuda //' | tr '\n' ' ')"; }
for r in 1 2 3; do run new $r; run waves $r; done
QMMM_SPLIT_PROFILE=1 run prof 1; grep SETUPPROF $D/setup_prof_1.txt
echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 170 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt
pack
echo "t=$(( $(date +%s)-t0 ))"
