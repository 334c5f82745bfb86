/* wattlas plot KIND */
#include "cli.h"
#include "../plot/wattlas_plot.h"
#include "../pareto/wattlas_pareto.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: wattlas plot KIND [TABLE.csv | --in TABLE.csv] -o FIG.png|pdf|svg [options]\n"
"       wattlas plot timeline TRACE.json -o FIG.png|pdf|svg [style options]\n\n"
               "kinds:\n");
    for (size_t i = 0; i < wl_plot_kind_count(); i++)
        fprintf(f, "  %-12s %s\n", wl_plot_kind_at(i)->name, wl_plot_kind_at(i)->summary);
    fprintf(f,
"kind options (a kind refuses the options it does not use):\n"
"  energy-freq  --panels power,time,energy (aligned panels over one clock axis),\n"
"               --stack[=parts|phases] (stacked areas under the energy, one\n"
"               series: static/dynamic parts, or the phases of a train or\n"
"               decode table: forward/backward/optimizer, prefill/decode),\n"
"               --facet COL (small multiples), --objective OBJ (ring the point\n"
"               it chooses; the slowdown bound on a time panel),\n"
"               --show-infeasible (points that cannot run, grey; by default they\n"
"               are left out of the axes and the legend says so)\n"
"  pareto       --facet COL, --x COL --y COL, --objective OBJ\n"
"  pareto-norm  --objective OBJ, --edp (isolines of constant EDP)\n"
"  heatmap      --x COL --y COL --z COL [--normalize] [--reduce min|mean] (defaults:\n"
"               sm_clock_mhz, seq, energy_j, min; a text column such as model is\n"
"               categorical; rows that share a cell: their least or mean z, as\n"
"               the colour bar says)\n"
"  savings      --against max-clock|fastest\n"
"  validation   --metric time|power|energy\n"
"  timeline     TRACE.json from 'wattlas cluster --timeline'; style options only\n"
"  OBJ: energy, edp, ed2p, energy-within-slowdown=P, time-within-power=W\n"
"style:\n"
"  --size WxHin (default 3.5x2.6in)  --dpi N (PNG, default 300)  --title TEXT\n"
"  --log-x  --log-y  --palette viridis|cividis\n"
"  --linear     energy-freq, pareto: no log axis unless --log-x/--log-y (by\n"
"               default an axis whose data span more than a decade is log)\n"
"  --legend outside|inside|none (default outside: right of the axes or below\n"
"           them, never over the data)\n"
"Clocks are in MHz on every axis. Points that cannot run (feasible or fits 0)\n"
"are never chosen: energy-freq leaves them out (grey with --show-infeasible),\n"
"pareto draws them hollow grey.\n"
"PNG records its DPI; PDF and SVG are vector with fonts embedded, and the\n"
"same input gives byte-identical files.\n");
}

typedef struct {
    const wl_plot_kind *kind;
    wl_plot_options o;
    wl_plot_kind_options k;
    const char *in, *out;
} plot_opts;

static int size_arg(const char *cmd, const char *v, wl_plot_options *o)
{
    /* WxH or WxHin */
    char w[32], h[32];
    const char *x = strchr(v, 'x');
    size_t lw = x ? (size_t)(x - v) : 0, lh = x ? strlen(x + 1) : 0;
    if (x && lh >= 2 && !strcmp(x + 1 + lh - 2, "in"))
        lh -= 2;
    if (!x || !lw || !lh || lw >= sizeof w || lh >= sizeof h)
        return cli_usage(cmd, "--size: expected WxHin, e.g. 3.5x2.6in, got '%.60s'", v);
    memcpy(w, v, lw);
    w[lw] = 0;
    memcpy(h, x + 1, lh);
    h[lh] = 0;
    if (cli_real(cmd, "--size", w, 0.5, 100, &o->width_in) ||
        cli_real(cmd, "--size", h, 0.5, 100, &o->height_in))
        return EXIT_USAGE;
    return 0;
}

static const char *kind_name_at(void *user, size_t i)
{
    (void)user;
    return wl_plot_kind_at(i)->name;
}

static int plot_parse(int argc, char **argv, plot_opts *p)
{
    const char *cmd = "plot";
    if (argc < 2)
        return cli_usage(cmd, "missing KIND");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help(stdout);
        return CLI_HELP;
    }
    if (!(p->kind = wl_plot_kind_find(argv[1]))) {
        char kinds[256] = "", hint[256];
        for (size_t i = 0; i < wl_plot_kind_count(); i++) {
            size_t l = strlen(kinds);
            snprintf(kinds + l, sizeof kinds - l, "%s%s", i ? ", " : "", wl_plot_kind_at(i)->name);
        }
        wl_core_name_hint(kind_name_at, NULL, wl_plot_kind_count(), argv[1], hint, sizeof hint);
        return cli_usage(cmd, "unknown kind '%.60s'%s (kinds: %s)", argv[1], hint, kinds);
    }
    static const struct option lo[] = {
        {"in", required_argument, 0, 'i'},      {"title", required_argument, 0, 't'},
        {"panels", required_argument, 0, 'P'},  {"facet", required_argument, 0, 'F'},
        {"x", required_argument, 0, 'x'},       {"y", required_argument, 0, 'y'},
        {"z", required_argument, 0, 'z'},       {"metric", required_argument, 0, 'm'},
        {"against", required_argument, 0, 'a'}, {"palette", required_argument, 0, 'p'},
        {"size", required_argument, 0, 's'},    {"dpi", required_argument, 0, 'd'},
        {"log-x", no_argument, 0, 'X'},         {"log-y", no_argument, 0, 'Y'},
        {"linear", no_argument, 0, 'n'},
        {"stack", optional_argument, 0, 'S'},         {"normalize", no_argument, 0, 'N'},
        {"objective", required_argument, 0, 'O'}, {"edp", no_argument, 0, 'E'},
        {"legend", required_argument, 0, 'L'}, {"reduce", required_argument, 0, 'R'},
        {"show-infeasible", no_argument, 0, 'I'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    const char *in = NULL;
    optind = 2; /* after KIND */
    opterr = 0;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'i': in = optarg; break;
        case 'o': p->out = optarg; break;
        case 't': p->o.title = optarg; break;
        case 'P': p->k.panels = optarg; break;
        case 'F': p->k.facet = optarg; break;
        case 'x': p->k.x = optarg; break;
        case 'y': p->k.y = optarg; break;
        case 'z': p->k.z = optarg; break;
        case 'm': p->k.metric = optarg; break;
        case 'a': p->k.against = optarg; break;
        case 'p': p->o.palette = optarg; break;
        case 's': rc = size_arg(cmd, optarg, &p->o); break;
        case 'd': rc = cli_real(cmd, "--dpi", optarg, 10, 2400, &p->o.dpi); break;
        case 'X': p->o.log_x = 1; break;
        case 'Y': p->o.log_y = 1; break;
        case 'n': p->o.linear = 1; break;
        case 'S':
            p->k.stack = !optarg || !strcmp(optarg, "parts") ? WL_PLOT_STACK_PARTS
                         : !strcmp(optarg, "phases") ? WL_PLOT_STACK_PHASES : -1;
            if (p->k.stack < 0)
                rc = cli_usage(cmd, "--stack: expected parts or phases, got '%.60s'", optarg);
            break;
        case 'N': p->k.normalize = 1; break;
        case 'I': p->k.show_infeasible = 1; break;
        case 'R': p->k.reduce = optarg; break;
        case 'O': p->k.objective = optarg; break;
        case 'E': p->k.edp = 1; break;
        case 'L':
            if (wl_plot_legend_parse(optarg, &p->o.legend))
                rc = cli_usage(cmd, "--legend: expected outside, inside or none, got '%.60s'", optarg);
            break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (!rc)
        rc = cli_input(cmd, in, argc, argv, optind, &p->in);
    if (rc)
        return rc;
    if (!p->in || !p->out)
        return cli_usage(cmd, "an input table (--in FILE.csv) and -o FIG are required");
    wl_error err = {0};
    /* a format it cannot write is the command line's mistake, found
     * before any work */
    if (wl_plot_output_check(p->out, &err))
        return cli_fail(cmd, &err);
    if (wl_plot_kind_options_check(p->kind, &p->k, &p->o, &err))
        return cli_fail(cmd, &err);
    return rc;
}

int cmd_plot(int argc, char **argv)
{
    plot_opts p = {0};
    wl_plot_options_default(&p.o);
    int rc = plot_parse(argc, argv, &p);
    if (rc)
        return rc == CLI_HELP ? 0 : rc;
    wl_error err = {0};
    cli_work *wk = cli_work_start("plot", p.out, 0);
    rc = wl_plot_draw(p.kind, NULL, p.in, &p.k, &p.o, p.out, &err);
    cli_work_stop(wk);
    return rc ? cli_fail("plot", &err) : 0;
}
