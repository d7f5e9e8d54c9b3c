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
    else {
        PyErr_SetString(PyExc_TypeError, "tileconv: arrays must be float32 or float64");
        return -1;
    }
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
 *            mode, cval, origin, threads, algorithm) */
static int FilterPlan_init(FilterPlan *self, PyObject *args, PyObject *kw) {
    PyObject *shape, *ist, *ost, *origin, *maskobj;
    int nspatial, kind, output, mode, threads;
    double cval;
    const char *algo = NULL;
    int backend = 0;
    if (!PyArg_ParseTuple(args, "OOOiOiiidOiz|i", &shape, &ist, &ost, &nspatial, &maskobj,
                          &kind, &output, &mode, &cval, &origin, &threads, &algo, &backend))
        return -1;
    if (!PyArray_Check(maskobj) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)maskobj)) {
        PyErr_SetString(PyExc_TypeError, "tileconv: the mask must be a C-contiguous ndarray");
        return -1;
    }
    PyArrayObject *mask = (PyArrayObject *)maskobj;
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    tc_dtype dt;
    if (tc_py_dtype(mask, &dt)) return -1;
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
    const void *mdata = PyArray_DATA(mask);
    Py_BEGIN_ALLOW_THREADS st = tc_plan_filter(&self->plan, self->ctx, &d, mdata, &o);
    Py_END_ALLOW_THREADS if (st != TC_OK) {
        tc_py_error(st, "plan");
        return -1;
    }
    self->ndim = nd;
    self->dtype = dt;
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
    if (tc_py_dtype(a, &dt)) return -1;
    if ((int)dt != dtype || PyArray_NDIM(a) != nd) {
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
    tc_status st;
    void *yd = PyArray_DATA(y);
    const void *xd = PyArray_DATA(x);
    Py_BEGIN_ALLOW_THREADS st = tc_execute_filter(self->plan, yd, xd, NULL);
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "execute");
    Py_RETURN_NONE;
}

/* execute_ptr(x_ptr, y_ptr[, stream]): raw addresses (device arrays through
 * __cuda_array_interface__); the caller guarantees shapes and layout. On a
 * CUDA plan with device pointers the call only enqueues, on stream (a raw
 * cudaStream_t; 0 or absent: the thread's default stream). */
static PyObject *FilterPlan_execute_ptr(FilterPlan *self, PyObject *args) {
    unsigned long long xp, yp, sp = 0;
    if (!PyArg_ParseTuple(args, "KK|K", &xp, &yp, &sp)) return NULL;
    if (!xp || !yp) {
        PyErr_SetString(PyExc_ValueError, "tileconv: NULL array address");
        return NULL;
    }
    if (tc_py_lock_init(&self->lock)) return NULL;
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_py_stream_begin(self->lock, self->plan, sp);
    if (st == TC_OK) {
        st = tc_execute_filter(self->plan, (void *)(uintptr_t)yp, (const void *)(uintptr_t)xp, NULL);
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

static PyMethodDef FilterPlan_methods[] = {
    {"execute", (PyCFunction)FilterPlan_execute, METH_VARARGS,
     "execute(x, y): y = filter(x); the GIL is released meanwhile"},
    {"execute_ptr", (PyCFunction)FilterPlan_execute_ptr, METH_VARARGS,
     "execute_ptr(x_addr, y_addr[, stream]): raw (device) addresses, enqueued on stream"},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef FilterPlan_getset[] = {
    {"algorithm", (getter)FilterPlan_algorithm, NULL, "the algorithm chosen", NULL},
    {"out_shape", (getter)FilterPlan_out_shape, NULL, "the output shape", NULL},
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
typedef struct {
    PyObject_HEAD tc_plan *plan;
    tc_context *ctx;
    PyThread_type_lock lock; /* execute_ptr: the stream set and the execute together */
    int dtype, ndim, has_bias;
    int64_t x_shape[TC_MAX_DIMS], w_shape[TC_MAX_DIMS], y_shape[TC_MAX_DIMS];
} ConvPlan;

static void ConvPlan_dealloc(ConvPlan *self) {
    tc_plan_destroy(self->plan);
    tc_context_destroy(self->ctx);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ConvPlan(dtype, x_shape, w_shape, groups, stride, dilation, padding,
 *          padding_kind, padding_mode, has_bias, threads, algorithm) */
static int ConvPlan_init(ConvPlan *self, PyObject *args, PyObject *kw) {
    int dtype, pkind, pmode, has_bias, threads;
    long long groups;
    PyObject *xs, *ws, *st_, *dl, *pd;
    const char *algo = NULL;
    int backend = 0; /* 0 cpu, 1 cuda */
    unsigned int flags = 0; /* TC_PLAN_* (allow_tf32: TC_PLAN_ALLOW_TF32) */
    if (!PyArg_ParseTuple(args, "iOOLOOOiiiiz|iI", &dtype, &xs, &ws, &groups, &st_, &dl, &pd,
                          &pkind, &pmode, &has_bias, &threads, &algo, &backend, &flags))
        return -1;
    if (flags & ~(unsigned)(TC_PLAN_MEASURE | TC_PLAN_ALLOW_TF32)) {
        PyErr_Format(PyExc_ValueError, "tileconv: conv: plan flags 0x%x not supported", flags);
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
    o.flags = flags;
    Py_BEGIN_ALLOW_THREADS st = tc_plan_conv(&self->plan, self->ctx, &d, &o);
    Py_END_ALLOW_THREADS if (st != TC_OK) {
        tc_py_error(st, "conv");
        return -1;
    }
    self->dtype = dtype;
    self->ndim = xn;
    self->has_bias = has_bias;
    memcpy(self->x_shape, xsh, sizeof xsh);
    memcpy(self->w_shape, wsh, sizeof wsh);
    int ond;
    tc_plan_output_shape(self->plan, &ond, self->y_shape);
    return 0;
}

static PyObject *ConvPlan_execute(ConvPlan *self, PyObject *args) {
    PyArrayObject *x, *w, *y;
    PyObject *bo;
    if (!PyArg_ParseTuple(args, "O!O!OO!", &PyArray_Type, &x, &PyArray_Type, &w, &bo,
                          &PyArray_Type, &y))
        return NULL;
    static const int64_t zero[TC_MAX_DIMS] = {0};
    if (tc_py_matches(x, self->dtype, self->ndim, self->x_shape, zero, "input") ||
        tc_py_matches(w, self->dtype, self->ndim, self->w_shape, zero, "weight") ||
        tc_py_matches(y, self->dtype, self->ndim, self->y_shape, zero, "output"))
        return NULL;
    const void *bd = NULL;
    if (self->has_bias) {
        int64_t bs[1] = {self->w_shape[0]};
        if (!PyArray_Check(bo) ||
            tc_py_matches((PyArrayObject *)bo, self->dtype, 1, bs, zero, "bias"))
            return bo == Py_None ? (PyErr_SetString(PyExc_ValueError,
                                                    "tileconv: the plan expects a bias"),
                                    NULL)
                                 : NULL;
        bd = PyArray_DATA((PyArrayObject *)bo);
    }
    tc_status st;
    void *yd = PyArray_DATA(y);
    const void *xd = PyArray_DATA(x), *wd = PyArray_DATA(w);
    Py_BEGIN_ALLOW_THREADS st = tc_execute_conv(self->plan, yd, xd, wd, bd, NULL);
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "conv execute");
    Py_RETURN_NONE;
}

static PyObject *ConvPlan_execute_ptr(ConvPlan *self, PyObject *args) {
    unsigned long long xp, wp, bp, yp, sp = 0;
    if (!PyArg_ParseTuple(args, "KKKK|K", &xp, &wp, &bp, &yp, &sp)) return NULL;
    if (!xp || !wp || !yp || (self->has_bias != (bp != 0))) {
        PyErr_SetString(PyExc_ValueError, "tileconv: NULL array address or bias mismatch");
        return NULL;
    }
    if (tc_py_lock_init(&self->lock)) return NULL;
    tc_status st;
    Py_BEGIN_ALLOW_THREADS st = tc_py_stream_begin(self->lock, self->plan, sp);
    if (st == TC_OK) {
        st = tc_execute_conv(self->plan, (void *)(uintptr_t)yp, (const void *)(uintptr_t)xp,
                             (const void *)(uintptr_t)wp, bp ? (const void *)(uintptr_t)bp : NULL,
                             NULL);
        PyThread_release_lock(self->lock);
    }
    Py_END_ALLOW_THREADS if (st != TC_OK) return tc_py_error(st, "conv execute");
    Py_RETURN_NONE;
}

static PyObject *ConvPlan_algorithm(ConvPlan *self, void *c) {
    return PyUnicode_FromString(tc_plan_algorithm(self->plan));
}
static PyObject *ConvPlan_out_shape(ConvPlan *self, void *c) {
    PyObject *t = PyTuple_New(self->ndim);
    for (int i = 0; i < self->ndim; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(self->y_shape[i]));
    return t;
}
static PyMethodDef ConvPlan_methods[] = {
    {"execute", (PyCFunction)ConvPlan_execute, METH_VARARGS,
     "execute(x, w, bias_or_None, y); the GIL is released meanwhile"},
    {"execute_ptr", (PyCFunction)ConvPlan_execute_ptr, METH_VARARGS,
     "execute_ptr(x_addr, w_addr, bias_addr_or_0, y_addr[, stream]): raw (device) addresses, "
     "enqueued on stream"},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef ConvPlan_getset[] = {
    {"algorithm", (getter)ConvPlan_algorithm, NULL, "the algorithm chosen", NULL},
    {"out_shape", (getter)ConvPlan_out_shape, NULL, "the output shape", NULL},
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

static PyMethodDef core_methods[] = {
    {"version", py_version, METH_NOARGS, "the C library's version"}, {NULL, NULL, 0, NULL}};

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
