#!/bin/sh
# Rebuilds data/glycine_trimer from scratch: openbabel structure (MMFF94), psi4 HF/6-31G* of fragments
# 2+3, their density cube, the embedded HF of fragment 1 in ~269k point charges. See README.md for times.
set -e
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/../ensure_psi4.sh"
obabel -:"NCC(=O)NCC(=O)NCC(=O)O" -h --gen3d --minimize --ff MMFF94 --steps 2000 --sd -oxyz \
  -O "$here/gly3_mmff94.xyz"
/usr/bin/python3 "$here/../psi4_systems.py" glycine_trimer "$here"
