/* status.c - status strings and the thread-local last-error message. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char tc__last_error[512];

const char *tc_status_string(tc_status status) {
    switch (status) {
#define TC__STATUS_CASE(name, value, text) \
    case name: return text;
        TC_STATUS_LIST(TC__STATUS_CASE)
#undef TC__STATUS_CASE
    }
    return "unknown status";
}

const char *tc_last_error(void) { return tc__last_error; }

tc_status tc__error(tc_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tc__last_error, sizeof tc__last_error, fmt, ap);
    va_end(ap);
    return status;
}

void tc__error_clear(void) { tc__last_error[0] = '\0'; }

const char *tc_version(void) { return "0.1.0"; }

size_t tc_dtype_size(tc_dtype dtype) {
    switch (dtype) {
    case TC_FLOAT32: return 4;
    case TC_FLOAT64: return 8;
    case TC_FLOAT16:
    case TC_BFLOAT16: return 2;
    }
    return 0;
}

const char *tc_dtype_name(tc_dtype dtype) {
    switch (dtype) {
    case TC_FLOAT32: return "float32";
    case TC_FLOAT64: return "float64";
    case TC_FLOAT16: return "float16";
    case TC_BFLOAT16: return "bfloat16";
    }
    return NULL;
}

tc_status tc_dtype_parse(const char *name, tc_dtype *dtype) {
    static const struct { const char *name; tc_dtype dt; } table[] = {
        {"float32", TC_FLOAT32}, {"f32", TC_FLOAT32},  {"float", TC_FLOAT32},
        {"float64", TC_FLOAT64}, {"f64", TC_FLOAT64},  {"double", TC_FLOAT64},
        {"float16", TC_FLOAT16}, {"f16", TC_FLOAT16},  {"half", TC_FLOAT16},
        {"bfloat16", TC_BFLOAT16}, {"bf16", TC_BFLOAT16},
    };
    if (!name || !dtype) return tc__error(TC_ERR_INVALID_ARGUMENT, "dtype: NULL argument");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) {
            *dtype = table[i].dt;
            return TC_OK;
        }
    return tc__error(TC_ERR_INVALID_ARGUMENT,
                     "dtype: '%s' is not one of float32, float64, float16, bfloat16", name);
}

static const char *const tc__act_names[] = {"none", "relu", "relu6", "silu",
                                            "sigmoid", "tanh", "gelu"};

const char *tc_activation_name(tc_activation act) {
    if ((unsigned)act > TC_ACT_GELU) return NULL;
    return tc__act_names[act];
}

tc_status tc_activation_parse(const char *name, tc_activation *act) {
    if (!name || !act) return tc__error(TC_ERR_INVALID_ARGUMENT, "activation: NULL argument");
    for (int i = 0; i <= (int)TC_ACT_GELU; i++)
        if (strcmp(name, tc__act_names[i]) == 0) {
            *act = (tc_activation)i;
            return TC_OK;
        }
    return tc__error(TC_ERR_INVALID_ARGUMENT,
                     "activation: '%s' is not one of none, relu, relu6, silu, sigmoid, "
                     "tanh, gelu", name);
}

const char *tc_layout_name(tc_layout layout) {
    switch (layout) {
    case TC_LAYOUT_CHANNELS_FIRST: return "channels_first";
    case TC_LAYOUT_CHANNELS_LAST: return "channels_last";
    }
    return NULL;
}

static const char *const tc__mode_names[] = {"constant", "nearest", "reflect",
                                             "mirror", "wrap"};

const char *tc_mode_name(tc_mode mode) {
    if ((unsigned)mode > TC_MODE_WRAP) return NULL;
    return tc__mode_names[mode];
}

tc_status tc_mode_parse(const char *name, tc_mode *mode) {
    static const struct { const char *name; tc_mode mode; } table[] = {
        {"constant", TC_MODE_CONSTANT}, {"grid-constant", TC_MODE_CONSTANT},
        {"nearest", TC_MODE_NEAREST},   {"reflect", TC_MODE_REFLECT},
        {"grid-mirror", TC_MODE_REFLECT}, {"mirror", TC_MODE_MIRROR},
        {"wrap", TC_MODE_WRAP},         {"grid-wrap", TC_MODE_WRAP},
    };
    if (!name || !mode)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "mode: NULL argument");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) {
            *mode = table[i].mode;
            return TC_OK;
        }
    return tc__error(TC_ERR_INVALID_ARGUMENT,
                     "mode: '%s' is not one of constant, nearest, reflect, "
                     "mirror, wrap", name);
}

const char *tc_backend_name(tc_backend backend) {
    switch (backend) {
    case TC_BACKEND_AUTO: return "auto";
    case TC_BACKEND_CPU: return "cpu";
    case TC_BACKEND_CUDA: return "cuda";
    }
    return NULL;
}

tc_status tc_backend_parse(const char *name, tc_backend *backend) {
    if (!name || !backend)
        return tc__error(TC_ERR_INVALID_ARGUMENT, "backend: NULL argument");
    for (int b = TC_BACKEND_AUTO; b <= TC_BACKEND_CUDA; b++)
        if (strcmp(name, tc_backend_name((tc_backend)b)) == 0) {
            *backend = (tc_backend)b;
            return TC_OK;
        }
    return tc__error(TC_ERR_INVALID_ARGUMENT,
                     "backend: '%s' is not one of auto, cpu, cuda", name);
}
