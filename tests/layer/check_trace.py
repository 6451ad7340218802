#!/usr/bin/env python3
"""Runs clprobe_layer_stress with and without the trace layer and checks the trace it records.

    check_trace.py stress PROGRAM LAYER WORKDIR   the 8-thread run: untraced, then traced; the trace
                                                  must match the counts the program prints
    check_trace.py crash PROGRAM LAYER WORKDIR    the program dies mid-flight (abort, SIGSEGV,
                                                  SIGKILL, exit() from a thread): the trace must stay
                                                  readable up to there

The record format is src/layer/trace_format.hpp. Exit status 0 when every check passes; otherwise
the failures are printed.
"""
import collections
import os
import signal
import subprocess
import sys

FIELDS = {  # record type -> number of fields after the type
    "H": 3, "O": 4, "D": 4, "Q": 5, "M": 7, "R": 3, "P": 5, "B": 6, "K": 3, "E": 15, "T": 6, "W": 5, "S": 2, "X": 1,
}
COMMANDS = set(
    "kernel task native_kernel write read copy fill write_rect read_rect copy_rect map unmap write_image "
    "read_image copy_image copy_image_to_buffer copy_buffer_to_image map_image fill_image migrate marker "
    "barrier svm_memcpy svm_memfill svm_map svm_unmap svm_free svm_migrate".split())
HOST_MEMORY = {"pinned", "pageable", "svm", "none"}
STAGE_CAPACITY = 64  # src/layer/command_log.hpp: E and W entries a thread may hold unwritten

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def read_records(path):
    """The records as the reader sees them: NULs skipped, a last line without newline dropped."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.replace(b"\0", b"").decode("utf-8", errors="replace")
    lines = text.split("\n")
    complete, partial = lines[:-1], lines[-1]
    records = []
    for number, line in enumerate(complete, 1):
        if not line:
            continue
        fields = line.split("\t")
        kind = fields[0]
        if kind not in FIELDS:
            failures.append(f"line {number}: unknown record type {kind!r}")
            continue
        count = len(fields) - 1
        # E's <mem> is optional in the format; this layer always writes it.
        if not check(count == FIELDS[kind], f"line {number}: {kind} has {count} fields: {line!r}"):
            continue
        records.append(fields)
    return records, partial, data


def as_int(text, base=10):
    return int(text, base)


def check_structure(records, expect_exit):
    """Checks every trace must pass, complete or cut by a crash."""
    if not check(records and records[0][0] == "H", "the first record is not H"):
        return
    check(records[0][1] == "1", f"format version {records[0][1]}")
    check(as_int(records[0][2]) > 0, "H pid")
    kinds = collections.Counter(r[0] for r in records)
    check(kinds["H"] == 1, f"{kinds['H']} H records")
    if expect_exit:
        check(records[-1][0] == "X" and kinds["X"] == 1, "the last record is not the only X")
    else:
        check(kinds["X"] == 0, "an X record although the program did not exit normally")

    devices = set()
    queues = set()
    seqs = {}
    for r in records:
        kind = r[0]
        if kind == "D":
            check(r[2] in ("cpu", "gpu", "accelerator", "other"), f"device type {r[2]}")
            devices.add(r[1])
        elif kind == "Q":
            check(r[3] in devices, f"Q {r[2]} names device {r[3]} before its D")
            check(r[5] in ("0", "1"), f"Q profiling_added {r[5]}")
            queues.add(r[2])
        elif kind == "E":
            seq = as_int(r[1])
            check(seq not in seqs, f"E seq {seq} twice")
            seqs[seq] = r
            check(as_int(r[2]) <= as_int(r[3]), f"E {seq}: t0 > t1")
            check(r[6] in COMMANDS, f"E {seq}: command {r[6]}")
            check(r[9] in ("0", "1"), f"E {seq}: blocking {r[9]}")
            check(r[10] in HOST_MEMORY, f"E {seq}: host memory {r[10]}")
            if r[6] in ("kernel", "task"):
                check(r[7] != "0", f"E {seq}: kernel command without a kernel")
                check(len(r[11].split(",")) == 3, f"E {seq}: global {r[11]}")
                check(r[12] == "0" or len(r[12].split(",")) == 3, f"E {seq}: local {r[12]}")
            else:
                check(r[11] == "-" and r[12] == "-", f"E {seq}: sizes on a {r[6]}")
            if as_int(r[14]) == 0 and r[6] not in ("kernel", "task", "native_kernel"):
                check(r[5] in queues, f"E {seq}: queue {r[5]} without Q")
    timestamps = collections.Counter()
    for r in records:
        if r[0] == "T":
            seq = as_int(r[1])
            timestamps[seq] += 1
            check(seq in seqs, f"T {seq} without an E before it")
            check(as_int(r[6]) <= 0, f"T {seq}: exec status {r[6]}")
            queued, submit, start, end = (as_int(v) for v in r[2:6])
            if as_int(r[6]) == 0:
                check(0 < start <= end, f"T {seq}: start {start} end {end}")
    check(all(n == 1 for n in timestamps.values()), "a command with more than one T")
    return seqs, timestamps, kinds


def parse_expect(stdout):
    for line in stdout.splitlines():
        if line.startswith("expect "):
            return {k: int(v) for k, v in (item.split("=") for item in line.split()[1:])}
    return None


def run(cmd, env_extra=None, timeout=120):
    env = dict(os.environ)
    env.pop("OPENCL_LAYERS", None)
    env.pop("CLPROBE_TRACE_FILE", None)
    env.update(env_extra or {})
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def traced_env(layer, trace, chunk=None):
    env = {"OPENCL_LAYERS": layer, "CLPROBE_TRACE_FILE": trace}
    if chunk:
        env["CLPROBE_TRACE_CHUNK_BYTES"] = str(chunk)
    return env


def stress(program, layer, workdir):
    plain = run([program])
    if not check(plain.returncode == 0, f"untraced run failed ({plain.returncode}): {plain.stderr}"):
        return
    trace = os.path.join(workdir, "stress.trace")
    # Small chunks, so the run crosses many chunk boundaries (a record never straddles one).
    traced = run([program], traced_env(layer, trace, chunk=64 * 1024))
    if not check(traced.returncode == 0, f"traced run failed ({traced.returncode}): {traced.stderr}"):
        return
    check(traced.stderr == "" and plain.stderr == "", f"output on stderr: {traced.stderr!r} {plain.stderr!r}")
    expect = parse_expect(traced.stdout)
    check(expect == parse_expect(plain.stdout), "traced and untraced runs counted different work")
    records, partial, data = read_records(trace)
    check(partial == "", f"the trace ends with a partial line {partial!r}")
    check(data[-1:] == b"\n", "the file was not cut to its used length at exit")
    seqs, timestamps, kinds = check_structure(records, expect_exit=True)

    ok_commands = [r for r in seqs.values() if as_int(r[14]) == 0]
    for r in ok_commands:
        check(timestamps[as_int(r[1])] == 1, f"E {r[1]} ({r[6]}) has {timestamps[as_int(r[1])]} T records")
    check(kinds["T"] == len(ok_commands), f"{kinds['T']} T records for {len(ok_commands)} successful commands")

    kernels = [r for r in ok_commands if r[6] == "kernel"]
    check(len(kernels) == expect["kernels"], f"{len(kernels)} kernel E records, the program enqueued {expect['kernels']}")
    names = {r[1]: r[3] for r in records if r[0] == "K"}
    check(all(names.get(r[7]) in ("add1", "tiny") for r in kernels), "a kernel E whose kernel has no K record")
    clones = [r for r in records if r[0] == "K"]
    check(len(clones) >= expect["threads"] + 1, f"{len(clones)} K records")
    # add1 on its own thread's two 1 KiB buffers: both counted.
    add1 = [r for r in kernels if names.get(r[7]) == "add1"]
    check(sum(1 for r in add1 if r[13] == "2" and r[8] == "2048") >= len(add1) - 1,
          "add1 launches without their two buffers counted")
    check(any(r[13] == "1" and r[8] == "1024" and names.get(r[7]) == "add1" for r in add1),
          "the launch with one buffer bound twice does not count it once")
    check(any(r[12] == "0" for r in kernels) and any(r[12] == "256,1,1" for r in kernels), "local sizes")
    check(all(r[11] == "256,1,1" for r in kernels), "global sizes")

    # One Q record per queue created; not keyed by handle: a released queue's address can be
    # handed to the next queue created, which made this count flaky.
    queues = [r for r in records if r[0] == "Q"]
    unprofiled = [r for r in queues if not as_int(r[4], 16) & 2]
    check(len(unprofiled) == expect["queues_unprofiled"], f"{len(unprofiled)} Q without profiling asked")
    check(all(r[5] == "1" for r in unprofiled), "a queue without profiling lacks profiling_added=1")
    check(all(r[5] == "0" for r in queues if as_int(r[4], 16) & 2), "profiling_added on a profiling queue")

    waits = collections.Counter(r[4] for r in records if r[0] == "W")
    check(waits["finish"] == expect["finishes"], f"{waits['finish']} W finish, expected {expect['finishes']}")
    blocking = sum(n for op, n in waits.items() if op.startswith("blocking_"))
    check(blocking == expect["blocking"], f"{blocking} W blocking_*, expected {expect['blocking']}")
    check(waits["wait_events"] == expect["wait_events"], f"{waits['wait_events']} W wait_events")
    blocking_e = [r for r in ok_commands if r[9] == "1"]
    check(len(blocking_e) == expect["blocking"], f"{len(blocking_e)} blocking E records")

    check(all(r[15] == "0" for r in kernels), "a kernel E with a <mem>")
    allocated = {r[3] for r in records if r[0] == "M"}
    transfers = [r for r in ok_commands if r[6] in ("read", "write", "map", "unmap", "fill", "copy", "read_rect")]
    check(transfers and all(r[15] in allocated for r in transfers), "a transfer E whose <mem> has no M")

    pinned = [r for r in ok_commands if r[10] == "pinned"]
    check(len(pinned) == expect["pinned_transfers"], f"{len(pinned)} pinned transfers, expected {expect['pinned_transfers']}")
    check(any(r[10] == "pageable" and r[6] == "read" for r in ok_commands), "no pageable read")

    # Allocations and frees balance: every R frees a live allocation, once.
    live = {}
    freed = collections.Counter()
    for r in records:
        if r[0] == "M" and as_int(r[7]) == 0:
            live[r[3]] = r[6]
        elif r[0] == "R":
            if check(r[3] in live, f"R {r[3]} without a live M"):
                freed[live.pop(r[3])] += 1
    check(freed["svm"] == expect["released_svm"], f"{freed['svm']} SVM frees, expected {expect['released_svm']}")
    mem_frees = sum(n for kind, n in freed.items() if kind != "svm")
    check(mem_frees == expect["released_mem"], f"{mem_frees} R for cl_mem, the program freed {expect['released_mem']}")
    check(kinds["P"] == 1 and kinds["B"] == 1, "one program, one build")
    build = next(r for r in records if r[0] == "B")
    check(build[4] == "build" and build[5] == "0", f"build record {build}")
    print(f"stress: {len(records)} records, {len(kernels)} kernels, {kinds['T']} T, {sum(waits.values())} W, "
          f"{len(data)} bytes")


def crash(program, layer, workdir):
    """The layer stages E and W per thread (src/layer/command_log.hpp): a crash loses what is still
    staged, up to a batch per thread in a tight loop, at most the call in flight when the program
    does host work between calls. What was written must stay readable."""
    # 8 threads in a tight loop: each may still hold a full stage (64 entries, kernels among them).
    tight = ["--crash-after", "1500"]
    tight_least = 1500 - 8 * STAGE_CAPACITY
    paced = ["--threads", "2", "--iterations", "200", "--pace-us", "300", "--crash-after", "60"]
    cases = [
        ("abort", tight, -signal.SIGABRT, False, tight_least),
        # Under AddressSanitizer its SIGSEGV handler reports and exits with 1, or aborts
        # (ASAN_OPTIONS=abort_on_error=1, as CI's sanitizer run sets it).
        ("segv", tight, (-signal.SIGSEGV, 1, -signal.SIGABRT), False, tight_least),
        ("kill", tight, -signal.SIGKILL, False, tight_least),
        # exit() from one thread while the others enqueue: the exit handler writes every stage, then X.
        ("exit", tight, 0, True, 1500),
        # Host work between calls: each entry writes out the previous calls, so at most the kernel
        # being enqueued by each thread at the crash is missing.
        ("abort", paced, -signal.SIGABRT, False, 60 - 2),
        ("kill", paced, -signal.SIGKILL, False, 60 - 2),
    ]
    for how, args, status, clean, least in cases:
        name = f"{how}{'_paced' if args is paced else ''}"
        trace = os.path.join(workdir, f"crash_{name}.trace")
        env = traced_env(layer, trace, chunk=64 * 1024)
        if how == "exit" and "ASAN_OPTIONS" in os.environ:
            # LeakSanitizer's exit-time check stops the world while the other threads still run
            # OpenCL calls, and its tracer crashes on that (with or without the layer): the leak
            # check has nothing to say about a program that exits mid-flight on purpose.
            env["ASAN_OPTIONS"] = os.environ["ASAN_OPTIONS"] + ":detect_leaks=0"
        result = run([program, "--crash", how] + args, env)
        wanted = status if isinstance(status, tuple) else (status,)
        if not check(result.returncode in wanted, f"{name}: exit status {result.returncode}, wanted {status}: "
                                                  f"{result.stderr}"):
            continue
        records, partial, data = read_records(trace)
        check_structure(records, expect_exit=clean)
        kernels = sum(1 for r in records if r[0] == "E" and r[6] == "kernel")
        check(kernels >= least, f"{name}: only {kernels} kernel E records before the crash, expected {least}")
        if not clean:
            check(b"\0" in data, f"{name}: the file was cut although no exit handler ran")
        print(f"crash {name}: {len(records)} records readable, {kernels} kernels")


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("stress", "crash"):
        print(__doc__)
        return 2
    mode, program, layer, workdir = sys.argv[1:]
    os.makedirs(workdir, exist_ok=True)
    (stress if mode == "stress" else crash)(program, layer, workdir)
    for f in failures[:40]:
        print("FAIL:", f)
    if len(failures) > 40:
        print(f"... and {len(failures) - 40} more")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
