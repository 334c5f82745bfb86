/* Figure kinds: energy-freq, pareto, heatmap, savings, validation, compare. */
#include "plot_internal.h"
#include "../pareto/wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXSERIES 16

/* ---- series: rows grouped by the parameter columns before the clock ------- */

typedef struct {
    char label[256];
    size_t *rows; /* ascending clock */
    size_t n;
} series;

typedef struct {
    series s[MAXSERIES];
    int n;
} series_set;

static void series_free(series_set *ss)
{
    for (int i = 0; i < ss->n; i++)
        free(ss->s[i].rows);
}

static int build_series(const wl_results_table *t, int xcol, series_set *ss, wl_error *err)
{
    memset(ss, 0, sizeof *ss);
    size_t n = wl_results_table_rows(t);
    int first_param = 0, last_param = xcol; /* columns [0, xcol) name a series */
    for (size_t r = 0; r < n; r++) {
        int i;
        for (i = 0; i < ss->n; i++)
            if (wl_results_table_same(t, ss->s[i].rows[0], r, NULL, (size_t)last_param))
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
            ss->n++;
        }
        ss->s[i].rows[ss->s[i].n++] = r;
    }
    /* labels: only the columns that differ between series */
    for (int c = first_param; c < last_param; c++) {
        int varies = 0;
        for (int i = 1; i < ss->n && !varies; i++)
            varies = strcmp(wl_results_table_cell(t, ss->s[i].rows[0], c),
                            wl_results_table_cell(t, ss->s[0].rows[0], c)) != 0;
        if (!varies)
            continue;
        for (int i = 0; i < ss->n; i++) {
            size_t l = strlen(ss->s[i].label);
            snprintf(ss->s[i].label + l, sizeof ss->s[i].label - l, "%s%s", l ? " " : "",
                     wl_results_table_cell(t, ss->s[i].rows[0], c));
        }
    }
    if (ss->n == 1 && !ss->s[0].label[0])
        snprintf(ss->s[0].label, sizeof ss->s[0].label, "%s",
                 wl_results_table_cell(t, ss->s[0].rows[0], wl_results_table_col(t, "model") >= 0
                                                             ? wl_results_table_col(t, "model")
                                                             : 0));
    return WL_OK;
}

/* Legend in the corner of the area (a) that covers the fewest of the n
 * device points (px, py); a NULL a puts it at the top right of (x_right,
 * y_top). */
static void legend_at(cairo_t *cr, const series_set *ss, const axes *a, const double *px,
                      const double *py, size_t np, double x_right, double y_top, int markers);

static void legend(cairo_t *cr, const series_set *ss, double x_right, double y_top, int markers)
{
    legend_at(cr, ss, NULL, NULL, NULL, 0, x_right, y_top, markers);
}

static void legend_at(cairo_t *cr, const series_set *ss, const axes *a, const double *px,
                      const double *py, size_t np, double x_right, double y_top, int markers)
{
    style_font(cr, 6.5, 0);
    double wmax = 0;
    for (int i = 0; i < ss->n; i++) {
        cairo_text_extents_t te;
        cairo_text_extents(cr, ss->s[i].label, &te);
        wmax = fmax(wmax, te.x_advance);
    }
    double bw = wmax + 20, bh = ss->n * 8.5 + 3, x = x_right - bw - 3, y = y_top + 3;
    if (a) {
        double cx[4] = {a->x0 + a->w - bw - 3, a->x0 + 3, a->x0 + a->w - bw - 3, a->x0 + 3};
        double cy[4] = {a->y0 + 3, a->y0 + 3, a->y0 + a->h - bh - 3, a->y0 + a->h - bh - 3};
        size_t best = (size_t)-1;
        for (int c = 0; c < 4; c++) {
            size_t hits = 0;
            for (size_t i = 0; i < np; i++)
                hits += px[i] >= cx[c] - 3 && px[i] <= cx[c] + bw + 3 && py[i] >= cy[c] - 3 &&
                        py[i] <= cy[c] + bh + 3;
            if (hits < best) {
                best = hits;
                x = cx[c];
                y = cy[c];
            }
        }
    }
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    cairo_rectangle(cr, x, y, bw, bh);
    cairo_fill(cr);
    for (int i = 0; i < ss->n; i++) {
        double yy = y + 6 + i * 8.5;
        style_color(cr, i, 1);
        cairo_set_line_width(cr, 1.0);
        style_dash(cr, i);
        cairo_move_to(cr, x + 2, yy);
        cairo_line_to(cr, x + 14, yy);
        cairo_stroke(cr);
        if (markers) {
            cairo_set_line_width(cr, 0.6);
            style_marker(cr, i, x + 8, yy, 3.2, 1);
        }
        cairo_set_source_rgb(cr, 0, 0, 0);
        style_text(cr, x + 17, yy, ss->s[i].label, 0, 0.5);
    }
    cairo_set_dash(cr, NULL, 0, 0);
}

/* ---- energy vs clock ------------------------------------------------------------ */

typedef struct {
    const char *col, *q, *u;
} metric;

static const metric metrics[] = {{"energy_j", "Energy", "J"},
                                 {"power_w", "Power", "W"},
                                 {"time_ms", "Time", "s"}};

int wl_plot_energy_freq(const wl_results_table *t, const wl_plot_kind_options *k,
                        const wl_plot_options *o, const char *path, wl_error *err)
{
    int xcol = need_col(t, "sm_clock_mhz", err);
    if (xcol < 0)
        return WL_EPARSE;
    int ecol = wl_results_table_col(t, "effective_clock_mhz");
    int thr = wl_results_table_col(t, "throttled");
    /* panels, top to bottom */
    const metric *pan[3];
    int np = 0;
    const char *spec = k && k->panels ? k->panels : "energy";
    char buf[64];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, ","); tok && np < 3; tok = strtok(NULL, ",")) {
        const metric *m = NULL;
        if (strcmp(tok, "energy") == 0) m = &metrics[0];
        else if (strcmp(tok, "power") == 0) m = &metrics[1];
        else if (strcmp(tok, "time") == 0) m = &metrics[2];
        if (!m) {
            wl_error_set(err, "panels", 0, "panels", "expected energy, power or time, got '%s'", tok);
            return WL_EINVAL;
        }
        pan[np++] = m;
    }
    int mcol[3];
    for (int p = 0; p < np; p++)
        if ((mcol[p] = need_col(t, pan[p]->col, err)) < 0)
            return WL_EPARSE;
    /* the stacked parts: what the energy is made of, or the phases it is
     * spent in (they add up to energy_j in every row) */
    static const struct {
        const char *col[3], *name[3];
        int n;
    } stacks[3] = {
        {{"energy_static_j", "energy_dyn_memory_j", "energy_dyn_compute_j"},
         {"static + idle", "dynamic memory", "dynamic compute"}, 3},
        {{"energy_fwd_j", "energy_bwd_j", "energy_opt_j"},
         {"forward", "backward", "optimizer"}, 3},
        {{"energy_prefill_j", "energy_decode_j", NULL}, {"prefill", "decode", NULL}, 2}};
    int partcol[3] = {-1, -1, -1}, which = 0, nparts = 0;
    if (k && k->stack == WL_PLOT_STACK_PHASES) {
        which = wl_results_table_col(t, "energy_fwd_j") >= 0 ? 1 : 2;
        /* a table with both modes: the training rows' phases when they are set */
        if (which == 1 && wl_results_table_rows(t) > 0 &&
            !wl_results_table_cell(t, 0, wl_results_table_col(t, "energy_fwd_j"))[0])
            which = 2;
    }
    const char *const *parts = stacks[which].col, *const *part_names = stacks[which].name;
    if (k && k->stack) {
        nparts = stacks[which].n;
        for (int i = 0; i < nparts; i++)
            if ((partcol[i] = need_col(t, parts[i], err)) < 0)
                return WL_EPARSE;
    }
    series_set ss;
    int rc = build_series(t, xcol, &ss, err);
    if (rc)
        return rc;
    if (k && k->stack && ss.n != 1) {
        series_free(&ss);
        wl_error_set(err, table_path(t), 0, "stack", "stacked energy parts need a single series, found %d (filter the table)", ss.n);
        return WL_EINVAL;
    }
    /* data */
    size_t n = wl_results_table_rows(t);
    double *x = malloc(n * sizeof *x), *eff = malloc(n * sizeof *eff), *th = malloc(n * sizeof *th);
    double *v = malloc(n * 3 * sizeof *v), *pv = malloc(n * 3 * sizeof *pv);
    if (!x || !eff || !th || !v || !pv)
        rc = WL_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, xcol, &x[r], err);
        eff[r] = x[r];
        th[r] = 0;
        if (!rc && ecol >= 0)
            rc = num_cell(t, r, ecol, &eff[r], err);
        if (!rc && thr >= 0)
            rc = num_cell(t, r, thr, &th[r], err);
        if (!rc && eff[r] < x[r] - 0.5)
            th[r] = 1;
        x[r] *= 1e6; /* MHz -> Hz: the axis picks its prefix */
        for (int p = 0; !rc && p < np; p++) {
            rc = num_cell(t, r, mcol[p], &v[r * 3 + (size_t)p], err);
            if (!rc && pan[p] == &metrics[2])
                v[r * 3 + (size_t)p] *= 1e-3; /* ms -> s, so the prefix picks ms */
        }
        for (int i = 0; !rc && i < nparts; i++)
            rc = num_cell(t, r, partcol[i], &pv[r * 3 + (size_t)i], err);
    }
    fig *f = NULL;
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (rc) {
        free(x); free(eff); free(th); free(v); free(pv);
        series_free(&ss);
        return rc;
    }
    cairo_t *cr = fig_cr(f);
    double W = fig_w(f), H = fig_h(f);
    double top = o->title ? 14 : 6, bottom = 26, left = 42, right = 6;
    double ph = (H - top - bottom - (np - 1) * 4) / np;
    double xlo = INFINITY, xhi = -INFINITY;
    for (size_t r = 0; r < n; r++)
        if (isfinite(x[r])) {
            xlo = fmin(xlo, x[r]);
            xhi = fmax(xhi, x[r]);
        }
    ax_range(&xlo, &xhi, o->log_x);
    for (int p = 0; p < np; p++) {
        double ylo = INFINITY, yhi = -INFINITY;
        for (size_t r = 0; r < n; r++)
            if (isfinite(v[r * 3 + (size_t)p])) {
                ylo = fmin(ylo, v[r * 3 + (size_t)p]);
                yhi = fmax(yhi, v[r * 3 + (size_t)p]);
            }
        if (partcol[0] >= 0 && pan[p] == &metrics[0])
            ylo = 0;
        ax_range(&ylo, &yhi, o->log_y);
        if (partcol[0] >= 0 && pan[p] == &metrics[0] && !o->log_y)
            ylo = 0;
        axes a = {left, top + p * (ph + 4), W - left - right, ph, xlo, xhi, ylo, yhi, o->log_x,
                  o->log_y};
        ax_draw(cr, &a, "SM clock", "Hz", pan[p]->q, pan[p]->u, p == np - 1);
        /* the x axis is in MHz: label values by the prefix of Hz */
        cairo_save(cr);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_clip(cr);
        if (partcol[0] >= 0 && pan[p] == &metrics[0]) {
            const series *s = &ss.s[0];
            /* the parts stacked: each band from the running sum up */
            double *base_prev = calloc(s->n ? s->n : 1, sizeof *base_prev);
            for (int i = 0; i < nparts && base_prev; i++) {
                cairo_new_path(cr);
                for (size_t j = 0; j < s->n; j++) {
                    size_t r = s->rows[j];
                    double top_v = base_prev[j] + pv[r * 3 + (size_t)i];
                    if (j == 0)
                        cairo_move_to(cr, ax_x(&a, x[r]), ax_y(&a, top_v));
                    else
                        cairo_line_to(cr, ax_x(&a, x[r]), ax_y(&a, top_v));
                }
                for (size_t j = s->n; j-- > 0;) {
                    size_t r = s->rows[j];
                    cairo_line_to(cr, ax_x(&a, x[r]), ax_y(&a, base_prev[j]));
                }
                cairo_close_path(cr);
                style_color(cr, i + 4, 0.55);
                cairo_fill(cr);
                for (size_t j = 0; j < s->n; j++)
                    base_prev[j] += pv[s->rows[j] * 3 + (size_t)i];
            }
            if (!base_prev)
                rc = WL_ENOMEM;
            free(base_prev);
        }
        for (int i = 0; i < ss.n; i++) {
            const series *s = &ss.s[i];
            style_color(cr, i, 1);
            style_dash(cr, i);
            cairo_set_line_width(cr, 1.0);
            int started = 0;
            for (size_t j = 0; j < s->n; j++) {
                size_t r = s->rows[j];
                double yv = v[r * 3 + (size_t)p];
                if (!isfinite(yv) || (o->log_y && yv <= 0))
                    continue;
                if (!started)
                    cairo_move_to(cr, ax_x(&a, x[r]), ax_y(&a, yv));
                else
                    cairo_line_to(cr, ax_x(&a, x[r]), ax_y(&a, yv));
                started = 1;
            }
            cairo_stroke(cr);
            cairo_set_line_width(cr, 0.6);
            /* energy-optimal and maximum clocks of the series */
            long best = -1, maxc = -1;
            size_t pe = 0; /* the energy panel decides the optimum */
            for (int q = 0; q < np; q++)
                if (pan[q] == &metrics[0])
                    pe = (size_t)q;
            for (size_t j = 0; j < s->n; j++) {
                size_t r = s->rows[j];
                if (isfinite(v[r * 3 + pe]) && (best < 0 || v[r * 3 + pe] < v[(size_t)best * 3 + pe]))
                    best = (long)r;
                if (maxc < 0 || x[r] > x[maxc])
                    maxc = (long)r;
            }
            /* markers on at most ~12 points per series, so dense clock grids
             * stay legible; throttled points hollow (the clock ran below
             * the request) */
            size_t every = s->n > 14 ? (s->n + 11) / 12 : 1;
            for (size_t j = 0; j < s->n; j++) {
                size_t r = s->rows[j];
                double yv = v[r * 3 + (size_t)p];
                if (!isfinite(yv) || (j % every != 0 && j + 1 != s->n))
                    continue;
                style_color(cr, i, 1);
                style_marker(cr, i, ax_x(&a, x[r]), ax_y(&a, yv), 2.8, th[r] == 0);
            }
            if (best >= 0 && isfinite(v[(size_t)best * 3 + (size_t)p])) {
                double bx = ax_x(&a, x[best]), by = ax_y(&a, v[(size_t)best * 3 + (size_t)p]);
                style_color(cr, i, 1);
                style_marker(cr, i, bx, by, 5.5, 1);
                cairo_set_source_rgb(cr, 0, 0, 0);
                cairo_set_line_width(cr, 0.8);
                style_marker(cr, i, bx, by, 5.5, 0);
            }
            if (maxc >= 0 && isfinite(v[(size_t)maxc * 3 + (size_t)p])) {
                cairo_set_source_rgb(cr, 0, 0, 0);
                cairo_set_line_width(cr, 0.7);
                double mx = ax_x(&a, x[maxc]), my = ax_y(&a, v[(size_t)maxc * 3 + (size_t)p]);
                cairo_rectangle(cr, mx - 3.2, my - 3.2, 6.4, 6.4);
                cairo_stroke(cr);
            }
        }
        cairo_restore(cr);
        if (p == 0) {
            if (partcol[0] >= 0) {
                /* the bands' legend, top band first */
                style_font(cr, 6.5, 0);
                double lx = a.x0 + 4, ly = a.y0 + 4;
                for (int i = 0; i < nparts; i++) {
                    int band = nparts - 1 - i;
                    style_color(cr, band + 4, 0.55);
                    cairo_rectangle(cr, lx, ly + i * 8, 8, 5);
                    cairo_fill(cr);
                    cairo_set_source_rgb(cr, 0, 0, 0);
                    style_text(cr, lx + 11, ly + i * 8 + 2.5, part_names[band], 0, 0.5);
                }
            }
            double *lx = malloc(n * sizeof *lx), *ly = malloc(n * sizeof *ly);
            size_t lp = 0;
            for (size_t r = 0; lx && ly && r < n; r++)
                if (isfinite(v[r * 3]) && isfinite(x[r])) {
                    lx[lp] = ax_x(&a, x[r]);
                    ly[lp++] = ax_y(&a, v[r * 3]);
                }
            legend_at(cr, &ss, partcol[0] >= 0 ? NULL : &a, lx, ly, lp, a.x0 + a.w, a.y0, 1);
            free(lx);
            free(ly);
        }
    }
    fig_title(cr, o, W);
    if (rc) {
        fig_abort(f);
        wl_error_set(err, path, 0, "", "out of memory drawing the figure");
    } else
        rc = fig_close(f, err);
    free(x); free(eff); free(th); free(v); free(pv);
    series_free(&ss);
    return rc;
}

/* ---- Pareto --------------------------------------------------------------------- */

static int pareto_panel(cairo_t *cr, const wl_results_table *t, const size_t *rows, size_t m,
                        int xc, int yc, int cc, const axes *a_in, double clo, double chi,
                        const wl_plot_options *o, int xlabels, const char *ptitle, wl_error *err)
{
    axes a = *a_in;
    double *p = malloc((m ? m : 1) * 2 * sizeof *p), *c = malloc((m ? m : 1) * sizeof *c);
    unsigned char *on = malloc(m ? m : 1);
    int rc = (!p || !c || !on) ? WL_ENOMEM : WL_OK;
    for (size_t i = 0; !rc && i < m; i++) {
        rc = num_cell(t, rows[i], xc, &p[2 * i], err);
        if (!rc)
            rc = num_cell(t, rows[i], yc, &p[2 * i + 1], err);
        if (!rc)
            rc = num_cell(t, rows[i], cc, &c[i], err);
    }
    /* a front per workload: rows sharing the parameter columns before the
     * decision variables (voltage offset, clock) */
    int stop = wl_results_table_col(t, "voltage_offset_mv");
    if (stop < 0)
        stop = cc;
    size_t *grp = malloc((m ? m : 1) * sizeof *grp);
    double *gp = malloc((m ? m : 1) * 2 * sizeof *gp);
    unsigned char *gon = malloc(m ? m : 1), *done = calloc(m ? m : 1, 1);
    if (!rc && (!grp || !gp || !gon || !done))
        rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < m; i++) {
        if (done[i])
            continue;
        size_t gn = 0;
        for (size_t j = i; j < m; j++) {
            int same = 1;
            for (int col = 0; col < stop && same; col++)
                same = strcmp(wl_results_table_cell(t, rows[i], col), wl_results_table_cell(t, rows[j], col)) == 0;
            if (!same)
                continue;
            done[j] = 1;
            grp[gn] = j;
            gp[2 * gn] = p[2 * j];
            gp[2 * gn + 1] = p[2 * j + 1];
            gn++;
        }
        rc = wl_pareto_front(gp, gn, 2, gon);
        for (size_t q = 0; !rc && q < gn; q++)
            on[grp[q]] = gon[q];
    }
    free(gp);
    free(gon);
    free(done);
    if (rc) {
        free(grp); free(p); free(c); free(on);
        return rc;
    }
    ax_draw(cr, &a, "Time", "s", a.x0 < 60 ? "Energy" : NULL, "J", xlabels);
    if (ptitle) {
        style_font(cr, 7.5, 1);
        cairo_set_source_rgb(cr, 0, 0, 0);
        style_text(cr, a.x0 + a.w / 2, a.y0 - 8, ptitle, 0.5, 0);
    }
    cairo_save(cr);
    cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
    cairo_clip(cr);
    /* dominated first, faded; front on top */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < m; i++) {
            if (on[i] != pass || !isfinite(p[2 * i]) || !isfinite(p[2 * i + 1]))
                continue;
            double rgb[3];
            colormap(o->palette, chi > clo ? (c[i] - clo) / (chi - clo) : 0.5, rgb);
            cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], pass ? 1.0 : 0.25);
            cairo_new_path(cr);
            cairo_arc(cr, ax_x(&a, p[2 * i] * 1e-3), ax_y(&a, p[2 * i + 1]), pass ? 2.0 : 1.5, 0,
                      2 * M_PI);
            cairo_fill(cr);
        }
    /* each workload's front as a step line, in time order */
    size_t nf = 0;
    size_t *fr = malloc((m ? m : 1) * sizeof *fr);
    unsigned char *seen = calloc(m ? m : 1, 1);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.7);
    for (size_t i = 0; fr && seen && i < m; i++) {
        if (seen[i] || !on[i])
            continue;
        nf = 0;
        for (size_t j = i; j < m; j++) {
            int same = 1;
            for (int col = 0; col < stop && same; col++)
                same = strcmp(wl_results_table_cell(t, rows[i], col), wl_results_table_cell(t, rows[j], col)) == 0;
            if (same) {
                seen[j] = 1;
                if (on[j])
                    fr[nf++] = j;
            }
        }
        for (size_t a1 = 1; a1 < nf; a1++)
            for (size_t b = a1; b > 0 && p[2 * fr[b]] < p[2 * fr[b - 1]]; b--) {
                size_t tmp = fr[b];
                fr[b] = fr[b - 1];
                fr[b - 1] = tmp;
            }
        for (size_t j = 0; j < nf; j++) {
            double X = ax_x(&a, p[2 * fr[j]] * 1e-3), Y = ax_y(&a, p[2 * fr[j] + 1]);
            if (j == 0)
                cairo_move_to(cr, X, Y);
            else {
                cairo_line_to(cr, X, ax_y(&a, p[2 * fr[j - 1] + 1]));
                cairo_line_to(cr, X, Y);
            }
        }
        cairo_stroke(cr);
    }
    free(seen);
    free(grp);
    cairo_restore(cr);
    free(fr);
    free(p);
    free(c);
    free(on);
    return WL_OK;
}

int wl_plot_pareto(const wl_results_table *t, const wl_plot_kind_options *k,
                   const wl_plot_options *o, const char *path, wl_error *err)
{
    const char *xn = k && k->x ? k->x : "time_ms", *yn = k && k->y ? k->y : "energy_j";
    int xc = need_col(t, xn, err), yc = xc >= 0 ? need_col(t, yn, err) : -1;
    int cc = yc >= 0 ? need_col(t, "sm_clock_mhz", err) : -1;
    if (cc < 0)
        return WL_EPARSE;
    int fc = -1;
    if (k && k->facet && (fc = need_col(t, k->facet, err)) < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t);
    /* facets in order of appearance, named by their first rows */
    size_t fac[17];
    int nfac = 0;
    if (fc >= 0) {
        nfac = (int)wl_results_table_distinct(t, fc, fac, 17);
        if (nfac > 16) {
            wl_error_set(err, table_path(t), 0, k->facet, "more than 16 facets");
            return WL_EINVAL;
        }
    }
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return WL_ENOMEM;
    if (fc < 0)
        nfac = 1;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY, clo = INFINITY,
           chi = -INFINITY;
    int rc = WL_OK;
    for (size_t r = 0; r < n && !rc; r++) {
        double xv, yv, cv;
        rc = num_cell(t, r, xc, &xv, err);
        if (!rc) rc = num_cell(t, r, yc, &yv, err);
        if (!rc) rc = num_cell(t, r, cc, &cv, err);
        if (rc || !isfinite(xv) || !isfinite(yv))
            continue;
        xlo = fmin(xlo, xv * 1e-3); xhi = fmax(xhi, xv * 1e-3);
        ylo = fmin(ylo, yv); yhi = fmax(yhi, yv);
        clo = fmin(clo, cv); chi = fmax(chi, cv);
    }
    fig *f = NULL;
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (rc) {
        free(rows);
        return rc;
    }
    if (fc >= 0) { /* facets share nothing: each gets its own range */ }
    ax_range(&xlo, &xhi, o->log_x);
    ax_range(&ylo, &yhi, o->log_y);
    cairo_t *cr = fig_cr(f);
    double W = fig_w(f), H = fig_h(f);
    int cols = nfac <= 4 ? nfac : (int)ceil(sqrt((double)nfac)), rws = (nfac + cols - 1) / cols;
    double top = (o->title ? 14 : 6) + (fc >= 0 ? 9 : 0), bottom = 26, left = 42, right = 50;
    double cw = (W - left - right - (cols - 1) * 30) / cols;
    double chh = (H - top - bottom - (rws - 1) * 34) / rws;
    for (int fi = 0; fi < nfac && !rc; fi++) {
        size_t m = 0;
        for (size_t r = 0; r < n; r++)
            if (fc < 0 || strcmp(wl_results_table_cell(t, r, fc), wl_results_table_cell(t, fac[fi], fc)) == 0)
                rows[m++] = r;
        int cx = fi % cols, cy = fi / cols;
        axes a = {left + cx * (cw + 30), top + cy * (chh + 34), cw, chh, xlo, xhi, ylo, yhi,
                  o->log_x, o->log_y};
        rc = pareto_panel(cr, t, rows, m, xc, yc, cc, &a, clo, chi, o,
                          cy == rws - 1 || fi + cols >= nfac, fc >= 0 ? wl_results_table_cell(t, fac[fi], fc) : NULL, err);
    }
    if (!rc)
        colorbar(cr, o->palette, W - right + 8, top, 6, H - top - bottom, clo * 1e6, chi * 1e6,
                 "SM clock", "Hz");
    fig_title(cr, o, W);
    if (rc) {
        fig_abort(f);
        free(rows);
        return rc;
    }
    free(rows);
    return fig_close(f, err);
}

/* ---- heatmap --------------------------------------------------------------------- */

/* Readable axis names for the columns wattlas writes. */
static const char *pretty(const char *col)
{
    static const char *const map[][2] = {
        {"sm_clock_mhz", "SM clock (MHz)"}, {"effective_clock_mhz", "Effective clock (MHz)"},
        {"seq", "Sequence length"}, {"batch", "Batch"}, {"voltage_offset_mv", "Voltage offset (mV)"},
        {"energy_j", "Energy (J)"}, {"time_ms", "Time (ms)"}, {"power_w", "Power (W)"},
        {"sms", "SMs"}, {"dram_bw_gbs", "DRAM bandwidth (GB/s)"}, {"power_limit_w", "Power limit (W)"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(map[i][0], col) == 0)
            return map[i][1];
    return col;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

static size_t uniq(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_d);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]) && (m == 0 || v[i] != v[m - 1]))
            v[m++] = v[i];
    return m;
}

static size_t find(const double *v, size_t n, double x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return i;
    return n;
}

int wl_plot_heatmap(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err)
{
    const char *xn = k && k->x ? k->x : "sm_clock_mhz", *yn = k && k->y ? k->y : "seq",
               *zn = k && k->z ? k->z : "energy_j";
    int xc = need_col(t, xn, err), yc = xc >= 0 ? need_col(t, yn, err) : -1,
        zc = yc >= 0 ? need_col(t, zn, err) : -1;
    if (zc < 0)
        return WL_EPARSE;
    int fcol = wl_results_table_col(t, "feasible");
    size_t n = wl_results_table_rows(t);
    double *xs = malloc(n * sizeof *xs), *ys = malloc(n * sizeof *ys), *xv = malloc(n * sizeof *xv),
           *yv = malloc(n * sizeof *yv), *zv = malloc(n * sizeof *zv), *fv = malloc(n * sizeof *fv);
    int rc = (!xs || !ys || !xv || !yv || !zv || !fv) ? WL_ENOMEM : WL_OK;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, xc, &xv[r], err);
        if (!rc) rc = num_cell(t, r, yc, &yv[r], err);
        if (!rc) rc = num_cell(t, r, zc, &zv[r], err);
        fv[r] = 1;
        if (!rc && fcol >= 0)
            rc = num_cell(t, r, fcol, &fv[r], err);
        xs[r] = xv[r];
        ys[r] = yv[r];
    }
    size_t nx = rc ? 0 : uniq(xs, n), ny = rc ? 0 : uniq(ys, n);
    double *grid = calloc(nx * ny + 1, sizeof *grid), *gfeas = calloc(nx * ny + 1, sizeof *gfeas);
    if (!rc && (!grid || !gfeas))
        rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < nx * ny; i++) {
        grid[i] = NAN;
        gfeas[i] = 0;
    }
    for (size_t r = 0; !rc && r < n; r++) {
        size_t i = find(xs, nx, xv[r]), j = find(ys, ny, yv[r]);
        if (i < nx && j < ny) {
            /* several rows per cell (other parameters): the least z of the
             * feasible ones; hatched only when none is feasible */
            size_t c = j * nx + i;
            int feas = fv[r] != 0;
            if (isnan(grid[c]) || (feas && gfeas[c] == 0) || (feas == (gfeas[c] != 0) && zv[r] < grid[c])) {
                grid[c] = zv[r];
                gfeas[c] = feas;
            }
        }
    }
    if (!rc && k && k->normalize)
        for (size_t j = 0; j < ny; j++) {
            double mn = INFINITY;
            for (size_t i = 0; i < nx; i++)
                if (isfinite(grid[j * nx + i]) && gfeas[j * nx + i] != 0)
                    mn = fmin(mn, grid[j * nx + i]);
            for (size_t i = 0; i < nx; i++)
                grid[j * nx + i] /= mn;
        }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; !rc && i < nx * ny; i++)
        if (isfinite(grid[i])) {
            lo = fmin(lo, grid[i]);
            hi = fmax(hi, grid[i]);
        }
    fig *f = NULL;
    if (!rc && (nx == 0 || ny == 0)) {
        wl_error_set(err, table_path(t), 0, zn, "nothing to plot");
        rc = WL_EINVAL;
    }
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (!rc) {
        cairo_t *cr = fig_cr(f);
        double W = fig_w(f), H = fig_h(f);
        double top = o->title ? 14 : 6, bottom = 26, left = 42, right = 52;
        axes a = {left, top, W - left - right, H - top - bottom, -0.5, (double)nx - 0.5, -0.5,
                  (double)ny - 0.5, 0, 0};
        for (size_t j = 0; j < ny; j++)
            for (size_t i = 0; i < nx; i++) {
                double x0 = ax_x(&a, (double)i - 0.5), x1 = ax_x(&a, (double)i + 0.5);
                double y0 = ax_y(&a, (double)j + 0.5), y1 = ax_y(&a, (double)j - 0.5);
                double z = grid[j * nx + i];
                if (!isfinite(z))
                    continue;
                double rgb[3];
                colormap(o->palette, hi > lo ? (z - lo) / (hi - lo) : 0.5, rgb);
                cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
                cairo_rectangle(cr, x0, y0, x1 - x0 + 0.2, y1 - y0 + 0.2);
                cairo_fill(cr);
                if (gfeas[j * nx + i] == 0) {
                    /* infeasible: hatched */
                    cairo_save(cr);
                    cairo_rectangle(cr, x0, y0, x1 - x0, y1 - y0);
                    cairo_clip(cr);
                    cairo_set_source_rgb(cr, 1, 1, 1);
                    cairo_set_line_width(cr, 0.6);
                    for (double d = -(y1 - y0); d < x1 - x0; d += 2.5) {
                        cairo_move_to(cr, x0 + d, y1);
                        cairo_line_to(cr, x0 + d + (y1 - y0), y0);
                    }
                    cairo_stroke(cr);
                    cairo_restore(cr);
                }
            }
        /* category axes: label a readable subset of values */
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 0.6);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_stroke(cr);
        style_font(cr, 7, 0);
        size_t sx = nx > 8 ? (nx + 7) / 8 : 1, sy = ny > 8 ? (ny + 7) / 8 : 1;
        char b[64];
        for (size_t i = 0; i < nx; i += sx) {
            snprintf(b, sizeof b, "%g", xs[i]);
            style_text(cr, ax_x(&a, (double)i), a.y0 + a.h + 3, b, 0.5, 0);
        }
        for (size_t j = 0; j < ny; j += sy) {
            snprintf(b, sizeof b, "%g", ys[j]);
            style_text(cr, a.x0 - 3, ax_y(&a, (double)j), b, 1, 0.5);
        }
        style_font(cr, 8.5, 0);
        style_text(cr, a.x0 + a.w / 2, a.y0 + a.h + 13, pretty(xn), 0.5, 0);
        cairo_save(cr);
        cairo_translate(cr, a.x0 - 30, a.y0 + a.h / 2);
        cairo_rotate(cr, -M_PI / 2);
        style_text(cr, 0, 0, pretty(yn), 0.5, 0.5);
        cairo_restore(cr);
        char zl[96];
        if (k && k->normalize) {
            /* a ratio: the quantity without its unit */
            char q[64];
            snprintf(q, sizeof q, "%s", pretty(zn));
            char *paren = strstr(q, " (");
            if (paren)
                *paren = 0;
            snprintf(zl, sizeof zl, "%s / row minimum", q);
        } else {
            snprintf(zl, sizeof zl, "%s", pretty(zn));
        }
        colorbar(cr, o->palette, W - right + 8, top, 6, H - top - bottom, lo, hi, zl, "");
        fig_title(cr, o, W);
        rc = fig_close(f, err);
    }
    free(xs); free(ys); free(xv); free(yv); free(zv); free(fv); free(grid); free(gfeas);
    return rc;
}

/* ---- savings ---------------------------------------------------------------------- */

/* The fi-th '/'-separated field of s. */
static int field_at(const char *s, int fi, char *out, size_t n)
{
    for (int i = 0; i < fi; i++) {
        s = strchr(s, '/');
        if (!s)
            return 0;
        s++;
    }
    const char *e = strchr(s, '/');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l >= n)
        l = n - 1;
    memcpy(out, s, l);
    out[l] = 0;
    return 1;
}

/* Two bars side by side in category slot r (values may be negative; a
 * non-finite one is skipped). */
static void bar_pair(cairo_t *cr, const axes *a, size_t r, double bw, const double v[2],
                     const int color[2])
{
    double cx = ax_x(a, (double)r + 0.5);
    for (int b = 0; b < 2; b++) {
        if (!isfinite(v[b]))
            continue;
        double x0 = cx - bw + b * bw, y0 = ax_y(a, fmax(v[b], 0)), y1 = ax_y(a, fmin(v[b], 0));
        style_color(cr, color[b], 1);
        cairo_rectangle(cr, x0, y0, bw * 0.92, y1 - y0);
        cairo_fill(cr);
    }
}

/* A category label under the axis at x = cx, slanted 30 degrees. */
static void slanted_label(cairo_t *cr, const axes *a, double cx, const char *text)
{
    cairo_save(cr);
    cairo_translate(cr, cx, a->y0 + a->h + 3);
    cairo_rotate(cr, M_PI / 6);
    style_font(cr, 6, 0);
    cairo_set_source_rgb(cr, 0, 0, 0);
    style_text(cr, 0, 0, text, 0, 0);
    cairo_restore(cr);
}

/* Legend of the two bar colours in the top-right corner, `width` pt wide. */
static void legend_pair(cairo_t *cr, const axes *a, const char *const label[2],
                        const int color[2], double width)
{
    style_font(cr, 6.5, 0);
    for (int b = 0; b < 2; b++) {
        style_color(cr, color[b], 1);
        cairo_rectangle(cr, a->x0 + a->w - width, a->y0 + 4 + b * 8, 7, 5);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        style_text(cr, a->x0 + a->w - width + 10, a->y0 + 6.5 + b * 8, label[b], 0, 0.5);
    }
}

int wl_plot_savings(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err)
{
    int fastest = k && k->against && strcmp(k->against, "fastest") == 0;
    if (k && k->against && !fastest && strcmp(k->against, "max-clock") != 0) {
        wl_error_set(err, "against", 0, "against", "expected max-clock or fastest");
        return WL_EINVAL;
    }
    int gc = need_col(t, "group", err);
    int sc = gc >= 0 ? need_col(t, fastest ? "energy_saving_vs_fastest_pct"
                                          : "energy_saving_vs_max_clock_pct", err) : -1;
    int pc = sc >= 0 ? need_col(t, fastest ? "runtime_penalty_vs_fastest_pct"
                                          : "runtime_penalty_vs_max_clock_pct", err) : -1;
    if (pc < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t);
    double *s = malloc(n * sizeof *s), *pn = malloc(n * sizeof *pn);
    int rc = (!s || !pn) ? WL_ENOMEM : WL_OK;
    double lo = 0, hi = 0;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, sc, &s[r], err);
        if (!rc)
            rc = num_cell(t, r, pc, &pn[r], err);
        if (!rc) {
            if (isfinite(s[r])) { lo = fmin(lo, s[r]); hi = fmax(hi, s[r]); }
            if (isfinite(pn[r])) { lo = fmin(lo, pn[r]); hi = fmax(hi, pn[r]); }
        }
    }
    fig *f = NULL;
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (!rc) {
        cairo_t *cr = fig_cr(f);
        double W = fig_w(f), H = fig_h(f);
        double top = o->title ? 14 : 6, bottom = 46, left = 36, right = 24;
        ax_range(&lo, &hi, 0);
        if (lo > 0) lo = 0;
        axes a = {left, top, W - left - right, H - top - bottom, 0, (double)n, lo, hi, 0, 0};
        ax_draw(cr, &a, NULL, NULL, "Change (%)", "", 0);
        double bw = a.w / (double)n / 3;
        static const int colors[2] = {2, 1};
        for (size_t r = 0; r < n; r++) {
            double cx = ax_x(&a, (double)r + 0.5);
            double vals[2] = {s[r], pn[r]};
            bar_pair(cr, &a, r, bw, vals, colors);
            /* group labels, slanted: only the fields that differ */
            char lab[256] = "";
            const char *g = wl_results_table_cell(t, r, gc);
            for (int fi = 0;; fi++) {
                char fld[128];
                if (!field_at(g, fi, fld, sizeof fld))
                    break;
                int same = 1;
                for (size_t q = 0; q < n && same; q++) {
                    char o2[128];
                    same = field_at(wl_results_table_cell(t, q, gc), fi, o2, sizeof o2) &&
                           strcmp(o2, fld) == 0;
                }
                if (!same || n == 1) {
                    size_t l = strlen(lab);
                    snprintf(lab + l, sizeof lab - l, "%s%s", l ? " " : "", fld);
                }
            }
            slanted_label(cr, &a, cx, lab);
        }
        static const char *const ln[2] = {"energy saved", "runtime penalty"};
        legend_pair(cr, &a, ln, colors, 62);
        fig_title(cr, o, W);
        rc = fig_close(f, err);
    }
    free(s);
    free(pn);
    return rc;
}

/* ---- validation -------------------------------------------------------------------- */

/* Index of row r's model among the nm distinct models, named by the first
 * row of each (0 without a column). */
static int model_of(const wl_results_table *t, size_t r, int modc, const size_t *models, int nm)
{
    int mi = 0;
    for (int i = 0; modc >= 0 && i < nm; i++)
        if (strcmp(wl_results_table_cell(t, models[i], modc), wl_results_table_cell(t, r, modc)) == 0)
            mi = i;
    return mi;
}

int wl_plot_validation(const wl_results_table *t, const wl_plot_kind_options *k,
                       const wl_plot_options *o, const char *path, wl_error *err)
{
    const char *m = k && k->metric ? k->metric : "energy";
    const metric *mt = strcmp(m, "time") == 0 ? &metrics[2]
                       : strcmp(m, "power") == 0 ? &metrics[1]
                       : strcmp(m, "energy") == 0 ? &metrics[0] : NULL;
    if (!mt) {
        wl_error_set(err, "metric", 0, "metric", "expected time, power or energy, got '%s'", m);
        return WL_EINVAL;
    }
    char pred[64];
    snprintf(pred, sizeof pred, "predicted_%s", mt->col);
    int mc = need_col(t, mt->col, err), pcol = mc >= 0 ? need_col(t, pred, err) : -1;
    int cc = pcol >= 0 ? need_col(t, "sm_clock_mhz", err) : -1;
    if (cc < 0)
        return WL_EPARSE;
    int modc = wl_results_table_col(t, "model");
    size_t n = wl_results_table_rows(t);
    double *mv = malloc(n * sizeof *mv), *pv = malloc(n * sizeof *pv), *cv = malloc(n * sizeof *cv);
    int rc = (!mv || !pv || !cv) ? WL_ENOMEM : WL_OK;
    double lo = INFINITY, hi = -INFINITY, elo = 0, ehi = 0, clo = INFINITY, chi = -INFINITY;
    double scale = mt == &metrics[2] ? 1e-3 : 1;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, mc, &mv[r], err);
        if (!rc) rc = num_cell(t, r, pcol, &pv[r], err);
        if (!rc) rc = num_cell(t, r, cc, &cv[r], err);
        if (rc || !isfinite(mv[r]) || !isfinite(pv[r]))
            continue;
        cv[r] *= 1e6; /* MHz -> Hz */
        mv[r] *= scale;
        pv[r] *= scale;
        lo = fmin(lo, fmin(mv[r], pv[r]));
        hi = fmax(hi, fmax(mv[r], pv[r]));
        double e = 100 * (pv[r] / mv[r] - 1);
        elo = fmin(elo, e);
        ehi = fmax(ehi, e);
        clo = fmin(clo, cv[r]);
        chi = fmax(chi, cv[r]);
    }
    /* models in order of appearance (their first rows): colour and marker */
    size_t models[8];
    int nm = modc >= 0 ? (int)wl_results_table_distinct(t, modc, models, 8) : 0;
    fig *f = NULL;
    if (!rc && !isfinite(lo)) {
        wl_error_set(err, table_path(t), 0, pred, "no row has both a measurement and a prediction");
        rc = WL_EINVAL;
    }
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (!rc) {
        cairo_t *cr = fig_cr(f);
        double W = fig_w(f), H = fig_h(f);
        double top = o->title ? 14 : 6, bottom = 26, left = 42, gap = 40;
        double pw = (W - left - gap - 6) / 2;
        ax_range(&lo, &hi, o->log_x || o->log_y);
        axes a = {left, top, pw, H - top - bottom, lo, hi, lo, hi, o->log_x, o->log_y};
        char xq[64], yq[64];
        snprintf(xq, sizeof xq, "Measured %s", mt->q);
        snprintf(yq, sizeof yq, "Predicted %s", mt->q);
        ax_draw(cr, &a, xq, mt->u, yq, mt->u, 1);
        cairo_save(cr);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_clip(cr);
        /* +-10% band and y = x */
        cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.18);
        cairo_move_to(cr, ax_x(&a, lo), ax_y(&a, lo * 1.1));
        cairo_line_to(cr, ax_x(&a, hi), ax_y(&a, hi * 1.1));
        cairo_line_to(cr, ax_x(&a, hi), ax_y(&a, hi * 0.9));
        cairo_line_to(cr, ax_x(&a, lo), ax_y(&a, lo * 0.9));
        cairo_close_path(cr);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 0.6);
        cairo_move_to(cr, ax_x(&a, lo), ax_y(&a, lo));
        cairo_line_to(cr, ax_x(&a, hi), ax_y(&a, hi));
        cairo_stroke(cr);
        for (size_t r = 0; r < n; r++) {
            if (!isfinite(mv[r]) || !isfinite(pv[r]))
                continue;
            int mi = model_of(t, r, modc, models, nm);
            style_color(cr, mi, 0.85);
            cairo_set_line_width(cr, 0.5);
            style_marker(cr, mi, ax_x(&a, mv[r]), ax_y(&a, pv[r]), 2.6, 1);
        }
        cairo_restore(cr);
        /* error vs clock */
        double el = elo, eh = ehi, cl = clo, ch = chi;
        ax_range(&el, &eh, 0);
        ax_range(&cl, &ch, 0);
        axes b = {left + pw + gap, top, pw, H - top - bottom, cl, ch, el, eh, 0, 0};
        ax_draw(cr, &b, "SM clock", "Hz", "Error (%)", "", 1);
        cairo_save(cr);
        cairo_rectangle(cr, b.x0, b.y0, b.w, b.h);
        cairo_clip(cr);
        cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.18);
        cairo_rectangle(cr, b.x0, ax_y(&b, 10), b.w, ax_y(&b, -10) - ax_y(&b, 10));
        cairo_fill(cr);
        for (size_t r = 0; r < n; r++) {
            if (!isfinite(mv[r]) || !isfinite(pv[r]))
                continue;
            int mi = model_of(t, r, modc, models, nm);
            style_color(cr, mi, 0.85);
            cairo_set_line_width(cr, 0.5);
            style_marker(cr, mi, ax_x(&b, cv[r]), ax_y(&b, 100 * (pv[r] / mv[r] - 1)), 2.6, 1);
        }
        cairo_restore(cr);
        series_set ss;
        memset(&ss, 0, sizeof ss);
        ss.n = nm;
        for (int i = 0; i < nm; i++)
            snprintf(ss.s[i].label, sizeof ss.s[i].label, "%.63s",
                     wl_results_table_cell(t, models[i], modc));
        if (nm > 1)
            legend(cr, &ss, a.x0 + a.w, a.y0 + a.h - (nm * 8.5 + 9), 1);
        fig_title(cr, o, W);
        rc = fig_close(f, err);
    }
    free(mv);
    free(pv);
    free(cv);
    return rc;
}

/* ---- compare ------------------------------------------------------------------------ */

/* Per GPU: energy at the maximum clock and at the energy-optimal clock (the
 * optimum's clock written above its bar); reads `wattlas compare --format csv`. */
int wl_plot_compare(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err)
{
    (void)k;
    int gc = need_col(t, "gpu", err);
    int mc = gc >= 0 ? need_col(t, "max_energy_j", err) : -1;
    int ec = mc >= 0 ? need_col(t, "opt_energy_j", err) : -1;
    int fc = ec >= 0 ? need_col(t, "opt_sm_clock_mhz", err) : -1;
    int xc = wl_results_table_col(t, "coefficients");
    if (fc < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t);
    double *mx = malloc((n + 1) * sizeof *mx), *op = malloc((n + 1) * sizeof *op),
           *fo = malloc((n + 1) * sizeof *fo);
    int rc = (!mx || !op || !fo) ? WL_ENOMEM : WL_OK;
    double hi = 0;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, mc, &mx[r], err);
        if (!rc)
            rc = num_cell(t, r, ec, &op[r], err);
        if (!rc)
            rc = num_cell(t, r, fc, &fo[r], err);
        if (!rc && isfinite(mx[r]))
            hi = fmax(hi, fmax(mx[r], op[r]));
    }
    fig *f = NULL;
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (!rc) {
        cairo_t *cr = fig_cr(f);
        double W = fig_w(f), H = fig_h(f);
        double top = o->title ? 14 : 6, bottom = 46, left = 36, right = 8;
        double lo = 0;
        hi *= 1.12; /* room for the clock labels */
        ax_range(&lo, &hi, 0);
        lo = 0;
        axes a = {left, top, W - left - right, H - top - bottom, 0, (double)(n ? n : 1), lo, hi, 0, 0};
        ax_draw(cr, &a, NULL, NULL, "Energy (J)", "", 0);
        double bw = a.w / (double)(n ? n : 1) / 3;
        static const int colors[2] = {1, 2};
        for (size_t r = 0; r < n; r++) {
            double cx = ax_x(&a, (double)r + 0.5);
            double vals[2] = {mx[r], op[r]};
            bar_pair(cr, &a, r, bw, vals, colors);
            char lab[32];
            snprintf(lab, sizeof lab, "%.0f", fo[r]);
            style_font(cr, 5.5, 0);
            cairo_set_source_rgb(cr, 0, 0, 0);
            style_text(cr, cx + bw * 0.46, ax_y(&a, op[r]) - 2.5, lab, 0.5, 1);
            const char *g = wl_results_table_cell(t, r, gc);
            int transferred = xc >= 0 && strncmp(wl_results_table_cell(t, r, xc), "transferred", 11) == 0;
            char gl[160];
            snprintf(gl, sizeof gl, "%s%s", g, transferred ? "+" : "");
            slanted_label(cr, &a, cx, gl);
        }
        static const char *const ln[2] = {"at max clock", "at optimum (MHz above)"};
        legend_pair(cr, &a, ln, colors, 92);
        fig_title(cr, o, W);
        rc = fig_close(f, err);
    }
    free(mx);
    free(op);
    free(fo);
    return rc;
}

/* The kinds, looked up by name; their names and summaries make the help. */
static const wl_plot_kind kinds[] = {
    {"energy-freq", "energy vs SM clock per workload (sweep or predict output); the energy-optimal "
                    "clock (large marker), the maximum clock (square), throttled points hollow",
     wl_plot_energy_freq, NULL},
    {"pareto", "energy vs time coloured by SM clock, dominated points faded, fronts as steps",
     wl_plot_pareto, NULL},
    {"heatmap", "a value over two swept parameters, infeasible cells hatched", wl_plot_heatmap, NULL},
    {"savings", "energy saved and runtime penalty per workload (optimize output)",
     wl_plot_savings, NULL},
    {"validation", "predicted vs measured with y = x and a +-10% band, and error vs clock "
                   "(validate output)", wl_plot_validation, NULL},
    {"compare", "energy at the maximum and at the optimal clock per GPU (compare output)",
     wl_plot_compare, NULL},
    {"timeline", "Gantt chart of a cluster --timeline trace (a row per GPU) with each GPU's "
                 "power underneath", NULL, wl_plot_timeline},
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
    for (size_t i = 0; i < wl_plot_kind_count(); i++)
        if (strcmp(kinds[i].name, name) == 0)
            return kinds[i].fn;
    return NULL;
}
