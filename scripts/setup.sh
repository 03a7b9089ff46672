#!/bin/sh
# Installs the Debian 12 packages dpcorr needs to build, test and run its main job, and the
# Python package's dependencies.
# Idempotent: a no-op when everything is present. Needs root (or sudo) only to install.
set -eu
PKGS="gcc make libc6-dev zlib1g-dev pkg-config gnuplot-nox dataset-fashion-mnist liblbfgs-dev libopenblas-dev liblapacke-dev openmpi-bin libopenmpi-dev cmake"
# the Python package and its tests (python/README.md): numpy, PyTorch 1.13 with functorch, pytest,
# and what `pip install ./python` needs offline (setuptools, wheel, pip, venv)
PKGS="$PKGS python3 python3-numpy python3-torch python3-pytest python3-setuptools python3-wheel python3-pip python3-venv"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "setup: all packages present"
    exit 0
fi
echo "setup: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "setup: need root to install:$missing" >&2; exit 1
    fi
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
