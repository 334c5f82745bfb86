/* What the figure kinds share across their files (kinds.c, kinds_bars.c,
 * kinds_heatmap.c): the legend, the rows that can run, the bar figure. */
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

#endif
