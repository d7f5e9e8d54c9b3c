#!/usr/bin/env python3
"""sass_hist.py - opcode histogram per kernel from `cuobjdump -sass` output.

Usage: cuobjdump -sass build/CMakeFiles/.../cuda_direct.cu.o | sass_hist.py [regex ...]

For every function whose demangled name matches one of the regexes (all
functions when none is given) prints the instruction count, the share of
FFMA, loads/stores and the most frequent opcodes: what the compiler made
of an unrolled body (are the weights FFMA constant operands, how many
shared loads per FFMA, any local-memory traffic), and the same for the
loop with the most FFMA (from a backward branch's target to the branch:
an unrolled loop's body, where the instructions that are not FFMA cost
issue slots).
SASS_DUMP=FILE writes the matched functions' SASS there. Runs on the device
machine (this VM has no cuobjdump); scripts/gpu-check.sh calls it in its
`sass` step.
"""
import collections
import os
import re
import subprocess
import sys


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True, check=True).stdout.split("\n")
        return dict(zip(names, out))
    except Exception:
        return {n: n for n in names}


def main():
    pats = [re.compile(p) for p in sys.argv[1:]]
    funcs, insts, lines, cur = {}, {}, {}, None
    for line in sys.stdin:
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1)
            funcs[cur] = collections.Counter()
            insts[cur] = []
            lines[cur] = [line]
            continue
        if cur is None:
            continue
        lines[cur].append(line)
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*)", line)
        if m:
            funcs[cur][m.group(3)] += 1
            tgt = re.search(r"0x([0-9a-f]+)", m.group(4)) if m.group(3) == "BRA" else None
            insts[cur].append((int(m.group(1), 16), m.group(3), int(tgt.group(1), 16) if tgt else None))
    names = demangle(list(funcs))
    dump = open(os.environ["SASS_DUMP"], "w") if os.environ.get("SASS_DUMP") else None
    for f, c in funcs.items():
        dn = names.get(f, f)
        if pats and not any(p.search(dn) for p in pats):
            continue
        total = sum(c.values())
        if not total:
            continue
        ffma = sum(v for k, v in c.items() if k.startswith("FFMA"))
        lds = sum(v for k, v in c.items() if k.startswith("LDS"))
        ldl = sum(v for k, v in c.items() if k.startswith(("LDL", "STL")))
        top = ", ".join(f"{k} {v}" for k, v in c.most_common(10))
        print(f"{dn[:150]}\n  {total} instructions: FFMA {ffma} ({100.0 * ffma / total:.1f}%), "
              f"LDS {lds}, local {ldl}; top: {top}")
        best = None
        for a, op, t in insts[f]:
            if op == "BRA" and t is not None and t < a:
                h = collections.Counter(o for x, o, _ in insts[f] if t <= x <= a)
                nf = sum(v for k, v in h.items() if k.startswith("FFMA"))
                # the most FFMA; of equals (a kernel's interior and edge
                # copies of one loop), the one with the fewest others
                if best is None or (nf, -sum(h.values())) > (best[0], -sum(best[3].values())):
                    best = (nf, t, a, h)
        if best and best[0]:
            nf, t, a, h = best
            bt = sum(h.values())
            rest = ", ".join(f"{k} {v}" for k, v in h.most_common() if not k.startswith("FFMA"))
            print(f"  hottest loop ({t:#x}-{a:#x}): {bt} instructions, FFMA {nf} "
                  f"({100.0 * nf / bt:.1f}%); the others: {rest}")
        if dump:
            dump.write("".join(lines[f]))


if __name__ == "__main__":
    main()
