#!/usr/bin/env bash
# mpi_cli.sh - `tileconv-mpi filter` (MPI-IO in and out) against `tileconv
# filter` on one process, to the bit, with 2 and 3 ranks, every mode, 1D /
# 2D / 3D; bad input ends every rank with one line and leaves no output.
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
run() { # name file kernel extra...
    local name=$1 f=$2 k=$3
    shift 3
    "$tc" filter "$tmp/$f" "$tmp/ref.npy" --kernel "$k" --algo cpu.direct.halo "$@" 2>"$tmp/err" ||
        { bad "$name: tileconv filter failed: $(head -1 "$tmp/err")"; return; }
    for np in 2 3; do
        rm -f "$tmp/out.npy"
        if "$mpiexec" --oversubscribe -np $np "$tcm" filter "$tmp/$f" "$tmp/out.npy" --kernel "$k" \
            --algo cpu.direct.halo "$@" >/dev/null 2>"$tmp/err"; then
            if cmp -s "$tmp/ref.npy" "$tmp/out.npy"; then ok "$name, $np ranks"
            else bad "$name, $np ranks: output differs from one process"; fi
        else
            bad "$name, $np ranks: $(head -1 "$tmp/err")"
        fi
    done
}
for mode in constant nearest reflect mirror wrap; do
    run "1D k7 $mode" a1.npy box:7 --mode $mode --cval 0.5
    run "2D npy mask $mode origin" a2.npy "$tmp/k2.npy" --mode $mode --origin 1,0 --correlate
    run "3D gaussian $mode" a3.npy gaussian:0.8 --mode $mode
done
# bad input: one message, exit 1 or 2, no output file
expect_fail() { # name args...
    local name=$1
    shift
    rm -f "$tmp/out.npy"
    "$mpiexec" --oversubscribe -np 2 "$tcm" "$@" >/dev/null 2>"$tmp/err"
    local rc=$? n
    n=$(grep -c "^tileconv-mpi" "$tmp/err")
    if [ $rc -ne 0 ] && [ "$n" = 1 ] && [ ! -e "$tmp/out.npy" ] && ! ls "$tmp"/out.npy.tmp.* >/dev/null 2>&1; then
        ok "$name: $(grep '^tileconv-mpi' "$tmp/err")"
    else
        bad "$name: rc $rc, $n message lines, output $(ls "$tmp" | grep -c out)"
    fi
}
expect_fail "missing input" filter "$tmp/nope.npy" "$tmp/out.npy" --kernel box:3
expect_fail "file too short" filter "$tmp/short.npy" "$tmp/out.npy" --kernel box:3
expect_fail "unknown option" filter "$tmp/a2.npy" "$tmp/out.npy" --kernel box:3 --bogus
expect_fail "bad mode" filter "$tmp/a2.npy" "$tmp/out.npy" --kernel box:3 --mode sideways
expect_fail "mask taller than a slab" filter "$tmp/a1.npy" "$tmp/out.npy" --kernel box:201
echo "$pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ]
