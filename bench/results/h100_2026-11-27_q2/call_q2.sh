#!/usr/bin/env bash
# Call Q2: NEW = e92a0ad + the coalesced segment sum (bit-identical by construction) against BASE (e92a0ad's library):
# the CUDA field tests and VMC GPU tests on NEW; field_bench --only-cuda BASE, NEW, BASE, NEW; nsys of NEW's calls
# (where a throughput call's time goes beyond the tile kernel).
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_q2; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
mkdir -p /tmp/BASE && xz -dc .devkit/vars/BASE.so.xz > /tmp/BASE/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callQ2.sh $D/call_q2.sh; tar czf $OUT/q2.tgz $D; }
timeout 150 ctest --test-dir $B -R "FieldCuda|vmc_gpu" --output-on-failure --timeout 140 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for v in BASE NEW BASE NEW; do
  if [ $v = BASE ]; then L=/tmp/BASE:$LD_LIBRARY_PATH; else L=$LD_LIBRARY_PATH; fi
  LD_LIBRARY_PATH=$L timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1024 8192 --min-time 1.0 --handles 0 > $D/ab_$v.log 2>&1
  echo "$v: $(grep -E 'cuda_(single|double|mixed) ' $D/ab_$v.log | awk '$2>1{printf "%s/%s %s (%s us); ", $3,$2,$6,$5}')" | tee -a $D/ab.txt
done
pack
echo "t=$(( $(date +%s)-t0 ))"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $nsys"
if [ -n "$nsys" ]; then
  timeout 120 $nsys profile -t cuda,osrt --sample=none -o $D/nsys_new -f true $B/field_bench --only-cuda --cells 268782 --points 1024 8192 --min-time 0.3 --handles 0 > $D/nsys_run.txt 2>&1; echo "nsys rc=$?"
  $nsys stats -r cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum -f csv -o $D/nsys_new $D/nsys_new.nsys-rep > /dev/null 2>&1
  $nsys stats -r cuda_gpu_trace -f csv -o $D/nsys_new $D/nsys_new.nsys-rep > /dev/null 2>&1
  ls $D; for f in $D/nsys_new_cuda_gpu_kern_sum.csv $D/nsys_new_cuda_api_sum.csv $D/nsys_new_cuda_gpu_mem_time_sum.csv; do cut -c1-220 $f | head -14; done
  [ -f $D/nsys_new_cuda_gpu_trace.csv ] && { head -1 $D/nsys_new_cuda_gpu_trace.csv > $D/trace_head.csv; grep -E "tile_kernel<1, 8|segment_sum_kernel<1|HtoD|DtoH" $D/nsys_new_cuda_gpu_trace.csv | tail -400 >> $D/trace_head.csv; xz -9 $D/nsys_new_cuda_gpu_trace.csv; }
  rm -f $D/nsys_new.nsys-rep $D/nsys_new.sqlite
fi
pack
echo "t=$(( $(date +%s)-t0 ))"
