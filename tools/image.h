/*
 * image.h - 8/16-bit gray and RGB images: PNG (libpng, when built with
 * TC_HAVE_PNG) and binary / ASCII PGM and PPM (P5, P6, P2, P3).
 *
 * Pixels are held as float32 planes (channel, row, column), the layout the
 * filter runs on; writing rounds half away from zero and saturates to
 * [0, maxval].
 */
#ifndef TC_TOOLS_IMAGE_H
#define TC_TOOLS_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum tool_image_format {
    IMG_NONE = 0,
    IMG_PNG,
    IMG_PGM,
    IMG_PPM
} tool_image_format;

typedef struct tool_image {
    int64_t width, height;
    int channels;     /* 1 (gray) or 3 (RGB) */
    unsigned maxval;  /* 255 for 8-bit PNG, 65535 for 16-bit, PNM's maxval */
    float *data;      /* channels x height x width, 64-byte aligned, owned */
} tool_image;

/* The format named by path's extension (.png, .pgm, .ppm; any case), or
 * IMG_NONE. */
tool_image_format tool_image_format_of(const char *path);

/* Parses a whole image file held in memory; the format comes from the
 * content (PNG signature or "P2" / "P3" / "P5" / "P6"). 0 or -1 with err. */
int tool_image_parse(const unsigned char *buf, size_t len, tool_image *img,
                     char *err, size_t errlen);
/* Reads path into memory and parses it. 0 or -1 with err. */
int tool_image_load(const char *path, tool_image *img, char *err,
                    size_t errlen);
/* Writes img to fp as fmt. PGM needs 1 channel, PPM 3; PNG is 8-bit when
 * maxval <= 255, else 16-bit. 0 or -1 with err. */
int tool_image_write(FILE *fp, tool_image_format fmt, const tool_image *img,
                     char *err, size_t errlen);
void tool_image_free(tool_image *img);

/* Saturating conversion used by the writers: round half away from zero,
 * clamp to [0, maxval], NaN to 0. */
unsigned tool_image_quantise(float v, unsigned maxval);

/* Internal helpers shared by image.c and image_png.c. */
int tool_image_alloc(tool_image *img, int64_t width, int64_t height,
                     int channels, unsigned maxval, char *err, size_t errlen);
int tool_png_parse(const unsigned char *buf, size_t len, tool_image *img,
                   char *err, size_t errlen);
int tool_png_write(FILE *fp, const tool_image *img, char *err, size_t errlen);

#endif /* TC_TOOLS_IMAGE_H */
