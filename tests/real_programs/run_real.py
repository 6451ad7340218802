#!/usr/bin/env python3
"""Run the real OpenCL programs plainly and under `clprobe trace --replay N`, and keep what they did.

    run_real.py CLPROBE OUTDIR [--only NAME[,NAME]]... [--replay N] [--no-warmup] [--no-plain]
                               [--no-trace] [--timeout SECONDS] [--source-builds] [--trace-arg ARG]...

For each program (in this order unless --only): one warm-up run (plain, kept as
NAME.warmup.*: PoCL, hashcat and darktable compile their kernels on a first run and cache them, which
would otherwise land in whichever run comes first), one plain run (NAME.plain.stdout/.stderr), and
one traced run:

    CLPROBE trace --replay N --json OUTDIR/NAME.json -o OUTDIR/NAME.txt -- PROGRAM...

(NAME.trace.stdout/.stderr). OUTDIR/results.json holds, per program, the command, exit codes, wall
times, whether the traced stdout is byte for byte the plain one (and, for programs that print
timings, whether it is after masking numbers), and versions; a program missing on this machine is
reported as skipped with the reason. setup_real.sh installs and builds what they need.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

# ---- Environment: every path and setting the programs need, in one place ------------------------
HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("CLPROBE_REAL_DIR",
                            Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "clprobe"))
VENV = Path(os.environ.get("CLPROBE_REAL_VENV", CACHE / "real-venv"))   # openmm (setup_real.sh)
BIN = Path(os.environ.get("CLPROBE_REAL_BIN", CACHE / "real-bin"))      # clblast_sgemm (setup_real.sh)
DARKTABLE_DIR = Path(os.environ.get("CLPROBE_REAL_DARKTABLE", CACHE / "real-darktable"))
SYSTEM_PYTHON = "/usr/bin/python3"                                     # Debian's python3-pyopencl
DARKTABLE_KERNELS = "/usr/share/darktable/kernels"
# darktable 4.2 builds its kernels with -I"<kernel dir>" (quotes included); PoCL 3.1 hands that
# to clang unquoted, so `#include "common.h"` fails. PoCL adds this variable to every build.
DARKTABLE_ENV = {"POCL_EXTRA_BUILD_FLAGS": f"-I{DARKTABLE_KERNELS}"}
# The programs' own caches of compiled kernels (`--source-builds` moves them aside for a run, so the
# programs build from source: `clprobe trace --work` counts kernels it has the source of).
BINARY_CACHES = {
    "hashcat": [Path.home() / ".cache" / "hashcat" / "kernels"],
    "darktable": [Path.home() / ".cache" / "darktable"],
}
SOURCE_BUILD_ENV = {"pyopencl_programs": {"PYOPENCL_NO_CACHE": "1"}}
CLBLAST_REPS = "300"
OPENMM_STEPS = "500"
PYOPENCL_LAUNCHES = "10"
# --------------------------------------------------------------------------------------------------


def run(argv, env=None, timeout=None, stdout=None, stderr=None):
    """Run argv; return (exit code, wall seconds). Exit code None when it timed out."""
    full_env = dict(os.environ, **(env or {}))
    t = time.monotonic()
    try:
        p = subprocess.run(argv, env=full_env, stdin=subprocess.DEVNULL, timeout=timeout,
                           stdout=stdout or subprocess.DEVNULL, stderr=stderr or subprocess.DEVNULL)
        code = p.returncode
    except subprocess.TimeoutExpired:
        code = None
    return code, time.monotonic() - t


def capture(argv, env=None):
    try:
        p = subprocess.run(argv, env=dict(os.environ, **(env or {})), capture_output=True,
                           text=True, timeout=60)
        return (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable ({e})"


def dpkg_version(package):
    out = capture(["dpkg-query", "-W", "-f=${Version}", package])
    return out if out and "no packages found" not in out else None


def mask_numbers(text):
    # A measured rate's SI prefix follows the number: hashcat prints 159.2 MH/s, or 85646.5 kH/s
    # when the same benchmark runs slower on a loaded machine. Both are "# H/s".
    # The padding before a number depends on its width.
    text = re.sub(rb" *\d+(\.\d+)?", b" #", text)
    return re.sub(rb"# *[kMGTP]?(H/s|B/s|FLOPS)", rb"# \1", text)


# ---- darktable: a generated PNG, an edit with six OpenCL modules, a config that keeps the CPU device --

DARKTABLE_BLEND = "gz14eJxjYIAACQYYOOHEgAZY0QVwggZ7CB6pfNoAAE8gGQg="   # darktable's default blend
DARKTABLE_MODULES = [  # operation, modversion (darktable 4.2), params as struct fields
    ("bilat", 3, "<i4f", (1, 0.5, 0.5, 1.25, 0.2)),      # local contrast, local laplacian mode
    ("nlmeans", 2, "<4f", (2.0, 50.0, 0.5, 1.0)),        # non-local means denoise
    ("sharpen", 1, "<3f", (2.0, 0.5, 0.5)),
    ("highpass", 1, "<2f", (50.0, 50.0)),
    ("soften", 1, "<4f", (50.0, 100.0, 0.33, 50.0)),
    ("bloom", 1, "<3f", (20.0, 90.0, 25.0)),
]


def write_png(path, width=640, height=480):
    import struct
    import zlib
    rows = []
    for y in range(height):
        row = bytearray(b"\x00")
        for x in range(width):
            r, g, b = x * 255 // width, y * 255 // height, (x + y) * 255 // (width + height)
            if (x // 40 + y // 40) % 2 == 0:
                r, g, b = r // 2, g // 2, b // 2
            row += bytes((r, g, b))
        rows.append(bytes(row))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    path.write_bytes(b"\x89PNG\r\n\x1a\n"
                     + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def write_xmp(path):
    import struct
    items = "\n".join(
        f'     <rdf:li darktable:num="{i}" darktable:operation="{op}" darktable:enabled="1" '
        f'darktable:modversion="{v}" darktable:params="{struct.pack(fmt, *vals).hex()}" '
        f'darktable:multi_name="" darktable:multi_priority="0" darktable:blendop_version="11" '
        f'darktable:blendop_params="{DARKTABLE_BLEND}"/>'
        for i, (op, v, fmt, vals) in enumerate(DARKTABLE_MODULES))
    path.write_text(f'''<?xml version="1.0" encoding="UTF-8"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:darktable="http://darktable.sf.net/"
    darktable:xmp_version="5" darktable:raw_params="0" darktable:auto_presets_applied="1"
    darktable:history_end="{len(DARKTABLE_MODULES)}" darktable:iop_order_version="2">
   <darktable:history>
    <rdf:Seq>
{items}
    </rdf:Seq>
   </darktable:history>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
''')


def darktable_argv(out):
    return ["darktable-cli", str(DARKTABLE_DIR / "input.png"), str(DARKTABLE_DIR / "edit.xmp"),
            str(out / "darktable-out.jpg"), "--core", "--configdir", str(DARKTABLE_DIR / "conf"),
            "--conf", "opencl=TRUE"]


def prepare_darktable(out):
    """darktable 4.2 discards a CPU OpenCL device the first time it sees it ("discarding new device
    as emulated by CPU") and remembers it in darktablerc as cldevice_v4_<name>=... with the 8th
    field, `disabled`, at 1. A device already listed is not new: one probing run writes the line,
    then `disabled` is set to 0. Returns None, or why darktable cannot run."""
    DARKTABLE_DIR.mkdir(parents=True, exist_ok=True)
    if not (DARKTABLE_DIR / "input.png").exists():
        write_png(DARKTABLE_DIR / "input.png")
    write_xmp(DARKTABLE_DIR / "edit.xmp")
    rc_file = DARKTABLE_DIR / "conf" / "darktablerc"
    line = re.compile(r"^(cldevice_v\d+_[a-z0-9]+=)(\S+(?: \S+){6}) (\d) (.*)$")
    if not rc_file.exists() or not any(line.match(l) for l in rc_file.read_text().splitlines()):
        probe = DARKTABLE_DIR / "probe"
        probe.mkdir(exist_ok=True)
        (probe / "darktable-out.jpg").unlink(missing_ok=True)
        run(darktable_argv(probe), env=DARKTABLE_ENV, timeout=900)
    if not rc_file.exists():
        return "darktable-cli wrote no darktablerc"
    lines, found = [], False
    for l in rc_file.read_text().splitlines():
        m = line.match(l)
        if m:
            l, found = f"{m.group(1)}{m.group(2)} 0 {m.group(4)}", True
        lines.append(l)
    rc_file.write_text("\n".join(lines) + "\n")
    return None if found else "darktable listed no OpenCL device in darktablerc"


# ---- The programs --------------------------------------------------------------------------------

def programs(out):
    venv_python = VENV / "bin" / "python"
    return {
        "clblast_sgemm": {
            "argv": [str(BIN / "clblast_sgemm"), CLBLAST_REPS],
            "needs": [(BIN / "clblast_sgemm", "not built: run setup_real.sh")],
            "versions": lambda: {"libclblast1": dpkg_version("libclblast1")},
        },
        "openmm_water": {
            "argv": [str(venv_python), str(HERE / "openmm_water.py"), OPENMM_STEPS],
            "needs": [(venv_python, "no virtual environment: run setup_real.sh")],
            "check": [str(venv_python), "-c", "import openmm"],
            "versions": lambda: {"openmm": capture([str(venv_python), "-c",
                                                    "import openmm; print(openmm.__version__)"])},
        },
        "pyopencl_programs": {
            "argv": [SYSTEM_PYTHON, str(HERE / "pyopencl_programs.py"), PYOPENCL_LAUNCHES],
            "needs": [(Path(SYSTEM_PYTHON), "no /usr/bin/python3")],
            "check": [SYSTEM_PYTHON, "-c", "import pyopencl, numpy"],
            "versions": lambda: {"python3-pyopencl": dpkg_version("python3-pyopencl")},
        },
        "hashcat": {
            "argv": ["hashcat", "-b", "-m", "0", "--force"],
            "needs": [("hashcat", "hashcat not installed: apt-get install hashcat")],
            "timings_in_stdout": True,
            "versions": lambda: {"hashcat": capture(["hashcat", "--version"])},
        },
        "darktable": {
            "argv": darktable_argv(out),
            "env": DARKTABLE_ENV,
            "needs": [("darktable-cli", "darktable not installed: apt-get install darktable")],
            "prepare": prepare_darktable,
            "before_each": lambda: (out / "darktable-out.jpg").unlink(missing_ok=True),
            "versions": lambda: {"darktable": dpkg_version("darktable")},
        },
    }


def skip_reason(spec):
    for need, why in spec.get("needs", []):
        if isinstance(need, Path) and not need.exists():
            return f"{need} missing: {why}"
        if isinstance(need, str) and shutil.which(need) is None:
            return why
    if "check" in spec:
        p = subprocess.run(spec["check"], capture_output=True, text=True)
        if p.returncode != 0:
            return f"{' '.join(spec['check'])} failed: {p.stderr.strip().splitlines()[-1:]}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clprobe", help="the clprobe binary (its trace layer next to it)")
    ap.add_argument("outdir")
    ap.add_argument("--only", action="append", default=[], help="NAME[,NAME]; repeatable")
    ap.add_argument("--replay", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per run")
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--no-plain", action="store_true")
    ap.add_argument("--no-trace", action="store_true")
    ap.add_argument("--source-builds", action="store_true",
                    help="plain and traced runs build their kernels from source: the programs' binary caches "
                         "moved aside for each run (and restored), PYOPENCL_NO_CACHE=1")
    ap.add_argument("--trace-arg", action="append", default=[],
                    help="an extra argument for `clprobe trace` (repeatable), e.g. --trace-arg=--baseline "
                         "--trace-arg=DIAGNOSE.json")
    args = ap.parse_args()

    out = Path(args.outdir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    clprobe = str(Path(args.clprobe).resolve())
    table = programs(out)
    only = [n for o in args.only for n in o.split(",") if n]
    unknown = [n for n in only if n not in table]
    if unknown:
        ap.error(f"unknown program {unknown}; known: {', '.join(table)}")
    results_file = out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    results["_machine"] = {
        "clprobe": clprobe,
        "clprobe_version": capture([clprobe, "--version"]).splitlines()[:2],
        "pocl": dpkg_version("pocl-opencl-icd"),
        "ocl_icd": dpkg_version("ocl-icd-libopencl1"),
        "OCL_ICD_VENDORS": os.environ.get("OCL_ICD_VENDORS"),
    }

    for name, spec in table.items():
        if only and name not in only:
            continue
        res = {"argv": spec["argv"], "env": spec.get("env", {})}
        reason = skip_reason(spec)
        if reason is None and "prepare" in spec:
            reason = spec["prepare"](out)
        if reason is not None:
            res["skipped"] = reason
            print(f"{name}: skipped: {reason}", flush=True)
            results[name] = res
            continue
        res["versions"] = spec["versions"]()
        runs = []
        if not args.no_warmup:
            runs.append(("warmup", spec["argv"]))
        if not args.no_plain:
            runs.append(("plain", spec["argv"]))
        if not args.no_trace:
            runs.append(("trace", [clprobe, "trace", "--replay", str(args.replay)] + args.trace_arg + [
                                   "--json", str(out / f"{name}.json"),
                                   "-o", str(out / f"{name}.txt"), "--"] + spec["argv"]))
        for kind, argv in runs:
            if "before_each" in spec:
                spec["before_each"]()
            so, se = out / f"{name}.{kind}.stdout", out / f"{name}.{kind}.stderr"
            load_before = os.getloadavg()[0]
            env = dict(spec.get("env", {}))
            moved = []
            if args.source_builds and kind != "warmup":
                env.update(SOURCE_BUILD_ENV.get(name, {}))
                for cache in BINARY_CACHES.get(name, []):
                    if cache.exists():
                        aside = cache.with_name(cache.name + ".clprobe-aside")
                        shutil.rmtree(aside, ignore_errors=True)
                        cache.rename(aside)
                        moved.append((cache, aside))
            try:
                with open(so, "wb") as fo, open(se, "wb") as fe:
                    code, wall = run(argv, env=env, timeout=args.timeout, stdout=fo, stderr=fe)
            finally:
                for cache, aside in moved:
                    shutil.rmtree(cache, ignore_errors=True)
                    aside.rename(cache)
            res[kind] = {"exit_code": code, "timed_out": code is None, "wall_s": round(wall, 3),
                         "stdout": so.name, "stderr": se.name,
                         # 1-minute load average before and after: other work on the machine
                         "loadavg_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
            if kind == "trace":
                res[kind]["argv"] = argv
            print(f"{name}: {kind}: exit {code}, {wall:.2f} s", flush=True)
        plain, traced = out / f"{name}.plain.stdout", out / f"{name}.trace.stdout"
        if "plain" in res and "trace" in res:
            a, b = plain.read_bytes(), traced.read_bytes()
            res["stdout_identical"] = a == b
            if spec.get("timings_in_stdout"):
                res["stdout_identical_numbers_masked"] = mask_numbers(a) == mask_numbers(b)
            res["wall_ratio_trace_over_plain"] = round(res["trace"]["wall_s"] / res["plain"]["wall_s"], 3)
        results[name] = res
        results_file.write_text(json.dumps(results, indent=2) + "\n")
    results_file.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
