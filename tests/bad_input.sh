#!/bin/bash
# bad_input.sh - the tileconv CLI on bad files and bad options.
#
# usage: bad_input.sh PATH/TO/tileconv
#
# Every case must end with
#   - exit status 1 (runtime / data error) or 2 (usage error) as listed;
#     a status >= 128 (a signal: crash, abort) is a failure;
#   - exactly one line on stderr, starting with "tileconv:", and nothing on
#     stdout;
#   - no output file and no temporary file left behind: the output
#     directory stays empty and the input directory keeps its listing.
# Bad files are crafted at test time (pure Python, no numpy needed) in a
# mktemp directory. Prints each case, then "N passed, N failed, N skipped";
# exits non-zero when a case failed.
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 PATH/TO/tileconv (got '${1:-}')"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi
CLI=$1
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
if [ -z "$PY" ]; then
    echo "bad_input: FAILED: no python3 to craft the bad files"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/tc-bad-in.XXXXXX") || exit 1
O=$(mktemp -d "${TMPDIR:-/tmp}/tc-bad-out.XXXXXX") || exit 1
cleanup() { chmod -R u+rwx "$T" "$O" 2>/dev/null; rm -rf "$T" "$O"; }
trap cleanup EXIT
cd "$T" || exit 1

passed=0 failed=0 skipped=0

# ---------------------------------------------------------------------------
# the files
# ---------------------------------------------------------------------------
"$PY" - "$T" <<'EOF' || { echo "bad_input: cannot craft the files"; exit 1; }
import os, struct, sys
T = sys.argv[1]

def npy(name, header, payload=b"", magic=b"\x93NUMPY", version=b"\x01\x00",
        hlen=None):
    """Writes a .npy file with the given header text (padded like numpy)."""
    h = header.encode("latin-1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * (pad % 64) + b"\n"
    n = len(h) if hlen is None else hlen
    with open(os.path.join(T, name), "wb") as f:
        f.write(magic + version + struct.pack("<H", n) + h + payload)

def f32(n, start=0.25):
    return struct.pack("<%df" % n, *[start + 0.5 * (i % 7) for i in range(n)])

def hdr(descr="<f4", fortran="False", shape="(4, 5)"):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)

# good files (the control cases use them too)
npy("x2d.npy", hdr(), f32(20))
npy("x1d.npy", hdr(shape="(7,)"), f32(7))
npy("x3d.npy", hdr(shape="(3, 4, 5)"), f32(60))
npy("x4d.npy", hdr(shape="(2, 2, 2, 2)"), f32(16))
npy("m3x3.npy", hdr(shape="(3, 3)"), f32(9))
npy("m3.npy", hdr(shape="(3,)"), f32(3))
npy("m9x3.npy", hdr(shape="(9, 3)"), f32(27))
# conv: x N=1 C=4 6x6, w K=6 C=4 3x3 / K=6 C=2 (groups 2) / K=6 C=3
npy("cx.npy", hdr(shape="(1, 4, 6, 6)"), f32(144))
npy("cw.npy", hdr(shape="(6, 4, 3, 3)"), f32(216))
npy("cw_g2.npy", hdr(shape="(6, 2, 3, 3)"), f32(108))
npy("cw_c3.npy", hdr(shape="(6, 3, 3, 3)"), f32(162))
npy("cw_k5g2.npy", hdr(shape="(5, 2, 3, 3)"), f32(90))
npy("cw_big.npy", hdr(shape="(6, 4, 9, 9)"), f32(1944))
npy("cw_1d.npy", hdr(shape="(6, 4, 3)"), f32(72))
npy("cw_khwc.npy", hdr(shape="(6, 3, 3, 4)"), f32(216))  # K x mask x C (--weight-layout)
npy("cb6.npy", hdr(shape="(6,)"), f32(6))
npy("cb5.npy", hdr(shape="(5,)"), f32(5))
npy("cb2d.npy", hdr(shape="(2, 3)"), f32(6))
npy("cx2d.npy", hdr(shape="(4, 6)"), f32(24))

# broken files
open(os.path.join(T, "empty.npy"), "wb").close()
with open(os.path.join(T, "short_magic.npy"), "wb") as f: f.write(b"\x93NUM")
with open(os.path.join(T, "magic_only.npy"), "wb") as f: f.write(b"\x93NUMPY\x01\x00")
npy("bad_magic.npy", hdr(), f32(20), magic=b"\x93NUMPX")
npy("not_npy_text.npy", "", b"")  # overwritten below
with open(os.path.join(T, "not_npy_text.npy"), "w") as f: f.write("hello, world\n" * 10)
npy("bad_version.npy", hdr(), f32(20), version=b"\x09\x00")
npy("hdr_past_end.npy", hdr(), b"", hlen=5000)
npy("hdr_not_dict.npy", "[1, 2, 3]", f32(20))
npy("hdr_unterminated.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 5", f32(20))
npy("hdr_no_descr.npy", "{'fortran_order': False, 'shape': (4, 5), }", f32(20))
npy("hdr_no_shape.npy", "{'descr': '<f4', 'fortran_order': False, }", f32(20))
npy("hdr_shape_not_tuple.npy", hdr(shape="'abc'"), f32(20))
npy("hdr_nul.npy", "{'descr': '<f4',\0 'fortran_order': False, 'shape': (4, 5), }", f32(20))
npy("dtype_i4.npy", hdr(descr="<i4"), struct.pack("<20i", *range(1, 21)))
npy("dtype_be_f4.npy", hdr(descr=">f4"), struct.pack(">20f", *[0.5] * 20))
npy("dtype_c8.npy", hdr(descr="<c8"), f32(40))
npy("dtype_v2.npy", hdr(descr="<V2"), b"\x80\x3f" * 20)  # bfloat16 as ml_dtypes saves it
npy("dtype_be_f2.npy", hdr(descr=">f2"), b"\x3c\x00" * 20)
npy("cx_cl_f2.npy", hdr(descr="<f2", shape="(1, 6, 6, 4)"), b"\x00\x3c" * 144)
npy("cr_cl_f2.npy", hdr(descr="<f2", shape="(1, 4, 4, 6)"), b"\x00\xbc" * 96)
npy("dtype_garbage.npy", hdr(descr="<zz9"), f32(20))
npy("fortran.npy", hdr(fortran="True"), f32(20))
npy("shape_neg.npy", hdr(shape="(-1, 5)"), f32(20))
npy("shape_zero.npy", hdr(shape="(0, 5)"), b"")
npy("shape_empty_tuple.npy", hdr(shape="()"), f32(1))
npy("shape_overflow.npy", hdr(shape="(4294967296, 4294967296, 16)"), f32(20))
npy("shape_2p63.npy", hdr(shape="(9223372036854775808,)"), f32(20))
npy("shape_huge_digits.npy", hdr(shape="(99999999999999999999999999999, 5)"), f32(20))
npy("payload_short.npy", hdr(), f32(15))
npy("payload_short_byte.npy", hdr(), f32(20)[:-1])
npy("x9d.npy", hdr(shape="(1, 1, 1, 1, 1, 1, 1, 1, 2)"), f32(2))
with open(os.path.join(T, "bad.png"), "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + b"\x00" * 5)
with open(os.path.join(T, "bad.pgm"), "wb") as f: f.write(b"P5\n4 4\n255\n\x01\x02")
with open(os.path.join(T, "bad_maxval.pgm"), "wb") as f: f.write(b"P5\n2 2\n70000\n" + b"\0" * 8)
with open(os.path.join(T, "neg.pgm"), "wb") as f: f.write(b"P5\n-4 4\n255\n" + b"\0" * 16)
with open(os.path.join(T, "rgb.ppm"), "wb") as f: f.write(b"P6\n2 2\n255\n" + bytes(range(12)))
with open(os.path.join(T, "gray.pgm"), "wb") as f: f.write(b"P5\n3 3\n255\n" + bytes(range(9)))
EOF
mkdir "$T/adir" "$T/adir.npy" "$T/outdir.npy"
cp "$T/x2d.npy" "$T/noperm.npy" && chmod 000 "$T/noperm.npy"
INPUTS=$(cd "$T" && ls -A | sort)

# ---------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------
# expect "1|2" NAME ARGS...: runs the CLI and checks status, message, files.
expect() {
    local want=$1 name=$2
    shift 2
    "$CLI" "$@" >"$O/.stdout" 2>"$O/.stderr"
    local rc=$? why=""
    local err out lines
    err=$(cat "$O/.stderr")
    out=$(cat "$O/.stdout")
    rm -f "$O/.stdout" "$O/.stderr"
    lines=$(printf '%s' "$err" | grep -c '')
    if [ "$rc" -ge 128 ]; then
        why="crashed (status $rc)"
    elif [ "$rc" -eq 0 ]; then
        why="succeeded (status 0)"
    elif ! [[ "|$want|" == *"|$rc|"* ]]; then
        why="status $rc, expected $want"
    elif [ "$lines" -ne 1 ]; then
        why="$lines lines on stderr, expected one"
    elif [[ "$err" != tileconv:* ]]; then
        why="message does not start with 'tileconv:'"
    elif [ -n "$out" ]; then
        why="printed on stdout: $out"
    fi
    local left now
    left=$(cd "$O" && ls -A)
    now=$(cd "$T" && ls -A | sort)
    if [ -n "$left" ]; then
        why="${why:+$why; }left in the output dir: $left"
        rm -rf "${O:?}"/* "${O:?}"/.[!.]* 2>/dev/null
    fi
    if [ "$now" != "$INPUTS" ]; then
        why="${why:+$why; }input dir changed: $(diff <(echo "$INPUTS") <(echo "$now") | grep '^[<>]' | tr '\n' ' ')"
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        printf 'ok   %-52s %s\n' "$name" "$err"
    else
        failed=$((failed + 1))
        printf 'FAIL %-52s %s\n     command: tileconv %s\n     stderr: %s\n' \
            "$name" "$why" "$*" "$err"
    fi
}

# control: a good run must work (otherwise every case below is meaningless)
control() {
    local name=$1 out=$2
    shift 2
    if "$CLI" "$@" >/dev/null 2>"$O/.stderr" && [ -s "$out" ]; then
        passed=$((passed + 1))
        printf 'ok   %-52s\n' "$name"
    else
        failed=$((failed + 1))
        printf 'FAIL %-52s good input failed: %s\n' "$name" "$(cat "$O/.stderr")"
    fi
    rm -rf "${O:?}"/* "$O/.stderr"
}

Y=$O/y.npy
F=(filter x2d.npy "$Y")
C=(conv cx.npy cw.npy "$Y")

control "control: filter" "$Y" "${F[@]}" --kernel m3x3.npy
control "control: filter named mask" "$Y" "${F[@]}" --kernel box:3
control "control: conv" "$Y" "${C[@]}" --bias cb6.npy --padding 1
control "control: conv groups" "$Y" conv cx.npy cw_g2.npy "$Y" --groups 2
control "control: image" "$O/y.pgm" filter gray.pgm "$O/y.pgm" --kernel box:3
control "control: conv float16 channels_last relu residual" "$Y" conv cx_cl_f2.npy cw.npy "$Y" \
    --layout channels_last --activation relu --residual cr_cl_f2.npy
expect 2 "conv unknown layout" "${C[@]}" --layout nhwc
control "control: conv channels_last weights" "$Y" conv cx.npy cw_khwc.npy "$Y" \
    --weight-layout channels_last --padding 1
expect 2 "conv unknown weight layout" "${C[@]}" --weight-layout khwc
expect 1 "conv K x C x mask weights read as K x mask x C" "${C[@]}" \
    --weight-layout channels_last
expect 2 "conv unknown activation" "${C[@]}" --activation swish
expect 1 "conv residual of the wrong shape" "${C[@]}" --residual cb6.npy
expect 1 "conv residual in the channels-first shape with channels_last" conv cx_cl_f2.npy \
    cw.npy "$Y" --layout channels_last --residual cb2d.npy

# --- missing, unreadable, wrong kinds of files ---
expect 1 "missing input" filter nosuch.npy "$Y" --kernel m3x3.npy
expect 1 "missing kernel file" "${F[@]}" --kernel nosuch.npy
expect 1 "missing conv weight" conv cx.npy nosuch.npy "$Y"
expect 1 "missing conv bias" "${C[@]}" --bias nosuch.npy
if [ "$(id -u)" -eq 0 ]; then
    skipped=$((skipped + 1))
    echo "SKIP unreadable input (chmod 000): running as root, which can read it anyway"
else
    expect 1 "unreadable input (chmod 000)" filter noperm.npy "$Y" --kernel m3x3.npy
    expect 1 "unreadable kernel (chmod 000)" "${F[@]}" --kernel noperm.npy
fi
expect 1 "directory as input" filter adir.npy "$Y" --kernel m3x3.npy
expect 1 "directory as input (no extension)" filter adir "$Y" --kernel m3x3.npy
expect 1 "directory as kernel" "${F[@]}" --kernel adir.npy
expect 1 "directory as conv weight" conv cx.npy adir.npy "$Y"
expect 1 "output is a directory" filter x2d.npy outdir.npy --kernel m3x3.npy
expect 1 "output is the output dir itself" filter x2d.npy "$O" --kernel m3x3.npy
expect 1 "output in a missing directory" filter x2d.npy "$O/nodir/y.npy" --kernel m3x3.npy
expect 1 "output under /proc" filter x2d.npy /proc/x.npy --kernel m3x3.npy
expect 1 "conv output under /proc" "${C[@]:0:3}" /proc/x.npy
expect "1|2" "input is not .npy or an image" filter m3.txt "$Y" --kernel m3x3.npy

# --- corrupt .npy files, as input, as kernel, as conv operands ---
for f in empty short_magic magic_only bad_magic not_npy_text bad_version hdr_past_end \
    hdr_not_dict hdr_unterminated hdr_no_descr hdr_no_shape hdr_shape_not_tuple hdr_nul \
    dtype_i4 dtype_be_f4 dtype_c8 dtype_v2 dtype_be_f2 dtype_garbage fortran shape_neg shape_zero \
    shape_overflow shape_2p63 shape_huge_digits payload_short payload_short_byte; do
    expect 1 "input $f.npy" filter $f.npy "$Y" --kernel m3x3.npy
done
for f in empty bad_magic hdr_past_end hdr_not_dict dtype_i4 dtype_c8 fortran shape_neg \
    shape_zero shape_overflow payload_short; do
    expect 1 "kernel $f.npy" "${F[@]}" --kernel $f.npy
    expect 1 "conv weight $f.npy" conv cx.npy $f.npy "$Y"
done
for f in bad_magic dtype_i4 shape_overflow payload_short; do
    expect 1 "conv input $f.npy" conv $f.npy cw.npy "$Y"
    expect 1 "conv bias $f.npy" "${C[@]}" --bias $f.npy
done
expect 1 "input with 4 dims (filter takes 1-3)" filter x4d.npy "$Y" --kernel m3x3.npy
expect 1 "input with 9 dims" filter x9d.npy "$Y" --kernel m3x3.npy
expect 1 "corrupt PNG" filter bad.png "$O/y.png" --kernel box:3
expect 1 "truncated PGM" filter bad.pgm "$O/y.pgm" --kernel box:3
expect 1 "PGM maxval 70000" filter bad_maxval.pgm "$O/y.pgm" --kernel box:3
expect 1 "PGM negative width" filter neg.pgm "$O/y.pgm" --kernel box:3
expect "1|2" "RGB image written as PGM" filter rgb.ppm "$O/y.pgm" --kernel box:3
expect "1|2" "image output from an .npy input" filter x2d.npy "$O/y.png" --kernel box:3

# --- filter: semantic errors ---
expect 1 "kernel rank 1 for a 2D input" "${F[@]}" --kernel m3.npy
expect 1 "kernel rank 2 for a 3D input" filter x3d.npy "$Y" --kernel m3x3.npy
expect 1 "origin out of range (2 for size 3)" "${F[@]}" --kernel m3x3.npy --origin 2
expect 1 "origin out of range on axis 1" "${F[@]}" --kernel m3x3.npy --origin 0,-2
expect "1|2" "three origins for a 2D input" "${F[@]}" --kernel m3x3.npy --origin 0,0,0
expect "1|2" "sobel-x on a 1D input" filter x1d.npy "$Y" --kernel sobel-x
expect 1 "valid: mask larger on one axis only" "${F[@]}" --kernel m9x3.npy --output valid
expect 1 "unknown algorithm" "${F[@]}" --kernel m3x3.npy --algo no.such.algo
expect 1 "algorithm for another operation" "${F[@]}" --kernel m3x3.npy --algo ref.gemm.loops

# --- filter: usage errors ---
expect 2 "no arguments to filter" filter
expect 2 "missing --kernel" filter x2d.npy "$Y"
expect 2 "missing output" filter x2d.npy --kernel m3x3.npy
expect 2 "extra positional" "${F[@]}" extra.npy --kernel m3x3.npy
expect 2 "unknown option" "${F[@]}" --kernel m3x3.npy --bogus
expect 2 "unknown mode" "${F[@]}" --kernel m3x3.npy --mode bogus
expect 2 "unknown output kind" "${F[@]}" --kernel m3x3.npy --output sideways
expect 2 "--cval abc" "${F[@]}" --kernel m3x3.npy --mode constant --cval abc
expect 2 "--cval empty" "${F[@]}" --kernel m3x3.npy --cval ""
expect 2 "--threads 2x" "${F[@]}" --kernel m3x3.npy --threads 2x
expect 2 "--threads -1" "${F[@]}" --kernel m3x3.npy --threads -1
expect 2 "--threads 99999999999999999999" "${F[@]}" --kernel m3x3.npy --threads 99999999999999999999
expect 2 "--origin 1,,2" "${F[@]}" --kernel m3x3.npy --origin 1,,2
expect 2 "--origin empty" "${F[@]}" --kernel m3x3.npy --origin ""
expect 2 "--origin 1," "${F[@]}" --kernel m3x3.npy --origin 1,
expect 2 "--origin x" "${F[@]}" --kernel m3x3.npy --origin x
expect 2 "--origin with 4 values" "${F[@]}" --kernel m3x3.npy --origin 0,0,0,0
expect 2 "--mode with --output full" "${F[@]}" --kernel m3x3.npy --output full --mode wrap
expect 2 "--origin with --output valid" "${F[@]}" --kernel m3x3.npy --output valid --origin 1
expect 2 "option without its value" "${F[@]}" --kernel
expect 2 "--correlate=yes" "${F[@]}" --kernel m3x3.npy --correlate=yes
expect 2 "unknown named mask" "${F[@]}" --kernel blur
expect 2 "box:0" "${F[@]}" --kernel box:0
expect 2 "box:abc" "${F[@]}" --kernel box:abc
expect 2 "gaussian:-1" "${F[@]}" --kernel gaussian:-1
expect 2 "gaussian:nan" "${F[@]}" --kernel gaussian:nan
expect 2 "--backend gpu" "${F[@]}" --kernel m3x3.npy --backend gpu
expect 2 "--repeat 0" "${F[@]}" --kernel m3x3.npy --repeat 0
expect 2 "unknown command" frobnicate x2d.npy
expect 2 "no command" ""

# --- conv ---
expect 1 "groups=3 does not divide C=4" "${C[@]}" --groups 3
expect 1 "groups=2 does not divide K=5" conv cx.npy cw_k5g2.npy "$Y" --groups 2
expect 1 "weight channels 3, input C=4" conv cx.npy cw_c3.npy "$Y"
expect 1 "weight channels 4 with groups 2" "${C[@]}" --groups 2
expect 1 "weight rank 3 for a 4-dim input" conv cx.npy cw_1d.npy "$Y"
expect 1 "input rank 2" conv cx2d.npy cw.npy "$Y"
expect 1 "bias of 5 for K=6" "${C[@]}" --bias cb5.npy
expect 1 "bias of rank 2" "${C[@]}" --bias cb2d.npy
expect 1 "effective kernel larger than padded input" conv cx.npy cw_big.npy "$Y"
expect 1 "dilated kernel larger than padded input" "${C[@]}" --dilation 3
expect 1 "reflect padding >= input" "${C[@]}" --padding 6 --padding-mode reflect
expect 1 "circular padding > input" "${C[@]}" --padding 7 --padding-mode circular
expect "1|2" "padding same with stride 2" "${C[@]}" --padding same --stride 2
expect 2 "--stride 0" "${C[@]}" --stride 0
expect 2 "--stride -1" "${C[@]}" --stride -1
expect 2 "--stride 1,0" "${C[@]}" --stride 1,0
expect 2 "--stride 1,,1" "${C[@]}" --stride 1,,1
expect 2 "--dilation 0" "${C[@]}" --dilation 0
expect 2 "--dilation -2" "${C[@]}" --dilation -2
expect 2 "--padding -1" "${C[@]}" --padding -1
expect 2 "--padding 1,-1" "${C[@]}" --padding 1,-1
expect 2 "--padding bogus" "${C[@]}" --padding bogus
expect 2 "--groups 0" "${C[@]}" --groups 0
expect 2 "--groups x" "${C[@]}" --groups x
expect 2 "--padding-mode bogus" "${C[@]}" --padding-mode bogus
expect "1|2" "--stride with 3 values for 2D" "${C[@]}" --stride 1,1,1
expect 2 "--stride with 4 values" "${C[@]}" --stride 1,1,1,1
expect 2 "conv missing output" conv cx.npy cw.npy
expect 2 "conv unknown option" "${C[@]}" --kernel m3x3.npy

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
