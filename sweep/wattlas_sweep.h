/* Sweeps: the evaluation core over cartesian grids of GPUs, hypothetical GPU
 * variants (--set), models, shapes, precisions, clocks and voltage offsets,
 * evaluated in parallel and streamed in a deterministic order. */
#ifndef WATTLAS_SWEEP_H
#define WATTLAS_SWEEP_H

#include <signal.h>
#include <stdio.h>
#include "../core/wattlas_core.h"

typedef enum { WL_SWEEP_MODEL = 0, WL_SWEEP_LAYER, WL_SWEEP_KERNEL } wl_sweep_scope;
typedef enum { WL_SWEEP_CSV = 0, WL_SWEEP_NDJSON } wl_sweep_format;

/* A grid: every axis is a list. Owns its memory. */
typedef struct wl_sweep_spec wl_sweep_spec;

wl_sweep_spec *wl_sweep_spec_create(void);
void wl_sweep_spec_free(wl_sweep_spec *s);
/* Sets one axis from text, as on the command line or in a spec file:
 *   gpu, model, trace, batch, seq, dtype, attention: comma-separated lists
 *   clock: MIN:MAX:STEP or a list (MHz); voltage_offset_mv: a list
 *   scope: model|layer|kernel
 *   set.KEY (or "set" with KEY=LIST): a numeric GPU preset field
 * source/line name the origin for errors. */
int wl_sweep_spec_set(wl_sweep_spec *s, const char *key, const char *value, const char *source,
                      int line, wl_error *err);
/* Reads an INI spec: [sweep] with the keys above, [set] with FIELD = LIST. */
int wl_sweep_spec_load(wl_sweep_spec *s, const char *path, wl_error *err);
/* Fills defaults for unset axes, resolves presets, checks every GPU variant;
 * must be called before running. */
int wl_sweep_spec_finish(wl_sweep_spec *s, wl_error *err);
/* Points in the grid (rows for scopes model/layer). */
unsigned long long wl_sweep_spec_points(const wl_sweep_spec *s);

typedef struct {
    wl_sweep_format format;
    int threads;          /* 0: OpenMP default */
    unsigned shard_index; /* evaluate slice shard_index of shard_count */
    unsigned shard_count; /* 1: everything */
    int progress;         /* draw a progress bar on stderr */
} wl_sweep_options;

typedef struct {
    unsigned long long points; /* evaluated */
    unsigned long long rows;   /* written */
    double seconds;
    int interrupted;
} wl_sweep_stats;

/* Writes the header and rows to out. Stops cleanly between rows when *stop
 * becomes nonzero (rows written so far stay whole). */
int wl_sweep_run(const wl_sweep_spec *s, const wl_sweep_options *o, FILE *out,
                 volatile sig_atomic_t *stop, wl_sweep_stats *stats, wl_error *err);

/* Joins shard outputs (CSV or NDJSON, in shard order) into out; the result
 * is byte-identical to the unsharded run. */
int wl_sweep_merge(const char *const *paths, int n, FILE *out, wl_error *err);

#endif
