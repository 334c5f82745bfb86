/* Derive a preset's [vf] table from a measured idle table. The output is a
 * smoothed, resampled curve (local linear least squares), not a copy. */
#include "wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXPTS 100000

typedef struct {
    double *x, *v, *p; /* clock, voltage (NaN: none), idle power */
    int n;
} idle_rows;

static void idle_rows_free(idle_rows *r)
{
    free(r->x);
    free(r->v);
    free(r->p);
}

/* Rows of an idle table: sm_clock_mhz, voltage_mv (may be empty),
 * idle_power_w, every number checked with the file, line and column. */
static int read_idle(wl_results_csv *csv, idle_rows *r, int *has_v, wl_error *err)
{
    static const char *const need[3] = {"sm_clock_mhz", "voltage_mv", "idle_power_w"};
    static const double lo[3] = {1, 1, 0}, hi[3] = {100000, 5000, 100000};
    const char *path = wl_results_csv_path(csv);
    int col[3];
    for (int i = 0; i < 3; i++)
        if ((col[i] = wl_results_csv_col(csv, need[i])) < 0) {
            wl_error_set(err, path, 1, need[i],
                         "missing column (expected sm_clock_mhz,voltage_mv,idle_power_w)");
            return WL_EPARSE;
        }
    size_t cap = 0;
    *has_v = 1;
    int rc;
    while ((rc = wl_results_csv_next(csv, err)) == 1) {
        if (r->n >= MAXPTS) {
            wl_error_set(err, path, wl_results_csv_line(csv), "", "more than %d rows", MAXPTS);
            return WL_EPARSE;
        }
        if ((size_t)r->n == cap) {
            cap = cap ? cap * 2 : 256;
            double *nx = realloc(r->x, cap * sizeof *nx);
            if (nx)
                r->x = nx;
            double *nv = nx ? realloc(r->v, cap * sizeof *nv) : NULL;
            if (nv)
                r->v = nv;
            double *np = nv ? realloc(r->p, cap * sizeof *np) : NULL;
            if (!np)
                return WL_ENOMEM;
            r->p = np;
        }
        double v[3];
        for (int i = 0; i < 3; i++) {
            int nrc = wl_results_csv_num(csv, (size_t)col[i], &v[i], err);
            if (nrc == WL_ENOTFOUND && i == 1) {
                *has_v = 0; /* no voltage (H100: not readable) */
                continue;
            }
            if (nrc == WL_ENOTFOUND)
                wl_error_set(err, path, wl_results_csv_line(csv), need[i], "empty");
            if (nrc == WL_OK && !(v[i] > lo[i] - 1e-12 && v[i] <= hi[i] && (i != 2 || v[i] > 0))) {
                wl_error_set(err, path, wl_results_csv_line(csv), need[i],
                             "expected a %s number up to %.0f, got %g",
                             i == 2 ? "positive" : "positive", hi[i], v[i]);
                nrc = WL_EPARSE;
            }
            if (nrc)
                return WL_EPARSE;
        }
        r->x[r->n] = v[0];
        r->v[r->n] = v[1];
        r->p[r->n] = v[2];
        r->n++;
    }
    return rc < 0 ? WL_EPARSE : WL_OK;
}

/* Reads and smooths an idle table into nk knots (clock, voltage or NAN,
 * idle power); notes (dropped rows) go to out when not NULL. */
static int smooth_table(wl_results_csv *csv, double step_mhz, FILE *out, double *knots,
                        double *vv, double *pp, int *nk_out, int *has_v_out, wl_error *err)
{
    const char *csv_path = wl_results_csv_path(csv);
    if (!(step_mhz > 0 && step_mhz <= 100000)) {
        wl_error_set(err, csv_path, 0, "step_mhz", "must be in (0, 100000] MHz");
        return WL_EINVAL;
    }
    idle_rows rows = {0};
    int has_v = 1;
    int rc = read_idle(csv, &rows, &has_v, err);
    if (!rc && rows.n < 3) {
        wl_error_set(err, csv_path, 0, "", "need at least 3 rows");
        rc = WL_EPARSE;
    }
    if (rc) {
        idle_rows_free(&rows);
        return rc;
    }
    double *fx = rows.x, *fv = rows.v, *fp = rows.p;
    int n = rows.n;
    /* Hampel-style screen: a row whose idle power is more than 20% off the
     * median of its 6 nearest rows is a transient (the H100 table's 345 MHz
     * row reads 117 W among 72 W neighbours); drop it and say so. The
     * survivors are compacted in place (m <= i). Only neighbours within
     * three steps count: in a sparse table (a few clocks, as the harness's
     * quick run measures) idle power rises between far-apart rows for real
     * (H200 board B: 95 W at 1500 MHz, 116 W at 1755, 129 W at 1980). */
    {
        int m = 0;
        unsigned char *drop = calloc((size_t)n, 1);
        if (!drop) {
            idle_rows_free(&rows);
            return WL_ENOMEM;
        }
        for (int i = 0; i < n; i++) {
            double nb[6];
            int k = 0;
            for (int j = i - 3; j <= i + 3; j++)
                if (j >= 0 && j < n && j != i && k < 6 && fabs(fx[j] - fx[i]) <= 3 * step_mhz)
                    nb[k++] = fp[j];
            for (int a = 1; a < k; a++)
                for (int b = a; b > 0 && nb[b] < nb[b - 1]; b--) {
                    double t = nb[b]; nb[b] = nb[b - 1]; nb[b - 1] = t;
                }
            double med = k ? (k % 2 ? nb[k / 2] : 0.5 * (nb[k / 2 - 1] + nb[k / 2])) : fp[i];
            if (k >= 3 && fabs(fp[i] - med) > 0.2 * med) {
                drop[i] = 1;
                if (out)
                    fprintf(out, "; dropped outlier row %.0f MHz: %.2f W against a neighbour median of %.2f W\n",
                            fx[i], fp[i], med);
            }
        }
        for (int i = 0; i < n; i++)
            if (!drop[i]) {
                fx[m] = fx[i]; fv[m] = fv[i]; fp[m] = fp[i];
                m++;
            }
        free(drop);
        n = m;
    }
    double lo = fx[0], hi = fx[0];
    for (int i = 1; i < n; i++) {
        lo = fx[i] < lo ? fx[i] : lo;
        hi = fx[i] > hi ? fx[i] : hi;
    }
    if ((hi - lo) / step_mhz + 1 > WL_VF_MAX) {
        wl_error_set(err, csv_path, 0, "step_mhz", "%.0f-%.0f MHz at %g MHz steps needs more than "
                     "%d knots: take a larger step", lo, hi, step_mhz, WL_VF_MAX);
        idle_rows_free(&rows);
        return WL_EINVAL;
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
    /* a knot with no row within its window (a sparse table): the straight
     * line between the nearest rows either side */
    for (int j = 0; j < nk; j++)
        for (int col = 0; col < 2; col++) {
            double *yk = col ? &pp[j] : &vv[j];
            if (isfinite(*yk))
                continue;
            int a = -1, b = -1;
            for (int i = 0; i < n; i++) {
                double y = col ? fp[i] : fv[i];
                if (!isfinite(y))
                    continue;
                if (fx[i] <= knots[j] && (a < 0 || fx[i] > fx[a]))
                    a = i;
                if (fx[i] >= knots[j] && (b < 0 || fx[i] < fx[b]))
                    b = i;
            }
            const double *ys = col ? fp : fv;
            if (a >= 0 && b >= 0 && fx[b] > fx[a])
                *yk = ys[a] + (ys[b] - ys[a]) * (knots[j] - fx[a]) / (fx[b] - fx[a]);
            else if (a >= 0 || b >= 0)
                *yk = ys[a >= 0 ? a : b];
        }
    /* voltage is non-decreasing with clock: enforce after smoothing */
    for (int i = 1; i < nk; i++)
        if (vv[i] < vv[i - 1])
            vv[i] = vv[i - 1];
    *nk_out = nk;
    *has_v_out = has_v;
    idle_rows_free(&rows);
    return WL_OK;
}

static int smooth_file(const char *path, double step_mhz, FILE *out, double *knots, double *vv,
                       double *pp, int *nk, int *has_v, wl_error *err)
{
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open(path, &csv, err);
    if (!rc)
        rc = smooth_table(csv, step_mhz, out, knots, vv, pp, nk, has_v, err);
    wl_results_csv_close(csv);
    return rc;
}

/* A path in a comment line: no control characters (a newline would start
 * an INI line of its own). */
static void put_path(FILE *out, const char *p)
{
    for (; *p; p++)
        fputc((unsigned char)*p < 0x20 ? '?' : *p, out);
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
    int rc = smooth_file(csv_path, step_mhz, m, knots, vv, pp, &nk, &has_v, err);
    fclose(m);
    if (rc) {
        free(notes);
        return rc;
    }
    fputs("[vf]\n; derived by: wattlas presets derive-vf ", out);
    put_path(out, csv_path);
    fprintf(out, " --step-mhz %g\n%s", step_mhz, notes ? notes : "");
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

static int idle_table(wl_core_gpu *gpu, wl_results_csv *csv, wl_error *err)
{
    const char *csv_path = wl_results_csv_path(csv);
    double knots[WL_VF_MAX], vv[WL_VF_MAX], pp[WL_VF_MAX];
    int nk = 0, has_v = 0;
    int rc = smooth_table(csv, 60, NULL, knots, vv, pp, &nk, &has_v, err);
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

int wl_preset_gpu_idle_table(wl_core_gpu *gpu, const char *csv_path, wl_error *err)
{
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open(csv_path, &csv, err);
    if (!rc)
        rc = idle_table(gpu, csv, err);
    wl_results_csv_close(csv);
    return rc;
}

int wl_preset_gpu_idle_table_mem(wl_core_gpu *gpu, const char *data, size_t len,
                                 const char *source, wl_error *err)
{
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open_mem(data, len, source, &csv, err);
    if (!rc)
        rc = idle_table(gpu, csv, err);
    wl_results_csv_close(csv);
    return rc;
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
