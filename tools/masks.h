/*
 * masks.h - named masks for `tileconv filter --kernel NAME`.
 *
 * A named mask is just an array; the filter's --correlate flag decides
 * whether it is convolved (flipped) or correlated.
 */
#ifndef TC_TOOLS_MASKS_H
#define TC_TOOLS_MASKS_H

#include <stddef.h>
#include <stdint.h>

#define TOOL_MASKS_HELP                                                        \
    "Named masks (--kernel NAME), built for the input's filtered rank d:\n"   \
    "  box:N          N^d ones / N^d (d = 1..3)\n"                            \
    "  gaussian:S     outer product of the 1D mask of\n"                      \
    "                 scipy.ndimage.gaussian_filter(sigma=S): radius\n"       \
    "                 int(4*S + 0.5), exp(-x^2 / (2 S^2)), normalised (d = 1..3)\n" \
    "  sobel-x        [[-1,0,1],[-2,0,2],[-1,0,1]] (d = 2; correlating with it\n" \
    "                 is scipy.ndimage.sobel(axis=-1): use --correlate)\n"     \
    "  sobel-y        [[-1,-2,-1],[0,0,0],[1,2,1]] (d = 2; sobel(axis=0))\n"  \
    "  laplace        [1,-2,1]; [[0,1,0],[1,-4,1],[0,1,0]]; 3D 7-point\n"     \
    "                 stencil with -6 in the centre (d = 1..3)\n"             \
    "  sharpen        [[0,-1,0],[-1,5,-1],[0,-1,0]] (d = 2)\n"

/* True when spec names a mask ("box:3", "sobel-x", ...), well-formed or not. */
int tool_mask_is_named(const char *spec);

/* Builds the named mask for rank d (1..3) into a new array of doubles
 * (*data, free()) of shape[0..d). Returns 0; 2 for a malformed spec; 1 when
 * the mask does not exist for rank d or is too large. err gets one line. */
int tool_mask_build(const char *spec, int d, double **data, int64_t shape[3],
                    char *err, size_t errlen);

#endif /* TC_TOOLS_MASKS_H */
