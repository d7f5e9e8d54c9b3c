/* memory.c - aligned allocation and the clock. */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <time.h>

void *tc__alloc(size_t bytes) {
    void *p = NULL;
    if (bytes == 0) bytes = 64;
    /* round up so the size is a multiple of the alignment (C11 rule) */
    if (bytes > SIZE_MAX - 63) return NULL;
    bytes = (bytes + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, bytes) != 0) return NULL;
    return p;
}

void tc__free(void *p) { free(p); }

double tc__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
