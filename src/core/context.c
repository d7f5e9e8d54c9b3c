/* context.c - thread count and backend preference. */
#include "context.h"

#include <stdlib.h>

static tc_context tc__default_context = {0, TC_BACKEND_AUTO};

tc_context *tc__context_or_default(tc_context *ctx) {
    return ctx ? ctx : &tc__default_context;
}

tc_status tc_context_create(tc_context **ctx) {
    if (!ctx) return tc__error(TC_ERR_INVALID_ARGUMENT, "context: ctx is NULL");
    *ctx = NULL;
    tc_context *c = calloc(1, sizeof *c);
    if (!c) return tc__error(TC_ERR_OUT_OF_MEMORY, "context: out of memory");
    c->threads = 0;
    c->backend = TC_BACKEND_AUTO;
    *ctx = c;
    return TC_OK;
}

void tc_context_destroy(tc_context *ctx) {
    if (ctx && ctx != &tc__default_context) free(ctx);
}

tc_status tc_context_set_threads(tc_context *ctx, int threads) {
    if (!ctx) return tc__error(TC_ERR_INVALID_ARGUMENT, "context: ctx is NULL");
    if (threads < 0 || threads > 4096)
        return tc__error(TC_ERR_INVALID_ARGUMENT,
                         "context: threads=%d, must be 0 (all cores) .. 4096",
                         threads);
    ctx->threads = threads;
    return TC_OK;
}

int tc_context_threads(const tc_context *ctx) {
    const tc_context *c = ctx ? ctx : &tc__default_context;
    return c->threads > 0 ? c->threads : tc_cpu_count();
}

tc_status tc_context_set_backend(tc_context *ctx, tc_backend backend) {
    if (!ctx) return tc__error(TC_ERR_INVALID_ARGUMENT, "context: ctx is NULL");
    if (!tc_backend_name(backend))
        return tc__error(TC_ERR_INVALID_ARGUMENT, "context: backend=%d unknown",
                         (int)backend);
    ctx->backend = backend;
    return TC_OK;
}

tc_backend tc_context_backend(const tc_context *ctx) {
    return (ctx ? ctx : &tc__default_context)->backend;
}
