"""Every write checked, --color, --version and the option validators: a report that stdout or a
device refuses ends in exit code 3 and one clear line; --color always/never hold through a pipe."""
import os
import re
import subprocess

from clitest import BINARY, SOURCE_DIR, Result, expect, load_json, main, run

FIXTURE = os.path.join(SOURCE_DIR, "tests", "fixtures", "reports", "pocl_kernel_quick.json")
QUICK = ("diagnose", "--layers", "system", "--quick", "-q")


def run_to(stdout, *args):
    # restore_signals (the default) gives clprobe SIGPIPE's default disposition, as a shell
    # does: clprobe itself must turn a closed pipe into exit code 3 rather than die of the signal.
    env = dict(os.environ)
    env.pop("CLPROBE_DEVICE", None)
    p = subprocess.run([BINARY, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    return Result(p.returncode, "", p.stderr)


def check_output_failure(r, what, reason):
    expect(r.rc == 3, f"{what}: exit code", r)
    expect(reason in r.stderr, f"{what}: stderr does not say '{reason}'", r)
    expect(len(r.stderr.strip().splitlines()) == 1, f"{what}: message is not one line", r)
    expect("written" not in r.stderr, f"{what}: claims a report was written", r)


def test_stdout_full_device():
    if not os.path.exists("/dev/full"):
        return
    with open("/dev/full", "w") as full:
        for fmt in ("json", "text", "html"):
            r = run_to(full, "report", FIXTURE, "--format", fmt)
            check_output_failure(r, f"report --format {fmt} > /dev/full", "No space left on device")
        r = run_to(full, "--help")
        check_output_failure(r, "--help > /dev/full", "standard output")


def test_stdout_closed_pipe():
    for args in (("report", FIXTURE, "--format", "json"), ("report", FIXTURE), ("compare", FIXTURE, FIXTURE)):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            r = run_to(write_end, *args)
        finally:
            os.close(write_end)
        check_output_failure(r, f"{' '.join(args[:1])} into a closed pipe", "Broken pipe")


def test_every_report_file_checked():
    # --json /dev/full is in test_bad_input; the other outputs of diagnose take the same path.
    if not os.path.exists("/dev/full"):
        return
    for option in ("--html", "--trace"):
        r = run(*QUICK, option, "/dev/full")
        check_output_failure(r, f"diagnose {option} /dev/full", "No space left on device")
        expect(r.stdout == "", f"{option} /dev/full: the text report was printed after the failure", r)


def test_color_through_a_pipe():
    env = {"NO_COLOR": ""}
    always = run("report", FIXTURE, "--color=always", env=env)
    expect(always.rc == 0 and "\x1b[" in always.stdout, "--color=always into a pipe has no colour", always)
    before = run("--color", "always", "report", FIXTURE, env=env)
    expect(before.rc == 0 and before.stdout == always.stdout, "--color before the command", before)
    forced = run("report", FIXTURE, "--color=always", env={"NO_COLOR": "1"})
    expect("\x1b[" in forced.stdout, "--color=always loses to NO_COLOR", forced)
    for args in (("--color=never",), ("--color=auto",), ()):
        r = run("report", FIXTURE, *args, env=env)
        expect(r.rc == 0 and "\x1b[" not in r.stdout, f"{args}: colour into a pipe", r)
    r = run("report", FIXTURE, "--color=sometimes")
    expect(r.rc == 2 and "--color" in r.stderr and r.stdout == "", "--color=sometimes", r)


def test_version_names_build_and_libraries():
    r = run("--version")
    expect(r.rc == 0, "--version", r)
    lines = r.stdout.strip().splitlines()
    expect(re.fullmatch(r"clprobe \d+\.\d+\.\d+", lines[0]), "first line is not 'clprobe X.Y.Z'", r)
    fields = dict(line.split(None, 1) for line in lines[1:])
    for field in ("git_commit", "build_type", "compiler", "hwloc_version", "icd_loader", "openblas", "fmt_version",
                  "cli11_version", "nlohmann_json_version"):
        expect(fields.get(field), f"--version lacks {field}", r)


def test_help_lists_layers_and_workloads():
    r = run("diagnose", "--help")
    expect(r.rc == 0, "diagnose --help", r)
    expect("system,topology,transfer,kernel" in r.stdout, "--help does not list the layers", r)
    expect("glm,attention,none" in r.stdout, "--help does not list the workloads", r)


def test_layer_lists_are_cleaned():
    # Spaces around items and repeats are accepted and dropped; the report records the clean list.
    r = run("diagnose", "--layers", "topology, topology", "--workloads", " none", "--quick", "-q", "--json", "-")
    expect(r.rc == 0, "diagnose --layers 'topology, topology'", r)
    doc = load_json(r.stdout, r)
    expect(doc["options"]["layers"] == ["topology"], f"layers: {doc['options']['layers']}", r)
    expect(doc["options"]["workloads"] == ["none"], f"workloads: {doc['options']['workloads']}", r)


def test_traced_program_keeps_default_sigpipe():
    # clprobe ignores SIGPIPE for its own writes; an ignored signal survives exec, so trace must
    # hand the program the default back (SigIgn is a hex mask, SIGPIPE = 13 is bit 12).
    r = run("trace", "--no-ceilings", "-q", "--", "grep", "SigIgn", "/proc/self/status")
    expect(r.rc == 0, "trace -- grep SigIgn: exit code", r)
    m = re.search(r"SigIgn:\s*([0-9a-fA-F]+)", r.stdout)
    expect(m is not None, "the program's own stdout is missing", r)
    expect(not int(m.group(1), 16) & (1 << 12), f"the traced program starts with SIGPIPE ignored: {m.group(0)}", r)


if __name__ == "__main__":
    main([test_stdout_full_device, test_stdout_closed_pipe, test_every_report_file_checked, test_color_through_a_pipe,
          test_version_names_build_and_libraries, test_help_lists_layers_and_workloads, test_layer_lists_are_cleaned,
          test_traced_program_keeps_default_sigpipe])
