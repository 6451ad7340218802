"""--save FORMAT=FILE (src/cli/report_outputs.cpp) on diagnose and trace: each file is what
`clprobe report FILE --format FORMAT` makes of the saved JSON, byte for byte; '-' puts a format on
diagnose's stdout; a bad FORMAT=FILE is exit 2 before anything runs, and a file that cannot be
written is exit 3 with one line and nothing left behind."""
import os

from clitest import expect, main, run, temp_dir

# The cheapest diagnose the CLI tests use: the system layer only, quick.
QUICK = ("diagnose", "--quick", "--layers", "system", "--workloads", "none")
TEXT_REPORT = " report\ndevice: "  # the text report's first lines: "clprobe X.Y.Z report", "device: ..."


def read(path):
    with open(path) as f:
        return f.read()


def check_like_report(json_path, path, fmt):
    r = run("report", json_path, "--format", fmt)
    expect(r.rc == 0, f"report --format {fmt}", r)
    expect(read(path) == r.stdout, f"{path} differs from `report --format {fmt}` of {json_path}")


def test_diagnose_saves_each_format_as_report_renders_it():
    d = temp_dir()
    host = os.uname().nodename.split(".")[0]
    p = {k: os.path.join(d, k) for k in ("r.json", "r.md", "r.txt", "{host}.csv", "r.gbench.json")}
    r = run(*QUICK, "--json", p["r.json"], "--save", "md=" + p["r.md"], "--save", "csv=" + p["{host}.csv"],
            "--save", "text=" + p["r.txt"], "--save=gbench=" + p["r.gbench.json"], "--save", "md=-")
    expect(r.rc == 0, "diagnose --save", r)
    csv = os.path.join(d, f"{host}.csv")
    expect(sorted(os.listdir(d)) == sorted(["r.json", "r.md", "r.txt", f"{host}.csv", "r.gbench.json"]),
           f"files: {sorted(os.listdir(d))}", r)
    for path, fmt in ((p["r.md"], "md"), (csv, "csv"), (p["r.txt"], "text"), (p["r.gbench.json"], "gbench")):
        check_like_report(p["r.json"], path, fmt)
    expect(r.stdout == read(p["r.md"]), "--save md=-: stdout is not the Markdown report", r)
    for line in (f"report written to {p['r.json']}", f"MD report written to {p['r.md']}",
                 f"CSV report written to {csv}"):
        expect(line in r.stderr.splitlines(), f"no progress line '{line}'", r)


def test_bad_save_values_exit_2_before_running():
    d = temp_dir()
    for cmd in (QUICK, ("trace", "--no-ceilings")):
        tail = ("--", "true") if cmd[0] == "trace" else ()
        for value, says in (("md5=" + os.path.join(d, "r.md"), "no format 'md5'"),
                            (os.path.join(d, "r.md"), "is not FORMAT=FILE"), ("md=", "no FILE")):
            r = run(*cmd, "--save", value, *tail)
            expect(r.rc == 2 and "--save" in r.stderr and says in r.stderr, f"{cmd[0]} --save {value}", r)
            expect(len(r.stderr.strip().splitlines()) == 1 and r.stdout == "", f"{cmd[0]} --save {value}: one line",
                   r)
    r = run(*QUICK, "--save", "md=-", "--json", "-")
    expect(r.rc == 2 and "only one report can go to stdout" in r.stderr and r.stdout == "", "two on stdout", r)
    r = run("trace", "--no-ceilings", "--save", "csv=-", "--", "true")
    expect(r.rc == 2 and "the program owns stdout" in r.stderr and r.stdout == "", "trace --save csv=-", r)
    expect(os.listdir(d) == [], "a refused command wrote files", r)


def test_a_save_that_cannot_be_written_exits_3():
    d = temp_dir()
    missing = os.path.join(d, "no", "such", "dir", "r.md")
    for cmd, tail in ((QUICK, ()), (("trace", "--no-ceilings"), ("--", "true"))):
        r = run(*cmd, "-q", "--save", "md=" + missing, *tail)
        expect(r.rc == 3 and "does not exist" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
               f"{cmd[0]} --save md=<missing folder>", r)
        if not os.path.exists("/dev/full"):
            continue
        r = run(*cmd, "-q", "--save", "csv=" + os.path.join(d, "ok.csv"), "--save", "csv=/dev/full", *tail)
        expect(r.rc == 3 and "No space left on device" in r.stderr, f"{cmd[0]} --save csv=/dev/full", r)
        expect(len(r.stderr.strip().splitlines()) == 1 and "written" not in r.stderr, "one line", r)
        expect(r.stdout == "", f"{cmd[0]}: a report on stdout after the failure", r)
        os.remove(os.path.join(d, "ok.csv"))  # written whole before the failing one
    expect(os.listdir(d) == [], f"left behind: {os.listdir(d)}")


def test_trace_saves_and_its_shorthands():
    d = temp_dir()
    p = {k: os.path.join(d, k) for k in ("t.json", "t.md", "t.csv", "t.txt")}
    r = run("trace", "--no-ceilings", "--json", p["t.json"], "--save", "md=" + p["t.md"], "--save",
            "csv=" + p["t.csv"], "-o", p["t.txt"], "--", "echo", "program output")
    expect(r.rc == 0 and r.stdout == "program output\n", "trace --save", r)
    for path, fmt in ((p["t.md"], "md"), (p["t.csv"], "csv"), (p["t.txt"], "text")):
        check_like_report(p["t.json"], path, fmt)
    expect(TEXT_REPORT not in r.stderr, "-o: the text report is on stderr as well", r)
    expect(f"MD report written to {p['t.md']}" in r.stderr, "no progress line for --save md", r)
    # --save text=FILE is -o FILE: the text report leaves stderr for the file.
    r = run("trace", "--no-ceilings", "--save", "text=" + p["t.txt"], "--", "true")
    expect(r.rc == 0 and TEXT_REPORT not in r.stderr and TEXT_REPORT in read(p["t.txt"]), "trace --save text=FILE",
           r)
    r = run("trace", "--no-ceilings", "--", "true")
    expect(r.rc == 0 and TEXT_REPORT in r.stderr, "without a text file the text report is not on stderr: the "
           "checks above prove nothing", r)


if __name__ == "__main__":
    main([test_diagnose_saves_each_format_as_report_renders_it, test_bad_save_values_exit_2_before_running,
          test_a_save_that_cannot_be_written_exits_3, test_trace_saves_and_its_shorthands])
