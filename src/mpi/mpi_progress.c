/*
 * mpi_progress.c - the progress thread of a distributed plan (mpi_plan.h).
 *
 * Open MPI moves a message only inside MPI calls: over shared memory the
 * receiver copies a large message from the sender's memory (single-copy
 * get) when one of its calls matches the sender's header, and the send
 * completes when the sender's call sees the receiver's acknowledgement.
 * With one thread per rank those copies run inside the rank's own MPI
 * calls, between or after its interior, on the critical path. Here one
 * thread per plan does all of the exchange's MPI work while the calling
 * thread computes: it packs and posts the messages, tests them, unpacks the
 * staged receives into ext and reports the receives complete, then tests the
 * sends until they complete. The caller makes no MPI call between handing a
 * job over and seeing it finished, so MPI_THREAD_SERIALIZED suffices (only
 * one thread is ever inside MPI).
 *
 * The thread sleeps between tests (pthread_cond_timedwait, starting at
 * TC_PROG_POLL0_NS and doubling up to TC_PROG_POLLMAX_NS) so that with one
 * core per rank it takes little from the compute: a few wake-ups per
 * execute when the peers are on time. When the caller reaches a point where
 * it needs the exchange (the receives before the rims, the sends at the
 * end) it sets `hurry` and the thread tests without sleeping while the
 * caller blocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_plan.h"

#define TC_PROG_POLL0_NS 20000L     /* first sleep between tests */
#define TC_PROG_POLLMAX_NS 1000000L /* longest sleep between tests */

double tc__mpi_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Tests requests [from, from + n) until they complete; sleeps between
 * tests unless the caller waits. Adds the time spent testing while the
 * caller computed (not hurried) to the thread's busy time. */
static void drive(tc_mpi_plan *p, int from, int n) {
    tc__mpi_prog *g = p->prog;
    long sleep_ns = TC_PROG_POLL0_NS;
    for (;;) {
        int hurry = __atomic_load_n(&g->hurry, __ATOMIC_ACQUIRE), flag = 0;
        double t = tc__mpi_now();
        MPI_Testall(n, p->req + from, &flag, MPI_STATUSES_IGNORE);
        if (!hurry) g->busy += tc__mpi_now() - t;
        if (flag) return;
        if (hurry) continue;
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_nsec += sleep_ns;
        while (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&g->mu);
        while (!__atomic_load_n(&g->hurry, __ATOMIC_ACQUIRE)) {
            int rc = pthread_cond_timedwait(&g->wake, &g->mu, &dl);
            if (rc == ETIMEDOUT) break;
        }
        pthread_mutex_unlock(&g->mu);
        if (sleep_ns < TC_PROG_POLLMAX_NS) sleep_ns *= 2;
    }
}

static void *prog_main(void *arg) {
    tc_mpi_plan *p = arg;
    tc__mpi_prog *g = p->prog;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->job && !g->quit) pthread_cond_wait(&g->wake, &g->mu);
        if (g->quit) break;
        g->job = 0;
        const void *x = g->x;
        pthread_mutex_unlock(&g->mu);
        double t = tc__mpi_now();
        tc__mpi_post(p, x);
        g->busy += tc__mpi_now() - t;
        drive(p, 0, p->nrecv);
        t = tc__mpi_now();
        int hurry = __atomic_load_n(&g->hurry, __ATOMIC_ACQUIRE);
        tc__mpi_unpack(p);
        if (!hurry) g->busy += tc__mpi_now() - t;
        pthread_mutex_lock(&g->mu);
        __atomic_store_n(&g->recv_done, 1, __ATOMIC_RELEASE);
        /* the rims run now: back to sleeping between tests */
        __atomic_store_n(&g->hurry, 0, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&g->done);
        pthread_mutex_unlock(&g->mu);
        drive(p, p->nrecv, p->nsend);
        pthread_mutex_lock(&g->mu);
        __atomic_store_n(&g->all_done, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&g->done);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int tc__mpi_prog_start(tc_mpi_plan *p) {
    tc__mpi_prog *g = calloc(1, sizeof *g);
    if (!g) return -1;
    pthread_condattr_t ca;
    int ok = pthread_condattr_init(&ca) == 0;
    ok = ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_mutex_init(&g->mu, NULL) == 0;
    if (ok && pthread_cond_init(&g->wake, &ca) != 0) ok = 0;
    if (ok && pthread_cond_init(&g->done, NULL) != 0) {
        pthread_cond_destroy(&g->wake);
        ok = 0;
    }
    pthread_condattr_destroy(&ca);
    if (!ok) {
        free(g);
        return -1;
    }
    g->all_done = g->recv_done = 1;
    p->prog = g;
    if (pthread_create(&g->thread, NULL, prog_main, p) != 0) {
        pthread_cond_destroy(&g->wake);
        pthread_cond_destroy(&g->done);
        pthread_mutex_destroy(&g->mu);
        free(g);
        p->prog = NULL;
        return -1;
    }
    return 0;
}

void tc__mpi_prog_stop(tc_mpi_plan *p) {
    tc__mpi_prog *g = p->prog;
    if (!g) return;
    pthread_mutex_lock(&g->mu);
    g->quit = 1;
    pthread_cond_broadcast(&g->wake);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->thread, NULL);
    pthread_cond_destroy(&g->wake);
    pthread_cond_destroy(&g->done);
    pthread_mutex_destroy(&g->mu);
    free(g);
    p->prog = NULL;
}

void tc__mpi_prog_begin(tc_mpi_plan *p, const void *x) {
    tc__mpi_prog *g = p->prog;
    pthread_mutex_lock(&g->mu);
    g->x = x;
    g->busy = 0;
    __atomic_store_n(&g->hurry, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&g->recv_done, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&g->all_done, 0, __ATOMIC_RELEASE);
    g->job = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void tc__mpi_prog_wait(tc_mpi_plan *p, int all) {
    tc__mpi_prog *g = p->prog;
    int *flag = all ? &g->all_done : &g->recv_done;
    if (__atomic_load_n(flag, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&g->mu);
    if (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&g->hurry, 1, __ATOMIC_RELEASE);
        pthread_cond_signal(&g->wake);
        while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) pthread_cond_wait(&g->done, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}
