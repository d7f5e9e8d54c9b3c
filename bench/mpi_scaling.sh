#!/usr/bin/env bash
# mpi_scaling.sh - tileconv_mpi scaling on one many-core machine (the device
# host: one call builds a CPU-only copy and runs everything):
#   weak    3D k5 192^3 per rank, 1/2/4/8/16 ranks: balanced grid
#           (MPI_Dims_create) and slabs (R x 1 x 1)
#   local   the same ranks each filtering their own 192^3 with a one-process
#           plan, no MPI in the timed loop (R independent filters at once):
#           the machine's own slowdown when R cores are busy
#   strong  512^3 in all, 1/2/4/8/16 ranks, the library's grid and slabs
#   test    test_mpi under 8 ranks (bitwise against one process)
#   chunks  (session 7) the weak runs again with TILECONV_MPI_CHUNKS=1 (the
#           interior in one piece, no MPI_Testall during it): exposed
#           exchange time and hidden fraction with and without chunks
# One rank = one core (TILECONV_MPI_THREADS=1, --bind-to core).
#   SRC=source-tree BUILD=/tmp/bm OUT=dir [RANKS="1 2 4 8"]
#   [STEPS="weak local chunks strong test"] bash bench/mpi_scaling.sh
set -u
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-/tmp/bm}
OUT=${OUT:-/tmp/mpi-scaling-out}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TILECONV_MPI_THREADS=1
RANKS=${RANKS:-1 2 4 8 16}
STEPS=${STEPS:-weak local strong test}
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
stamp "machine"
{ lscpu; echo; lscpu -e; echo; free -g; mpirun --version | head -1; } >"$OUT/machine.txt" 2>&1
grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(|L2|L3|MHz" "$OUT/machine.txt"
mpirun --version | head -1
stamp "build (CUDA off) in $BUILD"
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTC_ENABLE_CUDA=OFF >"$OUT/build.log" 2>&1 &&
cmake --build "$BUILD" -j"$(nproc)" --target tileconv_mpi_bench test_mpi >>"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 2; }
B=$BUILD/tileconv-mpi-bench
M="mpirun --bind-to core --oversubscribe"
stamp "placement of 8 ranks"
$M --report-bindings -np 8 "$B" --weak 32 --repeat 1 2>&1 | grep -E "bound|weak" | head -10
run() { echo "\$ $*"; timeout 90 "$@" 2>&1 | grep -E "^(weak|strong)|error|Error" ; }
if has weak || has local || has chunks; then
stamp "weak 192^3 per rank"
for r in $RANKS; do
    has weak && run $M -np $r "$B" --weak 192 --repeat 7
    has weak && [ $r -gt 1 ] && run $M -np $r "$B" --weak 192 --repeat 7 --slabs
    has chunks && [ $r -gt 1 ] && run env TILECONV_MPI_CHUNKS=1 $M -x TILECONV_MPI_CHUNKS -np $r "$B" --weak 192 --repeat 7
    has chunks && [ $r -gt 1 ] && run env TILECONV_MPI_CHUNKS=1 $M -x TILECONV_MPI_CHUNKS -np $r "$B" --weak 192 --repeat 7 --slabs
    has local && run $M -np $r "$B" --weak 192 --repeat 7 --local
done
fi
if has strong; then
stamp "strong 512^3"
for r in $RANKS; do
    run $M -np $r "$B" --strong 512 --repeat 3
    [ $r -gt 2 ] && run $M -np $r "$B" --strong 512 --repeat 3 --slabs
done
fi
if has test; then
stamp "test_mpi, 8 ranks"
timeout 120 $M -np 8 "$BUILD/tests/test_mpi" >"$OUT/test_mpi8.log" 2>&1
echo "test_mpi 8 ranks rc=$?: $(grep -E 'passed' "$OUT/test_mpi8.log")"
grep FAIL "$OUT/test_mpi8.log" | head
fi
stamp "done"
