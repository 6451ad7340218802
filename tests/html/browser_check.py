#!/usr/bin/env python3
"""Every kind of HTML page clprobe writes, loaded in a real browser (Debian's chromium, headless,
driven by python3-selenium and chromium-driver), rendered from saved reports in tests/fixtures:

  - no horizontal overflow at 1,400 px and at 800 px (the page never scrolls sideways);
  - no SVG text outside its SVG (legends, labels and ticks stay inside their chart);
  - every chart (svg.plot) names its axes (text.axis-title.x and .y);
  - the trace page has a timeline (svg.timeline) with one lane per queue the program used;
  - every kind drawn on a timeline (kernels, transfers, enqueue calls, waits, builds, idle gaps) has
    its own colour and a legend entry, and each host-thread lane holds one kind;
  - a trace page links its Perfetto file when one was written, and carries no <pre> bar chart;
  - every pipeline stage worth a tenth of its row has its value printed on it, and no two charts
    of a page draw the same thing;
  - the fleet page names every node, with one dot strip per headline metric and each outlier
    named in the headline table with its deviation in %;
  - a trace page of a job's process has its process table (with the rank), and the fleet page of
    a job's ranks names the slow rank.

Full-page screenshots go to OUT (default: build/html-browser/). Exit 77 (ctest's skip) with a
message when no browser or driver is installed.

usage: browser_check.py CLPROBE SOURCE_DIR [--out DIR] [--page NAME]..."""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
WIDTHS = (1400, 800)


def skip(why):
    print(f"SKIP: {why}; install chromium, chromium-driver and python3-selenium to run this check")
    sys.exit(SKIP)


def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip("python3-selenium is not installed")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not chrome or not driver:
        skip("no chromium or chromedriver found")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
              "--force-device-scale-factor=1"):
        opts.add_argument(a)
    try:
        return webdriver.Chrome(service=Service(driver), options=opts)
    except Exception as e:  # no display libraries, a sandbox that cannot start...
        skip(f"chromium did not start ({str(e).splitlines()[0]})")


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def fleet_reports(base_path, work):
    """Four nodes from one saved run: three alike, one with another driver and half the kernel speed."""
    with open(base_path) as f:
        base = json.load(f)
    paths = []
    for i in range(4):
        doc = copy.deepcopy(base)
        doc["host"]["hostname"] = f"node{i}"
        for p in doc["results"]:
            for m in p.get("measurements", []):
                if m.get("timer") == "none":
                    continue
                f = 1 + 0.004 * (i % 3 - 1)
                if i == 2 and p.get("layer") == "kernel":
                    f *= 0.5
                f = f if m.get("higher_is_better", True) else 1 / f
                m["samples"] = [s * f for s in m.get("samples", [])]
                for k in ("min", "max", "median", "mean", "stddev", "ci95_low", "ci95_high"):
                    if k in m["summary"]:
                        m["summary"][k] *= f
        if i == 2:
            doc["device"]["driver_version"] = "9.9-other"
        paths.append(os.path.join(work, f"node{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    return paths


def rank_reports(base_path, work):
    """Two ranks of a traced job from one saved trace: rank 1 launches three times the kernels."""
    with open(base_path) as f:
        base = json.load(f)
    paths = []
    for i in range(2):
        doc = copy.deepcopy(base)
        doc["launch"] = {"launcher": "openmpi", "rank": str(i), "local_rank": i, "local_size": 2, "size": 2,
                         "took_turns": False, "waited": False, "turn_wait_seconds": 0}
        facts = next(p for p in doc["results"] if p["id"] == "trace.program")["attributes"]["facts"]
        extra = 2 * i * facts["stages"]["kernel"]
        for k in facts["kernels"]:
            k["launches"] *= 1 + 2 * i
            k["seconds"] *= 1 + 2 * i
        facts["stages"]["kernel"] += extra
        facts["run"]["wall_seconds"] += extra
        facts["processes"] = [{
            "pid": 1000 + i, "ppid": 999, "origin": "exec", "command_line": "./app --steps 2000", "rank": str(i),
            "end": "exit_handler", "exit_code": None, "signal": None, "start_seconds": 0,
            "wall_seconds": facts["run"]["wall_seconds"], "records_end_seconds": facts["run"]["wall_seconds"],
            "opencl_commands": facts["run"]["opencl_commands"], "commands_without_times": 0,
            "device_seconds": facts["stages"]["kernel"] + facts["stages"]["transfer"], "stages": facts["stages"]}]
        paths.append(os.path.join(work, f"rank{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    return paths


def pages(clprobe, source, work):
    """{name: (html path, expected queues or None, expectations)} for every page kind."""
    fixtures = os.path.join(source, "tests", "fixtures", "reports")
    out = {}
    names = sorted(f[:-5] for f in os.listdir(fixtures) if f.endswith(".json"))
    for name in names:
        src = os.path.join(fixtures, name + ".json")
        path = os.path.join(work, name + ".html")
        with open(path, "w") as f:
            f.write(run([clprobe, "report", src, "--format", "html"]))
        queues, expect = None, {}
        if name.startswith("trace_"):
            with open(src) as f:
                doc = json.load(f)
            program = next(p for p in doc["results"] if p["id"] == "trace.program")
            queues = program["attributes"]["facts"]["overlap"]["queues"]
            expect["perfetto"] = "perfetto_file" in program["attributes"]
        out[name] = (path, queues, expect)
    path = os.path.join(work, "fleet.html")
    with open(path, "w") as f:
        f.write(run([clprobe, "fleet", *fleet_reports(os.path.join(fixtures, "default_quick.json"), work),
                     "--format", "html"]))
    out["fleet"] = (path, None, {"nodes": [f"node{i}" for i in range(4)], "outlier": "node2"})
    ranks = rank_reports(os.path.join(fixtures, "trace_sync_each.json"), work)
    path = os.path.join(work, "trace_rank1.html")
    with open(path, "w") as f:
        f.write(run([clprobe, "report", ranks[1], "--format", "html"]))
    out["trace_rank1"] = (path, None, {"contains": ["<h3>Processes (1 used OpenCL)</h3>", "<th>rank</th>"]})
    path = os.path.join(work, "fleet_ranks.html")
    with open(path, "w") as f:
        f.write(run([clprobe, "fleet", *ranks, "--format", "html"]))
    out["fleet_ranks"] = (path, None, {"contains": ["rank 1 is the slow rank", "fleet.rank.slow", "add_one"]})
    return out


CHECKS_JS = r"""
const problems = [];
const vw = document.documentElement.clientWidth;
if (document.documentElement.scrollWidth > vw + 1) {
  const wide = [];
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.right > vw + 1 && !e.closest('.scroll') && wide.length < 3)
      wide.push(e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? '.' + e.className : '') +
                ' ' + Math.round(r.width) + 'px wide, right edge ' + Math.round(r.right));
  }
  problems.push('horizontal overflow: page is ' + document.documentElement.scrollWidth + ' px in a ' + vw +
                ' px window (' + wide.join('; ') + ')');
}
let outside = 0; const examples = [];
for (const svg of document.querySelectorAll('svg')) {
  const b = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll('text')) {
    const r = t.getBoundingClientRect();
    if (r.width === 0) continue;
    if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
      outside++;
      if (examples.length < 4) examples.push('"' + t.textContent.slice(0, 40) + '"');
    }
  }
}
if (outside) problems.push(outside + ' SVG text(s) outside their SVG, e.g. ' + examples.join(', '));
let charts = 0; const untitled = [];
for (const svg of document.querySelectorAll('svg')) {
  if (svg.querySelectorAll('text').length < 3) continue;  // swatches and icons
  charts++;
  const x = svg.querySelector('text.axis-title.x'), y = svg.querySelector('text.axis-title.y');
  if (!x || !y || !x.textContent.trim() || !y.textContent.trim()) {
    let h = svg.closest('figure') || svg;
    while (h && !/^H[23]$/.test(h.tagName)) h = h.previousElementSibling;
    untitled.push(h ? '"' + h.textContent.slice(0, 50) + '"' : '?');
  }
}
if (untitled.length)
  problems.push(untitled.length + ' of ' + charts + ' chart(s) without x and y axis titles, e.g. ' +
                untitled.slice(0, 3).join(', '));
// A stacked stage's tooltip reads "upload: 862 us (27% of 3.22 ms)": a stage worth a tenth of its
// row must have its value printed on the chart, not only in the tooltip.
let unprinted = 0; const hidden = [];
for (const svg of document.querySelectorAll('svg.plot')) {
  const texts = [...svg.querySelectorAll('text')].map(t => t.textContent);
  for (const r of svg.querySelectorAll('rect > title')) {
    const m = /^([^:]+): (\S+ \S+) \((\d+)% of /.exec(r.textContent);
    if (m && +m[3] >= 10 && !texts.some(t => t.includes(m[2]))) {
      unprinted++;
      if (hidden.length < 3) hidden.push(m[1] + ' ' + m[2]);
    }
  }
}
if (unprinted) problems.push(unprinted + ' stage value(s) only in tooltips, e.g. ' + hidden.join(', '));
// No chart repeats another: two charts whose bars carry the same tooltips draw the same data.
const seen = new Map(); let repeats = 0;
for (const svg of document.querySelectorAll('svg.plot')) {
  const titles = [...svg.querySelectorAll('rect > title')].map(t => t.textContent);
  if (titles.length < 2) continue;
  const key = titles.sort().join('\n');
  if (seen.has(key)) repeats++; else seen.set(key, true);
}
if (repeats) problems.push(repeats + ' chart(s) repeat another chart of the page');
return {problems: problems, charts: charts, height: document.documentElement.scrollHeight};
"""

# Trace pages: the timeline's kinds each in their own colour with a legend entry, one kind per
# host-thread lane, the Perfetto link, and the summary in tables rather than a <pre> of '#' bars.
TRACE_JS = r"""
const problems = [];
for (const pre of document.querySelectorAll('pre'))
  if (/#{3,}/.test(pre.textContent)) problems.push('a <pre> bar chart of # characters: ' + pre.textContent.slice(0, 60));
const timelines = document.querySelectorAll('svg.timeline, svg.zoomed');
if (!timelines.length) problems.push('no timeline');
const colours = new Map();
for (const svg of timelines) {
  const fig = svg.closest('figure');
  const legend = new Set([...fig.querySelectorAll('.legend [data-kind]')].map(e => e.dataset.kind));
  const gaps = new Set([...fig.querySelectorAll('.legend [data-gap]')].map(e => e.dataset.gap));
  // A span is a lane's rect with a tooltip ("wait clFinish: 1.00 ms at 2.00 ms") that is not a gap.
  const spans = [...svg.querySelectorAll('g.lane rect')].filter(r => r.querySelector('title') && !r.classList.contains('gap'));
  const kindOf = r => r.dataset.kind || r.querySelector('title').textContent.split(' ')[0];
  for (const r of spans) {
    const k = kindOf(r);
    if (!legend.has(k)) { problems.push('timeline kind "' + k + '" has no legend entry'); legend.add(k); }
    const fill = r.getAttribute('fill');
    if (colours.has(k) && colours.get(k) !== fill) problems.push('timeline kind "' + k + '" drawn in two colours');
    colours.set(k, fill);
  }
  for (const g of svg.querySelectorAll('rect.gap'))
    if (!gaps.has(g.dataset.gap || 'unclassified')) { problems.push('timeline gap "' + (g.dataset.gap || 'unclassified') + '" has no legend entry'); gaps.add(g.dataset.gap || 'unclassified'); }
  for (const lane of svg.querySelectorAll('g.lane[data-kind=thread]')) {
    const kinds = new Set(spans.filter(r => lane.contains(r)).map(kindOf));
    if (kinds.size > 1) problems.push('a host-thread lane mixes ' + [...kinds].join(', '));
  }
}
const fills = [...colours.values()];
if (new Set(fills).size !== fills.length) problems.push('two timeline kinds share a colour: ' + JSON.stringify([...colours]));
return {problems: problems, perfetto: document.querySelectorAll('a.perfetto').length};
"""

# The fleet page: every node by name, a dot strip per headline metric, the outlier named in the
# headline table with its deviation in %.
FLEET_JS = r"""
const [nodes, outlier] = arguments;
const problems = [];
const text = document.body.innerText;
for (const n of nodes) if (!text.includes(n)) problems.push('node ' + n + ' is not named on the page');
const headline = [...document.querySelectorAll('h2')].find(h => h.textContent.startsWith('Headline'));
let table = headline && headline.nextElementSibling;
while (table && !table.querySelector('table') && table.tagName !== 'TABLE' && table.tagName !== 'H2') table = table.nextElementSibling;
if (table && table.tagName === 'H2') table = null;
const rows = table ? table.querySelectorAll('tr') : [];
if (rows.length < 2) problems.push('no headline metrics table');
let strips = 0, named = 0;
for (const tr of [...rows].slice(1)) {
  if (tr.querySelector('svg.strip circle')) strips++;
  if (new RegExp(outlier + '\\s+[+\u2212-][0-9.]+%').test(tr.innerText)) named++;
}
if (strips !== rows.length - 1) problems.push((rows.length - 1 - strips) + ' headline metric(s) without a dot strip');
if (!named) problems.push('outlier ' + outlier + ' is not named with its deviation in % in the headline table');
return {problems: problems};
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("clprobe")
    ap.add_argument("source")
    ap.add_argument("--out", default=None)
    ap.add_argument("--page", action="append", help="check only these pages")
    args = ap.parse_args()
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.clprobe)), "html-browser")
    os.makedirs(out, exist_ok=True)
    driver = browser()
    failures = []
    with tempfile.TemporaryDirectory(prefix="clprobe-html-") as work:
        try:
            for name, (path, queues, expect) in pages(args.clprobe, args.source, work).items():
                if args.page and name not in args.page:
                    continue
                shutil.copy(path, os.path.join(out, name + ".html"))
                print(f"{name}: {os.path.getsize(path) / 1024:.0f} KiB")
                for width in WIDTHS:
                    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                           {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
                    driver.get("file://" + path)
                    result = driver.execute_script(CHECKS_JS)
                    for p in result["problems"]:
                        failures.append(f"{name} at {width} px: {p}")
                    if width == WIDTHS[0] and queues is not None:
                        lanes = driver.execute_script(
                            "return document.querySelectorAll('svg.timeline g.lane[data-kind=queue]').length")
                        if lanes != queues:
                            failures.append(f"{name}: timeline has {lanes} queue lane(s), the program used {queues}")
                        trace = driver.execute_script(TRACE_JS)
                        failures += [f"{name}: {p}" for p in trace["problems"]]
                        if expect.get("perfetto") and not trace["perfetto"]:
                            failures.append(f"{name}: the trace wrote a Perfetto file and the page does not link it")
                    if width == WIDTHS[0]:
                        page = driver.page_source
                        failures += [f"{name}: the page does not say {s!r}" for s in expect.get("contains", [])
                                     if s not in page]
                    if width == WIDTHS[0] and "nodes" in expect:
                        fleet = driver.execute_script(FLEET_JS, expect["nodes"], expect["outlier"])
                        failures += [f"{name}: {p}" for p in fleet["problems"]]
                    height = min(int(result["height"]), 16000)
                    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
                    shot = os.path.join(out, f"{name}-{width}.png")
                    driver.save_screenshot(shot)
                    print(f"  {width} px: {result['charts']} chart(s), {len(result['problems'])} problem(s), {shot}")
        finally:
            driver.quit()
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("all pages pass")


if __name__ == "__main__":
    main()
