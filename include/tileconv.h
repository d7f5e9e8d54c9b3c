/*
 * tileconv.h - fast convolution for CPUs and GPUs.
 *
 * This header is the manual. Read the CONVENTIONS section first.
 *
 * CONVENTIONS
 *
 *   Work follows four steps, as in FFTW and cuDNN:
 *     describe  fill a descriptor struct (tc_filter_desc, tc_conv_desc or
 *               tc_gemm_desc) after initialising it with its _init function;
 *     plan      tc_plan_filter / tc_plan_conv / tc_plan_gemm validate the
 *               description, ask every registered solver whether it applies
 *               and what it would cost, and keep the best one;
 *     execute   tc_execute_filter / tc_execute_conv / tc_execute_gemm run the
 *               plan on the caller's arrays, as often as wanted;
 *     destroy   tc_plan_destroy.
 *
 *   Arrays are dense, C order (row-major, last axis fastest) unless a
 *   descriptor gives explicit strides. All sizes, strides and indices are
 *   int64_t and counted in elements, not bytes. Arrays of one call must not
 *   overlap unless a function says otherwise.
 *
 *   Loop letters used throughout the code and docs: n (batch), c (input
 *   channel), k (output channel), spatial input d h w, mask r s t, output
 *   spatial p q o.
 *
 *   Errors: every function that can fail returns a tc_status. On failure
 *   tc_last_error() returns a message for the calling thread that names the
 *   object and the bad value, e.g. "conv: dilation[1]=0, must be >= 1".
 *   The library never aborts, never exits and never prints.
 *
 *   Thread safety: the execute functions take a const plan and may be called
 *   from several threads at once on the same plan, each with its own output
 *   array and its own workspace (or a NULL workspace, in which case the call
 *   allocates its own). Creating and destroying plans and contexts is
 *   thread-safe as long as one object is not used while it is destroyed.
 */
#ifndef TILECONV_H
#define TILECONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 1
#define TC_VERSION_PATCH 0

#if defined(_WIN32) && defined(TC_BUILD_SHARED)
#define TC_API __declspec(dllexport)
#elif defined(__GNUC__)
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif

/* Returns the library version as "MAJOR.MINOR.PATCH". */
TC_API const char *tc_version(void);

/* ------------------------------------------------------------------------
 * Status codes. One list makes both the enum and tc_status_string().
 * ------------------------------------------------------------------------ */
#define TC_STATUS_LIST(X)                                                   \
    X(TC_OK, 0, "success")                                                  \
    X(TC_ERR_INVALID_ARGUMENT, 1, "invalid argument")                       \
    X(TC_ERR_UNSUPPORTED, 2, "unsupported problem or option")               \
    X(TC_ERR_OUT_OF_MEMORY, 3, "out of memory")                             \
    X(TC_ERR_OVERFLOW, 4, "size overflows 64-bit indexing")                 \
    X(TC_ERR_NOT_FOUND, 5, "no such algorithm or backend")                  \
    X(TC_ERR_NOT_APPLICABLE, 6, "algorithm does not apply to this problem") \
    X(TC_ERR_WORKSPACE, 7, "workspace too small or over the limit")         \
    X(TC_ERR_BACKEND, 8, "backend failure")                                 \
    X(TC_ERR_NO_DEVICE, 9, "backend or device not available")               \
    X(TC_ERR_IO, 10, "input/output error")                                  \
    X(TC_ERR_INTERNAL, 11, "internal error")

typedef enum tc_status {
#define TC__STATUS_ENUM(name, value, text) name = value,
    TC_STATUS_LIST(TC__STATUS_ENUM)
#undef TC__STATUS_ENUM
} tc_status;

/* Returns a static, human-readable description of a status code. Unknown
 * values return "unknown status". Never NULL. */
TC_API const char *tc_status_string(tc_status status);

/* Returns the message of the last failing call made by this thread, or ""
 * when no call failed yet. The string stays valid until the next tileconv
 * call on this thread. Never NULL. */
TC_API const char *tc_last_error(void);

/* ------------------------------------------------------------------------
 * Element types, boundary modes, backends.
 * ------------------------------------------------------------------------ */
/* Storage types. FLOAT16 is IEEE binary16 (numpy float16, torch.half);
 * BFLOAT16 is the upper half of a float32 (torch.bfloat16), passed as
 * uint16_t bit patterns. Half-precision problems accumulate in float32
 * (as cuDNN's and oneDNN's default math) and round once when storing; see
 * docs/semantics.md for the error bounds. Every array of one problem
 * (input, mask or weights, bias, residual, output) has the problem's dtype. */
typedef enum tc_dtype {
    TC_FLOAT32 = 0, /* float  */
    TC_FLOAT64 = 1, /* double */
    TC_FLOAT16 = 2, /* IEEE half, 16 bits */
    TC_BFLOAT16 = 3 /* bfloat16, 16 bits */
} tc_dtype;

/* Returns the size in bytes of one element, or 0 for an unknown dtype. */
TC_API size_t tc_dtype_size(tc_dtype dtype);
/* Returns "float32", "float64", "float16" or "bfloat16"; NULL for an
 * unknown value. */
TC_API const char *tc_dtype_name(tc_dtype dtype);
/* Parses those names (also "half", "bf16", "f16", "f32", "f64").
 * TC_ERR_INVALID_ARGUMENT for anything else. */
TC_API tc_status tc_dtype_parse(const char *name, tc_dtype *dtype);
/* Conversions between float and the 16-bit types (round to nearest even;
 * NaN stays NaN, overflow goes to infinity), n elements. */
TC_API void tc_float_to_half(uint16_t *dst, const float *src, size_t n);
TC_API void tc_half_to_float(float *dst, const uint16_t *src, size_t n);
TC_API void tc_float_to_bfloat16(uint16_t *dst, const float *src, size_t n);
TC_API void tc_bfloat16_to_float(float *dst, const uint16_t *src, size_t n);

/* How values outside the input are defined. These are scipy.ndimage's modes,
 * for input a b c d:
 *   TC_MODE_CONSTANT  k k k k | a b c d | k k k k   (k = cval)
 *   TC_MODE_NEAREST   a a a a | a b c d | d d d d
 *   TC_MODE_REFLECT   d c b a | a b c d | d c b a   (edge repeated)
 *   TC_MODE_MIRROR    d c b   | a b c d | c b a     (edge not repeated)
 *   TC_MODE_WRAP      a b c d | a b c d | a b c d
 * The extension continues periodically as far as needed, so masks larger
 * than the input are allowed in every mode. PyTorch's padding modes are the
 * same boundaries under other names: zeros = CONSTANT with cval 0,
 * replicate = NEAREST, reflect = MIRROR, circular = WRAP. */
typedef enum tc_mode {
    TC_MODE_CONSTANT = 0,
    TC_MODE_NEAREST = 1,
    TC_MODE_REFLECT = 2,
    TC_MODE_MIRROR = 3,
    TC_MODE_WRAP = 4
} tc_mode;

/* Returns "constant", "nearest", ... or NULL for an unknown value. */
TC_API const char *tc_mode_name(tc_mode mode);
/* Parses a scipy mode name ("constant", "nearest", "reflect", "mirror",
 * "wrap"; also scipy's aliases "grid-constant", "grid-mirror" (= reflect) and
 * "grid-wrap"). Returns TC_ERR_INVALID_ARGUMENT for anything else. */
TC_API tc_status tc_mode_parse(const char *name, tc_mode *mode);

typedef enum tc_backend {
    TC_BACKEND_AUTO = 0, /* the planner picks; CUDA when a GPU is usable */
    TC_BACKEND_CPU = 1,
    TC_BACKEND_CUDA = 2
} tc_backend;

/* Returns "auto", "cpu" or "cuda"; NULL for an unknown value. */
TC_API const char *tc_backend_name(tc_backend backend);
TC_API tc_status tc_backend_parse(const char *name, tc_backend *backend);

/* ------------------------------------------------------------------------
 * Context: shared settings for planning and execution.
 * ------------------------------------------------------------------------ */
typedef struct tc_context tc_context;

/* Creates a context with defaults: all online CPU cores, backend AUTO.
 * On success *ctx owns a new context; release it with tc_context_destroy.
 * Every function that takes a context also accepts NULL, meaning a
 * process-wide default context with those defaults. */
TC_API tc_status tc_context_create(tc_context **ctx);
/* Destroys a context. Plans made from it stay valid (they copy what they
 * need). NULL is accepted and ignored. */
TC_API void tc_context_destroy(tc_context *ctx);
/* Sets the number of CPU threads used by plans made afterwards. 0 means all
 * online cores. Negative values or values above 4096 are rejected. */
TC_API tc_status tc_context_set_threads(tc_context *ctx, int threads);
TC_API int tc_context_threads(const tc_context *ctx);
/* Sets the backend preference for plans made afterwards. TC_BACKEND_CUDA
 * fails at plan time (TC_ERR_NO_DEVICE) when no usable GPU exists;
 * TC_BACKEND_AUTO falls back to the CPU. */
TC_API tc_status tc_context_set_backend(tc_context *ctx, tc_backend backend);
TC_API tc_backend tc_context_backend(const tc_context *ctx);

/* ------------------------------------------------------------------------
 * Filter operation: scipy.ndimage.convolve / correlate, and
 * scipy.signal.convolve / correlate for full and valid output.
 * ------------------------------------------------------------------------ */
#define TC_MAX_DIMS 8    /* total array rank accepted by the filter op */
#define TC_MAX_SPATIAL 3 /* filtered (spatial) axes: 1, 2 or 3 */

typedef enum tc_filter_kind {
    TC_FILTER_CONVOLVE = 0, /* mask flipped, as scipy's convolve */
    TC_FILTER_CORRELATE = 1 /* mask as given, as scipy's correlate */
} tc_filter_kind;

typedef enum tc_output_kind {
    /* Output has the input's shape; boundary mode, cval and origin apply
     * (scipy.ndimage.convolve / correlate). */
    TC_OUTPUT_SAME = 0,
    /* Output is input + mask - 1 along each filtered axis, outside values
     * are zero (scipy.signal.convolve / correlate, mode="full"). mode and
     * cval are ignored; origin must be 0. */
    TC_OUTPUT_FULL = 1,
    /* Output is input - mask + 1 along each filtered axis (scipy.signal
     * mode="valid"). When the mask is larger than the input along every
     * filtered axis, scipy swaps the operands; so does tileconv. A mask
     * larger on some axes and smaller on others is an error, as in scipy;
     * the swapped form needs batch size 1. mode and cval are ignored;
     * origin must be 0. */
    TC_OUTPUT_VALID = 2
} tc_output_kind;

typedef struct tc_filter_desc {
    /* Size of this struct; tc_filter_desc_init sets it. Fields are only
     * ever added at the end. */
    size_t struct_size;
    tc_dtype dtype;     /* of input, mask and output */
    int ndim;           /* rank of the input array, 1..TC_MAX_DIMS */
    int nspatial;       /* trailing axes filtered, 1..3; the ndim - nspatial
                           leading axes are filtered independently (batch,
                           channels). 0 (the default) means min(ndim, 3)
                           and requires ndim <= 3. */
    int64_t shape[TC_MAX_DIMS]; /* input shape, every entry >= 1 */
    /* Optional element strides of the input and the output, one per axis.
     * All zero (the default) means C-contiguous. Input strides may be any
     * value (broadcasting with 0 is allowed); output strides must not make
     * two output elements alias. */
    int64_t in_strides[TC_MAX_DIMS];
    int64_t out_strides[TC_MAX_DIMS];
    int64_t mask_shape[TC_MAX_SPATIAL]; /* one per filtered axis, >= 1 */
    tc_filter_kind kind;                /* default TC_FILTER_CONVOLVE */
    tc_output_kind output;              /* default TC_OUTPUT_SAME */
    tc_mode mode;                       /* default TC_MODE_REFLECT (scipy) */
    double cval;                        /* for TC_MODE_CONSTANT, default 0 */
    /* Per filtered axis, scipy's origin: 0 centres the mask, positive
     * shifts it to the left. Valid range -(m/2) .. (m-1)/2 for mask size
     * m (integer division), as in scipy. */
    int64_t origin[TC_MAX_SPATIAL];
} tc_filter_desc;

/* Sets every field to its default (see above) and struct_size. */
TC_API void tc_filter_desc_init(tc_filter_desc *desc);

/* ------------------------------------------------------------------------
 * Conv operation: torch.nn.Conv1d/2d/3d forward (cross-correlation).
 * Input  x: N x C x spatial            (C order)
 * Weight w: K x (C/groups) x mask      (C order)
 * Bias   b: K, optional
 * Output y: N x K x out spatial, out = floor((in + 2*pad - dil*(m-1) - 1)
 *           / stride) + 1, as in PyTorch.
 * With layout TC_LAYOUT_CHANNELS_LAST, x is N x spatial x C and y is
 * N x out spatial x K (NLC / NHWC / NDHWC: torch's channels_last and
 * channels_last_3d memory formats). The weights' layout is its own field,
 * weight_layout: TC_LAYOUT_CHANNELS_FIRST (the default) is K x C/groups x
 * mask ("KCRS"), TC_LAYOUT_CHANNELS_LAST is K x mask x C/groups ("KRSC",
 * channels fastest: the memory of a torch weight in channels_last /
 * channels_last_3d format; 1D: K x L x C/groups). The weights of every
 * execute and of tc_plan_conv_set_weights are in that layout. layout and
 * weight_layout are independent: all four combinations are valid.
 * Algorithms that read channels-last weights directly do; for the others
 * the library reorders them to K x C/groups x mask first (per execute, or
 * once in tc_plan_conv_set_weights; tc_plan_staging names it).
 *
 * Fused epilogue: y = act(conv(x, w) + bias + residual), computed in the
 * accumulation type and rounded once to the dtype. bias (K values) and
 * residual (y's shape, layout and dtype) are each optional.
 * ------------------------------------------------------------------------ */
typedef enum tc_padding_kind {
    TC_PADDING_EXPLICIT = 0, /* use padding[] (symmetric, as in PyTorch) */
    TC_PADDING_SAME = 1,     /* torch padding="same": stride must be 1;
                                total dil*(m-1), extra one on the high side */
    TC_PADDING_VALID = 2     /* no padding */
} tc_padding_kind;

typedef enum tc_padding_mode {
    TC_PADDING_ZEROS = 0,
    TC_PADDING_REFLECT = 1,   /* needs padding < input size, as torch */
    TC_PADDING_REPLICATE = 2,
    TC_PADDING_CIRCULAR = 3   /* needs padding <= input size, as torch */
} tc_padding_mode;

typedef enum tc_layout {
    TC_LAYOUT_CHANNELS_FIRST = 0, /* N x C x spatial (NCL, NCHW, NCDHW) */
    TC_LAYOUT_CHANNELS_LAST = 1   /* N x spatial x C (NLC, NHWC, NDHWC) */
} tc_layout;

/* Activations of the fused epilogue, as torch.nn.functional's. */
typedef enum tc_activation {
    TC_ACT_NONE = 0,
    TC_ACT_RELU = 1,    /* max(v, 0) */
    TC_ACT_RELU6 = 2,   /* min(max(v, 0), 6) */
    TC_ACT_SILU = 3,    /* v * sigmoid(v) */
    TC_ACT_SIGMOID = 4, /* 1 / (1 + exp(-v)) */
    TC_ACT_TANH = 5,
    TC_ACT_GELU = 6     /* v/2 * (1 + erf(v / sqrt 2)), torch's default */
} tc_activation;
/* "none", "relu", "relu6", "silu", "sigmoid", "tanh", "gelu"; NULL for an
 * unknown value. */
TC_API const char *tc_activation_name(tc_activation act);
TC_API tc_status tc_activation_parse(const char *name, tc_activation *act);
/* "channels_first" / "channels_last"; NULL for an unknown value. */
TC_API const char *tc_layout_name(tc_layout layout);

typedef struct tc_conv_desc {
    size_t struct_size; /* set by tc_conv_desc_init */
    tc_dtype dtype;
    int nspatial;                          /* 1, 2 or 3 */
    int64_t batch;                         /* N >= 1 */
    int64_t in_channels;                   /* C >= 1 */
    int64_t out_channels;                  /* K >= 1 */
    int64_t groups;                        /* divides C and K; default 1 */
    int64_t in_size[TC_MAX_SPATIAL];       /* spatial input, >= 1 */
    int64_t kernel_size[TC_MAX_SPATIAL];   /* spatial mask, >= 1 */
    int64_t stride[TC_MAX_SPATIAL];        /* >= 1, default 1 */
    int64_t dilation[TC_MAX_SPATIAL];      /* >= 1, default 1 */
    int64_t padding[TC_MAX_SPATIAL];       /* >= 0, for EXPLICIT */
    tc_padding_kind padding_kind;          /* default EXPLICIT */
    tc_padding_mode padding_mode;          /* default ZEROS */
    int has_bias;                          /* 0 or 1, default 0 */
    tc_layout layout;                      /* of x, y and the residual;
                                              default CHANNELS_FIRST */
    tc_activation activation;              /* default TC_ACT_NONE */
    int has_residual;                      /* 0 or 1, default 0: execute
                                              with tc_execute_conv_residual */
    /* Layout of the weights (see above): TC_LAYOUT_CHANNELS_FIRST
     * (default) = K x C/groups x mask, TC_LAYOUT_CHANNELS_LAST = K x mask
     * x C/groups. A descriptor whose struct_size ends before this field
     * (a caller built against the struct without it) gets the default. */
    tc_layout weight_layout;
} tc_conv_desc;

TC_API void tc_conv_desc_init(tc_conv_desc *desc);

/* ------------------------------------------------------------------------
 * GEMM: C = alpha * op(A) * op(B) + beta * C, row-major, op(A) is M x K,
 * op(B) is K x N, C is M x N. lda/ldb/ldc are row strides in elements
 * (0 = tight). When beta is 0, C is not read (NaN in C does not propagate).
 * ------------------------------------------------------------------------ */
typedef struct tc_gemm_desc {
    size_t struct_size; /* set by tc_gemm_desc_init */
    tc_dtype dtype;
    int trans_a, trans_b; /* 0 or 1 */
    int64_t m, n, k;      /* >= 1 */
    int64_t lda, ldb, ldc;
    double alpha, beta;   /* defaults 1 and 0 */
} tc_gemm_desc;

TC_API void tc_gemm_desc_init(tc_gemm_desc *desc);

/* ------------------------------------------------------------------------
 * Plans.
 * ------------------------------------------------------------------------ */
typedef struct tc_plan tc_plan;

/* Planning flags. */
#define TC_PLAN_ESTIMATE 0u /* choose by the cost model; fast; default */
#define TC_PLAN_MEASURE 1u  /* time the applicable algorithms whose
                               estimated cost is within 4x of the best
                               estimate (reference solvers and, without a
                               workspace_limit, candidates needing over
                               1 GiB of workspace are left out) on scratch
                               arrays owned by the plan (never the
                               caller's), keep the fastest and record it
                               as wisdom */
#define TC_PLAN_WISDOM_ONLY 2u /* use saved wisdom or fail with
                                  TC_ERR_NOT_FOUND */
#define TC_PLAN_ALLOW_TF32 4u  /* GPU only: allow TF32 tensor cores
                                  (conv: cuda.conv.igemm-tf32, inputs and
                                  weights rounded to 10-bit mantissas, fp32
                                  sums: ~3e-4 relative error;
                                  cuda.conv.winograd-f2-tf32, the F(2x2,3x3)
                                  transforms rounded: ~5e-4; gemm:
                                  cuda.gemm.wgmma-tf32, B rounded and A
                                  truncated to TF32: ~5e-4; see
                                  docs/semantics.md); without the flag no
                                  TF32 algorithm is applicable. The
                                  environment variable TILECONV_PLAN_TRACE=1
                                  prints every candidate's estimate to
                                  stderr while planning (tuning aid) */
#define TC_PLAN_DIRECT 8u      /* direct summation only: algorithms that
                                  multiply the given values and sum the
                                  products in the working precision
                                  (direct, im2col, implicit GEMM, the
                                  blocked GEMMs, the references). Winograd,
                                  FFT, Strassen, separable / low-rank
                                  factorisations and split-precision forms,
                                  whose transforms add rounding, are not
                                  applicable; a bfloat16 layer then rounds
                                  as oneDNN's does (docs/semantics.md).
                                  Forcing one of them by name with this
                                  flag fails with TC_ERR_NOT_APPLICABLE */
#define TC_PLAN_MASK_AT_EXECUTE 16u /* filter plans only: the mask comes
                                  with each execute (tc_execute_filter_mask)
                                  instead of at plan time, e.g. a mask that
                                  lives in GPU memory and changes between
                                  calls. tc_plan_filter's mask may then be
                                  NULL (a given one is not read); the plan
                                  holds no mask values, so the choice does
                                  not depend on them (no separable / low-rank
                                  detection) and only the algorithms that
                                  read the mask per call are applicable:
                                  cuda.filter.direct, cpu.filter.direct-*,
                                  ref.conv.loops, and by name only
                                  cuda.filter.fft / cpu.filter.fft (each
                                  call's spectrum; the planner keeps a
                                  direct sum, exact on integer data);
                                  forcing another fails with
                                  TC_ERR_NOT_APPLICABLE naming the flag.
                                  float32 and float64 only; not for the
                                  swapped valid case (mask larger than the
                                  input along every axis) */

typedef struct tc_plan_options {
    size_t struct_size; /* set by tc_plan_options_init */
    unsigned flags;     /* TC_PLAN_* */
    /* NULL: let the planner choose. Otherwise force this algorithm by name
     * (see tc_algorithm_name); planning fails with TC_ERR_NOT_FOUND for an
     * unknown name and TC_ERR_NOT_APPLICABLE when it does not apply. */
    const char *algorithm;
    /* Largest workspace, in bytes, the chosen algorithm may need. 0 means
     * no limit. */
    size_t workspace_limit;
} tc_plan_options;

TC_API void tc_plan_options_init(tc_plan_options *opt);

/* Plans a filter. The mask (shape desc->mask_shape, dtype desc->dtype,
 * C order) is copied into the plan. opt may be NULL for defaults.
 * With TC_PLAN_MASK_AT_EXECUTE in opt->flags the mask may be NULL and
 * comes with each tc_execute_filter_mask instead.
 * On success *plan owns a new plan. */
TC_API tc_status tc_plan_filter(tc_plan **plan, tc_context *ctx,
                                const tc_filter_desc *desc, const void *mask,
                                const tc_plan_options *opt);
TC_API tc_status tc_plan_conv(tc_plan **plan, tc_context *ctx,
                              const tc_conv_desc *desc,
                              const tc_plan_options *opt);
TC_API tc_status tc_plan_gemm(tc_plan **plan, tc_context *ctx,
                              const tc_gemm_desc *desc,
                              const tc_plan_options *opt);
/* NULL is accepted and ignored. */
TC_API void tc_plan_destroy(tc_plan *plan);

/* Name of the chosen algorithm, e.g. "cpu.filter.direct-halo". Static string. */
TC_API const char *tc_plan_algorithm(const tc_plan *plan);
/* What the core does around the chosen algorithm, or "" when the algorithm
 * runs the problem as described. An algorithm that lacks a float16 /
 * bfloat16 kernel, a channels-last kernel or the fused epilogue is run on
 * a converted problem: the core converts the inputs to float32 and
 * channels-first in the workspace and applies the epilogue and the output
 * conversion in one pass after it, e.g. "x,w,bias float16->float32;
 * layout channels_last<->channels_first; epilogue pass (act, residual)".
 * Channels-last weights (weight_layout) for an algorithm that reads only
 * K x C/groups x mask are reordered into the workspace ("weights
 * channels_last->channels_first"; plan-held weights once, in
 * tc_plan_conv_set_weights). The planner counts these passes in its estimate, so an algorithm with
 * native kernels wins when it exists. The string lives as long as the
 * plan. */
TC_API const char *tc_plan_staging(const tc_plan *plan);
/* Backend of the chosen algorithm. */
TC_API tc_backend tc_plan_backend(const tc_plan *plan);
/* Workspace bytes execute needs when the caller passes one (host memory:
 * the solver's CPU scratch and the core's packing regions). */
TC_API size_t tc_plan_workspace_size(const tc_plan *plan);
/* CUDA plans: the most device memory one execute takes from the library's
 * stream-ordered device pool beyond the caller's arrays (split-K partial
 * sums, transformed or transposed operands, FFT spectra and cuFFT work
 * areas, a staged bias, and the float32 / channels-first copies of a plan
 * that stages its operands, tc_plan_staging), for device-resident operands; host-resident
 * operands add their device copies (and a batched filter on host arrays
 * runs two chunks at once, each with this scratch). The pool keeps freed memory for the
 * next call, so this is also what a plan's executes keep reserved. 0 for
 * CPU plans and for CUDA algorithms that need none. */
TC_API size_t tc_plan_device_workspace_size(const tc_plan *plan);
/* Output shape: writes the output rank to *ndim and the sizes to shape
 * (room for TC_MAX_DIMS entries). Filter: input rank; conv: 2 + nspatial;
 * gemm: 2 (m, n). */
TC_API tc_status tc_plan_output_shape(const tc_plan *plan, int *ndim,
                                      int64_t shape[TC_MAX_DIMS]);
/* Floating-point operations and minimum bytes moved by one execute (used
 * by benchmarks to report GFLOP/s and GB/s; multiply-add counts as 2). */
TC_API double tc_plan_flops(const tc_plan *plan);
TC_API double tc_plan_bytes(const tc_plan *plan);

/* Executes a filter plan: y = filter(x). workspace is NULL (the call
 * allocates and frees its own; on Linux, library allocations of 4 MiB or
 * more are 2 MiB aligned and advised MADV_HUGEPAGE, unless the environment
 * sets TILECONV_NO_HUGEPAGES=1) or a buffer of at least
 * tc_plan_workspace_size bytes, aligned to 64 bytes, not shared with a
 * concurrent call. x and y must not overlap. */
TC_API tc_status tc_execute_filter(const tc_plan *plan, void *y,
                                   const void *x, void *workspace);
/* Executes a filter plan made with TC_PLAN_MASK_AT_EXECUTE: y = filter(x)
 * with this call's mask (shape desc->mask_shape, dtype desc->dtype, dense C
 * order, as tc_plan_filter's; convolve plans flip it as they read it).
 * CUDA plans: mask is a device pointer read by the kernels on the plan's
 * stream (enqueued like x and y: no host synchronisation, no copy; a host
 * mask is staged through the stream); CPU plans: a host pointer, read
 * during the call. TC_ERR_INVALID_ARGUMENT for a NULL mask, for this call
 * on a plan made without the flag and for tc_execute_filter on a plan
 * made with it. Otherwise as tc_execute_filter. */
TC_API tc_status tc_execute_filter_mask(const tc_plan *plan, void *y, const void *x,
                                        const void *mask, void *workspace);
/* Executes a conv plan: y = act(conv(x, w) + bias). x is N x C x spatial, w is
 * K x C/groups x kernel, y is N x K x output spatial, all dense C order
 * (x and y N x spatial x channels with TC_LAYOUT_CHANNELS_LAST). A plan
 * whose description has has_residual fails here: use
 * tc_execute_conv_residual.
 * bias must be non-NULL exactly when the description had has_bias set.
 * w = NULL and bias = NULL together: use the weights (and bias) the plan
 * holds from tc_plan_conv_set_weights. Algorithms that reorder or transform
 * the weights (blocked layouts, Winograd) do so inside every call that
 * passes w, and only once for weights set on the plan. */
TC_API tc_status tc_execute_conv(const tc_plan *plan, void *y, const void *x,
                                 const void *w, const void *bias,
                                 void *workspace);
/* Executes a conv plan with the fused epilogue's residual:
 * y = act(conv(x, w) + bias + residual). residual has y's shape, layout and
 * dtype and must be non-NULL exactly when the description had has_residual
 * set; it may be y itself (in place). tc_execute_conv is this call with
 * residual = NULL. */
TC_API tc_status tc_execute_conv_residual(const tc_plan *plan, void *y, const void *x,
                                          const void *w, const void *bias,
                                          const void *residual, void *workspace);
/* Hands a conv plan its weights (K x C/groups x kernel, or K x kernel x
 * C/groups with weight_layout TC_LAYOUT_CHANNELS_LAST; dense C order) and
 * bias (K values; NULL exactly when has_bias is 0), copied into the plan and
 * packed once into the chosen algorithm's layout; later tc_execute_conv
 * calls with w = NULL and bias = NULL use them. Calling again replaces them.
 * Host pointers only. Not safe concurrently with an execute of the same
 * plan (executes of a plan are safe with each other). TC_PLAN_MEASURE times
 * conv algorithms this way: with their weights already packed. A CUDA plan
 * also keeps them in the memory of the GPU current at this call (in the
 * algorithm's dtype), so that its executes copy no weights. */
TC_API tc_status tc_plan_conv_set_weights(tc_plan *plan, const void *w,
                                          const void *bias);
/* Executes a gemm plan: c = alpha * op(a) * op(b) + beta * c. */
TC_API tc_status tc_execute_gemm(const tc_plan *plan, void *c, const void *a,
                                 const void *b, void *workspace);

/* One-shot GEMM in the BLAS argument order (row-major). trans_* are 'N' or
 * 'T'. Plans with ESTIMATE on the given context, executes, destroys. */
TC_API tc_status tc_sgemm(tc_context *ctx, char trans_a, char trans_b,
                          int64_t m, int64_t n, int64_t k, float alpha,
                          const float *a, int64_t lda, const float *b,
                          int64_t ldb, float beta, float *c, int64_t ldc);
TC_API tc_status tc_dgemm(tc_context *ctx, char trans_a, char trans_b,
                          int64_t m, int64_t n, int64_t k, double alpha,
                          const double *a, int64_t lda, const double *b,
                          int64_t ldb, double beta, double *c, int64_t ldc);

/* ------------------------------------------------------------------------
 * Algorithms compiled into this build.
 * ------------------------------------------------------------------------ */
#define TC_OP_FILTER 1u
#define TC_OP_CONV 2u
#define TC_OP_GEMM 4u

typedef struct tc_algorithm_info {
    const char *name;       /* e.g. "cpu.filter.direct-halo" */
    tc_backend backend;
    unsigned ops;           /* TC_OP_* bit set */
    int available;          /* 1 when usable on this machine now */
    const char *summary;    /* one sentence */
} tc_algorithm_info;

/* Number of registered algorithms. */
TC_API int tc_algorithm_count(void);
/* Fills *info for algorithm i, 0 <= i < tc_algorithm_count(). */
TC_API tc_status tc_algorithm_get(int i, tc_algorithm_info *info);

/* ------------------------------------------------------------------------
 * Machine information.
 * ------------------------------------------------------------------------ */
/* Writes a short comma-separated list of the CPU features tileconv uses
 * and detected ("sse2,avx,avx2,fma,avx512f") into buf (always
 * NUL-terminated). */
TC_API void tc_cpu_features(char *buf, size_t size);
/* Number of CPUs the library's thread pool uses (threads = 0 means this
 * many): the CPUs the process may use (TILECONV_CPUS, else the affinity
 * mask at load unless OpenMP binding variables are set, within the cgroup
 * cpuset and quota), not the calling thread's current mask. */
TC_API int tc_cpu_count(void);
/* One line: how many CPUs, where the set came from, and the CPU numbers,
 * e.g. "2 CPUs from affinity at load: 0,1". Always NUL-terminated. */
TC_API void tc_cpu_placement(char *buf, size_t size);

/* The machine as the cost model sees it. */
typedef struct tc_machine {
    char vendor[16];           /* "AuthenticAMD", "GenuineIntel", ... */
    char model[64];            /* the CPU's brand string */
    char uarch[64];            /* microarchitecture family, e.g. "AMD Zen 4
                                  (AVX-512 at half rate)" */
    int family, model_number;  /* cpuid display family / model */
    int cpus;                  /* tc_cpu_count() */
    double flops_per_core;     /* FP32 FLOP/s of one core (FMA = 2) */
    double bytes_per_s;        /* memory copy bandwidth, 0 = not measured */
    int measured;              /* 1: measured ceilings, 0: defaults */
    char ceilings_source[256]; /* where the two numbers come from */
} tc_machine;
TC_API tc_status tc_machine_info(tc_machine *m);
/* Sets the ceilings the planner's ESTIMATE uses for this process (FLOP/s
 * of one core, copy bandwidth in bytes/s; `tileconv info --ceilings`
 * measures them). With save = 1 also stores them for this machine (key:
 * CPU brand string and CPU count) in the ceilings file, which later
 * processes load on first use: $TILECONV_CEILINGS (empty = none), else
 * $XDG_CACHE_HOME/tileconv/ceilings.txt, else ~/.cache/tileconv/ceilings.txt.
 * Without a measurement the model assumes, per core: 64 FP32 FLOP/cycle
 * for AVX-512 (32 on AMD Zen 4, whose 512-bit FMAs run at half rate), 32
 * for AVX2, at 3 GHz (3.6 on Zen 5). */
TC_API tc_status tc_machine_set_ceilings(double flops_per_core, double bytes_per_s,
                                         int save);
/* Number of usable CUDA devices (0 when built without CUDA). */
TC_API int tc_cuda_device_count(void);
/* Writes one line per CUDA kernel of this build into buf (always
 * NUL-terminated): threads per block, registers per thread, static and
 * dynamic shared memory, local (spill) bytes, the block-size limit, the
 * resident blocks per multiprocessor and the occupancy they give (from
 * cudaFuncGetAttributes and cudaOccupancyMaxActiveBlocksPerMultiprocessor),
 * after a line naming the device. Returns TC_ERR_NO_DEVICE without a usable
 * GPU or without CUDA, TC_ERR_INVALID_ARGUMENT when buf is NULL, size is 0
 * or the text did not fit (64 KiB is enough).
 *
 * CUDA execution: the execute functions accept device pointers (used in
 * place; the call only enqueues the work on the calling thread's default
 * stream, or the plan's (tc_plan_set_cuda_stream), and returns, as cuBLAS
 * does: synchronise before reading the result; the one exception is the
 * seed algorithms, cuda.seed.*, which synchronise the stream before they
 * return: their __constant__ masks are shared by all plans and their
 * pitched and texture copies are made per call) and host pointers (staged through pinned buffers; the call
 * returns when the result is in host memory). A batched filter (leading
 * batch axis longer than 1) on host pointers is run in chunks of whole
 * batch items on two streams, so that the copies of one chunk overlap the
 * kernels of the next (environment TILECONV_CUDA_CHUNK_BYTES: input + output
 * bytes per chunk, default 32 MiB); a single image or volume is copied in,
 * filtered and copied out in turn. TILECONV_CUDA_DIRECT_VARIANT=i (tuning and
 * benchmarks only) forces cuda.filter.direct's kernel variant i, the i-th
 * "cuda.filter.direct #i" line of this report; plans it does not fit fail with
 * TC_ERR_NOT_APPLICABLE. */
TC_API tc_status tc_cuda_kernel_report(char *buf, size_t size);

/* The CUDA stream (a cudaStream_t, passed as void *) on which later
 * executes of a CUDA plan enqueue their work: on device arrays the call
 * only enqueues on it; on host arrays it stages through it and
 * synchronises it before returning. NULL (the default) is the calling
 * thread's default stream (cudaStreamPerThread). The stream must stay
 * valid while executes use it; it is not owned by the plan. Not safe
 * concurrently with an execute of the same plan. TC_ERR_INVALID_ARGUMENT
 * for a NULL plan, TC_ERR_UNSUPPORTED for a plan on the CPU backend.
 * tc_cuda_time_plan records its events on this stream. */
TC_API tc_status tc_plan_set_cuda_stream(tc_plan *plan, void *stream);

/* Device time of a CUDA plan (filter, conv or gemm) on device-resident
 * data: copies the operands (host memory, laid out as for the execute
 * call: filter x; conv x, w and bias; gemm A = x, B = w, with C starting at
 * zero) to the GPU once, runs one warm-up execute and then `repeat`
 * executes on device arrays, each between two CUDA events on the plan's
 * stream (tc_plan_set_cuda_stream; by default the calling thread's default
 * stream), and returns the median and the minimum in
 * milliseconds (min_ms may be NULL). No host copies are inside the times.
 * Conv: w = NULL and bias = NULL use the weights set on the plan
 * (tc_plan_conv_set_weights). Filter plans made with
 * TC_PLAN_MASK_AT_EXECUTE: w is the mask (host memory, copied to the
 * device once; the executes are tc_execute_filter_mask). Fails with TC_ERR_INVALID_ARGUMENT (NULL
 * pointer, bias not matching has_bias, repeat < 1 or > 1e6),
 * TC_ERR_UNSUPPORTED (a plan on the CPU backend, or a filter plan with
 * strided arrays or the swapped valid case, which the core packs on the
 * host), TC_ERR_NO_DEVICE (built without CUDA or no GPU),
 * TC_ERR_OUT_OF_MEMORY. */
TC_API tc_status tc_cuda_time_plan(const tc_plan *plan, const void *x, const void *w,
                                   const void *bias, int repeat, double *median_ms,
                                   double *min_ms);
/* The same for filter plans only (kept for existing callers). */
TC_API tc_status tc_cuda_time_filter(const tc_plan *plan, const void *x, int repeat,
                                     double *median_ms, double *min_ms);

/* ------------------------------------------------------------------------
 * Wisdom: remembered MEASURE results, as in FFTW.
 *
 * A plan made with TC_PLAN_MEASURE first looks its problem up in the
 * process's wisdom. On a hit it takes the remembered algorithm without
 * measuring; otherwise it measures every applicable algorithm and records
 * the winner. A plan made with TC_PLAN_WISDOM_ONLY takes the remembered
 * algorithm or fails with TC_ERR_NOT_FOUND, and never measures. Forcing an
 * algorithm by name (tc_plan_options.algorithm) bypasses wisdom.
 *
 * An entry is keyed by the operation, the dtype, every problem field that
 * can change the choice (sizes, mask, strides, dilation, padding, boundary
 * mode, groups, bias, transposes, leading dimensions, whether beta is 0),
 * the thread count, the backend preference, the CPU features, the
 * workspace limit and the TF32 flag. Values that cannot change the choice
 * (alpha, beta, cval, the mask's values) are not part of it. An entry
 * naming an algorithm that is unknown to this build, unavailable, not
 * applicable or over the workspace limit is ignored.
 *
 * The default wisdom file is $TILECONV_WISDOM when that is set and not
 * empty, otherwise $HOME/.cache/tileconv/wisdom.txt. The first plan made
 * with TC_PLAN_MEASURE or TC_PLAN_WISDOM_ONLY loads the default file, once
 * per process, when it exists; a default file that cannot be parsed is
 * then ignored. Setting TILECONV_WISDOM to an empty string turns the
 * automatic load off, and so does calling tc_wisdom_load or
 * tc_wisdom_forget before that first plan. Wisdom is never saved
 * automatically: call tc_wisdom_save.
 *
 * The file is text: the line "tileconv-wisdom 1", then one
 * "<key> <algorithm>" line per entry; blank lines and lines starting with
 * '#' are ignored. All three functions are thread-safe.
 * ------------------------------------------------------------------------ */
/* Merges the wisdom file at path (NULL: the default file) into the
 * process's wisdom; an entry of the file replaces an entry with the same
 * key. The whole file is checked before anything is merged: a file that
 * cannot be read or is not valid wisdom returns TC_ERR_IO with a message
 * naming the file and the line, and leaves the process's wisdom unchanged. */
TC_API tc_status tc_wisdom_load(const char *path);
/* Writes all of the process's wisdom to path (NULL: the default file,
 * whose directory is created when missing). The text goes to a temporary
 * file in the same directory, which is then renamed over path, so a reader
 * never sees a partial file. Returns TC_ERR_IO when the file cannot be
 * written. */
TC_API tc_status tc_wisdom_save(const char *path);
/* Forgets all wisdom held by the process; files are not touched. */
TC_API void tc_wisdom_forget(void);

#ifdef __cplusplus
}
#endif
#endif /* TILECONV_H */
