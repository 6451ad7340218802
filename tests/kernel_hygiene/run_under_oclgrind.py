"""Runs clprobe_kernel_hygiene under Oclgrind with its checks on; any logged error fails the test.

  run_under_oclgrind.py OCLGRIND PROGRAM [--set rest|glm]      the embedded kernels must be clean
  run_under_oclgrind.py OCLGRIND PROGRAM --planted-bug KERNELS a copy of KERNELS with an
                                                               out-of-bounds write must be caught
"""
import os
import shutil
import subprocess
import sys
import tempfile


def oclgrind_log(oclgrind, program, kernel_dir=None, kernel_set="rest"):
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "oclgrind.log")
        env = dict(os.environ)
        env.pop("CLPROBE_DEVICE", None)
        env["CLPROBE_HYGIENE_SET"] = kernel_set
        # The GLM set runs without --uninitialized: Oclgrind 21.10's checker aborts on its kernels
        # (memory errors and races are still checked).
        checks = ["--check-api", "--data-races"] + (["--uninitialized"] if kernel_set != "glm" else [])
        if kernel_dir:
            env["CLPROBE_KERNEL_DIR"] = kernel_dir
        p = subprocess.run([oclgrind] + checks + ["--log", log, program],
                           capture_output=True, text=True, env=env, timeout=850)
        print(p.stdout)
        print(p.stderr, file=sys.stderr)
        if p.returncode != 0 or "every kernel ran" not in p.stdout:
            print(f"kernel hygiene run failed (exit {p.returncode})")
            sys.exit(1)
        return open(log).read() if os.path.exists(log) else ""


def main():
    oclgrind, program = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 4 and sys.argv[3] == "--planted-bug":
        with tempfile.TemporaryDirectory() as d:
            kernels = os.path.join(d, "kernels")
            shutil.copytree(sys.argv[4], kernels)
            path = os.path.join(kernels, "peak", "bandwidth.cl")
            text = open(path).read()
            good = "for (uint k = 0; k < per_item; ++k) out[base + k] = in[base + k];"
            if good not in text:
                print("the planted bug's anchor is gone from peak/bandwidth.cl")
                sys.exit(1)
            open(path, "w").write(text.replace(good, good.replace("out[base + k]", "out[base + k + 1]")))
            log = oclgrind_log(oclgrind, program, kernels)
        if "Invalid write" not in log:
            print("Oclgrind did not catch an out-of-bounds write:\n" + log[:5000])
            sys.exit(1)
        print("Oclgrind caught the planted out-of-bounds write")
        return
    kernel_set = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--set" else "rest"
    log = oclgrind_log(oclgrind, program, kernel_set=kernel_set)
    if log.strip():
        print("Oclgrind reported:\n" + log[:20000])
        sys.exit(1)
    print("Oclgrind: no errors")


if __name__ == "__main__":
    main()
