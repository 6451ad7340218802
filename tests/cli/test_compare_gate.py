"""`compare --fail-on-regression` as CI uses it, on real runs of this machine (PoCL): one command per
side, `diagnose --passes 2`.

Quick runs restricted to the kernel layer and memory-level GLM and decode shapes (the GLM matrix and
the KV cache at least 4x the last cache, where this machine's runs move least), each of two passes
(docs/report-schema.md, "Passes": compare holds A's second pass as a repeat of A, which measures how
far figures move between runs of one build, and B's as a repeat of B, so a difference counts only
when both of B's passes show it): a baseline, then the same machine again, one compute unit fewer
(POCL_MAX_PTHREAD_COUNT=1, where the device has two or more), and a planted slower GLM kernel (an
edited copy of kernels/glm/gradient.cl run with --kernel-dir). The gate must pass the same machine,
fail on the lost compute unit naming the compute units and the ceilings, and fail on the planted
kernel naming the GLM metrics and no other workload's. The drift model (docs/report-schema.md,
"Machine drift", "Movement between runs" and "Repeats of B") is what makes the first two hold on a
machine whose throughput switches state; the cross-driver case is in test_second_driver.py.
"""
import os
import shutil

from clitest import SOURCE_DIR, expect, load_json, main, run, temp_dir

GLM_COLS = 64


def last_cache_bytes():
    """The host's last cache (PoCL's CPU device is the host's CPU); 32 MiB where sysfs does not say."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    for index in (os.listdir(base) if os.path.isdir(base) else []):
        try:
            with open(os.path.join(base, index, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
        best = max(best, int(text.rstrip("KM")) * scale)
    return best or 32 * 1024 * 1024


def memory_level(step, bytes_per_item):
    """The least multiple of `step` items whose working set is at least 4x the last cache (as the
    GLM's default rows, glm::memory_level_rows): no larger, so three copies still fit a device whose
    memory follows the host's free memory (PoCL), and every run gets the same shape."""
    items = -(-4 * last_cache_bytes() // bytes_per_item)
    return max(step, -(-items // step) * step)


ATTN_HEADS, HEAD_DIM = 4, 64
SHAPES = ("--glm-rows", str(memory_level(65536, GLM_COLS * 4)), "--glm-cols", str(GLM_COLS), "--glm-batch", "16384",
          "--attn-seq", "64", "--attn-heads", str(ATTN_HEADS), "--attn-head-dim", str(HEAD_DIM), "--attn-kv-len",
          str(memory_level(4096, ATTN_HEADS * HEAD_DIM * 2 * 4)))  # K and V of fp32, attention::kv_len_step
PASSES = 2  # per side: the gate of one command per side (diagnose --passes 2)

_runs = {}
_load_before = os.getloadavg()[0]  # before any run of this test


def planted_kernels():
    """A copy of kernels/ whose GLM gradient loads pay dependent arithmetic on a zero the compiler
    cannot see (the global offset), twice per load: results unchanged, every gradient variant slower.
    The issue's +50%: at the gate's memory-level shape, the median variant took 1.55x and 1.59x its
    plain time in two alternating runs on the 2-vCPU VM; once per load gave 1.08x and 1.36x."""
    d = os.path.join(temp_dir(), "kernels")
    shutil.copytree(os.path.join(SOURCE_DIR, "kernels"), d)
    path = os.path.join(d, "glm", "gradient.cl")
    with open(path) as f:
        text = f.read()
    loads = {w: f"#define LOAD_{w}(i, ptr) vload{w}(i, ptr)" for w in (2, 4, 8, 16)}
    loads[1] = "#define LOAD_1(i, ptr) ((ptr)[i])"
    for w, line in loads.items():
        expect(line in text, f"kernels/glm/gradient.cl no longer defines {line!r}: update the planted copy")
        text = text.replace(line, line.replace("#define LOAD_", "#define PLAIN_LOAD_") + "\n" +
                            f"#define LOAD_{w}(i, ptr) SLOW(SLOW(PLAIN_LOAD_{w}(i, ptr)))")
    slow = ("#define OPAQUE_ZERO ((REAL)get_global_offset(0))\n"
            "#define SLOW(v) ((v) + OPAQUE_ZERO * (((v) * (v) + (v)) * ((v) + OPAQUE_ZERO * (v) * (v))))\n")
    text = text.replace(loads[1].replace("#define LOAD_", "#define PLAIN_LOAD_"),
                        slow + loads[1].replace("#define LOAD_", "#define PLAIN_LOAD_"), 1)
    with open(path, "w") as f:
        f.write(text)
    return d


def diagnose(name, *extra, env=None):
    if name not in _runs:
        path = os.path.join(temp_dir(), f"{name}.json")
        r = run("diagnose", "--quick", "--layers", "kernel", "--workloads", "glm,attention", *SHAPES, "--passes",
                str(PASSES), *extra, "--json", path, env=env, timeout=1200)
        expect(r.rc == 0, f"diagnose {name} exited {r.rc}", r)
        with open(path) as f:
            doc = load_json(f.read(), r)
        # Every run must time the same work: a GLM cut to what the device memory holds (PoCL sizes
        # it from the host's free memory) would run another shape in each run.
        glm = [p for p in doc["results"] if p["id"] == "glm.gradient" and p["status"] == "ok"]
        expect(not glm or glm[0]["attributes"].get("rows") == int(SHAPES[1]),
               f"diagnose {name} ran the GLM on {glm[0]['attributes'].get('rows') if glm else '?'} rows, not "
               f"{SHAPES[1]} (device memory {doc['device']['global_mem_bytes']} bytes): the runs' shapes differ", r)
        _runs[name] = (path, doc)
    return _runs[name]


def baseline():
    """The baseline run, its passes the movement between runs; no further runs as compare arguments."""
    base, doc = diagnose("base")
    return base, doc, []


def candidate(name, *extra, env=None):
    """B's run (its second pass confirms the first), its document, and no further runs."""
    path, doc = diagnose(name, *extra, env=env)
    return path, doc, []


def gate(a, repeats, b, b_repeats):
    """compare --fail-on-regression (exit code, stderr) and the --json comparison."""
    g = run("compare", a, b, *repeats, *b_repeats, "--fail-on-regression")
    j = run("compare", a, b, *repeats, *b_repeats, "--json")
    expect(j.rc == 0, "compare --json", j)
    return g, load_json(j.stdout, j)


def called(doc):
    return [m for m in doc["metrics"] if not m["fact"] and m["verdict"] in ("faster", "slower")]


def timed(doc):
    return [m for m in doc["metrics"] if not m["fact"] and m["verdict"] in ("faster", "slower", "within_noise")]


def disturbed(doc, prefix=""):
    """Metrics compare left not judged: other work shared the host with their probe in A or B."""
    return [m for m in doc["metrics"] if m["verdict"] == "disturbed" and m["metric"].startswith(prefix)]


def test_same_machine_twice_passes():
    base, _, repeats = baseline()
    again, _, more = candidate("again")
    g, doc = gate(base, repeats, again, more)
    expect(doc["baseline_runs"] == PASSES, f"A's passes were not used: {doc['baseline_runs']}")
    expect(doc["candidate_runs"] == PASSES, f"B's passes were not used: {doc['candidate_runs']}")
    moved = called(doc)
    expect(g.rc == 0, f"the gate failed two runs of one machine: {[m['metric'] for m in moved]}", g)
    expect(doc["machine"]["regressed"] is False, f"a machine shift between two runs: {doc['machine']['text']}")
    # Fewer than 2% of the timed metrics called different.
    expect(len(moved) < 0.02 * len(timed(doc)),
           f"{len(moved)} of {len(timed(doc))} timed metrics called different: "
           f"{[(m['metric'], m['labels'], round(m['ratio'], 3), m['method']) for m in moved]}")


def test_one_compute_unit_fewer_fails_naming_it():
    base, doc, repeats = baseline()
    units = doc["device"]["compute_units"]
    if units < 2:
        print("(one compute unit: nothing to take away, the case is not run)")
        return
    # A device can lose only the cores it had: with other processes keeping the machine's CPUs busy
    # (1-minute load average at or above CPUs - 1 before the runs), two PoCL threads already get
    # about one core, and one thread computes as fast (measured: 117 GFLOP/s with one thread, 60-94
    # with two, at a load average of 6 on 2 CPUs). The gate is then right to pass; nothing is asserted.
    if _load_before >= (os.cpu_count() or 1) - 1:
        print(f"(load average {_load_before:.1f} on {os.cpu_count()} CPUs: no idle core to take away, "
              "the case is not asserted)")
        return
    fewer, fewer_doc, more = candidate("fewer", env={"POCL_MAX_PTHREAD_COUNT": str(units // 2)})
    expect(fewer_doc["device"]["compute_units"] < units, "POCL_MAX_PTHREAD_COUNT did not lower the compute units")
    g, cmp = gate(base, repeats, fewer, more)
    expect(g.rc == 4, "the gate passed a device with half its compute units", g)
    expect("device.compute_units" in g.stderr and "computes" in g.stderr, "the gate does not name the compute units",
           g)
    slower = {m["metric"] for m in called(cmp) if m["verdict"] == "slower"}
    if disturbed(cmp, "kernel.peak.fp"):
        print(f"(ceilings not judged: {disturbed(cmp, 'kernel.peak.fp')[0]['disturbance']})")
    else:
        expect(any(m.startswith("kernel.peak.fp") for m in slower), f"no ceiling called slower: {sorted(slower)}", g)
    expect(cmp["machine"]["shifts"][0]["series"] == "compute" and cmp["machine"]["shifts"][0]["verdict"] == "slower",
           f"the machine's compute is not called slower: {cmp['machine']['text']}")
    c = run("compare", base, fewer, *repeats, *more)
    expect(c.stdout.splitlines()[2].startswith("Machine: this device computes"),
           "the machine's shift is not the comparison's first line", c)


def test_planted_slower_kernel_fails_naming_that_workload():
    base, _, repeats = baseline()
    slow, _, more = candidate("planted", "--kernel-dir", planted_kernels())
    g, doc = gate(base, repeats, slow, more)
    # The gate judges only what was measured on a quiet host; a GLM probe that shared the CPUs with
    # other work in either run is reported as not judged, and there is nothing to assert.
    if disturbed(doc, "glm.gradient"):
        print(f"(not judged: {disturbed(doc, 'glm.gradient')[0]['disturbance']}; the case is not asserted)")
        return
    expect(g.rc == 4, "the gate passed a GLM kernel made slower", g)
    slower = [m for m in called(doc) if m["verdict"] == "slower"]
    # Named by its headline, or as a workload whose variants were slower together (the headline,
    # each run's best variant, can stay inside its band on this VM when the kernel lost 1.5x).
    expect(any(m["metric"].startswith("glm.gradient") and m["headline"] for m in slower) or
           any(f["family"] == "glm.gradient" for f in doc["family_regressions"]),
           f"the GLM gradient is not called slower: {[m['metric'] for m in slower]}", g)
    families = {f["family"] for f in doc["family_regressions"]}
    expect(all(f.startswith(("glm.", "kernel.")) for f in families),
           f"another workload called slower as a whole: {sorted(families)}", g)
    expect("glm.gradient" in g.stderr, "the gate does not name the GLM metric", g)
    # Another workload's single figures move as they do between two runs of one machine: no more of
    # them called than the same-machine case allows (its 2%), and none failing the gate (above).
    others = [m["metric"] for m in called(doc) if m["metric"].startswith("attention.")]
    expect(len(others) < 0.02 * len(timed(doc)),
           f"another workload's metrics called different: {others}, of {len(timed(doc))} timed figures", g)
    expect(doc["machine"]["regressed"] is False, f"the planted kernel read as a machine shift: {doc['machine']['text']}")


if __name__ == "__main__":
    main([test_same_machine_twice_passes, test_one_compute_unit_fewer_fails_naming_it,
          test_planted_slower_kernel_fails_naming_that_workload])
