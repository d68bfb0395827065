#!/usr/bin/env bash
# Installs the Debian 12 packages qmmm-accel needs to build and test.
# Idempotent: installs only what is missing. Needs root (or sudo) when something is missing.
set -euo pipefail

pkgs=(cmake make g++ gfortran pkg-config
      python3           # scripts/gen_fortran.py writes the Fortran bindings at build time
      libgtest-dev googletest
      mpich libmpich-dev
      libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev
      valgrind gnuplot-nox
      doxygen           # the API reference (docs/Doxyfile; ctest docs_api_reference)
      libgromacs-dev)   # XTC/TRR input of qmmm-rdf (GROMACS's own reader); MPICH is still named explicitly

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install_deps: all packages present"
fi
