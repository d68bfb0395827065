#!/bin/sh
# Installs Debian's psi4 (with numpy) and openbabel when missing; the generators need nothing else.
set -e
if ! /usr/bin/python3 -c 'import sys; sys.path.insert(0, "/usr/lib/x86_64-linux-gnu"); import psi4' 2>/dev/null \
   || ! command -v obabel >/dev/null; then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends psi4 python3-numpy openbabel
fi
