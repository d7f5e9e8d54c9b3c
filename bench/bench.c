/*
 * bench.c - `tileconv bench`: tileconv against its peers, in one process.
 *
 * Flow: parse options; re-execute once with the peers' thread settings in
 * the environment (OpenMP and OpenBLAS read them when they load, before
 * main); measure the machine's ceilings (tools/ceilings.c, pinned threads);
 * for every case: set up the runners (cases.c), warm each up once and check
 * its output against the first runner's, then time rounds of one run per
 * runner, alternating ours and the peers, until --repeat rounds or the time
 * budget (at least 3 rounds unless a round is slower than the budget);
 * print the case's table, the planner's ESTIMATE and MEASURE choices and the
 * targets. At the end: the planner and target summaries, --json, --plot.
 *
 * Benchmarks never assert: a target not met, a peer missing or an output
 * mismatch is printed, and the exit status stays 0.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "../src/core/knobs.h" /* the environment knobs */
#include "ceilings.h"
#include "bench_state.h"
#include "tools.h"

static const char bench_help[] =
    "usage: tileconv bench [options]\n"
    "\n"
    "Times tileconv (the planner's choice and every applicable algorithm\n"
    "forced by name) against peer libraries in the same process, alternating\n"
    "runs, after one warm-up; prints the median time, GFLOP/s (2 FLOP per tap\n"
    "per output), GB/s (input read + output written once), the fraction of\n"
    "this machine's measured FMA peak and copy bandwidth, the ratio to the\n"
    "first row, the planner's ESTIMATE and MEASURE choices, and the\n"
    "performance targets. Peers: OpenCV filter2D/sepFilter2D, oneDNN 3D\n"
    "convolution, OpenBLAS sgemm, a bare FFTW convolution (those compiled in),\n"
    "scipy.ndimage.convolve (/usr/bin/python3, own process, 1 thread).\n"
    "\n"
    "Options:\n"
    "  --suite S        filters, seed3d, gemm or all (default all); dnn: the\n"
    "                   convolution-layer suite beside oneDNN (its own table)\n"
    "  --threads N      threads for ours and the peers (default: all CPUs)\n"
    "  --repeat N       at most N timed rounds per case (default 10)\n"
    "  --budget S       stop a case's rounds after S seconds, once 3 rounds\n"
    "                   ran (default 1; --quick 0.3)\n"
    "  --quick          fewer cases and rounds (about 2 minutes)\n"
    "  --case TEXT      only the cases whose id contains TEXT\n"
    "  --json FILE      write every result as JSON\n"
    "  --plot FILE.svg  write a roofline plot (log-log, SVG)\n"
    "  --no-peers       time tileconv only\n"
    "  --no-measure     skip planning with TC_PLAN_MEASURE\n"
    "  --backend B      cpu (default) or cuda (filter cases, CUDA algorithms)\n"
    "  --cache C        cold, warm or auto (default): cold empties the caches\n"
    "                   before every timed run (reads a buffer of twice the\n"
    "                   last-level cache); auto does so for CPU cases moving\n"
    "                   32 MiB or more, whose data a large last-level cache\n"
    "                   would otherwise hold for some runners and not others;\n"
    "                   other samples start after one untimed run of the same\n"
    "                   runner (its data in the caches) and 2 ms of spinning\n"
    "                   on every CPU\n"
    "\n"
    "The peers' threads: the bench sets OMP_NUM_THREADS=N, OMP_PROC_BIND=spread,\n"
    "OMP_PLACES=cores, OMP_WAIT_POLICY=passive, OPENBLAS_NUM_THREADS=N and\n"
    "OPENBLAS_THREAD_TIMEOUT=4 (idle workers sleep) and re-executes itself once;\n"
    "cv::setNumThreads(N); the peers' worker threads are pinned one per core\n"
    "after their warm-up (tileconv's pool pins its own; the bench sets\n"
    "TILECONV_THREADS=pool unless it is set, so ours never run on the peers'\n"
    "OpenMP team).\n";

/* ---------------------------------------------------------------------- */

void bench_progress(bench_ctx *b, const char *fmt, ...) {
    if (!b || !b->tty) return;
    const char *label = b->current < b->ncases ? b->cases[b->current]->label : "";
    fprintf(stderr, "\r\033[K[%d/%d] %s: ", b->current + 1, b->ncases, label);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

static void progress_clear(const bench_ctx *b) {
    if (b->tty) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

bench_runner *bench_new_runner(bench_case *c) {
    if (c->nr >= BENCH_MAX_RUNNERS) return NULL;
    bench_runner *r = &c->r[c->nr++];
    memset(r, 0, sizeof *r);
    r->check = -1;
    return r;
}

double bench_gflops(const bench_case *c, double ms) { return ms > 0 ? c->flops / (ms * 1e6) : 0; }
double bench_gbs(const bench_case *c, double ms) { return ms > 0 ? c->bytes / (ms * 1e6) : 0; }

static int runner_ok(const bench_runner *r) { return !r->na[0] && r->n > 0; }
static int is_ours(const bench_runner *r) {
    return r->kind == BK_AUTO || r->kind == BK_FORCED || r->kind == BK_MODE;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double rel_err(const float *y, const float *ref, int64_t n) {
    double mx = 0, md = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs((double)ref[i]), d = fabs((double)y[i] - (double)ref[i]);
        if (a > mx) mx = a;
        if (d > md || d != d) md = d != d ? INFINITY : d;
    }
    return md / (mx > 0 ? mx : 1e-30);
}

/* ---------------------------------------------------------------------- */
/* a solver that crashes takes the process down: say which one it was      */

static const char *volatile g_case_id = "";
static const char *volatile g_runner = "setup";

static void put_err(const char *s) {
    ssize_t rc = write(2, s, strlen(s));
    (void)rc;
}

static void crash_handler(int sig) {
    put_err("\ntileconv: bench: crashed (");
    put_err(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                                                                                 : "SIGILL");
    put_err(") in case ");
    put_err(g_case_id);
    put_err(", runner ");
    put_err(g_runner);
    put_err("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---------------------------------------------------------------------- */
/* timing                                                                   */

/* The smallest of `start` and the runner's samples so far. */
static double min_sample(const bench_runner *r, double start) {
    for (int k = 0; k < r->n; k++)
        if (r->samples[k] < start) start = r->samples[k];
    return start;
}

static void time_case(bench_ctx *b, bench_case *c) {
    char err[256];
    const float *yref = NULL;
    int64_t nref = 0;
    double round_ms = 0, fastest = 0;
    for (int i = 0; i < c->nr; i++) {
        bench_runner *r = &c->r[i];
        if (r->na[0] || !r->run) continue;
        bench_progress(b, "warm-up %s", r->name);
        g_runner = r->name;
        err[0] = 0;
        double t0 = bench_now_ms();
        int rc = r->run(r->st, err, sizeof err);
        r->warm_ms = bench_now_ms() - t0;
        if (rc) {
            bench_label(r->na, sizeof r->na, "failed: %s", err);
            continue;
        }
        if (r->kind == BK_PEER) {
            bench_pin_stray_threads(b->ncpu);
            usleep(BENCH_PEER_GAP_US);
        }
        if (!fastest || r->warm_ms < fastest) fastest = r->warm_ms;
        if (r->kind == BK_FORCED && r->warm_ms > b->budget_s * 1e3 &&
            r->warm_ms > 3 * fastest && r->predicted_ms > b->budget_s * 1e3) {
            /* slower than the whole budget: its warm-up is its sample */
            r->warm_only = 1;
            r->samples[r->n++] = r->warm_ms;
        } else {
            round_ms += r->warm_ms;
        }
        if (r->y) {
            if (!yref) {
                yref = r->y;
                nref = r->ny;
                r->check_ref = 1;
            } else if (r->ny == nref) {
                r->check = rel_err(r->y, yref, nref);
            }
        }
    }
    /* rounds: at least 3 (2 when a round takes over 2 s, 1 over 5 s), then
     * more until the budget is spent (counting the runners that stay in the
     * rounds) or --repeat rounds ran; a forced
     * algorithm 3x slower than the fastest runner and slower than the whole
     * budget, by its warm-up and by its probe, sits out (its warm-up is its
     * one sample) */
    const double budget = b->budget_s * 1e3;
    int min_rounds = round_ms <= 2000 ? 3 : round_ms <= 5000 ? 2 : 1;
    if (min_rounds > b->repeat) min_rounds = b->repeat;
    double fast_ms = 0; /* time spent in the runners that stay in the rounds */
    int rounds = 0;
    /* cold: every sample starts with empty caches, so that each runner
     * reads its input from memory whatever ran before it (this VM's 480
     * MiB last-level cache holds a 4096^2 case's 128 MB whole: a runner
     * timed right after itself, or after one that writes with
     * non-temporal stores, read it from the cache up to 2x faster) */
    c->cold = b->evict_bytes > 0 &&
              (b->cache == BENCH_CACHE_COLD ||
               (b->cache == BENCH_CACHE_AUTO && b->backend == TC_BACKEND_CPU &&
                c->bytes >= BENCH_COLD_ABOVE));
    uint64_t shuffle_state = 0x853c49e6748fea9bull;
    for (; rounds < b->repeat && rounds < BENCH_MAX_SAMPLES; rounds++) {
        if (rounds >= min_rounds && fast_ms > budget) break;
        /* the fastest runner by its best sample so far (its warm-up before
         * it has one) */
        for (int i = 0; i < c->nr; i++) {
            const bench_runner *r = &c->r[i];
            if (r->na[0] || !r->run || r->warm_only || r->n == 0) continue;
            double best = min_sample(r, r->samples[0]);
            if (best < fastest) fastest = best;
        }
        /* a new order each round (seeded shuffle; the first round in list order),
         * so that no runner always follows the same one */
        int order[BENCH_MAX_RUNNERS];
        for (int j = 0; j < c->nr; j++) order[j] = j;
        for (int j = c->nr - 1; rounds > 0 && j > 0; j--) {
            shuffle_state = shuffle_state * 6364136223846793005ull + 1442695040888963407ull;
            int k = (int)((shuffle_state >> 33) % (uint64_t)(j + 1));
            int t = order[j];
            order[j] = order[k];
            order[k] = t;
        }
        for (int j = 0; j < c->nr; j++) {
            bench_runner *r = &c->r[order[j]];
            if (r->na[0] || !r->run || r->warm_only) continue;
            /* a baseline 3x slower than the fastest runner (by best
             * samples): 3 samples do */
            double best = min_sample(r, r->warm_ms);
            int slow = r->kind == BK_FORCED && best > 3 * fastest;
            if (r->n >= 3 && slow) continue;
            bench_progress(b, "round %d/%d %s", rounds + 1, b->repeat, r->name);
            g_runner = r->name;
            /* runs under 2 ms: one sample is the mean of a few back-to-back
             * runs (timer and wake-up noise) */
            double est = best;
            int inner = est > 0 && est < 2.0 ? (int)ceil(2.0 / est) : 1;
            if (inner > 20 || c->cold) inner = c->cold ? 1 : 20;
            int rc = 0;
            /* every sample starts on running CPUs: after an eviction read
             * on each CPU (cold), or after BENCH_BUSY_S of spinning on each
             * (after a peer's pause, a CPU that slept ran the next
             * milliseconds slower) */
            if (c->cold) {
                tc_tool_evict_cache();
            } else {
                /* warm: the runner's own data in the caches whatever ran
                 * before it (one untimed run; without it the first of a
                 * sample's back-to-back runs read what the previous runner
                 * had evicted: 128^3 k3, 0.88 against 0.82 ms) */
                rc = r->run(r->st, err, sizeof err);
                tc_tool_busy_cpus(BENCH_BUSY_S);
            }
            double t0 = bench_now_ms();
            for (int k = 0; k < inner && !rc; k++) rc = r->run(r->st, err, sizeof err);
            double dt = (bench_now_ms() - t0) / inner;
            if (rc) {
                bench_label(r->na, sizeof r->na, "failed: %s", err);
                r->n = 0;
                continue;
            }
            r->inner = inner;
            r->samples[r->n++] = dt;
            if (!slow) fast_ms += dt * inner;
            /* TBB's idle workers spin for a while: let them fall asleep */
            if (r->kind == BK_PEER) usleep(BENCH_PEER_GAP_US);
        }
    }
    c->rounds = rounds;
    for (int i = 0; i < c->nr; i++) {
        bench_runner *r = &c->r[i];
        if (r->kind == BK_EXTERNAL || r->na[0] || r->n == 0) continue;
        double tmp[BENCH_MAX_SAMPLES];
        memcpy(tmp, r->samples, (size_t)r->n * sizeof(double));
        qsort(tmp, (size_t)r->n, sizeof(double), cmp_double);
        r->min_ms = tmp[0];
        r->median_ms = r->n % 2 ? tmp[r->n / 2] : 0.5 * (tmp[r->n / 2 - 1] + tmp[r->n / 2]);
    }
}

/* ---------------------------------------------------------------------- */
/* planner check and targets                                                */

static const bench_runner *find_runner(const bench_case *c, const char *prefix) {
    const bench_runner *best = NULL;
    for (int i = 0; i < c->nr; i++) {
        const bench_runner *r = &c->r[i];
        if (!runner_ok(r) || strncmp(r->name, prefix, strlen(prefix)) != 0) continue;
        if (!best || r->median_ms < best->median_ms) best = r;
    }
    return best;
}

static void summarise_case(bench_ctx *b, bench_case *c) {
    c->auto_ms = 0;
    double auto_min = 0, forced_min = 0;
    for (int i = 0; i < c->nr; i++) {
        const bench_runner *r = &c->r[i];
        if (!runner_ok(r) || !is_ours(r)) continue;
        if (r->kind == BK_AUTO && c->auto_ms == 0) {
            c->auto_ms = r->median_ms;
            auto_min = r->min_ms;
        }
        if (r->kind == BK_FORCED && (!forced_min || r->min_ms < forced_min)) forced_min = r->min_ms;
        if (r->kind == BK_FORCED && (!c->best_forced_ms || r->median_ms < c->best_forced_ms)) {
            c->best_forced_ms = r->median_ms;
            snprintf(c->best_forced, sizeof c->best_forced, "%s", r->name);
        }
        if (r->kind != BK_MODE || i == 0) {
            if (!c->best_ms || r->median_ms < c->best_ms) {
                c->best_ms = r->median_ms;
                if (r->kind == BK_FORCED) snprintf(c->best_name, sizeof c->best_name, "%s", r->name);
                else bench_label(c->best_name, sizeof c->best_name, "%s %s", r->name, r->info);
            }
        }
    }
    /* The choice is judged by its forced twin (the same algorithm, forced
     * by name, same threads) against the best forced algorithm: the auto
     * row itself is one more noisy sample of the same code. Flagged only
     * when slower by both the median and the best run: other processes
     * preempting a run only ever add time. */
    double choice_med = c->auto_ms, choice_min = auto_min;
    for (int i = 0; i < c->nr; i++) {
        const bench_runner *r = &c->r[i];
        if (runner_ok(r) && r->kind == BK_FORCED && r->threads == b->threads &&
            strcmp(r->name, c->estimate) == 0) {
            choice_med = r->median_ms;
            choice_min = r->min_ms;
        }
    }
    c->choice_ms = choice_med;
    if (!c->modes && choice_med > 0 && c->best_forced_ms > 0)
        c->planner_ok = choice_med <= 1.2 * c->best_forced_ms ||
                        (choice_min > 0 && forced_min > 0 && choice_min <= 1.2 * forced_min);
    c->planner_min_ratio = choice_min > 0 && forced_min > 0 ? choice_min / forced_min : 0;
}

/* Evaluates the case's targets against the ceilings in b. */
static void eval_targets(bench_ctx *b, bench_case *c) {
    const double peak = b->ceil.flops, bw = b->ceil.bytes_per_s;
    for (int k = 0; k < c->nt; k++) {
        bench_target *t = &c->t[k];
        t->evaluated = 0;
        switch (t->kind) {
        case TG_PCT_BW: snprintf(t->goal, sizeof t->goal, ">= %.0f%% of copy bandwidth", 100 * t->value); break;
        case TG_PCT_FMA: snprintf(t->goal, sizeof t->goal, ">= %.0f%% of FMA peak", 100 * t->value); break;
        case TG_SPEEDUP: snprintf(t->goal, sizeof t->goal, ">= %gx faster than %s", t->value, t->peer); break;
        case TG_VS_PEER: snprintf(t->goal, sizeof t->goal, "%s <= %gx the time of %s", t->ours, t->value, t->peer); break;
        case TG_MODES: snprintf(t->goal, sizeof t->goal, "every mode <= %.2fx constant", t->value); break;
        case TG_MAX_MS: snprintf(t->goal, sizeof t->goal, "<= %g ms", t->value); break;
        case TG_ROOF:
            snprintf(t->goal, sizeof t->goal, ">= %.0f%% of copy or %.0f%% of FMA (by ridge)",
                     100 * t->value, 100 * t->value2);
            break;
        }
        if (b->backend == TC_BACKEND_CUDA) {
            snprintf(t->text, sizeof t->text, "not evaluated on the CUDA backend");
            continue;
        }
        switch (t->kind) {
        case TG_PCT_BW:
        case TG_PCT_FMA: {
            if (c->best_ms <= 0) break;
            double v = t->kind == TG_PCT_BW ? bench_gbs(c, c->best_ms) * 1e9 / bw
                                            : bench_gflops(c, c->best_ms) * 1e9 / peak;
            if (!(peak > 0 && bw > 0)) break;
            t->evaluated = 1;
            t->got = v;
            t->met = v >= t->value;
            snprintf(t->text, sizeof t->text, "%.0f%% of %s (target >= %.0f%%), %s",
                     100 * v, t->kind == TG_PCT_BW ? "copy bandwidth" : "FMA peak",
                     100 * t->value, c->best_name);
            break;
        }
        case TG_ROOF: {
            /* which ceiling binds is the machine's: FLOP/byte against the
             * ridge measured in this run */
            if (c->best_ms <= 0 || !(peak > 0 && bw > 0) || !(c->bytes > 0)) break;
            const double ridge = peak / bw, ai = c->flops / c->bytes;
            const int membound = ai < ridge;
            const double v = membound ? bench_gbs(c, c->best_ms) * 1e9 / bw
                                      : bench_gflops(c, c->best_ms) * 1e9 / peak;
            const double want = membound ? t->value : t->value2;
            t->evaluated = 1;
            t->got = v;
            t->met = v >= want;
            snprintf(t->text, sizeof t->text,
                     "%.0f%% of %s (target >= %.0f%%; %.2f FLOP/B, ridge %.2f: %s-bound), %s",
                     100 * v, membound ? "copy bandwidth" : "FMA peak", 100 * want, ai, ridge,
                     membound ? "bandwidth" : "compute", c->best_name);
            break;
        }
        case TG_SPEEDUP: {
            const bench_runner *p = find_runner(c, t->peer);
            if (!p || c->best_ms <= 0) {
                snprintf(t->text, sizeof t->text, ">= %gx %s: %s not timed", t->value, t->peer,
                         t->peer);
                break;
            }
            t->evaluated = 1;
            t->got = p->median_ms / c->best_ms;
            t->met = t->got >= t->value;
            snprintf(t->text, sizeof t->text, "%.2fx faster than %s (target >= %gx)", t->got,
                     p->name, t->value);
            break;
        }
        case TG_VS_PEER: {
            const bench_runner *p = find_runner(c, t->peer), *o = find_runner(c, t->ours);
            if (!p || !o) {
                snprintf(t->text, sizeof t->text, "%s <= %gx %s: %s not timed", t->ours,
                         t->value, t->peer, !o ? t->ours : t->peer);
                break;
            }
            t->evaluated = 1;
            t->got = o->median_ms / p->median_ms;
            t->met = t->got <= t->value;
            snprintf(t->text, sizeof t->text, "%s takes %.2fx the time of %s (target <= %gx)",
                     o->name, t->got, p->name, t->value);
            break;
        }
        case TG_MODES: {
            if (!runner_ok(&c->r[0])) break;
            double worst = 0;
            const char *wn = "";
            int all = 1;
            for (int i = 1; i < c->nr; i++) {
                if (!runner_ok(&c->r[i])) {
                    all = 0;
                    continue;
                }
                double v = c->r[i].median_ms / c->r[0].median_ms;
                if (v > worst) {
                    worst = v;
                    wn = c->r[i].name;
                }
            }
            t->evaluated = worst > 0;
            t->got = worst;
            t->met = all && worst <= t->value;
            snprintf(t->text, sizeof t->text, "slowest mode (%s) %.2fx constant (target <= %.2fx)%s",
                     wn, worst, t->value, all ? "" : ", some modes did not run");
            break;
        }
        case TG_MAX_MS:
            if (c->best_ms <= 0) break;
            t->evaluated = 1;
            t->got = c->best_ms;
            t->met = c->best_ms <= t->value;
            snprintf(t->text, sizeof t->text, "%.3f ms (target <= %g ms), %s", c->best_ms,
                     t->value, c->best_name);
            break;
        }
        if (!t->evaluated && !t->text[0]) snprintf(t->text, sizeof t->text, "not evaluated (no timing)");
    }
}

/* ---------------------------------------------------------------------- */
/* table                                                                    */

static void fmt_sci(char *buf, size_t n, double v) {
    if (v == 0) snprintf(buf, n, "0");
    else snprintf(buf, n, "%.0e", v);
}

static void print_case(const bench_ctx *b, const bench_case *c) {
    const double ai = c->flops / c->bytes;
    const double roof = fmin(b->ceil.flops, ai * b->ceil.bytes_per_s) / 1e9;
    printf("\n== %s [%s]: %.3g GFLOP, %.3g MB, AI %.3g FLOP/B, roofline %.0f GFLOP/s, %d rounds, "
           "%s caches, %.1f s\n",
           c->label, c->id, c->flops / 1e9, c->bytes / 1e6, ai, roof, c->rounds,
           c->cold ? "cold" : "warm", c->wall_s);
    printf("  %-34s %4s %10s %9s %8s %7s %6s %6s %7s  %-9s %s\n", "runner", "thr", "median ms",
           "min ms", "GFLOP/s", "GB/s", "%FMA", "%BW", c->modes ? "t/const" : "t/auto", "check", "note");
    double base = c->modes ? (runner_ok(&c->r[0]) ? c->r[0].median_ms : 0) : c->auto_ms;
    for (int i = 0; i < c->nr; i++) {
        const bench_runner *r = &c->r[i];
        char thr[16];
        if (r->threads > 0) snprintf(thr, sizeof thr, "%d", r->threads);
        else snprintf(thr, sizeof thr, "-");
        if (r->na[0]) {
            printf("  %-34s %4s   n/a: %s\n", r->name, thr, r->na);
            continue;
        }
        if (!runner_ok(r)) continue;
        double gf = bench_gflops(c, r->median_ms), gb = bench_gbs(c, r->median_ms);
        char pf[16] = "-", pb[16] = "-", ratio[16] = "-", chk[24] = "";
        if (!r->gpu && r->kind != BK_EXTERNAL) {
            snprintf(pf, sizeof pf, "%.1f", 100 * gf * 1e9 / b->ceil.flops);
            snprintf(pb, sizeof pb, "%.1f", 100 * gb * 1e9 / b->ceil.bytes_per_s);
        }
        if (base > 0) snprintf(ratio, sizeof ratio, "%.2f", r->median_ms / base);
        if (r->check_ref) snprintf(chk, sizeof chk, "ref");
        else if (r->check >= 0) {
            char e[16];
            fmt_sci(e, sizeof e, r->check);
            snprintf(chk, sizeof chk, "%s %s", r->check <= 1e-3 ? "ok" : "BAD", e);
        }
        printf("  %-34s %4s %10.3f %9.3f %8.1f %7.1f %6s %6s %7s  %-9s %s%s%s\n", r->name, thr,
               r->median_ms, r->min_ms, gf, gb, pf, pb, ratio, chk, r->info,
               r->n > 0 && r->n < 3 && r->kind != BK_EXTERNAL ? (r->info[0] ? "; " : "") : "",
               r->warm_only ? "1 run (the warm-up: slower than the budget)"
               : r->n > 0 && r->n < 3 && r->kind != BK_EXTERNAL ? (r->n == 1 ? "1 run" : "2 runs")
                                                               : "");
    }
    if (!c->modes) {
        if (c->estimate[0]) {
            printf("  planner: ESTIMATE %s", c->estimate);
            if (c->planner_ok >= 0)
                printf(" (forced: %.2fx the best forced, %s; %.2fx by best runs): %s",
                       c->choice_ms / c->best_forced_ms, c->best_forced, c->planner_min_ratio,
                       c->planner_ok ? "within 1.2x" : "SLOWER than 1.2x");
            printf("; MEASURE ");
            if (c->measure[0]) printf("%s (planning took %.0f ms)\n", c->measure, c->measure_plan_ms);
            else printf("%s\n", c->measure_note[0] ? c->measure_note : "-");
        }
    }
    for (int k = 0; k < c->nt; k++) {
        const bench_target *t = &c->t[k];
        printf("  target: %s%s\n", t->text, !t->evaluated ? "" : t->met ? "  MET" : "  NOT MET");
    }
    fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* environment                                                              */

/* Sets the peers' thread variables and re-executes once, because OpenMP
 * (oneDNN) and OpenBLAS read them when the libraries load. */
static void reexec_with_env(int argc, char **argv, int threads) {
    if (tc__knob_get(TC__KNOB_BENCH_CHILD)) return;
    char n[16];
    snprintf(n, sizeof n, "%d", threads);
    setenv("OMP_NUM_THREADS", n, 1);
    setenv("OMP_PROC_BIND", "spread", 1);
    setenv("OMP_PLACES", "cores", 1);
    setenv("OPENBLAS_NUM_THREADS", n, 1);
    /* idle peer workers sleep at once instead of spinning on the cores the
     * next runner (ours, or another peer) needs */
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    /* libgomp binds the initial thread to the first place when it loads
     * with OMP_PROC_BIND set, and exec keeps that mask: the child restores
     * the process's CPU set first, taken from the library's placement (which
     * ignores a thread mask narrowed by OpenMP binding variables), not from
     * this thread's mask, and this thread is widened to it before the exec.
     * With OMP_PROC_BIND=spread OMP_PLACES=cores set by the caller, this
     * thread's mask was one CPU, the child inherited it, its libgomp made
     * one place of it and ran both oneDNN threads there: oneDNN 1.6x slower. */
    char cpus[1024], place[1200];
    tc_cpu_placement(place, sizeof place);
    const char *list = NULL; /* after the last ": " (the source may hold one too) */
    for (const char *q = strstr(place, ": "); q; q = strstr(q + 1, ": ")) list = q;
    int listed = 0;
    for (const char *q = list ? list + 2 : ""; *q; q++) listed += *q == ',';
    /* the placement line is cut at 160 characters: whole lists only */
    if (list && list[2] && listed + 1 == tc_cpu_count() && strlen(list + 2) < sizeof cpus) {
        snprintf(cpus, sizeof cpus, "%s", list + 2);
        setenv("TILECONV_BENCH_AFFINITY", cpus, 1);
        /* and before the exec: the child's libgomp builds its places from
         * the mask the child starts with */
        bench_affinity_restore(cpus);
    } else if (bench_affinity_string(cpus, sizeof cpus) == 0 && cpus[0]) {
        setenv("TILECONV_BENCH_AFFINITY", cpus, 1);
    }
    setenv("TILECONV_BENCH_CHILD", "1", 1);
    char **nv = calloc((size_t)argc + 2, sizeof *nv);
    if (!nv) return;
    nv[0] = "tileconv";
    for (int i = 0; i < argc; i++) nv[i + 1] = argv[i];
    fflush(stdout);
    fflush(stderr);
    execv("/proc/self/exe", nv);
    free(nv); /* exec failed: go on in this process */
    fprintf(stderr, "tileconv: bench: note: could not re-execute; OpenMP/OpenBLAS "
                    "thread settings may not apply\n");
}

static void list_algorithms(char *buf, size_t n, tc_backend want) {
    buf[0] = 0;
    int cnt = tc_algorithm_count();
    for (int i = 0; i < cnt; i++) {
        tc_algorithm_info info;
        if (tc_algorithm_get(i, &info) != TC_OK) continue;
        if (want != TC_BACKEND_AUTO && info.backend != want) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s%s", len ? ", " : "", info.name,
                 info.available ? "" : " (unavailable)");
    }
}

static void list_peers(char *buf, size_t n, int peers) {
    buf[0] = 0;
    if (!peers) {
        snprintf(buf, n, "none (--no-peers)");
        return;
    }
    size_t len = 0;
#if TC_BENCH_HAVE_OPENCV
    len += (size_t)snprintf(buf + len, n - len, "OpenCV %s, ", peer_opencv_version());
#endif
#if TC_BENCH_HAVE_DNNL
    if (len < n) len += (size_t)snprintf(buf + len, n - len, "oneDNN %s, ", peer_dnnl_version());
#endif
#if TC_BENCH_HAVE_OPENBLAS
    if (len < n) len += (size_t)snprintf(buf + len, n - len, "%s, ", peer_blas_version());
#endif
#if TC_BENCH_HAVE_FFTW
    if (len < n) len += (size_t)snprintf(buf + len, n - len, "%s (bare convolution), ", peer_fftw_version());
#endif
    if (len < n) snprintf(buf + len, n - len, "scipy.ndimage (python process)");
}

/* The library's pool is created by its first parallel call from the
 * process's affinity mask: start it before the main thread is pinned. */
static void start_pool(bench_ctx *b) {
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.ndim = 2;
    d.shape[0] = d.shape[1] = 256;
    d.mask_shape[0] = d.mask_shape[1] = 3;
    float *x = calloc(256 * 256, sizeof(float)), *y = calloc(256 * 256, sizeof(float));
    float w[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    tc_context *ctx = NULL;
    tc_plan *p = NULL;
    if (x && y && tc_context_create(&ctx) == TC_OK && tc_context_set_threads(ctx, b->threads) == TC_OK &&
        tc_context_set_backend(ctx, TC_BACKEND_CPU) == TC_OK &&
        tc_plan_filter(&p, ctx, &d, w, NULL) == TC_OK)
        tc_execute_filter(p, y, x, NULL);
    tc_plan_destroy(p);
    tc_context_destroy(ctx);
    free(x);
    free(y);
}

/* ---------------------------------------------------------------------- */

int tc_tool_bench(int argc, char **argv) {
    const char *cpus = tc__knob_get(TC__KNOB_BENCH_AFFINITY);
    if (tc__knob_get(TC__KNOB_BENCH_CHILD) && cpus) bench_affinity_restore(cpus);
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.suites = BENCH_SUITE_FILTERS | BENCH_SUITE_SEED3D | BENCH_SUITE_GEMM;
    b.repeat = 10;
    b.budget_s = -1;
    b.peers = 1;
    b.measure = 1;
    b.backend = TC_BACKEND_CPU;
    b.ncpu = tc_cpu_count();
    b.threads = b.ncpu;
    int have_repeat = 0;
    tool_args a;
    const char *pos, *v;
    int kind, rc;
    tool_args_init(&a, "bench", argc, argv);
    while ((kind = tool_args_next(&a, &pos)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL)
            return tool_usage_error("bench", "unexpected argument '%s'", pos);
        if (tool_args_is(&a, "--help")) {
            fputs(bench_help, stdout);
            return TOOL_OK;
        }
        static const char *const flags[] = {"--quick", "--no-peers", "--no-measure", NULL};
        if (tool_args_in(&a, flags)) {
            if (tool_args_flag(&a)) return TOOL_USAGE;
            if (tool_args_is(&a, "--quick")) b.quick = 1;
            else if (tool_args_is(&a, "--no-peers")) b.peers = 0;
            else b.measure = 0;
            continue;
        }
        static const char *const vals[] = {"--suite", "--threads", "--repeat", "--json",
                                           "--plot", "--backend", "--budget", "--case",
                                           "--cache", NULL};
        if (!tool_args_in(&a, vals)) return tool_args_unknown(&a);
        if (tool_args_value(&a, &v)) return TOOL_USAGE;
        rc = 0;
        if (tool_args_is(&a, "--suite")) {
            if (strcmp(v, "filters") == 0) b.suites = BENCH_SUITE_FILTERS;
            else if (strcmp(v, "seed3d") == 0) b.suites = BENCH_SUITE_SEED3D;
            else if (strcmp(v, "gemm") == 0) b.suites = BENCH_SUITE_GEMM;
            else if (strcmp(v, "all") == 0) b.suites = BENCH_SUITE_FILTERS | BENCH_SUITE_SEED3D | BENCH_SUITE_GEMM;
            else if (strcmp(v, "dnn") == 0) b.suites = BENCH_SUITE_DNN;
            else rc = tool_usage_error("bench", "unknown suite '%s' (filters, seed3d, gemm, dnn or all)", v);
        } else if (tool_args_is(&a, "--threads")) {
            rc = tool_parse_int(&a, v, 1, 4096, &b.threads);
        } else if (tool_args_is(&a, "--repeat")) {
            rc = tool_parse_int(&a, v, 1, BENCH_MAX_SAMPLES, &b.repeat);
            have_repeat = 1;
        } else if (tool_args_is(&a, "--budget")) {
            rc = tool_parse_double(&a, v, &b.budget_s);
            if (!rc && !(b.budget_s >= 0 && b.budget_s <= 3600))
                rc = tool_usage_error("bench", "--budget %s: must be 0..3600 seconds", v);
        } else if (tool_args_is(&a, "--json")) {
            b.json_path = v;
        } else if (tool_args_is(&a, "--plot")) {
            b.plot_path = v;
        } else if (tool_args_is(&a, "--case")) {
            b.case_filter = v;
        } else if (tool_args_is(&a, "--cache")) {
            if (strcmp(v, "auto") == 0) b.cache = BENCH_CACHE_AUTO;
            else if (strcmp(v, "cold") == 0) b.cache = BENCH_CACHE_COLD;
            else if (strcmp(v, "warm") == 0) b.cache = BENCH_CACHE_WARM;
            else rc = tool_usage_error("bench", "unknown --cache '%s' (cold, warm or auto)", v);
        } else if (tool_args_is(&a, "--backend")) {
            if (strcmp(v, "cpu") == 0) b.backend = TC_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0) b.backend = TC_BACKEND_CUDA;
            else rc = tool_usage_error("bench", "unknown backend '%s' (cpu or cuda)", v);
        }
        if (rc) return rc;
    }
    if (b.json_path && tool_check_output(b.json_path)) return TOOL_FAIL;
    if (b.plot_path && tool_check_output(b.plot_path)) return TOOL_FAIL;
    if (b.quick && !have_repeat) b.repeat = 5;
    if (b.budget_s < 0) b.budget_s = b.quick ? 0.3 : 1.0;
    b.max_run_s = b.quick ? 0.5 : 4.0;
    b.measure_budget_s = b.quick ? 3.0 : 20.0;
    b.measure_total_s = b.quick ? 10.0 : 90.0;
#if TC_BENCH_HAVE_FFTW
    peer_fftw_timelimit = b.quick ? 1.0 : 5.0;
#endif
    /* ours on tileconv's own pool in every run: the peers link an OpenMP
     * runtime, and TILECONV_THREADS=auto would take its team for our
     * runners when the peers are off (no OMP_WAIT_POLICY=passive then);
     * a value the caller set is kept */
    setenv("TILECONV_THREADS", "pool", 0);
    if (b.peers) reexec_with_env(argc, argv, b.threads);

    if (b.backend == TC_BACKEND_CUDA && tc_cuda_device_count() <= 0) {
        printf("tileconv bench --backend cuda: no usable CUDA device (tc_cuda_device_count() = %d%s); "
               "nothing to run\n",
               tc_cuda_device_count(),
#if TC_BENCH_CLI_HAVE_CUDA
               ""
#else
               ", this build has no CUDA backend"
#endif
        );
        return TOOL_OK;
    }
    if (b.suites == BENCH_SUITE_DNN) {
        if (b.backend != TC_BACKEND_CPU)
            return tool_usage_error("bench", "--suite dnn runs on the CPU backend only");
        return bench_dnn(b.threads, have_repeat ? b.repeat : 0, b.quick, b.peers, b.json_path,
                         b.case_filter);
    }
    b.tty = isatty(2);
    signal(SIGSEGV, crash_handler);
    signal(SIGBUS, crash_handler);
    signal(SIGFPE, crash_handler);
    signal(SIGILL, crash_handler);
    rc = TOOL_FAIL;
    if (tc_context_create(&b.ctx) != TC_OK || tc_context_set_threads(b.ctx, b.threads) != TC_OK ||
        tc_context_set_backend(b.ctx, b.backend) != TC_OK ||
        tc_context_create(&b.ctx1) != TC_OK || tc_context_set_threads(b.ctx1, 1) != TC_OK ||
        tc_context_set_backend(b.ctx1, b.backend) != TC_OK) {
        tool_lib_error(TC_ERR_INTERNAL, "bench: cannot create contexts");
        goto done;
    }

    bench_make_cases(&b);
    if (b.ncases == 0) {
        tool_error("bench: no case matches --case '%s'", b.case_filter ? b.case_filter : "");
        rc = TOOL_USAGE;
        goto done;
    }

    /* header: machine, ceilings, what is compiled in */
    char model[256], algos[2048], peers[512];
    bench_cpu_model(model, sizeof model);
    list_algorithms(algos, sizeof algos, b.backend);
    list_peers(peers, sizeof peers, b.peers && b.backend != TC_BACKEND_CUDA);
    double load0 = bench_loadavg();
    printf("tileconv %s bench: %s, %d CPUs; %d threads; float32; backend %s%s; load average %.2f\n",
           tc_version(), model, b.ncpu, b.threads, tc_backend_name(b.backend),
           b.quick ? "; --quick" : "", load0);
    printf("algorithms: %s (reference solvers ref.* are not timed)\n", algos);
    printf("peers: %s\n", peers);
    if (b.peers)
        printf("peer threads: OMP_NUM_THREADS=%s OMP_PROC_BIND=%s OMP_PLACES=%s OMP_WAIT_POLICY=%s "
               "OPENBLAS_NUM_THREADS=%s; peer workers pinned one per core after warm-up; "
               "%d ms pause after each peer run\n",
               getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "-",
               getenv("OMP_PROC_BIND") ? getenv("OMP_PROC_BIND") : "-",
               getenv("OMP_PLACES") ? getenv("OMP_PLACES") : "-",
               getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "-",
               getenv("OPENBLAS_NUM_THREADS") ? getenv("OPENBLAS_NUM_THREADS") : "-",
               BENCH_PEER_GAP_US / 1000);
    fflush(stdout);
    if (b.tty) {
        fprintf(stderr, "measuring ceilings...");
        fflush(stderr);
    }
    tc_tool_ceilings ce;
    if (tc_tool_measure_ceilings_ex(b.threads, &ce) != 0) {
        progress_clear(&b);
        tool_error("bench: cannot measure the ceilings (out of memory?)");
        goto done;
    }
    progress_clear(&b);
    b.ceil.flops = ce.flops;
    b.ceil.bytes_per_s = ce.bytes_per_s;
    b.ceil.isa = ce.isa;
    b.ceil.copy_method = ce.copy_method;
    b.ceil.threads = ce.threads;
    b.ceil.pinned = ce.pinned;
    printf("ceilings (%d threads%s): FMA peak %.1f GFLOP/s (%s), copy bandwidth %.1f GB/s (%s, "
           "read + write)\n",
           ce.threads, ce.pinned ? ", pinned" : ", NOT pinned", ce.flops / 1e9, ce.isa,
           ce.bytes_per_s / 1e9, ce.copy_method);
    printf("timing: 1 warm-up, then rounds of one run per runner (ours and peers alternate, the "
           "order shuffled each round; under 2 ms a sample is the mean of up to 20 back-to-back "
           "runs), at most %d rounds, stop after %.1f s once 3 rounds ran; median reported\n",
           b.repeat, b.budget_s);
    b.evict_bytes = b.cache == BENCH_CACHE_WARM ? 0 : tc_tool_evict_cache();
    if (b.cache == BENCH_CACHE_WARM)
        printf("caches: warm (--cache warm): every timed run starts after one untimed run of the "
               "same runner and 2 ms of spinning on every CPU\n");
    else if (!b.evict_bytes)
        printf("caches: NOT controlled (no memory for the eviction buffer)\n");
    else
        printf("caches: %s: every timed run of %s starts after reading %.0f MiB (twice the "
               "%.0f MiB last-level cache); every other after one untimed run of the same runner and "
               "2 ms of spinning on every CPU\n",
               b.cache == BENCH_CACHE_COLD ? "cold" : "auto",
               b.cache == BENCH_CACHE_COLD ? "every case" : "a CPU case moving >= 32 MiB",
               b.evict_bytes / 1048576.0, tc_tool_llc_bytes() / 1048576.0);
    fflush(stdout);

    start_pool(&b);
#if TC_BENCH_HAVE_OPENCV
    /* TBB sizes its pool from the affinity mask it sees first */
    if (b.peers) peer_opencv_init(b.threads);
#endif
    if (b.peers) bench_pin_self(0);
    if (b.measure && b.backend != TC_BACKEND_CUDA) bench_measure_ref_speed(&b);

    if (b.nscipy > 0) {
        b.current = 0;
        if (b.tty) {
            fprintf(stderr, "\r\033[Kscipy.ndimage.convolve: %d cases in its own process...", b.nscipy);
            fflush(stderr);
        }
        bench_scipy_run(b.scipy, b.nscipy, b.budget_s, b.repeat, b.scipy_why,
                        sizeof b.scipy_why, b.scipy_version, sizeof b.scipy_version);
        progress_clear(&b);
    }
    double t_all = bench_now_ms();
    for (b.current = 0; b.current < b.ncases; b.current++) {
        bench_case *c = b.cases[b.current];
        bench_progress(&b, "setting up");
        double t_case = bench_now_ms();
        g_case_id = c->id;
        g_runner = "setup (planning, probes, peers)";
        if (bench_setup_case(&b, c)) {
            progress_clear(&b);
            printf("\n== %s [%s]: not run: out of memory for its data\n", c->label, c->id);
            bench_teardown_case(c);
            continue;
        }
        time_case(&b, c);
        g_runner = "TC_PLAN_MEASURE planning";
        if (b.backend != TC_BACKEND_CUDA) bench_plan_measure(&b, c);
        bench_teardown_case(c);
        c->wall_s = (bench_now_ms() - t_case) / 1e3;
        summarise_case(&b, c);
        eval_targets(&b, c);
        progress_clear(&b);
        print_case(&b, c);
    }

    /* The ceilings again: other processes may have held the CPUs at the
     * start. The summary, the targets and the JSON use the best of both. */
    if (b.tty) {
        fprintf(stderr, "\r\033[Kmeasuring ceilings again...");
        fflush(stderr);
    }
    tc_tool_ceilings ce2;
    int have2 = tc_tool_measure_ceilings_ex(b.threads, &ce2) == 0;
    progress_clear(&b);
    if (have2) {
        printf("\nceilings again at the end: FMA peak %.1f GFLOP/s, copy bandwidth %.1f GB/s",
               ce2.flops / 1e9, ce2.bytes_per_s / 1e9);
        int up = 0;
        if (ce2.flops > b.ceil.flops) {
            b.ceil.flops = ce2.flops;
            b.ceil.isa = ce2.isa;
            up = 1;
        }
        if (ce2.bytes_per_s > b.ceil.bytes_per_s) {
            b.ceil.bytes_per_s = ce2.bytes_per_s;
            b.ceil.copy_method = ce2.copy_method;
            up = 1;
        }
        if (up) {
            printf("; the summary below uses the best of both: %.1f GFLOP/s, %.1f GB/s\n",
                   b.ceil.flops / 1e9, b.ceil.bytes_per_s / 1e9);
            for (int i = 0; i < b.ncases; i++) eval_targets(&b, b.cases[i]);
        } else {
            printf(" (not higher than at the start)\n");
        }
    }

    /* summaries */
    int pok = 0, pn = 0, tmet = 0, tn = 0;
    for (int i = 0; i < b.ncases; i++) {
        const bench_case *c = b.cases[i];
        if (c->planner_ok >= 0) {
            pn++;
            pok += c->planner_ok;
        }
        for (int k = 0; k < c->nt; k++) {
            tn++;
            tmet += c->t[k].evaluated && c->t[k].met;
        }
    }
    printf("\nplanner: %d/%d cases within 1.2x of best\n", pok, pn);
    for (int i = 0; i < b.ncases; i++) {
        const bench_case *c = b.cases[i];
        if (c->planner_ok == 0)
            printf("  %-22s ESTIMATE %s is %.2fx the best forced %s (%.2fx by best runs)\n",
                   c->id, c->estimate, c->choice_ms / c->best_forced_ms, c->best_forced,
                   c->planner_min_ratio);
    }
    printf("targets: %d/%d met\n", tmet, tn);
    for (int i = 0; i < b.ncases; i++) {
        const bench_case *c = b.cases[i];
        for (int k = 0; k < c->nt; k++)
            printf("  %-22s %-8s %s\n", c->id,
                   !c->t[k].evaluated ? "n/a" : c->t[k].met ? "MET" : "NOT MET", c->t[k].text);
    }
    double load1 = bench_loadavg();
    printf("total %.1f s; load average %.2f at the start, %.2f at the end%s\n",
           (bench_now_ms() - t_all) / 1e3, load0, load1,
           load0 > 0.5 * b.ncpu || load1 > 0.5 * b.ncpu
               ? " (other processes were running: timings are noisy)" : "");
    fflush(stdout);

    bench_report rep;
    memset(&rep, 0, sizeof rep);
    rep.command = "tileconv bench";
    rep.cpu_model = model;
    rep.ncpu = b.ncpu;
    rep.threads = b.threads;
    rep.backend = tc_backend_name(b.backend);
    rep.algorithms = algos;
    rep.peers = peers;
    rep.ceil = &b.ceil;
    rep.load_start = load0;
    rep.load_end = load1;
    rep.cases = b.cases;
    rep.ncases = b.ncases;
    rep.planner_ok = pok;
    rep.planner_n = pn;
    rep.targets_met = tmet;
    rep.targets_n = tn;
    rc = TOOL_OK;
    if (b.json_path && bench_write_json(b.json_path, &rep)) rc = TOOL_FAIL;
    if (b.plot_path && bench_write_svg(b.plot_path, &rep)) rc = TOOL_FAIL;
done:
    for (int i = 0; i < b.ncases; i++) free(b.cases[i]);
    free(b.cases);
    free(b.scipy);
    tc_context_destroy(b.ctx);
    tc_context_destroy(b.ctx1);
    return rc;
}
