"""The CI gate of one command per side, measured: N runs of `diagnose --passes 2` at the gate's
shape (tests/cli/test_compare_gate.py), every pair of them compared with --fail-on-regression (the
same machine: N(N-1)/2 comparisons, 10 for N = 5), then one compute unit
fewer and a planted slower GLM kernel against the first run. Prints each comparison's exit code,
how many timed figures it called and the wall time of a run.

  python3 tests/bench/gate_verdicts.py build/clprobe . [runs=5]
"""
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
sys.argv = sys.argv[:3]
import test_compare_gate as gate  # noqa: E402  (clitest reads the binary and source paths from argv)
from clitest import load_json, run  # noqa: E402


def timed_run(name, *extra, env=None):
    start = time.monotonic()
    path, doc = gate.diagnose(name, *extra, env=env)
    return path, doc, time.monotonic() - start


def verdict(a, b):
    g = run("compare", a, b, "--fail-on-regression")
    j = run("compare", a, b, "--json")
    doc = load_json(j.stdout, j)
    called = gate.called(doc)
    return g.rc, len(called), len(gate.timed(doc)), [m["metric"] for m in called], g.stderr.strip()


def main():
    paths, seconds = [], []
    for k in range(runs):
        path, _, s = timed_run(f"same{k}")
        paths.append(path)
        seconds.append(s)
        print(f"run {k}: {s:.0f} s", flush=True)
    print("\nsame machine (A, B: exit code, figures called of timed)")
    exits = []
    for a, b in itertools.combinations(range(runs), 2):
        rc, called, timed, names, err = verdict(paths[a], paths[b])
        exits.append(rc)
        print(f"  run {a} vs run {b}: exit {rc}, {called} of {timed} called {names[:4]} {err[:200]}", flush=True)
    print(f"same machine: exit 0 in {exits.count(0)} of {len(exits)}")
    units = gate.diagnose("same0")[1]["device"]["compute_units"]
    if units >= 2:
        fewer, _, s = timed_run("fewer", env={"POCL_MAX_PTHREAD_COUNT": str(units // 2)})
        rc, called, timed, names, err = verdict(paths[0], fewer)
        print(f"one compute unit fewer: exit {rc}, {called} of {timed} called; {err[:300]}")
    planted, _, s = timed_run("planted", "--kernel-dir", gate.planted_kernels())
    rc, called, timed, names, err = verdict(paths[0], planted)
    print(f"planted GLM kernel: exit {rc}, {called} of {timed} called; {err[:300]}")
    print(f"one run of --passes 2: median {sorted(seconds)[len(seconds) // 2]:.0f} s "
          f"({min(seconds):.0f}-{max(seconds):.0f} s)")


if __name__ == "__main__":
    main()
