#!/usr/bin/env bash
# gpu-prebuilt.sh - build the CUDA library and its GPU test and bench on a
# machine without a GPU, pack them small enough to carry to a GPU machine,
# and unpack them there, so that a device session spends no time building.
#   bash scripts/gpu-prebuilt.sh pack DIR [BUILD]
#       configures and builds BUILD (default build-prebuilt: Release, CUDA
#       arch 90, no FFTW, no bench peers, no MPI) here, then writes to DIR:
#       libtileconv.so.xz (the library, xz -9: ~28 MB), test_cuda and
#       gpu_bench (~1 MB each: linked against that library, found next to
#       them at run time), TREE (the commit and whether the tree was clean)
#   bash scripts/gpu-prebuilt.sh unpack DIR BUILD
#       on the GPU machine (python3 for the xz): BUILD/libtileconv.so,
#       BUILD/tests/test_cuda, BUILD/gpu_bench, laid out as
#       scripts/gpu-check.sh's build step leaves them, so that its other
#       steps run with GPU_CHECK_BUILD=BUILD and "build" left out of
#       GPU_CHECK_STEPS; exits 3 where a library they need is missing there
#       (the CUDA runtime of the same major version: then build there)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
case "$cmd" in
pack)
  DIR=${2:?usage: gpu-prebuilt.sh pack DIR [BUILD]}
  BUILD=${3:-$ROOT/build-prebuilt}
  NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  CUDA_HOME=$(cd "$(dirname "$NVCC")/.." && pwd)
  G=(); [ ! -f "$BUILD/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1 && G=(-G Ninja)
  mkdir -p "$BUILD"
  cmake -S "$ROOT" -B "$BUILD" "${G[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTC_WITH_FFTW=OFF -DTC_BENCH_PEERS=OFF -DTC_WITH_MPI=OFF -DCMAKE_CUDA_COMPILER="$NVCC" \
    >"$BUILD/prebuilt-configure.log" 2>&1 || { tail -20 "$BUILD/prebuilt-configure.log"; exit 2; }
  grep -q "CUDA backend ON" "$BUILD/prebuilt-configure.log" ||
    { echo "gpu-prebuilt.sh: no CUDA backend in $BUILD (nvcc: $NVCC)" >&2; exit 2; }
  LIBT=tileconv; [ -f "$BUILD/build.ninja" ] && LIBT=libtileconv.so
  cmake --build "$BUILD" -j"$(nproc)" --target "$LIBT"
  mkdir -p "$DIR"
  so=$(readlink -f "$BUILD/libtileconv.so")
  xz -9 -T0 -c "$so" >"$DIR/libtileconv.so.xz"
  cc -O2 -std=gnu11 -DTC_TEST_CUDA=1 -I"$ROOT/include" -I"$ROOT/src" -I"$ROOT/tests" \
    -I"$CUDA_HOME/include" "$ROOT/tests/test_cuda.c" -L"$BUILD" -ltileconv -L"$CUDA_HOME/lib64" \
    -lcudart_static -ldl -lrt -lm -lpthread -Wl,-rpath,'$ORIGIN/..' -o "$DIR/test_cuda"
  "$NVCC" -O2 -std=c++17 -arch=sm_90 -I"$ROOT/include" "$ROOT/bench/gpu_bench.cu" -L"$BUILD" \
    -ltileconv -lcufft -lpthread -Xlinker -rpath -Xlinker '$ORIGIN' -o "$DIR/gpu_bench"
  { git -C "$ROOT" log -1 --format='%h %s'
    [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] || echo "(with uncommitted changes)"
  } >"$DIR/TREE"
  du -sh "$DIR"
  ;;
unpack)
  DIR=${2:?usage: gpu-prebuilt.sh unpack DIR BUILD}
  BUILD=${3:?usage: gpu-prebuilt.sh unpack DIR BUILD}
  mkdir -p "$BUILD/tests"
  python3 - "$DIR/libtileconv.so.xz" "$BUILD/libtileconv.so.0" <<'EOF'
import lzma, shutil, sys
with lzma.open(sys.argv[1]) as f, open(sys.argv[2], "wb") as g:
    shutil.copyfileobj(f, g)
EOF
  ln -sf libtileconv.so.0 "$BUILD/libtileconv.so"
  install -m 755 "$DIR/test_cuda" "$BUILD/tests/test_cuda"
  install -m 755 "$DIR/gpu_bench" "$BUILD/gpu_bench"
  cat "$DIR/TREE" 2>/dev/null || true
  export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}
  if ldd "$BUILD/libtileconv.so" "$BUILD/tests/test_cuda" "$BUILD/gpu_bench" | grep 'not found'; then
    echo "gpu-prebuilt.sh: the libraries above are missing here: build on this machine instead" >&2
    exit 3
  fi
  ;;
*)
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
