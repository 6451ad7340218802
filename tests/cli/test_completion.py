"""Bash completion (src/cli/completion/clprobe.bash): the script is sourced in bash and its function
called with COMP_WORDS/COMP_CWORD (and COMP_LINE/COMP_POINT, as bash sets them) for a typed line;
the candidates are compared with what the binary itself accepts."""
import json
import os
import re
import subprocess

from clitest import BINARY, SOURCE_DIR, expect, main, run

SCRIPT = os.path.join(SOURCE_DIR, "src", "cli", "completion", "clprobe.bash")

# Sources the script, sets the completion variables for the line in $LINE (words split at blanks,
# the cursor at its end) and prints COMPREPLY one a line.
DRIVER = r"""
source "$1" || exit 90
read -ra COMP_WORDS <<<"$LINE"
[[ $LINE =~ [[:space:]]$ ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
if [[ $MODE == line ]]; then
    COMP_LINE=$LINE
    COMP_POINT=${#LINE}
fi
_clprobe || exit 91
printf '%s\n' "${COMPREPLY[@]}"
"""


def complete(line, mode="line"):
    """The candidates for `line` typed after the binary's path (as bash would offer them)."""
    env = dict(os.environ, LINE=f"{BINARY} {line}", MODE=mode)
    env.pop("CLPROBE_DEVICE", None)
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", DRIVER, "driver", SCRIPT], capture_output=True,
                       text=True, env=env, timeout=120)
    expect(p.returncode == 0, f"completion of '{line}' failed (rc {p.returncode}): {p.stderr}")
    return [c for c in p.stdout.split("\n") if c]


def help_options(*sub):
    """Every option name in `clprobe SUB --help` (CLI11: '  -d,--device TEXT  ...')."""
    r = run(*sub, "--help")
    expect(r.rc == 0, f"{sub} --help failed", r)
    names = set()
    for line in r.stdout.splitlines():
        m = re.match(r"^\s+(-[-\w,]+)", line)
        if m:
            names.update(n for n in m.group(1).split(",") if n.startswith("-"))
    return names


def script_list(name):
    """A value list as the script spells it: _clprobe_<name>="a b c"."""
    with open(SCRIPT) as f:
        m = re.search(rf'^_clprobe_{name}="([^"]*)"', f.read(), re.M)
    expect(m is not None, f"_clprobe_{name} not in the script")
    return m.group(1).split()


def test_subcommands_come_from_the_binary():
    got = set(complete(""))
    for sub in ("list", "info", "diagnose", "report", "compare", "trace", "--help", "--version"):
        expect(sub in got, f"'{sub}' not offered: {sorted(got)}")
    expect(complete("di") == ["diagnose"], f"'di' completes to {complete('di')}")
    expect(complete("tr") == ["trace"], "'tr' does not complete to trace")


def test_every_subcommands_options_match_its_help():
    for sub in ("list", "info", "diagnose", "report", "compare", "trace", "fleet", "replay"):
        got = set(complete(f"{sub} -"))
        want = help_options(sub)
        if sub == "trace":
            want.add("--")
        expect(got == want, f"{sub}: offered {sorted(got)}, help lists {sorted(want)}")
    expect(complete("diagnose --qu") == ["--quick", "--quiet"], "--qu: not --quick and --quiet")
    # Without COMP_LINE (COMP_WORDS and COMP_CWORD only) it completes the same.
    expect(complete("diagnose --fu", mode="words") == ["--full"], "COMP_WORDS-only completion differs")


def known_choices(option):
    """The values `clprobe diagnose` accepts for --layers/--workloads, from its own error message."""
    r = run("diagnose", option, "no-such-value")
    expect(r.rc == 2, f"diagnose {option} no-such-value: exit code", r)
    m = re.search(r"not in \{([^}]*)\}", r.stderr)  # CLI11's validator: "--layers: x not in {a,b}"
    expect(m is not None, f"diagnose {option}: no list of valid values", r)
    return [v.strip() for v in m.group(1).split(",")]


def report_formats(sub="report"):
    """The values `clprobe SUB --format` accepts, as its --help lists them (the format table)."""
    r = run(sub, "--help")
    m = re.search(r"--format [A-Z]+:\{([^}]*)\}", r.stdout)
    expect(m is not None, f"{sub} --help lists no --format values", r)
    return m.group(1).split(",")


def test_value_lists_match_the_binary():
    expect(script_list("layers") == known_choices("--layers"), "the script's layer list differs from the binary's")
    workloads = script_list("workloads")
    expect(workloads[-1] == "none" and workloads == known_choices("--workloads"),
           f"the script's workloads {workloads} differ from the binary's")
    formats = report_formats()
    expect(formats[0] == "text" and "gbench" in formats, f"report --help lists the formats {formats}")
    for f in formats:  # each a value report --format accepts: the run gets past option parsing
        r = run("report", "/nonexistent/r.json", "--format", f)
        expect(r.rc == 2 and "format" not in r.stderr.lower(), f"--format {f} refused", r)
    r = run("report", "/nonexistent/r.json", "--format", "no-such-format")
    expect(r.rc == 2 and "format" in r.stderr.lower(), "an unknown --format is accepted: the test proves nothing", r)


def test_layers_complete_after_the_last_comma():
    expect(complete("diagnose --layers ") == script_list("layers"), "first layer")
    expect(complete("diagnose --layers system,t") == ["system,topology", "system,transfer"],
           f"after a comma: {complete('diagnose --layers system,t')}")
    expect(complete("diagnose --layers system,topology,transfer,kernel,") == ["system,topology,transfer,kernel,network"],
           "the last layer left")
    expect(complete("diagnose -q --layers kernel,system,") ==
           ["kernel,system,topology", "kernel,system,transfer", "kernel,system,network"],
           "chosen layers are not offered again")
    # --layers=VALUE: bash replaces only what follows '=', so the candidates are the values alone.
    expect(complete("diagnose --layers=sys") == ["system"], f"--layers=sys: {complete('diagnose --layers=sys')}")


def test_probe_ids_from_list_probes():
    ids = [line.split()[0] for line in run("list", "--probes").stdout.splitlines()]
    expect("attention.decode" in ids, f"list --probes: {ids}")
    got = complete("diagnose --probes att")
    expect("attention." in got and "attention.decode" in got, f"--probes att: {got}")
    expect(all(c.startswith("att") for c in got), f"--probes att: {got}")
    got = complete("diagnose --skip kernel.launch,kernel.comp")
    expect("kernel.launch,kernel.compute.fp32" in got, f"--skip after a comma: {got}")


def test_workloads_and_format():
    expect(complete("diagnose --workloads ") == ["glm", "attention", "none"], "workloads")
    expect(complete("diagnose --workloads glm,") == ["glm,attention"], "none stands alone")
    expect(complete("report r.json --format ") == report_formats(), "formats")
    expect(complete("report r.json --format m") == ["md"], "--format m")


def test_fleet_format_and_save():
    fleet = report_formats("fleet")
    expect(fleet[0] == "text" and "csv" not in fleet, f"fleet --help lists the formats {fleet}")
    expect(complete("fleet a.json b.json --format ") == fleet, "fleet formats")
    # --save FORMAT=FILE: the report formats with '=', then files after it.
    want = [f + "=" for f in report_formats()]
    expect(complete("diagnose --save ") == want, f"diagnose --save offers {complete('diagnose --save ')}")
    expect(complete("trace --save c") == ["csv="], "trace --save c")
    here = os.path.basename(SCRIPT)
    folder = os.path.dirname(SCRIPT)
    prefix = os.path.join(folder, here[:-2])
    expect(complete(f"diagnose --save md={prefix}") == [os.path.join(folder, here)],
           f"--save md=FILE: {complete(f'diagnose --save md={prefix}')}")


def test_devices_from_list_json():
    r = run("list", "--json")
    expect(r.rc == 0, "list --json failed", r)
    selectors = [d["selector"] for p in json.loads(r.stdout)["platforms"] for d in p["devices"]]
    expect(selectors, "no device to complete")
    got = complete("info -d ")
    expect(got == selectors + ["gpu", "cpu", "accelerator"], f"-d offers {got}, list has {selectors}")
    expect(complete("diagnose --device c") == ["cpu"], "--device c")
    # "0:" is split at ':' by bash: what follows the colon is completed.
    platform = selectors[0].split(":")[0]
    want = [s.split(":")[1] for s in selectors if s.startswith(platform + ":")]
    expect(complete(f"info -d {platform}:") == want, f"-d {platform}: offers {complete(f'info -d {platform}:')}")


def test_trace_program_after_double_dash():
    expect("true" in complete("trace --no-ceilings -- tru"), "no command offered after --")
    expect(complete("trace -- /bin/true --") == [], "the traced program's options are not clprobe's")


if __name__ == "__main__":
    main([test_probe_ids_from_list_probes, test_subcommands_come_from_the_binary, test_every_subcommands_options_match_its_help,
          test_value_lists_match_the_binary, test_layers_complete_after_the_last_comma, test_workloads_and_format,
          test_fleet_format_and_save, test_devices_from_list_json, test_trace_program_after_double_dash])
