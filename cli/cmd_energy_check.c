/* wattlas energy-check: board-level energy per operation at peak against
 * the first-principles figure for the arithmetic alone. */
#include "cli.h"
#include "../sweep/wattlas_sweep.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas energy-check --gpu LIST [--dtype LIST] [--format FMT] [-o FILE]\n\n"
"Compares the board's energy per operation at peak (TDP / dense peak\n"
"throughput at the maximum clock) with the energy of the arithmetic alone:\n"
"one multiply at the input precision per MAC and its add (an FFMA's whole\n"
"fp32 add; on a tensor core an integer add into the K-product dot and 1/K of\n"
"the fp32 accumulate, K = 8 tf32, 16 fp16/bf16, 32 fp8/int8), from the 7 nm\n"
"table of Jouppi et al. (ISCA 2021), scaled to the GPU's process node as\n"
"L^0.567, and the register operands of a MAC (12 B per FFMA, its A operand\n"
"from the reuse cache; 0.4375 B x element size per tensor-core MAC) at the\n"
"register file's energy per byte.\n"
"The residual is shared memory, L2, DRAM, control, clocks, static and idle\n"
"power. The model's own split at an 8192^3 GEMM at the maximum clock\n"
"(unthrottled) follows in the model_* columns.\n\n"
"  --gpu LIST          GPU presets or INI files (default a100-sxm-80gb), a row\n"
"                      per GPU and precision\n"
"  --dtype LIST        precisions (default: every one the GPU has)\n"
"  --format table|csv|ndjson|json  output format (default: -o FILE's extension,\n"
"                          .csv, .ndjson or .json, else table)\n"
"  -o FILE             write to FILE (atomically) instead of stdout\n");
}

typedef struct {
    const char *gpu_id, *dtypes, *out;
    wl_results_format format;
} check_opts;

static int check_parse(int argc, char **argv, check_opts *o)
{
    const char *cmd = "energy-check";
    static const struct option lo[] = {{"gpu", required_argument, 0, 'g'},
                                       {"dtype", required_argument, 0, 'd'},
                                       {"format", required_argument, 0, 'f'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    int fmt_given = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'g': o->gpu_id = optarg; break;
        case 'd': o->dtypes = optarg; break;
        case 'f':
            rc = cli_format(cmd, optarg, &o->format);
            fmt_given = 1;
            break;
        case 'o': o->out = optarg; break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (!rc && optind < argc)
        rc = cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (!fmt_given)
        o->format = cli_format_of_path(o->out, o->format);
    return rc;
}

static int check_run(const check_opts *o)
{
    const char *cmd = "energy-check";
    wl_error err = {0};
    wl_results_col cols[WL_SWEEP_ENERGY_CHECK_COLS];
    size_t nc = wl_sweep_energy_check_cols(cols);
    cli_rows rows;
    int rc = cli_rows_open(cmd, o->out, o->format, cols, nc, &rows);
    if (rc)
        return rc;
    rc = wl_sweep_energy_check(o->gpu_id, o->dtypes, rows.w, &err);
    if (rc) {
        cli_rows_close(cmd, &rows, 0);
        /* the options' values name what was wrong */
        if (!err.line && !strcmp(err.field, "dtype"))
            return cli_usage(cmd, "--dtype: %s", err.text);
        if (!err.line && !strcmp(err.source, "gpu"))
            wl_error_locate(&err, "--gpu", 0);
        return cli_fail(cmd, &err);
    }
    return cli_rows_close(cmd, &rows, 1);
}

int cmd_energy_check(int argc, char **argv)
{
    check_opts o = {.gpu_id = "a100-sxm-80gb", .out = "-", .format = WL_FMT_TABLE};
    int rc = check_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        return 0;
    return rc ? rc : check_run(&o);
}
