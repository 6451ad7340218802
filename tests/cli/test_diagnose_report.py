"""clprobe diagnose end to end: JSON on stdout is the whole stdout, it validates against the
published schema, it round-trips through the file writer, and unwritable outputs fail early
without leaving files behind."""
import json
import os
import re

from clitest import SOURCE_DIR, expect, load_json, main, run, temp_dir

# Workload shapes small enough for CI and odd enough to show they are honoured (not the defaults,
# not multiples of a tile or a work-group).
SHAPES = ("--glm-rows", "3001", "--glm-cols", "12", "--glm-batch", "1000", "--attn-seq", "41", "--attn-kv-len", "100",
          "--attn-heads", "3")

# One real run, shared by the checks below (a quick kernel-layer run takes about 10 s).
_report = {}


def report():
    if not _report:
        _report["trace"] = os.path.join(temp_dir(), "trace.json")
        r = run("diagnose", "--layers", "kernel", "--quick", "--json", "-", "--trace", _report["trace"], *SHAPES)
        expect(r.rc == 0, "diagnose --json - failed", r)
        _report["doc"] = load_json(r.stdout, r)
        _report["result"] = r
    return _report["doc"]


def test_json_stdout_is_only_json():
    doc = report()
    expect(doc["schema"] == "clprobe.report" and doc["schema_version"] == 1, "schema id/version")
    expect(doc["complete"] is True, "report not complete")


def test_report_validates_against_schema():
    import jsonschema  # Debian's python3-jsonschema

    with open(os.path.join(SOURCE_DIR, "docs", "report.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validate(report(), schema)
    broken = json.loads(json.dumps(report()))
    broken["results"][0]["status"] = "fine"
    try:
        jsonschema.validate(broken, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("the schema accepted an unknown probe status")


def test_report_records_provenance():
    # The same provenance `clprobe --version` prints, in the report: which build, which libraries.
    prov = report()["provenance"]
    expect(prov["clprobe_version"] == report()["tool_version"], f"provenance version: {prov}")
    expect(re.fullmatch(r"\d+\.\d+\.\d+", prov["hwloc_version"]), f"hwloc version: {prov}")
    expect(prov["openblas"].startswith("OpenBLAS "), f"openblas: {prov}")
    expect(prov["icd_loader"] != "unknown", f"ocl-icd answers clGetICDLoaderInfoOCLICD: {prov}")
    version = run("--version")
    expect(version.rc == 0, "--version", version)
    lines = version.stdout.splitlines()
    expect(lines[0] == f"clprobe {prov['clprobe_version']}", "--version's first line", version)
    printed = dict(line.split(None, 1) for line in lines[1:])
    for field, value in prov.items():
        if field != "clprobe_version":
            expect(printed.get(field) == value, f"--version: {field} is not {value}", version)


def test_kernel_ceilings_are_measured():
    doc = report()
    status = {p["id"]: p for p in doc["results"]}
    for probe in ("kernel.build", "kernel.launch", "kernel.bandwidth", "kernel.compute.fp32"):
        expect(status[probe]["status"] == "ok", f"{probe}: {status[probe]['status']} {status[probe]['reason']}")
    for p in doc["results"]:
        if p["status"] in ("unsupported", "skipped", "error"):
            expect(p["reason"], f"{p['id']} is {p['status']} without a reason")
    headlines = {m["metric"]: m for p in doc["results"] for m in p["measurements"] if not m["labels"]}
    for metric in ("kernel.peak.bandwidth", "kernel.peak.fp32"):
        expect(metric in headlines, f"{metric} missing")
        m = headlines[metric]
        expect(all(s > 0 for s in m["samples"]) and m["summary"]["median"] > 0, f"{metric} not positive")
        expect(m["note"].startswith("best of"), f"{metric} does not say which variant")
    expect(doc["device"]["name"], "device context missing")
    expect(doc["options"]["mode"] == "quick" and doc["options"]["layers"] == ["kernel"], "options not recorded")


def test_workloads_run_at_the_requested_shapes():
    doc = report()
    probes = {p["id"]: p for p in doc["results"]}
    for pid in ("glm.gradient", "glm.fit", "glm.host_blas", "glm.pipeline", "attention.prefill", "attention.decode",
                "attention.batching", "attention.step"):
        expect(pid in probes, f"{pid} did not run")
        expect(probes[pid]["status"] in ("ok", "unsupported"), f"{pid}: {probes[pid]['status']} {probes[pid]['reason']}")
    grad = probes["glm.gradient"]
    expect(grad["attributes"]["rows"] == 3001 and grad["attributes"]["cols"] == 12, "--glm-rows/--glm-cols ignored")
    expect(probes["glm.pipeline"]["attributes"]["batch_rows"] == 1000, "--glm-batch ignored")
    prefill = [m for m in probes["attention.prefill"]["measurements"] if m["metric"] == "attention.prefill.time"]
    expect(prefill and all(m["labels"]["seq"] == "41" for m in prefill), "--attn-seq ignored")
    decode = [m for m in probes["attention.decode"]["measurements"] if m["metric"] == "attention.decode.time"]
    expect(decode and all(m["labels"]["kv_len"] == "100" for m in decode), "--attn-kv-len ignored")
    # Every workload time counted only after verification: each variant reports its error.
    errors = [m for m in probes["attention.prefill"]["measurements"] if m["metric"] == "attention.prefill.error"]
    expect(len(errors) == len(prefill) and all(m["summary"]["max"] < 1e-4 for m in errors), "prefill errors")


def test_every_finding_is_documented():
    with open(os.path.join(SOURCE_DIR, "docs", "findings.md")) as f:
        documented = f.read()
    for finding in report()["findings"]:
        expect(f"`{finding['id']}`" in documented, f"finding {finding['id']} is not in docs/findings.md")


def test_trace_holds_every_timed_command():
    doc = report()
    with open(_report["trace"]) as f:
        trace = json.load(f)
    runs = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] != "queue"]
    expect(runs and trace["metadata"]["commands"] == len(runs), "trace commands do not match its metadata")
    for e in runs[:200]:
        a = e["args"]
        expect(a["queued_ns"] <= a["submit_ns"] <= a["start_ns"] <= a["end_ns"], f"timestamps out of order: {e}")
        expect(e["dur"] >= 0 and e["ts"] >= 0, f"negative time: {e}")
    # Each probe that timed commands on the device appears as its own process row, named by probe id
    # (the host's BLAS baselines and host-timed steps time none).
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    ok_kernel_probes = {p["id"] for p in doc["results"] if p["status"] == "ok" and p["id"] != "kernel.build" and
                        any(m["timer"] == "device_profiling" for m in p["measurements"])}
    expect(ok_kernel_probes <= names, f"probes missing from the trace: {ok_kernel_probes - names}")
    labelled = {e["name"] for e in runs}
    expect(any("copy" in n or "read" in n for n in labelled), f"bandwidth kernels not named: {sorted(labelled)[:10]}")


def test_drift_is_recorded():
    """The drift reference ran before the device probes: each check names a probe of this run, with
    positive rates, and the trust note agrees with the stored spreads."""
    doc = report()
    drift = doc.get("drift")
    expect(drift is not None, "no drift block in a kernel-layer run")
    if not doc["device"]["profiling"]:
        expect(not drift["checks"] and drift["note"], "a device without profiling has no checks and says why")
        return
    expect(drift["note"] == "", f"the drift monitor stopped: {drift['note']}")
    ids = {p["id"] for p in doc["results"]}
    expect(drift["checks"] and all(c["before_probe"] in ids for c in drift["checks"]), "checks name the run's probes")
    expect(all(c["compute_gflops"] > 0 and c["memory_gb_per_s"] > 0 for c in drift["checks"]), "rates are positive")
    expect(drift["compute"]["n"] == len(drift["checks"]), "the summary counts every check")
    wide = max(drift["compute"]["spread"], drift["memory"]["spread"]) > 0.10
    notes = {n["id"] for n in doc.get("trust_notes", [])}
    expect(wide == ("trust.machine_drift" in notes), f"trust notes {notes} disagree with the drift spreads")


def test_json_file_and_text_stdout():
    d = temp_dir()
    path = os.path.join(d, "report.json")
    r = run("diagnose", "--layers", "kernel", "--quick", "--json", path)
    expect(r.rc == 0, "diagnose --json FILE failed", r)
    expect("Ranked findings" in r.stdout and "kernel.peak.bandwidth" in r.stdout, "text report missing on stdout", r)
    with open(path) as f:
        doc = json.load(f)
    expect(doc["schema"] == "clprobe.report", "file is not a report")
    expect(os.listdir(d) == ["report.json"], f"temporary files left behind: {os.listdir(d)}")


def test_unwritable_json_path_fails_before_running():
    d = temp_dir()
    cases = [
        (os.path.join(d, "missing", "r.json"), "does not exist"),
        (d, "is a directory"),
        ("/proc/clprobe-report.json", "cannot"),
    ]
    for path, words in cases:
        r = run("diagnose", "--layers", "kernel", "--quick", "--json", path, timeout=60)
        expect(r.rc == 3, f"{path}: exit code", r)
        expect(words in r.stderr and len(r.stderr.strip().splitlines()) == 1, f"{path}: message", r)
        expect(r.stdout == "", f"{path}: report printed although it could not be written", r)
    expect(os.listdir(d) == [], f"files left behind: {os.listdir(d)}")


def test_transfer_layer_runs():
    r = run("diagnose", "--layers", "transfer", "--quick", "--json", "-")
    expect(r.rc == 0, "diagnose --layers transfer failed", r)
    doc = load_json(r.stdout, r)
    statuses = {p["id"]: p["status"] for p in doc["results"]}
    expect(list(statuses) == ["transfer.bandwidth", "transfer.latency", "transfer.overlap", "transfer.numa"],
           f"transfer probes: {statuses}", r)
    expect(all(s in ("ok", "unsupported") for s in statuses.values()), f"transfer statuses: {statuses}", r)
    headlines = {m["metric"] for p in doc["results"] for m in p["measurements"] if not m["labels"]}
    for metric in ("transfer.h2d.pageable.bandwidth", "transfer.h2d.pinned.bandwidth", "transfer.d2h.pinned.bandwidth",
                   "transfer.d2d.bandwidth", "transfer.h2d.latency", "transfer.overlap.efficiency"):
        expect(metric in headlines, f"headline {metric} missing", r)


if __name__ == "__main__":
    main([test_json_stdout_is_only_json, test_report_validates_against_schema, test_report_records_provenance,
          test_kernel_ceilings_are_measured, test_drift_is_recorded,
          test_json_file_and_text_stdout, test_unwritable_json_path_fails_before_running,
          test_transfer_layer_runs, test_workloads_run_at_the_requested_shapes, test_every_finding_is_documented,
          test_trace_holds_every_timed_command])
