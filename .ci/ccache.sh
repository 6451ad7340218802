# Sourced by .ci/setup.sh and .ci/reliability.sh: compile through ccache when it is installed, so a
# clean clone's build reuses the compiles of earlier clones on this machine (CI builds everything
# twice, normal and sanitizer, which on 2 cores is about half of its wall time when nothing is cached).
# base_dir makes the source and include paths relative to the clone, and hash_dir off lets two clones
# at different paths share entries; the price is that a cached object's debug info names the build
# folder of the clone that compiled it first (file and line in stack traces stay right, relative).
# Sets `launcher` to the CMake options to add (empty without ccache). CLPROBE_CCACHE=OFF opts out.
launcher=()
if [ "${CLPROBE_CCACHE:-ON}" != OFF ] && command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
