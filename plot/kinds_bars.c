/* Figure kinds drawn from summary tables as bars and dots: validation
 * (measured against predicted), compare (GPUs), GPU beside GPU, feature
 * importances, and savings; and the bar figure they share. */
#include "plot_internal.h"
#include "../pareto/wattlas_pareto.h"
#include "../presets/wattlas_presets.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kinds_internal.h"

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
    char (*lab)[160] = malloc((n + 1) * sizeof *lab), (*clk)[24] = malloc((n + 1) * sizeof *clk);
    const char **tl = malloc((n + 1) * sizeof *tl);
    int rc = (!mx || !op || !fo || !lab || !clk || !tl) ? WL_ENOMEM : WL_OK;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, mc, &mx[r], err);
        if (!rc)
            rc = num_cell(t, r, ec, &op[r], err);
        if (!rc)
            rc = num_cell(t, r, fc, &fo[r], err);
        int transferred = xc >= 0 && strncmp(wl_results_table_cell(t, r, xc), "transferred", 11) == 0;
        snprintf(lab[r], sizeof lab[r], "%s%s", wl_results_table_cell(t, r, gc), transferred ? "+" : "");
        snprintf(clk[r], sizeof clk[r], "%.0f", fo[r]);
        tl[r] = clk[r];
    }
    static const char *const ln[2] = {"at max clock", "at optimum (MHz at bar)"};
    static const int colors[2] = {1, 2};
    int any_tr = 0;
    for (size_t r = 0; xc >= 0 && r < n; r++)
        any_tr |= strncmp(wl_results_table_cell(t, r, xc), "transferred", 11) == 0;
    bars_style bs = {"Energy", "J", ln, colors, any_tr ? "+ transferred coefficients" : NULL, 2, 0};
    const double *vv[2] = {mx, op};
    if (!rc)
        rc = bars_figure(t, o, path, n, vv, lab, &bs, tl, err);
    free(mx); free(op); free(fo); free(lab); free(clk); free(tl);
    return rc;
}

/* ---- GPU beside GPU ------------------------------------------------------------------ */

/* An optimize table of several GPUs: per workload (the key columns but
 * the GPU) a bar per GPU of the energy saved at its chosen clock against
 * its maximum clock, the chosen clock written on the bar. */
/* The workload of row r among the nw first rows wrow: the one equal on
 * every key column (those before oc) but the GPU's (gc); nw when none. */
static size_t workload_of(const wl_results_table *t, size_t r, const size_t *wrow, size_t nw,
                          int oc, int gc)
{
    for (size_t w = 0; w < nw; w++) {
        int same = 1;
        for (int c = 0; c < oc && same; c++)
            same = c == gc || !strcmp(wl_results_table_cell(t, r, c),
                                      wl_results_table_cell(t, wrow[w], c));
        if (same)
            return w;
    }
    return nw;
}

int wl_plot_gpus(const wl_results_table *t, const wl_plot_kind_options *k,
                 const wl_plot_options *o, const char *path, wl_error *err)
{
    (void)k;
    int oc = need_col(t, "objective", err); /* the key columns come before it */
    int gc = oc >= 0 ? need_col(t, "gpu", err) : -1;
    int cc = gc >= 0 ? need_col(t, "sm_clock_mhz", err) : -1;
    int sc = cc >= 0 ? need_col(t, "energy_saving_vs_max_clock_pct", err) : -1;
    if (sc < 0)
        return WL_EPARSE;
    if (gc > oc) {
        wl_error_set(err, table_path(t), 0, "gpu", "gpu must be a key column, before objective");
        return WL_EINVAL;
    }
    size_t n = wl_results_table_rows(t), gi[9];
    size_t ng = wl_results_table_distinct(t, gc, gi, 9);
    if (ng < 1 || ng > 8) {
        wl_error_set(err, table_path(t), 0, "gpu", "expected 1 to 8 GPUs, found %s",
                     ng > 8 ? "more" : "none");
        return WL_EINVAL;
    }
    /* workloads: rows equal on every key column but the GPU, in order */
    size_t *wrow = malloc((n + 1) * sizeof *wrow), nw = 0;
    double *v = malloc((n + 1) * ng * sizeof *v);
    char (*lab)[160] = malloc((n + 1) * sizeof *lab), (*txt)[16] = malloc((n + 1) * ng * sizeof *txt);
    const char **tl = malloc((n + 1) * ng * sizeof *tl);
    int rc = wrow && v && lab && txt && tl ? WL_OK : WL_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++)
        if (workload_of(t, r, wrow, nw, oc, gc) == nw)
            wrow[nw++] = r;
    for (size_t i = 0; !rc && i < nw * ng; i++) {
        v[i] = NAN;
        tl[i] = NULL;
    }
    for (size_t r = 0; !rc && r < n; r++) {
        size_t w = workload_of(t, r, wrow, nw, oc, gc), g = 0;
        while (g + 1 < ng && strcmp(wl_results_table_cell(t, gi[g], gc), wl_results_table_cell(t, r, gc)))
            g++;
        double sv, cv;
        if ((rc = num_cell(t, r, sc, &sv, err)) || (rc = num_cell(t, r, cc, &cv, err)))
            break;
        v[g * nw + w] = sv;
        snprintf(txt[g * nw + w], sizeof txt[0], "%.0f", cv);
        tl[g * nw + w] = isfinite(cv) ? txt[g * nw + w] : NULL;
    }
    /* each workload's name: the key values that vary, but the GPU's */
    for (size_t w = 0; !rc && w < nw; w++) {
        lab[w][0] = 0;
        for (int c = 0; c < oc; c++) {
            if (c == gc)
                continue;
            const char *val = wl_results_table_cell(t, wrow[w], c);
            int same = 1;
            for (size_t q = 0; q < nw && same; q++)
                same = !strcmp(wl_results_table_cell(t, wrow[q], c), val);
            size_t l = strlen(lab[w]);
            const char *head = wl_results_table_header(t, (size_t)c);
            /* numbers say what they count: "seq 512", "batch 8" */
            const char *word = !strcmp(head, "seq") ? "seq " : !strcmp(head, "batch") ? "batch " : "";
            if ((!same || nw == 1) && val[0] && l + 2 < sizeof lab[w])
                snprintf(lab[w] + l, sizeof lab[w] - l, "%s%s%.60s", l ? ", " : "", word, val);
        }
    }
    const char *names[8];
    static const int colors[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const double *vv[8];
    for (size_t g = 0; g < ng; g++) {
        names[g] = wl_results_table_cell(t, gi[g], gc);
        vv[g] = v + g * nw;
    }
    bars_style bs = {"Energy saved vs max clock", "%", names, colors,
                     "MHz at each bar: the chosen clock", (int)ng, 1};
    if (!rc)
        rc = bars_figure(t, o, path, nw, vv, lab, &bs, tl, err);
    free(wrow); free(v); free(lab); free(txt); free(tl);
    return rc;
}

/* ---- importance ------------------------------------------------------------------------ */

/* Feature importances from `wattlas learn --importance`: a bar per target
 * for each feature, the most important (by the mean over targets) first;
 * features that no split uses are left out. */
int wl_plot_importance(const wl_results_table *t, const wl_plot_kind_options *k,
                       const wl_plot_options *o, const char *path, wl_error *err)
{
    (void)k;
    static const char *const cols[3] = {"time_importance", "power_importance", "energy_importance"};
    int fc = need_col(t, "feature", err), c[3];
    for (int i = 0; i < 3 && fc >= 0; i++)
        if ((c[i] = need_col(t, cols[i], err)) < 0)
            return WL_EPARSE;
    if (fc < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t), m = 0;
    double *v = malloc((n + 1) * 4 * sizeof *v);
    size_t *ord = malloc((n + 1) * sizeof *ord);
    char (*lab)[160] = malloc((n + 1) * sizeof *lab);
    int rc = v && ord && lab ? WL_OK : WL_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++) {
        double x[3], mean = 0;
        for (int i = 0; !rc && i < 3; i++) {
            rc = num_cell(t, r, c[i], &x[i], err);
            mean += isfinite(x[i]) ? x[i] / 3 : 0;
        }
        if (rc || !(mean > 0))
            continue;
        size_t j = m++;
        while (j > 0 && v[4 * (ord[j - 1]) + 3] < mean) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = r;
        for (int i = 0; i < 3; i++)
            v[4 * r + (size_t)i] = x[i];
        v[4 * r + 3] = mean;
    }
    double *cols3 = rc ? NULL : malloc((m + 1) * 3 * sizeof *cols3);
    if (!rc && !cols3)
        rc = WL_ENOMEM;
    if (!rc && !m) {
        wl_error_set(err, table_path(t), 0, "feature", "no feature has any importance");
        rc = WL_EINVAL;
    }
    for (size_t j = 0; !rc && j < m; j++) {
        for (int i = 0; i < 3; i++)
            cols3[(size_t)i * m + j] = 100 * v[4 * ord[j] + (size_t)i];
        snprintf(lab[j], sizeof lab[j], "%s", wl_results_table_cell(t, ord[j], fc));
    }
    static const char *const ln[3] = {"time", "power", "energy"};
    static const int colors[3] = {0, 1, 2};
    bars_style bs = {"Share of split gain", "%", ln, colors, NULL, 3, 0};
    if (!rc) {
        const double *vv[3] = {cols3, cols3 + m, cols3 + 2 * m};
        rc = bars_figure(t, o, path, m, vv, lab, &bs, NULL, err);
    }
    free(v);
    free(ord);
    free(lab);
    free(cols3);
    return rc;
}

/* ---- savings ---------------------------------------------------------------------- */

/* Row r's label in a table keyed by its first nk columns (the columns
 * before "objective": a savings table's gpu, model, batch, ...): the key
 * values that differ between rows, joined by blanks; all of them when
 * there is one row. */
static void group_label(const wl_results_table *t, int nk, size_t r, char *lab, size_t cap)
{
    size_t n = wl_results_table_rows(t);
    lab[0] = 0;
    for (int k = 0; k < nk; k++) {
        const char *v = wl_results_table_cell(t, r, k);
        int same = 1;
        for (size_t q = 0; q < n && same; q++)
            same = strcmp(wl_results_table_cell(t, q, k), v) == 0;
        if ((!same || n == 1) && v[0]) {
            size_t l = strlen(lab);
            if (l + 1 < cap)
                snprintf(lab + l, cap - l, "%s%s", l ? " " : "", v);
        }
    }
}

/* nb bars side by side, centred in category slot r (values may be
 * negative; a non-finite one is skipped); horizontal bars when horiz. */
static void bar_group(cairo_t *cr, const axes *a, size_t r, double bw, const double *v, int nb,
                      const int *color, int horiz)
{
    for (int b = 0; b < nb; b++) {
        if (!isfinite(v[b]))
            continue;
        style_color(cr, color[b], 1);
        double off = -nb * bw / 2 + b * bw;
        if (horiz) {
            double cy = ax_y(a, (double)r + 0.5);
            double x0 = ax_x(a, fmin(v[b], 0)), x1 = ax_x(a, fmax(v[b], 0));
            cairo_rectangle(cr, x0, cy + off, x1 - x0, bw * 0.92);
        } else {
            double cx = ax_x(a, (double)r + 0.5);
            double y0 = ax_y(a, fmax(v[b], 0)), y1 = ax_y(a, fmin(v[b], 0));
            cairo_rectangle(cr, cx + off, y0, bw * 0.92, y1 - y0);
        }
        cairo_fill(cr);
    }
}

/* A category label under the axis, slanted 30 degrees and ending at its
 * slot (x = cx): it runs down to the left, into the left margin, never past
 * the figure's right edge. */
static void slanted_label(cairo_t *cr, const axes *a, double cx, const char *text)
{
    cairo_save(cr);
    cairo_translate(cr, cx + 2, a->y0 + a->h + 4);
    cairo_rotate(cr, -M_PI / 6);
    style_font(cr, 6, 0);
    cairo_set_source_rgb(cr, 0, 0, 0);
    style_text(cr, 0, 0, text, 1, 0.5);
    cairo_restore(cr);
}



/* v[b][r]: bar b of category r; top_labels (may be NULL) go by the last bar. */
int bars_figure(const wl_results_table *t, const wl_plot_options *o, const char *path,
                       size_t n, const double *const *v, char (*labels)[160],
                       const bars_style *bs, const char *const *top_labels, wl_error *err)
{
    int nb = bs->nb;
    const double *vl = v[nb - 1];
    double lo = 0, hi = 0;
    for (size_t r = 0; r < n; r++)
        for (int b = 0; b < nb; b++)
            if (isfinite(v[b][r])) {
                lo = fmin(lo, v[b][r]);
                hi = fmax(hi, v[b][r]);
            }
    if (top_labels)
        hi *= 1.12; /* room for the labels above the bars */
    fig *f = NULL;
    int rc = fig_open(path, o, &f, err);
    if (rc)
        return rc;
    (void)t;
    cairo_t *cr = fig_cr(f);
    double W = fig_w(f), H = fig_h(f);
    style_font(cr, 6, 0);
    double lw = 0;
    for (size_t r = 0; r < n; r++) {
        cairo_text_extents_t te;
        cairo_text_extents(cr, labels[r], &te);
        lw = fmax(lw, te.x_advance);
    }
    /* many workloads, or long names: horizontal bars, names at the left
     * (in a smaller font when they would take over 45% of the width) */
    int horiz = n > 8 || lw > 50;
    double lfont = horiz && lw > W * 0.45 - 10 ? fmax(3.5, 6 * (W * 0.45 - 10) / lw) : 6;
    if (horiz)
        lw *= lfont / 6;
    double top = fig_top(cr, o, W), left = horiz ? lw + 10 : 44, right = 10;
    double bottom = horiz ? 26 : 20 + fmin(lw * 0.5 + 4, H * 0.35);
    legend_t lg = {.n = 0};
    for (int b = 0; b < nb; b++)
        lg_add(&lg, bs->names[b], bs->colors[b], LG_PATCH);
    if (bs->note)
        lg_add(&lg, bs->note, 0, LG_TEXT);
    lg_reserve(cr, &lg, o, W, &right, &bottom, 1);
    /* bars start at zero: no padding below it */
    int from_zero = lo >= 0;
    ax_range(&lo, &hi, 0);
    if (lo > 0 || from_zero)
        lo = 0;
    double N = (double)(n ? n : 1);
    axes a = horiz ? (axes){left, top, W - left - right, H - top - bottom, lo, hi, 0, N, 0, 0, 0, .fixed_units = 0}
                   : (axes){left, top, W - left - right, H - top - bottom, 0, N, lo, hi, 0, 0, 0, .fixed_units = 0};
    if (horiz)
        ax_draw(cr, &a, bs->q, bs->u, NULL, NULL, 1);
    else
        ax_draw(cr, &a, NULL, NULL, bs->q, bs->u, 0);
    double bw = (horiz ? a.h : a.w) / N / (nb + 1);
    cairo_save(cr);
    cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
    cairo_clip(cr);
    /* the zero line */
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 0.5);
    if (horiz) {
        cairo_move_to(cr, ax_x(&a, 0), a.y0);
        cairo_line_to(cr, ax_x(&a, 0), a.y0 + a.h);
    } else {
        cairo_move_to(cr, a.x0, ax_y(&a, 0));
        cairo_line_to(cr, a.x0 + a.w, ax_y(&a, 0));
    }
    cairo_stroke(cr);
    for (size_t r = 0; r < n; r++) {
        /* horizontal: the first workload at the top */
        size_t slot = horiz ? n - 1 - r : r;
        double vals[8];
        for (int b = 0; b < nb; b++)
            vals[b] = v[b][r];
        bar_group(cr, &a, slot, bw, vals, nb, bs->colors, horiz);
        for (int b = 0; bs->label_each && top_labels && b < nb; b++) {
            const char *tl = top_labels[(size_t)b * n + r];
            if (!tl || !isfinite(v[b][r]))
                continue;
            double off = -nb * bw / 2 + b * bw + bw * 0.46;
            style_font(cr, nb > 3 ? 4.5 : 5.5, 0);
            cairo_set_source_rgb(cr, 0, 0, 0);
            if (horiz)
                style_text(cr, ax_x(&a, fmax(v[b][r], 0)) + 2, ax_y(&a, (double)slot + 0.5) + off,
                           tl, 0, 0.5);
            else
                style_text(cr, ax_x(&a, (double)slot + 0.5) + off, ax_y(&a, fmax(v[b][r], 0)) - 2.5,
                           tl, 0.5, 1);
        }
        if (!bs->label_each && top_labels && top_labels[r] && isfinite(vl[r])) {
            /* beside the last bar's end */
            double off = -nb * bw / 2 + (nb - 1) * bw + bw * 0.46;
            style_font(cr, 5.5, 0);
            cairo_set_source_rgb(cr, 0, 0, 0);
            if (horiz)
                style_text(cr, ax_x(&a, fmax(vl[r], 0)) + 2, ax_y(&a, (double)slot + 0.5) + off,
                           top_labels[r], 0, 0.5);
            else
                style_text(cr, ax_x(&a, (double)slot + 0.5) + off, ax_y(&a, fmax(vl[r], 0)) - 2.5,
                           top_labels[r], 0.5, 1);
        }
    }
    cairo_restore(cr);
    for (size_t r = 0; r < n; r++) {
        size_t slot = horiz ? n - 1 - r : r;
        if (horiz) {
            style_font(cr, lfont, 0);
            cairo_set_source_rgb(cr, 0, 0, 0);
            style_text(cr, a.x0 - 3, ax_y(&a, (double)slot + 0.5), labels[r], 1, 0.5);
        } else
            slanted_label(cr, &a, ax_x(&a, (double)slot + 0.5), labels[r]);
    }
    lg_draw(cr, &lg, &a, left, W, H, NULL, NULL, 0);
    fig_title(cr, o, W);
    return fig_close(f, err);
}

int wl_plot_savings(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err)
{
    int fastest = k && k->against && strcmp(k->against, "fastest") == 0;
    if (k && k->against && !fastest && strcmp(k->against, "max-clock") != 0) {
        wl_error_set(err, "against", 0, "against", "expected max-clock or fastest");
        return WL_EINVAL;
    }
    int gc = need_col(t, "objective", err); /* the key columns come before it */
    int sc = gc >= 0 ? need_col(t, fastest ? "energy_saving_vs_fastest_pct"
                                          : "energy_saving_vs_max_clock_pct", err) : -1;
    int pc = sc >= 0 ? need_col(t, fastest ? "runtime_penalty_vs_fastest_pct"
                                          : "runtime_penalty_vs_max_clock_pct", err) : -1;
    if (pc < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t);
    double *s = malloc((n + 1) * sizeof *s), *pn = malloc((n + 1) * sizeof *pn);
    char (*lab)[160] = malloc((n + 1) * sizeof *lab);
    int rc = (!s || !pn || !lab) ? WL_ENOMEM : WL_OK;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, sc, &s[r], err);
        if (!rc)
            rc = num_cell(t, r, pc, &pn[r], err);
        group_label(t, gc, r, lab[r], sizeof lab[r]);
    }
    static const char *const ln[2] = {"energy saved (%)", "runtime penalty (%)"};
    static const int colors[2] = {2, 1};
    bars_style bs = {fastest ? "Change vs fastest point" : "Change vs max clock", "%", ln, colors,
                     NULL, 2, 0};
    const double *vv[2] = {s, pn};
    if (!rc)
        rc = bars_figure(t, o, path, n, vv, lab, &bs, NULL, err);
    free(s);
    free(pn);
    free(lab);
    return rc;
}

/* The kinds, looked up by name; their names and summaries make the help. */
