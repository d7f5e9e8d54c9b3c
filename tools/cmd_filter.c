/*
 * cmd_filter.c - `tileconv filter IN OUT --kernel K ...`: scipy.ndimage /
 * scipy.signal style filtering of a .npy array or an image.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "image.h"
#include "masks.h"
#include "npy.h"
#include "outfile.h"
#include "run.h"
#include "tools.h"

static const char filter_help[] =
    "usage: tileconv filter IN OUT --kernel K [options]\n"
    "\n"
    "Filters IN with the mask K and writes OUT, as scipy.ndimage.convolve\n"
    "(default) or correlate, or scipy.signal.convolve/correlate with\n"
    "--output full|valid.\n"
    "\n"
    "IN, OUT: .npy (float16/float32/float64, C order, 1-3 dims, every axis filtered;\n"
    "  OUT has IN's dtype) or images .png/.pgm/.ppm (8/16-bit gray or RGB;\n"
    "  filtered per channel in float32, written back rounded half away from\n"
    "  zero and clamped to [0, maxval]). An image may be written as .npy\n"
    "  (float32, HxW or HxWx3, not rounded); an image OUT needs an image IN.\n"
    "\n"
    "Options:\n"
    "  --kernel K       a .npy mask (float16/32/64, converted to IN's dtype,\n"
    "                   one axis per filtered axis) or a named mask (below)\n"
    "  --correlate      correlate instead of convolve (no mask flip)\n"
    "  --mode M         constant, nearest, reflect (default), mirror, wrap\n"
    "  --cval V         value outside the input for --mode constant (default 0)\n"
    "  --origin O[,O..] scipy origin, one value or one per filtered axis\n"
    "  --output KIND    same (default), full or valid (scipy.signal sizes;\n"
    "                   --mode, --cval and --origin are not allowed then)\n"
    TOOL_RUN_HELP
    "\n" TOOL_MASKS_HELP
    "  The default operation is convolve, which flips the mask: to get\n"
    "  scipy.ndimage.sobel, use --kernel sobel-x --correlate.\n";

typedef struct filter_opts {
    const char *in, *out, *kernel;
    tc_mode mode;
    double cval;
    int64_t origin[TC_MAX_SPATIAL];
    int norigin;
    int correlate;
    tc_output_kind output;
    int have_mode, have_cval;
} filter_opts;

typedef struct filter_exec {
    void *y;
    const void *x;
} filter_exec;

static tc_status exec_filter(const tc_plan *plan, const void *arg, void *ws) {
    const filter_exec *e = arg;
    return tc_execute_filter(plan, e->y, e->x, ws);
}

static int parse_options(int argc, char **argv, filter_opts *o, tool_run *run) {
    tool_args a;
    const char *pos, *v;
    int npos = 0, kind, rc;
    tool_args_init(&a, "filter", argc, argv);
    while ((kind = tool_args_next(&a, &pos)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL) {
            if (npos == 2)
                return tool_usage_error("filter", "unexpected argument '%s'", pos);
            *(npos++ ? &o->out : &o->in) = pos;
            continue;
        }
        if (tool_args_is(&a, "--help")) {
            fputs(filter_help, stdout);
            return -1;
        }
        if ((rc = tool_run_option(run, &a)) >= 0) {
            if (rc) return rc;
            continue;
        }
        if (tool_args_is(&a, "--correlate")) {
            if (tool_args_flag(&a)) return TOOL_USAGE;
            o->correlate = 1;
            continue;
        }
        static const char *const value_opts[] = {"--kernel", "--mode",   "--cval",
                                                 "--origin", "--output", NULL};
        if (!tool_args_in(&a, value_opts)) return tool_args_unknown(&a);
        if (tool_args_value(&a, &v)) return TOOL_USAGE;
        if (tool_args_is(&a, "--kernel")) {
            o->kernel = v;
        } else if (tool_args_is(&a, "--mode")) {
            if (tc_mode_parse(v, &o->mode) != TC_OK)
                return tool_usage_error("filter",
                    "unknown mode '%s' (constant, nearest, reflect, mirror, wrap)", v);
            o->have_mode = 1;
        } else if (tool_args_is(&a, "--cval")) {
            if (tool_parse_double(&a, v, &o->cval)) return TOOL_USAGE;
            o->have_cval = 1;
        } else if (tool_args_is(&a, "--origin")) {
            if (tool_parse_i64_list(&a, v, -(INT64_C(1) << 40), INT64_C(1) << 40,
                                    o->origin, TC_MAX_SPATIAL, &o->norigin))
                return TOOL_USAGE;
        } else if (tool_args_is(&a, "--output")) {
            if (strcmp(v, "same") == 0) o->output = TC_OUTPUT_SAME;
            else if (strcmp(v, "full") == 0) o->output = TC_OUTPUT_FULL;
            else if (strcmp(v, "valid") == 0) o->output = TC_OUTPUT_VALID;
            else return tool_usage_error("filter",
                     "unknown output kind '%s' (same, full or valid)", v);
        } else {
            return tool_args_unknown(&a);
        }
    }
    if (npos < 2)
        return tool_usage_error("filter", "needs an input and an output file");
    if (!o->kernel) return tool_usage_error("filter", "--kernel is required");
    if (o->output != TC_OUTPUT_SAME && (o->have_mode || o->have_cval || o->norigin))
        return tool_usage_error("filter",
                                "--mode, --cval and --origin only apply to --output same");
    return 0;
}

/* Loads or builds the mask as an array of dtype with nsp axes. */
static int load_kernel(const char *spec, int nsp, npy_dtype dtype, npy_array *k) {
    char err[300];
    memset(k, 0, sizeof *k);
    if (tool_mask_is_named(spec)) {
        double *m;
        int64_t shape[3];
        int rc = tool_mask_build(spec, nsp, &m, shape, err, sizeof err);
        if (rc == TOOL_USAGE) return tool_usage_error("filter", "--kernel: %s", err);
        if (rc) return tool_error("--kernel %s: %s", spec, err);
        if (npy_alloc(k, NPY_F64, nsp, shape, err, sizeof err)) {
            free(m);
            return tool_error("--kernel %s: %s", spec, err);
        }
        memcpy(k->data, m, k->count * sizeof *m);
        free(m);
    } else if (tool_has_ext(spec, ".npy")) {
        if (npy_load(spec, k, err, sizeof err)) return tool_error("kernel: %s", err);
        if (k->ndim != nsp) {
            tool_error("kernel '%s' has %d dimensions, the input has %d filtered axes",
                       spec, k->ndim, nsp);
            npy_free(k);
            return TOOL_FAIL;
        }
    } else {
        return tool_usage_error("filter",
            "--kernel '%s' is neither a .npy file nor a named mask "
            "(box:N, gaussian:S, sobel-x, sobel-y, laplace, sharpen)", spec);
    }
    if (npy_convert(k, dtype, err, sizeof err)) {
        npy_free(k);
        return tool_error("kernel: %s", err);
    }
    return 0;
}

/* Writes y (shape ond/oshape) to of in OUT's format. */
static int write_output(tool_outfile *of, tool_image_format ofmt, int from_image,
                        const tool_image *img, npy_dtype dtype, int ond,
                        const int64_t *oshape, void *y) {
    char err[300];
    int rc = 0;
    if (ofmt != IMG_NONE) {
        tool_image out = {oshape[ond - 1], oshape[ond - 2], img->channels, img->maxval, y};
        rc = tool_image_write(of->fp, ofmt, &out, err, sizeof err);
    } else if (from_image && img->channels == 3) {
        /* Planar 3xHxW back to interleaved HxWx3. */
        int64_t hw = oshape[1] * oshape[2], shape[3] = {oshape[1], oshape[2], 3};
        float *t = tool_alloc((size_t)hw * 3 * sizeof *t);
        if (!t) return tool_error("out of memory");
        for (int64_t i = 0; i < hw; i++)
            for (int c = 0; c < 3; c++) t[i * 3 + c] = ((const float *)y)[c * hw + i];
        rc = npy_write(of->fp, NPY_F32, 3, shape, t, err, sizeof err);
        free(t);
    } else {
        rc = npy_write(of->fp, dtype, ond, oshape, y, err, sizeof err);
    }
    return rc ? tool_error("cannot write '%s': %s", of->path, err) : 0;
}

int tool_cmd_filter(int argc, char **argv) {
    filter_opts o;
    tool_run run;
    tool_image img;
    npy_array x, k;
    tool_outfile of;
    tc_plan *plan = NULL;
    void *y = NULL;
    char err[300];
    int rc, nsp;
    memset(&o, 0, sizeof o);
    memset(&img, 0, sizeof img);
    memset(&x, 0, sizeof x);
    memset(&k, 0, sizeof k);
    memset(&of, 0, sizeof of);
    o.mode = TC_MODE_REFLECT;
    tool_run_init(&run, "filter");
    if ((rc = parse_options(argc, argv, &o, &run))) return rc < 0 ? TOOL_OK : rc;

    if (tool_check_input(o.in) || tool_check_output(o.out)) return TOOL_FAIL;
    tool_image_format ifmt = tool_image_format_of(o.in), ofmt = tool_image_format_of(o.out);
    int in_npy = tool_has_ext(o.in, ".npy"), out_npy = tool_has_ext(o.out, ".npy");
    if (!in_npy && ifmt == IMG_NONE)
        return tool_usage_error("filter", "input '%s' is not .npy, .png, .pgm or .ppm", o.in);
    if (!out_npy && ofmt == IMG_NONE)
        return tool_usage_error("filter", "output '%s' is not .npy, .png, .pgm or .ppm", o.out);
    if (in_npy && !out_npy)
        return tool_usage_error("filter", "an image output needs an image input");

    rc = TOOL_FAIL;
    if (in_npy) {
        if (npy_load(o.in, &x, err, sizeof err)) {
            tool_error("%s", err);
            goto done;
        }
        if (x.ndim < 1 || x.ndim > 3) {
            tool_error("%s: filter needs 1 to 3 dimensions, the array has %d", o.in, x.ndim);
            goto done;
        }
        nsp = x.ndim;
    } else {
        if (tool_image_load(o.in, &img, err, sizeof err)) {
            tool_error("%s", err);
            goto done;
        }
        /* The filter runs on the planes; channel is a batch axis. */
        int64_t shape[3] = {img.channels, img.height, img.width};
        int off = img.channels == 1;
        x.dtype = NPY_F32;
        x.ndim = 3 - off;
        memcpy(x.shape, shape + off, (size_t)x.ndim * sizeof *shape);
        x.count = (size_t)(img.channels * img.height * img.width);
        nsp = 2;
        if (ofmt == IMG_PGM && img.channels != 1) {
            tool_error("'%s' is RGB; write it as .ppm, .png or .npy", o.in);
            goto done;
        }
        if (ofmt == IMG_PPM && img.channels != 3) {
            tool_error("'%s' is gray; write it as .pgm, .png or .npy", o.in);
            goto done;
        }
    }
    if ((rc = load_kernel(o.kernel, nsp, x.dtype, &k))) goto done;
    rc = TOOL_FAIL;

    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = x.dtype == NPY_F64 ? TC_FLOAT64 : x.dtype == NPY_F16 ? TC_FLOAT16 : TC_FLOAT32;
    d.ndim = x.ndim;
    d.nspatial = nsp;
    for (int i = 0; i < x.ndim; i++) d.shape[i] = x.shape[i];
    for (int i = 0; i < nsp; i++) d.mask_shape[i] = k.shape[i];
    d.kind = o.correlate ? TC_FILTER_CORRELATE : TC_FILTER_CONVOLVE;
    d.output = o.output;
    d.mode = o.mode;
    d.cval = o.cval;
    if (o.norigin && o.norigin != 1 && o.norigin != nsp) {
        tool_error("--origin has %d values, the input has %d filtered axes", o.norigin, nsp);
        goto done;
    }
    for (int i = 0; i < nsp && o.norigin; i++) {
        int64_t v = o.origin[o.norigin == 1 ? 0 : i], m = k.shape[i];
        if (v < -(m / 2) || v > (m - 1) / 2) {
            tool_error("--origin %lld out of range for mask size %lld on axis %d "
                       "(must be %lld..%lld)", (long long)v, (long long)m, i,
                       (long long)-(m / 2), (long long)((m - 1) / 2));
            goto done;
        }
        d.origin[i] = v;
    }

    if (tool_outfile_open(&of, o.out) || tool_run_begin(&run)) goto done;
    tc_plan_options po;
    tool_run_plan_options(&run, &po);
    tc_status st = tc_plan_filter(&plan, run.ctx, &d, k.data, &po);
    if (st != TC_OK) {
        tool_lib_error(st, "filter: cannot plan");
        goto done;
    }
    int ond;
    int64_t oshape[TC_MAX_DIMS];
    if ((st = tc_plan_output_shape(plan, &ond, oshape)) != TC_OK) {
        tool_lib_error(st, "filter: output shape");
        goto done;
    }
    size_t ocount = 1;
    for (int i = 0; i < ond; i++) ocount *= (size_t)oshape[i];
    if (!(y = tool_alloc(ocount * npy_dtype_size(x.dtype)))) {
        tool_error("out of memory for the output");
        goto done;
    }
    filter_exec e = {y, in_npy ? x.data : (const void *)img.data};
    if (tool_run_execute(&run, plan, exec_filter, &e)) goto done;
    tool_stats s = {.dtype = npy_dtype_name(x.dtype), .ndim = x.ndim, .shape = x.shape,
                    .out_ndim = ond, .out_shape = oshape, .mask_ndim = k.ndim,
                    .mask_shape = k.shape, .device_x = e.x};
    if (tool_run_report(&run, plan, &s) ||
        write_output(&of, out_npy ? IMG_NONE : ofmt, !in_npy, &img, x.dtype, ond,
                     oshape, y) ||
        tool_outfile_commit(&of) || tool_run_commit(&run))
        goto done;
    rc = TOOL_OK;
done:
    tool_outfile_abort(&of);
    tool_run_end(&run);
    tc_plan_destroy(plan);
    free(y);
    if (in_npy) npy_free(&x);
    npy_free(&k);
    tool_image_free(&img);
    return rc;
}
