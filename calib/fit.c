/* Least-squares fit of the per-GPU coefficients to measured rows.
 *
 * Residuals are log ratios ln(pred/meas) of time and power for every row
 * (energy = power x time follows), so large and small workloads weigh alike.
 * Coefficients are mapped to unbounded parameters (log for positive values,
 * logit for fractions) so the fit can never leave the physical range, and a
 * weak prior pulls each towards its physical default (wl_core_coeffs_default)
 * to keep nearly degenerate directions (e.g. c_tc vs c_active) well-posed. */
#include "calib_internal.h"
#include "../presets/wattlas_presets.h"

#include <stdio.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void wl_calib_fit_options_default(wl_calib_fit_options *o)
{
    /* Prior weight chosen by leave-one-model-out cross-validation on the A100
     * DVFS data (pooled held-out energy MAPE: 11.5% at 0.003, 10.6% at 0.1,
     * 7.5% at 0.3 and 0.5, 8.3% at 1, 9.3% at 2). */
    o->prior_weight = 0.3;
    o->huber_k = 0.05;
    o->irls_rounds = 4;
    o->from_defaults = 1;
    o->free_mask = 0;
    o->prior_at_start = 0;
    o->auto_select = 0;
    /* A transferred coefficient is known to about +-30% (one sd): the
     * zero-shot errors of the transfer rules on boards measured elsewhere
     * reach 18% in power and 30% in energy (issue 11), and per-component
     * power models carried across architectures are off by 7-25%
     * (AccelWattch, MICRO 2021). */
    o->transfer_rel = 0.3;
    /* the A100 calibration's residual spread (ln ratios, [covariance]
     * sigma_time_log 0.061, sigma_power_log 0.044): model and measurement
     * error of one row on a fitted GPU */
    o->sigma_time = 0.06;
    o->sigma_power = 0.045;
    o->prior_unc = NULL;
    o->scoring = 0;
    o->fold_done = NULL;
    o->fold_user = NULL;
}

typedef struct {
    wl_calib_problem *prob;
    const unsigned char *mask;
    size_t *rows; /* the rows fitted (owned: release_rows) */
    size_t nrows;
    wl_core_gpu gpu;
    double x0[WL_CALIB_NPARAMS];
    size_t idx[WL_CALIB_NPARAMS]; /* the fitted coefficients: x[j] is wl_calib_params[idx[j]] */
    size_t nfree;
    const wl_calib_set *set;
    double *w; /* robust weights: 3 per row (time, power, temperature) */
    double prior_w;
    double scale[3];  /* per residual kind: 1/sigma with known noise, else 1 */
    double psd[WL_CALIB_NPARAMS];   /* prior standard deviation, transformed units */
    int known_noise;  /* covariance without an estimated s^2 */
    int fixed_var;    /* coefficients held keep the prior's variance */
    /* the rows by workload (group g: order[gstart[g] .. gstart[g + 1]),
     * positions in rows, by power limit then rising clock), each group
     * with the targets its throttle cache keeps (group_rows) */
    size_t *order, *gstart, ngroups;
    wl_core_targets **targets;
    /* the groups, costliest first (gtime: each one's seconds at the last
     * evaluation), so that no costly one is left for the end of a pass */
    size_t *gnext;
    double *gtime;
    unsigned char *bucket; /* when set, each row's wl_calib_time_bucket */
} fit_ctx;

/* The residuals of one row (position k in c->rows) from its prediction. */
static void row_resid(const fit_ctx *c, size_t k, int rc, const wl_core_result *res, gsl_vector *f)
{
    const wl_calib_row *row = wl_calib_row_at(c->set, c->rows[k]);
    double ft = 10, fp = 10, fT = 0; /* a failed prediction is a large residual */
    if (rc == WL_OK && res->time_ms > 0 && res->power_w > 0 && isfinite(res->time_ms) &&
        isfinite(res->power_w) && isfinite(res->temp_c)) {
        ft = log(res->time_ms / row->time_ms);
        /* a time-only row says nothing about power */
        fp = wl_calib_row_has_power(row) ? log(res->power_w / row->power_w) : 0;
        /* temperature anchors the thermal model: 3 C weighs like 3% */
        if (isfinite(row->temp_c))
            fT = (res->temp_c - row->temp_c) / 100.0;
    }
    if (c->bucket)
        c->bucket[k] = (unsigned char)(rc == WL_OK ? wl_calib_time_bucket(res) : WL_CALIB_NBUCKETS);
    gsl_vector_set(f, 3 * k, ft * c->w[3 * k] * c->scale[0]);
    gsl_vector_set(f, 3 * k + 1, fp * c->w[3 * k + 1] * c->scale[1]);
    gsl_vector_set(f, 3 * k + 2, fT * c->w[3 * k + 2] * c->scale[2]);
}

/* A row's place in the evaluation order: its workload, then power limit,
 * then clock, then its position (k) for a total order. */
typedef struct {
    int wl;
    double limit, clock;
    size_t k;
} row_place;

static int by_place(const void *pa, const void *pb)
{
    const row_place *a = pa, *b = pb;
    if (a->wl != b->wl)
        return a->wl < b->wl ? -1 : 1;
    if (a->limit != b->limit)
        return a->limit < b->limit ? -1 : 1;
    if (a->clock != b->clock)
        return a->clock < b->clock ? -1 : 1;
    return (a->k > b->k) - (a->k < b->k);
}

/* Groups the fit's rows by workload, each group's in rising clock per
 * power limit: a group's rows then run in turn through one throttle cache,
 * so a workload's rows above the clock it throttles at share one solve of
 * the cap clock, and all its rows the governor's targets, found once per
 * evaluation of the residuals rather than once per row. The results are
 * wl_calib_predict's, bit for bit (wl_core_evaluator_run_cached), so the
 * fit does not change; it takes less time wherever rows are throttled.
 * (A fitted row is a scored one, so it has a workload.) */
static int group_rows(fit_ctx *c)
{
    size_t n = c->nrows;
    row_place *pl = malloc((n + 1) * sizeof *pl);
    c->order = malloc((n + 1) * sizeof *c->order);
    c->gstart = malloc((n + 2) * sizeof *c->gstart);
    c->targets = calloc(n + 1, sizeof *c->targets);
    c->gnext = malloc((n + 1) * sizeof *c->gnext);
    c->gtime = calloc(n + 1, sizeof *c->gtime);
    int rc = pl && c->order && c->gstart && c->targets && c->gnext && c->gtime ? WL_OK
                                                                               : WL_ENOMEM;
    for (size_t k = 0; !rc && k < n; k++) {
        const wl_calib_row *r = wl_calib_row_at(c->set, c->rows[k]);
        pl[k] = (row_place){.wl = wl_calib_i_workload_of(c->prob, c->rows[k]),
                            .limit = isnan(r->power_limit_w) ? 0 : r->power_limit_w,
                            .clock = r->sm_clock_mhz,
                            .k = k};
    }
    if (!rc)
        qsort(pl, n, sizeof *pl, by_place);
    c->ngroups = 0;
    for (size_t j = 0; !rc && j < n; j++) {
        c->order[j] = pl[j].k;
        if (j == 0 || pl[j].wl != pl[j - 1].wl)
            c->gstart[c->ngroups++] = j;
    }
    if (!rc)
        c->gstart[c->ngroups] = n;
    for (size_t g = 0; !rc && g < c->ngroups; g++) {
        c->gnext[g] = g;
        if (!(c->targets[g] = wl_core_targets_create()))
            rc = WL_ENOMEM;
    }
    free(pl);
    return rc;
}

/* Frees the rows and their groups (fit's every way out). */
static void release_rows(fit_ctx *c)
{
    for (size_t g = 0; c->targets && g < c->ngroups; g++)
        wl_core_targets_free(c->targets[g]);
    free(c->targets);
    free(c->order);
    free(c->gstart);
    free(c->gnext);
    free(c->gtime);
    free(c->rows);
    c->targets = NULL;
    c->order = c->gstart = c->gnext = c->rows = NULL;
    c->gtime = NULL;
    c->ngroups = 0;
}

static int resid(const gsl_vector *x, void *user, gsl_vector *f)
{
    fit_ctx *c = user;
    /* a stop asked for ends the fit at the next evaluation (wl_stop_watch) */
    if (wl_stop_requested())
        return GSL_EBADFUNC;
    wl_core_gpu g = c->gpu; /* the coefficients not fitted stay at the start's */
    for (size_t j = 0; j < c->nfree; j++)
        *wl_calib_coef_at(&g.coef, c->idx[j]) = wl_calib_from_x(&wl_calib_params[c->idx[j]], gsl_vector_get(x, j));
    wl_calib_problem_set_gpu(c->prob, &g);
    /* the workloads on every core: each group's rows read their evaluator
     * (const), its own cache, and write their own residuals, so the vector
     * does not depend on the thread count */
    for (size_t a = 1; a < c->ngroups; a++) /* costliest first (insertion) */
        for (size_t b = a; b > 0 && c->gtime[c->gnext[b]] > c->gtime[c->gnext[b - 1]]; b--) {
            size_t t = c->gnext[b];
            c->gnext[b] = c->gnext[b - 1];
            c->gnext[b - 1] = t;
        }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (size_t q = 0; q < c->ngroups; q++) {
        size_t gi = c->gnext[q];
        wl_core_throttle_cache cache = {.targets = c->targets[gi]};
#ifdef _OPENMP
        double t0 = omp_get_wtime();
#endif
        for (size_t j = c->gstart[gi]; j < c->gstart[gi + 1]; j++) {
            size_t k = c->order[j];
            wl_core_result res;
            int rc = wl_calib_i_predict_cached(c->prob, c->rows[k], &cache, &res);
            row_resid(c, k, rc, &res, f);
        }
#ifdef _OPENMP
        c->gtime[gi] = omp_get_wtime() - t0;
#endif
    }
    for (size_t j = 0; j < c->nfree; j++) {
        size_t i = c->idx[j];
        gsl_vector_set(f, 3 * c->nrows + j, c->psd[i] > 0 ? c->prior_w * (gsl_vector_get(x, j) -
                                                                           c->x0[i]) / c->psd[i]
                                                            : 0); /* 0: no prior (params.c) */
    }
    return GSL_SUCCESS;
}

/* u emptied, with every coefficient's name and its value at c->gpu (x space) */
static void unc_start(fit_ctx *c, wl_calib_uncertainty *u)
{
    memset(u, 0, sizeof *u);
    u->np = (int)WL_CALIB_NPARAMS;
    for (size_t i = 0; i < WL_CALIB_NPARAMS; i++) {
        snprintf(u->names[i], sizeof u->names[i], "%s", wl_calib_params[i].name);
        u->x[i] = wl_calib_to_x(&wl_calib_params[i], *wl_calib_coef_at(&c->gpu.coef, i));
    }
}

/* The time residual's RMS over n rows from their sum of squares; with known
 * noise no less than the noise assumed (the global spread and each
 * bucket's alike) */
static double time_spread(const fit_ctx *c, double ss, size_t n)
{
    double s = n ? sqrt(ss / (double)n) : 0;
    return c->known_noise ? fmax(s, 1 / c->scale[0]) : s;
}

/* Residual spreads from sums of squared ln ratios over n rows (time, power,
 * their sum for energy); with known noise, a handful of rows says little
 * about the spread: no less than the spread assumed for them. */
static void unc_spreads(const fit_ctx *c, wl_calib_uncertainty *u, double st, double sp,
                        double se, size_t n, size_t np)
{
    u->sigma_time = time_spread(c, st, n);
    u->sigma_power = np ? sqrt(sp / (double)np) : 0;
    u->sigma_energy = np ? sqrt(se / (double)np) : 0;
    if (c->known_noise) {
        double s_t = 1 / c->scale[0], s_p = 1 / c->scale[1];
        u->sigma_power = fmax(u->sigma_power, s_p);
        u->sigma_energy = fmax(u->sigma_energy, sqrt(s_t * s_t + s_p * s_p));
    }
}

/* The time residual by what a row spends its time on: each row counts in
 * the bucket of its largest share of kernel time (wl_calib_time_bucket),
 * and a bucket of BUCKET_MIN_ROWS rows or more keeps its RMS (0: the
 * global spread stands). A bf16 prefill is tensor-core GEMMs; pricing it by
 * every class's errors gave the H200's Llama-3-8B prefill a 95% interval of
 * -31%/+51%, when its fp32 GEMMs, GELU at 510 MHz and fp32 norms (0.17-0.75
 * RMS in ln) were what made the H200's 0.177 and its bf16 GEMMs sit at
 * 0.085. */
#define BUCKET_MIN_ROWS 5
static void bucket_spreads(const fit_ctx *c, const gsl_vector *r, wl_calib_uncertainty *u)
{
    double ss[WL_CALIB_NBUCKETS] = {0};
    size_t n[WL_CALIB_NBUCKETS] = {0};
    for (size_t k = 0; c->bucket && k < c->nrows; k++) {
        unsigned b = c->bucket[k];
        double a = gsl_vector_get(r, 3 * k) / c->scale[0];
        if (b < WL_CALIB_NBUCKETS && isfinite(a)) {
            ss[b] += a * a;
            n[b]++;
        }
    }
    for (size_t b = 0; b < WL_CALIB_NBUCKETS; b++)
        u->sigma_time_bucket[b] = n[b] < BUCKET_MIN_ROWS ? 0 : time_spread(c, ss[b], n[b]);
}

/* Covariance of the parameters from the Jacobian at the solution,
 * C = s^2 (J^T J)^-1 with s^2 the residual variance of the data rows
 * (ln ratios carry no known measurement error, so it is estimated), and the
 * residual spreads that prediction intervals add on top. */
static void uncertainty(gsl_multifit_nlinear_workspace *w, const gsl_vector *x, fit_ctx *c,
                        gsl_vector *r, wl_calib_uncertainty *u)
{
    unc_start(c, u);
    for (size_t j = 0; j < c->nfree; j++)
        u->x[c->idx[j]] = gsl_vector_get(x, j);
    /* unweighted data residuals at the solution */
    double *wsave = malloc(3 * c->nrows * sizeof *wsave);
    if (!wsave)
        return;
    memcpy(wsave, c->w, 3 * c->nrows * sizeof *wsave);
    for (size_t i = 0; i < 3 * c->nrows; i++)
        c->w[i] = 1.0;
    c->bucket = malloc(c->nrows ? c->nrows : 1);
    resid(x, c, r);
    double st = 0, sp = 0, se = 0, sw = 0;
    size_t np = 0; /* rows with power */
    for (size_t k = 0; k < c->nrows; k++) {
        double a = gsl_vector_get(r, 3 * k) / c->scale[0];
        double b = gsl_vector_get(r, 3 * k + 1) / c->scale[1];
        st += a * a;
        if (!wl_calib_row_has_power(wl_calib_row_at(c->set, c->rows[k])))
            continue;
        sp += b * b;
        se += (a + b) * (a + b);
        np++;
    }
    bucket_spreads(c, r, u);
    free(c->bucket);
    c->bucket = NULL;
    memcpy(c->w, wsave, 3 * c->nrows * sizeof *wsave);
    resid(x, c, r);
    for (size_t k = 0; k < 3 * c->nrows; k++)
        sw += gsl_vector_get(r, k) * gsl_vector_get(r, k);
    free(wsave);
    size_t nf = c->nfree;
    double dof = (double)(c->nrows + np) - (double)nf;
    if (dof < 1 && !c->known_noise)
        return;
    unc_spreads(c, u, st, sp, se, c->nrows, np);
    for (size_t i = 0; c->fixed_var && i < WL_CALIB_NPARAMS; i++)
        u->cov[i * WL_CALIB_NPARAMS + i] = c->psd[i] * c->psd[i];
    gsl_matrix *cov = gsl_matrix_alloc(nf, nf);
    if (!cov)
        return;
    /* coefficients held fixed have no variance from this fit */
    const gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    if (gsl_multifit_nlinear_covar(J, 0.0, cov) == GSL_SUCCESS) {
        double s2 = c->known_noise ? 1.0 : sw / dof;
        for (size_t i = 0; i < nf; i++)
            for (size_t j = 0; j < nf; j++)
                u->cov[c->idx[i] * WL_CALIB_NPARAMS + c->idx[j]] = gsl_matrix_get(cov, i, j) * s2;
        u->valid = 1;
    }
    gsl_matrix_free(cov);
}

void wl_calib_stderr(const wl_calib_uncertainty *u, double *se)
{
    for (int i = 0; i < u->np && i < (int)WL_CALIB_NPARAMS; i++) {
        const fit_param *p = &wl_calib_params[i];
        double sx = sqrt(u->cov[i * u->np + i] > 0 ? u->cov[i * u->np + i] : 0);
        double v = wl_calib_from_x(p, u->x[i]);
        double dv; /* d value / d x */
        if (p->t == T_LOG) {
            dv = v;
        } else {
            double q = (v - p->lo) / (p->hi - p->lo);
            dv = (p->hi - p->lo) * q * (1 - q);
        }
        se[i] = fabs(dv) * sx;
    }
}

/* The prior alone as the uncertainty: every coefficient at its start with
 * the prior's variance, residual spreads from the rows (no less than the
 * spread assumed). */
static void prior_only(fit_ctx *c, wl_calib_uncertainty *u)
{
    unc_start(c, u);
    for (size_t i = 0; i < WL_CALIB_NPARAMS; i++)
        u->cov[i * WL_CALIB_NPARAMS + i] = c->psd[i] * c->psd[i];
    double st = 0, sp = 0, se = 0;
    size_t n = 0, np = 0;
    wl_calib_problem_set_gpu(c->prob, &c->gpu);
    for (size_t k = 0; k < c->nrows; k++) {
        wl_core_result res;
        const wl_calib_row *row = wl_calib_row_at(c->set, c->rows[k]);
        if (wl_calib_predict(c->prob, c->rows[k], &res) || !(res.time_ms > 0) || !(res.power_w > 0))
            continue;
        double a = log(res.time_ms / row->time_ms);
        st += a * a, n++;
        if (!wl_calib_row_has_power(row))
            continue;
        double b = log(res.power_w / row->power_w);
        sp += b * b, se += (a + b) * (a + b), np++;
    }
    unc_spreads(c, u, st, sp, se, n, np); /* auto selection: known noise */
    u->valid = 1;
}

/* Few-shot selection (see wl_calib_fit_options.auto_select): the Jacobian
 * of the rows' residuals (each divided by its sigma) at the prior, by
 * forward differences, with each column times its prior sd, so that a
 * column's squared norm is the Fisher information the rows carry on that
 * coefficient in units of the prior's. A coefficient is fitted when that
 * is at least 1 (alone, the rows would halve its prior variance); how
 * correlated fitted coefficients share what the rows say is then the
 * posterior's business (the MAP fit with the prior, whose covariance says
 * how much of each is known). Leaves the chosen ones, most informed first,
 * in c->idx, c->nfree. */
static int select_identified(fit_ctx *c, wl_calib_fit_info *info)
{
    size_t nc = c->nfree, m = 3 * c->nrows, n = m + nc;
    size_t cand[WL_CALIB_NPARAMS];
    memcpy(cand, c->idx, nc * sizeof *cand);
    double *w = malloc(m * sizeof *w);
    gsl_vector *x = gsl_vector_alloc(nc), *f0 = gsl_vector_alloc(n), *f1 = gsl_vector_alloc(n);
    int rc = w && x && f0 && f1 ? WL_OK : WL_ENOMEM;
    if (!rc) {
        for (size_t i = 0; i < m; i++)
            w[i] = 1;
        c->w = w;
        for (size_t j = 0; j < nc; j++)
            gsl_vector_set(x, j, wl_calib_to_x(&wl_calib_params[cand[j]], *wl_calib_coef_at(&c->gpu.coef, cand[j])));
        resid(x, c, f0); /* only the rows' residuals are read, not the prior's */
        /* each coefficient's information alone: its whitened column's
         * squared norm */
        const double h = 1e-4;
        double g[WL_CALIB_NPARAMS];
        for (size_t j = 0; j < nc; j++) {
            double xj = gsl_vector_get(x, j);
            gsl_vector_set(x, j, xj + h);
            resid(x, c, f1);
            gsl_vector_set(x, j, xj);
            g[j] = 0;
            for (size_t r = 0; r < m; r++) {
                double a = (gsl_vector_get(f1, r) - gsl_vector_get(f0, r)) / h * c->psd[cand[j]];
                g[j] += a * a;
            }
        }
        /* the informed ones, largest first */
        c->nfree = 0;
        info->n_chosen = 0;
        for (;;) {
            size_t best = nc;
            double bn = 1.0; /* at least the prior's information */
            for (size_t j = 0; j < nc; j++)
                if (g[j] >= bn)
                    bn = g[j], best = j;
            if (best == nc)
                break;
            g[best] = -1;
            c->idx[c->nfree++] = cand[best];
            info->chosen[info->n_chosen] = (int)cand[best];
            info->gain[info->n_chosen++] = bn;
        }
    }
    c->w = NULL;
    free(w);
    if (x) gsl_vector_free(x);
    if (f0) gsl_vector_free(f0);
    if (f1) gsl_vector_free(f1);
    return rc;
}

/* How much a 10% rise of one phase's cost (*cost, inside g) moves the
 * times of the rows that run that phase (1 << WL_PHASE_x): the largest
 * |ln ratio| over them. */
static double phase_moves(wl_calib_problem *p, wl_core_gpu *g, const size_t *rows, size_t nr,
                          unsigned phase, double *cost)
{
    double v = *cost, moved = 0;
    for (size_t k = 0; k < nr; k++) {
        if (!(wl_calib_row_phases(p, rows[k]) & phase))
            continue;
        wl_core_result r0, r1;
        *cost = v;
        wl_calib_problem_set_gpu(p, g);
        int rc = wl_calib_predict(p, rows[k], &r0);
        *cost = 1.1 * v;
        wl_calib_problem_set_gpu(p, g);
        rc |= wl_calib_predict(p, rows[k], &r1);
        if (!rc && r0.time_ms > 0 && r1.time_ms > 0)
            moved = fmax(moved, fabs(log(r1.time_ms / r0.time_ms)));
    }
    *cost = v;
    return moved;
}

/* Whether the rows see a phase's issue cost. Where a phase's kernels run
 * longer than the host takes to issue them, the GPU sets its pace and the
 * cost moves no row's time: a flat stretch below the hinge max(issue,
 * kernel). The cost is seen if, at its start or that doubled up to 16x, a
 * 10% rise moves some row of the phase by 0.01%; a cost no row sees is
 * held, not fitted (its prior is flat: params.c). The problem's GPU and
 * *cost are left as they were. */
static int phase_seen(wl_calib_problem *p, wl_core_gpu *g, const size_t *rows, size_t nr,
                      unsigned phase, double *cost)
{
    const wl_core_gpu keep = *wl_calib_problem_gpu(p);
    double v = *cost;
    int seen = 0;
    for (double s = 1; s <= 16 && !seen; s *= 2) {
        *cost = v * s;
        seen = phase_moves(p, g, rows, nr, phase, cost) >= 1e-4;
    }
    *cost = v;
    wl_calib_problem_set_gpu(p, &keep);
    return seen;
}

/* A phase's issue cost (free coefficient j) starts where the rows say:
 * the least sum of squares over a grid of 2^(k/4) times its start, k in
 * [-16, 16], the others at theirs. A gradient step cannot find it from a
 * start on the flat stretch below the hinge (phase_seen), and from above
 * it can overshoot into that stretch and stay (GPT-2's AdamW on an H100:
 * 52 foreach kernels of ~45 us, a measured 80 us a kernel left at 30). */
static void scan_start(fit_ctx *c, gsl_vector *x, gsl_vector *r, size_t j)
{
    double x0 = gsl_vector_get(x, j), best = x0, best_ss = INFINITY;
    for (int k = -16; k <= 16; k++) {
        gsl_vector_set(x, j, x0 + k * 0.25 * M_LN2);
        if (resid(x, c, r) != GSL_SUCCESS)
            break;
        double ss;
        gsl_blas_ddot(r, r, &ss);
        if (ss < best_ss)
            best_ss = ss, best = gsl_vector_get(x, j);
    }
    gsl_vector_set(x, j, best);
}

static int fit(const wl_calib_problem *cp, const unsigned char *mask,
               const wl_calib_fit_options *opts, wl_core_gpu *out, wl_calib_fit_info *info)
{
    gsl_set_error_handler_off();
    wl_calib_fit_options o;
    if (opts)
        o = *opts;
    else
        wl_calib_fit_options_default(&o);
    if (!(o.prior_weight >= 0) || !(o.huber_k >= 0) || o.irls_rounds < 1)
        return WL_EINVAL;
    wl_calib_problem *p = (wl_calib_problem *)cp; /* evaluators are re-pointed, then restored */
    const wl_core_gpu start = *wl_calib_problem_gpu(p);
    memset(info, 0, sizeof *info);
    fit_ctx c;
    memset(&c, 0, sizeof c);
    c.prob = p;
    c.mask = mask;
    c.prior_w = o.prior_weight;
    c.gpu = start;
    /* a bare op's or a training step's issue cost of 0 is the model's
     * forward's (wl_core_coeffs); the fit works with the value itself, and
     * leaves the 0 where its rows do not fit it */
    c.gpu.coef.host_op_launch_us = wl_core_coeffs_op_launch_us(&c.gpu.coef);
    c.gpu.coef.host_train_launch_us = wl_core_coeffs_train_launch_us(&c.gpu.coef);
    c.scale[0] = c.scale[1] = c.scale[2] = 1;
    for (size_t i = 0; i < WL_CALIB_NPARAMS; i++)
        c.psd[i] = wl_calib_params[i].prior_sd;
    if (o.auto_select) {
        if (!(o.transfer_rel > 0) || !(o.sigma_time > 0) || !(o.sigma_power > 0))
            return WL_EINVAL;
        double st = o.sigma_time, sp = o.sigma_power;
        const wl_calib_uncertainty *pu = o.prior_unc;
        int use_pu = pu && pu->valid && pu->np == (int)WL_CALIB_NPARAMS;
        if (use_pu && pu->sigma_time > 0 && pu->sigma_power > 0)
            st = pu->sigma_time, sp = pu->sigma_power;
        c.scale[0] = 1 / st;
        c.scale[1] = c.scale[2] = 1 / sp; /* temperature: 1 C weighs like 1% */
        c.prior_w = 1;
        c.known_noise = c.fixed_var = 1;
        o.prior_at_start = 1;
        o.from_defaults = 0;
        o.huber_k = 0;
        o.irls_rounds = 1;
        for (size_t i = 0; i < WL_CALIB_NPARAMS; i++) {
            const fit_param *q = &wl_calib_params[i];
            double v = *wl_calib_coef_at(&c.gpu.coef, i), sd = o.transfer_rel;
            if (q->t == T_LOGIT) {
                /* the same relative spread, through the logit's slope */
                double u = (v - q->lo) / (q->hi - q->lo);
                u = fmin(fmax(u, 1e-3), 1 - 1e-3);
                sd = o.transfer_rel * fabs(v) / ((q->hi - q->lo) * u * (1 - u));
            }
            double var = sd * sd + (use_pu ? fmax(pu->cov[i * WL_CALIB_NPARAMS + i], 0) : 0);
            c.psd[i] = fmin(fmax(sqrt(var), 0.02), 3.0);
        }
    }
    c.set = wl_calib_problem_set(p);
    size_t n = wl_calib_count(c.set);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return WL_ENOMEM;
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        if ((!mask || mask[i]) && wl_calib_row_scored(p, i, NULL))
            rows[nr++] = i;
    c.rows = rows;
    c.nrows = nr;
    if (group_rows(&c)) {
        release_rows(&c);
        return WL_ENOMEM;
    }
    /* each issue cost is seen only by its own kind of row: a bare op's by
     * repeated one-kernel rows, a training step's by training rows, a
     * model's forward by the others. A step's phases apart: whole steps
     * with an optimizer and without (forward and backward alone) tell the
     * optimizer's kernels from the rest, and the backward's from the
     * forward's by its share of the step; the forward's cost in a step
     * (host_train_launch_us) is then held, since the same rows cannot also
     * move it (measure host times it alone: a forward recording autograd).
     * Steps of one kind leave one cost for the whole step, as before. A
     * generation's decode steps (generate's loop) have their own, seen by
     * rows of generations, which also carry a forward (the prefill). */
    const unsigned bwd = 1u << WL_PHASE_BACKWARD, optp = 1u << WL_PHASE_OPTIMIZER,
                   decp = 1u << WL_PHASE_DECODE;
    int n_rep = 0, n_model = 0, n_train = 0, n_opt = 0, n_dec = 0;
    for (size_t k = 0; k < nr; k++) {
        int rep = wl_calib_row_repeated(p, rows[k]);
        unsigned ph = rep ? 0 : wl_calib_row_phases(p, rows[k]);
        int tr = (ph & bwd) != 0;
        n_rep += rep;
        n_train += tr;
        n_opt += tr && (ph & optp);
        n_dec += (ph & decp) != 0;
        n_model += !rep && !tr;
    }
    int phases = n_opt > 0 && n_opt < n_train, seen_b = 0, seen_o = 0, seen_d = 0;
    if (phases) { /* fitted from the step's cost; unstated, they follow it */
        c.gpu.coef.host_backward_launch_us = wl_core_coeffs_phase_launch_us(&c.gpu.coef, WL_PHASE_BACKWARD);
        c.gpu.coef.host_optimizer_launch_us = wl_core_coeffs_phase_launch_us(&c.gpu.coef, WL_PHASE_OPTIMIZER);
        seen_b = phase_seen(p, &c.gpu, rows, nr, bwd, &c.gpu.coef.host_backward_launch_us);
        seen_o = phase_seen(p, &c.gpu, rows, nr, optp, &c.gpu.coef.host_optimizer_launch_us);
    }
    if (n_dec) { /* unstated, a decode step's kernel costs the forward's */
        c.gpu.coef.host_decode_launch_us = wl_core_coeffs_phase_launch_us(&c.gpu.coef, WL_PHASE_DECODE);
        seen_d = phase_seen(p, &c.gpu, rows, nr, decp, &c.gpu.coef.host_decode_launch_us);
    }
    /* the issue costs, and whether some row sees each */
    const struct {
        int k, seen, phase; /* phase: started from a grid (scan_start) */
    } costs[] = {{wl_calib_param_index("host_op_launch_us"), n_rep > 0, 0},
                 {wl_calib_param_index("host_launch_us"), n_model > 0, 0},
                 {wl_calib_param_index("host_train_launch_us"), n_train && !phases, 0},
                 {wl_calib_param_index("host_backward_launch_us"), seen_b, 1},
                 {wl_calib_param_index("host_optimizer_launch_us"), seen_o, 1},
                 {wl_calib_param_index("host_decode_launch_us"), seen_d, 1}};
    const size_t n_costs = sizeof costs / sizeof *costs;
    unsigned long long unseen_mask = 0, grid_mask = 0;
    for (size_t q = 0; q < n_costs; q++) {
        unseen_mask |= costs[q].seen ? 0 : 1ull << costs[q].k;
        grid_mask |= costs[q].phase ? 1ull << costs[q].k : 0;
    }
    int clock_terms = 0; /* a fitted coefficient other than the host's issue cost */
    for (size_t i = 0; i < WL_CALIB_NPARAMS; i++) {
        int unseen = unseen_mask >> i & 1ull;
        if ((!o.free_mask || (o.free_mask >> i & 1ull)) && !unseen) {
            c.idx[c.nfree++] = i;
            clock_terms |= !wl_core_coef_is_host(wl_calib_params[i].name);
        }
    }
    if (!c.nfree || o.free_mask >> WL_CALIB_NPARAMS) {
        snprintf(info->message, sizeof info->message, "no coefficient to fit");
        release_rows(&c);
        return WL_EINVAL;
    }
    if (o.auto_select) {
        if (!nr) {
            snprintf(info->message, sizeof info->message, "no usable row");
            release_rows(&c);
            return WL_EINVAL;
        }
        int rc = select_identified(&c, info);
        if (rc || !c.nfree) {
            /* nothing beyond the prior: the transfer stands, with its spread */
            if (!rc) {
                *out = start;
                prior_only(&c, &info->unc);
            }
            release_rows(&c);
            wl_calib_problem_set_gpu(p, &start);
            return rc;
        }
        clock_terms = 0; /* the selection has judged what the rows identify */
    }
    size_t nfree = c.nfree;
    if (!o.auto_select && nr < nfree / 2 + 1) {
        snprintf(info->message, sizeof info->message,
                 "%zu usable rows; at least %zu are needed to fit %zu coefficients", nr,
                 nfree / 2 + 1, nfree);
        release_rows(&c);
        return WL_EINVAL;
    }
    /* clock-dependent terms need the clock to vary */
    double clk[3];
    int nclk = 0;
    for (size_t k = 0; k < nr && nclk < 3; k++) {
        double f = wl_calib_row_at(c.set, rows[k])->sm_clock_mhz;
        int seen = 0;
        for (int j = 0; j < nclk; j++)
            seen |= fabs(clk[j] - f) < 1e-9;
        if (!seen)
            clk[nclk++] = f;
    }
    if (nclk < 3 && clock_terms) {
        snprintf(info->message, sizeof info->message,
                 "the rows cover %d SM clock(s); at least 3 are needed to separate "
                 "clock-dependent from fixed costs", nclk);
        release_rows(&c);
        return WL_EINVAL;
    }
    /* the prior is centred on the physical defaults, not on the start, so
     * refitting from a fitted preset converges to the same point */
    wl_core_coeffs prior;
    wl_core_coeffs_default(&prior);
    prior.host_op_launch_us = wl_core_coeffs_op_launch_us(&prior);
    prior.host_train_launch_us = wl_core_coeffs_train_launch_us(&prior);
    prior.host_backward_launch_us = wl_core_coeffs_phase_launch_us(&prior, WL_PHASE_BACKWARD);
    prior.host_optimizer_launch_us = wl_core_coeffs_phase_launch_us(&prior, WL_PHASE_OPTIMIZER);
    prior.host_decode_launch_us = wl_core_coeffs_phase_launch_us(&prior, WL_PHASE_DECODE);
    wl_core_coeffs sc = c.gpu.coef, sc0 = c.gpu.coef;
    if (o.from_defaults)
        sc = prior;
    for (size_t i = 0; i < WL_CALIB_NPARAMS; i++)
        c.x0[i] = wl_calib_to_x(&wl_calib_params[i], *wl_calib_coef_at(o.prior_at_start ? &sc0 : &prior, i));
    for (size_t j = 0; j < nfree; j++)
        info->identified |= o.auto_select ? 1ull << c.idx[j] : 0;

    c.w = malloc(3 * nr * sizeof *c.w);
    if (!c.w) {
        release_rows(&c);
        return WL_ENOMEM;
    }
    for (size_t i = 0; i < 3 * nr; i++)
        c.w[i] = 1.0;

    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = resid;
    fdf.df = NULL;
    fdf.n = 3 * nr + nfree;
    fdf.p = nfree;
    fdf.params = &c;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, fdf.n, fdf.p);
    gsl_vector *x = gsl_vector_alloc(nfree);
    gsl_vector *r = gsl_vector_alloc(fdf.n);
    if (!w || !x || !r) {
        if (w) gsl_multifit_nlinear_free(w);
        if (x) gsl_vector_free(x);
        if (r) gsl_vector_free(r);
        free(c.w);
        release_rows(&c);
        return WL_ENOMEM;
    }
    for (size_t j = 0; j < nfree; j++)
        gsl_vector_set(x, j, wl_calib_to_x(&wl_calib_params[c.idx[j]], *wl_calib_coef_at(&sc, c.idx[j])));
    for (size_t j = 0; j < nfree; j++)
        if (grid_mask >> c.idx[j] & 1ull)
            scan_start(&c, x, r, j);
    int rc = GSL_SUCCESS;
    /* Iteratively reweighted least squares with Huber weights: residuals
     * beyond huber_k (in log ratio, ~5%) count linearly, not quadratically,
     * so noisy launch-bound rows (25% run-to-run, shared/data README) and
     * outliers do not pull the coefficients. */
    for (int round = 0; round < o.irls_rounds && rc == GSL_SUCCESS; round++) {
        rc = gsl_multifit_nlinear_init(x, &fdf, w);
        if (rc != GSL_SUCCESS)
            break;
        if (round == 0) {
            gsl_vector *f0 = gsl_multifit_nlinear_residual(w);
            gsl_blas_ddot(f0, f0, &info->cost_initial);
        }
        int why = 0;
        rc = gsl_multifit_nlinear_driver(200, o.scoring ? 1e-4 : 1e-8, 1e-8, 1e-8, NULL, NULL, &why, w);
        if (rc == GSL_EMAXITER || rc == GSL_ENOPROG)
            rc = GSL_SUCCESS;
        info->iterations += (int)gsl_multifit_nlinear_niter(w);
        gsl_vector_memcpy(x, gsl_multifit_nlinear_position(w));
        /* new weights from unweighted residuals at the current point */
        for (size_t i = 0; i < 3 * nr; i++)
            c.w[i] = 1.0;
        resid(x, &c, r);
        for (size_t i = 0; i < 3 * nr; i++) {
            double a = fabs(gsl_vector_get(r, i));
            c.w[i] = (o.huber_k > 0 && a > o.huber_k) ? sqrt(o.huber_k / a) : 1.0;
        }
    }
    if (rc == GSL_SUCCESS) {
        resid(x, &c, r);
        gsl_blas_ddot(r, r, &info->cost_final);
        *out = start;
        if (phases) /* the step's forward as the fit held it (its rows' own) */
            out->coef.host_train_launch_us = c.gpu.coef.host_train_launch_us;
        for (size_t j = 0; j < nfree; j++) {
            *wl_calib_coef_at(&out->coef, c.idx[j]) = wl_calib_from_x(&wl_calib_params[c.idx[j]], gsl_vector_get(x, j));
            info->fitted |= 1ull << c.idx[j];
        }
        uncertainty(w, x, &c, r, &info->unc);
    }
    info->status = rc;
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_vector_free(r);
    free(c.w);
    release_rows(&c);
    wl_calib_problem_set_gpu(p, &start);
    /* GSL_EMAXITER still leaves the best point found */
    return wl_stop_requested() ? WL_ESTOPPED : rc == GSL_SUCCESS ? WL_OK : WL_ENOCONV;
}

/* The fit's finite differences (GSL's Jacobian steps of ~1e-8) need the
 * model smooth to rounding: while it runs, the problem's evaluators walk
 * the power governor launch by launch, not by each kernel's band of clocks
 * (within 1e-6, with switches between its ways that a step could cross),
 * unless the fit only scores held-out rows (scoring: it stops at a step of
 * 1e-4, far above what those switches disturb). */
int wl_calib_fit(const wl_calib_problem *cp, const unsigned char *mask,
                 const wl_calib_fit_options *opts, wl_core_gpu *out, wl_calib_fit_info *info)
{
    wl_calib_problem *p = (wl_calib_problem *)cp; /* restored below */
    wl_calib_i_problem_exact(p, !(opts && opts->scoring));
    int rc = fit(cp, mask, opts, out, info);
    wl_calib_i_problem_exact(p, 0);
    return rc;
}
