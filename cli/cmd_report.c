/* wattlas report: a whole study (wl_plot_report) from a spec file. */
#include "cli.h"
#include "../plot/wattlas_plot.h"
#include "../sweep/wattlas_sweep.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas report --spec STUDY.ini -o DIR [--learned MODEL.json] [--threads N]\n"
"                      [--quiet]\n\n"
"Runs the study's sweep ([sweep] and [set] sections, as 'wattlas sweep\n"
"--spec'), its Pareto fronts and the optimisation named in [report]\n"
"(title = ..., objective = energy-within-slowdown=10 by default), and writes\n"
"to DIR: the CSVs (sweep.csv, pareto.csv, optimal.csv, savings.csv), every\n"
"figure as PNG, PDF and SVG with the CSV behind it, and index.md and index.html\n"
"with the energy-optimal clock per workload, the savings table, the figures,\n"
"the command and the version. The report is built beside DIR and moved into\n"
"it only when complete: a failure leaves DIR as it was. Steps are reported on\n"
"stderr, with the sweep's progress bar on a terminal. The spec may also be\n"
"given as the one argument.\n"
"A serving study has a [serve] section instead: 'wattlas serve' options as\n"
"keys (max_num_seqs = 16,64,128, clock = 990:1980:90, async_scheduling = on,\n"
"max_itl_ms = ..., optimize = energy with all = on for meets_slo), and [report]\n"
"title. DIR gets serve.csv, the figure serve-front (energy per output token\n"
"against p90 ITL, a front per max_num_seqs, coloured by clock) and index.md\n"
"and index.html with the lowest-energy point per engine.\n"
"  --learned MODEL.json  every point is a model from 'wattlas learn' (as the\n"
"                spec key learned = ...): a hybrid corrects the analytical\n"
"                prediction inside its training domain; the Caveats say which\n"
"                model and how many points lie outside it\n");
}

typedef struct {
    const char *spec_path, *dir, *learned;
    int quiet;
    long long threads;
    char *command;
} report_opts;

static int report_parse(int argc, char **argv, report_opts *o)
{
    const char *cmd = "report";
    static const struct option lo[] = {{"spec", required_argument, 0, 's'},
                                       {"threads", required_argument, 0, 'T'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"learned", required_argument, 0, 'L'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *spec = NULL;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 's': spec = optarg; break;
        case 'o': o->dir = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'L': o->learned = optarg; break;
        case 'T': rc = cli_int(cmd, "--threads", optarg, 1, 1024, &o->threads); break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (!rc)
        rc = cli_input(cmd, spec, argc, argv, optind, &o->spec_path);
    if (!rc && (!o->spec_path || !o->dir))
        rc = cli_usage(cmd, "--spec STUDY.ini and -o DIR are required");
    if (rc)
        return rc;
    if (!(o->command = cli_command_line(argc, argv))) {
        fprintf(stderr, "wattlas %s: out of memory\n", cmd);
        return EXIT_RUNTIME;
    }
    return 0;
}

/* A study with a [serve] section: the serving report. */
static int serve_run(const report_opts *o)
{
    const char *cmd = "report";
    wl_error err = {0};
    if (o->learned)
        return cli_usage(cmd, "--learned applies to a sweep study, not a serving one");
    wl_plot_report_options ro = {.command = o->command, .spec_path = o->spec_path,
                                 .step = o->quiet ? NULL : cli_note, .user = (void *)cmd};
    wl_plot_report_stats st;
    if (wl_plot_serve_report(o->spec_path, o->dir, &ro, &st, &err))
        return cli_fail(cmd, &err);
    if (!o->quiet)
        fprintf(stderr, "wattlas report: %s/index.html and %s/index.md, %zu figures, %llu "
                        "serving runs\n", o->dir, o->dir, st.figures, st.points);
    return 0;
}

static int report_run(const report_opts *o)
{
    const char *cmd = "report";
    wl_error err = {0};
    if (wl_plot_study_is_serve(o->spec_path))
        return serve_run(o);
    wl_sweep_spec *spec = wl_sweep_spec_create();
    if (!spec) {
        fprintf(stderr, "wattlas report: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = 0;
    if (wl_sweep_spec_load(spec, o->spec_path, &err) ||
        (o->learned && wl_sweep_spec_set(spec, "learned", o->learned, "--learned", 0, &err)) ||
        wl_sweep_spec_finish(spec, &err)) {
        rc = cli_fail(cmd, &err);
    } else {
        cli_spec_notes(cmd, spec, o->quiet);
        cli_bar b;
        cli_bar_start(&b, "points");
        wl_plot_report_options ro = {.command = o->command, .spec_path = o->spec_path,
                                     .threads = (int)o->threads,
                                     .step = o->quiet ? NULL : cli_bar_line,
                                     .progress = !o->quiet && isatty(STDERR_FILENO) ? cli_bar_draw
                                                                                   : NULL,
                                     .user = &b};
        wl_plot_report_stats st;
        int failed = wl_plot_report(spec, o->dir, &ro, &st, &err);
        cli_bar_end(&b);
        if (failed)
            rc = cli_fail(cmd, &err);
        else if (!o->quiet)
            fprintf(stderr, "wattlas report: %s/index.html and %s/index.md, %zu figures, "
                            "%llu points\n", o->dir, o->dir, st.figures, st.points);
        if (!rc)
            cli_learned_outside(cmd, spec, st.learned_outside);
    }
    wl_sweep_spec_free(spec);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    report_opts o = {0};
    int rc = report_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        rc = 0;
    else if (!rc)
        rc = report_run(&o);
    free(o.command);
    return rc;
}
