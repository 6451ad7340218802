"""clprobe trace --replay N: the layer's capture of kernel launches for replay (docs/trace.md,
"Capture for replay"; format clprobe.replay.v1). The trace app's replay_* modes are deterministic:
their inputs are exact small floats, so the bytes a capture must hold are computed here, and the
program's own checksum (FNV-1a 64 over the result's 32-bit words) ties a capture's output to what
the program read back. Each traced run's stdout and exit code must equal the untraced run's."""
import json
import os
import struct
import subprocess

from clitest import BINARY, expect, main, run, temp_dir

PROGRAMS = os.path.join(os.path.dirname(BINARY), "tests", "trace_programs")
APP = os.path.join(PROGRAMS, "clprobe_trace_app")
WORK = temp_dir()
CL_MEM_READ_WRITE = 1


def untraced(mode):
    p = subprocess.run([APP, mode], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout


def traced(mode, name, *options, app_args=()):
    records = os.path.join(WORK, name)
    r = run("trace", "--no-ceilings", "--quiet", "--records", records, *options, "--", APP, mode, *app_args,
            timeout=300)
    return r, records


def captures(records):
    """{kernel name: (folder, capture.json)} of the complete captures."""
    out = {}
    root = os.path.join(records, "replay")
    for folder in sorted(os.listdir(root)):
        path = os.path.join(root, folder, "capture.json")
        if os.path.exists(path):
            with open(path) as f:
                c = json.load(f)
            expect(c["kernel"] not in out, f"two captures of {c['kernel']}")
            out[c["kernel"]] = (os.path.join(root, folder), c)
    return out


def floats(values):
    return struct.pack(f"<{len(values)}f", *values)


def fnv_words(data, h=14695981039346656037):
    for (w,) in struct.iter_unpack("<I", data):
        h = ((h ^ w) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def printed_checksum(stdout):
    return int(next(line for line in stdout.splitlines() if line.startswith("checksum ")).split()[1], 16)


def data(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


def check_capture(folder, c, kernel, sizes, options="-cl-std=CL1.2", ordinal=2):
    """The fields every complete capture of the trace app has; `sizes`: the buffer arguments' bytes.
    The tests of a capture's bytes ask for the 2nd launch (--capture-at 2): its inputs are the 1st's outputs."""
    expect(c["format"] == "clprobe.replay.v1", f"format {c['format']}")
    expect(c["kernel"] == kernel and c["skipped"] is None, f"capture of {kernel}: {c}")
    expect(c["launch_ordinal"] == ordinal, f"launch {ordinal} is the one captured, not {c['launch_ordinal']}")
    expect(c["pid"] > 0 and os.path.basename(folder).startswith(f"{c['pid']}-"), f"folder {folder} of pid {c['pid']}")
    expect(c["program"]["origin"] == "source" and c["program"]["file"] == "program.cl", f"program {c['program']}")
    expect(c["program"]["options"] == options, f"build options {c['program']['options']!r}")
    with open(os.path.join(folder, "program.cl")) as f:
        source = f.read()
    expect(f"__kernel void {kernel}(" in source, "program.cl is not the program's source")
    if kernel.startswith("replay_") and "image" not in kernel:
        # printf and enqueue_kernel in a comment and a string of this program: captured all the same.
        expect("printf(" in source and "enqueue_kernel(" in source, "the replay program's mentions of printf")
    expect(c["device"]["name"] and c["device"]["platform"], f"device {c['device']}")
    expect(isinstance(c["traced_ns"], int) and c["traced_ns"] > 0, f"traced_ns {c['traced_ns']}")
    buffers = [a for a in c["args"] if a["kind"] == "buffer"]
    expect([a["size"] for a in buffers] == sizes, f"buffer sizes {[a['size'] for a in buffers]}, want {sizes}")
    for a in buffers:
        expect(a["flags"] == CL_MEM_READ_WRITE, f"arg {a['index']} flags {a['flags']}")
        for key in ("input", "output"):
            expect(a[key] == f"arg{a['index']}.{'in' if key == 'input' else 'out'}", f"file name {a[key]}")
            expect(os.path.getsize(os.path.join(folder, a[key])) == a["size"], f"{a[key]} is not {a['size']} bytes")
    expect([a["index"] for a in c["args"]] == list(range(len(c["args"]))), f"args {c['args']}")


def check_unchanged(mode, r):
    rc, stdout = untraced(mode)
    expect(rc == 0, f"{mode} untraced exit code {rc}")
    expect(r.rc == 0, f"{mode} traced with --replay: exit code", r)
    expect(r.stdout == stdout, f"{mode}: capture changed the program's stdout\n{stdout}", r)


def test_poor_local_saxpy_captured_at_its_second_launch():
    r, records = traced("replay_poor_local", "poor_local", "--replay", "4", "--capture-at", "2")
    check_unchanged("replay_poor_local", r)
    got = captures(records)
    expect(list(got) == ["replay_saxpy"], f"captures {list(got)}")
    folder, c = got["replay_saxpy"]
    n = 16384
    check_capture(folder, c, "replay_saxpy", [4 * n, 4 * n])
    expect(c["work_dim"] == 1 and c["global_size"] == [n] and c["local_size"] == [2], f"sizes {c}")
    expect(c["global_offset"] is None, "no offset was given")
    expect(c["args"][2] == {"index": 2, "kind": "scalar", "bytes_hex": struct.pack("<f", 2.0).hex()}, c["args"][2])
    x = floats([i * 0.5 for i in range(n)])
    expect(data(folder, "arg0.in") == x and data(folder, "arg0.out") == x, "x is not what the program uploaded")
    # y starts at 1 and each launch adds 2 * x = i: before the 2nd launch 1 + i, after it 1 + 2i.
    expect(data(folder, "arg1.in") == floats([1 + i for i in range(n)]), "y before the 2nd launch")
    expect(data(folder, "arg1.out") == floats([1 + 2 * i for i in range(n)]), "y after the 2nd launch")


def test_a_kernel_launched_once_is_captured_at_its_first_launch():
    # By default --replay captures each kernel's 1st launch: a hot kernel launched once (darktable's
    # way) is captured and replayed too.
    records = os.path.join(WORK, "once")
    out = os.path.join(WORK, "once.json")
    r = run("trace", "--no-ceilings", "--quiet", "--records", records, "--replay", "1", "--json", out, "--", APP,
            "replay_poor_local", "--steps", "1", timeout=300)
    expect(r.rc == 0, "trace of one launch", r)
    folder, c = captures(records)["replay_saxpy"]
    n = 16384
    check_capture(folder, c, "replay_saxpy", [4 * n, 4 * n], ordinal=1)
    expect(data(folder, "arg1.in") == floats([1.0] * n), "y before the 1st launch")
    expect(data(folder, "arg1.out") == floats([1 + i for i in range(n)]), "y after the 1st launch")
    replays, _ = replays_of(out)
    expect(replays["replay_saxpy"]["status"] == "replayed", f"not replayed: {replays['replay_saxpy']}")
    expect(replays["replay_saxpy"]["launch_ordinal"] == 1, "the replay names the launch it replayed")


def stage_seconds(report, stage):
    probe = next(p for p in report["results"] if p["id"] == "trace.program")
    return next(m["summary"]["median"] for m in probe["measurements"]
                if m["metric"] == "app.pipeline.stage_time" and m["labels"].get("stage") == stage)


def test_the_capture_is_not_the_programs_idle_time():
    # One large launch (add_one over 32 MiB buffers), traced without and with --replay: the capture
    # waits and reads 64 MiB while the device idles, and that time is cut out of the program's
    # (docs/trace.md, "What it costs"). Charged to the program, the idle stage would grow by about
    # the capture's whole time; cut, it grows by none of it (the margin is half of it).
    def traced_once(name, *options):
        out = os.path.join(WORK, name + ".json")
        r = run("trace", "--no-ceilings", "--quiet", "--work", "0", "--records", os.path.join(WORK, name),
                "--json", out, *options, "--", APP, "clean", "--steps", "1", timeout=300)
        expect(r.rc == 0, f"{name}: trace of one launch", r)
        with open(out) as f:
            return json.load(f)
    plain = traced_once("idle_plain")
    captured = traced_once("idle_captured", "--replay", "1")
    probe = next(p for p in captured["results"] if p["id"] == "trace.program")
    cut = probe["attributes"]["facts"]["run"].get("capture_seconds", 0)
    expect(cut > 0, f"the capture's own time: {cut}")
    grew = stage_seconds(captured, "device_idle") - stage_seconds(plain, "device_idle")
    expect(grew < cut / 2, f"the idle stage grew by {grew:.4f} s with a capture of {cut:.4f} s")


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_fast_math_inputs_and_outputs():
    r, records = traced("replay_fast_math", "fast_math", "--replay", "4", "--capture-at", "2")
    check_unchanged("replay_fast_math", r)
    folder, c = captures(records)["replay_rounding"]
    n = 1024
    check_capture(folder, c, "replay_rounding", [4 * n, 4 * n])
    values = [(i % 64) * 0.25 for i in range(n)]
    expect(data(folder, "arg0.in") == floats(values), "the input is not what the program uploaded")
    # (v + 2^24) - 2^24 in float: v rounded to a multiple of 2 (ties to even).
    want_out = floats([f32(f32(v + 2.0**24) - 2.0**24) for v in values])
    # Launch 1 wrote the same output, so launch 2 finds it and leaves it.
    expect(data(folder, "arg1.in") == want_out and data(folder, "arg1.out") == want_out, "outputs")
    expect(fnv_words(data(folder, "arg1.out")) == printed_checksum(r.stdout), "out is not what the program read")


def test_build_options_chain():
    r, records = traced("replay_build_options", "build_options", "--replay", "4", "--capture-at", "2")
    check_unchanged("replay_build_options", r)
    folder, c = captures(records)["replay_mad_chain"]
    n = 4096
    check_capture(folder, c, "replay_mad_chain", [4 * n, 4 * n])
    expect(c["args"][2]["bytes_hex"] == struct.pack("<I", 2000).hex(), f"steps argument {c['args'][2]}")
    expect(data(folder, "arg0.in") == floats([(i % 100) * 0.25 for i in range(n)]), "chain input")
    # Every launch computes the same output from the same input: the capture's is what was read back.
    expect(fnv_words(data(folder, "arg1.out")) == printed_checksum(r.stdout), "out is not what the program read")


def test_too_large_skipped_with_the_budget_reason():
    r, records = traced("replay_too_large", "too_large", "--replay", "4", "--replay-budget", "1M", "--capture-at", "2")
    check_unchanged("replay_too_large", r)
    got = captures(records)
    expect(set(got) == {"replay_saxpy", "replay_rounding"}, f"captures {list(got)}")
    folder, big = got["replay_saxpy"]
    expect(big["skipped"] == "inputs and outputs 16.0 MiB exceed the capture budget (1.0 MiB left of 1.0 MiB)",
           f"skipped: {big['skipped']}")
    expect(sorted(os.listdir(folder)) == ["capture.json"], f"a skipped capture keeps data: {os.listdir(folder)}")
    small_folder, small = got["replay_rounding"]
    check_capture(small_folder, small, "replay_rounding", [4096, 4096])


def test_off_by_default_and_bad_values_exit_2():
    # Captures are taken for --replay and for --work (on by default); with neither, none.
    r, records = traced("replay_fast_math", "off", "--work", "0")
    expect(r.rc == 0, "trace without --replay", r)
    expect(not os.path.exists(os.path.join(records, "replay")), "a replay folder without --replay and --work")
    for option, value in (("--replay", "-1"), ("--replay", "many"), ("--replay-budget", "12Q"),
                          ("--replay-budget", "0"), ("--replay-budget", "")):
        bad = os.path.join(WORK, "bad")
        r = run("trace", "--no-ceilings", "--records", bad, "--replay", "2", option, value, "--", APP,
                "replay_fast_math")
        expect(r.rc == 2, f"{option} {value!r}: exit code", r)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        expect(len(lines) == 1 and option in lines[0], f"{option} {value!r}: not one line naming the option", r)
        expect("mode replay_fast_math" not in r.stdout, f"{option} {value!r}: the program ran", r)


def replays_of(json_path):
    """{kernel: replay result} from the trace.replay probe of a trace report."""
    with open(json_path) as f:
        doc = json.load(f)
    probe = [p for p in doc["results"] if p["id"] == "trace.replay"]
    expect(len(probe) == 1 and probe[0]["status"] == "ok", f"trace.replay probe: {probe}")
    replay = probe[0]["attributes"]["replay"]
    return {r["kernel"]: r for r in replay["replays"]}, doc["findings"]


def test_replayed_after_the_program_and_an_answer_changing_build_never_recommended():
    # The whole path: the layer captures, clprobe replays after the program, the report holds both.
    out = os.path.join(WORK, "fast_math_replay.json")
    r, _ = traced("replay_fast_math", "fast_math_replay", "--replay", "2", "--json", out)
    check_unchanged("replay_fast_math", r)
    replays, findings = replays_of(out)
    rounding = replays.get("replay_rounding")
    expect(rounding is not None and rounding["status"] == "replayed", f"replay_rounding not replayed: {rounding}")
    variants = {v["label"]: v for v in rounding["variants"]}
    expect(variants["as captured"]["outputs"] == "identical", "the captured launch did not reproduce its outputs")
    fast = variants.get("-cl-fast-relaxed-math")
    expect(fast is not None and fast["outputs"] == "changed" and not fast["ranked_eligible"],
           f"fast math changes this kernel's answer: {fast}")
    expect(not any("fast-relaxed-math" in f["title"] for f in findings), "an answer-changing build was recommended")
    # A poor local size: every local-size variant keeps the outputs, and a ranked what-if names one.
    out = os.path.join(WORK, "poor_local_replay.json")
    text = os.path.join(WORK, "poor_local_replay.txt")
    # 1000 launches (the most whose sums stay exact in float): the kernel's time a share worth ranking.
    r, _ = traced("replay_poor_local", "poor_local_replay", "--replay", "1", "--json", out, "-o", text,
                  app_args=("--steps", "1000"))
    expect(r.rc == 0 and r.stdout.startswith("mode replay_poor_local"), "poor local, 1000 launches", r)
    # --quiet with -o: the what-if table is in the text report, and the replay's own time in the JSON.
    with open(text) as f:
        report_text = f.read()
    expect("What-if replays" in report_text and "Replay of `replay_saxpy`" in report_text and
           "speed-up" in report_text, "the what-if table is missing from the -q -o text report", r)
    with open(out) as f:
        replay_result = next(x for x in json.load(f)["results"] if x["id"] == "trace.replay")
    expect(replay_result["wall_seconds"] > 0, f"the replay's own time: {replay_result['wall_seconds']}")
    replays, findings = replays_of(out)
    saxpy = replays.get("replay_saxpy")
    expect(saxpy is not None and saxpy["status"] == "replayed", f"replay_saxpy not replayed: {saxpy}")
    sizes = [v for v in saxpy["variants"] if v["kind"] == "local_size"]
    expect(sizes and all(v["outputs"] == "identical" for v in sizes), "a local size changed saxpy's outputs")
    ranked = [f for f in findings if f["id"].startswith("trace.replay.") and f["kind"] == "ranked"]
    for f in ranked:
        expect("outputs identical" in f["title"] or "within tolerance" in f["title"], f"ranked: {f['title']}")
    # Groups of 2 work-items run 10-50x slower than the driver's choice: measured side by side and
    # confirmed whatever the machine does; ranked when the replay is reliable (its launch as captured
    # within the band of the traced ones: a test beside a parallel build may push it outside).
    best = max(sizes, key=lambda v: v["speedup"]["estimate"])
    expect(best["verdict"]["ranked"] and best["speedup"]["low"] >= 2,
           f"the fastest local size {best['label']}: {best['speedup']} {best['verdict']}")
    want = ["trace.replay.local_size"] if saxpy["reliable"] else []
    expect([f["id"] for f in ranked] == want,
           f"ranked what-ifs {[f['title'] for f in ranked]} of a replay {saxpy['reliability']}")
    # `clprobe report` on the saved report finds the same, the replay's findings included: they are
    # judged again from the saved pairs (rules/replay_analysis), not lost with the records.
    again = run("report", out, "--format", "json")
    expect(again.rc == 0, "report of the saved trace", again)
    refound = [(f["id"], f["kind"], f["title"]) for f in json.loads(again.stdout)["findings"]]
    expect(refound == [(f["id"], f["kind"], f["title"]) for f in findings], f"report re-found {refound}", again)


def modes_under(root):
    """{path relative to root: permission bits} of root and everything in it."""
    out = {".": os.stat(root).st_mode & 0o7777}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root)] = os.stat(path).st_mode & 0o7777
    return out


def test_captured_data_is_private_whatever_the_umask():
    # The records hold the program's buffers and sources: folders 0700, files 0600, even under umask 0.
    previous = os.umask(0)
    try:
        r, records = traced("replay_poor_local", "private", "--replay", "1", "--work", "0")
    finally:
        os.umask(previous)
    check_unchanged("replay_poor_local", r)
    modes = modes_under(records)
    expect(any(p.endswith("capture.json") for p in modes), f"no capture was written: {sorted(modes)}")
    expect(any(p.endswith(".rec") for p in modes), f"no records were written: {sorted(modes)}")
    shared = {p: oct(m) for p, m in modes.items() if m & 0o077}
    expect(not shared, f"records readable or writable by other users: {shared}")
    # An existing folder others may read is refused before the program starts, with one line;
    # --records-shared takes it (its files still private).
    open_folder = os.path.join(WORK, "open")
    os.makedirs(open_folder)
    os.chmod(open_folder, 0o755)
    marker = os.path.join(WORK, "open-started")
    r = run("trace", "--no-ceilings", "--records", open_folder, "--", "sh", "-c", f"touch {marker}")
    expect(r.rc == 3 and not os.path.exists(marker), f"a folder others may read: exit {r.rc}", r)
    lines = r.stderr.strip().splitlines()
    expect(len(lines) == 1 and "other users may read or write it (mode 0755)" in lines[0], "its one line", r)
    r = run("trace", "--no-ceilings", "--records", open_folder, "--records-shared", "--", "sh", "-c",
            f"touch {marker}")
    expect(r.rc == 0 and os.path.exists(marker), "--records-shared takes it", r)


CL_MEM_READ_ONLY = 4
CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT = 0x10F1, 0x10B5, 0x10DE
CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST = 0x1131, 0x1140
IMAGE_W, IMAGE_H = 64, 32


def image_pixels(k):
    """The trace app's source image times k, RGBA float, row by row: exact in float for small k."""
    return [k * v for y in range(IMAGE_H) for x in range(IMAGE_W) for v in (x * 0.25, y * 0.5, (x + y) * 0.125, 1.0)]


def image_sum(k):
    """replay_image_sum's float4: the pixels of image_pixels(k), summed channel by channel (exact)."""
    pixels = image_pixels(k)
    return [sum(pixels[c::4]) for c in range(4)]


def image_arg(index, flags):
    return {"index": index, "kind": "image", "size": IMAGE_W * IMAGE_H * 16, "flags": flags,
            "image_type": CL_MEM_OBJECT_IMAGE2D, "channel_order": CL_RGBA, "channel_type": CL_FLOAT,
            "element_size": 16, "width": IMAGE_W, "height": IMAGE_H, "depth": 1, "array_size": 1,
            "input": f"arg{index}.in", "output": f"arg{index}.out"}


def test_images_samplers_and_a_task_captured_exactly_and_replayed_bit_for_bit():
    # Round k writes dst = src x k, then a task sums dst; the 2nd of each is captured, so each
    # captured launch changes what it writes (a replay that did not run would not reproduce it).
    rc, stdout = untraced("replay_image")
    if rc == 77:
        print(f"SKIP {test_images_samplers_and_a_task_captured_exactly_and_replayed_bit_for_bit.__name__}: "
              "the device reports no CL_DEVICE_IMAGE_SUPPORT")
        return
    expect(rc == 0, f"replay_image untraced exit code {rc}")
    out = os.path.join(WORK, "image_replay.json")
    r, records = traced("replay_image", "image", "--replay", "2", "--capture-at", "2", "--json", out)
    expect(r.rc == 0 and r.stdout == stdout, f"capture changed replay_image's exit code or stdout\n{stdout}", r)
    got = captures(records)
    expect(set(got) == {"replay_image_scale", "replay_image_sum"}, f"captures {list(got)}")

    folder, c = got["replay_image_scale"]
    check_capture(folder, c, "replay_image_scale", [])
    expect(c["work_dim"] == 2 and c["global_size"] == [IMAGE_W, IMAGE_H] and c["local_size"] == [8, 4], f"sizes {c}")
    expect(c["args"][0] == image_arg(0, CL_MEM_READ_ONLY), f"src image {c['args'][0]}")
    expect(c["args"][1] == {"index": 1, "kind": "sampler", "normalized_coords": False,
                            "addressing_mode": CL_ADDRESS_CLAMP_TO_EDGE, "filter_mode": CL_FILTER_NEAREST},
           f"sampler {c['args'][1]}")
    expect(c["args"][2] == image_arg(2, CL_MEM_READ_WRITE), f"dst image {c['args'][2]}")
    expect(c["args"][3]["bytes_hex"] == struct.pack("<f", 2.0).hex(), f"k of the 2nd launch {c['args'][3]}")
    src = floats(image_pixels(1))
    expect(data(folder, "arg0.in") == src and data(folder, "arg0.out") == src, "src is not what the program wrote")
    expect(data(folder, "arg2.in") == src, "dst before the 2nd launch is not src x 1")
    expect(data(folder, "arg2.out") == floats(image_pixels(2)), "dst after the 2nd launch is not src x 2")

    folder, c = got["replay_image_sum"]
    check_capture(folder, c, "replay_image_sum", [16])
    # clEnqueueTask: the ND-range of one work-item in one group.
    expect(c["work_dim"] == 1 and c["global_size"] == [1] and c["local_size"] == [1], f"a task's sizes {c}")
    expect(c["args"][0] == image_arg(0, CL_MEM_READ_WRITE), f"summed image {c['args'][0]}")
    expect(data(folder, "arg0.in") == floats(image_pixels(2)), "the image the 2nd sum read")
    expect(data(folder, "arg1.in") == floats(image_sum(1)) and data(folder, "arg1.out") == floats(image_sum(2)),
           "the sums before and after the 2nd task")

    replays, _ = replays_of(out)
    for kernel in ("replay_image_scale", "replay_image_sum"):
        rep = replays.get(kernel)
        expect(rep is not None and rep["status"] == "replayed", f"{kernel} not replayed: {rep}")
        ref = rep["variants"][0]
        expect(ref["kind"] == "as_captured" and ref["outputs"] == "identical" and ref["failure"] is None,
               f"{kernel}: the launch as captured did not give the captured bytes: {ref}")
        # Every local size keeps these answers bit for bit (no floating-point reordering in them).
        for v in rep["variants"]:
            if v["kind"] == "local_size" and v["failure"] is None:
                expect(v["outputs"] == "identical", f"{kernel} at local size {v['label']}: {v['outputs']}")


if __name__ == "__main__":
    main([test_poor_local_saxpy_captured_at_its_second_launch, test_fast_math_inputs_and_outputs,
          test_build_options_chain, test_too_large_skipped_with_the_budget_reason,
          test_off_by_default_and_bad_values_exit_2,
          test_replayed_after_the_program_and_an_answer_changing_build_never_recommended,
          test_images_samplers_and_a_task_captured_exactly_and_replayed_bit_for_bit,
          test_captured_data_is_private_whatever_the_umask, test_a_kernel_launched_once_is_captured_at_its_first_launch,
          test_the_capture_is_not_the_programs_idle_time])
