/*
 * layers.h - the DNN layer suite: the convolution layers (ResNet-50, a 3D
 * layer, a 1D layer, MobileNet depthwise) that `tileconv bench --suite dnn`
 * (bench/dnn.c) times and `tileconv analyze --layers` (tools/analyze_layers.c)
 * costs. One table, so that both speak of the same layers.
 */
#ifndef TC_TOOLS_LAYERS_H
#define TC_TOOLS_LAYERS_H

#include <stdint.h>

#include "tileconv.h"

/* One layer: float32, cubic input and kernel (every spatial axis alike),
 * dilation 1, zero padding `pad` on every side. */
typedef struct tool_layer {
    const char *id, *label;
    int nsp;                     /* spatial axes, 1 to 3 */
    int64_t N, C, K, G;          /* batch, in / out channels, groups */
    int64_t in, k, stride, pad;  /* per spatial axis */
} tool_layer;

extern const tool_layer tool_dnn_layers[];
extern const int tool_dnn_nlayers;

/* The layer's convolution descriptor (tc_conv_desc_init's defaults
 * otherwise), of dtype dt. */
void tool_layer_desc(const tool_layer *L, tc_dtype dt, tc_conv_desc *d);

#endif /* TC_TOOLS_LAYERS_H */
