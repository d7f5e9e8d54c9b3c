/*
 * peer_dnnl.c - oneDNN 3D convolution peer for `tileconv bench`.
 *
 * The problem: N=1, C=1, K=1, D x H x W input, kd x kh x kw weights, stride
 * 1, zero padding k/2 low and (k-1)/2 high ("same"), forward inference,
 * direct algorithm: the same cross-correlation as tileconv's correlate with
 * mode constant, cval 0.
 *
 * plain: src/dst ncdhw and weights oidhw, on the benchmark's buffers.
 * any:   format_tag_any for every tensor, so oneDNN picks its preferred
 *        (usually blocked, channel-padded) layouts; the input and weights are
 *        reordered into them once at setup and only the convolution
 *        primitive is timed (the reorders are not); the output is reordered
 *        back to plain once after the warm-up for the check.
 * Threads: oneDNN here runs on OpenMP; the bench sets OMP_NUM_THREADS,
 * OMP_PROC_BIND=spread and OMP_PLACES=cores before the process starts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>
#include <dnnl_debug.h>

#include "bench.h"

typedef struct dn_state {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    dnnl_primitive_t conv;
    dnnl_primitive_t back;      /* dst (chosen layout) -> plain, any only */
    dnnl_memory_t src, wei, dst, user_dst;
    float *y;
    int any;
    int checked;
} dn_state;

static void dn_fini(void *p) {
    dn_state *s = p;
    if (!s) return;
    if (s->conv) dnnl_primitive_destroy(s->conv);
    if (s->back) dnnl_primitive_destroy(s->back);
    if (s->src) dnnl_memory_destroy(s->src);
    if (s->wei) dnnl_memory_destroy(s->wei);
    if (s->dst) dnnl_memory_destroy(s->dst);
    if (s->user_dst) dnnl_memory_destroy(s->user_dst);
    if (s->strm) dnnl_stream_destroy(s->strm);
    if (s->eng) dnnl_engine_destroy(s->eng);
    free(s->y);
    free(s);
}

static int dn_run(void *p, char *err, size_t errn) {
    dn_state *s = p;
    dnnl_exec_arg_t args[3] = {
        {DNNL_ARG_SRC, s->src}, {DNNL_ARG_WEIGHTS, s->wei}, {DNNL_ARG_DST, s->dst}};
    dnnl_status_t st = dnnl_primitive_execute(s->conv, s->strm, 3, args);
    if (st == dnnl_success) st = dnnl_stream_wait(s->strm);
    if (st == dnnl_success && s->back && !s->checked) {
        /* first run (the warm-up): bring the output back for the check */
        dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, s->dst}, {DNNL_ARG_TO, s->user_dst}};
        st = dnnl_primitive_execute(s->back, s->strm, 2, rargs);
        if (st == dnnl_success) st = dnnl_stream_wait(s->strm);
    }
    s->checked = 1;
    if (st != dnnl_success) {
        snprintf(err, errn, "oneDNN execute: %s", dnnl_status2str(st));
        return -1;
    }
    return 0;
}

/* Reorders plain user data into mem (layout md). */
static dnnl_status_t dn_reorder_in(dn_state *s, const dnnl_memory_desc_t *user_md,
                                   void *user, dnnl_memory_t mem) {
    const dnnl_memory_desc_t *md;
    dnnl_memory_get_memory_desc(mem, &md);
    dnnl_memory_t u = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t rp = NULL;
    dnnl_status_t st = dnnl_memory_create(&u, user_md, s->eng, user);
    if (st == dnnl_success)
        st = dnnl_reorder_primitive_desc_create(&rpd, user_md, s->eng, md, s->eng, NULL);
    if (st == dnnl_success) st = dnnl_primitive_create(&rp, rpd);
    if (st == dnnl_success) {
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, u}, {DNNL_ARG_TO, mem}};
        st = dnnl_primitive_execute(rp, s->strm, 2, a);
        if (st == dnnl_success) st = dnnl_stream_wait(s->strm);
    }
    if (rp) dnnl_primitive_destroy(rp);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (u) dnnl_memory_destroy(u);
    return st;
}

#define DN_CHECK(call)                                                        \
    do {                                                                      \
        dnnl_status_t st_ = (call);                                           \
        if (st_ != dnnl_success) {                                            \
            snprintf(r->na, sizeof r->na, "oneDNN %s: %s", #call,              \
                     dnnl_status2str(st_));                                    \
            goto fail;                                                        \
        }                                                                     \
    } while (0)

int peer_dnnl_conv3d(bench_runner *r, const float *x, const int64_t in[3],
                     const float *w, const int64_t k[3], int any_layout) {
    dn_state *s = calloc(1, sizeof *s);
    dnnl_primitive_desc_t pd = NULL;
    if (!s) {
        snprintf(r->na, sizeof r->na, "out of memory");
        return -1;
    }
    s->any = any_layout;
    int64_t ny = in[0] * in[1] * in[2];
    s->y = bench_alloc((size_t)ny * sizeof(float));
    if (!s->y) {
        snprintf(r->na, sizeof r->na, "out of memory");
        goto fail;
    }
    DN_CHECK(dnnl_engine_create(&s->eng, dnnl_cpu, 0));
    DN_CHECK(dnnl_stream_create(&s->strm, s->eng, dnnl_stream_default_flags));
    dnnl_dims_t sd = {1, 1, in[0], in[1], in[2]};
    dnnl_dims_t wd = {1, 1, k[0], k[1], k[2]};
    dnnl_dims_t strides = {1, 1, 1};
    dnnl_dims_t pl = {k[0] / 2, k[1] / 2, k[2] / 2};
    dnnl_dims_t pr = {(k[0] - 1) / 2, (k[1] - 1) / 2, (k[2] - 1) / 2};
    dnnl_memory_desc_t src_plain, wei_plain, dst_plain, src_md, wei_md, dst_md;
    DN_CHECK(dnnl_memory_desc_init_by_tag(&src_plain, 5, sd, dnnl_f32, dnnl_ncdhw));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&wei_plain, 5, wd, dnnl_f32, dnnl_oidhw));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&dst_plain, 5, sd, dnnl_f32, dnnl_ncdhw));
    dnnl_format_tag_t any = dnnl_format_tag_any;
    DN_CHECK(dnnl_memory_desc_init_by_tag(&src_md, 5, sd, dnnl_f32, any_layout ? any : dnnl_ncdhw));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&wei_md, 5, wd, dnnl_f32, any_layout ? any : dnnl_oidhw));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 5, sd, dnnl_f32, any_layout ? any : dnnl_ncdhw));
    dnnl_convolution_desc_t cd;
    DN_CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                dnnl_convolution_direct, &src_md, &wei_md,
                                                NULL, &dst_md, strides, pl, pr));
    DN_CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, s->eng, NULL));
    DN_CHECK(dnnl_primitive_create(&s->conv, pd));
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    const dnnl_memory_desc_t *q_src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *q_wei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *q_dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    char fmt[96] = "plain";
    if (q_src->format_kind == dnnl_blocked && q_src->format_desc.blocking.inner_nblks > 0) {
        const dnnl_blocking_desc_t *bd = &q_src->format_desc.blocking;
        int o = snprintf(fmt, sizeof fmt, "blocked");
        for (int i = 0; i < bd->inner_nblks && o < (int)sizeof fmt; i++)
            o += snprintf(fmt + o, sizeof fmt - (size_t)o, " %lld%c", (long long)bd->inner_blks[i],
                          "ncdhw"[bd->inner_idxs[i] < 5 ? bd->inner_idxs[i] : 0]);
        if (o < (int)sizeof fmt && q_src->padded_dims[1] != q_src->dims[1])
            snprintf(fmt + o, sizeof fmt - (size_t)o, " (1 channel padded to %lld)",
                     (long long)q_src->padded_dims[1]);
    } else if (q_src->format_kind == dnnl_blocked) {
        const dnnl_dims_t *st = &q_src->format_desc.blocking.strides;
        snprintf(fmt, sizeof fmt, "plain strides %lld,%lld,%lld,%lld,%lld", (long long)(*st)[0],
                 (long long)(*st)[1], (long long)(*st)[2], (long long)(*st)[3], (long long)(*st)[4]);
    }
    if (!any_layout) {
        DN_CHECK(dnnl_memory_create(&s->src, q_src, s->eng, (void *)x));
        DN_CHECK(dnnl_memory_create(&s->wei, q_wei, s->eng, (void *)w));
        DN_CHECK(dnnl_memory_create(&s->dst, q_dst, s->eng, s->y));
    } else {
        DN_CHECK(dnnl_memory_create(&s->src, q_src, s->eng, DNNL_MEMORY_ALLOCATE));
        DN_CHECK(dnnl_memory_create(&s->wei, q_wei, s->eng, DNNL_MEMORY_ALLOCATE));
        DN_CHECK(dnnl_memory_create(&s->dst, q_dst, s->eng, DNNL_MEMORY_ALLOCATE));
        DN_CHECK(dn_reorder_in(s, &src_plain, (void *)x, s->src));
        DN_CHECK(dn_reorder_in(s, &wei_plain, (void *)w, s->wei));
        DN_CHECK(dnnl_memory_create(&s->user_dst, &dst_plain, s->eng, s->y));
        dnnl_primitive_desc_t bpd = NULL;
        DN_CHECK(dnnl_reorder_primitive_desc_create(&bpd, q_dst, s->eng, &dst_plain, s->eng,
                                                    NULL));
        dnnl_status_t st = dnnl_primitive_create(&s->back, bpd);
        dnnl_primitive_desc_destroy(bpd);
        DN_CHECK(st);
    }
    snprintf(r->name, sizeof r->name, "onednn.%s", any_layout ? "any" : "plain");
    snprintf(r->info, sizeof r->info, "oneDNN %s, %s, src %s", peer_dnnl_version(), impl,
             fmt);
    dnnl_primitive_desc_destroy(pd);
    r->run = dn_run;
    r->fini = dn_fini;
    r->st = s;
    r->y = s->y;
    r->ny = ny;
    r->kind = BK_PEER;
    return 0;
fail:
    if (pd) dnnl_primitive_desc_destroy(pd);
    dn_fini(s);
    return -1;
}

/* A convolution layer (tileconv bench --suite dnn): N x C x spatial input,
 * K x C/G x kernel weights, zero padding `pad` on both sides, stride,
 * dilation (torch's: 1 = dense), no bias, float32. any_layout: oneDNN's own
 * (blocked) layouts, input and weights reordered once at setup, outside the
 * timed runs, as a framework keeps them between layers; the output comes
 * back to plain on the first run only, for the check. Otherwise the
 * primitive runs on the plain ncw / nchw / ncdhw tensors given. */
int peer_dnnl_layer(bench_runner *r, int nsp, int64_t N, int64_t C, int64_t K, int64_t G,
                    const int64_t in[3], const int64_t k[3], const int64_t stride[3],
                    const int64_t dil[3], const int64_t pad[3], const int64_t out[3],
                    const float *x, const float *w, int any_layout) {
    dn_state *s = calloc(1, sizeof *s);
    dnnl_primitive_desc_t pd = NULL;
    if (!s) {
        snprintf(r->na, sizeof r->na, "out of memory");
        return -1;
    }
    s->any = any_layout;
    int64_t ny = N * K;
    for (int i = 0; i < nsp; i++) ny *= out[i];
    s->y = bench_alloc((size_t)ny * sizeof(float));
    if (!s->y) {
        snprintf(r->na, sizeof r->na, "out of memory");
        goto fail;
    }
    DN_CHECK(dnnl_engine_create(&s->eng, dnnl_cpu, 0));
    DN_CHECK(dnnl_stream_create(&s->strm, s->eng, dnnl_stream_default_flags));
    static const dnnl_format_tag_t act[4] = {dnnl_format_tag_undef, dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
    static const dnnl_format_tag_t wt[4] = {dnnl_format_tag_undef, dnnl_oiw, dnnl_oihw, dnnl_oidhw};
    static const dnnl_format_tag_t gwt[4] = {dnnl_format_tag_undef, dnnl_goiw, dnnl_goihw,
                                             dnnl_goidhw};
    dnnl_dims_t sd = {N, C}, dd = {N, K}, wd, st, dl, pl, pr;
    int wnd = G > 1 ? 3 + nsp : 2 + nsp;
    if (G > 1) {
        wd[0] = G; wd[1] = K / G; wd[2] = C / G;
    } else {
        wd[0] = K; wd[1] = C;
    }
    for (int i = 0; i < nsp; i++) {
        sd[2 + i] = in[i];
        dd[2 + i] = out[i];
        wd[wnd - nsp + i] = k[i];
        st[i] = stride[i];
        dl[i] = dil[i] - 1;
        pl[i] = pad[i];
        /* right padding so that oneDNN's output size is out[i] */
        pr[i] = (out[i] - 1) * stride[i] + (k[i] - 1) * dil[i] + 1 - in[i] - pad[i];
    }
    dnnl_memory_desc_t src_plain, wei_plain, dst_plain, src_md, wei_md, dst_md;
    dnnl_format_tag_t wtag = G > 1 ? gwt[nsp] : wt[nsp], any = dnnl_format_tag_any;
    DN_CHECK(dnnl_memory_desc_init_by_tag(&src_plain, 2 + nsp, sd, dnnl_f32, act[nsp]));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&wei_plain, wnd, wd, dnnl_f32, wtag));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&dst_plain, 2 + nsp, dd, dnnl_f32, act[nsp]));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&src_md, 2 + nsp, sd, dnnl_f32, any_layout ? any : act[nsp]));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&wei_md, wnd, wd, dnnl_f32, any_layout ? any : wtag));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 2 + nsp, dd, dnnl_f32, any_layout ? any : act[nsp]));
    dnnl_convolution_desc_t cd;
    DN_CHECK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                        dnnl_convolution_direct, &src_md,
                                                        &wei_md, NULL, &dst_md, st, dl, pl, pr));
    DN_CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, s->eng, NULL));
    DN_CHECK(dnnl_primitive_create(&s->conv, pd));
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    const dnnl_memory_desc_t *q_src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *q_wei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *q_dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    if (!any_layout) {
        DN_CHECK(dnnl_memory_create(&s->src, q_src, s->eng, (void *)x));
        DN_CHECK(dnnl_memory_create(&s->wei, q_wei, s->eng, (void *)w));
        DN_CHECK(dnnl_memory_create(&s->dst, q_dst, s->eng, s->y));
    } else {
        DN_CHECK(dnnl_memory_create(&s->src, q_src, s->eng, DNNL_MEMORY_ALLOCATE));
        DN_CHECK(dnnl_memory_create(&s->wei, q_wei, s->eng, DNNL_MEMORY_ALLOCATE));
        DN_CHECK(dnnl_memory_create(&s->dst, q_dst, s->eng, DNNL_MEMORY_ALLOCATE));
        DN_CHECK(dn_reorder_in(s, &src_plain, (void *)x, s->src));
        DN_CHECK(dn_reorder_in(s, &wei_plain, (void *)w, s->wei));
        DN_CHECK(dnnl_memory_create(&s->user_dst, &dst_plain, s->eng, s->y));
        dnnl_primitive_desc_t bpd = NULL;
        DN_CHECK(dnnl_reorder_primitive_desc_create(&bpd, q_dst, s->eng, &dst_plain, s->eng,
                                                    NULL));
        dnnl_status_t rs = dnnl_primitive_create(&s->back, bpd);
        dnnl_primitive_desc_destroy(bpd);
        DN_CHECK(rs);
    }
    snprintf(r->name, sizeof r->name, "onednn.%s", any_layout ? "any" : "plain");
    snprintf(r->info, sizeof r->info, "oneDNN %s, %s", peer_dnnl_version(), impl);
    dnnl_primitive_desc_destroy(pd);
    r->run = dn_run;
    r->fini = dn_fini;
    r->st = s;
    r->y = s->y;
    r->ny = ny;
    r->kind = BK_PEER;
    return 0;
fail:
    if (pd) dnnl_primitive_desc_destroy(pd);
    dn_fini(s);
    return -1;
}

const char *peer_dnnl_version(void) {
    static char buf[32];
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, sizeof buf, "%d.%d.%d", v->major, v->minor, v->patch);
    return buf;
}
