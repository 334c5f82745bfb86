/* Figure kind pareto-norm: every workload's front on one axes, relative to
 * its own maximum-clock point. */
#include "../plot_internal.h"
#include "../kinds_internal.h"
#include "../../pareto/wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
        ax_draw(cr, &a, "Slowdown vs max clock", "%", "Energy / energy at max clock", "", 1);
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
            double placed[7][2]; /* the labels drawn: x, y of their right end */
            size_t np = 0;
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
                /* labelled where the line is rightmost inside the axes
                 * (at the right edge it often runs below them: the data
                 * end at a few % slowdown), clear of the frame and of the
                 * labels already drawn */
                char lab[32];
                snprintf(lab, sizeof lab, "EDP x%.1f", kk[q]);
                for (int st = 60; st >= 0; st--) {
                    double s = xlo + (xhi - xlo) * st / 60.0;
                    if (1 + s / 100 <= 0)
                        continue;
                    double xx = fmin(ax_x(&a, s), a.x0 + a.w - 2);
                    double yy = ax_y(&a, kk[q] / (1 + s / 100)) - 5; /* above its line */
                    if (yy < a.y0 + 6 || yy > a.y0 + a.h - 3 || xx < a.x0 + 30)
                        continue;
                    int clash = 0;
                    for (size_t j = 0; j < np && !clash; j++)
                        clash = fabs(placed[j][1] - yy) < 7 && fabs(placed[j][0] - xx) < 34;
                    /* nor on the data: the fronts' points and the chosen
                     * rings (issue 79: "EDP x0.7" sat on them) */
                    cairo_text_extents_t te;
                    cairo_text_extents(cr, lab, &te);
                    for (size_t r = 0; r < n && !clash; r++) {
                        int ring = 0;
                        for (int i = 0; i < ss.n && !ring; i++)
                            ring = chosen[i] == (long)r;
                        if ((!on[r] && !ring) || !isfinite(sx[r]) || !isfinite(ey[r]))
                            continue;
                        double X = ax_x(&a, sx[r]), Y = ax_y(&a, ey[r]), pad = ring ? 6 : 2.5;
                        clash = X > xx - te.x_advance - pad && X < xx + pad && Y > yy - 3.5 - pad &&
                                Y < yy + 3.5 + pad;
                    }
                    if (clash)
                        continue;
                    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
                    style_text(cr, xx, yy, lab, 1, 0.5);
                    placed[np][0] = xx;
                    placed[np][1] = yy;
                    np++;
                    break;
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

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_pareto_norm = {
    .name = "pareto-norm",
    .summary = "every workload's front on one axes: energy relative to the maximum clock "
               "against the slowdown from it (--edp: isolines of constant EDP)",
    .fn = wl_plot_pareto_norm,
    .options = "objective,edp",
};
