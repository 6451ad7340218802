"""clprobe __count-work (docs/trace.md, "How work is counted"): planted kernels of known work, each
written as a capture folder (clprobe.replay.v1) and counted under Oclgrind with clprobe's plugin.
The counted FLOPs by precision, integer operations on data and bytes must equal the analytic counts
exactly, counted over every work-group and sampled; a plugin told to miscount (a planted bug) must
fail the same comparison."""
import json
import os
import struct

from clitest import BINARY, expect, main, run, temp_dir

PLUGIN = os.path.join(os.path.dirname(BINARY), "libclprobe_work_counter.so")
ICD_CANDIDATES = ["/usr/lib/oclgrind/liboclgrind-rt-icd.so", "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so"]
ICD = next((p for p in ICD_CANDIDATES if os.path.exists(p)), None)
WORK = temp_dir()
CL_MEM_READ_WRITE = 1

SOURCE = """
__kernel void fma_loop(__global float* a, int n) {
    size_t i = get_global_id(0);
    float x = a[i], y = 1.0001f, z = 0.5f;
    for (int k = 0; k < n; ++k) x = x * y + z;
    a[i] = x;
}
__kernel void int_mix(__global uint* a, int n) {
    size_t i = get_global_id(0);
    uint x = a[i], y = (uint)i * 2654435761u;
    for (int k = 0; k < n; ++k) { x = rotate(x ^ y, 7u) + y; y = (y & x) | 0x5bd1e995u; }
    a[i] = x;
}
__kernel void copy4(__global const float4* s, __global float4* d) {
    size_t i = get_global_id(0);
    d[i] = s[i];
}
__kernel void reduce_f64(__global const double* in, __global double* out, __local double* tmp) {
    size_t l = get_local_id(0), n = get_local_size(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s >>= 1) {
        if (l < s) tmp[l] += tmp[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = tmp[0];
}
"""


def write_capture(name, kernel, global_size, local_size, args, options=""):
    """args: ("buffer", bytes) | ("scalar", bytes) | ("local", size)."""
    folder = os.path.join(WORK, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "program.cl"), "w") as f:
        f.write(SOURCE)
    described = []
    for i, (kind, value) in enumerate(args):
        if kind == "buffer":
            for suffix in ("in", "out"):
                with open(os.path.join(folder, f"arg{i}.{suffix}"), "wb") as f:
                    f.write(value)
            described.append({"index": i, "kind": "buffer", "size": len(value), "flags": CL_MEM_READ_WRITE,
                              "input": f"arg{i}.in", "output": f"arg{i}.out"})
        elif kind == "scalar":
            described.append({"index": i, "kind": "scalar", "bytes_hex": value.hex()})
        else:
            described.append({"index": i, "kind": "local", "size": value})
    capture = {"format": "clprobe.replay.v1", "pid": 1, "kernel": kernel, "launch_ordinal": 2,
               "device": {"name": "planted", "vendor": "clprobe", "platform": "planted", "driver_version": "0"},
               "program": {"origin": "source", "file": "program.cl", "options": options},
               "work_dim": 1, "global_offset": None, "global_size": [global_size], "local_size": [local_size],
               "args": described, "traced_ns": 1000, "skipped": None}
    with open(os.path.join(folder, "capture.json"), "w") as f:
        json.dump(capture, f)
    return folder


def count(folder, seconds=0, env=None):
    out = os.path.join(folder, "work.json")
    r = run("__count-work", folder, "--out", out, "--icd", ICD, "--plugin", PLUGIN, "--seconds", str(seconds),
            env=env, timeout=300)
    expect(r.rc == 0, "__count-work failed", r)
    expect(os.path.exists(out + ".counts"), "the plugin wrote no counts", r)
    with open(out + ".counts") as f:
        counts = json.load(f)
    with open(out) as f:
        outcome = json.load(f)
    return counts, outcome


def check_counts(counts, flops=None, int_ops=0.0, load=0.0, store=0.0, local_load=0.0, local_store=0.0):
    e = counts["estimate"]
    flops = flops or {}
    problems = []
    for precision in ("fp16", "fp32", "fp64"):
        want = float(flops.get(precision, 0))
        if e["flops"][precision] != want:
            problems.append(f"{precision} FLOPs {e['flops'][precision]} != {want}")
    for what, got, want in (("integer operations", e["int_ops"], int_ops),
                            ("global bytes loaded", e["bytes"]["global"]["load"], load),
                            ("global bytes stored", e["bytes"]["global"]["store"], store),
                            ("local bytes loaded", e["bytes"]["local"]["load"], local_load),
                            ("local bytes stored", e["bytes"]["local"]["store"], local_store)):
        if got != float(want):
            problems.append(f"{what} {got} != {want}")
    return problems


def planted(options="", tag=""):
    """(name, folder, expected counts) of every planted kernel, counted over every work-group."""
    items, loops = 4096, 50
    out = [("fma_loop", write_capture("fma" + tag, "fma_loop", items, 64,
                                      [("buffer", struct.pack(f"{items}f", *[1.0] * items)),
                                       ("scalar", struct.pack("i", loops))], options),
            dict(flops={"fp32": 2 * loops * items}, load=4 * items, store=4 * items))]
    # Per iteration xor, rotate, add, and, or on data (the loop counter and its test are control),
    # plus the multiply that seeds y.
    out.append(("int_mix", write_capture("int" + tag, "int_mix", items, 64,
                                         [("buffer", struct.pack(f"{items}I", *range(items))),
                                          ("scalar", struct.pack("i", loops))], options),
                dict(int_ops=items * (5 * loops + 1), load=4 * items, store=4 * items)))
    out.append(("copy4", write_capture("copy" + tag, "copy4", items, 64,
                                       [("buffer", bytes(16 * items)), ("buffer", bytes(16 * items))], options),
                dict(load=16 * items, store=16 * items)))
    group = 64
    groups = items // group
    # A tree of group - 1 additions per group in local memory: each item stores its value, each
    # addition loads two and stores one.
    out.append(("reduce_f64", write_capture("reduce" + tag, "reduce_f64", items, group,
                                            [("buffer", struct.pack(f"{items}d", *[0.5] * items)),
                                             ("buffer", bytes(8 * groups)), ("local", 8 * group)], options),
                dict(flops={"fp64": groups * (group - 1)}, load=8 * items, store=8 * groups,
                     local_load=8 * groups * (2 * (group - 1) + 1), local_store=8 * groups * (2 * group - 1))))
    return out


def require_oclgrind():
    expect(ICD is not None, f"Oclgrind's ICD library is not installed (looked in {ICD_CANDIDATES})")
    expect(os.path.exists(PLUGIN), f"the counting plugin was not built next to clprobe ({PLUGIN})")


def test_planted_kernels_count_exactly():
    require_oclgrind()
    for name, folder, want in planted():
        counts, outcome = count(folder)
        expect(counts["exact"] and counts["groups_counted"] == counts["groups_total"],
               f"{name}: not every group was simulated: {counts}")
        problems = check_counts(counts, **want)
        expect(not problems, f"{name}: {problems}")
        expect(outcome["status"] == "replayed", f"{name}: the launch did not run: {outcome}")


def test_unoptimised_build_counts_the_same():
    require_oclgrind()
    # What the counter falls back to when Oclgrind cannot create a kernel from its optimised build
    # (hashcat's rotations): every variable lives in private memory, and still loop counters are
    # control, not data, and the counts equal the analytic ones.
    for name, folder, want in planted("-cl-opt-disable", "-O0"):
        counts, _ = count(folder)
        problems = check_counts(counts, **want)
        expect(not problems, f"{name} at -cl-opt-disable: {problems}")


def test_sampled_count_extrapolates_exactly():
    require_oclgrind()
    # 16384 groups of one item each and a budget far below simulating them all: the plugin samples
    # and extrapolates; every group does the same work, so the estimate is exact.
    items, loops = 16384, 2000
    folder = write_capture("fma-sampled", "fma_loop", items, 1,
                           [("buffer", struct.pack(f"{items}f", *[1.0] * items)), ("scalar", struct.pack("i", loops))])
    counts, _ = count(folder, seconds=0.5)
    expect(not counts["exact"] and counts["groups_counted"] < counts["groups_total"],
           f"expected a sample: {counts}")
    expect(counts["groups_covered"] == counts["groups_total"], f"the sample did not cover every group: {counts}")
    problems = check_counts(counts, flops={"fp32": 2 * loops * items}, load=4 * items, store=4 * items)
    expect(not problems, f"sampled: {problems}")


def test_a_planted_miscount_is_caught():
    require_oclgrind()
    # The plugin's test hook counts an FMA as one FLOP, as a naive counter would: the comparison the
    # tests above make must catch it.
    items, loops = 4096, 50
    folder = write_capture("fma-planted", "fma_loop", items, 64,
                           [("buffer", struct.pack(f"{items}f", *[1.0] * items)), ("scalar", struct.pack("i", loops))])
    counts, _ = count(folder, env={"CLPROBE_WORK_TEST_FMA_AS_ONE": "1"})
    problems = check_counts(counts, flops={"fp32": 2 * loops * items}, load=4 * items, store=4 * items)
    expect(problems and "fp32 FLOPs" in problems[0], f"the planted miscount was not caught: {counts['estimate']}")


if __name__ == "__main__":
    main([test_planted_kernels_count_exactly, test_unoptimised_build_counts_the_same,
          test_sampled_count_extrapolates_exactly,
          test_a_planted_miscount_is_caught])
