#!/usr/bin/env bash
# demo.sh - from a fresh clone to the main job: dependencies, build, and
# tileconv on an image, a volume and a convolution layer.
#
#   bash scripts/demo.sh            (as root, or with sudo, for the packages)
#
# 1. scripts/deps.sh (as root it installs what is missing; otherwise it only
#    checks); 2. Release build of the CLI in build/; 3. jobs, each timed with
#    --repeat 10 --stats out/<job>.json, printing the chosen algorithm and
#    the median time:
#      - data/synthetic512.png (procedural, scripts/make_data.py) blurred with
#        gaussian:2 -> out/synthetic512_gauss2.png, and scipy's Sobel
#        (sobel-x, correlate) -> out/synthetic512_sobel_x.npy;
#      - a generated 128^3 float32 volume, box:5 -> out/volume128_box5.npy;
#      - a 3x3 conv layer, 1x64x56x56 -> 64 channels, padding 1, with bias;
#    4. the Python package installed into $TC_BUILD_DIR-venv (pip,
#    --no-build-isolation, Debian's numpy/scipy) and a short example beside
#    scipy.ndimage.
# Outputs go to out/ (git-ignored). TC_BUILD_DIR overrides build/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
B=${TC_BUILD_DIR:-build}
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)

echo "== 1. dependencies"
bash scripts/deps.sh

echo "== 2. build ($B, Release)"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >"$root/.demo-configure.log" 2>&1 ||
    { cat "$root/.demo-configure.log"; exit 1; }
grep -E 'tileconv:' "$root/.demo-configure.log" || true
rm -f "$root/.demo-configure.log"
cmake --build "$B" -j "$(nproc)" --target tileconv_cli >/dev/null
tc=$B/tileconv
"$tc" info

echo "== 3. jobs (outputs in out/)"
mkdir -p out
[ -f data/synthetic512.png ] || "$py" scripts/make_data.py image data/synthetic512.png
[ -f out/volume128.npy ] || "$py" scripts/make_data.py volume out/volume128.npy 128
[ -f out/conv_x.npy ] || {
    mkdir -p out/conv && "$py" scripts/make_data.py conv out/conv &&
        mv out/conv/x.npy out/conv_x.npy && mv out/conv/w.npy out/conv_w.npy &&
        mv out/conv/b.npy out/conv_b.npy && rmdir out/conv
}

# job NAME DESCRIPTION -- tileconv arguments...
job() {
    local name=$1 what=$2
    shift 3
    local err
    if ! err=$("$tc" "$@" --repeat 10 --stats "out/$name.json" 2>&1 >/dev/null); then
        echo "demo: $name failed: $err" >&2
        exit 1
    fi
    # the summary line: algorithm=... backend=... median_ms=... gflops=...
    local line
    line=$(grep -E '^algorithm=' <<<"$err" | tail -n 1)
    printf '%-16s %-44s %s\n' "$name" "$what" "${line:-$err}"
}

job gauss2 "512x512 PNG, gaussian:2 (sigma 2)" -- \
    filter data/synthetic512.png out/synthetic512_gauss2.png --kernel gaussian:2
job sobel_x "512x512 PNG, sobel-x (scipy.ndimage.sobel)" -- \
    filter data/synthetic512.png out/synthetic512_sobel_x.npy --kernel sobel-x --correlate
job box5_volume "128^3 float32 volume, box:5" -- \
    filter out/volume128.npy out/volume128_box5.npy --kernel box:5
job conv3x3 "conv 1x64x56x56, 64x64x3x3, pad 1, bias" -- \
    conv out/conv_x.npy out/conv_w.npy out/conv_y.npy --bias out/conv_b.npy --padding 1

echo "== 4. the Python package (pip install into $B-venv) and a short example"
venv=$root/$B-venv
[ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-build-isolation "$root"
"$venv/bin/python" - <<'PYEOF'
import time
import numpy as np
import scipy.ndimage as S
import tileconv
import tileconv.ndimage as T
img = np.random.default_rng(0).random((2048, 2048), dtype=np.float32)
w = np.random.default_rng(1).random((9, 9))
T.convolve(img, w)  # plan once
t0 = time.perf_counter(); a = T.convolve(img, w); t1 = time.perf_counter()
b = S.convolve(img, w); t2 = time.perf_counter()
print(f"tileconv {tileconv.__version__}: ndimage.convolve 2048x2048 float32, 9x9: "
      f"{(t1 - t0) * 1e3:.1f} ms, scipy {(t2 - t1) * 1e3:.1f} ms, "
      f"max difference {np.abs(a - b).max():.2e}")
PYEOF

echo "== done: images, arrays and the JSON timing records (out/<job>.json) are in out/"
ls -l out/*.png out/*.json
