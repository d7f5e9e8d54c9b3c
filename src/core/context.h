/* context.h - the context object (private layout). */
#ifndef TC_CONTEXT_H
#define TC_CONTEXT_H
#include "internal.h"

struct tc_context {
    int threads;        /* 0 = all cores */
    tc_backend backend;
};

tc_context *tc__context_or_default(tc_context *ctx);
#endif
