/* Tests of plot/: PNG size, DPI and pixels where the data say, PDF page
 * size, determinism, errors without leftovers. */
#include "test_util.h"

#include <cairo.h>
#include "../plot/wattlas_plot.h"

#include <png.h>
#include <unistd.h>

#ifndef WATTLAS_BIN_PATH
#define WATTLAS_BIN_PATH "bin/wattlas"
#endif

typedef struct {
    png_uint_32 w, h, xppm, yppm;
    unsigned char *rgb;
} png_img;

static char bin_path[4096];
static char src_root[4096]; /* the checkout: where the tests start */

static void read_png(const char *path, png_img *img)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng could not read %s", path);
    png_init_io(png, f);
    png_read_info(png, info);
    img->w = png_get_image_width(png, info);
    img->h = png_get_image_height(png, info);
    int unit = 0;
    png_get_pHYs(png, info, &img->xppm, &img->yppm, &unit);
    assert_int_equal(unit, PNG_RESOLUTION_METER);
    assert_int_equal(png_get_color_type(png, info), PNG_COLOR_TYPE_RGB);
    img->rgb = malloc((size_t)img->w * img->h * 3);
    for (png_uint_32 y = 0; y < img->h; y++)
        png_read_row(png, img->rgb + (size_t)y * img->w * 3, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
}

static char *slurp_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* A known V-shaped curve: 5 clocks, energy 4, 2, 1, 2, 4 J. */
static const char *CURVE =
    "gpu,model,sm_clock_mhz,effective_clock_mhz,time_ms,power_w,energy_j,energy_dyn_compute_j,"
    "energy_dyn_memory_j,energy_static_j,throttled\n"
    "g,m,400,400,10,400,4,1,1,2,0\n"
    "g,m,600,600,10,200,2,0.5,0.5,1,0\n"
    "g,m,800,800,10,100,1,0.25,0.25,0.5,0\n"
    "g,m,1000,1000,10,200,2,0.5,0.5,1,0\n"
    "g,m,1200,1200,10,400,4,1,1,2,0\n";

static void test_png_pixels(void **state)
{
    (void)state;
    const char *csv = "curve.csv", *png = "curve.png";
    test_write_file(csv, CURVE);
    wl_results_table *t;
    wl_error err;
    assert_int_equal(wl_results_table_load(csv, &t, &err), WL_OK);
    wl_plot_options o;
    wl_plot_options_default(&o);
    wl_plot_layout lay;
    o.layout = &lay;
    assert_int_equal(wl_plot_energy_freq(t, NULL, &o, png, &err), WL_OK);
    png_img img;
    read_png(png, &img);
    /* 3.5 x 2.6 in at 300 dpi; pHYs = 300 / 0.0254 px/m */
    assert_int_equal(img.w, 1050);
    assert_int_equal(img.h, 780);
    assert_int_equal(img.xppm, 11811);
    assert_int_equal(lay.naxes, 1);
    /* the axes where the layout says; ranges padded by 6% each side (x in
     * MHz: 352..1248, y: 0.82..4.18 J) */
    double x0 = lay.axes[0].x0, y0 = lay.axes[0].y0, aw = lay.axes[0].w, ah = lay.axes[0].h;
    double xl = 400 - 0.06 * 800, xh = 1200 + 0.06 * 800, yl = 1 - 0.06 * 3, yh = 4 + 0.06 * 3;
    for (int i = 0; i < 5; i++) {
        double fx = 400 + 200 * i, ey = (i == 2) ? 1 : (i == 1 || i == 3) ? 2 : 4;
        double px = (x0 + (fx - xl) / (xh - xl) * aw) * 300 / 72;
        double py = (y0 + ah - (ey - yl) / (yh - yl) * ah) * 300 / 72;
        const unsigned char *c = img.rgb + ((size_t)lround(py) * img.w + (size_t)lround(px)) * 3;
        /* the first Okabe-Ito colour, blue (0, 114, 178) */
        if (!(abs(c[0] - 0) < 40 && abs(c[1] - 114) < 40 && abs(c[2] - 178) < 40))
            fail_msg("point %d at (%.0f, %.0f) px is (%d, %d, %d), not the series blue", i, px,
                     py, c[0], c[1], c[2]);
    }
    /* far from the curve, inside the plot: background white */
    double px = (x0 + 0.5 * aw) * 300 / 72, py = (y0 + 0.2 * ah) * 300 / 72;
    const unsigned char *c = img.rgb + ((size_t)lround(py) * img.w + (size_t)lround(px)) * 3;
    assert_true(c[0] > 200 && c[1] > 200 && c[2] > 200);
    free(img.rgb);
    /* determinism: the same input gives the same bytes, in every format,
     * run after run (cairo numbers fonts per process, so compare runs) */
    const char *outs[3] = {"a.png", "a.pdf",
                           "a.svg"};
    for (int f = 0; f < 3; f++) {
        size_t l1, l2;
        char cmd[sizeof bin_path + 256];
        snprintf(cmd, sizeof cmd, "%s plot energy-freq --in %s -o %s", bin_path, csv, outs[f]);
        assert_int_equal(system(cmd), 0);
        char *b1 = slurp_bytes(outs[f], &l1);
        assert_int_equal(system(cmd), 0);
        char *b2 = slurp_bytes(outs[f], &l2);
        assert_int_equal(l1, l2);
        assert_memory_equal(b1, b2, l1);
        free(b1);
        free(b2);
    }
    /* a PDF page of 3.5 x 2.6 in, checked by poppler */
    int st = system("pdfinfo a.pdf > info.txt 2>/dev/null");
    if (st == 0) {
        size_t l;
        char *info = slurp_bytes("info.txt", &l);
        info[l] = 0;
        assert_non_null(strstr(info, "252 x 187.2 pts"));
        free(info);
        assert_int_equal(system("pdftoppm -r 72 -png -singlefile a.pdf "
                                "ppm"), 0);
        png_img pi;
        read_png("ppm.png", &pi);
        assert_int_equal(pi.w, 252);
        assert_true(pi.h == 187 || pi.h == 188);
        free(pi.rgb);
    } else {
        fprintf(stderr, "SKIP PDF page check: pdfinfo (poppler-utils) not installed\n");
    }
    for (int f = 0; f < 3; f++)
        unlink(outs[f]);
    wl_results_table_free(t);
    unlink(csv);
    unlink(png);
}

/* Whether two files hold the same bytes. */
static int same_file(const char *x, const char *y)
{
    FILE *a = fopen(x, "rb"), *b = fopen(y, "rb");
    assert_non_null(a);
    assert_non_null(b);
    int same = 1, ca, cb;
    do {
        ca = fgetc(a);
        cb = fgetc(b);
        same = same && ca == cb;
    } while (same && ca != EOF);
    fclose(a);
    fclose(b);
    return same;
}

static void test_kinds_render(void **state)
{
    (void)state;
    const char *csv = "curve.csv";
    test_write_file(csv, CURVE);
    wl_results_table *t;
    wl_error err;
    assert_int_equal(wl_results_table_load(csv, &t, &err), WL_OK);
    wl_plot_options o;
    wl_plot_options_default(&o);
    wl_plot_kind_options k;
    memset(&k, 0, sizeof k);
    k.panels = "power,time,energy";
    assert_int_equal(wl_plot_energy_freq(t, &k, &o, "p.svg", &err), WL_OK);
    k.panels = NULL;
    k.stack = 1;
    assert_int_equal(wl_plot_energy_freq(t, &k, &o, "s.pdf", &err), WL_OK);
    k.stack = 0;
    assert_int_equal(wl_plot_pareto(t, &k, &o, "f.png", &err), WL_OK);
    k.x = "sm_clock_mhz";
    k.y = "power_w";
    k.z = "energy_j";
    assert_int_equal(wl_plot_heatmap(t, &k, &o, "h.png", &err), WL_OK);
    /* rows that share a cell: the least z by default, the mean on request,
     * and nothing else */
    {
        test_write_file("two.csv", "sm_clock_mhz,seq,batch,energy_j,feasible,fits\n"
                                   "900,128,1,1.0,1,1\n900,128,8,3.0,1,1\n"
                                   "1410,128,1,2.0,1,1\n1410,128,8,6.0,1,1\n");
        wl_results_table *t2;
        assert_int_equal(wl_results_table_load("two.csv", &t2, &err), WL_OK);
        wl_plot_kind_options k2 = {.x = "sm_clock_mhz", .y = "seq", .z = "energy_j"};
        assert_int_equal(wl_plot_heatmap(t2, &k2, &o, "hmin.png", &err), WL_OK);
        k2.reduce = "mean";
        assert_int_equal(wl_plot_heatmap(t2, &k2, &o, "hmean.png", &err), WL_OK);
        k2.reduce = "max";
        assert_int_equal(wl_plot_heatmap(t2, &k2, &o, "hmax.png", &err), WL_EINVAL);
        assert_string_equal(err.field, "reduce");
        assert_int_not_equal(access("hmax.png", F_OK), 0);
        /* the two figures differ (another colour range and another label) */
        assert_false(same_file("hmin.png", "hmean.png"));
        unlink("hmin.png");
        unlink("hmean.png");
        unlink("two.csv");
        wl_results_table_free(t2);
    }
    /* a series that cannot run is left out of the axes unless asked for:
     * the two figures differ */
    {
        test_write_file("bad.csv", "model,sm_clock_mhz,time_ms,power_w,energy_j,feasible,fits\n"
                                   "a,900,10,100,1.0,1,1\na,1410,8,150,1.2,1,1\n"
                                   "b,900,1000,100,100,1,0\nb,1410,800,150,120,1,0\n");
        wl_results_table *t3;
        assert_int_equal(wl_results_table_load("bad.csv", &t3, &err), WL_OK);
        wl_plot_kind_options k3 = {0};
        wl_plot_options o3 = o;
        o3.log_y = 1;
        assert_int_equal(wl_plot_energy_freq(t3, &k3, &o3, "ef1.png", &err), WL_OK);
        k3.show_infeasible = 1;
        assert_int_equal(wl_plot_energy_freq(t3, &k3, &o3, "ef2.png", &err), WL_OK);
        assert_false(same_file("ef1.png", "ef2.png"));
        assert_true(wl_plot_kind_has_option(wl_plot_kind_find("energy-freq"), "show-infeasible"));
        unlink("ef1.png");
        unlink("ef2.png");
        unlink("bad.csv");
        wl_results_table_free(t3);
    }
    k.panels = "energy,speed";
    assert_int_not_equal(wl_plot_energy_freq(t, &k, &o, "x.png", &err), WL_OK);
    assert_int_not_equal(access("x.png", F_OK), 0);
    assert_non_null(wl_plot_kind_lookup("savings"));
    assert_null(wl_plot_kind_lookup("pie"));
    const char *rm[] = {"p.svg", "s.pdf",
                        "f.png", "h.png"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(access(rm[i], F_OK), 0);
        unlink(rm[i]);
    }
    wl_results_table_free(t);
    unlink(csv);
}

/* Bad input: a clear error and no output file. */
static void test_errors(void **state)
{
    (void)state;
    const char *csv = "bad.csv", *out = "bad.png";
    wl_results_table *t = NULL;
    wl_error err;
    wl_plot_options o;
    wl_plot_options_default(&o);
    unlink(out);
    test_write_file(csv, "");
    assert_int_not_equal(wl_results_table_load(csv, &t, &err), WL_OK);
    test_write_file(csv, "sm_clock_mhz,energy_j\n");
    assert_int_not_equal(wl_results_table_load(csv, &t, &err), WL_OK);
    assert_non_null(strstr(err.text, "no data"));
    test_write_file(csv, "sm_clock_mhz,power_w\n900,100\n");
    assert_int_equal(wl_results_table_load(csv, &t, &err), WL_OK);
    assert_int_equal(wl_plot_energy_freq(t, NULL, &o, out, &err), WL_EPARSE);
    assert_string_equal(err.field, "energy_j");
    wl_results_table_free(t);
    test_write_file(csv, "sm_clock_mhz,energy_j\n900,1\n1000,lots\n");
    assert_int_equal(wl_results_table_load(csv, &t, &err), WL_OK);
    assert_int_equal(wl_plot_energy_freq(t, NULL, &o, out, &err), WL_EPARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.field, "energy_j");
    assert_int_not_equal(wl_plot_energy_freq(t, NULL, &o, "x.jpeg", &err), WL_OK);
    wl_results_table_free(t);
    assert_int_not_equal(access(out, F_OK), 0);
    unlink(csv);
    /* ticks land on round numbers; prefixes follow the magnitude */
    double ticks[16];
    int n = wl_plot_ticks(0.13, 0.97, 6, ticks);
    assert_true(n >= 4);
    assert_close(ticks[0], 0.2, 1e-12);
    assert_close(ticks[1] - ticks[0], 0.2, 1e-12);
    const char *p;
    assert_close(wl_plot_si(0.004, &p), 1e3, 0);
    assert_string_equal(p, "m");
    assert_close(wl_plot_si(1.41e9, &p), 1e-9, 0);
    assert_string_equal(p, "G");
    assert_close(wl_plot_si(250, &p), 1, 0);
    assert_string_equal(p, "");
}


/* Checks a rendered figure against its layout: labelled ticks 4-7 on every
 * linear numeric axis (3-7 on log axes), no text past the canvas, the
 * canvas's outermost pixels white, and a legend (when there is one) off
 * every axes and holding ink. */
static void check_layout(const char *png, const wl_plot_layout *l, const char *what)
{
    png_img img;
    read_png(png, &img);
    double sc = img.w / l->width_pt;
    assert_true(l->naxes >= 1);
    for (size_t i = 0; i < l->naxes && i < WL_PLOT_LAYOUT_AXES; i++) {
        const wl_plot_layout_axes *a = &l->axes[i];
        int xt = a->xticks, yt = a->yticks;
        if (xt && !(xt >= (a->logx ? 3 : 4) && xt <= 7))
            fail_msg("%s: axes %zu has %d x tick labels", what, i, xt);
        if (yt && !(yt >= (a->logy ? 3 : 4) && yt <= 7))
            fail_msg("%s: axes %zu has %d y tick labels", what, i, yt);
        if (l->has_legend) {
            const double *g = l->legend;
            int apart = g[0] >= a->x0 + a->w || g[0] + g[2] <= a->x0 || g[1] >= a->y0 + a->h ||
                        g[1] + g[3] <= a->y0;
            if (!apart)
                fail_msg("%s: the legend (%.0f,%.0f %.0fx%.0f) covers axes %zu", what, g[0], g[1],
                         g[2], g[3], i);
        }
    }
    if (!(l->ink[0] >= 0 && l->ink[1] >= 0 && l->ink[2] <= l->width_pt && l->ink[3] <= l->height_pt))
        fail_msg("%s: text reaches (%.1f,%.1f)-(%.1f,%.1f) on a %.0fx%.0f pt canvas", what,
                 l->ink[0], l->ink[1], l->ink[2], l->ink[3], l->width_pt, l->height_pt);
    for (png_uint_32 x = 0; x < img.w; x++)
        for (int e = 0; e < 2; e++) {
            const unsigned char *c = img.rgb + ((size_t)(e ? img.h - 1 : 0) * img.w + x) * 3;
            if (c[0] < 250 || c[1] < 250 || c[2] < 250)
                fail_msg("%s: ink on the canvas edge at x = %u", what, x);
        }
    for (png_uint_32 y = 0; y < img.h; y++)
        for (int e = 0; e < 2; e++) {
            const unsigned char *c = img.rgb + ((size_t)y * img.w + (e ? img.w - 1 : 0)) * 3;
            if (c[0] < 250 || c[1] < 250 || c[2] < 250)
                fail_msg("%s: ink on the canvas edge at y = %u", what, y);
        }
    if (l->has_legend) {
        size_t dark = 0;
        for (double y = l->legend[1]; y < l->legend[1] + l->legend[3]; y += 0.5)
            for (double x = l->legend[0]; x < l->legend[0] + l->legend[2]; x += 0.5) {
                size_t px = (size_t)(x * sc), py = (size_t)(y * sc);
                if (px < img.w && py < img.h) {
                    const unsigned char *c = img.rgb + (py * img.w + px) * 3;
                    dark += c[0] < 128 && c[1] < 128 && c[2] < 128;
                }
            }
        if (!dark)
            fail_msg("%s: nothing drawn in the legend box", what);
    }
    free(img.rgb);
}

/* Every kind at its defaults keeps the figure rules; a wide sweep with
 * clocks beyond one GPU's range, several workloads and both A100s. */
static void test_layout_rules(void **state)
{
    (void)state;
    char cmd[3 * sizeof bin_path + 512];
    snprintf(cmd, sizeof cmd,
             "%s sweep --gpu a100-pcie-40gb,h100-sxm-80gb --model gpt2,gpt3-1.3b --seq 128,512 "
             "--clock 300:1980:60 --voltage-offset-mv -150,0 --quiet -o w.csv 2>/dev/null && "
             "%s optimize w.csv --objective energy-within-slowdown=10 --format csv -o o.csv && "
             "%s sweep --gpu a100-pcie-40gb --model gpt3-13b --clock 210:1410:30 --quiet -o one.csv",
             bin_path, bin_path, bin_path);
    assert_int_equal(system(cmd), 0);
    /* a validation table: three models at eleven clocks, predictions a few
     * percent off, with intervals */
    FILE *vf = fopen("v.csv", "w");
    assert_non_null(vf);
    fputs("gpu,model,sm_clock_mhz,time_ms,power_w,energy_j,predicted_time_ms,predicted_power_w,"
          "predicted_energy_j,predicted_energy_lo_j,predicted_energy_hi_j\n", vf);
    for (int m = 0; m < 3; m++)
        for (int c = 0; c < 11; c++) {
            double mhz = 510 + 90 * c, e = (m + 1) * (1 + 0.3 * (c - 5) * (c - 5) / 25.0);
            double pe = e * (1 + 0.03 * ((c + m) % 5 - 2));
            fprintf(vf, "g,m%d,%.0f,%g,%g,%g,%g,%g,%g,%g,%g\n", m, mhz, 10.0, e * 100, e, 10.0,
                    pe * 100, pe, pe * 0.9, pe * 1.1);
        }
    fclose(vf);
    /* feature importances, as learn --importance writes them */
    test_write_file("imp.csv", "feature,time_importance,power_importance,energy_importance\n"
                               "sms,0,0,0\nbatch,0.5,0.1,0.3\nseq,0.3,0.2,0.3\n"
                               "sm_clock_mhz,0.1,0.6,0.3\nvoltage_mv,0.1,0.1,0.1\n");
    /* the same at one clock: error per model */
    assert_int_equal(system("awk -F, 'NR == 1 || $3 == 960' v.csv > v1.csv"), 0);
    struct {
        const char *table, *kind;
        wl_plot_kind_options k;
        wl_plot_legend legend;
        double height_in; /* 0: the default */
        double width_in;  /* small multiples: two columns wide */
    } cases[] = {
        {.table = "w.csv", .kind = "energy-freq", .k = {.facet = "gpu"}},
        {.table = "one.csv", .kind = "energy-freq",
         .k = {.panels = "power,time,energy", .objective = "energy-within-slowdown=5"},
         .height_in = 5.0},
        {.table = "one.csv", .kind = "energy-freq", .k = {.stack = WL_PLOT_STACK_PARTS}},
        {.table = "w.csv", .kind = "pareto", .k = {.facet = "gpu", .objective = "energy"},
         .width_in = 7.0},
        {.table = "w.csv", .kind = "pareto-norm", .k = {.edp = 1}},
        {.table = "w.csv", .kind = "heatmap", .k = {.y = "model"}},
        {.table = "o.csv", .kind = "savings"},
        {.table = "o.csv", .kind = "gpus"},
        {.table = "v.csv", .kind = "validation"},
        {.table = "v1.csv", .kind = "validation"},
        {.table = "imp.csv", .kind = "importance"},
        {.table = "one.csv", .kind = "energy-freq", .legend = WL_PLOT_LEGEND_INSIDE},
        {.table = "w.csv", .kind = "energy-freq", .legend = WL_PLOT_LEGEND_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wl_results_table *t;
        wl_error err;
        assert_int_equal(wl_results_table_load(cases[i].table, &t, &err), WL_OK);
        wl_plot_options o;
        wl_plot_options_default(&o);
        o.title = "A long title that a reviewer wrote to see whether it wraps inside the figure";
        wl_plot_layout lay;
        o.layout = &lay;
        o.legend = cases[i].legend;
        if (cases[i].height_in > 0)
            o.height_in = cases[i].height_in;
        if (cases[i].width_in > 0)
            o.width_in = cases[i].width_in;
        wl_plot_kind_fn fn = wl_plot_kind_lookup(cases[i].kind);
        assert_non_null(fn);
        if (fn(t, &cases[i].k, &o, "l.png", &err) != WL_OK)
            fail_msg("%s: %s", cases[i].kind, err.text);
        char what[96];
        snprintf(what, sizeof what, "%s case %zu", cases[i].kind, i);
        if (cases[i].legend == WL_PLOT_LEGEND_INSIDE) {
            /* inside: within the axes */
            assert_true(lay.has_legend);
            assert_true(lay.legend[0] >= lay.axes[0].x0 && lay.legend[1] >= lay.axes[0].y0);
            lay.has_legend = 0;
        }
        if (cases[i].legend == WL_PLOT_LEGEND_NONE)
            assert_false(lay.has_legend);
        else if (cases[i].legend == WL_PLOT_LEGEND_OUTSIDE && strcmp(cases[i].kind, "heatmap"))
            assert_true(lay.has_legend); /* a heatmap needs one only for grey cells */
        check_layout("l.png", &lay, what);
        wl_results_table_free(t);
    }
}

/* A point that cannot run is never the optimum nor drawn filled: the least
 * energy (1 J at 800 MHz) is infeasible, so the large marker goes to 600
 * MHz (2 J, the faster of the two 2 J points loses the tie to the first)
 * and 800 MHz keeps a hollow grey ring with a white centre when such
 * points are shown. */
static void test_infeasible_points(void **state)
{
    (void)state;
    test_write_file("inf.csv",
                    "gpu,model,sm_clock_mhz,effective_clock_mhz,time_ms,energy_j,power_w,feasible\n"
                    "g,m,400,400,10,4,400,1\n"
                    "g,m,600,600,10,2,200,1\n"
                    "g,m,800,800,10,1,100,0\n"
                    "g,m,1000,1000,10,2,200,1\n"
                    "g,m,1200,1200,10,4,400,1\n");
    wl_results_table *t;
    wl_error err;
    assert_int_equal(wl_results_table_load("inf.csv", &t, &err), WL_OK);
    wl_plot_options o;
    wl_plot_options_default(&o);
    wl_plot_layout lay;
    o.layout = &lay;
    /* drawn on request (--show-infeasible); by default such points are
     * left out of the axes */
    wl_plot_kind_options ks = {.show_infeasible = 1};
    assert_int_equal(wl_plot_energy_freq(t, &ks, &o, "inf.png", &err), WL_OK);
    png_img img;
    read_png("inf.png", &img);
    double x0 = lay.axes[0].x0, y0 = lay.axes[0].y0, aw = lay.axes[0].w, ah = lay.axes[0].h;
    double xl = 352, xh = 1248, yl = 0.82, yh = 4.18, sc = 300.0 / 72;
#define PX(mhz, dx) lround((x0 + ((mhz) - xl) / (xh - xl) * aw + (dx)) * sc)
#define PY(j, dy) lround((y0 + ah - ((j) - yl) / (yh - yl) * ah + (dy)) * sc)
    const unsigned char *c = img.rgb + ((size_t)PY(1, 0) * img.w + (size_t)PX(800, 0)) * 3;
    if (!(c[0] > 200 && c[1] > 200 && c[2] > 200))
        fail_msg("the infeasible point's centre is (%d, %d, %d), not hollow", c[0], c[1], c[2]);
    /* its ring is grey, not the series blue */
    int grey = 0;
    for (double d = -1.6; d <= 1.6; d += 0.1) {
        const unsigned char *q = img.rgb + ((size_t)PY(1, 0) * img.w + (size_t)PX(800, d)) * 3;
        grey |= abs(q[0] - q[2]) < 20 && q[0] < 200;
    }
    assert_true(grey);
    /* the large marker at 600 MHz: filled 2.2 pt above its centre, where a
     * plain marker (1.4 pt) leaves the background */
    c = img.rgb + ((size_t)PY(2, -2.2) * img.w + (size_t)PX(600, 0)) * 3;
    if (c[0] > 200 && c[1] > 200 && c[2] > 200)
        fail_msg("no large marker at 600 MHz (%d, %d, %d)", c[0], c[1], c[2]);
    c = img.rgb + ((size_t)PY(2, -2.2) * img.w + (size_t)PX(1000, 0)) * 3;
    if (!(c[0] > 200 && c[1] > 200 && c[2] > 200))
        fail_msg("a large marker at 1000 MHz too (%d, %d, %d)", c[0], c[1], c[2]);
    free(img.rgb);
    wl_results_table_free(t);
}

/* The report's figures as a reviewer looked at them (issue 30): the
 * energy legend lists only the series that can run, names the others in
 * one line and takes at most a third of the canvas; the maximum clock is
 * one line, not a square per series; each Pareto panel spans its own
 * fronts, in the same units in every panel. */
static void test_report_figure_rules(void **state)
{
    (void)state;
    char cmd[sizeof bin_path + 256];
    snprintf(cmd, sizeof cmd,
             "%s sweep --gpu a100-pcie-40gb --model gpt3-125m,gpt3-1.3b,gpt3-13b --seq "
             "128,512,1024 --mode train --scope layer --clock 210:1410:15 --quiet -o tr.csv",
             bin_path);
    assert_int_equal(system(cmd), 0);
    wl_results_table *t;
    wl_error err;
    assert_int_equal(wl_results_table_load("tr.csv", &t, &err), WL_OK);
    wl_plot_options o;
    wl_plot_options_default(&o);
    wl_plot_layout lay;
    o.layout = &lay;
    wl_plot_kind_options k = {.objective = "energy-within-slowdown=10"};
    assert_int_equal(wl_plot_energy_freq(t, &k, &o, "rf.png", &err), WL_OK);
    /* 6 series that run (gpt3-13b's training step does not fit 40 GB),
     * least energy, the flat band, max clock, chosen, throttled (the 1.3B
     * layer at seq 1024 meets the 250 W limit at the top clocks), the note */
    assert_int_equal(lay.legend_entries, 12);
    if (!(lay.legend[3] <= lay.height_pt / 3))
        fail_msg("the legend is %.0f of %.0f pt", lay.legend[3], lay.height_pt);
    check_layout("rf.png", &lay, "energy-freq of nine series");
    k.show_infeasible = 1;
    assert_int_equal(wl_plot_energy_freq(t, &k, &o, "rf2.png", &err), WL_OK);
    assert_int_equal(lay.legend_entries, 15); /* asked for: all nine, and "cannot run" */
    /* pareto by model: panels of their own ranges */
    wl_plot_kind_options kp = {.facet = "model", .objective = "energy"};
    o.width_in = 7;
    assert_int_equal(wl_plot_pareto(t, &kp, &o, "rp.png", &err), WL_OK);
    assert_int_equal((int)lay.naxes, 3);
    for (size_t i = 1; i < 3; i++)
        if (lay.axes[i].xmax == lay.axes[0].xmax || lay.axes[i].ymax == lay.axes[0].ymax)
            fail_msg("panel %zu shares panel 0's range", i);
    /* gpt3-125m's fronts span its panel: its fastest and slowest runnable
     * points are within a factor 1.5 of the axes' ends */
    if (!(lay.axes[0].xmax / lay.axes[0].xmin < 10))
        fail_msg("panel 0 spans %g..%g ms", lay.axes[0].xmin, lay.axes[0].xmax);
    check_layout("rp.png", &lay, "pareto by model");
    wl_results_table_free(t);
}

/* A log axis labels both ends of its data: series from 0.21 to 2.9 J (the
 * report's training figure) got 0.5, 1 and 2, leaving the lowest series
 * under no label; 1-2-3-5 labels 0.3 and 3 as well. */
static void test_log_axis_ends(void **state)
{
    (void)state;
    char csv[4096];
    size_t used = (size_t)snprintf(csv, sizeof csv, "gpu,model,sm_clock_mhz,time_ms,power_w,energy_j\n");
    static const double base[4] = {0.21, 0.45, 1.0, 2.4};
    for (int m = 0; m < 4; m++)
        for (int c = 0; c < 9; c++) {
            double f = 210 + 150 * c, e = base[m] * (1 + 0.2 * (c - 4) * (c - 4) / 16.0);
            used += (size_t)snprintf(csv + used, sizeof csv - used, "g,m%d,%.0f,%g,%g,%g\n", m,
                                     f, 10.0, e * 100, e);
        }
    wl_results_table *t;
    wl_error err;
    assert_int_equal(wl_results_table_load_mem(csv, used, "log.csv", &t, &err), WL_OK);
    wl_plot_options o;
    wl_plot_options_default(&o);
    o.log_y = 1;
    wl_plot_layout lay;
    o.layout = &lay;
    assert_int_equal(wl_plot_energy_freq(t, NULL, &o, "log.png", &err), WL_OK);
    assert_true(lay.naxes >= 1 && lay.axes[0].logy);
    /* a label in the lowest and the highest quarter of the axis (in log
     * units): 0.3 and 3 */
    const wl_plot_layout_axes *a = &lay.axes[0];
    double span = log(a->ymax / a->ymin);
    if (!(log(a->ylabel_lo / a->ymin) <= 0.25 * span && log(a->ymax / a->ylabel_hi) <= 0.25 * span))
        fail_msg("labels %g-%g on a log axis over %g-%g J", a->ylabel_lo, a->ylabel_hi, a->ymin,
                 a->ymax);
    assert_true(a->yticks >= 3);
    wl_results_table_free(t);
}

/* A report figure's title names what its whole table shares. */
static void test_figure_title(void **state)
{
    (void)state;
    static const struct {
        const char *csv, *want;
    } cases[] = {
        {"gpu,model,batch,sm_clock_mhz\nh100-sxm-80gb,gpt2,8,990\nh100-sxm-80gb,opt-1.3b,8,1980\n",
         "h100-sxm-80gb, batch 8"},
        {"gpu,model,batch,sm_clock_mhz\na,gpt2,8,990\nb,gpt2,8,990\n", "gpt2, batch 8"},
        {"gpu,model,batch,sm_clock_mhz\na,gpt2,1,990\na,gpt2,8,990\n", "a, gpt2"},
        {"sm_clock_mhz\n990\n", ""},
        /* every key the table shares, in words where a value is terse */
        {"gpu,model,batch,seq,dtype,mode,scope,sm_clock_mhz\n"
         "a,gpt2,1,128,bf16,train,layer,990\na,opt,1,512,bf16,train,layer,990\n",
         "a, bf16, training step, one layer, batch 1"},
        {"gpu,model,seq,dtype,mode,scope\na,gpt2,128,fp32,prefill,model\n",
         "a, gpt2, fp32, prefill, seq 128"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wl_results_table *t;
        wl_error err;
        assert_int_equal(wl_results_table_load_mem(cases[i].csv, strlen(cases[i].csv), "t.csv",
                                                   &t, &err), WL_OK);
        char buf[200];
        wl_plot_figure_title(t, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
        wl_results_table_free(t);
    }
}

/* ---- every report figure keeps the layout rules (issue 42) ----------------- */

typedef struct {
    int figures, faults;
} layout_audit;

/* Whether two texts' boxes (each a convex quadrilateral, rotated labels
 * too) overlap by more than 0.05 pt: separating axes, the edge normals of
 * both boxes. */
static int texts_overlap(const wl_plot_layout_text *a, const wl_plot_layout_text *b)
{
    const wl_plot_layout_text *q[2] = {a, b};
    for (int s = 0; s < 2; s++)
        for (int e = 0; e < 4; e++) {
            double nx = -(q[s]->y[(e + 1) % 4] - q[s]->y[e]), ny = q[s]->x[(e + 1) % 4] - q[s]->x[e];
            double len = hypot(nx, ny);
            if (!(len > 1e-9))
                continue;
            nx /= len, ny /= len;
            double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < 4; i++) {
                    double v = q[k]->x[i] * nx + q[k]->y[i] * ny;
                    lo[k] = fmin(lo[k], v);
                    hi[k] = fmax(hi[k], v);
                }
            if (fmin(hi[0], hi[1]) - fmax(lo[0], lo[1]) < 0.05)
                return 0;
        }
    return 1;
}

static int labels_inside(const double *v, int n, double lo, double hi)
{
    int k = 0;
    double tol = 1e-6 * fmax(fabs(lo), fabs(hi));
    for (int i = 0; i < n && i < WL_PLOT_LAYOUT_LABELS; i++)
        k += v[i] >= lo - tol && v[i] <= hi + tol;
    return k;
}

static void audit_figure(void *user, const char *name, const wl_plot_layout *l)
{
    layout_audit *au = user;
    au->figures++;
#define FAULT(...)                                                                                 \
    do {                                                                                           \
        au->faults++;                                                                              \
        print_message("%s: ", name);                                                               \
        print_message(__VA_ARGS__);                                                                \
        print_message("\n");                                                                       \
    } while (0)
    double W = l->width_pt, H = l->height_pt;
    size_t nt = l->ntexts < WL_PLOT_LAYOUT_TEXTS ? l->ntexts : WL_PLOT_LAYOUT_TEXTS;
    if (l->ntexts > WL_PLOT_LAYOUT_TEXTS)
        FAULT("%zu texts, more than the record holds", l->ntexts);
    for (size_t i = 0; i < nt; i++) {
        const wl_plot_layout_text *t = &l->texts[i];
        for (int c = 0; c < 4; c++)
            if (!(t->x[c] >= -0.01 && t->x[c] <= W + 0.01 && t->y[c] >= -0.01 &&
                  t->y[c] <= H + 0.01)) {
                FAULT("\"%s\" is clipped at (%.1f, %.1f) on a %.0f x %.0f pt canvas", t->text,
                      t->x[c], t->y[c], W, H);
                break;
            }
        for (size_t j = i + 1; j < nt; j++)
            if (texts_overlap(t, &l->texts[j]))
                FAULT("\"%s\" overlaps \"%s\"", t->text, l->texts[j].text);
    }
    /* two large markers on one spot hide one of them */
    size_t nm = l->nmarks < 64 ? l->nmarks : 64;
    for (size_t i = 0; i < nm; i++)
        for (size_t j = i + 1; j < nm; j++)
            if (fabs(l->marks[i][0] - l->marks[j][0]) < 2 &&
                fabs(l->marks[i][1] - l->marks[j][1]) < 2)
                FAULT("two least-energy markers at (%.1f, %.1f)", l->marks[i][0], l->marks[i][1]);
    /* no two series of a figure share a colour (issue 79: nine series,
     * two blues and two vermillions) */
    for (size_t i = 0; i < l->nseries && i < 32; i++)
        for (size_t j = i + 1; j < l->nseries && j < 32; j++)
            if (!memcmp(l->series_rgb[i], l->series_rgb[j], sizeof l->series_rgb[i]))
                FAULT("series %zu and %zu share a colour (%zu series)", i, j, l->nseries);
    /* a front's name sits by its own front: nearer it than any other
     * front, within 20 pt, unless a leader line ties it (issue 79: "b200"
     * named a dominated tail far from B200's front) */
    for (size_t i = 0; i < l->nfront_labels && i < 64; i++) {
        const double *g = l->front_label[i];
        if (!g[2] && (g[0] > 20 || g[0] > g[1] + 0.5))
            FAULT("front name %zu is %.1f pt from its front and %.1f pt from another", i, g[0],
                  g[1]);
    }
    if (l->has_legend && l->legend[2] * l->legend[3] > 0.3 * W * H)
        FAULT("the legend takes %.0f%% of the canvas", 100 * l->legend[2] * l->legend[3] / (W * H));
    for (size_t i = 0; i < l->naxes && i < WL_PLOT_LAYOUT_AXES; i++) {
        const wl_plot_layout_axes *a = &l->axes[i];
        int kx = labels_inside(a->xlabel, a->xticks, a->data_xmin, a->data_xmax);
        int ky = labels_inside(a->ylabel, a->yticks, a->data_ymin, a->data_ymax);
        if (a->xticks && kx < 3)
            FAULT("axes %zu labels %d x ticks over its data, %g to %g", i, kx, a->data_xmin,
                  a->data_xmax);
        if (a->yticks && ky < 3)
            FAULT("axes %zu labels %d y ticks over its data, %g to %g", i, ky, a->data_ymin,
                  a->data_ymax);
        /* a log axis of more than a decade labels both its ends: a label
         * within a fifth of its span (in log) of each (issue 79: 0.048 to
         * 2.2 J labelled 0.1, 0.3 and 1 alone) */
        for (int ax = 0; ax < 2; ax++) {
            int lg = ax ? a->logy : a->logx, nlab = ax ? a->yticks : a->xticks;
            double lo = ax ? a->ymin : a->xmin, hi = ax ? a->ymax : a->xmax;
            const double *lab = ax ? a->ylabel : a->xlabel;
            if (!lg || nlab < 1 || nlab > WL_PLOT_LAYOUT_LABELS || !(lo > 0 && hi > 10 * lo))
                continue;
            double span = log(hi / lo);
            if (log(lab[0] / lo) > 0.2 * span + 1e-9 || log(hi / lab[nlab - 1]) > 0.2 * span + 1e-9)
                FAULT("axes %zu: its log %s axis %g to %g is labelled %g to %g, an end bare", i,
                      ax ? "y" : "x", lo, hi, lab[0], lab[nlab - 1]);
        }
    }
#undef FAULT
}

static void audit_study(const char *spec_path, const char *dir, layout_audit *au)
{
    wl_sweep_spec *spec = wl_sweep_spec_create();
    wl_error err;
    assert_non_null(spec);
    wl_plot_report_options ro = {.figure = audit_figure, .user = au};
    wl_plot_report_stats st;
    int rc = wl_sweep_spec_load(spec, spec_path, &err) || wl_sweep_spec_finish(spec, &err) ||
             wl_plot_report(spec, dir, &ro, &st, &err);
    wl_sweep_spec_free(spec);
    if (rc)
        fail_msg("%s: %s", spec_path, err.text);
}

/* The share of pixels of two PNGs that differ by more than 32 levels in a
 * channel; 1 when they cannot be read or differ in size. */
static double png_difference(const char *a, const char *b)
{
    cairo_surface_t *s[2] = {cairo_image_surface_create_from_png(a),
                             cairo_image_surface_create_from_png(b)};
    double share = 1;
    if (cairo_surface_status(s[0]) == CAIRO_STATUS_SUCCESS &&
        cairo_surface_status(s[1]) == CAIRO_STATUS_SUCCESS &&
        cairo_image_surface_get_width(s[0]) == cairo_image_surface_get_width(s[1]) &&
        cairo_image_surface_get_height(s[0]) == cairo_image_surface_get_height(s[1]) &&
        cairo_image_surface_get_format(s[0]) == cairo_image_surface_get_format(s[1])) {
        int w = cairo_image_surface_get_width(s[0]), h = cairo_image_surface_get_height(s[0]);
        int bpp = cairo_image_surface_get_format(s[0]) == CAIRO_FORMAT_RGB24 ||
                          cairo_image_surface_get_format(s[0]) == CAIRO_FORMAT_ARGB32
                      ? 4
                      : 0;
        long diff = 0;
        for (int y = 0; bpp && y < h; y++) {
            const unsigned char *p = cairo_image_surface_get_data(s[0]) +
                                     (size_t)y * (size_t)cairo_image_surface_get_stride(s[0]);
            const unsigned char *q = cairo_image_surface_get_data(s[1]) +
                                     (size_t)y * (size_t)cairo_image_surface_get_stride(s[1]);
            for (int x = 0; x < w; x++) {
                int d = 0;
                for (int c = 0; c < bpp; c++)
                    d |= abs(p[x * bpp + c] - q[x * bpp + c]) > 32;
                diff += d;
            }
        }
        if (bpp)
            share = (double)diff / ((double)w * (double)h);
    }
    cairo_surface_destroy(s[0]);
    cairo_surface_destroy(s[1]);
    return share;
}

/* docs/figures/ shows what the default study draws today (issue 79: its
 * four PNGs were 183 commits old): each, as docs/figures/SOURCES names its
 * source, within 0.05% of its pixels of the study's figure ('make
 * docs-figures' redraws them). */
static void test_docs_figures(void **state)
{
    (void)state;
    char spec[sizeof src_root + 32], list[sizeof src_root + 32];
    snprintf(spec, sizeof spec, "%s/studies/default.ini", src_root);
    snprintf(list, sizeof list, "%s/docs/figures/SOURCES", src_root);
    layout_audit au = {0};
    audit_study(spec, "docs-study", &au);
    FILE *f = fopen(list, "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char name[200], fig[200];
        if (line[0] == '#' || sscanf(line, "%199s %199s", name, fig) != 2)
            continue;
        char a[sizeof src_root + 256], b[256];
        snprintf(a, sizeof a, "%s/docs/figures/%s", src_root, name);
        snprintf(b, sizeof b, "docs-study/%s", fig);
        double d = png_difference(a, b);
        if (d > 5e-4)
            fail_msg("docs/figures/%s differs from the default study's %s in %.2f%% of its "
                     "pixels: run 'make docs-figures'", name, fig, 100 * d);
        n++;
    }
    fclose(f);
    assert_int_equal(n, 4);
}

/* Every figure of the default study and of a study of two H100s whose
 * fronts nearly coincide (3350 and 6700 GB/s) keeps the rules: no two
 * texts overlap, nothing is clipped, the legend takes at most 30% of the
 * canvas and every axis labels three ticks or more over its data. */
static void test_report_layouts(void **state)
{
    (void)state;
    char spec[sizeof src_root + 32];
    snprintf(spec, sizeof spec, "%s/studies/default.ini", src_root);
    layout_audit au = {0};
    audit_study(spec, "default-study", &au);
    int first = au.figures;
    test_write_file("h100.ini", "[report]\ntitle = Two H100 memories\n[sweep]\n"
                                "gpu = h100-sxm-80gb\n"
                                "model = gpt3-1.3b, llama-3-8b\nseq = 512, 2048\n"
                                "mode = prefill, train\nscope = layer\n"
                                "clock = 210:1980:30\n[set]\ndram_bw_gbs = 3350, 6700\n");
    audit_study("h100.ini", "h100-study", &au);
    print_message("%d + %d figures audited, %d faults\n", first, au.figures - first, au.faults);
    assert_true(first >= 20 && au.figures > first);
    assert_int_equal(au.faults, 0);
}

/* Five fronts that coincide (GPUs differing only in a parameter that does
 * not move them): their names cannot go by their fronts, so they move apart
 * with leader lines, never on top of each other. */
static void test_coincident_front_labels(void **state)
{
    (void)state;
    char csv[8192];
    size_t used = (size_t)snprintf(csv, sizeof csv,
                                   "gpu,dram_bw_gbs,model,seq,sm_clock_mhz,effective_clock_mhz,"
                                   "time_ms,power_w,energy_j,feasible\n");
    for (int g = 0; g < 5; g++)
        for (int c = 0; c < 12; c++) {
            double f = 300 + 150 * c, tm = 10 * 1800 / f * (1 + 0.001 * g);
            double e = 0.2 * (1 + (f - 900) * (f - 900) / 2e6);
            used += (size_t)snprintf(csv + used, sizeof csv - used,
                                     "g,%d,m,2048,%.0f,%.0f,%.4f,%.4f,%.5f,1\n", 3350 + 10 * g, f,
                                     f, tm, e / tm * 1000, e);
        }
    wl_results_table *t;
    wl_error err;
    assert_int_equal(wl_results_table_load_mem(csv, used, "co.csv", &t, &err), WL_OK);
    wl_plot_options o;
    wl_plot_options_default(&o);
    o.log_x = o.log_y = 1;
    wl_plot_layout *lay = malloc(sizeof *lay);
    assert_non_null(lay);
    o.layout = lay;
    wl_plot_kind_options k = {.objective = "energy"};
    assert_int_equal(wl_plot_pareto(t, &k, &o, "co.png", &err), WL_OK);
    layout_audit au = {0};
    audit_figure(&au, "coinciding fronts", lay);
    /* all five names are drawn */
    int names = 0;
    for (size_t i = 0; i < lay->ntexts && i < WL_PLOT_LAYOUT_TEXTS; i++)
        names += strstr(lay->texts[i].text, "GB/s") != NULL;
    assert_int_equal(names, 5);
    assert_int_equal(au.faults, 0);
    free(lay);
    wl_results_table_free(t);
}

/* The first text drawn that is s, or -1. */
static int text_at(const wl_plot_layout *lay, const char *s)
{
    for (size_t i = 0; i < lay->ntexts && i < WL_PLOT_LAYOUT_TEXTS; i++)
        if (!strcmp(lay->texts[i].text, s))
            return (int)i;
    return -1;
}

static int texts_starting(const wl_plot_layout *lay, const char *s)
{
    int n = 0;
    for (size_t i = 0; i < lay->ntexts && i < WL_PLOT_LAYOUT_TEXTS; i++)
        n += !strncmp(lay->texts[i].text, s, strlen(s));
    return n;
}

/* Figure polish (issue 63): a savings plot of workloads that differ only in
 * their batch names the axis and stands its short labels upright; a
 * standalone pareto-norm --edp labels its isolines and says what its
 * energy is relative to; a small heatmap prints its values and range;
 * compare says why a GPU has no bars; a timeline names a stage's GPUs. */
static void test_figure_polish(void **state)
{
    (void)state;
    char cmd[3 * sizeof bin_path + 512];
    snprintf(cmd, sizeof cmd,
             "%s sweep --gpu a100-pcie-40gb --model gpt2 --batch 1,8 --clock 300:1410:60 --quiet "
             "-o pb.csv && %s optimize pb.csv --objective energy-within-slowdown=10 --quiet "
             "-o pbo.csv && %s sweep --gpu a100-pcie-40gb,h100-sxm-80gb --model gpt3-1.3b "
             "--seq 128,512 --clock 300:1980:60 --quiet -o pw.csv 2>/dev/null",
             bin_path, bin_path, bin_path);
    assert_int_equal(system(cmd), 0);
    wl_plot_layout *lay = malloc(sizeof *lay);
    assert_non_null(lay);
    wl_plot_options o;
    wl_plot_options_default(&o);
    o.layout = lay;
    wl_results_table *t;
    wl_error err;
    assert_int_equal(wl_results_table_load("pbo.csv", &t, &err), WL_OK);
    wl_plot_kind_options k = {0};
    assert_int_equal(wl_plot_savings(t, &k, &o, "pb.png", &err), WL_OK);
    wl_results_table_free(t);
    assert_true(text_at(lay, "batch") >= 0);
    int one = text_at(lay, "1"), eight = text_at(lay, "8");
    assert_true(one >= 0 && eight >= 0);
    /* upright: the ink box's top edge is level */
    assert_close(lay->texts[one].y[0], lay->texts[one].y[1], 1e-6);
    assert_close(lay->texts[eight].y[0], lay->texts[eight].y[1], 1e-6);
    layout_audit au = {0};
    audit_figure(&au, "savings by batch", lay);
    assert_int_equal(au.faults, 0);
    assert_int_equal(wl_results_table_load("pw.csv", &t, &err), WL_OK);
    k = (wl_plot_kind_options){.edp = 1};
    assert_int_equal(wl_plot_kind_lookup("pareto-norm")(t, &k, &o, "pn.png", &err), WL_OK);
    wl_results_table_free(t);
    assert_true(text_at(lay, "Energy / energy at max clock") >= 0);
    assert_true(texts_starting(lay, "EDP x") >= 4);
    audit_figure(&au, "pareto-norm --edp", lay);
    assert_int_equal(au.faults, 0);
    /* single-axes pareto: each front's name sits off the data (no white
     * box over points), with its front's marker */
    assert_int_equal(wl_results_table_load("pw.csv", &t, &err), WL_OK);
    k = (wl_plot_kind_options){0};
    o.linear = 1;
    assert_int_equal(wl_plot_pareto(t, &k, &o, "pf.png", &err), WL_OK);
    o.linear = 0;
    int names = 0;
    const wl_plot_layout_axes *pa = &lay->axes[0];
    for (size_t i = 0; i < lay->ntexts && i < WL_PLOT_LAYOUT_TEXTS; i++) {
        const wl_plot_layout_text *tx = &lay->texts[i];
        if (!strstr(tx->text, ", seq "))
            continue;
        names++;
        double bx0 = fmin(tx->x[0], tx->x[2]), bx1 = fmax(tx->x[0], tx->x[2]);
        double by0 = fmin(tx->y[0], tx->y[2]), by1 = fmax(tx->y[0], tx->y[2]);
        for (size_t r = 0; r < wl_results_table_rows(t); r++) {
            double tv = atof(wl_results_table_cell(t, r, wl_results_table_col(t, "time_ms")));
            double ev = atof(wl_results_table_cell(t, r, wl_results_table_col(t, "energy_j")));
            double X = pa->x0 + (tv - pa->xmin) / (pa->xmax - pa->xmin) * pa->w;
            double Y = pa->y0 + pa->h - (ev - pa->ymin) / (pa->ymax - pa->ymin) * pa->h;
            if (X > bx0 && X < bx1 && Y > by0 && Y < by1)
                fail_msg("\"%s\" covers the point %s at %g ms, %g J", tx->text,
                         wl_results_table_cell(t, r, 0), tv, ev);
        }
    }
    assert_int_equal(names, 4);
    wl_results_table_free(t);
    audit_figure(&au, "pareto, four fronts", lay);
    assert_int_equal(au.faults, 0);
    /* energy-freq --facet: series the facet makes alike (four power limits
     * that never throttle) keep four least-energy markers, side by side */
    snprintf(cmd, sizeof cmd, "%s sweep --gpu a100-pcie-40gb --model gpt2,gpt3-1.3b --set "
             "power_limit_w=350,400,450,500 --clock 300:1410:60 --quiet -o pl.csv", bin_path);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(wl_results_table_load("pl.csv", &t, &err), WL_OK);
    k = (wl_plot_kind_options){.facet = "model"};
    o.width_in = 7; /* two panels, as a report draws them */
    assert_int_equal(wl_plot_energy_freq(t, &k, &o, "pl.png", &err), WL_OK);
    wl_plot_options_default(&o);
    o.layout = lay;
    wl_results_table_free(t);
    assert_int_equal(lay->nmarks, 8);
    audit_figure(&au, "energy-freq --facet, alike series", lay);
    assert_int_equal(au.faults, 0);
    /* pareto --facet: the panels' own axes are said */
    assert_int_equal(wl_results_table_load("pw.csv", &t, &err), WL_OK);
    k = (wl_plot_kind_options){.facet = "gpu"};
    o.width_in = 7;
    assert_int_equal(wl_plot_pareto(t, &k, &o, "pfa.png", &err), WL_OK);
    wl_plot_options_default(&o);
    o.layout = lay;
    wl_results_table_free(t);
    assert_true(text_at(lay, "each panel has its own axes") >= 0);
    audit_figure(&au, "pareto --facet", lay);
    assert_int_equal(au.faults, 0);
    /* a small heatmap spanning 5% prints its cells' values and its range */
    char hcsv[2048];
    size_t hu = (size_t)snprintf(hcsv, sizeof hcsv, "gpu,seq,sm_clock_mhz,energy_j,feasible\n");
    for (int q = 0; q < 3; q++)
        for (int c = 0; c < 4; c++)
            hu += (size_t)snprintf(hcsv + hu, sizeof hcsv - hu, "g,%d,%d,%.2f,1\n", 128 << q,
                                   900 + 170 * c, 100 + 5.0 * (q * 4 + c) / 11);
    assert_int_equal(wl_results_table_load_mem(hcsv, hu, "h5.csv", &t, &err), WL_OK);
    k = (wl_plot_kind_options){0};
    assert_int_equal(wl_plot_kind_lookup("heatmap")(t, &k, &o, "h5.png", &err), WL_OK);
    wl_results_table_free(t);
    assert_true(text_at(lay, "100.0") >= 0 && text_at(lay, "105.0") >= 0);
    assert_true(text_at(lay, "102.7") >= 0); /* q 1, c 2: 100 + 30/11 */
    assert_true(text_at(lay, "100 to 105") >= 0 && text_at(lay, "(+5%)") >= 0);
    audit_figure(&au, "heatmap 5%", lay);
    assert_int_equal(au.faults, 0);
    /* plot compare says in its slot why a GPU has no bars */
    snprintf(cmd, sizeof cmd, "%s compare --gpu a100-pcie-40gb,v100-sxm2-32gb,h100-sxm-80gb "
             "--model llama-3-8b --dtype bf16 --format csv --quiet -o cmp.csv 2>/dev/null",
             bin_path);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(wl_results_table_load("cmp.csv", &t, &err), WL_OK);
    assert_int_equal(wl_plot_kind_lookup("compare")(t, &k, &o, "cmp.png", &err), WL_OK);
    wl_results_table_free(t);
    assert_true(text_at(lay, "cannot run: has no bf16 math") >= 0);
    audit_figure(&au, "compare with a GPU that cannot run", lay);
    assert_int_equal(au.faults, 0);
    /* a timeline's rows are stages: with tp 2, each names its two GPUs */
    snprintf(cmd, sizeof cmd, "%s cluster --model gpt3-1.3b --tp 2 --pp 4 --global-batch 16 "
             "--timeline tl.json > /dev/null", bin_path);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(wl_plot_timeline("tl.json", &o, "tl.png", &err), WL_OK);
    assert_true(text_at(lay, "stage 0: GPUs 0-1") >= 0);
    assert_true(text_at(lay, "stage 3: GPUs 6-7") >= 0);
    assert_int_equal(texts_starting(lay, "GPU "), 0);
    audit_figure(&au, "timeline tp 2", lay);
    assert_int_equal(au.faults, 0);
    free(lay);
}

int main(void)
{
    if (!realpath(WATTLAS_BIN_PATH, bin_path) || !getcwd(src_root, sizeof src_root))
        return 1;
    test_shared_data();
    if (chdir(test_dir()) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png_pixels),
        cmocka_unit_test(test_kinds_render),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_layout_rules),
        cmocka_unit_test(test_infeasible_points),
        cmocka_unit_test(test_report_figure_rules),
        cmocka_unit_test(test_figure_title),
        cmocka_unit_test(test_log_axis_ends),
        cmocka_unit_test(test_report_layouts), cmocka_unit_test(test_docs_figures),
        cmocka_unit_test(test_coincident_front_labels),
        cmocka_unit_test(test_figure_polish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
