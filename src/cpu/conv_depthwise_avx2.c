/* conv_depthwise_avx2.c - cpu.conv.depthwise's plane kernel with AVX2+FMA
 * code generation (conv_depthwise_kern.h); called only on AVX2 CPUs. */
#define DW_SFX avx2
#include "conv_depthwise_kern.h"
