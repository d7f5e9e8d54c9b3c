/*
 * cmd_conv.c - `tileconv conv X W OUT ...`: torch.nn.functional.conv1d/2d/3d
 * forward on .npy arrays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "npy.h"
#include "outfile.h"
#include "run.h"
#include "tools.h"

static const char conv_help[] =
    "usage: tileconv conv X W OUT [options]\n"
    "\n"
    "Convolution layer forward pass with PyTorch semantics (cross-correlation,\n"
    "as torch.nn.Conv1d/2d/3d), optionally with the fused epilogue\n"
    "OUT = act(conv(X, W) + bias + residual). All files are .npy, float16,\n"
    "float32 or float64 (float16 sums in float32; bfloat16 has no .npy type:\n"
    "use the C or Python API):\n"
    "  X    N x C x spatial (3 to 5 dimensions); N x spatial x C with\n"
    "       --layout channels_last\n"
    "  W    K x C/groups x mask (same rank as X); K x mask x C/groups with\n"
    "       --weight-layout channels_last; converted to X's dtype\n"
    "  OUT  N x K x out spatial (N x out spatial x K with channels_last),\n"
    "       X's dtype\n"
    "The weights (and bias) are set on the plan once, as a layer holds them\n"
    "(tc_plan_conv_set_weights); --repeat times the executes that follow.\n"
    "\n"
    "Options:\n"
    "  --bias B              K values (.npy, 1 dimension); converted to X's dtype\n"
    "  --stride S[,S..]      one value or one per spatial axis (default 1)\n"
    "  --padding P[,P..]     one value or one per axis (default 0), or 'same'\n"
    "                        (stride must be 1) or 'valid'\n"
    "  --dilation D[,D..]    one value or one per axis (default 1)\n"
    "  --groups G            G divides C and K (default 1)\n"
    "  --padding-mode M      zeros (default), reflect, replicate, circular\n"
    "  --layout L            channels_first (default) or channels_last, for X,\n"
    "                        OUT and the residual\n"
    "  --weight-layout L     channels_first (default: K x C/groups x mask) or\n"
    "                        channels_last (K x mask x C/groups, torch's\n"
    "                        channels_last weights), for W; independent of\n"
    "                        --layout\n"
    "  --activation A        none (default), relu, relu6, silu, sigmoid, tanh,\n"
    "                        gelu\n"
    "  --residual R          added before the activation: OUT's shape and\n"
    "                        layout (.npy); converted to X's dtype\n"
    TOOL_RUN_HELP;

typedef struct conv_opts {
    const char *x, *w, *out, *bias, *residual;
    tc_layout layout, wlayout;
    tc_activation act;
    int64_t stride[3], dilation[3], padding[3], groups;
    int nstride, ndilation, npadding;
    tc_padding_kind padding_kind;
    tc_padding_mode padding_mode;
} conv_opts;

typedef struct conv_exec {
    void *y;
    const void *x, *w, *b, *r;
} conv_exec;

static tc_status exec_conv(const tc_plan *plan, const void *arg, void *ws) {
    const conv_exec *e = arg;
    return tc_execute_conv_residual(plan, e->y, e->x, e->w, e->b, e->r, ws);
}

/* "channels_first" / "channels_last" into *l; nonzero for anything else */
static int parse_layout(const char *v, tc_layout *l) {
    if (strcmp(v, "channels_last") == 0) *l = TC_LAYOUT_CHANNELS_LAST;
    else if (strcmp(v, "channels_first") == 0) *l = TC_LAYOUT_CHANNELS_FIRST;
    else return 1;
    return 0;
}

static int parse_options(int argc, char **argv, conv_opts *o, tool_run *run) {
    static const char *const pmodes[] = {"zeros", "reflect", "replicate", "circular"};
    const int64_t big = INT64_C(1) << 40;
    tool_args a;
    const char *pos, *v;
    int npos = 0, kind, rc;
    tool_args_init(&a, "conv", argc, argv);
    while ((kind = tool_args_next(&a, &pos)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL) {
            if (npos == 3) return tool_usage_error("conv", "unexpected argument '%s'", pos);
            const char **slot[3] = {&o->x, &o->w, &o->out};
            *slot[npos++] = pos;
            continue;
        }
        if (tool_args_is(&a, "--help")) {
            fputs(conv_help, stdout);
            return -1;
        }
        if ((rc = tool_run_option(run, &a)) >= 0) {
            if (rc) return rc;
            continue;
        }
        static const char *const value_opts[] = {"--bias",   "--stride", "--dilation",
                                                 "--padding", "--groups", "--padding-mode",
                                                 "--layout", "--weight-layout",
                                                 "--activation", "--residual", NULL};
        if (!tool_args_in(&a, value_opts)) return tool_args_unknown(&a);
        if (tool_args_value(&a, &v)) return TOOL_USAGE;
        if (tool_args_is(&a, "--bias")) {
            o->bias = v;
        } else if (tool_args_is(&a, "--residual")) {
            o->residual = v;
        } else if (tool_args_is(&a, "--layout")) {
            if (parse_layout(v, &o->layout))
                return tool_usage_error("conv",
                    "unknown layout '%s' (channels_first, channels_last)", v);
        } else if (tool_args_is(&a, "--weight-layout")) {
            if (parse_layout(v, &o->wlayout))
                return tool_usage_error("conv",
                    "unknown weight layout '%s' (channels_first, channels_last)", v);
        } else if (tool_args_is(&a, "--activation")) {
            if (tc_activation_parse(v, &o->act) != TC_OK)
                return tool_usage_error("conv",
                    "unknown activation '%s' (none, relu, relu6, silu, sigmoid, tanh, gelu)", v);
        } else if (tool_args_is(&a, "--stride")) {
            if (tool_parse_i64_list(&a, v, 1, big, o->stride, 3, &o->nstride)) return TOOL_USAGE;
        } else if (tool_args_is(&a, "--dilation")) {
            if (tool_parse_i64_list(&a, v, 1, big, o->dilation, 3, &o->ndilation))
                return TOOL_USAGE;
        } else if (tool_args_is(&a, "--padding")) {
            if (strcmp(v, "same") == 0) o->padding_kind = TC_PADDING_SAME;
            else if (strcmp(v, "valid") == 0) o->padding_kind = TC_PADDING_VALID;
            else {
                o->padding_kind = TC_PADDING_EXPLICIT;
                if (tool_parse_i64_list(&a, v, 0, big, o->padding, 3, &o->npadding))
                    return TOOL_USAGE;
            }
        } else if (tool_args_is(&a, "--groups")) {
            if (tool_parse_i64(&a, v, 1, big, &o->groups)) return TOOL_USAGE;
        } else if (tool_args_is(&a, "--padding-mode")) {
            int m = -1;
            for (int i = 0; i < 4; i++)
                if (strcmp(v, pmodes[i]) == 0) m = i;
            if (m < 0)
                return tool_usage_error("conv",
                    "unknown padding mode '%s' (zeros, reflect, replicate, circular)", v);
            o->padding_mode = (tc_padding_mode)m;
        } else {
            return tool_args_unknown(&a);
        }
    }
    if (npos < 3) return tool_usage_error("conv", "needs X, W and OUT files");
    if (tool_check_input(o->x) || tool_check_input(o->w) ||
        (o->bias && tool_check_input(o->bias)) ||
        (o->residual && tool_check_input(o->residual)) || tool_check_output(o->out))
        return TOOL_FAIL;
    for (int i = 0; i < 3; i++)
        if (!tool_has_ext(i == 0 ? o->x : i == 1 ? o->w : o->out, ".npy"))
            return tool_usage_error("conv", "'%s' is not a .npy file",
                                    i == 0 ? o->x : i == 1 ? o->w : o->out);
    if (o->bias && !tool_has_ext(o->bias, ".npy"))
        return tool_usage_error("conv", "bias '%s' is not a .npy file", o->bias);
    if (o->residual && !tool_has_ext(o->residual, ".npy"))
        return tool_usage_error("conv", "residual '%s' is not a .npy file", o->residual);
    return 0;
}

/* Expands a 1-or-nsp value list into vals[0..nsp). 0 or 1. */
static int expand(const char *name, const int64_t *in, int n, int nsp, int64_t *vals) {
    if (n == 0) return 0;
    if (n != 1 && n != nsp)
        return tool_error("--%s has %d values, the input has %d spatial axes", name, n, nsp);
    for (int i = 0; i < nsp; i++) vals[i] = in[n == 1 ? 0 : i];
    return 0;
}

static int load(const char *what, const char *path, npy_array *a) {
    char err[300];
    if (npy_load(path, a, err, sizeof err)) return tool_error("%s: %s", what, err);
    return 0;
}

int tool_cmd_conv(int argc, char **argv) {
    conv_opts o;
    tool_run run;
    npy_array x, w, b, r;
    tool_outfile of;
    tc_plan *plan = NULL;
    void *y = NULL;
    char err[300];
    int rc;
    memset(&o, 0, sizeof o);
    memset(&x, 0, sizeof x);
    memset(&w, 0, sizeof w);
    memset(&b, 0, sizeof b);
    memset(&r, 0, sizeof r);
    memset(&of, 0, sizeof of);
    o.groups = 1;
    tool_run_init(&run, "conv");
    if ((rc = parse_options(argc, argv, &o, &run))) return rc < 0 ? TOOL_OK : rc;

    rc = TOOL_FAIL;
    if (load("input", o.x, &x) || load("weight", o.w, &w) ||
        (o.bias && load("bias", o.bias, &b)) ||
        (o.residual && load("residual", o.residual, &r)))
        goto done;
    if (x.ndim < 3 || x.ndim > 5) {
        tool_error("input '%s' has %d dimensions; conv needs N x C x spatial (3 to 5)",
                   o.x, x.ndim);
        goto done;
    }
    int nsp = x.ndim - 2;
    /* channel axis of X and OUT */
    const int cax = o.layout == TC_LAYOUT_CHANNELS_LAST ? x.ndim - 1 : 1, sp0 = cax == 1 ? 2 : 1;
    const int wcl = o.wlayout == TC_LAYOUT_CHANNELS_LAST;
    if (w.ndim != x.ndim) {
        tool_error("weight '%s' has %d dimensions, must be %d (%s)", o.w, w.ndim, x.ndim,
                   wcl ? "K x mask x C/groups" : "K x C/groups x mask");
        goto done;
    }
    /* channel axis of W and its first mask axis */
    const int wcax = wcl ? w.ndim - 1 : 1, wm0 = wcl ? 1 : 2;
    if (x.shape[cax] % o.groups || w.shape[0] % o.groups) {
        tool_error("--groups %lld must divide the input channels (%lld) and the "
                   "output channels (%lld)", (long long)o.groups, (long long)x.shape[cax],
                   (long long)w.shape[0]);
        goto done;
    }
    if (w.shape[wcax] != x.shape[cax] / o.groups) {
        tool_error("weight has %lld input channels per group, expected %lld "
                   "(input channels %lld / groups %lld)", (long long)w.shape[wcax],
                   (long long)(x.shape[cax] / o.groups), (long long)x.shape[cax],
                   (long long)o.groups);
        goto done;
    }
    if (o.bias && (b.ndim != 1 || b.shape[0] != w.shape[0])) {
        if (b.ndim == 1)
            tool_error("bias has %lld values, the weight has %lld output channels",
                       (long long)b.shape[0], (long long)w.shape[0]);
        else
            tool_error("bias must be 1-D with %lld values, it has %d dimensions",
                       (long long)w.shape[0], b.ndim);
        goto done;
    }
    if (npy_convert(&w, x.dtype, err, sizeof err) ||
        (o.bias && npy_convert(&b, x.dtype, err, sizeof err)) ||
        (o.residual && npy_convert(&r, x.dtype, err, sizeof err))) {
        tool_error("%s", err);
        goto done;
    }

    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.dtype = x.dtype == NPY_F64 ? TC_FLOAT64 : x.dtype == NPY_F16 ? TC_FLOAT16 : TC_FLOAT32;
    d.nspatial = nsp;
    d.batch = x.shape[0];
    d.in_channels = x.shape[cax];
    d.out_channels = w.shape[0];
    d.groups = o.groups;
    for (int i = 0; i < nsp; i++) {
        d.in_size[i] = x.shape[sp0 + i];
        d.kernel_size[i] = w.shape[wm0 + i];
    }
    if (expand("stride", o.stride, o.nstride, nsp, d.stride) ||
        expand("dilation", o.dilation, o.ndilation, nsp, d.dilation) ||
        expand("padding", o.padding, o.npadding, nsp, d.padding))
        goto done;
    d.padding_kind = o.padding_kind;
    d.padding_mode = o.padding_mode;
    d.has_bias = o.bias != NULL;
    d.layout = o.layout;
    d.weight_layout = o.wlayout;
    d.activation = o.act;
    d.has_residual = o.residual != NULL;

    if (tool_outfile_open(&of, o.out) || tool_run_begin(&run)) goto done;
    tc_plan_options po;
    tool_run_plan_options(&run, &po);
    tc_status st = tc_plan_conv(&plan, run.ctx, &d, &po);
    if (st != TC_OK) {
        tool_lib_error(st, "conv: cannot plan");
        goto done;
    }
    int ond;
    int64_t oshape[TC_MAX_DIMS];
    if ((st = tc_plan_output_shape(plan, &ond, oshape)) != TC_OK) {
        tool_lib_error(st, "conv: output shape");
        goto done;
    }
    size_t ocount = 1;
    for (int i = 0; i < ond; i++) ocount *= (size_t)oshape[i];
    if (o.residual) {
        int same = r.ndim == ond;
        for (int i = 0; same && i < ond; i++) same = r.shape[i] == oshape[i];
        if (!same) {
            char want[128] = "", got[128] = "";
            for (int i = 0, u = 0; i < ond; i++)
                u += snprintf(want + u, sizeof want - (size_t)u, i ? "x%lld" : "%lld",
                              (long long)oshape[i]);
            for (int i = 0, u = 0; i < r.ndim; i++)
                u += snprintf(got + u, sizeof got - (size_t)u, i ? "x%lld" : "%lld",
                              (long long)r.shape[i]);
            tool_error("residual '%s' has shape %s, the output has %s", o.residual, got, want);
            goto done;
        }
    }
    if (!(y = tool_alloc(ocount * npy_dtype_size(x.dtype)))) {
        tool_error("out of memory for the output");
        goto done;
    }
    /* a layer's weights are fixed: hand them to the plan once (packed once
     * into the algorithm's layout); the timed executes use them */
    if ((st = tc_plan_conv_set_weights(plan, w.data, o.bias ? b.data : NULL)) != TC_OK) {
        tool_lib_error(st, "conv: cannot set the weights");
        goto done;
    }
    conv_exec e = {y, x.data, NULL, NULL, o.residual ? r.data : NULL};
    if (tool_run_execute(&run, plan, exec_conv, &e)) goto done;
    tool_stats s = {.dtype = npy_dtype_name(x.dtype), .ndim = x.ndim, .shape = x.shape,
                    .out_ndim = ond, .out_shape = oshape, .mask_ndim = w.ndim,
                    .mask_shape = w.shape, .device_x = x.data};
    if (tool_run_report(&run, plan, &s)) goto done;
    if (npy_write(of.fp, x.dtype, ond, oshape, y, err, sizeof err)) {
        tool_error("cannot write '%s': %s", o.out, err);
        goto done;
    }
    if (tool_outfile_commit(&of) || tool_run_commit(&run)) goto done;
    rc = TOOL_OK;
done:
    tool_outfile_abort(&of);
    tool_run_end(&run);
    tc_plan_destroy(plan);
    free(y);
    npy_free(&x);
    npy_free(&w);
    npy_free(&b);
    npy_free(&r);
    return rc;
}
