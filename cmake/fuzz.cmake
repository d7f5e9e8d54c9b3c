# fuzz.cmake - libFuzzer targets (TC_FUZZ=ON, C compiler must be clang).
#
#   CC=clang cmake -S . -B build-fuzz -DTC_FUZZ=ON -DTC_ENABLE_CUDA=OFF
#   cmake --build build-fuzz --target fuzz_npy fuzz_desc
#   build-fuzz/fuzz_npy -max_total_time=30
#
# fuzz_npy:  tools/fuzz_npy.c + tools/npy.c (the .npy parser, libc only).
# fuzz_desc: tests/fuzz_desc.c against tileconv_fuzzlib, a static copy of
#            the library compiled with the same instrumentation, so that the
#            fuzzer sees coverage of descriptor validation and planning.
# scripts/test.sh builds and runs both for a bounded time.
if(NOT TC_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "TC_FUZZ=ON needs clang (libFuzzer): configure with "
                      "CC=clang, got ${CMAKE_C_COMPILER_ID}")
endif()

set(TC_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined
                  -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
set(TC_FUZZ_LINK -fsanitize=fuzzer,address,undefined)

add_library(tileconv_fuzzlib STATIC ${TC_SRC})
tc_configure_lib(tileconv_fuzzlib)
set_target_properties(tileconv_fuzzlib PROPERTIES OUTPUT_NAME tileconv_fuzz)
target_compile_options(tileconv_fuzzlib PRIVATE
  "$<$<COMPILE_LANGUAGE:C>:${TC_FUZZ_FLAGS}>")

set(TC_FUZZ_TARGETS "")
if(EXISTS ${PROJECT_SOURCE_DIR}/tools/fuzz_npy.c)
  add_executable(fuzz_npy tools/fuzz_npy.c tools/npy.c)
  target_include_directories(fuzz_npy PRIVATE ${PROJECT_SOURCE_DIR}/tools
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  list(APPEND TC_FUZZ_TARGETS fuzz_npy)
endif()
add_executable(fuzz_desc tests/fuzz_desc.c)
# the static library brings threads, libm, FFTW and CUDA as link-only deps
target_link_libraries(fuzz_desc PRIVATE tileconv_fuzzlib m)
list(APPEND TC_FUZZ_TARGETS fuzz_desc)

foreach(t ${TC_FUZZ_TARGETS})
  target_compile_options(${t} PRIVATE ${TC_FUZZ_FLAGS} ${TC_WARN})
  target_link_options(${t} PRIVATE ${TC_FUZZ_LINK})
endforeach()
add_custom_target(fuzz DEPENDS ${TC_FUZZ_TARGETS})
message(STATUS "tileconv: fuzz targets ${TC_FUZZ_TARGETS}")
