/* Derive a preset's [vf] table from a measured idle table. The output is a
 * smoothed, resampled curve (local linear least squares), not a copy. */
#include "wattlas_presets.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXPTS 4096

/* Reads and smooths an idle table into nk knots (clock, voltage or NAN,
 * idle power); notes (dropped rows) go to out when not NULL. */
static int smooth_table(const char *csv_path, double step_mhz, FILE *out, double *knots,
                        double *vv, double *pp, int *nk_out, int *has_v_out, wl_error *err)
{
    if (!(step_mhz > 0)) {
        wl_error_set(err, csv_path, 0, "step_mhz", "must be positive");
        return WL_EINVAL;
    }
    FILE *f = fopen(csv_path, "r");
    if (!f) {
        wl_error_set(err, csv_path, 0, "", "cannot open: %s", strerror(errno));
        return WL_EIO;
    }
    static double fx[MAXPTS], fv[MAXPTS], fp[MAXPTS];
    int n = 0, line = 0, has_v = 1;
    char buf[512];
    while (fgets(buf, sizeof buf, f)) {
        line++;
        if (line == 1) {
            if (strncmp(buf, "sm_clock_mhz,voltage_mv,idle_power_w", 36) != 0) {
                fclose(f);
                wl_error_set(err, csv_path, 1, "header",
                             "expected sm_clock_mhz,voltage_mv,idle_power_w");
                return WL_EPARSE;
            }
            continue;
        }
        if (buf[0] == '\n' || buf[0] == 0)
            continue;
        char *a = buf, *b = strchr(a, ','), *c = b ? strchr(b + 1, ',') : NULL;
        if (!b || !c || n >= MAXPTS) {
            fclose(f);
            wl_error_set(err, csv_path, line, "", n >= MAXPTS ? "too many rows" : "expected 3 columns");
            return WL_EPARSE;
        }
        *b = *c = 0;
        char *e;
        fx[n] = strtod(a, &e);
        if (e == a) {
            fclose(f);
            wl_error_set(err, csv_path, line, "sm_clock_mhz", "not a number");
            return WL_EPARSE;
        }
        if (b[1] == 0 || b[1] == ',') {
            has_v = 0;
            fv[n] = NAN;
        } else {
            fv[n] = strtod(b + 1, &e);
            if (e == b + 1) {
                fclose(f);
                wl_error_set(err, csv_path, line, "voltage_mv", "not a number");
                return WL_EPARSE;
            }
        }
        fp[n] = strtod(c + 1, &e);
        if (e == c + 1 || !(fp[n] > 0)) {
            fclose(f);
            wl_error_set(err, csv_path, line, "idle_power_w", "not a positive number");
            return WL_EPARSE;
        }
        n++;
    }
    fclose(f);
    if (n < 3) {
        wl_error_set(err, csv_path, 0, "", "need at least 3 rows");
        return WL_EPARSE;
    }
    /* Hampel-style screen: a row whose idle power is more than 20% off the
     * median of its 6 nearest rows is a transient (the H100 table's 345 MHz
     * row reads 117 W among 72 W neighbours); drop it and say so. */
    {
        static double keep_x[MAXPTS], keep_v[MAXPTS], keep_p[MAXPTS];
        int m = 0;
        for (int i = 0; i < n; i++) {
            double nb[6];
            int k = 0;
            for (int j = i - 3; j <= i + 3; j++)
                if (j >= 0 && j < n && j != i && k < 6)
                    nb[k++] = fp[j];
            for (int a = 1; a < k; a++)
                for (int b = a; b > 0 && nb[b] < nb[b - 1]; b--) {
                    double t = nb[b]; nb[b] = nb[b - 1]; nb[b - 1] = t;
                }
            double med = k ? (k % 2 ? nb[k / 2] : 0.5 * (nb[k / 2 - 1] + nb[k / 2])) : fp[i];
            if (k >= 3 && fabs(fp[i] - med) > 0.2 * med) {
                if (out)
                    fprintf(out, "; dropped outlier row %.0f MHz: %.2f W against a neighbour median of %.2f W\n",
                            fx[i], fp[i], med);
                continue;
            }
            keep_x[m] = fx[i]; keep_v[m] = fv[i]; keep_p[m] = fp[i];
            m++;
        }
        memcpy(fx, keep_x, (size_t)m * sizeof(double));
        memcpy(fv, keep_v, (size_t)m * sizeof(double));
        memcpy(fp, keep_p, (size_t)m * sizeof(double));
        n = m;
    }
    double lo = fx[0], hi = fx[0];
    for (int i = 1; i < n; i++) {
        lo = fx[i] < lo ? fx[i] : lo;
        hi = fx[i] > hi ? fx[i] : hi;
    }
    int nk = 0;
    /* knots every step from the lowest clock, and the highest clock itself,
     * so the curve reaches the top of the table */
    for (double x = lo; nk < WL_VF_MAX; x = x + step_mhz < hi ? x + step_mhz : hi) {
        double w = 0.75 * step_mhz;
        for (int col = 0; col < 2; col++) {
            double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
            for (int i = 0; i < n; i++) {
                double y = col ? fp[i] : fv[i];
                if (fabs(fx[i] - x) > w || !isfinite(y))
                    continue;
                double dx = fx[i] - x;
                s0 += 1; s1 += dx; s2 += dx * dx; t0 += y; t1 += y * dx;
            }
            double det = s0 * s2 - s1 * s1;
            double val = s0 > 0 ? (det > 1e-9 ? (t0 * s2 - t1 * s1) / det : t0 / s0) : NAN;
            if (col)
                pp[nk] = val;
            else
                vv[nk] = val;
        }
        knots[nk++] = x;
        if (x >= hi - 1e-9)
            break;
    }
    /* voltage is non-decreasing with clock: enforce after smoothing */
    for (int i = 1; i < nk; i++)
        if (vv[i] < vv[i - 1])
            vv[i] = vv[i - 1];
    *nk_out = nk;
    *has_v_out = has_v;
    return WL_OK;
}

int wl_preset_derive_vf(const char *csv_path, double step_mhz, FILE *out, wl_error *err)
{
    double knots[WL_VF_MAX], vv[WL_VF_MAX], pp[WL_VF_MAX];
    int nk = 0, has_v = 0;
    char *notes = NULL;
    size_t nlen = 0;
    FILE *m = open_memstream(&notes, &nlen);
    if (!m)
        return WL_ENOMEM;
    int rc = smooth_table(csv_path, step_mhz, m, knots, vv, pp, &nk, &has_v, err);
    fclose(m);
    if (rc) {
        free(notes);
        return rc;
    }
    fprintf(out, "[vf]\n; derived by: wattlas presets derive-vf %s --step-mhz %g\n%s", csv_path,
            step_mhz, notes ? notes : "");
    free(notes);
    fprintf(out, "; local linear least squares over +-%g MHz around each knot\n", 0.75 * step_mhz);
    const char *names[3] = {"clock_mhz", "voltage_mv", "idle_power_w"};
    if (!has_v)
        fprintf(out, "; no voltage column: give the voltage rule (vmin_mv, vmax_mv, vf_knee_mhz)\n");
    for (int col = 0; col < 3; col++) {
        if (col == 1 && !has_v)
            continue;
        fprintf(out, "%s =", names[col]);
        for (int i = 0; i < nk; i++) {
            double v = col == 0 ? knots[i] : (col == 1 ? vv[i] : pp[i]);
            if (i && i % 8 == 0)
                fprintf(out, ",\n   ");
            else if (i)
                fprintf(out, ",");
            fprintf(out, " %.2f", v);
        }
        fprintf(out, "\n");
    }
    return WL_OK;
}

int wl_preset_gpu_idle_table(wl_core_gpu *gpu, const char *csv_path, wl_error *err)
{
    double knots[WL_VF_MAX], vv[WL_VF_MAX], pp[WL_VF_MAX];
    int nk = 0, has_v = 0;
    int rc = smooth_table(csv_path, 60, NULL, knots, vv, pp, &nk, &has_v, err);
    if (rc)
        return rc;
    if (nk < 2) {
        wl_error_set(err, csv_path, 0, "sm_clock_mhz", "needs rows spanning at least 60 MHz");
        return WL_EPARSE;
    }
    wl_core_gpu before = *gpu;
    wl_core_vf vf;
    vf.n = nk;
    for (int i = 0; i < nk; i++) {
        vf.clock_mhz[i] = knots[i];
        /* a table without voltage keeps the GPU's own V-f curve */
        vf.voltage_mv[i] = has_v && isfinite(vv[i]) ? vv[i] : wl_core_gpu_voltage_mv(&before, knots[i]);
        vf.idle_w[i] = pp[i];
        if (!isfinite(vf.idle_w[i]) || !(vf.voltage_mv[i] > 0)) {
            wl_error_set(err, csv_path, 0, "idle_power_w", "no rows near %.0f MHz", knots[i]);
            return WL_EPARSE;
        }
    }
    gpu->vf = vf;
    gpu->vf_rule &= has_v ? 0u : WL_VF_RULE_VOLTAGE;
    gpu->vf_rule &= ~WL_VF_RULE_IDLE;
    if (gpu->vf_rule & WL_VF_RULE_VOLTAGE) {
        /* the voltage rule regenerates its column on the new knots */
        wl_error e;
        if (wl_core_gpu_vf_rule(gpu, &e) != WL_OK) {
            *gpu = before;
            *err = e;
            return WL_EINVAL;
        }
    }
    /* idle power stands for leakage in the transfer rules: carry the
     * coefficients from the GPU as it was to the GPU with this table */
    wl_error e;
    wl_core_gpu changed = *gpu;
    if (wl_core_gpu_transfer(&before, &changed, &e) == WL_OK)
        gpu->coef = changed.coef;
    if (wl_core_gpu_check(gpu, &e) != WL_OK) {
        *gpu = before;
        wl_error_set(err, csv_path, 0, e.field, "%s", e.text);
        return WL_EINVAL;
    }
    return WL_OK;
}

int wl_preset_apply_idle_specs(wl_core_gpu *gpus, size_t n_gpus, const char *const *specs,
                               size_t n_specs, const char **applied, wl_error *err)
{
    for (size_t i = 0; applied && i < n_gpus; i++)
        applied[i] = NULL;
    for (size_t k = 0; k < n_specs; k++) {
        const char *spec = specs[k], *eq = strchr(spec, '=');
        const char *path = eq ? eq + 1 : spec;
        char name[128] = "";
        if (eq) {
            size_t len = (size_t)(eq - spec);
            snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), spec);
        } else if (n_gpus != 1) {
            wl_error_set(err, spec, 0, "idle", "name the GPU (ID=TABLE.csv) when there are several");
            return WL_EINVAL;
        }
        int used = 0;
        for (size_t i = 0; i < n_gpus; i++) {
            if (eq && !wl_preset_gpu_names(name, gpus[i].id))
                continue;
            int rc = wl_preset_gpu_idle_table(&gpus[i], path, err);
            if (rc)
                return rc;
            if (applied)
                applied[i] = path;
            used = 1;
        }
        if (!used) {
            wl_error_set(err, spec, 0, "idle", "'%s' names no GPU in play", name);
            return WL_EINVAL;
        }
    }
    return WL_OK;
}
