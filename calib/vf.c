/* The V-f curve from a board's own rows: the voltage that the compute-bound
 * rows of a kernel database imply, for a GPU that reads out no voltage
 * (NVML has none on Hopper). A measured voltage column (the A100 idle
 * tables) is never replaced: this runs only on a voltage that is the rule
 * (vmin_mv, vmax_mv, vf_knee_mhz) or was derived here before.
 *
 * Why it works: a kernel the clock paces does the same switching per clock
 * at every clock, so its dynamic power is P_dyn = C u V^2 f (CV^2f; the
 * model's v_exponent is fitted after, on this curve) and
 *     y(f) = P_dyn(f) / f  is proportional to V(f)^2,
 * whatever its activity u: the ratio y(f) / y(f_floor) is V(f)^2 / V_floor^2.
 * P_dyn is the measured board power less what the model carries apart: the
 * idle table at that clock and the leakage of the hot die. The model's own
 * temperature rule (core/eval.c) has dT = R P_dyn / (1 - lambda R) and
 * leakage lambda dT, lambda = leak_w_per_c (V / v_ref_mv)^2, so
 *     P - P_idle(f) = P_dyn + lambda dT = P_dyn / (1 - lambda R),
 *     P_dyn = (P - P_idle(f)) (1 - lambda(V) R),
 * solved with V by a few fixed-point steps. Under load the model reads the
 * curve at f + vf_temp_mhz_per_c dT (GPU Boost's temperature bins), so each
 * measured point is the curve's at that loaded clock.
 *
 * Which rows: those the clock paces and nothing else holds: a workload
 * measured at three or more clocks whose time x clock varies by at most 10%
 * (time ~ 1/f), each row at its requested clock (measured_clock_mhz within
 * 1%; without that column, under 95% of its power limit), unheld up to the
 * highest clock any such workload reaches, and whose predicted
 * dynamic energy is at least 90% GEMM (a GEMM the clock paces: its DRAM
 * power, which scales as f but not as V^2, is a few percent). A normalised
 * elementwise kernel or softmax is clock-paced at low clocks too, but its
 * memory power dilutes the ratio (the H200's bf16 LayerNorm: 1.31x at 1980
 * MHz where its fp32 GEMMs give 1.8-2.2x). */
#include "wattlas_calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VF_MAX_WL 64

typedef struct {
    char key[200];
    double clk[WL_CALIB_VF_PTS], y[WL_CALIB_VF_PTS], p_sum[WL_CALIB_VF_PTS];
    int nrow[WL_CALIB_VF_PTS];
    int n, ok;
    double tf_lo, tf_hi;
} vf_wl;

static int clock_index(wl_calib_vf_derived *d, double f)
{
    for (int i = 0; i < d->n; i++)
        if (fabs(d->clock_mhz[i] - f) < 0.5)
            return i;
    if (d->n >= WL_CALIB_VF_PTS)
        return -1;
    int at = d->n;
    while (at > 0 && d->clock_mhz[at - 1] > f) {
        d->clock_mhz[at] = d->clock_mhz[at - 1];
        at--;
    }
    d->clock_mhz[at] = f;
    d->n++;
    return at;
}

/* The row is paced by the clock alone, by what was measured. */
static int row_unheld(const wl_calib_row *r, const wl_core_gpu *gpu)
{
    double limit = isfinite(r->power_limit_w) && r->power_limit_w > 0 ? r->power_limit_w
                                                                      : gpu->power_limit_w;
    if (!(isfinite(r->power_w) && r->power_w > 0 && isfinite(r->time_ms) && r->time_ms > 0) ||
        r->time_relative)
        return 0;
    /* the clock it ran at says whether a limit held it; without that
     * column, its power must stay clear of the limit */
    if (isfinite(r->measured_clock_mhz) && r->measured_clock_mhz > 0)
        return r->measured_clock_mhz >= 0.99 * r->sm_clock_mhz;
    return !(limit > 0) || r->power_w < 0.95 * limit;
}

static int gemm_share_ok(const wl_calib_problem *p, size_t row)
{
    wl_core_result res;
    if (wl_calib_predict(p, row, &res) != WL_OK)
        return 0;
    double all = 0, gemm = res.cls[WL_CLASS_GEMM].energy_j + res.cls[WL_CLASS_BATCHED_GEMM].energy_j;
    for (int k = 0; k < WL_CLASS_COUNT; k++)
        all += res.cls[k].energy_j;
    return all > 0 && gemm >= 0.9 * all;
}

/* Pool adjacent violators: the least-squares non-decreasing fit of v with
 * weights w (voltage does not fall as the clock rises). */
static void monotone(double *v, const double *w, int n)
{
    double lv[WL_CALIB_VF_PTS], lw[WL_CALIB_VF_PTS];
    int len[WL_CALIB_VF_PTS], m = 0;
    for (int i = 0; i < n; i++) {
        lv[m] = v[i];
        lw[m] = w[i] > 0 ? w[i] : 1e-12;
        len[m] = 1;
        m++;
        while (m > 1 && lv[m - 2] > lv[m - 1]) {
            double ww = lw[m - 2] + lw[m - 1];
            lv[m - 2] = (lv[m - 2] * lw[m - 2] + lv[m - 1] * lw[m - 1]) / ww;
            lw[m - 2] = ww;
            len[m - 2] += len[m - 1];
            m--;
        }
    }
    for (int b = 0, i = 0; b < m; b++)
        for (int k = 0; k < len[b]; k++)
            v[i++] = lv[b];
}

/* (P - P_idle) (1 - lambda R) / f and dT at voltage v, the model's rule. */
static double dyn_per_clock(const wl_core_gpu *gpu, double p_w, double f_mhz, double v_mv,
                            double *dT)
{
    const wl_core_coeffs *c = &gpu->coef;
    double vr = v_mv / gpu->v_ref_mv;
    double lam = c->leak_w_per_c * vr * vr;
    double denom = 1.0 - lam * c->thermal_c_per_w;
    if (denom < 0.05)
        denom = 0.05; /* as core/eval.c clamps it */
    double pd = (p_w - wl_core_gpu_idle_w(gpu, f_mhz)) * denom;
    *dT = c->thermal_c_per_w * pd / denom;
    return pd / f_mhz;
}

int wl_calib_vf_derive(const wl_calib_problem *p, const wl_calib_set *set,
                       const unsigned char *mask, const wl_core_gpu *gpu, wl_calib_vf_derived *d)
{
    memset(d, 0, sizeof *d);
    d->floor_mv = gpu->vf_vmin_mv > 0 ? gpu->vf_vmin_mv : gpu->vf.n ? gpu->vf.voltage_mv[0] : 0;
    if (!(d->floor_mv > 0) || !(gpu->v_ref_mv > 0))
        return WL_ENOTFOUND;
    vf_wl *w = calloc(VF_MAX_WL, sizeof *w);
    if (!w)
        return WL_ENOMEM;
    int nw = 0;
    size_t n = wl_calib_count(set);
    /* the rows by workload, each clock's rows together */
    for (size_t i = 0; i < n; i++) {
        const wl_calib_row *r = wl_calib_row_at(set, i);
        if ((mask && !mask[i]) || !wl_calib_row_scored(p, i, NULL) || !row_unheld(r, gpu))
            continue;
        char key[200];
        wl_calib_workload_key(r, key, sizeof key);
        int k = 0;
        while (k < nw && strcmp(w[k].key, key))
            k++;
        if (k == nw) {
            if (nw == VF_MAX_WL)
                continue;
            snprintf(w[nw].key, sizeof w[nw].key, "%s", key);
            w[nw].ok = 1;
            w[nw].tf_lo = INFINITY;
            w[nw].tf_hi = 0;
            nw++;
        }
        vf_wl *x = &w[k];
        if (x->ok && !gemm_share_ok(p, i))
            x->ok = 0;
        int c = 0;
        while (c < x->n && fabs(x->clk[c] - r->sm_clock_mhz) >= 0.5)
            c++;
        if (c == x->n) {
            if (x->n == WL_CALIB_VF_PTS)
                continue;
            x->clk[x->n++] = r->sm_clock_mhz;
        }
        x->p_sum[c] += r->power_w;
        x->nrow[c]++;
        double tf = r->time_ms * r->sm_clock_mhz;
        x->tf_lo = fmin(x->tf_lo, tf);
        x->tf_hi = fmax(x->tf_hi, tf);
    }
    /* the kept workloads and the clocks they span: those unheld up to the
     * highest clock any reaches. A GEMM the limit holds at the top runs
     * near the limit below it, where the board's conversion losses and
     * the hot die's leakage, which the model carries only by its rule,
     * inflate (P - idle) / f: in the H100 kernel database the bf16 GEMMs
     * (held above 1305 MHz, 580-680 W there) give 1.25-1.29x at 1305 MHz
     * where the fp32 GEMMs (unheld to 1980 MHz, 280-300 W at 1305) give
     * 1.15x */
    double f_top = 0;
    for (int k = 0; k < nw; k++) {
        vf_wl *x = &w[k];
        x->ok = x->ok && x->n >= 3 && x->tf_hi <= 1.10 * x->tf_lo;
        for (int c = 0; x->ok && c < x->n; c++)
            f_top = fmax(f_top, x->clk[c]);
    }
    double f_floor = INFINITY;
    for (int k = 0; k < nw; k++) {
        vf_wl *x = &w[k];
        int reaches = 0;
        for (int c = 0; x->ok && c < x->n; c++)
            reaches |= x->clk[c] >= f_top - 0.5;
        x->ok = x->ok && reaches;
        for (int c = 0; x->ok && c < x->n; c++)
            x->y[c] = x->p_sum[c] / x->nrow[c]; /* the clock's mean power, for now */
        if (x->ok)
            for (int c = 0; c < x->n; c++)
                f_floor = fmin(f_floor, x->clk[c]);
    }
    for (int k = 0; k < nw; k++) {
        vf_wl *x = &w[k];
        int has_floor = 0;
        for (int c = 0; x->ok && c < x->n; c++)
            has_floor |= fabs(x->clk[c] - f_floor) < 0.5;
        x->ok = x->ok && has_floor; /* each is normalised at the floor */
        if (!x->ok)
            continue;
        for (int c = 0; c < x->n; c++)
            if (clock_index(d, x->clk[c]) < 0)
                x->ok = 0;
        if (x->ok) {
            d->kernels++;
            for (int c = 0; c < x->n; c++)
                d->rows += x->nrow[c];
            size_t l = strlen(d->names);
            const char *sp = strchr(x->key, ' ');
            int kl = sp ? (int)(sp - x->key) : (int)strlen(x->key);
            const char *dt = strstr(x->key, " fp32") ? " fp32" : strstr(x->key, " bf16") ? " bf16" : "";
            if (l + (size_t)kl + 8 < sizeof d->names)
                snprintf(d->names + l, sizeof d->names - l, "%s%.*s%s", l ? ", " : "", kl, x->key, dt);
        }
    }
    if (!d->kernels || d->n < 3) {
        free(w);
        d->n = 0;
        return WL_ENOTFOUND;
    }
    /* fixed point: the voltage sets the leakage that sets the voltage */
    for (int i = 0; i < d->n; i++)
        d->voltage_mv[i] = d->floor_mv;
    for (int it = 0; it < 8; it++) {
        double ratio[WL_CALIB_VF_PTS], wt[WL_CALIB_VF_PTS], load[WL_CALIB_VF_PTS];
        for (int i = 0; i < d->n; i++) {
            double rs[VF_MAX_WL], dts = 0;
            int m = 0;
            for (int k = 0; k < nw; k++) {
                vf_wl *x = &w[k];
                if (!x->ok)
                    continue;
                int c0 = -1, c = -1;
                for (int j = 0; j < x->n; j++) {
                    if (fabs(x->clk[j] - f_floor) < 0.5)
                        c0 = j;
                    if (fabs(x->clk[j] - d->clock_mhz[i]) < 0.5)
                        c = j;
                }
                if (c < 0 || c0 < 0)
                    continue;
                double dT, dT0;
                double y = dyn_per_clock(gpu, x->y[c], x->clk[c], d->voltage_mv[i], &dT);
                double y0 = dyn_per_clock(gpu, x->y[c0], f_floor, d->voltage_mv[0], &dT0);
                if (y0 > 0 && y > 0) {
                    rs[m++] = y / y0;
                    dts += dT;
                }
            }
            if (m) {
                qsort(rs, (size_t)m, sizeof *rs, wl_core_cmp_double);
                ratio[i] = m % 2 ? rs[m / 2] : 0.5 * (rs[m / 2 - 1] + rs[m / 2]);
                load[i] = d->clock_mhz[i] + gpu->coef.vf_temp_mhz_per_c * dts / m;
            } else {
                ratio[i] = i ? ratio[i - 1] : 1.0;
                load[i] = d->clock_mhz[i];
            }
            wt[i] = m;
        }
        monotone(ratio, wt, d->n);
        /* below the floor's own value (noise on a flat stretch) the voltage
         * is the floor: it does not fall under it */
        double r0 = ratio[0] > 0 ? ratio[0] : 1.0;
        for (int i = 0; i < d->n; i++) {
            d->ratio[i] = fmax(ratio[i] / r0, 1.0);
            d->voltage_mv[i] = d->floor_mv * sqrt(d->ratio[i]);
            d->load_clock_mhz[i] = load[i];
        }
    }
    free(w);
    return WL_OK;
}

/* The curve onto the table's knots: linear between the loaded clocks, the
 * floor below the first, the last point's voltage above it. */
void wl_calib_vf_apply(const wl_calib_vf_derived *d, wl_core_gpu *gpu)
{
    if (d->n < 2)
        return;
    for (int i = 0; i < gpu->vf.n; i++) {
        double f = gpu->vf.clock_mhz[i], v;
        if (f <= d->load_clock_mhz[0])
            v = d->voltage_mv[0];
        else if (f >= d->load_clock_mhz[d->n - 1])
            v = d->voltage_mv[d->n - 1];
        else {
            int k = 0;
            while (k + 2 < d->n && d->load_clock_mhz[k + 1] < f)
                k++;
            double a = d->load_clock_mhz[k], b = d->load_clock_mhz[k + 1];
            v = b > a ? d->voltage_mv[k] + (d->voltage_mv[k + 1] - d->voltage_mv[k]) * (f - a) / (b - a)
                      : d->voltage_mv[k + 1];
        }
        gpu->vf.voltage_mv[i] = v;
    }
    gpu->vf_rule &= ~WL_VF_RULE_VOLTAGE;
    if (gpu->vf.n > 0) /* the chip's top point, as a preset read sets it */
        gpu->vf_anchor_mv = gpu->vf.voltage_mv[gpu->vf.n - 1];
}

static void vf_list(FILE *m, const char *key, const double *v, int n)
{
    fprintf(m, "%s =", key);
    for (int i = 0; i < n; i++)
        fprintf(m, "%s %.2f", i == 0 ? "" : (i % 8 == 0 ? ",\n   " : ","), v[i]);
    fputc('\n', m);
}

/* The comment lines inside a preset's [vf] that are not about its voltage
 * (how its idle table was made), carried into the new section. */
static void idle_comments(FILE *m, const char *text)
{
    const char *p = text;
    int in_vf = 0;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len && p[0] == '[')
            in_vf = !strncmp(p, "[vf]", 4);
        else if (in_vf && len && p[0] == ';') {
            char line[400];
            snprintf(line, sizeof line, "%.*s", (int)(len < 399 ? len : 399), p);
            if (!strstr(line, "voltage"))
                fprintf(m, "%s\n", line);
        }
        p = e ? e + 1 : NULL;
    }
}

char *wl_calib_vf_text(const wl_core_gpu *gpu, const wl_calib_vf_derived *d, const char *preset_text,
                       const char *idle_note, const char *data_path, const char *command)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    const char *base = strrchr(data_path, '/');
    base = base ? base + 1 : data_path;
    fprintf(m, "; The voltage from the board's own rows (wattlas calibrate, calib/vf.c): the\n"
               "; compute-bound rows of %s, GEMMs the clock paces and no limit holds\n"
               "; (%d rows: %s).\n"
               "; voltage: V(f) = %.0f mV x sqrt(y(f) / y(floor)), y = (P - P_idle(f) - P_leak) / f\n"
               "; (CV^2f), P_leak by the model's temperature rule, each point at its loaded clock\n"
               "; f + vf_temp_mhz_per_c dT, non-decreasing; %.0f mV, the floor, is the rule's vmin_mv.\n",
            base, d->rows, d->names, d->floor_mv, d->floor_mv);
    fputs("; voltage at the measured clocks (MHz: y/y_floor, mV):", m);
    for (int i = 0; i < d->n; i++)
        fprintf(m, "%s %.0f: %.3f, %.0f", i % 4 == 0 ? "\n;  " : ";", d->clock_mhz[i], d->ratio[i],
                d->voltage_mv[i]);
    fputc('\n', m);
    if (command && *command) {
        /* the command over comment lines of at most ~100 characters */
        const char *q = command;
        fputs("; voltage command:", m);
        size_t col = 18;
        while (*q) {
            while (*q == ' ')
                q++;
            size_t w = strcspn(q, " ");
            if (!w)
                break;
            if (col + 1 + w > 100 && col > 2) {
                fputs("\n;  ", m);
                col = 3;
            }
            fprintf(m, " %.*s", (int)(w < 300 ? w : 300), q);
            col += 1 + w;
            q += w;
        }
        fputc('\n', m);
    }
    fprintf(m, "[vf]\nv_ref_mv = %g\nvoltage_from = %s\n", gpu->v_ref_mv, base);
    if (idle_note)
        fprintf(m, "; %s\n", idle_note);
    else
        idle_comments(m, preset_text);
    vf_list(m, "clock_mhz", gpu->vf.clock_mhz, gpu->vf.n);
    vf_list(m, "voltage_mv", gpu->vf.voltage_mv, gpu->vf.n);
    vf_list(m, "idle_power_w", gpu->vf.idle_w, gpu->vf.n);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
