/* What the figure kinds share across their files (plot/kinds/ID.c: one
 * kind each; kinds.c: the list of kinds and the drawing entry point;
 * series.c: metrics, series, legends, the rows that can run, facets and
 * fronts; bars.c: the bar figure). */
#ifndef WATTLAS_PLOT_KINDS_INTERNAL_H
#define WATTLAS_PLOT_KINDS_INTERNAL_H

#include "plot_internal.h"

#define MAXSERIES 28 /* seven colours x four dashes: every series looks different */

/* A quantity a panel or a bar shows: its column, name and unit. */
typedef struct {
    const char *col, *q, *u;
} metric;
extern const metric metrics[3]; /* energy, power, time */

enum { LG_LINE, LG_FILL, LG_MARK, LG_HOLLOW_GREY, LG_BAND, LG_REF, LG_SQUARE, LG_RING, LG_BEST,
       LG_HOLLOW, LG_FADED, LG_DASH, LG_PATCH, LG_TEXT, LG_VDOT };

typedef struct {
    char label[160];
    int style, kind;
    double dx;  /* below the axes: offset in its row */
    int row;
} lg_entry;

typedef struct {
    lg_entry e[48];
    int n;
    double w, h, rowh, colw; /* one column's size */
    int cols, where;         /* where: 0 none, 1 right of the axes, 2 below, 3 inside */
    double x, y;
} legend_t;

/* Bars per workload: vertical with slanted labels for a few, horizontal
 * with labels at the left for many (more than 8). */
typedef struct {
    const char *q, *u;           /* value axis */
    const char *const *names;    /* the bars' legend labels */
    const int *colors;
    const char *note;            /* a legend line of text (NULL: none) */
    int nb;                      /* bars per category (2 to 8) */
    int label_each;              /* top_labels[b * n + r] by every bar (else
                                    top_labels[r] by the last bar) */
    const char *cat_title;       /* what the categories are ("batch"; NULL:
                                    no title under them) */
    const char *const *why_empty; /* per category, what its slot says when none
                                    of its bars has a value (NULL: nothing) */
} bars_style;

/* ok[r]: the row is an operating point the GPU can hold and the case fits
 * its memory (feasible and fits not 0); the rest is drawn hollow grey and
 * never chosen. */
int rows_ok(const wl_results_table *t, unsigned char *ok, wl_error *err);

void lg_add(legend_t *lg, const char *label, int style, int kind);
/* Decides where the legend goes and takes its room from the margins. */
void lg_reserve(cairo_t *cr, legend_t *lg, const wl_plot_options *o, double W,
                       double *right, double *bottom, int right_taken);
/* Draws the legend: right of a (top-aligned), below the figure's axes, or
 * in the corner of a covering the fewest of the np device points. */
void lg_draw(cairo_t *cr, legend_t *lg, const axes *a, double left, double W, double H,
                    const double *px, const double *py, size_t np);
/* v[b][r]: bar b of category r; top_labels (may be NULL) go by the last bar. */
int bars_figure(const wl_results_table *t, const wl_plot_options *o, const char *path,
                       size_t n, const double *const *v, char (*labels)[160],
                       const bars_style *bs, const char *const *top_labels, wl_error *err);

/* ---- what the energy-vs-clock and Pareto kinds share (kinds_series.c) ---- */

#define MAXFACETS 12

/* A series: the rows of one workload (the parameter columns before the clock). */
typedef struct {
    char label[160];
    size_t *rows; /* in table order (ascending clock in wattlas output) */
    size_t n;
    int style;    /* colour, dash and marker: one per workload across facets */
    int facet;    /* the facet its rows are in (0 without facets) */
} series;

typedef struct {
    series *s;
    int n, nstyles;
} series_set;

/* Facets: one panel per value of a column (--facet). */
typedef struct {
    int col; /* -1: one panel */
    size_t first[MAXFACETS + 1];
    int n, cols, rows;
} facets;

void series_free(series_set *ss);
/* Appends one part of a label to buf (", " between parts): a text value as
 * it is, a number with its column's name or unit ("seq 512", "-150 mV"). */
void label_part(char *buf, size_t n, const char *col, const char *val);
int build_series(const wl_results_table *t, int xcol, int skip, series_set *ss,
                        wl_error *err);
void lg_add_series(legend_t *lg, const series_set *ss, int kind);
void lg_add_choice(legend_t *lg, const wl_plot_kind_options *k, const char *text);
long choose_row(const wl_pareto_objective *obj, const size_t *rows, size_t n,
                       const unsigned char *ok, const double *tm, const double *pw,
                       const double *en, double *tmp);
void chosen_ring(cairo_t *cr, double x, double y);
void sort_rows_by(double *idx, size_t n, const double *key);
int objective_of(const wl_plot_kind_options *k, wl_pareto_objective *obj, wl_error *err);
double slowdown_of(const wl_pareto_objective *obj);
double power_cap_of(const wl_pareto_objective *obj);
double power_limit_of(const wl_results_table *t, size_t r);
int facets_of(const wl_results_table *t, const char *name, facets *f, wl_error *err);
int in_facet(const wl_results_table *t, const facets *f, int fi, size_t r);
int split_by_facet(const wl_results_table *t, const facets *f, series_set *ss);
void facet_title(cairo_t *cr, const axes *a, const wl_results_table *t, const facets *f,
                        int fi);
/* The columns that end a workload's key: the decision variables. */
int decision_col(const wl_results_table *t, int clock_col);
/* on[r]: r is on its series' front among the rows that can run. */
int series_fronts(const series_set *ss, const double *px, const double *py,
                  const unsigned char *ok, unsigned char *on, size_t n);

/* Each kind's descriptor, defined in its file of plot/kinds/. */
#define WL_PLOT_KIND(id) extern const wl_plot_kind wl_plot_kind_##id;
#include "kinds/list.h"
#undef WL_PLOT_KIND

#endif
