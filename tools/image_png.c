/*
 * image_png.c - PNG through libpng's classic API. libpng reports errors by
 * longjmp; every such path lands in one setjmp block that frees what was
 * allocated and returns a message. Built as stubs without TC_HAVE_PNG.
 */
#include "image.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

#ifndef TC_HAVE_PNG

int tool_png_parse(const unsigned char *buf, size_t len, tool_image *img,
                   char *err, size_t errlen) {
    return fail(err, errlen, "PNG support is not built in (libpng was not found)");
}

int tool_png_write(FILE *fp, const tool_image *img, char *err, size_t errlen) {
    return fail(err, errlen, "PNG support is not built in (libpng was not found)");
}

#else
#include <png.h>

typedef struct png_io {
    const unsigned char *buf;
    size_t len, pos;
    char msg[200];
} png_io;

static void on_error(png_structp png, png_const_charp msg) {
    png_io *io = png_get_error_ptr(png);
    if (io) snprintf(io->msg, sizeof io->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) {}

static void on_read(png_structp png, png_bytep out, png_size_t n) {
    png_io *io = png_get_io_ptr(png);
    if (n > io->len - io->pos) png_error(png, "truncated file");
    memcpy(out, io->buf + io->pos, n);
    io->pos += n;
}

int tool_png_parse(const unsigned char *buf, size_t len, tool_image *img,
                   char *err, size_t errlen) {
    png_io io = {buf, len, 0, "corrupt file"};
    png_structp png = NULL;
    png_infop info = NULL;
    /* Touched after setjmp, so volatile for the longjmp path. */
    unsigned char *volatile pix = NULL;
    png_bytep *volatile rows = NULL;
    memset(img, 0, sizeof *img);
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
    if (!png || !(info = png_create_info_struct(png))) {
        png_destroy_read_struct(&png, NULL, NULL);
        return fail(err, errlen, "PNG: out of memory");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(pix);
        free(rows);
        tool_image_free(img);
        return fail(err, errlen, "PNG: %s", io.msg);
    }
    png_set_read_fn(png, &io, on_read);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info);
    png_uint_32 h = png_get_image_height(png, info);
    int depth = png_get_bit_depth(png, info);
    int ctype = png_get_color_type(png, info);
    if (ctype & PNG_COLOR_MASK_ALPHA) {
        snprintf(io.msg, sizeof io.msg,
                 "images with an alpha channel are not supported (gray or RGB only)");
        png_longjmp(png, 1);
    }
    if (ctype == PNG_COLOR_TYPE_PALETTE && png_get_valid(png, info, PNG_INFO_tRNS)) {
        snprintf(io.msg, sizeof io.msg,
                 "palette images with transparency (tRNS) are not supported");
        png_longjmp(png, 1);
    }
    if (ctype == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    int outdepth = png_get_bit_depth(png, info);
    if ((channels != 1 && channels != 3) || (outdepth != 8 && outdepth != 16)) {
        snprintf(io.msg, sizeof io.msg, "unsupported layout (%d channels, %d bits)",
                 channels, outdepth);
        png_longjmp(png, 1);
    }
    size_t rowbytes = png_get_rowbytes(png, info);
    if (rowbytes != (size_t)w * channels * (outdepth / 8) ||
        (h && rowbytes > SIZE_MAX / h)) {
        snprintf(io.msg, sizeof io.msg, "image too large");
        png_longjmp(png, 1);
    }
    /* Deflate cannot compress better than about 1032:1, so a file claiming
     * more pixels than that is corrupt: refuse before allocating them. */
    if ((double)rowbytes * h > 1100.0 * (double)len + 65536.0) {
        snprintf(io.msg, sizeof io.msg, "%ux%u pixels cannot fit in a %zu-byte file",
                 (unsigned)w, (unsigned)h, len);
        png_longjmp(png, 1);
    }
    if (tool_image_alloc(img, w, h, channels, outdepth == 16 ? 65535 : 255,
                         io.msg, sizeof io.msg))
        png_longjmp(png, 1);
    pix = malloc(rowbytes * h);
    rows = malloc(h * sizeof *rows);
    if (!pix || !rows) {
        snprintf(io.msg, sizeof io.msg, "out of memory");
        png_longjmp(png, 1);
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = pix + (size_t)y * rowbytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    size_t plane = (size_t)w * h;
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < (size_t)w * channels; x++) {
            const unsigned char *p = pix + y * rowbytes + x * (outdepth / 8);
            float v = outdepth == 16 ? (float)(p[0] << 8 | p[1]) : (float)p[0];
            img->data[(x % channels) * plane + y * w + x / channels] = v;
        }
    png_destroy_read_struct(&png, &info, NULL);
    free(pix);
    free(rows);
    return 0;
}

int tool_png_write(FILE *fp, const tool_image *img, char *err, size_t errlen) {
    png_io io = {NULL, 0, 0, "write failed"};
    png_structp png = NULL;
    png_infop info = NULL;
    unsigned char *volatile row = NULL;
    int depth = img->maxval > 255 ? 16 : 8, ch = img->channels;
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
    if (!png || !(info = png_create_info_struct(png))) {
        png_destroy_write_struct(&png, NULL);
        return fail(err, errlen, "PNG: out of memory");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return fail(err, errlen, "PNG: %s", io.msg);
    }
    if (img->width > PNG_UINT_31_MAX || img->height > PNG_UINT_31_MAX) {
        snprintf(io.msg, sizeof io.msg, "image too large for PNG");
        png_longjmp(png, 1);
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, depth,
                 ch == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t plane = (size_t)(img->width * img->height), wc = (size_t)img->width * ch;
    row = malloc(wc * (depth / 8));
    if (!row) {
        snprintf(io.msg, sizeof io.msg, "out of memory");
        png_longjmp(png, 1);
    }
    for (size_t y = 0; y < (size_t)img->height; y++) {
        for (size_t x = 0; x < wc; x++) {
            unsigned v = tool_image_quantise(
                img->data[(x % ch) * plane + y * img->width + x / ch], img->maxval);
            if (depth == 8) row[x] = (unsigned char)v;
            else row[2 * x] = (unsigned char)(v >> 8), row[2 * x + 1] = (unsigned char)v;
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    return 0;
}
#endif /* TC_HAVE_PNG */
