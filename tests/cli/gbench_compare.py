"""google-benchmark's compare.py on two `clprobe report --format gbench` exports.

The baseline is a saved PoCL run; the contender is the same run with every kernel.bandwidth sample
1.25x faster and every kernel.build.time sample 2x slower. compare.py must read both exports, name
the benchmarks, and report the faster bandwidth as a smaller time (-20%) and the slower build as a
larger one (+100%): the rate mapping keeps compare.py's "lower is better" true.

Registered apart from the test_*.py files because it skips (exit 77, ctest SKIP_RETURN_CODE) where
compare.py or its Python modules (Debian libbenchmark-tools, python3-scipy, python3-numpy) are missing.
"""
import copy
import importlib.util
import json
import os
import subprocess
import sys

from clitest import SOURCE_DIR, expect, load_json, main, run, temp_dir

COMPARE_PY = os.environ.get("CLPROBE_COMPARE_PY", "/usr/share/benchmark/compare.py")
SKIP = 77

FIXTURE = os.path.join(SOURCE_DIR, "tests", "fixtures", "reports", "pocl_kernel_quick.json")
SCALED = {"kernel.bandwidth": 1.25, "kernel.build.time": 2.0}
SUMMARY_IN_UNIT = ("min", "max", "median", "mean", "stddev", "ci95_low", "ci95_high")


def scaled_report(report):
    """Every sample and summary value of the SCALED metrics times its factor (cv and n unchanged)."""
    out = copy.deepcopy(report)
    for result in out["results"]:
        for m in result["measurements"]:
            factor = SCALED.get(m["metric"])
            if factor is None:
                continue
            m["samples"] = [v * factor for v in m["samples"]]
            for key in SUMMARY_IN_UNIT:
                m["summary"][key] *= factor
    return out


def export(report_path, out_path):
    r = run("report", report_path, "--format", "gbench")
    expect(r.rc == 0, f"report --format gbench {report_path} failed", r)
    load_json(r.stdout, r)
    with open(out_path, "w") as f:
        f.write(r.stdout)


def compare(a, b, dump):
    p = subprocess.run([sys.executable, COMPARE_PY, "--no-color", "--dump_to_json", dump, "benchmarks", a, b],
                       capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"compare.py exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    with open(dump) as f:
        return p.stdout, json.load(f)


def test_compare_py_reads_two_exports():
    d = temp_dir()
    with open(FIXTURE) as f:
        baseline = json.load(f)
    contender_path = os.path.join(d, "contender.json")
    with open(contender_path, "w") as f:
        json.dump(scaled_report(baseline), f)
    a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
    export(FIXTURE, a)
    export(contender_path, b)
    stdout, diff = compare(a, b, os.path.join(d, "diff.json"))

    bw = "kernel.bandwidth/access:read/pattern:chunked/vector:8"
    for name in (bw, bw + "_median", "kernel.build.time/path:cold", "kernel.peak.fp32_median"):
        expect(name in stdout, f"compare.py output does not name {name}:\n{stdout[:3000]}")
    by_name = {entry["name"]: entry for entry in diff}
    median_change = by_name[bw + "_median"]["measurements"][0]["time"]
    expect(abs(median_change - (1 / 1.25 - 1)) < 1e-9, f"1.25x the bandwidth shows as {median_change:+.4f}")
    build_change = by_name["kernel.build.time/path:cold_median"]["measurements"][0]["time"]
    expect(abs(build_change - 1.0) < 1e-9, f"2x the build time shows as {build_change:+.4f}")
    unchanged = by_name["kernel.peak.fp32_median"]["measurements"][0]["time"]
    expect(unchanged == 0, f"an unchanged metric moved by {unchanged}")


def missing_tools():
    if not os.path.isfile(COMPARE_PY):
        return f"{COMPARE_PY} not found (Debian package libbenchmark-tools)"
    for module in ("scipy", "numpy"):
        if importlib.util.find_spec(module) is None:
            return f"compare.py needs the Python module {module} (Debian package python3-{module})"
    return None


if __name__ == "__main__":
    why = missing_tools()
    if why:
        print(f"SKIP: {why}")
        sys.exit(SKIP)
    main([test_compare_py_reads_two_exports])
