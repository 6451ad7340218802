"""clprobe trace's capture windows and bounded space (docs/trace.md, "Capture windows and bounded
space"): --delay/--duration analyse only the commands enqueued inside the window; --capture dormant
records nothing until a window is opened from outside (`clprobe capture open|close`, SIGUSR1 to
clprobe), each window analysed on its own; --max-size keeps the records under the cap with exact
per-kernel totals and says what it sampled. The paced mode of the trace app launches a kernel every
--period ms on a fixed schedule and sleeps in between, so these long runs cost the machine little;
expected counts come from the window's length over that period, with a tolerance of launches at
the window's edges (and the layer's control-file poll), never from how fast anything ran."""
import json
import os
import signal
import subprocess
import time

from clitest import BINARY, expect, main, run, temp_dir

PROGRAMS = os.path.join(os.path.dirname(BINARY), "tests", "trace_programs")
APP = os.path.join(PROGRAMS, "clprobe_trace_app")
WORK = temp_dir()
POLL_MS = 10  # the layer looks at the control file at most this often (src/layer/capture_control.hpp)


def program_result(report):
    return next(p for p in report["results"] if p["id"] == "trace.program")


def facts(report):
    return program_result(report)["attributes"]["facts"]


def launches(f, name="add_one"):
    return sum(k["launches"] for k in f["kernels"] if k["name"] == name)


def load(path):
    with open(path) as f:
        return json.load(f)


def test_fixed_window_analyses_only_its_commands():
    # 400 launches 50 ms apart: a 20 s run. The window: from 5 s for 5 s.
    period, delay, duration = 0.050, 5.0, 5.0
    path = os.path.join(WORK, "window.json")
    r = run("trace", "--no-ceilings", "--json", path, "--delay", str(delay), "--duration", str(duration), "--",
            APP, "paced", "--steps", "400", "--period", "50", timeout=300)
    expect(r.rc == 0, "trace --delay --duration: exit code", r)
    expect("kernels 400" in r.stdout, "the program's own stdout (all 400 launches) changed", r)
    report = load(path)
    f = facts(report)
    capture = f.get("capture")
    expect(capture is not None and capture["mode"] == "window", f"no window in the facts: {capture}")
    expect(len(capture["windows"]) == 1, f"one window expected: {capture['windows']}")
    w = capture["windows"][0]
    # The window is computed by clprobe from its own clock just before it starts the program.
    expect(delay - 0.5 <= w["begin_seconds"] <= delay, f"window start {w['begin_seconds']} s, --delay {delay}")
    length = w["end_seconds"] - w["begin_seconds"]
    expect(abs(length - duration) < 1e-6, f"window length {length} s, --duration {duration}")
    # Launches fall every `period` on a fixed schedule: a window of `length` holds length/period of
    # them, give or take one at each edge (a launch due right at an edge, late by scheduling).
    want = length / period
    got = launches(f)
    expect(abs(got - want) <= 2, f"{got} launches analysed, the window holds {want:.1f} (of 400)")
    expect(f["run"]["opencl_commands"] == got, f"commands outside the window analysed: {f['run']['opencl_commands']}")
    expect(abs(f["run"]["wall_seconds"] - length) < 1e-6, "the stage table does not cover the window alone")
    stage_sum = sum(f["stages"].values()) if isinstance(f["stages"], dict) else sum(s["seconds"] for s in f["stages"])
    expect(abs(stage_sum - length) < 1e-3, f"the stages add up to {stage_sum} s, not the window's {length} s")
    windows = program_result(report)["attributes"].get("windows")
    expect(windows and len(windows) == 1 and isinstance(windows[0]["findings"], list), "no per-window analysis")
    expect("capture (window): 1 window" in r.stderr, "the text report does not state the window", r)


def test_dormant_windows_opened_from_outside():
    records = os.path.join(WORK, "dormant.records")
    path = os.path.join(WORK, "dormant.json")
    period = 0.020
    cmd = [BINARY, "trace", "--no-ceilings", "--json", path, "--records", records, "--capture", "dormant", "--",
           APP, "paced", "--steps", "450", "--period", "20"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err_lines = []
    for line in p.stderr:  # the program's stderr comes through clprobe's
        err_lines.append(line)
        if "paced started" in line:
            break
    time.sleep(1.0)
    opened = run("capture", "open", "--records", records)
    expect(opened.rc == 0, "clprobe capture open", opened)
    time.sleep(2.0)
    again = run("capture", "close", "--records", records)
    expect(again.rc == 0, "clprobe capture close", again)
    time.sleep(1.0)
    p.send_signal(signal.SIGUSR1)  # to clprobe, not the program: toggles a second window
    time.sleep(1.5)
    p.send_signal(signal.SIGUSR1)
    out, err = p.communicate(timeout=300)
    err = "".join(err_lines) + err
    expect(p.returncode == 0, f"dormant trace: exit {p.returncode}\n{err[-3000:]}")
    expect("kernels 450" in out, "the program's stdout changed")
    expect("dormant: nothing is recorded until a window opens" in err, "no word on how to open a window")
    report = load(path)
    f = facts(report)
    capture = f["capture"]
    expect(capture["mode"] == "dormant" and len(capture["windows"]) == 2, f"two windows expected: {capture}")
    windows = program_result(report)["attributes"]["windows"]
    total = 0
    for i, w in enumerate(capture["windows"]):
        length = w["end_seconds"] - w["begin_seconds"]
        want = length / period
        got = launches(windows[i]["facts"])
        # Edges as above, plus the launches of up to one poll of the control file after it opened.
        expect(want - 2 - POLL_MS / 1000 / period <= got <= want + 2,
               f"window {i + 1}: {got} launches, it holds {want:.1f}")
        expect(windows[i]["index"] == i + 1 and isinstance(windows[i]["findings"], list), "window entry")
        total += got
    expect(launches(f) == total, f"{launches(f)} launches in the job's analysis, {total} in its windows")
    expect(launches(f) < 450, "commands outside the windows were recorded")
    expect("window 2:" in err, "the text report does not list the windows")


def test_max_size_keeps_exact_totals():
    records = os.path.join(WORK, "capped.records")
    path = os.path.join(WORK, "capped.json")
    untraced = subprocess.run([APP, "paced", "--steps", "6000", "--period", "0"], capture_output=True, text=True,
                              timeout=300)
    expect(untraced.returncode == 0 and "kernels 6000" in untraced.stdout, "untraced run")
    r = run("trace", "--no-ceilings", "--json", path, "--records", records, "--max-size", "64K", "--",
            APP, "paced", "--steps", "6000", "--period", "0")
    expect(r.rc == 0 and "kernels 6000" in r.stdout, "trace --max-size 64K", r)
    size = sum(os.path.getsize(os.path.join(records, n)) for n in os.listdir(records) if n.endswith(".rec"))
    expect(size <= 64 * 1024, f"records hold {size} bytes, over --max-size 64K")
    f = facts(load(path))
    expect(launches(f) == 6000, f"per-kernel total {launches(f)}, the program launched 6000")
    c = f.get("capture")
    expect(c is not None and c["limited"], f"no bounded-space facts: {c}")
    expect(c["aggregated_commands"] > 0 and c["sampled_since_seconds"] is not None, f"nothing sampled: {c}")
    expect(c["timeline_fraction"] < 1 and c["max_period"] > 1, f"sampling not reported: {c}")
    expect(c["records_bytes"] == size, f"records_bytes {c['records_bytes']} but the files hold {size}")
    expect("bounded space:" in r.stderr and "totals are exact" in r.stderr, "the text report does not say it", r)


def test_bad_capture_options():
    r = run("trace", "--no-ceilings", "--max-size", "12X", "--", APP, "paced", "--steps", "1")
    expect(r.rc == 2 and "--max-size" in r.stderr, "a bad --max-size", r)
    r = run("trace", "--no-ceilings", "--capture", "dormant", "--delay", "1", "--", APP, "paced", "--steps", "1")
    expect(r.rc == 2 and "dormant" in r.stderr, "--capture dormant with --delay", r)
    r = run("capture", "open", "--records", os.path.join(WORK, "no-such-records"))
    expect(r.rc == 2 and "capture.ctl" in r.stderr, "capture open without a dormant trace", r)


if __name__ == "__main__":
    main([test_bad_capture_options, test_max_size_keeps_exact_totals, test_dormant_windows_opened_from_outside,
          test_fixed_window_analyses_only_its_commands])
