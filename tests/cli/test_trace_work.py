"""clprobe trace --work (docs/trace.md, "How work is counted") on a real pyopencl program of three
kernels of known character (tests/real_programs/pyopencl_programs.py): a float4 copy, fp32 FMA
chains and an MD5-like integer mix. Their work is counted under Oclgrind and each is judged against
the roof that binds it: the copy by its bytes, the FMA chains by the fp32 peak, the mix by the int32
peak; no fraction of a roof above 1.05; no finding its own replay disproved is ranked; the program's
output and exit code are what they are untraced. The quick subset of the real programs (the rest:
tests/real_programs, CLPROBE_REAL_PROGRAMS)."""
import json
import os
import subprocess

from clitest import BINARY, SOURCE_DIR, expect, main, run, temp_dir

PROGRAM = [os.path.join("/usr/bin", "python3"), os.path.join(SOURCE_DIR, "tests", "real_programs",
                                                           "pyopencl_programs.py"), "6", "16"]
# pyopencl loads a kernel it built before from its binary cache, which Oclgrind cannot run: the
# counted program builds from source.
ENV = dict(os.environ, PYOPENCL_NO_CACHE="1")
ENV.pop("CLPROBE_DEVICE", None)
WORK = temp_dir()
BASELINE = os.path.join(WORK, "baseline.json")
EXPECTED_ROOF = {"copy_f4": {"memory", "cache"}, "fma_f32": {"fp32"}, "int_mix": {"int32"}}


def layer_loads_into_python():
    # The sanitizer build's layer takes AddressSanitizer's runtime from the program that loads it
    # (src/layer/CMakeLists.txt): Debian's python3 has none, so that layer cannot load into it.
    # Counting itself runs under the sanitizers in test_work_count and test_trace's planted programs.
    if "ASAN_OPTIONS" in os.environ:
        print("skipped: an AddressSanitizer build's layer cannot load into", PROGRAM[0])
        return False
    return True


def has_pyopencl():
    p = subprocess.run([PROGRAM[0], "-c", "import pyopencl, numpy"], capture_output=True)
    return p.returncode == 0


def baseline():
    if not os.path.exists(BASELINE):
        r = run("diagnose", "--quick", "--layers", "kernel", "--workloads", "none", "--probes",
                "kernel.launch,kernel.bandwidth,kernel.compute.fp32,kernel.compute.int32", "--json", BASELINE, "-q",
                timeout=600)
        expect(r.rc == 0 and os.path.exists(BASELINE), "baseline diagnose failed", r)
    return BASELINE


def traced(*options):
    path = os.path.join(WORK, "report.json")
    p = subprocess.run([BINARY, "trace", "--baseline", baseline(), "--json", path, "-q", *options, "--", *PROGRAM],
                       capture_output=True, env=ENV, timeout=600)
    with open(path) as f:
        return p, json.load(f)


def program_result(report):
    return next(p for p in report["results"] if p["id"] == "trace.program")


def test_each_kernel_is_judged_against_the_roof_that_binds_it():
    if not layer_loads_into_python():
        return
    expect(has_pyopencl(), "python3-pyopencl is not installed (the setup script installs it)")
    plain = subprocess.run(PROGRAM, capture_output=True, env=ENV, timeout=600)
    p, report = traced("--replay", "3")
    expect(p.returncode == plain.returncode == 0, f"exit {p.returncode} traced, {plain.returncode} plain")
    expect(p.stdout == plain.stdout, f"stdout changed under trace:\n{p.stdout!r}\n{plain.stdout!r}")
    result = program_result(report)
    work = {w["kernel"]: w for w in result["attributes"]["facts"].get("work", [])}
    for kernel in EXPECTED_ROOF:
        expect(kernel in work and work[kernel]["counted"], f"{kernel} not counted: {work.get(kernel)}")
    binding, fractions = {}, []
    for m in result["measurements"]:
        if m["metric"] != "app.kernel.roof_fraction":
            continue
        kernel, roof = m["labels"]["kernel"], m["labels"]["roof"]
        if "the binding roof" in m.get("note", ""):
            binding[kernel] = roof
        if not work.get(kernel, {}).get("upper_bound"):
            fractions.append((kernel, roof, m["summary"]["median"]))
    for kernel, roofs in EXPECTED_ROOF.items():
        expect(binding.get(kernel) in roofs, f"{kernel} is bound by {binding.get(kernel)}, expected {roofs}")
    above = [f for f in fractions if f[2] > 1.05]
    expect(not above, f"fractions of a roof above 1.05: {above}")
    # A launch that beat its roof raised it: the roof was measured beside a busy machine (beside a
    # parallel test, Intel's fp32 peak came out at half: fma_f32 beat it 1.92x; this VM's compute
    # flips 2x between phases). Beyond 3x (max_roof_excess) nothing is placed on that roof at all.
    excess = [(m["labels"]["kernel"], m["labels"]["roof"], m["summary"]["median"]) for m in result["measurements"]
              if m["metric"] == "app.kernel.roof_excess"]
    expect(all(1 < x[2] <= 3 for x in excess), f"roofs beaten by: {excess}")
    expect(fractions, "no fraction of a roof was measured")
    # A finding the replay measured no gain in is a note, never ranked.
    for f in report["findings"]:
        if f["title"].endswith("(measured: no gain)") or f.get("not_ranked"):
            expect(f["kind"] == "note", f"ranked though not rankable: {f}")
    # The compute-bound kernels are never called memory-bound.
    for f in report["findings"]:
        if f["id"] == "trace.kernel.below_roof" and f["kind"] == "ranked":
            expect("fma_f32" not in f["title"] and "int_mix" not in f["title"], f"memory finding: {f['title']}")


def test_work_off_and_counting_unavailable_say_why():
    if not layer_loads_into_python():
        return
    expect(has_pyopencl(), "python3-pyopencl is not installed (the setup script installs it)")
    _, report = traced("--work", "0")
    expect("work" not in program_result(report)["attributes"]["facts"], "--work 0 counted work")
    env = dict(ENV, CLPROBE_OCLGRIND_ICD="/nonexistent/liboclgrind-rt-icd.so")
    path = os.path.join(WORK, "unavailable.json")
    p = subprocess.run([BINARY, "trace", "--baseline", baseline(), "--json", path, "-q", "--", *PROGRAM],
                       capture_output=True, env=env, timeout=600)
    expect(p.returncode == 0, f"exit {p.returncode}")
    with open(path) as f:
        report = json.load(f)
    work = program_result(report)["attributes"]["facts"]["work"]
    expect(work and all(not w["counted"] and "CLPROBE_OCLGRIND_ICD" in w["reason"] for w in work),
           f"uncounted kernels must say why: {work}")
    # Without counted work a kernel's argument-size estimate is shown and never ranked.
    for f in report["findings"]:
        if f["id"] in ("trace.kernel.below_roof", "trace.kernel.no_local_size"):
            expect(f["kind"] == "note" and "not counted" in f.get("not_ranked", ""), f"estimate ranked: {f}")


if __name__ == "__main__":
    main([test_each_kernel_is_judged_against_the_roof_that_binds_it, test_work_off_and_counting_unavailable_say_why])
