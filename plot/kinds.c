/* Figure kinds: energy-freq, pareto, pareto-norm, heatmap, savings,
 * validation, compare. */
#include "plot_internal.h"
#include "kinds_internal.h"
#include "../pareto/wattlas_pareto.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXFACETS 12

/* ---- series: rows grouped by the parameter columns before the clock ------- */

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

static void series_free(series_set *ss)
{
    for (int i = 0; i < ss->n; i++)
        free(ss->s[i].rows);
    free(ss->s);
    ss->s = NULL;
    ss->n = 0;
}

/* Readable names of the parameter columns, for labels with their units. */
static const char *param_unit(const char *col)
{
    static const char *const map[][2] = {{"batch", "batch "}, {"seq", "seq "},
                                         {"voltage_offset_mv", "mV "}, {"fixed_voltage_mv", "mV "},
                                         {"sms", "SMs "}, {"power_limit_w", "W "},
                                         {"dram_bw_gbs", "GB/s "}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(map[i][0], col))
            return map[i][1];
    return NULL;
}

/* One label part: text values as they are; numbers with their name or unit
 * ("seq 512", "-150 mV"), never a bare number. */
static void label_part(char *buf, size_t n, const char *col, const char *val)
{
    size_t l = strlen(buf);
    const char *u = param_unit(col);
    char *end;
    double v = strtod(val, &end);
    int numeric = *val && !*end && isfinite(v);
    if (!numeric)
        snprintf(buf + l, n - l, "%s%s", l ? ", " : "", val);
    else if (u && (!strcmp(col, "batch") || !strcmp(col, "seq")))
        snprintf(buf + l, n - l, "%s%s%g", l ? ", " : "", u, v);
    else if (u)
        snprintf(buf + l, n - l, "%s%g %.*s", l ? ", " : "", v, (int)strlen(u) - 1, u);
    else
        snprintf(buf + l, n - l, "%s%s %g", l ? ", " : "", col, v);
}

/* Series: rows that agree in the columns before xcol, less skip (a facet
 * column: one workload keeps its style in every facet). Labels hold the
 * columns that vary. */
static int build_series(const wl_results_table *t, int xcol, int skip, series_set *ss,
                        wl_error *err)
{
    memset(ss, 0, sizeof *ss);
    int key[WL_RESULTS_CSV_MAXCOLS];
    size_t nk = 0;
    for (int c = 0; c < xcol && nk < WL_RESULTS_CSV_MAXCOLS; c++)
        if (c != skip)
            key[nk++] = c;
    size_t n = wl_results_table_rows(t);
    if (!(ss->s = calloc(MAXSERIES, sizeof *ss->s)))
        return WL_ENOMEM;
    for (size_t r = 0; r < n; r++) {
        int i;
        for (i = 0; i < ss->n; i++)
            if (wl_results_table_same(t, ss->s[i].rows[0], r, key, nk))
                break;
        if (i == ss->n) {
            if (ss->n >= MAXSERIES) {
                wl_error_set(err, table_path(t), 0, "", "more than %d series: filter the input",
                             MAXSERIES);
                series_free(ss);
                return WL_EINVAL;
            }
            ss->s[i].rows = malloc(n * sizeof(size_t));
            if (!ss->s[i].rows) {
                series_free(ss);
                return WL_ENOMEM;
            }
            ss->s[i].style = i;
            ss->n++;
        }
        ss->s[i].rows[ss->s[i].n++] = r;
    }
    ss->nstyles = ss->n;
    for (size_t j = 0; j < nk; j++) {
        int c = key[j], varies = 0;
        for (int i = 1; i < ss->n && !varies; i++)
            varies = strcmp(wl_results_table_cell(t, ss->s[i].rows[0], c),
                            wl_results_table_cell(t, ss->s[0].rows[0], c)) != 0;
        for (int i = 0; varies && i < ss->n; i++)
            label_part(ss->s[i].label, sizeof ss->s[i].label, wl_results_table_header(t, (size_t)c),
                       wl_results_table_cell(t, ss->s[i].rows[0], c));
    }
    int mc = wl_results_table_col(t, "model");
    if (ss->n == 1 && !ss->s[0].label[0] && n)
        snprintf(ss->s[0].label, sizeof ss->s[0].label, "%s",
                 wl_results_table_cell(t, ss->s[0].rows[0], mc >= 0 ? mc : 0));
    return WL_OK;
}

/* ---- legends ------------------------------------------------------------------ */



void lg_add(legend_t *lg, const char *label, int style, int kind)
{
    if (lg->n >= (int)(sizeof lg->e / sizeof *lg->e))
        return;
    snprintf(lg->e[lg->n].label, sizeof lg->e[lg->n].label, "%s", label);
    lg->e[lg->n].style = style;
    lg->e[lg->n].kind = kind;
    lg->n++;
}

/* Decides where the legend goes and takes its room from the margins:
 * right of the axes when it needs at most 30% of the width, else below in
 * as many columns as fit. */
void lg_reserve(cairo_t *cr, legend_t *lg, const wl_plot_options *o, double W,
                       double *right, double *bottom, int right_taken)
{
    lg->where = 0;
    if (!lg->n || o->legend == WL_PLOT_LEGEND_NONE)
        return;
    style_font(cr, 6.5, 0);
    double wmax = 0;
    for (int i = 0; i < lg->n; i++) {
        cairo_text_extents_t te;
        cairo_text_extents(cr, lg->e[i].label, &te);
        wmax = fmax(wmax, te.x_advance);
    }
    lg->rowh = 8.5;
    lg->colw = wmax + 22;
    lg->cols = 1;
    lg->w = lg->colw;
    lg->h = lg->n * lg->rowh + 3;
    if (o->legend == WL_PLOT_LEGEND_INSIDE) {
        lg->where = 3;
        return;
    }
    if (!right_taken && lg->w <= 0.3 * W) {
        lg->where = 1;
        *right += lg->w + 4;
        return;
    }
    /* below: entries flow left to right in rows as wide as the figure */
    lg->where = 2;
    lg->cols = 0;
    double x = 0, wrow = 0;
    int row = 0;
    for (int i = 0; i < lg->n; i++) {
        cairo_text_extents_t te;
        cairo_text_extents(cr, lg->e[i].label, &te);
        double w = te.x_advance + 28;
        if (x > 0 && x + w > W - 8) {
            row++;
            x = 0;
        }
        lg->e[i].dx = x;
        lg->e[i].row = row;
        x += w;
        wrow = fmax(wrow, x);
    }
    lg->w = wrow;
    lg->h = (row + 1) * lg->rowh + 3;
    *bottom += lg->h + 4;
}

/* A legend line per workload style (the first series of each), as kind. */
static void lg_add_series(legend_t *lg, const series_set *ss, int kind)
{
    for (int st = 0; st < ss->nstyles; st++)
        for (int i = 0; i < ss->n; i++)
            if (ss->s[i].style == st) {
                lg_add(lg, ss->s[i].label, st, kind);
                break;
            }
}

/* The legend line of an objective's ring ("chosen: energy"), when k has one. */
static void lg_add_choice(legend_t *lg, const wl_plot_kind_options *k, const char *text)
{
    if (!k || !k->objective)
        return;
    char lab[96];
    snprintf(lab, sizeof lab, "chosen: %s", text);
    lg_add(lg, lab, 0, LG_RING);
}

static void lg_symbol(cairo_t *cr, const lg_entry *e, double x, double y)
{
    cairo_save(cr);
    switch (e->kind) {
    case LG_LINE:
    case LG_MARK:
        style_color(cr, e->style, 1);
        if (e->kind == LG_LINE) {
            cairo_set_line_width(cr, 1.0);
            style_dash(cr, e->style);
            cairo_move_to(cr, x, y);
            cairo_line_to(cr, x + 14, y);
            cairo_stroke(cr);
        }
        cairo_set_line_width(cr, 0.6);
        style_marker(cr, e->style, x + 7, y, 3.2, 1);
        break;
    case LG_FILL:
        cairo_rectangle(cr, x + 2, y - 3, 10, 6);
        style_fill(cr, e->style, 0.6);
        cairo_fill_preserve(cr);
        style_hatch(cr, e->style, x + 2, y - 3, x + 12, y + 3);
        break;
    case LG_HOLLOW_GREY: /* a point that cannot run */
    case LG_HOLLOW: {
        double grey = e->kind == LG_HOLLOW_GREY ? 0.55 : 0;
        cairo_set_source_rgb(cr, grey, grey, grey);
        cairo_set_line_width(cr, 0.6);
        style_marker(cr, 0, x + 7, y, 3.2, 0);
        break;
    }
    case LG_BAND:
        cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.25);
        cairo_rectangle(cr, x + 2, y - 3, 10, 6);
        cairo_fill(cr);
        break;
    case LG_REF: /* a reference line: grey, the first dash */
    case LG_DASH: {
        double grey = e->kind == LG_REF ? 0.3 : 0;
        cairo_set_source_rgb(cr, grey, grey, grey);
        cairo_set_line_width(cr, 0.7);
        style_dash(cr, e->kind == LG_REF ? 1 : e->style);
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, x + 14, y);
        cairo_stroke(cr);
        break;
    }
    case LG_TEXT: /* a note: no symbol */
        break;
    case LG_VDOT: { /* the maximum clock's vertical dotted line */
        const double dots[2] = {1.0, 1.6};
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        cairo_set_line_width(cr, 0.6);
        cairo_set_dash(cr, dots, 2, 0);
        cairo_move_to(cr, x + 7, y - 3.5);
        cairo_line_to(cr, x + 7, y + 3.5);
        cairo_stroke(cr);
        break;
    }
    case LG_PATCH:
        style_color(cr, e->style, 1);
        cairo_rectangle(cr, x + 3, y - 2.5, 8, 5);
        cairo_fill(cr);
        break;
    case LG_SQUARE:
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 0.7);
        cairo_rectangle(cr, x + 4, y - 3, 6, 6);
        cairo_stroke(cr);
        break;
    case LG_BEST:
        cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        cairo_new_path(cr);
        cairo_arc(cr, x + 7, y, 2.75, 0, 2 * M_PI);
        cairo_fill_preserve(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 0.8);
        cairo_stroke(cr);
        break;
    case LG_FADED:
        cairo_set_source_rgba(cr, 0.27, 0.0, 0.33, 0.25);
        cairo_new_path(cr);
        cairo_arc(cr, x + 7, y, 1.5, 0, 2 * M_PI);
        cairo_fill(cr);
        break;
    default: /* LG_RING: the chosen point */
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 0.9);
        cairo_new_path(cr);
        cairo_arc(cr, x + 7, y, 4, 0, 2 * M_PI);
        cairo_stroke(cr);
        break;
    }
    cairo_restore(cr);
}

/* Draws the legend: right of a (top-aligned), below the figure's axes, or
 * in the corner of a covering the fewest of the np device points. */
void lg_draw(cairo_t *cr, legend_t *lg, const axes *a, double left, double W, double H,
                    const double *px, const double *py, size_t np)
{
    if (!lg->where)
        return;
    if (lg->where == 1) {
        lg->x = a->x0 + a->w + 4;
        lg->y = a->y0;
    } else if (lg->where == 2) {
        lg->x = left + fmax(0, (W - left - 8 - lg->w) / 2);
        if (lg->x + lg->w > W - 2)
            lg->x = fmax(2, W - 2 - lg->w);
        lg->y = H - lg->h - 2;
    } else {
        double cx[4] = {a->x0 + a->w - lg->w - 3, a->x0 + 3, a->x0 + a->w - lg->w - 3, a->x0 + 3};
        double cy[4] = {a->y0 + 3, a->y0 + 3, a->y0 + a->h - lg->h - 3, a->y0 + a->h - lg->h - 3};
        size_t best = (size_t)-1;
        for (int c = 0; c < 4; c++) {
            size_t hits = 0;
            for (size_t i = 0; i < np; i++)
                hits += px[i] >= cx[c] - 3 && px[i] <= cx[c] + lg->w + 3 && py[i] >= cy[c] - 3 &&
                        py[i] <= cy[c] + lg->h + 3;
            if (hits < best) {
                best = hits;
                lg->x = cx[c];
                lg->y = cy[c];
            }
        }
        cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
        cairo_rectangle(cr, lg->x, lg->y, lg->w, lg->h);
        cairo_fill(cr);
    }
    style_font(cr, 6.5, 0);
    for (int i = 0; i < lg->n; i++) {
        double x = lg->x + 2, y = lg->y + 6 + i * lg->rowh;
        if (lg->where == 2)
            x = lg->x + lg->e[i].dx + 2, y = lg->y + 6 + lg->e[i].row * lg->rowh;
        lg_symbol(cr, &lg->e[i], x, y);
        cairo_set_source_rgb(cr, 0, 0, 0);
        style_text(cr, x + 17, y, lg->e[i].label, 0, 0.5);
    }
    cairo_set_dash(cr, NULL, 0, 0);
    layout_legend(cr, lg->x, lg->y, lg->w, lg->h);
    layout_legend_entries(cr, lg->n);
}

/* ---- rows that can run ---------------------------------------------------------- */

/* ok[r]: the row is an operating point the GPU can hold and the case fits
 * its memory (feasible and fits not 0); the rest is drawn hollow grey and
 * never chosen. */
int rows_ok(const wl_results_table *t, unsigned char *ok, wl_error *err)
{
    int fc = wl_results_table_col(t, "feasible"), mc = wl_results_table_col(t, "fits");
    size_t n = wl_results_table_rows(t);
    for (size_t r = 0; r < n; r++) {
        double f = 1, m = 1;
        int rc = fc >= 0 ? num_cell(t, r, fc, &f, err) : WL_OK;
        if (!rc && mc >= 0)
            rc = num_cell(t, r, mc, &m, err);
        if (rc)
            return rc;
        ok[r] = !(f == 0) && !(m == 0);
    }
    return WL_OK;
}

/* The objective's choice among a series' ok rows (-1: none qualifies). */
static long choose_row(const wl_pareto_objective *obj, const size_t *rows, size_t n,
                       const unsigned char *ok, const double *tm, const double *pw,
                       const double *en, double *tmp)
{
    size_t m = 0;
    double *t = tmp, *p = tmp + n, *e = tmp + 2 * n;
    size_t *idx = (size_t *)(void *)(tmp + 3 * n);
    for (size_t j = 0; j < n; j++) {
        size_t r = rows[j];
        if (!ok[r] || !isfinite(tm[r]) || !isfinite(en[r]))
            continue;
        t[m] = tm[r];
        p[m] = pw[r];
        e[m] = en[r];
        idx[m++] = r;
    }
    long c = m ? wl_pareto_choose(obj, t, p, e, m) : -1;
    return c < 0 ? -1 : (long)idx[c];
}

/* The chosen point: a black ring around it. */
static void chosen_ring(cairo_t *cr, double x, double y)
{
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.9);
    cairo_new_path(cr);
    cairo_arc(cr, x, y, 4.5, 0, 2 * M_PI);
    cairo_stroke(cr);
}

/* Row indices (held as doubles in idx) in ascending order of key. */
static void sort_rows_by(double *idx, size_t n, const double *key)
{
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && key[(size_t)idx[b]] < key[(size_t)idx[b - 1]]; b--) {
            double q = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = q;
        }
}

static int objective_of(const wl_plot_kind_options *k, wl_pareto_objective *obj, wl_error *err)
{
    if (!k || !k->objective)
        return WL_OK;
    int rc = wl_pareto_objective_parse(k->objective, obj, err);
    if (rc)
        wl_error_locate(err, "objective", 0);
    return rc;
}

/* The slowdown bound of an objective, percent (NaN: it has none). */
static double slowdown_of(const wl_pareto_objective *obj)
{
    return strcmp(wl_pareto_objective_name(obj), "energy-within-slowdown") == 0 ? obj->param : NAN;
}

static double power_cap_of(const wl_pareto_objective *obj)
{
    return strcmp(wl_pareto_objective_name(obj), "time-within-power") == 0 ? obj->param : NAN;
}

/* The board power limit of a row: a swept power_limit_w, or its GPU's
 * preset (NaN when neither is known). */
static double power_limit_of(const wl_results_table *t, size_t r)
{
    int pc = wl_results_table_col(t, "power_limit_w"), gc = wl_results_table_col(t, "gpu");
    double v = NAN;
    if (pc >= 0 && wl_results_table_num(t, r, pc, &v, NULL) == WL_OK && isfinite(v))
        return v;
    if (gc < 0)
        return NAN;
    wl_core_gpu g;
    wl_error e;
    if (wl_preset_gpu_load(wl_results_table_cell(t, r, gc), &g, &e) != WL_OK)
        return NAN;
    return g.power_limit_w > 0 ? g.power_limit_w : NAN;
}

/* ---- facets ------------------------------------------------------------------------ */

typedef struct {
    int col; /* -1: one panel */
    size_t first[MAXFACETS + 1];
    int n, cols, rows;
} facets;

static int facets_of(const wl_results_table *t, const char *name, facets *f, wl_error *err)
{
    f->col = -1;
    f->n = 1;
    if (name) {
        if ((f->col = need_col(t, name, err)) < 0)
            return WL_EPARSE;
        f->n = (int)wl_results_table_distinct(t, f->col, f->first, MAXFACETS + 1);
        if (f->n > MAXFACETS) {
            wl_error_set(err, table_path(t), 0, name, "more than %d facets: filter the input",
                         MAXFACETS);
            return WL_EINVAL;
        }
        if (f->n < 1)
            f->n = 1;
    }
    f->cols = f->n <= 3 ? f->n : (int)ceil(sqrt((double)f->n));
    f->rows = (f->n + f->cols - 1) / f->cols;
    return WL_OK;
}

static int in_facet(const wl_results_table *t, const facets *f, int fi, size_t r)
{
    return f->col < 0 || strcmp(wl_results_table_cell(t, r, f->col),
                                wl_results_table_cell(t, f->first[fi], f->col)) == 0;
}

/* Splits every series by facet: a sub-series per (workload, facet) with
 * the workload's style, so fronts, optima and choices are per panel. */
static int split_by_facet(const wl_results_table *t, const facets *f, series_set *ss)
{
    if (f->col < 0)
        return WL_OK;
    series *out = calloc((size_t)ss->n * (size_t)f->n + 1, sizeof *out);
    if (!out)
        return WL_ENOMEM;
    int m = 0, rc = WL_OK;
    for (int i = 0; !rc && i < ss->n; i++)
        for (int fi = 0; !rc && fi < f->n; fi++) {
            series *o = &out[m];
            for (size_t j = 0; j < ss->s[i].n; j++) {
                size_t r = ss->s[i].rows[j];
                if (!in_facet(t, f, fi, r))
                    continue;
                if (!o->rows && !(o->rows = malloc(ss->s[i].n * sizeof(size_t)))) {
                    rc = WL_ENOMEM;
                    break;
                }
                o->rows[o->n++] = r;
            }
            if (o->n) {
                memcpy(o->label, ss->s[i].label, sizeof o->label);
                o->style = ss->s[i].style;
                o->facet = fi;
                m++;
            }
        }
    for (int i = 0; i < ss->n; i++)
        free(ss->s[i].rows);
    free(ss->s);
    ss->s = out;
    ss->n = m;
    if (rc) {
        series_free(ss);
        return rc;
    }
    return WL_OK;
}

static void facet_title(cairo_t *cr, const axes *a, const wl_results_table *t, const facets *f,
                        int fi)
{
    if (f->col < 0)
        return;
    char lab[160] = "";
    label_part(lab, sizeof lab, wl_results_table_header(t, (size_t)f->col),
               wl_results_table_cell(t, f->first[fi], f->col));
    style_font(cr, 7.5, 1);
    cairo_set_source_rgb(cr, 0, 0, 0);
    style_text(cr, a->x0 + a->w / 2, a->y0 - 10.5, lab, 0.5, 0);
}

/* ---- energy vs clock ------------------------------------------------------------ */

const metric metrics[3] = {{"energy_j", "Energy", "J"},
                          {"power_w", "Power", "W"},
                          {"time_ms", "Time", "s"}};

/* The stacked parts: what the energy is made of, or the phases it is spent
 * in (they add up to energy_j in every row). */
static const struct {
    const char *col[3], *name[3];
    int n;
} stacks[3] = {
    {{"energy_static_j", "energy_dyn_memory_j", "energy_dyn_compute_j"},
     {"static + idle", "dynamic memory", "dynamic compute"}, 3},
    {{"energy_fwd_j", "energy_bwd_j", "energy_opt_j"}, {"forward", "backward", "optimizer"}, 3},
    {{"energy_prefill_j", "energy_decode_j", NULL}, {"prefill", "decode", NULL}, 2}};

typedef struct {
    const wl_results_table *t;
    const series_set *ss;
    const metric *pan[3];
    int np, pe;             /* panels; the energy panel (-1: none) */
    const double *x, *v, *pv;
    const unsigned char *ok, *th;
    int nparts, which;
    const long *best, *maxc, *chosen;
    const double *blo, *bhi; /* flat band per series */
    double slow;             /* slowdown bound, % (NaN: none) */
    double cap;              /* objective's power cap, W */
    const double *plimit;    /* board power limit per series */
    const double *tfast;     /* fastest ok time per series, s */
    int show_bad;            /* draw the points that cannot run */
} ef_data;

static void ef_panel(cairo_t *cr, const ef_data *d, const facets *fa, int fi, int p,
                     const axes *a)
{
    const wl_results_table *t = d->t;
    const series_set *ss = d->ss;
    cairo_save(cr);
    cairo_rectangle(cr, a->x0, a->y0, a->w, a->h);
    cairo_clip(cr);
    int is_e = p == d->pe;
    for (int si = 0; is_e && d->nparts && si < ss->n; si++) {
        const series *s = &ss->s[si];
        if (s->facet != fi)
            continue;
        double *base = calloc(s->n ? s->n : 1, sizeof *base);
        for (int i = 0; base && i < d->nparts; i++) {
            cairo_new_path(cr);
            int started = 0;
            for (size_t j = 0; j < s->n; j++) {
                size_t r = s->rows[j];
                if (!in_facet(t, fa, fi, r) || !isfinite(d->pv[r * 3 + (size_t)i]))
                    continue;
                double yy = ax_y(a, base[j] + d->pv[r * 3 + (size_t)i]);
                if (!started)
                    cairo_move_to(cr, ax_x(a, d->x[r]), yy);
                else
                    cairo_line_to(cr, ax_x(a, d->x[r]), yy);
                started = 1;
            }
            for (size_t j = s->n; started && j-- > 0;) {
                size_t r = s->rows[j];
                if (in_facet(t, fa, fi, r) && isfinite(d->pv[r * 3 + (size_t)i]))
                    cairo_line_to(cr, ax_x(a, d->x[r]), ax_y(a, base[j]));
            }
            cairo_close_path(cr);
            style_fill(cr, i + (d->which ? 3 : 0), 0.55);
            cairo_fill_preserve(cr);
            style_hatch(cr, i, a->x0, a->y0, a->x0 + a->w, a->y0 + a->h);
            for (size_t j = 0; j < s->n; j++)
                if (isfinite(d->pv[s->rows[j] * 3 + (size_t)i]))
                    base[j] += d->pv[s->rows[j] * 3 + (size_t)i];
        }
        free(base);
    }
    /* the flat optimum: shaded for one series, the curve's flat part
     * thickened for several */
    for (int i = 0; is_e && ss->nstyles == 1 && i < ss->n; i++)
        if (ss->s[i].facet == fi && isfinite(d->blo[i])) {
            double x0 = ax_x(a, d->blo[i]), x1 = ax_x(a, d->bhi[i]);
            if (x1 - x0 < 1.5)
                x0 -= 0.75, x1 += 0.75;
            cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.18);
            cairo_rectangle(cr, x0, a->y0, x1 - x0, a->h);
            cairo_fill(cr);
        }
    /* the maximum clock: a dotted vertical line per distinct top clock of
     * the facet's series (a square per series stacked up where the
     * curves end at the same clock) */
    for (int i = 0; i < ss->n; i++) {
        long m = d->maxc[i];
        if (ss->s[i].facet != fi || m < 0)
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = ss->s[j].facet == fi && d->maxc[j] >= 0 && fabs(d->x[d->maxc[j]] - d->x[m]) < 0.5;
        if (seen)
            continue;
        double mx = ax_x(a, d->x[m]);
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        cairo_set_line_width(cr, 0.6);
        const double dots[2] = {1.0, 1.6};
        cairo_set_dash(cr, dots, 2, 0);
        cairo_move_to(cr, mx, a->y0);
        cairo_line_to(cr, mx, a->y0 + a->h);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
    }
    /* reference lines: the power limit and the objective's cap on a power
     * panel, the slowdown bound on a time panel */
    if (d->pan[p] == &metrics[1] || d->pan[p] == &metrics[2])
        for (int i = 0; i < ss->n; i++) {
            if (ss->s[i].facet != fi)
                continue;
            double ref = d->pan[p] == &metrics[1] ? d->plimit[i]
                                                  : (isfinite(d->slow) ? d->tfast[i] * (1 + d->slow / 100) : NAN);
            if (!isfinite(ref) || (i > 0 && d->pan[p] == &metrics[1] && ref == d->plimit[i - 1]))
                continue;
            cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
            if (ss->nstyles > 1 && d->pan[p] == &metrics[2])
                style_color(cr, ss->s[i].style, 0.8);
            cairo_set_line_width(cr, 0.7);
            style_dash(cr, 1);
            cairo_move_to(cr, a->x0, ax_y(a, ref));
            cairo_line_to(cr, a->x0 + a->w, ax_y(a, ref));
            cairo_stroke(cr);
        }
    if (d->pan[p] == &metrics[1] && isfinite(d->cap)) {
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        cairo_set_line_width(cr, 0.7);
        style_dash(cr, 2);
        cairo_move_to(cr, a->x0, ax_y(a, d->cap));
        cairo_line_to(cr, a->x0 + a->w, ax_y(a, d->cap));
        cairo_stroke(cr);
    }
    cairo_set_dash(cr, NULL, 0, 0);
    for (int i = 0; i < ss->n; i++) {
        const series *s = &ss->s[i];
        int st = s->style;
        if (s->facet != fi)
            continue;
        /* the line joins the points that can run; a gap where they cannot */
        style_color(cr, st, 1);
        style_dash(cr, st);
        cairo_set_line_width(cr, 1.0);
        int started = 0;
        for (size_t j = 0; j < s->n; j++) {
            size_t r = s->rows[j];
            double yv = d->v[r * 3 + (size_t)p];
            if (!in_facet(t, fa, fi, r))
                continue;
            if (!d->ok[r] || !isfinite(yv) || !(yv > 0 || !a->logy)) {
                started = 0;
                continue;
            }
            if (!started)
                cairo_move_to(cr, ax_x(a, d->x[r]), ax_y(a, yv));
            else
                cairo_line_to(cr, ax_x(a, d->x[r]), ax_y(a, yv));
            started = 1;
        }
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        if (is_e && ss->nstyles > 1 && isfinite(d->blo[i])) {
            style_color(cr, st, 0.3);
            cairo_set_line_width(cr, 4.0);
            cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
            started = 0;
            for (size_t j = 0; j < s->n; j++) {
                size_t r = s->rows[j];
                double yv = d->v[r * 3 + (size_t)p];
                if (!in_facet(t, fa, fi, r) || !d->ok[r] || !isfinite(yv) || d->x[r] < d->blo[i] ||
                    d->x[r] > d->bhi[i])
                    continue;
                if (!started)
                    cairo_move_to(cr, ax_x(a, d->x[r]), ax_y(a, yv));
                cairo_line_to(cr, ax_x(a, d->x[r]), ax_y(a, yv));
                started = 1;
            }
            cairo_stroke(cr);
            cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
        }
        /* markers on at most ~12 points per series; throttled points
         * hollow in the series colour, points that cannot run hollow grey */
        cairo_set_line_width(cr, 0.6);
        size_t every = s->n > 14 ? (s->n + 11) / 12 : 1;
        for (size_t j = 0; j < s->n; j++) {
            size_t r = s->rows[j];
            double yv = d->v[r * 3 + (size_t)p];
            if (!in_facet(t, fa, fi, r) || !isfinite(yv) || (a->logy && yv <= 0))
                continue;
            if (!d->ok[r]) {
                if (d->show_bad) {
                    cairo_set_source_rgb(cr, 0.55, 0.55, 0.55);
                    style_marker(cr, 0, ax_x(a, d->x[r]), ax_y(a, yv), 2.6, 0);
                }
                continue;
            }
            if (j % every != 0 && j + 1 != s->n)
                continue;
            style_color(cr, st, 1);
            style_marker(cr, st, ax_x(a, d->x[r]), ax_y(a, yv), 2.8, !d->th[r]);
        }
        long b = d->best[i], c = d->chosen[i];
        if (b >= 0 && in_facet(t, fa, fi, (size_t)b) && isfinite(d->v[(size_t)b * 3 + (size_t)p])) {
            double bx = ax_x(a, d->x[b]), by = ax_y(a, d->v[(size_t)b * 3 + (size_t)p]);
            style_color(cr, st, 1);
            style_marker(cr, st, bx, by, 5.5, 1);
            cairo_set_source_rgb(cr, 0, 0, 0);
            cairo_set_line_width(cr, 0.8);
            style_marker(cr, st, bx, by, 5.5, 0);
        }
        if (c >= 0 && in_facet(t, fa, fi, (size_t)c) && isfinite(d->v[(size_t)c * 3 + (size_t)p]))
            chosen_ring(cr, ax_x(a, d->x[c]), ax_y(a, d->v[(size_t)c * 3 + (size_t)p]));
    }
    cairo_restore(cr);
}

int wl_plot_energy_freq(const wl_results_table *t, const wl_plot_kind_options *k,
                        const wl_plot_options *o, const char *path, wl_error *err)
{
    if (need_points(t, "energy-freq", err))
        return WL_EPARSE;
    int xcol = need_col(t, "sm_clock_mhz", err);
    if (xcol < 0)
        return WL_EPARSE;
    int thr = wl_results_table_col(t, "throttled"), ecol = wl_results_table_col(t, "effective_clock_mhz");
    ef_data d = {.t = t, .pe = -1, .slow = NAN, .cap = NAN, .show_bad = k && k->show_infeasible};
    const char *spec = k && k->panels ? k->panels : "energy";
    char buf[64];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && d.np < 3;
         tok = strtok_r(NULL, ",", &save)) {
        static const char *const names[3] = {"energy", "power", "time"};
        const metric *m = NULL;
        for (int i = 0; i < 3; i++)
            if (!strcmp(tok, names[i]))
                m = &metrics[i];
        if (!m) {
            wl_error_set(err, "panels", 0, "panels", "expected energy, power or time, got '%s'", tok);
            return WL_EINVAL;
        }
        if (m == &metrics[0])
            d.pe = d.np;
        d.pan[d.np++] = m;
    }
    int mcol[3], tcol = -1, pcol = -1, encol = -1;
    for (int p = 0; p < d.np; p++)
        if ((mcol[p] = need_col(t, d.pan[p]->col, err)) < 0)
            return WL_EPARSE;
    /* left to choose, the y axes are logarithmic when a panel's data span
     * more than a decade (gpt2's 2 J would lie on zero beside an 8B model's
     * 60 J); stacked areas stay linear */
    wl_plot_options scale = *o;
    for (int p = 0; !o->linear && !(k && k->stack) && p < d.np; p++)
        scale.log_y |= wide_span(t, mcol[p]);
    o = &scale;
    wl_pareto_objective obj;
    int rc = objective_of(k, &obj, err);
    if (rc)
        return rc;
    /* the optimum and the band need the energy; a choice time and power too */
    if ((encol = need_col(t, "energy_j", err)) < 0)
        return WL_EPARSE;
    tcol = wl_results_table_col(t, "time_ms");
    pcol = wl_results_table_col(t, "power_w");
    if (k && k->objective &&
        ((tcol = need_col(t, "time_ms", err)) < 0 || (pcol = need_col(t, "power_w", err)) < 0))
        return WL_EPARSE;
    int partcol[3] = {-1, -1, -1};
    if (k && k->stack == WL_PLOT_STACK_PHASES) {
        d.which = wl_results_table_col(t, "energy_fwd_j") >= 0 ? 1 : 2;
        if (d.which == 1 && wl_results_table_rows(t) > 0 &&
            !wl_results_table_cell(t, 0, wl_results_table_col(t, "energy_fwd_j"))[0])
            d.which = 2;
    }
    if (k && k->stack) {
        d.nparts = stacks[d.which].n;
        for (int i = 0; i < d.nparts; i++)
            if ((partcol[i] = need_col(t, stacks[d.which].col[i], err)) < 0)
                return WL_EPARSE;
    }
    facets fa;
    if ((rc = facets_of(t, k ? k->facet : NULL, &fa, err)))
        return rc;
    series_set ss;
    if ((rc = build_series(t, xcol, fa.col, &ss, err)))
        return rc;
    d.ss = &ss;
    if (d.nparts && ss.nstyles != 1) {
        series_free(&ss);
        wl_error_set(err, table_path(t), 0, "stack",
                     "stacked energy parts need a single series, found %d (filter the table)",
                     ss.nstyles);
        return WL_EINVAL;
    }
    if ((rc = split_by_facet(t, &fa, &ss))) {
        series_free(&ss);
        return rc;
    }
    size_t n = wl_results_table_rows(t), ns = (size_t)ss.n;
    double *x = malloc((n + 1) * sizeof *x), *v = malloc((n + 1) * 3 * sizeof *v),
           *pv = malloc((n + 1) * 3 * sizeof *pv), *tm = malloc((n + 1) * 3 * sizeof *tm),
           *tmp = malloc((n + 1) * 4 * sizeof *tmp), *sd = malloc((ns + 1) * 5 * sizeof *sd);
    unsigned char *ok = malloc(n + 1), *th = malloc(n + 1);
    long *ix = malloc((ns + 1) * 3 * sizeof *ix);
    if (!x || !v || !pv || !tm || !tmp || !sd || !ok || !th || !ix)
        rc = WL_ENOMEM;
    if (!rc)
        rc = rows_ok(t, ok, err);
    double *pw = tm ? tm + n : NULL, *en = tm ? tm + 2 * n : NULL;
    for (size_t r = 0; !rc && r < n; r++) {
        double eff = NAN, tv = 0;
        rc = num_cell(t, r, xcol, &x[r], err);
        if (!rc && ecol >= 0)
            rc = num_cell(t, r, ecol, &eff, err);
        if (!rc && thr >= 0)
            rc = num_cell(t, r, thr, &tv, err);
        th[r] = tv == 1 || (isfinite(eff) && eff < x[r] - 0.5);
        for (int p = 0; !rc && p < d.np; p++) {
            rc = num_cell(t, r, mcol[p], &v[r * 3 + (size_t)p], err);
            if (!rc && d.pan[p] == &metrics[2])
                v[r * 3 + (size_t)p] *= 1e-3; /* ms -> s: the axis picks its prefix */
        }
        for (int i = 0; !rc && i < d.nparts; i++)
            rc = num_cell(t, r, partcol[i], &pv[r * 3 + (size_t)i], err);
        tm[r] = pw[r] = NAN;
        if (!rc && tcol >= 0)
            rc = num_cell(t, r, tcol, &tm[r], err);
        if (!rc && pcol >= 0)
            rc = num_cell(t, r, pcol, &pw[r], err);
        if (!rc)
            rc = num_cell(t, r, encol, &en[r], err);
    }
    /* per series: energy optimum, maximum clock that can run, the
     * objective's choice, the flat band, the references */
    long *best = ix, *maxc = ix ? ix + ns : NULL, *chosen = ix ? ix + 2 * ns : NULL;
    double *blo = sd, *bhi = sd ? sd + ns : NULL, *plim = sd ? sd + 2 * ns : NULL,
           *tfast = sd ? sd + 3 * ns : NULL;
    for (int i = 0; !rc && i < ss.n; i++) {
        const series *s = &ss.s[i];
        best[i] = maxc[i] = chosen[i] = -1;
        tfast[i] = INFINITY;
        size_t m = 0;
        for (size_t j = 0; j < s->n; j++) {
            size_t r = s->rows[j];
            if (!ok[r] || !isfinite(en[r]))
                continue;
            if (best[i] < 0 || en[r] < en[best[i]])
                best[i] = (long)r;
            if (maxc[i] < 0 || x[r] > x[maxc[i]])
                maxc[i] = (long)r;
            if (isfinite(tm[r]))
                tfast[i] = fmin(tfast[i], tm[r] * 1e-3);
            tmp[m] = x[r];
            tmp[n + m] = en[r];
            m++;
        }
        wl_pareto_flat_band(tmp, tmp + n, m, 0.01, &blo[i], &bhi[i]);
        if (k && k->objective)
            chosen[i] = choose_row(&obj, s->rows, s->n, ok, tm, pw, en, tmp);
        plim[i] = power_limit_of(t, s->rows[0]);
    }
    if (k && k->objective) {
        d.slow = slowdown_of(&obj);
        d.cap = power_cap_of(&obj);
    }
    d.x = x, d.v = v, d.pv = pv, d.ok = ok, d.th = th, d.best = best, d.maxc = maxc;
    d.chosen = chosen, d.blo = blo, d.bhi = bhi, d.plimit = plim, d.tfast = tfast;
    fig *f = NULL;
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (rc) {
        free(x); free(v); free(pv); free(tm); free(tmp); free(sd); free(ok); free(th); free(ix);
        series_free(&ss);
        return rc;
    }
    cairo_t *cr = fig_cr(f);
    double W = fig_w(f), H = fig_h(f);
    double top = fig_top(cr, o, W) + (fa.col >= 0 ? 11 : 0), bottom = 26, left = 44, right = 8;
    /* the legend: series, then what the marks mean */
    legend_t lg = {.n = 0};
    int any_bad = 0, any_thr = 0;
    for (size_t r = 0; r < n; r++) {
        any_bad |= !ok[r];
        any_thr |= ok[r] && th[r];
    }
    /* a series with no point that can run is not drawn (unless asked
     * for): the legend names it in its note instead of a line */
    unsigned char runs[MAXSERIES] = {0};
    for (int i = 0; i < ss.n; i++)
        for (size_t j = 0; j < ss.s[i].n; j++)
            runs[ss.s[i].style] |= ok[ss.s[i].rows[j]];
    char left_out[160] = "";
    int nleft = 0;
    for (int st = 0; st < ss.nstyles; st++) {
        if (runs[st])
            continue;
        for (int i = 0; i < ss.n; i++)
            if (ss.s[i].style == st) {
                size_t l = strlen(left_out);
                if (l + 2 < sizeof left_out)
                    snprintf(left_out + l, sizeof left_out - l, "%s%.60s", nleft ? "; " : "",
                             ss.s[i].label);
                break;
            }
        nleft++;
    }
    if (ss.nstyles > 1 || (ss.n && ss.s[0].label[0])) {
        for (int st = 0; st < ss.nstyles; st++)
            for (int i = 0; i < ss.n && (runs[st] || d.show_bad); i++)
                if (ss.s[i].style == st) {
                    lg_add(&lg, ss.s[i].label, st, LG_LINE);
                    break;
                }
    }
    for (int i = d.nparts; i-- > 0;)
        lg_add(&lg, stacks[d.which].name[i], i + (d.which ? 3 : 0), LG_FILL);
    if (d.pe >= 0) {
        lg_add(&lg, "least energy", 0, LG_BEST);
        lg_add(&lg, "within 1% of least", 0, LG_BAND);
    }
    lg_add(&lg, "max clock", 0, LG_VDOT);
    lg_add_choice(&lg, k, obj.text);
    if (any_thr)
        lg_add(&lg, "throttled", 0, LG_HOLLOW);
    /* points that cannot run (too little memory, an infeasible clock) are
     * left out of the axes unless asked for: a series that cannot run at
     * all would otherwise stretch a log axis over decades */
    if (any_bad && d.show_bad) {
        lg_add(&lg, "cannot run", 0, LG_HOLLOW_GREY);
    } else if (any_bad) {
        char note[120];
        if (nleft && strlen(left_out) < 48 && nleft < 4)
            snprintf(note, sizeof note, "cannot run, left out: %.60s", left_out);
        else if (nleft)
            snprintf(note, sizeof note, "%d series cannot run, left out (--show-infeasible)",
                     nleft);
        else
            snprintf(note, sizeof note, "points that cannot run left out (--show-infeasible)");
        lg_add(&lg, note, 0, LG_HOLLOW_GREY);
    }
    for (int p = 0; p < d.np; p++)
        if ((d.pan[p] == &metrics[1] && isfinite(plim[0])) ||
            (d.pan[p] == &metrics[2] && isfinite(d.slow))) {
            lg_add(&lg, d.pan[p] == &metrics[1] ? "power limit" : "slowdown bound", 0, LG_REF);
        }
    lg_reserve(cr, &lg, o, W, &right, &bottom, 0);
    double gapx = 30, gapy = 4 + (fa.col >= 0 ? 13 : 0);
    double cw = (W - left - right - (fa.cols - 1) * gapx) / fa.cols;
    double fh = (H - top - bottom - (fa.rows - 1) * (gapy + 22)) / fa.rows;
    double ph = (fh - (d.np - 1) * 8) / d.np;
    double xlo = INFINITY, xhi = -INFINITY;
    for (size_t r = 0; r < n; r++)
        if (isfinite(x[r]) && (!o->log_x || x[r] > 0)) {
            xlo = fmin(xlo, x[r]);
            xhi = fmax(xhi, x[r]);
        }
    const double dxlo = xlo, dxhi = xhi;
    ax_range(&xlo, &xhi, o->log_x);
    axes first = {0};
    /* stacked panels label their quantities in one size: the largest at
     * which every label fits its panel's height */
    double label_pt = 8.5;
    style_font(cr, 8.5, 0);
    for (int p = 0; p < d.np; p++) {
        char lab[64];
        cairo_text_extents_t te;
        snprintf(lab, sizeof lab, "%s (m%s)", d.pan[p]->q, d.pan[p]->u);
        cairo_text_extents(cr, lab, &te);
        if (te.x_advance > ph)
            label_pt = fmin(label_pt, fmax(5, 8.5 * ph / te.x_advance));
    }
    double *lx = malloc((n + 1) * sizeof *lx), *ly = malloc((n + 1) * sizeof *ly);
    size_t lp = 0;
    for (int p = 0; p < d.np; p++) {
        double ylo = INFINITY, yhi = -INFINITY;
        int any_ok = 0;
        for (size_t r = 0; r < n; r++)
            any_ok |= ok[r] && isfinite(v[r * 3 + (size_t)p]);
        for (size_t r = 0; r < n; r++) {
            double yv = v[r * 3 + (size_t)p];
            if (isfinite(yv) && (!o->log_y || yv > 0) && (ok[r] || d.show_bad || !any_ok)) {
                ylo = fmin(ylo, yv);
                yhi = fmax(yhi, yv);
            }
        }
        for (int i = 0; i < ss.n; i++) {
            if (d.pan[p] == &metrics[1] && isfinite(plim[i]) && plim[i] < yhi * 1.6)
                yhi = fmax(yhi, plim[i]);
            if (d.pan[p] == &metrics[2] && isfinite(d.slow) && isfinite(tfast[i]))
                yhi = fmax(yhi, tfast[i] * (1 + d.slow / 100));
        }
        int zero = d.nparts && p == d.pe && !o->log_y;
        if (zero)
            ylo = 0;
        const double dylo = ylo, dyhi = yhi;
        ax_range(&ylo, &yhi, o->log_y);
        if (zero)
            ylo = 0;
        for (int fi = 0; fi < fa.n; fi++) {
            int cx = fi % fa.cols, cy = fi / fa.cols;
            axes a = {left + cx * (cw + gapx), top + cy * (fh + gapy + 22) + p * (ph + 8), cw, ph,
                      xlo, xhi, ylo, yhi, o->log_x, o->log_y, 0, 0,
                      .label_pt = label_pt, .data_xmin = dxlo, .data_xmax = dxhi,
                      .data_ymin = dylo, .data_ymax = dyhi};
            int last_row = cy == fa.rows - 1 || fi + fa.cols >= fa.n;
            (void)last_row;
            ax_draw(cr, &a, "SM clock", "MHz", cx == 0 ? d.pan[p]->q : NULL, d.pan[p]->u,
                    p == d.np - 1);
            if (p == 0)
                facet_title(cr, &a, t, &fa, fi);
            ef_panel(cr, &d, &fa, fi, p, &a);
            if (p == 0 && fi == 0)
                first = a;
            for (size_t r = 0; lx && ly && p == 0 && r < n; r++)
                if (in_facet(t, &fa, fi, r) && isfinite(v[r * 3]) && isfinite(x[r]) &&
                    (!o->log_y || v[r * 3] > 0)) {
                    lx[lp] = ax_x(&a, x[r]);
                    ly[lp++] = ax_y(&a, v[r * 3]);
                }
        }
    }
    if (lg.where == 1) {
        /* right of the last column of axes */
        first.x0 = left + (fa.cols - 1) * (cw + gapx);
    }
    lg_draw(cr, &lg, &first, left, W, H, lx, ly, lp);
    free(lx);
    free(ly);
    fig_title(cr, o, W);
    rc = fig_close(f, err);
    free(x); free(v); free(pv); free(tm); free(tmp); free(sd); free(ok); free(th); free(ix);
    series_free(&ss);
    return rc;
}

/* ---- Pareto --------------------------------------------------------------------- */

/* The columns that end a workload's key: the decision variables. */
static int decision_col(const wl_results_table *t, int clock_col)
{
    int v = wl_results_table_col(t, "voltage_offset_mv"), f = wl_results_table_col(t, "fixed_voltage_mv");
    int stop = clock_col;
    if (v >= 0 && v < stop)
        stop = v;
    if (f >= 0 && f < stop)
        stop = f;
    return stop;
}

/* on[r]: r is on its series' front among the rows that can run. */
static int series_fronts(const series_set *ss, const double *px, const double *py,
                         const unsigned char *ok, unsigned char *on, size_t n)
{
    double *pts = malloc((n + 1) * 2 * sizeof *pts);
    size_t *idx = malloc((n + 1) * sizeof *idx);
    unsigned char *tmp = malloc(n + 1);
    int rc = pts && idx && tmp ? WL_OK : WL_ENOMEM;
    memset(on, 0, n);
    for (int i = 0; !rc && i < ss->n; i++) {
        size_t m = 0;
        for (size_t j = 0; j < ss->s[i].n; j++) {
            size_t r = ss->s[i].rows[j];
            if (!ok[r] || !isfinite(px[r]) || !isfinite(py[r]))
                continue;
            pts[2 * m] = px[r];
            pts[2 * m + 1] = py[r];
            idx[m++] = r;
        }
        rc = wl_pareto_front(pts, m, 2, tmp);
        for (size_t q = 0; !rc && q < m; q++)
            on[idx[q]] = tmp[q];
    }
    free(pts);
    free(idx);
    free(tmp);
    return rc;
}

/* An axis's unit for a column over [lo, hi] of the whole figure: time_ms
 * stays in ms; energy_j, power_w and other SI columns take the prefix of
 * the largest value (*f: the factor to scale values by); others none. */
static void axis_unit(const char *col, double lo, double hi, char *unit, size_t n, double *f)
{
    static const struct {
        const char *col, *base;
    } si[] = {{"energy_j", "J"}, {"power_w", "W"}, {"time_s", "s"}};
    *f = 1;
    snprintf(unit, n, "%s", !strcmp(col, "time_ms") ? "ms" : "");
    for (size_t i = 0; i < sizeof si / sizeof *si; i++)
        if (!strcmp(col, si[i].col)) {
            const char *prefix = "";
            *f = wl_plot_si(fmax(fabs(lo), fabs(hi)), &prefix);
            snprintf(unit, n, "%s%s", prefix, si[i].base);
        }
}

/* Each front's name beside it, where it covers no chosen ring, no other
 * name and stays inside the axes: beside its fast end (right, left,
 * above), its slow end, or the end of its dominated tail, the first
 * place free (else the least covered). idx: scratch of the rows. */
static void front_labels(cairo_t *cr, const axes *a, const wl_results_table *t, const facets *fa,
                         int fi, const series_set *ss, const double *px, const double *py,
                         const unsigned char *on, const long *chosen, double *idx)
{
    double boxes[MAXSERIES * 2][4]; /* rings, then the names placed */
    int nb = 0;
    for (int i = 0; i < ss->n && nb < MAXSERIES; i++) {
        long c = chosen[i];
        if (ss->s[i].facet != fi || c < 0 || !in_facet(t, fa, fi, (size_t)c))
            continue;
        double X = ax_x(a, px[c]), Y = ax_y(a, py[c]);
        double *b = boxes[nb++];
        b[0] = X - 5.5, b[1] = Y - 5.5, b[2] = X + 5.5, b[3] = Y + 5.5;
    }
    style_font(cr, 5.5, 0);
    for (int i = 0; i < ss->n && nb < MAXSERIES * 2; i++) {
        const series *s = &ss->s[i];
        if (s->facet != fi)
            continue;
        size_t nf = 0, tail = (size_t)-1;
        for (size_t j = 0; j < s->n; j++) {
            size_t r = s->rows[j];
            if (!in_facet(t, fa, fi, r) || !isfinite(px[r]) || !isfinite(py[r]))
                continue;
            if (on[r])
                idx[nf++] = (double)r;
            if (tail == (size_t)-1 || px[r] > px[tail])
                tail = r;
        }
        if (!nf)
            continue;
        sort_rows_by(idx, nf, px);
        size_t fast = (size_t)idx[0], slow = (size_t)idx[nf - 1];
        cairo_text_extents_t te;
        cairo_text_extents(cr, s->label, &te);
        double w = te.x_advance, h = 6;
        double fX = ax_x(a, px[fast]), fY = ax_y(a, py[fast]);
        double sX = ax_x(a, px[slow]), sY = ax_y(a, py[slow]);
        double tX = ax_x(a, px[tail]), tY = ax_y(a, py[tail]);
        /* left x and middle y of each candidate */
        double cand[6][2] = {{fX + 4, fY - 5},     {fX - 4 - w, fY - 5}, {fX - w / 2, fY - 9},
                             {sX + 4, sY + 5},     {tX - w / 2, tY - 7}, {tX + 4, tY}};
        int best = 0, best_hits = 1 << 30;
        for (int k = 0; k < 6 && best_hits; k++) {
            double x0 = cand[k][0], y0 = cand[k][1] - h / 2, x1 = x0 + w, y1 = y0 + h;
            int hits = (x0 < a->x0 + 1 || x1 > a->x0 + a->w - 1 || y0 < a->y0 + 1 ||
                        y1 > a->y0 + a->h - 1) ? 100 : 0;
            for (int q = 0; q < nb; q++)
                hits += x0 < boxes[q][2] && x1 > boxes[q][0] && y0 < boxes[q][3] &&
                        y1 > boxes[q][1];
            if (hits < best_hits) {
                best_hits = hits;
                best = k;
            }
        }
        double X = cand[best][0], Y = cand[best][1];
        X = fmin(fmax(X, a->x0 + 1), a->x0 + a->w - 1 - w);
        Y = fmin(fmax(Y, a->y0 + 1 + h / 2), a->y0 + a->h - 1 - h / 2);
        if (best_hits) {
            /* fronts that nearly coincide leave no free place by the front:
             * the name moves up or down, in steps of a line, to the nearest
             * free place right or left of the fast end, and a leader line
             * ties it to that end */
            int found = 0;
            for (int j = 1; j <= 40 && !found; j++)
                for (int side = 0; side < 4 && !found; side++) {
                    double x0 = side & 1 ? fX - 10 - w : fX + 10;
                    double yc = fY + (side & 2 ? 1 : -1) * j * (h + 1);
                    double y0 = yc - h / 2, x1 = x0 + w, y1 = y0 + h;
                    if (x0 < a->x0 + 1 || x1 > a->x0 + a->w - 1 || y0 < a->y0 + 1 ||
                        y1 > a->y0 + a->h - 1)
                        continue;
                    int hits = 0;
                    for (int q = 0; q < nb && !hits; q++)
                        hits = x0 < boxes[q][2] && x1 > boxes[q][0] && y0 < boxes[q][3] &&
                               y1 > boxes[q][1];
                    if (hits)
                        continue;
                    found = 1;
                    X = x0, Y = yc;
                    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
                    cairo_set_line_width(cr, 0.4);
                    cairo_move_to(cr, side & 1 ? X + w + 0.5 : X - 0.5, Y);
                    cairo_line_to(cr, fX, fY);
                    cairo_stroke(cr);
                }
        }
        double *b = boxes[nb++];
        b[0] = X, b[1] = Y - h / 2, b[2] = X + w, b[3] = Y + h / 2;
        /* a white halo keeps the name legible over the points */
        cairo_set_source_rgba(cr, 1, 1, 1, 0.75);
        cairo_rectangle(cr, X - 0.5, Y - h / 2, w + 1, h);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        style_text(cr, X, Y, s->label, 0, 0.5);
    }
}

int wl_plot_pareto(const wl_results_table *t, const wl_plot_kind_options *k,
                   const wl_plot_options *o, const char *path, wl_error *err)
{
    if (need_points(t, "pareto", err))
        return WL_EPARSE;
    const char *xn = k && k->x ? k->x : "time_ms", *yn = k && k->y ? k->y : "energy_j";
    int xc = need_col(t, xn, err), yc = xc >= 0 ? need_col(t, yn, err) : -1;
    int cc = yc >= 0 ? need_col(t, "sm_clock_mhz", err) : -1;
    if (cc < 0)
        return WL_EPARSE;
    /* left to choose, an axis whose data span more than a decade is
     * logarithmic */
    wl_plot_options scale = *o;
    if (!o->linear) {
        scale.log_x |= wide_span(t, xc);
        scale.log_y |= wide_span(t, yc);
    }
    o = &scale;
    /* points are coloured by the clock they run at */
    int ec = wl_results_table_col(t, "effective_clock_mhz");
    int colc = ec >= 0 ? ec : cc;
    wl_pareto_objective obj;
    int rc = objective_of(k, &obj, err);
    int tcol = -1, pcol = -1, encol = -1;
    if (!rc && k && k->objective &&
        ((tcol = need_col(t, "time_ms", err)) < 0 || (pcol = need_col(t, "power_w", err)) < 0 ||
         (encol = need_col(t, "energy_j", err)) < 0))
        rc = WL_EPARSE;
    facets fa;
    if (!rc)
        rc = facets_of(t, k ? k->facet : NULL, &fa, err);
    if (rc)
        return rc;
    series_set ss;
    if ((rc = build_series(t, decision_col(t, cc), fa.col, &ss, err)))
        return rc;
    int nstyles = ss.nstyles;
    if ((rc = split_by_facet(t, &fa, &ss))) {
        series_free(&ss);
        return rc;
    }
    size_t n = wl_results_table_rows(t);
    double *px = malloc((n + 1) * sizeof *px), *py = malloc((n + 1) * sizeof *py),
           *pc = malloc((n + 1) * sizeof *pc), *tm = malloc((n + 1) * 3 * sizeof *tm),
           *tmp = malloc((n + 1) * 4 * sizeof *tmp);
    unsigned char *ok = malloc(n + 1), *on = malloc(n + 1);
    long *chosen = malloc(((size_t)ss.n + 1) * sizeof *chosen);
    if (!px || !py || !pc || !tm || !tmp || !ok || !on || !chosen)
        rc = WL_ENOMEM;
    if (!rc)
        rc = rows_ok(t, ok, err);
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY, clo = INFINITY,
           chi = -INFINITY;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, xc, &px[r], err);
        if (!rc) rc = num_cell(t, r, yc, &py[r], err);
        if (!rc) rc = num_cell(t, r, colc, &pc[r], err);
        if (!rc && tcol >= 0) {
            rc = num_cell(t, r, tcol, &tm[r], err);
            if (!rc) rc = num_cell(t, r, pcol, &tm[n + r], err);
            if (!rc) rc = num_cell(t, r, encol, &tm[2 * n + r], err);
        }
        if (rc || !isfinite(px[r]) || !isfinite(py[r]))
            continue;
        if ((o->log_x && px[r] <= 0) || (o->log_y && py[r] <= 0))
            continue;
        xlo = fmin(xlo, px[r]); xhi = fmax(xhi, px[r]);
        ylo = fmin(ylo, py[r]); yhi = fmax(yhi, py[r]);
        if (ok[r] && isfinite(pc[r])) {
            clo = fmin(clo, pc[r]);
            chi = fmax(chi, pc[r]);
        }
    }
    if (!rc)
        rc = series_fronts(&ss, px, py, ok, on, n);
    for (int i = 0; !rc && i < ss.n; i++)
        chosen[i] = k && k->objective
                        ? choose_row(&obj, ss.s[i].rows, ss.s[i].n, ok, tm, tm + n, tm + 2 * n, tmp)
                        : -1;
    fig *f = NULL;
    if (!rc && !isfinite(xlo)) {
        wl_error_set(err, table_path(t), 0, yn, "nothing to plot");
        rc = WL_EINVAL;
    }
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (rc) {
        free(px); free(py); free(pc); free(tm); free(tmp); free(ok); free(on); free(chosen);
        series_free(&ss);
        return rc;
    }
    /* one unit per axis for the whole figure (its panels' ranges differ):
     * time in ms, the column's own, in every pareto figure, so a training
     * step's and a prefill's read alike; energy and other SI quantities
     * with the prefix of the figure's largest value */
    const char *xq = !strcmp(xn, "time_ms") ? "Time" : xn, *yq = !strcmp(yn, "energy_j") ? "Energy" : yn;
    char xu[16], yu[16];
    double fx = 1, fy = 1;
    axis_unit(xn, xlo, xhi, xu, sizeof xu, &fx);
    axis_unit(yn, ylo, yhi, yu, sizeof yu, &fy);
    if (!(chi > clo)) {
        clo = isfinite(clo) ? clo - 1 : 0;
        chi = clo + 2;
    }
    cairo_t *cr = fig_cr(f);
    double W = fig_w(f), H = fig_h(f);
    double top = fig_top(cr, o, W) + (fa.col >= 0 ? 11 : 0), bottom = 26, left = 44, right = 56;
    legend_t lg = {.n = 0};
    /* fronts are told apart by dash and by a label at their fast end; the
     * legend says what the marks mean */
    /* fronts are told apart by dash, named at their fast ends (up to six;
     * beyond that in the legend); the legend says what the marks mean */
    if (nstyles > 6)
        lg_add_series(&lg, &ss, LG_DASH);
    lg_add(&lg, "front (coloured by clock)", 0, LG_DASH);
    lg_add(&lg, "dominated", 0, LG_FADED);
    int any_bad = 0;
    for (size_t r = 0; r < n; r++)
        any_bad |= !ok[r];
    if (any_bad)
        lg_add(&lg, "cannot run", 0, LG_HOLLOW_GREY);
    lg_add_choice(&lg, k, obj.text);
    lg_reserve(cr, &lg, o, W, &right, &bottom, 1);
    double gapx = 30, gapy = 22 + (fa.col >= 0 ? 13 : 0);
    double cw = (W - left - right - (fa.cols - 1) * gapx) / fa.cols;
    double chh = (H - top - bottom - (fa.rows - 1) * gapy) / fa.rows;
    axes first = {0};
    for (size_t r = 0; r < n; r++) {
        px[r] *= fx;
        py[r] *= fy;
    }
    for (int fi = 0; fi < fa.n; fi++) {
        int cx = fi % fa.cols, cy = fi / fa.cols;
        /* each panel its own ranges (shared ones made each front a few
         * pixels long): the points that can run, or all where none can */
        double fxlo = INFINITY, fxhi = -INFINITY, fylo = INFINITY, fyhi = -INFINITY;
        for (int pass = 0; pass < 2 && !isfinite(fxlo); pass++)
            for (size_t r = 0; r < n; r++) {
                if (!in_facet(t, &fa, fi, r) || (pass == 0 && !ok[r]) || !isfinite(px[r]) ||
                    !isfinite(py[r]) || (o->log_x && px[r] <= 0) || (o->log_y && py[r] <= 0))
                    continue;
                fxlo = fmin(fxlo, px[r]); fxhi = fmax(fxhi, px[r]);
                fylo = fmin(fylo, py[r]); fyhi = fmax(fyhi, py[r]);
            }
        const double d[4] = {fxlo, fxhi, fylo, fyhi};
        ax_range(&fxlo, &fxhi, o->log_x);
        ax_range(&fylo, &fyhi, o->log_y);
        axes a = {left + cx * (cw + gapx), top + cy * (chh + gapy), cw, chh, fxlo, fxhi, fylo,
                  fyhi, o->log_x, o->log_y, 0, 1, .data_xmin = d[0], .data_xmax = d[1],
                  .data_ymin = d[2], .data_ymax = d[3]};
        if (fi == 0)
            first = a;
        ax_draw(cr, &a, xq, xu, cx == 0 ? yq : NULL, yu, 1);
        facet_title(cr, &a, t, &fa, fi);
        cairo_save(cr);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_clip(cr);
        /* cannot run: hollow grey; dominated: faded; the front on top */
        for (int pass = 0; pass < 3; pass++)
            for (size_t r = 0; r < n; r++) {
                if (!in_facet(t, &fa, fi, r) || !isfinite(px[r]) || !isfinite(py[r]) ||
                    (o->log_x && px[r] <= 0) || (o->log_y && py[r] <= 0))
                    continue;
                int state = !ok[r] ? 0 : on[r] ? 2 : 1;
                if (state != pass)
                    continue;
                double X = ax_x(&a, px[r]), Y = ax_y(&a, py[r]);
                cairo_new_path(cr);
                if (state == 0) {
                    cairo_set_source_rgb(cr, 0.55, 0.55, 0.55);
                    cairo_set_line_width(cr, 0.5);
                    cairo_arc(cr, X, Y, 1.6, 0, 2 * M_PI);
                    cairo_stroke(cr);
                    continue;
                }
                double rgb[3];
                colormap(o->palette, (pc[r] - clo) / (chi - clo), rgb);
                cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], state == 2 ? 1.0 : 0.25);
                cairo_arc(cr, X, Y, state == 2 ? 2.0 : 1.5, 0, 2 * M_PI);
                cairo_fill(cr);
            }
        /* each series' front as a step line, in x order, dashed by series */
        for (int i = 0; i < ss.n; i++) {
            const series *s = &ss.s[i];
            if (s->facet != fi)
                continue;
            size_t nf = 0;
            for (size_t j = 0; j < s->n; j++) {
                size_t r = s->rows[j];
                if (on[r] && in_facet(t, &fa, fi, r))
                    tmp[nf++] = (double)r;
            }
            sort_rows_by(tmp, nf, px);
            cairo_set_source_rgb(cr, 0, 0, 0);
            cairo_set_line_width(cr, 0.7);
            style_dash(cr, s->style);
            for (size_t j = 0; j < nf; j++) {
                size_t r = (size_t)tmp[j];
                double X = ax_x(&a, px[r]), Y = ax_y(&a, py[r]);
                if (j == 0)
                    cairo_move_to(cr, X, Y);
                else {
                    cairo_line_to(cr, X, ax_y(&a, py[(size_t)tmp[j - 1]]));
                    cairo_line_to(cr, X, Y);
                }
            }
            cairo_stroke(cr);
            cairo_set_dash(cr, NULL, 0, 0);
            long c = chosen[i];
            if (c >= 0 && in_facet(t, &fa, fi, (size_t)c))
                chosen_ring(cr, ax_x(&a, px[c]), ax_y(&a, py[c]));
        }
        if (nstyles > 1 && nstyles <= 6)
            front_labels(cr, &a, t, &fa, fi, &ss, px, py, on, chosen, tmp);
        cairo_restore(cr);
    }
    colorbar(cr, o->palette, W - 50, top, 6, H - top - bottom, clo, chi,
             ec >= 0 ? "Effective clock" : "SM clock", "MHz");
    lg_draw(cr, &lg, &first, left, W, H, NULL, NULL, 0);
    fig_title(cr, o, W);
    rc = fig_close(f, err);
    free(px); free(py); free(pc); free(tm); free(tmp); free(ok); free(on); free(chosen);
    series_free(&ss);
    return rc;
}

/* ---- normalised Pareto -------------------------------------------------------------- */

/* Each workload against its own maximum-clock point: x the slowdown (%),
 * y the energy relative to it. Workloads of any size share one axes, and
 * the isolines of constant EDP (E/E0 = k / (1 + s)) show where energy
 * saved outweighs time lost. */
int wl_plot_pareto_norm(const wl_results_table *t, const wl_plot_kind_options *k,
                        const wl_plot_options *o, const char *path, wl_error *err)
{
    if (need_points(t, "pareto-norm", err))
        return WL_EPARSE;
    int cc = need_col(t, "sm_clock_mhz", err);
    int tc = cc >= 0 ? need_col(t, "time_ms", err) : -1;
    int ec = tc >= 0 ? need_col(t, "energy_j", err) : -1;
    if (ec < 0)
        return WL_EPARSE;
    wl_pareto_objective obj;
    int pcol = -1;
    int rc = objective_of(k, &obj, err);
    if (!rc && k && k->objective && (pcol = need_col(t, "power_w", err)) < 0)
        rc = WL_EPARSE;
    if (rc)
        return rc;
    series_set ss;
    if ((rc = build_series(t, decision_col(t, cc), -1, &ss, err)))
        return rc;
    size_t n = wl_results_table_rows(t);
    double *clk = malloc((n + 1) * sizeof *clk), *tm = malloc((n + 1) * 3 * sizeof *tm),
           *sx = malloc((n + 1) * sizeof *sx), *ey = malloc((n + 1) * sizeof *ey),
           *tmp = malloc((n + 1) * 4 * sizeof *tmp);
    unsigned char *ok = malloc(n + 1), *on = malloc(n + 1);
    long *chosen = malloc(((size_t)ss.n + 1) * sizeof *chosen);
    if (!clk || !tm || !sx || !ey || !tmp || !ok || !on || !chosen)
        rc = WL_ENOMEM;
    if (!rc)
        rc = rows_ok(t, ok, err);
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, cc, &clk[r], err);
        if (!rc) rc = num_cell(t, r, tc, &tm[r], err);
        if (!rc) rc = num_cell(t, r, ec, &tm[2 * n + r], err);
        tm[n + r] = NAN;
        if (!rc && pcol >= 0) rc = num_cell(t, r, pcol, &tm[n + r], err);
    }
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int i = 0; !rc && i < ss.n; i++) {
        const series *s = &ss.s[i];
        long m = -1;
        for (size_t j = 0; j < s->n; j++) {
            size_t r = s->rows[j];
            if (ok[r] && isfinite(tm[r]) && isfinite(tm[2 * n + r]) && (m < 0 || clk[r] > clk[m]))
                m = (long)r;
        }
        for (size_t j = 0; j < s->n; j++) {
            size_t r = s->rows[j];
            sx[r] = ey[r] = NAN;
            if (m < 0 || !ok[r] || !isfinite(tm[r]) || !isfinite(tm[2 * n + r]))
                continue;
            sx[r] = 100 * (tm[r] / tm[(size_t)m] - 1);
            ey[r] = tm[2 * n + r] / tm[2 * n + (size_t)m];
        }
        chosen[i] = k && k->objective ? choose_row(&obj, s->rows, s->n, ok, tm, tm + n, tm + 2 * n, tmp)
                                      : -1;
    }
    if (!rc)
        rc = series_fronts(&ss, sx, ey, ok, on, n);
    /* the axes span the fronts (dominated points are not drawn) */
    for (size_t r = 0; !rc && r < n; r++)
        if (on[r]) {
            xlo = fmin(xlo, sx[r]); xhi = fmax(xhi, sx[r]);
            ylo = fmin(ylo, ey[r]); yhi = fmax(yhi, ey[r]);
        }
    fig *f = NULL;
    if (!rc && !isfinite(xlo)) {
        wl_error_set(err, table_path(t), 0, "energy_j", "no workload has a point that can run");
        rc = WL_EINVAL;
    }
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (!rc) {
        cairo_t *cr = fig_cr(f);
        double W = fig_w(f), H = fig_h(f);
        double top = fig_top(cr, o, W), bottom = 26, left = 44, right = 8;
        /* the maximum clock (0, 1) is always in view */
        xlo = fmin(xlo, 0);
        yhi = fmax(yhi, 1);
        const double d[4] = {xlo, xhi, ylo, yhi};
        ax_range(&xlo, &xhi, 0);
        ax_range(&ylo, &yhi, 0);
        legend_t lg = {.n = 0};
        for (int i = 0; i < ss.n; i++)
            lg_add(&lg, ss.s[i].label, i, LG_LINE);
        if (k && k->edp)
            lg_add(&lg, "constant EDP", 0, LG_REF);
        lg_add_choice(&lg, k, obj.text);
        lg_reserve(cr, &lg, o, W, &right, &bottom, 0);
        axes a = {left, top, W - left - right, H - top - bottom, xlo, xhi, ylo, yhi, 0, 0, 0, 0,
                  .data_xmin = d[0], .data_xmax = d[1], .data_ymin = d[2], .data_ymax = d[3]};
        ax_draw(cr, &a, "Slowdown vs max clock", "%", "Energy / at max clock", "", 1);
        cairo_save(cr);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_clip(cr);
        cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
        cairo_set_line_width(cr, 0.5);
        cairo_move_to(cr, a.x0, ax_y(&a, 1));
        cairo_line_to(cr, a.x0 + a.w, ax_y(&a, 1));
        cairo_stroke(cr);
        if (k && k->edp) {
            /* E/E0 (1 + s/100) = kk */
            static const double kk[] = {1.1, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5};
            double last_label = -INFINITY;
            style_font(cr, 5.5, 0);
            for (size_t q = 0; q < sizeof kk / sizeof *kk; q++) {
                cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
                cairo_set_line_width(cr, 0.5);
                style_dash(cr, 1);
                int started = 0;
                for (int st = 0; st <= 60; st++) {
                    double s = xlo + (xhi - xlo) * st / 60.0, y = kk[q] / (1 + s / 100);
                    if (1 + s / 100 <= 0)
                        continue;
                    if (!started)
                        cairo_move_to(cr, ax_x(&a, s), ax_y(&a, y));
                    else
                        cairo_line_to(cr, ax_x(&a, s), ax_y(&a, y));
                    started = 1;
                }
                cairo_stroke(cr);
                cairo_set_dash(cr, NULL, 0, 0);
                /* labelled at the right edge, none closer than 7 pt to
                 * the one above */
                double ye = kk[q] / (1 + xhi / 100), yy = ax_y(&a, ye) - 3;
                if (ye > ylo && ye < yhi && yy > a.y0 + 4 && yy > last_label + 7) {
                    char lab[32];
                    snprintf(lab, sizeof lab, "EDP x%.1f", kk[q]);
                    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
                    style_text(cr, a.x0 + a.w - 2, yy, lab, 1, 0.5);
                    last_label = yy;
                }
            }
        }
        for (int i = 0; i < ss.n; i++) {
            const series *s = &ss.s[i];
            size_t nf = 0;
            for (size_t j = 0; j < s->n; j++)
                if (on[s->rows[j]])
                    tmp[nf++] = (double)s->rows[j];
            sort_rows_by(tmp, nf, sx);
            style_color(cr, i, 1);
            style_dash(cr, i);
            cairo_set_line_width(cr, 1.0);
            for (size_t j = 0; j < nf; j++) {
                size_t r = (size_t)tmp[j];
                if (j == 0)
                    cairo_move_to(cr, ax_x(&a, sx[r]), ax_y(&a, ey[r]));
                else
                    cairo_line_to(cr, ax_x(&a, sx[r]), ax_y(&a, ey[r]));
            }
            cairo_stroke(cr);
            cairo_set_dash(cr, NULL, 0, 0);
            cairo_set_line_width(cr, 0.6);
            size_t every = nf > 14 ? (nf + 11) / 12 : 1;
            for (size_t j = 0; j < nf; j += every)
                style_marker(cr, i, ax_x(&a, sx[(size_t)tmp[j]]), ax_y(&a, ey[(size_t)tmp[j]]), 2.8, 1);
            long c = chosen[i];
            if (c >= 0 && isfinite(sx[c]))
                chosen_ring(cr, ax_x(&a, sx[c]), ax_y(&a, ey[c]));
        }
        cairo_restore(cr);
        lg_draw(cr, &lg, &a, left, W, H, NULL, NULL, 0);
        fig_title(cr, o, W);
        rc = fig_close(f, err);
    }
    free(clk); free(tm); free(sx); free(ey); free(tmp); free(ok); free(on); free(chosen);
    series_free(&ss);
    return rc;
}

static const wl_plot_kind kinds[] = {
    {"energy-freq", "energy vs SM clock per workload (sweep or predict output): the least "
                    "energy (large marker) and the clocks within 1% of it (shaded), the maximum "
                    "clock (square), throttled points hollow; points that cannot run left out "
                    "(grey with --show-infeasible)",
     wl_plot_energy_freq, NULL, "panels,stack,facet,objective,show-infeasible"},
    {"pareto", "energy vs time coloured by the clock points run at, dominated points faded, "
               "fronts as steps named at their ends",
     wl_plot_pareto, NULL, "facet,x,y,objective"},
    {"pareto-norm", "every workload's front on one axes: energy relative to the maximum clock "
                    "against the slowdown from it (--edp: isolines of constant EDP)",
     wl_plot_pareto_norm, NULL, "objective,edp"},
    {"heatmap", "a value over two swept parameters (a text column is categorical), cells that "
                "cannot run grey and hatched", wl_plot_heatmap, NULL, "x,y,z,normalize,reduce"},
    {"savings", "energy saved and runtime penalty per workload (optimize output); horizontal "
                "bars for more than 8", wl_plot_savings, NULL, "against"},
    {"validation", "predicted vs measured on log-log axes with y = x, a +-10% band, the MAPE "
                   "and interval bars; error vs clock, or per model at one clock (validate "
                   "output)", wl_plot_validation, NULL, "metric"},
    {"gpus", "energy saved at the chosen clock per workload, GPU beside GPU, the clock on each "
             "bar (optimize output of several GPUs)", wl_plot_gpus, NULL, ""},
    {"compare", "energy at the maximum and at the optimal clock per GPU (compare output)",
     wl_plot_compare, NULL, ""},
    {"importance", "feature importances of a learned model per target, the most important "
                   "first (learn --importance output)", wl_plot_importance, NULL, ""},
    {"timeline", "Gantt chart of a cluster --timeline trace (a row per GPU) with each GPU's "
                 "power underneath", NULL, wl_plot_timeline, ""},
};

size_t wl_plot_kind_count(void) { return sizeof kinds / sizeof *kinds; }

const wl_plot_kind *wl_plot_kind_at(size_t i)
{
    return i < wl_plot_kind_count() ? &kinds[i] : NULL;
}

const wl_plot_kind *wl_plot_kind_find(const char *name)
{
    for (size_t i = 0; i < wl_plot_kind_count(); i++)
        if (strcmp(kinds[i].name, name) == 0)
            return &kinds[i];
    return NULL;
}

wl_plot_kind_fn wl_plot_kind_lookup(const char *name)
{
    const wl_plot_kind *k = wl_plot_kind_find(name);
    return k ? k->fn : NULL;
}

int wl_plot_kind_has_option(const wl_plot_kind *k, const char *opt)
{
    size_t l = strlen(opt);
    for (const char *p = k->options; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == l && !strncmp(p, opt, l))
            return 1;
        p = e ? e + 1 : p + n;
    }
    return 0;
}

/* The kind options given (set in k) that kind does not read are refused,
 * as are values outside their words; errors name the option ("--facet"). */
int wl_plot_kind_options_check(const wl_plot_kind *kind, const wl_plot_kind_options *k,
                               const wl_plot_options *o, wl_error *err)
{
    const struct {
        int given;
        const char *name;
    } given[] = {{k->panels != NULL, "panels"},   {k->facet != NULL, "facet"},
                 {k->x != NULL, "x"},             {k->y != NULL, "y"},
                 {k->z != NULL, "z"},             {k->metric != NULL, "metric"},
                 {k->against != NULL, "against"}, {k->stack != 0, "stack"},
                 {k->normalize != 0, "normalize"}, {k->objective != NULL, "objective"},
                 {k->edp != 0, "edp"},            {k->reduce != NULL, "reduce"},
                 {k->show_infeasible != 0, "show-infeasible"}};
    char opt[32];
    for (size_t i = 0; i < sizeof given / sizeof *given; i++) {
        if (!given[i].given || wl_plot_kind_has_option(kind, given[i].name))
            continue;
        snprintf(opt, sizeof opt, "--%s", given[i].name);
        wl_error_set(err, opt, 0, "", "not an option of %s (its kind options: %s)", kind->name,
                     *kind->options ? kind->options : "none");
        return WL_EINVAL;
    }
    const struct {
        const char *value, *option, *allowed[4];
    } words[] = {{o->palette, "--palette", {"viridis", "cividis"}},
                 {k->metric, "--metric", {"time", "power", "energy"}},
                 {k->against, "--against", {"max-clock", "fastest"}},
                 {k->reduce, "--reduce", {"min", "mean"}}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        if (!words[i].value)
            continue;
        int ok = 0;
        size_t na = 0;
        for (; na < 4 && words[i].allowed[na]; na++)
            ok |= !strcmp(words[i].value, words[i].allowed[na]);
        if (ok)
            continue;
        wl_error_set(err, words[i].option, 0, "", "expected %s%s%s%s%s, got '%.60s'",
                     words[i].allowed[0], na > 2 ? ", " : " or ", words[i].allowed[1],
                     na > 2 ? " or " : "", na > 2 ? words[i].allowed[2] : "", words[i].value);
        return WL_EINVAL;
    }
    if (k->stack < 0 || k->stack > WL_PLOT_STACK_PHASES) {
        wl_error_set(err, "--stack", 0, "", "expected parts or phases");
        return WL_EINVAL;
    }
    if (k->objective) {
        wl_pareto_objective obj;
        wl_error e2 = {0};
        if (wl_pareto_objective_parse(k->objective, &obj, &e2)) {
            wl_error_set(err, "--objective", 0, "", "%s", e2.text);
            return WL_EINVAL;
        }
    }
    if (k->panels) {
        wl_core_strlist l = {0};
        int rc = wl_core_parse_names(k->panels, "--panels", 0, "", &l, err);
        for (size_t i = 0; !rc && i < l.n; i++)
            if (strcmp(l.v[i], "power") && strcmp(l.v[i], "time") && strcmp(l.v[i], "energy")) {
                wl_error_set(err, "--panels", 0, "", "expected power, time and energy, got "
                                                     "'%.60s'", l.v[i]);
                rc = WL_EINVAL;
            }
        if (!rc && l.n > 3) {
            wl_error_set(err, "--panels", 0, "", "at most three panels");
            rc = WL_EINVAL;
        }
        wl_core_strlist_free(&l);
        if (rc)
            return rc;
    }
    return WL_OK;
}

int wl_plot_draw(const wl_plot_kind *kind, const wl_results_table *t, const char *in_path,
                 const wl_plot_kind_options *k, const wl_plot_options *o, const char *path,
                 wl_error *err)
{
    int rc = wl_plot_kind_options_check(kind, k, o, err);
    if (rc)
        return rc;
    if (kind->file_fn) {
        if (!in_path) {
            wl_error_set(err, kind->name, 0, "", "draws from a file (a trace), not a table");
            return WL_EINVAL;
        }
        return kind->file_fn(in_path, o, path, err);
    }
    wl_results_table *own = NULL;
    if (!t && (rc = wl_results_table_load(in_path, &own, err)))
        return rc;
    rc = kind->fn(t ? t : own, k, o, path, err);
    wl_results_table_free(own);
    return rc;
}
