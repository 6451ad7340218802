"""clprobe diagnose --quick under the lazy driver layer (tests/lazy_layer/lazy_layer.cpp): it exits 0, writes
its report, and every probe ends ok or unsupported. The layer aborts the process when a non-blocking
write's host memory changes before the command runs, and profiling read from an unfinished event ends a
probe with an error: either fails this test.

usage: diagnose_under_layer.py CLPROBE LAYER.so"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    clprobe, layer = sys.argv[1], sys.argv[2]
    env = dict(os.environ, OPENCL_LAYERS=layer)
    env.pop("CLPROBE_LAZY_ON_VIOLATION", None)  # the default: abort at the culprit
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        r = subprocess.run([clprobe, "diagnose", "--quick", "-q", "--json", path], env=env, capture_output=True,
                           text=True, timeout=1200)
        problems = []
        if r.returncode != 0:
            problems.append(f"exit code {r.returncode}")
        if "clprobe lazy layer:" in r.stderr:
            problems.append("the layer reported a spec violation")
        if not os.path.exists(path):
            problems.append("no report written")
        else:
            with open(path) as f:
                doc = json.load(f)
            for p in doc["results"]:
                if p["status"] not in ("ok", "unsupported"):
                    problems.append(f"{p['id']}: {p['status']}: {p.get('reason', '')}")
            if not doc["results"]:
                problems.append("no probe ran")
        if problems:
            print("\n".join(problems))
            print("--- stderr ---\n" + r.stderr[-6000:])
            return 1
        print(f"{len(doc['results'])} probes ok or unsupported under the lazy driver layer")
        return 0


if __name__ == "__main__":
    sys.exit(main())
