"""`clprobe report` and `clprobe compare` on saved reports: every bad file gets one line and exit
code 2; good files re-analyse, render in every format, and compare as expected."""
import copy
import json
import os

from clitest import SOURCE_DIR, expect, load_json, main, run, temp_dir

REAL = os.path.join(SOURCE_DIR, "tests", "fuzz", "corpus", "report_reader", "pocl_kernel_quick.json")


def real():
    with open(REAL) as f:
        return json.load(f)


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def bad_files():
    d = temp_dir()
    doc = real()
    text = json.dumps(doc)
    negative = copy.deepcopy(doc)
    negative["results"][2]["measurements"][0]["samples"][0] = -1.0
    wrong_version = copy.deepcopy(doc)
    wrong_version["schema_version"] = 99
    wrong_shape = copy.deepcopy(doc)
    wrong_shape["results"] = {"not": "a list"}
    huge = os.path.join(d, "huge.json")
    with open(huge, "wb") as f:
        f.truncate((256 << 20) + 1)
    return {
        "missing": (os.path.join(d, "nope.json"), "cannot read"),
        "directory": (d, "directory"),
        "empty": (write(d, "empty.json", ""), "empty"),
        "truncated": (write(d, "trunc.json", text[: len(text) // 2]), "not valid JSON"),
        "not json": (write(d, "text.json", "clprobe report\n"), "not valid JSON"),
        "another tool's JSON": (write(d, "other.json", '{"hello": 1}'), "schema"),
        "wrong shape": (write(d, "shape.json", json.dumps(wrong_shape)), "results: expected an array"),
        "other schema version": (write(d, "v99.json", json.dumps(wrong_version)), "version 99 is not supported"),
        "NaN": (write(d, "nan.json", text.replace('"median": ', '"median": NaN, "x": ', 1)), "not valid JSON"),
        "infinite": (write(d, "inf.json", text.replace('"wall_seconds": ', '"wall_seconds": 1e999, "y": ', 1)), "not finite"),
        "negative": (write(d, "neg.json", json.dumps(negative)), "non-negative"),
        "huge": (huge, "larger than"),
    }


def test_bad_report_files_exit_2_with_one_line():
    files = bad_files()
    for what, (path, words) in files.items():
        for args in (["report", path], ["compare", REAL, path], ["compare", path, REAL]):
            r = run(*args)
            expect(r.rc == 2, f"{what} ({args[0]}): exit code", r)
            expect(words in r.stderr, f"{what}: message lacks '{words}'", r)
            expect(len(r.stderr.strip().splitlines()) == 1, f"{what}: not one line", r)
            expect(r.stdout == "", f"{what}: wrote to stdout", r)


def test_report_renders_every_format():
    r = run("report", REAL)
    expect(r.rc == 0 and "Ranked findings" in r.stdout and "kernel.peak.bandwidth" in r.stdout, "text", r)
    r = run("report", REAL, "--format", "md")
    expect(r.rc == 0 and r.stdout.startswith("# clprobe report") and "| Probe | Status |" in r.stdout, "md", r)
    r = run("report", REAL, "--format", "html")
    expect(r.rc == 0 and r.stdout.startswith("<!DOCTYPE html>") and "<svg" in r.stdout, "html", r)
    expect("http://" not in r.stdout.replace('xmlns="http://www.w3.org/2000/svg"', ""), "html refers to the network")
    r = run("report", REAL, "--format", "json")
    doc = load_json(r.stdout, r)
    expect(doc["schema"] == "clprobe.report", "json", r)
    r = run("report", REAL, "--format", "pdf")
    expect(r.rc == 2, "unknown format accepted", r)


def test_report_applies_the_current_rules():
    d = temp_dir()
    doc = real()
    doc["findings"] = []
    path = write(d, "nofindings.json", json.dumps(doc))
    r = run("report", path, "--format", "json")
    expect(len(load_json(r.stdout, r)["findings"]) > 0, "re-analysis found nothing in a report with gaps", r)


def test_compare_a_report_with_itself_finds_nothing():
    r = run("compare", REAL, REAL, "--json")
    c = load_json(r.stdout, r)
    verdicts = [m["verdict"] for m in c["metrics"]]
    expect(r.rc == 0 and verdicts and all(v in ("within_noise", "same") for v in verdicts), f"verdicts {set(verdicts)}", r)
    expect(c["environment"] == [] and c["headline_regressions"] == [], "differences in identical reports", r)


def test_compare_finds_a_slower_peak_and_gates_on_it():
    d = temp_dir()
    slow = real()
    for p in slow["results"]:
        for m in p["measurements"]:
            if m["metric"].startswith("kernel.peak.fp32") or m["metric"] == "kernel.compute":
                m["samples"] = [s / 3 for s in m["samples"]]
                for k in ("min", "max", "median", "mean", "stddev", "ci95_low", "ci95_high"):
                    m["summary"][k] /= 3
    slow["device"]["compute_units"] = 1
    path = write(d, "slow.json", json.dumps(slow))
    r = run("compare", REAL, path)
    expect(r.rc == 0, "compare without the gate failed", r)
    expect("kernel.peak.fp32" in r.stdout and "slower" in r.stdout, "the slower peak was not found", r)
    expect("device.compute_units" in r.stdout and "compute-bound" in r.stdout, "no environment explanation", r)
    r = run("compare", REAL, path, "--fail-on-regression")
    expect(r.rc == 4 and "kernel.peak.fp32" in r.stderr, "the regression gate did not trip", r)
    r = run("compare", path, REAL, "--fail-on-regression")
    expect(r.rc == 0, "an improvement tripped the gate", r)


def scaled(doc, prefix, factor):
    """A copy of doc whose measurements starting with prefix have every sample times factor."""
    out = copy.deepcopy(doc)
    for p in out["results"]:
        for m in p["measurements"]:
            if m["metric"].startswith(prefix):
                m["samples"] = [s * factor for s in m["samples"]]
                for k in ("min", "max", "median", "mean", "stddev", "ci95_low", "ci95_high"):
                    m["summary"][k] *= factor
    return out


def other_driver_report(d):
    """This report as if run on another OpenCL driver: a repeat from it measures the drivers."""
    other = real()
    other["device"]["driver_version"] = "other-driver 1.0"
    other["device"]["platform_name"] = "Another OpenCL"
    return write(d, "other.json", json.dumps(other))


def test_baseline_repeats_measure_the_movement_between_runs():
    d = temp_dir()
    # A's second run read its bandwidth figures 20% lower; B reads them 25% lower than A.
    repeat = write(d, "a2.json", json.dumps(scaled(real(), "kernel.bandwidth", 0.8)))
    b = write(d, "b.json", json.dumps(scaled(real(), "kernel.bandwidth", 0.75)))
    alone = load_json(run("compare", REAL, b, "--json").stdout)
    called = [m for m in alone["metrics"] if m["metric"] == "kernel.bandwidth" and m["verdict"] == "slower"]
    expect(called and alone["baseline_runs"] == 1 and alone["between_runs"] == [], "one run of A: not called")
    r = run("compare", REAL, b, "--baseline-repeat", repeat, "--json")
    c = load_json(r.stdout, r)
    bw = [m for m in c["metrics"] if m["metric"] == "kernel.bandwidth"]
    expect(c["baseline_runs"] == 2 and c["between_runs"][0]["family"] == "kernel.bandwidth", "families", r)
    expect(bw and all(m["verdict"] == "within_noise" and m["between_runs_band"] > 0.25 for m in bw),
           "a movement A itself showed was called", r)
    r = run("compare", REAL, b, "--baseline-repeat", repeat)
    expect(r.rc == 0 and "Between runs: 2 runs of A" in r.stdout, "text", r)
    # A repeat from another driver measures the drivers, not the noise: refused.
    path = other_driver_report(d)
    r = run("compare", REAL, b, "--baseline-repeat", path)
    expect(r.rc == 2 and "--baseline-repeat" in r.stderr and len(r.stderr.strip().splitlines()) == 1, "other driver", r)
    r = run("compare", REAL, b, "--baseline-repeat", os.path.join(d, "nope.json"))
    expect(r.rc == 2 and "cannot read" in r.stderr, "missing repeat", r)


def test_candidate_repeats_call_only_what_every_run_of_b_shows():
    d = temp_dir()
    # B's first run read its bandwidth 50% lower; its repeat is like A, a second repeat as slow as B.
    b = write(d, "b.json", json.dumps(scaled(real(), "kernel.bandwidth", 0.5)))
    like_a = write(d, "b2.json", json.dumps(real()))
    slow_again = write(d, "b3.json", json.dumps(scaled(real(), "kernel.bandwidth", 0.52)))
    r = run("compare", REAL, b, "--candidate-repeat", like_a, "--json")
    c = load_json(r.stdout, r)
    bw = [m for m in c["metrics"] if m["metric"] == "kernel.bandwidth"]
    expect(c["candidate_runs"] == 2 and bw, "repeats of B", r)
    expect(all(m["verdict"] == "within_noise" and m["unconfirmed"] == "slower" and len(m["repeat_ratios"]) == 1
               for m in bw), "a slowdown its repeat did not show was called", r)
    r = run("compare", REAL, b, "--candidate-repeat", like_a, "--fail-on-regression")
    expect(r.rc == 0 and "Repeats of B: 2 runs of B" in r.stdout, "unconfirmed: the gate passes", r)
    r = run("compare", REAL, b, "--candidate-repeat", slow_again, "--json")
    c = load_json(r.stdout, r)
    expect(any(m["metric"] == "kernel.bandwidth" and m["verdict"] == "slower" for m in c["metrics"]),
           "a slowdown both runs of B showed was not called", r)
    # A repeat of B from another driver, or a missing file: one line, exit 2.
    path = other_driver_report(d)
    r = run("compare", REAL, b, "--candidate-repeat", path)
    expect(r.rc == 2 and "--candidate-repeat" in r.stderr and len(r.stderr.strip().splitlines()) == 1, "other", r)
    r = run("compare", REAL, b, "--candidate-repeat", os.path.join(d, "nope.json"))
    expect(r.rc == 2 and "cannot read" in r.stderr, "missing repeat of B", r)


if __name__ == "__main__":
    main([test_bad_report_files_exit_2_with_one_line, test_report_renders_every_format,
          test_report_applies_the_current_rules, test_compare_a_report_with_itself_finds_nothing,
          test_compare_finds_a_slower_peak_and_gates_on_it, test_baseline_repeats_measure_the_movement_between_runs,
          test_candidate_repeats_call_only_what_every_run_of_b_shows])
