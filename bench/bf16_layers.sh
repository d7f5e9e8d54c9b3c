#!/bin/sh
# bf16_layers.sh - the dnn suite's layers in bfloat16 beside oneDNN bf16
# (bench/bf16_layers.c). Usage: bench/bf16_layers.sh BUILD_DIR [runs] [rounds] [layer filter]
# Builds against BUILD_DIR/libtileconv.a (configured with FFTW as usual) and
# runs `runs` processes (default 3); oneDNN gets OMP_PROC_BIND=spread
# OMP_PLACES=cores OMP_WAIT_POLICY=passive (idle OpenMP workers sleep instead
# of spinning on the cores tileconv runs on next) and as many OpenMP threads as tileconv has cores.
set -e
B=${1:?build dir}
RUNS=${2:-3}
ROUNDS=${3:-21}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$B/bf16_layers
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I"$HERE/../include" "$HERE/bf16_layers.c" "$B/libtileconv.a" \
   -ldnnl -lfftw3f -lfftw3 -lm -lpthread -o "$OUT"
grep -m1 'model name' /proc/cpuinfo
NT=$(nproc)
i=1
while [ "$i" -le "$RUNS" ]; do
  echo "--- run $i"
  OMP_NUM_THREADS=$NT OMP_PROC_BIND=spread OMP_PLACES=cores OMP_WAIT_POLICY=passive "$OUT" "$NT" "$ROUNDS" $4
  i=$((i + 1))
done
