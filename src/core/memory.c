/* memory.c - aligned allocation and the clock. */
#define _GNU_SOURCE
#include "internal.h"

#define TC__HUGE_ABOVE ((size_t)4 << 20)

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

void *tc__alloc(size_t bytes) {
    void *p = NULL;
    if (bytes == 0) bytes = 64;
    /* round up so the size is a multiple of the alignment (C11 rule) */
    if (bytes > SIZE_MAX - 63) return NULL;
    bytes = (bytes + 63) & ~(size_t)63;
    const char *nohuge = bytes >= TC__HUGE_ABOVE ? tc__knob_get(TC__KNOB_NO_HUGEPAGES) : NULL;
    if (bytes >= TC__HUGE_ABOVE && !(nohuge && nohuge[0] && strcmp(nohuge, "0") != 0)) {
        /* Large workspaces on 2 MiB boundaries with transparent huge pages
         * requested (Linux, THP "madvise" or "always"): fewer TLB misses,
         * and on virtual machines far less cost when memory is touched
         * again after a pause (docs/performance.md, "How it is measured"). */
        if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
        madvise(p, bytes, MADV_HUGEPAGE);
#endif
        return p;
    }
    if (posix_memalign(&p, 64, bytes) != 0) return NULL;
    return p;
}

void tc__free(void *p) { free(p); }

double tc__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
