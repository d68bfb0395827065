#!/bin/sh
# Rebuilds data/water_mm from scratch with Debian's psi4 (see ../README.md); takes a few seconds on 2 cores.
set -e
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/../ensure_psi4.sh"
/usr/bin/python3 "$here/../psi4_systems.py" water_mm "$here"
