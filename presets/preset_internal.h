/* Private to presets/: what builtin.c, parse.c, gpu.c, model.c and hosts.c
 * share. */
#ifndef WATTLAS_PRESET_INTERNAL_H
#define WATTLAS_PRESET_INTERNAL_H

#include "wattlas_presets.h"

/* builtin.c: a kind's folder under presets/ ("gpus") and the word messages
 * use ("GPU"). */
const char *wl_preset_i_kind_dir(wl_preset_kind k);
const char *wl_preset_i_kind_word(wl_preset_kind k);

/* The parse context of GPU and model presets (gpu.c, model.c; parse.c the
 * helpers below). */
/* A list value, joined from the lines it spans ("a, b,\n    c" is a, b, c;
 * lines that end without a comma are joined with one), parsed when the file
 * has been read so that a trailing empty item is an error. */
typedef struct {
    char *text;
    int line; /* of the key */
} list_text;

typedef struct {
    const char *source;
    wl_core_gpu *gpu;
    wl_core_model *model;
    unsigned char seen[128];
    int seen_line[128];
    list_text list[3]; /* GPU: clock_mhz, voltage_mv, idle_power_w; model: blocks */
    wl_error *err;
    int n_cal;               /* fitted [calibration] values seen */
    char transfer_from[128]; /* [calibration] transfer_from */
    int transfer_line;
    /* [calibration]'s record of the fit: fitted_rows, data_hash, held_out_rows */
    char fit_rows[24], fit_hash[96], fit_held[24];
    /* [calibrated_spec]: the spec the coefficients belong to */
    struct {
        size_t field;
        double v;
        int line;
    } cs[128];
    size_t ncs;
    char cs_dram[16];
    int cs_line; /* first key's line (0: no section) */
} wl_preset_ctx;
typedef wl_preset_ctx ctx;

/* [calibration], [vf] and [model] keys kept as text only */
int wl_preset_i_is_info(const char *name);
/* Sets the context's error (source, line, field) and returns 0, inih's
 * "stop". */
int wl_preset_i_fail(ctx *c, int line, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int wl_preset_i_list_append(ctx *c, int which, const char *value, int line);
void wl_preset_i_lists_free(ctx *c);

#endif
