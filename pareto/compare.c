/* One workload on several GPUs: each GPU's point at a requested clock, at
 * its maximum clock, and at the clock of its grid an objective chooses. */
#include "wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int wl_pareto_gpu_optimum(const wl_core_gpu *g, const wl_core_workload *wl,
                          const wl_core_latency_type *lat, double clock_mhz,
                          const wl_pareto_objective *obj, wl_pareto_gpu_choice *out,
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
    wl_core_throttle_cache cache = {0};
    if (!rc)
        rc = wl_core_evaluator_run(ev, &op, &out->at);
    for (size_t i = 0; !rc && i < n; i++) {
        op.sm_clock_mhz = wl_core_gpu_clock(g, i);
        rc = wl_core_evaluator_run_cached(ev, &op, &cache, &all[i]);
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
    if (rc == WL_ENOMEM)
        wl_error_set(err, g->id, 0, "", "out of memory");
    else if (rc)
        wl_error_set(err, g->id, 0, "gpu", "evaluation failed: %s", wl_core_strerror(rc));
    free(tpe);
    free(all);
    wl_core_evaluator_free(ev);
    return rc;
}

static const wl_results_col compare_cols[] = {
    WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 14),
    WL_RESULTS_COL("model", WL_COL_TEXT, 0, 10),
    WL_RESULTS_COL("batch", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("seq", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 5),
    WL_RESULTS_COL("attention", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("effective_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("power_w", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("opt_sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("opt_effective_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("opt_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("opt_power_w", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("opt_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("max_sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("max_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("max_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_saving_vs_max_clock_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("runtime_penalty_vs_max_clock_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("coefficients", WL_COL_TEXT, 0, 0),
};

const wl_results_col *wl_pareto_compare_cols(size_t *n)
{
    *n = sizeof compare_cols / sizeof *compare_cols;
    return compare_cols;
}

void wl_pareto_compare_cells(const wl_core_gpu *g, const wl_pareto_workload_id *w,
                             const wl_pareto_gpu_choice *c, wl_results_cell *cells)
{
    const wl_core_result *at = &c->at, *o = &c->opt, *m = &c->max;
    size_t k = 0;
    cells[k++] = (wl_results_cell){g->id, NAN};
    cells[k++] = (wl_results_cell){w->model, NAN};
    cells[k++] = (wl_results_cell){NULL, w->batch > 0 ? (double)w->batch : NAN};
    cells[k++] = (wl_results_cell){NULL, w->seq > 0 ? (double)w->seq : NAN};
    cells[k++] = (wl_results_cell){w->dtype, NAN};
    cells[k++] = (wl_results_cell){w->attention, NAN};
    const double v[15] = {c->clock_mhz, at->effective_clock_mhz, at->time_ms, at->power_w,
                          at->energy_j, o->requested_clock_mhz, o->effective_clock_mhz,
                          o->time_ms, o->power_w, o->energy_j, m->requested_clock_mhz,
                          m->time_ms, m->energy_j, 100.0 * (1.0 - o->energy_j / m->energy_j),
                          100.0 * (o->time_ms / m->time_ms - 1.0)};
    for (int i = 0; i < 15; i++)
        cells[k++] = (wl_results_cell){NULL, v[i]};
    cells[k++] = (wl_results_cell){g->coef_source[0] ? g->coef_source : "own", NAN};
}
