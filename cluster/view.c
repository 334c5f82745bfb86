/* What `wattlas cluster` writes for one configuration, as library code so
 * that the command line and Python give the same rows: its summary row (at
 * a clock, or under a clock plan with --optimize), a row per stage, the
 * time-energy frontier of clock plans (and of board power caps), or a row
 * per board power limit. */
#include "wattlas_cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const wl_results_col stage_cols[] = {
    WL_RESULTS_COL("stage", WL_COL_INT, 0, 0), WL_RESULTS_COL("layers", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("fwd_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("bwd_clock_mhz", WL_COL_NUM, 0, 0), WL_RESULTS_COL("busy_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("pp_comm_exposed_s", WL_COL_NUM, 4, 0), WL_RESULTS_COL("end_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("in_flight", WL_COL_INT, 0, 0), WL_RESULTS_COL("weights_gb", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("grads_gb", WL_COL_NUM, 2, 0), WL_RESULTS_COL("optimizer_gb", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("activations_gb", WL_COL_NUM, 2, 0), WL_RESULTS_COL("memory_gb", WL_COL_NUM, 2, 0),
};
#define NSCOLS (sizeof stage_cols / sizeof *stage_cols)

static const wl_results_col frontier_cols[] = {
    WL_RESULTS_COL("point", WL_COL_INT, 0, 0),         WL_RESULTS_COL("kind", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 0, 0),  WL_RESULTS_COL("time_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("energy_j", WL_COL_NUM, 0, 0),      WL_RESULTS_COL("slowdown_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("energy_saving_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("energy_scope", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("clocks_mhz", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("power_limit_w", WL_COL_NUM, 0, 0),
};
#define NFCOLS (sizeof frontier_cols / sizeof *frontier_cols)

_Static_assert(WL_CLUSTER_ROW_COLS + 1 <= WL_CLUSTER_VIEW_COLS, "WL_CLUSTER_VIEW_COLS too small");

void wl_cluster_view_default(wl_cluster_view *v)
{
    *v = (wl_cluster_view){.max_slowdown_pct = NAN, .scope = WL_CLUSTER_ENERGY_GPU};
}

size_t wl_cluster_view_cols(const wl_cluster_view *v, wl_results_col *cols)
{
    const wl_results_col *row = wl_cluster_row_cols();
    if (v->frontier) {
        memcpy(cols, frontier_cols, sizeof frontier_cols);
        return NFCOLS;
    }
    if (v->nlimits) {
        /* the limit first, then the row without --optimize's columns */
        size_t n = WL_CLUSTER_ROW_COLS - WL_CLUSTER_ROW_NOPT;
        cols[0] = (wl_results_col)WL_RESULTS_COL("power_limit_w", WL_COL_NUM, 0, 0);
        memcpy(cols + 1, row, n * sizeof *cols);
        return n + 1;
    }
    if (v->stages) {
        memcpy(cols, stage_cols, sizeof stage_cols);
        return NSCOLS;
    }
    size_t n = WL_CLUSTER_ROW_COLS - (v->optimize ? 0 : WL_CLUSTER_ROW_NOPT);
    memcpy(cols, row, n * sizeof *cols);
    return n;
}

/* The summary row of a run (under a plan: pr), with the table's note
 * before the first. */
static int summary_row(const wl_cluster_system *sys, const wl_core_model *m,
                       const wl_cluster_config *cfg, const wl_cluster_view *v,
                       const wl_cluster_result *r, const wl_cluster_plan_result *pr, double clock,
                       int first, wl_results_writer *w, wl_cluster_view_info *info)
{
    wl_results_cell c[WL_CLUSTER_ROW_COLS];
    wl_cluster_row_cells(c, sys->id, m->id, cfg, r, pr ? NAN : clock, v->tokens, v->part_text);
    wl_results_cell opt[WL_CLUSTER_ROW_NOPT] = {
        {.v = pr ? pr->energy_saving_pct : NAN}, {.v = pr ? pr->slowdown_pct : NAN},
        {.v = pr ? pr->best_fixed_clock_mhz : NAN}, {.v = pr ? pr->saving_vs_fixed_pct : NAN},
        {.v = pr ? pr->balanced_fixed_clock_mhz : NAN},
        {.v = pr ? pr->saving_vs_balanced_pct : NAN},
        {.v = pr ? pr->computation_saving_pct : NAN},
        {.v = pr ? pr->computation_slowdown_pct : NAN},
        {.s = pr ? wl_cluster_energy_scope_name(pr->scope) : NULL}};
    memcpy(c + WL_CLUSTER_ROW_COLS - WL_CLUSTER_ROW_NOPT, opt, sizeof opt);
    long long rank;
    char ft[48] = "";
    if (wl_cluster_lora_projs(cfg, &rank)) /* the rows say nothing of what trains */
        snprintf(ft, sizeof ft, ", LoRA rank %lld", rank);
    if (first)
        wl_results_writer_note(w, "%s x %d nodes (%d GPUs), %s%s, %d micro-batches, critical "
                                  "stage %d", sys->id, sys->nodes, r->gpus, m->id, ft,
                               r->micro_batches, r->critical_stage);
    info->fits = r->fits;
    info->memory_gb = r->memory_gb;
    return wl_results_writer_row(w, c) ? WL_EIO : WL_OK;
}

/* The memory of the layout's fullest stage against its GPU's (info);
 * strict: a layout that does not fit is an error. */
static int check_fits(const wl_cluster *cl, const wl_core_gpu *gpu, const wl_core_model *m,
                      const wl_cluster_config *cfg, int strict, wl_cluster_view_info *info,
                      wl_error *err)
{
    double need = wl_cluster_memory_gb(cl);
    info->memory_gb = need;
    if (!(gpu->mem_capacity_gb > 0) || need <= gpu->mem_capacity_gb)
        return WL_OK;
    info->fits = 0;
    if (!strict)
        return WL_OK;
    char has[48];
    wl_results_gb_text(has, sizeof has, gpu->mem_capacity_gb);
    /* wl_error's text holds 255 characters: the ids are cut to fit */
    wl_error_set(err, "", 0, "", "%.24s as tp %d, pp %d, dp %d, ZeRO %s, recompute %s needs %.1f GB "
                 "a GPU; %.24s has %s. Set --tp, --pp, --zero, --recompute, or see "
                 "'wattlas cluster search'", m->id, cfg->tp, cfg->pp, cfg->dp,
                 cfg->zero ? "on" : "off", wl_recompute_name(cfg->recompute), need, gpu->id, has);
    return WL_EINVAL;
}

/* A row per board power limit, every GPU capped alike (Zeus's knob). */
static int limit_rows(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                      const wl_core_model *m, const wl_cluster_config *cfg,
                      const wl_cluster_view *v, double clock, wl_results_writer *w, wl_error *err)
{
    wl_cluster_result *res = calloc(v->nlimits, sizeof *res);
    if (!res) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    int rc = wl_cluster_power_limit_sweep(sys, gpu, m, cfg, clock, v->limits, v->nlimits, res, err);
    for (size_t i = 0; i < v->nlimits && !rc; i++) {
        wl_results_cell c[WL_CLUSTER_ROW_COLS + 1];
        c[0] = (wl_results_cell){.v = v->limits[i]};
        wl_cluster_row_cells(c + 1, sys->id, m->id, cfg, &res[i], clock, v->tokens, v->part_text);
        if (wl_results_writer_row(w, c)) {
            wl_error_set(err, "cluster", 0, "", "could not write a row");
            rc = WL_EIO;
        }
    }
    free(res);
    return rc;
}

/* The plans no other plan beats in time and energy, and the caps'. */
static int frontier_rows(wl_cluster *cl, const wl_cluster_system *sys, const wl_core_gpu *gpu,
                         const wl_core_model *m, const wl_cluster_config *cfg,
                         const wl_cluster_view *v, wl_results_writer *w,
                         wl_cluster_view_info *info, wl_error *err)
{
    wl_cluster_frontier_point *pts = NULL, *cp = NULL;
    double *plans = NULL, *caps = NULL;
    size_t n = 0, nc = 0;
    double bound = isfinite(v->max_slowdown_pct) ? v->max_slowdown_pct : 25;
    int rc = wl_cluster_frontier(cl, bound, v->scope, &pts, &plans, &n, err);
    int p = wl_cluster_stages(cl);
    /* "1410/1395;..." : at most 24 characters a stage */
    size_t cap = (size_t)p * 24 + 1;
    char *text = rc ? NULL : malloc(cap);
    if (!rc && !text) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        rc = WL_ENOMEM;
    }
    const char *scope = wl_cluster_energy_scope_name(v->scope);
    for (size_t i = 0; i < n && !rc; i++) {
        const double *pl = plans + i * 2 * (size_t)p;
        size_t len = 0;
        text[0] = 0;
        for (int s = 0; s < p && len < cap; s++) {
            int k = snprintf(text + len, cap - len, "%s%.0f/%.0f", s ? ";" : "", pl[2 * s],
                             pl[2 * s + 1]);
            len += k > 0 ? (size_t)k : 0;
        }
        wl_results_cell c[NFCOLS] = {
            {.v = (double)i},
            {.s = pts[i].fixed ? "fixed" : pts[i].computation ? "computation" : "plan"},
            {.v = pts[i].fixed ? pl[0] : NAN}, {.v = pts[i].time_s}, {.v = pts[i].energy_j},
            {.v = pts[i].slowdown_pct}, {.v = pts[i].energy_saving_pct}, {.s = scope},
            {.s = text}, {.v = NAN}};
        if (wl_results_writer_row(w, c))
            rc = WL_EIO;
        info->sooner += pts[i].slowdown_pct < 0;
    }
    if (!rc && v->nlimits)
        rc = wl_cluster_cap_frontier(sys, gpu, m, cfg, v->limits, v->nlimits, v->scope, &cp, &caps,
                                     &nc, err);
    for (size_t i = 0; i < nc && !rc; i++) {
        wl_results_cell c[NFCOLS] = {
            {.v = (double)(n + i)}, {.s = "cap"}, {.v = NAN}, {.v = cp[i].time_s},
            {.v = cp[i].energy_j}, {.v = cp[i].slowdown_pct}, {.v = cp[i].energy_saving_pct},
            {.s = scope}, {.s = ""}, {.v = caps[i]}};
        if (wl_results_writer_row(w, c))
            rc = WL_EIO;
        info->sooner += cp[i].slowdown_pct < 0;
    }
    /* the baseline is every GPU at its top clock under the power limit:
     * where the limit throttles its stages, a plan that lowers one of them
     * can end sooner, and its slowdown is negative; say why */
    if (!rc && info->sooner)
        wl_results_writer_note(w, "%zu point%s end%s sooner than every GPU at its top clock "
                                  "(slowdown_pct 0), which the power limit throttles to slower "
                                  "stage clocks: slowdown_pct < 0", info->sooner,
                               info->sooner == 1 ? "" : "s", info->sooner == 1 ? "s" : "");
    if (rc == WL_EIO)
        wl_error_set(err, "cluster", 0, "", "could not write a row");
    free(cp);
    free(caps);
    free(text);
    free(pts);
    free(plans);
    return rc;
}

int wl_cluster_view_rows(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                         const wl_core_model *m, const wl_cluster_config *cfg,
                         const wl_cluster_view *v, wl_results_writer *w,
                         wl_cluster_view_info *info, wl_error *err)
{
    memset(info, 0, sizeof *info);
    info->fits = 1;
    double clock = v->nclocks ? v->clocks[0] : v->clock_mhz > 0 ? v->clock_mhz
                                                                 : gpu->sm_clock_max_mhz;
    wl_cluster *cl = NULL;
    double *plan = NULL;
    int rc = wl_cluster_create(sys, gpu, m, cfg, &cl, err);
    if (!rc && v->nstage_limits)
        rc = wl_cluster_set_stage_power_limits(cl, v->stage_limits, (int)v->nstage_limits, err);
    if (!rc)
        rc = wl_cluster_refine_split(cl, err);
    /* a layout that cannot hold its stage is no answer to print: a row
     * with MFU 0.53 for 3.4 TB a GPU read as one (issue 63); a row per
     * stage (stages) is how one looks at where the memory goes */
    if (!rc)
        rc = check_fits(cl, gpu, m, cfg, !v->stages && !v->all, info, err);
    if (!rc && v->nlimits && !v->frontier) {
        wl_cluster_free(cl);
        return limit_rows(sys, gpu, m, cfg, v, clock, w, err);
    }
    if (!rc && v->frontier) {
        rc = frontier_rows(cl, sys, gpu, m, cfg, v, w, info, err);
        goto done;
    }
    wl_cluster_result r;
    wl_cluster_plan_result pr;
    if (!rc && v->optimize) {
        plan = malloc(sizeof(double) * 2 * (size_t)wl_cluster_stages(cl));
        if (!plan) {
            wl_error_set(err, "cluster", 0, "", "out of memory");
            rc = WL_ENOMEM;
        } else {
            double bound = isfinite(v->max_slowdown_pct) ? v->max_slowdown_pct : 1;
            rc = wl_cluster_optimize(cl, bound, v->scope, plan, &pr, err);
        }
        r = pr.planned;
        /* the split's imbalance, not the plan's: a plan slows the stages
         * that can wait on purpose */
        if (!rc)
            r.imbalance_pct = pr.at_max.imbalance_pct;
    } else if (!rc) {
        rc = wl_cluster_run(cl, clock, NULL, &r, err);
    }
    if (rc)
        goto done;
    if (v->stages) {
        for (int i = 0; i < wl_cluster_stages(cl) && !rc; i++) {
            const wl_cluster_stage_stats *st = wl_cluster_sim_stage_of(cl, i);
            wl_cluster_memory mm;
            wl_cluster_stage_memory(cl, i, &mm);
            wl_results_cell c[NSCOLS] = {
                {.v = i}, {.v = wl_cluster_stage_layers(cl, i)},
                {.v = wl_cluster_stage_clock(cl, i, 0)}, {.v = wl_cluster_stage_clock(cl, i, 1)},
                {.v = st->busy_s}, {.v = st->send_s + st->recv_wait_s}, {.v = st->end_s},
                {.v = mm.in_flight}, {.v = mm.weights_gb}, {.v = mm.grads_gb},
                {.v = mm.optimizer_gb}, {.v = mm.activations_gb}, {.v = mm.total_gb}};
            if (wl_results_writer_row(w, c))
                rc = WL_EIO;
        }
    } else {
        rc = summary_row(sys, m, cfg, v, &r, plan ? &pr : NULL, clock, 1, w, info);
        /* several clocks: the summary row at each, one run a clock */
        for (size_t k = 1; !rc && !plan && k < v->nclocks; k++) {
            rc = wl_cluster_run(cl, v->clocks[k], NULL, &r, err);
            if (!rc)
                rc = summary_row(sys, m, cfg, v, &r, NULL, v->clocks[k], 0, w, info);
        }
    }
    if (rc == WL_EIO)
        wl_error_set(err, "cluster", 0, "", "could not write a row");
    if (!rc && v->timeline)
        rc = wl_cluster_timeline_json(cl, v->timeline);
done:
    free(plan);
    wl_cluster_free(cl);
    return rc;
}
