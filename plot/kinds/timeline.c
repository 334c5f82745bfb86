/* Figure kind timeline: the Chrome trace events of `wattlas cluster --timeline`
 * as a Gantt chart (a row per stage, named by its GPUs; a bar per task
 * coloured by its name) with a GPU's power, the stages' mean and the band
 * of their range, over the same time axis underneath. */
#include "../plot_internal.h"
#include "../kinds_internal.h"
#include "../../core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 4096
#define MAX_NAMES 8

typedef struct {
    int row, name;
    double t0, t1;
} bar;

typedef struct {
    int row;
    double t, w;
} level;

typedef struct {
    bar *bars;
    size_t nbars;
    level *lv;
    size_t nlv;
    const char *names[MAX_NAMES]; /* task names in order of first use */
    int nnames;
    const char *row_label[MAX_ROWS];
    int rows;
    double tmax, pmax;
} trace;

/* A finite number field of an event, or an error naming the line. */
static int field(const char *path, const wj_value *ev, const wj_value *obj, const char *key,
                 double lo, double hi, double *v, wl_error *err)
{
    const wj_value *x = obj ? wj_get(obj, key) : NULL;
    if (!x || x->type != WJ_NUMBER || !isfinite(x->num) || x->num < lo || x->num > hi) {
        wl_error_set(err, path, ev->line, key, "expected a number in [%g, %g]", lo, hi);
        return WL_EPARSE;
    }
    *v = x->num;
    return WL_OK;
}

static int name_index(trace *tr, const char *name)
{
    for (int i = 0; i < tr->nnames; i++)
        if (!strcmp(tr->names[i], name))
            return i;
    if (tr->nnames == MAX_NAMES)
        return MAX_NAMES - 1; /* the rest share the last colour */
    tr->names[tr->nnames] = name;
    return tr->nnames++;
}

static int load(const char *path, const wj_value *root, trace *tr, wl_error *err)
{
    const wj_value *evs = root->type == WJ_OBJECT ? wj_get(root, "traceEvents") : root;
    if (!evs || evs->type != WJ_ARRAY) {
        wl_error_set(err, path, root->line, "traceEvents",
                     "not a Chrome trace: expected a traceEvents array");
        return WL_EPARSE;
    }
    tr->bars = calloc(evs->n ? evs->n : 1, sizeof *tr->bars);
    tr->lv = calloc(evs->n ? evs->n : 1, sizeof *tr->lv);
    if (!tr->bars || !tr->lv)
        return WL_ENOMEM;
    for (size_t i = 0; i < evs->n; i++) {
        const wj_value *ev = &evs->items[i];
        const wj_value *ph = ev->type == WJ_OBJECT ? wj_get(ev, "ph") : NULL;
        if (!ph || ph->type != WJ_STRING) {
            wl_error_set(err, path, ev->line, "ph", "an event without its phase");
            return WL_EPARSE;
        }
        const wj_value *nm = wj_get(ev, "name"), *args = wj_get(ev, "args");
        double tid;
        int rc;
        if (strcmp(ph->str, "X") && strcmp(ph->str, "C") && strcmp(ph->str, "M"))
            continue; /* other phases are not drawn */
        if ((rc = field(path, ev, ev, "tid", 0, MAX_ROWS - 1, &tid, err)))
            return rc;
        int row = (int)tid;
        if (row + 1 > tr->rows)
            tr->rows = row + 1;
        if (!strcmp(ph->str, "M")) {
            const wj_value *label = args ? wj_get(args, "name") : NULL;
            if (nm && nm->type == WJ_STRING && !strcmp(nm->str, "thread_name") && label &&
                label->type == WJ_STRING)
                tr->row_label[row] = label->str;
            continue;
        }
        double ts, dur = 0;
        if ((rc = field(path, ev, ev, "ts", 0, 1e15, &ts, err)))
            return rc;
        if (!strcmp(ph->str, "X")) {
            if ((rc = field(path, ev, ev, "dur", 0, 1e15, &dur, err)))
                return rc;
            if (!nm || nm->type != WJ_STRING) {
                wl_error_set(err, path, ev->line, "name", "a task without a name");
                return WL_EPARSE;
            }
            tr->bars[tr->nbars++] = (bar){.row = row, .name = name_index(tr, nm->str),
                                          .t0 = ts * 1e-6, .t1 = (ts + dur) * 1e-6};
        } else {
            double w;
            if ((rc = field(path, ev, args, "power_w", 0, 1e6, &w, err)))
                return rc;
            tr->lv[tr->nlv++] = (level){.row = row, .t = ts * 1e-6, .w = w};
            tr->pmax = fmax(tr->pmax, w);
        }
        tr->tmax = fmax(tr->tmax, (ts + dur) * 1e-6);
    }
    if (!tr->nbars) {
        wl_error_set(err, path, root->line, "traceEvents", "no tasks (\"ph\": \"X\") to draw");
        return WL_EPARSE;
    }
    return WL_OK;
}

/* Light vertical grid lines at the time ticks. */
static void time_grid(cairo_t *cr, const axes *a)
{
    double ticks[16];
    int n = wl_plot_ticks(a->xmin, a->xmax, 7, ticks);
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_set_line_width(cr, 0.4);
    for (int i = 0; i < n; i++) {
        double x = ax_x(a, ticks[i]);
        cairo_move_to(cr, x, a->y0);
        cairo_line_to(cr, x, a->y0 + a->h);
    }
    cairo_stroke(cr);
}

/* The legend below the axes, in rows that wrap at the figure's width: the
 * task names that are drawn (fills), then the power: one GPU's line, or
 * the GPUs' mean and the band of their range. Returns its height; draws
 * only when y >= 0. */
static double legend_rows(cairo_t *cr, const trace *tr, int power, double left, double W,
                          double y)
{
    style_font(cr, 6.5, 0);
    double x = left, h = 9;
    int np = power ? (tr->rows > 1 ? 2 : 1) : 0;
    char mean[64];
    snprintf(mean, sizeof mean, "a GPU's power, mean of the %d stages", tr->rows);
    /* a task name whose bars are all thinner than a point's tenth (a
     * gradient sync of nothing) is drawn nowhere: not in the legend */
    double ink[MAX_NAMES] = {0}, unit = (tr->tmax > 0 ? tr->tmax : 1) / (W - left - 8);
    for (size_t b = 0; b < tr->nbars; b++)
        ink[tr->bars[b].name] = fmax(ink[tr->bars[b].name], tr->bars[b].t1 - tr->bars[b].t0);
    for (int i = 0; i < tr->nnames + np; i++) {
        if (i < tr->nnames && ink[i] < 0.1 * unit)
            continue;
        const char *text = i < tr->nnames ? tr->names[i]
                           : i == tr->nnames ? (tr->rows > 1 ? mean : "power")
                                             : "range over the stages";
        cairo_text_extents_t te;
        cairo_text_extents(cr, text, &te);
        double w = 12 + te.x_advance + 8;
        if (x > left && x + w > W - 2) {
            x = left;
            h += 9;
            if (y >= 0)
                y += 9;
        }
        if (y >= 0) {
            if (i < tr->nnames) {
                style_color(cr, i, 1);
                cairo_rectangle(cr, x, y - 3, 8, 5);
                cairo_fill(cr);
            } else if (i == tr->nnames) {
                cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
                cairo_set_line_width(cr, 0.9);
                cairo_move_to(cr, x, y - 0.5);
                cairo_line_to(cr, x + 9, y - 0.5);
                cairo_stroke(cr);
            } else {
                cairo_set_source_rgba(cr, 0.2, 0.2, 0.2, 0.22);
                cairo_rectangle(cr, x, y - 3, 9, 5);
                cairo_fill(cr);
            }
            cairo_set_source_rgb(cr, 0, 0, 0);
            style_text(cr, x + 11, y - 0.5, text, 0, 0.5);
        }
        x += w;
    }
    return h + 3;
}

static int by_time(const void *a, const void *b)
{
    const level *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : x->row - y->row;
}

/* The GPUs' power over time as steps: at each time a level changes, the
 * mean over the GPUs that have started and their least and greatest
 * (t, mean, lo, hi: n of each, returned; 0 when out of memory). */
static size_t power_steps(const trace *tr, double **out)
{
    *out = NULL;
    level *lv = malloc((tr->nlv + 1) * sizeof *lv);
    double *cur = malloc(((size_t)tr->rows + 1) * sizeof *cur);
    double *st = malloc((tr->nlv + 1) * 4 * sizeof *st);
    if (!lv || !cur || !st) {
        free(lv);
        free(cur);
        free(st);
        return 0;
    }
    memcpy(lv, tr->lv, tr->nlv * sizeof *lv);
    qsort(lv, tr->nlv, sizeof *lv, by_time);
    for (int r = 0; r < tr->rows; r++)
        cur[r] = NAN;
    size_t n = 0;
    /* changes closer together than a fraction of a point on the axis are
     * one step: a GPU idle for a microsecond between two tasks would
     * otherwise draw a spike down to its idle power */
    double eps = 2e-4 * (tr->tmax > 0 ? tr->tmax : 1);
    for (size_t i = 0; i < tr->nlv;) {
        double t = lv[i].t;
        for (; i < tr->nlv && lv[i].t <= t + eps; i++)
            cur[lv[i].row] = lv[i].w;
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        int k = 0;
        for (int r = 0; r < tr->rows; r++)
            if (isfinite(cur[r])) {
                sum += cur[r];
                lo = fmin(lo, cur[r]);
                hi = fmax(hi, cur[r]);
                k++;
            }
        st[4 * n] = t;
        st[4 * n + 1] = sum / k;
        st[4 * n + 2] = lo;
        st[4 * n + 3] = hi;
        n++;
    }
    free(lv);
    free(cur);
    *out = st;
    return n;
}

/* Row r's name: the trace's own ("stage 1: GPUs 2-3"), else its stage. */
static void row_name(const trace *tr, int r, char *buf, size_t n)
{
    if (tr->row_label[r] && tr->row_label[r][0])
        snprintf(buf, n, "%.60s", tr->row_label[r]);
    else
        snprintf(buf, n, "stage %d", r);
}

static void draw(cairo_t *cr, const trace *tr, const wl_plot_options *o, double W, double H)
{
    int rows = tr->rows, power = tr->nlv > 0;
    /* the rows' names: the trace's own ("stage 1: GPUs 2-3"), else the stage */
    style_font(cr, rows > 16 ? 4.5 : 6, 0);
    double lw = 0;
    for (int r = 0; r < rows && r < MAX_ROWS; r++) {
        char lab[64];
        row_name(tr, r, lab, sizeof lab);
        cairo_text_extents_t te;
        cairo_text_extents(cr, lab, &te);
        lw = fmax(lw, te.x_advance);
    }
    double top = fig_top(cr, o, W), left = fmax(40, fmin(lw + 8, W * 0.4)), right = 8;
    double legend_h = legend_rows(cr, tr, power, left, W, -1), bottom = 28 + legend_h;
    double avail = H - top - bottom;
    double gantt_h = power ? avail * 0.58 : avail, gap = power ? 8 : 0;
    double tmax = tr->tmax > 0 ? tr->tmax : 1, lo = 0;
    axes g = {left, top, W - left - right, gantt_h, lo, tmax, 0, rows, 0, 0, 0, .fixed_units = 0};
    /* the Gantt: frame, grid, a row per stage (stage 0 on top) */
    time_grid(cr, &g);
    double rh = g.h / rows;
    for (size_t i = 0; i < tr->nbars; i++) {
        const bar *b = &tr->bars[i];
        double x0 = ax_x(&g, b->t0), x1 = ax_x(&g, b->t1);
        style_color(cr, b->name, 1);
        cairo_rectangle(cr, x0, g.y0 + rh * (b->row + 0.12), fmax(x1 - x0, 0.15), rh * 0.76);
        cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.6);
    cairo_rectangle(cr, g.x0, g.y0, g.w, g.h);
    cairo_stroke(cr);
    style_font(cr, rows > 16 ? 4.5 : 6, 0);
    int every = rows > 32 ? (rows + 31) / 32 : 1;
    for (int r = 0; r < rows; r += every) {
        char lab[64];
        row_name(tr, r, lab, sizeof lab);
        style_text(cr, g.x0 - 3, g.y0 + rh * (r + 0.5), lab, 1, 0.5);
    }
    if (power) {
        double plo = 0, phi = tr->pmax > 0 ? tr->pmax * 1.1 : 1;
        ax_range(&plo, &phi, 0);
        plo = 0;
        axes a = {left, top + gantt_h + gap, W - left - right, avail - gantt_h - gap, lo, tmax,
                  plo, phi, 0, 0, 0, .fixed_units = 0};
        ax_draw(cr, &a, "Time", "s", "Power", "W", 1);
        /* the GPUs' mean power as a step line over the band of their
         * range (eight lines drawn over one another are a solid block) */
        cairo_save(cr);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_clip(cr);
        double *st = NULL;
        size_t n = power_steps(tr, &st);
        for (int pass = tr->rows > 1 ? 0 : 1; pass < 2 && n; pass++) {
            cairo_new_path(cr);
            for (size_t i = 0; i < n; i++) {
                double x0 = ax_x(&a, st[4 * i]), x1 = ax_x(&a, i + 1 < n ? st[4 * (i + 1)] : tmax);
                if (pass == 0) { /* the range: a box per step */
                    double y0 = ax_y(&a, st[4 * i + 3]), y1 = ax_y(&a, st[4 * i + 2]);
                    cairo_rectangle(cr, x0, y0, x1 - x0, fmax(y1 - y0, 0.3));
                    continue;
                }
                double y = ax_y(&a, st[4 * i + 1]);
                if (i == 0)
                    cairo_move_to(cr, x0, y);
                else
                    cairo_line_to(cr, x0, y);
                cairo_line_to(cr, x1, y);
            }
            if (pass == 0) {
                cairo_set_source_rgba(cr, 0.2, 0.2, 0.2, 0.22);
                cairo_fill(cr);
            } else {
                cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
                cairo_set_line_width(cr, 0.8);
                cairo_stroke(cr);
            }
        }
        free(st);
        cairo_restore(cr);
    }
    /* the legend below the axes, never over the data */
    legend_rows(cr, tr, power, left, W, H - legend_h + 4);
    fig_title(cr, o, W);
}

int wl_plot_timeline(const char *trace_path, const wl_plot_options *o, const char *path,
                     wl_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = wl_core_read_file(trace_path, &text, &len, err);
    if (rc)
        return rc;
    int line = 0;
    char msg[160];
    wj_value *root = wj_parse(text, len, &line, msg, sizeof msg);
    free(text);
    if (!root) {
        wl_error_set(err, trace_path, line, "", "%s", msg);
        return WL_EPARSE;
    }
    trace tr = {0};
    rc = load(trace_path, root, &tr, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, trace_path, 0, "", "out of memory");
    fig *f = NULL;
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (!rc) {
        draw(fig_cr(f), &tr, o, fig_w(f), fig_h(f));
        rc = fig_close(f, err);
    }
    free(tr.bars);
    free(tr.lv);
    wj_free(root);
    return rc;
}

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_timeline = {
    .name = "timeline",
    .summary = "Gantt chart of a cluster --timeline trace (a row per GPU) with each GPU's "
               "power underneath",
    .file_fn = wl_plot_timeline,
    .options = "",
};
