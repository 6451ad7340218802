#!/usr/bin/env bash
# Install what the real OpenCL programs of run_real.py need, and build the CLBlast client.
# Idempotent: Debian packages are installed only when missing, the venv only when its pins differ,
# the client only when its source is newer.
#
#   setup_real.sh [BIN_DIR]     (default: $CLPROBE_REAL_BIN, else ~/.cache/clprobe/real-bin)
#
# Environment: CLPROBE_REAL_DIR (cache folder, default ~/.cache/clprobe), CLPROBE_REAL_VENV (default
# $CLPROBE_REAL_DIR/real-venv), CLPROBE_REAL_NO_APT=1 to skip apt-get (missing packages are listed).
# run_real.py reads the same variables.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${CLPROBE_REAL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clprobe}
venv=${CLPROBE_REAL_VENV:-$cache/real-venv}
bin=${1:-${CLPROBE_REAL_BIN:-$cache/real-bin}}

# Debian 12 packages (versions this was measured with in README.md).
packages=(pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev clinfo gcc libc6-dev
          libclblast-dev hashcat python3-pyopencl python3-numpy python3-venv darktable)
# pip pins for the venv (python3 from Debian 12: 3.11).
pins=(openmm==8.3.1 numpy==2.4.6)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "${CLPROBE_REAL_NO_APT:-}" = 1 ]; then
        echo "setup_real: missing Debian packages (CLPROBE_REAL_NO_APT=1): ${missing[*]}" >&2
    else
        sudo=""
        [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -q
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
fi

# OpenMM in a venv of Debian's python3, keyed by its pins.
stamp=$venv/.clprobe-pins
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${pins[*]}" ]; then
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}"
    echo "${pins[*]}" > "$stamp"
fi
"$venv/bin/python" -c "import openmm; print('setup_real: openmm', openmm.__version__, 'in $venv')"

# The CLBlast client.
mkdir -p "$bin"
if [ ! -x "$bin/clblast_sgemm" ] || [ "$here/clblast_sgemm.c" -nt "$bin/clblast_sgemm" ]; then
    cc -O2 -Wall "$here/clblast_sgemm.c" -lclblast -lOpenCL -lm -o "$bin/clblast_sgemm"
fi
echo "setup_real: $bin/clblast_sgemm"
