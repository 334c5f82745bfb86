/* Least-squares fit of the per-GPU coefficients to measured rows.
 *
 * Residuals are log ratios ln(pred/meas) of time and power for every row
 * (energy = power x time follows), so large and small workloads weigh alike.
 * Coefficients are mapped to unbounded parameters (log for positive values,
 * logit for fractions) so the fit can never leave the physical range, and a
 * weak prior pulls each towards its physical default (wl_core_coeffs_default)
 * to keep nearly degenerate directions (e.g. c_tc vs c_active) well-posed. */
#include "wattlas_calib.h"
#include "../presets/wattlas_presets.h"

#include <stdio.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_LOG, T_LOGIT } xform;

typedef struct {
    const char *name;
    size_t off; /* in wl_core_coeffs */
    xform t;
    double lo, hi; /* logit range */
    double prior_sd; /* in transformed units */
} fit_param;

#define P_LOG(m, sd) {#m, offsetof(wl_core_coeffs, m), T_LOG, 0, 0, sd}
#define P_LOGIT(m, lo, hi, sd) {#m, offsetof(wl_core_coeffs, m), T_LOGIT, lo, hi, sd}

static const fit_param params[] = {
    P_LOGIT(tc_eff, 0.05, 1.0, 2.0),
    P_LOGIT(cuda_eff, 0.05, 1.0, 2.0),
    /* alu_eff is weakly identified (low-clock slope of memory-bound kernels);
     * its prior width was chosen by leave-one-model-out CV: pooled held-out
     * energy MAPE 8.3% at sd 2, 7.3% at 1, 6.8% at 0.75, 6.5% at 0.6 and
     * 0.5, 6.5% at 0.25 */
    P_LOGIT(alu_eff, 0.01, 1.0, 0.6),
    P_LOGIT(dram_eff, 0.2, 1.0, 2.0),
    P_LOGIT(l2_eff, 0.05, 1.0, 2.0),
    P_LOG(mem_bytes_per_clk, 2.0),
    P_LOG(mem_path_gbs, 2.0),
    P_LOG(overlap_p, 1.0),
    P_LOG(kernel_fixed_clk, 2.0),
    P_LOG(host_launch_us, 2.0),
    P_LOG(host_op_launch_us, 2.0),
    P_LOG(launch_clk, 2.0),
    P_LOG(kernel_fixed_us, 2.0),
    P_LOG(tile_overhead_clk, 2.0),
    P_LOGIT(v_exponent, 1.5, 4.5, 2.0),
    P_LOG(c_active_w, 2.0),
    P_LOG(c_gap_w, 2.0),
    P_LOG(c_tc_w, 2.0),
    P_LOG(c_fp_w, 2.0),
    P_LOG(c_sfu_w, 2.0),
    P_LOG(c_smem_w, 2.0),
    P_LOG(c_l2_w, 2.0),
    P_LOG(e_dram_pj_per_byte, 1.0),
    P_LOG(dram_background_w, 2.0),
    P_LOG(leak_w_per_c, 2.0),
    P_LOG(vf_temp_mhz_per_c, 1.0),
    P_LOG(thermal_c_per_w, 1.0),
    P_LOG(idle_temp_c, 1.0),
    /* the power a board holds under its limit, over the limit: the A100 PCIe
     * holds 240 W under 250 (0.96); the H100 SXM 697-710 W under 700, a
     * little over it on average (the limiter acts over ~100 ms windows), so
     * the range reaches past 1 */
    P_LOGIT(power_cap_frac, 0.8, 1.05, 2.0),
};
#define NP (sizeof params / sizeof *params)
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
    o->fold_done = NULL;
    o->fold_user = NULL;
}

int wl_calib_param_count(void) { return (int)NP; }

const char *wl_calib_param_name(int i)
{
    return (i >= 0 && (size_t)i < NP) ? params[i].name : NULL;
}

int wl_calib_param_index(const char *name)
{
    for (size_t i = 0; i < NP; i++)
        if (!strcmp(params[i].name, name))
            return (int)i;
    return -1;
}

static double *coef_at(wl_core_coeffs *c, size_t i)
{
    return (double *)(void *)((char *)c + params[i].off);
}

static double to_x(const fit_param *p, double v)
{
    if (p->t == T_LOG)
        return log(v > 1e-12 ? v : 1e-12);
    double u = (v - p->lo) / (p->hi - p->lo);
    if (u < 1e-6) u = 1e-6;
    if (u > 1 - 1e-6) u = 1 - 1e-6;
    return log(u / (1 - u));
}

static double from_x(const fit_param *p, double x)
{
    if (p->t == T_LOG)
        return exp(x);
    return p->lo + (p->hi - p->lo) / (1.0 + exp(-x));
}

typedef struct {
    wl_calib_problem *prob;
    const unsigned char *mask;
    const size_t *rows;
    size_t nrows;
    wl_core_gpu gpu;
    double x0[NP];
    size_t idx[NP]; /* the fitted coefficients: x[j] is params[idx[j]] */
    size_t nfree;
    const wl_calib_set *set;
    double *w; /* robust weights: 3 per row (time, power, temperature) */
    double prior_w;
    double scale[3];  /* per residual kind: 1/sigma with known noise, else 1 */
    double psd[NP];   /* prior standard deviation, transformed units */
    int known_noise;  /* covariance without an estimated s^2 */
    int fixed_var;    /* coefficients held keep the prior's variance */
} fit_ctx;

static int resid(const gsl_vector *x, void *user, gsl_vector *f)
{
    fit_ctx *c = user;
    wl_core_gpu g = c->gpu; /* the coefficients not fitted stay at the start's */
    for (size_t j = 0; j < c->nfree; j++)
        *coef_at(&g.coef, c->idx[j]) = from_x(&params[c->idx[j]], gsl_vector_get(x, j));
    wl_calib_problem_set_gpu(c->prob, &g);
    for (size_t k = 0; k < c->nrows; k++) {
        size_t r = c->rows[k];
        wl_core_result res;
        const wl_calib_row *row = wl_calib_row_at(c->set, r);
        double ft = 10, fp = 10, fT = 0; /* a failed prediction is a large residual */
        if (wl_calib_predict(c->prob, r, &res) == WL_OK && res.time_ms > 0 && res.power_w > 0 &&
            isfinite(res.time_ms) && isfinite(res.power_w) && isfinite(res.temp_c)) {
            ft = log(res.time_ms / row->time_ms);
            /* a time-only row says nothing about power */
            fp = wl_calib_row_has_power(row) ? log(res.power_w / row->power_w) : 0;
            /* temperature anchors the thermal model: 3 C weighs like 3% */
            if (isfinite(row->temp_c))
                fT = (res.temp_c - row->temp_c) / 100.0;
        }
        gsl_vector_set(f, 3 * k, ft * c->w[3 * k] * c->scale[0]);
        gsl_vector_set(f, 3 * k + 1, fp * c->w[3 * k + 1] * c->scale[1]);
        gsl_vector_set(f, 3 * k + 2, fT * c->w[3 * k + 2] * c->scale[2]);
    }
    for (size_t j = 0; j < c->nfree; j++) {
        size_t i = c->idx[j];
        gsl_vector_set(f, 3 * c->nrows + j,
                       c->prior_w * (gsl_vector_get(x, j) - c->x0[i]) / c->psd[i]);
    }
    return GSL_SUCCESS;
}

/* u emptied, with every coefficient's name and its value at c->gpu (x space) */
static void unc_start(fit_ctx *c, wl_calib_uncertainty *u)
{
    memset(u, 0, sizeof *u);
    u->np = (int)NP;
    for (size_t i = 0; i < NP; i++) {
        snprintf(u->names[i], sizeof u->names[i], "%s", params[i].name);
        u->x[i] = to_x(&params[i], *coef_at(&c->gpu.coef, i));
    }
}

/* Residual spreads from sums of squared ln ratios over n rows (time, power,
 * their sum for energy); with known noise, a handful of rows says little
 * about the spread: no less than the spread assumed for them. */
static void unc_spreads(const fit_ctx *c, wl_calib_uncertainty *u, double st, double sp,
                        double se, size_t n, size_t np)
{
    u->sigma_time = n ? sqrt(st / (double)n) : 0;
    u->sigma_power = np ? sqrt(sp / (double)np) : 0;
    u->sigma_energy = np ? sqrt(se / (double)np) : 0;
    if (c->known_noise) {
        double s_t = 1 / c->scale[0], s_p = 1 / c->scale[1];
        u->sigma_time = fmax(u->sigma_time, s_t);
        u->sigma_power = fmax(u->sigma_power, s_p);
        u->sigma_energy = fmax(u->sigma_energy, sqrt(s_t * s_t + s_p * s_p));
    }
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
    for (size_t i = 0; c->fixed_var && i < NP; i++)
        u->cov[i * NP + i] = c->psd[i] * c->psd[i];
    gsl_matrix *cov = gsl_matrix_alloc(nf, nf);
    if (!cov)
        return;
    /* coefficients held fixed have no variance from this fit */
    const gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    if (gsl_multifit_nlinear_covar(J, 0.0, cov) == GSL_SUCCESS) {
        double s2 = c->known_noise ? 1.0 : sw / dof;
        for (size_t i = 0; i < nf; i++)
            for (size_t j = 0; j < nf; j++)
                u->cov[c->idx[i] * NP + c->idx[j]] = gsl_matrix_get(cov, i, j) * s2;
        u->valid = 1;
    }
    gsl_matrix_free(cov);
}

void wl_calib_stderr(const wl_calib_uncertainty *u, double *se)
{
    for (int i = 0; i < u->np && i < (int)NP; i++) {
        const fit_param *p = &params[i];
        double sx = sqrt(u->cov[i * u->np + i] > 0 ? u->cov[i * u->np + i] : 0);
        double v = from_x(p, u->x[i]);
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
    for (size_t i = 0; i < NP; i++)
        u->cov[i * NP + i] = c->psd[i] * c->psd[i];
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
    size_t cand[NP];
    memcpy(cand, c->idx, nc * sizeof *cand);
    double *w = malloc(m * sizeof *w);
    gsl_vector *x = gsl_vector_alloc(nc), *f0 = gsl_vector_alloc(n), *f1 = gsl_vector_alloc(n);
    int rc = w && x && f0 && f1 ? WL_OK : WL_ENOMEM;
    if (!rc) {
        for (size_t i = 0; i < m; i++)
            w[i] = 1;
        c->w = w;
        for (size_t j = 0; j < nc; j++)
            gsl_vector_set(x, j, to_x(&params[cand[j]], *coef_at(&c->gpu.coef, cand[j])));
        resid(x, c, f0); /* only the rows' residuals are read, not the prior's */
        /* each coefficient's information alone: its whitened column's
         * squared norm */
        const double h = 1e-4;
        double g[NP];
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

int wl_calib_fit(const wl_calib_problem *cp, const unsigned char *mask,
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
    /* a bare op's issue cost of 0 is the model's (wl_core_coeffs); the fit
     * works with the value itself */
    c.gpu.coef.host_op_launch_us = wl_core_coeffs_op_launch_us(&c.gpu.coef);
    c.scale[0] = c.scale[1] = c.scale[2] = 1;
    for (size_t i = 0; i < NP; i++)
        c.psd[i] = params[i].prior_sd;
    if (o.auto_select) {
        if (!(o.transfer_rel > 0) || !(o.sigma_time > 0) || !(o.sigma_power > 0))
            return WL_EINVAL;
        double st = o.sigma_time, sp = o.sigma_power;
        const wl_calib_uncertainty *pu = o.prior_unc;
        int use_pu = pu && pu->valid && pu->np == (int)NP;
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
        for (size_t i = 0; i < NP; i++) {
            const fit_param *q = &params[i];
            double v = *coef_at(&c.gpu.coef, i), sd = o.transfer_rel;
            if (q->t == T_LOGIT) {
                /* the same relative spread, through the logit's slope */
                double u = (v - q->lo) / (q->hi - q->lo);
                u = fmin(fmax(u, 1e-3), 1 - 1e-3);
                sd = o.transfer_rel * fabs(v) / ((q->hi - q->lo) * u * (1 - u));
            }
            double var = sd * sd + (use_pu ? fmax(pu->cov[i * NP + i], 0) : 0);
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
    /* each issue cost is seen only by its own kind of row: a bare op's by
     * repeated one-kernel rows, a model's by the others */
    int n_rep = 0, n_model = 0;
    for (size_t k = 0; k < nr; k++) {
        int rep = wl_calib_row_repeated(p, rows[k]);
        n_rep += rep;
        n_model += !rep;
    }
    int clock_terms = 0; /* a fitted coefficient other than the host's issue cost */
    for (size_t i = 0; i < NP; i++) {
        int unseen = (!n_rep && !strcmp(params[i].name, "host_op_launch_us")) ||
                     (!n_model && !strcmp(params[i].name, "host_launch_us"));
        if ((!o.free_mask || (o.free_mask >> i & 1ull)) && !unseen) {
            c.idx[c.nfree++] = i;
            clock_terms |= !wl_core_coef_is_host(params[i].name);
        }
    }
    if (!c.nfree || o.free_mask >> NP) {
        snprintf(info->message, sizeof info->message, "no coefficient to fit");
        free(rows);
        return WL_EINVAL;
    }
    if (o.auto_select) {
        if (!nr) {
            snprintf(info->message, sizeof info->message, "no usable row");
            free(rows);
            return WL_EINVAL;
        }
        int rc = select_identified(&c, info);
        if (rc || !c.nfree) {
            /* nothing beyond the prior: the transfer stands, with its spread */
            if (!rc) {
                *out = start;
                prior_only(&c, &info->unc);
            }
            free(rows);
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
        free(rows);
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
        free(rows);
        return WL_EINVAL;
    }
    /* the prior is centred on the physical defaults, not on the start, so
     * refitting from a fitted preset converges to the same point */
    wl_core_coeffs prior;
    wl_core_coeffs_default(&prior);
    prior.host_op_launch_us = wl_core_coeffs_op_launch_us(&prior);
    wl_core_coeffs sc = c.gpu.coef, sc0 = c.gpu.coef;
    if (o.from_defaults)
        sc = prior;
    for (size_t i = 0; i < NP; i++)
        c.x0[i] = to_x(&params[i], *coef_at(o.prior_at_start ? &sc0 : &prior, i));
    for (size_t j = 0; j < nfree; j++)
        info->identified |= o.auto_select ? 1ull << c.idx[j] : 0;

    c.w = malloc(3 * nr * sizeof *c.w);
    if (!c.w) {
        free(rows);
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
        free(rows);
        return WL_ENOMEM;
    }
    for (size_t j = 0; j < nfree; j++)
        gsl_vector_set(x, j, to_x(&params[c.idx[j]], *coef_at(&sc, c.idx[j])));
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
        rc = gsl_multifit_nlinear_driver(200, 1e-8, 1e-8, 1e-8, NULL, NULL, &why, w);
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
        for (size_t j = 0; j < nfree; j++) {
            *coef_at(&out->coef, c.idx[j]) = from_x(&params[c.idx[j]], gsl_vector_get(x, j));
            info->fitted |= 1ull << c.idx[j];
        }
        uncertainty(w, x, &c, r, &info->unc);
    }
    info->status = rc;
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_vector_free(r);
    free(c.w);
    free(rows);
    wl_calib_problem_set_gpu(p, &start);
    /* GSL_EMAXITER still leaves the best point found */
    return rc == GSL_SUCCESS ? WL_OK : WL_ENOCONV;
}

/* ---- uncertainty: storage and propagation ------------------------------- */

void wl_calib_uncertainty_write(FILE *f, const wl_calib_uncertainty *u)
{
    fprintf(f, "[covariance]\n; of the fitted parameters in the fit's internal scale (ln for\n"
               "; positive coefficients, logit for bounded ones); used by --interval\n");
    fprintf(f, "sigma_time_log = %.10g\nsigma_power_log = %.10g\nsigma_energy_log = %.10g\n",
            u->sigma_time, u->sigma_power, u->sigma_energy);
    for (int i = 0; i < u->np; i++) {
        fprintf(f, "cov_%s =", u->names[i]);
        for (int j = 0; j < u->np; j++)
            fprintf(f, "%s %.10g", j ? (j % 6 == 0 ? ",\n   " : ",") : "", u->cov[i * u->np + j]);
        fprintf(f, "\n");
    }
}

/* [covariance]: sigma_*_log values and one cov_NAME row per fitted
 * coefficient, a list that may go on over indented lines (joined as the
 * preset lists are, so that a trailing empty item is an error). */
typedef struct {
    wl_calib_uncertainty *u;
    char *row[WL_CALIB_MAXP];
    int row_line[WL_CALIB_MAXP];
    int seen_section;
    const char *source;
    wl_error *err;
} cov_ctx;

static int cov_handler(void *user, const char *section, const char *name, const char *value,
                       int line)
{
    cov_ctx *c = user;
    if (!strcmp(section, "calibration") && !strcmp(name, "data_hash")) {
        /* "fnv1a64:<16 hex> (file name)": the hash alone */
        size_t n = strcspn(value, " \t");
        if (n < sizeof c->u->data_hash) {
            memcpy(c->u->data_hash, value, n);
            c->u->data_hash[n] = '\0';
        }
        return 1;
    }
    if (strcmp(section, "covariance") != 0)
        return 1;
    c->seen_section = 1;
    wl_calib_uncertainty *u = c->u;
    double *dst = NULL;
    if (strcmp(name, "sigma_time_log") == 0)
        dst = &u->sigma_time;
    else if (strcmp(name, "sigma_power_log") == 0)
        dst = &u->sigma_power;
    else if (strcmp(name, "sigma_energy_log") == 0)
        dst = &u->sigma_energy;
    if (dst)
        return wl_core_parse_real(value, 0, 100, c->source, line, name, dst, c->err) == WL_OK;
    if (strncmp(name, "cov_", 4) != 0) {
        wl_error_set(c->err, c->source, line, name, "unknown key in [covariance]");
        return 0;
    }
    int i;
    for (i = 0; i < (int)NP; i++)
        if (strcmp(params[i].name, name + 4) == 0)
            break;
    if (i == (int)NP) {
        wl_error_set(c->err, c->source, line, name, "not a fitted coefficient");
        return 0;
    }
    size_t old = c->row[i] ? strlen(c->row[i]) : 0, add = strlen(value);
    char *nr = realloc(c->row[i], old + add + 2);
    if (!nr) {
        wl_error_set(c->err, c->source, line, name, "out of memory");
        return 0;
    }
    if (!old)
        c->row_line[i] = line;
    else if (nr[old - 1] != ',')
        nr[old++] = ',';
    memcpy(nr + old, value, add + 1);
    c->row[i] = nr;
    return 1;
}

static int cov_rows(cov_ctx *c, const char *source, wl_error *err)
{
    wl_calib_uncertainty *u = c->u;
    for (int i = 0; i < (int)NP; i++) {
        snprintf(u->names[i], sizeof u->names[i], "%s", params[i].name);
        wl_core_numlist l = {0};
        int rc = c->row[i] ? wl_core_parse_list(c->row[i], -1e6, 1e6, 0, source, c->row_line[i],
                                                u->names[i], &l, err)
                           : WL_EPARSE;
        if (!rc && l.n != NP)
            rc = WL_EPARSE;
        for (size_t j = 0; !rc && j < NP; j++)
            u->cov[(size_t)i * NP + j] = l.v[j];
        wl_core_numlist_free(&l);
        if (rc) {
            if (rc != WL_EINVAL)
                wl_error_set(err, source, c->row_line[i], params[i].name,
                             "[covariance] needs a row of %zu values for each fitted coefficient",
                             NP);
            return WL_EPARSE;
        }
    }
    return WL_OK;
}

int wl_calib_uncertainty_parse(const char *text, const char *source, wl_calib_uncertainty *u,
                               wl_error *err)
{
    memset(u, 0, sizeof *u);
    cov_ctx c = {.u = u, .source = source, .err = err};
    int rc = wl_preset_ini_parse(text, strlen(text), source, cov_handler, &c, err);
    if (!rc && !c.seen_section) {
        wl_error_set(err, source, 0, "covariance",
                     "the preset has no [covariance] section (recalibrate it with "
                     "'wattlas calibrate')");
        rc = WL_ENOTFOUND;
    }
    if (!rc && (rc = cov_rows(&c, source, err)) == WL_OK) {
        u->np = (int)NP;
        u->valid = 1;
    }
    for (int i = 0; i < (int)NP; i++)
        free(c.row[i]);
    return rc;
}

static int uncertainty_load(const char *gpu_id_or_path, wl_calib_uncertainty *u, wl_error *err,
                            int depth)
{
    const char *text;
    char *buf;
    int rc = wl_preset_find(WL_PRESET_GPU, gpu_id_or_path, &text, &buf, NULL, 0, err);
    if (rc)
        return rc;
    /* a transferred preset has no [covariance] of its own: its coefficients
     * are the source's times constants, so in the fit's scale (ln for
     * positive coefficients, logit for efficiencies, which transfer
     * unchanged) the covariance is the source's. The interval then carries
     * the source's calibration uncertainty, not the transfer's own error. */
    int has_cov = strstr(text, "[covariance]") != NULL;
    if (has_cov || depth >= 4) {
        rc = wl_calib_uncertainty_parse(text, gpu_id_or_path, u, err);
    } else {
        wl_core_gpu g;
        rc = wl_preset_gpu_parse(text, gpu_id_or_path, &g, err);
        const char *pre = "transferred from ";
        if (!rc && strncmp(g.coef_source, pre, strlen(pre)) == 0)
            rc = uncertainty_load(g.coef_source + strlen(pre), u, err, depth + 1);
        else if (!rc)
            rc = wl_calib_uncertainty_parse(text, gpu_id_or_path, u, err);
    }
    free(buf);
    return rc;
}

int wl_calib_uncertainty_load(const char *gpu_id_or_path, wl_calib_uncertainty *u, wl_error *err)
{
    int rc = uncertainty_load(gpu_id_or_path, u, err, 0);
    if (rc == WL_OK)
        u->board = wl_calib_board_spread_class();
    return rc;
}

/* The boards and hosts measured for this project, and how far apart they
 * sit. Each figure is the RMS of the ln ratio over the pairs measured, as
 * a board nobody measured may sit from the one a preset carries:
 *  - dynamic power at a clock: H100 board 2 (data/h100-vm-2026-11, 44
 *    kernel rows) draws 0.70-0.88 of the H100 board of shared/data's
 *    kernel database above idle on the same kernels at 1200 MHz (median
 *    0.73: ln -0.31); the H200 board B (data/h200-vm-2026-11) is within
 *    about 5% of the shared H200 board (its whole models on that board's
 *    calibration: 7% power MAPE): RMS of (0.31, 0.05) = 0.22;
 *  - the power at which the controller holds a throttled kernel, as a
 *    fraction of the 700 W limit: 0.99-1.01 (shared H100 board), 0.82-0.87
 *    (H100 board 2), 0.84-0.96 (H100 board 3, data/h100-serve-2026-11),
 *    0.76-0.87 (shared H200), 0.84-0.92 (H200 board B), 0.79-0.91
 *    (EnergAIzer's H100 rows at 1830 MHz); over the fifteen pairs of the
 *    mid values (1.00, 0.845, 0.92, 0.815, 0.88, 0.85), RMS 0.10;
 *  - the host's cost per kernel of an HF forward (GPT-2 b1 s8): 18 us
 *    (EnergAIzer's H100 host), 20.7 (the shared H100 host), 21.3 (the
 *    shared H200 host), 23.6 (board B's VM), 37.8 (board 2's VM): over the
 *    ten pairs RMS 0.40 (and within one host a model family's cost per
 *    kernel differs by up to 1.5x: Qwen2-1.5B against GPT-2 on board B's
 *    VM, Llama-3-8B decode against GPT-2 on board 2's). */
wl_calib_board_spread wl_calib_board_spread_class(void)
{
    return (wl_calib_board_spread){.dyn_power_sd = 0.22, .setpoint_sd = 0.10, .host_sd = 0.40};
}

/* The effect on ln time, power and energy of one board factor at one
 * standard deviation sd either way, upwards and downwards apart (a lower
 * setpoint throttles where a higher one changes nothing; a slower host
 * binds where a faster one does not): each side of the interval takes its
 * own. */
typedef enum { BOARD_DYN, BOARD_SETPOINT, BOARD_HOST } board_factor;

static void board_scale(wl_core_coeffs *c, board_factor f, double s)
{
    switch (f) {
    case BOARD_DYN: {
        double *w[] = {&c->c_active_w, &c->c_gap_w, &c->c_tc_w, &c->c_fp_w, &c->c_sfu_w,
                       &c->c_smem_w, &c->c_l2_w, &c->e_dram_pj_per_byte, &c->dram_background_w};
        for (size_t i = 0; i < sizeof w / sizeof *w; i++)
            *w[i] *= s;
        break;
    }
    case BOARD_SETPOINT:
        c->power_cap_frac *= s;
        if (c->power_cap_frac > 1.05)
            c->power_cap_frac = 1.05;
        break;
    case BOARD_HOST:
        c->host_launch_us *= s;
        c->host_op_launch_us *= s;
        break;
    }
}

static int board_effect(wl_core_evaluator *ev, const wl_core_gpu *gpu, const wl_core_op *op,
                        const wl_core_result *center, board_factor f, double sd, double up[3],
                        double down[3])
{
    for (int k = 0; k < 3; k++)
        up[k] = down[k] = 0;
    if (!(sd > 0))
        return WL_OK;
    int rc = WL_OK;
    for (int side = -1; side <= 1 && rc == WL_OK; side += 2) {
        wl_core_gpu g = *gpu;
        board_scale(&g.coef, f, exp(side * sd));
        wl_core_evaluator_set_gpu(ev, &g);
        wl_core_result r;
        if ((rc = wl_core_evaluator_run(ev, op, &r)) != WL_OK)
            break;
        double e[3] = {log(r.time_ms / center->time_ms), log(r.power_w / center->power_w),
                       log(r.energy_j / center->energy_j)};
        for (int k = 0; k < 3; k++) {
            if (isfinite(e[k]) && e[k] > up[k])
                up[k] = e[k];
            if (isfinite(e[k]) && -e[k] > down[k])
                down[k] = -e[k];
        }
    }
    wl_core_evaluator_set_gpu(ev, gpu);
    return rc;
}

int wl_calib_interval(wl_core_evaluator *ev, const wl_core_gpu *gpu,
                      const wl_calib_uncertainty *u, const wl_core_op *op, double level,
                      const wl_core_result *center, wl_calib_iv *iv)
{
    if (!u->valid || u->np != (int)NP || !(level > 0 && level < 1))
        return WL_EINVAL;
    double gt[WL_CALIB_MAXP], gp[WL_CALIB_MAXP], ge[WL_CALIB_MAXP];
    const double hstep = 1e-3;
    int rc = WL_OK;
    for (size_t i = 0; i < NP && rc == WL_OK; i++) {
        wl_core_gpu g = *gpu;
        double x = to_x(&params[i], *coef_at(&g.coef, i));
        *coef_at(&g.coef, i) = from_x(&params[i], x + hstep);
        wl_core_evaluator_set_gpu(ev, &g);
        wl_core_result r;
        rc = wl_core_evaluator_run(ev, op, &r);
        gt[i] = (log(r.time_ms) - log(center->time_ms)) / hstep;
        gp[i] = (log(r.power_w) - log(center->power_w)) / hstep;
        ge[i] = (log(r.energy_j) - log(center->energy_j)) / hstep;
    }
    wl_core_evaluator_set_gpu(ev, gpu);
    if (rc)
        return rc;
    double vt = 0, vp = 0, ve = 0;
    for (size_t i = 0; i < NP; i++)
        for (size_t j = 0; j < NP; j++) {
            double c = u->cov[i * NP + j];
            vt += gt[i] * c * gt[j];
            vp += gp[i] * c * gp[j];
            ve += ge[i] * c * ge[j];
        }
    /* another board than the preset's: its factors, independent */
    double bu[3] = {0, 0, 0}, bd[3] = {0, 0, 0};
    const double sds[3] = {u->board.dyn_power_sd, u->board.setpoint_sd, u->board.host_sd};
    for (int f = 0; f < 3; f++) {
        double up[3], down[3];
        if ((rc = board_effect(ev, gpu, op, center, (board_factor)f, sds[f], up, down)) != WL_OK)
            return rc;
        for (int k = 0; k < 3; k++) {
            bu[k] += up[k] * up[k];
            bd[k] += down[k] * down[k];
        }
    }
    double z = gsl_cdf_ugaussian_Pinv(0.5 + 0.5 * level);
    double ct = z * sqrt(vt > 0 ? vt : 0), cp = z * sqrt(vp > 0 ? vp : 0),
           ce = z * sqrt(ve > 0 ? ve : 0);
    double st = (vt > 0 ? vt : 0) + u->sigma_time * u->sigma_time;
    double sp = (vp > 0 ? vp : 0) + u->sigma_power * u->sigma_power;
    double se = (ve > 0 ? ve : 0) + u->sigma_energy * u->sigma_energy;
    double pt = z * sqrt(st + bd[0]), pt_hi = z * sqrt(st + bu[0]);
    double pp = z * sqrt(sp + bd[1]), pp_hi = z * sqrt(sp + bu[1]);
    double pe = z * sqrt(se + bd[2]), pe_hi = z * sqrt(se + bu[2]);
    iv->conf_time_lo_ms = center->time_ms * exp(-ct);
    iv->conf_time_hi_ms = center->time_ms * exp(ct);
    iv->conf_power_lo_w = center->power_w * exp(-cp);
    iv->conf_power_hi_w = center->power_w * exp(cp);
    iv->conf_energy_lo_j = center->energy_j * exp(-ce);
    iv->conf_energy_hi_j = center->energy_j * exp(ce);
    iv->time_lo_ms = center->time_ms * exp(-pt);
    iv->time_hi_ms = center->time_ms * exp(pt_hi);
    iv->power_lo_w = center->power_w * exp(-pp);
    iv->power_hi_w = center->power_w * exp(pp_hi);
    iv->energy_lo_j = center->energy_j * exp(-pe);
    iv->energy_hi_j = center->energy_j * exp(pe_hi);
    /* no board holds more than its limit on average: its controller's
     * setpoint is at most the limit (the highest seen: 1.01 of it) */
    double lim = op->ignore_power_limit ? 0.0
                                        : (op->power_limit_w > 0 ? op->power_limit_w : gpu->power_limit_w);
    if (lim > 0 && u->board.setpoint_sd > 0 && iv->power_hi_w > 1.01 * lim && center->power_w <= 1.01 * lim)
        iv->power_hi_w = 1.01 * lim;
    return WL_OK;
}
