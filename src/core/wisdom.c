/* wisdom.c - remembered MEASURE choices: problem key -> solver name.
 *
 * In memory: one hash table (open addressing, FNV-1a), guarded by one
 * mutex. On disk: a text file,
 *
 *   tileconv-wisdom 1
 *   # comment lines and blank lines are ignored
 *   <key> <solver name>
 *
 * where <key> is one token built by wz_key() from every problem field that
 * can change the choice plus threads, backend, CPU features, workspace
 * limit and the TF32 flag. The parser reads the whole file first and
 * merges only when every line is valid, so a bad file changes nothing.
 * Saving writes a temporary file next to the target and renames it.
 */
#define _GNU_SOURCE
#include "wisdom.h"
#include "stage.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WZ_HEADER "tileconv-wisdom 1"
#define WZ_KEY_MAX 1024
#define WZ_NAME_MAX 128
#define WZ_FILE_MAX ((long)64 << 20)

typedef struct wz_entry {
    char *key, *name;
    uint64_t hash;
} wz_entry;

static pthread_mutex_t wz_lock = PTHREAD_MUTEX_INITIALIZER;
static wz_entry *wz_tab; /* capacity wz_cap (power of two), NULL keys free */
static size_t wz_cap, wz_count;
static int wz_auto_off;  /* explicit load/forget happened: no auto-load */
static pthread_once_t wz_auto_once = PTHREAD_ONCE_INIT;

/* ---------------- keys ---------------- */
static uint64_t wz_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Writes the key of (p, env, limit) into buf; 0 if it does not fit. */
static int wz_key(const tc__problem *p, const tc__env *e, size_t limit,
                  char *buf, size_t size) {
    static const char *const dts[] = {"f32", "f64", "f16", "bf16"};
    const char *dt = dts[(unsigned)p->dtype & 3u];
    int n;
    if (p->op == TC_OP_GEMM) {
        n = snprintf(buf, size,
                     "gemm,%s,ta=%d,tb=%d,m=%lld,n=%lld,k=%lld,lda=%lld,ldb=%lld,"
                     "ldc=%lld,beta0=%d",
                     dt, p->trans_a, p->trans_b, (long long)p->m, (long long)p->n,
                     (long long)p->k, (long long)p->lda, (long long)p->ldb,
                     (long long)p->ldc, p->beta == 0.0);
    } else {
#define WZ3(a) (long long)(a)[0], (long long)(a)[1], (long long)(a)[2]
        n = snprintf(buf, size,
                     "%s,%s,nsp=%d,N=%lld,C=%lld,K=%lld,G=%lld,in=%lldx%lldx%lld,"
                     "msk=%lldx%lldx%lld,out=%lldx%lldx%lld,str=%lldx%lldx%lld,"
                     "dil=%lldx%lldx%lld,plo=%lldx%lldx%lld,phi=%lldx%lldx%lld,"
                     "mode=%d,bias=%d",
                     p->op == TC_OP_CONV ? "conv" : "filter", dt, p->nsp,
                     (long long)p->N, (long long)p->C, (long long)p->K,
                     (long long)p->G, WZ3(p->in), WZ3(p->msk), WZ3(p->out),
                     WZ3(p->stride), WZ3(p->dil), WZ3(p->pad_lo), WZ3(p->pad_hi),
                     (int)p->mode, p->has_bias);
        /* layout and epilogue only when set: older files' keys stay valid */
        if (n >= 0 && (size_t)n < size && (p->layout || p->act || p->has_residual))
            n += snprintf(buf + n, size - (size_t)n, ",lay=%d,act=%d,res=%d",
                          (int)p->layout, (int)p->act, p->has_residual);
        /* the weights' layout only when channels-last, likewise */
        if (n >= 0 && (size_t)n < size && p->op == TC_OP_CONV && p->wlayout)
            n += snprintf(buf + n, size - (size_t)n, ",wlay=%d", (int)p->wlayout);
#undef WZ3
    }
    if (n < 0 || (size_t)n >= size) return 0;
    int m = snprintf(buf + n, size - (size_t)n, ",thr=%d,be=%d,cpu=%u,wl=%zu,tf32=%d%s%s",
                     e->threads, (int)e->backend, e->cpu, limit,
                     (e->flags & TC_PLAN_ALLOW_TF32) != 0,
                     /* only when set: older files' keys stay valid */
                     (e->flags & TC_PLAN_DIRECT) ? ",direct=1" : "",
                     (e->flags & TC_PLAN_MASK_AT_EXECUTE) ? ",maskexec=1" : "");
    return m >= 0 && (size_t)m < size - (size_t)n;
}

static int wz_key_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == ',' || c == '=' || c == '-' ||
           c == '.' || c == '_';
}
static int wz_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/* ---------------- the table (callers hold wz_lock) ---------------- */
static void wz_clear_locked(void) {
    for (size_t i = 0; i < wz_cap; i++) {
        free(wz_tab[i].key);
        free(wz_tab[i].name);
    }
    free(wz_tab);
    wz_tab = NULL;
    wz_cap = wz_count = 0;
}

static wz_entry *wz_slot(wz_entry *tab, size_t cap, const char *key, uint64_t h) {
    for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!tab[i].key || (tab[i].hash == h && strcmp(tab[i].key, key) == 0))
            return &tab[i];
}

static int wz_grow_locked(void) {
    size_t cap = wz_cap ? wz_cap * 2 : 64;
    wz_entry *t = calloc(cap, sizeof *t);
    if (!t) return 0;
    for (size_t i = 0; i < wz_cap; i++)
        if (wz_tab[i].key) *wz_slot(t, cap, wz_tab[i].key, wz_tab[i].hash) = wz_tab[i];
    free(wz_tab);
    wz_tab = t;
    wz_cap = cap;
    return 1;
}

/* Sets key -> name; 0 when out of memory (the table is unchanged). */
static int wz_put_locked(const char *key, const char *name) {
    if ((wz_count + 1) * 2 > wz_cap && !wz_grow_locked()) return 0;
    uint64_t h = wz_hash(key);
    wz_entry *e = wz_slot(wz_tab, wz_cap, key, h);
    char *nm = strdup(name);
    if (!nm) return 0;
    if (e->key) {
        free(e->name);
        e->name = nm;
        return 1;
    }
    char *k = strdup(key);
    if (!k) {
        free(nm);
        return 0;
    }
    e->key = k;
    e->name = nm;
    e->hash = h;
    wz_count++;
    return 1;
}

/* ---------------- files ---------------- */
/* The default file, or 0 with *why set. */
static int wz_default_path(char *buf, size_t size, const char **why) {
    const char *env = tc__knob_get(TC__KNOB_WISDOM);
    if (env) {
        if (!env[0]) {
            *why = "TILECONV_WISDOM is set to an empty string";
            return 0;
        }
        if ((size_t)snprintf(buf, size, "%s", env) >= size) {
            *why = "TILECONV_WISDOM is too long";
            return 0;
        }
        return 1;
    }
    const char *home = getenv("HOME");
    if (!home || !home[0]) {
        *why = "neither TILECONV_WISDOM nor HOME is set";
        return 0;
    }
    if ((size_t)snprintf(buf, size, "%s/.cache/tileconv/wisdom.txt", home) >= size) {
        *why = "HOME is too long";
        return 0;
    }
    return 1;
}

/* Reads and checks the whole file; on success merges it (replacing equal
 * keys) under the lock. Never changes the table on failure. */
static tc_status wz_load_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc__error(TC_ERR_IO, "wisdom: cannot open '%s': %s", path,
                         strerror(errno));
    char *text = NULL;
    long len = -1;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return tc__error(TC_ERR_IO, "wisdom: '%s' is not a regular file", path);
    }
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return tc__error(TC_ERR_IO, "wisdom: cannot read '%s' (not a regular file?)",
                         path);
    }
    if (len > WZ_FILE_MAX) {
        fclose(f);
        return tc__error(TC_ERR_IO, "wisdom: '%s' is %ld bytes, more than the %ld "
                         "a wisdom file may have", path, len, WZ_FILE_MAX);
    }
    text = malloc((size_t)len + 1);
    if (!text) {
        fclose(f);
        return tc__error(TC_ERR_OUT_OF_MEMORY, "wisdom: out of memory reading '%s'", path);
    }
    size_t got = fread(text, 1, (size_t)len, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr || got != (size_t)len) {
        free(text);
        return tc__error(TC_ERR_IO, "wisdom: error reading '%s'", path);
    }
    text[len] = '\0';
    if (memchr(text, '\0', (size_t)len)) {
        free(text);
        return tc__error(TC_ERR_IO, "wisdom: '%s' contains a NUL byte, not a "
                         "wisdom file", path);
    }
    /* pass 1: check every line, turn "key name" into two strings in place */
    size_t cap = 0, n = 0;
    char **pairs = NULL; /* key0, name0, key1, name1, ... */
    tc_status st = TC_OK;
    long lineno = 0;
    char *line = text;
    while (line && *line) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        size_t ll = strlen(line);
        if (ll && line[ll - 1] == '\r') line[--ll] = '\0';
        if (lineno == 1) {
            if (strcmp(line, WZ_HEADER) != 0) {
                st = tc__error(TC_ERR_IO, "wisdom: '%s' is not a tileconv wisdom "
                               "file (line 1 is '%.40s', expected '%s')",
                               path, line, WZ_HEADER);
                break;
            }
            line = next;
            continue;
        }
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '\0' || *s == '#') {
            line = next;
            continue;
        }
        char *key = s;
        while (wz_key_char(*s)) s++;
        size_t klen = (size_t)(s - key);
        if (*s != ' ' && *s != '\t') {
            if (*s == '\0')
                st = tc__error(TC_ERR_IO, "wisdom: %s:%ld: expected '<key> "
                               "<algorithm>' (no algorithm name)", path, lineno);
            else
                st = tc__error(TC_ERR_IO, "wisdom: %s:%ld: bad character 0x%02x in "
                               "the key (expected '<key> <algorithm>')",
                               path, lineno, (unsigned char)*s);
            break;
        }
        *s++ = '\0';
        while (*s == ' ' || *s == '\t') s++;
        char *name = s;
        while (wz_name_char(*s)) s++;
        size_t nlen = (size_t)(s - name);
        char *tail = s;
        while (*tail == ' ' || *tail == '\t') tail++;
        if (*tail != '\0' || nlen == 0) {
            st = tc__error(TC_ERR_IO, "wisdom: %s:%ld: expected '<key> <algorithm>' "
                           "(%s)", path, lineno,
                           nlen == 0 ? "no algorithm name" : "extra text after the name");
            break;
        }
        *s = '\0';
        if (klen >= WZ_KEY_MAX || nlen >= WZ_NAME_MAX) {
            st = tc__error(TC_ERR_IO, "wisdom: %s:%ld: %s too long", path, lineno,
                           klen >= WZ_KEY_MAX ? "key" : "algorithm name");
            break;
        }
        if (n + 2 > cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **np = realloc(pairs, nc * sizeof *np);
            if (!np) {
                st = tc__error(TC_ERR_OUT_OF_MEMORY, "wisdom: out of memory reading '%s'",
                               path);
                break;
            }
            pairs = np;
            cap = nc;
        }
        pairs[n++] = key;
        pairs[n++] = name;
        line = next;
    }
    if (st == TC_OK && lineno == 0)
        st = tc__error(TC_ERR_IO, "wisdom: '%s' is empty, not a tileconv wisdom file",
                       path);
    /* pass 2: merge (all or nothing) */
    if (st == TC_OK) {
        pthread_mutex_lock(&wz_lock);
        /* make room first so a failing insert cannot leave a partial merge
         * behind, except when strdup fails on the way */
        while ((wz_count + n / 2 + 1) * 2 > wz_cap)
            if (!wz_grow_locked()) {
                st = tc__error(TC_ERR_OUT_OF_MEMORY, "wisdom: out of memory merging '%s'",
                               path);
                break;
            }
        for (size_t i = 0; st == TC_OK && i < n; i += 2)
            if (!wz_put_locked(pairs[i], pairs[i + 1]))
                st = tc__error(TC_ERR_OUT_OF_MEMORY, "wisdom: out of memory merging "
                               "'%s'", path);
        pthread_mutex_unlock(&wz_lock);
    }
    free(pairs);
    free(text);
    return st;
}

static void wz_auto_load(void) {
    char path[4096];
    const char *why;
    pthread_mutex_lock(&wz_lock);
    int off = wz_auto_off;
    pthread_mutex_unlock(&wz_lock);
    if (off || !wz_default_path(path, sizeof path, &why)) return;
    if (access(path, R_OK) != 0) return;
    (void)wz_load_file(path); /* a bad default file is ignored */
}

/* ---------------- public API ---------------- */
tc_status tc_wisdom_load(const char *path) {
    char buf[4096];
    const char *why = "";
    pthread_mutex_lock(&wz_lock);
    wz_auto_off = 1;
    pthread_mutex_unlock(&wz_lock);
    if (!path) {
        if (!wz_default_path(buf, sizeof buf, &why))
            return tc__error(TC_ERR_IO, "wisdom: no default file: %s", why);
        path = buf;
    }
    tc_status st = wz_load_file(path);
    if (st == TC_OK) tc__error_clear();
    return st;
}

static int wz_cmp(const void *a, const void *b) {
    return strcmp((*(wz_entry *const *)a)->key, (*(wz_entry *const *)b)->key);
}

/* mkdir -p for the directory part of path (default file only). */
static void wz_mkdirs(const char *path) {
    char d[4096];
    if ((size_t)snprintf(d, sizeof d, "%s", path) >= sizeof d) return;
    for (char *s = d + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(d, 0755);
            *s = '/';
        }
}

tc_status tc_wisdom_save(const char *path) {
    char buf[4096], tmp[4200];
    const char *why = "";
    if (!path) {
        if (!wz_default_path(buf, sizeof buf, &why))
            return tc__error(TC_ERR_IO, "wisdom: no default file: %s", why);
        path = buf;
        wz_mkdirs(path);
    }
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= sizeof tmp)
        return tc__error(TC_ERR_IO, "wisdom: path '%.200s...' is too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return tc__error(TC_ERR_IO, "wisdom: cannot create a temporary file next "
                         "to '%s': %s", path, strerror(errno));
    (void)fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return tc__error(TC_ERR_IO, "wisdom: cannot write '%s': %s", tmp, strerror(errno));
    }
    tc_status st = TC_OK;
    pthread_mutex_lock(&wz_lock);
    wz_entry **order = malloc((wz_count ? wz_count : 1) * sizeof *order);
    if (!order) {
        st = tc__error(TC_ERR_OUT_OF_MEMORY, "wisdom: out of memory saving '%s'", path);
    } else {
        size_t n = 0;
        for (size_t i = 0; i < wz_cap; i++)
            if (wz_tab[i].key) order[n++] = &wz_tab[i];
        qsort(order, n, sizeof *order, wz_cmp); /* stable, diffable files */
        fprintf(f, "%s\n# %zu entries: <problem,threads,backend,cpu,workspace "
                "limit,tf32> <algorithm>\n", WZ_HEADER, n);
        for (size_t i = 0; i < n; i++) fprintf(f, "%s %s\n", order[i]->key, order[i]->name);
        free(order);
    }
    pthread_mutex_unlock(&wz_lock);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        if (st == TC_OK)
            st = tc__error(TC_ERR_IO, "wisdom: cannot write '%s': %s", tmp, strerror(errno));
    }
    if (fclose(f) != 0 && st == TC_OK)
        st = tc__error(TC_ERR_IO, "wisdom: cannot write '%s': %s", tmp, strerror(errno));
    if (st == TC_OK && rename(tmp, path) != 0)
        st = tc__error(TC_ERR_IO, "wisdom: cannot rename '%s' to '%s': %s", tmp, path,
                       strerror(errno));
    if (st != TC_OK) unlink(tmp);
    else tc__error_clear();
    return st;
}

void tc_wisdom_forget(void) {
    pthread_mutex_lock(&wz_lock);
    wz_auto_off = 1;
    wz_clear_locked();
    pthread_mutex_unlock(&wz_lock);
}

/* ---------------- planner side ---------------- */
const tc__solver *tc__wisdom_lookup(const tc__problem *p, const tc__env *env,
                                    size_t workspace_limit) {
    char key[WZ_KEY_MAX], name[WZ_NAME_MAX];
    pthread_once(&wz_auto_once, wz_auto_load);
    if (!wz_key(p, env, workspace_limit, key, sizeof key)) return NULL;
    name[0] = '\0';
    pthread_mutex_lock(&wz_lock);
    if (wz_count) {
        wz_entry *e = wz_slot(wz_tab, wz_cap, key, wz_hash(key));
        if (e->key) snprintf(name, sizeof name, "%s", e->name);
    }
    pthread_mutex_unlock(&wz_lock);
    if (!name[0]) return NULL;
    const tc__solver *s = tc__solver_find(name);
    if (!s || !(s->ops & p->op)) return NULL;
    if (env->backend != TC_BACKEND_AUTO && s->backend != env->backend) return NULL;
    if (s->available && !s->available()) return NULL;
    tc__problem sp; /* what the solver sees (src/core/stage.h) */
    tc__stage_problem(p, tc__solver_caps(s, p), &sp);
    if (!tc__applicable(s, &sp, env, NULL, 0)) return NULL;
    if (workspace_limit && s->workspace && s->workspace(&sp, env) > workspace_limit)
        return NULL;
    return s;
}

void tc__wisdom_record(const tc__problem *p, const tc__env *env,
                       size_t workspace_limit, const char *name) {
    char key[WZ_KEY_MAX];
    pthread_once(&wz_auto_once, wz_auto_load);
    if (!name || !wz_key(p, env, workspace_limit, key, sizeof key)) return;
    pthread_mutex_lock(&wz_lock);
    (void)wz_put_locked(key, name); /* out of memory: simply not remembered */
    pthread_mutex_unlock(&wz_lock);
}
