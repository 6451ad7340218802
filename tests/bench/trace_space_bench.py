#!/usr/bin/env python3
"""Bounded-space benchmark of `clprobe trace --max-size` (numbers, not a test; figures in
docs/trace.md, "Capture windows and bounded space").

Runs the trace app's launch-heavy load (`paced --period 0`: tiny kernels back to back, finished
every 64) for about SECONDS under `clprobe trace --no-ceilings --max-size CAP`, and prints: the
launches the program made (its own count), the launch rate, the records' size against the cap, the
per-kernel total in the report against the program's count, what was sampled, and the peak RSS
/usr/bin/time -v reports (the largest of clprobe and the program: getrusage's children figure).

usage: trace_space_bench.py BUILD_DIR [SECONDS] [CAP]    (defaults: 60, 256M)
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    cap = sys.argv[3] if len(sys.argv) > 3 else "256M"
    clprobe = os.path.join(build, "clprobe")
    app = os.path.join(build, "tests", "trace_programs", "clprobe_trace_app")

    # The launch rate of this machine, untraced, to size the run.
    probe_steps = 200000
    t = time.monotonic()
    subprocess.run([app, "paced", "--steps", str(probe_steps), "--period", "0"], check=True, capture_output=True)
    rate = probe_steps / (time.monotonic() - t)
    steps = max(probe_steps, int(rate * seconds))
    print(f"untraced: {probe_steps} launches at {rate:,.0f} launches/s (start-up included); running {steps:,}")

    work = tempfile.mkdtemp(prefix="clprobe-space-bench-")
    records = os.path.join(work, "records")
    report_path = os.path.join(work, "report.json")
    cmd = ["/usr/bin/time", "-v", clprobe, "trace", "--no-ceilings", "-q", "--records", records, "--json",
           report_path, "--max-size", cap, "--", app, "paced", "--steps", str(steps), "--period", "0"]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t
    if p.returncode != 0:
        print(p.stderr[-3000:])
        sys.exit(p.returncode)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    size = sum(os.path.getsize(os.path.join(records, n)) for n in os.listdir(records) if n.endswith(".rec"))
    with open(report_path) as f:
        report = json.load(f)
    facts = next(r for r in report["results"] if r["id"] == "trace.program")["attributes"]["facts"]
    launches = sum(k["launches"] for k in facts["kernels"] if k["name"] == "add_one")
    capture = facts.get("capture", {})
    print(f"traced: {steps:,} launches in {wall:.1f} s ({steps / wall:,.0f} launches/s, clprobe's start and "
          f"analysis included; the program's own wall time {facts['run']['wall_seconds']:.1f} s)")
    print(f"records: {size:,} bytes ({size / 2**20:.1f} MiB) under --max-size {cap}; "
          f"{size / steps:.1f} bytes per launch")
    print(f"per-kernel total: {launches:,} launches of add_one in the report, the program made {steps:,}: "
          f"{'exact' if launches == steps else 'NOT EXACT'}")
    if capture:
        print(f"timeline: {capture.get('timeline_commands', 0):,} commands with records, "
              f"{capture.get('aggregated_commands', 0):,} in totals only ({100 * capture.get('timeline_fraction', 1):.2f}% kept), "
              f"sampled from {capture.get('sampled_since_seconds')} s, sparsest 1 in {capture.get('max_period')}, "
              f"{capture.get('dropped_writes', 0)} writes refused")
    else:
        print("timeline: complete (the cap was not reached)")
    if rss:
        print(f"peak RSS (largest of clprobe and the program): {int(rss.group(1)) / 1024:.0f} MiB")
    print(f"(records and report left in {work})")


if __name__ == "__main__":
    main()
