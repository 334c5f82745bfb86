/* Clock schedules over a set of operating points: one clock per kernel
 * class or per phase of a training step or a generation, against the best
 * fixed clock under the same objective. */
#include "sets_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- schedules: one clock per kernel class or per phase ------------------------------- */

static const wl_results_col schedule_cols[] = {
    WL_RESULTS_COL("objective", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("fixed_sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("fixed_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("fixed_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("schedule_mhz", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("schedule_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("schedule_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("clock_switches", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("extra_saving_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("slowdown_pct", WL_COL_NUM, 2, 0),
};

size_t wl_pareto_schedule_cols(const wl_pareto_set *s, wl_results_col *cols, size_t cap)
{
    return wl_pareto_i_keyed_cols(s, schedule_cols, sizeof schedule_cols / sizeof *schedule_cols, cols, cap);
}

const char *const wl_pareto_schedule_values[WL_PARETO_SCHEDULE_NV] = {
    "class_time_ms", "class_energy_j", "class_launches", "sm_clock_mhz", "energy_static_j",
    "time_ms"};

/* The phase columns of a training step and of a generation (optional:
 * a sweep has those of the modes it ran). */
enum { PV_CLK, PV_STATIC, PV_TIME, PV_TF, PV_TB, PV_TO, PV_EF, PV_EB, PV_EO, PV_MICRO, PV_TTFT,
       PV_EPRE, PV_EDEC, PV_ENERGY };
const char *const wl_pareto_phase_values[WL_PARETO_PHASE_NV] = {
    "sm_clock_mhz", "energy_static_j", "time_ms", "time_fwd_ms", "time_bwd_ms", "time_opt_ms",
    "energy_fwd_j", "energy_bwd_j", "energy_opt_j", "micro_batches", "ttft_ms",
    "energy_prefill_j", "energy_decode_j", "energy_j"};

/* A schedule problem: nc parts (kernel classes or phases), nk clocks; part
 * c at clock k takes t[c nk + k] ms and e[c nk + k] J; entries[c] times a
 * step enters part c (a switch there and back when it runs off the base
 * clock). */
#define SCHED_MAXC 64
typedef struct {
    const char *name[SCHED_MAXC];
    int nc;
    double *clk; /* nk sorted distinct clocks */
    size_t nk;
    double *t, *e;
    /* a phase schedule's fixed clocks: the rows' own time_ms and energy_j
     * (nk each; NaN: none), which the fixed_ columns copy, not the sum of
     * the rounded phases (780.92941 against the row's 780.92942) */
    double *row_t, *row_e;
    double entries[SCHED_MAXC];
    double static_w_sum; /* power while switching: the mean static power */
    int static_n;        /* of this many rows */
} sched_problem;

static void add_static(sched_problem *p, double static_j, double time_ms)
{
    if (time_ms > 0) {
        p->static_w_sum += static_j / (time_ms * 1e-3);
        p->static_n++;
    }
}

static void sched_free(sched_problem *p)
{
    free(p->clk);
    free(p->t);
}

/* The distinct clocks of the group's rows, and t, e sized for nc parts. */
static int sched_alloc(sched_problem *p, const wl_pareto_set *s, const size_t *rows, size_t m,
                       size_t clk_col)
{
    p->clk = malloc((m ? m : 1) * sizeof *p->clk);
    if (!p->clk)
        return WL_ENOMEM;
    size_t nk = 0;
    for (size_t r = 0; r < m; r++)
        if (!isnan(s->val[rows[r] * s->nv + clk_col]))
            p->clk[nk++] = s->val[rows[r] * s->nv + clk_col];
    qsort(p->clk, nk, sizeof *p->clk, wl_core_cmp_double);
    size_t u = 0;
    for (size_t i = 0; i < nk; i++)
        if (!u || p->clk[i] != p->clk[u - 1])
            p->clk[u++] = p->clk[i];
    p->nk = u;
    size_t n = (size_t)p->nc * p->nk;
    p->t = malloc((n + p->nk + 1) * 2 * sizeof *p->t);
    if (!p->t)
        return WL_ENOMEM;
    p->e = p->t + n;
    p->row_t = p->e + n;
    p->row_e = p->row_t + p->nk;
    for (size_t i = 0; i < 2 * (n + p->nk); i++)
        p->t[i] = NAN;
    return WL_OK;
}

static size_t clock_index(const sched_problem *p, double clk)
{
    return (size_t)((const double *)bsearch(&clk, p->clk, p->nk, sizeof clk, wl_core_cmp_double) - p->clk);
}

/* The best fixed clock and the schedule under the objective, into cells. */
static int sched_solve(const sched_problem *p, const wl_pareto_objective *obj, double switch_us,
                       wl_results_buf *sched, wl_results_cell *cells)
{
    size_t nk = p->nk;
    int nc = p->nc, choice[SCHED_MAXC];
    /* a part missing at some clock makes that fixed clock incomparable */
    double tmin = INFINITY;
    for (size_t k = 0; k < nk; k++) {
        double tf = 0;
        for (int c = 0; c < nc; c++)
            tf += isnan(p->t[(size_t)c * nk + k]) ? INFINITY : p->t[(size_t)c * nk + k];
        if (tf < tmin)
            tmin = tf;
    }
    double budget = strcmp(wl_pareto_objective_name(obj), "energy") == 0
                        ? INFINITY : tmin * (1 + obj->param / 100.0);
    double tf_best = NAN, ef_best = NAN;
    long kf = -1;
    for (size_t k = 0; k < nk; k++) {
        double tf = 0, ef = 0;
        for (int c = 0; c < nc; c++) {
            tf += isnan(p->t[(size_t)c * nk + k]) ? INFINITY : p->t[(size_t)c * nk + k];
            ef += p->e[(size_t)c * nk + k];
        }
        if (!isnan(ef) && tf <= budget * (1 + 1e-12) && (kf < 0 || ef < ef_best)) {
            kf = (long)k;
            tf_best = tf;
            ef_best = ef;
        }
    }
    wl_pareto_schedule_result res;
    int rc = kf < 0 ? WL_ENOTFOUND
                    : wl_pareto_schedule(nc, (int)nk, p->t, p->e, p->entries, switch_us,
                                         p->static_n ? p->static_w_sum / p->static_n : 0,
                                         budget, choice, &res);
    if (rc != WL_OK)
        return rc == WL_ENOTFOUND || rc == WL_EINVAL ? WL_OK : rc; /* no schedule: empty cells */
    cells[1].v = p->clk[kf];
    cells[2].v = p->row_t && !isnan(p->row_t[kf]) ? p->row_t[kf] : tf_best;
    cells[3].v = p->row_e && !isnan(p->row_e[kf]) ? p->row_e[kf] : ef_best;
    for (int c = 0; c < nc; c++) {
        char num[WL_RESULTS_NUM_MAX];
        if (c)
            wl_results_buf_put(sched, ";", 1);
        wl_results_buf_puts(sched, p->name[c]);
        wl_results_buf_put(sched, "=", 1);
        wl_results_buf_put(sched, num, wl_results_fmt(num, sizeof num, p->clk[choice[c]], 0));
    }
    wl_results_buf_put(sched, "", 0);
    cells[4].s = sched->oom ? NULL : sched->p;
    cells[5].v = res.time_ms;
    cells[6].v = res.energy_j;
    cells[7].v = res.switches;
    cells[8].v = 100 * (1 - res.energy_j / ef_best);
    cells[9].v = 100 * (res.time_ms / tf_best - 1);
    return WL_OK;
}

/* Kernel classes: one row per class and clock. A class's launches
 * interleave with the others', so each launch off the base clock is
 * entered once. */
static int class_problem(const wl_pareto_set *s, const size_t *rows, size_t m,
                         sched_problem *p, wl_error *err)
{
    for (size_t r = 0; r < m; r++) {
        const char *l = wl_pareto_set_label(s, rows[r]);
        int c = 0;
        while (c < p->nc && strcmp(p->name[c], l) != 0)
            c++;
        if (c == p->nc) {
            if (p->nc == SCHED_MAXC) {
                wl_error_set(err, s->source, s->line[rows[r]], "kernel_class",
                             "more than %d kernel classes in one group", SCHED_MAXC);
                return WL_EINVAL;
            }
            p->name[p->nc++] = l;
        }
    }
    int rc = sched_alloc(p, s, rows, m, 3);
    if (rc)
        return rc;
    for (size_t r = 0; r < m; r++) {
        const double *v = s->val + rows[r] * s->nv;
        if (isnan(v[3]))
            continue; /* not evaluated */
        const char *l = wl_pareto_set_label(s, rows[r]);
        int c = 0;
        while (strcmp(p->name[c], l) != 0)
            c++;
        size_t k = clock_index(p, v[3]);
        p->t[(size_t)c * p->nk + k] = v[0];
        p->e[(size_t)c * p->nk + k] = v[1];
        p->entries[c] = v[2];
        add_static(p, v[4], v[5]);
    }
    return WL_OK;
}

/* Phases: one row per clock with the phases' columns. A training step
 * enters its forward and backward once per micro-batch and its optimizer
 * once; a generation enters its prefill and its decode once. A row with
 * neither set of columns gives no problem (nc = 0). */
static int phase_problem(const wl_pareto_set *s, const size_t *rows, size_t m,
                         sched_problem *p)
{
    static const char *const train[3] = {"forward", "backward", "optimizer"};
    static const char *const gen[2] = {"prefill", "decode"};
    const double *v0 = NULL;
    for (size_t r = 0; r < m && !v0; r++) {
        const double *v = s->val + rows[r] * s->nv;
        if (!isnan(v[PV_TF]) || !isnan(v[PV_TTFT]))
            v0 = v;
    }
    if (!v0)
        return WL_OK;
    int is_train = !isnan(v0[PV_TF]);
    p->nc = is_train ? 3 : 2;
    for (int c = 0; c < p->nc; c++)
        p->name[c] = is_train ? train[c] : gen[c];
    int rc = sched_alloc(p, s, rows, m, PV_CLK);
    if (rc)
        return rc;
    for (size_t r = 0; r < m; r++) {
        const double *v = s->val + rows[r] * s->nv;
        if (isnan(v[PV_CLK]))
            continue;
        size_t k = clock_index(p, v[PV_CLK]), nk = p->nk;
        if (is_train) {
            for (int c = 0; c < 3; c++) {
                p->t[(size_t)c * nk + k] = v[PV_TF + c];
                p->e[(size_t)c * nk + k] = v[PV_EF + c];
            }
            double micro = isnan(v[PV_MICRO]) || v[PV_MICRO] < 1 ? 1 : v[PV_MICRO];
            p->entries[0] = p->entries[1] = micro;
            p->entries[2] = 1;
        } else {
            p->t[k] = v[PV_TTFT];
            p->t[nk + k] = v[PV_TIME] - v[PV_TTFT];
            p->e[k] = v[PV_EPRE];
            p->e[nk + k] = v[PV_EDEC];
            p->entries[0] = p->entries[1] = 1;
        }
        add_static(p, v[PV_STATIC], v[PV_TIME]);
        p->row_t[k] = v[PV_TIME];
        p->row_e[k] = v[PV_ENERGY];
    }
    return WL_OK;
}

wl_pareto_load_options wl_pareto_schedule_load_options(wl_pareto_schedule_by *by, int has_class,
                                                       int keep_infeasible)
{
    if (*by == WL_PARETO_BY_AUTO)
        *by = has_class ? WL_PARETO_BY_CLASS : WL_PARETO_BY_PHASE;
    if (*by == WL_PARETO_BY_PHASE)
        return (wl_pareto_load_options){.values = wl_pareto_phase_values,
                                        .nvalues = WL_PARETO_PHASE_NV, .optional_values = 1,
                                        .through_voltage = 1, .keep_infeasible = keep_infeasible};
    return (wl_pareto_load_options){.values = wl_pareto_schedule_values,
                                    .nvalues = WL_PARETO_SCHEDULE_NV, .through_voltage = 1,
                                    .keep_infeasible = keep_infeasible, .label = "kernel_class"};
}

int wl_pareto_schedule_supports(const wl_pareto_objective *obj)
{
    const char *name = wl_pareto_objective_name(obj);
    return !strcmp(name, "energy") || !strcmp(name, "energy-within-slowdown");
}

int wl_pareto_schedules(const wl_pareto_set *s, const wl_pareto_objective *obj,
                        wl_pareto_schedule_by by, double switch_us, wl_results_writer *w,
                        wl_error *err)
{
    if (!wl_pareto_schedule_supports(obj)) {
        wl_error_set(err, "objective", 0, wl_pareto_objective_name(obj),
                     "a schedule supports the energy and energy-within-slowdown=P objectives");
        return WL_EINVAL;
    }
    if (by == WL_PARETO_BY_CLASS ? s->nv < WL_PARETO_SCHEDULE_NV || !s->label
                                 : s->nv < WL_PARETO_PHASE_NV)
        return WL_EINVAL;
    size_t *order = NULL, *start = NULL;
    int rc = wl_pareto_i_by_group(s, &order, &start), phases = 0;
    size_t ncols = sizeof schedule_cols / sizeof *schedule_cols;
    wl_results_cell all[WL_PARETO_KEYED_MAX], *cells = all + s->ngc;
    if (s->ngc + ncols > WL_PARETO_KEYED_MAX)
        rc = WL_EINVAL;
    for (size_t g = 0; !rc && g < s->ngroups; g++) {
        wl_pareto_i_key_cells(s, g, all);
        for (size_t i = 0; i < ncols; i++)
            cells[i] = (wl_results_cell){NULL, NAN};
        cells[0].s = obj->text;
        wl_results_buf sched = {0};
        sched_problem p = {.nc = 0};
        const size_t *rows = order + start[g];
        size_t m = start[g + 1] - start[g];
        rc = by == WL_PARETO_BY_CLASS ? class_problem(s, rows, m, &p, err)
                                      : phase_problem(s, rows, m, &p);
        phases += p.nc > 0;
        if (!rc && p.nc > 0)
            rc = sched_solve(&p, obj, switch_us, &sched, cells);
        /* a group without phases (a prefill beside them) has no row */
        if (!rc && (by == WL_PARETO_BY_CLASS || p.nc > 0))
            rc = wl_results_writer_row(w, all);
        wl_results_buf_free(&sched);
        sched_free(&p);
    }
    if (!rc && by == WL_PARETO_BY_PHASE && s->ngroups && !phases) {
        wl_error_set(err, s->source, 0, "mode",
                     "no training or decode rows: a phase schedule needs a sweep with --mode "
                     "train or decode");
        rc = WL_EINVAL;
    }
    if (rc == WL_ENOMEM)
        wl_error_set(err, s->source, 0, "", "out of memory");
    free(order);
    free(start);
    return rc;
}
