#!/usr/bin/env bash
# deps.sh - install the Debian packages tileconv needs to build and test.
#
#   bash scripts/deps.sh           # as root: compilers, CMake, libpng, FFTW,
#                                  # python3 + numpy + scipy, clang + libFuzzer
#   bash scripts/deps.sh --bench   # also the benchmark's peers (oneDNN,
#                                  # OpenCV, OpenBLAS, g++)
#
# Idempotent: when every package is already installed (dpkg -s) it does not
# touch apt at all. Not root and something missing: prints what is missing
# and the command to install it, and exits 1. The CUDA toolkit is not a
# Debian package here; the build uses /usr/local/cuda when it is present.
set -euo pipefail

usage() { sed -n '2,13s/^# \{0,1\}//p' "$0"; }

bench=0
for arg in "$@"; do
    case "$arg" in
    --bench) bench=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "deps.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps.sh: not a Debian-based system (no dpkg); install by hand: a C11" \
         "compiler, cmake >= 3.20, pkg-config, libpng, fftw3, python3 with numpy" \
         "and scipy, clang with libFuzzer" >&2
    exit 1
fi

required=(build-essential gcc cmake pkg-config libpng-dev libfftw3-dev
          python3 python3-numpy python3-scipy clang
          python3-dev python3-venv python3-pip python3-setuptools python3-wheel
          python3-pytest python3-dask python3-distributed
          python3-torch
          libopenmpi-dev openmpi-bin)
# libFuzzer and the sanitizer runtimes: one of these (the default meta
# package on bookworm and later, or the versioned one).
rt_alternatives=(libclang-rt-dev libclang-rt-14-dev libclang-rt-15-dev
                 libclang-rt-16-dev libclang-rt-17-dev libclang-rt-18-dev
                 libclang-rt-19-dev)
bench_pkgs=(libdnnl-dev libopencv-dev libopenblas-dev g++)

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in "${required[@]}"; do installed "$p" || missing+=("$p"); done
have_rt=0
for p in "${rt_alternatives[@]}"; do
    if installed "$p"; then have_rt=1; break; fi
done
if ((bench)); then
    for p in "${bench_pkgs[@]}"; do installed "$p" || missing+=("$p"); done
fi

if ((${#missing[@]} == 0 && have_rt)); then
    echo "deps.sh: all packages present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    ((have_rt)) || missing+=("libclang-rt-dev (or libclang-rt-14-dev)")
    echo "deps.sh: missing packages: ${missing[*]}" >&2
    echo "deps.sh: run as root: sudo bash scripts/deps.sh$( ((bench)) && echo ' --bench')" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/tileconv-deps.XXXXXX.log)
trap 'rm -f "$log"' EXIT
run() {
    if ! "$@" >>"$log" 2>&1; then
        echo "deps.sh: failed: $*" >&2
        tail -n 30 "$log" >&2
        exit 1
    fi
}

run apt-get update -qq
if ! ((have_rt)); then
    # the first alternative this distribution offers
    for p in "${rt_alternatives[@]}"; do
        if apt-cache show "$p" >/dev/null 2>&1; then missing+=("$p"); have_rt=1; break; fi
    done
    ((have_rt)) || echo "deps.sh: no libclang-rt package found; hoping clang ships libFuzzer itself" >&2
fi
echo "deps.sh: installing ${missing[*]}"
run apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps.sh: done"
