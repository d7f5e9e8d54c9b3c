/*
 * npy.c - .npy reader and writer. See npy.h.
 *
 * The header is a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * We parse exactly that grammar (three known keys, any order, string /
 * bool / tuple-of-int values) instead of evaluating Python, and reject
 * everything else with a message that says what was wrong.
 */
#include "npy.h"
#include "core/half.h" /* inline float16 conversions, header only */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

#define NPY_ALIGN 64
/* numpy refuses headers over 10000 bytes by default; be a little kinder. */
#define NPY_MAX_HEADER (1u << 20)

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

size_t npy_dtype_size(npy_dtype dtype) {
    return dtype == NPY_F64 ? 8 : dtype == NPY_F16 ? 2 : 4;
}

const char *npy_dtype_name(npy_dtype dtype) {
    return dtype == NPY_F64 ? "float64" : dtype == NPY_F16 ? "float16" : "float32";
}

static const char *npy_descr(npy_dtype dtype) {
    return dtype == NPY_F64 ? "<f8" : dtype == NPY_F16 ? "<f2" : "<f4";
}

static double npy_get(const void *a, size_t i, npy_dtype t) {
    if (t == NPY_F64) return ((const double *)a)[i];
    if (t == NPY_F16) return tc__f16_to_f32(((const uint16_t *)a)[i]);
    return ((const float *)a)[i];
}
static void npy_set(void *a, size_t i, npy_dtype t, double v) {
    if (t == NPY_F64) ((double *)a)[i] = v;
    else if (t == NPY_F16) ((uint16_t *)a)[i] = tc__f32_to_f16((float)v);
    else ((float *)a)[i] = (float)v;
}

void npy_free(npy_array *a) {
    if (!a) return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* Element count and byte size of a shape, with overflow checks. */
static int shape_size(int ndim, const int64_t *shape, size_t esize,
                      size_t *count, size_t *bytes, char *err, size_t errlen) {
    uint64_t n = 1, b;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return fail(err, errlen, "dimension %d is %lld, must be >= 1", i,
                        (long long)shape[i]);
        if (__builtin_mul_overflow(n, (uint64_t)shape[i], &n))
            return fail(err, errlen, "shape overflows 64-bit element count");
    }
    if (__builtin_mul_overflow(n, (uint64_t)esize, &b) || b > (uint64_t)INT64_MAX ||
        b > (uint64_t)SIZE_MAX - NPY_ALIGN)
        return fail(err, errlen, "array size overflows 64 bits");
    *count = (size_t)n;
    *bytes = (size_t)b;
    return 0;
}

int npy_alloc(npy_array *out, npy_dtype dtype, int ndim, const int64_t *shape,
              char *err, size_t errlen) {
    size_t count = 0, bytes = 0;
    memset(out, 0, sizeof *out);
    if (ndim < 0 || ndim > NPY_MAX_DIMS)
        return fail(err, errlen, "rank %d not supported (at most %d)", ndim,
                    NPY_MAX_DIMS);
    if (shape_size(ndim, shape, npy_dtype_size(dtype), &count, &bytes, err,
                   errlen))
        return -1;
    size_t rounded = (bytes + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    out->data = aligned_alloc(NPY_ALIGN, rounded ? rounded : NPY_ALIGN);
    if (!out->data)
        return fail(err, errlen, "out of memory allocating %zu bytes", bytes);
    out->dtype = dtype;
    out->ndim = ndim;
    for (int i = 0; i < ndim; i++) out->shape[i] = shape[i];
    out->count = count;
    return 0;
}

int npy_convert(npy_array *a, npy_dtype dtype, char *err, size_t errlen) {
    if (a->dtype == dtype) return 0;
    npy_array b;
    if (npy_alloc(&b, dtype, a->ndim, a->shape, err, errlen)) return -1;
    for (size_t i = 0; i < a->count; i++) npy_set(b.data, i, dtype, npy_get(a->data, i, a->dtype));
    npy_free(a);
    *a = b;
    return 0;
}

/* ---- header grammar ---------------------------------------------------- */

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' ||
                             *c->p == '\r'))
        c->p++;
}

static int accept(cursor *c, char ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string without escapes; *s / *n point into the header. */
static int parse_string(cursor *c, const char **s, size_t *n) {
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return -1;
    char q = *c->p++;
    const char *start = c->p;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || *c->p == '\n') return -1;
        c->p++;
    }
    if (c->p >= c->end) return -1;
    *s = start;
    *n = (size_t)(c->p - start);
    c->p++;
    return 0;
}

static int match_word(cursor *c, const char *w) {
    size_t n = strlen(w);
    skip_ws(c);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return 0;
    c->p += n;
    return 1;
}

/* Copies at most 16 printable characters of s for messages. */
static void printable(char *dst, const char *s, size_t n) {
    size_t j = 0;
    for (size_t i = 0; i < n && j < 16; i++)
        dst[j++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (n > 16) dst[j++] = '.', dst[j++] = '.', dst[j++] = '.';
    dst[j] = 0;
}

static int parse_descr(cursor *c, npy_dtype *dtype, char *err, size_t errlen) {
    const char *s;
    size_t n;
    char shown[24];
    skip_ws(c);
    if (c->p < c->end && *c->p == '[')
        return fail(err, errlen, "unsupported dtype (structured array)");
    if (parse_string(c, &s, &n))
        return fail(err, errlen, "header 'descr' is not a string");
    if (n == 3 && memcmp(s, "<f4", 3) == 0) {
        *dtype = NPY_F32;
        return 0;
    }
    if (n == 3 && memcmp(s, "<f8", 3) == 0) {
        *dtype = NPY_F64;
        return 0;
    }
    if (n == 3 && memcmp(s, "<f2", 3) == 0) {
        *dtype = NPY_F16;
        return 0;
    }
    printable(shown, s, n);
    if (n == 3 && (memcmp(s, "<V2", 3) == 0 || memcmp(s, "|V2", 3) == 0))
        return fail(err, errlen,
                    "unsupported dtype '%s' (2-byte void: bfloat16 has no .npy type; "
                    "convert to float32, or use the C or Python API for bfloat16)",
                    shown);
    return fail(err, errlen,
                "unsupported dtype '%s' (only '<f2' float16, '<f4' float32 and '<f8' "
                "float64)", shown);
}

static int parse_shape(cursor *c, npy_array *a, char *err, size_t errlen) {
    if (!accept(c, '('))
        return fail(err, errlen, "header 'shape' is not a tuple");
    int n = 0, comma = 0;
    for (;;) {
        if (accept(c, ')')) break;
        if (n > 0 && !comma)
            return fail(err, errlen, "header 'shape' is malformed");
        skip_ws(c);
        if (c->p < c->end && *c->p == '-')
            return fail(err, errlen, "negative dimension in shape");
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return fail(err, errlen, "header 'shape' is malformed");
        int64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (__builtin_mul_overflow(v, (int64_t)10, &v) ||
                __builtin_add_overflow(v, (int64_t)(*c->p - '0'), &v))
                return fail(err, errlen, "dimension in shape overflows 64 bits");
            c->p++;
        }
        if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
        if (v == 0)
            return fail(err, errlen, "zero-size dimension %d in shape", n);
        if (n >= NPY_MAX_DIMS)
            return fail(err, errlen, "too many dimensions (at most %d)",
                        NPY_MAX_DIMS);
        a->shape[n++] = v;
        comma = accept(c, ',');
    }
    if (n == 1 && !comma)
        return fail(err, errlen, "header 'shape' is not a tuple");
    a->ndim = n;
    return 0;
}

/* Parses the dict in h[0..n) into *a (dtype, ndim, shape). */
static int parse_dict(const char *h, size_t n, npy_array *a, char *err,
                      size_t errlen) {
    cursor c = {h, h + n};
    int seen[3] = {0, 0, 0};
    int fortran = 0;
    if (!accept(&c, '{'))
        return fail(err, errlen, "header is not a dictionary");
    for (;;) {
        const char *k;
        size_t kn;
        if (accept(&c, '}')) break;
        if (parse_string(&c, &k, &kn))
            return fail(err, errlen, "header dictionary is malformed");
        if (!accept(&c, ':'))
            return fail(err, errlen, "header dictionary is malformed");
        int idx;
        if (kn == 5 && memcmp(k, "descr", 5) == 0) {
            idx = 0;
            if (!seen[idx] && parse_descr(&c, &a->dtype, err, errlen)) return -1;
        } else if (kn == 13 && memcmp(k, "fortran_order", 13) == 0) {
            idx = 1;
            if (match_word(&c, "False")) fortran = 0;
            else if (match_word(&c, "True")) fortran = 1;
            else return fail(err, errlen, "header 'fortran_order' is not True/False");
        } else if (kn == 5 && memcmp(k, "shape", 5) == 0) {
            idx = 2;
            if (!seen[idx] && parse_shape(&c, a, err, errlen)) return -1;
        } else {
            char shown[24];
            printable(shown, k, kn);
            return fail(err, errlen, "unexpected key '%s' in header", shown);
        }
        if (seen[idx])
            return fail(err, errlen, "duplicate key in header");
        seen[idx] = 1;
        if (!accept(&c, ',')) {
            if (accept(&c, '}')) break;
            return fail(err, errlen, "header dictionary is malformed");
        }
    }
    skip_ws(&c);
    if (c.p != c.end)
        return fail(err, errlen, "unexpected text after the header dictionary");
    if (!seen[0]) return fail(err, errlen, "header has no 'descr' key");
    if (!seen[1]) return fail(err, errlen, "header has no 'fortran_order' key");
    if (!seen[2]) return fail(err, errlen, "header has no 'shape' key");
    if (fortran)
        return fail(err, errlen,
                    "fortran_order arrays are not supported (save in C order)");
    return 0;
}

/* Length of the fixed preamble (magic, version, header length) or -1. On
 * success *hlen is the dict's length in bytes. Needs at least 12 bytes of
 * buf or the whole file when shorter. */
static int parse_preamble(const unsigned char *buf, size_t len, size_t *start,
                          size_t *hlen, char *err, size_t errlen) {
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (len < 6 || memcmp(buf, magic, 6) != 0)
        return fail(err, errlen, "not a .npy file (bad magic)");
    if (len < 10) return fail(err, errlen, "truncated .npy header");
    unsigned major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0)
        return fail(err, errlen, "unsupported .npy version %u.%u", major, minor);
    if (major == 1) {
        *hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        *start = 10;
    } else {
        if (len < 12) return fail(err, errlen, "truncated .npy header");
        *hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
                (size_t)buf[11] << 24;
        *start = 12;
    }
    if (*hlen > NPY_MAX_HEADER)
        return fail(err, errlen, "header length %zu is too large", *hlen);
    return 0;
}

int npy_parse(const unsigned char *buf, size_t len, npy_array *out, char *err,
              size_t errlen) {
    size_t start, hlen, count = 0, bytes = 0;
    npy_array a;
    memset(&a, 0, sizeof a);
    memset(out, 0, sizeof *out);
    if (!buf) len = 0;
    if (parse_preamble(buf, len, &start, &hlen, err, errlen)) return -1;
    if (hlen > len - start)
        return fail(err, errlen,
                    "header length %zu runs past the end of the file (%zu bytes)",
                    hlen, len);
    if (parse_dict((const char *)buf + start, hlen, &a, err, errlen)) return -1;
    if (shape_size(a.ndim, a.shape, npy_dtype_size(a.dtype), &count, &bytes,
                   err, errlen))
        return -1;
    size_t payload = len - start - hlen;
    if (payload < bytes)
        return fail(err, errlen,
                    "data truncated: shape needs %zu bytes, file has %zu", bytes,
                    payload);
    if (payload > bytes)
        return fail(err, errlen,
                    "%zu unexpected bytes after the data (shape needs %zu)",
                    payload - bytes, bytes);
    if (npy_alloc(out, a.dtype, a.ndim, a.shape, err, errlen)) return -1;
    memcpy(out->data, buf + start + hlen, bytes);
    return 0;
}

/* Reads the preamble and header dict of the open file fp (st: its fstat,
 * zeroed when unknown) into a (dtype, ndim, shape). On success *start is the
 * data's byte offset and *bytes its size; a regular file must hold at least
 * that many bytes after the header. -1 with a message without the path, or
 * -2 after a read error with one naming it. */
static int read_header(FILE *fp, const char *path, const struct stat *st, npy_array *a,
                       size_t *start, size_t *bytes, char *err, size_t errlen) {
    unsigned char pre[12];
    unsigned char *hdr = NULL;
    size_t hlen, count = 0, got;
    int rc = -1;
    got = fread(pre, 1, sizeof pre, fp);
    if (ferror(fp)) {
        fail(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return -2;
    }
    if (parse_preamble(pre, got, start, &hlen, err, errlen)) return -1;
    if (S_ISREG(st->st_mode) && (uint64_t)st->st_size < (uint64_t)*start + hlen)
        return fail(err, errlen, "header length %zu runs past the end of the file (%lld bytes)",
                    hlen, (long long)st->st_size);
    hdr = malloc(hlen ? hlen : 1);
    if (!hdr) return fail(err, errlen, "out of memory");
    /* The preamble read may have taken the first bytes of the header. No
     * valid dict is shorter than 2 bytes, so have > hlen is an error. */
    size_t have = got - *start;
    if (have > hlen) {
        fail(err, errlen, "header length %zu is too short for a header", hlen);
        goto out;
    }
    memcpy(hdr, pre + *start, have);
    if (have < hlen && fread(hdr + have, 1, hlen - have, fp) != hlen - have) {
        fail(err, errlen, "header length %zu runs past the end of the file", hlen);
        goto out;
    }
    if (parse_dict((const char *)hdr, hlen, a, err, errlen) ||
        shape_size(a->ndim, a->shape, npy_dtype_size(a->dtype), &count, bytes, err, errlen))
        goto out;
    if (S_ISREG(st->st_mode) && (uint64_t)st->st_size - *start - hlen < (uint64_t)*bytes) {
        fail(err, errlen, "data truncated: shape needs %zu bytes, file has %llu", *bytes,
             (unsigned long long)(st->st_size - *start - hlen));
        goto out;
    }
    a->count = count;
    *start += hlen;
    rc = 0;
out:
    free(hdr);
    return rc;
}

/* Opens path for reading: a directory or a missing file fails. */
static FILE *open_input(const char *path, struct stat *st, char *err, size_t errlen) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(fp), st) != 0) memset(st, 0, sizeof *st);
    if (S_ISDIR(st->st_mode)) {
        fclose(fp);
        fail(err, errlen, "'%s' is a directory", path);
        return NULL;
    }
    return fp;
}

/* Puts the file's name in front of the message in err. */
static int name_path(const char *path, char *err, size_t errlen) {
    if (err && errlen) {
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%s", err);
        snprintf(err, errlen, "%s: %s", path, tmp);
    }
    return -1;
}

int npy_load(const char *path, npy_array *out, char *err, size_t errlen) {
    size_t start = 0, bytes = 0, got;
    npy_array a;
    struct stat st;
    memset(&a, 0, sizeof a);
    memset(out, 0, sizeof *out);
    FILE *fp = open_input(path, &st, err, errlen);
    if (!fp) return -1;
    int hr = read_header(fp, path, &st, &a, &start, &bytes, err, errlen);
    if (hr == -2) goto error;
    if (hr) goto prefix;
    if (npy_alloc(out, a.dtype, a.ndim, a.shape, err, errlen)) goto prefix;
    got = fread(out->data, 1, bytes, fp);
    if (got < bytes) {
        fail(err, errlen, "data truncated: shape needs %zu bytes, file has %zu",
             bytes, got);
        goto prefix;
    }
    if (fgetc(fp) != EOF) {
        fail(err, errlen, "unexpected bytes after the data (shape needs %zu)", bytes);
        goto prefix;
    }
    fclose(fp);
    return 0;
prefix:
    name_path(path, err, errlen);
error:
    npy_free(out);
    fclose(fp);
    return -1;
}

int npy_load_header(const char *path, npy_array *out, int64_t *offset, char *err,
                    size_t errlen) {
    size_t start = 0, bytes = 0;
    struct stat st;
    memset(out, 0, sizeof *out);
    FILE *fp = open_input(path, &st, err, errlen);
    if (!fp) return -1;
    int rc = read_header(fp, path, &st, out, &start, &bytes, err, errlen);
    fclose(fp);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc == -2 ? -1 : name_path(path, err, errlen);
    }
    *offset = (int64_t)start;
    return 0;
}

int npy_write_header(FILE *fp, npy_dtype dtype, int ndim, const int64_t *shape, char *err,
                     size_t errlen) {
    char dict[512];
    size_t count = 0, bytes = 0;
    if (ndim < 0 || ndim > NPY_MAX_DIMS)
        return fail(err, errlen, "rank %d not supported", ndim);
    if (shape_size(ndim, shape, npy_dtype_size(dtype), &count, &bytes, err, errlen))
        return -1;
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     npy_descr(dtype));
    for (int i = 0; i < ndim; i++)
        n += snprintf(dict + n, sizeof dict - n, "%lld%s", (long long)shape[i],
                      ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
    n += snprintf(dict + n, sizeof dict - n, "), }");
    /* Pad with spaces and a final newline so the data starts on a 64-byte
     * boundary, as numpy does. */
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64;
    size_t hlen = total - 10;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    memset(dict + n, ' ', hlen - 1 - (size_t)n);
    dict[hlen - 1] = '\n';
    if (fwrite(pre, 1, 10, fp) != 10 || fwrite(dict, 1, hlen, fp) != hlen)
        return fail(err, errlen, "write error: %s", strerror(errno));
    return 0;
}

int npy_write(FILE *fp, npy_dtype dtype, int ndim, const int64_t *shape,
              const void *data, char *err, size_t errlen) {
    size_t count = 0, bytes = 0;
    if (npy_write_header(fp, dtype, ndim, shape, err, errlen)) return -1;
    shape_size(ndim, shape, npy_dtype_size(dtype), &count, &bytes, err, errlen);
    if (fwrite(data, 1, bytes, fp) != bytes)
        return fail(err, errlen, "write error: %s", strerror(errno));
    return 0;
}
