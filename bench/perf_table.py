#!/usr/bin/python3
"""perf_table.py - markdown tables for docs/performance.md from the JSON of
`tileconv bench --json FILE` (one or more files: with several, each case is
taken from the file where our best time is lowest, i.e. the best of a few
process runs on a noisy machine; ratios stay within one run).

usage: bench/perf_table.py RUN.json [RUN2.json ...]
Prints: the ceilings, one row per case (best of ours, the floor, the
ratios to the peers), then one row per target. The roofline floor of a case
is max(FLOP / FMA peak, bytes / copy bandwidth): no run can be faster at
this arithmetic intensity.
"""
import json
import sys


def best_runs(paths):
    runs = [json.load(open(p)) for p in paths]
    cases = {}
    order = []
    for run in runs:
        for c in run["cases"]:
            cid = c["id"]
            if cid not in cases:
                order.append(cid)
                cases[cid] = (c, run)
            elif c.get("best_ms") and (
                not cases[cid][0].get("best_ms") or c["best_ms"] < cases[cid][0]["best_ms"]
            ):
                cases[cid] = (c, run)
    return runs, [cases[i] for i in order]


def fmt_ms(v):
    return "-" if v is None else ("%.3g" % v if v < 100 else "%.0f" % v)


def main(paths):
    runs, cases = best_runs(paths)
    peak = max(r["ceilings"]["fma_gflops"] for r in runs)
    bw = max(r["ceilings"]["copy_gbs"] for r in runs)
    print("Ceilings (best over the runs): FMA peak %.0f GFLOP/s, copy bandwidth %.1f GB/s; "
          "ridge %.1f FLOP/byte." % (peak, bw, peak / bw))
    print()
    print("| case | ours (best) | ms | GFLOP/s | % FMA | GB/s | % BW | floor ms | bound "
          "| ESTIMATE / MEASURE | peers: time ratio peer/ours |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c, run in cases:
        if not c.get("best_ms"):
            continue
        ms = c["best_ms"]
        gf = c["flops"] / (ms * 1e6)
        gbs = c["bytes"] / (ms * 1e6)
        floor = max(c["flops"] / (peak * 1e6), c["bytes"] / (bw * 1e6))
        bound = "memory" if c["intensity"] < peak / bw else "compute"
        peers = []
        for r in c["runners"]:
            if r["kind"] in ("peer", "external") and r["status"] == "ok" and not r["name"].startswith("seed003"):
                peers.append("%s %.2fx" % (r["name"], r["median_ms"] / ms))
            if r["name"].startswith("seed003") and r["status"] == "ok":
                peers.append("%s %.1fx" % (r["name"].replace("seed003 ", "seed "), r["median_ms"] / ms))
        planner = c.get("estimate") or "-"
        if c.get("planner_within_1_2x") is False:
            planner += " (**%.2fx best**)" % (c.get("choice_ms", c["auto_ms"]) / c["best_forced_ms"])
        planner += " / " + (c.get("measure") or ("skipped" if "skipped" in c.get("measure_note", "") else "-"))
        if c["id"].endswith("-modes"):
            worst = max((r["median_ms"] for r in c["runners"][1:] if r["status"] == "ok"), default=None)
            peers = ["modes/constant %.2fx" % (worst / c["runners"][0]["median_ms"])] if worst else []
            planner = "-"
        print("| %s | %s | %s | %.0f | %.0f%% | %.1f | %.0f%% | %s | %s | %s | %s |" % (
            c["id"], c["best"].replace("auto = ", "auto: ").replace("|", "/"), fmt_ms(ms), gf,
            100 * gf / peak, gbs, 100 * gbs / bw, fmt_ms(floor), bound, planner,
            ", ".join(peers) or "-"))
    print()
    print("| case | target | measured | met |")
    print("|---|---|---|---|")
    for c, run in cases:
        for t in c.get("targets", []):
            met = "n/a" if not t["evaluated"] else ("yes" if t["met"] else "**no**")
            text = t["text"]
            goal = t.get("goal", "")
            # fractions of a ceiling: against the best ceilings over the runs
            if t["evaluated"] and c.get("best_ms") and ("copy bandwidth" in goal or "FMA peak" in goal):
                bwx = "copy bandwidth" in goal
                v = (c["bytes"] / (c["best_ms"] * 1e6) / bw) if bwx else (c["flops"] / (c["best_ms"] * 1e6) / peak)
                text = "%.0f%% of %s, %s" % (100 * v, "copy bandwidth" if bwx else "FMA peak", c["best"])
                met = "yes" if v >= t["target"] else "**no**"
            print("| %s | %s | %s | %s |" % (c["id"], goal, text, met))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
