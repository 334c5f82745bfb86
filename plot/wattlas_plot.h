/* Publication figures with cairo: PNG (with its DPI recorded), PDF and SVG,
 * chosen by the output file's extension. One shared style: DejaVu Sans,
 * 8-9 pt at 3.5 x 2.6 in, ticks on round numbers, SI-prefixed units, the
 * Okabe-Ito palette with distinct markers and dashes, a light grid. */
#ifndef WATTLAS_PLOT_H
#define WATTLAS_PLOT_H

#include "../core/wattlas_core.h"
#include "../results/wattlas_results.h"
#include "../sweep/wattlas_sweep.h"

/* Where a figure's parts landed, in points from the top left, for callers
 * that check or place things (the tests check that no legend covers data,
 * that no two texts overlap, that every axis labels at least three ticks
 * over its data and that nothing leaves the canvas). */
#define WL_PLOT_LAYOUT_AXES 32
#define WL_PLOT_LAYOUT_LABELS 16
#define WL_PLOT_LAYOUT_TEXTS 512
typedef struct {
    double x0, y0, w, h;
    int xticks, yticks; /* labelled major ticks (0: a categorical axis) */
    int logx, logy;
    double xmin, xmax, ymin, ymax; /* the ranges the axes span */
    double data_xmin, data_xmax, data_ymin, data_ymax; /* the data's own ranges
                                                           (the axes' where the
                                                           kind gives none) */
    double ylabel_lo, ylabel_hi;   /* the lowest and highest labelled y ticks
                                      (NaN: none) */
    double xlabel[WL_PLOT_LAYOUT_LABELS], ylabel[WL_PLOT_LAYOUT_LABELS]; /* the
                                      labelled ticks' values (the first 16) */
} wl_plot_layout_axes;
/* A text as drawn: its ink's corners (a rotated label is a rotated box) and
 * the start of its string. */
typedef struct {
    double x[4], y[4];
    char text[48];
} wl_plot_layout_text;
typedef struct {
    double width_pt, height_pt;
    size_t naxes; /* drawn; at most WL_PLOT_LAYOUT_AXES are recorded */
    wl_plot_layout_axes axes[WL_PLOT_LAYOUT_AXES];
    int has_legend;
    int legend_entries; /* lines in the legend */
    double legend[4]; /* x, y, w, h of the legend box */
    double ink[4];    /* x0, y0, x1, y1 enclosing every text drawn */
    size_t ntexts;    /* drawn; at most WL_PLOT_LAYOUT_TEXTS are recorded */
    wl_plot_layout_text texts[WL_PLOT_LAYOUT_TEXTS];
    size_t nmarks;    /* large markers (least energy) drawn; the first 64 */
    double marks[64][2]; /* their centres */
    size_t nseries;   /* series coloured (style index + 1); the first 32 ... */
    double series_rgb[32][3]; /* ... their line colours */
    size_t nfront_labels; /* a front's name (pareto): the first 64 */
    double front_label[64][3]; /* the gap (pt) from its box to its own front's
                                  nearest point, to another front's nearest
                                  (INFINITY: none), and 1 when a leader line
                                  ties it to its front */
} wl_plot_layout;

/* Legends: outside the axes (right of them, or below when they would take
 * too much width; the default), inside (the corner covering the fewest
 * data), or none. */
typedef enum { WL_PLOT_LEGEND_OUTSIDE = 0, WL_PLOT_LEGEND_INSIDE, WL_PLOT_LEGEND_NONE } wl_plot_legend;
const char *wl_plot_legend_name(wl_plot_legend l);
int wl_plot_legend_parse(const char *name, wl_plot_legend *out);

typedef struct {
    double width_in, height_in; /* default 3.5 x 2.6 (one paper column) */
    double dpi;                 /* PNG only, default 300 */
    const char *title;          /* NULL: none; long titles wrap */
    int log_x, log_y;
    int linear;                 /* energy-freq, pareto: no log axis unless
                                   asked for (0: an axis whose data span more
                                   than a decade is logarithmic) */
    const char *palette;        /* heatmaps: "viridis" (default) or "cividis" */
    wl_plot_legend legend;
    wl_plot_layout *layout;     /* filled when not NULL */
} wl_plot_options;

void wl_plot_options_default(wl_plot_options *o);


/* Figure kinds. Each reads the columns it needs from the table, writes
 * path atomically, and reports a missing column or a non-numeric value with
 * the table's file, line and column. */
enum { WL_PLOT_STACK_NONE = 0, WL_PLOT_STACK_PARTS, WL_PLOT_STACK_PHASES };

typedef struct {
    const char *panels;  /* energy-freq: "energy" (default) or e.g. "power,time,energy" */
    const char *objective; /* energy-freq, pareto: mark the point this
                              objective chooses per workload (energy, edp,
                              energy-within-slowdown=P, ...), with its
                              reference line (the slowdown bound, the power
                              cap) */
    int edp;             /* pareto-norm: EDP isolines */
    int stack;           /* energy-freq: stacked areas under the energy (one
                            series): WL_PLOT_STACK_PARTS static + dynamic
                            memory + dynamic compute; _PHASES a training
                            step's forward/backward/optimizer or a
                            generation's prefill/decode (by the table) */
    const char *facet;   /* pareto, energy-freq: small multiples by this column */
    const char *x, *y, *z; /* heatmap axes and value (a text column is
                              categorical); pareto x/y */
    int normalize;       /* heatmap: divide z by the minimum of its row */
    int show_infeasible; /* energy-freq: draw the points that cannot run
                            (default: left out of the axes, named in the
                            legend) */
    const char *reduce;  /* heatmap: several rows in a cell (parameters not
                            plotted): "min" (default) or "mean" of those
                            that can run; the colour bar says which */
    const char *metric;  /* validation: time, power or energy (default) */
    const char *against; /* savings: "max-clock" (default) or "fastest" */
} wl_plot_kind_options;

int wl_plot_energy_freq(const wl_results_table *t, const wl_plot_kind_options *k,
                        const wl_plot_options *o, const char *path, wl_error *err);
int wl_plot_pareto(const wl_results_table *t, const wl_plot_kind_options *k,
                   const wl_plot_options *o, const char *path, wl_error *err);
int wl_plot_heatmap(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err);
int wl_plot_compare(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err);
int wl_plot_savings(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err);
int wl_plot_validation(const wl_results_table *t, const wl_plot_kind_options *k,
                       const wl_plot_options *o, const char *path, wl_error *err);
/* Several GPUs' optimize table: per workload, a bar per GPU of the energy
 * saved at its chosen clock against its maximum clock, the clock on the bar. */
int wl_plot_gpus(const wl_results_table *t, const wl_plot_kind_options *k,
                 const wl_plot_options *o, const char *path, wl_error *err);
/* Feature importances (wattlas learn --importance): bars per target. */
int wl_plot_importance(const wl_results_table *t, const wl_plot_kind_options *k,
                       const wl_plot_options *o, const char *path, wl_error *err);
/* Every workload's front on one axes: energy relative to its maximum-clock
 * point against the slowdown from it (sweep output). */
int wl_plot_pareto_norm(const wl_results_table *t, const wl_plot_kind_options *k,
                        const wl_plot_options *o, const char *path, wl_error *err);

/* Looked up by name (wl_plot_kind_at lists them). */
typedef int (*wl_plot_kind_fn)(const wl_results_table *, const wl_plot_kind_options *,
                               const wl_plot_options *, const char *, wl_error *);
wl_plot_kind_fn wl_plot_kind_lookup(const char *name);
/* Kinds drawn from a file other than a table (timeline: a trace). */
typedef int (*wl_plot_file_fn)(const char *in_path, const wl_plot_options *, const char *,
                               wl_error *);
typedef struct {
    const char *name, *summary;
    wl_plot_kind_fn fn;         /* NULL for a file kind */
    wl_plot_file_fn file_fn;
    const char *options;        /* the kind options it reads, comma-separated
                                   ("panels,stack,facet,objective"); others are
                                   refused rather than ignored */
} wl_plot_kind;
/* Whether kind k reads the kind option named opt ("facet"). */
int wl_plot_kind_has_option(const wl_plot_kind *k, const char *opt);
const wl_plot_kind *wl_plot_kind_find(const char *name);

/* The Chrome trace events of `wattlas cluster --timeline` as a Gantt chart
 * (a row per GPU, a bar per task coloured by its name, the legend below)
 * with each GPU's power over the same time axis underneath. */
int wl_plot_timeline(const char *trace_path, const wl_plot_options *o, const char *path,
                     wl_error *err);
/* The kind options set in k that the kind does not read, and values
 * outside their words (palette, metric, against, reduce, stack,
 * objective, panels), are refused; errors name the option ("--facet"). */
int wl_plot_kind_options_check(const wl_plot_kind *kind, const wl_plot_kind_options *k,
                               const wl_plot_options *o, wl_error *err);
/* One figure of kind: options checked, then drawn from t (a table kind;
 * NULL: loaded from in_path) or from in_path (a file kind). */
/* Whether path names a format a figure can be written in (.png, .pdf,
 * .svg); err, as a usage error of -o, lists them. */
int wl_plot_output_check(const char *path, wl_error *err);
int wl_plot_draw(const wl_plot_kind *kind, const wl_results_table *t, const char *in_path,
                 const wl_plot_kind_options *k, const wl_plot_options *o, const char *path,
                 wl_error *err);
size_t wl_plot_kind_count(void);
const wl_plot_kind *wl_plot_kind_at(size_t i);

/* A whole study from a finished sweep spec (its [report] title and
 * objective): dir gets sweep.csv, pareto.csv, optimal.csv, savings.csv,
 * every figure as PNG and PDF with its CSV, and index.md/index.html. It is
 * built in a directory beside dir and moved in only when complete: a
 * failure leaves dir as it was. */
typedef struct {
    const char *command;   /* how the report was made, for the index */
    const char *spec_path; /* the study file, for the index */
    int threads;           /* sweep threads (0: OpenMP default) */
    void (*step)(void *user, const char *text);
    void (*progress)(void *user, unsigned long long done, unsigned long long total);
    /* each figure, once drawn: its file name without extension and the
       PNG's layout (NULL: none asked for) */
    void (*figure)(void *user, const char *name, const wl_plot_layout *layout);
    void *user;
} wl_plot_report_options;
typedef struct {
    unsigned long long points;
    size_t figures;
    unsigned long long learned_outside; /* points outside a learned model's domain */
} wl_plot_report_stats;
int wl_plot_report(const wl_sweep_spec *spec, const char *dir, const wl_plot_report_options *o,
                   wl_plot_report_stats *stats, wl_error *err);

/* Whether a study file is a serving study: a [serve] section (0 when it
 * cannot be read). */
int wl_plot_study_is_serve(const char *path);
/* A serving study: [serve] holds wattlas serve's options ('-' or '_' in
 * the keys: max_num_seqs = 16,64,128, clock = 990:1980:90, ...), [report]
 * its title. dir gets serve.csv, the figure serve-front (energy per output
 * token against p90 ITL, a front per max_num_seqs, points coloured by the
 * clock; a panel per GPU) as PNG, PDF and SVG beside its CSV, and
 * index.md/index.html with the lowest-energy point per engine; built
 * beside dir and moved in when complete, as wl_plot_report. */
int wl_plot_serve_report(const char *study_path, const char *dir,
                         const wl_plot_report_options *o, wl_plot_report_stats *stats,
                         wl_error *err);

/* Round tick positions in [lo, hi]: multiples of 1, 2, 2.5 or 5 x 10^n,
 * between 4 (or max_ticks, if less) and max_ticks of them when such a step
 * exists, as near 5 as can be; returns their count (at most max_ticks + 2). */
int wl_plot_ticks(double lo, double hi, int max_ticks, double *ticks);
/* SI prefix for values up to vmax: writes the prefix ("m", "k", "", ...)
 * and returns the factor to multiply values by. */
double wl_plot_si(double vmax, const char **prefix);

/* A report figure's title: what its whole table shares, the GPU and the
 * batch ("h100-sxm-80gb, batch 8"; either left out when its column is
 * missing or holds several values), so that a figure copied out of the
 * report without its caption still says both. "" when neither. */
void wl_plot_figure_title(const wl_results_table *t, char *buf, size_t n);

#endif
