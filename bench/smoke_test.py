#!/usr/bin/python3
"""smoke_test.py - ctest `bench_smoke`: runs one small `tileconv bench` case
(seed003 test 5, no peers, no MEASURE, one round) with --json and --plot,
and checks that the command succeeds, the JSON parses and has the case with
its runners and a planner verdict, and the SVG is well-formed XML; then the
same case with --cache cold (the JSON must say cold_caches) and a bad
--cache value (usage error, status 2). It does
not look at any timing (tests never time; the bench never asserts).

usage: smoke_test.py TILECONV_BINARY WORKDIR
"""
import json
import os
import subprocess
import sys
import xml.dom.minidom


def main(argv):
    exe, work = argv[1], argv[2]
    os.makedirs(work, exist_ok=True)
    js, svg = os.path.join(work, "bench_smoke.json"), os.path.join(work, "bench_smoke.svg")
    cmd = [exe, "bench", "--suite", "seed3d", "--case", "seed003-t5", "--no-peers",
           "--no-measure", "--repeat", "1", "--budget", "0", "--json", js, "--plot", svg]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fails = []
    if p.returncode != 0:
        fails.append("exit status %d: %s" % (p.returncode, p.stderr[-500:]))
    else:
        d = json.load(open(js))
        cases = d.get("cases", [])
        if len(cases) != 1 or cases[0]["id"] != "seed003-t5":
            fails.append("expected the one case seed003-t5, got %r" % [c.get("id") for c in cases])
        else:
            c = cases[0]
            names = [r["name"] for r in c["runners"]]
            if "auto" not in names:
                fails.append("no auto runner in %r" % names)
            ok = [r for r in c["runners"] if r["status"] == "ok" and r["kind"] in ("auto", "forced")]
            if not ok:
                fails.append("no runner of ours ran")
            bad = [r["name"] for r in ok if isinstance(r.get("check"), float) and r["check"] > 1e-3]
            if bad:
                fails.append("outputs differ from auto's: %r" % bad)
            if c.get("planner_within_1_2x") is None and len(ok) > 1:
                fails.append("no planner verdict")
        if "planner:" not in p.stdout or "ceilings" not in p.stdout:
            fails.append("summary lines missing from the table")
        xml.dom.minidom.parse(svg)
        if cases and cases[0].get("cold_caches") is not False:
            fails.append("a 1 MB case ran with cold caches under --cache auto")
    # --cache cold: every sample after an eviction; the JSON says so
    p = subprocess.run(cmd[:-4] + ["--cache", "cold", "--json", js], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fails.append("--cache cold: exit status %d: %s" % (p.returncode, p.stderr[-500:]))
    elif json.load(open(js))["cases"][0].get("cold_caches") is not True:
        fails.append("--cache cold: the case did not run with cold caches")
    # a bad --cache value is a usage error (status 2) with one line naming it
    p = subprocess.run([exe, "bench", "--cache", "lukewarm"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 2 or "lukewarm" not in p.stderr:
        fails.append("--cache lukewarm: status %d, stderr %r" % (p.returncode, p.stderr[-200:]))
    for f in fails:
        print("bench_smoke: FAIL: " + f)
    print("%d passed, %d failed" % (1 if not fails else 0, 1 if fails else 0))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
