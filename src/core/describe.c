/* describe.c - descriptor defaults, validation, and lowering of filter /
 * conv / gemm descriptions to the one tc__problem (see internal.h). */
#include "describe.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

void tc_filter_desc_init(tc_filter_desc *d) {
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->dtype = TC_FLOAT32;
    d->kind = TC_FILTER_CONVOLVE;
    d->output = TC_OUTPUT_SAME;
    d->mode = TC_MODE_REFLECT;
}

void tc_conv_desc_init(tc_conv_desc *d) {
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->dtype = TC_FLOAT32;
    d->nspatial = 2;
    d->batch = d->in_channels = d->out_channels = d->groups = 1;
    for (int i = 0; i < TC_MAX_SPATIAL; i++) {
        d->in_size[i] = d->kernel_size[i] = 1;
        d->stride[i] = d->dilation[i] = 1;
    }
}

void tc_gemm_desc_init(tc_gemm_desc *d) {
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->dtype = TC_FLOAT32;
    d->m = d->n = d->k = 1;
    d->alpha = 1.0;
}

void tc_plan_options_init(tc_plan_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

static tc_status tc__check_dtype(const char *obj, tc_dtype dt) {
    if (!tc_dtype_name(dt))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "%s: dtype=%d, must be TC_FLOAT32, TC_FLOAT64, TC_FLOAT16 "
                         "or TC_BFLOAT16", obj, (int)dt);
    return TC_OK;
}

/* Product of sizes times element size must fit in int64 and size_t. */
static tc_status tc__check_count(const char *obj, const char *what,
                                 const int64_t *dims, int n, size_t esize,
                                 int64_t *count) {
    int64_t c = 1;
    for (int i = 0; i < n; i++)
        if (!tc__mul_ok(c, dims[i], &c))
            return tc__error(TC_ERR_OVERFLOW,
                             "%s: %s element count overflows 64 bits", obj,
                             what);
    int64_t bytes;
    if (!tc__mul_ok(c, (int64_t)esize, &bytes))
        return tc__error(TC_ERR_OVERFLOW, "%s: %s byte size overflows 64 bits",
                         obj, what);
    if (count) *count = c;
    return TC_OK;
}

/* Output strides must not alias: sorted by stride, each axis must step
 * past the whole extent of the axes below it. */
static tc_status tc__check_out_strides(const int64_t *shape,
                                       const int64_t *st, int nd) {
    int order[TC_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        if (shape[i] > 1 && st[i] <= 0)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "filter: out_strides[%d]=%lld, must be > 0", i,
                             (long long)st[i]);
        order[i] = i;
    }
    for (int i = 1; i < nd; i++) /* insertion sort by stride */
        for (int j = i; j > 0 && st[order[j]] < st[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    int64_t extent = 1;
    for (int i = 0; i < nd; i++) {
        int a = order[i];
        if (shape[a] == 1) continue;
        if (st[a] < extent)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "filter: out_strides[%d]=%lld makes output "
                             "elements overlap", a, (long long)st[a]);
        int64_t e;
        if (!tc__mul_ok(st[a], shape[a], &e))
            return tc__error(TC_ERR_OVERFLOW, "filter: out_strides overflow");
        extent = e;
    }
    return TC_OK;
}

static int tc__all_zero(const int64_t *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i]) return 0;
    return 1;
}

tc_status tc__lower_filter(const tc_filter_desc *d, tc__filter_layout *lay,
                           tc__problem *p) {
    memset(p, 0, sizeof *p);
    memset(lay, 0, sizeof *lay);
    if (!d) return tc__error(TC_ERR_INVALID_ARGUMENT, "filter: desc is NULL");
    if (d->struct_size != sizeof *d)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "filter: struct_size=%zu, expected %zu (call "
                         "tc_filter_desc_init)", d->struct_size, sizeof *d);
    tc_status st = tc__check_dtype("filter", d->dtype);
    if (st) return st;
    if (d->ndim < 1 || d->ndim > TC_MAX_DIMS)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "filter: ndim=%d, must be 1..%d", d->ndim, TC_MAX_DIMS);
    int nsp = d->nspatial;
    if (nsp == 0) {
        if (d->ndim > TC_MAX_SPATIAL)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "filter: ndim=%d > 3 needs nspatial (1..3) to say "
                             "which trailing axes are filtered", d->ndim);
        nsp = d->ndim;
    }
    if (nsp < 1 || nsp > TC_MAX_SPATIAL || nsp > d->ndim)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "filter: nspatial=%d, must be 1..min(ndim=%d, 3)",
                         d->nspatial, d->ndim);
    for (int i = 0; i < d->ndim; i++)
        if (d->shape[i] < 1)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "filter: shape[%d]=%lld, must be >= 1", i,
                             (long long)d->shape[i]);
    for (int i = 0; i < nsp; i++)
        if (d->mask_shape[i] < 1)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "filter: mask_shape[%d]=%lld, must be >= 1", i,
                             (long long)d->mask_shape[i]);
    if (d->kind != TC_FILTER_CONVOLVE && d->kind != TC_FILTER_CORRELATE)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "filter: kind=%d unknown",
                         (int)d->kind);
    if ((unsigned)d->output > TC_OUTPUT_VALID)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "filter: output=%d unknown",
                         (int)d->output);
    if (!tc_mode_name(d->mode))
        return tc__error(TC_ERR_INVALID_ARGUMENT, "filter: mode=%d unknown",
                         (int)d->mode);
    p->esize = tc_dtype_size(d->dtype);
    if ((st = tc__check_count("filter", "input", d->shape, d->ndim, p->esize,
                              NULL)))
        return st;
    if ((st = tc__check_count("filter", "mask", d->mask_shape, nsp, p->esize,
                              NULL)))
        return st;

    p->op = TC_OP_FILTER;
    p->dtype = d->dtype;
    p->nsp = nsp;
    p->N = 1;
    for (int i = 0; i < d->ndim - nsp; i++) p->N *= d->shape[i];
    p->C = p->K = p->G = 1;
    p->mode = d->mode;
    p->cval = d->cval;
    const int off = TC__NSP - nsp; /* spatial axis i -> problem axis off+i */
    for (int a = 0; a < TC__NSP; a++) {
        p->in[a] = p->msk[a] = p->out[a] = 1;
        p->stride[a] = p->dil[a] = 1;
    }
    int larger = 0, smaller = 0;
    for (int i = 0; i < nsp; i++) {
        int64_t n = d->shape[d->ndim - nsp + i], m = d->mask_shape[i];
        if (m > n) larger++;
        if (m < n) smaller++;
    }
    lay->swap = 0;
    if (d->output == TC_OUTPUT_VALID && larger) {
        if (smaller)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "filter: output=valid needs the mask to be no "
                             "larger than the input on every axis, or larger "
                             "on every axis (scipy rule)");
        if (p->N != 1)
            return tc__error(TC_ERR_UNSUPPORTED,
                             "filter: output=valid with a mask larger than "
                             "the input needs batch size 1, got %lld",
                             (long long)p->N);
        lay->swap = 1;
    }
    for (int i = 0; i < nsp; i++) {
        int a = off + i;
        int64_t n = d->shape[d->ndim - nsp + i], m = d->mask_shape[i];
        if (lay->swap) { int64_t t = n; n = m; m = t; }
        p->in[a] = n;
        p->msk[a] = m;
        if (d->output == TC_OUTPUT_SAME) {
            int64_t o = d->origin[i];
            /* scipy: convolve = correlate with flipped mask and origin
             * -o, one less again for even mask sizes. Both kinds accept
             * the same range of o; check o itself first so that -o cannot
             * overflow (o = INT64_MIN). */
            if (o < -(m / 2) || o > (m - 1) / 2)
                return tc__error(TC_ERR_INVALID_ARGUMENT,
                                 "filter: origin[%d]=%lld out of range "
                                 "%lld..%lld for mask size %lld", i,
                                 (long long)o, (long long)-(m / 2),
                                 (long long)((m - 1) / 2), (long long)m);
            int64_t eff = d->kind == TC_FILTER_CONVOLVE ? -o - (m % 2 == 0)
                                                        : o;
            p->pad_lo[a] = m / 2 + eff;
            p->pad_hi[a] = m - 1 - p->pad_lo[a];
            p->out[a] = n;
        } else {
            if (d->origin[i] != 0)
                return tc__error(TC_ERR_INVALID_ARGUMENT,
                                 "filter: origin[%d]=%lld, must be 0 for "
                                 "output full/valid", i,
                                 (long long)d->origin[i]);
            int64_t pad = d->output == TC_OUTPUT_FULL ? m - 1 : 0;
            p->pad_lo[a] = p->pad_hi[a] = pad;
            if (!tc__add_ok(n, m, &p->out[a]))
                return tc__error(TC_ERR_OVERFLOW, "filter: output overflow");
            p->out[a] = d->output == TC_OUTPUT_FULL ? n + m - 1 : n - m + 1;
        }
    }
    if (d->output != TC_OUTPUT_SAME) {
        p->mode = TC_MODE_CONSTANT;
        p->cval = 0.0;
    }
    if ((st = tc__check_count("filter", "output", p->out, TC__NSP, p->esize,
                              NULL)))
        return st;

    /* layout of the caller's arrays */
    lay->ndim = d->ndim;
    lay->flip = d->kind == TC_FILTER_CONVOLVE;
    for (int i = 0; i < d->ndim; i++) {
        lay->in_shape[i] = d->shape[i];
        lay->out_shape[i] = i < d->ndim - nsp
                                ? d->shape[i]
                                : p->out[off + i - (d->ndim - nsp)];
    }
    lay->in_dense = tc__all_zero(d->in_strides, d->ndim);
    lay->out_dense = tc__all_zero(d->out_strides, d->ndim);
    for (int i = d->ndim - 1, si = 1, so = 1; i >= 0; i--) {
        lay->in_strides[i] = lay->in_dense ? si : d->in_strides[i];
        lay->out_strides[i] = lay->out_dense ? so : d->out_strides[i];
        si *= lay->in_shape[i];
        so *= lay->out_shape[i];
    }
    if (!lay->in_dense) { /* dense strides given explicitly count as dense */
        int dense = 1;
        for (int i = d->ndim - 1, s = 1; i >= 0; i--) {
            if (lay->in_shape[i] > 1 && lay->in_strides[i] != s) dense = 0;
            s *= lay->in_shape[i];
        }
        lay->in_dense = dense;
    }
    if (!lay->out_dense) {
        if ((st = tc__check_out_strides(lay->out_shape, lay->out_strides,
                                        d->ndim)))
            return st;
        int dense = 1;
        for (int i = d->ndim - 1, s = 1; i >= 0; i--) {
            if (lay->out_shape[i] > 1 && lay->out_strides[i] != s) dense = 0;
            s *= lay->out_shape[i];
        }
        lay->out_dense = dense;
    }
    return TC_OK;
}

static const char *const tc__ax[3] = {"0", "1", "2"};

/* The size of tc_conv_desc up to has_residual: a caller built against the
 * struct without weight_layout passes it; its descriptor is read that far
 * and weight_layout takes the default. */
#define TC__CONV_DESC_SIZE_V1 offsetof(tc_conv_desc, weight_layout)

tc_status tc__lower_conv(const tc_conv_desc *d, tc__problem *p) {
    memset(p, 0, sizeof *p);
    if (!d) return tc__error(TC_ERR_INVALID_ARGUMENT, "conv: desc is NULL");
    tc_conv_desc full;
    if (d->struct_size == TC__CONV_DESC_SIZE_V1) {
        tc_conv_desc_init(&full);
        memcpy(&full, d, TC__CONV_DESC_SIZE_V1);
        full.struct_size = sizeof full;
        d = &full;
    }
    if (d->struct_size != sizeof *d)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: struct_size=%zu, expected %zu (call "
                         "tc_conv_desc_init)", d->struct_size, sizeof *d);
    tc_status st = tc__check_dtype("conv", d->dtype);
    if (st) return st;
    int nsp = d->nspatial;
    if (nsp < 1 || nsp > 3)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: nspatial=%d, must be 1, 2 or 3", nsp);
    if (d->batch < 1)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "conv: batch=%lld, must be >= 1",
                         (long long)d->batch);
    if (d->in_channels < 1)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: in_channels=%lld, must be >= 1",
                         (long long)d->in_channels);
    if (d->out_channels < 1)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: out_channels=%lld, must be >= 1",
                         (long long)d->out_channels);
    if (d->groups < 1)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "conv: groups=%lld, must be >= 1",
                         (long long)d->groups);
    if (d->in_channels % d->groups)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: groups=%lld does not divide in_channels=%lld",
                         (long long)d->groups, (long long)d->in_channels);
    if (d->out_channels % d->groups)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: groups=%lld does not divide out_channels=%lld",
                         (long long)d->groups, (long long)d->out_channels);
    if ((unsigned)d->padding_kind > TC_PADDING_VALID)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "conv: padding_kind=%d unknown",
                         (int)d->padding_kind);
    if ((unsigned)d->padding_mode > TC_PADDING_CIRCULAR)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "conv: padding_mode=%d unknown",
                         (int)d->padding_mode);
    if (d->has_bias != 0 && d->has_bias != 1)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "conv: has_bias=%d, must be 0 or 1",
                         d->has_bias);
    if (d->has_residual != 0 && d->has_residual != 1)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: has_residual=%d, must be 0 or 1", d->has_residual);
    if (!tc_layout_name(d->layout))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: layout=%d, must be TC_LAYOUT_CHANNELS_FIRST or "
                         "TC_LAYOUT_CHANNELS_LAST", (int)d->layout);
    if (!tc_layout_name(d->weight_layout))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: weight_layout=%d, must be TC_LAYOUT_CHANNELS_FIRST or "
                         "TC_LAYOUT_CHANNELS_LAST", (int)d->weight_layout);
    if (!tc_activation_name(d->activation))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "conv: activation=%d unknown (TC_ACT_NONE .. TC_ACT_GELU)",
                         (int)d->activation);
    static const tc_mode modes[] = {TC_MODE_CONSTANT, TC_MODE_MIRROR,
                                    TC_MODE_NEAREST, TC_MODE_WRAP};
    static const char *const pm[] = {"zeros", "reflect", "replicate",
                                     "circular"};
    p->op = TC_OP_CONV;
    p->dtype = d->dtype;
    p->esize = tc_dtype_size(d->dtype);
    p->nsp = nsp;
    p->N = d->batch;
    p->C = d->in_channels;
    p->K = d->out_channels;
    p->G = d->groups;
    p->mode = modes[d->padding_mode];
    p->cval = 0.0;
    p->has_bias = d->has_bias;
    p->layout = d->layout;
    p->wlayout = d->weight_layout;
    p->act = d->activation;
    p->has_residual = d->has_residual;
    const int off = TC__NSP - nsp;
    for (int a = 0; a < TC__NSP; a++) {
        p->in[a] = p->msk[a] = p->out[a] = 1;
        p->stride[a] = p->dil[a] = 1;
    }
    for (int i = 0; i < nsp; i++) {
        int a = off + i;
        int64_t n = d->in_size[i], m = d->kernel_size[i], s = d->stride[i],
                dl = d->dilation[i];
        if (n < 1)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "conv: in_size[%s]=%lld, must be >= 1", tc__ax[i],
                             (long long)n);
        if (m < 1)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "conv: kernel_size[%s]=%lld, must be >= 1",
                             tc__ax[i], (long long)m);
        if (s < 1)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "conv: stride[%s]=%lld, must be >= 1", tc__ax[i],
                             (long long)s);
        if (dl < 1)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "conv: dilation[%s]=%lld, must be >= 1", tc__ax[i],
                             (long long)dl);
        int64_t span; /* dil*(m-1) + 1 */
        if (!tc__mul_ok(dl, m - 1, &span) || !tc__add_ok(span, 1, &span))
            return tc__error(TC_ERR_OVERFLOW,
                             "conv: dilation[%s]*(kernel_size-1) overflows",
                             tc__ax[i]);
        int64_t lo, hi;
        switch (d->padding_kind) {
        case TC_PADDING_SAME:
            if (s != 1)
                return tc__error(TC_ERR_INVALID_ARGUMENT,
                                 "conv: padding=same needs stride 1, got "
                                 "stride[%s]=%lld", tc__ax[i], (long long)s);
            lo = (span - 1) / 2;
            hi = span - 1 - lo;
            break;
        case TC_PADDING_VALID: lo = hi = 0; break;
        default:
            lo = hi = d->padding[i];
            if (lo < 0)
                return tc__error(TC_ERR_INVALID_ARGUMENT,
                                 "conv: padding[%s]=%lld, must be >= 0",
                                 tc__ax[i], (long long)lo);
        }
        if (d->padding_mode == TC_PADDING_REFLECT && (lo >= n || hi >= n))
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "conv: padding[%s]=%lld with padding_mode=reflect "
                             "must be < in_size=%lld", tc__ax[i],
                             (long long)(lo > hi ? lo : hi), (long long)n);
        if (d->padding_mode == TC_PADDING_CIRCULAR && (lo > n || hi > n))
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "conv: padding[%s]=%lld with padding_mode=circular "
                             "must be <= in_size=%lld", tc__ax[i],
                             (long long)(lo > hi ? lo : hi), (long long)n);
        int64_t padded;
        if (!tc__add_ok(n, lo, &padded) || !tc__add_ok(padded, hi, &padded))
            return tc__error(TC_ERR_OVERFLOW, "conv: padded size overflows");
        if (span > padded)
            return tc__error(TC_ERR_INVALID_ARGUMENT,
                             "conv: effective kernel size %lld (dilation %lld x "
                             "(kernel %lld - 1) + 1) on axis %s exceeds the "
                             "padded input size %lld", (long long)span,
                             (long long)dl, (long long)m, tc__ax[i],
                             (long long)padded);
        p->in[a] = n;
        p->msk[a] = m;
        p->stride[a] = s;
        p->dil[a] = dl;
        p->pad_lo[a] = lo;
        p->pad_hi[a] = hi;
        p->out[a] = (padded - span) / s + 1;
    }
    (void)pm;
    int64_t dims[5] = {p->N, p->C, p->in[0], p->in[1], p->in[2]};
    if ((st = tc__check_count("conv", "input", dims, 5, p->esize, NULL)))
        return st;
    int64_t wd[5] = {p->K, p->C / p->G, p->msk[0], p->msk[1], p->msk[2]};
    if ((st = tc__check_count("conv", "weight", wd, 5, p->esize, NULL)))
        return st;
    int64_t od[5] = {p->N, p->K, p->out[0], p->out[1], p->out[2]};
    if ((st = tc__check_count("conv", "output", od, 5, p->esize, NULL)))
        return st;
    return TC_OK;
}

tc_status tc__lower_gemm(const tc_gemm_desc *d, tc__problem *p) {
    memset(p, 0, sizeof *p);
    if (!d) return tc__error(TC_ERR_INVALID_ARGUMENT, "gemm: desc is NULL");
    if (d->struct_size != sizeof *d)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "gemm: struct_size=%zu, expected %zu (call "
                         "tc_gemm_desc_init)", d->struct_size, sizeof *d);
    tc_status st = tc__check_dtype("gemm", d->dtype);
    if (st) return st;
    if (d->m < 1 || d->n < 1 || d->k < 1)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "gemm: m=%lld n=%lld k=%lld, each must be >= 1",
                         (long long)d->m, (long long)d->n, (long long)d->k);
    if ((d->trans_a != 0 && d->trans_a != 1) ||
        (d->trans_b != 0 && d->trans_b != 1))
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "gemm: trans_a=%d trans_b=%d, each must be 0 or 1",
                         d->trans_a, d->trans_b);
    p->op = TC_OP_GEMM;
    p->dtype = d->dtype;
    p->esize = tc_dtype_size(d->dtype);
    p->trans_a = d->trans_a;
    p->trans_b = d->trans_b;
    p->m = d->m;
    p->n = d->n;
    p->k = d->k;
    int64_t a_cols = d->trans_a ? d->m : d->k, a_rows = d->trans_a ? d->k : d->m;
    int64_t b_cols = d->trans_b ? d->k : d->n, b_rows = d->trans_b ? d->n : d->k;
    p->lda = d->lda ? d->lda : a_cols;
    p->ldb = d->ldb ? d->ldb : b_cols;
    p->ldc = d->ldc ? d->ldc : d->n;
    if (p->lda < a_cols)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "gemm: lda=%lld, must be >= %lld",
                         (long long)p->lda, (long long)a_cols);
    if (p->ldb < b_cols)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "gemm: ldb=%lld, must be >= %lld",
                         (long long)p->ldb, (long long)b_cols);
    if (p->ldc < d->n)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "gemm: ldc=%lld, must be >= n=%lld",
                         (long long)p->ldc, (long long)d->n);
    int64_t da[2] = {a_rows, p->lda}, db[2] = {b_rows, p->ldb},
            dc[2] = {d->m, p->ldc};
    if ((st = tc__check_count("gemm", "A", da, 2, p->esize, NULL)) ||
        (st = tc__check_count("gemm", "B", db, 2, p->esize, NULL)) ||
        (st = tc__check_count("gemm", "C", dc, 2, p->esize, NULL)))
        return st;
    p->alpha = d->alpha;
    p->beta = d->beta;
    return TC_OK;
}
