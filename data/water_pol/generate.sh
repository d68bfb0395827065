#!/bin/sh
# Rebuilds data/water_pol (water_pol.pot, reference.json) from data/water_mm's psi4 results with numpy (see
# make_reference.py; ../water_mm/generate.sh rebuilds those with Debian's psi4 1.3.2), and field_gradient.json.
set -e
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/../ensure_psi4.sh"
/usr/bin/python3 "$here/make_reference.py" "$here"
# The field gradient at the sites (field_gradient.json): psi4 again (the SCF of data/water_mm), a few seconds.
/usr/bin/python3 "$here/make_field_gradient.py" "$here"
