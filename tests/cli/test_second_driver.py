"""clprobe on two real OpenCL drivers of the same CPU: PoCL (the default) and Intel's oneAPI CPU
runtime (.ci/intel-runtime.sh; selected with OCL_ICD_VENDORS only for the runs that want it).

One quick `diagnose` on each, then the same invariants on both: every probe ends ok, unsupported or
skipped (never error or crashed), no workload point above its roof, the fp32 ceiling at least 0.9x
the host's OpenBLAS sgemm on these cores, fp32 / fp64 >= 1.3 where the device has fp64, the drift
reference's compute rate not above the fp32 ceiling (a kernel a vectoriser can fold computes one
result for sixteen work-items and reads 16x too fast), no copy-free path reported as a bandwidth.
Then `compare` across the two drivers names the driver change first and calls the launch, build and
transfer differences. Where the second driver is not installed the test exits 77 (ctest: skipped) saying why.
"""
import json
import os
import sys

from clitest import expect, load_json, main, run, temp_dir

VENDORS = os.environ.get("CLPROBE_SECOND_DRIVER_VENDORS", "")
SKIP_REASON = os.environ.get("CLPROBE_SECOND_DRIVER_SKIP", "")

# Workloads at shapes a quick CI run affords; the kernel layer measures the ceilings they are held to.
SHAPES = ("--glm-rows", "20000", "--glm-cols", "32", "--glm-batch", "5000", "--attn-seq", "64", "--attn-kv-len", "512",
          "--attn-heads", "4")

_runs = {}


def diagnose(driver):
    """One quick run per driver, shared by the checks; the JSON file is kept for compare."""
    if driver not in _runs:
        path = os.path.join(temp_dir(), f"{driver}.json")
        env = {"OCL_ICD_VENDORS": VENDORS} if driver == "intel" else {}
        r = run("diagnose", "--quick", "--layers", "kernel,transfer", "--json", path, *SHAPES, env=env, timeout=900)
        expect(r.rc == 0, f"diagnose on {driver} exited {r.rc}", r)
        with open(path) as f:
            _runs[driver] = (path, load_json(f.read(), r))
    return _runs[driver][1]


def measurements(doc, metric, **labels):
    out = []
    for p in doc["results"]:
        for m in p.get("measurements", []):
            if m["metric"] == metric and all(m.get("labels", {}).get(k) == v for k, v in labels.items()):
                out.append(m)
    return out


def headline(doc, metric):
    ms = [m for m in measurements(doc, metric) if not m.get("labels")]
    return ms[0]["summary"]["median"] if ms else None


def fastest(doc, metric):
    """A ceiling's fastest sample: ceilings are best-of figures (docs/report-schema.md)."""
    ms = [m for m in measurements(doc, metric) if not m.get("labels")]
    return max(ms[0]["samples"]) if ms else None


def for_each_driver(check, measure_again=False):
    """check(driver, doc) on each driver's run. measure_again: a check of a ratio between figures
    that one run of this VM can read off in a slow phase (its compute flips 2x within a run) gets one
    fresh run of that driver when the first fails, and fails when both do: a scalar or folded
    ceiling is so in every run, a slow phase is not."""
    for driver in ("pocl", "intel"):
        doc = diagnose(driver)
        expect(VENDORS == "" or driver != "intel" or "Intel" in doc["device"]["platform_name"],
               f"the Intel run used {doc['device']['platform_name']}")
        try:
            check(driver, doc)
        except AssertionError as first:
            if not measure_again:
                raise
            print(f"({driver}: {str(first).splitlines()[0]}; measured again)")
            del _runs[driver]
            check(driver, diagnose(driver))


def test_every_probe_ends_ok_or_unsupported():
    def check(driver, doc):
        bad = [(p["id"], p["status"], p.get("reason", "")) for p in doc["results"]
               if p["status"] not in ("ok", "unsupported", "skipped")]
        expect(not bad, f"{driver}: probes that did not end ok/unsupported/skipped: {bad}")
        ok = [p["id"] for p in doc["results"] if p["status"] == "ok"]
        for probe in ("kernel.bandwidth", "kernel.compute.fp32", "transfer.latency", "glm.gradient",
                      "attention.prefill", "attention.decode"):
            expect(probe in ok, f"{driver}: {probe} not ok")

    for_each_driver(check)


def test_no_point_above_its_roof():
    def check(driver, doc):
        over = []
        for p in doc["results"]:
            for m in p.get("measurements", []):
                if m["metric"].endswith(("roofline_fraction", "peak_fraction")) and m["summary"]["median"] > 1.05:
                    over.append((m["metric"], m.get("labels"), m["summary"]["median"]))
        expect(not over, f"{driver}: fractions above 1.05: {over}")

    for_each_driver(check, measure_again=True)


def reference_before(doc, probe):
    """The drift reference's compute rate measured just before `probe`: the machine's state then."""
    checks = [c for c in (doc.get("drift") or {}).get("checks", []) if c["before_probe"] == probe]
    return checks[0]["compute_gflops"] if checks else None


def same_state(doc, value, probe, other_probe):
    """`value`, measured by `probe`, scaled to the machine state `other_probe` was measured in.
    This VM's throughput flips 2x between phases; two ceilings measured a minute apart are compared
    as if measured together by the reference kernel timed before each (docs/report-schema.md)."""
    mine, theirs = reference_before(doc, probe), reference_before(doc, other_probe)
    return value * theirs / mine if mine and theirs else value


def test_ceilings_not_below_what_the_cores_do():
    # Each pair is measured a minute apart, and this VM's throughput flips 2x between phases. A pair
    # passes when it holds as measured or in one machine state (scaled by the reference kernel
    # timed before each probe, a 1 ms snapshot): a ceiling that is short both ways is short.
    def check(driver, doc):
        fp32 = fastest(doc, "kernel.peak.fp32")
        expect(fp32 and fp32 > 0, f"{driver}: no kernel.peak.fp32")
        sgemm = measurements(doc, "kernel.host_gemm.gflops", precision="fp32")
        if doc["device"]["type"] == "cpu" and sgemm:
            raw = sgemm[0]["summary"]["median"]
            scaled = same_state(doc, raw, "kernel.host_gemm", "kernel.compute.fp32")
            expect(fp32 >= 0.9 * min(raw, scaled),
                   f"{driver}: fp32 ceiling {fp32:.1f} below 0.9x sgemm {raw:.1f} ({scaled:.1f} in the same state)")
        fp64 = fastest(doc, "kernel.peak.fp64")
        if doc["device"].get("fp64") and fp64:
            fp64_here = same_state(doc, fp64, "kernel.compute.fp64", "kernel.compute.fp32")
            ratio = fp32 / min(fp64, fp64_here)
            # The cores give 2x (a vector register holds twice the fp32 lanes); an fp32 ceiling the
            # vectoriser left scalar, or an fp64 one it folded, gives 1x or less. 1.3 splits the two
            # with room for this VM's drift: a CI run read 1.55 on a healthy pair (fp32 222, fp64 143).
            expect(ratio >= 1.3, f"{driver}: fp32 / fp64 = {ratio:.2f} (fp32 {fp32:.1f}, fp64 {fp64:.1f}, "
                   f"{fp64_here:.1f} in fp32's machine state)")

    for_each_driver(check, measure_again=True)


def test_no_figure_above_the_hardware():
    def check(driver, doc):
        fp32 = headline(doc, "kernel.peak.fp32")
        drift = doc.get("drift") or {}
        checks = drift.get("checks", [])
        expect(checks, f"{driver}: no drift checks ({drift.get('note')})")
        # The check taken just before the fp32 ceiling saw the same machine state (this VM's
        # throughput flips 2x between phases, so a check minutes away proves nothing). The
        # reference is simpler work than the ceiling's sweep; above it by half again means it was
        # folded (one result computed for many work-items), not that it ran well.
        beside = [c for c in checks if c["before_probe"] == "kernel.compute.fp32"]
        expect(beside, f"{driver}: no drift check before kernel.compute.fp32")
        reference = beside[0]["compute_gflops"]
        expect(reference <= 1.5 * fp32, f"{driver}: drift reference {reference:.0f} GFLOP/s above 1.5x fp32 {fp32:.0f}")
        for p in doc["results"]:
            for m in p.get("measurements", []):
                if m["metric"].startswith("transfer.") and m["metric"].endswith(".bandwidth"):
                    expect(m.get("labels", {}).get("path") != "use_host_ptr",
                           f"{driver}: a bandwidth for the zero-copy path, which copies nothing: {m}")
        expect(headline(doc, "kernel.peak.bandwidth") > 0, f"{driver}: no kernel.peak.bandwidth")

    for_each_driver(check, measure_again=True)


def test_compare_across_drivers_names_the_driver_first():
    a, b = diagnose("pocl"), diagnose("intel")
    r = run("compare", _runs["pocl"][0], _runs["intel"][0])
    expect(r.rc == 0, "compare", r)
    lines = [line for line in r.stdout.splitlines() if line.strip()]
    first = "\n".join(lines[:4])
    expect("driver" in first.lower() and "Intel" in first and "Portable Computing Language" in first,
           "the driver change is not named at the top", r)
    j = run("compare", _runs["pocl"][0], _runs["intel"][0], "--json")
    doc = load_json(j.stdout, j)
    called = {m["metric"] for m in doc["metrics"] if m["verdict"] in ("faster", "slower")}
    # Launch (4-16x), build through the driver's cache (4-11x, Intel caches nothing) and transfer
    # (up to 50x) differences: no drift band hides them now (the reference shift across drivers is
    # the drivers' difference, and within a run the reference's spread widens nothing).
    for prefix in ("kernel.launch", "kernel.build", "transfer."):
        expect(any(c.startswith(prefix) for c in called), f"no {prefix} difference called across drivers: {called}", r)
    expect(a["device"]["platform_name"] != b["device"]["platform_name"], "both runs used one driver")


if __name__ == "__main__":
    if not VENDORS:
        print(f"SKIPPED: the second driver (Intel's OpenCL CPU runtime) is not installed: "
              f"{SKIP_REASON or 'CLPROBE_SECOND_DRIVER_VENDORS is not set'}")
        sys.exit(77)
    main([test_every_probe_ends_ok_or_unsupported, test_no_point_above_its_roof,
          test_ceilings_not_below_what_the_cores_do, test_no_figure_above_the_hardware,
          test_compare_across_drivers_names_the_driver_first])
