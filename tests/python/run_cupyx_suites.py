"""run_cupyx_suites.py - CuPy's own filter and signal tests with tileconv's
functions put in place of cupyx's (the package's GPU conformance standard), on a GPU
machine with CuPy and a CUDA build of the package (TILECONV_CUDA=ON):

    python tests/python/run_cupyx_suites.py [--tests DIR] [-- PYTEST ARGS]

Suites: cupyx_tests/scipy_tests/ndimage_tests/test_filters.py (whole
file) and cupyx_tests/scipy_tests/signal_tests/test_signaltools.py (its
convolve / correlate tests: -k "convolve or correlate or Convolve or
Correlate"). CuPy's wheels do not ship its tests: they are looked for in
--tests DIR, then $CUPYX_TESTS (either a CuPy checkout, its tests/
directory, or the cupyx_tests directory itself), then beside the
installed cupy package (a source install). Each suite runs in a
subprocess on a copy of the file, with a conftest.py that replaces every
cupyx.scipy.ndimage / cupyx.scipy.signal function tileconv also has (the
names in tileconv.ndimage.__all__ / tileconv.signal.__all__) before the
tests run, with tileconv.signal.scipy_dtypes = True (float16 and bool
refused where scipy's and cupyx's direct paths refuse them); CuPy's tests call scp.ndimage.<name> at run time, so the
device side of each comparison is tileconv's, the host side scipy's.
--suite NAME runs one suite (ndimage, signal). With --log-dir each
suite's pytest output goes to DIR/cupyx_<suite>.log as it runs.
Prints per suite: passed / failed / skipped / errors and the failed test
ids; exit status 1 when a suite had failures or errors, 2 when the tests
were not found."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SUITES = [
    ("ndimage", "scipy_tests/ndimage_tests/test_filters.py", []),
    ("signal", "scipy_tests/signal_tests/test_signaltools.py",
     ["-k", "convolve or correlate or Convolve or Correlate"]),
]

CONFTEST = """\
import cupyx.scipy.{mod} as C
import tileconv.{mod} as T
PATCHED = [n for n in T.__all__ if hasattr(C, n)]
for n in PATCHED:
    setattr(C, n, getattr(T, n))
# cupyx refuses float16 / bool where scipy's direct path does, and its
# tests require the refusal: tileconv.signal's scipy_dtypes mode
if hasattr(T, "scipy_dtypes"):
    T.scipy_dtypes = True


def pytest_report_header(config):
    return "tileconv in place of cupyx.scipy.{mod}: " + ", ".join(PATCHED)
"""


def candidates(arg):
    roots = [arg, os.environ.get("CUPYX_TESTS")]
    try:
        import cupy
        d = os.path.dirname(os.path.dirname(os.path.abspath(cupy.__file__)))
        roots += [d, os.path.join(d, "tests")]
    except ImportError:
        pass
    for r in roots:
        if not r:
            continue
        for sub in ("", "tests", os.path.join("tests", "cupyx_tests"), "cupyx_tests"):
            d = os.path.join(r, sub)
            if os.path.isdir(os.path.join(d, "scipy_tests")):
                yield d


def run(src, mod, extra, pytest_args, tests_root, log=None):
    with tempfile.TemporaryDirectory(prefix=f"cupyx_{mod}_") as tmp:
        dst = os.path.join(tmp, os.path.basename(src))
        shutil.copy(src, dst)
        with open(os.path.join(tmp, "conftest.py"), "w") as f:
            f.write(CONFTEST.format(mod=mod))
        env = dict(os.environ)
        # the tests' own helper modules (cupyx_tests.*) importable
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.path.dirname(tests_root), tests_root, env.get("PYTHONPATH")) if p)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
               "-W", "ignore::DeprecationWarning", os.path.basename(dst)] + extra + pytest_args
        if log:  # written as the tests run: a run cut short leaves what it did
            with open(log, "w") as f:
                p = subprocess.run(cmd, cwd=tmp, env=env, stdout=f, stderr=subprocess.STDOUT)
            with open(log) as f:
                out = f.read()
        else:
            p = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            out = p.stdout
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    summary = next((ln for ln in reversed(lines) if re.search(r" in [\d.]+s", ln)), "")
    counts = {k: int(n) for n, k in re.findall(
        r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)", summary)}
    failed = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)))
    return counts, failed, summary, out, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", help="a CuPy checkout, its tests/ or cupyx_tests/ directory")
    ap.add_argument("--log-dir", help="write each suite's whole pytest output to "
                    "DIR/cupyx_<suite>.log (the failures' tracebacks)")
    ap.add_argument("--suite", action="append", choices=[m for m, _, _ in SUITES],
                    help="run this suite only (repeatable; default: every suite)")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    a = ap.parse_args()
    root = next(candidates(a.tests), None)
    if root is None:
        print("run_cupyx_suites: CuPy's tests not found: pass --tests DIR or set CUPYX_TESTS "
              "to a CuPy source checkout (github.com/cupy/cupy, tests/cupyx_tests); the "
              "wheels do not ship them")
        return 2
    try:
        import cupy  # noqa: F401
        import tileconv  # noqa: F401
    except ImportError as e:
        print(f"run_cupyx_suites: {e}")
        return 2
    bad = False
    for mod, rel, extra in SUITES:
        if a.suite and mod not in a.suite:
            continue
        src = os.path.join(root, rel)
        if not os.path.exists(src):
            print(f"{mod}: {src} not found")
            bad = True
            continue
        log = None
        if a.log_dir:
            os.makedirs(a.log_dir, exist_ok=True)
            log = os.path.join(a.log_dir, f"cupyx_{mod}.log")
        counts, failed, summary, out, rc = run(src, mod, extra, a.pytest_args, root, log)
        err = counts.get("error", 0) + counts.get("errors", 0)
        print(f"{mod} ({rel}): {counts.get('passed', 0)} passed, {counts.get('failed', 0)} "
              f"failed, {err} errors, {counts.get('skipped', 0)} skipped "
              f"({summary or 'no summary; rc ' + str(rc)})", flush=True)
        for t in failed[:200]:
            print(f"  FAILED {t}")
        if counts.get("failed", 0) or err or not counts.get("passed", 0):
            bad = True
            if not failed:
                print(out[-4000:])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
