/*
 * npy.h - reader and writer for NumPy .npy files (float16 / float32 /
 * float64; .npy has no bfloat16).
 *
 * Self-contained: depends on nothing but libc and the library's inline
 * half conversions (src/core/half.h), so the fuzz target
 * (tools/fuzz_npy.c) builds from this file alone. The parser treats its
 * input as hostile: every length, count and size is checked before use.
 */
#ifndef TC_TOOLS_NPY_H
#define TC_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NPY_MAX_DIMS 8

typedef enum npy_dtype {
    NPY_F32 = 0, /* '<f4' */
    NPY_F64 = 1, /* '<f8' */
    NPY_F16 = 2  /* '<f2' */
} npy_dtype;

typedef struct npy_array {
    npy_dtype dtype;
    int ndim;                     /* 0..NPY_MAX_DIMS; 0 is a scalar */
    int64_t shape[NPY_MAX_DIMS];  /* every entry >= 1 */
    size_t count;                 /* product of shape (1 for a scalar) */
    void *data;                   /* count elements, 64-byte aligned, owned */
} npy_array;

/* Bytes per element of dtype. */
size_t npy_dtype_size(npy_dtype dtype);
/* "float16", "float32" or "float64". */
const char *npy_dtype_name(npy_dtype dtype);

/* Parses a whole .npy file held in buf[0..len). Header versions 1.0, 2.0
 * and 3.0; descr '<f2', '<f4' or '<f8'; fortran_order False; every dimension >= 1;
 * the payload must be exactly count * itemsize bytes. On success fills *out
 * (out->data is a new aligned copy; free with npy_free) and returns 0. On
 * failure returns -1, leaves *out empty and writes one line to err. */
int npy_parse(const unsigned char *buf, size_t len, npy_array *out, char *err,
              size_t errlen);

/* Reads the .npy file at path (same checks as npy_parse). A directory, a
 * missing file or a read error fails with a message naming the path. */
int npy_load(const char *path, npy_array *out, char *err, size_t errlen);

/* Reads only the header of the .npy file at path (the checks of npy_load
 * on it): fills out's dtype, ndim, shape and count, leaves out->data NULL,
 * and sets *offset to the data's byte offset in the file. The file must
 * hold at least the data's bytes (for readers of parts of it, such as
 * tileconv-mpi's MPI-IO views). */
int npy_load_header(const char *path, npy_array *out, int64_t *offset, char *err,
                    size_t errlen);

/* Writes the version 1.0 header alone (data on a 64-byte boundary after
 * it, as numpy writes); the caller writes count * itemsize bytes next. */
int npy_write_header(FILE *fp, npy_dtype dtype, int ndim, const int64_t *shape, char *err,
                     size_t errlen);

/* Writes a version 1.0 .npy stream (C order, little-endian) to fp. Returns
 * 0, or -1 on a write error or an invalid shape. The caller checks fclose. */
int npy_write(FILE *fp, npy_dtype dtype, int ndim, const int64_t *shape,
              const void *data, char *err, size_t errlen);

/* Allocates an empty array of the given dtype and shape (64-byte aligned,
 * uninitialised). Returns 0 or -1 on overflow / out of memory. */
int npy_alloc(npy_array *out, npy_dtype dtype, int ndim, const int64_t *shape,
              char *err, size_t errlen);

/* Converts a in place to dtype (no-op when already of that dtype). */
int npy_convert(npy_array *a, npy_dtype dtype, char *err, size_t errlen);

/* Frees a->data and empties *a. NULL and empty arrays are accepted. */
void npy_free(npy_array *a);

#endif /* TC_TOOLS_NPY_H */
