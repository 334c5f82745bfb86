/* Figure kind pareto: energy vs time per workload with its front. */
#include "../plot_internal.h"
#include "../kinds_internal.h"
#include "../../pareto/wattlas_pareto.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An axis's quantity and unit from its column's name: the unit is the
 * name's suffix (the project's rule: units in names), the quantity the
 * rest in words ("p90_itl_ms": "p90 ITL" in ms; "energy_per_token_j":
 * "Energy per token" in J). time_ms stays in ms; J, W and s take the
 * prefix of the figure's largest value (*f: the factor to scale values
 * by). */
static void axis_unit(const char *col, double lo, double hi, char *q, size_t nq, char *unit,
                      size_t n, double *f)
{
    static const struct {
        const char *sfx, *base;
        int si;
    } units[] = {{"_ms", "ms", 0}, {"_mhz", "MHz", 0}, {"_gb", "GB", 0}, {"_j", "J", 1},
                 {"_w", "W", 1},   {"_s", "s", 1}};
    static const char *const acronyms[] = {"itl", "ttft", "edp", "mfu", "gpu", "kv", "sm"};
    *f = 1;
    unit[0] = 0;
    size_t len = strlen(col), stem = len;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        size_t k = strlen(units[i].sfx);
        if (len > k && !strcmp(col + len - k, units[i].sfx)) {
            stem = len - k;
            const char *prefix = "";
            if (units[i].si)
                *f = wl_plot_si(fmax(fabs(lo), fabs(hi)), &prefix);
            snprintf(unit, n, "%s%s", prefix, units[i].base);
            break;
        }
    }
    /* the stem in words, acronyms in capitals, the first word capitalised
     * unless it is a percentile (p90) */
    size_t o = 0;
    q[0] = 0;
    for (size_t i = 0; i < stem && o + 1 < nq;) {
        size_t j = i;
        while (j < stem && col[j] != '_')
            j++;
        char w[32];
        size_t wl = j - i < sizeof w - 1 ? j - i : sizeof w - 1;
        memcpy(w, col + i, wl);
        w[wl] = 0;
        int acro = 0;
        for (size_t a = 0; a < sizeof acronyms / sizeof *acronyms; a++)
            acro |= !strcmp(w, acronyms[a]);
        for (size_t c = 0; c < wl; c++)
            if (acro || (c == 0 && i == 0 && !(w[0] == 'p' && w[1] >= '0' && w[1] <= '9')))
                w[c] = (char)toupper((unsigned char)w[c]);
        int wrote = snprintf(q + o, nq - o, "%s%s", o ? " " : "", w);
        if (wrote < 0 || (o += (size_t)wrote) >= nq)
            break;
        i = j + 1;
    }
    if (!strcmp(col, "time_ms"))
        snprintf(q, nq, "Time");
}

/* Each front's name beside it, where it covers no chosen ring, no other
 * name and stays inside the axes: beside its fast end (right, left,
 * above, below) or its slow end (right, below), the first place free and
 * nearer its own front than any other (else the least covered); never by
 * the dominated tail, which can lie far from the front (issue 79: "b200"
 * named a tail at 2000 ms while its front was near 250 ms). idx: scratch
 * of the rows. */
/* The points of facet fi drawn inside the box (x0, y0)-(x1, y1): a name
 * placed there would cover them. */
static int points_under(const axes *a, const wl_results_table *t, const facets *fa, int fi,
                        const double *px, const double *py, size_t n, double x0, double y0,
                        double x1, double y1)
{
    int hits = 0;
    for (size_t r = 0; r < n; r++) {
        if (!isfinite(px[r]) || !isfinite(py[r]) || !in_facet(t, fa, fi, r))
            continue;
        double X = ax_x(a, px[r]), Y = ax_y(a, py[r]);
        hits += X > x0 - 1.5 && X < x1 + 1.5 && Y > y0 - 1.5 && Y < y1 + 1.5;
    }
    return hits;
}

/* The gaps from a box to series i's front points and to the nearest front
 * point of another series of the facet (INFINITY: none). */
static void front_gaps(const axes *a, const wl_results_table *t, const facets *fa, int fi,
                       const series_set *ss, int i, const double *px, const double *py,
                       const unsigned char *on, const double box[4], double *own, double *other)
{
    *own = *other = INFINITY;
    for (int k = 0; k < ss->n; k++) {
        const series *s = &ss->s[k];
        if (s->facet != fi)
            continue;
        for (size_t j = 0; j < s->n; j++) {
            size_t r = s->rows[j];
            if (!on[r] || !in_facet(t, fa, fi, r) || !isfinite(px[r]) || !isfinite(py[r]))
                continue;
            double X = ax_x(a, px[r]), Y = ax_y(a, py[r]);
            double dx = fmax(fmax(box[0] - X, X - box[2]), 0), dy = fmax(fmax(box[1] - Y, Y - box[3]), 0);
            double g = hypot(dx, dy);
            if (k == i)
                *own = fmin(*own, g);
            else
                *other = fmin(*other, g);
        }
    }
}

static void front_labels(cairo_t *cr, const axes *a, const wl_results_table *t, const facets *fa,
                         int fi, const series_set *ss, const double *px, const double *py,
                         size_t nrows, const unsigned char *on, const long *chosen, double *idx)
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
        double w = te.x_advance + 6, h = 6; /* the front's marker, then its name */
        double fX = ax_x(a, px[fast]), fY = ax_y(a, py[fast]);
        double sX = ax_x(a, px[slow]), sY = ax_y(a, py[slow]);
        /* left x and middle y of each candidate */
        double cand[6][2] = {{fX + 4, fY - 5}, {fX - 4 - w, fY - 5}, {fX - w / 2, fY - 9},
                             {fX - w / 2, fY + 9}, {sX + 4, sY + 5}, {sX - w / 2, sY + 9}};
        int best = 0, best_hits = 1 << 30;
        for (int k = 0; k < 6 && best_hits; k++) {
            double x0 = cand[k][0], y0 = cand[k][1] - h / 2, x1 = x0 + w, y1 = y0 + h;
            int hits = (x0 < a->x0 + 1 || x1 > a->x0 + a->w - 1 || y0 < a->y0 + 1 ||
                        y1 > a->y0 + a->h - 1) ? 100 : 0;
            for (int q = 0; q < nb; q++)
                hits += x0 < boxes[q][2] && x1 > boxes[q][0] && y0 < boxes[q][3] &&
                        y1 > boxes[q][1];
            /* over the data only where no place by the front is free */
            hits += points_under(a, t, fa, fi, px, py, nrows, x0, y0, x1, y1);
            /* a name nearer another front than its own names that one */
            double own, other, box[4] = {x0, y0, x1, y1};
            front_gaps(a, t, fa, fi, ss, i, px, py, on, box, &own, &other);
            hits += other < own ? 50 : 0;
            if (hits < best_hits) {
                best_hits = hits;
                best = k;
            }
        }
        double X = cand[best][0], Y = cand[best][1];
        X = fmin(fmax(X, a->x0 + 1), a->x0 + a->w - 1 - w);
        Y = fmin(fmax(Y, a->y0 + 1 + h / 2), a->y0 + a->h - 1 - h / 2);
        int leader = 0;
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
                    if (!hits)
                        hits = points_under(a, t, fa, fi, px, py, nrows, x0, y0, x1, y1);
                    if (hits)
                        continue;
                    found = leader = 1;
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
        double own, other;
        front_gaps(a, t, fa, fi, ss, i, px, py, on, b, &own, &other);
        layout_front_label(cr, own, other, leader);
        /* no box: the place was chosen off the data; the front's marker
         * before its name ties the two */
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 0.5);
        style_marker(cr, s->style, X + 2, Y, 3.6, 0);
        style_text(cr, X + 6, Y, s->label, 0, 0.5);
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
    int *rst = malloc((n + 1) * sizeof *rst); /* each row's series style: its front's marker */
    if (!px || !py || !pc || !tm || !tmp || !ok || !on || !chosen || !rst)
        rc = WL_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++)
        rst[r] = 0;
    for (int i = 0; !rc && i < ss.n; i++)
        for (size_t j = 0; j < ss.s[i].n; j++)
            rst[ss.s[i].rows[j]] = ss.s[i].style;
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
        free(px); free(py); free(pc); free(tm); free(tmp); free(ok); free(on); free(chosen); free(rst);
        series_free(&ss);
        return rc;
    }
    /* one unit per axis for the whole figure (its panels' ranges differ):
     * time in ms, the column's own, in every pareto figure, so a training
     * step's and a prefill's read alike; energy and other SI quantities
     * with the prefix of the figure's largest value */
    char xq[80], yq[80], xu[16], yu[16];
    double fx = 1, fy = 1;
    axis_unit(xn, xlo, xhi, xq, sizeof xq, xu, sizeof xu, &fx);
    axis_unit(yn, ylo, yhi, yq, sizeof yq, yu, sizeof yu, &fy);
    if (!(chi > clo)) {
        clo = isfinite(clo) ? clo - 1 : 0;
        chi = clo + 2;
    }
    cairo_t *cr = fig_cr(f);
    double W = fig_w(f), H = fig_h(f);
    double top = fig_top(cr, o, W) + (fa.col >= 0 ? 11 : 0), bottom = 26, left = 44, right = 56;
    legend_t lg = {.n = 0};
    /* fronts are told apart by marker and dash (their colour is the clock),
     * named at their fast ends with their marker (up to six; beyond that in
     * the legend); the legend says what the marks mean */
    if (nstyles > 6)
        lg_add_series(&lg, &ss, LG_DASH);
    lg_add(&lg, nstyles > 1 ? "front (marker and dash: which; colour: clock)"
                            : "front (coloured by clock)", 0, LG_DASH);
    lg_add(&lg, "dominated", 0, LG_FADED);
    /* the panels' ranges are their own (shared ones shrank each front to a
     * few points' width): said, as a reader compares panels */
    if (fa.col >= 0 && fa.n > 1)
        lg_add(&lg, "each panel has its own axes", 0, LG_TEXT);
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
                if (state == 2 && nstyles > 1) {
                    /* a front's points: its own marker (the clock is the
                     * colour, so the shape tells the fronts apart) */
                    cairo_set_line_width(cr, rst[r] % 6 == 5 ? 0.9 : 0.3);
                    style_marker(cr, rst[r], X, Y, 4.2, 1);
                    continue;
                }
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
            front_labels(cr, &a, t, &fa, fi, &ss, px, py, n, on, chosen, tmp);
        cairo_restore(cr);
    }
    colorbar(cr, o->palette, W - 50, top, 6, H - top - bottom, clo, chi,
             ec >= 0 ? "Effective clock" : "SM clock", "MHz");
    lg_draw(cr, &lg, &first, left, W, H, NULL, NULL, 0);
    fig_title(cr, o, W);
    rc = fig_close(f, err);
    free(px); free(py); free(pc); free(tm); free(tmp); free(ok); free(on); free(chosen); free(rst);
    series_free(&ss);
    return rc;
}

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_pareto = {
    .name = "pareto",
    .summary = "energy vs time coloured by the clock points run at, dominated points faded, "
               "fronts as steps named at their ends",
    .fn = wl_plot_pareto,
    .options = "facet,x,y,objective",
};
