/* Figure kind energy-freq: energy (power, time) vs SM clock per workload. */
#include "../plot_internal.h"
#include "../kinds_internal.h"
#include "../../pareto/wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    /* Least-energy markers that fall on one spot (series the facet makes
     * alike: four stacked as one) are spread side by side about it, 5.5 pt
     * apart, so each is seen. */
    double dodge[MAXSERIES] = {0};
    for (int i = 0; i < ss->n && i < MAXSERIES; i++) {
        long b = d->best[i];
        if (ss->s[i].facet != fi || b < 0 || !isfinite(d->v[(size_t)b * 3 + (size_t)p]))
            continue;
        double bx = ax_x(a, d->x[b]), by = ax_y(a, d->v[(size_t)b * 3 + (size_t)p]);
        int rank = 0, size = 0;
        for (int j = 0; j < ss->n && j < MAXSERIES; j++) {
            long c = d->best[j];
            if (ss->s[j].facet != fi || c < 0 || !isfinite(d->v[(size_t)c * 3 + (size_t)p]))
                continue;
            double cx = ax_x(a, d->x[c]), cy = ax_y(a, d->v[(size_t)c * 3 + (size_t)p]);
            if (fabs(cx - bx) < 2.5 && fabs(cy - by) < 2.5) {
                rank += j < i;
                size++;
            }
        }
        dodge[i] = (rank - (size - 1) / 2.0) * 5.5;
    }
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
            double bx = ax_x(a, d->x[b]) + (i < MAXSERIES ? dodge[i] : 0);
            double by = ax_y(a, d->v[(size_t)b * 3 + (size_t)p]);
            layout_mark(cr, bx, by);
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

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_energy_freq = {
    .name = "energy-freq",
    .summary = "energy vs SM clock per workload (sweep or predict output): the least energy "
               "(large marker) and the clocks within 1% of it (shaded), the maximum clock "
               "(a dotted line), throttled points hollow; points that cannot run left out (grey with "
               "--show-infeasible)",
    .fn = wl_plot_energy_freq,
    .options = "panels,stack,facet,objective,show-infeasible",
};
