"""clprobe trace on jobs of several processes: a wrapper script, concurrent children, forked workers
(C and Python multiprocessing), a grandchild, a daemonised child and a crash in one child. Every
process that used OpenCL has its own records: every launch is counted, the program's exit code and
stdout are its own, and only a process that was cut short makes the trace incomplete. Then the
checks made before anything starts: an unwritable records folder, a baseline without ceilings."""
import json
import os
import shutil
import signal
import subprocess

from clitest import BINARY, expect, main, run, temp_dir

PROGRAMS = os.path.join(os.path.dirname(BINARY), "tests", "trace_programs")
APP = os.path.join(PROGRAMS, "clprobe_trace_app")
SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "trace_programs")
WORK = temp_dir()
PYTHON = "/usr/bin/python3"


def untraced(argv):
    p = subprocess.run(argv, capture_output=True, timeout=300)
    return (128 - p.returncode if p.returncode < 0 else p.returncode), p.stdout


def traced(argv, *options, name):
    """clprobe trace --no-ceilings; returns (rc, program stdout, clprobe stderr, report)."""
    path = os.path.join(WORK, name + ".json")
    records = os.path.join(WORK, name + ".records")
    cmd = [BINARY, "trace", "--no-ceilings", "--json", path, "--records", records, *options, "--", *argv]
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    report = None
    if os.path.exists(path):
        with open(path) as f:
            report = json.load(f)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace"), report


def facts(report):
    return next(p for p in report["results"] if p["id"] == "trace.program")["attributes"]["facts"]


def finding_ids(report):
    return [f["id"] for f in report["findings"] if f["layer"] == "trace"]


def with_commands(report):
    """The processes that enqueued something, by pid."""
    return {p["pid"]: p for p in facts(report)["processes"] if p["opencl_commands"] > 0}


def launches(report):
    return sum(k["launches"] for k in facts(report)["kernels"])


def check_job(name, argv, expected_launches, per_process, rc_expected=0, options=()):
    rc, out = untraced(argv)
    trc, tout, err, report = traced(argv, *options, name=name)
    expect(rc == trc == rc_expected, f"{name}: exit {trc} traced, {rc} untraced\n{err[-2000:]}")
    expect(sorted(tout.splitlines()) == sorted(out.splitlines()), f"{name}: the program's stdout changed")
    expect(report is not None, f"{name}: no report\n{err[-2000:]}")
    counts = sorted(p["opencl_commands"] for p in with_commands(report).values())
    kernels = launches(report)
    expect(kernels == expected_launches, f"{name}: {kernels} launches recorded, {expected_launches} made\n{err[-3000:]}")
    expect(len(counts) == len(per_process), f"{name}: processes with commands {counts}, expected {per_process}")
    return report, err


def test_wrapper_script():
    report, _ = check_job("wrapper", ["sh", "-c", f"{APP} sync_each --steps 300"], 300, [1])
    expect("trace.program.incomplete" not in finding_ids(report), "wrapper: called incomplete")


def test_two_concurrent_children():
    argv = ["sh", "-c", f"{APP} sync_each --steps 400 & {APP} sync_each --steps 200; wait"]
    report, err = check_job("concurrent", argv, 600, [1, 1])
    procs = with_commands(report)
    kernels_each = sorted(p["opencl_commands"] for p in procs.values())
    # Each stream holds its own program's commands: the fill, the launches, the read.
    expect(kernels_each == [202, 402], f"concurrent: commands per process {kernels_each}")
    expect(all(p["end"] == "exit_handler" for p in procs.values()), f"concurrent: ends {procs}")
    expect("trace.program.incomplete" not in finding_ids(report), "concurrent: called incomplete")
    expect("processes (" in err, f"concurrent: no process table in the text report\n{err[-3000:]}")


def test_forked_c_workers():
    report, _ = check_job("fork_c", [APP, "fork_workers", "--steps", "100"], 200, [1, 1])
    workers = list(with_commands(report).values())
    expect(all(p["origin"] == "fork" for p in workers), f"fork_c: origins {[p['origin'] for p in workers]}")
    parent = [p for p in facts(report)["processes"] if p["origin"] == "exec"]
    expect(len(parent) == 1 and all(p["ppid"] == parent[0]["pid"] for p in workers), "fork_c: parent links")
    expect("trace.program.incomplete" not in finding_ids(report), f"fork_c: called incomplete {finding_ids(report)}")


def python_workers_cannot_run():
    """Why Debian's python3 cannot run the pyopencl workers under the layer here, or None."""
    if subprocess.run([PYTHON, "-c", "import pyopencl, numpy"], capture_output=True).returncode != 0:
        return f"pyopencl or numpy missing for {PYTHON}"
    # The sanitizer build's layer takes AddressSanitizer's runtime from the program that loads it
    # (src/layer/CMakeLists.txt): Debian's python3 has none, so it cannot load that layer.
    if "ASAN_OPTIONS" in os.environ:
        return f"an AddressSanitizer build's layer cannot load into {PYTHON}"
    return None


def test_python_multiprocessing_workers():
    if why := python_workers_cannot_run():
        print("skipped:", why)
        return
    argv = [PYTHON, os.path.join(SOURCE, "mp_workers.py"), "2", "50"]
    report, _ = check_job("fork_py", argv, 100, [1, 1])
    workers = list(with_commands(report).values())
    expect(all(p["end"] == "no_exit_handler" for p in workers), f"fork_py: ends {[p['end'] for p in workers]}")
    expect("trace.program.incomplete" not in finding_ids(report), f"fork_py: called incomplete {finding_ids(report)}")


def test_python_pool_workers_complete_under_load():
    # A multiprocessing.Pool ends its workers with SIGTERM when it closes, after their work is
    # recorded: such a job is complete, not "incomplete", in 10 runs of 10 while a CPU hog keeps
    # every core busy (2 runs in 5 were called incomplete under load before cut_short).
    if why := python_workers_cannot_run():
        print("skipped:", why)
        return
    hog = subprocess.Popen(["stress-ng", "--cpu", str(os.cpu_count() or 2), "--timeout", "600s"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if shutil.which("stress-ng") else None
    try:
        argv = [PYTHON, os.path.join(SOURCE, "mp_workers.py"), "2", "20", "pool"]
        for i in range(10):
            rc, out, err, report = traced(argv, name=f"pool_{i}")
            expect(rc == 0 and report is not None, f"pool run {i}: exit {rc}\n{err[-2000:]}")
            expect(b"failed 0" in out, f"pool run {i}: a worker failed: {out!r}")
            expect(launches(report) == 40, f"pool run {i}: {launches(report)} launches recorded, 40 made")
            expect("trace.program.incomplete" not in finding_ids(report),
                   f"pool run {i}: called incomplete {finding_ids(report)}\n{err[-2000:]}")
    finally:
        if hog:
            hog.terminate()
            hog.wait()


def test_grandchild_and_exit_code():
    argv = ["sh", "-c", f"sh -c '{APP} sync_each --steps 150 --exit 3'; exit $?"]
    report, _ = check_job("grandchild", argv, 150, [1], rc_expected=3)
    expect(report["results"] is not None, "grandchild: no results")


def test_daemonised_child_is_waited_for():
    # The shell exits at once; the child, orphaned to clprobe, is waited for and reaped.
    argv = ["sh", "-c", f"({APP} sync_each --steps 2000 > /dev/null &); echo started"]
    trc, tout, err, report = traced(argv, name="daemon")
    expect(trc == 0 and tout == b"started\n", f"daemon: exit {trc}, stdout {tout!r}\n{err[-2000:]}")
    procs = list(with_commands(report).values())
    expect(launches(report) == 2000, f"daemon: {launches(report)} of 2000 launches\n{err[-3000:]}")
    expect(len(procs) == 1 and procs[0]["end"] == "exited" and procs[0]["exit_code"] == 0,
           f"daemon: the orphan's end {procs}")
    expect("trace.program.incomplete" not in finding_ids(report), "daemon: called incomplete")


def test_descendant_still_running_is_named():
    # A daemon that outlives --wait-descendants: named with where its records end, left running
    # (then ended here by its pid).
    argv = ["sh", "-c", f"({APP} sync_each --steps 1000000 > /dev/null &); echo started"]
    trc, _, err, report = traced(argv, "--wait-descendants", "2", name="running")
    expect(trc == 0 and report is not None, f"running: exit {trc}\n{err[-2000:]}")
    running = [p for p in facts(report)["processes"] if p["end"] == "still_running"]
    for p in running:
        os.kill(p["pid"], signal.SIGKILL)
    expect(len(running) == 1 and running[0]["opencl_commands"] > 0, f"running: {facts(report)['processes']}")
    finding = next((f for f in report["findings"] if f["id"] == "trace.program.incomplete"), None)
    expect(finding is not None and f"pid {running[0]['pid']}" in finding["suggestion"]
           and "still running" in finding["suggestion"], f"running: not named: {finding}")


def test_crash_in_one_child():
    argv = ["sh", "-c", f"{APP} abort & {APP} sync_each --steps 100; wait"]
    rc, _ = untraced(argv)
    trc, _, err, report = traced(argv, name="crash")
    expect(rc == trc == 0, f"crash: exit {trc} traced, {rc} untraced")
    procs = with_commands(report)
    crashed = [p for p in procs.values() if p["end"] == "killed"]
    expect(len(crashed) == 1 and crashed[0]["signal"] == signal.SIGABRT, f"crash: {list(procs.values())}")
    finding = next((f for f in report["findings"] if f["id"] == "trace.program.incomplete"), None)
    expect(finding is not None and f"pid {crashed[0]['pid']}" in finding["suggestion"],
           f"crash: the crashed process is not named: {finding}")
    others = [p for p in procs.values() if p["end"] != "killed"]
    expect(len(others) == 1 and others[0]["opencl_commands"] == 102, f"crash: the other child {others}")


def test_unwritable_records_start_nothing():
    marker = os.path.join(WORK, "started")
    for records in ("/dev/full", os.path.join(WORK, "missing", "records")):
        r = run("trace", "--no-ceilings", "--records", records, "--", "sh", "-c", f"touch {marker}")
        expect(r.rc == 3, f"--records {records}: exit {r.rc}", r)
        expect(len(r.stderr.strip().splitlines()) == 1 and "--records" in r.stderr, f"--records {records}: stderr", r)
        expect(not os.path.exists(marker), f"--records {records}: the program was started")


def test_baseline_without_ceilings_is_refused():
    _, _, _, report = traced([APP, "sync_each", "--steps", "60"], name="for_baseline")
    path = os.path.join(WORK, "for_baseline.json")
    expect(report is not None, "no trace report to use as a baseline")
    r = run("trace", "--baseline", path, "--", APP, "sync_each", "--steps", "10")
    expect(r.rc == 2, f"--baseline trace report: exit {r.rc}", r)
    expect(len(r.stderr.strip().splitlines()) == 1 and "no device ceilings" in r.stderr, "--baseline: stderr", r)
    expect("mode sync_each" not in r.stdout, "--baseline: the program was started", r)


if __name__ == "__main__":
    main([test_unwritable_records_start_nothing, test_baseline_without_ceilings_is_refused, test_wrapper_script,
          test_two_concurrent_children, test_forked_c_workers, test_python_multiprocessing_workers,
          test_grandchild_and_exit_code, test_daemonised_child_is_waited_for, test_descendant_still_running_is_named,
          test_crash_in_one_child, test_python_pool_workers_complete_under_load])
