/* wattlas compare: one workload on several GPUs, with each GPU's
 * energy-optimal (or otherwise chosen) clock. */
#include "cli.h"
#include "../pareto/wattlas_pareto.h"
#include "../sweep/wattlas_sweep.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas compare --gpu A,B,... [options]\n\n"
"Predicts one workload on each GPU: time, power and energy at the requested\n"
"clock (default: each GPU's maximum), the clock the objective chooses over\n"
"each GPU's whole clock grid (opt_*), and the energy there against the energy\n"
"at the maximum clock. GPUs without measurements run on transferred\n"
"coefficients (the coefficients column says so).\n\n"
"  --gpu LIST              GPU presets or INI paths (required)\n"
"  --model ID|FILE.ini     model preset or hub id (default gpt2)\n"
"  --trace FILE.json       a kernel trace instead of --model\n"
"  --host ID|FILE.ini      one host for every GPU (default: each preset's host class)\n"
"  --idle [ID=]TABLE.csv   measured idle table for that GPU instead of its preset's\n"
"                          idle curve (repeatable; a bare TABLE only with one GPU)\n"
"  --batch N  --seq N      shape (defaults 1 and 128)\n"
"  --dtype bf16|fp16|fp32|tf32|fp8  precision (default bf16; fp8 is an\n"
"                                8-bit checkpoint's W8A8 inference)\n"
CLI_MODE_HELP
"  --attention eager|flash attention implementation (default eager)\n"
"  --clock MHZ             requested clock for the first columns (default: max)\n"
"  --power-limit-w W       every GPU's board power limit (default: each preset's)\n"
"  --same-board            every GPU on the first one's board: its coefficients\n"
"                          carried by the transfer rules (and its V-f and idle\n"
"                          curves where the die is the same), so that only the\n"
"                          configuration differs; without it, two GPUs of one die\n"
"                          get a note of how much of their difference is the two\n"
"                          presets' boards\n"
"  --objective OBJ         energy (default), edp, ed2p, energy-within-slowdown=P,\n"
"                          time-within-power=W (see 'wattlas optimize')\n"
"  --latency tiled|roofline\n"
"  --learned MODEL.json    apply a model from 'wattlas learn' to every point before\n"
"                          the choice (a hybrid corrects the analytical prediction\n"
"                          inside its training domain; a plain one replaces it)\n"
"  --interval LEVEL        prediction intervals at LEVEL (0.95 or 95) at the\n"
"                          requested clock (time_lo_ms ... energy_hi_j) and at\n"
"                          the chosen one (opt_time_lo_ms ...), from each GPU's\n"
"                          calibration uncertainty\n"
"  --format table|csv|ndjson|json  output format (default: -o FILE's extension,\n"
"                          .csv, .ndjson or .json, else table)\n"
"  -o FILE                 write to FILE (atomically) instead of stdout\n"
"  --quiet                 no notes on stderr (warnings stay)\n");
}

typedef struct {
    wl_sweep_spec *spec;
    wl_pareto_objective obj;
    double clock;
    wl_results_format format;
    const char *out;
    int quiet;
} compare_opts;

static const cli_axis axis_opts[] = {
    {"gpu", "gpu"},   {"model", "model"}, {"trace", "trace"},         {"batch", "batch"},
    {"seq", "seq"},   {"dtype", "dtype"}, {"attention", "attention"}, {"idle", "idle"},
    {"host", "host"},       {"power-limit-w", "power_limit_w"},
    {"latency", "latency"}, {"interval", "interval"}, {"learned", "learned"},
    CLI_MODE_AXES,
};
#define NAXIS (sizeof axis_opts / sizeof *axis_opts)

static int compare_parse(int argc, char **argv, compare_opts *o)
{
    const char *cmd = "compare";
    enum { O_CLOCK = 256, O_OBJ, O_FORMAT, O_QUIET, O_HELP, O_ONEBOARD };
    struct option lo[NAXIS + 8];
    size_t n = 0;
    cli_axis_options(axis_opts, NAXIS, lo, &n);
    lo[n++] = (struct option){"clock", required_argument, 0, O_CLOCK};
    lo[n++] = (struct option){"objective", required_argument, 0, O_OBJ};
    lo[n++] = (struct option){"same-board", no_argument, 0, O_ONEBOARD};
    lo[n++] = (struct option){"format", required_argument, 0, O_FORMAT};
    lo[n++] = (struct option){"quiet", no_argument, 0, O_QUIET};
    lo[n++] = (struct option){"help", no_argument, 0, O_HELP};
    lo[n] = (struct option){0, 0, 0, 0};
    wl_error err = {0};
    optind = 1;
    opterr = 0;
    int c, rc = 0, gpus = 0;
    int fmt_given = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        const cli_axis *ax = cli_axis_of(axis_opts, NAXIS, c);
        if (ax) {
            gpus |= !strcmp(ax->key, "gpu");
            if (strcmp(ax->key, "gpu") && strcmp(ax->key, "idle") && strcmp(ax->key, "interval") &&
                strcmp(ax->key, "learned") &&
                strchr(optarg, ','))
                return cli_usage(cmd, "--%s: one workload, one value (see 'wattlas sweep')",
                                 ax->opt);
            rc = cli_axis_set(cmd, o->spec, ax, optarg);
            continue;
        }
        switch (c) {
        case O_CLOCK: rc = cli_real(cmd, "--clock", optarg, 1, 100000, &o->clock); break;
        case O_OBJ:
            if (wl_pareto_objective_parse(optarg, &o->obj, &err))
                rc = cli_usage(cmd, "--objective: %s", err.text);
            break;
        case O_FORMAT:
            rc = cli_format(cmd, optarg, &o->format);
            fmt_given = 1;
            break;
        case O_QUIET: o->quiet = 1; break;
        case O_ONEBOARD:
            if (wl_sweep_spec_set(o->spec, "same_board", "on", "--same-board", 0, &err))
                rc = cli_fail(cmd, &err);
            break;
        case 'o': o->out = optarg; break;
        case O_HELP: help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (!fmt_given)
        o->format = cli_format_of_path(o->out, o->format);
    if (!gpus)
        return cli_usage(cmd, "--gpu LIST is required (e.g. --gpu a100-pcie-40gb,h100-sxm-80gb)");
    if (wl_sweep_spec_set(o->spec, "clock", "max", "--clock", 0, &err) ||
        wl_sweep_spec_finish(o->spec, &err))
        return cli_fail(cmd, &err);
    cli_spec_notes(cmd, o->spec, o->quiet);
    /* a clock no GPU has is a usage error; one some GPUs lack gives their
     * rows as not runnable */
    size_t ng = wl_sweep_spec_axis_count(o->spec, "gpu"), in = 0;
    wl_error first = {0};
    for (size_t i = 0; o->clock > 0 && i < ng; i++) {
        wl_error e = {0};
        if (wl_core_gpu_clock_check(wl_sweep_spec_gpu(o->spec, i), o->clock, "--clock", 0, &e) == WL_OK)
            in++;
        else if (!first.text[0])
            first = e;
    }
    if (o->clock > 0 && !in)
        return cli_fail(cmd, &first);
    return 0;
}

static void compare_note(void *cmd, int warning, const char *text)
{
    fprintf(stderr, "wattlas %s: %s: %s\n", (const char *)cmd, warning ? "warning" : "note", text);
}

/* --quiet: the warnings alone */
static void compare_warning(void *cmd, int warning, const char *text)
{
    if (warning)
        compare_note(cmd, warning, text);
}

static int compare_run(const compare_opts *o)
{
    const char *cmd = "compare";
    wl_error err = {0};
    wl_results_col cols[WL_PARETO_COMPARE_COLS];
    size_t nc = wl_pareto_compare_cols(wl_sweep_spec_level(o->spec) > 0,
                                       wl_sweep_spec_has_mode(o->spec, WL_MODE_DECODE), cols),
           runnable = 0;
    cli_rows rows;
    int rc = cli_rows_open(cmd, o->out, o->format, cols, nc, &rows);
    if (rc)
        return rc;
    if (wl_sweep_compare(o->spec, o->clock, &o->obj, rows.w,
                         o->quiet ? compare_warning : compare_note, (void *)cmd, &runnable,
                         &err))
        rc = err.text[0] ? cli_fail(cmd, &err) : EXIT_RUNTIME;
    int crc = cli_rows_close(cmd, &rows, !rc);
    if (!rc && !crc && runnable == 0) {
        fprintf(stderr, "wattlas compare: no GPU can run this case\n");
        return EXIT_RUNTIME;
    }
    return rc ? rc : crc;
}

int cmd_compare(int argc, char **argv)
{
    compare_opts o = {.spec = wl_sweep_spec_create(), .format = WL_FMT_TABLE, .out = "-"};
    wl_error err;
    if (!o.spec || wl_pareto_objective_parse("energy", &o.obj, &err)) {
        wl_sweep_spec_free(o.spec);
        fprintf(stderr, "wattlas compare: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = compare_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        rc = 0;
    else if (!rc)
        rc = compare_run(&o);
    wl_sweep_spec_free(o.spec);
    return rc;
}
