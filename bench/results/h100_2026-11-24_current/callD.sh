#!/usr/bin/env bash
# Call D: the long fuzz_capi run after the box-limit fix (CPU, 570 s), and, beside it, what corrupts the heap in
# vmc_gpu_double (the per-step batched asynchronous calls): the same input with MALLOC_CHECK_=3.
set -uo pipefail
R=/tmp/res/D; mkdir -p $R/corpus
export OMP_NUM_THREADS=1
( LD_LIBRARY_PATH=$PWD/.devkit/fz/lib .devkit/fz/fuzz_capi -seed=1 -max_total_time=570 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -jobs=1 \
   -artifact_prefix=$R/capi- -print_final_stats=1 $R/corpus tests/fuzz/corpus/fuzz_capi \
   > $R/fuzz_capi.log 2>&1; echo "fuzz rc=$?" >> $R/fuzz_capi.log ) &
fz=$!

B=/work/main/build-tests
(
for calls in batched measured; do
  sed "s/field_calls *= *'[a-z_]*'/field_calls = '$calls'/" vmc_driver/tests/inputs/gpu_cuda_double.nml > $R/in_$calls.nml
  grep -n field_calls $R/in_$calls.nml
  MALLOC_CHECK_=3 timeout 60 $B/vmc_driver/qmmm_vmc $R/in_$calls.nml $R/out_$calls.json > $R/vmc_$calls.log 2>&1; echo "rc=$?" >> $R/vmc_$calls.log
  MALLOC_CHECK_=3 QMMM_BACKEND=cpu timeout 60 $B/vmc_driver/qmmm_vmc $R/in_$calls.nml $R/outcpu_$calls.json > $R/vmccpu_$calls.log 2>&1; echo "rc=$?" >> $R/vmccpu_$calls.log
done
/usr/local/cuda/bin/compute-sanitizer --tool memcheck $B/vmc_driver/qmmm_vmc $R/in_batched.nml $R/out_san.json > $R/vmc_san.log 2>&1; echo "rc=$?" >> $R/vmc_san.log
) > $R/diag.log 2>&1
tail -5 $R/vmc_batched.log $R/vmccpu_batched.log $R/vmc_measured.log; tail -8 $R/vmc_san.log
wait $fz
grep -E "stat::|rc=|Done|ERROR|FUZZ_CHECK" $R/fuzz_capi.log | tail -8
rm -rf $R/corpus
tar czf $OUT/callD.tgz -C /tmp/res D
