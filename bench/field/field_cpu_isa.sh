#!/usr/bin/env bash
# field_cpu_isa.sh BUILD_DIR OUT_DIR -- the CPU field's kernels per instruction set on this machine, in one call:
#   - the CPU field tests: test_field_cpu_simd (every kernel set the CPU runs) and test_field_cpu once per set
#     (QMMM_CPU_ISA=generic|avx2|avx512);
#   - field_bench --cpu-only (M = 268,782 cells, 256 points per call, one thread and all threads) once per set:
#     generic = the compiler-vectorised, correctly rounded kernels (the CPU path before the SIMD kernels: the
#     baseline in the same run), avx2, avx512 (the default where the CPU has it).
# A set the CPU lacks is listed as skipped. field_bench needs a build with CUDA (it runs without a GPU).
# Outputs in OUT_DIR: cpu.txt (lscpu), tests.txt, field_cpu_<set>.txt/.json, summary.txt. Exit status non-zero
# when a test or a benchmark failed.
set -uo pipefail
build=${1:?usage: field_cpu_isa.sh BUILD_DIR OUT_DIR}
out=${2:?usage: field_cpu_isa.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
status=0
lscpu > "$out/cpu.txt" 2>&1
grep -m1 "Model name" "$out/cpu.txt"

sets=()
for isa in generic avx2 avx512; do
  case $isa in
    avx2) grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo || { echo "skipped: $isa (not on this CPU)"; continue; } ;;
    avx512) grep -qw avx512f /proc/cpuinfo || { echo "skipped: $isa (not on this CPU)"; continue; } ;;
  esac
  sets+=("$isa")
done

{
  "$build/test_field_cpu_simd" || status=1
  for isa in "${sets[@]}"; do
    echo "== test_field_cpu, QMMM_CPU_ISA=$isa"
    QMMM_CPU_ISA=$isa "$build/test_field_cpu" || status=1
  done
} > "$out/tests.txt" 2>&1
grep -E "^\[  (PASSED|FAILED) |^== |qmmm-skip" "$out/tests.txt"

summary="$out/summary.txt"
printf "%-8s %-7s %8s %14s %12s\n" set prec threads Gpair/s/core max_rel_err > "$summary"
for isa in "${sets[@]}"; do
  QMMM_CPU_ISA=$isa "$build/field_bench" --cpu-only --cells 268782 --cpu-points 256 \
    --json "$out/field_cpu_$isa.json" > "$out/field_cpu_$isa.txt" 2>&1 || status=1
  # rows: M N prec threads us/call Gpair/s/core x_vs_double max_rel_err
  awk -v s="$isa" '$1 == 268782 && NF == 8 { printf "%-8s %-7s %8s %14s %12s\n", s, $3, $4, $6, $8 }' \
    "$out/field_cpu_$isa.txt" >> "$summary"
done
cat "$summary"
exit $status
