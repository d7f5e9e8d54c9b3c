#!/usr/bin/env bash
# gpu-check.sh - the CUDA backend's one-call check on a GPU machine:
#   build     configure + build (Release, CMAKE_CUDA_ARCHITECTURES=90, tests)
#   test      tests/test_cuda: every CUDA solver x modes x shapes vs ref,
#             host and device pointers; its filter, GEMM and conv parts as
#             three processes at once -> $OUT/test-{filter,gemm,conv}.log,
#             all three in $OUT/test.log
#   bench     bench/gpu_bench.cu (kernel report, device-resident timings, D2D
#             copy ceiling) + bench/gpu_peers.py (cuDNN, cuBLAS, CuPy): one
#             table in $OUT/gpu_table.txt, JSON in $OUT/gpu_results.json,
#             logs in $OUT/bench.log
#   layers    bench/gpu_layers.py: the conv-layer table beside cuDNN (PyTorch)
#             in one process (libtileconv.so through ctypes): fp32 rows with
#             TF32 off on both sides, TF32 rows (TC_PLAN_ALLOW_TF32) beside
#             cuDNN with TF32 on, then each call's device time and 50 calls
#             back to back, ours and cuDNN's (GPU_LAYERS_KPROF, default 1)
#             -> $OUT/gpu_layers.txt
#   layers-half bench/gpu_layers_half.py: float16 / bfloat16 channels-last
#             ResNet-50 layers beside cuDNN, and the fused bias + relu +
#             residual row beside torch's unfused sequence, CUDA-graph device
#             time -> $OUT/gpu_layers_half.txt
#   gemm      bench/gpu_gemm.py: the GEMM core beside cuBLAS (PyTorch) in one
#             process: cuda.gemm.simt with TF32 off on both sides, cuda.gemm.wgmma-tf32
#             beside cuBLAS with TF32 on, 2048^3 to 8192^3 -> $OUT/gpu_gemm.txt
#   python    (only when named) the Python package against this build's
#             libtileconv.so (the extension compiled with the machine's
#             python3 and NumPy into a temporary package): tests/python's
#             GPU files (test_gpu.py, test_gpu_ndimage.py, the device cases of
#             test_functional_half.py) and, where CuPy's tests are found
#             ($CUPYX_TESTS, default $SRC/.cupyx), run_cupyx_suites.py
#             (GPU_CHECK_CUPYX_SUITE: one suite, ndimage or signal;
#             GPU_CHECK_CUPYX_TIMEOUT: its seconds, default 360;
#             GPU_CHECK_CUPYX_ARGS: pytest's, default -n 8)
#             -> $OUT/python.log, cupyx.log, cupyx_<suite>.log
#   pybench   (only when named) the same package (built once for both
#             steps, log python_build.log) on GPU arrays beside its peers in
#             one process: bench/python_gpu_targets.py (ndimage / signal on
#             CuPy vs cupyx, Conv2d / conv2d batch 1 vs torch; its
#             arguments from GPU_CHECK_PYBENCH_ARGS), then bench/resnet50.py
#             --device cuda --batch 1 32 (float32, TF32 off) and --dtype
#             float16 --channels-last --batch 32 -> $OUT/python_bench.txt
#   sanitize  compute-sanitizer memcheck and racecheck on test_cuda (quick;
#             GPU_CHECK_SANITIZE_CONV=1: the conv-layer cases only,
#             GPU_CHECK_SANITIZE_GEMM=1: the GEMM cases only,
#             GPU_CHECK_SANITIZE_SOLVER=NAME: one conv solver's cases,
#             GPU_CHECK_SANITIZE_KERNELS=SUBSTRING: only kernels so named
#             are checked: k_cf_ on the FFT cases; not on the
#             GEMM cases, where racecheck failed on the uninstrumented
#             TMA kernel of cuda.gemm.wgmma-tf32)
#   solvers   tests/test_solvers (quick): the generic all-solver test
#   sass      (only when named) opcode histogram of the cuda.filter.direct kernels
#             and of each one's hottest block (bench/sass_hist.py) ->
#             $OUT/sass.txt, their SASS -> $OUT/sass_dump.txt;
#             GPU_CHECK_SASS_OBJ names another object (igemm_tiled.cu.o),
#             GPU_CHECK_SASS its kernel regex
#   profile-layers (only when named) ncu on one launch of the conv-layer
#             kernels of the layers in GPU_CHECK_NCU_LAYERS -> $OUT/ncu_layers.txt
#   profile-gemm (only when named) ncu on one launch of each GEMM kernel
#             (GPU_CHECK_NCU_GEMM, default "sgemm_128|k_gemm_tf32") at
#             GPU_GEMM_SIZES (default 4096) -> $OUT/ncu_gemm.txt
#   profile-source (only when named) ncu's source view of one launch of the
#             conv-layer kernel GPU_CHECK_NCU_KERNELS on the first layer of
#             GPU_CHECK_NCU_LAYERS: the SASS instructions with the most
#             stall samples (bench/ncu_source_top.py) -> $OUT/ncu_source.txt;
#             GPU_CHECK_NCU_SRC_GEMM=REGEX: a GEMM kernel at 4096^3 instead
#   profile   (only when named) ncu on one launch of the main cuda.filter.direct
#             kernels -> $OUT/ncu.txt; TILECONV_BENCH_SWEEP=1 in the environment
#             makes the bench step time every kernel variant too
# in that order, each under what is left of GPU_CHECK_DEADLINE seconds
# (default 560), so a lease-limited run still returns the important parts.
# At the end every file under OUT is packed into OUT/logs.tar.gz, the
# result tables (gpu_table.txt, gpu_layers.txt, gpu_layers_half.txt,
# gpu_gemm.txt, python_bench.txt) left beside it (GPU_CHECK_PACK=0: no packing).
# Environment: OUT (default ./gpu-check-out), GPU_CHECK_STEPS (default all),
# GPU_CHECK_TEST_TIMEOUT (the test step's seconds at most, default 240;
# its filter, GEMM and conv parts run as three processes at once,
# GPU_CHECK_TEST_SERIAL=1 runs one process),
# GPU_CHECK_SRC (source tree, default this checkout), GPU_CHECK_BUILD
# (default build-cuda). Exit status: test_cuda's; benchmarks never fail it.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$(cd "${GPU_CHECK_SRC:-$ROOT}" && pwd)
OUT=${OUT:-$ROOT/gpu-check-out}
STEPS=${GPU_CHECK_STEPS:-build test bench layers layers-half gemm sanitize solvers}
BUILD=${GPU_CHECK_BUILD:-$ROOT/build-cuda}
DEADLINE=${GPU_CHECK_DEADLINE:-560}
JOBS=$(nproc 2>/dev/null || echo 8)
PY=${GPU_CHECK_PYTHON:-python3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$OUT"
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
# Nsight Compute for the profile steps
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
# left CAP: seconds a step may take: min(CAP, time left - 10)
left() { local l=$(( DEADLINE - ($(date +%s) - t0) - 10 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 1 ] && l=1; echo "$l"; }

# ncu_std ARGS...: Nsight Compute with the sections every profile step
# reads, under what is left of the deadline (at most 90 s); the profile
# steps add the kernel filter, launch counts and the program
ncu_std() {
  timeout "$(left 90)" "$NCU" --clock-control none \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
    --section Occupancy --section LaunchStats --section SchedulerStats --section InstructionStats \
    ${GPU_CHECK_NCU_EXTRA:-} "$@"
}

stamp "device"; nvidia-smi -L 2>&1 | head -4; "$NVCC" --version | tail -1
# the tree being built: $SRC/TREE where the caller packed one (git archive
# leaves no .git; write the commit there), else the checkout's HEAD
echo "tree: $(cat "$SRC/TREE" 2>/dev/null || git -C "$SRC" log -1 --format='%h %s' 2>/dev/null || echo unknown)"

if has build; then
  stamp "configure + build $SRC in $BUILD"
  # Ninja where the machine has it and the build folder is new: its log
  # gives each object's build time (the slowest are printed below)
  GEN=()
  if command -v ninja >/dev/null 2>&1 && [ ! -f "$BUILD/CMakeCache.txt" ]; then GEN=(-G Ninja); fi
  cfg() { cmake -S "$1" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
          -DCMAKE_CUDA_COMPILER="$NVCC" >"$OUT/build.log" 2>&1; }
  if ! cfg "$SRC"; then
    # Another contributor's half-finished optional subdirectory must not
    # stop the GPU check: configure a copy without bench/CMakeLists.txt.
    echo "configure failed (see build.log); retrying on a copy without bench/CMakeLists.txt"
    C=/tmp/tc-gpu-src; rm -rf "$C" "$BUILD"; mkdir -p "$C"
    (cd "$SRC" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$C"
    rm -f "$C/bench/CMakeLists.txt"; SRC=$C
    cfg "$SRC" || { tail -30 "$OUT/build.log"; exit 2; }
  fi
  grep -E "CUDA backend" "$OUT/build.log"
  # the shared library's target is `tileconv`, which Ninja reads as the
  # CLI's output file (tileconv_cli's OUTPUT_NAME): name the library's file
  LIBT=tileconv
  [ -f "$BUILD/build.ninja" ] && LIBT=libtileconv.so
  cmake --build "$BUILD" -j"$JOBS" --target tileconv_static "$LIBT" test_cuda test_solvers tileconv_cli >>"$OUT/build.log" 2>&1 \
    || { grep -E "error|Error" "$OUT/build.log" | head -30; exit 2; }
  if [ -f "$BUILD/.ninja_log" ]; then
    echo "slowest build steps (s):"
    awk -F'\t' 'NR > 1 { printf "%7.1f %s\n", ($2 - $1) / 1000, $4 }' "$BUILD/.ninja_log" |
      sort -rn | head -6
  fi
  EXTRA=$(pkg-config --libs fftw3f fftw3 2>/dev/null || true)
  "$NVCC" -O2 -std=c++17 -arch=sm_90 -I"$SRC/include" "$SRC/bench/gpu_bench.cu" \
      "$BUILD/libtileconv.a" -lcufft -lpthread $EXTRA -o "$BUILD/gpu_bench" >>"$OUT/build.log" 2>&1 \
    || { echo "gpu_bench build failed"; tail -20 "$OUT/build.log"; }
  stamp "build done"
fi
TEST=$BUILD/tests/test_cuda

rc=0
if has test; then
  stamp "test_cuda"
  # three processes at once, the filter, GEMM and conv parts: a kernel that
  # traps or hangs (the tensor-core kernels trap after a stuck mbarrier wait,
  # TC_CUDA_WATCHDOG_S) ends its own process's CUDA context, not the other
  # parts' results; GPU_CHECK_TEST_SERIAL=1: one process, every part
  if [ "${GPU_CHECK_TEST_SERIAL:-0}" = 1 ]; then
    timeout "$(left "${GPU_CHECK_TEST_TIMEOUT:-240}")" "$TEST" >"$OUT/test.log" 2>&1; rc=$?
  else
    TT=$(left "${GPU_CHECK_TEST_TIMEOUT:-240}")
    TILECONV_TEST_CUDA_FILTER_ONLY=1 timeout "$TT" "$TEST" >"$OUT/test-filter.log" 2>&1 & p1=$!
    TILECONV_TEST_CUDA_GEMM_ONLY=1 timeout "$TT" "$TEST" >"$OUT/test-gemm.log" 2>&1 & p2=$!
    TILECONV_TEST_CUDA_CONV_ONLY=1 timeout "$TT" "$TEST" >"$OUT/test-conv.log" 2>&1 & p3=$!
    rc=0
    for p in $p1 $p2 $p3; do wait "$p"; r=$?; [ "$r" -gt "$rc" ] && rc=$r; done
    for part in filter gemm conv; do echo "---- test_cuda, $part part"; cat "$OUT/test-$part.log"; done >"$OUT/test.log"
    for part in filter gemm conv; do echo "$part: $(tail -1 "$OUT/test-$part.log")"; done
  fi
  echo "test_cuda rc=$rc"
  grep -E "^(FAIL|SKIP|CRASH|KILLED)|check failed|passed,|not applicable|launch failure" "$OUT/test.log" | head -40
  # the split-precision GEMM's errors beside simt's and TF32's, a case a line
  grep -E "^  3xtf32 (m=|conv case)" "$OUT/test.log" | head -40
fi

if has bench; then
  stamp "gpu_bench"
  timeout "$(left 200)" "$BUILD/gpu_bench" "$BUILD/gpu_bench.json" >"$OUT/bench.log" 2>&1
  echo "gpu_bench rc=$?"
  sed -n '/---- tc_cuda_kernel_report/,/^----$/p' "$OUT/bench.log" | head -60
  grep -E "FAILED|error" "$OUT/bench.log" | head
  stamp "gpu_peers.py"
  PYTHONUNBUFFERED=1 timeout "$(left 200)" "$PY" "$SRC/bench/gpu_peers.py" "$BUILD/gpu_bench.json" "$OUT" \
      >>"$OUT/bench.log" 2>&1
  echo "gpu_peers rc=$?"
  cat "$OUT/gpu_table.txt" 2>/dev/null || grep -v "^ " "$OUT/bench.log" | tail -60
fi

if has layers; then
  # conv layers beside cuDNN (bench/gpu_layers.py): ours through the CLI's
  # --stats device time, cuDNN through PyTorch
  stamp "gpu_layers.py"
  # with the device-time table (GPU_LAYERS_KPROF=1) unless the caller says
  # otherwise: the single-call table counts each side's host time
  GPU_LAYERS_KPROF=${GPU_LAYERS_KPROF:-1} PYTHONUNBUFFERED=1 timeout "$(left 240)" "$PY" \
      "$SRC/bench/gpu_layers.py" "$BUILD" "$OUT" >"$OUT/layers.log" 2>&1
  echo "gpu_layers rc=$?"
  cat "$OUT/gpu_layers.txt" 2>/dev/null || tail -20 "$OUT/layers.log"
fi

if has layers-half; then
  # float16 / bfloat16 channels-last layers beside cuDNN (cuda.conv.igemm-half)
  stamp "gpu_layers_half.py"
  PYTHONUNBUFFERED=1 timeout "$(left 200)" "$PY" "$SRC/bench/gpu_layers_half.py" "$BUILD" "$OUT" \
      >"$OUT/layers_half.log" 2>&1
  echo "gpu_layers_half rc=$?"
  cat "$OUT/gpu_layers_half.txt" 2>/dev/null || tail -20 "$OUT/layers_half.log"
fi

if has gemm; then
  # the GEMM core beside cuBLAS (bench/gpu_gemm.py), fp32 and TF32
  stamp "gpu_gemm.py"
  PYTHONUNBUFFERED=1 timeout "$(left 150)" "$PY" "$SRC/bench/gpu_gemm.py" "$BUILD" "$OUT" \
      >"$OUT/gemm.log" 2>&1
  echo "gpu_gemm rc=$?"
  cat "$OUT/gpu_gemm.txt" 2>/dev/null || tail -20 "$OUT/gemm.log"
fi

if has profile; then
  # Nsight Compute on one launch of the main kernels (not in the default
  # steps): speed of light, stall reasons, memory, occupancy.
  : >"$OUT/ncu.txt"
  for c in "${GPU_CHECK_PROFILE_CASES[@]:-2D 8192^2 k3|2D 8192^2 k15|3D 512^3 k5|1D 2^26 k63|report test 1 }"; do
    IFS='|' read -ra CASES <<<"$c"
    for k in "${CASES[@]}"; do
      stamp "ncu: $k"
      echo "######## $k" >>"$OUT/ncu.txt"
      TILECONV_BENCH_ONLY="$k" timeout "$(left 60)" "$NCU" --clock-control none -k regex:direct_f32 \
          --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
          --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
          --section SchedulerStats --section InstructionStats \
          "$BUILD/gpu_bench" /tmp/ncu_bench.json >>"$OUT/ncu.txt" 2>&1
      echo "ncu rc=$?"
    done
  done
  grep -E "^  [a-zA-Z_]+.*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|No Eligible|Registers Per|Stall" "$OUT/ncu.txt" | head -80
fi

if has profile-layers; then
  # (only when named) Nsight Compute on one launch of the conv-layer kernels
  # (regex GPU_CHECK_NCU_KERNELS, default k_igemm|k_dw) for each layer of
  # GPU_CHECK_NCU_LAYERS ("|"-separated substrings of gpu_layers.py names);
  # GPU_CHECK_NCU_BASE=demangled matches the regex against names with their
  # template arguments; GPU_CHECK_NCU_SKIP / _COUNT: launches (default 2 / 1);
  # GPU_CHECK_NCU_EXTRA: more ncu arguments (e.g. --metrics for the stall
  # reasons: regex:smsp__average_warp_latency_issue_stalled_.*)
  : >"$OUT/ncu_layers.txt"
  IFS='|' read -ra LCASES <<<"${GPU_CHECK_NCU_LAYERS:-128@28|mbv1-dw}"
  for l in "${LCASES[@]}"; do
    stamp "ncu: layer $l"
    echo "######## $l" >>"$OUT/ncu_layers.txt"
    GPU_LAYERS_ONLY="$l" GPU_LAYERS_REPEAT=3 GPU_LAYERS_SWEEP=0 ncu_std \
        --kernel-name-base "${GPU_CHECK_NCU_BASE:-function}" \
        -k "regex:${GPU_CHECK_NCU_KERNELS:-k_igemm|k_dw}" --launch-skip "${GPU_CHECK_NCU_SKIP:-2}" \
        --launch-count "${GPU_CHECK_NCU_COUNT:-1}" \
        "$PY" "$SRC/bench/gpu_layers.py" "$BUILD" /tmp/ncu_layers >>"$OUT/ncu_layers.txt" 2>&1
    echo "ncu rc=$?"
  done
  grep -E "^  [a-zA-Z_<]+.*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|No Eligible|Issued Warp|Registers Per|Executed Ipc|Stall|Block Limit|Waves Per SM" "$OUT/ncu_layers.txt" | head -70
fi

if has profile-gemm; then
  # (only when named) Nsight Compute on one launch of each GEMM kernel
  # (regexes GPU_CHECK_NCU_GEMM, default "sgemm_128|k_gemm_tf32": one ncu
  # run each) at GPU_GEMM_SIZES (default 4096) through bench/gpu_gemm.py
  # -> $OUT/ncu_gemm.txt
  : >"$OUT/ncu_gemm.txt"
  IFS='|' read -ra GKS <<<"${GPU_CHECK_NCU_GEMM:-sgemm_128|k_gemm_tf32}"
  for k in "${GKS[@]}"; do
    stamp "ncu: GEMM kernel $k"
    echo "######## $k" >>"$OUT/ncu_gemm.txt"
    GPU_GEMM_SIZES="${GPU_GEMM_SIZES:-4096}" ncu_std -k "regex:$k" --launch-count 1 \
        "$PY" "$SRC/bench/gpu_gemm.py" "$BUILD" /tmp/ncu_gemm >>"$OUT/ncu_gemm.txt" 2>&1
    echo "ncu rc=$?"
  done
  grep -E "^  [a-zA-Z_<]+.*\(|Duration|SM Frequency|L2 Cache Throughput|DRAM Throughput|Compute \(SM\) Throughput|No Eligible|Issued Warp|Executed Instructions  |Stall|Block Limit" "$OUT/ncu_gemm.txt" | head -60
fi

if has profile-source; then
  # (only when named) where the warps of one kernel stall, instruction by
  # instruction (it finds, e.g., integer divisions in a kernel's stage loop)
  # GPU_CHECK_NCU_SRC_GEMM=REGEX: a GEMM kernel at GPU_GEMM_SIZES' first
  # size (default 4096) through bench/gpu_gemm.py instead (its default
  # forms only)
  NCU_SRC=(--kernel-name-base "${GPU_CHECK_NCU_BASE:-function}" --launch-skip "${GPU_CHECK_NCU_SKIP:-2}"
           --launch-count 1 --section SourceCounters --section WarpStateStats -f -o /tmp/tc_ncu_src)
  if [ -n "${GPU_CHECK_NCU_SRC_GEMM:-}" ]; then
    GS=${GPU_GEMM_SIZES:-4096}; GS=${GS%% *}
    stamp "ncu source view: GEMM $GS^3, kernels $GPU_CHECK_NCU_SRC_GEMM"
    GPU_GEMM_SIZES="$GS" GPU_GEMM_FORMS= timeout "$(left 120)" "$NCU" --clock-control none \
        -k "regex:$GPU_CHECK_NCU_SRC_GEMM" "${NCU_SRC[@]}" "$PY" "$SRC/bench/gpu_gemm.py" "$BUILD" \
        /tmp/ncu_src_gemm >"$OUT/ncu_source.log" 2>&1
  else
    L=${GPU_CHECK_NCU_LAYERS:-128@28}; L=${L%%|*}
    stamp "ncu source view: layer $L, kernels ${GPU_CHECK_NCU_KERNELS:-^k_igemm_shifted\$}"
    GPU_LAYERS_ONLY="$L" GPU_LAYERS_REPEAT=3 GPU_LAYERS_SWEEP=0 timeout "$(left 120)" "$NCU" --clock-control none \
        -k "regex:${GPU_CHECK_NCU_KERNELS:-^k_igemm_shifted\$}" "${NCU_SRC[@]}" "$PY" "$SRC/bench/gpu_layers.py" "$BUILD" \
        /tmp/ncu_src_layers >"$OUT/ncu_source.log" 2>&1
  fi
  echo "ncu rc=$?"
  "$NCU" -i /tmp/tc_ncu_src.ncu-rep --page source --csv --print-source sass >/tmp/tc_ncu_src.csv 2>>"$OUT/ncu_source.log"
  "$PY" "$SRC/bench/ncu_source_top.py" /tmp/tc_ncu_src.csv "${GPU_CHECK_NCU_TOP:-40}" >"$OUT/ncu_source.txt" 2>&1
  cut -c1-200 "$OUT/ncu_source.txt" | head -45
fi

if has sass; then
  # opcode histogram of the cuda.filter.direct kernels (not in the default steps)
  CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  O=$(find "$BUILD" -name "${GPU_CHECK_SASS_OBJ:-cuda_direct.cu.o}" | head -1)
  stamp "sass histogram of $O"
  "$CUOBJ" -sass "$O" 2>/dev/null | SASS_DUMP="$OUT/sass_dump.txt" "$PY" "$SRC/bench/sass_hist.py" \
      ${GPU_CHECK_SASS:-direct_f32} >"$OUT/sass.txt" 2>&1
  head -c 6000 "$OUT/sass.txt"
fi

# py_pkg: the Python package against this build's libtileconv.so in
# /tmp/tc-gpu-py (the extension compiled with the machine's python3 and
# NumPy), put on PYTHONPATH; built once for the python and pybench steps
# (log: $OUT/python_build.log); status 1 when it could not be built
PYPKG=
py_pkg() {
  [ -n "$PYPKG" ] && { [ "$PYPKG" = ok ]; return; }
  PYPKG=failed
  local PKG=/tmp/tc-gpu-py EXT PYINC NPINC
  if [ ! -f "$BUILD/libtileconv.so" ]; then
    echo "python: no $BUILD/libtileconv.so (the build step makes it)" | tee "$OUT/python_build.log"
    return 1
  fi
  rm -rf "$PKG"; mkdir -p "$PKG"
  cp -r "$SRC/python/tileconv" "$PKG/"
  cp -L "$BUILD/libtileconv.so" "$PKG/tileconv/libtileconv.so.0"
  EXT=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  PYINC=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  NPINC=$("$PY" -c 'import numpy; print(numpy.get_include())')
  if gcc -std=gnu11 -O2 -shared -fPIC -I"$SRC/include" -I"$PYINC" -I"$NPINC" "$SRC/python/tileconv/_core.c"        -L"$PKG/tileconv" -l:libtileconv.so.0 -Wl,-rpath,'$ORIGIN' -o "$PKG/tileconv/_core$EXT" >"$OUT/python_build.log" 2>&1; then
    export PYTHONPATH="$PKG${PYTHONPATH:+:$PYTHONPATH}"
    PYPKG=ok
    return 0
  fi
  echo "python: the extension did not build"; tail -15 "$OUT/python_build.log"
  return 1
}

if has python; then
  stamp "python: the package on this build's libtileconv.so"
  if py_pkg; then
    ( cd "$SRC" && PYTHONUNBUFFERED=1 timeout "$(left 240)" "$PY" -m pytest -q -p no:cacheprovider -rfE \
        tests/python/test_gpu.py tests/python/test_gpu_ndimage.py tests/python/test_functional_half.py tests/python/test_nn_modules.py \
        ${GPU_CHECK_PYTEST_ARGS:-} ) >"$OUT/python.log" 2>&1
    echo "python GPU tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/python.log" | tail -25
    CX=${CUPYX_TESTS:-$SRC/.cupyx}
    if [ -d "$CX" ]; then
      stamp "run_cupyx_suites.py ($CX)"
      PYTHONUNBUFFERED=1 timeout "$(left "${GPU_CHECK_CUPYX_TIMEOUT:-360}")" "$PY" "$SRC/tests/python/run_cupyx_suites.py" --tests "$CX" --log-dir "$OUT" ${GPU_CHECK_CUPYX_SUITE:+--suite "$GPU_CHECK_CUPYX_SUITE"} \
        -- ${GPU_CHECK_CUPYX_ARGS:--n 8} >"$OUT/cupyx.log" 2>&1
      echo "run_cupyx_suites rc=$?"; grep -E "passed|FAILED" "$OUT/cupyx.log" | head -60
    fi
  fi
fi

if has pybench; then
  # (only when named) the package on GPU arrays beside its peers in one
  # process, each run under what is left of the deadline
  stamp "pybench: python_gpu_targets.py, resnet50.py --device cuda"
  if py_pkg; then
    PB=$OUT/python_bench.txt
    : >"$PB"
    PYTHONUNBUFFERED=1 timeout "$(left 240)" "$PY" "$SRC/bench/python_gpu_targets.py" \
        ${GPU_CHECK_PYBENCH_ARGS:-} >>"$PB" 2>&1
    echo "python_gpu_targets rc=$?" | tee -a "$PB"
    for args in "--batch 1 32" "--dtype float16 --channels-last --batch 32"; do
      stamp "resnet50.py --device cuda $args"
      echo "######## resnet50.py --device cuda $args" >>"$PB"
      # shellcheck disable=SC2086  # $args: several arguments
      PYTHONUNBUFFERED=1 timeout "$(left 200)" "$PY" "$SRC/bench/resnet50.py" --device cuda $args >>"$PB" 2>&1
      echo "resnet50 rc=$?" | tee -a "$PB"
    done
    grep -v "^######## " "$PB" | cut -c1-220 | head -80
  fi
fi

if has sanitize; then
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  # racecheck on the GEMM cases takes 136 s (H200): each
  # tool may take up to 240 s of what is left of the deadline
  for tool in memcheck racecheck; do
    stamp "compute-sanitizer --tool $tool (test_cuda, quick)"
    cap=$(left 240)
    # GPU_CHECK_SANITIZE_KERNELS=SUBSTRING: only kernels whose names hold
    # it are checked (--kernel-name kns=..., e.g. k_cf_ for cuda.conv.fft's
    # own kernels without cuFFT's: racecheck of the FFT cases does not
    # finish in 130-150 s unfiltered, takes 122 s with k_cf_, 142 s with
    # the fused form forced on and off too;
    # on the GEMM cases racecheck hit "Internal Sanitizer Error" in the
    # uninstrumented TMA kernel of cuda.gemm.wgmma-tf32, so filter only the
    # conv cases); GPU_CHECK_SANITIZE_SOLVER=NAME:
    # that conv solver's cases alone (TILECONV_TEST_CUDA_CONV_SOLVER)
    kf=()
    [ -n "${GPU_CHECK_SANITIZE_KERNELS:-}" ] && kf=(--kernel-name "kns=$GPU_CHECK_SANITIZE_KERNELS")
    TILECONV_TEST_CUDA_CONV_ONLY=${GPU_CHECK_SANITIZE_CONV:-0} TILECONV_TEST_CUDA_GEMM_ONLY=${GPU_CHECK_SANITIZE_GEMM:-0} TILECONV_TEST_QUICK=1 \
      TILECONV_TEST_CUDA_CONV_SOLVER=${GPU_CHECK_SANITIZE_SOLVER:-} \
      timeout "$cap" "$CS" --tool $tool "${kf[@]}" --error-exitcode 3 "$TEST" >"$OUT/$tool.log" 2>&1
    san_rc=$?
    echo "$tool rc=$san_rc"
    [ "$san_rc" = 124 ] && echo "$tool: NOT FINISHED (stopped after ${cap} s; its log ends at the pass it was in)"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed,|Invalid|hazard|rror" "$OUT/$tool.log" | head -8
  done
fi

if has solvers; then
  stamp "test_solvers (quick; every solver incl. CUDA)"
  TILECONV_TEST_QUICK=1 timeout "$(left 120)" "$BUILD/tests/test_solvers" >"$OUT/test_solvers.log" 2>&1
  echo "test_solvers rc=$?"; grep -E "^FAIL|CRASH|passed," "$OUT/test_solvers.log" | head -20
fi
# The device tool brings back at most 8 files: every file under OUT goes
# into OUT/logs.tar.gz, and the result tables stay beside it
# (GPU_CHECK_PACK=0 leaves OUT as it is)
if [ "${GPU_CHECK_PACK:-1}" = 1 ] && [ -d "$OUT" ]; then
  ( cd "$OUT" && find . -type f ! -name logs.tar.gz | sed 's|^\./||' | sort > /tmp/tc-gpu-files &&
    tar -czf logs.tar.gz -T /tmp/tc-gpu-files &&
    grep -v -E '^(gpu_table|gpu_layers|gpu_layers_half|gpu_gemm|python_bench)\.txt$' /tmp/tc-gpu-files |
      while read -r f; do rm -f "$f"; done
    find . -mindepth 1 -type d -empty -delete ) 2>/dev/null
  echo "OUT: $(ls "$OUT" | tr '\n' ' ')(every log in logs.tar.gz)"
fi
stamp "done (test_cuda rc=$rc)"
exit $rc
