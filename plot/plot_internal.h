/* Private to plot/: figures, axes and the shared style. */
#ifndef WATTLAS_PLOT_INTERNAL_H
#define WATTLAS_PLOT_INTERNAL_H

#include <cairo.h>
#include <stdint.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include "wattlas_plot.h"

typedef struct fig fig;

/* Drawing is in points (1/72 in) on every surface. */
int fig_open(const char *path, const wl_plot_options *o, fig **out, wl_error *err);
cairo_t *fig_cr(fig *f);
double fig_w(const fig *f);
double fig_h(const fig *f);
int fig_close(fig *f, wl_error *err); /* writes and frees */
/* The --title, centred at the top of a figure w points wide, wrapped into
 * lines; fig_top is where the axes may start below it. */
void fig_title(cairo_t *cr, const wl_plot_options *o, double w);
double fig_top(cairo_t *cr, const wl_plot_options *o, double w);
/* Records a legend box in the layout. */
void layout_legend(cairo_t *cr, double x, double y, double w, double h);
/* Records a large marker's centre (a least-energy point) for the layout. */
void layout_mark(cairo_t *cr, double x, double y);
/* Records a front's name: its gaps (user units) to its own front and to the
 * nearest other one, and whether a leader line ties it. */
void layout_front_label(cairo_t *cr, double own, double other, int leader);
/* Records how many lines the legend has. */
void layout_legend_entries(cairo_t *cr, int n);
void fig_abort(fig *f);

typedef struct {
    double x0, y0, w, h;            /* plot area, points */
    double xmin, xmax, ymin, ymax;
    int logx, logy;
    int no_edge_labels; /* stacked panels: no y labels on the frame's edges */
    int fixed_units;    /* the units are as given: no SI prefix of this axes' own
                           (panels of one figure share the figure's) */
    double label_pt;    /* the y quantity's font size (0: 8.5 pt, less when the
                           label is longer than the axes are high) */
    double data_xmin, data_xmax, data_ymin, data_ymax; /* the data shown, for
                           the layout record (unset: the axes' range) */
} axes;

double ax_x(const axes *a, double v);
double ax_y(const axes *a, double v);
/* Pads the data range and rounds it out to ticks. */
void ax_range(double *lo, double *hi, int log);
/* Frame, light grid, ticks and labels; quantity and base unit of each axis
 * ("Energy", "J"); values are shown with an SI prefix chosen from the range. */
void ax_draw(cairo_t *cr, const axes *a, const char *xq, const char *xu, const char *yq,
             const char *yu, int show_x_labels);

/* Records axes drawn without ax_draw (heatmaps) with their labelled ticks. */
void layout_axes(cairo_t *cr, const axes *a, int nx, int ny);
/* The values of the labelled ticks of the axes last recorded, on x (y = 0)
 * or y (1). */
void layout_labels(cairo_t *cr, int y, const double *v, int n);

/* Style. */
extern const double okabe_ito[8][3];
void style_color(cairo_t *cr, int i, double alpha);
/* Area fills (orange, sky blue, yellow) and their greyscale-safe hatching. */
void style_fill(cairo_t *cr, int i, double alpha);
void style_hatch(cairo_t *cr, int i, double x0, double y0, double x1, double y1);
void style_dash(cairo_t *cr, int i);
void style_marker(cairo_t *cr, int i, double x, double y, double size, int filled);
void style_font(cairo_t *cr, double pt, int bold);
void style_text(cairo_t *cr, double x, double y, const char *s, double halign, double valign);
void colormap(const char *name, double t, double rgb[3]);
/* Vertical colour bar at (x, y, w, h) for [lo, hi] with a label. */
void colorbar(cairo_t *cr, const char *palette, double x, double y, double w, double h,
              double lo, double hi, const char *q, const char *u);

/* Table helpers: column index or an error naming file/column. */
int need_col(const wl_results_table *t, const char *name, wl_error *err);
/* WL_OK for a table of operating points; else err says that this is a
 * table of chosen points (optimize, compare) and which kind draws it. */
int need_points(const wl_results_table *t, const char *kind, wl_error *err);
/* Numeric cell; NAN for empty; WL_EPARSE with file/line/column otherwise. */
int num_cell(const wl_results_table *t, size_t row, int col, double *v, wl_error *err);
const char *table_path(const wl_results_table *t);
/* Whether the positive values of column col span more than a decade: the
 * rule for an axis left to choose its scale (wl_plot_options.linear). */
int wide_span(const wl_results_table *t, int col);

#endif
