#!/usr/bin/env bash
# Call B10 (profile of 4dad41a's library): what a split call at 8,192 points is made of. Nsight Systems (if present)
# over the A/B driver (MIXED, 268,938 cells): kernel and CUDA API times; Nsight Compute: the split kernels' durations
# and grid sizes (one-shot at 1,024 points, streamed at 8,192).
set -uo pipefail
B=/work/main/build-tests; D=$OUT/b10; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
echo "nsys: $(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)"; echo "ncu: $(command -v ncu)"
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  timeout 150 "$NSYS" profile -o $D/trace --trace=cuda,osrt --force-overwrite true $B/ab $C 0.00041 41 16 cuda mixed X=0 > $D/nsys_run.txt 2>&1; echo "nsys rc=$? t=$(( $(date +%s)-t0 ))"
  timeout 120 "$NSYS" stats --report cuda_gpu_kern_sum,cuda_api_sum --format csv -o $D/stats $D/trace.nsys-rep > $D/nsys_stats.txt 2>&1; echo "stats rc=$?"
  ls $D; head -30 $D/stats_cuda_gpu_kern_sum.csv 2>/dev/null; head -20 $D/stats_cuda_api_sum.csv 2>/dev/null
  rm -f $D/trace.sqlite
fi
timeout 150 ncu --metrics gpu__time_duration.sum,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active --kernel-name regex:split_kernel $B/ab $C 0.00041 3 16 cuda mixed X=0 > $D/ncu.txt 2>&1; echo "ncu rc=$? t=$(( $(date +%s)-t0 ))"
grep -E "split_kernel|gpu__time_duration|launch__grid_size|warps_active" $D/ncu.txt | tail -40
tar czf $OUT/b10.tgz --exclude="*.nsys-rep" -C $OUT b10
