/*
 * masks.c - named masks. See masks.h.
 */
#include "masks.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

/* Largest mask we build: (2*radius+1)^d elements. */
#define MAX_MASK_ELEMS (1 << 24)

int tool_mask_is_named(const char *s) {
    return strncmp(s, "box:", 4) == 0 || strncmp(s, "gaussian:", 9) == 0 ||
           strcmp(s, "sobel-x") == 0 || strcmp(s, "sobel-y") == 0 ||
           strcmp(s, "laplace") == 0 || strcmp(s, "sharpen") == 0;
}

/* Outer product of the 1D mask m (length n) over d axes. */
static int outer(const double *m, int64_t n, int d, double **data,
                 int64_t shape[3], char *err, size_t errlen) {
    int64_t total = 1;
    for (int i = 0; i < d; i++) {
        if (total > MAX_MASK_ELEMS / n) {
            snprintf(err, errlen, "mask of %lld^%d elements is too large",
                     (long long)n, d);
            return TOOL_FAIL;
        }
        total *= n;
        shape[i] = n;
    }
    double *o = malloc((size_t)total * sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return TOOL_FAIL;
    }
    for (int64_t e = 0; e < total; e++) {
        double v = 1.0;
        int64_t r = e;
        for (int i = 0; i < d; i++, r /= n) v *= m[r % n];
        o[e] = v;
    }
    *data = o;
    return 0;
}

static int copy_fixed(const double *src, int64_t count, double **data) {
    *data = malloc((size_t)count * sizeof **data);
    if (!*data) return TOOL_FAIL;
    memcpy(*data, src, (size_t)count * sizeof **data);
    return 0;
}

static int build_box(const char *arg, int d, double **data, int64_t shape[3],
                     char *err, size_t errlen) {
    char *end;
    errno = 0;
    long long n = strtoll(arg, &end, 10);
    if (end == arg || *end || errno || n < 1 || n > 65535) {
        snprintf(err, errlen, "invalid box size '%s' (expected an integer 1..65535)", arg);
        return TOOL_USAGE;
    }
    double *m = malloc((size_t)n * sizeof *m);
    if (!m) return snprintf(err, errlen, "out of memory"), TOOL_FAIL;
    for (long long i = 0; i < n; i++) m[i] = 1.0 / (double)n;
    int rc = outer(m, n, d, data, shape, err, errlen);
    free(m);
    return rc;
}

static int build_gaussian(const char *arg, int d, double **data,
                          int64_t shape[3], char *err, size_t errlen) {
    char *end;
    errno = 0;
    double sigma = strtod(arg, &end);
    if (end == arg || *end || errno || !(sigma >= 0) || sigma > 1e6) {
        snprintf(err, errlen, "invalid gaussian sigma '%s' (expected a number >= 0)", arg);
        return TOOL_USAGE;
    }
    /* scipy.ndimage._gaussian_kernel1d with truncate = 4. */
    int64_t radius = (int64_t)(4.0 * sigma + 0.5);
    int64_t n = 2 * radius + 1;
    if (n > MAX_MASK_ELEMS) {
        snprintf(err, errlen, "gaussian:%s mask is too large", arg);
        return TOOL_FAIL;
    }
    double *m = malloc((size_t)n * sizeof *m), sum = 0.0;
    if (!m) return snprintf(err, errlen, "out of memory"), TOOL_FAIL;
    for (int64_t i = 0; i < n; i++) {
        double x = (double)(i - radius);
        m[i] = radius ? exp(-0.5 / (sigma * sigma) * x * x) : 1.0;
        sum += m[i];
    }
    for (int64_t i = 0; i < n; i++) m[i] /= sum;
    int rc = outer(m, n, d, data, shape, err, errlen);
    free(m);
    return rc;
}

static int build_laplace(int d, double **data, int64_t shape[3]) {
    int64_t total = 1;
    for (int i = 0; i < d; i++) shape[i] = 3, total *= 3;
    double *o = calloc((size_t)total, sizeof *o);
    if (!o) return TOOL_FAIL;
    /* Centre is index (1,1,..); the neighbours differ by one axis. */
    int64_t centre = (total - 1) / 2, step = 1;
    o[centre] = -2.0 * d;
    for (int i = 0; i < d; i++, step *= 3) o[centre - step] = o[centre + step] = 1.0;
    *data = o;
    return 0;
}

int tool_mask_build(const char *spec, int d, double **data, int64_t shape[3],
                    char *err, size_t errlen) {
    static const double sobel_x[9] = {-1, 0, 1, -2, 0, 2, -1, 0, 1};
    static const double sobel_y[9] = {-1, -2, -1, 0, 0, 0, 1, 2, 1};
    static const double sharpen[9] = {0, -1, 0, -1, 5, -1, 0, -1, 0};
    *data = NULL;
    if (d < 1 || d > 3) {
        snprintf(err, errlen, "named masks need 1 to 3 filtered axes, not %d", d);
        return TOOL_FAIL;
    }
    if (strncmp(spec, "box:", 4) == 0)
        return build_box(spec + 4, d, data, shape, err, errlen);
    if (strncmp(spec, "gaussian:", 9) == 0)
        return build_gaussian(spec + 9, d, data, shape, err, errlen);
    if (strcmp(spec, "laplace") == 0) {
        if (build_laplace(d, data, shape)) goto oom;
        return 0;
    }
    const double *fixed = strcmp(spec, "sobel-x") == 0   ? sobel_x
                          : strcmp(spec, "sobel-y") == 0 ? sobel_y
                          : strcmp(spec, "sharpen") == 0 ? sharpen
                                                         : NULL;
    if (!fixed) {
        snprintf(err, errlen, "unknown mask '%s'", spec);
        return TOOL_USAGE;
    }
    if (d != 2) {
        snprintf(err, errlen, "mask '%s' exists only for 2 filtered axes, the input has %d",
                 spec, d);
        return TOOL_FAIL;
    }
    shape[0] = shape[1] = 3;
    if (copy_fixed(fixed, 9, data)) goto oom;
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return TOOL_FAIL;
}
