#!/bin/sh
# Installs the Debian 12 packages dpcorr needs to build, test and run its main job.
# Idempotent: a no-op when everything is present. Needs root (or sudo) only to install.
set -eu
PKGS="gcc make libc6-dev zlib1g-dev pkg-config gnuplot-nox dataset-fashion-mnist liblbfgs-dev libopenblas-dev liblapacke-dev openmpi-bin libopenmpi-dev"
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
