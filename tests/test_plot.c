/* Tests of plot/: PNG size, DPI and pixels where the data say, PDF page
 * size, determinism, errors without leftovers. */
#include "test_util.h"
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
    assert_int_equal(wl_plot_energy_freq(t, NULL, &o, png, &err), WL_OK);
    png_img img;
    read_png(png, &img);
    /* 3.5 x 2.6 in at 300 dpi; pHYs = 300 / 0.0254 px/m */
    assert_int_equal(img.w, 1050);
    assert_int_equal(img.h, 780);
    assert_int_equal(img.xppm, 11811);
    /* layout: plot area left 42, right 6, top 6, bottom 26 pt; ranges padded
     * by 5% each side (x in Hz: 4e8..1.2e9, y: 1..4 J) */
    double xl = 4e8 - 0.05 * 8e8, xh = 1.2e9 + 0.05 * 8e8, yl = 1 - 0.05 * 3, yh = 4 + 0.05 * 3;
    double aw = 252 - 42 - 6, ah = 187.2 - 6 - 26;
    for (int i = 0; i < 5; i++) {
        double fx = (400 + 200 * i) * 1e6, ey = (i == 2) ? 1 : (i == 1 || i == 3) ? 2 : 4;
        double px = (42 + (fx - xl) / (xh - xl) * aw) * 300 / 72;
        double py = (6 + ah - (ey - yl) / (yh - yl) * ah) * 300 / 72;
        const unsigned char *c = img.rgb + ((size_t)lround(py) * img.w + (size_t)lround(px)) * 3;
        /* the first Okabe-Ito colour, blue (0, 114, 178) */
        if (!(abs(c[0] - 0) < 40 && abs(c[1] - 114) < 40 && abs(c[2] - 178) < 40))
            fail_msg("point %d at (%.0f, %.0f) px is (%d, %d, %d), not the series blue", i, px,
                     py, c[0], c[1], c[2]);
    }
    /* far from the curve, inside the plot: background white */
    double px = (42 + 0.5 * aw) * 300 / 72, py = (6 + 0.2 * ah) * 300 / 72;
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

int main(void)
{
    if (!realpath(WATTLAS_BIN_PATH, bin_path))
        return 1;
    test_shared_data();
    if (chdir(test_dir()) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png_pixels),
        cmocka_unit_test(test_kinds_render),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
