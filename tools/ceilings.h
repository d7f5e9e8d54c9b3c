/*
 * ceilings.h - this machine's compute and memory ceilings, measured.
 *
 * Used by `tileconv analyze` (reuse needed to be compute-bound) and by the
 * benchmark, so both print the same two numbers. Uses only libc and
 * pthreads, not the library.
 */
#ifndef TC_TOOLS_CEILINGS_H
#define TC_TOOLS_CEILINGS_H

#include <stddef.h>

#define TC_TOOL_CEILING_REPEATS 5

typedef struct tc_tool_ceilings {
    int threads;           /* threads used, each pinned to its own CPU */
    int pinned;            /* 1 when every pthread_setaffinity_np succeeded */
    const char *isa;       /* "avx512f+fma", "avx2+fma" or "scalar" */
    double flops;          /* best FP32 FLOP/s (FMA = 2 FLOP), all threads */
    double bytes_per_s;    /* best copy bandwidth (bytes read + bytes
                              written) of the three copy methods below */
    const char *copy_method;    /* which of them gave bytes_per_s */
    double copy_bytes_per_s;    /* vector loads + regular stores */
    double copy_nt_bytes_per_s; /* vector loads + non-temporal stores */
    double memcpy_bytes_per_s;  /* the C library's memcpy */
    double read_bytes_per_s;    /* read-only stream (sum), bytes read */
    size_t stream_bytes;   /* size of each of the two copy buffers */
    int repeats;           /* runs per measurement; the best one is kept */
    double flops_runs[TC_TOOL_CEILING_REPEATS];
    double copy_runs[TC_TOOL_CEILING_REPEATS];
    double copy_nt_runs[TC_TOOL_CEILING_REPEATS];
    double memcpy_runs[TC_TOOL_CEILING_REPEATS];
    double read_runs[TC_TOOL_CEILING_REPEATS];
} tc_tool_ceilings;

/* Measures peak FP32 FMA throughput and copy bandwidth with `threads`
 * pinned threads (<= 0: one per CPU this process may run on). Takes about
 * two seconds and 512 MiB of memory (plus the eviction buffer of
 * tc_tool_evict_cache: every stream repeat starts with cold caches, so the
 * bandwidth is the memory's, not the last-level cache's). Returns 0 on success, -1 on failure (out of memory, thread
 * creation); then *flops and *bytes_per_s are set to 0. Either pointer may
 * be NULL. */
int tc_tool_measure_ceilings(int threads, double *flops, double *bytes_per_s);

/* Same, with the details (ISA used, every repeat). */
int tc_tool_measure_ceilings_ex(int threads, tc_tool_ceilings *out);

/* The FMA kernel the measurement would use on this CPU. */
const char *tc_tool_ceilings_isa(void);

/* Fraction of all CPUs' time spent busy (not idle or iowait) over the next
 * `seconds`, from /proc/stat; -1 where that is unavailable. Measurements
 * taken while it is high are low: print a warning. */
double tc_tool_cpu_busy(double seconds);

/* Size in bytes of the last-level cache (sysconf, then sysfs index3 and
 * index2), 0 when neither says. */
size_t tc_tool_llc_bytes(void);

/* Evicts this process's data from the caches: reads one float per cache
 * line of a private buffer of twice the last-level cache (64 MiB at
 * least, 1 GiB at most; allocated and touched on the first call), on the
 * calling thread. Returns the buffer's size, 0 when it could not be
 * allocated. Not thread-safe. */
size_t tc_tool_evict_cache(void);

/* Keeps every online CPU busy (one pinned spinning thread each, the caller
 * on its own CPU) for `seconds`: a run timed right after a pause then
 * starts on running CPUs, as one after an eviction does. */
void tc_tool_busy_cpus(double seconds);

#endif /* TC_TOOLS_CEILINGS_H */
