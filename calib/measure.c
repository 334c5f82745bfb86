/* Measurement CSV loading and validation. */
#include "wattlas_calib.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wl_calib_set {
    wl_calib_row *rows;
    char **raw;
    size_t n, cap;
    char *header;
    char fallback_traces[1024];
};

void wl_calib_set_fallback_traces(wl_calib_set *s, const char *dir)
{
    snprintf(s->fallback_traces, sizeof s->fallback_traces, "%s", dir ? dir : "");
}

const char *wl_calib_fallback_traces(const wl_calib_set *s)
{
    return s->fallback_traces[0] ? s->fallback_traces : NULL;
}

static const char *const required[] = {"gpu", "model", "batch", "seq", "dtype", "mode",
                                       "attention", "sm_clock_mhz", "time_ms", "energy_j",
                                       "power_w"};

static int num(const char *s, double *out, int allow_empty)
{
    if (!*s) {
        if (allow_empty) {
            *out = NAN;
            return 0;
        }
        return -1;
    }
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || *e || errno || isnan(v))
        return -1;
    *out = v;
    return 0;
}

static int copy_str(char *dst, size_t n, const char *src)
{
    if (strlen(src) >= n)
        return -1;
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

int wl_calib_load(const char *path, wl_calib_set **out, wl_error *err)
{
    *out = NULL;
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open(path, &csv, err);
    if (rc)
        return rc;
    int col[11];
    for (int i = 0; i < 11; i++) {
        col[i] = wl_results_csv_col(csv, required[i]);
        if (col[i] < 0) {
            wl_error_set(err, path, 1, required[i], "missing required column");
            wl_results_csv_close(csv);
            return WL_EPARSE;
        }
    }
    int c_meas = wl_results_csv_col(csv, "measured_clock_mhz");
    int c_temp = wl_results_csv_col(csv, "temp_c");
    wl_calib_set *s = calloc(1, sizeof *s);
    if (!s) {
        wl_results_csv_close(csv);
        return WL_ENOMEM;
    }
    /* header text */
    size_t hl = 0;
    for (size_t i = 0; i < wl_results_csv_ncols(csv); i++)
        hl += strlen(wl_results_csv_header(csv, i)) + 1;
    s->header = calloc(hl + 1, 1);
    if (!s->header) {
        rc = WL_ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < wl_results_csv_ncols(csv); i++) {
        if (i)
            strcat(s->header, ",");
        strcat(s->header, wl_results_csv_header(csv, i));
    }
    int r;
    while ((r = wl_results_csv_next(csv, err)) == 1) {
        if (s->n == s->cap) {
            size_t nc = s->cap ? 2 * s->cap : 256;
            wl_calib_row *nr = realloc(s->rows, nc * sizeof *nr);
            if (!nr) { rc = WL_ENOMEM; goto fail; }
            s->rows = nr;
            char **nraw = realloc(s->raw, nc * sizeof *nraw);
            if (!nraw) { rc = WL_ENOMEM; goto fail; }
            s->raw = nraw;
            s->cap = nc;
        }
        wl_calib_row *row = &s->rows[s->n];
        memset(row, 0, sizeof *row);
        row->line = wl_results_csv_line(csv);
        int line = row->line;
        const char *f;
#define FIELD(i) wl_results_csv_field(csv, (size_t)col[i])
        if (copy_str(row->gpu, sizeof row->gpu, FIELD(0)) ||
            copy_str(row->model, sizeof row->model, FIELD(1)) ||
            copy_str(row->dtype, sizeof row->dtype, FIELD(4)) ||
            copy_str(row->mode, sizeof row->mode, FIELD(5)) ||
            copy_str(row->attention, sizeof row->attention, FIELD(6))) {
            wl_error_set(err, path, line, "", "a text field is too long");
            rc = WL_EPARSE;
            goto fail;
        }
        if (!row->model[0]) {
            wl_error_set(err, path, line, "model", "empty");
            rc = WL_EPARSE;
            goto fail;
        }
        double b, sq, v;
        f = FIELD(2);
        if (num(f, &b, 0) || b < 1 || b != floor(b)) {
            wl_error_set(err, path, line, "batch", "not a positive integer: '%s'", f);
            rc = WL_EPARSE;
            goto fail;
        }
        f = FIELD(3);
        if (num(f, &sq, 1) || (!isnan(sq) && (sq < 1 || sq != floor(sq)))) {
            wl_error_set(err, path, line, "seq", "not a positive integer or empty: '%s'", f);
            rc = WL_EPARSE;
            goto fail;
        }
        row->batch = (long long)b;
        row->seq = isnan(sq) ? 0 : (long long)sq;
        static const char *const numcols[] = {"sm_clock_mhz", "time_ms", "energy_j", "power_w"};
        double *dst[] = {&row->sm_clock_mhz, &row->time_ms, &row->energy_j, &row->power_w};
        for (int i = 0; i < 4; i++) {
            f = FIELD(7 + i);
            if (num(f, &v, 0) || !isfinite(v)) {
                wl_error_set(err, path, line, numcols[i], "not a number: '%s'", f);
                rc = WL_EPARSE;
                goto fail;
            }
            *dst[i] = v;
        }
        if (!(row->sm_clock_mhz > 0)) {
            wl_error_set(err, path, line, "sm_clock_mhz", "must be positive");
            rc = WL_EPARSE;
            goto fail;
        }
        row->measured_clock_mhz = row->sm_clock_mhz;
        if (c_meas >= 0) {
            f = wl_results_csv_field(csv, (size_t)c_meas);
            if (num(f, &v, 1)) {
                wl_error_set(err, path, line, "measured_clock_mhz", "not a number: '%s'", f);
                rc = WL_EPARSE;
                goto fail;
            }
            if (!isnan(v))
                row->measured_clock_mhz = v;
        }
        row->temp_c = NAN;
        if (c_temp >= 0) {
            f = wl_results_csv_field(csv, (size_t)c_temp);
            if (num(f, &row->temp_c, 1)) {
                wl_error_set(err, path, line, "temp_c", "not a number: '%s'", f);
                rc = WL_EPARSE;
                goto fail;
            }
        }
#undef FIELD
        s->raw[s->n] = strdup(wl_results_csv_raw(csv));
        if (!s->raw[s->n]) {
            rc = WL_ENOMEM;
            goto fail;
        }
        s->n++;
    }
    if (r < 0) {
        rc = WL_EPARSE;
        goto fail;
    }
    wl_results_csv_close(csv);
    if (s->n == 0) {
        wl_error_set(err, path, 0, "", "no data rows");
        wl_calib_free(s);
        return WL_EPARSE;
    }
    *out = s;
    return WL_OK;
fail:
    wl_results_csv_close(csv);
    wl_calib_free(s);
    return rc;
}

void wl_calib_free(wl_calib_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->raw[i]);
    free(s->raw);
    free(s->rows);
    free(s->header);
    free(s);
}

size_t wl_calib_count(const wl_calib_set *s) { return s->n; }
const wl_calib_row *wl_calib_row_at(const wl_calib_set *s, size_t i)
{
    return i < s->n ? &s->rows[i] : NULL;
}
const char *wl_calib_raw(const wl_calib_set *s, size_t i) { return i < s->n ? s->raw[i] : ""; }
const char *wl_calib_header(const wl_calib_set *s) { return s->header; }

void wl_calib_workload_key(const wl_calib_row *r, char *buf, size_t n)
{
    if (r->seq > 0)
        snprintf(buf, n, "%s b%lld s%lld %s %s", r->model, r->batch, r->seq, r->dtype,
                 r->attention);
    else
        snprintf(buf, n, "%s b%lld %s %s", r->model, r->batch, r->dtype, r->attention);
}
