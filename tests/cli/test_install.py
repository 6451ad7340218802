"""`cmake --install` into a temporary prefix (no root): the files land where README's Install section
says, nothing of the tests comes along, and the installed clprobe finds the installed trace layer."""
import os
import shutil
import subprocess

from clitest import BINARY, expect, main, temp_dir

BUILD_DIR = os.path.dirname(BINARY)


def cache_value(name):
    with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split("=", 1)[1].strip()
    return None


def installed_tree():
    prefix = temp_dir()
    p = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", prefix], capture_output=True, text=True,
                       timeout=300)
    expect(p.returncode == 0, f"cmake --install failed:\n{p.stdout}\n{p.stderr}")
    files = set()
    for root, _, names in os.walk(prefix):
        files.update(os.path.relpath(os.path.join(root, n), prefix) for n in names)
    return prefix, files


def test_install_layout_and_layer_lookup():
    prefix, files = installed_tree()
    try:
        libdir = cache_value("CMAKE_INSTALL_LIBDIR") or "lib"
        for path in ("bin/clprobe", f"{libdir}/clprobe/libclprobe_trace_layer.so",
                     "share/bash-completion/completions/clprobe", "share/doc/clprobe/README.md",
                     "share/doc/clprobe/report-schema.md", "share/doc/clprobe/report.schema.json"):
            expect(path in files, f"{path} not installed: {sorted(files)}")
        if os.path.exists(os.path.join(BUILD_DIR, "clprobe.1")):
            expect("share/man/man1/clprobe.1" in files, "the man page was built but not installed")
        # Only the tool, its layer and (when built) its work-counting plugin for Oclgrind are
        # programs: no test binary, fuzz target or fault layer.
        programs = {f for f in files if not f.startswith("share/")}
        expected = {"bin/clprobe", f"{libdir}/clprobe/libclprobe_trace_layer.so"}
        if os.path.exists(os.path.join(BUILD_DIR, "libclprobe_work_counter.so")):
            expected.add(f"{libdir}/clprobe/libclprobe_work_counter.so")
        expect(programs == expected, f"other programs installed: {sorted(programs)}")
        # The installed binary, with no layer next to it, finds the installed one, which the traced
        # program (the installed clprobe listing devices) loads: its records open with the header.
        exe = os.path.join(prefix, "bin", "clprobe")
        records = os.path.join(prefix, "records")  # a folder: one file per process
        env = dict(os.environ)
        env.pop("CLPROBE_DEVICE", None)
        p = subprocess.run([exe, "trace", "--no-ceilings", "-q", "--records", records, "--", exe, "list"],
                           capture_output=True, text=True, env=env, timeout=300)
        expect(p.returncode == 0, f"installed trace failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
        streams = [name for name in os.listdir(records) if name.endswith(".rec")]
        expect(len(streams) == 1, f"records of {len(streams)} processes, not 1")
        with open(os.path.join(records, streams[0])) as f:
            expect(f.readline().startswith("H\t"), "the traced program did not load the installed layer")
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    main([test_install_layout_and_layer_lookup])
