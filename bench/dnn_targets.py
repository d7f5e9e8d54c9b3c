#!/usr/bin/env python3
"""dnn_targets.py - the CPU layer suite's speed targets over one or more runs
of it (`tileconv bench --suite dnn --json FILE`).

    python3 bench/dnn_targets.py RUN1.json [RUN2.json ...]

Each run is checked on its own, then the runs together: every runner's
time is its best median over the runs (the guide: "take the best of a few
process runs" on these noisy shared VMs; ours and oneDNN's alike). The
checks, as the issue states them:
  - geomean of auto over onednn.any >= 1.2
  - no layer below 0.8x onednn.any
  - 3x3 stride-1 layers >= 1.3x onednn.any
  - every padding mode <= 1.10x the time of zeros (auto.reflect /
    .replicate / .circular against auto)
  - every result within 1e-4 of the float64 reference (relative to the
    largest output)
  - ESTIMATE (auto) within 1.2x of the best forced algorithm
Exit status 0 when the combined runs meet every target, 1 otherwise, 2 on
bad input. Prints one table and one line per target for each run and for
the combination, then (several runs) how many single runs met each target.
"""
import json
import math
import sys

STRIDE1_3X3 = ("r50-3x3-64", "r50-3x3-128", "r50-3x3-256", "r50-3x3-512", "r50-3x3-64-b8",
               "3d-3x3x3-32")
MODES = ("auto.reflect", "auto.replicate", "auto.circular")
TARGETS = ("geomean >= 1.2x", "no layer below 0.8x", "3x3 stride-1 layers >= 1.3x",
           "padding modes <= 1.10x zeros", "errors <= 1e-4", "ESTIMATE <= 1.2x the best forced")


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"dnn_targets: cannot read '{path}': {e}")
    if "layers" not in d:
        sys.exit(f"dnn_targets: '{path}' is not a --suite dnn JSON file (no 'layers')")
    return d


def combine(runs):
    """{layer id: {runner: (median_ms, err, info)}}, best median over runs"""
    out = {}
    for d in runs:
        for L in d["layers"]:
            lay = out.setdefault(L["id"], {})
            for r in L["runners"]:
                m, e = r["median_ms"], r.get("err_vs_f64", -1)
                old = lay.get(r["name"])
                err = max(e, old[1]) if old else e  # the worst error seen
                if not old or m < old[0]:
                    lay[r["name"]] = (m, err, r.get("info", ""))
                else:
                    lay[r["name"]] = (old[0], err, old[2])
    return out


def check(lays, title):
    ok_all = True
    rows, geo, worst_mode, worst_err, worst_est = [], [], (0, ""), (0, ""), (0, "")
    low, slow3 = [], []
    for lid, R in lays.items():
        if "auto" not in R or "onednn.any" not in R:
            continue
        a = R["auto"][0]
        ratio = R["onednn.any"][0] / a
        geo.append(math.log(ratio))
        forced = [(v[0], k) for k, v in R.items() if k.startswith("cpu.")]
        bf = min(forced) if forced else (a, "auto")
        est = a / bf[0]
        modes = [(R[m][0] / a, m) for m in MODES if m in R]
        wm = max(modes) if modes else (float("nan"), "")
        for k, v in R.items():
            if v[1] is not None and v[1] > worst_err[0]:
                worst_err = (v[1], f"{lid} {k}")
        if est > worst_est[0]:
            worst_est = (est, lid)
        if modes and wm[0] > worst_mode[0]:
            worst_mode = (wm[0], f"{lid} {wm[1]}")
        if ratio < 0.8:
            low.append(f"{lid} {ratio:.2f}")
        if lid in STRIDE1_3X3 and ratio < 1.3:
            slow3.append(f"{lid} {ratio:.2f}")
        rows.append(f"  {lid:16s} {R['auto'][2]:26s} {a:8.3f} {R['onednn.any'][0]:8.3f} "
                    f"{ratio:6.2f} {est:6.2f} " + (f"{wm[0]:6.2f}" if modes else "   n/a"))
    g = math.exp(sum(geo) / len(geo)) if geo else float("nan")
    print(f"{title}")
    print(f"  {'layer':16s} {'auto':26s} {'auto ms':>8s} {'oneDNN':>8s} {'ratio':>6s} "
          f"{'est':>6s} {'mode':>6s}")
    print("\n".join(rows))
    checks = [  # (met, line, the target's name for the tally over runs)
        (g >= 1.2, f"geomean vs onednn.any {g:.2f} (>= 1.2)"),
        (not low, "no layer below 0.8x" + (f": {', '.join(low)}" if low else "")),
        (not slow3, "3x3 stride-1 layers >= 1.3x" + (f": {', '.join(slow3)}" if slow3 else "")),
        (worst_mode[0] <= 1.10,
         f"worst padding mode / zeros {worst_mode[0]:.2f} ({worst_mode[1]}; <= 1.10)"
         if worst_mode[1] else "worst padding mode / zeros: no padding-mode runners"),
        (worst_err[0] <= 1e-4, f"worst error {worst_err[0]:.1e} ({worst_err[1]}; <= 1e-4)"),
        (worst_est[0] <= 1.2, f"ESTIMATE / best forced {worst_est[0]:.2f} ({worst_est[1]}; <= 1.2)"),
    ]
    met = []
    for ok, line in checks:
        print(f"  {'met ' if ok else 'MISS'} {line}")
        ok_all &= ok
        met.append((TARGETS[len(met)], ok))
    return ok_all, met


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip())
        return 2
    runs = [load(p) for p in argv[1:]]
    ok = True
    tally = []
    for p, d in zip(argv[1:], runs):
        ok, met = check(combine([d]), f"run {p} ({d.get('machine', '?')}, "
                                      f"{d.get('threads', '?')} threads)")
        tally.append(met)
    if len(runs) > 1:
        ok, _ = check(combine(runs), f"best of {len(runs)} runs, each runner")
        # how often each target held in a single run (the noise around it)
        n = len(runs)
        print(f"single runs ({n})")
        for i, name in enumerate(TARGETS):
            print(f"  {name}: met in {sum(m[i][1] for m in tally)} of {n}")
        print(f"  every target in one run: {sum(all(ok for _, ok in m) for m in tally)} of {n}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
