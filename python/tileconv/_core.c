/*
 * _core.c - the CPython extension of the tileconv package: plan objects
 * over the public C API (include/tileconv.h), executed with the GIL
 * released. The Python layer (ndimage.py, nn/functional.py) decides shapes,
 * dtypes and caching; this file only checks what it is handed and maps
 * tc_status to Python exceptions:
 *   TC_ERR_INVALID_ARGUMENT, NOT_APPLICABLE, OVERFLOW  -> ValueError
 *   TC_ERR_OUT_OF_MEMORY                               -> MemoryError
 *   anything else                                      -> RuntimeError
 * each with tileconv's own message (tc_last_error).
 *
 * Element types: NumPy float32, float64 and float16; bfloat16 (which NumPy
 * lacks) as its 16-bit patterns in an int16 / uint16 array on a plan made
 * for TC_BFLOAT16 (torch's bfloat16 tensors viewed as int16). A dtype
 * argument is a tc_dtype value or a name tc_dtype_parse knows.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdint.h>
#include <string.h>

#include "tileconv.h"

static PyObject *tc_py_error(tc_status st, const char *what) {
    PyObject *exc = PyExc_RuntimeError;
    if (st == TC_ERR_INVALID_ARGUMENT || st == TC_ERR_NOT_APPLICABLE || st == TC_ERR_OVERFLOW)
        exc = PyExc_ValueError;
    else if (st == TC_ERR_OUT_OF_MEMORY)
        exc = PyExc_MemoryError;
    PyErr_Format(exc, "tileconv: %s: %s", what, tc_last_error());
    return NULL;
}

/* element strides of a (aligned) array, or -1 when a stride is not a
 * multiple of the item size */
static int tc_py_estrides(PyArrayObject *a, int64_t *out) {
    int nd = PyArray_NDIM(a);
    npy_intp isz = PyArray_ITEMSIZE(a);
    for (int i = 0; i < nd; i++) {
        npy_intp s = PyArray_STRIDE(a, i);
        if (s % isz) return -1;
        out[i] = (int64_t)(s / isz);
    }
    return 0;
}

static int tc_py_dtype(PyArrayObject *a, tc_dtype *dt) {
    int t = PyArray_TYPE(a);
    if (t == NPY_FLOAT32) *dt = TC_FLOAT32;
    else if (t == NPY_FLOAT64) *dt = TC_FLOAT64;
    else if (t == NPY_FLOAT16) *dt = TC_FLOAT16;
    else {
        PyErr_Format(PyExc_TypeError,
                     "tileconv: array dtype %s, expected float32, float64 or float16 "
                     "(bfloat16: int16 / uint16 bit patterns on a bfloat16 plan)",
                     PyArray_DESCR(a)->typeobj->tp_name);
        return -1;
    }
    return 0;
}

/* the array's dtype as seen by a plan of dtype `want`: 16-bit integer
 * arrays are bfloat16 bit patterns there */
static int tc_py_dtype_for(PyArrayObject *a, int want, tc_dtype *dt) {
    int t = PyArray_TYPE(a);
    if (want == TC_BFLOAT16 && (t == NPY_INT16 || t == NPY_UINT16)) {
        *dt = TC_BFLOAT16;
        return 0;
    }
    return tc_py_dtype(a, dt);
}

/* a dtype argument: None (-1 out), a tc_dtype value or a name */
static int tc_py_dtype_arg(PyObject *o, int *out) {
    if (!o || o == Py_None) {
        *out = -1;
        return 0;
    }
    tc_dtype dt;
    if (PyUnicode_Check(o)) {
        const char *name = PyUnicode_AsUTF8(o);
        if (!name) return -1;
        if (tc_dtype_parse(name, &dt) != TC_OK) {
            PyErr_Format(PyExc_ValueError, "tileconv: unknown dtype '%s'", name);
            return -1;
        }
        *out = (int)dt;
        return 0;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (!tc_dtype_name((tc_dtype)v)) {
        PyErr_Format(PyExc_ValueError, "tileconv: dtype %ld is not a tc_dtype", v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* an activation argument: None, a tc_activation value or a name */
static int tc_py_act_arg(PyObject *o, int *out) {
    *out = TC_ACT_NONE;
    if (!o || o == Py_None) return 0;
    tc_activation a;
    if (PyUnicode_Check(o)) {
        const char *name = PyUnicode_AsUTF8(o);
        if (!name) return -1;
        if (tc_activation_parse(name, &a) != TC_OK) {
            PyErr_Format(PyExc_ValueError,
                         "tileconv: activation '%s', expected none, relu, relu6, silu, "
                         "sigmoid, tanh or gelu",
                         name);
            return -1;
        }
        *out = (int)a;
        return 0;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (!tc_activation_name((tc_activation)v)) {
        PyErr_Format(PyExc_ValueError, "tileconv: activation %ld is not a tc_activation", v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int tc_py_tuple64(PyObject *seq, int64_t *out, int max, const char *name) {
    PyObject *f = PySequence_Fast(seq, name);
    if (!f) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
    if (n > max) {
        Py_DECREF(f);
        PyErr_Format(PyExc_ValueError, "tileconv: %s has %zd entries, at most %d", name, n, max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(f, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(f);
            return -1;
        }
        out[i] = (int64_t)v;
    }
    Py_DECREF(f);
    return (int)n;
}

/* n elements from one dtype to another (the mask of a plan whose dtype is
 * not the mask array's): through double for float32 / float64, through
 * float32 for the 16-bit types (rounded to nearest even). 0 or -1 with
 * MemoryError. */
static int tc_py_convert(void *dst, int ddt, const void *src, int sdt, size_t n) {
    float *f = (float *)PyMem_Malloc((n ? n : 1) * sizeof(float));
    if (!f) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (sdt == TC_FLOAT32) f[i] = ((const float *)src)[i];
        else if (sdt == TC_FLOAT64) f[i] = (float)((const double *)src)[i];
    }
    if (sdt == TC_FLOAT16) tc_half_to_float(f, (const uint16_t *)src, n);
    if (sdt == TC_BFLOAT16) tc_bfloat16_to_float(f, (const uint16_t *)src, n);
    if (ddt == TC_FLOAT32) memcpy(dst, f, n * sizeof(float));
    else if (ddt == TC_FLOAT64)
        for (size_t i = 0; i < n; i++)
            ((double *)dst)[i] = sdt == TC_FLOAT64 ? ((const double *)src)[i] : (double)f[i];
    else if (ddt == TC_FLOAT16) tc_float_to_half((uint16_t *)dst, f, n);
    else tc_float_to_bfloat16((uint16_t *)dst, f, n);
    PyMem_Free(f);
    return 0;
}

/* ---------------- FilterPlan ---------------- */
/* Device-array executes on the caller's stream (the framework's current
 * stream, a raw cudaStream_t; 0: the calling thread's default stream,
 * which waits for the legacy default stream). A plan cached by the package
 * may be shared by threads with different streams: the stream is set and
 * the work enqueued under the plan's own lock (tc_plan_set_cuda_stream is
 * not safe beside an execute of the same plan). Called without the GIL. */
static tc_status tc_py_stream_begin(PyThread_type_lock lock, tc_plan *plan, unsigned long long s) {
    PyThread_acquire_lock(lock, WAIT_LOCK);
    tc_status st = tc_plan_set_cuda_stream(plan, (void *)(uintptr_t)s);
    if (st == TC_ERR_UNSUPPORTED && s == 0) st = TC_OK; /* a CPU plan, no stream asked */
    if (st != TC_OK) PyThread_release_lock(lock);
    return st;
}
static int tc_py_lock_init(PyThread_type_lock *lock) {
    if (!*lock && !(*lock = PyThread_allocate_lock())) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

typedef struct {
    PyObject_HEAD tc_plan *plan;
    tc_context *ctx;
    PyThread_type_lock lock; /* execute_ptr: the stream set and the execute together */
    int ndim, dtype;
    int mexec; /* TC_PLAN_MASK_AT_EXECUTE: execute_ptr takes the mask's address */
    int64_t shape[TC_MAX_DIMS], in_strides[TC_MAX_DIMS], out_strides[TC_MAX_DIMS];
    int64_t out_shape[TC_MAX_DIMS];
} FilterPlan;

static void FilterPlan_dealloc(FilterPlan *self) {
    tc_plan_destroy(self->plan);
    tc_context_destroy(self->ctx);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* FilterPlan(shape, in_strides, out_strides, nspatial, mask, kind, output,
 *            mode, cval, origin, threads, algorithm[, backend[, dtype[,
 *            mask_at_execute[, direct]]]])
 * dtype (None: the mask's) is the plan's element type, a tc_dtype value or
 * name; a mask of another floating type is converted to it (rounded once),
 * an int16 / uint16 mask is taken as bfloat16 bit patterns. float16 and
 * bfloat16 plans accumulate in float32. mask_at_execute = 1: the plan is
 * made with TC_PLAN_MASK_AT_EXECUTE; mask gives only the shape (and, with
 * dtype None, the dtype), its values are not read, and every execute_ptr
 * passes the mask's address. direct = 1: TC_PLAN_DIRECT (direct sums
 * only: integer data filtered in float64 stays exact, as scipy's). */
static int FilterPlan_init(FilterPlan *self, PyObject *args, PyObject *kw) {
    PyObject *shape, *ist, *ost, *origin, *maskobj;
    int nspatial, kind, output, mode, threads;
    double cval;
    const char *algo = NULL;
    int backend = 0, mexec = 0, direct = 0;
    PyObject *dtobj = NULL;
    if (!PyArg_ParseTuple(args, "OOOiOiiidOiz|iOpp", &shape, &ist, &ost, &nspatial, &maskobj,
                          &kind, &output, &mode, &cval, &origin, &threads, &algo, &backend,
                          &dtobj, &mexec, &direct))
        return -1;
    int want;
    if (tc_py_dtype_arg(dtobj, &want)) return -1;
    if (!PyArray_Check(maskobj) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)maskobj)) {
        PyErr_SetString(PyExc_TypeError, "tileconv: the mask must be a C-contiguous ndarray");
        return -1;
    }
    PyArrayObject *mask = (PyArrayObject *)maskobj;
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    tc_dtype mdt;
    if (tc_py_dtype_for(mask, want, &mdt)) return -1;
    tc_dtype dt = want < 0 ? mdt : (tc_dtype)want;
    d.dtype = dt;
    int nd = tc_py_tuple64(shape, d.shape, TC_MAX_DIMS, "shape");
    if (nd < 0) return -1;
    if (tc_py_tuple64(ist, d.in_strides, TC_MAX_DIMS, "in_strides") < 0 ||
        tc_py_tuple64(ost, d.out_strides, TC_MAX_DIMS, "out_strides") < 0 ||
        tc_py_tuple64(origin, d.origin, TC_MAX_SPATIAL, "origin") < 0)
        return -1;
    d.ndim = nd;
    d.nspatial = nspatial;
    if (PyArray_NDIM(mask) != nspatial) {
        PyErr_SetString(PyExc_ValueError, "tileconv: mask rank differs from nspatial");
        return -1;
    }
    for (int i = 0; i < nspatial; i++) d.mask_shape[i] = PyArray_DIM(mask, i);
    d.kind = (tc_filter_kind)kind;
    d.output = (tc_output_kind)output;
    d.mode = (tc_mode)mode;
    d.cval = cval;
    tc_status st = tc_context_create(&self->ctx);
    if (st == TC_OK && threads > 0) st = tc_context_set_threads(self->ctx, threads);
    if (st == TC_OK)
        st = tc_context_set_backend(self->ctx, backend ? TC_BACKEND_CUDA : TC_BACKEND_CPU);
    if (st != TC_OK) {
        tc_py_error(st, "context");
        return -1;
    }
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    o.flags = (mexec ? TC_PLAN_MASK_AT_EXECUTE : 0u) | (direct ? TC_PLAN_DIRECT : 0u);
    const void *mdata = mexec ? NULL : PyArray_DATA(mask);
    void *mconv = NULL;
    if (mdt != dt && !mexec) {
        size_t n = (size_t)PyArray_SIZE(mask);
        mconv = PyMem_Malloc((n ? n : 1) * tc_dtype_size(dt));
        if (!mconv) {
            PyErr_NoMemory();
            return -1;
        }
        if (tc_py_convert(mconv, dt, mdata, mdt, n)) {
            PyMem_Free(mconv);
            return -1;
        }
        mdata = mconv;
    }
    Py_BEGIN_ALLOW_THREADS st = tc_plan_filter(&self->plan, self->ctx, &d, mdata, &o);
    Py_END_ALLOW_THREADS PyMem_Free(mconv);
    if (st != TC_OK) {
        tc_py_error(st, "plan");
        return -1;
    }
    self->ndim = nd;
    self->dtype = dt;
    self->mexec = mexec;
    memcpy(self->shape, d.shape, sizeof d.shape);
    memcpy(self->in_strides, d.in_strides, sizeof d.in_strides);
    memcpy(self->out_strides, d.out_strides, sizeof d.out_strides);
    int ond;
    tc_plan_output_shape(self->plan, &ond, self->out_shape);
    return 0;
}

/* the array as the plan was made for it: dtype, shape, element strides */
static int tc_py_matches(PyArrayObject *a, int dtype, int nd, const int64_t *shape,
                         const int64_t *strides, const char *name) {
    tc_dtype dt;
    if (tc_py_dtype_for(a, dtype, &dt)) return -1;
    if ((int)dt != dtype) {
        PyErr_Format(PyExc_TypeError, "tileconv: %s dtype %s, the plan's is %s", name,
                     tc_dtype_name(dt), tc_dtype_name((tc_dtype)dtype));
        return -1;
    }
    if (PyArray_NDIM(a) != nd) {
        PyErr_Format(PyExc_ValueError, "tileconv: %s does not match the plan", name);
        return -1;
    }
    int64_t es[TC_MAX_DIMS];
    if (tc_py_estrides(a, es)) {
        PyErr_Format(PyExc_ValueError, "tileconv: %s strides are not whole elements", name);
        return -1;
    }
    int dense = 1;
    for (int i = 0; i < nd; i++) dense &= strides[i] == 0;
    int64_t c = 1;
    for (int i = nd - 1; i >= 0; i--) {
        if (PyArray_DIM(a, i) != shape[i]) {
            PyErr_Format(PyExc_ValueError, "tileconv: %s shape does not match the plan", name);
            return -1;
        }
        int64_t want = dense ? c : strides[i];
        if (shape[i] > 1 && es[i] != want) {
            PyErr_Format(PyExc_ValueError, "tileconv: %s strides do not match the plan", name);
            return -1;
        }
        c *= shape[i];
    }
    return 0;
}

static PyObject *FilterPlan_execute(FilterPlan *self, PyObject *args) {
    PyArrayObject *x, *y;
    if (!PyArg_ParseTuple(args, "O!O!", &PyArray_Type, &x, &PyArray_Type, &y)) return NULL;
    if (tc_py_matches(x, self->dtype, self->ndim, self->shape, self->in_strides, "input") ||
        tc_py_matches(y, self->dtype, self->ndim, self->out_shape, self->out_strides, "output"))
        return NULL;
    if (!PyArray_ISWRITEABLE(y)) {
        PyErr_SetString(PyExc_ValueError, "tileconv: the output array is read-only");
        return NULL;
    }
    if (self->mexec) {
        PyErr_SetString(PyExc_ValueError, "tileconv: a mask-at-execute plan runs through "
                                          "execute_ptr(x, y, stream, mask)");
        return NULL;
    }
    tc_status st;
    void *yd = PyArray_DATA(y);
    const void *xd = PyArray_DATA(x);
    Py_BEGIN_ALLOW_THREADS st = tc_execute_filter(self->plan, yd, xd, NULL);
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "execute");
    Py_RETURN_NONE;
}

/* execute_ptr(x_ptr, y_ptr[, stream[, mask_ptr]]): raw addresses (device
 * arrays through __cuda_array_interface__); the caller guarantees shapes
 * and layout. On a CUDA plan with device pointers the call only enqueues,
 * on stream (a raw cudaStream_t; 0 or absent: the thread's default stream).
 * mask_ptr: the mask of a mask-at-execute plan (dense, the plan's shape and
 * dtype; on a CUDA plan a device address, read by the kernels on stream:
 * no host copy), required there and refused elsewhere. */
static PyObject *FilterPlan_execute_ptr(FilterPlan *self, PyObject *args) {
    unsigned long long xp, yp, sp = 0, mp = 0;
    if (!PyArg_ParseTuple(args, "KK|KK", &xp, &yp, &sp, &mp)) return NULL;
    if (!xp || !yp) {
        PyErr_SetString(PyExc_ValueError, "tileconv: NULL array address");
        return NULL;
    }
    if (self->mexec != (mp != 0)) {
        PyErr_SetString(PyExc_ValueError,
                        self->mexec ? "tileconv: a mask-at-execute plan needs the mask's address"
                                    : "tileconv: this plan holds its mask; no mask address");
        return NULL;
    }
    if (tc_py_lock_init(&self->lock)) return NULL;
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_py_stream_begin(self->lock, self->plan, sp);
    if (st == TC_OK) {
        if (mp)
            st = tc_execute_filter_mask(self->plan, (void *)(uintptr_t)yp,
                                        (const void *)(uintptr_t)xp, (const void *)(uintptr_t)mp,
                                        NULL);
        else
            st = tc_execute_filter(self->plan, (void *)(uintptr_t)yp, (const void *)(uintptr_t)xp,
                                   NULL);
        PyThread_release_lock(self->lock);
    }
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "execute");
    Py_RETURN_NONE;
}

static PyObject *FilterPlan_algorithm(FilterPlan *self, void *c) {
    return PyUnicode_FromString(tc_plan_algorithm(self->plan));
}
static PyObject *FilterPlan_out_shape(FilterPlan *self, void *c) {
    PyObject *t = PyTuple_New(self->ndim);
    for (int i = 0; i < self->ndim; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(self->out_shape[i]));
    return t;
}

static PyObject *FilterPlan_dtype(FilterPlan *self, void *c) {
    return PyUnicode_FromString(tc_dtype_name((tc_dtype)self->dtype));
}
static PyObject *FilterPlan_mask_at_execute(FilterPlan *self, void *c) {
    return PyBool_FromLong(self->mexec);
}

static PyMethodDef FilterPlan_methods[] = {
    {"execute", (PyCFunction)FilterPlan_execute, METH_VARARGS,
     "execute(x, y): y = filter(x); the GIL is released meanwhile"},
    {"execute_ptr", (PyCFunction)FilterPlan_execute_ptr, METH_VARARGS,
     "execute_ptr(x_addr, y_addr[, stream[, mask_addr]]): raw (device) addresses, enqueued on "
     "stream; mask_addr for a mask-at-execute plan"},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef FilterPlan_getset[] = {
    {"algorithm", (getter)FilterPlan_algorithm, NULL, "the algorithm chosen", NULL},
    {"out_shape", (getter)FilterPlan_out_shape, NULL, "the output shape", NULL},
    {"dtype", (getter)FilterPlan_dtype, NULL, "the element type's name", NULL},
    {"mask_at_execute", (getter)FilterPlan_mask_at_execute, NULL,
     "True: made with TC_PLAN_MASK_AT_EXECUTE (execute_ptr takes the mask's address)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject FilterPlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tileconv._core.FilterPlan",
    .tp_basicsize = sizeof(FilterPlan),
    .tp_dealloc = (destructor)FilterPlan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tileconv filter plan (tc_plan_filter).",
    .tp_methods = FilterPlan_methods,
    .tp_getset = FilterPlan_getset,
    .tp_init = (initproc)FilterPlan_init,
    .tp_new = PyType_GenericNew,
};

/* ---------------- ConvPlan ---------------- */
/* Executes with the plan's own weights (tc_plan_conv_set_weights) and
 * set_weights exclude each other through the plan's lock (the C API does
 * not allow a set beside an execute of the same plan); executes with the
 * caller's weights run concurrently, as the C API allows. */
typedef struct {
    PyObject_HEAD tc_plan *plan;
    tc_context *ctx;
    PyThread_type_lock lock; /* execute_ptr: the stream set and the execute together */
    int dtype, ndim, has_bias, layout, wlayout, activation, has_residual, weights_set;
    int64_t x_shape[TC_MAX_DIMS], w_shape[TC_MAX_DIMS], y_shape[TC_MAX_DIMS];
    /* in memory order (layout; the weights: weight_layout) */
    int64_t x_mem[TC_MAX_DIMS], y_mem[TC_MAX_DIMS], w_mem[TC_MAX_DIMS];
} ConvPlan;

static void ConvPlan_dealloc(ConvPlan *self) {
    tc_plan_destroy(self->plan);
    tc_context_destroy(self->ctx);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* N x C x spatial -> N x spatial x C for channels-last */
static void tc_py_mem_shape(int64_t *mem, const int64_t *logical, int nd, int layout) {
    memcpy(mem, logical, (size_t)nd * sizeof *mem);
    if (layout == TC_LAYOUT_CHANNELS_LAST) {
        for (int i = 1; i < nd - 1; i++) mem[i] = logical[i + 1];
        mem[nd - 1] = logical[1];
    }
}

/* ConvPlan(dtype, x_shape, w_shape, groups, stride, dilation, padding,
 *          padding_kind, padding_mode, has_bias, threads, algorithm
 *          [, backend[, flags[, layout[, activation[, has_residual
 *          [, weight_layout]]]]]])
 * x_shape and w_shape are torch's (N x C x spatial, K x C/groups x mask)
 * whatever the layouts; dtype and activation take tc_ values or names;
 * layout 0 channels-first, 1 channels-last (arrays N x spatial x C);
 * weight_layout likewise for the weights (1: arrays K x mask x C/groups). */
static int ConvPlan_init(ConvPlan *self, PyObject *args, PyObject *kw) {
    int pkind, pmode, has_bias, threads;
    long long groups;
    PyObject *dtobj, *xs, *ws, *st_, *dl, *pd, *actobj = NULL;
    const char *algo = NULL;
    int backend = 0; /* 0 cpu, 1 cuda */
    unsigned int flags = 0; /* TC_PLAN_* (allow_tf32: TC_PLAN_ALLOW_TF32) */
    int layout = 0, has_residual = 0, wlayout = 0;
    if (!PyArg_ParseTuple(args, "OOOLOOOiiiiz|iIiOii", &dtobj, &xs, &ws, &groups, &st_, &dl, &pd,
                          &pkind, &pmode, &has_bias, &threads, &algo, &backend, &flags, &layout,
                          &actobj, &has_residual, &wlayout))
        return -1;
    int dtype, act;
    if (tc_py_dtype_arg(dtobj, &dtype) || tc_py_act_arg(actobj, &act)) return -1;
    if (dtype < 0) {
        PyErr_SetString(PyExc_ValueError, "tileconv: conv: dtype is None");
        return -1;
    }
    if (flags & ~(unsigned)(TC_PLAN_MEASURE | TC_PLAN_ALLOW_TF32 | TC_PLAN_DIRECT)) {
        PyErr_Format(PyExc_ValueError, "tileconv: conv: plan flags 0x%x not supported", flags);
        return -1;
    }
    if (layout != TC_LAYOUT_CHANNELS_FIRST && layout != TC_LAYOUT_CHANNELS_LAST) {
        PyErr_Format(PyExc_ValueError, "tileconv: conv: layout %d, expected 0 (channels first) "
                     "or 1 (channels last)", layout);
        return -1;
    }
    if (wlayout != TC_LAYOUT_CHANNELS_FIRST && wlayout != TC_LAYOUT_CHANNELS_LAST) {
        PyErr_Format(PyExc_ValueError, "tileconv: conv: weight_layout %d, expected 0 (channels "
                     "first) or 1 (channels last)", wlayout);
        return -1;
    }
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    int64_t xsh[TC_MAX_DIMS], wsh[TC_MAX_DIMS];
    int xn = tc_py_tuple64(xs, xsh, TC_MAX_DIMS, "input shape");
    int wn = tc_py_tuple64(ws, wsh, TC_MAX_DIMS, "weight shape");
    if (xn < 0 || wn < 0) return -1;
    if (xn < 3 || xn > 5 || wn != xn) {
        PyErr_Format(PyExc_ValueError,
                     "tileconv: conv: input rank %d and weight rank %d, expected 3 to 5 and equal",
                     xn, wn);
        return -1;
    }
    int nsp = xn - 2;
    d.dtype = (tc_dtype)dtype;
    d.nspatial = nsp;
    d.batch = xsh[0];
    d.in_channels = xsh[1];
    d.out_channels = wsh[0];
    d.groups = groups;
    if (tc_py_tuple64(st_, d.stride, TC_MAX_SPATIAL, "stride") < 0 ||
        tc_py_tuple64(dl, d.dilation, TC_MAX_SPATIAL, "dilation") < 0 ||
        tc_py_tuple64(pd, d.padding, TC_MAX_SPATIAL, "padding") < 0)
        return -1;
    for (int i = 0; i < nsp; i++) {
        d.in_size[i] = xsh[2 + i];
        d.kernel_size[i] = wsh[2 + i];
    }
    if (groups >= 1 && xsh[1] % groups == 0 && wsh[1] != xsh[1] / groups) {
        PyErr_Format(PyExc_ValueError,
                     "tileconv: conv: weight has %lld input channels, expected in_channels / "
                     "groups = %lld",
                     (long long)wsh[1], (long long)(xsh[1] / groups));
        return -1;
    }
    d.padding_kind = (tc_padding_kind)pkind;
    d.padding_mode = (tc_padding_mode)pmode;
    d.has_bias = has_bias;
    d.layout = (tc_layout)layout;
    d.weight_layout = (tc_layout)wlayout;
    d.activation = (tc_activation)act;
    d.has_residual = has_residual != 0;
    tc_status st = tc_context_create(&self->ctx);
    if (st == TC_OK && threads > 0) st = tc_context_set_threads(self->ctx, threads);
    if (st == TC_OK)
        st = tc_context_set_backend(self->ctx, backend ? TC_BACKEND_CUDA : TC_BACKEND_CPU);
    if (st != TC_OK) {
        tc_py_error(st, "context");
        return -1;
    }
    if (tc_py_lock_init(&self->lock)) return -1;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    o.flags = flags;
    Py_BEGIN_ALLOW_THREADS st = tc_plan_conv(&self->plan, self->ctx, &d, &o);
    Py_END_ALLOW_THREADS if (st != TC_OK) {
        tc_py_error(st, "conv");
        return -1;
    }
    self->dtype = dtype;
    self->ndim = xn;
    self->has_bias = has_bias;
    self->layout = layout;
    self->wlayout = wlayout;
    self->activation = act;
    self->has_residual = d.has_residual;
    self->weights_set = 0;
    memcpy(self->x_shape, xsh, sizeof xsh);
    memcpy(self->w_shape, wsh, sizeof wsh);
    int ond;
    tc_plan_output_shape(self->plan, &ond, self->y_mem); /* in memory order */
    memcpy(self->y_shape, self->y_mem, sizeof self->y_mem);
    if (layout == TC_LAYOUT_CHANNELS_LAST) { /* N x spatial x K -> N x K x spatial */
        self->y_shape[1] = self->y_mem[xn - 1];
        for (int i = 2; i < xn; i++) self->y_shape[i] = self->y_mem[i - 1];
    }
    tc_py_mem_shape(self->x_mem, self->x_shape, xn, layout);
    tc_py_mem_shape(self->w_mem, self->w_shape, xn, wlayout);
    return 0;
}

static int tc_py_check_bias(ConvPlan *self, PyObject *bo) {
    static const int64_t zero[TC_MAX_DIMS] = {0};
    if (!self->has_bias) {
        if (bo != Py_None) {
            PyErr_SetString(PyExc_ValueError, "tileconv: the plan has no bias; pass None");
            return -1;
        }
        return 0;
    }
    if (bo == Py_None) {
        PyErr_SetString(PyExc_ValueError, "tileconv: the plan expects a bias");
        return -1;
    }
    int64_t bs[1] = {self->w_shape[0]};
    if (!PyArray_Check(bo)) {
        PyErr_SetString(PyExc_TypeError, "tileconv: bias must be an ndarray");
        return -1;
    }
    return tc_py_matches((PyArrayObject *)bo, self->dtype, 1, bs, zero, "bias");
}

/* execute(x, w, bias, y[, residual]): NumPy arrays in memory order (x and y
 * N x spatial x C for a channels-last plan, w K x mask x C/groups for a
 * channels-last weight_layout); w = None and bias = None: the
 * weights set on the plan (set_weights); residual: y's shape, exactly when
 * the plan has has_residual (it may be y itself). */
static PyObject *ConvPlan_execute(ConvPlan *self, PyObject *args) {
    PyArrayObject *x, *y;
    PyObject *wo, *bo, *ro = Py_None;
    if (!PyArg_ParseTuple(args, "O!OOO!|O", &PyArray_Type, &x, &wo, &bo, &PyArray_Type, &y,
                          &ro))
        return NULL;
    static const int64_t zero[TC_MAX_DIMS] = {0};
    if (tc_py_matches(x, self->dtype, self->ndim, self->x_mem, zero, "input") ||
        tc_py_matches(y, self->dtype, self->ndim, self->y_mem, zero, "output"))
        return NULL;
    if (!PyArray_ISWRITEABLE(y)) {
        PyErr_SetString(PyExc_ValueError, "tileconv: the output array is read-only");
        return NULL;
    }
    const void *wd = NULL, *bd = NULL, *rd = NULL;
    int own = wo == Py_None;
    if (own) {
        if (bo != Py_None) {
            PyErr_SetString(PyExc_ValueError,
                            "tileconv: weights None (the plan's own) but a bias given");
            return NULL;
        }
        if (!self->weights_set) {
            PyErr_SetString(PyExc_ValueError,
                            "tileconv: weights None but none set on the plan (set_weights)");
            return NULL;
        }
    } else {
        if (!PyArray_Check(wo)) {
            PyErr_SetString(PyExc_TypeError, "tileconv: weight must be an ndarray or None");
            return NULL;
        }
        if (tc_py_matches((PyArrayObject *)wo, self->dtype, self->ndim, self->w_mem, zero,
                          "weight") ||
            tc_py_check_bias(self, bo))
            return NULL;
        wd = PyArray_DATA((PyArrayObject *)wo);
        if (bo != Py_None) bd = PyArray_DATA((PyArrayObject *)bo);
    }
    if ((ro != Py_None) != (self->has_residual != 0)) {
        PyErr_SetString(PyExc_ValueError, self->has_residual
                                              ? "tileconv: the plan expects a residual"
                                              : "tileconv: the plan has no residual");
        return NULL;
    }
    if (ro != Py_None) {
        if (!PyArray_Check(ro)) {
            PyErr_SetString(PyExc_TypeError, "tileconv: residual must be an ndarray");
            return NULL;
        }
        if (tc_py_matches((PyArrayObject *)ro, self->dtype, self->ndim, self->y_mem, zero,
                          "residual"))
            return NULL;
        rd = PyArray_DATA((PyArrayObject *)ro);
    }
    tc_status st;
    void *yd = PyArray_DATA(y);
    const void *xd = PyArray_DATA(x);
    Py_BEGIN_ALLOW_THREADS if (own) PyThread_acquire_lock(self->lock, WAIT_LOCK);
    st = tc_execute_conv_residual(self->plan, yd, xd, wd, bd, rd, NULL);
    if (own) PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "conv execute");
    Py_RETURN_NONE;
}

/* execute_ptr(x_addr, w_addr, bias_addr_or_0, y_addr[, stream[, residual_addr]]):
 * raw (device or host) addresses in the plan's layout; the caller guarantees
 * shapes and layout. w_addr = 0 and bias_addr = 0: the weights set on the
 * plan. */
static PyObject *ConvPlan_execute_ptr(ConvPlan *self, PyObject *args) {
    unsigned long long xp, wp, bp, yp, sp = 0, rp = 0;
    if (!PyArg_ParseTuple(args, "KKKK|KK", &xp, &wp, &bp, &yp, &sp, &rp)) return NULL;
    int own = wp == 0 && bp == 0 && self->weights_set;
    if (!xp || !yp || (!own && (!wp || self->has_bias != (bp != 0)))) {
        PyErr_SetString(PyExc_ValueError, "tileconv: NULL array address or bias mismatch");
        return NULL;
    }
    if (self->has_residual != (rp != 0)) {
        PyErr_SetString(PyExc_ValueError, self->has_residual
                                              ? "tileconv: the plan expects a residual"
                                              : "tileconv: the plan has no residual");
        return NULL;
    }
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_py_stream_begin(self->lock, self->plan, sp);
    if (st == TC_OK) {
        st = tc_execute_conv_residual(
            self->plan, (void *)(uintptr_t)yp, (const void *)(uintptr_t)xp,
            own ? NULL : (const void *)(uintptr_t)wp,
            own || !bp ? NULL : (const void *)(uintptr_t)bp,
            rp ? (const void *)(uintptr_t)rp : NULL, NULL);
        PyThread_release_lock(self->lock);
    }
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "conv execute");
    Py_RETURN_NONE;
}

/* set_weights(w, bias): tc_plan_conv_set_weights with host NumPy arrays
 * (K x C/groups x mask, dense, or K x mask x C/groups with weight_layout
 * channels-last; bias None exactly when the plan has none):
 * copied and packed into the chosen algorithm's form once; execute(x, None,
 * None, y) and execute_ptr(x, 0, 0, y) then use them. Calling again
 * replaces them. */
static PyObject *ConvPlan_set_weights(ConvPlan *self, PyObject *args) {
    PyArrayObject *w;
    PyObject *bo;
    if (!PyArg_ParseTuple(args, "O!O", &PyArray_Type, &w, &bo)) return NULL;
    static const int64_t zero[TC_MAX_DIMS] = {0};
    if (tc_py_matches(w, self->dtype, self->ndim, self->w_mem, zero, "weight") ||
        tc_py_check_bias(self, bo))
        return NULL;
    const void *wd = PyArray_DATA(w);
    const void *bd = bo == Py_None ? NULL : PyArray_DATA((PyArrayObject *)bo);
    tc_status st;
    Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(self->lock, WAIT_LOCK);
    st = tc_plan_conv_set_weights(self->plan, wd, bd);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "conv set weights");
    self->weights_set = 1;
    Py_RETURN_NONE;
}

static PyObject *ConvPlan_algorithm(ConvPlan *self, void *c) {
    return PyUnicode_FromString(tc_plan_algorithm(self->plan));
}
static PyObject *ConvPlan_staging(ConvPlan *self, void *c) {
    return PyUnicode_FromString(tc_plan_staging(self->plan));
}
static PyObject *tc_py_shape_tuple(const int64_t *sh, int nd) {
    PyObject *t = PyTuple_New(nd);
    if (!t) return NULL;
    for (int i = 0; i < nd; i++) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(sh[i]));
    return t;
}
static PyObject *ConvPlan_out_shape(ConvPlan *self, void *c) {
    return tc_py_shape_tuple(self->y_shape, self->ndim);
}
static PyObject *ConvPlan_out_mem_shape(ConvPlan *self, void *c) {
    return tc_py_shape_tuple(self->y_mem, self->ndim);
}
static PyObject *ConvPlan_dtype(ConvPlan *self, void *c) {
    return PyUnicode_FromString(tc_dtype_name((tc_dtype)self->dtype));
}
static PyObject *ConvPlan_layout(ConvPlan *self, void *c) {
    return PyUnicode_FromString(tc_layout_name((tc_layout)self->layout));
}
static PyObject *ConvPlan_weight_layout(ConvPlan *self, void *c) {
    return PyUnicode_FromString(tc_layout_name((tc_layout)self->wlayout));
}
static PyObject *ConvPlan_activation(ConvPlan *self, void *c) {
    return PyUnicode_FromString(tc_activation_name((tc_activation)self->activation));
}
static PyObject *ConvPlan_weights_set(ConvPlan *self, void *c) {
    return PyBool_FromLong(self->weights_set);
}
static PyMethodDef ConvPlan_methods[] = {
    {"execute", (PyCFunction)ConvPlan_execute, METH_VARARGS,
     "execute(x, w_or_None, bias_or_None, y[, residual]); the GIL is released meanwhile"},
    {"execute_ptr", (PyCFunction)ConvPlan_execute_ptr, METH_VARARGS,
     "execute_ptr(x_addr, w_addr, bias_addr_or_0, y_addr[, stream[, residual_addr]]): raw "
     "(device) addresses, enqueued on stream; w_addr = bias_addr = 0: the plan's weights"},
    {"set_weights", (PyCFunction)ConvPlan_set_weights, METH_VARARGS,
     "set_weights(w, bias_or_None): host arrays kept and packed by the plan "
     "(tc_plan_conv_set_weights)"},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef ConvPlan_getset[] = {
    {"algorithm", (getter)ConvPlan_algorithm, NULL, "the algorithm chosen", NULL},
    {"staging", (getter)ConvPlan_staging, NULL,
     "the core's conversion passes around the algorithm (tc_plan_staging), or ''", NULL},
    {"out_shape", (getter)ConvPlan_out_shape, NULL, "the output shape (N x K x spatial)", NULL},
    {"out_mem_shape", (getter)ConvPlan_out_mem_shape, NULL,
     "the output shape in memory order (N x spatial x K when channels-last)", NULL},
    {"dtype", (getter)ConvPlan_dtype, NULL, "the element type's name", NULL},
    {"layout", (getter)ConvPlan_layout, NULL, "channels_first or channels_last", NULL},
    {"weight_layout", (getter)ConvPlan_weight_layout, NULL,
     "the weights' layout: channels_first (K x C/groups x mask) or channels_last "
     "(K x mask x C/groups)", NULL},
    {"activation", (getter)ConvPlan_activation, NULL, "the fused activation's name", NULL},
    {"weights_set", (getter)ConvPlan_weights_set, NULL, "whether set_weights was called", NULL},
    {NULL, NULL, NULL, NULL, NULL}};
static PyTypeObject ConvPlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tileconv._core.ConvPlan",
    .tp_basicsize = sizeof(ConvPlan),
    .tp_dealloc = (destructor)ConvPlan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tileconv conv-layer plan (tc_plan_conv).",
    .tp_methods = ConvPlan_methods,
    .tp_getset = ConvPlan_getset,
    .tp_init = (initproc)ConvPlan_init,
    .tp_new = PyType_GenericNew,
};

static PyObject *py_version(PyObject *m, PyObject *a) { return PyUnicode_FromString(tc_version()); }

static PyObject *py_cuda_device_count(PyObject *m, PyObject *a) {
    return PyLong_FromLong(tc_cuda_device_count());
}

static PyMethodDef core_methods[] = {
    {"version", py_version, METH_NOARGS, "the C library's version"},
    {"cuda_device_count", py_cuda_device_count, METH_NOARGS,
     "usable CUDA devices (0 when the library was built without CUDA)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "tileconv._core",
                                         "tileconv's C core.", -1, core_methods};

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    if (PyType_Ready(&FilterPlanType) < 0 || PyType_Ready(&ConvPlanType) < 0) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m) return NULL;
    Py_INCREF(&FilterPlanType);
    PyModule_AddObject(m, "FilterPlan", (PyObject *)&FilterPlanType);
    Py_INCREF(&ConvPlanType);
    PyModule_AddObject(m, "ConvPlan", (PyObject *)&ConvPlanType);
    return m;
}
