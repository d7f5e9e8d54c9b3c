/* wisdom.h - remembered MEASURE choices (src/core/wisdom.c), used by the
 * planner. Public API: tc_wisdom_load / _save / _forget in tileconv.h. */
#ifndef TC_WISDOM_H
#define TC_WISDOM_H
#include "internal.h"

/* The solver wisdom remembers for problem p planned under env with the
 * given workspace limit, or NULL when there is none or it no longer
 * applies (unknown name, wrong op or backend, unavailable, not applicable,
 * over the limit). Loads the default wisdom file on first use (see
 * tileconv.h). Thread-safe. */
const tc__solver *tc__wisdom_lookup(const tc__problem *p, const tc__env *env,
                                    size_t workspace_limit);
/* Remembers that MEASURE chose solver `name` for this problem. */
void tc__wisdom_record(const tc__problem *p, const tc__env *env,
                       size_t workspace_limit, const char *name);
#endif
