#!/usr/bin/env bash
# Call P3 (4c7bd31): CUDA split setup, A/B/C alternated in one run -- base = c415b1a (row kernels only), new = 4c7bd31
# (parallel node lookups, direct fallback built meanwhile), k8 = 4c7bd31 with 8 nodes per thread in the row kernel;
# then every GPU test on 4c7bd31 and memcheck of the split GPU tests.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_setup_ab; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callP3.sh $D/call_p3.sh; tar czf $OUT/p3.tgz $D; }
for v in base k8; do mkdir -p /tmp/$v; xz -dc .devkit/vars/$v.so.xz > /tmp/$v/libqmmm_accel.so.0; done
run() { local v=$1 r=$2; if [ $v = new ]; then L=""; else L=/tmp/$v:; fi
  LD_LIBRARY_PATH=$L$LD_LIBRARY_PATH timeout 100 $B/field_split_bench --data data/glycine_trimer --thresholds 0 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.05 --no-cpu > $D/setup_${v}_$r.txt 2>&1
  echo "$v $r: $(grep -E 'split setup' $D/setup_${v}_$r.txt | sed -E 's/: alpha.*//; s/split setup cuda //' | tr '\n' ' ')"; }
for r in 1 2; do run base $r; run new $r; run k8 $r; done
run new 3; run base 3; run k8 3
echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 170 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt
pack
echo "t=$(( $(date +%s)-t0 ))"
