#!/bin/sh
# bf16_layers.sh - the dnn suite's layers in bfloat16: tileconv beside oneDNN
# bf16 and our own float32 in one process (bench/bf16_layers.c), and torch's
# CPU bfloat16 conv (bench/bf16_torch.py, when PYTHON imports torch).
# Usage: bench/bf16_layers.sh BUILD_DIR [runs] [rounds] [layer filter]
# Builds BUILD_DIR's tileconv-bf16-layers target (oneDNN found), runs
# `runs` processes of each (default 3) and prints bench/bf16_summary.py's
# table over them. Peers get OMP_PROC_BIND=spread OMP_PLACES=cores,
# OMP_WAIT_POLICY=passive (idle OpenMP workers sleep instead of spinning on
# the cores tileconv runs on next) and as many threads as tileconv has cores.
set -e
B=${1:?build dir}
RUNS=${2:-3}
ROUNDS=${3:-21}
PYTHON=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$B/tileconv-bf16-layers
LOG=$B/bf16_layers.log
# built by the tree's CMake (bench/CMakeLists.txt) when oneDNN is found,
# linked like every tool whether or not the build has CUDA
cmake --build "$B" --target tileconv_bf16_layers >/dev/null
NT=$(nproc)
export OMP_NUM_THREADS=$NT OMP_PROC_BIND=spread OMP_PLACES=cores OMP_WAIT_POLICY=passive
{
  grep -m1 'model name' /proc/cpuinfo
  i=1
  while [ "$i" -le "$RUNS" ]; do
    echo "--- run $i"
    "$OUT" "$NT" "$ROUNDS" $4
    if "$PYTHON" -c "import torch" 2>/dev/null; then
      "$PYTHON" "$HERE/bf16_torch.py" "$NT" "$ROUNDS"
    fi
    i=$((i + 1))
  done
} | tee "$LOG"
python3 "$HERE/bf16_summary.py" "$LOG"
