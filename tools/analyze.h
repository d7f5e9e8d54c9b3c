/*
 * analyze.h - `tileconv analyze`: the tiled-convolution bandwidth analysis
 * of the seeds (PMPP convolution chapter, ECE408 lecture 9, the 3D report),
 * with every count obtained by simulating the tile loads, next to the
 * closed-form formulas and the seeds' printed numbers.
 */
#ifndef TC_TOOLS_ANALYZE_H
#define TC_TOOLS_ANALYZE_H

/* CLI entry point; argv[0] is "analyze". Returns 0 on success, 1 on a
 * runtime failure (cannot write the JSON file, measurement failed), 2 on a
 * usage error (one line "tileconv: ..." on stderr). */
int tc_tool_analyze(int argc, char **argv);
/* `tileconv analyze --layers ...` (analyze_layers.c): conv-layer costs. */
int tc_tool_analyze_layers(int argc, char **argv);
/* `tileconv analyze --gpu-tiles ...` (analyze_gpu.c): the seeds' tile
 * arithmetic for the tiles the GPU kernels use, beside measured times. */
int tc_tool_analyze_gpu(int argc, char **argv);

/* ==== GPU HOOK ====
 * Adds a GPU to the "reuse needed" and "fraction of peak" tables: name,
 * nominal FP32 FLOP/s (FMA = 2) and memory bandwidth in bytes/s. Call it
 * before tc_tool_analyze (or from an_gpu_hook in analyze.c) once a CUDA
 * backend can report these; at most 8 GPUs are kept. Returns 0, or -1 when
 * the list is full or an argument is invalid. */
int tc_tool_analyze_add_gpu(const char *name, double flops, double bytes_per_s);

#endif /* TC_TOOLS_ANALYZE_H */
