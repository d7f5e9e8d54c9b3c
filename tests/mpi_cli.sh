#!/usr/bin/env bash
# mpi_cli.sh - `tileconv-mpi filter` (MPI-IO subarray reads and writes)
# against `tileconv filter` on one process, to the bit: 2 to 4 ranks on the
# library's grid, forced 2-D / 3-D grids and boxes listed per rank, every
# mode, 1D / 2D / 3D, a mask wider than a block; bad input (missing or short
# file, bad options, arguments that differ across ranks, a bad box set or
# grid, a GPU backend without a GPU) ends every rank with one line and
# leaves no output.
#   bash tests/mpi_cli.sh path/to/tileconv path/to/tileconv-mpi MPIEXEC
set -u
tc=$1 tcm=$2 mpiexec=$3
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TILECONV_NO_PIN=1
tmp=$(mktemp -d /tmp/tileconv-mpi-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
echo "seed 20261124"
"$py" - "$tmp" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
r = np.random.default_rng(20261124)
np.save(f"{d}/a1.npy", r.uniform(-1, 1, 301).astype(np.float64))
np.save(f"{d}/a2.npy", r.uniform(-1, 1, (41, 37)).astype(np.float32))
np.save(f"{d}/a3.npy", r.uniform(-1, 1, (29, 12, 13)).astype(np.float32))
np.save(f"{d}/k2.npy", r.uniform(-1, 1, (4, 3)).astype(np.float32))
open(f"{d}/short.npy", "wb").write(open(f"{d}/a2.npy", "rb").read()[:500])
PYEOF
# run NAME FILE KERNEL SPECS [options...]: SPECS is a space-separated list of
# NP or NP@GRID or NP@boxes=LIST
run() {
    local name=$1 f=$2 k=$3 specs=$4
    shift 4
    "$tc" filter "$tmp/$f" "$tmp/ref.npy" --kernel "$k" --algo cpu.filter.direct-halo "$@" 2>"$tmp/err" ||
        { bad "$name: tileconv filter failed: $(head -1 "$tmp/err")"; return; }
    for spec in $specs; do
        local np=${spec%%@*} extra=() how=""
        if [ "$spec" != "$np" ]; then
            how=${spec#*@}
            case $how in
                boxes=*) extra=(--boxes "${how#boxes=}") ;;
                *) extra=(--grid "$how") ;;
            esac
        fi
        rm -f "$tmp/out.npy"
        if "$mpiexec" --oversubscribe -np "$np" "$tcm" filter "$tmp/$f" "$tmp/out.npy" --kernel "$k" \
            --algo cpu.filter.direct-halo --threads 1 "${extra[@]}" "${MX[@]}" "$@" >/dev/null 2>"$tmp/err"; then
            if cmp -s "$tmp/ref.npy" "$tmp/out.npy"; then ok "$name, $np ranks ${how:-auto} ${MX[*]}"
            else bad "$name, $np ranks ${how:-auto} ${MX[*]}: output differs from one process"; fi
        else
            bad "$name, $np ranks ${how:-auto} ${MX[*]}: $(head -1 "$tmp/err")"
        fi
    done
}
# TILECONV_TEST_QUICK (the sanitizer build): two modes, one edge-filled and the
# periodic one; the release build runs all five
modes="constant nearest reflect mirror wrap"
case ${TILECONV_TEST_QUICK:-0} in 0 | "") ;; *) modes="reflect wrap" ;; esac
# MX: options for tileconv-mpi only (the progress thread: the default, then
# forced off and on in turn below)
MX=()
for mode in $modes; do
    run "1D k7 $mode" a1.npy box:7 "2 3" --mode $mode --cval 0.5
    run "2D npy mask $mode origin" a2.npy "$tmp/k2.npy" "2 3@1x3 4@2x2" --mode $mode --origin 1,0 \
        --correlate
    run "3D gaussian $mode" a3.npy gaussian:0.8 "3 4@2x1x2" --mode $mode
done
for MX in "--progress off" "--progress on"; do
    # shellcheck disable=SC2206 # two words on purpose
    MX=($MX)
    run "3D gaussian wrap" a3.npy gaussian:0.8 "2 4@2x1x2" --mode wrap
    run "2D npy mask nearest origin" a2.npy "$tmp/k2.npy" "3@1x3" --mode nearest --origin 1,0
done
MX=()
# a mask wider than a block (101 rows per rank, 201 taps): halo from further ranks
run "1D box:201 wider than a block" a1.npy box:201 "3" --mode reflect
run "2D box:15 wider than a block" a2.npy box:15 "4@1x4" --mode wrap
# boxes listed per rank (no grid): rows 0..9 in two, rows 10..40 in one
run "2D boxes" a2.npy "$tmp/k2.npy" "3@boxes=0+10,0+20/0+10,20+17/10+31,0+37" --mode mirror
# bad input: one message, exit 1 or 2, no output file
expect_fail() { # name mpirun-arguments...
    local name=$1
    shift
    rm -f "$tmp/out.npy"
    "$mpiexec" --oversubscribe "$@" >/dev/null 2>"$tmp/err"
    local rc=$? n
    n=$(grep -c "^tileconv-mpi" "$tmp/err")
    if [ $rc -ne 0 ] && [ "$n" = 1 ] && [ ! -e "$tmp/out.npy" ] && ! ls "$tmp"/out.npy.tmp.* >/dev/null 2>&1; then
        ok "$name: $(grep '^tileconv-mpi' "$tmp/err")"
    else
        bad "$name: rc $rc, $n message lines, output $(ls "$tmp" | grep -c out)"
    fi
}
F() { echo filter "$tmp/$1" "$tmp/out.npy"; }
expect_fail "missing input" -np 2 "$tcm" $(F nope.npy) --kernel box:3
expect_fail "file too short" -np 2 "$tcm" $(F short.npy) --kernel box:3
expect_fail "unknown option" -np 2 "$tcm" $(F a2.npy) --kernel box:3 --bogus
expect_fail "bad mode" -np 2 "$tcm" $(F a2.npy) --kernel box:3 --mode sideways
expect_fail "bad --progress" -np 2 "$tcm" $(F a2.npy) --kernel box:3 --progress sometimes
expect_fail "arguments differ across ranks" -np 1 "$tcm" $(F a2.npy) --kernel box:3 : \
    -np 1 "$tcm" $(F a2.npy) --kernel box:5
expect_fail "overlapping boxes" -np 2 "$tcm" $(F a2.npy) --kernel box:3 --boxes 0+41,0+20/0+41,10+27
expect_fail "boxes leaving a gap" -np 2 "$tcm" $(F a2.npy) --kernel box:3 --boxes 0+20,0+37/21+20,0+37
expect_fail "boxes for another rank count" -np 3 "$tcm" $(F a2.npy) --kernel box:3 --boxes 0+20,0+37/20+21,0+37
expect_fail "grid of another size" -np 2 "$tcm" $(F a2.npy) --kernel box:3 --grid 3x1
if nvidia-smi -L >/dev/null 2>&1; then
    echo "skip backend cuda without a GPU: this machine has one"
else
    expect_fail "backend cuda without a GPU" -np 2 "$tcm" $(F a2.npy) --kernel box:3 --backend cuda
fi
echo "$pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ]
