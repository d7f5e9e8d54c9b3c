"""scipy's own test suites with tileconv's functions put in place of scipy's
(the package's conformance standard): scipy/ndimage/tests/test_filters.py (whole file) and
scipy/signal/tests/test_signaltools.py (the convolve / correlate tests:
`-k "Convolve or Correlate or convolve or correlate"`; the rest of that
file tests other scipy.signal functions). Each runs in a subprocess on a
copy of the installed scipy test file, with a conftest.py that replaces
scipy's functions by tileconv's (every name in tileconv.ndimage.__all__ /
tileconv.signal.__all__) before the test module imports them. Both must
pass whole: no test failed or errored.

One scipy test is deselected, by name, where its body is what it is in
scipy 1.10: test_filters.py's test_gaussian_filter (gh-8207) asserts that
gaussian_filter refuses a float16 array with RuntimeError; tileconv takes
NumPy float16 (float16 out, float32 accumulation, as cupyx and tileconv's
device path), and test_float16_host.py's test_scipy_gh8207_value checks
the value it computes on that same array instead."""
import os
import re
import shutil
import subprocess
import sys

import pytest
import scipy

SCIPY = os.path.dirname(scipy.__file__)


# (test name, what its body must contain for it to be deselected, why)
NDIMAGE_DESELECT = [
    ("test_gaussian_filter", ("float16", "assert_raises(RuntimeError)"),
     "asserts that float16 is refused; tileconv computes float16 (float32 accumulation), "
     "test_float16_host.py::test_scipy_gh8207_value checks the value"),
]


def _deselect(text, fname, deselect):
    """--deselect arguments for the listed tests whose body still contains
    the markers (a later scipy that changed the test runs it)."""
    args = []
    for name, markers, _why in deselect:
        m = re.search(rf"^def {name}\(\):\n(.*?)(?=^\S)", text, re.M | re.S)
        if m and all(k in m.group(1) for k in markers):
            args += ["--deselect", f"{fname}::{name}"]
    return args


def run_suite(tmp_path, src, module, names, extra, deselect=()):
    if not os.path.exists(src):
        pytest.skip(f"scipy's test file is not installed: {src}")
    shutil.copy(src, tmp_path / os.path.basename(src))
    text = (tmp_path / os.path.basename(src)).read_text()
    # the ndimage tests import their dtype lists relatively
    text = text.replace("from . import types, float_types, complex_types",
                        "from scipy.ndimage.tests import types, float_types, complex_types")
    (tmp_path / os.path.basename(src)).write_text(text)
    dargs = _deselect(text, os.path.basename(src), deselect)
    (tmp_path / "conftest.py").write_text(
        f"import scipy.{module} as S\nimport tileconv.{module} as T\n"
        f"for n in {names!r}:\n    setattr(S, n, getattr(T, n))\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-W", "ignore::DeprecationWarning", os.path.basename(src)] + extra +
                       dargs,
                       cwd=tmp_path, capture_output=True, text=True)
    failed = set(re.findall(r"(?:FAILED|ERROR) \S+?::(\S+)", p.stdout))
    summary = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    if re.search(r"\d+ (failed|errors?)\b", summary):
        failed.add(summary)
    m = re.search(r"(\d+) passed", summary)
    d = re.search(r"(\d+) deselected", summary)
    if dargs and (not d or int(d.group(1)) != len(dargs) // 2):
        failed.add(f"not deselected: {dargs}")
    return failed, int(m.group(1)) if m else 0, p.stdout[-3000:]


def test_scipy_ndimage_filters(tmp_path):
    import tileconv.ndimage as T
    failed, passed, log = run_suite(tmp_path, os.path.join(SCIPY, "ndimage", "tests",
                                                          "test_filters.py"),
                                    "ndimage", T.__all__, [], NDIMAGE_DESELECT)
    assert passed > 1000, log
    assert not failed, f"failures: {sorted(failed)}\n{log}"


def test_scipy_signal_convolutions(tmp_path):
    import tileconv.signal as T
    failed, passed, log = run_suite(tmp_path, os.path.join(SCIPY, "signal", "tests",
                                                          "test_signaltools.py"),
                                    "signal", T.__all__,
                                    ["-k", "Convolve or Correlate or convolve or correlate"])
    assert passed > 1000, log
    assert not failed, f"unexpected failures: {sorted(failed)}\n{log}"
