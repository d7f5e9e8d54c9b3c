"""bf16_summary.py - the table bench/bf16_layers.sh prints at the end: per
layer, over all process runs in its log, the best median and the best single
call of tileconv bfloat16 (channels-last), oneDNN bfloat16 (the faster of
nhwc and blocked), torch bfloat16 (the faster of contiguous and
channels_last) and tileconv float32; ratios peer / ours. Usage:
bf16_summary.py LOG"""
import math
import re
import sys

NUM = r"([-\d.]+)"


def main():
    lines = open(sys.argv[1]).read().splitlines()
    ours, torch = {}, {}
    order = []
    for i, l in enumerate(lines):
        m = re.match(r"^(\S+)" + (r"\s+" + NUM) * 5 + r"\s+\S+x\s+\S+x\s+(\S+)\s+(\S+)$", l)
        if m and not l.startswith("layer") and i + 1 < len(lines):
            name = m.group(1)
            med = [float(m.group(k)) for k in range(2, 7)]
            best = [float(v) for v in lines[i + 1].split()[:5]]
            ours.setdefault(name, []).append((med, best, m.group(7), m.group(8)))
            if name not in order:
                order.append(name)
            continue
        m = re.match(r"^(\S+)\s+" + NUM + r"\s+(\S+)\s+" + NUM + r"\s+(\S+)$", l)
        if m and not l.startswith("layer"):
            v = [float(m.group(2)), float(m.group(4))]
            if m.group(3) != "-":
                v += [float(m.group(3)), float(m.group(5))]
            torch.setdefault(m.group(1), []).append(v)

    def pos(x):
        return [v for v in x if v > 0] or [float("nan")]

    hdr = ("layer", "ours", "oneDNN", "torch", "f32", "vs_dnnl", "vs_torch", "vs_f32")
    fmt = "%-16s %8s %8s %8s %8s %8s %8s %8s"
    for kind, idx in (("median (best process run)", 0), ("best call", 1)):
        print("\n%s, ms:" % kind)
        print(fmt % hdr)
        logs = {"dnnl": 0.0, "torch": 0.0, "f32": 0.0}
        n = {"dnnl": 0, "torch": 0, "f32": 0}
        for name in order:
            rs = ours[name]
            o = min(pos(r[idx][0] for r in rs))
            f = min(pos(r[idx][2] for r in rs))
            d = min(pos([r[idx][3] for r in rs] + [r[idx][4] for r in rs]))
            t = float("nan")
            if name in torch:
                tv = torch[name]
                if idx == 0:
                    t = min(min(v[0], v[2]) if len(v) > 2 else v[0] for v in tv)
                else:
                    t = min(min(v[1], v[3]) if len(v) > 2 else v[1] for v in tv)
            row = [name, "%.4f" % o, "%.4f" % d, "%.4f" % t, "%.4f" % f]
            for key, peer in (("dnnl", d), ("torch", t), ("f32", f)):
                if peer == peer and o == o:
                    row.append("%.2fx" % (peer / o))
                    logs[key] += math.log(peer / o)
                    n[key] += 1
                else:
                    row.append("-")
            print(fmt % tuple(row))
        print("geomean: " + ", ".join("vs %s %.3fx (%d layers)" % (k, math.exp(logs[k] / n[k]), n[k])
                                      for k in ("dnnl", "torch", "f32") if n[k]))
    print("\nerror vs float64 (max|y - y64| / max|y64|), tileconv / oneDNN:")
    for name in order:
        print("  %-16s %s / %s" % (name, ours[name][0][2], ours[name][0][3]))


if __name__ == "__main__":
    main()
