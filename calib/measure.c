/* Measurement CSV loading and validation. */
#include "wattlas_calib.h"
#include "../results/wattlas_results.h"
#include "../presets/wattlas_presets.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wl_calib_set {
    wl_calib_row *rows;
    char **raw;       /* per row: its fields, NUL-separated */
    size_t n, cap;
    char **cols;      /* header */
    size_t ncols;
    char *header;     /* header text */
    char *fallback_traces; /* NULL: none */
    char *source;          /* the file read (errors found later name it) */
};

int wl_calib_set_fallback_traces(wl_calib_set *s, const char *dir)
{
    free(s->fallback_traces);
    s->fallback_traces = NULL;
    if (!dir || !dir[0])
        return WL_OK;
    size_t n = strlen(dir) + 1;
    if (!(s->fallback_traces = malloc(n)))
        return WL_ENOMEM;
    memcpy(s->fallback_traces, dir, n);
    return WL_OK;
}

const char *wl_calib_fallback_traces(const wl_calib_set *s)
{
    return s->fallback_traces;
}

static const char *const required[] = {"gpu", "model", "batch", "seq", "dtype", "mode",
                                       "attention", "sm_clock_mhz", "time_ms", "energy_j",
                                       "power_w"};

static int copy_str(char *dst, size_t n, const char *src)
{
    if (strlen(src) >= n)
        return -1;
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

/* A measured number: finite and within [lo, hi] (what an instrument could
 * report); empty allowed where optional (NaN). */
static int measured(const wl_results_csv *csv, int col, const char *name, double lo, double hi,
                    int optional, double *v, wl_error *err)
{
    int rc = wl_results_csv_num(csv, (size_t)col, v, err);
    if (rc == WL_ENOTFOUND && optional)
        return WL_OK;
    if (rc == WL_ENOTFOUND) {
        wl_error_set(err, wl_results_csv_path(csv), wl_results_csv_line(csv), name, "empty");
        return WL_EPARSE;
    }
    if (rc)
        return WL_EPARSE;
    if (!(*v >= lo && *v <= hi)) {
        char a[WL_CORE_NUM_TEXT], b[WL_CORE_NUM_TEXT];
        wl_core_num_text(a, sizeof a, lo);
        wl_core_num_text(b, sizeof b, hi);
        wl_error_set(err, wl_results_csv_path(csv), wl_results_csv_line(csv), name,
                     "expected a number in [%s, %s], got '%.40s'", a, b,
                     wl_results_csv_field(csv, (size_t)col));
        return WL_EPARSE;
    }
    return WL_OK;
}

static int store_fields(wl_calib_set *s, const wl_results_csv *csv)
{
    size_t len = 0, nc = wl_results_csv_ncols(csv);
    for (size_t i = 0; i < nc; i++)
        len += strlen(wl_results_csv_field(csv, i)) + 1;
    char *p = malloc(len ? len : 1);
    if (!p)
        return WL_ENOMEM;
    s->raw[s->n] = p;
    for (size_t i = 0; i < nc; i++) {
        const char *f = wl_results_csv_field(csv, i);
        size_t l = strlen(f) + 1;
        memcpy(p, f, l);
        p += l;
    }
    return WL_OK;
}

static int read_rows(wl_results_csv *csv, wl_calib_set *s, wl_error *err)
{
    const char *path = wl_results_csv_path(csv);
    int col[11];
    for (int i = 0; i < 11; i++) {
        col[i] = wl_results_csv_col(csv, required[i]);
        if (col[i] < 0) {
            wl_error_set(err, path, 1, required[i], "missing required column");
            return WL_EPARSE;
        }
    }
    int c_meas = wl_results_csv_col(csv, "measured_clock_mhz");
    int c_temp = wl_results_csv_col(csv, "temp_c");
    int c_limit = wl_results_csv_col(csv, "power_limit_w");
    int c_gen = wl_results_csv_col(csv, "gen_tokens");
    int c_rel = wl_results_csv_col(csv, "time_relative");
    static const char *const opt_names[6] = {"optimizer", "master_dtype", "launch", "stack",
                                             "impl", "scope"};
    int c_opt[6];
    for (int i = 0; i < 6; i++)
        c_opt[i] = wl_results_csv_col(csv, opt_names[i]);
    /* rows that do not say their stack (see wl_calib_row) */
    static const char *const harness_cols[] = {"power_limit_w", "gen_tokens", "optimizer",
                                               "master_dtype", "launch", "repeats",
                                               "throttle_reasons"};
    int harness = 0;
    for (size_t i = 0; i < sizeof harness_cols / sizeof *harness_cols; i++)
        harness |= wl_results_csv_col(csv, harness_cols[i]) >= 0;
    size_t nc = wl_results_csv_ncols(csv), hl = 0;
    s->cols = calloc(nc, sizeof *s->cols);
    if (!s->cols)
        return WL_ENOMEM;
    for (size_t i = 0; i < nc; i++) {
        if (!(s->cols[s->ncols++] = strdup(wl_results_csv_header(csv, i))))
            return WL_ENOMEM;
        hl += strlen(s->cols[i]) + 1;
    }
    s->header = calloc(hl + 1, 1);
    if (!s->header)
        return WL_ENOMEM;
    for (size_t i = 0, o = 0; i < nc; i++) {
        size_t l = strlen(s->cols[i]);
        if (i)
            s->header[o++] = ',';
        memcpy(s->header + o, s->cols[i], l);
        o += l;
    }
    int r;
    while ((r = wl_results_csv_next(csv, err)) == 1) {
        if (s->n == s->cap) {
            size_t ncap = s->cap ? 2 * s->cap : 256;
            wl_calib_row *nr = realloc(s->rows, ncap * sizeof *nr);
            if (!nr)
                return WL_ENOMEM;
            s->rows = nr;
            char **nraw = realloc(s->raw, ncap * sizeof *nraw);
            if (!nraw)
                return WL_ENOMEM;
            s->raw = nraw;
            s->cap = ncap;
        }
        wl_calib_row *row = &s->rows[s->n];
        memset(row, 0, sizeof *row);
        row->line = wl_results_csv_line(csv);
        int line = row->line;
#define FIELD(i) wl_results_csv_field(csv, (size_t)col[i])
        static const char *const names[5] = {"gpu", "model", "dtype", "mode", "attention"};
        char *dst[5] = {row->gpu, row->model, row->dtype, row->mode, row->attention};
        size_t cap[5] = {sizeof row->gpu, sizeof row->model, sizeof row->dtype, sizeof row->mode,
                         sizeof row->attention};
        const int idx[5] = {0, 1, 4, 5, 6};
        for (int i = 0; i < 5; i++)
            if (copy_str(dst[i], cap[i], FIELD(idx[i]))) {
                wl_error_set(err, path, line, names[i], "longer than %zu characters", cap[i] - 1);
                return WL_EPARSE;
            }
#undef FIELD
        if (!row->model[0]) {
            wl_error_set(err, path, line, "model", "empty");
            return WL_EPARSE;
        }
        double b, sq = NAN;
        row->energy_j = row->power_w = NAN;
        /* a shape too large to build is a reason per row, not a broken file */
        if (measured(csv, col[2], "batch", 1, 1e15, 0, &b, err) ||
            measured(csv, col[3], "seq", 1, 1e15, 1, &sq, err))
            return WL_EPARSE;
        if (b != floor(b) || (!isnan(sq) && sq != floor(sq))) {
            wl_error_set(err, path, line, b != floor(b) ? "batch" : "seq", "not an integer");
            return WL_EPARSE;
        }
        row->batch = (long long)b;
        row->seq = isnan(sq) ? 0 : (long long)sq;
        /* physically impossible but finite values (negative, below idle)
         * are the fit's business: it reports and excludes them */
        if (measured(csv, col[7], "sm_clock_mhz", 1e-3, 1e5, 0, &row->sm_clock_mhz, err) ||
            measured(csv, col[8], "time_ms", -1e12, 1e12, 0, &row->time_ms, err) ||
            measured(csv, col[9], "energy_j", -1e12, 1e12, 1, &row->energy_j, err) ||
            measured(csv, col[10], "power_w", -1e6, 1e6, 1, &row->power_w, err))
            return WL_EPARSE;
        /* A row with time only (launch overhead, measured without a power
         * counter) leaves both empty; one of the two follows from the other
         * and the time (P = E / t). */
        if (isnan(row->energy_j) && !isnan(row->power_w))
            row->energy_j = row->power_w * row->time_ms * 1e-3;
        else if (isnan(row->power_w) && !isnan(row->energy_j))
            row->power_w = row->time_ms != 0 ? row->energy_j / row->time_ms * 1e3 : 0;
        row->measured_clock_mhz = NAN;
        if (c_meas >= 0 && measured(csv, c_meas, "measured_clock_mhz", 0, 1e5, 1,
                                    &row->measured_clock_mhz, err))
            return WL_EPARSE;
        if (isnan(row->measured_clock_mhz))
            row->measured_clock_mhz = row->sm_clock_mhz;
        row->temp_c = NAN;
        if (c_temp >= 0 && measured(csv, c_temp, "temp_c", -100, 300, 1, &row->temp_c, err))
            return WL_EPARSE;
        /* a limit nvidia-smi could set: a board takes tens to a thousand
         * or so watts; 0 or a megawatt is a broken cell, not a setting */
        row->power_limit_w = NAN;
        if (c_limit >= 0 && measured(csv, c_limit, "power_limit_w", 1, 1e5, 1,
                                     &row->power_limit_w, err))
            return WL_EPARSE;
        double g = NAN;
        if (c_gen >= 0 && measured(csv, c_gen, "gen_tokens", 1, 1e7, 1, &g, err))
            return WL_EPARSE;
        if (!isnan(g) && g != floor(g)) {
            wl_error_set(err, path, line, "gen_tokens", "not an integer");
            return WL_EPARSE;
        }
        row->gen_tokens = isnan(g) ? 0 : (long long)g;
        double rel = NAN;
        if (c_rel >= 0 && measured(csv, c_rel, "time_relative", 0, 1, 1, &rel, err))
            return WL_EPARSE;
        if (!isnan(rel) && rel != 0 && rel != 1) {
            wl_error_set(err, path, line, "time_relative", "expected 0 or 1");
            return WL_EPARSE;
        }
        row->time_relative = rel == 1;
        char *odst[6] = {row->optimizer, row->master_dtype, row->launch, row->stack, row->impl,
                         row->scope};
        const size_t ocap[6] = {sizeof row->optimizer, sizeof row->master_dtype, sizeof row->launch,
                                sizeof row->stack, sizeof row->impl, sizeof row->scope};
        for (int i = 0; i < 6; i++)
            if (c_opt[i] >= 0 &&
                copy_str(odst[i], ocap[i], wl_results_csv_field(csv, (size_t)c_opt[i]))) {
                wl_error_set(err, path, line, opt_names[i], "longer than %zu characters",
                             ocap[i] - 1);
                return WL_EPARSE;
            }
        if (row->scope[0] && strcmp(row->scope, "model") && strcmp(row->scope, "layer") &&
            strcmp(row->scope, "layer-in-model")) {
            wl_error_set(err, path, line, "scope", "expected model, layer or layer-in-model, got '%s'",
                         row->scope);
            return WL_EPARSE;
        }
        if (!row->stack[0]) {
            /* A row is predicted through the kernels its GPU's coefficients
             * were fitted through. EnergAIzer's A100 sets fitted the A100
             * presets through its traces' kernel lists (hf4: its tracer
             * leaves out the copies, cats and reductions PyTorch launches),
             * so their rows stay on them. Every other row in its 13-column
             * schema -- EnergAIzer's H100 whole models, the shared H100
             * host rows and one-kernel databases -- is predicted through
             * what eager PyTorch launched (hf5): the H100's coefficients
             * are per-kernel costs from one-kernel microbenchmarks, and the
             * transformers 4.51.3 of EnergAIzer's artifact launches what
             * hf5 builds (repeat_kv's expand and reshape, RMSNorm's fp32
             * casts and mean, rotate_half's cat, the attention output's
             * contiguous copy: 1429 kernels for Qwen2-1.5B b4 s1024 where
             * the trace lists 960). */
            int fitted_on_traces = !harness && !strncmp(row->gpu, "a100", 4);
            memcpy(row->stack, fitted_on_traces ? "hf4" : "hf5", 4);
        }
        if (store_fields(s, csv))
            return WL_ENOMEM;
        s->n++;
    }
    if (r < 0)
        return WL_EPARSE;
    if (s->n == 0) {
        wl_error_set(err, path, 0, "", "no data rows");
        return WL_EPARSE;
    }
    return WL_OK;
}

static int load_from(wl_results_csv *csv, int rc, wl_calib_set **out, wl_error *err)
{
    if (rc)
        return rc;
    wl_calib_set *s = calloc(1, sizeof *s);
    rc = s ? read_rows(csv, s, err) : WL_ENOMEM;
    if (rc == WL_ENOMEM)
        wl_error_set(err, wl_results_csv_path(csv), 0, "", "out of memory");
    if (!rc && !(s->source = strdup(wl_results_csv_path(csv)))) {
        wl_error_set(err, wl_results_csv_path(csv), 0, "", "out of memory");
        rc = WL_ENOMEM;
    }
    wl_results_csv_close(csv);
    if (rc) {
        wl_calib_free(s);
        return rc;
    }
    *out = s;
    return WL_OK;
}

int wl_calib_load(const char *path, wl_calib_set **out, wl_error *err)
{
    *out = NULL;
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open(path, &csv, err);
    return load_from(csv, rc, out, err);
}

int wl_calib_load_mem(const char *data, size_t len, const char *source, wl_calib_set **out,
                      wl_error *err)
{
    *out = NULL;
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open_mem(data, len, source, &csv, err);
    return load_from(csv, rc, out, err);
}

void wl_calib_free(wl_calib_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->raw[i]);
    for (size_t i = 0; i < s->ncols; i++)
        free(s->cols[i]);
    free(s->cols);
    free(s->raw);
    free(s->rows);
    free(s->header);
    free(s->fallback_traces);
    free(s->source);
    free(s);
}

const char *wl_calib_source(const wl_calib_set *s) { return s->source ? s->source : ""; }

int wl_calib_row_has_power(const wl_calib_row *r) { return !isnan(r->power_w); }

size_t wl_calib_count(const wl_calib_set *s) { return s->n; }
const wl_calib_row *wl_calib_row_at(const wl_calib_set *s, size_t i)
{
    return i < s->n ? &s->rows[i] : NULL;
}
const char *wl_calib_header(const wl_calib_set *s) { return s->header; }
size_t wl_calib_ncols(const wl_calib_set *s) { return s->ncols; }
const char *wl_calib_col(const wl_calib_set *s, size_t i) { return i < s->ncols ? s->cols[i] : ""; }

size_t wl_calib_fields(const wl_calib_set *s, size_t row, const char **fields)
{
    if (row >= s->n)
        return 0;
    const char *p = s->raw[row];
    for (size_t i = 0; i < s->ncols; i++) {
        fields[i] = p;
        p += strlen(p) + 1;
    }
    return s->ncols;
}

void wl_calib_workload_key(const wl_calib_row *r, char *buf, size_t n)
{
    /* a forward pass is the default and goes unnamed; a training step and a
     * generation of the same shape are other workloads */
    wl_mode mode = WL_MODE_PREFILL;
    char extra[64] = "";
    if (!wl_mode_parse(r->mode, &mode) && mode == WL_MODE_TRAIN)
        snprintf(extra, sizeof extra, " train");
    else if (mode == WL_MODE_DECODE)
        snprintf(extra, sizeof extra, " decode g%lld", r->gen_tokens);
    if (r->scope[0] && strcmp(r->scope, "model"))
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " %s", r->scope);
    if (r->seq > 0)
        snprintf(buf, n, "%s b%lld s%lld %s %s%s", r->model, r->batch, r->seq, r->dtype,
                 r->attention, extra);
    else
        snprintf(buf, n, "%s b%lld %s %s%s", r->model, r->batch, r->dtype, r->attention, extra);
}
