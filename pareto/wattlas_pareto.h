/* Energy-runtime Pareto fronts and operating-point selection. */
#ifndef WATTLAS_PARETO_H
#define WATTLAS_PARETO_H

#include <stddef.h>
#include <stdio.h>
#include "../core/wattlas_core.h"
#include "../results/wattlas_results.h"
#include "../calib/wattlas_calib.h"
#include "../learn/wattlas_learn.h"

/* Non-dominated points of n points with k objectives (all minimised), given
 * row-major in pts (n x k). on_front[i] = 1 for points no other point
 * dominates (a dominates b: a <= b everywhere and a < b somewhere; equal
 * points do not dominate each other). O(n log n) for k = 2 and 3 (sort and
 * sweep with a staircase), sort-filter-skyline for k >= 4. NaN objectives
 * are never on the front. */
int wl_pareto_front(const double *pts, size_t n, int k, unsigned char *on_front);

/* Objectives for picking one point: a const type object looked up by name,
 * e.g. "energy", "edp", "ed2p", "energy-within-slowdown=5",
 * "time-within-power=250". */
typedef struct wl_pareto_objective_type wl_pareto_objective_type;
typedef struct {
    const wl_pareto_objective_type *type;
    double param; /* slowdown percent or power watts */
    char text[64];
} wl_pareto_objective;

int wl_pareto_objective_parse(const char *text, wl_pareto_objective *out, wl_error *err);
const char *wl_pareto_objective_name(const wl_pareto_objective *o);

/* Index of the chosen point among n (time, power, energy), or -1 when no
 * point qualifies (e.g. every point above the power cap). Ties go to the
 * faster point. */
long wl_pareto_choose(const wl_pareto_objective *o, const double *time_ms,
                      const double *power_w, const double *energy_j, size_t n);

/* Per-kernel-class clock schedule: nc classes, nk candidate clocks each,
 * class c at clock k takes t[c*nk+k] ms and e[c*nk+k] J. Switching the
 * clock costs switch_us (at switch_w watts) each time a launch runs at a
 * clock other than the schedule's base clock (the clock of the class with
 * the most time), twice per launch (there and back) -- a conservative count.
 * Minimises energy with total time <= budget_ms (Lagrangian relaxation over
 * the time constraint, each class then independent). choice gets the clock
 * index per class. Returns WL_ENOTFOUND when no schedule meets the budget. */
typedef struct {
    double time_ms, energy_j;
    double switches;
} wl_pareto_schedule_result;

int wl_pareto_schedule(int nc, int nk, const double *t, const double *e, const double *launches,
                       double switch_us, double switch_w, double budget_ms, int *choice,
                       wl_pareto_schedule_result *res);

/* ---- sets of operating points from sweep tables ------------------------------- */

/* Rows of a sweep CSV grouped by their parameter columns, with numeric value
 * columns read as checked numbers (an empty cell is NaN: not evaluated,
 * never chosen; text, NaN, infinity, a magnitude beyond 1e15 or a negative
 * time, energy, power or clock is an error naming file, line and column). */
typedef struct wl_pareto_set wl_pareto_set;
typedef struct {
    const char *const *values; /* value columns, all required ... */
    size_t nvalues;
    int optional_values;       /* ... unless set: a missing one is NaN in every row */
    const char *group_by;      /* comma-separated columns; NULL: the sweep's
                                  parameter columns (those before the voltage
                                  and clock columns) plus kernel_class */
    int through_voltage;       /* default groups end at sm_clock_mhz instead */
    int voltage_groups;        /* default groups also hold the voltage columns
                                  (voltage_offset_mv, fixed_voltage_mv): each
                                  voltage is a case of its own, as optimize
                                  needs, whose savings compare rows at one
                                  voltage (kernel_class stays a group) */
    int keep_infeasible;       /* rows with feasible = 0 or fits = 0 too (else
                                  left out: they cannot run) */
    int keep_fields;           /* keep every row's fields (to write them again) */
    const char *label;         /* a text column kept per row (kernel_class), or NULL */
    int collapse;              /* one row per effective operating point: requests
                                  the power limit throttles onto the point a lower
                                  request reaches (same group, effective clock and
                                  voltage) fold into that lowest request */
    int class_values;          /* a table with a row per kernel class (kernel_class)
                                  reads the values time_ms and energy_j from
                                  class_time_ms and class_energy_j, so each class
                                  is chosen on its own (wl_pareto_set_by_class) */
} wl_pareto_load_options;

int wl_pareto_set_load(const char *path, const wl_pareto_load_options *o, wl_pareto_set **out,
                       wl_error *err);
/* Reads the remaining rows of an open CSV reader. */
int wl_pareto_set_read(wl_results_csv *csv, const wl_pareto_load_options *o,
                       wl_pareto_set **out, wl_error *err);
/* The rows of an in-memory table. */
int wl_pareto_set_from_table(const wl_results_table *t, const wl_pareto_load_options *o,
                             wl_pareto_set **out, wl_error *err);
void wl_pareto_set_free(wl_pareto_set *s);
/* Whether the values were read per kernel class (class_values). */
int wl_pareto_set_by_class(const wl_pareto_set *s);
size_t wl_pareto_set_rows(const wl_pareto_set *s);
/* Requests folded away by collapse, and the highest request that reaches a
 * kept row's point (its own sm_clock_mhz when none was folded; NaN without
 * the columns collapse needs). */
size_t wl_pareto_set_collapsed(const wl_pareto_set *s);
/* Rows left out because the point does not fit its GPU's memory (fits = 0). */
size_t wl_pareto_set_unfit(const wl_pareto_set *s);
/* The groups left out whole because none of their rows fits (fits = 0):
 * how many, and group i's key, its fields joined by '/'. */
size_t wl_pareto_set_unfit_groups(const wl_pareto_set *s);
const char *wl_pareto_set_unfit_group(const wl_pareto_set *s, size_t i);
double wl_pareto_set_request_upto(const wl_pareto_set *s, size_t row);
size_t wl_pareto_set_groups(const wl_pareto_set *s);
size_t wl_pareto_set_group_of(const wl_pareto_set *s, size_t row);
/* The group's parameter values joined by '/' ("gpt2/1/128/bf16/eager"). */
const char *wl_pareto_set_group_key(const wl_pareto_set *s, size_t g);
/* The columns the set groups by, and group g's value of the i-th, as read. */
size_t wl_pareto_set_group_ncols(const wl_pareto_set *s);
const char *wl_pareto_set_group_colname(const wl_pareto_set *s, size_t i);
const char *wl_pareto_set_group_field(const wl_pareto_set *s, size_t g, size_t i);
const double *wl_pareto_set_values(const wl_pareto_set *s, size_t row);
int wl_pareto_set_line(const wl_pareto_set *s, size_t row);
/* The row's index among its input's data rows (from 0; skipped rows count). */
size_t wl_pareto_set_source_row(const wl_pareto_set *s, size_t row);
size_t wl_pareto_set_ncols(const wl_pareto_set *s);
const char *wl_pareto_set_col(const wl_pareto_set *s, size_t i);
/* A kept row's fields (ncols of them) into fields; 0 when not kept. */
size_t wl_pareto_set_fields(const wl_pareto_set *s, size_t row, const char **fields);
const char *wl_pareto_set_label(const wl_pareto_set *s, size_t row);
/* on_front[row] = 1 for rows no row of their group dominates in the value
 * columns (all minimised). */
int wl_pareto_set_fronts(const wl_pareto_set *s, unsigned char *on_front);

/* The fronts as rows (what `wattlas pareto` prints): the set's columns,
 * echoed as read (keep_fields), and same_point_up_to_mhz when requests were
 * folded; cols holds wl_pareto_set_ncols + 1. Rows go to w in input order;
 * WL_EIO when w reports a write error. */
size_t wl_pareto_front_cols(const wl_pareto_set *s, wl_results_col *cols);
int wl_pareto_front_rows(const wl_pareto_set *s, wl_results_writer *w);

/* The savings table: per group the point an objective chooses, the fastest
 * point and the maximum-clock point. The set's values must be (time, power,
 * energy, clock), in that order. Rows are indices into the set, -1 when no
 * point qualifies. */
typedef struct {
    size_t group;
    long chosen, fastest, max_clock;
    double band_lo_mhz, band_hi_mhz; /* the clocks within 1% of the least energy */
} wl_pareto_saving;
int wl_pareto_savings(const wl_pareto_set *s, const wl_pareto_objective *obj,
                      wl_pareto_saving *out /* one per group */);
/* The savings table's columns: the set's group columns (each group's
 * values as read, so that a row joins back to the sweep it came from),
 * objective, the chosen, fastest and maximum-clock points, the savings and
 * the flat optimum; how many (0: more than cap). Tables keyed by group
 * need at most WL_PARETO_KEYED_MAX columns. */
#define WL_PARETO_KEYED_MAX 96
size_t wl_pareto_savings_cols(const wl_pareto_set *s, wl_results_col *cols, size_t cap);
/* The flat optimum: the contiguous run of clocks around the least energy
 * whose energy is within (1 + tol) of it (tol 0.01: 1%); NaN when no row
 * has a finite clock and energy. */
void wl_pareto_flat_band(const double *clock_mhz, const double *energy_j, size_t n, double tol,
                         double *lo_mhz, double *hi_mhz);
void wl_pareto_saving_cells(const wl_pareto_set *s, const wl_pareto_objective *obj,
                            const wl_pareto_saving *sv, wl_results_cell *cells);
/* The savings table as rows, one per group (what `wattlas optimize` prints). */
int wl_pareto_savings_rows(const wl_pareto_set *s, const wl_pareto_objective *obj,
                           wl_results_writer *w);

/* Clock schedules, one row per group (columns from wl_pareto_schedule_cols):
 * the best fixed clock, the schedule ("part=MHz;..."), its time, energy,
 * clock switches, extra saving and slowdown against that fixed clock.
 * Objectives: energy, energy-within-slowdown=P.
 *  - by kernel class: a kernel-scope sweep (--kernels) loaded with
 *    wl_pareto_schedule_values (in this order), label "kernel_class" and
 *    through_voltage;
 *  - by phase (forward/backward/optimizer of a training step,
 *    prefill/decode of a generation): a train or decode sweep loaded with
 *    wl_pareto_phase_values, optional_values and through_voltage; groups
 *    without phases (prefill rows) get no row. */
typedef enum { WL_PARETO_BY_AUTO = -1, WL_PARETO_BY_CLASS = 0, WL_PARETO_BY_PHASE } wl_pareto_schedule_by;
#define WL_PARETO_SCHEDULE_NV 6
extern const char *const wl_pareto_schedule_values[WL_PARETO_SCHEDULE_NV];
#define WL_PARETO_PHASE_NV 14
extern const char *const wl_pareto_phase_values[WL_PARETO_PHASE_NV];
/* The schedules' columns: the set's group columns, then the schedule's
 * (as wl_pareto_savings_cols). */
size_t wl_pareto_schedule_cols(const wl_pareto_set *s, wl_results_col *cols, size_t cap);
/* The options to load a schedule's set with: by class or phase (*by
 * WL_PARETO_BY_AUTO: by class when the table has kernel classes, has_class,
 * else by phase; *by gets the choice). */
wl_pareto_load_options wl_pareto_schedule_load_options(wl_pareto_schedule_by *by, int has_class,
                                                       int keep_infeasible);
/* Whether a schedule can optimise for the objective (energy,
 * energy-within-slowdown=P). */
int wl_pareto_schedule_supports(const wl_pareto_objective *obj);
int wl_pareto_schedules(const wl_pareto_set *s, const wl_pareto_objective *obj,
                        wl_pareto_schedule_by by, double switch_us, wl_results_writer *w,
                        wl_error *err);

/* ---- one workload on several GPUs --------------------------------------------------- */

typedef struct {
    double clock_mhz;          /* the requested clock (0 given: the maximum) */
    wl_core_result at, opt, max;
    int found;                 /* the objective found a point on the grid */
    int has_iv;                /* at_iv and opt_iv hold intervals */
    wl_calib_iv at_iv, opt_iv; /* at the requested clock and at the choice */
    char not_runnable[200]; /* why this GPU cannot run the case ("": it can);
                               the numbers are then NaN */
    size_t learned_outside; /* points outside the learned model's domain */
} wl_pareto_gpu_choice;
/* Evaluates at the requested clock, and over the GPU's clock grid (the
 * maximum included) for the point the objective chooses; with unc and a
 * level in (0, 1), the prediction intervals of both points. With learned
 * (may be NULL), every point is the learned model's (a hybrid's correction
 * of the analytical one, or a plain model's) before the choice. */
int wl_pareto_gpu_optimum(const wl_core_gpu *g, const wl_core_workload *wl,
                          const wl_core_latency_type *lat, double clock_mhz,
                          const wl_pareto_objective *obj, const wl_calib_uncertainty *unc,
                          double level, const wl_learn_use *learned, wl_pareto_gpu_choice *out,
                          wl_error *err);
typedef struct {
    const char *model, *dtype, *attention, *mode;
    long long batch, seq; /* 0: not applicable (traces, vision seq) */
    double memory_gb;     /* footprint (NaN: unknown, as for a trace) */
    long long gen;        /* decode: tokens generated per sequence (else 0) */
    int micro_batches;    /* train: micro-batches per step (0 counts as 1) */
} wl_pareto_workload_id;
/* The compare columns, the interval ones (time_lo_ms ... energy_hi_j at the
 * requested clock, opt_time_lo_ms ... at the choice) only with interval,
 * tpot_ms and opt_tpot_ms only with decode; at most WL_PARETO_COMPARE_COLS.
 * energy_per_token_j is per token processed (prefill: the prompt's; train:
 * every micro-batch's) or generated (decode). The cells follow the same
 * columns. */
#define WL_PARETO_COMPARE_COLS 44
size_t wl_pareto_compare_cols(int interval, int decode, wl_results_col *cols);
void wl_pareto_compare_cells(const wl_core_gpu *g, const wl_pareto_workload_id *w,
                             const wl_pareto_gpu_choice *c, int interval, int decode,
                             wl_results_cell *cells);

#endif
