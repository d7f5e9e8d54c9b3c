/* threads.c - tc__parallel_for.
 *
 * Simple version: threads are created per call and joined. Chunking
 * depends only on (n, threads), so every thread count gives the same
 * partition of work per chunk index and results do not depend on timing.
 * (A pinned persistent pool replaces this in the CPU-performance work.)
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct tc__chunk {
    tc__range_fn fn;
    void *arg;
    int64_t begin, end;
    int tid;
} tc__chunk;

static void *tc__chunk_main(void *p) {
    tc__chunk *c = p;
    c->fn(c->arg, c->begin, c->end, c->tid);
    return NULL;
}

void tc__parallel_for(int threads, int64_t n, tc__range_fn fn, void *arg) {
    if (n <= 0) return;
    if (threads < 1) threads = 1;
    if ((int64_t)threads > n) threads = (int)n;
    if (threads == 1) {
        fn(arg, 0, n, 0);
        return;
    }
    tc__chunk chunks[64];
    pthread_t tids[64];
    if (threads > 64) threads = 64;
    int64_t per = n / threads, extra = n % threads, at = 0;
    for (int t = 0; t < threads; t++) {
        int64_t len = per + (t < extra ? 1 : 0);
        chunks[t] = (tc__chunk){fn, arg, at, at + len, t};
        at += len;
    }
    int started[64] = {0};
    for (int t = 1; t < threads; t++)
        started[t] = pthread_create(&tids[t], NULL, tc__chunk_main, &chunks[t]) == 0;
    fn(arg, chunks[0].begin, chunks[0].end, 0);
    for (int t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        else /* could not start a thread: do its share here */
            fn(arg, chunks[t].begin, chunks[t].end, t);
    }
}
