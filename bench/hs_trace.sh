#!/usr/bin/env bash
# hs_trace.sh - the wait-time trace of cuda.conv.igemm-half-shifted's
# kernel (k_hs_conv) on a GPU machine, in one call:
#   1. libtileconv.a (target tileconv_static, Release, CMAKE_CUDA_ARCHITECTURES=90)
#      in $BUILD: configured where it is not, brought up to date where it is
#      (the default kernels: nothing traced);
#   2. src/cuda/conv/igemm_half_shifted.cu again with -DTC_HS_TRACE=1, the
#      library's flags, as its own object ($BUILD/hs_trace_solver.o; its
#      k_hs_conv registers and spills printed);
#   3. bench/hs_trace.cu linked against that object first and the library
#      (the object's solver stands in for the library's, whose member is
#      then not linked), run: one table (docs/solvers/cuda-conv-half.md,
#      "Reading the wait-time trace"), also in $OUT/hs_trace.txt where OUT
#      is set.
# Environment: BUILD (default build-cuda, the folder scripts/gpu-check.sh
# builds), NVCC, HS_TRACE_REPS / HS_TRACE_ONLY / HS_TRACE_ALL (hs_trace.cu),
# TILECONV_CUDA_HALF_SHIFTED_CFG / _STAGES (the solver's knobs),
# HS_TRACE_SASS=1: where cuobjdump is found, the order of the clock reads,
# the barrier waits and the wgmma waits in k_hs_conv<2, 1, 128> (float16).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-cuda}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
JOBS=$(nproc 2>/dev/null || echo 8)
mkdir -p "$BUILD"
LOG=$BUILD/hs_trace_build.log
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  GEN=()
  command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
  echo "== configure $BUILD"
  cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_CUDA_COMPILER="$NVCC" >"$LOG" 2>&1 || { tail -20 "$LOG"; exit 2; }
fi
echo "== libtileconv.a in $BUILD"
cmake --build "$BUILD" -j"$JOBS" --target tileconv_static >>"$LOG" 2>&1 \
  || { grep -E "error|Error" "$LOG" | head -20; exit 2; }
# the library's own definitions for the CUDA objects (CMakeLists.txt)
WD=$(sed -n 's/^TC_CUDA_WATCHDOG_S:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
OBJ=$BUILD/hs_trace_solver.o
echo "== igemm_half_shifted.cu with -DTC_HS_TRACE=1"
"$NVCC" -O3 -DNDEBUG -std=c++17 -I"$ROOT/include" -I"$ROOT/src" -DTC_BUILDING_LIBRARY=1 -DTC_HAVE_CUDA=1 \
    -DTC_CUDA_WATCHDOG_S="${WD:-10}" -DTC_HS_TRACE=1 -lineinfo -Xcompiler=-fPIC \
    --generate-code=arch=compute_90,code=[compute_90,sm_90] --generate-code=arch=compute_90a,code=sm_90a \
    -Xptxas -v -c "$ROOT/src/cuda/conv/igemm_half_shifted.cu" -o "$OBJ" >"$BUILD/hs_trace_ptxas.log" 2>&1 \
  || { grep -v "^ptxas info" "$BUILD/hs_trace_ptxas.log" | head -20; exit 2; }
# one line an instance: k_hs_conv<NWG, MTW, BN, bfloat16> registers, spills (sm_90a)
awk '/Compiling entry function .*k_hs_conv.*sm_90a/ { match($0, /k_hs_convILi[0-9]+ELi[0-9]+ELi[0-9]+ELb[01]/);
       k = substr($0, RSTART, RLENGTH); gsub(/ILi|ELi|ELb/, ",", k); sub(/^k_hs_conv,/, "", k); on = 1; next }
     on && /spill/ { sp = $5 "+" $9 }
     on && /Used [0-9]+ registers/ { printf "  k_hs_conv<%s> %s registers, spill bytes %s\n", k, $5, sp; on = 0 }' \
    "$BUILD/hs_trace_ptxas.log"
grep -E "C75[0-9][0-9]|warning" "$BUILD/hs_trace_ptxas.log" | head -5
if [ "${HS_TRACE_SASS:-0}" = 1 ]; then
  CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  "$CUOBJ" -sass "$OBJ" 2>/dev/null |
    awk '/Function : /{ p = ($0 ~ /k_hs_convILi2ELi1ELi128ELb0E/) } p' |
    grep -nE "CLOCK|WARPGROUP.DEPBAR|SYNCS.PHASECHK|HGMMA" | cut -c1-110 | head -60
fi
EXTRA=$(pkg-config --libs fftw3f fftw3 2>/dev/null || true)
echo "== bench/hs_trace.cu"
# shellcheck disable=SC2086  # $EXTRA: several arguments
"$NVCC" -O2 -std=c++17 -arch=sm_90 -I"$ROOT/include" "$ROOT/bench/hs_trace.cu" "$OBJ" \
    "$BUILD/libtileconv.a" -lcufft -lpthread $EXTRA -o "$BUILD/hs_trace" >>"$LOG" 2>&1 \
  || { tail -20 "$LOG"; exit 2; }
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  "$BUILD/hs_trace" 2>&1 | tee "$OUT/hs_trace.txt"
  exit "${PIPESTATUS[0]}"
fi
exec "$BUILD/hs_trace"
