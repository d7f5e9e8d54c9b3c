#!/usr/bin/env bash
# knobs.sh - the environment knobs and the solver-name aliases, through the CLI:
#   `tileconv info --knobs` lists every knob of src/core/knobs.h (and
#   docs/knobs.md documents each); an old knob name still works (read when
#   the TILECONV_ one is unset, reported as deprecated, and acted on: the
#   planner trace); an old algorithm name still plans, reported by its new
#   name; no code reads a TC_/TILECONV_ variable with getenv outside the
#   table.
# Usage: knobs.sh path/to/tileconv SOURCE_DIR
set -u
if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -f "$2/src/core/knobs.h" ]; then
    echo "usage: $0 path/to/tileconv SOURCE_DIR" >&2
    exit 2
fi
CLI=$1
SRC=$2
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# --- every knob of the table, listed once and documented ---
names=$(grep -o 'X([A-Z0-9_]*, "TILECONV_[A-Z0-9_]*"' "$SRC/src/core/knobs.h" | sed 's/.*"\(.*\)"/\1/')
n=$(echo "$names" | wc -l)
[ "$n" -ge 50 ] && ok || bad "knobs.h: only $n knobs parsed"
out=$(env -u TILECONV_PLAN_TRACE -u TC_PLAN_TRACE "$CLI" info --knobs) || bad "info --knobs exit $?"
head=$(echo "$out" | head -1)
[ "$head" = "knobs: $n (docs/knobs.md; an old name is read when the TILECONV_ one is unset)" ] && ok ||
    bad "info --knobs header '$head', expected $n knobs"
[ "$(echo "$out" | grep -c '^  TILECONV_')" -eq "$n" ] && ok || bad "info --knobs: not $n knob lines"
for k in $names; do
    [ "$(echo "$out" | grep -c "^  $k ")" -eq 1 ] || bad "info --knobs: $k not listed once"
    grep -q "\`$k\`" "$SRC/docs/knobs.md" || bad "docs/knobs.md lacks $k"
done
ok

# --- values, and an old name as an alias ---
out=$(env -u TC_PLAN_TRACE TILECONV_PLAN_TRACE=1 "$CLI" info --knobs | grep '^  TILECONV_PLAN_TRACE ')
case $out in *'= "1"  [core]'*) ok ;; *) bad "TILECONV_PLAN_TRACE=1 shown as: $out" ;; esac
out=$(env -u TILECONV_PLAN_TRACE TC_PLAN_TRACE=1 "$CLI" info --knobs | grep '^  TILECONV_PLAN_TRACE ')
case $out in *'= "1" (from TC_PLAN_TRACE, deprecated)'*) ok ;; *) bad "TC_PLAN_TRACE=1 shown as: $out" ;; esac
printf 'P5\n8 6\n255\n' > "$T/a.pgm"
head -c 48 /dev/zero | tr '\0' '\101' >> "$T/a.pgm"
err=$(env -u TILECONV_PLAN_TRACE TC_PLAN_TRACE=1 "$CLI" filter "$T/a.pgm" "$T/b.npy" --kernel box:3 2>&1 >/dev/null)
case $err in *'tileconv plan: '*) ok ;; *) bad "TC_PLAN_TRACE=1 (old name) printed no planner trace: $err" ;; esac
err=$(env -u TILECONV_PLAN_TRACE -u TC_PLAN_TRACE "$CLI" filter "$T/a.pgm" "$T/b.npy" --kernel box:3 2>&1 >/dev/null)
case $err in *'tileconv plan: '*) bad "planner trace without the knob" ;; *) ok ;; esac

# --- an old algorithm name: plans, reported by its new name ---
out=$("$CLI" filter "$T/a.pgm" "$T/b.npy" --kernel box:3 --algo ref.conv --verbose 2>&1)
case $out in *'algorithm=ref.conv.loops '*) ok ;; *) bad "--algo ref.conv: $out" ;; esac

# --- no knob read around the table ---
hits=$(cd "$SRC" && grep -rnE 'getenv\("(TC|TILECONV)_' src tools bench tests --include='*.c' \
    --include='*.h' --include='*.cu' --include='*.cuh' | grep -v '^src/core/knobs.h:')
[ -z "$hits" ] && ok || bad "getenv of a knob outside src/core/knobs.h:
$hits"

echo "knobs: $pass passed, $fail failed,"
[ "$fail" -eq 0 ]
