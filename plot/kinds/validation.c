/* Figure kind validation: measured against predicted (validate output). */
#include "../plot_internal.h"
#include "../kinds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    static const char *const ivn[3][2] = {{"predicted_energy_lo_j", "predicted_energy_hi_j"},
                                          {"predicted_power_lo_w", "predicted_power_hi_w"},
                                          {"predicted_time_lo_ms", "predicted_time_hi_ms"}};
    int mi0 = strcmp(m, "time") == 0 ? 2 : strcmp(m, "power") == 0 ? 1
              : strcmp(m, "energy") == 0 ? 0 : -1;
    if (mi0 < 0) {
        wl_error_set(err, "metric", 0, "metric", "expected time, power or energy, got '%s'", m);
        return WL_EINVAL;
    }
    const metric *mt = &metrics[mi0];
    char pred[64];
    snprintf(pred, sizeof pred, "predicted_%s", mt->col);
    int mc = need_col(t, mt->col, err), pcol = mc >= 0 ? need_col(t, pred, err) : -1;
    int cc = pcol >= 0 ? need_col(t, "sm_clock_mhz", err) : -1;
    if (cc < 0)
        return WL_EPARSE;
    int loc = wl_results_table_col(t, ivn[mi0][0]), hic = wl_results_table_col(t, ivn[mi0][1]);
    int modc = wl_results_table_col(t, "model");
    size_t n = wl_results_table_rows(t);
    double *mv = malloc((n + 1) * sizeof *mv), *pv = malloc((n + 1) * sizeof *pv),
           *cv = malloc((n + 1) * sizeof *cv), *lo_v = malloc((n + 1) * sizeof *lo_v),
           *hi_v = malloc((n + 1) * sizeof *hi_v);
    int rc = (!mv || !pv || !cv || !lo_v || !hi_v) ? WL_ENOMEM : WL_OK;
    double lo = INFINITY, hi = -INFINITY, elo = 0, ehi = 0, clo = INFINITY, chi = -INFINITY;
    double scale = mt == &metrics[2] ? 1e-3 : 1, ape = 0;
    size_t scored = 0;
    int pos = 1;
    for (size_t r = 0; !rc && r < n; r++) {
        lo_v[r] = hi_v[r] = NAN;
        rc = num_cell(t, r, mc, &mv[r], err);
        if (!rc) rc = num_cell(t, r, pcol, &pv[r], err);
        if (!rc) rc = num_cell(t, r, cc, &cv[r], err);
        if (!rc && loc >= 0 && hic >= 0) {
            rc = num_cell(t, r, loc, &lo_v[r], err);
            if (!rc) rc = num_cell(t, r, hic, &hi_v[r], err);
        }
        if (rc || !isfinite(mv[r]) || !isfinite(pv[r]))
            continue;
        mv[r] *= scale;
        pv[r] *= scale;
        lo_v[r] *= scale;
        hi_v[r] *= scale;
        pos &= mv[r] > 0 && pv[r] > 0;
        lo = fmin(lo, fmin(mv[r], pv[r]));
        hi = fmax(hi, fmax(mv[r], pv[r]));
        if (isfinite(lo_v[r]) && isfinite(hi_v[r])) {
            lo = fmin(lo, lo_v[r]);
            hi = fmax(hi, hi_v[r]);
        }
        double e = 100 * (pv[r] / mv[r] - 1);
        ape += fabs(e);
        scored++;
        elo = fmin(elo, e);
        ehi = fmax(ehi, e);
        clo = fmin(clo, cv[r]);
        chi = fmax(chi, cv[r]);
    }
    size_t models[MAXSERIES + 1];
    int nm = modc >= 0 ? (int)wl_results_table_distinct(t, modc, models, MAXSERIES) : 0;
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
        double top = fig_top(cr, o, W), bottom = 26, left = 41, gap = 38, right = 6;
        int one_clock = !(chi > clo);
        legend_t lg = {.n = 0};
        for (int i = 0; nm > 1 && i < nm; i++)
            lg_add(&lg, wl_results_table_cell(t, models[i], modc), i, LG_MARK);
        lg_add(&lg, "y = x, +-10%", 0, LG_BAND);
        lg_reserve(cr, &lg, o, W, &right, &bottom, 1);
        double pw = (W - left - gap - right) / 2;
        /* parity on log-log axes (values span decades) unless a value is
         * not positive */
        int lg_axes = pos;
        ax_range(&lo, &hi, lg_axes);
        axes a = {left, top, pw, H - top - bottom, lo, hi, lo, hi, lg_axes, lg_axes, 0, .fixed_units = 0};
        char xq[64], yq[64];
        snprintf(xq, sizeof xq, "Measured %s", mt->q);
        snprintf(yq, sizeof yq, "Predicted %s", mt->q);
        ax_draw(cr, &a, xq, mt->u, yq, mt->u, 1);
        cairo_save(cr);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_clip(cr);
        /* +-10% band and y = x, sampled so they stay straight on log axes */
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
            if (isfinite(lo_v[r]) && isfinite(hi_v[r])) {
                /* the prediction interval */
                style_color(cr, mi, 0.6);
                cairo_set_line_width(cr, 0.4);
                cairo_move_to(cr, ax_x(&a, mv[r]), ax_y(&a, lo_v[r]));
                cairo_line_to(cr, ax_x(&a, mv[r]), ax_y(&a, hi_v[r]));
                cairo_stroke(cr);
            }
            style_color(cr, mi, 0.85);
            cairo_set_line_width(cr, 0.5);
            style_marker(cr, mi, ax_x(&a, mv[r]), ax_y(&a, pv[r]), 2.6, 1);
        }
        cairo_restore(cr);
        char note[96];
        snprintf(note, sizeof note, "MAPE %.1f%%, n = %zu", scored ? ape / (double)scored : 0.0, scored);
        style_font(cr, 6.5, 0);
        cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
        cairo_text_extents_t te;
        cairo_text_extents(cr, note, &te);
        cairo_rectangle(cr, a.x0 + 2, a.y0 + 2, te.x_advance + 4, 9);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        style_text(cr, a.x0 + 4, a.y0 + 6.5, note, 0, 0.5);
        /* error against clock; at one clock, per workload */
        double el = elo, eh = ehi;
        ax_range(&el, &eh, 0);
        /* against clock, or at one clock per model (a slot each) */
        double cl = clo, ch = chi, N = nm > 0 ? nm : 1;
        if (!one_clock)
            ax_range(&cl, &ch, 0);
        axes b = {left + pw + gap, top, pw, H - top - bottom, one_clock ? 0 : cl,
                  one_clock ? N : ch, el, eh, 0, 0, 0, .fixed_units = 0};
        if (one_clock)
            ax_draw(cr, &b, NULL, NULL, "Error", "%", 0);
        else
            ax_draw(cr, &b, "SM clock", "MHz", "Error", "%", 1);
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
            style_marker(cr, mi, ax_x(&b, one_clock ? mi + 0.5 : cv[r]),
                         ax_y(&b, 100 * (pv[r] / mv[r] - 1)), 2.6, 1);
        }
        cairo_restore(cr);
        if (one_clock) {
            /* the models' names under their slots when they fit there;
             * else the legend's markers name them */
            style_font(cr, 6, 0);
            double slot = b.w / N, widest = 0;
            for (int i = 0; i < nm; i++) {
                cairo_text_extents_t ext;
                cairo_text_extents(cr, wl_results_table_cell(t, models[i], modc), &ext);
                widest = fmax(widest, ext.x_advance);
            }
            cairo_set_source_rgb(cr, 0, 0, 0);
            for (int i = 0; widest < slot - 2 && i < nm; i++)
                style_text(cr, ax_x(&b, i + 0.5), b.y0 + b.h + 3,
                           wl_results_table_cell(t, models[i], modc), 0.5, 0);
            style_font(cr, 8.5, 0);
            style_text(cr, b.x0 + b.w / 2, b.y0 + b.h + 13, "Model (one clock)", 0.5, 0);
        }
        lg_draw(cr, &lg, &a, left, W, H, NULL, NULL, 0);
        fig_title(cr, o, W);
        rc = fig_close(f, err);
    }
    free(mv); free(pv); free(cv); free(lo_v); free(hi_v);
    return rc;
}

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_validation = {
    .name = "validation",
    .summary = "predicted vs measured on log-log axes with y = x, a +-10% band, the MAPE and "
               "interval bars; error vs clock, or per model at one clock (validate output)",
    .fn = wl_plot_validation,
    .options = "metric",
};
