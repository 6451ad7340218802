"""clprobe replay on capture folders this test writes itself (the clprobe.replay.v1 format of
docs/replay.md): tiny kernels, inputs computed here, the outputs they must give.

Three kernels at most (PoCL compiles each ~1 s): `scale` launched with local size 1 (a faster local
size must be found with identical outputs; the same capture with one output element wrong is not
reproducible), and `nan_guard`, whose answer depends on a NaN check (x != x) that -cl-finite-math-only
and -cl-fast-relaxed-math allow the compiler to drop (those variants must be shown as changing the
answer and never ranked).
"""
import json
import os
import struct

from clitest import expect, load_json, main, run, temp_dir

SCALE = """kernel void scale(global const float* in, global float* out, float a) {
    size_t i = get_global_id(0);
    out[i] = in[i] * a;
}
"""
NAN_GUARD = """kernel void nan_guard(global const float* in, global float* out) {
    size_t i = get_global_id(0);
    float x = in[i];
    out[i] = (x != x) ? -1.0f : x + 1.0f;  /* true only for NaN, which finite-math lets the compiler assume away */
}
"""


def first_device():
    r = run("list", "--json")
    expect(r.rc == 0, "clprobe list --json", r)
    platforms = load_json(r.stdout, r)["platforms"]
    for p in platforms:
        if p["devices"]:
            return p["name"], p["devices"][0]["name"]
    raise AssertionError("no OpenCL device to replay on")


def floats(values):
    return struct.pack(f"<{len(values)}f", *values)


def write_capture(root, name, kernel, source, global_size, local_size, args, buffers, traced_ns=None, skipped=None):
    folder = os.path.join(root, "replay", name)
    os.makedirs(folder)
    platform, device = DEVICE
    with open(os.path.join(folder, "program.cl"), "w") as f:
        f.write(source)
    for index, (data_in, data_out) in buffers.items():
        with open(os.path.join(folder, f"arg{index}.in"), "wb") as f:
            f.write(data_in)
        with open(os.path.join(folder, f"arg{index}.out"), "wb") as f:
            f.write(data_out)
    capture = {
        "format": "clprobe.replay.v1", "pid": 4242, "kernel": kernel, "launch_ordinal": 1,
        "device": {"name": device, "vendor": "", "platform": platform, "driver_version": ""},
        "program": {"origin": "source", "file": "program.cl", "options": ""},
        "work_dim": 1, "global_offset": None, "global_size": [global_size], "local_size": local_size,
        "args": args, "traced_ns": traced_ns, "skipped": skipped,
    }
    # Written last, as the layer does: a folder without it is incomplete.
    with open(os.path.join(folder, "capture.json"), "w") as f:
        json.dump(capture, f)


def buffer_arg(index, size, flags):
    return {"index": index, "kind": "buffer", "size": size, "flags": flags, "input": f"arg{index}.in",
            "output": f"arg{index}.out"}


def scale_capture(root, name, wrong_output=False):
    n = 16384
    values = [float(i % 1000) for i in range(n)]
    expected = [2.0 * v for v in values]  # exact in float32
    if wrong_output:
        expected[5] += 1.0
    out_before = floats([0.0] * n)
    args = [buffer_arg(0, 4 * n, 4), buffer_arg(1, 4 * n, 2),  # CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY
            {"index": 2, "kind": "scalar", "bytes_hex": struct.pack("<f", 2.0).hex()}]
    write_capture(root, name, "scale", SCALE, n, [1], args,
                  {0: (floats(values), floats(values)), 1: (out_before, floats(expected))})


def nan_guard_capture(root, name):
    n = 1024
    values = [float("nan") if i % 7 == 0 else float(i) for i in range(n)]
    expected = [-1.0 if i % 7 == 0 else float(i) + 1.0 for i in range(n)]
    args = [buffer_arg(0, 4 * n, 1), buffer_arg(1, 4 * n, 1)]
    write_capture(root, name, "nan_guard", NAN_GUARD, n, None, args,
                  {0: (floats(values), floats(values)), 1: (floats([0.0] * n), floats(expected))})


def replay_json(root, *extra):
    out = os.path.join(root, "replay.json")
    r = run("replay", root, "--json", out, *extra, timeout=600)
    expect(r.rc == 0, "clprobe replay exits 0", r)
    with open(out) as f:
        data = load_json(f.read(), r)
    expect(data["schema"] == "clprobe.replay" and data["schema_version"] == 1, "the JSON's schema", r)
    return r, {x["capture"]: x for x in data["replays"]}


def test_faster_local_size_with_identical_outputs():
    root = temp_dir()
    scale_capture(root, "4242-0")
    r, replays = replay_json(root)
    s = replays["4242-0"]
    expect(s["status"] == "replayed", f"scale replayed: {s['status']} {s['reason']}", r)
    ref = s["variants"][0]
    expect(ref["kind"] == "as_captured" and ref["outputs"] == "identical" and ref["local_size"] == "1",
           "the launch as captured is the reference, identical to the captured outputs", r)
    expect(len(ref["samples_ns"]) >= 5 and all(x > 0 for x in ref["samples_ns"]), "at least 5 positive samples", r)
    local = [v for v in s["variants"] if v["kind"] == "local_size" and v["failure"] is None]
    expect(local, "local-size variants ran", r)
    expect(all(v["outputs"] == "identical" for v in local), "scale's outputs are identical at every local size", r)
    # The fastest of all the variants that keep the answer is another local size than the captured 1.
    kept = [v for v in s["variants"] if v["summary_ns"] and v["outputs"] in ("identical", "within_tolerance")]
    fastest = min(kept, key=lambda v: v["summary_ns"]["median"])
    expect(fastest["kind"] == "local_size" and fastest["speedup"]["estimate"] > 1,
           f"a local size beats 1 work-item groups: {fastest['label']} {fastest['speedup']}", r)
    # Timed side by side with the launch as captured, in a first round and a confirmation round
    # (docs/replay.md, "When a what-if is ranked"): every sample has its reference beside it.
    expect(len(fastest["reference_ns"]) == len(fastest["samples_ns"]) and fastest["first_round"] == 7,
           f"pairs of the first round: {fastest['first_round']} of {len(fastest['samples_ns'])}", r)
    expect(len(fastest["samples_ns"]) == 14 and fastest["verdict"]["ranked"],
           f"a gain this large is confirmed: {fastest['verdict']}", r)
    expect(fastest["speedup"]["low"] >= 1.1, f"its interval's lower bound: {fastest['speedup']}", r)
    expect("as captured" in r.stdout and "local size" in r.stdout and "speed-up" in r.stdout,
           "the what-if table on stdout", r)
    expect("no traced time" in s["reliability"] and not s["reliable"],
           "without a traced time the replay is not called reliable", r)
    bw = s["bandwidth"]
    expect(bw and bw["copy_gbps"] > 0, "the bandwidth check against a copy", r)
    # The roof is the faster of the API's copy and the copy kernel, and says which it is.
    expect(bw["api_copy_gbps"] > 0 and bw["kernel_copy_gbps"] > 0, "both copies measured", r)
    expect(bw["copy_gbps"] == max(bw["api_copy_gbps"], bw["kernel_copy_gbps"]), "the roof is the faster copy", r)
    expect(bw["copy_method"] == ("same-traffic kernel" if bw["kernel_copy_gbps"] > bw["api_copy_gbps"] else
                                 "clEnqueueCopyBuffer/Image"), "the roof names its copy", r)
    expect(f"by {bw['copy_method']}" in r.stdout, "the text names the roof's copy", r)


def test_wrong_output_not_reproducible_and_fast_math_changes_answer():
    root = temp_dir()
    scale_capture(root, "4242-1", wrong_output=True)
    nan_guard_capture(root, "4242-2")
    # A capture the layer skipped, and one that is not a capture at all.
    write_capture(root, "4242-3", "img", SCALE, 4, None, [], {}, skipped="image argument 3")
    os.makedirs(os.path.join(root, "replay", "4242-4"))
    with open(os.path.join(root, "replay", "4242-4", "capture.json"), "w") as f:
        f.write('{"format": "clprobe.replay.v1", "work_dim": 7}')
    r, replays = replay_json(root)
    bad = replays["4242-1"]
    expect(bad["status"] == "not_reproducible" and "arg 1" in bad["reason"],
           f"a captured output that does not match: {bad['status']} {bad['reason']}", r)
    expect(all(v["kind"] == "as_captured" for v in bad["variants"]), "no what-if after an unreproducible reference", r)
    guard = replays["4242-2"]
    expect(guard["status"] == "replayed", f"nan_guard replayed: {guard['reason']}", r)
    fast = [v for v in guard["variants"] if v["label"] in ("-cl-finite-math-only", "-cl-fast-relaxed-math")]
    expect(len(fast) == 2, "both fast-math variants ran", r)
    changed = [v for v in fast if v["outputs"] == "changed"]
    expect(changed, "a fast-math build changes nan_guard's answer", r)
    expect(all(not v["ranked_eligible"] for v in changed), "a variant that changes the answer is never ranked", r)
    expect("CHANGED" in r.stdout and "not ranked" in r.stdout, "the table says so", r)
    expect(replays["4242-3"]["status"] == "skipped" and replays["4242-3"]["reason"] == "image argument 3",
           "the layer's skip reason", r)
    expect(replays["4242-4"]["status"] == "invalid" and "missing" in replays["4242-4"]["reason"],
           "a bad capture.json is invalid with its reason", r)


def test_bad_folder_exit_2():
    for args in (["/nonexistent/records"], [temp_dir()]):
        r = run("replay", *args)
        expect(r.rc == 2, f"replay {args}: exit 2", r)
        lines = r.stderr.strip().splitlines()
        expect(len(lines) == 1 and lines[0].startswith("clprobe: "), "one line on stderr", r)
        expect(r.stdout == "", "nothing on stdout", r)


def test_no_valid_capture_exit_2_with_table_and_json():
    # One capture.json that is not JSON, one whose input holds 10 bytes where 64 KiB were captured:
    # each is invalid with its reason, the table and the JSON are still written, and the exit code
    # tells a script that nothing was replayed.
    root = temp_dir()
    scale_capture(root, "5-0")
    with open(os.path.join(root, "replay", "5-0", "arg0.in"), "wb") as f:
        f.write(b"0123456789")
    os.makedirs(os.path.join(root, "replay", "5-1"))
    with open(os.path.join(root, "replay", "5-1", "capture.json"), "w") as f:
        f.write("{not json")
    out = os.path.join(root, "replay.json")
    r = run("replay", root, "--json", out)
    expect(r.rc == 2, "no valid capture: exit 2", r)
    lines = r.stderr.strip().splitlines()
    expect(len(lines) == 1 and "no valid capture" in lines[0], "one line on stderr says why", r)
    expect("invalid: " in r.stdout and "10 bytes" in r.stdout and "not valid JSON" in r.stdout,
           "the table names each capture's problem", r)
    with open(out) as f:
        replays = load_json(f.read(), r)["replays"]
    expect(sorted(x["status"] for x in replays) == ["invalid", "invalid"], "the JSON holds both, invalid", r)


def test_kernels_limit_and_no_partial_json():
    root = temp_dir()
    nan_guard_capture(root, "1-0")
    write_capture(root, "1-1", "img", SCALE, 4, None, [], {}, skipped="SVM pointer argument 1")
    _, replays = replay_json(root, "--kernels", "1")
    expect(len(replays) == 1, "--kernels 1 replays one capture")
    r = run("replay", root, "--json", os.path.join(root, "no-such-dir", "x.json"))
    expect(r.rc == 3 and not os.path.exists(os.path.join(root, "no-such-dir")), "an unwritable --json: exit 3", r)


DEVICE = first_device()

if __name__ == "__main__":
    main([test_faster_local_size_with_identical_outputs, test_wrong_output_not_reproducible_and_fast_math_changes_answer,
          test_bad_folder_exit_2, test_no_valid_capture_exit_2_with_table_and_json,
          test_kernels_limit_and_no_partial_json])
