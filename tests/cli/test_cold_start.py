"""A first run on a fresh machine (every cache folder empty) gives the same probe statuses as the
next, and the build probe still measures a cold build, a driver-cached one and a binary-cached
one. Where the driver keeps its own cache (PoCL), clprobe leaves the programs to it and keeps
only the build probe's subject in its binary cache: asking PoCL for CL_PROGRAM_BINARIES compiles
every kernel again (docs/architecture.md, "Kernel embedding and the binary cache")."""
import glob
import os

from clitest import SOURCE_DIR, expect, load_json, main, run, temp_dir

# The build probe, one ceiling and the launch probe: three programs, a quick run each.
ARGS = ("diagnose", "--quick", "--layers", "kernel", "--workloads", "none", "--probes",
        "kernel.build,kernel.launch,kernel.compute.fp32", "--json", "-")

_runs = {}


def cold_then_warm():
    """The same quick run twice on one pair of empty cache folders (clprobe's and PoCL's)."""
    if not _runs:
        root = temp_dir()
        env = {"XDG_CACHE_HOME": os.path.join(root, "xdg"), "POCL_CACHE_DIR": os.path.join(root, "pocl")}
        for name in ("cold", "warm"):
            r = run(*ARGS, env=env)
            expect(r.rc == 0, f"the {name} run failed", r)
            _runs[name] = load_json(r.stdout, r)
        _runs["cache"] = os.path.join(root, "xdg", "clprobe")
    return _runs


def statuses(doc):
    return {p["id"]: p["status"] for p in doc["results"]}


def build_paths(doc):
    probe = next(p for p in doc["results"] if p["id"] == "kernel.build")
    return probe, {m["labels"]["path"]: m for m in probe["measurements"] if m["metric"] == "kernel.build.time"}


def test_cold_run_gives_the_warm_run_statuses():
    runs = cold_then_warm()
    expect(statuses(runs["cold"]) == statuses(runs["warm"]),
           f"cold {statuses(runs['cold'])} != warm {statuses(runs['warm'])}")
    expect(all(s == "ok" for s in statuses(runs["cold"]).values()), f"statuses: {statuses(runs['cold'])}")


def test_build_probe_measures_all_three_paths_in_both_runs():
    for name in ("cold", "warm"):
        probe, paths = build_paths(cold_then_warm()[name])
        expect(set(paths) == {"cold", "driver_cache", "binary_cache"},
               f"{name} run: kernel.build measured {sorted(paths)}, attributes {probe.get('attributes')}")
        for path, m in paths.items():
            expect(len(m["samples"]) >= 2, f"{name} run: {path} has {len(m['samples'])} samples")


def test_driver_verdict_decides_what_clprobe_keeps():
    runs = cold_then_warm()
    verdicts = glob.glob(os.path.join(runs["cache"], "driver-caching-*.txt"))
    expect(len(verdicts) == 1, f"one verdict file per driver: {verdicts}")
    with open(verdicts[0]) as f:
        verdict = f.read().splitlines()[1]
    binaries = glob.glob(os.path.join(runs["cache"], "*.clbin"))
    platform = runs["cold"]["device"]["platform_name"]
    if "Portable Computing Language" in platform:
        expect(verdict == "caches", f"PoCL keeps a kcache; verdict: {verdict}")
    if verdict == "caches":
        # The build probe's subject, stored so its binary-cache load is measured; nothing else.
        expect(len(binaries) == 1, f"{len(binaries)} binaries kept for a driver that caches")
    else:
        expect(len(binaries) >= 2, f"{len(binaries)} binaries kept for a driver without a cache")


def test_stored_verdict_without_cache_keeps_every_program():
    # The verdict file is read, not judged again: a driver said to cache nothing gets every program
    # of the run in clprobe's binary cache.
    root = temp_dir()
    cache = os.path.join(root, "xdg", "clprobe")
    env = {"XDG_CACHE_HOME": os.path.join(root, "xdg"), "POCL_CACHE_DIR": os.path.join(root, "pocl")}
    first = run(*ARGS, env=env)
    expect(first.rc == 0, "first run", first)
    for path in glob.glob(os.path.join(cache, "driver-caching-*.txt")):
        with open(path) as f:
            lines = f.read().splitlines()
        lines[1] = "does_not_cache"
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
    for path in glob.glob(os.path.join(cache, "*.clbin")):
        os.remove(path)
    second = run(*ARGS, env=env)
    expect(second.rc == 0, "second run", second)
    binaries = glob.glob(os.path.join(cache, "*.clbin"))
    expect(len(binaries) >= 2, f"{len(binaries)} binaries after a does_not_cache verdict")


# One workload whose first launches the builders warm up (probes/program_needs, warm_up_groups).
WARM_ARGS = ("diagnose", "--quick", "--layers", "kernel", "--workloads", "glm", "--probes", "glm.gradient",
             "--json", "-")


def fresh_env():
    root = temp_dir()
    return root, {"XDG_CACHE_HOME": os.path.join(root, "xdg"), "POCL_CACHE_DIR": os.path.join(root, "pocl")}


def gradient_ok(r, name):
    expect(r.rc == 0, f"the {name} run failed", r)
    doc = load_json(r.stdout, r)
    expect(statuses(doc).get("glm.gradient") == "ok", f"{name} run: {statuses(doc)}")
    return doc


def stamps(root):
    return sorted(glob.glob(os.path.join(root, "xdg", "clprobe", "warmed-up-*.txt")))


def launch_shapes(root):
    """PoCL's compiled work-group functions: kernel and local size (the grid-size flag dropped: the
    warm-up's rows are fewer, so a launch over a grid at the device's limit compiles its small-grid twin)."""
    found = set()
    for path in glob.glob(os.path.join(root, "pocl", "**", "*.so"), recursive=True):
        parts = path.split(os.sep)
        found.add((parts[-3], parts[-2].replace("-smallgrid", "")))
    return found


def test_workload_warm_up_runs_once_per_machine():
    root, env = fresh_env()
    doc = gradient_ok(run(*WARM_ARGS, env=env), "cold")
    first = stamps(root)
    expect(len(first) == 1, f"one warm-up stamp for glm.gradient: {first}")
    with open(first[0]) as f:
        key = f.read()
    expect("probe=glm.gradient\n" in key and "mode=quick\n" in key, f"stamp key: {key!r}")
    inode = os.stat(first[0]).st_ino
    gradient_ok(run(*WARM_ARGS, env=env), "warm")
    expect(stamps(root) == first and os.stat(first[0]).st_ino == inode,
           "the warm run warmed up again (its stamp was rewritten)")
    if "Portable Computing Language" not in doc["device"]["platform_name"]:
        return
    # The warm-up launched what the probe launches and nothing else: the same work-group functions
    # as a cold run without warm-ups.
    plain_root, plain_env = fresh_env()
    gradient_ok(run(*WARM_ARGS, env={**plain_env, "CLPROBE_WARM_UP": "0"}), "plain cold")
    expect(not stamps(plain_root), f"CLPROBE_WARM_UP=0 left stamps: {stamps(plain_root)}")
    warmed, plain = launch_shapes(root), launch_shapes(plain_root)
    expect(plain and warmed == plain,
           f"warm-up compiled {sorted(warmed - plain)} the probe does not launch; missed {sorted(plain - warmed)}")


def test_no_warm_up_for_kernels_from_a_folder():
    # Edited kernels (--kernel-dir) are timed as they are, and their stamps would name the wrong text.
    root, env = fresh_env()
    kernels = os.path.join(SOURCE_DIR, "kernels")
    gradient_ok(run(*WARM_ARGS, "--kernel-dir", kernels, env=env), "--kernel-dir")
    expect(not stamps(root), f"stamps after a --kernel-dir run: {stamps(root)}")


if __name__ == "__main__":
    main([test_cold_run_gives_the_warm_run_statuses, test_build_probe_measures_all_three_paths_in_both_runs,
          test_driver_verdict_decides_what_clprobe_keeps, test_stored_verdict_without_cache_keeps_every_program,
          test_workload_warm_up_runs_once_per_machine, test_no_warm_up_for_kernels_from_a_folder])
