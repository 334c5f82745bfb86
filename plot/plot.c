/* Figure surfaces, axes, ticks, units and the shared style. */
#include "plot_internal.h"
#include "../results/wattlas_results.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void wl_plot_options_default(wl_plot_options *o)
{
    memset(o, 0, sizeof *o);
    o->width_in = 3.5;
    o->height_in = 2.6;
    o->dpi = 300;
    o->palette = "viridis";
}

/* ---- figures ---------------------------------------------------------------- */

typedef enum { F_PNG, F_PDF, F_SVG } ftype;

/* The layout record rides on the cairo context (user data), so every
 * drawing helper can add to it without a global. */
typedef struct {
    wl_plot_layout *l;
    double scale; /* device units per point */
} layout_rec;
static const cairo_user_data_key_t rec_key;

struct fig {
    ftype type;
    cairo_surface_t *s;
    cairo_t *cr;
    double w, h, dpi;
    wl_results_out *out; /* the file, written atomically (PDF/SVG stream into it) */
    layout_rec rec;
    char path[1024];
};

static wl_plot_layout *layout_of(cairo_t *cr, double *scale)
{
    layout_rec *r = cairo_get_user_data(cr, &rec_key);
    if (!r || !r->l)
        return NULL;
    *scale = r->scale;
    return r->l;
}

/* Adds the user-space box (x0, y0)-(x1, y1), under the current transform
 * (rotated labels), to the ink extent. */
static void rec_ink(cairo_t *cr, double x0, double y0, double x1, double y1, const char *text)
{
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (!l)
        return;
    const double px[4] = {x0, x1, x1, x0}, py[4] = {y0, y0, y1, y1};
    wl_plot_layout_text *t = l->ntexts < WL_PLOT_LAYOUT_TEXTS ? &l->texts[l->ntexts] : NULL;
    l->ntexts++;
    if (t)
        snprintf(t->text, sizeof t->text, "%s", text);
    for (int i = 0; i < 4; i++) {
        double dx = px[i], dy = py[i];
        cairo_user_to_device(cr, &dx, &dy);
        dx /= sc;
        dy /= sc;
        if (t)
            t->x[i] = dx, t->y[i] = dy;
        l->ink[0] = fmin(l->ink[0], dx);
        l->ink[1] = fmin(l->ink[1], dy);
        l->ink[2] = fmax(l->ink[2], dx);
        l->ink[3] = fmax(l->ink[3], dy);
    }
}

void layout_legend(cairo_t *cr, double x, double y, double w, double h)
{
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (!l)
        return;
    l->has_legend = 1;
    l->legend[0] = x, l->legend[1] = y, l->legend[2] = w, l->legend[3] = h;
}

void layout_legend_entries(cairo_t *cr, int n)
{
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (l)
        l->legend_entries = n;
}

void layout_axes(cairo_t *cr, const axes *a, int nx, int ny)
{
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (!l)
        return;
    if (l->naxes < WL_PLOT_LAYOUT_AXES)
        l->axes[l->naxes] = (wl_plot_layout_axes){.x0 = a->x0, .y0 = a->y0, .w = a->w, .h = a->h,
                                                  .xticks = nx, .yticks = ny, .logx = a->logx,
                                                  .logy = a->logy, .xmin = a->xmin,
                                                  .xmax = a->xmax, .ymin = a->ymin,
                                                  .ymax = a->ymax, .ylabel_lo = NAN,
                                                  .ylabel_hi = NAN};
    if (l->naxes < WL_PLOT_LAYOUT_AXES) {
        /* the data's range where the kind gave it, else the axes' */
        wl_plot_layout_axes *r = &l->axes[l->naxes];
        int gx = a->data_xmax > a->data_xmin, gy = a->data_ymax > a->data_ymin;
        r->data_xmin = gx ? a->data_xmin : a->xmin;
        r->data_xmax = gx ? a->data_xmax : a->xmax;
        r->data_ymin = gy ? a->data_ymin : a->ymin;
        r->data_ymax = gy ? a->data_ymax : a->ymax;
    }
    l->naxes++;
}

/* The labelled ticks of the axes just recorded: n of them at v on its x
 * (y = 0) or y axis (1). */
void layout_labels(cairo_t *cr, int y, const double *v, int n)
{
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (!l || !l->naxes || l->naxes > WL_PLOT_LAYOUT_AXES)
        return;
    wl_plot_layout_axes *a = &l->axes[l->naxes - 1];
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (i < WL_PLOT_LAYOUT_LABELS)
            (y ? a->ylabel : a->xlabel)[i] = v[i];
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    if (y && n) {
        a->ylabel_lo = lo;
        a->ylabel_hi = hi;
    }
}

const char *wl_plot_legend_name(wl_plot_legend l)
{
    return l == WL_PLOT_LEGEND_INSIDE ? "inside" : l == WL_PLOT_LEGEND_NONE ? "none" : "outside";
}

int wl_plot_legend_parse(const char *name, wl_plot_legend *out)
{
    static const wl_plot_legend all[3] = {WL_PLOT_LEGEND_OUTSIDE, WL_PLOT_LEGEND_INSIDE,
                                          WL_PLOT_LEGEND_NONE};
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, wl_plot_legend_name(all[i]))) {
            *out = all[i];
            return WL_OK;
        }
    return WL_EINVAL;
}

static cairo_status_t write_file(void *closure, const unsigned char *data, unsigned int len)
{
    return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

int fig_open(const char *path, const wl_plot_options *o, fig **out, wl_error *err)
{
    *out = NULL;
    const char *ext = strrchr(path, '.');
    ftype t;
    if (ext && strcmp(ext, ".png") == 0) t = F_PNG;
    else if (ext && strcmp(ext, ".pdf") == 0) t = F_PDF;
    else if (ext && strcmp(ext, ".svg") == 0) t = F_SVG;
    else {
        wl_error_set(err, path, 0, "", "the output must end in .png, .pdf or .svg");
        return WL_EINVAL;
    }
    if (!(o->width_in > 0.5 && o->width_in < 100 && o->height_in > 0.5 && o->height_in < 100) ||
        !(o->dpi >= 10 && o->dpi <= 2400)) {
        wl_error_set(err, path, 0, "size", "size must be 0.5-100 in and DPI 10-2400");
        return WL_EINVAL;
    }
    fig *f = calloc(1, sizeof *f);
    if (!f)
        return WL_ENOMEM;
    f->type = t;
    f->w = o->width_in * 72;
    f->h = o->height_in * 72;
    f->dpi = o->dpi;
    snprintf(f->path, sizeof f->path, "%s", path);
    int rc = wl_results_out_open(path, &f->out, err);
    if (rc) {
        free(f);
        return rc;
    }
    if (t == F_PNG) {
        int pw = (int)lround(o->width_in * o->dpi), ph = (int)lround(o->height_in * o->dpi);
        f->s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pw, ph);
    } else {
        /* the stream callbacks write straight into the output */
        FILE *fp = wl_results_out_stream(f->out);
        if (t == F_PDF) {
            f->s = cairo_pdf_surface_create_for_stream(write_file, fp, f->w, f->h);
            /* fixed metadata: the same input gives byte-identical files */
            cairo_pdf_surface_set_metadata(f->s, CAIRO_PDF_METADATA_CREATOR, "wattlas");
            cairo_pdf_surface_set_metadata(f->s, CAIRO_PDF_METADATA_CREATE_DATE,
                                           "2000-01-01T00:00:00Z");
            cairo_pdf_surface_set_metadata(f->s, CAIRO_PDF_METADATA_MOD_DATE,
                                           "2000-01-01T00:00:00Z");
        } else {
            f->s = cairo_svg_surface_create_for_stream(write_file, fp, f->w, f->h);
            cairo_svg_surface_set_document_unit(f->s, CAIRO_SVG_UNIT_PT);
        }
    }
    if (cairo_surface_status(f->s) != CAIRO_STATUS_SUCCESS) {
        wl_error_set(err, path, 0, "", "cannot create the cairo surface");
        fig_abort(f);
        return WL_EIO;
    }
    f->cr = cairo_create(f->s);
    if (t == F_PNG)
        cairo_scale(f->cr, o->dpi / 72.0, o->dpi / 72.0);
    if (o->layout) {
        memset(o->layout, 0, sizeof *o->layout);
        o->layout->width_pt = f->w;
        o->layout->height_pt = f->h;
        o->layout->ink[0] = o->layout->ink[1] = INFINITY;
        o->layout->ink[2] = o->layout->ink[3] = -INFINITY;
        f->rec = (layout_rec){.l = o->layout, .scale = t == F_PNG ? o->dpi / 72.0 : 1.0};
        cairo_set_user_data(f->cr, &rec_key, &f->rec, NULL);
    }
    cairo_set_source_rgb(f->cr, 1, 1, 1);
    cairo_paint(f->cr);
    cairo_set_line_join(f->cr, CAIRO_LINE_JOIN_ROUND);
    *out = f;
    return WL_OK;
}

cairo_t *fig_cr(fig *f) { return f->cr; }
double fig_w(const fig *f) { return f->w; }
double fig_h(const fig *f) { return f->h; }

/* PNG through libpng, so the resolution (pHYs) is recorded and no
 * timestamp is, keeping files reproducible. */
static int write_png(fig *f, wl_error *err)
{
    cairo_surface_flush(f->s);
    int w = cairo_image_surface_get_width(f->s), h = cairo_image_surface_get_height(f->s);
    int stride = cairo_image_surface_get_stride(f->s);
    const unsigned char *data = cairo_image_surface_get_data(f->s);
    FILE *fp = wl_results_out_stream(f->out);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *rowbuf = malloc((size_t)w * 3);
    if (!png || !info || !rowbuf) {
        png_destroy_write_struct(&png, &info);
        free(rowbuf);
        return WL_ENOMEM;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rowbuf);
        wl_error_set(err, f->path, 0, "", "PNG write error");
        return WL_EIO;
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_uint_32 ppm = (png_uint_32)lround(f->dpi / 0.0254);
    png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        const uint32_t *src = (const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride);
        for (int x = 0; x < w; x++) {
            uint32_t px = src[x]; /* opaque: white background painted first */
            rowbuf[3 * x] = (unsigned char)((px >> 16) & 0xff);
            rowbuf[3 * x + 1] = (unsigned char)((px >> 8) & 0xff);
            rowbuf[3 * x + 2] = (unsigned char)(px & 0xff);
        }
        png_write_row(png, rowbuf);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rowbuf);
    return WL_OK;
}

int fig_close(fig *f, wl_error *err)
{
    int rc = WL_OK;
    cairo_destroy(f->cr);
    f->cr = NULL;
    if (f->type == F_PNG) {
        rc = write_png(f, err);
        cairo_surface_destroy(f->s);
    } else {
        cairo_surface_finish(f->s);
        if (cairo_surface_status(f->s) != CAIRO_STATUS_SUCCESS) {
            wl_error_set(err, f->path, 0, "", "cairo could not write the figure");
            rc = WL_EIO;
        }
        cairo_surface_destroy(f->s);
    }
    if (rc)
        wl_results_out_abort(f->out);
    else
        rc = wl_results_out_commit(f->out, err);
    free(f);
    return rc;
}

void fig_abort(fig *f)
{
    if (!f)
        return;
    if (f->cr)
        cairo_destroy(f->cr);
    if (f->s) {
        if (f->type != F_PNG)
            cairo_surface_finish(f->s);
        cairo_surface_destroy(f->s);
    }
    wl_results_out_abort(f->out);
    free(f);
}

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
    if (c == 5) {
        /* the coarsest round step (1, 2, 2.5, 5 x 10^k) giving 3 to 8
         * labels, three over the data, with both ends of the axis labelled */
        static const double mult[4] = {5, 2.5, 2, 1};
        for (int e = (int)ceil(log10(hi)); e > (int)floor(log10(hi - lo)) - 3; e--)
            for (int i = 0; i < 4; i++) {
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
    int ends = n > 0 && !(span > 0 && (log(t[0] / lo) > 0.25 * span ||
                                       log(hi / t[n - 1]) > 0.25 * span));
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
        *lo = pow(10, l0 - pad);
        *hi = pow(10, l1 + pad);
        return;
    }
    double pad = (*hi - *lo) * 0.06;
    *lo -= pad;
    *hi += pad;
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
        /* as many as fit side by side: the widest label and a gap each */
        char wide[64];
        cairo_text_extents_t te;
        snprintf(wide, sizeof wide, "%.4g", fmax(fabs(a->xmin), fabs(a->xmax)) * fx);
        cairo_text_extents(cr, wide, &te);
        int fit = (int)(a->w / (te.x_advance + 9));
        if (fit < 4) {
            /* a narrow panel: a smaller font keeps four labels apart */
            style_font(cr, 6.5, 0);
            cairo_text_extents(cr, wide, &te);
            fit = (int)(a->w / (te.x_advance + 4));
            if (fit < 4)
                style_font(cr, 7.5, 0);
        }
        nx = wl_plot_ticks(a->xmin * fx, a->xmax * fx, fit < 3 ? 3 : fit > 7 ? 7 : fit, ticks);
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

/* ---- style ---------------------------------------------------------------------- */

/* Okabe & Ito (2008), "Color Universal Design": distinguishable with every
 * common colour-vision deficiency. */
const double okabe_ito[8][3] = {
    {0.000, 0.447, 0.698}, /* blue */
    {0.835, 0.369, 0.000}, /* vermillion */
    {0.000, 0.620, 0.451}, /* bluish green */
    {0.800, 0.475, 0.655}, /* reddish purple */
    {0.902, 0.624, 0.000}, /* orange */
    {0.337, 0.706, 0.914}, /* sky blue */
    {0.941, 0.894, 0.259}, /* yellow */
    {0.000, 0.000, 0.000}, /* black */
};

/* Lines and markers cycle over seven colours: Okabe-Ito's yellow is too
 * light for a thin line on white and is kept for fills. With the dash
 * cycle of four, colour and dash repeat together only after 28 series. */
void style_color(cairo_t *cr, int i, double alpha)
{
    static const int line[7] = {0, 1, 2, 3, 4, 5, 7};
    const double *c = okabe_ito[line[((i % 7) + 7) % 7]];
    cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
}

void style_fill(cairo_t *cr, int i, double alpha)
{
    /* 0-2: the energy's parts (orange, sky blue, yellow); 3-5: the phases
     * of a step (bluish green, reddish purple, vermillion), so that no
     * fill means two things in one report */
    static const int fill[6] = {4, 5, 6, 2, 3, 1};
    const double *c = okabe_ito[fill[((i % 6) + 6) % 6]];
    cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
}

/* Hatching inside the current path (which it consumes), so that bands stay
 * apart in greyscale: none, diagonal, cross-hatch, by i. */
void style_hatch(cairo_t *cr, int i, double x0, double y0, double x1, double y1)
{
    int k = i % 3;
    cairo_save(cr);
    cairo_clip(cr);
    if (k) {
        cairo_set_source_rgba(cr, 0, 0, 0, 0.45);
        cairo_set_line_width(cr, 0.35);
        cairo_set_dash(cr, NULL, 0, 0);
        double h = y1 - y0;
        for (double d = -h; d < x1 - x0; d += 3.2) {
            cairo_move_to(cr, x0 + d, y1);
            cairo_line_to(cr, x0 + d + h, y0);
            if (k == 2) {
                cairo_move_to(cr, x0 + d, y0);
                cairo_line_to(cr, x0 + d + h, y1);
            }
        }
        cairo_stroke(cr);
    }
    cairo_restore(cr);
    cairo_new_path(cr);
}

void style_dash(cairo_t *cr, int i)
{
    static const double d1[] = {3, 1.5}, d2[] = {1, 1.2}, d3[] = {4, 1.5, 1, 1.5};
    switch (i % 4) {
    case 0: cairo_set_dash(cr, NULL, 0, 0); break;
    case 1: cairo_set_dash(cr, d1, 2, 0); break;
    case 2: cairo_set_dash(cr, d2, 2, 0); break;
    default: cairo_set_dash(cr, d3, 4, 0); break;
    }
}

void style_marker(cairo_t *cr, int i, double x, double y, double s, int filled)
{
    double r = s / 2;
    cairo_new_path(cr);
    switch (i % 6) {
    case 0: cairo_arc(cr, x, y, r, 0, 2 * M_PI); break;
    case 1: cairo_rectangle(cr, x - r * 0.9, y - r * 0.9, 1.8 * r, 1.8 * r); break;
    case 2:
        cairo_move_to(cr, x, y - r * 1.1);
        cairo_line_to(cr, x + r, y + r * 0.8);
        cairo_line_to(cr, x - r, y + r * 0.8);
        cairo_close_path(cr);
        break;
    case 3:
        cairo_move_to(cr, x, y - r * 1.2);
        cairo_line_to(cr, x + r, y);
        cairo_line_to(cr, x, y + r * 1.2);
        cairo_line_to(cr, x - r, y);
        cairo_close_path(cr);
        break;
    case 4:
        cairo_move_to(cr, x, y + r * 1.1);
        cairo_line_to(cr, x + r, y - r * 0.8);
        cairo_line_to(cr, x - r, y - r * 0.8);
        cairo_close_path(cr);
        break;
    default:
        cairo_move_to(cr, x - r, y - r);
        cairo_line_to(cr, x + r, y + r);
        cairo_move_to(cr, x + r, y - r);
        cairo_line_to(cr, x - r, y + r);
        cairo_set_dash(cr, NULL, 0, 0);
        cairo_stroke(cr);
        return;
    }
    cairo_set_dash(cr, NULL, 0, 0);
    if (filled) {
        cairo_fill_preserve(cr);
    }
    cairo_stroke(cr);
}

void style_font(cairo_t *cr, double pt, int bold)
{
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, pt);
}

void style_text(cairo_t *cr, double x, double y, const char *s, double halign, double valign)
{
    cairo_text_extents_t te;
    cairo_font_extents_t fe;
    cairo_text_extents(cr, s, &te);
    cairo_font_extents(cr, &fe);
    double h = fe.ascent;
    double bx = x - te.x_advance * halign, by = y + h * (1 - valign);
    cairo_move_to(cr, bx, by);
    cairo_show_text(cr, s);
    if (s[0])
        rec_ink(cr, bx + te.x_bearing, by + te.y_bearing, bx + te.x_bearing + te.width,
                by + te.y_bearing + te.height, s);
}

/* Perceptually uniform maps, piecewise-linear over published anchors:
 * viridis (van der Walt & Smith 2015), cividis (Nunez et al. 2018). */
void colormap(const char *name, double t, double rgb[3])
{
    static const double vir[9][3] = {
        {0.267, 0.005, 0.329}, {0.278, 0.175, 0.483}, {0.231, 0.322, 0.545},
        {0.173, 0.449, 0.558}, {0.128, 0.567, 0.551}, {0.153, 0.680, 0.510},
        {0.362, 0.786, 0.388}, {0.678, 0.864, 0.190}, {0.993, 0.906, 0.144}};
    static const double civ[9][3] = {
        {0.000, 0.135, 0.304}, {0.109, 0.209, 0.425}, {0.247, 0.282, 0.424},
        {0.362, 0.359, 0.433}, {0.471, 0.441, 0.453}, {0.590, 0.524, 0.452},
        {0.718, 0.612, 0.424}, {0.855, 0.705, 0.362}, {0.995, 0.803, 0.254}};
    const double (*m)[3] = name && strcmp(name, "cividis") == 0 ? civ : vir;
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    double p = t * 8;
    int i = (int)p;
    if (i >= 8) i = 7;
    double u = p - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = m[i][c] + u * (m[i + 1][c] - m[i][c]);
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

/* ---- tables ------------------------------------------------------------------ */

const char *table_path(const wl_results_table *t) { return wl_results_table_source(t); }

int need_col(const wl_results_table *t, const char *name, wl_error *err)
{
    return wl_results_table_need(t, name, err);
}

int need_points(const wl_results_table *t, const char *kind, wl_error *err)
{
    /* optimize's and compare's tables hold one chosen point per group (an
     * objective column, or compare's opt_ columns): a front or a clock
     * curve drawn from them is one dot per workload, with a meaningless
     * clock scale */
    const char *col = wl_results_table_col(t, "objective") >= 0          ? "objective"
                      : wl_results_table_col(t, "opt_sm_clock_mhz") >= 0 ? "opt_sm_clock_mhz"
                                                                          : NULL;
    if (!col)
        return WL_OK;
    wl_error_set(err, wl_results_table_source(t), 1, col,
                 "plot %s draws a table of operating points, a row each (sweep, predict, "
                 "validate's input: sm_clock_mhz, time_ms, power_w, energy_j); this one has a "
                 "chosen point per group (optimize's or compare's output: plot savings or plot "
                 "compare draws it)", kind);
    return WL_EPARSE;
}

int num_cell(const wl_results_table *t, size_t row, int col, double *v, wl_error *err)
{
    int rc = wl_results_table_num(t, row, col, v, err);
    return rc == WL_ENOTFOUND ? WL_OK : rc;
}

/* The title's lines: words wrapped to the figure's width less margins. */
static int title_lines(cairo_t *cr, const char *title, double w, size_t *starts, size_t *lens,
                       int cap)
{
    style_font(cr, 9, 1);
    int n = 0;
    size_t len = strlen(title), i = 0;
    while (i < len && n < cap) {
        while (i < len && title[i] == ' ')
            i++;
        size_t end = i, fit = i;
        for (;;) {
            size_t j = end;
            while (j < len && title[j] != ' ')
                j++;
            char line[512];
            size_t l = j - i < sizeof line - 1 ? j - i : sizeof line - 1;
            memcpy(line, title + i, l);
            line[l] = 0;
            cairo_text_extents_t te;
            cairo_text_extents(cr, line, &te);
            if (te.x_advance > w - 8 && fit > i)
                break; /* the words up to fit make the line */
            fit = j;
            if (j >= len)
                break;
            end = j + 1;
        }
        if (fit == i) /* one word wider than the figure: cut it */
            fit = i + 1;
        starts[n] = i;
        lens[n] = fit - i;
        n++;
        i = fit;
    }
    return n;
}

double fig_top(cairo_t *cr, const wl_plot_options *o, double w)
{
    if (!o->title || !*o->title)
        return 6;
    size_t st[8], ln[8];
    return 5 + 10.5 * title_lines(cr, o->title, w, st, ln, 8);
}

void fig_title(cairo_t *cr, const wl_plot_options *o, double w)
{
    if (!o->title || !*o->title)
        return;
    size_t st[8], ln[8];
    int n = title_lines(cr, o->title, w, st, ln, 8);
    style_font(cr, 9, 1);
    cairo_set_source_rgb(cr, 0, 0, 0);
    for (int i = 0; i < n; i++) {
        char line[512];
        size_t l = ln[i] < sizeof line - 1 ? ln[i] : sizeof line - 1;
        memcpy(line, o->title + st[i], l);
        line[l] = 0;
        style_text(cr, w / 2, 3 + 10.5 * i, line, 0.5, 0);
    }
}

int wide_span(const wl_results_table *t, int col)
{
    double lo = INFINITY, hi = 0, v;
    wl_error e;
    for (size_t r = 0; col >= 0 && r < wl_results_table_rows(t); r++)
        if (wl_results_table_num(t, r, col, &v, &e) == WL_OK && isfinite(v) && v > 0) {
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    return hi > 10 * lo;
}
