/* wattlas plot KIND */
#include "cli.h"
#include "../plot/wattlas_plot.h"

#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas plot KIND --in FILE.csv -o FIG.png|pdf|svg [options]\n\n"
"kinds (the CSV each reads):\n"
"  energy-freq  energy vs SM clock per workload (sweep or predict --format csv);\n"
"               marks the energy-optimal clock (large marker) and the maximum\n"
"               clock (square); throttled points are hollow\n"
"      --panels power,time,energy   aligned panels over one clock axis\n"
"      --stack                      energy parts as stacked areas (one series)\n"
"  pareto       energy vs time, coloured by SM clock; dominated points faded,\n"
"               the front as a step line   [--facet COL] [--x COL --y COL]\n"
"  heatmap      --x COL --y COL --z COL [--normalize] over two swept parameters;\n"
"               infeasible cells hatched (defaults: sm_clock_mhz, seq, energy_j)\n"
"  savings      energy saved and runtime penalty per workload (optimize output)\n"
"               [--against max-clock|fastest]\n"
"  validation   predicted vs measured with y = x and a +-10%% band, and error vs\n"
"               clock (validate output) [--metric time|power|energy]\n"
"  compare      energy at the maximum clock and at the energy-optimal clock per\n"
"               GPU, the optimal clock above its bar (compare --format csv)\n"
"style:\n"
"  --size WxHin (default 3.5x2.6in)  --dpi N (PNG, default 300)  --title TEXT\n"
"  --log-x  --log-y  --palette viridis|cividis\n"
"PNG records its DPI; PDF and SVG are vector with fonts embedded, and the\n"
"same input gives byte-identical files.\n");
}

int cmd_plot(int argc, char **argv)
{
    const char *cmd = "plot";
    if (argc < 2)
        return usage_error(cmd, "missing KIND");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        help(stdout);
        return 0;
    }
    wl_plot_kind_fn fn = wl_plot_kind_lookup(argv[1]);
    if (!fn)
        return usage_error(cmd, "unknown kind '%s' (energy-freq, pareto, heatmap, savings, validation, compare)",
                           argv[1]);
    wl_plot_options o;
    wl_plot_options_default(&o);
    wl_plot_kind_options k;
    memset(&k, 0, sizeof k);
    const char *in = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (strcmp(a, "--help") == 0) { help(stdout); return 0; }
        else if (strcmp(a, "--log-x") == 0) { o.log_x = 1; continue; }
        else if (strcmp(a, "--log-y") == 0) { o.log_y = 1; continue; }
        else if (strcmp(a, "--stack") == 0) { k.stack = 1; continue; }
        else if (strcmp(a, "--normalize") == 0) { k.normalize = 1; continue; }
        else if (strcmp(a, "--in") == 0) dst = &in;
        else if (strcmp(a, "-o") == 0) dst = &out;
        else if (strcmp(a, "--title") == 0) dst = &o.title;
        else if (strcmp(a, "--panels") == 0) dst = &k.panels;
        else if (strcmp(a, "--facet") == 0) dst = &k.facet;
        else if (strcmp(a, "--x") == 0) dst = &k.x;
        else if (strcmp(a, "--y") == 0) dst = &k.y;
        else if (strcmp(a, "--z") == 0) dst = &k.z;
        else if (strcmp(a, "--metric") == 0) dst = &k.metric;
        else if (strcmp(a, "--against") == 0) dst = &k.against;
        else if (strcmp(a, "--palette") == 0) dst = &o.palette;
        else if (strcmp(a, "--size") == 0 || strcmp(a, "--dpi") == 0) {
            if (i + 1 >= argc)
                return usage_error(cmd, "%s needs a value", a);
            const char *v = argv[++i];
            if (a[2] == 's') {
                char extra[8] = "";
                if (sscanf(v, "%lfx%lf%7s", &o.width_in, &o.height_in, extra) < 2 ||
                    (extra[0] && strcmp(extra, "in") != 0))
                    return usage_error(cmd, "--size: expected WxHin, e.g. 3.5x2.6in, got '%s'", v);
            } else if (parse_double_arg(cmd, "--dpi", v, &o.dpi)) {
                return EXIT_USAGE;
            }
            continue;
        } else
            return usage_error(cmd, "unknown option '%s'", a);
        if (i + 1 >= argc)
            return usage_error(cmd, "%s needs a value", a);
        *dst = argv[++i];
    }
    if (!in || !out)
        return usage_error(cmd, "--in FILE.csv and -o FIG are required");
    if (strcmp(o.palette, "viridis") && strcmp(o.palette, "cividis"))
        return usage_error(cmd, "--palette: expected viridis or cividis");
    wl_error err = {0};
    wl_plot_table *t = NULL;
    if (wl_plot_table_load(in, &t, &err))
        return runtime_error(cmd, &err);
    int rc = fn(t, &k, &o, out, &err);
    wl_plot_table_free(t);
    if (rc)
        return rc == WL_EINVAL && !err.line && !strcmp(err.source, "panels") ? runtime_error(cmd, &err)
                                                                              : runtime_error(cmd, &err);
    return 0;
}
