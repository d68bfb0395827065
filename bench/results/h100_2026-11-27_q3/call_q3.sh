#!/usr/bin/env bash
# Call Q3: (1) tile_probe: the SINGLE hot loop in difference form (the library's) against the expanded form of r^2,
# with and without a smallest-r^2 track; SASS counts of its loops. (2) field_bench's timed loop: OLD (copies the
# points with a modulo per point) against NEW (a pointer into the list read twice over), same library (e92a0ad's).
# (3) a call's cost beyond the kernels: field_bench at 1,024 cells (kernels of a few us).
set -uo pipefail
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_q3; mkdir -p $D
t0=$(date +%s)
pack() { cp .devkit/callQ3.sh $D/call_q3.sh; tar czf $OUT/q3.tgz $D; }
xz -dc .devkit/vars/tile_probe.xz > /tmp/tile_probe; xz -dc .devkit/vars/field_bench_old.xz > /tmp/field_bench_old; chmod +x /tmp/tile_probe /tmp/field_bench_old
timeout 120 /tmp/tile_probe > $D/tile_probe.txt 2>&1; echo "probe rc=$?"; cat $D/tile_probe.txt
obj=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$obj -sass /tmp/tile_probe > /tmp/probe.sass 2>&1
python3 - <<'PY' > $D/tile_probe_sass_counts.txt 2>&1
import re
txt=open('/tmp/probe.sass').read()
for fn in re.split(r'\n\s*Function : ', txt)[1:]:
    name=fn.split('\n')[0]
    ops=re.findall(r'/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)', fn)
    from collections import Counter
    c=Counter(ops)
    print(name, 'total', len(ops), 'MUFU', c['MUFU'], 'FFMA', c['FFMA'], 'FADD', c['FADD'], 'FMUL', c['FMUL'], 'FMNMX', c['FMNMX'], 'LDS', c['LDS'])
PY
cat $D/tile_probe_sass_counts.txt
pack
for v in OLD NEW OLD NEW; do
  if [ $v = OLD ]; then FB=/tmp/field_bench_old; else FB=$B/field_bench; fi
  timeout 60 $FB --only-cuda --cells 268782 --points 1024 8192 --min-time 1.0 --handles 0 > $D/bench_$v.log 2>&1
  echo "$v: $(grep -E 'cuda_(single|double|mixed) ' $D/bench_$v.log | awk '$2>1{printf "%s/%s %s (%s us); ", $3,$2,$6,$5}')" | tee -a $D/bench_ab.txt
done
timeout 60 $B/field_bench --only-cuda --cells 1024 --points 1 1024 8192 --min-time 0.5 --handles 0 > $D/bench_small.log 2>&1
grep -E "cuda_" $D/bench_small.log | head -20
pack
echo "t=$(( $(date +%s)-t0 ))"
