"""Bad input and missing OpenCL: one clear line on stderr, exit code 2, nothing on stdout."""
import os
import stat

from clitest import expect, main, run, temp_dir


def check_usage_error(r, words, what):
    expect(r.rc == 2, f"{what}: exit code", r)
    for w in words:
        expect(w in r.stderr, f"{what}: stderr lacks '{w}'", r)
    expect(r.stdout == "", f"{what}: wrote to stdout", r)


def test_unknown_option_and_command():
    check_usage_error(run("diagnose", "--frobnicate"), ["--frobnicate"], "unknown option")
    check_usage_error(run("frobnicate"), ["frobnicate"], "unknown command")
    check_usage_error(run(), ["subcommand"], "no command")


def test_conflicting_modes():
    check_usage_error(run("diagnose", "--quick", "--full"), ["--quick", "--full"], "--quick with --full")


def test_bad_layers():
    # CLI11's validators: the option, the bad item and the valid values, on one line.
    check_usage_error(run("diagnose", "--layers", "kernel,gpu"), ["--layers", "gpu", "system,topology,transfer,kernel"],
                      "unknown layer")
    check_usage_error(run("diagnose", "--layers", ","), ["--layers"], "empty layer list")
    check_usage_error(run("diagnose", "--workloads", "glm,llama"), ["--workloads", "llama", "glm,attention,none"],
                      "unknown workload")
    check_usage_error(run("diagnose", "--workloads", "glm,none"), ["--workloads none"], "none with a workload")
    for args in (("--layers", "kernel,gpu"), ("--workloads", "llama")):
        r = run("diagnose", *args)
        expect(len(r.stderr.strip().splitlines()) == 1, f"{args}: message is not one line", r)
    check_usage_error(run("diagnose", "--glm-rows", "0"), ["--glm-rows"], "zero rows")
    check_usage_error(run("diagnose", "--glm-density", "1.5"), ["--glm-density"], "density above 1")
    check_usage_error(run("diagnose", "--attn-head-dim", "x"), ["--attn-head-dim"], "non-numeric head dim")


def test_bad_numbers_and_option_combinations():
    check_usage_error(run("diagnose", "--probe-timeout", "-3"), ["--probe-timeout"], "negative probe timeout")
    check_usage_error(run("diagnose", "--probe-timeout", "soon"), ["--probe-timeout"], "non-numeric probe timeout")
    check_usage_error(run("diagnose", "--device-pci", "0000:01:00.0"), ["--topology"], "--device-pci alone")
    check_usage_error(run("compare", "a.json"), ["b"], "compare with one report")


def test_bad_kernel_dir():
    check_usage_error(run("diagnose", "--layers", "kernel", "--quick", "--kernel-dir", "/nonexistent/k"),
                      ["not a folder"], "missing kernel dir")
    empty = temp_dir()
    check_usage_error(run("diagnose", "--layers", "kernel", "--quick", "--kernel-dir", empty),
                      ["no .cl files"], "empty kernel dir")


def test_no_opencl_platform():
    # ocl-icd finds drivers through OCL_ICD_VENDORS: an empty folder means no platform at all.
    empty = temp_dir()
    env = {"OCL_ICD_VENDORS": empty}
    for args in (["list"], ["info"], ["diagnose", "--quick"]):
        r = run(*args, env=env)
        check_usage_error(r, ["no OpenCL platform found", "CL_PLATFORM_NOT_FOUND_KHR"], " ".join(args))
        expect(len(r.stderr.strip().splitlines()) == 1, f"{args}: message is not one line", r)


def test_device_that_refuses_the_report():
    # /dev/full takes the file open and refuses every write (ENOSPC): exit 3, one line, and the
    # device node untouched (a temporary file renamed over it would have replaced it).
    if not os.path.exists("/dev/full"):
        return
    r = run("diagnose", "--layers", "system", "--quick", "-q", "--json", "/dev/full")
    expect(r.rc == 3 and "No space left on device" in r.stderr, "--json /dev/full", r)
    expect(len(r.stderr.strip().splitlines()) == 1, "--json /dev/full: message is not one line", r)
    expect(stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full is no longer a character device")
    r = run("diagnose", "--layers", "system", "--quick", "-q", "--json", "/dev/null")
    expect(r.rc == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode), "--json /dev/null", r)


def test_help_and_version_succeed():
    r = run("--help")
    expect(r.rc == 0 and "diagnose" in r.stdout, "--help", r)
    r = run("--version")
    expect(r.rc == 0 and r.stdout.strip(), "--version", r)


if __name__ == "__main__":
    main([test_unknown_option_and_command, test_conflicting_modes, test_bad_layers,
          test_bad_numbers_and_option_combinations, test_bad_kernel_dir,
          test_no_opencl_platform, test_device_that_refuses_the_report, test_help_and_version_succeed])
