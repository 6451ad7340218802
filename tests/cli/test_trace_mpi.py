"""clprobe trace with MPI jobs (Open MPI's mpirun on this machine; skipped where it is missing).

- `mpirun -np 2 clprobe trace --json 'r-{rank}.json' -- app`: one trace report per rank, each
  saying which rank of how many it is; rank 1 runs eight slow kernels where rank 0 runs one, and
  `clprobe fleet` on the two reports names rank 1 and its kernel as the cause, in every format.
- `clprobe trace -- mpirun -np 2 app`: the ranks are processes of the job, each with its rank,
  every launch counted, the program's exit code kept.
- Bad input: trace and diagnose reports given to fleet together, and {rank} outside a launcher."""
import json
import os
import shutil
import subprocess

import jsonschema  # Debian's python3-jsonschema, as tests/cli/test_json_schemas.py

from clitest import BINARY, SOURCE_DIR, expect, load_json, main, run, temp_dir

APP = os.path.join(os.path.dirname(BINARY), "tests", "trace_programs", "clprobe_trace_app")
MPIRUN = shutil.which("mpirun")
WORK = temp_dir()
# Containers run tests as root; Open MPI refuses that unless told twice. The apps make no MPI
# calls, but the same transport settings as tests/cli/mpi_two_ranks.py keep mpirun off the network.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
MPI_ARGS = ["--oversubscribe", "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]


def mpirun(*argv, timeout=300):
    env = dict(os.environ)
    env.pop("CLPROBE_DEVICE", None)
    env.update(MPI_ENV)
    return subprocess.run([MPIRUN, *MPI_ARGS, "-np", "2", *argv], capture_output=True, text=True, env=env,
                          timeout=timeout)


def facts(report):
    return next(p for p in report["results"] if p["id"] == "trace.program")["attributes"]["facts"]


def launches(report):
    return sum(k["launches"] for k in facts(report)["kernels"])


RANK_REPORTS = []


def rank_reports():
    """Both ranks traced under mpirun, each with its own report (made once, shared by the tests)."""
    if RANK_REPORTS:
        return RANK_REPORTS
    # Rank 1 launches 8 kernels of ~100 ms, rank 0 one: rank 1 is slow by its kernels.
    script = f'exec "{BINARY}" trace --no-ceilings -q --json "{WORK}/r-{{rank}}.json" ' \
             f'--html "{WORK}/r-{{rank}}-of-{{size}}.html" -- "{APP}" long_kernels ' \
             f'--steps $((1 + 7 * OMPI_COMM_WORLD_RANK))'
    p = mpirun("sh", "-c", script)
    expect(p.returncode == 0, f"mpirun clprobe trace: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    for rank in (0, 1):
        path = os.path.join(WORK, f"r-{rank}.json")
        expect(os.path.exists(path), f"rank {rank} wrote no report\n{p.stderr[-3000:]}")
        expect(os.path.exists(os.path.join(WORK, f"r-{rank}-of-2.html")), f"rank {rank}: no r-{rank}-of-2.html")
        with open(path) as f:
            RANK_REPORTS.append(path)
            doc = load_json(f.read())
        launch = doc.get("launch")
        expect(launch is not None and launch["rank"] == str(rank) and launch["size"] == 2
               and launch["launcher"] == "openmpi", f"rank {rank}: launch {launch}")
        expect(doc["host"]["hostname"], f"rank {rank}: no host name")
        expect(launches(doc) == 1 + 7 * rank, f"rank {rank}: {launches(doc)} launches recorded")
    return RANK_REPORTS


def test_one_report_per_rank_and_fleet_names_the_slow_rank():
    paths = rank_reports()
    r = run("fleet", "--json", *paths)
    expect(r.rc == 0, "fleet --json on two trace reports", r)
    doc = load_json(r.stdout, r)
    with open(os.path.join(SOURCE_DIR, "docs", "fleet-ranks.schema.json")) as f:
        errors = [e.message for e in jsonschema.Draft7Validator(json.load(f)).iter_errors(doc)]
    expect(not errors, f"fleet-ranks.schema.json rejects the output: {errors[:5]}")
    expect(doc["schema"] == "clprobe.fleet.ranks" and len(doc["ranks"]) == 2, "fleet: not a ranks analysis", r)
    expect(doc["size"] == 2 and doc["missing_ranks"] == [], f"fleet: size {doc['size']}, {doc['missing_ranks']}")
    slowest = doc["slowest"]
    expect(slowest["rank"] == "1" and slowest["slow"], f"fleet: slowest {slowest}")
    expect(slowest["excess_seconds"] > 0, f"fleet: excess {slowest['excess_seconds']}")
    cause = slowest["causes"][0]
    expect(cause["kind"] == "kernel" and cause["name"] == "slow_kernel" and cause["count"] == 8
           and cause["reference_count"] == 1, f"fleet: first cause {cause}")
    finding = doc["findings"][0]
    expect(finding["id"] == "fleet.rank.slow" and finding["rank"] == "1", f"fleet: finding {finding}")
    expect(any("kernel 'slow_kernel'" in e and "8 launches against 1" in e for e in finding["evidence"]),
           f"fleet: evidence {finding['evidence']}")
    for ranks in doc["ranks"]:
        expect(ranks["kernel_seconds"] > 0 and ranks["wall_seconds"] >= ranks["device_busy_seconds"] > 0,
               f"fleet: rank figures {ranks}")


def test_fleet_formats_and_exit_code_over_ranks():
    paths = rank_reports()
    text = run("fleet", *paths)
    expect(text.rc == 0 and "rank 1 is the slow rank" in text.stdout and "fleet.rank.slow" in text.stdout,
           "fleet text", text)
    md = run("fleet", "--md", *paths)
    expect(md.rc == 0 and "| rank |" in md.stdout and "`fleet.rank.slow`" in md.stdout, "fleet --md", md)
    html = run("fleet", "--html", *paths)
    expect(html.rc == 0 and html.stdout.startswith("<!DOCTYPE html>") and "fleet.rank.slow" in html.stdout
           and "slow_kernel" in html.stdout, "fleet --html", html)
    gate = run("fleet", "--fail-on-outlier", *paths)
    expect(gate.rc == 5 and "rank 1" in gate.stderr, "fleet --fail-on-outlier over ranks", gate)


def test_rank_html_page_has_the_process_table():
    rank_reports()
    with open(os.path.join(WORK, "r-1-of-2.html")) as f:
        page = f.read()
    expect("<h3>Processes (1 used OpenCL)</h3>" in page and "long_kernels" in page,
           "the trace page has no process table")


def test_trace_of_mpirun_counts_both_ranks():
    report_path = os.path.join(WORK, "job.json")
    html_path = os.path.join(WORK, "job.html")
    # Rank 0 launches 100 kernels, rank 1 200, and rank 1 exits with 3: mpirun passes it on.
    script = f'exec "{APP}" sync_each --steps $((100 + 100 * OMPI_COMM_WORLD_RANK)) ' \
             '--exit $((3 * OMPI_COMM_WORLD_RANK))'
    argv = [MPIRUN, *MPI_ARGS, "-np", "2", "sh", "-c", script]
    env = dict(MPI_ENV)
    untraced = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    r = run("trace", "--no-ceilings", "--json", report_path, "--html", html_path, "--", *argv, env=env)
    expect(r.rc == untraced.returncode and r.rc != 0, f"trace -- mpirun: exit {r.rc}, untraced {untraced.returncode}",
           r)
    with open(report_path) as f:
        report = json.load(f)
    expect(launches(report) == 300, f"trace -- mpirun: {launches(report)} of 300 launches", r)
    ranks = {p["rank"]: p for p in facts(report)["processes"] if p["opencl_commands"] > 0}
    expect(sorted(ranks) == ["0", "1"], f"trace -- mpirun: ranks {list(ranks)}", r)
    expect(ranks["0"]["opencl_commands"] == 102 and ranks["1"]["opencl_commands"] == 202,
           f"trace -- mpirun: commands per rank {[(k, v['opencl_commands']) for k, v in ranks.items()]}")
    expect("[rank 1]" in r.stderr, "trace -- mpirun: the text report's process tree names no rank", r)
    expect(report.get("launch") is None, "trace -- mpirun: clprobe itself ran under no launcher")
    with open(html_path) as f:
        page = f.read()
    expect("<th>rank</th>" in page, "trace -- mpirun: the HTML process table has no rank column")


def test_mixed_trace_and_diagnose_reports_are_refused():
    paths = rank_reports()
    diagnose = os.path.join(SOURCE_DIR, "tests", "fixtures", "reports", "default_quick.json")
    r = run("fleet", paths[0], diagnose, paths[1])
    expect(r.rc == 2, "fleet on trace and diagnose reports", r)
    expect(len(r.stderr.strip().splitlines()) == 1 and "not both" in r.stderr and r.stdout == "", "fleet mixed", r)


def test_rank_placeholder_outside_a_launcher():
    env = {k: "" for k in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")}
    r = run("trace", "--no-ceilings", "--json", os.path.join(WORK, "x-{rank}.json"), "--", APP, "sync_each",
            "--steps", "5", env=env)
    expect(r.rc == 2 and len(r.stderr.strip().splitlines()) == 1 and "{rank} needs a launcher" in r.stderr,
           "{rank} outside a launcher", r)
    expect("mode sync_each" not in r.stdout, "{rank} outside a launcher: the program was started", r)


if __name__ == "__main__":
    tests = [test_rank_placeholder_outside_a_launcher]
    if MPIRUN:
        tests = [test_one_report_per_rank_and_fleet_names_the_slow_rank, test_fleet_formats_and_exit_code_over_ranks,
                 test_rank_html_page_has_the_process_table, test_trace_of_mpirun_counts_both_ranks,
                 test_mixed_trace_and_diagnose_reports_are_refused, *tests]
    else:
        print("skipped the MPI tests: no mpirun on PATH")
        SKIPPED = ["test_one_report_per_rank_and_fleet_names_the_slow_rank",
                   "test_fleet_formats_and_exit_code_over_ranks", "test_rank_html_page_has_the_process_table",
                   "test_trace_of_mpirun_counts_both_ranks", "test_mixed_trace_and_diagnose_reports_are_refused"]
    main(tests)
