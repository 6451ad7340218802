#!/usr/bin/env bash
# The second OpenCL driver the test suite runs on: Intel's oneAPI OpenCL CPU runtime, installed from
# the Python registry into a virtual environment (pinned versions), and a vendors folder holding one
# .icd file that names its libintelocl.so. Tests select it with OCL_ICD_VENDORS=<that folder> for the
# runs that want it; nothing is registered system-wide, so PoCL stays the default device, and
# LD_LIBRARY_PATH is never touched (the runtime finds its own libraries through its RUNPATH).
#
#   .ci/intel-runtime.sh            install if missing; print the vendors folder on stdout
#   .ci/intel-runtime.sh --check    print the folder if installed and working, else exit 1
#
# Exit 0 with the folder on stdout, or exit 1 with one line saying why on stdout and stderr (no
# python3 venv, no network to the registry, the driver lists no device): callers skip the
# second-driver tests with that reason, never silently.
# The folder is a cache outside the clone (CLPROBE_INTEL_RT_DIR, default ~/.cache/clprobe/...), keyed
# by the pinned versions, so clean clones on one machine install it once (it is ~830 MiB).
set -euo pipefail

opencl_rt=2026.2.0
compiler_rt=2026.2.0
dir=${CLPROBE_INTEL_RT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clprobe/intel-opencl-rt-$opencl_rt}
venv=$dir/venv
vendors=$dir/vendors
library=$venv/lib/libintelocl.so

fail() {
    echo "intel-runtime: $*" >&2
    echo "$*"
    exit 1
}

# The driver works when the ICD loader, pointed at our vendors folder alone, finds a CPU device.
check() {
    [ -f "$library" ] && [ -f "$vendors/intel-cpu.icd" ] || return 1
    python3_bin=$(command -v /usr/bin/python3 || command -v python3) || return 1
    OCL_ICD_VENDORS=$vendors "$python3_bin" - "$library" <<'EOF' || return 1
import ctypes, sys
cl = ctypes.CDLL("libOpenCL.so.1")
n = ctypes.c_uint(0)
if cl.clGetPlatformIDs(0, None, ctypes.byref(n)) != 0 or n.value == 0:
    sys.exit(1)
EOF
}

if [ "${1:-}" = --check ]; then
    check || exit 1
    echo "$vendors"
    exit 0
fi

if ! check; then
    python3_bin=$(command -v /usr/bin/python3 || command -v python3) || fail "no python3 to make a virtual environment"
    mkdir -p "$dir"
    if [ ! -x "$venv/bin/pip" ]; then
        "$python3_bin" -m venv "$venv" >&2 || fail "python3 -m venv failed (Debian: apt-get install python3-venv)"
    fi
    echo "intel-runtime: installing intel-opencl-rt==$opencl_rt intel-cmplr-lib-rt==$compiler_rt into $venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "intel-opencl-rt==$opencl_rt" \
        "intel-cmplr-lib-rt==$compiler_rt" >&2 || fail "pip could not install intel-opencl-rt==$opencl_rt"
    [ -f "$library" ] || fail "the package installed no $library"
    mkdir -p "$vendors"
    echo "$library" >"$vendors/intel-cpu.icd.tmp" && mv "$vendors/intel-cpu.icd.tmp" "$vendors/intel-cpu.icd"
    check || fail "the ICD loader finds no OpenCL platform in $vendors (is ocl-icd-libopencl1 installed?)"
fi
echo "$vendors"
