"""pycheck.py - the counting check of the standalone Python test scripts
(test_analyze_layers.py, test_dnn_targets.py): "ok"/"FAIL" lines and the
"N passed, N failed, 0 skipped" summary that ctest's FAIL_REGULAR_EXPRESSION
reads. Standard library only; the scripts find it beside themselves."""
import sys

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def finish():
    print(f"{passed} passed, {failed} failed, 0 skipped")
    sys.exit(1 if failed else 0)
