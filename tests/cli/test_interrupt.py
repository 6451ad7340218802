"""Ctrl-C (SIGINT) and SIGTERM during diagnose: the run stops at the next stop point, the report
of what finished is written, parses, and says it is incomplete; no temporary files remain."""
import json
import os
import signal
import subprocess
import time

from clitest import BINARY, expect, main, temp_dir


def interrupted_run(sig, after_seconds):
    d = temp_dir()
    path = os.path.join(d, "r.json")
    env = dict(os.environ)
    env.pop("CLPROBE_DEVICE", None)
    p = subprocess.Popen([BINARY, "diagnose", "--layers", "kernel", "--quick", "--json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(after_seconds)
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err, d, path


def check(sig, expected_rc, after_seconds):
    rc, out, err, d, path = interrupted_run(sig, after_seconds)
    what = f"rc={rc}\nstdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    expect(rc == expected_rc, f"exit code after {sig.name}\n{what}")
    expect(os.listdir(d) == ["r.json"], f"files in the output folder: {os.listdir(d)}")
    with open(path) as f:
        doc = json.load(f)
    expect(doc["complete"] is False, "the report does not say it is incomplete")
    statuses = [p["status"] for p in doc["results"]]
    expect("skipped" in statuses, f"no probe marked as not run: {statuses}")
    reasons = " ".join(p["reason"] for p in doc["results"])
    expect("interrupted" in reasons, "no reason mentions the interruption")
    expect("INCOMPLETE" in out, "the text report does not say it is incomplete")


def test_sigint_writes_an_incomplete_report():
    check(signal.SIGINT, 130, 4.0)


def test_sigterm_writes_an_incomplete_report():
    check(signal.SIGTERM, 143, 6.0)


if __name__ == "__main__":
    main([test_sigint_writes_an_incomplete_report, test_sigterm_writes_an_incomplete_report])
