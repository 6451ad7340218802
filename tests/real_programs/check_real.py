#!/usr/bin/env python3
"""Check what clprobe trace said about the real programs (a run_real.py output folder): exit 1 and
name every failure. Each program that ran: the traced run's exit code and stdout are the plain run's;
no fraction of a roof above 1.05 from a count that is not an upper bound; no finding ranked that its
own replay disproved or whose numbers are an estimate. Per program, the kernel the issue names is
bound by the roof it must be: CLBlast's SGEMM by fp32, hashcat's MD5 by int32 (an upper bound
allowed), pyopencl's copy by memory, its FMA chains by fp32, its integer mix by int32.

    check_real.py OUTDIR
"""
import json
import sys
from pathlib import Path

EXPECTED = {
    "clblast_sgemm": {"XgemmDirectTN": {"fp32"}},
    "hashcat": {"m00000_s04": {"int32"}},
    "pyopencl_programs": {"copy_f4": {"memory", "cache"}, "fma_f32": {"fp32"}, "int_mix": {"int32"}},
}


def check(out, name, res, failures):
    if "skipped" in res:
        print(f"{name}: skipped: {res['skipped']}")
        return
    plain, trace = res.get("plain", {}), res.get("trace", {})
    if plain.get("exit_code") != trace.get("exit_code"):
        failures.append(f"{name}: exit code {plain.get('exit_code')} plain, {trace.get('exit_code')} traced")
    if res.get("stdout_identical") is False and not res.get("stdout_identical_numbers_masked"):
        failures.append(f"{name}: stdout changed under trace")
    report_file = out / f"{name}.json"
    if not report_file.exists():
        failures.append(f"{name}: no report")
        return
    report = json.loads(report_file.read_text())
    program = next(p for p in report["results"] if p["id"] == "trace.program")
    work = {w["kernel"]: w for w in program["attributes"]["facts"].get("work", [])}
    binding = {}
    for m in program["measurements"]:
        if m["metric"] != "app.kernel.roof_fraction":
            continue
        kernel, roof, value = m["labels"]["kernel"], m["labels"]["roof"], m["summary"]["median"]
        if "the binding roof" in m.get("note", ""):
            binding[kernel] = roof
        if value > 1.05 and not work.get(kernel, {}).get("upper_bound"):
            failures.append(f"{name}: {kernel} at {value:.3g} of its {roof} roof")
    for kernel, roofs in EXPECTED.get(name, {}).items():
        w = work.get(kernel)
        if not w or not w.get("counted"):
            failures.append(f"{name}: {kernel} not counted: {(w or {}).get('reason', 'not among the hottest')}")
        elif binding.get(kernel) not in roofs:
            failures.append(f"{name}: {kernel} bound by {binding.get(kernel)}, expected {sorted(roofs)}")
    for f in report["findings"]:
        if f.get("kind") == "ranked" and (f.get("not_ranked") or f["title"].endswith("(measured: no gain)")):
            failures.append(f"{name}: ranked though not rankable: {f['id']}: {f['title']}")
    print(f"{name}: checked ({len(work)} kernels counted or not, binding roofs {binding})")


def main():
    out = Path(sys.argv[1])
    results = json.loads((out / "results.json").read_text())
    results.pop("_machine", None)
    failures = []
    for name, res in results.items():
        check(out, name, res, failures)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
