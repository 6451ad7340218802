"""Helpers for the command-line tests: run the real clprobe binary, check what it did.

Each test_*.py is one ctest test: `python3 test_x.py <clprobe> <source dir> <fault layer .so>`. A test
function that raises fails the file; every function runs even when an earlier one failed.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

BINARY = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "build/clprobe"
SOURCE_DIR = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else "."
FAULT_LAYER = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else ""


class Result:
    def __init__(self, rc, stdout, stderr):
        self.rc, self.stdout, self.stderr = rc, stdout, stderr

    def __repr__(self):
        return f"rc={self.rc}\n--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"


def run(*args, env=None, timeout=300, cwd=None):
    full_env = dict(os.environ)
    full_env.pop("CLPROBE_DEVICE", None)
    if env:
        full_env.update(env)
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, env=full_env, timeout=timeout, cwd=cwd)
    return Result(p.returncode, p.stdout, p.stderr)


def expect(condition, message, result=None):
    if not condition:
        raise AssertionError(message + ("\n" + repr(result) if result is not None else ""))


_temp_dirs = []


def _remove_temp_dirs():
    for d in _temp_dirs:
        shutil.rmtree(d, ignore_errors=True)


# Each test's folders go when its process ends; CLPROBE_KEEP_TEST_FILES=1 keeps them for a look.
if not os.environ.get("CLPROBE_KEEP_TEST_FILES"):
    atexit.register(_remove_temp_dirs)


def temp_dir():
    d = tempfile.mkdtemp(prefix="clprobe-cli-")
    _temp_dirs.append(d)
    return d


def load_json(text, result=None):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise AssertionError(f"not JSON: {e}\n{repr(result) if result else text[:2000]}")


def main(tests):
    # Every test_ function of the module runs: one left out of the list cannot fail, and three of
    # test_diagnose_report's did not run for many sessions. A module that leaves some out on
    # purpose (a missing tool) lists them in its own `SKIPPED` with the reason printed.
    module = sys.modules["__main__"]
    defined = {n for n, f in vars(module).items() if n.startswith("test_") and callable(f)}
    skipped = set(getattr(module, "SKIPPED", ()))
    missing = sorted(defined - {t.__name__ for t in tests} - skipped)
    if missing:
        print(f"FAIL test functions that never run: {', '.join(missing)}")
        sys.exit(1)
    failed = 0
    for test in tests:
        try:
            test()
            print(f"PASS {test.__name__}")
        except Exception:
            failed += 1
            print(f"FAIL {test.__name__}")
            traceback.print_exc(file=sys.stdout)
    print(f"{len(tests) - failed}/{len(tests)} passed")
    sys.exit(1 if failed else 0)
