#!/usr/bin/env bash
# test.sh - build tileconv and run every check. This is THE test command.
#
#   bash scripts/test.sh [--quick] [--no-fuzz] [--fuzz-time S] [-j N]
#
# Steps (each one is timed and reported; a failing step does not stop the
# later ones, the exit status is 1 when any step failed):
#   1. release   Release build in build/, `ctest --output-on-failure`
#   2b. python   the Python package (pyproject.toml): pip install
#                --no-build-isolation into the venv $TC_BUILD_DIR-venv (made
#                with --system-site-packages: Debian's numpy, scipy, pytest),
#                then pytest tests/python (scipy and a NumPy model of torch
#                as oracles; torch too when installed)
#   2. install   tests/install_check.sh: cmake --install into a temporary
#                prefix, then a C program via pkg-config and a CMake project
#                via find_package(tileconv) against it
#   3. asan      ASan+UBSan build (-DTC_SANITIZE=ON) in build-asan/, ctest
#                again with TILECONV_TEST_QUICK=1
#   4. fuzz      clang + libFuzzer build (-DTC_FUZZ=ON) in build-fuzz/;
#                fuzz_npy (.npy parser) and fuzz_desc (descriptor validation
#                and planning) for S seconds each (default 30), after the
#                regression inputs in tests/fuzz_corpus/<npy|desc>/
# --quick skips 3 and 4; --no-fuzz skips 4. The last line reads
# "TOTAL: N passed, N failed" (ctest tests of both builds, plus one per
# install check and fuzzer).
#
# Environment: TC_BUILD_DIR (default "build") names the build directories
# ($TC_BUILD_DIR, $TC_BUILD_DIR-asan, $TC_BUILD_DIR-fuzz); TILECONV_TEST_SEED is
# passed on to the tests; CMAKE_ARGS adds configure arguments to every build.
set -uo pipefail

usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1

quick=0 fuzz=1 fuzz_time=30 jobs=$(nproc 2>/dev/null || echo 2)
while (($#)); do
    case "$1" in
    --quick) quick=1 ;;
    --no-fuzz) fuzz=0 ;;
    --fuzz-time) fuzz_time=${2:?--fuzz-time needs seconds}; shift ;;
    --fuzz-time=*) fuzz_time=${1#*=} ;;
    -j) jobs=${2:?-j needs a number}; shift ;;
    -j*) jobs=${1#-j} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "test.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

B=${TC_BUILD_DIR:-build}
# shellcheck disable=SC2206 # CMAKE_ARGS is a word list on purpose
extra=(${CMAKE_ARGS:-})
# The python3 first on PATH may lack numpy (pyenv); the tests want one with it.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || echo python3)

t_all=$(date +%s)
steps=() # "name|ok/FAIL|detail|seconds"
total_pass=0 total_fail=0
failed=0

hdr() { printf '\n==== %s ====\n' "$*"; }
record() { # name status detail seconds
    steps+=("$1|$2|$3|$4")
    [ "$2" = ok ] || failed=1
}

# ctest_summary DIR: "P F" from the last ctest run in DIR (0 0 when none).
ctest_counts() {
    local log=$1
    local line
    line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
    if [ -z "$line" ]; then echo "0 0"; return; fi
    local f n
    f=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")
    n=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    echo "$((n - f)) $f"
}

# Sums the test harness lines "N passed, N failed, N skipped" of every test
# (from ctest's full log) into "cases: P passed, F failed, S skipped".
case_counts() {
    local log=$1/Testing/Temporary/LastTest.log
    [ -f "$log" ] || return 0
    awk '/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $1; f += $3; s += $5; n++ }
         END { if (n) printf "cases: %d passed, %d failed, %d skipped", p, f, s }' "$log"
}

# build_and_ctest NAME DIR ENV... -- CONFIGURE-ARGS...
build_and_ctest() {
    local name=$1 dir=$2
    shift 2
    local envs=()
    while (($#)) && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local t0 log
    t0=$(date +%s)
    log=$(mktemp /tmp/tileconv-ctest.XXXXXX)
    hdr "$name: configure + build in $dir"
    if ! cmake -S . -B "$dir" "$@" "${extra[@]}"; then
        total_fail=$((total_fail + 1))
        record "$name" FAIL "configure failed" $(($(date +%s) - t0))
        return
    fi
    if ! cmake --build "$dir" -j "$jobs"; then
        total_fail=$((total_fail + 1))
        record "$name" FAIL "build failed" $(($(date +%s) - t0))
        return
    fi
    hdr "$name: ctest ${envs[*]}"
    env "${envs[@]}" ctest --test-dir "$dir" --output-on-failure -j "$jobs" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local p f
    read -r p f < <(ctest_counts "$log")
    rm -f "$log"
    local cases
    cases=$(case_counts "$dir")
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    echo "$name: $p passed, $f failed${cases:+ ($cases)}"
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
        record "$name" FAIL "$p passed, $f failed${cases:+; $cases}" $(($(date +%s) - t0))
    elif [ "$p" -eq 0 ]; then
        total_fail=$((total_fail + 1))
        record "$name" FAIL "no tests found" $(($(date +%s) - t0))
    else
        record "$name" ok "$p passed, $f failed${cases:+; $cases}" $(($(date +%s) - t0))
    fi
}

echo "test.sh: $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, -j $jobs," \
     "python $py, seed ${TILECONV_TEST_SEED:-default}"

# ---- 1. release ----
build_and_ctest release "$B" -- -DCMAKE_BUILD_TYPE=Release

# ---- 2. install check ----
t0=$(date +%s)
hdr "install: cmake --install $B + pkg-config + find_package"
if [ -f "$B/CMakeCache.txt" ] && bash tests/install_check.sh "$B"; then
    total_pass=$((total_pass + 1))
    record install ok "pkg-config and find_package builds ran" $(($(date +%s) - t0))
else
    total_fail=$((total_fail + 1))
    record install FAIL "see the log above" $(($(date +%s) - t0))
fi

# ---- 2b. Python package: pip install into a venv, pytest ----
t0=$(date +%s)
hdr "python: pip install --no-build-isolation . into $B-venv, pytest tests/python"
venv=$root/$B-venv
if { [ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"; } &&
    TILECONV_BUILD_JOBS=$jobs "$venv/bin/python" -m pip install -q --no-build-isolation "$root" &&
    (cd "$root/tests/python" && "$venv/bin/python" -m pytest -q -p no:cacheprovider) | tee "$root/$B-pytest.log"; then
    n=$(grep -Eo '[0-9]+ passed' "$root/$B-pytest.log" | tail -1)
    total_pass=$((total_pass + 1))
    record python ok "${n:-?}" $(($(date +%s) - t0))
else
    total_fail=$((total_fail + 1))
    record python FAIL "see the log above" $(($(date +%s) - t0))
fi

if ((!quick)); then
    # ---- 3. sanitizers ----
    # CUDA off: nvcc takes no -fsanitize, and the point is the C code.
    # Debug (-O0): the AVX-512 kernels take minutes each to compile with the
    # sanitizers at -O1/-O2 and seconds at -O0; the tests run about as fast.
    # allocator_may_return_null: tests may check OUT_OF_MEMORY handling.
    build_and_ctest asan "$B-asan" TILECONV_TEST_QUICK=1 \
        ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:strict_init_order=1}" \
        UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" -- \
        -DCMAKE_BUILD_TYPE=Debug -DTC_SANITIZE=ON -DTC_ENABLE_CUDA=OFF \
        -DTC_BENCH_PEERS=OFF

    # ---- 4. fuzzing ----
    if ((fuzz)); then
        t0=$(date +%s)
        F=$B-fuzz
        hdr "fuzz: clang + libFuzzer build in $F"
        cc=${TC_FUZZ_CC:-clang}
        if ! command -v "$cc" >/dev/null; then
            total_fail=$((total_fail + 1))
            record fuzz FAIL "$cc not found (run scripts/deps.sh)" 0
        # Debug (-O0) for the same reason as the sanitizer build: clang
        # needs ~8 minutes for filter_direct_avx512.c instrumented at -O2
        elif ! CC=$cc cmake -S . -B "$F" -DCMAKE_BUILD_TYPE=Debug -DTC_FUZZ=ON \
                -DTC_ENABLE_CUDA=OFF -DTC_BENCH_PEERS=OFF "${extra[@]}" ||
             ! cmake --build "$F" -j "$jobs" --target fuzz; then
            total_fail=$((total_fail + 1))
            record fuzz FAIL "fuzz build failed" $(($(date +%s) - t0))
        else
            record fuzz-build ok "fuzz_npy fuzz_desc" $(($(date +%s) - t0))
            # seeds for the parser: a few valid files, grown into a corpus
            # kept in $F/corpus between runs
            mkdir -p "$F/corpus/npy" "$F/corpus/desc" "$F/artifacts"
            "$py" - "$F/corpus/npy" <<'EOF' 2>/dev/null || true
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/f32_2d.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
np.save(d + "/f64_3d.npy", np.ones((2, 3, 2)))
np.save(d + "/scalar.npy", np.float32(1.5))
np.save(d + "/f32_1d.npy", np.zeros(5, dtype="<f4"))
EOF
            for t in fuzz_npy fuzz_desc; do
                t0=$(date +%s)
                corpus=$F/corpus/${t#fuzz_}
                # regression inputs (past crashes, timeouts) run first, read-only
                seeds=tests/fuzz_corpus/${t#fuzz_}
                [ -d "$seeds" ] || seeds=
                hdr "fuzz: $t for ${fuzz_time} s (corpus $corpus)"
                if ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1}" \
                    "$F/$t" -max_total_time="$fuzz_time" -timeout=30 -rss_limit_mb=4096 \
                    -print_final_stats=1 -artifact_prefix="$F/artifacts/$t-" \
                    "$corpus" ${seeds:+"$seeds"} >"$F/$t.log" 2>&1; then
                    runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$F/$t.log")
                    echo "$t: ${runs:-?} runs, no crash"
                    total_pass=$((total_pass + 1))
                    record "$t" ok "${runs:-?} runs in ${fuzz_time} s" $(($(date +%s) - t0))
                else
                    # the report, without libFuzzer's progress lines
                    grep -v -E '^#[0-9]+[[:space:]]|^[[:space:]]+NEW_FUNC' "$F/$t.log" | tail -n 40
                    # shellcheck disable=SC2012 # artifact names are hex
                    art=$(ls -t "$F/artifacts/$t-"* 2>/dev/null | head -n 1)
                    echo "$t: FAILED; reproduce: $F/$t ${art:-<artifact>}"
                    total_fail=$((total_fail + 1))
                    record "$t" FAIL "crash: ${art:-see $F/$t.log}" $(($(date +%s) - t0))
                fi
            done
        fi
    fi
fi

hdr "summary"
for s in "${steps[@]}"; do
    IFS='|' read -r name status detail secs <<<"$s"
    printf '%-11s %-4s %5ss  %s\n' "$name" "$status" "$secs" "$detail"
done
echo "total time $(($(date +%s) - t_all)) s"
echo "TOTAL: $total_pass passed, $total_fail failed"
exit $failed
