/* Figure kind heatmap: a value over two parameter axes, one cell per pair
 * (numeric axes sorted, text axes categorical), reduced over the other
 * parameters by min or mean, optionally divided by each row's minimum. */
#include "../plot_internal.h"
#include "../kinds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Readable axis names for the columns wattlas writes. */
static const char *pretty(const char *col)
{
    static const char *const map[][2] = {
        {"sm_clock_mhz", "SM clock (MHz)"}, {"effective_clock_mhz", "Effective clock (MHz)"},
        {"seq", "Sequence length"}, {"batch", "Batch"}, {"voltage_offset_mv", "Voltage offset (mV)"},
        {"energy_j", "Energy (J)"}, {"time_ms", "Time (ms)"}, {"power_w", "Power (W)"},
        {"sms", "SMs"}, {"dram_bw_gbs", "DRAM bandwidth (GB/s)"}, {"power_limit_w", "Power limit (W)"},
        {"model", "Model"}, {"gpu", "GPU"}, {"dtype", "Precision"}, {"mode", "Mode"}};
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

/* One heatmap axis: numeric values sorted, or text values (a categorical
 * axis such as --y model) in order of appearance. */
typedef struct {
    int col, text;
    size_t n;
    double *v;     /* numeric: sorted distinct values */
    size_t *first; /* text: first row of each value */
} hm_axis;

static int hm_axis_build(const wl_results_table *t, int col, hm_axis *ax)
{
    size_t n = wl_results_table_rows(t);
    ax->col = col;
    ax->text = 0;
    for (size_t r = 0; r < n && !ax->text; r++) {
        double v;
        ax->text = wl_results_table_num(t, r, col, &v, NULL) == WL_EPARSE;
    }
    ax->v = malloc((n + 1) * sizeof *ax->v);
    ax->first = malloc((n + 1) * sizeof *ax->first);
    if (!ax->v || !ax->first)
        return WL_ENOMEM;
    if (ax->text) {
        ax->n = wl_results_table_distinct(t, col, ax->first, n);
        return WL_OK;
    }
    size_t m = 0;
    for (size_t r = 0; r < n; r++) {
        double v;
        if (wl_results_table_num(t, r, col, &v, NULL) == WL_OK && isfinite(v))
            ax->v[m++] = v;
    }
    qsort(ax->v, m, sizeof *ax->v, cmp_d);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || ax->v[i] != ax->v[u - 1])
            ax->v[u++] = ax->v[i];
    ax->n = u;
    return WL_OK;
}

/* The index of row r on the axis; n when it has none. */
static size_t hm_index(const wl_results_table *t, const hm_axis *ax, size_t r)
{
    if (ax->text) {
        const char *c = wl_results_table_cell(t, r, ax->col);
        for (size_t i = 0; i < ax->n; i++)
            if (!strcmp(wl_results_table_cell(t, ax->first[i], ax->col), c))
                return i;
        return ax->n;
    }
    double v;
    if (wl_results_table_num(t, r, ax->col, &v, NULL) != WL_OK)
        return ax->n;
    size_t lo = 0, hi = ax->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ax->v[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ax->n && ax->v[lo] == v ? lo : ax->n;
}

/* Which categories get a label: the values on round ticks (4-7 of them)
 * for a numeric axis, every one (or every k-th) for text. */
static void hm_labels(const hm_axis *ax, unsigned char *lab)
{
    memset(lab, 0, ax->n);
    size_t every = ax->n > 12 ? (ax->n + 11) / 12 : 1;
    if (!ax->text && ax->n > 7) {
        double ticks[16];
        int nt = wl_plot_ticks(ax->v[0], ax->v[ax->n - 1], 7, ticks), hit = 0;
        for (size_t i = 0; i < ax->n; i++)
            for (int q = 0; q < nt; q++)
                if (fabs(ax->v[i] - ticks[q]) <= 1e-9 * fmax(1, fabs(ticks[q]))) {
                    lab[i] = 1;
                    hit++;
                }
        if (hit >= 3)
            return;
        memset(lab, 0, ax->n);
        every = (ax->n + 5) / 6;
    }
    for (size_t i = 0; i < ax->n; i += every)
        lab[i] = 1;
}

static void hm_axis_free(hm_axis *ax)
{
    free(ax->v);
    free(ax->first);
}

static void hm_label_text(const wl_results_table *t, const hm_axis *ax, size_t i, char *b,
                          size_t n)
{
    if (ax->text)
        snprintf(b, n, "%s", wl_results_table_cell(t, ax->first[i], ax->col));
    else
        snprintf(b, n, "%g", ax->v[i]);
}

/* A numeric axis of more than seven values is labelled at round numbers
 * (wl_plot_ticks), each placed between the cells whose values bracket it:
 * 500, 1000, 1500 MHz rather than the cells' own 345, 630, 915. Returns
 * the count (0: label cells instead), positions in cell units. */
static int hm_round_ticks(const hm_axis *ax, double *pos, double *val)
{
    if (ax->text || ax->n <= 7)
        return 0;
    double tk[16];
    int nt = wl_plot_ticks(ax->v[0], ax->v[ax->n - 1], 7, tk), m = 0;
    for (int q = 0; q < nt; q++)
        for (size_t i = 0; i + 1 < ax->n; i++)
            if (tk[q] >= ax->v[i] - 1e-9 * fabs(tk[q]) && tk[q] <= ax->v[i + 1] + 1e-9 * fabs(tk[q])) {
                pos[m] = (double)i + (tk[q] - ax->v[i]) / (ax->v[i + 1] - ax->v[i]);
                val[m++] = tk[q];
                break;
            }
    return m >= 3 ? m : 0;
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
    const char *red = k && k->reduce ? k->reduce : "min";
    int mean = !strcmp(red, "mean");
    if (!mean && strcmp(red, "min")) {
        wl_error_set(err, "reduce", 0, "reduce", "expected min or mean, got '%.40s'", red);
        return WL_EINVAL;
    }
    size_t n = wl_results_table_rows(t);
    hm_axis ax = {0}, ay = {0};
    unsigned char *ok = malloc(n + 1);
    int rc = ok ? WL_OK : WL_ENOMEM;
    if (!rc)
        rc = hm_axis_build(t, xc, &ax);
    if (!rc)
        rc = hm_axis_build(t, yc, &ay);
    if (!rc)
        rc = rows_ok(t, ok, err);
    size_t nx = ax.n, ny = ay.n;
    double *grid = rc ? NULL : calloc(nx * ny + 1, sizeof *grid);
    unsigned char *gok = rc ? NULL : calloc(nx * ny + 1, 1), *lx = malloc(nx + 1), *ly = malloc(ny + 1);
    if (!rc && (!grid || !gok || !lx || !ly))
        rc = WL_ENOMEM;
    unsigned *cnt = rc ? NULL : calloc(nx * ny + 1, sizeof *cnt);
    if (!rc && !cnt)
        rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < nx * ny; i++)
        grid[i] = NAN;
    size_t most = 0; /* the most rows one cell holds */
    for (size_t r = 0; !rc && r < n; r++) {
        double z;
        if ((rc = num_cell(t, r, zc, &z, err)))
            break;
        size_t i = hm_index(t, &ax, r), j = hm_index(t, &ay, r);
        if (i >= nx || j >= ny || !isfinite(z))
            continue;
        /* several rows per cell (other parameters): the least (or the
         * mean) z of those that can run; a cell with none that can is grey */
        size_t c = j * nx + i;
        if (isnan(grid[c]) || (ok[r] && !gok[c])) {
            grid[c] = z;
            gok[c] = ok[r];
            cnt[c] = 1;
        } else if (ok[r] == gok[c]) {
            grid[c] = mean ? grid[c] + z : fmin(grid[c], z);
            cnt[c]++;
        }
        most = cnt[c] > most ? cnt[c] : most;
    }
    for (size_t c = 0; !rc && mean && c < nx * ny; c++)
        if (cnt[c] > 1)
            grid[c] /= cnt[c];
    free(cnt);
    if (!rc && k && k->normalize)
        for (size_t j = 0; j < ny; j++) {
            double mn = INFINITY;
            for (size_t i = 0; i < nx; i++)
                if (isfinite(grid[j * nx + i]) && gok[j * nx + i])
                    mn = fmin(mn, grid[j * nx + i]);
            for (size_t i = 0; i < nx; i++)
                grid[j * nx + i] = isfinite(mn) ? grid[j * nx + i] / mn : NAN;
        }
    /* the colour range spans the cells that can run only */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; !rc && i < nx * ny; i++)
        if (isfinite(grid[i]) && gok[i]) {
            lo = fmin(lo, grid[i]);
            hi = fmax(hi, grid[i]);
        }
    fig *f = NULL;
    if (!rc && (nx == 0 || ny == 0 || !isfinite(lo))) {
        wl_error_set(err, table_path(t), 0, zn, "nothing to plot (no cell can run)");
        rc = WL_EINVAL;
    }
    if (!rc)
        rc = fig_open(path, o, &f, err);
    if (!rc) {
        cairo_t *cr = fig_cr(f);
        double W = fig_w(f), H = fig_h(f);
        hm_labels(&ax, lx);
        hm_labels(&ay, ly);
        double rpos[2][16], rval[2][16];
        int nr[2] = {hm_round_ticks(&ax, rpos[0], rval[0]), hm_round_ticks(&ay, rpos[1], rval[1])};
        char b[160];
        /* room for the y labels and, for text on x, slanted x labels */
        style_font(cr, 7, 0);
        double ylw = 0, xlw = 0;
        for (size_t j = 0; j < ny; j++)
            if (ly[j] && !nr[1]) {
                cairo_text_extents_t te;
                hm_label_text(t, &ay, j, b, sizeof b);
                cairo_text_extents(cr, b, &te);
                ylw = fmax(ylw, te.x_advance);
            }
        for (int q = 0; q < nr[1]; q++) {
            cairo_text_extents_t te;
            snprintf(b, sizeof b, "%g", rval[1][q]);
            cairo_text_extents(cr, b, &te);
            ylw = fmax(ylw, te.x_advance);
        }
        for (size_t i = 0; ax.text && i < nx; i++)
            if (lx[i]) {
                cairo_text_extents_t te;
                hm_label_text(t, &ax, i, b, sizeof b);
                cairo_text_extents(cr, b, &te);
                xlw = fmax(xlw, te.x_advance);
            }
        double top = fig_top(cr, o, W), bottom = ax.text ? 20 + xlw * 0.5 : 26,
               left = fmax(44, ylw + 18), right = 56;
        legend_t lg = {.n = 0};
        int any_bad = 0;
        for (size_t i = 0; i < nx * ny; i++)
            any_bad |= isfinite(grid[i]) && !gok[i];
        if (any_bad)
            lg_add(&lg, "cannot run (grey, hatched)", 0, LG_HOLLOW_GREY);
        lg_reserve(cr, &lg, o, W, &right, &bottom, 1);
        axes a = {left, top, W - left - right, H - top - bottom, -0.5, (double)nx - 0.5, -0.5,
                  (double)ny - 0.5, 0, 0, 0, .fixed_units = 0};
        /* cells large enough for "0.612" on a grid of up to 64 get their values */
        int values = nx * ny <= 64 && a.w / (double)nx >= 22 && a.h / (double)ny >= 9;
        /* one decimals for every cell: three significant digits of the
         * largest, a fourth when the cells span under 5% */
        double mag = fmax(fabs(lo), fabs(hi));
        int decimals = mag > 0 ? 2 - (int)floor(log10(mag)) : 2;
        if (hi > lo && (hi - lo) < 0.05 * mag)
            decimals++;
        decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
        /* the axes run in cells; their labels are values */
        if (!ax.text && nx)
            a.data_xmin = ax.v[0], a.data_xmax = ax.v[nx - 1];
        if (!ay.text && ny)
            a.data_ymin = ay.v[0], a.data_ymax = ay.v[ny - 1];
        for (size_t j = 0; j < ny; j++)
            for (size_t i = 0; i < nx; i++) {
                double x0 = ax_x(&a, (double)i - 0.5), x1 = ax_x(&a, (double)i + 0.5);
                double y0 = ax_y(&a, (double)j + 0.5), y1 = ax_y(&a, (double)j - 0.5);
                double z = grid[j * nx + i];
                if (!isfinite(z))
                    continue;
                if (!gok[j * nx + i]) {
                    cairo_set_source_rgb(cr, 0.82, 0.82, 0.82);
                    cairo_rectangle(cr, x0, y0, x1 - x0 + 0.2, y1 - y0 + 0.2);
                    cairo_fill(cr);
                    cairo_save(cr);
                    cairo_rectangle(cr, x0, y0, x1 - x0, y1 - y0);
                    cairo_clip(cr);
                    cairo_set_source_rgb(cr, 1, 1, 1);
                    cairo_set_line_width(cr, 0.6);
                    for (double dd = -(y1 - y0); dd < x1 - x0; dd += 2.5) {
                        cairo_move_to(cr, x0 + dd, y1);
                        cairo_line_to(cr, x0 + dd + (y1 - y0), y0);
                    }
                    cairo_stroke(cr);
                    cairo_restore(cr);
                    continue;
                }
                double rgb[3];
                colormap(o->palette, hi > lo ? (z - lo) / (hi - lo) : 0.5, rgb);
                cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
                cairo_rectangle(cr, x0, y0, x1 - x0 + 0.2, y1 - y0 + 0.2);
                cairo_fill(cr);
                /* a small grid carries its values: the colours span the
                 * cells' range however narrow it is (a 5% spread looks as
                 * contrasted as a 2x one) */
                if (values) {
                    char v[32];
                    snprintf(v, sizeof v, "%.*f", decimals, z);
                    double lum = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
                    style_font(cr, 5.5, 0);
                    if (lum < 0.5)
                        cairo_set_source_rgb(cr, 1, 1, 1);
                    else
                        cairo_set_source_rgb(cr, 0, 0, 0);
                    style_text(cr, (x0 + x1) / 2, (y0 + y1) / 2, v, 0.5, 0.5);
                }
            }
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_line_width(cr, 0.6);
        cairo_rectangle(cr, a.x0, a.y0, a.w, a.h);
        cairo_stroke(cr);
        style_font(cr, 7, 0);
        int nlx = 0, nly = 0;
        for (int q = 0; q < nr[0]; q++) {
            double cx = ax_x(&a, rpos[0][q]);
            snprintf(b, sizeof b, "%g", rval[0][q]);
            cairo_move_to(cr, cx, a.y0 + a.h);
            cairo_line_to(cr, cx, a.y0 + a.h + 2);
            cairo_stroke(cr);
            style_text(cr, cx, a.y0 + a.h + 3, b, 0.5, 0);
        }
        for (int q = 0; q < nr[1]; q++) {
            double cy = ax_y(&a, rpos[1][q]);
            snprintf(b, sizeof b, "%g", rval[1][q]);
            cairo_move_to(cr, a.x0 - 2, cy);
            cairo_line_to(cr, a.x0, cy);
            cairo_stroke(cr);
            style_text(cr, a.x0 - 3, cy, b, 1, 0.5);
        }
        for (size_t i = 0; i < nx && !nr[0]; i++) {
            if (!lx[i])
                continue;
            hm_label_text(t, &ax, i, b, sizeof b);
            double cx = ax_x(&a, (double)i);
            cairo_move_to(cr, cx, a.y0 + a.h);
            cairo_line_to(cr, cx, a.y0 + a.h + 2);
            cairo_stroke(cr);
            if (ax.text) {
                cairo_save(cr);
                cairo_translate(cr, cx, a.y0 + a.h + 3);
                cairo_rotate(cr, M_PI / 6);
                style_text(cr, 0, 0, b, 0, 0);
                cairo_restore(cr);
            } else
                style_text(cr, cx, a.y0 + a.h + 3, b, 0.5, 0);
            nlx++;
        }
        for (size_t j = 0; j < ny && !nr[1]; j++) {
            if (!ly[j])
                continue;
            hm_label_text(t, &ay, j, b, sizeof b);
            double cy = ax_y(&a, (double)j);
            cairo_move_to(cr, a.x0 - 2, cy);
            cairo_line_to(cr, a.x0, cy);
            cairo_stroke(cr);
            style_text(cr, a.x0 - 3, cy, b, 1, 0.5);
            nly++;
        }
        /* categories (text, or at most 7 values) are all labelled: no tick count */
        if (nr[0])
            nlx = nr[0];
        if (nr[1])
            nly = nr[1];
        layout_axes(cr, &a, ax.text || nx <= 7 ? 0 : nlx, ay.text || ny <= 7 ? 0 : nly);
        /* the values labelled: round ticks, or the labelled cells' own */
        for (int d = 0; d < 2; d++) {
            const hm_axis *h = d ? &ay : &ax;
            const unsigned char *lab = d ? ly : lx;
            for (size_t i = 0; !nr[d] && !h->text && i < h->n && nr[d] < 16; i++)
                if (lab[i])
                    rval[d][nr[d]++] = h->v[i];
            layout_labels(cr, d, rval[d], nr[d]);
        }
        style_font(cr, 8.5, 0);
        if (!ax.text)
            style_text(cr, a.x0 + a.w / 2, a.y0 + a.h + 13, pretty(xn), 0.5, 0);
        cairo_save(cr);
        cairo_translate(cr, a.x0 - ylw - 10, a.y0 + a.h / 2);
        cairo_rotate(cr, -M_PI / 2);
        style_text(cr, 0, 0, pretty(yn), 0.5, 0.5);
        cairo_restore(cr);
        char zl[128];
        /* a cell that stands for several rows says how it chose */
        const char *how = most > 1 ? (mean ? ", mean over other parameters"
                                           : ", least over other parameters") : "";
        if (k && k->normalize) {
            char q[64];
            snprintf(q, sizeof q, "%s", pretty(zn));
            char *paren = strstr(q, " (");
            if (paren)
                *paren = 0;
            snprintf(zl, sizeof zl, "%s / row minimum%s", q, how);
        } else {
            snprintf(zl, sizeof zl, "%s%s", pretty(zn), how);
        }
        colorbar(cr, o->palette, W - 50, top, 6, a.h, lo, hi, zl, "");
        /* the range the colours span, under the bar */
        if (hi > lo && lo > 0) {
            char r1[48], r2[48];
            snprintf(r1, sizeof r1, "%.3g to %.3g", lo, hi);
            snprintf(r2, sizeof r2, "(+%.3g%%)", 100 * (hi / lo - 1));
            style_font(cr, 5.5, 0);
            cairo_set_source_rgb(cr, 0, 0, 0);
            style_text(cr, W - 2, a.y0 + a.h + 4, r1, 1, 0);
            style_text(cr, W - 2, a.y0 + a.h + 11, r2, 1, 0);
        }
        lg_draw(cr, &lg, &a, left, W, H, NULL, NULL, 0);
        fig_title(cr, o, W);
        rc = fig_close(f, err);
    }
    hm_axis_free(&ax);
    hm_axis_free(&ay);
    free(ok); free(grid); free(gok); free(lx); free(ly);
    return rc;
}

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_heatmap = {
    .name = "heatmap",
    .summary = "a value over two swept parameters (a text column is categorical), cells that "
               "cannot run grey and hatched",
    .fn = wl_plot_heatmap,
    .options = "x,y,z,normalize,reduce",
};
