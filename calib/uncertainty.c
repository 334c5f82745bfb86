/* The fit's uncertainty: its covariance stored in and read from a preset,
 * the spread between boards and hosts, and the prediction intervals that
 * propagate both to a prediction (wl_calib_interval). */
#include "calib_internal.h"
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

void wl_calib_time_shares(const wl_core_result *r, double share[WL_CALIB_NBUCKETS])
{
    double t = r->time_ms > 0 ? r->time_ms : 0, busy = 0;
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        double tc = r->cls[c].tc_busy_ms, all = r->cls[c].busy_ms;
        share[2 * c + 1] = tc > 0 ? tc : 0;
        share[2 * c] = all > tc ? all - tc : 0;
        busy += share[2 * c] + share[2 * c + 1];
    }
    /* the rest of the wall time is the host's (launch-bound waits) */
    share[WL_CALIB_NBUCKETS - 1] = t > busy ? t - busy : 0;
    double sum = busy + share[WL_CALIB_NBUCKETS - 1];
    for (int b = 0; b < WL_CALIB_NBUCKETS; b++)
        share[b] = sum > 0 ? share[b] / sum : 0;
}

int wl_calib_time_bucket(const wl_core_result *r)
{
    double s[WL_CALIB_NBUCKETS];
    wl_calib_time_shares(r, s);
    int best = WL_CALIB_NBUCKETS - 1;
    for (int b = 0; b < WL_CALIB_NBUCKETS; b++)
        if (s[b] > s[best])
            best = b;
    return best;
}

const char *wl_calib_bucket_name(int b, char *buf, size_t n)
{
    if (b == WL_CALIB_NBUCKETS - 1)
        snprintf(buf, n, "host");
    else
        snprintf(buf, n, "%s%s", wl_core_class_name(b / 2), b % 2 ? "_tc" : "");
    return buf;
}

void wl_calib_uncertainty_write(FILE *f, const wl_calib_uncertainty *u)
{
    fprintf(f, "[covariance]\n; of the fitted parameters in the fit's internal scale (ln for\n"
               "; positive coefficients, logit for bounded ones); used by --interval\n");
    fprintf(f, "sigma_time_log = %.10g\nsigma_power_log = %.10g\nsigma_energy_log = %.10g\n",
            u->sigma_time, u->sigma_power, u->sigma_energy);
    for (int b = 0; b < WL_CALIB_NBUCKETS; b++) {
        char nm[40];
        if (u->sigma_time_bucket[b] > 0)
            fprintf(f, "sigma_time_log_%s = %.10g\n", wl_calib_bucket_name(b, nm, sizeof nm),
                    u->sigma_time_bucket[b]);
    }
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
    int order[WL_CALIB_MAXP], n_order; /* the rows in the file's order: its columns */
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
    if (!strcmp(section, "calibration") &&
        (!strcmp(name, "tc_fp8_power_ratio") || !strcmp(name, "stderr_tc_fp8_power_ratio")))
        return wl_core_parse_real(value, 0, 100, c->source, line, name,
                                  name[0] == 's' ? &c->u->tc_fp8_stderr : &c->u->tc_fp8_ratio,
                                  c->err) == WL_OK;
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
    for (int b = 0; !dst && b < WL_CALIB_NBUCKETS && !strncmp(name, "sigma_time_log_", 15); b++) {
        char nm[40];
        if (!strcmp(name + 15, wl_calib_bucket_name(b, nm, sizeof nm)))
            dst = &u->sigma_time_bucket[b];
    }
    if (dst)
        return wl_core_parse_real(value, 0, 100, c->source, line, name, dst, c->err) == WL_OK;
    if (strncmp(name, "cov_", 4) != 0) {
        wl_error_set(c->err, c->source, line, name, "unknown key in [covariance]");
        return 0;
    }
    int i;
    for (i = 0; i < (int)WL_CALIB_NPARAMS; i++)
        if (strcmp(wl_calib_params[i].name, name + 4) == 0)
            break;
    if (i == (int)WL_CALIB_NPARAMS) {
        wl_error_set(c->err, c->source, line, name, "not a fitted coefficient");
        return 0;
    }
    size_t old = c->row[i] ? strlen(c->row[i]) : 0, add = strlen(value);
    char *nr = realloc(c->row[i], old + add + 2);
    if (!nr) {
        wl_error_set(c->err, c->source, line, name, "out of memory");
        return 0;
    }
    if (!old) {
        c->row_line[i] = line;
        c->order[c->n_order++] = i;
    }
    else if (nr[old - 1] != ',')
        nr[old++] = ',';
    memcpy(nr + old, value, add + 1);
    c->row[i] = nr;
    return 1;
}

/* The rows a file names are its columns, in its order: a coefficient the
 * fit has gained since the file was written (the per-phase host costs) has
 * no row there and is held, zero covariance, as the fit that wrote it held
 * it; every row named must be whole. */
static int cov_rows(cov_ctx *c, const char *source, wl_error *err)
{
    wl_calib_uncertainty *u = c->u;
    for (int i = 0; i < (int)WL_CALIB_NPARAMS; i++)
        snprintf(u->names[i], sizeof u->names[i], "%s", wl_calib_params[i].name);
    if (!c->n_order) {
        wl_error_set(err, source, 0, "covariance",
                     "[covariance] has no cov_ row (one per fitted coefficient)");
        return WL_EPARSE;
    }
    size_t n = (size_t)c->n_order;
    for (size_t a = 0; a < n; a++) {
        int i = c->order[a];
        wl_core_numlist l = {0};
        int rc = wl_core_parse_list(c->row[i], -1e6, 1e6, 0, source, c->row_line[i], u->names[i],
                                    &l, err);
        if (!rc && l.n != n)
            rc = WL_EPARSE;
        for (size_t b = 0; !rc && b < n; b++)
            u->cov[(size_t)i * WL_CALIB_NPARAMS + (size_t)c->order[b]] = l.v[b];
        wl_core_numlist_free(&l);
        if (rc) {
            if (rc != WL_EINVAL)
                wl_error_set(err, source, c->row_line[i], wl_calib_params[i].name,
                             "[covariance] needs %zu values in each cov_ row, one per cov_ row "
                             "of the section", n);
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
        u->np = (int)WL_CALIB_NPARAMS;
        u->valid = 1;
    }
    for (int i = 0; i < (int)WL_CALIB_NPARAMS; i++)
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

/* The effect on ln time, power and energy of one board factor moved by
 * sd either way (the interval's own quantile of it: wl_calib_interval),
 * upwards and downwards apart (a lower setpoint throttles where a higher
 * one changes nothing; a slower host binds where a faster one does not):
 * each side of the interval takes its own. */
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
        c->host_train_launch_us *= s;
        c->host_backward_launch_us *= s;
        c->host_optimizer_launch_us *= s;
        c->host_decode_launch_us *= s;
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
    if (!u->valid || u->np != (int)WL_CALIB_NPARAMS || !(level > 0 && level < 1))
        return WL_EINVAL;
    double gt[WL_CALIB_MAXP], gp[WL_CALIB_MAXP], ge[WL_CALIB_MAXP];
    const double hstep = 1e-3;
    int rc = WL_OK;
    for (size_t i = 0; i < WL_CALIB_NPARAMS && rc == WL_OK; i++) {
        wl_core_gpu g = *gpu;
        double x = wl_calib_to_x(&wl_calib_params[i], *wl_calib_coef_at(&g.coef, i));
        *wl_calib_coef_at(&g.coef, i) = wl_calib_from_x(&wl_calib_params[i], x + hstep);
        wl_core_evaluator_set_gpu(ev, &g);
        wl_core_result r;
        rc = wl_core_evaluator_run(ev, op, &r);
        gt[i] = (log(r.time_ms) - log(center->time_ms)) / hstep;
        gp[i] = (log(r.power_w) - log(center->power_w)) / hstep;
        ge[i] = (log(r.energy_j) - log(center->energy_j)) / hstep;
    }
    /* the fitted fp8 cycle ratio's own error, where the run's GPU has that
     * fit's ratio (a GPU's transfer scales it, and its ln error stays) */
    double g8[3] = {0, 0, 0}, sd8 = 0;
    if (!rc && u->tc_fp8_ratio > 0 && u->tc_fp8_stderr > 0 && gpu->coef.tc_fp8_power_ratio > 0) {
        wl_core_gpu g = *gpu;
        g.coef.tc_fp8_power_ratio *= exp(hstep);
        wl_core_evaluator_set_gpu(ev, &g);
        wl_core_result r;
        rc = wl_core_evaluator_run(ev, op, &r);
        sd8 = u->tc_fp8_stderr / u->tc_fp8_ratio;
        g8[0] = (log(r.time_ms) - log(center->time_ms)) / hstep;
        g8[1] = (log(r.power_w) - log(center->power_w)) / hstep;
        g8[2] = (log(r.energy_j) - log(center->energy_j)) / hstep;
    }
    wl_core_evaluator_set_gpu(ev, gpu);
    if (rc)
        return rc;
    double vt = g8[0] * g8[0] * sd8 * sd8, vp = g8[1] * g8[1] * sd8 * sd8,
           ve = g8[2] * g8[2] * sd8 * sd8;
    for (size_t i = 0; i < WL_CALIB_NPARAMS; i++)
        for (size_t j = 0; j < WL_CALIB_NPARAMS; j++) {
            double c = u->cov[i * WL_CALIB_NPARAMS + j];
            vt += gt[i] * c * gt[j];
            vp += gp[i] * c * gp[j];
            ve += ge[i] * c * ge[j];
        }
    /* Another board than the preset's: its factors, independent, each
     * moved to the interval's quantile of it (z sd), not its effect at one
     * sd scaled by z. A monotone effect's quantile is the effect at the
     * factor's quantile (exactly, for one factor); z times the effect at
     * one sd is a straight line through a hinge, and the hinges are where
     * boards differ: a setpoint that throttles only past one sd, a host
     * that binds only past it. EnergAIzer's H100 board, held at 0.79-0.91
     * of its limit, runs its largest prefills 12-28% slower than the
     * preset's centre: within the setpoint's 95% quantile (sd 0.10: 0.82
     * of the preset's), beyond 1.96 times its effect at one sd. The
     * factors' effects then add in quadrature, the fit's variances at z. */
    double z = gsl_cdf_ugaussian_Pinv(0.5 + 0.5 * level);
    double bu[3] = {0, 0, 0}, bd[3] = {0, 0, 0};
    const double sds[3] = {u->board.dyn_power_sd, u->board.setpoint_sd, u->board.host_sd};
    for (int f = 0; f < 3; f++) {
        double up[3], down[3];
        if ((rc = board_effect(ev, gpu, op, center, (board_factor)f, z * sds[f], up, down)) !=
            WL_OK)
            return rc;
        for (int k = 0; k < 3; k++) {
            bu[k] += up[k] * up[k];
            bd[k] += down[k] * down[k];
        }
    }
    double ct = z * sqrt(vt > 0 ? vt : 0), cp = z * sqrt(vp > 0 ? vp : 0),
           ce = z * sqrt(ve > 0 ? ve : 0);
    /* the residual of what this run spends its time on: each bucket's
     * (the global one where the fit had too few rows of it), weighted by
     * the run's shares and summed as errors that move together */
    double share[WL_CALIB_NBUCKETS], s_t = 0;
    wl_calib_time_shares(center, share);
    for (int b = 0; b < WL_CALIB_NBUCKETS; b++)
        s_t += share[b] * (u->sigma_time_bucket[b] > 0 ? u->sigma_time_bucket[b] : u->sigma_time);
    if (!(s_t > 0))
        s_t = u->sigma_time;
    double st = (vt > 0 ? vt : 0) + s_t * s_t;
    double sp = (vp > 0 ? vp : 0) + u->sigma_power * u->sigma_power;
    double se = (ve > 0 ? ve : 0) + u->sigma_energy * u->sigma_energy;
    double z2 = z * z;
    double pt = sqrt(z2 * st + bd[0]), pt_hi = sqrt(z2 * st + bu[0]);
    double pp = sqrt(z2 * sp + bd[1]), pp_hi = sqrt(z2 * sp + bu[1]);
    double pe = sqrt(z2 * se + bd[2]), pe_hi = sqrt(z2 * se + bu[2]);
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
