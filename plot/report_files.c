/* A study's files: the temporary directory it is built in and moved into
 * place from, its CSV tables, and its figures in every format with their
 * captions (report.c decides what they show; report_index.c writes
 * index.md and index.html). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "report_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the temporary directory ------------------------------------------------------- */

int report_make_tmp(report *r, const char *dir, wl_error *err)
{
    /* beside the real folder where -o is a link to one: the files move
     * into it by rename, which cannot cross filesystems (issue 77: -o LINK
     * to another filesystem gave "Invalid cross-device link") */
    struct stat st;
    char *real = lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(dir, NULL) : NULL;
    const char *base = real ? real : dir;
    size_t l = strlen(base);
    while (l > 1 && base[l - 1] == '/')
        l--;
    char *trimmed = wl_core_strprintf("%.*s", (int)l, base);
    if (trimmed)
        wl_results_remove_stale(trimmed); /* a killed run's folder */
    free(trimmed);
    for (int k = 0; k < 1000; k++) {
        free(r->tmp);
        r->tmp = wl_core_strprintf("%.*s.tmp.%ld.%d", (int)l, base, (long)getpid(), k);
        if (!r->tmp) {
            free(real);
            return WL_ENOMEM;
        }
        if (mkdir(r->tmp, 0777) == 0) {
            free(real);
            return WL_OK;
        }
        if (errno != EEXIST)
            break;
    }
    wl_error_set(err, dir, 0, "", "cannot create a directory beside it: %s", strerror(errno));
    free(real);
    free(r->tmp);
    r->tmp = NULL;
    return WL_EIO;
}

void report_error_place(const report *r, const char *dir, wl_error *err)
{
    size_t l = r->tmp ? strlen(r->tmp) : 0;
    if (!l || strncmp(err->source, r->tmp, l) || (err->source[l] && err->source[l] != '/'))
        return;
    char place[sizeof err->source];
    snprintf(place, sizeof place, "%s%s", dir, err->source + l);
    snprintf(err->source, sizeof err->source, "%s", place);
}

/* Removes the temporary directory and the files in it (only we wrote there). */
void report_remove_tmp(report *r)
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
int report_commit_tmp(report *r, const char *dir, wl_error *err)
{
    struct stat st;
    if (wl_stop_requested()) { /* wl_stop_watch: the study is not moved in */
        wl_error_set(err, dir, 0, "", "stopped");
        return WL_ESTOPPED;
    }
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

int report_write_table(const report *r, const wl_results_table *t, const char *name,
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

int report_add_figure(report *r, char *base, char *caption)
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

/* One figure as PNG, PDF and SVG under base; the PNG's layout goes to the
 * caller's figure hook, where there is one. A legend of many series that
 * would take more than 28% of the canvas makes the canvas taller instead
 * (its area stays, the axes' grows), up to twice the height. */
int report_draw_formats(const report *r, wl_plot_kind_fn fn, const wl_results_table *t,
                        const wl_plot_kind_options *k, wl_plot_options *o, const char *base,
                        wl_error *err)
{
    static const char *const ext[3] = {"png", "pdf", "svg"};
    wl_plot_layout *lay = malloc(sizeof *lay);
    int rc = lay ? WL_OK : WL_ENOMEM;
    const double h0 = o->height_in;
    for (int i = 0, tries = 0; i < 3 && !rc; i++) {
        char *p = wl_core_strprintf("%s/%s.%s", r->tmp, base, ext[i]);
        o->layout = i == 0 ? lay : NULL;
        rc = p ? fn(t, k, o, p, err) : WL_ENOMEM;
        free(p);
        double share = i == 0 && lay->has_legend
                           ? lay->legend[2] * lay->legend[3] / (lay->width_pt * lay->height_pt)
                           : 0;
        if (!rc && share > 0.28 && tries++ < 3 && o->height_in < 2 * h0) {
            o->height_in = fmin(2 * h0, o->height_in * share / 0.26);
            i--; /* the PNG again, taller */
            continue;
        }
        if (!rc && i == 0 && r->o->figure)
            r->o->figure(r->o->user, base, lay);
    }
    o->layout = NULL;
    free(lay);
    return rc;
}

int report_figure(report *r, const char *kind, const wl_results_table *t, const char *base,
                  const char *caption, const wl_plot_kind_options *k, int log, wl_error *err)
{
    return report_figure_sized(r, kind, t, base, caption, k, log, 0, err);
}

void wl_plot_figure_title(const wl_results_table *t, char *buf, size_t n)
{
    /* what a reader must know to read the figure and cannot see in it: each
     * key column its whole table shares (issue 79: "a100-pcie-40gb, batch
     * 1" said neither the dtype nor the mode nor that a series is one
     * layer); a column that varies is the figure's own (panels, series) */
    static const struct {
        const char *col, *prefix;
    } cols[] = {{"gpu", ""},   {"model", ""}, {"dtype", ""},     {"mode", ""},
                {"scope", ""}, {"batch", "batch "}, {"seq", "seq "}};
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        int c = wl_results_table_col(t, cols[i].col);
        size_t first;
        if (c < 0 || wl_results_table_distinct(t, c, &first, 1) != 1 ||
            wl_results_table_distinct(t, c, (size_t[2]){0}, 2) != 1)
            continue;
        const char *v = wl_results_table_cell(t, first, c);
        if (!strcmp(cols[i].col, "mode") && !strcmp(v, "train"))
            v = "training step";
        if (!strcmp(cols[i].col, "scope"))
            v = !strcmp(v, "layer") ? "one layer" : !strcmp(v, "layer-in-model") ? "a layer in the model" : "";
        if (!v[0])
            continue;
        int w = snprintf(buf + used, n - used, "%s%s%s", used ? ", " : "", cols[i].prefix, v);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
    }
}

/* What a figure's caption says of the workloads its table holds with no
 * row that fits its GPU's memory (fits = 0), which the figure leaves out:
 * " Left out, not fitting the GPU's memory (fits = 0): gpt3-175b seq 2048."
 * (up to three named); "" when none or no fits column. */
static char *unfit_note(const wl_results_table *t)
{
    static const char *const kcols[] = {"gpu", "model", "batch", "seq", "mode", "dtype"};
    enum { NK = sizeof kcols / sizeof *kcols, MAXW = 256 };
    int fc = wl_results_table_col(t, "fits"), kc[NK];
    if (fc < 0)
        return wl_core_strprintf("%s", "");
    /* a workload is named by the key columns that vary in the figure (its
     * caption names the rest), the model at least */
    for (int j = 0; j < NK; j++) {
        size_t idx[2];
        kc[j] = wl_results_table_col(t, kcols[j]);
        if (kc[j] >= 0 && j != 1 && wl_results_table_distinct(t, kc[j], idx, 2) < 2)
            kc[j] = -1;
    }
    char *key[MAXW];
    int fits[MAXW];
    size_t nw = 0, n = wl_results_table_rows(t);
    int over = 0;
    for (size_t r = 0; r < n; r++) {
        char k[400] = "";
        size_t used = 0;
        for (int j = 0; j < NK; j++) {
            const char *v = kc[j] >= 0 ? wl_results_table_cell(t, r, kc[j]) : "";
            if (!v[0])
                continue;
            int w = snprintf(k + used, sizeof k - used, "%s%s%s%.80s", used ? " " : "",
                             j >= 2 && j <= 3 ? kcols[j] : "", j >= 2 && j <= 3 ? " " : "", v);
            if (w < 0 || (size_t)w >= sizeof k - used)
                break;
            used += (size_t)w;
        }
        size_t i = 0;
        while (i < nw && strcmp(key[i], k))
            i++;
        if (i == nw) {
            if (nw == MAXW) {
                over = 1;
                continue;
            }
            if (!(key[nw] = wl_core_strprintf("%s", k)))
                break;
            fits[nw++] = 0;
        }
        fits[i] |= strcmp(wl_results_table_cell(t, r, fc), "0") != 0;
    }
    wl_results_buf b = {0};
    size_t left = 0;
    for (size_t i = 0; i < nw; i++)
        if (!fits[i] && left++ < 3) {
            wl_results_buf_puts(&b, left == 1 ? " Left out, not fitting the GPU's memory (fits = 0 "
                                                "in sweep.csv): " : ", ");
            wl_results_buf_puts(&b, key[i]);
        }
    if (left > 3) {
        char more[48];
        snprintf(more, sizeof more, " and %zu more", left - 3);
        wl_results_buf_puts(&b, more);
    }
    if (left && over)
        wl_results_buf_puts(&b, " (of the first 256 workloads)");
    if (left)
        wl_results_buf_puts(&b, ".");
    for (size_t i = 0; i < nw; i++)
        free(key[i]);
    char *out = b.oom ? NULL : wl_core_strprintf("%s", b.p ? b.p : "");
    wl_results_buf_free(&b);
    return out;
}

/* The figure of a subset as PNG, PDF and SVG beside its CSV (base.csv),
 * its caption recorded for the index; height_in > 0 the canvas's height. */
int report_figure_sized(report *r, const char *kind, const wl_results_table *t, const char *base,
                        const char *caption, const wl_plot_kind_options *k, int log,
                        double height_in, wl_error *err)
{
    /* a stop asked for (wl_stop_watch) ends the study between figures; its
     * folder is removed (report_free) */
    if (wl_stop_requested()) {
        wl_error_set(err, base, 0, "", "stopped");
        return WL_ESTOPPED;
    }
    char *csv = wl_core_strprintf("%s.csv", base);
    int rc = csv ? report_write_table(r, t, csv, err) : WL_ENOMEM;
    free(csv);
    wl_plot_options o;
    wl_plot_options_default(&o);
    char title[200];
    wl_plot_figure_title(t, title, sizeof title);
    if (title[0])
        o.title = title;
    o.log_y = log != 0;
    o.log_x = log == 2;
    o.linear = 1; /* the scales are chosen here, per figure */
    if (k && k->facet)
        o.width_in = 7;
    if (k && k->panels)
        o.height_in = 4.2;
    if (height_in > 0)
        o.height_in = height_in;
    if (!rc)
        rc = report_draw_formats(r, wl_plot_kind_lookup(kind), t, k, &o, base, err);
    char *left = rc ? NULL : unfit_note(t);
    if (!rc && !left)
        rc = WL_ENOMEM;
    if (!rc)
        rc = report_add_figure(r, wl_core_strprintf("%s", base),
                               wl_core_strprintf("%s%s%s", caption,
                                                 left[0] && caption[0] &&
                                                         caption[strlen(caption) - 1] != '.'
                                                     ? "."
                                                     : "",
                                                 left));
    free(left);
    return rc;
}

void report_free(report *r)
{
    report_remove_tmp(r); /* nothing when it was moved into place */
    for (size_t i = 0; i < r->nfigs; i++) {
        free(r->figs[i].base);
        free(r->figs[i].caption);
    }
    free(r->figs);
    free(r->tmp);
    free(r->param);
    wl_results_table_free(r->t);
    wl_results_table_free(r->base);
    memset(r, 0, sizeof *r);
}
