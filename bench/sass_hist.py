#!/usr/bin/env python3
"""sass_hist.py - opcode histogram per kernel from `cuobjdump -sass` output.

Usage: cuobjdump -sass build/CMakeFiles/.../cuda_direct.cu.o | sass_hist.py [regex ...]

For every function whose demangled name matches one of the regexes (all
functions when none is given) prints the instruction count, the share of
FFMA, loads/stores and the most frequent opcodes: what the compiler made
of an unrolled body (are the weights FFMA constant operands, how many
shared loads per FFMA, any local-memory traffic), and the same for the
basic block with the most FFMA (between two labels: an unrolled loop's
body, where the instructions that are not FFMA cost issue slots).
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
    funcs, blocks, lines, cur = {}, {}, {}, None
    for line in sys.stdin:
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1)
            funcs[cur] = collections.Counter()
            blocks[cur] = [collections.Counter()]
            lines[cur] = [line]
            continue
        if cur is None:
            continue
        lines[cur].append(line)
        if re.match(r"\s*\.L_x_\d+:", line):
            blocks[cur].append(collections.Counter())
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m:
            funcs[cur][m.group(2)] += 1
            blocks[cur][-1][m.group(2)] += 1
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
        hot = max(blocks[f], key=lambda b: sum(v for k, v in b.items() if k.startswith("FFMA")))
        bt = sum(hot.values())
        bf = sum(v for k, v in hot.items() if k.startswith("FFMA"))
        if bt and bf:
            rest = ", ".join(f"{k} {v}" for k, v in hot.most_common() if not k.startswith("FFMA"))
            print(f"  hottest block: {bt} instructions, FFMA {bf} ({100.0 * bf / bt:.1f}%); "
                  f"the others: {rest}")
        if dump:
            dump.write("".join(lines[f]))


if __name__ == "__main__":
    main()
