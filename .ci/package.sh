#!/usr/bin/env bash
# Packaging check CI runs after the test suite, on the build/ that .ci/setup.sh built: builds the
# Debian package with CPack (nothing rebuilds beyond the man page), installs it with apt as a user
# would, runs the installed clprobe (list, --version, trace through the installed layer) and
# reads its man page, then removes the package again. Prints its wall time.
# Run as root, or with sudo available (apt install).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
start=$SECONDS
sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)

[ -f build/CMakeCache.txt ] || { echo "package: no build/ here: run .ci/setup.sh first" >&2; exit 1; }
# dpkg-shlibdeps (dpkg-dev) computes the dependencies; man-db reads the installed page.
missing=()
for p in dpkg-dev help2man man-db; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cmake build >/dev/null  # picks up help2man if it was installed just now
cmake --build build --target clprobe clprobe_man >&2
rm -f build/clprobe_*.deb
(cd build && cpack -G DEB >&2)
deb=$(ls build/clprobe_*.deb)
dpkg-deb -I "$deb" >&2
dpkg-deb -c "$deb" | grep -E 'bin/clprobe$|libclprobe_trace_layer.so$|man1/clprobe.1|completions/clprobe$' >&2
# Run-time libraries only: a machine without a compiler or headers installs it.
if dpkg-deb -f "$deb" Depends | grep -q -- '-dev'; then
    echo "package: a -dev package among the dependencies" >&2
    exit 1
fi

if dpkg-query -W -f='${Status}' clprobe 2>/dev/null | grep -q "install ok installed"; then
    echo "package: clprobe is already installed on this machine; not replacing it" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get install -y -qq "./$deb" >&2
status=0
{
    set -x
    [ "$(command -v clprobe)" = /usr/bin/clprobe ]
    /usr/bin/clprobe --version
    /usr/bin/clprobe list
    MANPAGER=cat man clprobe | sed -n 1,20p  # reads it all: no SIGPIPE under pipefail
    man -w clprobe | grep -q '^/usr/share/man/man1/clprobe.1'
    # The installed layer, found from the installed binary and loaded into the traced program
    # (clprobe list itself, an OpenCL program): its records open with the layer's header line.
    # --records names a folder: one PID.rec per process of the traced job.
    records=$(mktemp -d)
    /usr/bin/clprobe trace --no-ceilings -q --records "$records" -- /usr/bin/clprobe list >/dev/null
    grep -q '^H' "$records"/*.rec
    rm -rf "$records"
    # The installed completion, sourced as bash-completion would, completes a subcommand.
    bash -c 'source /usr/share/bash-completion/completions/clprobe && COMP_LINE="clprobe di" COMP_POINT=10 \
        COMP_WORDS=(clprobe di) COMP_CWORD=1 && _clprobe && [ "${COMPREPLY[*]}" = diagnose ]'
    set +x
} >&2 || status=$?
set +x
"${sudo[@]}" apt-get purge -y -qq clprobe >&2
echo "package: $(basename "$deb") built, installed, run and removed in $((SECONDS - start)) s (status $status)" >&2
exit $status
