#!/usr/bin/env bash
# Writes the GROMACS-format RDF fixtures from the GRO files of make_data.py with GROMACS's own writer
# (gmx trjconv, GROMACS 2022.5 from Debian's gromacs package). Run from anywhere: bash make_gmx_data.sh
#   water.xtc, water.trr  the 3 frames of water.gro (XTC with 4 decimals in nm, the GRO file's own precision)
#   tri.xtc               the 2 triclinic frames of tri.gro
#   truncated.xtc         water.xtc cut inside frame 2 (an incomplete last frame)
set -euo pipefail
cd "$(dirname "$0")"
echo 0 | gmx -quiet trjconv -f water.gro -o water.xtc -ndec 4
echo 0 | gmx -quiet trjconv -f water.gro -o water.trr
echo 0 | gmx -quiet trjconv -f tri.gro -o tri.xtc -ndec 4
head -c 2500 water.xtc > truncated.xtc
rm -f \#*\#
