/* A whole study: the sweep, its Pareto fronts, the energy-optimal and the
 * chosen operating points, figures, and index.md/index.html, built in a
 * temporary directory beside the target and moved into it only when all of
 * it succeeded. The sweep is run once and read once. */
#include "plot_internal.h"
#include "../pareto/wattlas_pareto.h"
#include "../sweep/wattlas_sweep.h"
#include "../presets/wattlas_presets.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_ENERGY_FIGS 24 /* energy-vs-clock figures; the rest is in sweep.csv */
#define SERIES_MAX 12      /* series per energy-vs-clock figure */

typedef struct {
    char *base, *caption;
} figure_rec;

typedef struct {
    const wl_plot_report_options *o;
    char *tmp;        /* the temporary directory */
    figure_rec *figs;
    size_t nfigs, figcap;
    size_t omitted;   /* energy-vs-clock figures left out */
    wl_results_table *t;      /* the sweep */
    wl_results_table *base;   /* the sweep, one row per point (kernel scope: first class) */
    int *param;       /* parameter columns of base (before sm_clock_mhz) */
    size_t nparam;
    unsigned long long learned_outside; /* points outside a learned model's domain */
} report;

/* A value as part of a file name: letters, digits, '.', '-', '_' only. */
static void name_part(wl_results_buf *b, const char *v)
{
    if (!*v)
        wl_results_buf_puts(b, "none");
    for (size_t i = 0; v[i] && i < 48; i++) {
        char c = v[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == '_';
        wl_results_buf_put(b, ok ? &c : "_", 1);
    }
}

static char *in_tmp(const report *r, const char *name)
{
    return wl_core_strprintf("%s/%s", r->tmp, name);
}

/* ---- the temporary directory ------------------------------------------------------- */

static int make_tmp(report *r, const char *dir, wl_error *err)
{
    size_t l = strlen(dir);
    while (l > 1 && dir[l - 1] == '/')
        l--;
    for (int k = 0; k < 1000; k++) {
        free(r->tmp);
        r->tmp = wl_core_strprintf("%.*s.tmp.%ld.%d", (int)l, dir, (long)getpid(), k);
        if (!r->tmp)
            return WL_ENOMEM;
        if (mkdir(r->tmp, 0777) == 0)
            return WL_OK;
        if (errno != EEXIST)
            break;
    }
    wl_error_set(err, dir, 0, "", "cannot create a directory beside it: %s", strerror(errno));
    free(r->tmp);
    r->tmp = NULL;
    return WL_EIO;
}

/* Removes the temporary directory and the files in it (only we wrote there). */
static void remove_tmp(report *r)
{
    if (!r->tmp)
        return;
    DIR *d = opendir(r->tmp);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = in_tmp(r, e->d_name);
        if (p)
            unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(r->tmp);
}

/* Moves the finished report into dir: the whole directory when dir does
 * not exist, else file by file (each rename replaces its old file). */
static int commit_tmp(report *r, const char *dir, wl_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (rename(r->tmp, dir) == 0) {
            free(r->tmp);
            r->tmp = NULL;
            return WL_OK;
        }
        wl_error_set(err, dir, 0, "", "cannot move the report into place: %s", strerror(errno));
        return WL_EIO;
    }
    DIR *d = opendir(r->tmp);
    if (!d) {
        wl_error_set(err, r->tmp, 0, "", "cannot read: %s", strerror(errno));
        return WL_EIO;
    }
    struct dirent *e;
    int rc = WL_OK;
    while (!rc && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *from = in_tmp(r, e->d_name), *to = wl_core_strprintf("%s/%s", dir, e->d_name);
        if (!from || !to)
            rc = WL_ENOMEM;
        else if (rename(from, to) != 0) {
            wl_error_set(err, to, 0, "", "cannot move into place: %s", strerror(errno));
            rc = WL_EIO;
        }
        free(from);
        free(to);
    }
    closedir(d);
    return rc;
}

/* ---- tables and figures -------------------------------------------------------------------- */

static int write_table(const report *r, const wl_results_table *t, const char *name,
                       wl_error *err)
{
    char *p = in_tmp(r, name);
    if (!p)
        return WL_ENOMEM;
    wl_results_out *o = NULL;
    int rc = wl_results_out_open(p, &o, err);
    if (!rc) {
        wl_results_table_write_csv(t, wl_results_out_stream(o));
        rc = wl_results_out_commit(o, err);
    }
    free(p);
    return rc;
}

static int add_figure(report *r, char *base, char *caption)
{
    if (!base || !caption) {
        free(base);
        free(caption);
        return WL_ENOMEM;
    }
    if (r->nfigs == r->figcap) {
        size_t nc = r->figcap ? r->figcap * 2 : 16;
        figure_rec *nf = realloc(r->figs, nc * sizeof *nf);
        if (!nf) {
            free(base);
            free(caption);
            return WL_ENOMEM;
        }
        r->figs = nf;
        r->figcap = nc;
    }
    r->figs[r->nfigs++] = (figure_rec){base, caption};
    return WL_OK;
}

/* The figure of a subset as PNG and PDF beside its CSV (base.csv). */
static int figure_sized(report *r, const char *kind, const wl_results_table *t, const char *base,
                        const char *caption, const wl_plot_kind_options *k, int log,
                        double height_in, wl_error *err);

static int figure(report *r, const char *kind, const wl_results_table *t, const char *base,
                  const char *caption, const wl_plot_kind_options *k, int log, wl_error *err)
{
    return figure_sized(r, kind, t, base, caption, k, log, 0, err);
}

/* As figure, height_in > 0 the canvas's height. */
static int figure_sized(report *r, const char *kind, const wl_results_table *t, const char *base,
                        const char *caption, const wl_plot_kind_options *k, int log,
                        double height_in, wl_error *err)
{
    char *csv = wl_core_strprintf("%s.csv", base);
    int rc = csv ? write_table(r, t, csv, err) : WL_ENOMEM;
    free(csv);
    wl_plot_options o;
    wl_plot_options_default(&o);
    o.log_y = log != 0;
    o.log_x = log == 2;
    if (k && k->facet)
        o.width_in = 7;
    if (k && k->panels)
        o.height_in = 4.2;
    if (height_in > 0)
        o.height_in = height_in;
    static const char *const ext[3] = {"png", "pdf", "svg"};
    for (int i = 0; i < 3 && !rc; i++) {
        char *p = wl_core_strprintf("%s/%s.%s", r->tmp, base, ext[i]);
        rc = p ? wl_plot_kind_lookup(kind)(t, k, &o, p, err) : WL_ENOMEM;
        free(p);
    }
    if (!rc)
        rc = add_figure(r, wl_core_strprintf("%s", base), wl_core_strprintf("%s", caption));
    return rc;
}


/* The most series one energy-vs-clock figure would hold when figures are
 * split by the key columns: distinct (key, other parameters) pairs per key. */
static size_t max_series(const report *r, const int *key, size_t nk)
{
    const wl_results_table *t = r->base;
    size_t n = wl_results_table_rows(t), best = 0, ns = 0;
    size_t *seen = malloc((n ? n : 1) * sizeof *seen); /* first row of each series */
    for (size_t row = 0; seen && row < n; row++) {
        size_t i = 0;
        while (i < ns && !wl_results_table_same(t, seen[i], row, r->param, r->nparam))
            i++;
        if (i < ns)
            continue;
        seen[ns++] = row;
        size_t same = 0;
        for (size_t j = 0; j < ns; j++)
            same += (size_t)wl_results_table_same(t, seen[j], row, key, nk);
        if (same > best)
            best = same;
    }
    free(seen);
    return best;
}

static int varies(const wl_results_table *t, int col)
{
    size_t idx[2];
    return col >= 0 && wl_results_table_distinct(t, col, idx, 2) > 1;
}

/* Energy vs clock: one figure per GPU, precision and mode (a training step
 * and a forward pass are different quantities), split further by the
 * outermost varying parameters while a figure would hold too many series. */
/* The first row of each distinct combination of the key columns, in order
 * of appearance: *first (malloc'd) holds *nf of them. */
static int key_combinations(const wl_results_table *t, const int *key, size_t nk,
                            size_t **first, size_t *nf)
{
    size_t n = wl_results_table_rows(t);
    *nf = 0;
    if (!(*first = malloc((n ? n : 1) * sizeof **first)))
        return WL_ENOMEM;
    for (size_t row = 0; row < n; row++) {
        size_t i = 0;
        while (i < *nf && !wl_results_table_same(t, (*first)[i], row, key, nk))
            i++;
        if (i == *nf)
            (*first)[(*nf)++] = row;
    }
    return WL_OK;
}

static int energy_figures(report *r, int *key, size_t *nk, const char *objective, wl_error *err)
{
    const wl_results_table *t = r->base;
    int gcol = wl_results_table_col(t, "gpu"), dcol = wl_results_table_col(t, "dtype");
    *nk = 0;
    if (gcol >= 0)
        key[(*nk)++] = gcol;
    if (dcol >= 0)
        key[(*nk)++] = dcol;
    int mcol = wl_results_table_col(t, "mode");
    if (varies(t, mcol))
        key[(*nk)++] = mcol;
    for (size_t i = 0; i < r->nparam && max_series(r, key, *nk) > SERIES_MAX; i++) {
        int c = r->param[i], in = 0;
        for (size_t j = 0; j < *nk; j++)
            in |= key[j] == c;
        if (!in && varies(t, c))
            key[(*nk)++] = c;
    }
    /* figure keys in order of appearance */
    size_t *first, nf;
    int rc = key_combinations(t, key, *nk, &first, &nf);
    if (rc)
        return rc;
    for (size_t f = 0; f < nf && !rc; f++) {
        if (f >= MAX_ENERGY_FIGS) {
            r->omitted = nf - f;
            break;
        }
        const char *vals[WL_RESULTS_CSV_MAXCOLS];
        for (size_t j = 0; j < *nk; j++)
            vals[j] = wl_results_table_cell(t, first[f], key[j]);
        wl_results_table *sub = NULL;
        rc = wl_results_table_filter(t, key, vals, *nk, &sub);
        wl_results_buf nb = {0}, cb = {0};
        wl_results_buf_puts(&nb, "energy");
        for (size_t j = 0; j < *nk; j++) {
            wl_results_buf_put(&nb, "-", 1);
            name_part(&nb, vals[j]);
            wl_results_buf_puts(&cb, j ? ", " : "");
            if (j >= 2) {
                wl_results_buf_puts(&cb, wl_results_table_header(t, (size_t)key[j]));
                wl_results_buf_put(&cb, " ", 1);
            }
            wl_results_buf_puts(&cb, vals[j]);
        }
        wl_results_buf_put(&nb, "", 0);
        wl_results_buf_put(&cb, "", 0);
        char *cap = wl_core_strprintf("Energy vs SM clock (log scale), %s: large marker the least "
                                      "energy, thick the clocks within 1%% of it, ring the choice "
                                      "of %s, dotted line the maximum clock, hollow "
                                      "power-limited; series that cannot run are named in the "
                                      "legend, not drawn",
                                      cb.p ? cb.p : "", objective);
        wl_plot_kind_options ek = {.objective = objective};
        if (!rc && (nb.oom || cb.oom || !cap))
            rc = WL_ENOMEM;
        /* past six series the legend's rows grow the canvas, not eat the
         * axes: a series is a row at the subset's lowest clock */
        size_t nser = 0;
        int cc = wl_results_table_col(sub, "sm_clock_mhz");
        double lowest = INFINITY, v;
        wl_error e2;
        for (size_t i = 0; !rc && cc >= 0 && i < wl_results_table_rows(sub); i++)
            if (wl_results_table_num(sub, i, cc, &v, &e2) == WL_OK && v < lowest)
                lowest = v;
        for (size_t i = 0; !rc && cc >= 0 && i < wl_results_table_rows(sub); i++)
            nser += wl_results_table_num(sub, i, cc, &v, &e2) == WL_OK && v == lowest;
        double h = nser > 6 ? 2.6 + 0.06 * (double)(nser - 6) : 0;
        if (!rc)
            rc = figure_sized(r, "energy-freq", sub, nb.p, cap, &ek, 1, fmin(h, 3.4), err);
        free(cap);
        wl_results_buf_free(&nb);
        wl_results_buf_free(&cb);
        wl_results_table_free(sub);
    }
    free(first);
    return rc;
}

/* The rows of the first figure's subset with the varying parameter columns
 * other than `keep` fixed: model to its last value, seq to its middle one,
 * the rest to their first. */
static int fixed_subset(const wl_results_table *t, const report *r, const int *keep, size_t nkeep,
                        wl_results_table **out)
{
    int cols[WL_RESULTS_CSV_MAXCOLS];
    const char *vals[WL_RESULTS_CSV_MAXCOLS];
    size_t n = 0, nr = wl_results_table_rows(t);
    size_t *idx = malloc((nr ? nr : 1) * sizeof *idx);
    if (!idx)
        return WL_ENOMEM;
    for (size_t i = 0; i < r->nparam; i++) {
        int c = r->param[i], kept = 0;
        for (size_t j = 0; j < nkeep; j++)
            kept |= keep[j] == c;
        size_t nd = kept ? 0 : wl_results_table_distinct(t, c, idx, nr);
        if (nd <= 1)
            continue;
        const char *h = wl_results_table_header(t, (size_t)c);
        size_t pick = !strcmp(h, "model") ? nd - 1 : !strcmp(h, "seq") ? nd / 2 : 0;
        cols[n] = c;
        vals[n++] = wl_results_table_cell(t, idx[pick], c);
    }
    int rc = wl_results_table_filter(t, cols, vals, n, out);
    free(idx);
    return rc;
}

/* The rows whose case fits its GPU (fits = 1), when any does: one-workload
 * figures show a case that can run. */
static int runnable(const wl_results_table *t, wl_results_table **out)
{
    int fc = wl_results_table_col(t, "fits");
    const char *one = "1";
    if (fc >= 0) {
        int rc = wl_results_table_filter(t, &fc, &one, 1, out);
        if (rc || wl_results_table_rows(*out) > 0)
            return rc;
        wl_results_table_free(*out);
    }
    return wl_results_table_filter(t, NULL, NULL, 0, out);
}

/* ---- optimisation tables ---------------------------------------------------------------- */

static const char *const opt_values[4] = {"time_ms", "power_w", "energy_j", "sm_clock_mhz"};

typedef struct {
    wl_pareto_set *set;
    wl_pareto_saving *sv;
    wl_pareto_objective obj;
} choice_table;

static void choice_free(choice_table *c)
{
    wl_pareto_set_free(c->set);
    free(c->sv);
}

/* A CSV table with these columns in the temporary directory: w writes its
 * rows, csv_close commits the file (or drops it after an error, rc). */
static int csv_open(const report *r, const char *name, const wl_results_col *cols, size_t nc,
                    wl_results_out **o, wl_results_writer **w, wl_error *err)
{
    *o = NULL;
    *w = NULL;
    char *p = in_tmp(r, name);
    int rc = p ? wl_results_out_open(p, o, err) : WL_ENOMEM;
    free(p);
    if (!rc)
        rc = wl_results_writer_create(wl_results_out_stream(*o), WL_FMT_CSV, cols, nc, w);
    return rc;
}

static int csv_close(wl_results_out *o, wl_results_writer *w, int rc, wl_error *err)
{
    wl_results_writer_finish(w);
    if (!o)
        return rc;
    if (rc) {
        wl_results_out_abort(o);
        return rc;
    }
    return wl_results_out_commit(o, err);
}

static int choose(const report *r, const wl_results_table *t, const char *objective,
                  const char *name, choice_table *c, wl_error *err)
{
    memset(c, 0, sizeof *c);
    int rc = wl_pareto_objective_parse(objective, &c->obj, err);
    wl_pareto_load_options lo = {.values = opt_values, .nvalues = 4, .collapse = 1};
    if (!rc)
        rc = wl_pareto_set_from_table(t, &lo, &c->set, err);
    if (!rc) {
        c->sv = calloc(wl_pareto_set_groups(c->set) + 1, sizeof *c->sv);
        rc = c->sv ? wl_pareto_savings(c->set, &c->obj, c->sv) : WL_ENOMEM;
    }
    wl_results_out *o = NULL;
    wl_results_writer *w = NULL;
    wl_results_col cols[WL_PARETO_KEYED_MAX];
    size_t nc = rc ? 0 : wl_pareto_savings_cols(c->set, cols, WL_PARETO_KEYED_MAX);
    if (!rc && !nc) {
        wl_error_set(err, name, 0, "", "too many columns to group by");
        rc = WL_EINVAL;
    }
    if (!rc)
        rc = csv_open(r, name, cols, nc, &o, &w, err);
    wl_results_cell cells[WL_PARETO_KEYED_MAX];
    for (size_t g = 0; !rc && g < wl_pareto_set_groups(c->set); g++) {
        wl_pareto_saving_cells(c->set, &c->obj, &c->sv[g], cells);
        rc = wl_results_writer_row(w, cells);
    }
    return csv_close(o, w, rc, err);
}

/* One clock per phase of each training and generation group
 * (schedules.csv), when the sweep has them. Sets *written. */
static int phase_schedules(const report *r, const char *objective, int *written, wl_error *err)
{
    *written = 0;
    if (wl_results_table_col(r->base, "time_fwd_ms") < 0 &&
        wl_results_table_col(r->base, "ttft_ms") < 0)
        return WL_OK;
    wl_pareto_objective obj;
    int rc = wl_pareto_objective_parse(objective, &obj, err);
    if (!rc && !wl_pareto_schedule_supports(&obj)) /* edp and the like: least energy */
        rc = wl_pareto_objective_parse("energy", &obj, err);
    wl_pareto_load_options lo = {.values = wl_pareto_phase_values,
                                 .nvalues = WL_PARETO_PHASE_NV, .optional_values = 1,
                                 .through_voltage = 1};
    wl_pareto_set *s = NULL;
    if (!rc)
        rc = wl_pareto_set_from_table(r->base, &lo, &s, err);
    wl_results_out *o = NULL;
    wl_results_writer *w = NULL;
    wl_results_col cols[WL_PARETO_KEYED_MAX];
    size_t nc = rc ? 0 : wl_pareto_schedule_cols(s, cols, WL_PARETO_KEYED_MAX);
    if (!rc && !nc) {
        wl_error_set(err, "schedules.csv", 0, "", "too many columns to group by");
        rc = WL_EINVAL;
    }
    if (!rc)
        rc = csv_open(r, "schedules.csv", cols, nc, &o, &w, err);
    if (!rc)
        rc = wl_pareto_schedules(s, &obj, WL_PARETO_BY_PHASE, 20, w, err);
    rc = csv_close(o, w, rc, err);
    *written = !rc;
    wl_pareto_set_free(s);
    return rc;
}

/* ---- index ------------------------------------------------------------------------------ */

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void md_text(FILE *f, const char *s, int cell)
{
    for (; *s; s++) {
        if (cell && *s == '/')
            fputc(' ', f);
        else if (*s == '|' || *s == '*' || *s == '_' || *s == '[' || *s == ']' || *s == '`')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void both(FILE *md, FILE *html, const char *s, int cell)
{
    md_text(md, s, cell);
    html_text(html, s);
}

/* The fi-th '/'-separated field of a group key. */
static void key_field(const char *key, size_t fi, char *out, size_t n)
{
    for (size_t i = 0; i < fi && key; i++)
        if ((key = strchr(key, '/')))
            key++;
    size_t l = key ? strcspn(key, "/") : 0;
    if (l >= n)
        l = n - 1;
    if (key)
        memcpy(out, key, l);
    out[l] = 0;
}

/* A number to d significant digits (NaN: empty). */
static void sig(char *t, size_t n, double v, int d)
{
    if (!isfinite(v)) {
        t[0] = 0;
        return;
    }
    int dec = v == 0 ? 0 : d - 1 - (int)floor(log10(fabs(v)));
    wl_results_fmt(t, n, v, dec < 0 ? 0 : dec);
}

/* A group's savings cells from objective on: [0] objective, [1] the chosen
 * clock, [2] time, [3] power, [4] energy, [5]-[7] the fastest point's
 * clock, time, energy, [8]-[10] the maximum clock's, [11]/[12] the saving
 * and penalty against the fastest, [13]/[14] against the maximum clock,
 * [15]/[16] the flat optimum. The savings table's key columns come first,
 * as many as the set has: cells holds WL_PARETO_KEYED_MAX. */
static const wl_results_cell *saving_of(const choice_table *c, size_t g, wl_results_cell *cells)
{
    wl_results_col cols[WL_PARETO_KEYED_MAX];
    size_t nc = wl_pareto_savings_cols(c->set, cols, WL_PARETO_KEYED_MAX), at = 0;
    while (at < nc && strcmp(cols[at].name, "objective"))
        at++;
    wl_pareto_saving_cells(c->set, &c->obj, &c->sv[g], cells);
    return cells + (at < nc ? at : 0);
}

/* The choice table: a column per parameter that varies between groups (gpu
 * and model always), then the chosen clock (integer MHz), its time, power
 * and energy, the maximum-clock baseline (marked when the power limit
 * throttles it), the change against it and the flat optimum. */
static void choice_html_md(FILE *md, FILE *html, const choice_table *c, const report *r)
{
    size_t ng = wl_pareto_set_groups(c->set), nkf = 0;
    int kcol[WL_RESULTS_CSV_MAXCOLS];
    int stop = wl_results_table_col(r->t, "voltage_offset_mv");
    if (stop < 0)
        stop = wl_results_table_col(r->t, "fixed_voltage_mv");
    if (stop < 0)
        stop = wl_results_table_col(r->t, "sm_clock_mhz");
    for (int col = 0; col < stop && nkf < WL_RESULTS_CSV_MAXCOLS; col++) {
        const char *h = wl_results_table_header(r->t, (size_t)col);
        int vary = !strcmp(h, "gpu") || !strcmp(h, "model");
        char a0[128], b0[128];
        for (size_t g = 1; !vary && g < ng; g++) {
            key_field(wl_pareto_set_group_key(c->set, 0), (size_t)col, a0, sizeof a0);
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)col, b0, sizeof b0);
            vary = strcmp(a0, b0) != 0;
        }
        if (vary)
            kcol[nkf++] = col;
    }
    static const char *const heads[10] = {
        "clock (MHz)", "time (ms)", "power (W)", "energy (J)", "max-clock time (ms)",
        "max-clock energy (J)", "energy saved (%)", "runtime penalty (%)",
        "within 1% of least (MHz)", "max clock throttled"};
    fputs("|", md);
    fputs("<table>\n<tr>", html);
    for (size_t i = 0; i < nkf; i++) {
        const char *h = wl_results_table_header(r->t, (size_t)kcol[i]);
        fprintf(md, " %s |", h);
        fputs("<th>", html);
        html_text(html, h);
        fputs("</th>", html);
    }
    for (int i = 0; i < 10; i++) {
        fprintf(md, " %s |", heads[i]);
        fprintf(html, "<th>%s</th>", heads[i]);
    }
    fputs("\n|", md);
    for (size_t i = 0; i < nkf + 10; i++)
        fputs("---|", md);
    fputs("\n", md);
    fputs("</tr>\n", html);
    wl_results_cell row[WL_PARETO_KEYED_MAX];
    for (size_t g = 0; g < ng; g++) {
        const wl_pareto_saving *sv = &c->sv[g];
        const wl_results_cell *cells = saving_of(c, g, row);
        fputs("|", md);
        fputs("<tr>", html);
        char v[12][WL_RESULTS_NUM_MAX + 48];
        for (size_t i = 0; i < nkf; i++) {
            char f[128];
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)kcol[i], f, sizeof f);
            fputs(" ", md);
            fputs("<td>", html);
            both(md, html, f, 1);
            fputs(" |", md);
            fputs("</td>", html);
        }
        /* cells (saving_of): 1 clock, 2 time, 3 power, 4 energy, 9 max
         * time, 10 max energy, 13/14 vs max clock, 15/16 the band */
        wl_results_fmt(v[0], sizeof v[0], cells[1].v, 0);
        sig(v[1], sizeof v[1], cells[2].v, 4);
        wl_results_fmt(v[2], sizeof v[2], cells[3].v, 1);
        sig(v[3], sizeof v[3], cells[4].v, 4);
        sig(v[4], sizeof v[4], cells[9].v, 4);
        sig(v[5], sizeof v[5], cells[10].v, 4);
        wl_results_fmt(v[6], sizeof v[6], cells[13].v, 1);
        wl_results_fmt(v[7], sizeof v[7], cells[14].v, 1);
        if (isfinite(cells[15].v))
            snprintf(v[8], sizeof v[8], "%.0f-%.0f", cells[15].v, cells[16].v);
        else
            v[8][0] = 0;
        double upto = sv->max_clock >= 0 ? wl_pareto_set_request_upto(c->set, (size_t)sv->max_clock) : NAN;
        snprintf(v[9], sizeof v[9], "%s",
                 isfinite(upto) && isfinite(cells[8].v) && upto > cells[8].v + 0.5 ? "yes" : "");
        if (sv->chosen < 0)
            for (int i = 0; i < 10; i++)
                v[i][0] = 0;
        for (int i = 0; i < 10; i++) {
            fputs(" ", md);
            fputs("<td>", html);
            both(md, html, v[i], 1);
            fputs(" |", md);
            fputs("</td>", html);
        }
        fputs("\n", md);
        fputs("</tr>\n", html);
    }
    fputs("</table>\n", html);
}

/* The phase schedules as a table in both indexes. */
static int schedule_html_md(const report *r, FILE *md, FILE *html, wl_error *err)
{
    char *p = in_tmp(r, "schedules.csv");
    wl_results_table *t = NULL;
    int rc = p ? wl_results_table_load(p, &t, err) : WL_ENOMEM;
    free(p);
    if (rc)
        return rc;
    /* the workload: its key columns (before "objective") that differ
     * between rows; then the schedule's, under readable headings */
    static const char *const show[6] = {"", "fixed_sm_clock_mhz", "schedule_mhz",
                                        "clock_switches", "extra_saving_pct", "slowdown_pct"};
    static const char *const head[6] = {"workload", "best fixed clock (MHz)",
                                        "clock per phase (MHz)", "clock switches",
                                        "extra saving (%)", "slowdown (%)"};
    int col[6], nk = wl_results_table_col(t, "objective");
    for (int i = 1; i < 6; i++)
        col[i] = wl_results_table_col(t, show[i]);
    col[0] = -1;
    size_t nrow = wl_results_table_rows(t);
    unsigned char varies[64] = {0};
    for (int k = 0; k < nk && k < 64; k++)
        for (size_t q = 1; q < nrow && !varies[k]; q++)
            varies[k] = strcmp(wl_results_table_cell(t, q, k), wl_results_table_cell(t, 0, k)) != 0;
    fputs("\n## One clock per phase\n\nThe best fixed clock and one clock per phase "
          "(forward, backward, optimizer; prefill, decode), switches at 20 us each "
          "(schedules.csv).\n\n|", md);
    fputs("<h2 id=\"schedules\">One clock per phase</h2>\n<p>The best fixed clock and one clock per phase "
          "(forward, backward, optimizer; prefill, decode), switches at 20 us each "
          "(<a href=\"schedules.csv\">schedules.csv</a>).</p>\n<table><tr>", html);
    for (int i = 0; i < 6; i++) {
        fprintf(md, " %s |", head[i]);
        fprintf(html, "<th>%s</th>", head[i]);
    }
    fputs("\n|", md);
    for (int i = 0; i < 6; i++)
        fputs("---|", md);
    fputs("</tr>\n", html);
    for (size_t row = 0; row < wl_results_table_rows(t); row++) {
        fputs("\n|", md);
        fputs("<tr>", html);
        for (int i = 0; i < 6; i++) {
            char wk[512];
            const char *v = col[i] >= 0 ? wl_results_table_cell(t, row, col[i]) : "";
            if (i == 0) { /* the workload's varying key values ("gpt2 8 512 train") */
                size_t l = 0;
                wk[0] = 0;
                for (int k = 0; k < nk && k < 64; k++) {
                    const char *kv = wl_results_table_cell(t, row, k);
                    if ((!varies[k] && nrow > 1) || !kv[0])
                        continue;
                    int w = snprintf(wk + l, sizeof wk - l, "%s%s", l ? " " : "", kv);
                    if (w < 0 || (size_t)w >= sizeof wk - l)
                        break;
                    l += (size_t)w;
                }
                v = wk;
            } else if (i == 2) { /* "forward=1050;backward=1200" as "forward 1050, ..." */
                size_t l = 0;
                for (const char *q = v; *q && l + 3 < sizeof wk; q++) {
                    if (*q == ';') {
                        wk[l++] = ',';
                        wk[l++] = ' ';
                    } else {
                        wk[l++] = *q == '=' ? ' ' : *q;
                    }
                }
                wk[l] = 0;
                v = wk;
            }
            fputc(' ', md);
            md_text(md, v, 1);
            fputs(" |", md);
            fputs("<td>", html);
            html_text(html, v);
            fputs("</td>", html);
        }
        fputs("</tr>\n", html);
    }
    fputs("\n", md);
    fputs("</table>\n", html);
    wl_results_table_free(t);
    return WL_OK;
}

/* ---- provenance ------------------------------------------------------------------------ */

/* FNV-1a of a preset's text (what a figure's numbers were made from). */
static uint64_t text_hash(const char *t)
{
    return wl_sweep_hash(WL_SWEEP_HASH_BASIS, t, strlen(t));
}

/* The value of `key = ...` in a preset text's [section] ("" if none). */
static void ini_value(const char *text, const char *section, const char *key, char *out, size_t n)
{
    out[0] = 0;
    char head[64];
    snprintf(head, sizeof head, "\n[%s]", section);
    const char *p = strstr(text, head);
    if (!p)
        return;
    p += strlen(head);
    size_t kl = strlen(key);
    while ((p = strchr(p, '\n'))) {
        p++;
        if (*p == '[')
            return;
        if (!strncmp(p, key, kl) && (p[kl] == ' ' || p[kl] == '=')) {
            const char *v = strchr(p, '=');
            if (!v)
                return;
            v++;
            while (*v == ' ')
                v++;
            size_t l = strcspn(v, "\n");
            if (l >= n)
                l = n - 1;
            memcpy(out, v, l);
            out[l] = 0;
            return;
        }
    }
}

/* The report's time: SOURCE_DATE_EPOCH when set (reproducible builds), or
 * now, in UTC. */
static void timestamp(char *out, size_t n)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    char *end = NULL;
    long long e = sde ? strtoll(sde, &end, 10) : 0;
    time_t t = sde && end && !*end && e >= 0 ? (time_t)e : time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, n, "unknown");
}

static void both_p(FILE *md, FILE *html, const char *s)
{
    fputs(s, md);
    fputs("\n\n", md);
    fputs("<p>", html);
    html_text(html, s);
    fputs("</p>\n", html);
}

/* One list item in both documents (the html list is opened by the caller). */
static void both_li(FILE *md, FILE *html, const char *s)
{
    fprintf(md, "- %s\n", s);
    fputs("<li>", html);
    html_text(html, s);
    fputs("</li>\n", html);
}

static void section(FILE *md, FILE *html, const char *id, const char *name)
{
    fprintf(md, "\n## %s\n\n", name);
    fprintf(html, "<h2 id=\"%s\">%s</h2>\n", id, name);
}

/* The headline: per GPU and precision, the range of energy saved at the
 * objective's choice against the maximum clock, its median, and the
 * runtime penalty range. */
static void headline(FILE *md, FILE *html, const report *r, const choice_table *c,
                     const char *objective)
{
    int gc = wl_results_table_col(r->t, "gpu"), dc = wl_results_table_col(r->t, "dtype");
    size_t ng = wl_pareto_set_groups(c->set);
    double *sv = malloc((ng + 1) * sizeof *sv);
    unsigned char *done = calloc(ng + 1, 1);
    fprintf(md, "At the objective `%s`, against running at the maximum clock:\n\n", objective);
    fputs("<p>At the objective <code>", html);
    html_text(html, objective);
    fputs("</code>, against running at the maximum clock:</p>\n<ul>\n", html);
    wl_results_cell row[WL_PARETO_KEYED_MAX];
    for (size_t g = 0; sv && done && g < ng; g++) {
        if (done[g])
            continue;
        char gv[128] = "", dv[32] = "";
        if (gc >= 0)
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)gc, gv, sizeof gv);
        if (dc >= 0)
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)dc, dv, sizeof dv);
        size_t m = 0;
        double plo = INFINITY, phi = -INFINITY;
        for (size_t h = g; h < ng; h++) {
            char g2[128] = "", d2[32] = "";
            if (gc >= 0)
                key_field(wl_pareto_set_group_key(c->set, h), (size_t)gc, g2, sizeof g2);
            if (dc >= 0)
                key_field(wl_pareto_set_group_key(c->set, h), (size_t)dc, d2, sizeof d2);
            if (strcmp(g2, gv) || strcmp(d2, dv))
                continue;
            done[h] = 1;
            const wl_results_cell *cells = saving_of(c, h, row);
            if (c->sv[h].chosen < 0 || !isfinite(cells[13].v))
                continue;
            /* insertion: sorted savings for the median */
            size_t i = m++;
            while (i > 0 && sv[i - 1] > cells[13].v) {
                sv[i] = sv[i - 1];
                i--;
            }
            sv[i] = cells[13].v;
            plo = fmin(plo, cells[14].v);
            phi = fmax(phi, cells[14].v);
        }
        char line[400];
        if (m)
            snprintf(line, sizeof line,
                     "%s, %s: %.1f-%.1f%% energy saved (median %.1f%%) at %.1f-%.1f%% longer "
                     "runtime, over %zu workloads", gv, dv, sv[0], sv[m - 1],
                     m % 2 ? sv[m / 2] : (sv[m / 2 - 1] + sv[m / 2]) / 2, plo, phi, m);
        else
            snprintf(line, sizeof line, "%s, %s: no point meets the objective", gv, dv);
        fprintf(md, "- **%s**\n", line);
        fputs("<li><b>", html);
        html_text(html, line);
        fputs("</b></li>\n", html);
    }
    fputs("\n", md);
    fputs("</ul>\n", html);
    free(sv);
    free(done);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file of the report, linked (the index itself aside). */
static int file_links(FILE *md, FILE *html, const report *r)
{
    DIR *d = opendir(r->tmp);
    if (!d)
        return WL_EIO;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = WL_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "index.", 6))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                rc = WL_ENOMEM;
                break;
            }
            names = nn;
        }
        if (!(names[n] = wl_core_strprintf("%s", e->d_name)))
            rc = WL_ENOMEM;
        else
            n++;
    }
    closedir(d);
    if (!rc) {
        qsort(names, n, sizeof *names, cmp_str);
        fputs("<ul>\n", html);
        for (size_t i = 0; i < n; i++) {
            fprintf(md, "- [%s](%s)\n", names[i], names[i]);
            fprintf(html, "<li><a href=\"%s\">%s</a></li>\n", names[i], names[i]);
        }
        fputs("</ul>\n", html);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static int write_index(report *r, const wl_sweep_spec *spec, const char *title,
                       const char *objective, unsigned long long points, const choice_table *opt,
                       const choice_table *sav, int sched, wl_error *err)
{
    char *pm = in_tmp(r, "index.md"), *ph = in_tmp(r, "index.html");
    wl_results_out *omd = NULL, *oh = NULL;
    int rc = pm && ph ? wl_results_out_open(pm, &omd, err) : WL_ENOMEM;
    if (!rc)
        rc = wl_results_out_open(ph, &oh, err);
    if (!rc) {
        FILE *md = wl_results_out_stream(omd), *html = wl_results_out_stream(oh);
        const char *cmd = r->o->command ? r->o->command : "wattlas report";
        const char *spec_path = r->o->spec_path ? r->o->spec_path : "";
        char when[64];
        timestamp(when, sizeof when);
        fputs("# ", md);
        md_text(md, title, 0);
        fputs("\n\n", md);
        fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", html);
        html_text(html, title);
        /* cells keep to one line; a table wider than the page scrolls
         * sideways rather than wrapping its numbers */
        fputs("</title>\n<style>body{font-family:'DejaVu Sans',sans-serif;max-width:80em;"
              "margin:2em auto;padding:0 1em}table{border-collapse:collapse;font-size:85%;"
              "display:block;overflow-x:auto;max-width:100%}td,th{border:1px "
              "solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}"
              "img{max-width:100%}"
              "pre{background:#f6f6f6;padding:0.5em}</style></head><body>\n<h1>", html);
        html_text(html, title);
        fputs("</h1>\n", html);
        char line[600];
        snprintf(line, sizeof line, "Predicted by wattlas %s (commit %s) on %s: %llu operating "
                 "points (sweep.csv). Predictions, not measurements; see Caveats.",
                 WL_VERSION, wl_core_build_commit(), when, points);
        both_p(md, html, line);
        headline(md, html, r, sav, objective);
        /* contents */
        static const char *const toc[][2] = {
            {"figures", "Figures"}, {"optimal", "Energy-optimal SM clock per workload"},
            {"savings", "Savings at the chosen clock"}, {"schedules", "One clock per phase"},
            {"caveats", "Caveats"}, {"provenance", "Provenance"}, {"files", "Files"}};
        fputs("Contents: ", md);
        fputs("<p>Contents: ", html);
        for (size_t i = 0; i < sizeof toc / sizeof *toc; i++) {
            if (i == 3 && !sched)
                continue;
            fprintf(md, "%s[%s](#%s)", i ? " | " : "", toc[i][1], toc[i][0]);
            fprintf(html, "%s<a href=\"#%s\">%s</a>", i ? " | " : "", toc[i][0], toc[i][1]);
        }
        fputs("\n\n", md);
        fputs("</p>\n", html);
        section(md, html, "figures", "Figures");
        for (size_t i = 0; i < r->nfigs; i++) {
            const figure_rec *f = &r->figs[i];
            fprintf(md, "![Figure %zu](%s.png)\n\n*Figure %zu. ", i + 1, f->base, i + 1);
            md_text(md, f->caption, 0);
            fprintf(md, "* ([PDF](%s.pdf), [SVG](%s.svg), [data](%s.csv))\n\n", f->base, f->base,
                    f->base);
            fprintf(html, "<figure><img src=\"%s.png\" alt=\"Figure %zu\"><figcaption>Figure %zu. ",
                    f->base, i + 1, i + 1);
            html_text(html, f->caption);
            fprintf(html, " (<a href=\"%s.pdf\">PDF</a>, <a href=\"%s.svg\">SVG</a>, "
                          "<a href=\"%s.csv\">data</a>)</figcaption></figure>\n",
                    f->base, f->base, f->base);
        }
        if (r->omitted) {
            snprintf(line, sizeof line, "%zu more energy-vs-clock figures were left out; "
                     "sweep.csv has every point.", r->omitted);
            both_p(md, html, line);
        }
        section(md, html, "optimal", "Energy-optimal SM clock per workload");
        size_t unfit = wl_pareto_set_unfit(opt->set);
        if (unfit) {
            snprintf(line, sizeof line, "%zu points need more memory than their GPU has (fits = 0 "
                     "in sweep.csv) and are left out of the tables.", unfit);
            both_p(md, html, line);
        }
        choice_html_md(md, html, opt, r);
        section(md, html, "savings", "Savings at the chosen clock");
        snprintf(line, sizeof line, "The clock the objective %s chooses, against the maximum "
                 "clock that can run (savings.csv).", objective);
        both_p(md, html, line);
        choice_html_md(md, html, sav, r);
        if (sched)
            rc = schedule_html_md(r, md, html, err);
        section(md, html, "caveats", "Caveats");
        fputs("<ul>\n", html);
        size_t ngpu = wl_sweep_spec_axis_count(spec, "gpu");
        for (size_t i = 0; i < ngpu; i++) {
            const wl_core_gpu *g = wl_sweep_spec_gpu(spec, i);
            const char *text = wl_preset_text(WL_PRESET_GPU, g->id);
            char note[256] = "", hash[128] = "";
            if (text) {
                ini_value(text, "calibration", "note", note, sizeof note);
                ini_value(text, "calibration", "data_hash", hash, sizeof hash);
            }
            /* a [calibration] made by fitting another GPU's measurements */
            char ccmd[512] = "", other[64] = "";
            if (text)
                ini_value(text, "calibration", "command", ccmd, sizeof ccmd);
            const char *gp = strstr(ccmd, "--gpu ");
            if (gp)
                snprintf(other, sizeof other, "%.*s", (int)strcspn(gp + 6, " "), gp + 6);
            if (other[0] && strcmp(other, g->id) && !note[0])
                snprintf(line, sizeof line, "%s carries the calibration fitted to %s's "
                         "measurements (its preset says why they transfer); no measurement of "
                         "%s itself was fitted or validated.", g->id, other, g->id);
            else if (!strncmp(g->coef_source, "transferred", 11))
                snprintf(line, sizeof line, "%s runs on coefficients %s by the transfer rules: no "
                         "measurement of this GPU was fitted; expect larger errors than on a "
                         "calibrated GPU.", g->id, g->coef_source);
            else if (note[0])
                snprintf(line, sizeof line, "%s is calibrated on measurements (%s): %s; the "
                         "README's Accuracy section gives the held-out errors.", g->id,
                         hash[0] ? hash : "its own data", note);
            else
                snprintf(line, sizeof line, "%s: coefficients %s.", g->id,
                         g->coef_source[0] ? g->coef_source : "as its preset gives them");
            both_li(md, html, line);
        }
        wl_learn_use lu;
        if (wl_sweep_spec_learned(spec, &lu)) {
            char what[320];
            wl_learn_model_describe(lu.model, what, sizeof what);
            snprintf(line, sizeof line, "Every point is the learned model's: %s. %llu of %llu "
                     "points lie outside its training domain; %s.", what, r->learned_outside,
                     points, wl_learn_outside_note(lu.model));
            both_li(md, html, line);
        }
        static const char *const general[] = {
            "Launch-bound workloads (small batch and sequence) are paced by the host; their "
            "measured time can be bimodal, so their optimum is flat and uncertain: read the "
            "within-1% range, not the single clock.",
            "Energy is the GPU board's; the host, network and cooling are not included.",
            "A preset carries one board. Boards of one product differ: about 15-30% in power "
            "at a clock, and in the power at which their controller holds a throttled kernel "
            "(0.76-1.01 of the limit on the Hopper boards measured); hosts differ 2x in their "
            "cost per kernel. Prediction intervals (--interval) include this spread unless "
            "--board same says the preset was calibrated on the very board; 'wattlas "
            "calibrate' on your own measurements gives your board's figures."};
        for (size_t i = 0; i < sizeof general / sizeof *general; i++) {
            both_li(md, html, general[i]);
        }
        fputs("</ul>\n", html);
        section(md, html, "provenance", "Provenance");
        fprintf(md, "- command: `%s`\n- wattlas %s, commit %s\n- generated %s\n", cmd, WL_VERSION,
                wl_core_build_commit(), when);
        fputs("<ul><li>command: <code>", html);
        html_text(html, cmd);
        fprintf(html, "</code></li><li>wattlas %s, commit %s</li><li>generated %s</li>\n",
                WL_VERSION, wl_core_build_commit(), when);
        for (size_t i = 0; i < ngpu; i++) {
            const wl_core_gpu *g = wl_sweep_spec_gpu(spec, i);
            const char *text = wl_preset_text(WL_PRESET_GPU, g->id);
            char hash[128] = "", calib[64] = "";
            if (text) {
                ini_value(text, "calibration", "data_hash", hash, sizeof hash);
                const char *cs = strstr(text, "\n[calibration]");
                if (cs) {
                    const char *ce = strstr(cs + 1, "\n[");
                    uint64_t h = wl_sweep_hash(WL_SWEEP_HASH_BASIS, cs,
                                               ce ? (size_t)(ce - cs) : strlen(cs));
                    snprintf(calib, sizeof calib, "fnv1a64:%016llx", (unsigned long long)h);
                }
            }
            snprintf(line, sizeof line, "GPU preset %s: %s%016llx; calibration %s%s%s",
                     g->id, text ? "fnv1a64:" : "(a file) ",
                     text ? (unsigned long long)text_hash(text) : 0ULL,
                     calib[0] ? calib : "none", hash[0] ? ", fitted on " : "", hash);
            both_li(md, html, line);
        }
        int mc = wl_results_table_col(r->t, "model");
        size_t idx[64];
        size_t nm = mc >= 0 ? wl_results_table_distinct(r->t, mc, idx, 64) : 0;
        for (size_t i = 0; i < nm && i < 64; i++) {
            const char *id = wl_results_table_cell(r->t, idx[i], mc);
            const char *text = wl_preset_text(WL_PRESET_MODEL, id);
            if (text)
                snprintf(line, sizeof line, "model preset %s: fnv1a64:%016llx", id,
                         (unsigned long long)text_hash(text));
            else
                snprintf(line, sizeof line, "model %s: not a built-in preset", id);
            both_li(md, html, line);
        }
        fputs("</ul>\n", html);
        /* the study file itself */
        char *spec_text = NULL;
        wl_error e2;
        if (spec_path[0] && !wl_core_read_file(spec_path, &spec_text, NULL, &e2)) {
            fprintf(md, "\nThe study file, `%s`:\n\n```ini\n%s%s```\n", spec_path, spec_text,
                    spec_text[0] && spec_text[strlen(spec_text) - 1] == '\n' ? "" : "\n");
            fputs("<p>The study file, <code>", html);
            html_text(html, spec_path);
            fputs("</code>:</p>\n<pre>", html);
            html_text(html, spec_text);
            fputs("</pre>\n", html);
        } else {
            both_p(md, html, "The study was given without a file (no spec to show).");
        }
        free(spec_text);
        section(md, html, "files", "Files");
        both_p(md, html, "sweep.csv has every point, pareto.csv the non-dominated ones, "
                         "optimal.csv the least energy per workload, savings.csv the chosen "
                         "clocks; each figure has its data beside it.");
        if (!rc)
            rc = file_links(md, html, r);
        fputs("</body></html>\n", html);
        if (!rc)
            rc = wl_results_out_commit(omd, err);
        omd = NULL;
        if (!rc)
            rc = wl_results_out_commit(oh, err);
        oh = NULL;
    }
    wl_results_out_abort(omd);
    wl_results_out_abort(oh);
    free(pm);
    free(ph);
    return rc;
}

/* ---- the study ------------------------------------------------------------------------------ */

static int run_sweep(report *r, const wl_sweep_spec *spec, wl_sweep_stats *st, wl_error *err)
{
    char *p = in_tmp(r, "sweep.csv");
    if (!p)
        return WL_ENOMEM;
    wl_results_out *o = NULL;
    int rc = wl_results_out_open(p, &o, err);
    if (!rc) {
        wl_sweep_options so = {.format = WL_FMT_CSV, .threads = r->o->threads,
                               .progress = r->o->progress, .progress_user = r->o->user};
        rc = wl_sweep_run(spec, &so, wl_results_out_stream(o), NULL, st, err);
        if (rc)
            wl_results_out_abort(o);
        else
            rc = wl_results_out_commit(o, err);
    }
    if (!rc)
        rc = wl_results_table_load(p, &r->t, err);
    free(p);
    return rc;
}

static int pareto_table(report *r, wl_error *err)
{
    static const char *const v[2] = {"time_ms", "energy_j"};
    wl_pareto_load_options lo = {.values = v, .nvalues = 2, .collapse = 1};
    wl_pareto_set *s = NULL;
    int rc = wl_pareto_set_from_table(r->t, &lo, &s, err);
    size_t n = rc ? 0 : wl_pareto_set_rows(s);
    unsigned char *on = rc ? NULL : malloc(n ? n : 1);
    unsigned char *keep = rc ? NULL : calloc(wl_results_table_rows(r->t) + 1, 1);
    if (!rc && (!on || !keep))
        rc = WL_ENOMEM;
    if (!rc)
        rc = wl_pareto_set_fronts(s, on);
    for (size_t i = 0; !rc && i < n; i++)
        if (on[i])
            keep[wl_pareto_set_source_row(s, i)] = 1;
    char *p = rc ? NULL : in_tmp(r, "pareto.csv");
    wl_results_out *o = NULL;
    if (!rc && !p)
        rc = WL_ENOMEM;
    if (!rc && !(rc = wl_results_out_open(p, &o, err))) {
        wl_results_table_write_csv_rows(r->t, keep, wl_results_out_stream(o));
        rc = wl_results_out_commit(o, err);
    }
    free(p);
    free(on);
    free(keep);
    wl_pareto_set_free(s);
    return rc;
}

/* The Pareto fronts and the savings at the chosen clock of one subset
 * (a GPU and precision, and whatever else splits the figures): file names
 * end in sfx, captions name the subset (what). */
static int subset_figures(report *r, const wl_results_table *sub, const char *sfx,
                          const char *what, const char *objective, wl_error *err)
{
    int rc = WL_OK;
    char *base = NULL, *cap = NULL;
    wl_plot_kind_options k;
    /* Pareto fronts, faceted by model when it varies */
    int mcol = wl_results_table_col(sub, "model");
    size_t idx[17];
    if (!rc) {
        memset(&k, 0, sizeof k);
        size_t nm = mcol >= 0 ? wl_results_table_distinct(sub, mcol, idx, 17) : 0;
        if (nm > 1 && nm <= 16)
            k.facet = "model";
        k.objective = objective;
        base = wl_core_strprintf("pareto%s", sfx);
        cap = wl_core_strprintf("Energy-runtime Pareto fronts (log-log), %s (faded: dominated)", what);
        rc = base && cap ? figure(r, "pareto", sub, base, cap, &k, 2, err) : WL_ENOMEM;
        free(base);
        free(cap);
    }
    /* savings of the subset's workloads at the chosen clock */
    if (!rc) {
        choice_table c = {0};
        base = wl_core_strprintf("savings%s", sfx);
        char *csv = base ? wl_core_strprintf("%s.csv", base) : NULL;
        rc = csv ? choose(r, sub, objective, csv, &c, err) : WL_ENOMEM;
        wl_results_table *st = NULL;
        char *p = csv ? in_tmp(r, csv) : NULL;
        /* a subset where nothing can run has no savings to draw (its
         * savings CSV holds the header alone) */
        int none = !rc && (!c.set || wl_pareto_set_groups(c.set) == 0);
        if (!rc && !none)
            rc = p ? wl_results_table_load(p, &st, err) : WL_ENOMEM;
        cap = wl_core_strprintf("Energy saved and runtime penalty at the chosen clock (%s) against the "
                         "maximum clock, %s", objective, what);
        memset(&k, 0, sizeof k);
        for (int i = 0; !rc && !none && i < 3; i++) {
            static const char *const ext[3] = {"png", "pdf", "svg"};
            char *fp = wl_core_strprintf("%s/%s.%s", r->tmp, base, ext[i]);
            wl_plot_options o;
            wl_plot_options_default(&o);
            rc = fp ? wl_plot_savings(st, &k, &o, fp, err) : WL_ENOMEM;
            free(fp);
        }
        if (!rc && !none)
            rc = add_figure(r, wl_core_strprintf("%s", base), wl_core_strprintf("%s", cap));
        choice_free(&c);
        wl_results_table_free(st);
        free(p);
        free(csv);
        free(base);
        free(cap);
    }
    return rc;
}


/* A subset's file-name suffix ("-a100-pcie-40gb-bf16") and its words for
 * captions ("a100-pcie-40gb, bf16"), from the key values of row. */
static void subset_names(const wl_results_table *t, size_t row, const int *key, size_t nk,
                         const char **vals, wl_results_buf *sfx, wl_results_buf *what)
{
    for (size_t j = 0; j < nk; j++) {
        vals[j] = wl_results_table_cell(t, row, key[j]);
        wl_results_buf_put(sfx, "-", 1);
        name_part(sfx, vals[j]);
        wl_results_buf_puts(what, j ? ", " : "");
        wl_results_buf_puts(what, vals[j]);
    }
    wl_results_buf_put(sfx, "", 0);
    wl_results_buf_put(what, "", 0);
}

static int summary_figures(report *r, const int *key, size_t nk, const char *objective,
                           wl_error *err)
{
    const wl_results_table *t = r->base;
    /* the first figure's subset: the first value of every figure key */
    const char *vals[WL_RESULTS_CSV_MAXCOLS];
    wl_results_buf sfx = {0}, what = {0};
    subset_names(t, 0, key, nk, vals, &sfx, &what);
    wl_results_table *sub = NULL, *heat = NULL, *one = NULL;
    int rc = wl_results_table_filter(t, key, vals, nk, &sub);
    if (!rc && (sfx.oom || what.oom))
        rc = WL_ENOMEM;
    char *base = NULL, *cap = NULL;
    wl_plot_kind_options k;
    int mcol = wl_results_table_col(sub ? sub : t, "model");
    /* Pareto fronts and savings for every subset (GPU x precision ...) */
    size_t *first = NULL, nf = 0;
    if (!rc)
        rc = key_combinations(t, key, nk, &first, &nf);
    for (size_t f = 0; !rc && f < nf && f < MAX_ENERGY_FIGS; f++) {
        const char *fv[WL_RESULTS_CSV_MAXCOLS];
        wl_results_buf fs = {0}, fw = {0};
        subset_names(t, first[f], key, nk, fv, &fs, &fw);
        wl_results_table *fsub = NULL;
        rc = fs.oom || fw.oom ? WL_ENOMEM : wl_results_table_filter(t, key, fv, nk, &fsub);
        if (!rc)
            rc = subset_figures(r, fsub, fs.p, fw.p, objective, err);
        wl_results_table_free(fsub);
        wl_results_buf_free(&fs);
        wl_results_buf_free(&fw);
    }
    free(first);
    /* every workload of the first subset on one axes, relative to its
     * maximum clock */
    if (!rc) {
        memset(&k, 0, sizeof k);
        k.objective = objective;
        k.edp = 1;
        base = wl_core_strprintf("tradeoff%s", sfx.p);
        cap = wl_core_strprintf("Energy relative to the maximum clock vs slowdown, every workload "
                                "of %s, with the objective's choice (%s) ringed and isolines of "
                                "constant EDP", what.p, objective);
        rc = base && cap ? figure(r, "pareto-norm", sub, base, cap, &k, 0, err) : WL_ENOMEM;
        free(base);
        free(cap);
    }
    /* energy over clock and sequence length (or batch) */
    int ycol = -1;
    if (!rc) {
        int sc = wl_results_table_col(sub, "seq"), bc = wl_results_table_col(sub, "batch");
        ycol = varies(sub, sc) ? sc : varies(sub, bc) ? bc : -1;
    }
    if (!rc && ycol >= 0) {
        rc = fixed_subset(sub, r, &ycol, 1, &heat);
        const char *yname = wl_results_table_header(sub, (size_t)ycol);
        const char *model = heat && mcol >= 0 ? wl_results_table_cell(heat, 0, mcol) : "";
        memset(&k, 0, sizeof k);
        k.x = "sm_clock_mhz";
        k.y = yname;
        k.z = "energy_j";
        k.normalize = 1;
        wl_results_buf nb = {0};
        wl_results_buf_puts(&nb, "heatmap-");
        name_part(&nb, model);
        wl_results_buf_put(&nb, "", 0);
        cap = wl_core_strprintf("Energy over SM clock and %s, %s, %s, normalised to each row's minimum",
                         !strcmp(yname, "seq") ? "sequence length" : yname, model, what.p);
        if (!rc)
            rc = !nb.oom && cap ? figure(r, "heatmap", heat, nb.p, cap, &k, 0, err) : WL_ENOMEM;
        free(cap);
        wl_results_buf_free(&nb);
    }
    /* one workload: power, time and energy panels, and where the energy goes */
    if (!rc) {
        wl_results_table *fit = NULL;
        rc = runnable(sub, &fit);
        if (!rc)
            rc = fixed_subset(fit, r, NULL, 0, &one);
        wl_results_table_free(fit);
    }
    if (!rc && wl_results_table_rows(one) > 0) {
        const char *model = mcol >= 0 ? wl_results_table_cell(one, 0, mcol) : "";
        int sc = wl_results_table_col(one, "seq");
        const char *seq = sc >= 0 ? wl_results_table_cell(one, 0, sc) : "";
        char wl[200];
        snprintf(wl, sizeof wl, "%.80s%s%.20s", model, seq[0] ? " seq " : "", seq);
        wl_results_buf nb = {0};
        name_part(&nb, model);
        wl_results_buf_put(&nb, "", 0);
        memset(&k, 0, sizeof k);
        k.panels = "power,time,energy";
        base = wl_core_strprintf("panels-%s", nb.p ? nb.p : "");
        cap = wl_core_strprintf("Power, time and energy vs SM clock, %s, %s", wl, what.p);
        rc = base && cap ? figure(r, "energy-freq", one, base, cap, &k, 0, err) : WL_ENOMEM;
        free(base);
        free(cap);
        if (!rc) {
            memset(&k, 0, sizeof k);
            k.stack = 1;
            base = wl_core_strprintf("parts-%s", nb.p ? nb.p : "");
            cap = wl_core_strprintf("Where the energy goes: dynamic compute, dynamic memory and static "
                             "power, %s, %s", wl, what.p);
            rc = base && cap ? figure(r, "energy-freq", one, base, cap, &k, 0, err) : WL_ENOMEM;
            free(base);
            free(cap);
        }
        wl_results_buf_free(&nb);
    }
    /* a training step's and a generation's energy by phase: the first GPU
     * and precision, the mode set, then one workload as fixed_subset picks
     * it (the largest model, the middle sequence length) */
    int modec = wl_results_table_col(r->base, "mode");
    static const char *const phase_modes[2] = {"train", "decode"};
    for (int mi = 0; !rc && modec >= 0 && mi < 2; mi++) {
        int cols[WL_RESULTS_CSV_MAXCOLS];
        const char *mv[WL_RESULTS_CSV_MAXCOLS];
        size_t n = 0;
        for (size_t j = 0; j < nk && n + 1 < WL_RESULTS_CSV_MAXCOLS; j++) {
            const char *h = wl_results_table_header(r->base, (size_t)key[j]);
            if (key[j] != modec && (!strcmp(h, "gpu") || !strcmp(h, "dtype"))) {
                cols[n] = key[j];
                mv[n++] = vals[j];
            }
        }
        cols[n] = modec;
        mv[n++] = phase_modes[mi];
        wl_results_table *ms = NULL, *m1 = NULL;
        rc = wl_results_table_filter(r->base, cols, mv, n, &ms);
        wl_results_table *fit = NULL;
        if (!rc && wl_results_table_rows(ms) > 0 && !(rc = runnable(ms, &fit)))
            rc = fixed_subset(fit, r, NULL, 0, &m1);
        wl_results_table_free(fit);
        if (!rc && m1 && wl_results_table_rows(m1) > 0) {
            const char *model = mcol >= 0 ? wl_results_table_cell(m1, 0, mcol) : "";
            wl_results_buf nb = {0};
            wl_results_buf_puts(&nb, "phases-");
            wl_results_buf_puts(&nb, phase_modes[mi]);
            wl_results_buf_puts(&nb, "-");
            name_part(&nb, model);
            wl_results_buf_put(&nb, "", 0);
            memset(&k, 0, sizeof k);
            k.stack = WL_PLOT_STACK_PHASES;
            k.panels = "energy,time";
            /* the figure's own subset in its caption (its mode, not the
             * first figure's), and its sequence length */
            const char *pv[WL_RESULTS_CSV_MAXCOLS];
            wl_results_buf ps = {0}, pw = {0};
            subset_names(m1, 0, key, nk, pv, &ps, &pw);
            int sc = wl_results_table_col(m1, "seq");
            const char *seq = sc >= 0 ? wl_results_table_cell(m1, 0, sc) : "";
            char wl[200];
            snprintf(wl, sizeof wl, "%.80s%s%.20s", model, seq[0] ? " seq " : "", seq);
            const char *pwhat = pw.oom || !pw.p ? "" : pw.p;
            cap = mi == 0 ? wl_core_strprintf("Energy of a training step by phase (forward, backward, "
                                              "optimizer) and its time vs SM clock, %s, %s",
                                              wl, pwhat)
                          : wl_core_strprintf("Energy of a generation by phase (prefill, decode) and "
                                              "its time vs SM clock, %s, %s", wl, pwhat);
            wl_results_buf_free(&ps);
            wl_results_buf_free(&pw);
            rc = !nb.oom && cap ? figure(r, "energy-freq", m1, nb.p, cap, &k, 0, err) : WL_ENOMEM;
            free(cap);
            wl_results_buf_free(&nb);
        }
        wl_results_table_free(ms);
        wl_results_table_free(m1);
    }
    wl_results_table_free(sub);
    wl_results_table_free(heat);
    wl_results_table_free(one);
    wl_results_buf_free(&sfx);
    wl_results_buf_free(&what);
    return rc;
}

/* A study of several GPUs: per subset of the figure keys but the GPU
 * (precision x mode ...), each workload's saving at the chosen clock, GPU
 * beside GPU, the chosen clock on each bar (from savings.csv). */
static int gpu_figures(report *r, const int *key, size_t nk, const char *objective, wl_error *err)
{
    const wl_results_table *t = r->base;
    int gcol = wl_results_table_col(t, "gpu");
    size_t gi[2];
    if (gcol < 0 || wl_results_table_distinct(t, gcol, gi, 2) < 2)
        return WL_OK;
    char *p = in_tmp(r, "savings.csv");
    wl_results_table *sv = NULL;
    int rc = p ? wl_results_table_load(p, &sv, err) : WL_ENOMEM;
    free(p);
    /* the keys but the GPU, as columns of the savings table */
    int k2[WL_RESULTS_CSV_MAXCOLS];
    size_t n2 = 0;
    for (size_t j = 0; !rc && j < nk; j++) {
        const char *name = wl_results_table_header(t, (size_t)key[j]);
        int c = wl_results_table_col(sv, name);
        if (strcmp(name, "gpu") && c >= 0)
            k2[n2++] = c;
    }
    size_t *first = NULL, nf = 0, ng = 0, gidx[9];
    if (!rc) {
        ng = wl_results_table_distinct(sv, wl_results_table_col(sv, "gpu"), gidx, 9);
        rc = n2 ? key_combinations(sv, k2, n2, &first, &nf) : WL_OK;
        if (!n2)
            nf = 1; /* one figure of every workload */
    }
    for (size_t f = 0; !rc && ng <= 8 && f < nf && f < MAX_ENERGY_FIGS; f++) {
        const char *fv[WL_RESULTS_CSV_MAXCOLS];
        wl_results_buf fs = {0}, fw = {0};
        if (n2)
            subset_names(sv, first[f], k2, n2, fv, &fs, &fw);
        else {
            wl_results_buf_put(&fs, "", 0);
            wl_results_buf_puts(&fw, "every workload");
        }
        wl_results_table *fsub = NULL;
        rc = fs.oom || fw.oom ? WL_ENOMEM
             : n2             ? wl_results_table_filter(sv, k2, fv, n2, &fsub)
                              : wl_results_table_filter(sv, NULL, NULL, 0, &fsub);
        /* a readable figure: at most 30 workloads of bars */
        if (!rc && wl_results_table_rows(fsub) <= 30 * ng) {
            char *base = wl_core_strprintf("gpus%s", fs.p);
            char *cap = wl_core_strprintf(
                "GPU beside GPU: energy saved at the chosen clock (%s) against each GPU's "
                "maximum clock per workload, the chosen clock (MHz) on each bar, %s",
                objective, fw.p);
            rc = base && cap ? figure(r, "gpus", fsub, base, cap, NULL, 0, err) : WL_ENOMEM;
            free(base);
            free(cap);
        }
        wl_results_table_free(fsub);
        wl_results_buf_free(&fs);
        wl_results_buf_free(&fw);
    }
    free(first);
    wl_results_table_free(sv);
    return rc;
}

static int study(report *r, const wl_sweep_spec *spec, const char *dir,
                 wl_plot_report_stats *stats, wl_error *err)
{
    const char *title = wl_sweep_spec_report(spec, "title");
    const char *objective = wl_sweep_spec_report(spec, "objective");
    if (!title)
        title = "wattlas study";
    if (!objective)
        objective = "energy-within-slowdown=10";
    wl_pareto_objective check;
    int rc = wl_pareto_objective_parse(objective, &check, err);
    if (rc)
        return rc;
    wl_core_say(r->o->step, r->o->user, "[1/4] sweep: %llu points", wl_sweep_spec_points(spec));
    wl_sweep_stats st;
    if ((rc = run_sweep(r, spec, &st, err)))
        return rc;
    stats->points = st.points;
    r->learned_outside = stats->learned_outside = st.tally.learned_outside;
    /* one row per point: at kernel scope, the first class's rows */
    int kc = wl_results_table_col(r->t, "kernel_class");
    if (kc >= 0) {
        const char *first = wl_results_table_cell(r->t, 0, kc);
        rc = wl_results_table_filter(r->t, &kc, &first, 1, &r->base);
    } else {
        rc = wl_results_table_filter(r->t, NULL, NULL, 0, &r->base);
    }
    if (rc)
        return rc;
    int clock = wl_results_table_col(r->base, "sm_clock_mhz");
    r->param = malloc((size_t)(clock > 0 ? clock : 1) * sizeof *r->param);
    if (!r->param)
        return WL_ENOMEM;
    for (int c = 0; c < clock; c++)
        r->param[r->nparam++] = c;
    wl_core_say(r->o->step, r->o->user, "[2/4] Pareto fronts and optimisation (%s)", objective);
    choice_table opt, sav;
    memset(&opt, 0, sizeof opt);
    memset(&sav, 0, sizeof sav);
    int sched = 0;
    if (!(rc = pareto_table(r, err)) && !(rc = choose(r, r->t, "energy", "optimal.csv", &opt, err)))
        rc = choose(r, r->t, objective, "savings.csv", &sav, err);
    if (!rc)
        rc = phase_schedules(r, objective, &sched, err);
    wl_core_say(r->o->step, r->o->user, "[3/4] figures");
    int key[WL_RESULTS_CSV_MAXCOLS];
    size_t nk = 0;
    if (!rc)
        rc = energy_figures(r, key, &nk, objective, err);
    if (!rc && wl_results_table_rows(r->base) > 0)
        rc = summary_figures(r, key, nk, objective, err);
    if (!rc && wl_results_table_rows(r->base) > 0)
        rc = gpu_figures(r, key, nk, objective, err);
    wl_core_say(r->o->step, r->o->user, "[4/4] index.md, index.html");
    if (!rc)
        rc = write_index(r, spec, title, objective, st.points, &opt, &sav, sched, err);
    choice_free(&opt);
    choice_free(&sav);
    if (!rc)
        rc = commit_tmp(r, dir, err);
    stats->figures = r->nfigs;
    return rc;
}

int wl_plot_report(const wl_sweep_spec *spec, const char *dir, const wl_plot_report_options *o,
                   wl_plot_report_stats *stats, wl_error *err)
{
    memset(stats, 0, sizeof *stats);
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        wl_error_set(err, dir, 0, "", "exists and is not a directory");
        return WL_EIO;
    }
    report r = {.o = o};
    int rc = make_tmp(&r, dir, err);
    if (!rc)
        rc = study(&r, spec, dir, stats, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, dir, 0, "", "out of memory");
    remove_tmp(&r); /* nothing when it was moved into place */
    for (size_t i = 0; i < r.nfigs; i++) {
        free(r.figs[i].base);
        free(r.figs[i].caption);
    }
    free(r.figs);
    free(r.tmp);
    free(r.param);
    wl_results_table_free(r.t);
    wl_results_table_free(r.base);
    return rc;
}
