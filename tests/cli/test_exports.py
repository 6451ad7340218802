"""`clprobe report FILE --format csv|gbench` on saved reports: the CSV parses as RFC 4180 with one row
per measurement whose numbers read back exactly, the gbench JSON has the entries compare.py pairs,
and a format outside the list is refused with the usage exit code."""
import csv
import io
import json
import os
import subprocess

from clitest import BINARY, SOURCE_DIR, expect, load_json, main, run

FIXTURE = os.path.join(SOURCE_DIR, "tests", "fixtures", "reports", "pocl_kernel_quick.json")


def fixture():
    with open(FIXTURE) as f:
        return json.load(f)


def measurements(report):
    return [(p["id"], m) for p in report["results"] for m in p["measurements"]]


def test_csv_has_one_row_per_measurement():
    # Bytes, not text: text mode would turn the CRLF line ends into LF before they are checked.
    p = subprocess.run([BINARY, "report", FIXTURE, "--format", "csv"], capture_output=True, timeout=60)
    expect(p.returncode == 0 and p.stderr == b"", f"report --format csv failed: {p.stderr!r}")
    text = p.stdout.decode()
    expect(text.count("\r\n") == text.count("\n") and text.endswith("\r\n"), "rows do not end in CRLF")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    expected = measurements(fixture())
    expect(len(rows) == len(expected), f"{len(rows)} rows for {len(expected)} measurements")
    for row, (probe, m) in zip(rows, expected):
        expect(row["probe"] == probe and row["metric"] == m["metric"], f"row out of order: {row}")
        for key, value in m["labels"].items():
            expect(row["label." + key] == value, f"label {key} of {m['metric']}: {row}")
        # Round-trip printing: the CSV's numbers are the report's numbers, bit for bit.
        for field in ("median", "cv", "min", "max", "mean"):
            expect(float(row[field]) == float(m["summary"][field]), f"{field} of {m['metric']}: {row[field]}")
        expect(int(row["n"]) == len(m["samples"]) and row["timer"] == m["timer"], f"n/timer: {row}")


def test_gbench_pairs_iterations_and_aggregates():
    r = run("report", FIXTURE, "--format", "gbench")
    expect(r.rc == 0 and r.stderr == "", "report --format gbench failed", r)
    doc = load_json(r.stdout, r)
    expect(doc["context"]["host_name"] == fixture()["host"]["hostname"], "context lacks the host", r)
    benchmarks = doc["benchmarks"]
    names = [b["name"] for b in benchmarks if b["run_type"] == "iteration"]
    for b in benchmarks:
        # A stddev or cv aggregate may be 0 (identical samples); a sample's time never is.
        positive = b["run_type"] == "iteration" or b["aggregate_name"] in ("mean", "median")
        expect(b["time_unit"] == "ns" and (b["real_time"] > 0 or not positive), f"entry without a time: {b}")
    run_names = {b["run_name"] for b in benchmarks}
    expect(len(run_names) == doc["context"]["clprobe_measurements_exported"], "one family member per export")
    samples = sum(len(m["samples"]) for _, m in measurements(fixture()))
    expect(len(names) == samples, f"{len(names)} iteration entries for {samples} samples")


def test_unknown_format_is_a_usage_error():
    r = run("report", FIXTURE, "--format", "xlsx")
    expect(r.rc == 2 and r.stdout == "", "an unknown format was accepted", r)


if __name__ == "__main__":
    main([test_csv_has_one_row_per_measurement, test_gbench_pairs_iterations_and_aggregates,
          test_unknown_format_is_a_usage_error])
