/* describe.h - lowering of public descriptors to tc__problem. */
#ifndef TC_DESCRIBE_H
#define TC_DESCRIBE_H
#include "internal.h"

/* How the caller's filter arrays map to the dense problem arrays. */
typedef struct tc__filter_layout {
    int ndim;
    int flip;          /* convolve: the plan flips its mask copy */
    int swap;          /* valid with the mask larger: operands swapped */
    int in_dense, out_dense;
    int64_t in_shape[TC_MAX_DIMS], out_shape[TC_MAX_DIMS];
    int64_t in_strides[TC_MAX_DIMS], out_strides[TC_MAX_DIMS];
} tc__filter_layout;

tc_status tc__lower_filter(const tc_filter_desc *d, tc__filter_layout *lay,
                           tc__problem *p);
tc_status tc__lower_conv(const tc_conv_desc *d, tc__problem *p);
tc_status tc__lower_gemm(const tc_gemm_desc *d, tc__problem *p);
#endif
