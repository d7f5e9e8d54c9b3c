/*
 * fuzz_npy.c - libFuzzer target for the .npy parser.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Itools \
 *         tools/fuzz_npy.c tools/npy.c -o fuzz_npy
 *   ./fuzz_npy -max_total_time=20
 *
 * Every input must either parse into an array whose size matches its shape
 * or fail with a non-empty message; nothing may crash or leak.
 */
#include "npy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    npy_array a;
    char err[256] = "";
    if (npy_parse(data, size, &a, err, sizeof err) == 0) {
        size_t n = 1;
        for (int i = 0; i < a.ndim; i++) n *= (size_t)a.shape[i];
        if (n != a.count || !a.data) abort();
        /* Touch the copy so ASan checks its extent. */
        volatile unsigned char sink = ((unsigned char *)a.data)[a.count * npy_dtype_size(a.dtype) - 1];
        (void)sink;
        npy_free(&a);
    } else if (err[0] == 0) {
        abort();
    }
    return 0;
}
