#!/usr/bin/env python3
"""ncu_opcode_mix.py - the executed instruction mix of one profiled kernel,
by SASS opcode, from Nsight Compute's source page (works on kernels we have
no cubin for, e.g. cuBLAS's):

    ncu --section SourceCounters -o REP ...
    ncu -i REP.ncu-rep --page source --csv --print-source sass > SRC.csv
    python3 bench/ncu_opcode_mix.py SRC.csv [N]

Prints the warp instructions executed in all, then the N (default 25)
opcodes (with their modifiers, e.g. LDS.128) with the most, each with its
share; then the same for the hot loop alone (the instructions executed at
least half as often as the most executed one). Column names differ between
ncu versions, so they are found by substring. Never asserts: a CSV it
cannot read is said so.
"""
import collections
import re
import sys

from ncu_source_top import num, read_table


def opcode(sass):
    s = re.sub(r"^\s*@!?U?P[0-9T]+\s+", "", sass.strip())  # predicate
    return s.split(" ")[0].rstrip(";") if s else "?"


def table(title, rows, n):
    tot = sum(c for _, c in rows) or 1.0
    h = collections.Counter()
    for s, c in rows:
        h[opcode(s)] += c
    print(f"{title}: {len(rows)} static instructions, {tot:.4g} warp instructions executed")
    for op, c in h.most_common(n):
        print(f"  {op:28s} {c:12.4g} {100 * c / tot:6.2f}%")


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    csv_table = read_table(path, "Instructions Executed", "ncu_opcode_mix")
    if csv_table is None:
        return
    hdr, body = csv_table
    ex = next(i for i, h in enumerate(hdr) if h.strip() == "Instructions Executed" or
              ("Instructions Executed" in h and "Thread" not in h))
    src = next((i for i, h in enumerate(hdr) if h.strip().lower() in ("source", "sass")), 1)
    data = [(r[src], num(r[ex])) for r in body if num(r[ex]) > 0]
    if not data:
        print("ncu_opcode_mix: no executed instructions in", path)
        return
    table("whole kernel", data, n)
    top = max(c for _, c in data)
    table("hot loop (executed >= half the most)", [d for d in data if d[1] >= top / 2], n)


if __name__ == "__main__":
    main()
