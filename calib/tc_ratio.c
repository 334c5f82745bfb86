/* A board's fp8 tensor-core cycle against its bf16 one, from its own
 * GEMMs: 'wattlas calibrate --fit tc_fp8_power_ratio PAIRS.csv'.
 *
 * Why pairs. A busy fp8 cycle's power is not in the per-operation tables
 * (core/tech.c: the rule gives an H100 0.94 of a bf16 cycle, yet the board
 * holds fp8 GEMMs at a lower clock than bf16 ones under one limit). What a
 * board shows of it is how the two dtypes' powers compare at the clocks it
 * held them to. Under one limit the two draw what its controller holds them
 * to, whatever this board's own offset from the preset's power (boards of a
 * product differ by 15-30%: data/h100-serve-2026-11's controller holds at
 * 590-670 W under a 700 W limit), so the measured ratio of the two powers,
 * a shape at a time, cancels what is this board's and keeps what is the
 * datapath's. For each pair: the ratio s at which the model's fp8 power at
 * its measured clock, over the model's bf16 power at its, is the measured
 * ratio (bisection: the power rises with s, a little faster than linearly
 * through the leakage's temperature).
 *
 * Which rows. Both of a pair held by the power limit (throttle_reasons with
 * NVML's SW power cap bit, 0x4), each at least MIN_MS long: an eager call
 * costs about 30 us of host time (the README of data/h100-serve-2026-11),
 * and below three times that the host's gaps are in the power the board
 * averages. Every second pair in file order is held out: the fit is the
 * geometric mean of the others' s, its standard error theirs over sqrt(n),
 * and the held-out pairs are scored on their power ratio. */
#include "calib_internal.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_MS 0.1
#define MAX_PAIRS 256
#define CAP_BIT 0x4

typedef struct {
    long long m, n, k;
    double clock_mhz[2], power_w[2], time_ms[2]; /* [0] bf16, [1] fp8 */
    int line;
} tc_pair;

static int gemm_power(const wl_core_gpu *g, const tc_pair *p, int f8, double *w)
{
    wl_core_workload *wl = wl_core_workload_create("tc-ratio-gemm");
    if (!wl)
        return WL_ENOMEM;
    wl_kernel k = {.kind = WL_K_GEMM, .m = p->m, .n = p->n, .k = p->k, .batch = 1,
                   .in_dtype = f8 ? WL_DT_FP8 : WL_DT_BF16, .acc_dtype = WL_DT_FP32,
                   .tensor_core = 1};
    wl_core_op op = {.sm_clock_mhz = p->clock_mhz[f8], .ignore_power_limit = 1};
    wl_core_result r;
    int rc = wl_core_workload_add(wl, &k);
    if (!rc) {
        wl_core_workload_set_repeated(wl, 1);
        rc = wl_core_predict(g, wl, &op, &r);
    }
    wl_core_workload_free(wl);
    *w = rc ? 0 : r.power_w;
    return rc;
}

/* The model's fp8 / bf16 power ratio of a pair with ratio s. */
static int model_ratio(wl_core_gpu *g, const tc_pair *p, double s, double *out)
{
    double pb, p8;
    g->coef.tc_fp8_power_ratio = s;
    int rc = gemm_power(g, p, 0, &pb);
    if (!rc)
        rc = gemm_power(g, p, 1, &p8);
    if (!rc && !(pb > 0 && p8 > 0))
        rc = WL_ENOCONV;
    *out = rc ? 0 : p8 / pb;
    return rc;
}

/* The bf16 row's power does not depend on s: found once, then s bisected
 * on the fp8 row's power alone. */
static int solve_pair(wl_core_gpu *g, const tc_pair *p, double *s)
{
    double pb, p8, lo = 0.1, hi = 10.0;
    int rc = gemm_power(g, p, 0, &pb);
    if (rc)
        return rc;
    double want = p->power_w[1] / p->power_w[0] * pb;
    g->coef.tc_fp8_power_ratio = lo;
    if ((rc = gemm_power(g, p, 1, &p8)) || p8 > want)
        return rc ? rc : WL_ENOCONV;
    g->coef.tc_fp8_power_ratio = hi;
    if ((rc = gemm_power(g, p, 1, &p8)) || p8 < want)
        return rc ? rc : WL_ENOCONV;
    for (int it = 0; it < 60; it++) {
        double mid = sqrt(lo * hi);
        g->coef.tc_fp8_power_ratio = mid;
        if ((rc = gemm_power(g, p, 1, &p8)))
            return rc;
        *(p8 < want ? &lo : &hi) = mid;
    }
    *s = sqrt(lo * hi);
    return WL_OK;
}

static int col(wl_results_csv *c, const char *name, wl_error *err)
{
    int i = wl_results_csv_col(c, name);
    if (i < 0)
        wl_error_set(err, wl_results_csv_path(c), 1, name,
                     "missing column (expected dtype,m,n,k,measured_clock_mhz,time_ms,power_w,"
                     "throttle_reasons)");
    return i;
}

/* The file's pairs that qualify, a bf16 row and the fp8 row of its shape. */
static int read_pairs(const char *path, tc_pair *pairs, size_t *np, size_t *nrows, wl_error *err)
{
    wl_results_csv *c = NULL;
    int rc = wl_results_csv_open(path, &c, err);
    if (rc)
        return rc;
    static const char *const names[] = {"m", "n", "k", "measured_clock_mhz", "power_w", "time_ms"};
    int ci[6], cdt = col(c, "dtype", err), cth = cdt < 0 ? -1 : col(c, "throttle_reasons", err);
    for (int i = 0; i < 6 && cth >= 0; i++)
        if ((ci[i] = col(c, names[i], err)) < 0)
            cth = -1;
    if (cth < 0) {
        wl_results_csv_close(c);
        return WL_EPARSE;
    }
    tc_pair open[2] = {{0}};
    int have[2] = {0, 0}, st = WL_OK, got;
    *np = *nrows = 0;
    while (!st && (got = wl_results_csv_next(c, err)) != 0) {
        if (got < 0) {
            st = WL_EPARSE;
            break;
        }
        int line = wl_results_csv_line(c);
        const char *dt = wl_results_csv_field(c, (size_t)cdt);
        int f8 = !strcmp(dt, "fp8");
        if (!f8 && strcmp(dt, "bf16")) {
            wl_error_set(err, path, line, "dtype", "expected bf16 or fp8, got '%.20s'", dt);
            st = WL_EPARSE;
            break;
        }
        double v[6];
        for (int i = 0; i < 6 && !st; i++) {
            if (wl_results_csv_num(c, (size_t)ci[i], &v[i], err))
                st = WL_EPARSE; /* err names the file, line and column */
            else if (!(v[i] > 0) || (i < 3 && (v[i] > 1e7 || v[i] != floor(v[i])))) {
                wl_error_set(err, path, line, names[i], i < 3 ? "expected a whole dimension "
                             "from 1 to 1e7" : "expected a positive number");
                st = WL_EPARSE;
            }
        }
        if (st)
            break;
        (*nrows)++;
        /* NVML's clocks_throttle_reasons as nvidia-smi prints it: 0x4 */
        const char *ths = wl_results_csv_field(c, (size_t)cth);
        char *end = NULL;
        unsigned long th = strtoul(ths, &end, 0);
        if (end == ths || *end || *ths == '-') {
            wl_error_set(err, path, line, "throttle_reasons", "expected a bit mask such as 0x4, "
                         "got '%.20s'", ths);
            st = WL_EPARSE;
            break;
        }
        tc_pair *p = &open[f8];
        *p = (tc_pair){.m = (long long)v[0], .n = (long long)v[1], .k = (long long)v[2], .line = line};
        p->clock_mhz[f8] = v[3];
        p->power_w[f8] = v[4];
        p->time_ms[f8] = v[5];
        have[f8] = (th & CAP_BIT) && v[5] >= MIN_MS;
        /* a pair is a bf16 row and the fp8 row of its shape after it */
        if (f8 && have[0] && have[1] && open[0].m == p->m && open[0].n == p->n && open[0].k == p->k) {
            if (*np == MAX_PAIRS) {
                wl_error_set(err, path, line, "", "more than %d pairs", MAX_PAIRS);
                st = WL_EINVAL;
                break;
            }
            tc_pair q = open[0];
            q.clock_mhz[1] = p->clock_mhz[1];
            q.power_w[1] = p->power_w[1];
            q.time_ms[1] = p->time_ms[1];
            pairs[(*np)++] = q;
        }
        if (f8)
            have[0] = 0;
    }
    wl_results_csv_close(c);
    return st;
}

int wl_calib_tc_ratio_fit(const wl_core_gpu *gpu, const char *path, wl_calib_tc_ratio *out,
                          wl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(gpu->tc_flop_per_clk_sm[WL_DT_FP8] > 0)) {
        wl_error_set(err, gpu->id, 0, "tc_fp8_flop_per_clk_sm", "%s has no fp8 tensor cores", gpu->id);
        return WL_EUNSUPPORTED;
    }
    tc_pair *pairs = malloc(MAX_PAIRS * sizeof *pairs);
    if (!pairs) {
        wl_error_set(err, path, 0, "", "out of memory");
        return WL_ENOMEM;
    }
    size_t np = 0;
    int rc = read_pairs(path, pairs, &np, &out->rows, err);
    if (!rc && np < 2) {
        wl_error_set(err, path, 0, "", "%zu pairs of a bf16 and an fp8 GEMM of one shape, both held by "
                     "the power limit (throttle_reasons 0x4) and %.1f ms or longer: need 2", np, MIN_MS);
        rc = WL_EINVAL;
    }
    wl_core_gpu g = *gpu;
    double s[MAX_PAIRS], sum = 0, sum2 = 0;
    for (size_t i = 0; i < np && !rc; i++) {
        if ((rc = solve_pair(&g, &pairs[i], &s[i])) == WL_ENOCONV)
            wl_error_set(err, path, pairs[i].line, "power_w",
                         "no fp8/bf16 cycle ratio from 0.1 to 10 gives this pair's power ratio %.3f",
                         pairs[i].power_w[1] / pairs[i].power_w[0]);
        else if (rc)
            wl_error_set(err, path, pairs[i].line, "", "the model could not run this pair");
        if (!rc && i % 2 == 0) {
            sum += log(s[i]);
            out->fitted++;
        }
    }
    if (!rc) {
        double n = (double)out->fitted, mean = sum / n;
        for (size_t i = 0; i < np; i += 2) /* two passes: no cancellation */
            sum2 += (log(s[i]) - mean) * (log(s[i]) - mean);
        double var = n > 1 ? sum2 / (n - 1) : 0;
        out->ratio = exp(mean);
        out->stderr_ratio = out->ratio * sqrt(var > 0 ? var / n : 0);
        out->rule = wl_core_gpu_tc_power_rule(gpu, WL_DT_FP8);
        /* each pair's power ratio with the fitted s: in sample and held out */
        for (size_t i = 0; i < np && !rc; i++) {
            double r, meas = pairs[i].power_w[1] / pairs[i].power_w[0];
            rc = model_ratio(&g, &pairs[i], out->ratio, &r);
            double e = fabs(r / meas - 1) * 100;
            if (i % 2) {
                out->held_mape += e;
                out->held++;
                size_t l = strlen(out->held_out);
                snprintf(out->held_out + l, sizeof out->held_out - l, "%s%lldx%lldx%lld",
                         l ? "," : "", pairs[i].m, pairs[i].n, pairs[i].k);
            } else {
                out->fit_mape += e;
            }
        }
        out->fit_mape /= (double)out->fitted;
        out->held_mape = out->held ? out->held_mape / (double)out->held : 0;
    }
    free(pairs);
    return rc;
}

/* The preset text with [calibration]'s ratio, its standard error and its
 * record replaced (added after the section's header, or in a new section). */
static void write_preset(FILE *f, const char *text, const wl_calib_tc_ratio *t, const char *fitted_on)
{
    static const char *const keys[] = {"tc_fp8_power_ratio", "stderr_tc_fp8_power_ratio",
                                       "tc_fp8_fitted_on"};
    int in_cal = 0, done = 0;
    char lines[1200];
    snprintf(lines, sizeof lines, "tc_fp8_power_ratio = %.6g\nstderr_tc_fp8_power_ratio = %.3g\n",
             t->ratio, t->stderr_ratio);
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t'))
            q++;
        if (*q == '[')
            in_cal = !strncmp(q, "[calibration]", 13);
        int drop = 0;
        for (size_t i = 0; in_cal && i < 3; i++) {
            size_t kl = strlen(keys[i]);
            if (!strncmp(q, keys[i], kl) && (q[kl] == ' ' || q[kl] == '='))
                drop = 1;
        }
        /* a wrapped record's continuation lines go with it */
        if (!drop) {
            fwrite(p, 1, len, f);
            fputc('\n', f);
        } else {
            while (p[len] == '\n' && (p[len + 1] == ' ' || p[len + 1] == '\t'))
                len += 1 + strcspn(p + len + 1, "\n");
        }
        if (in_cal && *q == '[' && !done) {
            fputs(lines, f);
            wl_calib_write_info(f, "tc_fp8_fitted_on", fitted_on);
            done = 1;
        }
        p += len + (p[len] == '\n');
    }
    if (!done) {
        fprintf(f, "[calibration]\n%s", lines);
        wl_calib_write_info(f, "tc_fp8_fitted_on", fitted_on);
    }
}

int wl_calib_tc_ratio_run(const wl_calib_run_options *o, wl_error *err)
{
    wl_core_gpu gpu;
    char *file_text = NULL, *fitted_on = NULL;
    const char *text;
    wl_calib_tc_ratio t;
    int rc = wl_preset_gpu_load(o->gpu, &gpu, err);
    if (rc && rc == WL_ENOTFOUND && !err->line)
        wl_error_locate(err, "--gpu", 0);
    if (!rc)
        rc = wl_preset_find(WL_PRESET_GPU, o->gpu, &text, &file_text, NULL, 0, err);
    if (!rc)
        rc = wl_calib_tc_ratio_fit(&gpu, o->path, &t, err);
    if (!rc) {
        const char *base = strrchr(o->path, '/');
        fitted_on = wl_core_strprintf(
            "%zu pairs of bf16 and fp8 GEMMs of %s (every second pair of the file's %zu held by the "
            "limit; %zu rows in all); held out %s: power ratio MAPE %.2f%% (in sample %.2f%%); the "
            "rule alone %.4g", t.fitted, base ? base + 1 : o->path, t.fitted + t.held, t.rows,
            t.held_out, t.held_mape, t.fit_mape, t.rule);
        if (!fitted_on) {
            wl_error_set(err, o->out, 0, "", "out of memory");
            rc = WL_ENOMEM;
        }
    }
    if (!rc) {
        wl_core_say(o->say, o->user, "%s: tc_fp8_power_ratio %.4f +- %.4f from %s", gpu.id, t.ratio,
                    t.stderr_ratio, fitted_on);
        wl_results_out *out = NULL;
        if (!(rc = wl_results_out_open(o->out, &out, err))) {
            write_preset(wl_results_out_stream(out), text, &t, fitted_on);
            rc = wl_results_out_commit(out, err);
        }
    }
    free(fitted_on);
    free(file_text);
    return rc;
}
