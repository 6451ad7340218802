"""Probes isolated in their own process (docs/reliability.md, "Process model"): a driver that
faults, aborts or never returns inside one probe costs that probe, never the report. Faults come
from the fault layer (tests/fault_layer) matched by call and kernel name; a child that exits
without a result comes from a test-only environment hook. Time bounds are generous: the probe's
budget plus slack, never a performance threshold."""
import json
import os
import signal
import subprocess
import time

from clitest import BINARY, FAULT_LAYER, expect, main, run, temp_dir

# Exit code for "report written, a probe crashed or timed out" (src/cli/exit_codes.hpp).
PROBE_CRASHED = 6
# Context, builds and one quick probe on a busy 2-core machine, on top of any budget.
SLACK = 60


def diagnose(probes, faults="", env=None, extra=(), limit=SLACK):
    d = temp_dir()
    path = os.path.join(d, "r.json")
    # No warm-ups (docs/architecture.md, "Building kernels ahead"): the faults are planted for the
    # probes' children, and a builder's warm-up would meet them first, a hang then costing the
    # builder's whole 120 s budget before any probe runs (measured: 140 s where the stamp of those
    # options was not yet in the cache, 27 s where it was).
    full_env = {"OPENCL_LAYERS": FAULT_LAYER, "CLPROBE_FAULTS": faults, "CLPROBE_WARM_UP": "0"}
    full_env.update(env or {})
    started = time.monotonic()
    r = run("diagnose", "--quick", "--layers", "kernel", "--probes", ",".join(probes), "--json", path, *extra,
            env=full_env, timeout=limit + 60)
    elapsed = time.monotonic() - started
    expect(elapsed < limit, f"took {elapsed:.0f} s, more than {limit} s", r)
    expect(os.path.exists(path), "no report written", r)
    with open(path) as f:
        doc = json.load(f)
    return r, doc, {p["id"]: p for p in doc["results"]}


def expect_lost(r, doc, results, probe, status, others):
    p = results[probe]
    expect(p["status"] == status, f"{probe}: {p['status']} {p['reason']}", r)
    expect(r.rc == PROBE_CRASHED, "exit code is not the documented 'a probe crashed' one", r)
    expect(doc["complete"] is True, "a run that went on to its end is complete")
    for other in others:
        expect(other in results, f"{other} missing: the run did not go on past {probe}", r)
        expect(results[other]["status"] not in ("crashed", "timed_out"), f"{other} affected", r)
    finding = "run.probe_crashed" if status == "crashed" else "run.probe_timed_out"
    found = [f for f in doc["findings"] if f["id"] == finding]
    expect(found and f"--skip {probe}" in found[0]["suggestion"], f"no {finding} finding naming --skip {probe}", r)
    expect(status in r.stdout and probe in r.stdout, "the text report does not show the lost probe", r)
    return p


def without_sanitizer_segv_handler():
    """Under AddressSanitizer (.ci/reliability.sh) ASan's own SIGSEGV handler reports the fault and
    aborts, so the child would die by SIGABRT; handle_segv=0 leaves the signal as a driver's fault
    gives it elsewhere. Empty outside a sanitizer build."""
    options = os.environ.get("ASAN_OPTIONS")
    return {"ASAN_OPTIONS": options + ":handle_segv=0"} if options is not None else {}


def test_segfault_in_a_glm_gradient_kernel():
    r, doc, results = diagnose(["kernel.launch", "glm.gradient", "attention.decode"],
                               "call=clEnqueueNDRangeKernel,kernel=grad_,action=segv",
                               env=without_sanitizer_segv_handler())
    p = expect_lost(r, doc, results, "glm.gradient", "crashed", ["kernel.launch", "attention.decode"])
    expect(results["kernel.launch"]["status"] == "ok", "kernel.launch", r)
    expect("SIGSEGV" in p["reason"], f"reason lacks the signal: {p['reason']}")
    iso = p["attributes"]["isolation"]
    expect(iso["signal"] == "SIGSEGV" and iso["last_command"], f"isolation attributes: {iso}")
    # Rules that needed its metrics say why they could not run.
    reasons = [s["reason"] for s in doc["rules_not_evaluated"]]
    expect(any("glm.gradient crashed" in x for x in reasons), f"no rule names the crash: {reasons}")


def test_abort_in_the_launch_probe():
    r, doc, results = diagnose(["kernel.launch", "kernel.compute.fp32"],
                               "call=clEnqueueNDRangeKernel,kernel=empty,action=abort")
    p = expect_lost(r, doc, results, "kernel.launch", "crashed", ["kernel.compute.fp32"])
    expect(p["attributes"]["isolation"]["signal"] == "SIGABRT", f"{p['attributes']}")
    expect(results["kernel.compute.fp32"]["status"] == "ok", "the next probe failed", r)


def test_hang_in_an_attention_kernel_times_out():
    budget = 5
    # Budget, the parent's slack (5 s) and the SIGTERM grace (2 s) before SIGKILL, plus the run.
    # One short KV length: without it the decode adds a length whose cache is 4x the last cache,
    # 2 GiB on a 260 MiB L3, whose fill and host reference alone outlast the 5 s budget (the decode
    # then times out on its own, hang or no hang).
    r, doc, results = diagnose(["attention.prefill", "attention.decode"],
                               "call=clEnqueueNDRangeKernel,kernel=attn_fused,action=hang",
                               extra=("--probe-timeout", str(budget), "--attn-kv-len", "512"),
                               limit=budget + 7 + SLACK)
    p = expect_lost(r, doc, results, "attention.prefill", "timed_out", ["attention.decode"])
    expect(p["attributes"]["isolation"]["budget_seconds"] == budget, f"{p['attributes']}")
    expect(p["attributes"]["isolation"]["signal"] == "SIGKILL", "a child stuck in the driver needs SIGKILL")
    expect(f"time budget of {budget} s" in p["reason"], p["reason"])


def test_child_that_exits_without_a_result():
    r, doc, results = diagnose(["kernel.launch", "kernel.compute.fp32"],
                               env={"CLPROBE_TEST_CHILD_EXIT_WITHOUT_RESULT": "kernel.launch"})
    p = expect_lost(r, doc, results, "kernel.launch", "crashed", ["kernel.compute.fp32"])
    expect("exited with status 0 without a result" in p["reason"], p["reason"])


def test_sigterm_while_a_child_hangs_writes_the_partial_report():
    d = temp_dir()
    path = os.path.join(d, "r.json")
    mark = os.path.join(d, "hanging")
    env = dict(os.environ, OPENCL_LAYERS=FAULT_LAYER, CLPROBE_FAULT_MARK=mark,
               CLPROBE_FAULTS="call=clEnqueueNDRangeKernel,kernel=fma_,action=hang")
    env.pop("CLPROBE_DEVICE", None)
    p = subprocess.Popen([BINARY, "diagnose", "--quick", "--layers", "kernel", "--probes",
                          "kernel.launch,kernel.compute.fp32,kernel.compute.fp64", "--json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # kernel.compute.fp32 hangs inside the driver: the fault layer marks the moment it does.
    seen = []
    deadline = time.monotonic() + SLACK
    while time.monotonic() < deadline and p.poll() is None and not os.path.exists(mark):
        try:
            with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                seen += [pid for pid in f.read().split() if pid not in seen]
        except OSError:
            pass
        time.sleep(0.1)
    expect(os.path.exists(mark), f"the hang was never reached (children seen: {seen})")
    time.sleep(1)
    signalled = time.monotonic()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - signalled
    what = f"rc={p.returncode}\nstdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    expect(took < 10, f"the report took {took:.1f} s after SIGTERM (5 s asked, 10 s allowed here)\n{what}")
    expect(p.returncode == 143, f"exit code\n{what}")
    with open(path) as f:
        doc = json.load(f)
    expect(doc["complete"] is False, "not marked incomplete")
    results = {r["id"]: r for r in doc["results"]}
    expect(results["kernel.launch"]["status"] == "ok", f"finished probe lost\n{what}")
    expect(results["kernel.compute.fp32"]["status"] == "skipped" and
           "interrupted" in results["kernel.compute.fp32"]["reason"], f"{results['kernel.compute.fp32']}")
    expect(results["kernel.compute.fp64"]["reason"] == "not run: the run was interrupted", "later probe")
    for pid in seen:
        expect(not os.path.exists(f"/proc/{pid}"), f"child {pid} outlived clprobe")


def test_probe_selection():
    r = run("list", "--probes")
    expect(r.rc == 0 and "glm.gradient" in r.stdout and "kernel.launch" in r.stdout, "list --probes", r)
    r = run("diagnose", "--probes", "kernel.nope")
    expect(r.rc == 2 and r.stderr.count("\n") == 1 and "kernel.nope" in r.stderr, "unknown --probes id", r)
    r = run("diagnose", "--skip", "attention")
    expect(r.rc == 2 and "'attention'" in r.stderr, "a prefix needs its dot", r)
    r = run("diagnose", "--help")
    expect("attention.decode" in r.stdout and "--no-isolation" in r.stdout, "--help lists the probe ids", r)
    d = temp_dir()
    path = os.path.join(d, "r.json")
    r = run("diagnose", "--quick", "--layers", "system,kernel", "--probes", "system.,kernel.launch", "--skip",
            "system.memory_bandwidth", "--no-isolation", "--json", path)
    expect(r.rc == 0, "selected run", r)
    with open(path) as f:
        ids = [p["id"] for p in json.load(f)["results"]]
    expect(ids == ["system.host", "system.limits", "system.energy", "kernel.launch", "system.activity"], f"ids: {ids}")


if __name__ == "__main__":
    expect(FAULT_LAYER and os.path.exists(FAULT_LAYER), "fault layer library not given")
    main([test_segfault_in_a_glm_gradient_kernel, test_abort_in_the_launch_probe,
          test_hang_in_an_attention_kernel_times_out, test_child_that_exits_without_a_result,
          test_sigterm_while_a_child_hangs_writes_the_partial_report, test_probe_selection])
