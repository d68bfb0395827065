#!/usr/bin/env bash
# Call B (02a252a): GPU tests; field_split_bench GPU rows (M = 268,938, N = 1024, 8192) for three kernel variants in one
# run (main: one warp per block + two cells per step; L2: one warp per block, one cell per step; L3: four warps per
# block + two cells per step; the variants' libraries in .devkit/varL2, varL3); main on both environments; ncu of
# main's N = 8192 launch with SASS counters.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=02a252a366df759973486cdcafeb87c0e4726de2 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_02a252a; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callB.sh $D/call.sh; tar czf $OUT/callB.tgz $D; }
timeout 150 ctest --test-dir $B -L gpu --output-on-failure --timeout 120 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for rep in 1 2; do for v in main L2 L3; do
  lp=""; [ $v != main ] && lp=$PWD/.devkit/var$v
  LD_LIBRARY_PATH=$lp:$LD_LIBRARY_PATH timeout 60 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 1024 8192 --min-time 0.3 --json $D/variant_${v}_$rep.json > $D/variant_${v}_$rep.log 2>&1
  echo "$v rep $rep: $(grep -E 'split double +gpu.*direct single' $D/variant_${v}_$rep.log | awk '{print $2, $5, $8}' | tr '\n' ' ')"
done; done; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 120 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double +gpu.*single" $D/field_split_bench.log | head -30
pack
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
cmd=($B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01)
timeout 100 "$ncu" --section LaunchStats -k regex:split_kernel -c 60 "${cmd[@]}" > $D/ncu_split_list.txt 2>&1
skip=$(grep "Grid Size" $D/ncu_split_list.txt | awk '{print NR-1, $NF}' | awk '$2=="8,192"{print $1; exit}')
echo "launches: $(grep -c 'Grid Size' $D/ncu_split_list.txt), first N=8192 launch: $skip t=$(( $(date +%s)-t0 ))"
timeout 150 "$ncu" --set full --import-source yes -k regex:split_kernel --launch-skip ${skip:-0} -c 1 -o $D/ncu_split "${cmd[@]}" > $D/ncu_split_run.txt 2>&1
"$ncu" --import $D/ncu_split.ncu-rep --page details > $D/ncu_split_eval_n8192.txt 2>&1
"$ncu" --import $D/ncu_split.ncu-rep --page source --csv --print-source sass > $D/ncu_split_sass.csv 2>&1
rm -f $D/ncu_split.ncu-rep
echo "ncu t=$(( $(date +%s)-t0 ))"
grep -E "Duration|SM Frequency|Registers Per|Achieved Occ|Theoretical Occ|Eligible Warps|Warp Cycles Per Issued|L1/TEX Hit|Executed Instructions  " $D/ncu_split_eval_n8192.txt | head -20
pack
