/* The bar figure that the summary kinds share (compare, gpus, importance,
 * savings): bars per category, vertical with slanted labels for a few,
 * horizontal for many. */
#include "plot_internal.h"
#include "kinds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    /* labels that fit their slot stand upright under it ("1", "8"), the
     * rest slant; a title under them says what they are */
    int flat = !horiz && lw + 6 <= (W - 54) / (double)(n ? n : 1);
    double cat_h = !horiz && bs->cat_title ? 11 : 0;
    double top = fig_top(cr, o, W), left = horiz ? lw + 10 : 44, right = 10;
    double bottom = horiz ? 26 : flat ? 24 + cat_h : 20 + fmin(lw * 0.5 + 4, H * 0.35) + cat_h;
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
        /* a category with no bar (a GPU that cannot run the case) says why
         * in its slot, not by a gap */
        int none = 1;
        for (int b = 0; b < nb; b++)
            none &= !isfinite(vals[b]);
        if (none && bs->why_empty && bs->why_empty[r] && bs->why_empty[r][0]) {
            char why[64];
            snprintf(why, sizeof why, "%.60s", bs->why_empty[r]);
            style_font(cr, 5.5, 0);
            cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
            if (horiz) {
                style_text(cr, ax_x(&a, fmax(lo, 0)) + 3, ax_y(&a, (double)slot + 0.5), why, 0,
                           0.5);
            } else {
                cairo_save(cr);
                cairo_translate(cr, ax_x(&a, (double)slot + 0.5), ax_y(&a, fmax(lo, 0)) - 3);
                cairo_rotate(cr, -M_PI / 2);
                style_text(cr, 0, 0, why, 0, 0.5);
                cairo_restore(cr);
            }
        }
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
        } else if (flat) {
            style_font(cr, 6, 0);
            cairo_set_source_rgb(cr, 0, 0, 0);
            style_text(cr, ax_x(&a, (double)slot + 0.5), a.y0 + a.h + 4, labels[r], 0.5, 0);
        } else
            slanted_label(cr, &a, ax_x(&a, (double)slot + 0.5), labels[r]);
    }
    if (cat_h > 0) {
        style_font(cr, 7.5, 0);
        cairo_set_source_rgb(cr, 0, 0, 0);
        double below = flat ? 13 : fmin(lw * 0.5 + 4, H * 0.35) + 6;
        style_text(cr, a.x0 + a.w / 2, a.y0 + a.h + below, bs->cat_title, 0.5, 0);
    }
    lg_draw(cr, &lg, &a, left, W, H, NULL, NULL, 0);
    fig_title(cr, o, W);
    return fig_close(f, err);
}
