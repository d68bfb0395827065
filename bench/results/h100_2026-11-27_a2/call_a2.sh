#!/usr/bin/env bash
# Call A2 (experiment): the split's tolerance shares, truncation / interpolation 0.45 / 0.45 (NEW, the build) against
# 0.1 / 0.4 (OLD: the same tree with the old shares, .devkit/vars/OLD.so.xz), one process per variant, alternated,
# two rounds: GPU MIXED and DOUBLE at 268,938 and 1,099,098 cells, CPU 16 threads at 268,938. Each process prints its
# parameters, its max normwise error at 8,192 points against the CPU direct double sum, and best / median times.
# GPU tests with QMMM_REQUIRE_GPU=1 on NEW first.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/a2; mkdir -p $D /tmp/OLD
xz -dc .devkit/vars/OLD.so.xz > /tmp/OLD/libqmmm_accel.so.0
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
pack() { tar czf $OUT/a2.tgz -C $OUT a2; }
timeout 130 ctest --test-dir $B -L gpu --output-on-failure --timeout 120 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"; pack
run() {  # variant threshold threads backend precision
  local lp=$LD_LIBRARY_PATH; [ $1 = OLD ] && lp=/tmp/OLD:$LD_LIBRARY_PATH
  echo "== $1 $2 $4 $5" >> $D/ab_$4.txt
  LD_LIBRARY_PATH=$lp timeout 90 $B/ab $C $2 11 $3 $4 $5 X=0 >> $D/ab_$4.txt 2>&1
}
for rep in 1 2; do
  for th in 0.00041 0; do for p in mixed double; do for V in OLD NEW; do run $V $th 16 cuda $p; done; done; done
  echo "gpu rep $rep t=$(( $(date +%s)-t0 ))"; pack
  for V in OLD NEW; do run $V 0.00041 16 cpu double; done
  echo "cpu rep $rep t=$(( $(date +%s)-t0 ))"; pack
done
grep -E "^==|alpha|max normwise|N= 8192|N= 1024" $D/ab_cuda.txt $D/ab_cpu.txt | sed 's/threads 16 X=0 *//'
