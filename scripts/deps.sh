#!/bin/sh
# Install the Debian 12 packages wattlas needs, only those missing.
# usage: deps.sh [fuzz]
#   (none)  building, testing, the MPI build and the Python package: compiler,
#           libraries, Open MPI, Python headers, setuptools and numpy, XGBoost
#           (wattlas learn trains through its C API)
#   fuzz    also clang and its runtimes (libFuzzer, sanitizers) for make fuzz
# Run as root on a fresh machine; as another user it only reports what is missing.
set -eu
pkgs="gcc make pkg-config libgsl-dev libinih-dev libcmocka-dev libcairo2-dev libpng-dev
      poppler-utils fonts-dejavu-core libopenmpi-dev openmpi-bin
      python3-dev python3-setuptools python3-numpy libxgboost-dev zlib1g-dev"
for group in "$@"; do
    case $group in
    fuzz) pkgs="$pkgs clang libclang-rt-14-dev" ;;
    *) echo "deps.sh: unknown group '$group'" >&2; exit 2 ;;
    esac
done
missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "wattlas: missing packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
    exit 1
fi
echo "wattlas: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
