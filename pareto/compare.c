/* One workload on several GPUs: each GPU's point at a requested clock, at
 * its maximum clock, and at the clock of its grid an objective chooses. */
#include "wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int wl_pareto_gpu_optimum(const wl_core_gpu *g, const wl_core_workload *wl,
                          const wl_core_latency_type *lat, double clock_mhz,
                          const wl_pareto_objective *obj, const wl_calib_uncertainty *unc,
                          double level, const wl_learn_use *learned, wl_pareto_gpu_choice *out,
                          wl_error *err)
{
    memset(out, 0, sizeof *out);
    wl_core_evaluator *ev = NULL;
    int rc = wl_core_evaluator_create(g, wl, lat, &ev);
    if (rc) {
        wl_error_set(err, g->id, 0, "gpu", "cannot evaluate on this GPU: %s", wl_core_strerror(rc));
        return rc;
    }
    out->clock_mhz = clock_mhz > 0 ? clock_mhz : g->sm_clock_max_mhz;
    size_t n = wl_core_gpu_clock_count(g);
    double *tpe = malloc(3 * n * sizeof *tpe);
    wl_core_result *all = malloc(n * sizeof *all);
    rc = tpe && all ? WL_OK : WL_ENOMEM;
    wl_core_op op = {.sm_clock_mhz = out->clock_mhz};
    /* the held kernels' clocks kept across the clocks (freed below) */
    wl_core_throttle_cache cache = {.targets = wl_core_targets_create()};
    if (!rc)
        rc = wl_core_evaluator_run(ev, &op, &out->at);
    if (!rc && learned)
        out->learned_outside += wl_learn_use_apply(learned, g, op.sm_clock_mhz, &out->at) < 1;
    for (size_t i = 0; !rc && i < n; i++) {
        if (wl_stop_requested()) { /* wl_stop_watch */
            wl_error_set(err, g->id, 0, "", "stopped");
            rc = WL_ESTOPPED;
            break;
        }
        op.sm_clock_mhz = wl_core_gpu_clock(g, i);
        rc = wl_core_evaluator_run_cached(ev, &op, &cache, &all[i]);
        if (!rc && learned)
            out->learned_outside += wl_learn_use_apply(learned, g, op.sm_clock_mhz, &all[i]) < 1;
        tpe[i] = all[i].time_ms;
        tpe[n + i] = all[i].power_w;
        tpe[2 * n + i] = all[i].energy_j;
    }
    if (!rc) {
        long best = wl_pareto_choose(obj, tpe, tpe + n, tpe + 2 * n, n);
        out->opt = all[best < 0 ? n - 1 : (size_t)best];
        out->max = all[n - 1];
        out->found = best >= 0;
    }
    /* intervals from the calibration's covariance, at both points */
    if (!rc && unc && level > 0 && level < 1) {
        wl_core_op at_op = {.sm_clock_mhz = out->clock_mhz};
        wl_core_op opt_op = {.sm_clock_mhz = out->opt.requested_clock_mhz};
        rc = wl_calib_interval(ev, g, unc, &at_op, level, &out->at, &out->at_iv);
        if (!rc)
            rc = wl_calib_interval(ev, g, unc, &opt_op, level, &out->opt, &out->opt_iv);
        out->has_iv = !rc;
    }
    if (rc == WL_ENOMEM)
        wl_error_set(err, g->id, 0, "", "out of memory");
    else if (rc && rc != WL_ESTOPPED)
        wl_error_set(err, g->id, 0, "gpu", "evaluation failed: %s", wl_core_strerror(rc));
    free(tpe);
    free(all);
    wl_core_targets_free(cache.targets);
    wl_core_evaluator_free(ev);
    return rc;
}

/* The columns, in order; iv: 1 those written only with intervals, 2 only
 * for decode. */
static const struct {
    wl_results_col col;
    int iv;
} compare_cols[] = {
    {WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 14), 0},
    {WL_RESULTS_COL("model", WL_COL_TEXT, 0, 10), 0},
    {WL_RESULTS_COL("batch", WL_COL_INT, 0, 0), 0},
    {WL_RESULTS_COL("seq", WL_COL_INT, 0, 0), 0},
    {WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 5), 0},
    {WL_RESULTS_COL("attention", WL_COL_TEXT, 0, 0), 0},
    {WL_RESULTS_COL("mode", WL_COL_TEXT, 0, 0), 0},
    {WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0), 0},
    {WL_RESULTS_COL("effective_clock_mhz", WL_COL_NUM, 1, 0), 0},
    {WL_RESULTS_COL("time_ms", WL_COL_NUM, 5, 0), 0},
    {WL_RESULTS_COL("power_w", WL_COL_NUM, 3, 0), 0},
    {WL_RESULTS_COL("energy_j", WL_COL_NUM, 6, 0), 0},
    {WL_RESULTS_COL("energy_per_token_j", WL_COL_NUM, 6, 0), 0},
    {WL_RESULTS_COL("tpot_ms", WL_COL_NUM, 5, 0), 2},
    {WL_RESULTS_COL("time_lo_ms", WL_COL_NUM, 5, 0), 1},
    {WL_RESULTS_COL("time_hi_ms", WL_COL_NUM, 5, 0), 1},
    {WL_RESULTS_COL("power_lo_w", WL_COL_NUM, 3, 0), 1},
    {WL_RESULTS_COL("power_hi_w", WL_COL_NUM, 3, 0), 1},
    {WL_RESULTS_COL("energy_lo_j", WL_COL_NUM, 6, 0), 1},
    {WL_RESULTS_COL("energy_hi_j", WL_COL_NUM, 6, 0), 1},
    {WL_RESULTS_COL("opt_sm_clock_mhz", WL_COL_NUM, 1, 0), 0},
    {WL_RESULTS_COL("opt_effective_clock_mhz", WL_COL_NUM, 1, 0), 0},
    {WL_RESULTS_COL("opt_time_ms", WL_COL_NUM, 5, 0), 0},
    {WL_RESULTS_COL("opt_power_w", WL_COL_NUM, 3, 0), 0},
    {WL_RESULTS_COL("opt_energy_j", WL_COL_NUM, 6, 0), 0},
    {WL_RESULTS_COL("opt_energy_per_token_j", WL_COL_NUM, 6, 0), 0},
    {WL_RESULTS_COL("opt_tpot_ms", WL_COL_NUM, 5, 0), 2},
    {WL_RESULTS_COL("opt_time_lo_ms", WL_COL_NUM, 5, 0), 1},
    {WL_RESULTS_COL("opt_time_hi_ms", WL_COL_NUM, 5, 0), 1},
    {WL_RESULTS_COL("opt_power_lo_w", WL_COL_NUM, 3, 0), 1},
    {WL_RESULTS_COL("opt_power_hi_w", WL_COL_NUM, 3, 0), 1},
    {WL_RESULTS_COL("opt_energy_lo_j", WL_COL_NUM, 6, 0), 1},
    {WL_RESULTS_COL("opt_energy_hi_j", WL_COL_NUM, 6, 0), 1},
    {WL_RESULTS_COL("max_sm_clock_mhz", WL_COL_NUM, 1, 0), 0},
    {WL_RESULTS_COL("max_effective_clock_mhz", WL_COL_NUM, 1, 0), 0},
    {WL_RESULTS_COL("max_time_ms", WL_COL_NUM, 5, 0), 0},
    {WL_RESULTS_COL("max_energy_j", WL_COL_NUM, 6, 0), 0},
    {WL_RESULTS_COL("energy_saving_vs_max_clock_pct", WL_COL_NUM, 2, 0), 0},
    {WL_RESULTS_COL("runtime_penalty_vs_max_clock_pct", WL_COL_NUM, 2, 0), 0},
    {WL_RESULTS_COL("memory_gb", WL_COL_NUM, 3, 0), 0},
    {WL_RESULTS_COL("fits", WL_COL_BOOL, 0, 0), 0},
    {WL_RESULTS_COL("coefficients", WL_COL_TEXT, 0, 0), 0},
    {WL_RESULTS_COL("not_runnable", WL_COL_TEXT, 0, 0), 0},
};
#define NCOLS (sizeof compare_cols / sizeof *compare_cols)
_Static_assert(NCOLS <= WL_PARETO_COMPARE_COLS, "WL_PARETO_COMPARE_COLS too small");

static int col_on(size_t i, int interval, int decode)
{
    int kind = compare_cols[i].iv;
    return kind == 0 || (kind == 1 && interval) || (kind == 2 && decode);
}

size_t wl_pareto_compare_cols(int interval, int decode, wl_results_col *cols)
{
    size_t n = 0;
    for (size_t i = 0; i < NCOLS; i++)
        if (col_on(i, interval, decode))
            cols[n++] = compare_cols[i].col;
    return n;
}

/* Tokens a result covers: generated (decode), or processed (a prompt; a
 * training step's micro-batches); 0 where there are none (a trace, a vision
 * model). */
static double tokens_of(const wl_pareto_workload_id *w)
{
    if (w->gen > 0)
        return (double)w->batch * (double)w->gen;
    double micro = w->micro_batches > 1 ? w->micro_batches : 1;
    return w->batch > 0 && w->seq > 0 ? (double)w->batch * (double)w->seq * micro : 0;
}

/* Time per output token: the decode phase's steps after the first token
 * (which the prompt's forward pass gives). */
static double tpot_of(const wl_pareto_workload_id *w, const wl_core_result *r)
{
    return w->gen > 1 ? r->phase[WL_PHASE_DECODE].time_ms / (double)(w->gen - 1) : NAN;
}

void wl_pareto_compare_cells(const wl_core_gpu *g, const wl_pareto_workload_id *w,
                             const wl_pareto_gpu_choice *c, int interval, int decode,
                             wl_results_cell *cells)
{
    const wl_core_result *at = &c->at, *o = &c->opt, *m = &c->max;
    const wl_calib_iv *ai = &c->at_iv, *oi = &c->opt_iv;
    double x = NAN; /* an interval not computed: empty cells */
    int h = c->has_iv;
    wl_core_memory mem = {.total_gb = w->memory_gb};
    int fits = wl_core_memory_fits(g, &mem);
    double tok = tokens_of(w);
    /* every cell of the full column list, in its order */
    const wl_results_cell all[NCOLS] = {
        {g->id, NAN},
        {w->model, NAN},
        {NULL, w->batch > 0 ? (double)w->batch : NAN},
        {NULL, w->seq > 0 ? (double)w->seq : NAN},
        {w->dtype, NAN},
        {w->attention, NAN},
        {w->mode, NAN},
        {NULL, c->clock_mhz},
        {NULL, at->effective_clock_mhz},
        {NULL, at->time_ms},
        {NULL, at->power_w},
        {NULL, at->energy_j},
        {NULL, tok > 0 ? at->energy_j / tok : x},
        {NULL, tpot_of(w, at)},
        {NULL, h ? ai->time_lo_ms : x},
        {NULL, h ? ai->time_hi_ms : x},
        {NULL, h ? ai->power_lo_w : x},
        {NULL, h ? ai->power_hi_w : x},
        {NULL, h ? ai->energy_lo_j : x},
        {NULL, h ? ai->energy_hi_j : x},
        {NULL, o->requested_clock_mhz},
        {NULL, o->effective_clock_mhz},
        {NULL, o->time_ms},
        {NULL, o->power_w},
        {NULL, o->energy_j},
        {NULL, tok > 0 ? o->energy_j / tok : x},
        {NULL, tpot_of(w, o)},
        {NULL, h ? oi->time_lo_ms : x},
        {NULL, h ? oi->time_hi_ms : x},
        {NULL, h ? oi->power_lo_w : x},
        {NULL, h ? oi->power_hi_w : x},
        {NULL, h ? oi->energy_lo_j : x},
        {NULL, h ? oi->energy_hi_j : x},
        {NULL, m->requested_clock_mhz},
        {NULL, m->effective_clock_mhz},
        {NULL, m->time_ms},
        {NULL, m->energy_j},
        {NULL, 100.0 * (1.0 - o->energy_j / m->energy_j)},
        {NULL, 100.0 * (o->time_ms / m->time_ms - 1.0)},
        {NULL, w->memory_gb},
        {NULL, fits < 0 ? NAN : (double)fits},
        {g->coef_source[0] ? g->coef_source : "own", NAN},
        {c->not_runnable[0] ? c->not_runnable : NULL, NAN},
    };
    size_t k = 0;
    for (size_t i = 0; i < NCOLS; i++)
        if (col_on(i, interval, decode))
            cells[k++] = all[i];
}
