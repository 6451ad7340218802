#!/usr/bin/env python3
"""Summarise a run_real.py output folder as Markdown (stdout): per program, exit codes, plain and
traced wall times, whether stdout was unchanged, the top 5 kernels by device time (share of the
program's traced wall time, clprobe's bandwidth estimate and its fraction of the memory roof), the
top 3 ranked findings, the replay's outcome per kernel, and what looks wrong.

    summarize_real.py OUTDIR [--top N] > OUTDIR/SUMMARY.md
"""
import argparse
import json
import sys
from pathlib import Path


def measurements(report, probe_id):
    for p in report.get("results", []):
        if p["id"] == probe_id:
            return p
    return None


def metric(probe, name, **labels):
    out = []
    for m in (probe or {}).get("measurements", []):
        if m["metric"] == name and all(m["labels"].get(k) == v for k, v in labels.items()):
            out.append(m)
    return out


def median(m):
    return m["summary"]["median"] if m else None


def fmt_s(x):
    if x is None:
        return "-"
    return f"{x:.3g} s" if x >= 1 else f"{x * 1e3:.3g} ms" if x >= 1e-3 else f"{x * 1e6:.3g} us"


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}g}"


def roof_fractions(ms):
    """[(roof, fraction, binds)] of a kernel's app.kernel.roof_fraction measurements."""
    out = []
    for m in ms.get("_roof_fractions", []):
        out.append((m["labels"].get("roof"), median(m), "the binding roof" in m.get("note", "")))
    return out


def si(x, unit):
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def work_cells(w, ms):
    """The counted-work cells of a kernel row: work per launch, intensity, binding roof."""
    if not w:
        return "-", "-", "-"
    if not w.get("counted"):
        return f"not counted: {w.get('reason', '')[:90]}", "-", "-"
    flops = w.get("flops_fp16", 0) + w.get("flops_fp32", 0) + w.get("flops_fp64", 0)
    moved = w.get("global_load_bytes", 0) + w.get("global_store_bytes", 0)
    parts = [si(w[f"flops_{p}"], f"FLOP {p}") for p in ("fp16", "fp32", "fp64") if w.get(f"flops_{p}")]
    if w.get("int_ops"):
        parts.append(si(w["int_ops"], "op int"))
    parts.append(si(moved, "B"))
    how = "exact" if w.get("method") == "exact" else f"sampled {w.get('groups_counted')}/{w.get('groups_total')}"
    if w.get("upper_bound"):
        how += ", unoptimised build: upper bounds"
    if w.get("like_share", 1) < 0.9:
        how += f", a size with {w['like_share'] * 100:.0f}% of its time"
    intensity = (f"{flops / moved:.3g} FLOP/B, {w.get('int_ops', 0) / moved:.3g} op/B" if moved else "-")
    fr = roof_fractions(ms)
    bind = [f"**{r} {f:.3g}**" for r, f, b in fr if b] + [f"{r} {f:.3g}" for r, f, b in fr if not b]
    return f"{', '.join(parts)} ({how})", intensity, ", ".join(bind) or "-"


def summarise(out, name, res, top, problems):
    lines = [f"## {name}", ""]
    if "skipped" in res:
        return lines + [f"Skipped: {res['skipped']}", ""]
    versions = ", ".join(f"{k} {v}" for k, v in res.get("versions", {}).items())
    lines.append(f"`{' '.join(res['argv'])}`" + (f" (env {res['env']})" if res.get("env") else ""))
    lines.append(f"Versions: {versions}")
    lines.append("")
    plain, trace = res.get("plain", {}), res.get("trace", {})
    report_file = out / f"{name}.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else None
    prog = measurements(report, "trace.program") if report else None
    app_wall = median((metric(prog, "app.wall_time") or [None])[0]) if prog else None
    others = None
    act = measurements(report, "system.activity") if report else None
    if act:
        others = median((metric(act, "system.activity.others_cpu") or [None])[0])
    ident = res.get("stdout_identical")
    masked = res.get("stdout_identical_numbers_masked")
    lines += [
        "| | plain | traced |",
        "| --- | --- | --- |",
        f"| exit code | {plain.get('exit_code')} | {trace.get('exit_code')} |",
        f"| wall time (runner, fork to exit) | {fmt_s(plain.get('wall_s'))} | {fmt_s(trace.get('wall_s'))} "
        f"(with ceilings and replay) |",
        f"| program's wall time (`app.wall_time`) | - | {fmt_s(app_wall)} |",
        f"| 1-min load average before, after | {plain.get('loadavg_1min', '-')} | {trace.get('loadavg_1min', '-')} |",
        f"| other processes' CPU share (`system.activity.others_cpu`) | - | "
        f"{'-' if others is None else f'{others:.0f}%'} |",
        f"| stdout unchanged | | {'yes' if ident else 'no'}"
        + ("" if masked is None else f" ({'same' if masked else 'differs'} with numbers masked)") + " |",
        "",
    ]
    if plain.get("exit_code") != trace.get("exit_code"):
        problems.append(f"{name}: exit code {plain.get('exit_code')} plain, {trace.get('exit_code')} traced")
    if ident is False and not masked:
        problems.append(f"{name}: stdout differs between the plain and the traced run")
    if report is None:
        return lines + ["No JSON report.", ""]

    peak = host_bw = None
    for p in report["results"]:
        for m in p.get("measurements", []):
            if m["metric"] == "kernel.peak.bandwidth":
                peak = median(m)
            if m["metric"] == "host.memory.bandwidth":
                host_bw = median(m)
    bw_probe = measurements(report, "kernel.bandwidth")
    roof_note = (f"memory roof `kernel.peak.bandwidth` {fmt(peak)} GB/s" if peak else
                 f"no memory roof: kernel.bandwidth {bw_probe['status'] if bw_probe else 'absent'}"
                 + (f" ({bw_probe.get('reason')})" if bw_probe and bw_probe.get("reason") else ""))
    if not peak:
        problems.append(f"{name}: {roof_note}, so no kernel has a fraction of the roof and "
                        "trace.kernel.below_roof is not evaluated")
    kernels = {}
    for m in prog.get("measurements", []):
        k = m["labels"].get("kernel")
        if k is not None and m["metric"] == "app.kernel.roof_fraction":
            kernels.setdefault(k, {}).setdefault("_roof_fractions", []).append(m)
        elif k is not None and m["metric"].startswith("app.kernel."):
            kernels.setdefault(k, {})[m["metric"][len("app.kernel."):]] = m
    ranked = sorted(kernels.items(), key=lambda kv: -median(kv[1].get("total_time")) or 0)
    lines.append(f"{len(kernels)} kernels; {roof_note}.")
    lines.append("")
    work = {w["kernel"]: w for w in (prog.get("attributes", {}).get("facts", {}).get("work") or [])}
    lines.append("| kernel | launches | device time | share of wall | median launch | bandwidth (est.) "
                 "| fraction of roof | roof it was held against (bandwidth / fraction) | counted work per launch "
                 "| intensity | binding roof, fraction (others) |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for k, ms in ranked[:top]:
        total = median(ms.get("total_time"))
        frac = median(ms.get("roofline_fraction"))
        bw = median(ms.get("bandwidth"))
        launches = median(ms.get("launches"))
        samples = ms.get("time", {}).get("summary", {})
        counted, intensity, binding = work_cells(work.get(k), ms)
        lines.append(f"| `{k}` | {fmt(launches, 6)} | {fmt_s(total)} | "
                     f"{(total / app_wall * 100) if total and app_wall else 0:.1f}% | "
                     f"{fmt_s(samples.get('median', 0) * 1e-6) if samples else '-'} | "
                     f"{fmt(bw)} GB/s | {fmt(frac)} | "
                     f"{fmt(bw / frac) + ' GB/s' if bw and frac else '-'} | {counted} | {intensity} | {binding} |")
        for part in roof_fractions(ms):
            if part[1] > 1.05 and not (work.get(k) or {}).get("upper_bound"):
                problems.append(f"{name}: `{k}` at {part[1]:.3g} of its {part[0]} roof (counted work)")
        if frac is not None and frac > 1:
            problems.append(f"{name}: `{k}` at {frac:.3g} x the memory roof")
        elif bw and host_bw and bw > 2 * host_bw:
            problems.append(f"{name}: `{k}`'s bandwidth estimate {bw:.3g} GB/s is {bw / host_bw:.0f}x the "
                            f"host's STREAM bandwidth ({host_bw:.3g} GB/s) on a CPU device")
    lines.append("")

    findings = [f for f in report.get("findings", []) if f.get("kind") == "ranked"]
    findings.sort(key=lambda f: f.get("rank", 99))
    lines.append(f"Ranked findings ({len(findings)}; top 3):")
    lines.append("")
    if not findings:
        lines.append("- none")
    for f in findings[:3]:
        g = f.get("estimated_gain")
        lines.append(f"- {f.get('rank')}. `{f['id']}` gain {g * 100:.1f}%: {f['title']}" if g is not None
                     else f"- {f.get('rank')}. `{f['id']}`: {f['title']}")
    notes = [f for f in report.get("findings", []) if f.get("kind") != "ranked"]
    if notes:
        lines.append("")
        lines.append("Notes (unranked): " + "; ".join(
            f"`{f['id']}` ({f['title'][:110]}{'...' if len(f['title']) > 110 else ''})" for f in notes))
    lines.append("")

    rp = measurements(report, "trace.replay")
    replay = ((rp or {}).get("attributes") or {}).get("replay") or {}
    if rp:
        lines.append(f"Replay (`trace.replay` {rp['status']}"
                     + (f": {rp.get('reason')}" if rp.get("reason") else "") + "):")
        lines.append("")
        for r in replay.get("replays", []):
            best = max((v for v in r.get("variants", []) if v.get("kind") != "as_captured"
                        and v.get("outputs") in ("identical", "within tolerance")),
                       key=lambda v: v.get("speedup") or 0, default=None)
            what = (f"replayed, {r.get('reliability')}; best what-if {best['kind']} {best['label']} "
                    f"{best['speedup']:.2f}x ({best['outputs']})" if r["status"] == "replayed" and best
                    else f"{r['status']}: {r.get('reason') or r.get('reliability')}")
            lines.append(f"- `{r['kernel']}`: {what}")
            if r["status"] == "replayed" and not r.get("reliable"):
                problems.append(f"{name}: replay of `{r['kernel']}` not reliable: {r.get('reliability')}")
            if r["status"] == "skipped" and "budget" in (r.get("reason") or ""):
                problems.append(f"{name}: replay of `{r['kernel']}` skipped: {r['reason']}")
        lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    out = Path(args.outdir)
    results = json.loads((out / "results.json").read_text())
    machine = results.pop("_machine", {})
    lines = [f"# Real programs under {' '.join(machine.get('clprobe_version', []))}", "",
             f"clprobe `{machine.get('clprobe')}`; PoCL {machine.get('pocl')}, ocl-icd "
             f"{machine.get('ocl_icd')}; OCL_ICD_VENDORS={machine.get('OCL_ICD_VENDORS')}.", ""]
    problems = []
    for name, res in results.items():
        lines += summarise(out, name, res, args.top, problems)
    lines += ["## What looks wrong (found mechanically; see also the notes above)", ""]
    lines += [f"- {p}" for p in problems] or ["- nothing found mechanically"]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
