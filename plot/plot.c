/* Figure surfaces (PNG, PDF, SVG written atomically), the layout record,
 * the shared style (colours, dashes, markers, fonts, colour maps), titles
 * and the table helpers the kinds share; the axes are in axes.c. */
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

void layout_mark(cairo_t *cr, double x, double y)
{
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (!l)
        return;
    cairo_user_to_device(cr, &x, &y);
    if (l->nmarks < sizeof l->marks / sizeof *l->marks) {
        l->marks[l->nmarks][0] = x / sc;
        l->marks[l->nmarks][1] = y / sc;
    }
    l->nmarks++;
}

void layout_front_label(cairo_t *cr, double own, double other, int leader)
{
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (!l)
        return;
    double dx = 1, dy = 0;
    cairo_user_to_device_distance(cr, &dx, &dy);
    double u = hypot(dx, dy) / sc; /* pt per user unit */
    if (l->nfront_labels < sizeof l->front_label / sizeof *l->front_label) {
        double *f = l->front_label[l->nfront_labels];
        f[0] = own * u, f[1] = isfinite(other) ? other * u : INFINITY, f[2] = leader;
    }
    l->nfront_labels++;
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

/* The figure's format from its name's ending; -1: none it can write. */
static int type_of_path(const char *path)
{
    const char *ext = path ? strrchr(path, '.') : NULL;
    return !ext ? -1 : !strcmp(ext, ".png") ? F_PNG : !strcmp(ext, ".pdf") ? F_PDF
                   : !strcmp(ext, ".svg") ? F_SVG : -1;
}

int wl_plot_output_check(const char *path, wl_error *err)
{
    if (type_of_path(path) >= 0)
        return WL_OK;
    const char *ext = path ? strrchr(path, '.') : NULL;
    wl_error_set(err, "-o", 0, "", "cannot write a figure as '%.40s': the formats are .png, .pdf "
                                   "and .svg (the name's ending chooses)", ext ? ext : path ? path : "");
    return WL_EINVAL;
}

int fig_open(const char *path, const wl_plot_options *o, fig **out, wl_error *err)
{
    *out = NULL;
    int ty = type_of_path(path);
    if (ty < 0) {
        wl_error_set(err, path, 0, "", "the output must end in .png, .pdf or .svg");
        return WL_EINVAL;
    }
    ftype t = (ftype)ty;
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

/* Lines and markers take seven Okabe-Ito colours (its yellow is too light
 * for a thin line on white and is kept for fills), then five of Paul Tol's
 * "muted" scheme that none of them resembles (wine, indigo, olive, teal,
 * grey; Tol 2021, SRON/EPS/TN/09-002), so a figure of up to twelve series
 * gives each its own colour (issue 79: nine series, two blues and two
 * vermillions); beyond, the dash and the marker tell them apart. */
#define LINE_COLOURS 12
static const double line_rgb[LINE_COLOURS][3] = {
    {0.000, 0.447, 0.698}, {0.835, 0.369, 0.000}, {0.000, 0.620, 0.451}, {0.800, 0.475, 0.655},
    {0.902, 0.624, 0.000}, {0.337, 0.706, 0.914}, {0.000, 0.000, 0.000}, {0.533, 0.133, 0.333},
    {0.200, 0.133, 0.533}, {0.600, 0.600, 0.200}, {0.267, 0.667, 0.600}, {0.467, 0.467, 0.467}};

void style_color(cairo_t *cr, int i, double alpha)
{
    int k = ((i % LINE_COLOURS) + LINE_COLOURS) % LINE_COLOURS;
    const double *c = line_rgb[k];
    cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
    double sc;
    wl_plot_layout *l = layout_of(cr, &sc);
    if (l && i >= 0 && i < 32) {
        memcpy(l->series_rgb[i], c, sizeof l->series_rgb[i]);
        if ((size_t)i >= l->nseries)
            l->nseries = (size_t)i + 1;
    }
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
