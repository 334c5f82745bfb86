/* Axes: ticks (linear and logarithmic), SI prefixes and units, and the
 * axes drawn with their grid, tick labels and names; the colour bar. */
#include "plot_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ticks and units -------------------------------------------------------- */

int wl_plot_ticks(double lo, double hi, int max_ticks, double *ticks)
{
    if (!(hi > lo) || !isfinite(lo) || !isfinite(hi) || max_ticks < 2)
        return 0;
    int min_t = max_ticks < 4 ? max_ticks : 4;
    static const double mult[] = {1, 2, 2.5, 5};
    double span = hi - lo, step = NAN, best = INFINITY;
    int e0 = (int)floor(log10(span)) - 2;
    /* the step whose count is in [min_t, max_ticks] and nearest 5; 2.5
     * only when it alone fits (its labels need a digit more) */
    for (int e = e0; e <= e0 + 3; e++)
        for (int i = 0; i < 4; i++) {
            double st = mult[i] * pow(10, e);
            double n = floor(hi / st + 1e-9) - ceil(lo / st - 1e-9) + 1;
            double score = n < min_t ? 10 * (min_t - n) : n > max_ticks ? 10 * (n - max_ticks)
                                                                         : fabs(n - 5);
            if (i == 2)
                score += 0.9;
            if (score < best) {
                best = score;
                step = st;
            }
        }
    int n = 0;
    for (double k = ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9 && n < max_ticks + 2; k++)
        ticks[n++] = fabs(k * step) < step * 1e-9 ? 0.0 : k * step;
    return n;
}

/* Log-axis labels, at most maxn (what the axis's length holds, 3 to 7).
 * Candidates, in order: whole decades; 1-3 in each decade; 1-2-5; 1-2-3-5;
 * every integer multiple (each thinned to every k-th when too many); round
 * linear steps. The first is taken that has three labels or more over the
 * data [dlo, dhi] and labels both ends of the axis, a label within the
 * lowest and the highest quarter of its span: a series at 2.5-3.5 J under a
 * lowest label of 4, or one at 0.2 J under a lowest label of 0.5, could not
 * be read. Failing all, the one with the most labels over the data. Within
 * a decade and a half, a set of more than four labels crowds at the
 * decade's low end (0.7 0.8 0.9 1): round linear steps read better there. */
static int log_score(const double *t, int n, double lo, double hi, double dlo, double dhi);

static int log_candidate(int c, double lo, double hi, double dlo, double dhi, int maxn,
                         double *t, int cap)
{
    static const double sets[5][9] = {
        {1}, {1, 3}, {1, 2, 5}, {1, 2, 3, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
    static const int sizes[5] = {1, 2, 3, 4, 9};
    int n = 0;
    if (!(isfinite(lo) && isfinite(hi) && isfinite(hi - lo) && lo > 0 && hi > lo))
        return 0; /* no decade or step to count over */
    if (c == 5) {
        /* the coarsest round step (1, 2, 2.5, 4, 5 x 10^k) giving 3 to 8
         * labels, three over the data, with both ends of the axis labelled
         * (4: 0.72-2.4 s has no other, 0.5 leaving its low end bare and
         * 0.25 giving eight) */
        static const double mult[5] = {5, 4, 2.5, 2, 1};
        for (int e = (int)ceil(log10(hi)); e > (int)floor(log10(hi - lo)) - 3; e--)
            for (int i = 0; i < 5; i++) {
                double st = mult[i] * pow(10, e);
                n = 0;
                for (double k = ceil(lo / st - 1e-9); k * st <= hi * 1.0001 && n < cap; k++)
                    if (k > 0)
                        t[n++] = k * st;
                if (n <= maxn && log_score(t, n, lo, hi, dlo, dhi) >= 3)
                    return n;
                if (n > maxn)
                    return 0;
            }
        return 0;
    }
    for (double d = pow(10, floor(log10(lo))); d <= hi * 1.0001 && n < cap; d *= 10)
        for (int i = 0; i < sizes[c] && n < cap; i++) {
            double v = sets[c][i] * d;
            if (v >= lo * 0.9999 && v <= hi * 1.0001)
                t[n++] = v;
        }
    /* many: every k-th, down to at most maxn, from the first of the k
     * offsets that labels both ends and the most of the data */
    if (n > maxn) {
        int k = (n + maxn - 1) / maxn, m = 0, best = 0, sbest = -1000;
        for (int off = 0; off < k; off++) {
            double th[32];
            int nt = 0;
            for (int i = off; i < n; i += k)
                th[nt++] = t[i];
            int sc = nt <= maxn ? log_score(th, nt, lo, hi, dlo, dhi) : -1000;
            if (sc > sbest) {
                sbest = sc;
                best = off;
            }
        }
        for (int i = best; i < n; i += k)
            t[m++] = t[i];
        n = m;
    }
    return n;
}

/* How many of t[0..n) lie over the data; 100 less where the set leaves an
 * end of the axis bare or has fewer than three labels. */
static int log_score(const double *t, int n, double lo, double hi, double dlo, double dhi)
{
    double span = log(hi / lo);
    int inside = 0;
    for (int i = 0; i < n; i++)
        inside += t[i] >= dlo * 0.9999 && t[i] <= dhi * 1.0001;
    /* an end is labelled when a label sits within a quarter of the span of
     * it, a fifth on an axis of more than a decade (0.048-2.2 J, padded,
     * once read 0.1 0.3 1, each end a quarter away; now 0.05 ... 2) */
    double near = span > log(10.0) ? 0.2 : 0.25;
    int ends = n > 0 && !(span > 0 && (log(t[0] / lo) > near * span ||
                                       log(hi / t[n - 1]) > near * span));
    /* a set that leaves an end bare ranks below every one that does not */
    return n >= 3 && ends ? inside : n > 0 ? inside - 100 : -200;
}

static int log_ticks(double lo, double hi, double dlo, double dhi, int maxn, double *t, int cap)
{
    maxn = maxn < 3 ? 3 : maxn > 7 ? 7 : maxn;
    if (!(dhi > dlo) || !(dlo > 0))
        dlo = lo, dhi = hi;
    double best[32];
    int nbest = 0, sbest = -1000, chosen = -1;
    if (cap > 32)
        cap = 32;
    for (int c = 0; c < 6; c++) {
        double cand[32];
        int n = log_candidate(c, lo, hi, dlo, dhi, maxn, cand, cap);
        int sc = log_score(cand, n, lo, hi, dlo, dhi);
        if (sc >= 3 || sc > sbest) {
            memcpy(best, cand, (size_t)n * sizeof *cand);
            nbest = n;
            sbest = sc;
            chosen = c;
        }
        if (sc >= 3)
            break;
    }
    if (hi < lo * 15 && nbest > 4 && chosen < 5) {
        double lin[32];
        int n = log_candidate(5, lo, hi, dlo, dhi, maxn, lin, cap);
        if (log_score(lin, n, lo, hi, dlo, dhi) >= 3) {
            memcpy(best, lin, (size_t)n * sizeof *lin);
            nbest = n;
        }
    }
    memcpy(t, best, (size_t)nbest * sizeof *t);
    return nbest;
}

double wl_plot_si(double vmax, const char **prefix)
{
    static const struct {
        double f;
        const char *p;
    } si[] = {{1e-9, "G"}, {1e-6, "M"}, {1e-3, "k"}, {1, ""}, {1e3, "m"}, {1e6, "\xc2\xb5"}, {1e9, "n"}};
    double a = fabs(vmax);
    for (size_t i = 0; i < sizeof si / sizeof *si; i++)
        if (a * si[i].f >= 1 || i + 1 == sizeof si / sizeof *si) {
            *prefix = si[i].p;
            return si[i].f;
        }
    *prefix = "";
    return 1;
}

/* ---- axes ---------------------------------------------------------------------- */

double ax_x(const axes *a, double v)
{
    double t = a->logx ? (log10(v) - log10(a->xmin)) / (log10(a->xmax) - log10(a->xmin))
                       : (v - a->xmin) / (a->xmax - a->xmin);
    return a->x0 + t * a->w;
}

double ax_y(const axes *a, double v)
{
    double t = a->logy ? (log10(v) - log10(a->ymin)) / (log10(a->ymax) - log10(a->ymin))
                       : (v - a->ymin) / (a->ymax - a->ymin);
    return a->y0 + a->h - t * a->h;
}

/* Units that take an SI prefix; anything else (MHz, %, GB/s) is shown as
 * given, so a clock axis is in MHz in every figure. */
static int si_unit(const char *u)
{
    static const char *const base[] = {"J", "W", "s", "Hz", "FLOP", "B"};
    for (size_t i = 0; u && i < sizeof base / sizeof *base; i++)
        if (!strcmp(u, base[i]))
            return 1;
    return 0;
}

void ax_range(double *lo, double *hi, int log)
{
    if (!(*hi > *lo)) {
        double c = isfinite(*lo) ? *lo : 1;
        *lo = c - (c != 0 ? fabs(c) * 0.1 : 1);
        *hi = c + (c != 0 ? fabs(c) * 0.1 : 1);
    }
    /* headroom: 6% of the span each side, so that markers and plateaus at
     * the extremes clear the frame */
    if (log) {
        if (*lo <= 0)
            *lo = *hi * 1e-3;
        double l0 = log10(*lo), l1 = log10(*hi), pad = (l1 - l0) * 0.06;
        if (pad < 0.02)
            pad = 0.02;
        /* data at the ends of the doubles: no headroom where it would
         * leave them (an infinite or zero end has no ticks) */
        double l = pow(10, l0 - pad), h = pow(10, l1 + pad);
        /* an end just past a round value (1, 2, 5 x 10^k) moves out to it,
         * within a tenth of the span, so that a label can sit there (1.13
         * to 13 J once read 2 to 10, its low end bare) */
        double span = log10(h) - log10(l);
        if (l > 0 && isfinite(h) && span > 0) {
            static const double nice[3] = {1, 2, 5};
            double d = pow(10, floor(log10(l))), best = 0;
            for (int i = 2; i >= 0 && !best; i--)
                if (nice[i] * d <= l)
                    best = nice[i] * d;
            if (best > 0 && log10(l / best) < 0.1 * span)
                l = best;
            d = pow(10, floor(log10(h)));
            best = 0;
            for (int i = 0; i < 4 && !best; i++) {
                double v = (i < 3 ? nice[i] : 10) * d;
                if (v >= h)
                    best = v;
            }
            if (best > 0 && log10(best / h) < 0.1 * span)
                h = best;
        }
        if (l > 0)
            *lo = l;
        if (isfinite(h))
            *hi = h;
        return;
    }
    double pad = (*hi - *lo) * 0.06;
    if (isfinite(*lo - pad) && isfinite(*hi + pad) && isfinite(pad)) {
        *lo -= pad;
        *hi += pad;
    }
}

/* As many decimals as the tick step needs (0.25 -> 2, 0.5 -> 1, 5 -> 0). */
static void fmt_tick(char *buf, size_t n, double v, double step)
{
    int dec = 0;
    while (dec < 6 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
        dec++;
    snprintf(buf, n, "%.*f", dec, v);
}

/* Short unlabelled ticks at the integer multiples of each decade. */
static void minor_log_ticks(cairo_t *cr, const axes *a, int xaxis)
{
    double lo = xaxis ? a->xmin : a->ymin, hi = xaxis ? a->xmax : a->ymax;
    if (!(lo > 0) || !(hi > lo))
        return;
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.3);
    int n = 0;
    for (double d = pow(10, floor(log10(lo))); d <= hi && n < 400; d *= 10)
        for (int m = 1; m <= 9 && n < 400; m++, n++) {
            double v = m * d;
            if (v < lo || v > hi)
                continue;
            if (xaxis) {
                double x = ax_x(a, v);
                cairo_move_to(cr, x, a->y0 + a->h);
                cairo_line_to(cr, x, a->y0 + a->h + 1.5);
            } else {
                double y = ax_y(a, v);
                cairo_move_to(cr, a->x0 - 1.5, y);
                cairo_line_to(cr, a->x0, y);
            }
        }
    cairo_stroke(cr);
}

void ax_draw(cairo_t *cr, const axes *a, const char *xq, const char *xu, const char *yq,
             const char *yu, int show_x_labels)
{
    double ticks[40];
    char buf[128];
    const char *px = "", *py = "";
    double fx = 1, fy = 1;
    if (si_unit(xu) && !a->fixed_units)
        fx = wl_plot_si(fmax(fabs(a->xmin), fabs(a->xmax)), &px);
    if (si_unit(yu) && !a->fixed_units)
        fy = wl_plot_si(fmax(fabs(a->ymin), fabs(a->ymax)), &py);
    style_font(cr, 7.5, 0);
    cairo_set_line_width(cr, 0.4);
    /* x grid and ticks (none for a categorical axis: no x quantity) */
    int nx;
    if (!xq)
        nx = 0;
    else if (a->logx)
        nx = log_ticks(a->xmin, a->xmax, a->data_xmin, a->data_xmax, (int)(a->w / 22), ticks, 32);
    else {
        /* as many as fit side by side: the most ticks (7 down to 4) whose
         * own labels, as printed, each with a gap, fit the width; then the
         * same in a smaller font for a narrow panel; 3 only when no four
         * fit even so. (The widest value's "%.4g" was the estimate: a
         * range ending at 46.23 took five digits a label, where the
         * labels are 0, 10, ..., 40, and a panel held three ticks.) */
        static const double fonts[2][2] = {{7.5, 9}, {6.5, 4}};
        int fit = 3;
        for (int fi = 0; fi < 2 && fit < 4; fi++) {
            style_font(cr, fonts[fi][0], 0);
            for (int m = 7; m >= 4; m--) {
                int n = wl_plot_ticks(a->xmin * fx, a->xmax * fx, m, ticks);
                double step = n > 1 ? ticks[1] - ticks[0] : 1, need = 0;
                for (int i = 0; i < n; i++) {
                    cairo_text_extents_t te;
                    fmt_tick(buf, sizeof buf, ticks[i], step);
                    cairo_text_extents(cr, buf, &te);
                    need += te.x_advance + fonts[fi][1];
                }
                if (n >= 2 && need <= a->w) {
                    fit = m;
                    break;
                }
            }
        }
        if (fit < 4)
            style_font(cr, 7.5, 0);
        nx = wl_plot_ticks(a->xmin * fx, a->xmax * fx, fit, ticks);
        for (int i = 0; i < nx; i++)
            ticks[i] /= fx;
    }
    int xlab = 0, ylab = 0;
    double xlast = -INFINITY, ylast = INFINITY, xval[40], yval[40];
    for (int i = 0; i < nx; i++) {
        double x = ax_x(a, ticks[i]);
        if (x < a->x0 - 0.01 || x > a->x0 + a->w + 0.01)
            continue;
        cairo_set_line_width(cr, 0.4);
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, x, a->y0);
        cairo_line_to(cr, x, a->y0 + a->h);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, x, a->y0 + a->h);
        cairo_line_to(cr, x, a->y0 + a->h + 2.5);
        cairo_stroke(cr);
        if (show_x_labels) {
            double step = nx > 1 ? (ticks[1] - ticks[0]) * fx : 1;
            if (a->logx)
                snprintf(buf, sizeof buf, "%g", ticks[i] * fx);
            else
                fmt_tick(buf, sizeof buf, ticks[i] * fx, step);
            /* a label that would run into the last one is left out */
            cairo_text_extents_t te;
            cairo_text_extents(cr, buf, &te);
            if (x - te.x_advance / 2 < xlast + 3)
                continue;
            xlast = x + te.x_advance / 2;
            style_text(cr, x, a->y0 + a->h + 4, buf, 0.5, 0);
            xval[xlab++] = ticks[i];
        }
    }
    if (xq && a->logx)
        minor_log_ticks(cr, a, 1);
    style_font(cr, 7.5, 0);
    int ny;
    if (!yq && !yu)
        ny = 0; /* a categorical y axis (horizontal bars) */
    else if (a->logy)
        ny = log_ticks(a->ymin, a->ymax, a->data_ymin, a->data_ymax, (int)(a->h / 11), ticks, 32);
    else {
        /* as many as fit one above the other */
        int fit = (int)(a->h / 10);
        ny = wl_plot_ticks(a->ymin * fy, a->ymax * fy, fit < 4 ? 4 : fit > 7 ? 7 : fit, ticks);
        for (int i = 0; i < ny; i++)
            ticks[i] /= fy;
    }
    for (int i = 0; i < ny; i++) {
        double y = ax_y(a, ticks[i]);
        if (y < a->y0 - 0.01 || y > a->y0 + a->h + 0.01)
            continue;
        cairo_set_line_width(cr, 0.4);
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, a->x0, y);
        cairo_line_to(cr, a->x0 + a->w, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, a->x0 - 2.5, y);
        cairo_line_to(cr, a->x0, y);
        cairo_stroke(cr);
        /* a label on the frame's top or bottom edge would meet the next
         * panel's: stacked panels leave those out */
        if (a->no_edge_labels && (y < a->y0 + 1.5 || y > a->y0 + a->h - 1.5))
            continue;
        double step = ny > 1 ? (ticks[1] - ticks[0]) * fy : 1;
        if (a->logy)
            snprintf(buf, sizeof buf, "%g", ticks[i] * fy);
        else
            fmt_tick(buf, sizeof buf, ticks[i] * fy, step);
        if (y > ylast - 7.5) /* would touch the label below it */
            continue;
        ylast = y;
        style_text(cr, a->x0 - 4, y, buf, 1, 0.5);
        yval[ylab++] = ticks[i];
    }
    if (a->logy)
        minor_log_ticks(cr, a, 0);
    layout_axes(cr, a, xq ? xlab : 0, ylab);
    layout_labels(cr, 0, xval, xq ? xlab : 0);
    layout_labels(cr, 1, yval, ylab);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.6);
    cairo_rectangle(cr, a->x0, a->y0, a->w, a->h);
    cairo_stroke(cr);
    style_font(cr, 8.5, 0);
    if (show_x_labels && xq) {
        if (xu && *xu)
            snprintf(buf, sizeof buf, "%s (%s%s)", xq, px, xu);
        else
            snprintf(buf, sizeof buf, "%s", xq);
        style_text(cr, a->x0 + a->w / 2, a->y0 + a->h + 13, buf, 0.5, 0);
    }
    if (yq) {
        if (yu && *yu)
            snprintf(buf, sizeof buf, "%s (%s%s)", yq, py, yu);
        else
            snprintf(buf, sizeof buf, "%s", yq);
        /* a short panel gets a smaller label rather than one that runs
         * into the next panel's */
        cairo_text_extents_t te;
        cairo_text_extents(cr, buf, &te);
        if (a->label_pt > 0)
            style_font(cr, a->label_pt, 0);
        else if (te.x_advance > a->h)
            style_font(cr, fmax(5, 8.5 * a->h / te.x_advance), 0);
        cairo_save(cr);
        cairo_translate(cr, a->x0 - 29, a->y0 + a->h / 2);
        cairo_rotate(cr, -M_PI / 2);
        style_text(cr, 0, 0, buf, 0.5, 0.5);
        cairo_restore(cr);
    }
}

void colorbar(cairo_t *cr, const char *palette, double x, double y, double w, double h,
              double lo, double hi, const char *q, const char *u)
{
    int n = 64;
    for (int i = 0; i < n; i++) {
        double rgb[3];
        colormap(palette, (i + 0.5) / n, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, x, y + h - (i + 1) * h / n, w, h / n + 0.3);
        cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.4);
    cairo_rectangle(cr, x, y, w, h);
    cairo_stroke(cr);
    axes a = {x, y, w, h, 0, 1, lo, hi, 0, 0, 0, .fixed_units = 0};
    double ticks[32];
    const char *p = "";
    double fy = si_unit(u) ? wl_plot_si(fmax(fabs(lo), fabs(hi)), &p) : 1;
    if (!si_unit(u))
        p = "";
    int nt = wl_plot_ticks(lo * fy, hi * fy, 4, ticks);
    style_font(cr, 7, 0);
    char buf[160];
    double widest = 0;
    for (int i = 0; i < nt; i++) {
        double yy = ax_y(&a, ticks[i] / fy);
        if (yy < y - 0.01 || yy > y + h + 0.01)
            continue;
        cairo_move_to(cr, x + w, yy);
        cairo_line_to(cr, x + w + 2, yy);
        cairo_stroke(cr);
        fmt_tick(buf, sizeof buf, ticks[i], nt > 1 ? ticks[1] - ticks[0] : 1);
        cairo_text_extents_t te;
        cairo_text_extents(cr, buf, &te);
        widest = fmax(widest, te.x_advance);
        style_text(cr, x + w + 3, yy, buf, 0, 0.5);
    }
    if (q) {
        if (u && *u)
            snprintf(buf, sizeof buf, "%s (%s%s)", q, p, u);
        else
            snprintf(buf, sizeof buf, "%s", q);
        /* the label clears the widest tick label by 2 pt; longer than
         * the bar, it breaks at its last ", " into two lines, and smaller
         * type (down to 5.5 pt) fits what is still too long */
        style_font(cr, 7.5, 0);
        char line[2][160];
        int nl = 1;
        snprintf(line[0], sizeof line[0], "%s", buf);
        cairo_text_extents_t te;
        cairo_text_extents(cr, buf, &te);
        char *cut = strrchr(buf, ',');
        if (te.x_advance > h && cut && cut[1] == ' ') {
            snprintf(line[0], sizeof line[0], "%.*s,", (int)(cut - buf), buf);
            snprintf(line[1], sizeof line[1], "%s", cut + 2);
            nl = 2;
        }
        double pt = 7.5;
        for (int i = 0; i < nl; i++) {
            cairo_text_extents(cr, line[i], &te);
            if (te.x_advance > h)
                pt = fmin(pt, fmax(5.5, 7.5 * h / te.x_advance));
        }
        style_font(cr, pt, 0);
        cairo_font_extents_t fe;
        cairo_font_extents(cr, &fe);
        double x0 = x + w + 3 + fmax(widest, 17) + 2 + fe.ascent / 2;
        for (int i = 0; i < nl; i++) {
            cairo_save(cr);
            cairo_translate(cr, x0 + i * (fe.ascent + 1.5), y + h / 2);
            cairo_rotate(cr, -M_PI / 2);
            style_text(cr, 0, 0, line[i], 0.5, 0.5);
            cairo_restore(cr);
        }
    }
}
