#!/bin/sh
# Rebuilds data/water_pol (water_pol.pot, reference.json) from data/water_mm's psi4 results with numpy (see
# make_reference.py; ../water_mm/generate.sh rebuilds those with Debian's psi4 1.3.2). Takes a second.
set -e
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/../ensure_psi4.sh"
/usr/bin/python3 "$here/make_reference.py" "$here"
