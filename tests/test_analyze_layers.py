#!/usr/bin/env python3
"""test_analyze_layers.py - `tileconv analyze --layers` (seed 002's layer
cost arithmetic) checked against values computed by hand.

    python3 tests/test_analyze_layers.py path/to/tileconv

Standard library only. Prints "N passed, N failed, 0 skipped" last."""
import json
import os
import subprocess
import sys
import tempfile

from pycheck import check, finish

cli = sys.argv[1]


def run(*layers):
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "l.json")
        args = [cli, "analyze", "--layers", "--no-measure", "--json", js]
        for l in layers:
            args += ["--layer", l]
        p = subprocess.run(args, capture_output=True, text=True)
        check(f"exit 0 for {layers}", p.returncode == 0, p.stderr)
        with open(js) as f:
            return json.load(f)["layers"]


def near(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1)


# ResNet-50 3x3 64->64 @56, pad 1
L = run("1,64,64,1,56x56,3,1,1")[0]
check("3x3@56 out", L["out"] == [56, 56], L["out"])
check("3x3@56 FLOPs = 2*64*3136*64*9", L["flops"] == 2 * 64 * 3136 * 64 * 9, L["flops"])
check("3x3@56 bytes = 4*(x+w+y)", L["bytes"] == 4 * (64 * 3136 + 64 * 64 * 9 + 64 * 3136), L["bytes"])
check("3x3@56 im2col = C*R*P", L["im2col_elements"] == 64 * 9 * 3136, L["im2col_elements"])
check("3x3@56 im2col ratio 9", near(L["im2col_ratio"], 9.0), L["im2col_ratio"])
check("3x3@56 Filter2Row = K*P*C*H*W", L["filter2row_elements"] == 64 * 3136 * 64 * 3136)
check("3x3@56 Filter2Row ratio H*W/R", near(L["filter2row_ratio"], 3136 / 9, 1e-6), L["filter2row_ratio"])
check("3x3@56 Filter2Row does not pay", L["filter2row_pays"] is False)
w = {x["m"]: x for x in L["winograd"]}
check("F(2,3) tiles 28*28, 2.25x", w[2]["tiles"] == 784 and near(w[2]["reduction"], 2.25), w.get(2))
check("F(4,3) tiles 14*14, 4x", w[4]["tiles"] == 196 and near(w[4]["reduction"], 4.0), w.get(4))
check("F(6,3) tiles 10*10, 5.0625x", w[6]["tiles"] == 100 and near(w[6]["reduction"], 324 / 64), w.get(6))
check("F(2,3) transformed input 16*C*tiles", w[2]["input"] == 16 * 64 * 784)
check("F(4,3) transformed weights 36*K*C", w[4]["weights"] == 36 * 64 * 64)
check("FFT length: smooth(58) = 60", L["fft_L"] == [60, 60], L["fft_L"])
check("ESTIMATE names an algorithm", L["estimate"].startswith("cpu."), L["estimate"])

# 3D 3x3x3: the seed's 27x column buffer; Winograd over the last two axes,
# the depth taps summed directly (each input slice transformed once)
L = run("1,32,32,1,32x32x32,3,1,1")[0]
check("3D im2col 27x the input", near(L["im2col_ratio"], 27.0), L["im2col_ratio"])
w = {x["m"]: x for x in L["winograd"]}
check("3D F(4,3) tiles D*8*8, 4x", w[4]["tiles"] == 32 * 8 * 8 and near(w[4]["reduction"], 4.0), w.get(4))
check("3D F(4,3) transformed input 36*C*D*64", w[4]["input"] == 36 * 32 * 32 * 64, w.get(4))
check("3D F(4,3) transformed weights 36*K*C*KD", w[4]["weights"] == 36 * 32 * 32 * 3, w.get(4))
check("3D FFT length smooth(34) = 35", L["fft_L"] == [35, 35, 35], L["fft_L"])
L = run("1,8,8,1,9x9x9,3,2,1")[0]
check("3D stride 2: no Winograd rows", L["winograd"] == [], L["winograd"])

# conv1 7x7/2: im2col ratio R / stride^2 = 49/4
L = run("1,3,64,1,224x224,7,2,3")[0]
check("conv1 out 112", L["out"] == [112, 112], L["out"])
check("conv1 im2col ratio 12.25", near(L["im2col_ratio"], 12.25), L["im2col_ratio"])

# Filter2Row pays when the kernel covers the input (one output)
L = run("2,4,8,1,7x7,7,1,0")[0]
check("kernel = input: out 1x1", L["out"] == [1, 1], L["out"])
check("kernel = input: Filter2Row ratio 1, pays", near(L["filter2row_ratio"], 1.0) and L["filter2row_pays"] is True)
check("kernel = input: matrix K*C*R", L["filter2row_elements"] == 8 * 4 * 49, L["filter2row_elements"])

# grouped / depthwise: FLOPs use C/G
L = run("1,256,256,256,28x28,3,1,1")[0]
check("depthwise FLOPs 2*K*P*1*9", L["flops"] == 2 * 256 * 784 * 9, L["flops"])

# bad layers: exit 2, one clear line
for bad in ("1,3,4,2,8x8,3,1,1", "1,4,4,1,2x2,5,1,0", "x"):
    p = subprocess.run([cli, "analyze", "--layers", "--no-measure", "--layer", bad],
                       capture_output=True, text=True)
    check(f"bad --layer {bad!r}: exit 2", p.returncode == 2 and "--layer" in p.stderr, p.stderr)

finish()
