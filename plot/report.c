/* A whole study: the sweep, its Pareto fronts, the energy-optimal and the
 * chosen operating points, figures, and index.md/index.html, built in a
 * temporary directory beside the target and moved into it only when all of
 * it succeeded (report_files.c). The sweep is run once and read once. */
#include "report_internal.h"
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
            rc = report_figure_sized(r, "energy-freq", sub, nb.p, cap, &ek, 1, fmin(h, 3.4), err);
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
    wl_pareto_load_options lo = {.values = opt_values, .nvalues = 4, .collapse = 1,
                                 .voltage_groups = 1};
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
        if (!rc && st->interrupted) {
            wl_error_set(err, "sweep", 0, "", "stopped");
            rc = WL_ESTOPPED;
        }
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
        cap = wl_core_strprintf("Energy-runtime Pareto fronts (log-log), %s (faded: dominated)%s",
                                what, k.facet ? "; each panel has its own axes" : "");
        rc = base && cap ? report_figure(r, "pareto", sub, base, cap, &k, 2, err) : WL_ENOMEM;
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
        wl_plot_options o;
        wl_plot_options_default(&o);
        char title[200];
        wl_plot_figure_title(sub, title, sizeof title); /* what its bars share */
        if (title[0])
            o.title = title;
        if (!rc && !none)
            rc = base ? report_draw_formats(r, wl_plot_savings, st, &k, &o, base, err) : WL_ENOMEM;
        if (!rc && !none)
            rc = report_add_figure(r, wl_core_strprintf("%s", base), wl_core_strprintf("%s", cap));
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
        rc = base && cap ? report_figure(r, "pareto-norm", sub, base, cap, &k, 0, err) : WL_ENOMEM;
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
            rc = !nb.oom && cap ? report_figure(r, "heatmap", heat, nb.p, cap, &k, 0, err) : WL_ENOMEM;
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
        rc = base && cap ? report_figure(r, "energy-freq", one, base, cap, &k, 0, err) : WL_ENOMEM;
        free(base);
        free(cap);
        if (!rc) {
            memset(&k, 0, sizeof k);
            k.stack = 1;
            base = wl_core_strprintf("parts-%s", nb.p ? nb.p : "");
            cap = wl_core_strprintf("Where the energy goes: dynamic compute, dynamic memory and static "
                             "power, %s, %s", wl, what.p);
            rc = base && cap ? report_figure(r, "energy-freq", one, base, cap, &k, 0, err) : WL_ENOMEM;
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
            rc = !nb.oom && cap ? report_figure(r, "energy-freq", m1, nb.p, cap, &k, 0, err) : WL_ENOMEM;
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
            rc = base && cap ? report_figure(r, "gpus", fsub, base, cap, NULL, 0, err) : WL_ENOMEM;
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
        rc = wl_plot_report_index(r, spec, title, objective, st.points, &opt, &sav, sched, err);
    choice_free(&opt);
    choice_free(&sav);
    if (!rc)
        rc = report_commit_tmp(r, dir, err);
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
    int rc = report_make_tmp(&r, dir, err);
    if (!rc)
        rc = study(&r, spec, dir, stats, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, dir, 0, "", "out of memory");
    if (rc)
        report_error_place(&r, dir, err);
    report_free(&r);
    return rc;
}
