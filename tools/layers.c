/*
 * layers.c - the DNN layer suite. See layers.h.
 */
#include "layers.h"

const tool_layer tool_dnn_layers[] = {
    {"r50-conv1", "ResNet-50 conv1 7x7/2 3->64 @224", 2, 1, 3, 64, 1, 224, 7, 2, 3},
    {"r50-3x3-64", "ResNet-50 3x3 64->64 @56", 2, 1, 64, 64, 1, 56, 3, 1, 1},
    {"r50-3x3-128", "ResNet-50 3x3 128->128 @28", 2, 1, 128, 128, 1, 28, 3, 1, 1},
    {"r50-3x3-256", "ResNet-50 3x3 256->256 @14", 2, 1, 256, 256, 1, 14, 3, 1, 1},
    {"r50-3x3-512", "ResNet-50 3x3 512->512 @7", 2, 1, 512, 512, 1, 7, 3, 1, 1},
    {"r50-1x1-256-64", "ResNet-50 1x1 256->64 @56", 2, 1, 256, 64, 1, 56, 1, 1, 0},
    {"r50-1x1-64-256", "ResNet-50 1x1 64->256 @56", 2, 1, 64, 256, 1, 56, 1, 1, 0},
    {"r50-3x3-64-b8", "ResNet-50 3x3 64->64 @56, batch 8", 2, 8, 64, 64, 1, 56, 3, 1, 1},
    {"3d-3x3x3-32", "3D 3x3x3 32->32 @32^3", 3, 1, 32, 32, 1, 32, 3, 1, 1},
    {"1d-k5-64", "1D k5 64->64 @4096, batch 4", 1, 4, 64, 64, 1, 4096, 5, 1, 2},
    {"mbv1-dw-256", "MobileNet depthwise 3x3 256 @28", 2, 1, 256, 256, 256, 28, 3, 1, 1},
};
const int tool_dnn_nlayers = (int)(sizeof tool_dnn_layers / sizeof tool_dnn_layers[0]);

void tool_layer_desc(const tool_layer *L, tc_dtype dt, tc_conv_desc *d) {
    tc_conv_desc_init(d);
    d->dtype = dt;
    d->nspatial = L->nsp;
    d->batch = L->N;
    d->in_channels = L->C;
    d->out_channels = L->K;
    d->groups = L->G;
    for (int i = 0; i < L->nsp; i++) {
        d->in_size[i] = L->in;
        d->kernel_size[i] = L->k;
        d->stride[i] = L->stride;
        d->padding[i] = L->pad;
    }
}
