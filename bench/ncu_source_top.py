#!/usr/bin/env python3
"""ncu_source_top.py - the SASS instructions of one profiled kernel with the
most warp-stall samples, from Nsight Compute's source page:

    ncu --section SourceCounters --section WarpStateStats -o REP ...
    ncu -i REP.ncu-rep --page source --csv --print-source sass > SRC.csv
    python3 bench/ncu_source_top.py SRC.csv [N]

Prints the column names once, then the N (default 40) instructions with the
most samples (the first column whose name has "Sampling" and "All"), each
with its address, its SASS text and every sampling or stall column that is
not zero,
and the share of all samples. Column names differ between ncu versions, so
they are found by substring. Never asserts: a CSV it cannot read is said so.
"""
import csv
import sys


def num(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return 0.0


def read_table(path, needle, tool):
    """An ncu source-page CSV from its header row (the first line naming
    needle): (header, the rows of the header's width), or None, said so
    (also used by ncu_opcode_mix.py)."""
    with open(path, newline="", errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if needle in l), None)
    if start is None:
        print(f"{tool}: no '{needle}' column in {path}; first lines:")
        print("\n".join(lines[:5]))
        return None
    rows = list(csv.reader(lines[start:]))
    return rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    table = read_table(path, "Sampling", "ncu_source_top")
    if table is None:
        return
    hdr, body = table
    samp = [i for i, h in enumerate(hdr) if "Sampling" in h or "stall" in h.lower()]
    key = next((i for i in samp if "All" in hdr[i]), samp[0])
    src = next((i for i, h in enumerate(hdr) if h.strip().lower() in ("source", "sass")), None)
    addr = next((i for i, h in enumerate(hdr) if "Address" in h), None)
    total = sum(num(r[key]) for r in body) or 1.0
    print("columns:", "; ".join(hdr))
    print(f"{len(body)} instructions, {total:.0f} samples in '{hdr[key]}'")
    for r in sorted(body, key=lambda r: -num(r[key]))[:n]:
        extra = ", ".join(f"{hdr[i]}={r[i]}" for i in samp if i != key and num(r[i]))
        a = r[addr] if addr is not None else ""
        s = r[src] if src is not None else ""
        print(f"{100 * num(r[key]) / total:5.1f}% {num(r[key]):7.0f} {a:>8s}  {s:60s} {extra}")


if __name__ == "__main__":
    main()
