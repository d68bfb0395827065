#!/usr/bin/env bash
# Call Q4: tile_probe with occupancy variants (points per thread P, minimum blocks per SM).
set -uo pipefail
D=bench/results/h100_2026-11-27_q3; mkdir -p $D
xz -dc .devkit/vars/tile_probe.xz > /tmp/tile_probe; chmod +x /tmp/tile_probe
timeout 120 /tmp/tile_probe > $D/tile_probe_q4.txt 2>&1; echo "probe rc=$?"; cat $D/tile_probe_q4.txt
cp .devkit/callQ4.sh $D/call_q4.sh; tar czf $OUT/q4.tgz $D
