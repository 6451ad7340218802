"""`clprobe fleet` on generated report sets, and output-path placeholders under a launcher: an
outlier node is named with its environment difference, --fail-on-outlier exits 5, bad and foreign
reports are listed, one report is exit 2, and {rank} without a launcher is exit 2 before measuring."""
import copy
import json
import os
import shutil
import subprocess

from clitest import BINARY, SOURCE_DIR, expect, load_json, main, run, temp_dir

REAL = os.path.join(SOURCE_DIR, "tests", "fuzz", "corpus", "report_reader", "pocl_kernel_quick.json")
SCHEMA = os.path.join(SOURCE_DIR, "docs", "fleet.schema.json")


def scaled(doc, factor, layer=None):
    """Every timed measurement (of one layer, or all) scaled by `factor`, rates down, times up."""
    for p in doc["results"]:
        if layer and p["layer"] != layer:
            continue
        for m in p["measurements"]:
            if m["timer"] == "none":
                continue
            f = factor if m["higher_is_better"] else 1 / factor
            m["samples"] = [s * f for s in m["samples"]]
            for k in ("min", "max", "median", "mean", "stddev", "ci95_low", "ci95_high"):
                m["summary"][k] *= f
    return doc


def fleet_dir(n=6, slow=3):
    """n nodes within +-0.4%; node `slow` has another driver and kernels at half speed (the fixture's
    own cv is up to 18%, so the band is wide)."""
    d = temp_dir()
    with open(REAL) as f:
        base = json.load(f)
    paths = []
    for i in range(n):
        doc = scaled(copy.deepcopy(base), 1 + 0.004 * (i % 3 - 1))
        doc["host"]["hostname"] = f"node{i}"
        if i == slow:
            doc["device"]["driver_version"] = "9.9-other"
            scaled(doc, 0.5, "kernel")
        paths.append(os.path.join(d, f"node{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    return d, paths


def test_text_names_the_outlier_and_its_driver():
    _, paths = fleet_dir()
    r = run("fleet", *paths)
    expect(r.rc == 0, "exit code", r)
    expect("Fleet: 6 node(s)" in r.stdout, "node count", r)
    outliers = r.stdout.split("Outliers:")[1].split("Findings on only some nodes")[0]
    expect("node3" in outliers and "worse" in outliers, "node3 is the worse outlier", r)
    expect("device.driver_version = 9.9-other" in outliers, "the driver difference is named", r)
    for other in ("node0", "node1", "node2", "node4", "node5"):
        expect(other not in outliers, f"{other} is not an outlier", r)


def test_json_validates_against_the_schema():
    import jsonschema  # Debian's python3-jsonschema

    _, paths = fleet_dir()
    r = run("fleet", "--json", *paths)
    expect(r.rc == 0, "exit code", r)
    doc = load_json(r.stdout, r)
    with open(SCHEMA) as f:
        fleet = json.load(f)
    # machine_choice's shape lives in machine-choice.schema.json, referenced by its $id.
    with open(os.path.join(SOURCE_DIR, "docs", "machine-choice.schema.json")) as f:
        choice = json.load(f)
    resolver = jsonschema.RefResolver.from_schema(fleet, store={choice["$id"]: choice})
    jsonschema.Draft7Validator(fleet, resolver=resolver).validate(doc)
    expect(doc["nodes"] == 6 and doc["worse_outliers"] == 1, "one worse outlier of six", r)
    expect(doc["outliers"][0]["node"] == "node3", "node3", r)
    fields = {e["field"] for e in doc["outliers"][0]["environment"]}
    expect("device.driver_version" in fields, "driver named", r)


def test_fail_on_outlier_exits_5_and_a_healthy_fleet_0():
    _, paths = fleet_dir()
    r = run("fleet", "--fail-on-outlier", *paths)
    expect(r.rc == 5, "exit code 5", r)
    expect(len(r.stderr.strip().splitlines()) == 1 and "node3" in r.stderr, "one line naming node3", r)
    healthy = [p for p in paths if not p.endswith("node3.json")]
    r = run("fleet", "--fail-on-outlier", *healthy)
    expect(r.rc == 0, "a healthy fleet passes", r)


def test_md_and_html():
    _, paths = fleet_dir()
    r = run("fleet", "--md", *paths)
    expect(r.rc == 0 and r.stdout.startswith("# Fleet of 6 node(s)"), "markdown", r)
    r = run("fleet", "--html", *paths)
    expect(r.rc == 0 and r.stdout.startswith("<!DOCTYPE html>") and "node3" in r.stdout, "html", r)


def test_format_option_and_its_shorthands():
    # --format takes its values from the fleet format table; --json, --html and --md stand for it.
    _, paths = fleet_dir()
    outputs = {}
    for fmt, shorthand in (("text", ()), ("md", ("--md",)), ("json", ("--json",)), ("html", ("--html",))):
        r = run("fleet", "--format", fmt, *paths)
        expect(r.rc == 0, f"--format {fmt}", r)
        short = run("fleet", *shorthand, *paths)
        expect(short.rc == 0 and short.stdout == r.stdout, f"--format {fmt} differs from {shorthand or 'the default'}",
               r)
        outputs[fmt] = r.stdout
    expect(len(set(outputs.values())) == 4, "two formats print the same")
    r = run("fleet", "--format", "csv", *paths)
    expect(r.rc == 2 and "--format" in r.stderr and len(r.stderr.strip().splitlines()) == 1 and r.stdout == "",
           "--format csv", r)
    r = run("fleet", "--format", "md", "--json", *paths)
    expect(r.rc == 2 and r.stdout == "", "--format with a shorthand", r)


def test_unreadable_foreign_and_other_device_reports_are_listed():
    d, paths = fleet_dir()
    with open(paths[0]) as f:
        doc = json.load(f)
    other_version = dict(doc, schema_version=99)
    other_device = copy.deepcopy(doc)
    other_device["device"]["name"] = "Another device"
    extra = {"v99.json": json.dumps(other_version), "other.json": json.dumps(other_device), "bad.json": "{not json"}
    for name, text in extra.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    r = run("fleet", "--json", *paths, *(os.path.join(d, n) for n in extra), os.path.join(d, "missing.json"))
    expect(r.rc == 0, "exit code", r)
    doc = load_json(r.stdout, r)
    reasons = {os.path.basename(u["source"]): u["reason"] for u in doc["unpaired"]}
    expect(doc["nodes"] == 6, "only the fleet's six are paired", r)
    expect("version 99 is not supported" in reasons["v99.json"], "schema version", r)
    expect("another device" in reasons["other.json"], "other device", r)
    expect("not valid JSON" in reasons["bad.json"], "bad json", r)
    expect("missing.json" in reasons, "missing file", r)


def test_fewer_than_two_reports_exit_2():
    d, paths = fleet_dir(n=2)
    for args in ([paths[0]], [paths[0], os.path.join(d, "missing.json")]):
        r = run("fleet", *args)
        expect(r.rc == 2, "exit code 2", r)
        expect(len(r.stderr.strip().splitlines()) == 1 and "two or more" in r.stderr, "one clear line", r)
    r = run("fleet")
    expect(r.rc == 2, "no report at all", r)


def test_rank_placeholder_without_a_launcher_exits_2_before_measuring():
    d = temp_dir()
    clean = {k: "" for k in ("SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")}
    r = run("diagnose", "--json", os.path.join(d, "r-{rank}.json"), env=clean, timeout=60)
    expect(r.rc == 2 and "{rank} needs a launcher" in r.stderr, "clear message", r)
    expect(len(r.stderr.strip().splitlines()) == 1, "one line", r)
    r = run("diagnose", "--html", os.path.join(d, "r-{node}.html"), env=clean, timeout=60)
    expect(r.rc == 2 and "unknown placeholder '{node}'" in r.stderr, "unknown placeholder", r)
    r = run("trace", "-o", os.path.join(d, "t-{rank}.txt"), "--no-ceilings", "--", "true", env=clean, timeout=60)
    expect(r.rc == 2 and "{rank}" in r.stderr, "trace too", r)
    expect(os.listdir(d) == [], "nothing written", r)


def test_rank_and_host_under_a_launcher_environment():
    d = temp_dir()
    env = {"SLURM_PROCID": "3", "SLURM_LOCALID": "1", "SLURM_NTASKS_PER_NODE": "2"}
    r = run("diagnose", "--quick", "--layers", "system", "--workloads", "none", "-q",
            "--json", os.path.join(d, "{host}-r{rank}.json"), env=env)
    expect(r.rc == 0, "exit code", r)
    host = os.uname().nodename.split(".")[0]
    path = os.path.join(d, f"{host}-r3.json")
    expect(os.path.exists(path), f"{path} written", r)
    with open(path) as f:
        launch = json.load(f)["launch"]
    expect(launch["launcher"] == "slurm" and launch["rank"] == "3", "launcher recorded", r)
    expect(launch["local_rank"] == 1 and launch["local_size"] == 2 and launch["took_turns"], "turn recorded", r)


def test_mpirun_two_ranks_write_two_reports():
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("SKIP mpirun is not installed")
        return
    d = temp_dir()
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", BINARY, "diagnose", "--quick", "--layers",
           "system", "--workloads", "none", "-q", "--json", os.path.join(d, "r-{rank}.json")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    expect(p.returncode == 0, f"mpirun exit code {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    expect(sorted(os.listdir(d)) == ["r-0.json", "r-1.json"], f"two reports: {os.listdir(d)}")
    ranks = set()
    for name in ("r-0.json", "r-1.json"):
        with open(os.path.join(d, name)) as f:
            launch = json.load(f)["launch"]
        expect(launch["launcher"] == "openmpi" and launch["took_turns"], f"{name}: {launch}")
        ranks.add(launch["rank"])
    expect(ranks == {"0", "1"}, f"ranks {ranks}")


if __name__ == "__main__":
    main([
        test_text_names_the_outlier_and_its_driver,
        test_json_validates_against_the_schema,
        test_fail_on_outlier_exits_5_and_a_healthy_fleet_0,
        test_md_and_html,
        test_format_option_and_its_shorthands,
        test_unreadable_foreign_and_other_device_reports_are_listed,
        test_fewer_than_two_reports_exit_2,
        test_rank_placeholder_without_a_launcher_exits_2_before_measuring,
        test_rank_and_host_under_a_launcher_environment,
        test_mpirun_two_ranks_write_two_reports,
    ])
