/* machine.c - which CPU this is (vendor, model, microarchitecture family)
 * and the ceilings the cost model uses: FLOP/s per core and memory
 * bandwidth. Measured values (tileconv info --ceilings) are cached per
 * machine in a text file, like wisdom, and loaded on first use; without a
 * measurement the model uses per-microarchitecture defaults.
 *
 * File: "tileconv-ceilings 1", then one line per machine,
 *   <key> TAB <flops per core> TAB <bytes per second>
 * with key = "<cpu brand string>|<cpus>" (tabs and newlines in the brand
 * become spaces). Path: $TILECONV_CEILINGS (empty = no file), else
 * $XDG_CACHE_HOME/tileconv/ceilings.txt, else ~/.cache/tileconv/ceilings.txt.
 * A missing, unreadable or malformed file is ignored (defaults apply). */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

typedef struct tc__mach {
    char vendor[16];
    char brand[64];
    int family, model;
    tc__uarch uarch;
    double flops_core, bw; /* in use */
    int measured;          /* 1: from set/cache, 0: defaults */
    char source[256];
} tc__mach;

static tc__mach tc__m;
static pthread_once_t tc__m_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tc__m_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *tc__uarch_name(tc__uarch u) {
    switch (u) {
    case TC__UARCH_ZEN: return "AMD Zen 1-3 (AVX2)";
    case TC__UARCH_ZEN4: return "AMD Zen 4 (AVX-512 at half rate)";
    case TC__UARCH_ZEN5: return "AMD Zen 5 (full-rate AVX-512)";
    case TC__UARCH_INTEL_AVX512: return "Intel with AVX-512 (two FMA ports assumed)";
    case TC__UARCH_INTEL: return "Intel (AVX2)";
    default: return "unknown";
    }
}

static void tc__identify(tc__mach *m) {
    snprintf(m->vendor, sizeof m->vendor, "unknown");
    snprintf(m->brand, sizeof m->brand, "unknown CPU");
    m->uarch = TC__UARCH_UNKNOWN;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(m->vendor, &b, 4);
        memcpy(m->vendor + 4, &d, 4);
        memcpy(m->vendor + 8, &c, 4);
        m->vendor[12] = 0;
    }
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        int fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;
        if (fam == 0xf) fam += (a >> 20) & 0xff;
        if (fam == 0x6 || fam >= 0xf) mod += ((a >> 16) & 0xf) << 4;
        m->family = fam;
        m->model = mod;
    }
    unsigned maxext = __get_cpuid_max(0x80000000, NULL);
    if (maxext >= 0x80000004) {
        unsigned r[12];
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
        char s[49];
        memcpy(s, r, 48);
        s[48] = 0;
        char *p = s;
        while (*p == ' ') p++;
        size_t n = strlen(p);
        while (n && p[n - 1] == ' ') p[--n] = 0;
        for (char *q = p; *q; q++)
            if (*q == '\t' || *q == '\n' || *q == '|') *q = ' ';
        if (n) snprintf(m->brand, sizeof m->brand, "%s", p);
    }
    unsigned cpu = tc__cpu_detect();
    if (strcmp(m->vendor, "AuthenticAMD") == 0 || strcmp(m->vendor, "HygonGenuine") == 0) {
        if (m->family >= 0x1a) m->uarch = TC__UARCH_ZEN5;
        else if (m->family == 0x19 && (cpu & TC__CPU_AVX512)) m->uarch = TC__UARCH_ZEN4;
        else if (m->family >= 0x17) m->uarch = TC__UARCH_ZEN;
    } else if (strcmp(m->vendor, "GenuineIntel") == 0) {
        m->uarch = (cpu & TC__CPU_AVX512) ? TC__UARCH_INTEL_AVX512 : TC__UARCH_INTEL;
    }
#endif
}

/* FP32 FLOP per cycle per core of the widest FMA this build uses. */
static double tc__default_flops_core(const tc__mach *m) {
    unsigned cpu = tc__cpu_detect();
    double per_cycle, ghz = 3.0;
    if (cpu & TC__CPU_AVX512) {
        /* Zen 4 splits 512-bit FMAs over its two 256-bit pipes */
        per_cycle = m->uarch == TC__UARCH_ZEN4 ? 32.0 : 64.0;
        if (m->uarch == TC__UARCH_ZEN5) ghz = 3.6;
    } else if (cpu & TC__CPU_AVX2) {
        per_cycle = 32.0;
    } else {
        per_cycle = 4.0;
    }
    return per_cycle * ghz * 1e9;
}

static int tc__ceil_path(char *buf, size_t n) {
    const char *env = tc__knob_get(TC__KNOB_CEILINGS);
    if (env) {
        if (!env[0]) return 0;
        return (size_t)snprintf(buf, n, "%s", env) < n;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0]) return (size_t)snprintf(buf, n, "%s/tileconv/ceilings.txt", xdg) < n;
    const char *home = getenv("HOME");
    if (!home || !home[0]) return 0;
    return (size_t)snprintf(buf, n, "%s/.cache/tileconv/ceilings.txt", home) < n;
}

static void tc__ceil_key(char *buf, size_t n) {
    snprintf(buf, n, "%s|%d", tc__m.brand, tc_cpu_count());
}

/* Looks up this machine in the cache file; 1 when found and sane. */
static int tc__ceil_load(double *flops, double *bw, char *src, size_t srcn) {
    char path[1024], key[160], line[512];
    if (!tc__ceil_path(path, sizeof path)) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    tc__ceil_key(key, sizeof key);
    int found = 0;
    if (!fgets(line, sizeof line, f) || strncmp(line, "tileconv-ceilings 1", 19) != 0) {
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2) continue;
        *t1 = 0;
        if (strcmp(line, key) != 0) continue;
        char *e1, *e2;
        double fl = strtod(t1 + 1, &e1), b = strtod(t2 + 1, &e2);
        if (e1 == t1 + 1 || e2 == t2 + 1 || !(fl > 1e8 && fl < 1e14) || !(b > 1e8 && b < 1e14))
            continue;
        *flops = fl;
        *bw = b;
        found = 1;
    }
    fclose(f);
    if (found) snprintf(src, srcn, "measured, cached in %.200s", path);
    return found;
}

static void tc__mach_init(void) {
    tc__identify(&tc__m);
    double fl, bw;
    if (tc__ceil_load(&fl, &bw, tc__m.source, sizeof tc__m.source)) {
        tc__m.flops_core = fl;
        tc__m.bw = bw;
        tc__m.measured = 1;
    } else {
        tc__m.flops_core = tc__default_flops_core(&tc__m);
        tc__m.bw = 0; /* the model's own defaults by thread count */
        snprintf(tc__m.source, sizeof tc__m.source, "defaults for %s",
                 tc__uarch_name(tc__m.uarch));
    }
}

tc__uarch tc__cpu_uarch(void) {
    pthread_once(&tc__m_once, tc__mach_init);
    return tc__m.uarch;
}

double tc__machine_flops_core(void) {
    pthread_once(&tc__m_once, tc__mach_init);
    pthread_mutex_lock(&tc__m_lock);
    double v = tc__m.flops_core;
    pthread_mutex_unlock(&tc__m_lock);
    return v;
}

double tc__machine_flops_core_bf16(void) {
    double f = tc__machine_flops_core();
    return (tc__cpu_detect() & TC__CPU_AVX512BF16) ? 2.0 * f : f;
}

double tc__machine_bandwidth(void) {
    pthread_once(&tc__m_once, tc__mach_init);
    pthread_mutex_lock(&tc__m_lock);
    double v = tc__m.bw;
    pthread_mutex_unlock(&tc__m_lock);
    return v;
}

tc_status tc_machine_info(tc_machine *m) {
    if (!m) return tc__error(TC_ERR_INVALID_ARGUMENT, "machine: info is NULL");
    pthread_once(&tc__m_once, tc__mach_init);
    memset(m, 0, sizeof *m);
    pthread_mutex_lock(&tc__m_lock);
    snprintf(m->vendor, sizeof m->vendor, "%s", tc__m.vendor);
    snprintf(m->model, sizeof m->model, "%s", tc__m.brand);
    snprintf(m->uarch, sizeof m->uarch, "%s", tc__uarch_name(tc__m.uarch));
    snprintf(m->ceilings_source, sizeof m->ceilings_source, "%s", tc__m.source);
    m->family = tc__m.family;
    m->model_number = tc__m.model;
    m->cpus = tc_cpu_count();
    m->flops_per_core = tc__m.flops_core;
    m->bytes_per_s = tc__m.bw;
    m->measured = tc__m.measured;
    pthread_mutex_unlock(&tc__m_lock);
    return TC_OK;
}

tc_status tc_machine_set_ceilings(double flops_per_core, double bytes_per_s, int save) {
    if (!(flops_per_core > 1e8 && flops_per_core < 1e14))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "machine: flops_per_core=%g, must be in (1e8, 1e14)", flops_per_core);
    if (!(bytes_per_s > 1e8 && bytes_per_s < 1e14))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "machine: bytes_per_s=%g, must be in (1e8, 1e14)", bytes_per_s);
    pthread_once(&tc__m_once, tc__mach_init);
    pthread_mutex_lock(&tc__m_lock);
    tc__m.flops_core = flops_per_core;
    tc__m.bw = bytes_per_s;
    tc__m.measured = 1;
    snprintf(tc__m.source, sizeof tc__m.source, "set by the program");
    pthread_mutex_unlock(&tc__m_lock);
    if (!save) return TC_OK;

    char path[1024], tmp[1100], key[160], line[512];
    if (!tc__ceil_path(path, sizeof path))
        return tc__error(TC_ERR_IO, "machine: no ceilings file (TILECONV_CEILINGS is empty, "
                                    "or neither XDG_CACHE_HOME nor HOME is set)");
    /* the directory, as wisdom does: one level of ~/.cache/tileconv */
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        char *up = strrchr(dir, '/');
        if (up && up != dir) {
            *up = 0;
            mkdir(dir, 0755);
            *up = '/';
        }
        mkdir(dir, 0755);
    }
    tc__ceil_key(key, sizeof key);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *out = fopen(tmp, "w");
    if (!out)
        return tc__error(TC_ERR_IO, "machine: cannot write '%s': %s", tmp, strerror(errno));
    fprintf(out, "tileconv-ceilings 1\n");
    FILE *in = fopen(path, "r");
    if (in) { /* keep the other machines' lines */
        if (fgets(line, sizeof line, in) && strncmp(line, "tileconv-ceilings 1", 19) == 0)
            while (fgets(line, sizeof line, in)) {
                char *t = strchr(line, '\t');
                int same = t && (size_t)(t - line) == strlen(key) &&
                           strncmp(line, key, strlen(key)) == 0;
                if (t && !same) fputs(line, out);
            }
        fclose(in);
    }
    fprintf(out, "%s\t%.6g\t%.6g\n", key, flops_per_core, bytes_per_s);
    int bad = ferror(out);
    if (fclose(out) != 0 || bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return tc__error(TC_ERR_IO, "machine: cannot write '%s': %s", path, strerror(e));
    }
    pthread_mutex_lock(&tc__m_lock);
    snprintf(tc__m.source, sizeof tc__m.source, "measured, cached in %.200s", path);
    pthread_mutex_unlock(&tc__m_lock);
    return TC_OK;
}
