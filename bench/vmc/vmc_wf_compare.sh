#!/usr/bin/env bash
# vmc_wf_compare.sh EXE_A EXE_B [ROUNDS] [OUT_JSON] -- CPU time per walker-sweep of two qmmm_vmc builds on one
# core, interleaved (A B A B ...) so that a shared machine's load hits both alike: glycine fragment 1 without
# the environment, Jastrow as in frag1_vmc.nml, 256 walkers, a local energy every sweep, one thread. Per
# round: (CPU time of a 10 + 2 x 45 sweep run - of a 10 + 2 x 5 sweep run) / (256 x 80): the setup cancels.
# CPU (user + sys) time, not wall: on a machine shared with other jobs the wall clock counts their time too.
# Prints each round, the best and the median of each, and their ratio; writes OUT_JSON. From the repository root.
set -euo pipefail
a=${1:?usage: vmc_wf_compare.sh EXE_A EXE_B [ROUNDS] [OUT_JSON]}; b=${2:?EXE_B}; rounds=${3:-6}
out=${4:-vmc_wf_compare.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mk() {
  printf "&vmc\n  molden = 'data/glycine_trimer/frag1_embedded.molden'\n  jastrow = .true., b_ee = 3.0, b_en = 30.0\n"
  printf "  n_walkers = 256, n_equil = 10, n_blocks = 2, steps_per_block = %s, energy_every = 1\n  seed = 4, n_threads = 1\n/\n" "$1"
}
mk 45 > "$tmp/long.nml"; mk 5 > "$tmp/short.nml"
cpu() {   # EXE NML -> CPU seconds (user + sys) of the run: this shell's finished children's CPU before/after
  local s0 s1
  read -r -a s0 < /proc/$BASHPID/stat   # a builtin, no subshell: fields 16, 17 = children's user, sys ticks
  OMP_NUM_THREADS=1 "$1" "$2" "$tmp/r.json" > /dev/null
  read -r -a s1 < /proc/$BASHPID/stat
  awk "BEGIN{print (${s1[15]} + ${s1[16]} - ${s0[15]} - ${s0[16]}) / $(getconf CLK_TCK)}"
}
per_sweep() { awk "BEGIN{printf \"%.2f\", 1e6 * ($(cpu "$1" "$tmp/long.nml") - $(cpu "$1" "$tmp/short.nml")) / (256 * 80)}"; }
ra=(); rb=()
for r in $(seq "$rounds"); do
  x=$(per_sweep "$a"); y=$(per_sweep "$b")
  ra+=("$x"); rb+=("$y")
  echo "round $r: A $x us, B $y us per walker-sweep (CPU)"
done
stat() { printf "%s\n" "$@" | sort -g | awk '{v[NR]=$1} END {printf "%s %s", v[1], (NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
read -r ba ma <<< "$(stat "${ra[@]}")"; read -r bb mb <<< "$(stat "${rb[@]}")"
echo "A ($a): best $ba, median $ma us per walker-sweep"
echo "B ($b): best $bb, median $mb us per walker-sweep"
echo "A / B: best $(awk "BEGIN{printf \"%.2f\", $ba/$bb}"), median $(awk "BEGIN{printf \"%.2f\", $ma/$mb}")"
echo "{\"a\": \"$a\", \"b\": \"$b\", \"rounds\": $rounds, \"a_us\": [$(IFS=,; echo "${ra[*]}")], \"b_us\": [$(IFS=,; echo "${rb[*]}")], \"a_best\": $ba, \"a_median\": $ma, \"b_best\": $bb, \"b_median\": $mb}" > "$out"
