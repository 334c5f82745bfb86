/* What the figure kinds share: the metrics, rows grouped into series,
 * legends, the rows that can run, the objective's chosen row, facets and
 * fronts. */
#include "plot_internal.h"
#include "kinds_internal.h"
#include "../pareto/wattlas_pareto.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdlib.h>

const metric metrics[3] = {{"energy_j", "Energy", "J"},
                          {"power_w", "Power", "W"},
                          {"time_ms", "Time", "s"}};

#include <string.h>

/* ---- series: rows grouped by the parameter columns before the clock ------- */

void series_free(series_set *ss)
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
void label_part(char *buf, size_t n, const char *col, const char *val)
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
int build_series(const wl_results_table *t, int xcol, int skip, series_set *ss,
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
void lg_add_series(legend_t *lg, const series_set *ss, int kind)
{
    for (int st = 0; st < ss->nstyles; st++)
        for (int i = 0; i < ss->n; i++)
            if (ss->s[i].style == st) {
                lg_add(lg, ss->s[i].label, st, kind);
                break;
            }
}

/* The legend line of an objective's ring ("chosen: energy"), when k has one. */
void lg_add_choice(legend_t *lg, const wl_plot_kind_options *k, const char *text)
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
long choose_row(const wl_pareto_objective *obj, const size_t *rows, size_t n,
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
void chosen_ring(cairo_t *cr, double x, double y)
{
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.9);
    cairo_new_path(cr);
    cairo_arc(cr, x, y, 4.5, 0, 2 * M_PI);
    cairo_stroke(cr);
}

/* Row indices (held as doubles in idx) in ascending order of key. */
void sort_rows_by(double *idx, size_t n, const double *key)
{
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && key[(size_t)idx[b]] < key[(size_t)idx[b - 1]]; b--) {
            double q = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = q;
        }
}

int objective_of(const wl_plot_kind_options *k, wl_pareto_objective *obj, wl_error *err)
{
    if (!k || !k->objective)
        return WL_OK;
    int rc = wl_pareto_objective_parse(k->objective, obj, err);
    if (rc)
        wl_error_locate(err, "objective", 0);
    return rc;
}

/* The slowdown bound of an objective, percent (NaN: it has none). */
double slowdown_of(const wl_pareto_objective *obj)
{
    return strcmp(wl_pareto_objective_name(obj), "energy-within-slowdown") == 0 ? obj->param : NAN;
}

double power_cap_of(const wl_pareto_objective *obj)
{
    return strcmp(wl_pareto_objective_name(obj), "time-within-power") == 0 ? obj->param : NAN;
}

/* The board power limit of a row: a swept power_limit_w, or its GPU's
 * preset (NaN when neither is known). */
double power_limit_of(const wl_results_table *t, size_t r)
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

int facets_of(const wl_results_table *t, const char *name, facets *f, wl_error *err)
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

int in_facet(const wl_results_table *t, const facets *f, int fi, size_t r)
{
    return f->col < 0 || strcmp(wl_results_table_cell(t, r, f->col),
                                wl_results_table_cell(t, f->first[fi], f->col)) == 0;
}

/* Splits every series by facet: a sub-series per (workload, facet) with
 * the workload's style, so fronts, optima and choices are per panel. */
int split_by_facet(const wl_results_table *t, const facets *f, series_set *ss)
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

void facet_title(cairo_t *cr, const axes *a, const wl_results_table *t, const facets *f,
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

/* ---- fronts ------------------------------------------------------------------------ */

int decision_col(const wl_results_table *t, int clock_col)
{
    int v = wl_results_table_col(t, "voltage_offset_mv"), f = wl_results_table_col(t, "fixed_voltage_mv");
    int stop = clock_col;
    if (v >= 0 && v < stop)
        stop = v;
    if (f >= 0 && f < stop)
        stop = f;
    return stop;
}

int series_fronts(const series_set *ss, const double *px, const double *py,
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
