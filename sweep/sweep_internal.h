/* Private to sweep/: the spec's state (spec.c builds it, spec_finish.c
 * finishes it) and the enumeration of its points, which the plans
 * (sweep.c), merging (merge.c) and compare (compare.c) share. */
#ifndef WATTLAS_SWEEP_INTERNAL_H
#define WATTLAS_SWEEP_INTERNAL_H

#include "wattlas_sweep.h"
#include "../learn/wattlas_learn.h"
#include "../calib/wattlas_calib.h"

#define MAX_SET 16

/* The first line of a shard file: wl_sweep_shard_line writes it, merge
 * reads it back. */
#define SHARD_TAG "# wattlas-shard"

/* Where an axis's values came from: errors about them name it. */
typedef struct {
    char source[256];
    int line;
    int given;
} origin;

typedef struct {
    char key[64];
    wl_core_numlist vals;
    origin o;
} set_axis;

struct wl_sweep_spec {
    wl_core_strlist gpus, models, traces, idle, host;
    wl_core_numlist batch, seq, clocks, voff, vfix;
    wl_dtype *dtypes;
    size_t ndt;
    wl_attention *attn;
    size_t nattn;
    wl_mode *modes;
    size_t nmode;
    origin o_mode, o_train;
    wl_core_shape opts;     /* the training and decode options (mode unused) */
    origin o_gpu, o_model, o_trace, o_idle, o_host, o_batch, o_seq, o_dtype, o_attn, o_clock, o_voff,
        o_vfix;
    set_axis set[MAX_SET];
    size_t nset;
    wl_sweep_scope scope;
    int classes; /* a row per kernel class */
    int clock_max; /* clock = max */
    const wl_core_latency_type *lat;
    int no_power_limit;
    int one_board; /* compare --same-board: the first GPU's board on every
                      GPU (its coefficients transferred, its V-f and idle
                      curves on its own die) */
    double level; /* prediction intervals, 0: none */
    int same_board; /* the intervals are for the board the presets carry:
                       no spread between boards */
    origin o_level;
    wl_core_recorded recorded; /* what every traced profile ran at, when its
                                  file does not say (profile_clock,
                                  profile_power_limit_w) */
    origin o_rclock, o_rlimit, o_rgpu, o_rstep;
    char report_title[256], report_objective[64];
    /* resolved by finish */
    int finished;
    wl_core_gpu *gpu;            /* one per gpus entry */
    wl_calib_uncertainty *unc;   /* one per gpus entry when level > 0 */
    wl_learn_model *learned;     /* --learned: applied to every point */
    origin o_learned;
    uint64_t learned_hash;       /* of the model file, for shard fingerprints */
    wl_core_numlist *gclk;       /* each GPU's clocks: its own grid, its own
                                    maximum, or the requested ones in its range */
    size_t *clipped;             /* requested clocks outside each GPU's range */
    size_t maxclk;               /* the longest of them: the clock axis stride */
    wl_core_model *model;        /* one per models entry */
    wl_core_strlist warnings;    /* what a caller should tell its user */
    wl_core_strlist notes;       /* ... and what it may (--quiet silences) */
    wl_core_workload **trace_wl; /* one per traces entry, as recorded */
    wl_dtype *trace_dt;          /* their recorded precision */
    size_t n_workloads;          /* models or traces */
};


typedef struct {
    size_t gpu, wl, b, sq, dt, at, md;
    unsigned long long variant;
    size_t setidx[MAX_SET];
} combo;

/* spec_gpus.c: GPU variant v of GPU gi (its --set values applied) */
int wl_sweep_i_variant_gpu(const wl_sweep_spec *s, size_t gi, unsigned long long v, wl_core_gpu *g, wl_error *err);
/* The number of GPU variants a --set grid makes (its values' product). */
unsigned long long wl_sweep_i_n_variants(const wl_sweep_spec *s);
/* Appends a copy of text to a list of notes or warnings. */
int wl_sweep_i_add_text(wl_core_strlist *l, const char *text);
/* Every GPU variant checked, with a note when a spec key moved calibrated
 * coefficients; GPU i, when an edited copy of a built-in preset, renamed
 * with a note. */
int wl_sweep_i_check_variants(wl_sweep_spec *s, wl_error *err);
int wl_sweep_i_name_edited_copy(wl_sweep_spec *s, size_t i);

/* spec.c: the enumeration of the grid (the voltages swept, the points of
 * one outer combination, combinations decoded from their index) */
const wl_core_numlist *wl_sweep_i_volts(const wl_sweep_spec *s);
unsigned long long wl_sweep_i_n_inner(const wl_sweep_spec *s);
/* Outer combinations per GPU: variants x workloads x shapes (the GPU is the
 * outermost index, the shape the innermost). */
unsigned long long wl_sweep_i_n_outer_per_gpu(const wl_sweep_spec *s);
void wl_sweep_i_decode(const wl_sweep_spec *s, unsigned long long o, combo *c);

/* combo.c: a combination as a case */
const char *wl_sweep_i_workload_name(const wl_sweep_spec *s, const combo *c);
wl_dtype wl_sweep_i_combo_dtype(const wl_sweep_spec *s, const combo *c);
/* The mode a row is: the spec's, or what a trace ran (train when it has a
 * backward pass; decode when the harness's name says so). */
wl_mode wl_sweep_i_combo_mode(const wl_sweep_spec *s, const combo *c);
void wl_sweep_i_combo_shape(const wl_sweep_spec *s, const combo *c, wl_core_shape *sh);
/* Its workload: a trace as recorded (*own 0) or built (*own 1). */
int wl_sweep_i_shape_workload(const wl_sweep_spec *s, const combo *c, wl_core_workload **wl,
                              int *own, wl_error *err);
void wl_sweep_i_combo_memory(const wl_sweep_spec *s, const combo *c, const wl_core_gpu *g,
                             wl_core_memory *mem, int *fits);
void wl_sweep_i_learned_use(const wl_sweep_spec *s, const combo *c, wl_learn_use *u);

/* scratch.c: what a thread keeps across chunks. A curve: the results of one
 * governor-free GPU variant and shape at every voltage and clock. */
typedef struct {
    int used;
    unsigned long long stamp;
    wl_core_gpu key;          /* the variant with its governor fields zeroed */
    size_t wl, b, sq, dt, at; /* the shape */
    size_t n;                 /* voltages x clocks */
    wl_core_result *res;
    unsigned char *have;
} curve;
curve *wl_sweep_i_curve_for(wl_sweep_scratch *sc, const wl_core_gpu *g, int anchored, size_t wl,
                             size_t b, size_t sq, size_t dt, size_t at, size_t n);
int wl_sweep_i_scratch_workload(wl_sweep_scratch *sc, const wl_sweep_spec *s, const combo *c,
                                size_t ak, wl_core_workload **wl, int *own, wl_error *err);
/* The thread's kept targets of held kernels (wl_core_throttle_cache's);
 * NULL without scratch or memory. */
wl_core_targets *wl_sweep_i_scratch_targets(wl_sweep_scratch *sc);

#endif
