#!/usr/bin/env bash
# clprobe set-up: installs the Debian/Ubuntu packages that are missing, configures and builds
# build/clprobe, then does what the first argument asks:
#   .ci/setup.sh diagnose [clprobe diagnose options...]   run clprobe diagnose on the default device
#   .ci/setup.sh test                                      run the whole test suite (ctest)
#   .ci/setup.sh build                                     stop after the build
# Runs as root, or uses sudo for apt-get. Safe to re-run: installed packages are skipped and the
# build is incremental.
set -euo pipefail

mode=${1:-build}
[ $# -gt 0 ] && shift
case "$mode" in diagnose|test|build) ;; *)
    echo "usage: $0 diagnose|test|build [clprobe diagnose options]" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# Everything clprobe builds and runs with, by Debian package name. libopenblas-dev is optional to
# clprobe (-DCLPROBE_OPENBLAS=OFF builds without it); help2man writes the man page and dpkg-dev's
# dpkg-shlibdeps computes the Debian package's dependencies (cpack -G DEB, .ci/package.sh).
packages=(
    build-essential cmake pkg-config
    ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd
    libhwloc-dev libcli11-dev libfmt-dev nlohmann-json3-dev libopenblas-dev
    libopenmpi-dev openmpi-bin
    help2man dpkg-dev
    # `trace --work`: Oclgrind simulates a captured launch and clprobe's plugin counts its work;
    # the plugin builds against Oclgrind's headers and those of the LLVM Oclgrind links (14 on Debian 12).
    oclgrind liboclgrind-dev llvm-14-dev
)
# What the tests need besides: Catch2 v2, python3 with jsonschema (CLI tests), Oclgrind (kernel checks, also above),
# stress-ng (a CPU hog the system layer must name), google-benchmark's compare.py with the scipy and
# numpy it imports (it compares two `report --format gbench` exports), slurm-wlm
# (tests/cli/test_slurm.py starts a one-node Slurm of its own for `srun clprobe diagnose`; the test
# skips without it).
test_packages=(catch2 python3 python3-jsonschema oclgrind stress-ng slurm-wlm)
# A real OpenCL program the trace tests count the work of (tests/cli/test_trace_work.py).
test_packages+=(python3-pyopencl)
# ccache: the suite's builds reuse earlier clones' compiles on this machine (.ci/ccache.sh).
test_packages+=(ccache)
test_packages+=(libbenchmark-tools python3-scipy python3-numpy)
# The second OpenCL driver's virtual environment (.ci/intel-runtime.sh).
test_packages+=(python3-venv)
# The HTML pages checked in a real browser (tests/html/browser_check.py).
test_packages+=(chromium chromium-driver python3-selenium)
[ "$mode" = test ] && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "clprobe setup: installing ${missing[*]}" >&2
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "clprobe setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

jobs=$(nproc 2>/dev/null || echo 2)
tests=OFF
second_driver=()
if [ "$mode" = test ]; then
    tests=ON
    # The second driver the suite also runs on (Intel's OpenCL CPU runtime, pinned, from the Python
    # registry). Where it cannot be installed its tests are skipped with the reason, never silently.
    if answer=$(.ci/intel-runtime.sh); then
        second_driver=(-DCLPROBE_SECOND_DRIVER_VENDORS="$answer" -DCLPROBE_SECOND_DRIVER_SKIP=)
    else
        echo "clprobe setup: the second-driver tests will be skipped: $answer" >&2
        second_driver=(-DCLPROBE_SECOND_DRIVER_VENDORS= -DCLPROBE_SECOND_DRIVER_SKIP="${answer:-intel-runtime.sh failed}")
    fi
fi
# -g1 (line tables) rather than -g: stack traces keep file and line, and a clean build on 2 cores
# takes about a fifth less time.
# CLPROBE_WERROR=ON in the environment (CI sets it) turns warnings into errors.
launcher=()
[ "$mode" = test ] && . .ci/ccache.sh
cmake -S . -B build "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCLPROBE_BUILD_TESTS=$tests -DCLPROBE_WERROR="${CLPROBE_WERROR:-OFF}" "${second_driver[@]}" >&2
cmake --build build -j"$jobs" >&2

case "$mode" in
    diagnose) exec build/clprobe diagnose "$@" ;;
    # Two tests at a time: many wait on PoCL's single-threaded kernel compiler, so the second core
    # is otherwise idle; no test asserts a timing, so sharing the machine changes no verdict.
    test) exec ctest --test-dir build --output-on-failure --timeout 900 -j"$jobs" ;;
    build) echo "clprobe setup: built build/clprobe" >&2 ;;
esac
