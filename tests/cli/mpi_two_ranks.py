"""clprobe diagnose --quick --layers network under `mpirun --oversubscribe -np 2` on this machine
(registered only when clprobe is built with MPI and mpirun exists): each rank writes its own
report, both reports hold the network probes ok with real figures, the typed world facts say who
is who, and the figures rank 0 timed and broadcast are the same in both reports.

Usage: python3 mpi_two_ranks.py <clprobe> <source dir> <mpirun>"""
import json
import math
import os
import subprocess
import sys

from clitest import BINARY, SOURCE_DIR, expect, load_json, temp_dir

MPIRUN = sys.argv[3] if len(sys.argv) > 3 else "mpirun"
OK_PROBES = ("network.world", "network.p2p", "network.allreduce", "network.device_buffers")


def run_two_ranks(out_dir):
    env = dict(os.environ)
    env.pop("CLPROBE_DEVICE", None)
    # Containers run tests as root; Open MPI refuses that unless told twice.
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    # --json takes clprobe's own {rank} placeholder; the shell's redirection needs the variable.
    script = f'exec "{BINARY}" diagnose --quick --layers network --workloads none -q ' \
             f'--json "{out_dir}/r-{{rank}}.json" > "{out_dir}/out-$OMPI_COMM_WORLD_RANK.txt"'
    # Shared memory and self only: no network interface is needed, and the single-copy mechanism
    # (CMA) is off because containers usually forbid ptrace between processes.
    cmd = [MPIRUN, "--oversubscribe", "-np", "2", "--mca", "btl", "self,vader",
           "--mca", "btl_vader_single_copy_mechanism", "none", "sh", "-c", script]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    expect(p.returncode == 0, f"mpirun failed (rc {p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")


def finite_positive(m):
    return m["samples"] and all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in m["samples"])


def check_report(doc, rank):
    results = {p["id"]: p for p in doc["results"]}
    for pid in OK_PROBES:
        expect(pid in results, f"rank {rank}: {pid} missing")
        p = results[pid]
        expect(p["status"] == "ok", f"rank {rank}: {pid} is {p['status']}: {p['reason']}")
    world = results["network.world"]["attributes"]["world"]
    expect(world["rank"] == rank and world["world_size"] == 2, f"rank {rank}: world facts {world}")
    expect(world["peer"] == 1 - rank, f"rank {rank}: peer {world['peer']}")
    expect(world["library_version"], f"rank {rank}: no MPI library version")
    metrics = {}
    for pid in OK_PROBES[1:]:
        for m in results[pid]["measurements"]:
            expect(finite_positive(m), f"rank {rank}: {m['metric']} {m['labels']} samples {m['samples']}")
            metrics.setdefault(m["metric"], []).append(m)
    for metric in ("network.p2p.latency", "network.p2p.bandwidth", "network.pair.bandwidth",
                   "network.allreduce.time", "network.allreduce.busbw", "network.device_buffers.allreduce_time"):
        expect(metric in metrics, f"rank {rank}: no {metric}")
    expect(len(metrics["network.p2p.bandwidth"]) >= 3, f"rank {rank}: p2p size sweep too short")
    return metrics


def test_two_ranks_two_reports():
    out = temp_dir()
    run_two_ranks(out)
    docs = []
    for rank in (0, 1):
        path = os.path.join(out, f"r-{rank}.json")
        expect(os.path.exists(path), f"rank {rank} wrote no report")
        with open(path) as f:
            docs.append(load_json(f.read()))
    m0, m1 = check_report(docs[0], 0), check_report(docs[1], 1)
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema:
        with open(os.path.join(SOURCE_DIR, "docs", "report.schema.json")) as f:
            schema = json.load(f)
        for doc in docs:
            jsonschema.validate(doc, schema)
    # Rank 0 timed the pair and broadcast: both reports carry the same samples.
    for metric in ("network.p2p.bandwidth", "network.allreduce.busbw"):
        expect([m["samples"] for m in m0[metric]] == [m["samples"] for m in m1[metric]],
               f"{metric} differs between the two reports")


if __name__ == "__main__":
    failed = 0
    try:
        test_two_ranks_two_reports()
        print("PASS test_two_ranks_two_reports")
    except Exception as e:  # noqa: BLE001 - report and fail
        import traceback
        traceback.print_exc(file=sys.stdout)
        failed = 1
    sys.exit(failed)
