/* Sweeps: the evaluation core over cartesian grids of GPUs, hypothetical GPU
 * variants (set axes), models or traces, shapes, precisions, voltages and
 * clocks, evaluated in parallel and streamed in a deterministic order. A
 * single prediction (wattlas predict) is the smallest sweep: one code path
 * and one set of columns for both. */
#ifndef WATTLAS_SWEEP_H
#define WATTLAS_SWEEP_H

#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include "../core/wattlas_core.h"
#include "../results/wattlas_results.h"
#include "../calib/wattlas_calib.h"
#include "../learn/wattlas_learn.h"
#include "../pareto/wattlas_pareto.h"

/* Whole forward passes, one transformer layer, or (kernel) whole passes
 * with one row per kernel class (as classes = on gives for any scope). */
/* layer: the block called alone; layer-in-model: as it runs in the model's
 * forward (wl_core_build_layer, wl_core_build_layer_in_model) */
typedef enum { WL_SWEEP_MODEL = 0, WL_SWEEP_LAYER, WL_SWEEP_KERNEL, WL_SWEEP_LAYER_IN_MODEL } wl_sweep_scope;
/* The core's scope of a sweep's. */
wl_core_scope wl_sweep_core_scope(wl_sweep_scope s);

/* A grid: every axis is a list. Owns its memory. */
typedef struct wl_sweep_spec wl_sweep_spec;

wl_sweep_spec *wl_sweep_spec_create(void);
void wl_sweep_spec_free(wl_sweep_spec *s);
/* Sets one axis or option from text, as a command line or a spec file gives
 * it (the grammar of wattlas_core.h; source and line name the origin, which
 * every later error about these values names too):
 *   gpu, model, trace, idle ([ID=]TABLE.csv): lists of names or paths
 *   host: one host preset (id or file) for every GPU, in place of theirs
 *   batch, seq: integer lists; dtype, attention, mode (prefill, train,
 *     decode): lists of names
 *   optimizer (adamw|sgd|none), master_dtype (fp32|none), recompute
 *     (none|selective|full), grad_accum (micro-batches per step), gen
 *     (tokens generated, default 128), launch (eager|graphs): one value each,
 *     for the modes they apply to
 *   clock (MHz; "max": each GPU's maximum; each GPU sweeps the clocks
 *     within its own range, by default its own grid), voltage_offset_mv,
 *     voltage_mv (a fixed voltage instead of the V-f curve): lists, ranges
 *   set.KEY: a numeric GPU preset field (or key "set" with value KEY=LIST)
 *   scope: model|layer|kernel; classes: on|off (a row per kernel class:
 *     launches, busy time and energy of each); latency: tiled|roofline;
 *   power_limit: on|off; interval: a level (0.95 or 95), adds the
 *     prediction-interval columns; board: other (the default: the
 *     intervals add the spread between boards and hosts of one product)
 *     or same (the preset carries the very board predicted)
 * Values given again from the same origin are appended to the axis; from
 * another origin they replace it (command-line options after --spec win). */
int wl_sweep_spec_set(wl_sweep_spec *s, const char *key, const char *value, const char *source,
                      int line, wl_error *err);
/* Reads an INI spec: [sweep] with the keys above, [set] with FIELD = LIST,
 * and [report] (title, objective) kept for wl_sweep_spec_report. */
int wl_sweep_spec_load(wl_sweep_spec *s, const char *path, wl_error *err);
int wl_sweep_spec_parse(wl_sweep_spec *s, const char *text, size_t len, const char *source,
                        wl_error *err);
/* A [report] value of the spec ("title", "objective"), or NULL. */
const char *wl_sweep_spec_report(const wl_sweep_spec *s, const char *key);
/* Fills defaults for unset axes, resolves presets, checks every GPU variant;
 * must be called before running. Errors name the origin of the values. */
int wl_sweep_spec_finish(wl_sweep_spec *s, wl_error *err);
/* Points in the grid (rows for scopes model/layer). */
unsigned long long wl_sweep_spec_points(const wl_sweep_spec *s);
/* Distinct values of a parameter axis after finish ("gpu", "model", "seq",
 * "set.KEY", ...): 0 for an unknown axis. */
size_t wl_sweep_spec_axis_count(const wl_sweep_spec *s, const char *axis);
/* How many requested clocks the i-th GPU leaves out, being outside its
 * range (each GPU sweeps the requested clocks within its own range; without
 * a request, its own grid). */
size_t wl_sweep_spec_clipped(const wl_sweep_spec *s, size_t i);
/* One prediction's rule (wattlas predict, Python's predict): every
 * requested clock within the first GPU's range, where its V-f curve is
 * defined, unless the voltage is fixed. source names the clocks' origin. */
int wl_sweep_spec_check_clocks(const wl_sweep_spec *s, const char *source, wl_error *err);
/* The clock axis after finish (the requested clocks, or the first GPU's). */
const double *wl_sweep_spec_clocks(const wl_sweep_spec *s, size_t *n);
/* Warnings a finished spec has for its user (a context past a model's
 * learned positions): how many, and the i-th text (NULL past the last). */
size_t wl_sweep_spec_warning_count(const wl_sweep_spec *s);
const char *wl_sweep_spec_warning(const wl_sweep_spec *s, size_t i);
/* Notes for the user (what a profile's import kept at measured times):
 * how many, and the i-th text (NULL past the last). */
size_t wl_sweep_spec_note_count(const wl_sweep_spec *s);
const char *wl_sweep_spec_note(const wl_sweep_spec *s, size_t i);
/* The i-th GPU of the gpu axis as resolved (idle tables applied, no set
 * values), or NULL. */
const wl_core_gpu *wl_sweep_spec_gpu(const wl_sweep_spec *s, size_t i);
/* The interval level (0: none) and the i-th GPU's calibration uncertainty
 * behind it (NULL without an interval). */
double wl_sweep_spec_level(const wl_sweep_spec *s);
/* Whether the spec's modes include m. */
int wl_sweep_spec_has_mode(const wl_sweep_spec *s, wl_mode m);
const wl_calib_uncertainty *wl_sweep_spec_uncertainty(const wl_sweep_spec *s, size_t i);
/* The workload of the first shape (first model or trace, batch, seq,
 * dtype, attention, mode) and what names it. *wl lives as long as the
 * spec; the caller frees *owned afterwards (a built model; NULL for a
 * trace, the spec's own: a 2M-kernel trace is not held twice). */
typedef struct {
    char model[256];
    long long batch, seq; /* 0: not applicable (traces; seq of vision models) */
    wl_dtype dtype;
    wl_attention attention;
    int traced;
    wl_core_memory memory; /* its footprint (total_gb NaN for a trace) */
    wl_core_shape shape;   /* the whole shape, mode and its options (zero for a trace) */
    int fits;              /* on the first GPU: 1, 0, or -1 unknown */
    long long max_batch;   /* when it does not fit (fits 0): the largest batch
                              of this shape that fits the first GPU (0: none);
                              -1 otherwise */
} wl_sweep_shape_id;
int wl_sweep_spec_workload(const wl_sweep_spec *s, const wl_core_workload **wl,
                           wl_core_workload **owned, wl_sweep_shape_id *id, wl_error *err);
/* The spec's learned model (key 'learned') as it applies to the first
 * combination's workload (as wl_sweep_spec_workload's): 1 and *u filled,
 * or 0 when the spec has none. u borrows from the spec. */
int wl_sweep_spec_learned(const wl_sweep_spec *s, wl_learn_use *u);

typedef struct {
    wl_results_format format;
    int threads;          /* 0: OpenMP default */
    unsigned shard_index; /* 1..shard_count: this slice; 0: not sharded */
    unsigned shard_count;
    /* called in output order after each chunk of rows (progress bars,
     * interruption by callers); may be NULL */
    void (*progress)(void *user, unsigned long long done, unsigned long long total);
    void *progress_user;
    /* table: no '#' line naming the parameters that do not vary (a caller
     * that writes its own title: predict) */
    int no_constants_line;
} wl_sweep_options;

/* What a run (or a chunk of it) evaluated: its points, how many of them
 * the power limit throttled, how many need more memory than their GPU has,
 * and the first point of least energy among those that fit. */
typedef struct {
    unsigned long long points, throttled, unfit;
    unsigned long long learned_outside; /* points outside a learned model's
                                           training domain (--learned) */
    double best_energy_j, best_time_ms, best_clock_mhz; /* NaN: none */
    int cut;                            /* a chunk a stop ended early: its rows
                                           are the points it finished */
} wl_sweep_tally;
void wl_sweep_tally_init(wl_sweep_tally *t);
void wl_sweep_tally_add(wl_sweep_tally *t, const wl_sweep_tally *part);

typedef struct {
    unsigned long long points; /* evaluated and written */
    unsigned long long rows;   /* written */
    double seconds;
    int interrupted;
    int write_failed; /* out reported an error (ferror): the run stopped
                         there; the caller's fclose or commit says why */
    wl_sweep_tally tally;
} wl_sweep_stats;

/* Writes the header and rows to out. Stops cleanly between chunks of rows
 * when *stop becomes nonzero (rows written so far stay whole), and when out
 * reports a write error (a full disk costs no more evaluation). A sharded
 * run (csv or ndjson only) starts with a '#' line that wl_sweep_merge
 * checks: the sweep's fingerprint, the shard, its points and rows. */
int wl_sweep_run(const wl_sweep_spec *s, const wl_sweep_options *o, FILE *out,
                 volatile sig_atomic_t *stop, wl_sweep_stats *stats, wl_error *err);
/* The same run (o's format is ignored: CSV) as an in-memory table, for
 * callers that read results back rather than print them (the table's source
 * is `source`). */
int wl_sweep_run_table(const wl_sweep_spec *s, const wl_sweep_options *o, const char *source,
                       wl_results_table **out, wl_sweep_stats *stats, wl_error *err);

/* The pieces of a run, for drivers that distribute chunks (wattlas-mpi):
 * chunk i (0 <= i < count) formats its rows into b, from any thread. The
 * rows of all chunks in order, after the header, are the run's output. */
typedef struct wl_sweep_plan wl_sweep_plan;
int wl_sweep_plan_create(const wl_sweep_spec *s, const wl_sweep_options *o,
                         wl_sweep_plan **out, wl_error *err);
void wl_sweep_plan_free(wl_sweep_plan *p);
unsigned long long wl_sweep_plan_chunks(const wl_sweep_plan *p);
unsigned long long wl_sweep_plan_points(const wl_sweep_plan *p);
/* Memory a thread keeps between its chunks (curves shared by GPU variants
 * that differ only in their power limit); a chunk works without it too. */
typedef struct wl_sweep_scratch wl_sweep_scratch;
wl_sweep_scratch *wl_sweep_scratch_create(void);
void wl_sweep_scratch_free(wl_sweep_scratch *sc);
/* One scratch per thread the options ask for (OpenMP's default when
 * threads is 0; 1 without OpenMP), counted in *threads. NULL, or NULL
 * entries, when out of memory: chunks are then only slower. */
wl_sweep_scratch **wl_sweep_scratch_pool(const wl_sweep_options *o, int *threads);
void wl_sweep_scratch_pool_free(wl_sweep_scratch **pool, int threads);
/* The flag a plan's chunks poll between points (NULL: the process's alone,
 * wl_stop_requested): a stop ends a chunk at the point it reached, its
 * tally's cut set. */
void wl_sweep_plan_set_stop(wl_sweep_plan *p, volatile sig_atomic_t *stop);
int wl_sweep_plan_chunk(const wl_sweep_plan *p, unsigned long long i, wl_sweep_scratch *sc,
                        wl_results_buf *b, wl_sweep_tally *tally, wl_error *err);
/* The writer the plan formats with (header, emit, finish). */
wl_results_writer *wl_sweep_plan_writer(wl_sweep_plan *p);
/* Writes the plan's preamble (a shard's '#' line) and header to out. */
void wl_sweep_plan_begin(wl_sweep_plan *p, FILE *out);
/* Closes the output (a JSON array's bracket) after the last rows. */
void wl_sweep_plan_finish(wl_sweep_plan *p);

#ifdef WL_MPI
#include <mpi.h>
/* wl_sweep_run over the ranks of comm (every rank calls it with the same
 * spec and options; only rank 0's out is written): chunks are dealt in
 * blocks, round robin, evaluated with each rank's threads and written by
 * rank 0 in order, so the output is the one-process run's byte for byte.
 * stop is read on rank 0; stats are rank 0's. Built by make mpi. */
int wl_sweep_run_mpi(const wl_sweep_spec *s, const wl_sweep_options *o, MPI_Comm comm, FILE *out,
                     volatile sig_atomic_t *stop, wl_sweep_stats *stats, wl_error *err);
#endif

/* The first line of a shard's output, which wl_sweep_merge checks: any
 * command that writes contiguous slices of a deterministic list of rows
 * (sweep, cluster search) shards with it. fingerprint: a hash of all that
 * decides the rows (wl_sweep_hash, FNV-1a 64 chained from
 * WL_SWEEP_HASH_BASIS). */
#define WL_SWEEP_HASH_BASIS 1469598103934665603ULL
uint64_t wl_sweep_hash(uint64_t h, const void *data, size_t n);
void wl_sweep_shard_line(FILE *out, unsigned index, unsigned count, uint64_t fingerprint,
                         unsigned long long lo, unsigned long long hi, unsigned long long total,
                         unsigned long long rows, wl_results_format format);
/* A shard's last line, after its rows: their count and the FNV-1a 64 of
 * their bytes (wl_results_writer_hash_rows), so that merge refuses a row
 * altered, swapped or dropped inside a shard. Written only when rows is
 * the shard line's count: a stopped run's FILE.partial has none. */
void wl_sweep_shard_end(FILE *out, unsigned long long rows, uint64_t hash);

/* Joins shard outputs (given in any order) into out: the result is
 * byte-identical to the unsharded run. Every shard of one sweep must be
 * there exactly once and complete; anything else is an error naming the
 * file. */
int wl_sweep_merge(const char *const *paths, int n, FILE *out, wl_error *err);
/* "I/N": the I-th of N slices, 1 <= I <= N <= 1000000 (field "shard"). */
int wl_sweep_shard_parse(const char *s, unsigned *index, unsigned *count, wl_error *err);

/* One workload (the spec's first) on each of its GPUs, as `wattlas
 * compare` prints it: a '#' note naming the workload and the objective
 * (tables), then a row per GPU (wl_pareto_compare_cols: its point at
 * clock_mhz, 0 the maximum, at its maximum clock, and at the clock of its
 * grid obj chooses). A GPU that cannot run the case gets a row saying why.
 * note (may be NULL) hears what a user should know: a GPU that cannot run
 * it (warning 0), points outside a learned model's domain and a workload
 * that does not fit (warning 1). *runnable: the GPUs that could. */
typedef void (*wl_sweep_note_fn)(void *user, int warning, const char *text);

/* wattlas energy-check: per GPU of gpu_ids (a comma list: every one checked
 * before a row is written) and precision (dtypes: a comma list,
 * NULL every one it has), the board's pJ per FLOP at peak against the
 * arithmetic's and the operands' first-principles figures and the model's
 * own at a large GEMM; rows after a '#' note, in the columns of
 * wl_sweep_energy_check_cols (at most WL_SWEEP_ENERGY_CHECK_COLS). An
 * unknown or absent precision is WL_EINVAL with field "dtype"; nothing is
 * written then. */
#define WL_SWEEP_ENERGY_CHECK_COLS 24
size_t wl_sweep_energy_check_cols(wl_results_col *cols);
int wl_sweep_energy_check(const char *gpu_ids, const char *dtypes, wl_results_writer *w,
                          wl_error *err);
int wl_sweep_compare(const wl_sweep_spec *s, double clock_mhz, const wl_pareto_objective *obj,
                     wl_results_writer *w, wl_sweep_note_fn note, void *user, size_t *runnable,
                     wl_error *err);

#endif
