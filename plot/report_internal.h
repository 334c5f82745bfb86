/* What the study (report.c) and its index (report_index.c) share: the
 * report being built in its temporary directory and the chosen points. */
#ifndef WL_PLOT_REPORT_INTERNAL_H
#define WL_PLOT_REPORT_INTERNAL_H

#include "plot_internal.h"
#include "../pareto/wattlas_pareto.h"
#include "../sweep/wattlas_sweep.h"

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

typedef struct {
    wl_pareto_set *set;
    wl_pareto_saving *sv;
    wl_pareto_objective obj;
} choice_table;

/* NAME in the report's temporary directory (malloc'd; NULL: no memory). */
static inline char *in_tmp(const report *r, const char *name)
{
    return wl_core_strprintf("%s/%s", r->tmp, name);
}

/* report_files.c: the temporary directory beside dir (r->tmp), removed with
 * what is in it, or moved into dir (the whole of it when dir does not
 * exist, else file by file) */
int report_make_tmp(report *r, const char *dir, wl_error *err);
void report_remove_tmp(report *r);
/* An error's file inside the temporary folder named by its place in dir,
 * where the user will look (the temporary is gone when they read it). */
void report_error_place(const report *r, const char *dir, wl_error *err);
int report_commit_tmp(report *r, const char *dir, wl_error *err);
/* What a report holds, its temporary directory removed if still there. */
void report_free(report *r);
/* index.md and index.html opened in the temporary directory; closed with
 * the html's end and moved into place unless rc (else dropped). */
int report_index_open(const report *r, wl_results_out **md, wl_results_out **html, wl_error *err);
int report_index_close(wl_results_out *md, wl_results_out *html, int rc, wl_error *err);
/* A table as NAME (a CSV) in the temporary directory. */
int report_write_table(const report *r, const wl_results_table *t, const char *name,
                       wl_error *err);
/* A figure's base name and caption recorded for the index (both malloc'd,
 * taken; WL_ENOMEM when either is NULL). */
int report_add_figure(report *r, char *base, char *caption);
/* One figure drawn by fn as PNG, PDF and SVG under base. */
int report_draw_formats(const report *r, wl_plot_kind_fn fn, const wl_results_table *t,
                        const wl_plot_kind_options *k, wl_plot_options *o, const char *base,
                        wl_error *err);
/* A figure of kind beside its CSV, recorded with its caption (log: 1 a log
 * y axis, 2 both axes log; height_in > 0 the canvas's height). */
int report_figure(report *r, const char *kind, const wl_results_table *t, const char *base,
                  const char *caption, const wl_plot_kind_options *k, int log, wl_error *err);
int report_figure_sized(report *r, const char *kind, const wl_results_table *t,
                        const char *base, const char *caption, const wl_plot_kind_options *k,
                        int log, double height_in, wl_error *err);

/* report_index.c's writers, which a serving study's index shares: text
 * escaped for html and markdown, a paragraph, a list item, a section, the
 * title and html head, the figures recorded, the files in the directory,
 * and the time (SOURCE_DATE_EPOCH when set). */
void report_html_text(FILE *f, const char *s);
void report_md_text(FILE *f, const char *s, int cell);
void report_both_p(FILE *md, FILE *html, const char *s);
void report_both_li(FILE *md, FILE *html, const char *s);
void report_section(FILE *md, FILE *html, const char *id, const char *name);
void report_index_head(FILE *md, FILE *html, const char *title);
void report_index_figures(FILE *md, FILE *html, const report *r);
int report_file_links(FILE *md, FILE *html, const report *r);
void report_timestamp(char *out, size_t n);

/* index.md and index.html of the study: the headline, the chosen points,
 * schedules, caveats, provenance and the files, in the temporary directory. */
int wl_plot_report_index(report *r, const wl_sweep_spec *spec, const char *title,
                         const char *objective, unsigned long long points,
                         const choice_table *opt, const choice_table *sav, int sched,
                         wl_error *err);

#endif
