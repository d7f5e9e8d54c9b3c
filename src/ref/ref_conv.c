/* ref_conv.c - the reference for every correlation problem (filter and
 * conv, every mode, dtype, stride, dilation, group). Plain loops, double
 * accumulation, boundary through tc__boundary_index for every tap, either
 * layout, the fused epilogue act(acc + bias + residual) in double, one
 * rounding to the dtype at the end. Never optimise this file: it is the
 * oracle of the tests. */
#include "core/half.h"

static int ref_applicable(const tc__problem *p, const tc__env *e, char *why,
                          size_t n) {
    return p->op == TC_OP_FILTER || p->op == TC_OP_CONV;
}

static double ref_estimate(const tc__problem *p, const tc__env *e) {
    return 1e6 + tc__problem_flops(p) / 1e8; /* never preferred */
}

typedef struct ref_job { const tc__args *a; } ref_job;

static void ref_rows(void *arg, int64_t begin, int64_t end, int tid) {
    const tc__args *a = ((ref_job *)arg)->a;
    const tc__problem *p = a->p;
    const int64_t Cg = p->C / p->G, Kg = p->K / p->G;
    const int64_t O0 = p->out[0], O1 = p->out[1], O2 = p->out[2];
    const int cl = p->op == TC_OP_CONV && p->layout == TC_LAYOUT_CHANNELS_LAST;
    const int64_t Sin = p->in[0] * p->in[1] * p->in[2], Sout = O0 * O1 * O2;
    const int64_t xs = cl ? p->C : 1;
    for (int64_t row = begin; row < end; row++) { /* row = (n, k) */
        int64_t n = row / p->K, k = row % p->K, g = k / Kg;
        for (int64_t o0 = 0; o0 < O0; o0++)
            for (int64_t o1 = 0; o1 < O1; o1++)
                for (int64_t o2 = 0; o2 < O2; o2++) {
                    double acc = p->has_bias ? tc__load_d(a->bias, k, p->dtype) : 0.0;
                    for (int64_t c = 0; c < Cg; c++) {
                        int64_t ch = g * Cg + c;
                        /* element (i0, i1, i2) of channel ch is at xbase + i * xs */
                        const int64_t xbase = cl ? n * Sin * p->C + ch : (n * p->C + ch) * Sin;
                        const int64_t wbase = (k * Cg + c) * p->msk[0] * p->msk[1] * p->msk[2];
                        for (int64_t r0 = 0; r0 < p->msk[0]; r0++) {
                            int64_t i0 = tc__boundary_index(
                                o0 * p->stride[0] + r0 * p->dil[0] - p->pad_lo[0], p->in[0], p->mode);
                            for (int64_t r1 = 0; r1 < p->msk[1]; r1++) {
                                int64_t i1 = tc__boundary_index(
                                    o1 * p->stride[1] + r1 * p->dil[1] - p->pad_lo[1], p->in[1], p->mode);
                                for (int64_t r2 = 0; r2 < p->msk[2]; r2++) {
                                    int64_t i2 = tc__boundary_index(
                                        o2 * p->stride[2] + r2 * p->dil[2] - p->pad_lo[2], p->in[2], p->mode);
                                    double wv = tc__load_d(a->w, wbase + (r0 * p->msk[1] + r1) * p->msk[2] + r2, p->dtype);
                                    double xv = (i0 < 0 || i1 < 0 || i2 < 0)
                                        ? p->cval
                                        : tc__load_d(a->x, xbase + ((i0 * p->in[1] + i1) * p->in[2] + i2) * xs, p->dtype);
                                    acc += wv * xv;
                                }
                            }
                        }
                    }
                    int64_t sidx = (o0 * O1 + o1) * O2 + o2;
                    int64_t yi = cl ? (n * Sout + sidx) * p->K + k : row * Sout + sidx;
                    if (a->residual) acc += tc__load_d(a->residual, yi, p->dtype);
                    tc__store_d(a->y, yi, p->dtype, tc__act_d(p->act, acc));
                }
    }
}

static tc_status ref_execute(const tc__args *a) {
    ref_job job = {a};
    tc__parallel_for(a->threads, a->p->N * a->p->K, ref_rows, &job);
    return TC_OK;
}

const tc__solver tc__solver_ref_conv = {
    .name = "ref.conv.loops",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER | TC_OP_CONV,
    .summary = "Reference: plain loops, double accumulation, every mode (test oracle).",
    .applicable = ref_applicable,
    .estimate = ref_estimate,
    .execute = ref_execute,
    .caps = TC__CAP_ALL | TC__CAP_MASK_AT_EXECUTE, /* reads the mask from a->w */
};
