/*
 * image.c - image loading dispatch, PGM/PPM reader and writer. PNG lives in
 * image_png.c. See image.h.
 */
#include "image.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MAX_SIDE ((int64_t)1 << 31)

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

tool_image_format tool_image_format_of(const char *path) {
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/')) return IMG_NONE;
    if (strcasecmp(dot, ".png") == 0) return IMG_PNG;
    if (strcasecmp(dot, ".pgm") == 0) return IMG_PGM;
    if (strcasecmp(dot, ".ppm") == 0) return IMG_PPM;
    return IMG_NONE;
}

void tool_image_free(tool_image *img) {
    if (!img) return;
    free(img->data);
    memset(img, 0, sizeof *img);
}

int tool_image_alloc(tool_image *img, int64_t width, int64_t height,
                     int channels, unsigned maxval, char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    if (width < 1 || height < 1 || width >= MAX_SIDE || height >= MAX_SIDE)
        return fail(err, errlen, "invalid image size %lldx%lld",
                    (long long)width, (long long)height);
    uint64_t n = (uint64_t)width * (uint64_t)height * (uint64_t)channels, bytes;
    if (n / (uint64_t)channels / (uint64_t)width != (uint64_t)height ||
        __builtin_mul_overflow(n, sizeof(float), &bytes) || bytes > SIZE_MAX - 64)
        return fail(err, errlen, "image %lldx%lld is too large", (long long)width,
                    (long long)height);
    img->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!img->data)
        return fail(err, errlen, "out of memory for a %lldx%lld image",
                    (long long)width, (long long)height);
    img->width = width;
    img->height = height;
    img->channels = channels;
    img->maxval = maxval;
    return 0;
}

unsigned tool_image_quantise(float v, unsigned maxval) {
    if (!(v > 0.0f)) return 0; /* negative, zero and NaN */
    if (v >= (float)maxval) return maxval;
    return (unsigned)roundf(v);
}

/* ---- PNM ---------------------------------------------------------------- */

static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Next decimal number after whitespace and '#' comments; -1 when there is
 * none or it exceeds limit. */
static int pnm_number(const unsigned char *b, size_t len, size_t *pos,
                      uint64_t limit, uint64_t *v) {
    size_t p = *pos;
    for (;;) {
        while (p < len && is_space(b[p])) p++;
        if (p < len && b[p] == '#') {
            while (p < len && b[p] != '\n' && b[p] != '\r') p++;
            continue;
        }
        break;
    }
    if (p >= len || b[p] < '0' || b[p] > '9') return -1;
    uint64_t x = 0;
    while (p < len && b[p] >= '0' && b[p] <= '9') {
        x = x * 10 + (uint64_t)(b[p++] - '0');
        if (x > limit) return -1;
    }
    *pos = p;
    *v = x;
    return 0;
}

static int pnm_parse(const unsigned char *b, size_t len, tool_image *img,
                     char *err, size_t errlen) {
    char kind = (char)b[1];
    int channels = (kind == '3' || kind == '6') ? 3 : 1;
    int binary = (kind == '5' || kind == '6');
    size_t pos = 2;
    uint64_t w, h, maxval;
    if (pnm_number(b, len, &pos, (uint64_t)MAX_SIDE, &w) || w < 1 ||
        pnm_number(b, len, &pos, (uint64_t)MAX_SIDE, &h) || h < 1)
        return fail(err, errlen, "PNM: bad or missing width/height");
    if (pnm_number(b, len, &pos, 65535, &maxval) || maxval < 1)
        return fail(err, errlen, "PNM: bad or missing maxval (must be 1..65535)");
    uint64_t samples = w * h * (uint64_t)channels;
    if (samples / w / (uint64_t)channels != h)
        return fail(err, errlen, "PNM: image too large");
    if (binary) {
        if (pos >= len || !is_space(b[pos]))
            return fail(err, errlen, "PNM: truncated header");
        pos++;
        uint64_t bps = maxval < 256 ? 1 : 2;
        if (samples > (len - pos) / bps)
            return fail(err, errlen, "PNM: truncated pixel data (%llux%llu needs %llu bytes)",
                        (unsigned long long)w, (unsigned long long)h,
                        (unsigned long long)(samples * bps));
    } else if (samples > len - pos) {
        /* Every ASCII sample takes at least 2 bytes; a cheap bound first. */
        return fail(err, errlen, "PNM: truncated pixel data");
    }
    if (tool_image_alloc(img, (int64_t)w, (int64_t)h, channels, (unsigned)maxval,
                         err, errlen))
        return -1;
    size_t plane = (size_t)(w * h);
    for (size_t i = 0; i < (size_t)samples; i++) {
        uint64_t v;
        if (binary) {
            v = b[pos++];
            if (maxval >= 256) v = v << 8 | b[pos++];
        } else if (pnm_number(b, len, &pos, 65535, &v)) {
            tool_image_free(img);
            return fail(err, errlen, "PNM: bad or missing sample %zu", i);
        }
        if (v > maxval) {
            tool_image_free(img);
            return fail(err, errlen, "PNM: sample %llu exceeds maxval %llu",
                        (unsigned long long)v, (unsigned long long)maxval);
        }
        /* Interleaved in the file, planar in memory. */
        img->data[(i % (size_t)channels) * plane + i / (size_t)channels] = (float)v;
    }
    return 0;
}

static int pnm_write(FILE *fp, const tool_image *img, char *err, size_t errlen) {
    size_t plane = (size_t)(img->width * img->height);
    size_t n = plane * (size_t)img->channels;
    unsigned bps = img->maxval < 256 ? 1 : 2;
    unsigned char *row = malloc((size_t)img->width * img->channels * bps);
    if (!row) return fail(err, errlen, "out of memory");
    fprintf(fp, "P%c\n%lld %lld\n%u\n", img->channels == 3 ? '6' : '5',
            (long long)img->width, (long long)img->height, img->maxval);
    size_t rowlen = (size_t)img->width * img->channels;
    for (size_t i = 0; i < n; i += rowlen) {
        for (size_t j = 0; j < rowlen; j++) {
            size_t e = i + j;
            unsigned v = tool_image_quantise(
                img->data[(e % img->channels) * plane + e / img->channels], img->maxval);
            if (bps == 1) row[j] = (unsigned char)v;
            else row[2 * j] = (unsigned char)(v >> 8), row[2 * j + 1] = (unsigned char)v;
        }
        if (fwrite(row, bps, rowlen, fp) != rowlen) break;
    }
    free(row);
    if (ferror(fp)) return fail(err, errlen, "write error: %s", strerror(errno));
    return 0;
}

/* ---- dispatch ----------------------------------------------------------- */

int tool_image_parse(const unsigned char *buf, size_t len, tool_image *img,
                     char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    if (len >= 8 && memcmp(buf, "\x89PNG\r\n\x1a\n", 8) == 0)
        return tool_png_parse(buf, len, img, err, errlen);
    if (len >= 2 && buf[0] == 'P') {
        if (buf[1] == '2' || buf[1] == '3' || buf[1] == '5' || buf[1] == '6')
            return pnm_parse(buf, len, img, err, errlen);
        if (buf[1] >= '1' && buf[1] <= '7')
            return fail(err, errlen, "PNM type P%c is not supported (only P2, P3, P5, P6)",
                        buf[1]);
    }
    return fail(err, errlen, "not a PNG, PGM or PPM image");
}

int tool_image_load(const char *path, tool_image *img, char *err, size_t errlen) {
    struct stat st;
    memset(img, 0, sizeof *img);
    FILE *fp = fopen(path, "rb");
    if (!fp) return fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fileno(fp), &st) != 0) memset(&st, 0, sizeof st);
    if (!S_ISREG(st.st_mode)) {
        fclose(fp);
        return fail(err, errlen, "'%s' is %s", path,
                    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
    }
    size_t len = (size_t)st.st_size;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) {
        fclose(fp);
        return fail(err, errlen, "out of memory reading '%s'", path);
    }
    size_t got = fread(buf, 1, len, fp);
    int rerr = ferror(fp);
    fclose(fp);
    if (rerr || got != len) {
        free(buf);
        return fail(err, errlen, "cannot read '%s'", path);
    }
    char inner[256];
    int rc = tool_image_parse(buf, len, img, inner, sizeof inner);
    free(buf);
    if (rc) fail(err, errlen, "%s: %s", path, inner);
    return rc;
}

int tool_image_write(FILE *fp, tool_image_format fmt, const tool_image *img,
                     char *err, size_t errlen) {
    if (fmt == IMG_PGM && img->channels != 1)
        return fail(err, errlen, "an RGB image cannot be written as .pgm (use .ppm or .png)");
    if (fmt == IMG_PPM && img->channels != 3)
        return fail(err, errlen, "a gray image cannot be written as .ppm (use .pgm or .png)");
    if (fmt == IMG_PNG) return tool_png_write(fp, img, err, errlen);
    return pnm_write(fp, img, err, errlen);
}
