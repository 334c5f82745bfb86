/* wattlas pareto, wattlas optimize: read a sweep table, group it, and print
 * the non-dominated rows or one chosen operating point per group. */
#include "cli.h"
#include "../pareto/wattlas_pareto.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pareto_help(FILE *f)
{
    fprintf(f,
"usage: wattlas pareto [SWEEP.csv | --in FILE|-] [--x COL] [--y COL] [--minimize COL,...]\n"
"                      [--group-by COL,...] [--all] [--format FMT] [-o FILE] [--quiet]\n\n"
"Prints the non-dominated rows (all objectives minimised) of each group, in\n"
"input order, with the input's columns. Default objectives: --x time_ms\n"
"--y energy_j; --minimize adds more (fronts of three or more objectives).\n"
"Default groups: the sweep's parameter columns before the voltage and clock\n"
"columns, plus kernel_class. Rows with feasible = 0 and points that do not\n"
"fit their GPU's memory (fits = 0) are left out unless --all. O(n log n) for two and three objectives. Formats: csv (default),\n"
"ndjson, json, table. Every value must be a finite number (an empty cell\n"
"is a point that was not evaluated). --quiet: no notes on stderr.\n");
}

static void optimize_help(FILE *f)
{
    fprintf(f,
"usage: wattlas optimize --objective OBJ [SWEEP.csv | --in FILE|-] [--group-by COL,...]\n"
"                        [--time COL] [--power COL] [--energy COL] [--all]\n"
"                        [--format FMT] [-o FILE] [--quiet]\n\n"
"Picks one operating point per group and prints the savings table: the\n"
"chosen clock, time, power and energy; the fastest point and the\n"
"maximum-clock point; energy saved and runtime penalty against each.\n"
"objectives:\n"
"  energy                      least energy\n"
"  edp                         least energy x delay\n"
"  ed2p                        least energy x delay^2\n"
"  energy-within-slowdown=P    least energy with time <= (1 + P/100) x fastest\n"
"  time-within-power=W         least time with average power <= W watts\n"
"Defaults: time_ms, power_w, energy_j; groups as in 'wattlas pareto'; a sweep\n"
"with --kernels (a kernel_class column) optimises each class on class_time_ms\n"
"and class_energy_j unless --time or --energy names columns. Rows\n"
"with feasible = 0 and points that do not fit their GPU's memory (fits = 0)\n"
"are left out unless --all. --quiet: no notes on stderr.\n\n"
"--schedule[=class|phase] [--switch-us US]  one clock per part of the work\n"
"        (energy or energy-within-slowdown=P): per kernel class in a sweep with\n"
"        --kernels (the default when the table has kernel_class), or per phase\n"
"        in a train or decode sweep (forward, backward, optimizer; prefill,\n"
"        decode). A clock switch costs US microseconds (default 20) at static\n"
"        power, twice each time the work enters a part that runs off the\n"
"        schedule's base clock (per launch of a class; per micro-batch for\n"
"        forward and backward, once per step for the optimizer, once per\n"
"        generation for prefill and decode). Prints the best fixed clock, the\n"
"        schedule, its switches, its extra saving and its slowdown against that\n"
"        clock. Class times are GPU busy times; phase times include their gaps.\n");
}

typedef struct {
    const char *in, *out, *x, *y, *more, *group_by;
    const char *tcol, *pcol, *ecol;
    int values_named; /* --time or --energy given */
    const char *named[7]; /* columns the user named (a missing one is a usage error) */
    int nnamed;
    int all, quiet;
    enum { SCHED_NONE, SCHED_AUTO, SCHED_CLASS, SCHED_PHASE } schedule;
    double switch_us;
    wl_pareto_objective obj;
    int have_obj;
    wl_results_format format;
} sel_opts;

static int sel_parse(const char *cmd, int argc, char **argv, sel_opts *o)
{
    int is_opt = !strcmp(cmd, "optimize");
    static const struct option lo_p[] = {
        {"in", required_argument, 0, 'i'},       {"x", required_argument, 0, 'x'},
        {"y", required_argument, 0, 'y'},        {"minimize", required_argument, 0, 'm'},
        {"group-by", required_argument, 0, 'g'}, {"all", no_argument, 0, 'a'},
        {"format", required_argument, 0, 'f'},   {"help", no_argument, 0, 'h'},
        {"quiet", no_argument, 0, 'q'},          {0, 0, 0, 0}};
    static const struct option lo_o[] = {
        {"in", required_argument, 0, 'i'},        {"objective", required_argument, 0, 'O'},
        {"group-by", required_argument, 0, 'g'},  {"all", no_argument, 0, 'a'},
        {"time", required_argument, 0, 'T'},      {"power", required_argument, 0, 'P'},
        {"energy", required_argument, 0, 'E'},    {"schedule", optional_argument, 0, 'S'},
        {"switch-us", required_argument, 0, 'W'}, {"format", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},            {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    const char *in = NULL;
    wl_error err = {0};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", is_opt ? lo_o : lo_p, NULL)) != -1) {
        switch (c) {
        case 'i': in = optarg; break;
        case 'x': o->named[o->nnamed++ % 7] = o->x = optarg; break;
        case 'y': o->named[o->nnamed++ % 7] = o->y = optarg; break;
        case 'm': o->named[o->nnamed++ % 7] = o->more = optarg; break;
        case 'g': o->named[o->nnamed++ % 7] = o->group_by = optarg; break;
        case 'a': o->all = 1; break;
        case 'q': o->quiet = 1; break;
        case 'T': o->named[o->nnamed++ % 7] = o->tcol = optarg; o->values_named = 1; break;
        case 'P': o->named[o->nnamed++ % 7] = o->pcol = optarg; break;
        case 'E': o->named[o->nnamed++ % 7] = o->ecol = optarg; o->values_named = 1; break;
        case 'S':
            o->schedule = !optarg                   ? SCHED_AUTO
                          : !strcmp(optarg, "class") ? SCHED_CLASS
                          : !strcmp(optarg, "phase") ? SCHED_PHASE
                                                     : SCHED_NONE;
            if (o->schedule == SCHED_NONE)
                rc = cli_usage(cmd, "--schedule: expected class or phase, got '%s'", optarg);
            break;
        case 'W': rc = cli_real(cmd, "--switch-us", optarg, 0, 1e6, &o->switch_us); break;
        case 'f': rc = cli_format(cmd, optarg, &o->format); break;
        case 'o': o->out = optarg; break;
        case 'O':
            if (wl_pareto_objective_parse(optarg, &o->obj, &err))
                rc = cli_usage(cmd, "--objective: %s%s%s", err.field, err.field[0] ? ": " : "",
                               err.text);
            o->have_obj = 1;
            break;
        case 'h':
            if (is_opt)
                optimize_help(stdout);
            else
                pareto_help(stdout);
            return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, is_opt ? lo_o : lo_p); break;
        }
    }
    if (!rc)
        rc = cli_input(cmd, in, argc, argv, optind, &o->in);
    if (rc)
        return rc;
    if (!o->in)
        o->in = "-";
    if (is_opt && !o->have_obj)
        return cli_usage(cmd, "--objective is required");
    if (o->schedule && !wl_pareto_schedule_supports(&o->obj))
        return cli_usage(cmd, "--schedule supports the energy and energy-within-slowdown=P "
                              "objectives");
    if (o->schedule && o->group_by)
        return cli_usage(cmd, "--group-by: a schedule groups by the sweep's parameters; leave "
                              "--group-by out");
    return 0;
}

/* A set's value columns are named by options: a missing one is a usage
 * error only when the user named it. */
static int load(const char *cmd, const sel_opts *o, const wl_pareto_load_options *lo,
                wl_pareto_set **s)
{
    wl_error err = {0};
    if (wl_pareto_set_load(o->in, lo, s, &err) == WL_OK)
        return 0;
    if (!strncmp(err.text, "no such column", 14))
        for (int i = 0; i < o->nnamed && i < 7; i++)
            if (strstr(o->named[i], err.field))
                return cli_usage(cmd, "%s has no column '%s'", err.source, err.field);
    return cli_fail(cmd, &err);
}

static void collapse_note(const char *cmd, const sel_opts *o, const wl_pareto_set *s)
{
    if (o->quiet)
        return;
    size_t u = wl_pareto_set_unfit(s);
    if (u)
        fprintf(stderr, "wattlas %s: note: %zu point%s need%s more memory than %s GPU has "
                        "(fits = 0) and %s left out (--all keeps them)\n",
                cmd, u, u == 1 ? "" : "s", u == 1 ? "s" : "", u == 1 ? "its" : "their",
                u == 1 ? "is" : "are");
    /* a group gone whole is named: at layer scope a point carries its
     * whole model's footprint, and a training step that disappears from
     * the table should not do so silently */
    size_t ng = wl_pareto_set_unfit_groups(s);
    for (size_t i = 0; i < ng && i < 8; i++)
        fprintf(stderr, "wattlas %s: note: no point of %s fits its GPU's memory, so it has no row "
                        "(at scope layer a point carries its whole model's footprint; --all "
                        "keeps it)\n",
                cmd, wl_pareto_set_unfit_group(s, i));
    if (ng > 8)
        fprintf(stderr, "wattlas %s: note: and %zu more groups with no point that fits\n", cmd,
                ng - 8);
    size_t n = wl_pareto_set_collapsed(s);
    if (n)
        fprintf(stderr, "wattlas %s: note: %zu throttled request%s reach%s the operating point of "
                        "a lower request and %s folded into it (one point per effective clock; "
                        "--all keeps every request)\n",
                cmd, n, n == 1 ? "" : "s", n == 1 ? "es" : "", n == 1 ? "is" : "are");
}

static int pareto_run(const sel_opts *o)
{
    const char *cmd = "pareto";
    wl_core_strlist names = {0};
    wl_error err = {0};
    int rc = 0;
    if (wl_core_parse_names(o->x, "--x", 0, "", &names, &err) ||
        wl_core_parse_names(o->y, "--y", 0, "", &names, &err) ||
        (o->more && wl_core_parse_names(o->more, "--minimize", 0, "", &names, &err))) {
        wl_core_strlist_free(&names);
        return cli_fail(cmd, &err);
    }
    wl_pareto_load_options lo = {.values = (const char *const *)names.v, .nvalues = names.n,
                                 .group_by = o->group_by, .keep_infeasible = o->all,
                                 .keep_fields = 1, .collapse = !o->all};
    wl_pareto_set *s = NULL;
    wl_results_col *cols = NULL;
    cli_rows rows = {0};
    cli_work *wk = cli_work_start(cmd, o->out, o->quiet);
    rc = load(cmd, o, &lo, &s);
    cli_work_stop(wk);
    wk = NULL;
    if (rc)
        goto done;
    collapse_note(cmd, o, s);
    cols = calloc(wl_pareto_set_ncols(s) + 1, sizeof *cols);
    if (!cols) {
        fprintf(stderr, "wattlas pareto: out of memory\n");
        rc = EXIT_RUNTIME;
        goto done;
    }
    size_t nc = wl_pareto_front_cols(s, cols);
    if ((rc = cli_rows_open(cmd, o->out, o->format, cols, nc, &rows)))
        goto done;
    wk = cli_work_start(cmd, o->out, o->quiet);
    if (wl_pareto_front_rows(s, rows.w))
        rc = EXIT_RUNTIME;
    cli_work_stop(wk);
    int crc = cli_rows_close(cmd, &rows, !rc);
    rc = rc ? rc : crc;
done:
    free(cols);
    wl_pareto_set_free(s);
    wl_core_strlist_free(&names);
    return rc;
}

static int optimize_run(const sel_opts *o)
{
    const char *cmd = "optimize";
    wl_error err = {0};
    wl_pareto_set *s = NULL;
    cli_rows rows = {0};
    int rc;
    if (o->schedule) {
        wl_results_csv *csv = NULL;
        if (wl_results_csv_open(o->in, &csv, &err))
            return cli_fail(cmd, &err);
        wl_pareto_schedule_by by = o->schedule == SCHED_PHASE   ? WL_PARETO_BY_PHASE
                                   : o->schedule == SCHED_CLASS ? WL_PARETO_BY_CLASS
                                                                : WL_PARETO_BY_AUTO;
        wl_pareto_load_options lo = wl_pareto_schedule_load_options(
            &by, wl_results_csv_col(csv, "kernel_class") >= 0, o->all);
        rc = wl_pareto_set_read(csv, &lo, &s, &err);
        wl_results_csv_close(csv);
        if (rc) {
            if (!strcmp(err.text, "no such column"))
                strncat(err.text, " (--schedule=class needs a sweep with --kernels)",
                        sizeof err.text - strlen(err.text) - 1);
            return cli_fail(cmd, &err);
        }
        wl_results_col cols[WL_PARETO_KEYED_MAX];
        size_t nc = wl_pareto_schedule_cols(s, cols, WL_PARETO_KEYED_MAX);
        rc = nc ? cli_rows_open(cmd, o->out, o->format, cols, nc, &rows)
                : cli_usage(cmd, "--group-by: too many columns");
        if (!rc && wl_pareto_schedules(s, &o->obj, by, o->switch_us, rows.w, &err))
            rc = cli_fail(cmd, &err);
        if (rows.w) {
            int crc = cli_rows_close(cmd, &rows, !rc);
            rc = rc ? rc : crc;
        }
        wl_pareto_set_free(s);
        return rc;
    }
    const char *values[4] = {o->tcol, o->pcol, o->ecol, "sm_clock_mhz"};
    /* a saving compares points at one voltage: each voltage is its own
     * case; a --kernels sweep's classes each on their own time and energy
     * unless the columns are named */
    wl_pareto_load_options lo = {.values = values, .nvalues = 4, .group_by = o->group_by,
                                 .keep_infeasible = o->all, .collapse = !o->all,
                                 .voltage_groups = 1, .class_values = !o->values_named};
    cli_work *wk = cli_work_start(cmd, o->out, o->quiet);
    rc = load(cmd, o, &lo, &s);
    cli_work_stop(wk);
    if (rc)
        return rc;
    if (wl_pareto_set_by_class(s) && !o->quiet)
        fprintf(stderr, "wattlas %s: note: a row per kernel class: each class chosen on "
                        "class_time_ms and class_energy_j (the time_ms and energy_j below are "
                        "the class's, power_w the board's); --time time_ms --energy energy_j "
                        "chooses on the whole pass, --schedule a clock per class\n", cmd);
    collapse_note(cmd, o, s);
    wl_results_col cols[WL_PARETO_KEYED_MAX];
    size_t nc = wl_pareto_savings_cols(s, cols, WL_PARETO_KEYED_MAX);
    rc = nc ? cli_rows_open(cmd, o->out, o->format, cols, nc, &rows)
            : cli_usage(cmd, "--group-by: too many columns");
    if (!rc && wl_pareto_savings_rows(s, &o->obj, rows.w))
        rc = EXIT_RUNTIME;
    if (rows.w) {
        int crc = cli_rows_close(cmd, &rows, !rc);
        rc = rc ? rc : crc;
    }
    wl_pareto_set_free(s);
    return rc;
}

int cmd_pareto(int argc, char **argv)
{
    sel_opts o = {.out = "-", .x = "time_ms", .y = "energy_j", .format = WL_FMT_CSV};
    int rc = sel_parse("pareto", argc, argv, &o);
    if (rc == CLI_HELP)
        return 0;
    return rc ? rc : pareto_run(&o);
}

int cmd_optimize(int argc, char **argv)
{
    sel_opts o = {.out = "-", .tcol = "time_ms", .pcol = "power_w", .ecol = "energy_j",
                  .switch_us = 20, .format = WL_FMT_CSV};
    int rc = sel_parse("optimize", argc, argv, &o);
    if (rc == CLI_HELP)
        return 0;
    return rc ? rc : optimize_run(&o);
}
