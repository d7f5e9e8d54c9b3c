#!/usr/bin/env bash
# install_check.sh - does an installed tileconv work for its users?
#
#   bash tests/install_check.sh [BUILD_DIR]     (default: build)
#
# Installs BUILD_DIR into a temporary prefix, then builds and runs, against
# that prefix only:
#   1. the C example of README.md (between "example:begin" and
#      "example:end"), compiled with `pkg-config --cflags --libs tileconv`
#      (shared library);
#   2. the same program linked statically with `pkg-config --static`, which
#      checks Libs.private (threads, libm, FFTW, the CUDA runtime);
#   3. a CMake project using find_package(tileconv) with both
#      tileconv::tileconv and tileconv::tileconv_static;
#   4. the installed CLI, `tileconv --version`, and its dependencies: the
#      NEEDED entries of bin/tileconv may name only the C library, libm,
#      pthreads, libpng, FFTW and, in a CUDA build, the CUDA runtime, cuFFT
#      and the C++ runtime they pull in; never a benchmark peer (oneDNN,
#      OpenCV, OpenBLAS, OpenMP, TBB), which live in tileconv-bench.
# Run by scripts/test.sh after the Release build; not a ctest test because
# it needs the whole build installed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d /tmp/tileconv-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

step() { printf 'install_check: %s\n' "$*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"

pc=$(find "$prefix" -name tileconv.pc -print -quit)
cfg=$(find "$prefix" -name tileconvConfig.cmake -print -quit)
[ -n "$pc" ] || { echo "install_check: no tileconv.pc installed" >&2; exit 1; }
[ -n "$cfg" ] || { echo "install_check: no tileconvConfig.cmake installed" >&2; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
[ -f "$prefix/include/tileconv.h" ] || { echo "install_check: no include/tileconv.h" >&2; exit 1; }

# The README's example, so that the README cannot drift from the API.
sed -n '/example:begin/,/example:end/p' "$root/README.md" | sed '1,/^```c/d;/^```/,$d' >"$tmp/example.c"
[ -s "$tmp/example.c" ] || { echo "install_check: no C example found in README.md" >&2; exit 1; }

# only the installed tileconv.pc, never a system one (it has no Requires)
PKG_CONFIG_LIBDIR=$(dirname "$pc")
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH=

step "pkg-config: $(pkg-config --modversion tileconv), cflags '$(pkg-config --cflags tileconv)'," \
     "libs '$(pkg-config --libs tileconv)', static '$(pkg-config --static --libs tileconv)'"

step "1. example, shared, via pkg-config"
# shellcheck disable=SC2046
$cc -std=c11 -O2 -Wall -Wextra -Werror "$tmp/example.c" -o "$tmp/example_shared" \
    $(pkg-config --cflags --libs tileconv) -lm
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/example_shared"

step "2. example, static, via pkg-config --static"
static_libs=$(pkg-config --static --libs tileconv | sed -E 's/(^| )-ltileconv( |$)/ /')
# shellcheck disable=SC2046,SC2086
$cc -std=c11 -O2 -Wall -Wextra -Werror "$tmp/example.c" -o "$tmp/example_static" \
    $(pkg-config --cflags tileconv) "$libdir/libtileconv.a" $static_libs
if ldd "$tmp/example_static" | grep -q libtileconv; then
    echo "install_check: the static example links libtileconv.so" >&2
    exit 1
fi
"$tmp/example_static"

step "3. CMake project with find_package(tileconv)"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_PATH # FFTW's .pc files are the system's
mkdir -p "$tmp/proj"
cp "$tmp/example.c" "$tmp/proj/example.c"
cat >"$tmp/proj/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(tileconv_consumer LANGUAGES C)
find_package(tileconv 0.1 REQUIRED)
add_executable(example_shared example.c)
target_link_libraries(example_shared PRIVATE tileconv::tileconv)
add_executable(example_static example.c)
target_link_libraries(example_static PRIVATE tileconv::tileconv_static)
foreach(t example_shared example_static)
  target_compile_options(${t} PRIVATE -Wall -Wextra -Werror)
endforeach()
EOF
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$tmp/proj.log" 2>&1 ||
    { cat "$tmp/proj.log" >&2; exit 1; }
cmake --build "$tmp/proj/build" >>"$tmp/proj.log" 2>&1 ||
    { cat "$tmp/proj.log" >&2; exit 1; }
"$tmp/proj/build/example_shared"
"$tmp/proj/build/example_static"

step "4. installed CLI"
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$prefix/bin/tileconv" --version
needed=$(readelf -d "$prefix/bin/tileconv" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
step "tileconv needs: $(echo $needed)"
cuda=0
grep -q 'libcudart' <<<"$needed" && cuda=1
bad=""
for lib in $needed; do
    case "$lib" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*.so.* | \
    libpng*.so.* | libz.so.* | libfftw3*.so.*) ;;
    libcudart.so.* | libcufft.so.* | libstdc++.so.* | libgcc_s.so.*)
        [ "$cuda" = 1 ] || bad="$bad $lib" ;;
    *) bad="$bad $lib" ;;
    esac
done
case "$needed" in *fftw3f_threads* | *gomp* | *dnnl* | *opencv* | *openblas* | *tbb*)
    bad="$bad (a benchmark peer)" ;;
esac
if [ -n "$bad" ]; then
    echo "install_check: bin/tileconv depends on:$bad" >&2
    exit 1
fi
if [ -x "$prefix/bin/tileconv-bench" ]; then
    step "tileconv bench runs the installed tileconv-bench"
    PATH=/nonexistent LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        "$prefix/bin/tileconv" bench --help | head -n 1
fi

step "ok"
