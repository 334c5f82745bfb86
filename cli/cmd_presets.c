/* wattlas presets list|show|derive-vf */
#include "cli.h"
#include "../cluster/wattlas_cluster.h"
#include "../presets/wattlas_presets.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas presets list [--format FMT] [-o FILE]\n"
"       wattlas presets show ID [-o FILE]\n"
"       wattlas presets derive-vf IDLE.csv [--step-mhz N] [-o FILE]\n\n"
"list       the built-in GPU, model, host and system presets (table, csv, ndjson or\n"
"           json); a GPU's row names its host class and issue cost\n"
"show ID    a preset's INI text (GPU, model, host, system or workload, by id or alias)\n"
"derive-vf  a smoothed [vf] section from a measured idle table\n"
"           (columns sm_clock_mhz,voltage_mv,idle_power_w; default step 60 MHz)\n");
}

typedef struct {
    const char *sub, *arg, *out;
    double step;
    wl_results_format format;
} presets_opts;

static int presets_parse(int argc, char **argv, presets_opts *o)
{
    const char *cmd = "presets";
    static const struct option lo[] = {{"format", required_argument, 0, 'f'},
                                       {"step-mhz", required_argument, 0, 's'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'f': rc = cli_format(cmd, optarg, &o->format); break;
        case 's': rc = cli_real(cmd, "--step-mhz", optarg, 1e-3, 100000, &o->step); break;
        case 'o': o->out = optarg; break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (rc)
        return rc;
    if (optind >= argc)
        return cli_usage(cmd, "missing subcommand (list, show, derive-vf)");
    o->sub = argv[optind++];
    int want = !strcmp(o->sub, "list") ? 0 : !strcmp(o->sub, "show") || !strcmp(o->sub, "derive-vf")
                                                 ? 1 : -1;
    if (want < 0)
        return cli_usage(cmd, "unknown subcommand '%.60s' (list, show, derive-vf)", o->sub);
    if (argc - optind != want)
        return cli_usage(cmd, want ? "%s takes one argument" : "%s takes no arguments", o->sub);
    o->arg = want ? argv[optind] : NULL;
    return 0;
}

static int list(const presets_opts *o)
{
    cli_rows rows;
    wl_results_col cols[WL_CLUSTER_CATALOG_COLS];
    size_t nc = wl_cluster_catalog_cols(-1, cols);
    int rc = cli_rows_open("presets", o->out, o->format, cols, nc, &rows);
    if (rc)
        return rc;
    if (wl_cluster_catalog_rows(-1, rows.w))
        rc = EXIT_RUNTIME;
    int crc = cli_rows_close("presets", &rows, !rc);
    return rc ? rc : crc;
}

static int presets_run(const presets_opts *o)
{
    const char *cmd = "presets";
    wl_error err = {0};
    if (!strcmp(o->sub, "list"))
        return list(o);
    wl_results_out *out = NULL;
    const char *t = NULL;
    if (!strcmp(o->sub, "show")) {
        /* an exact id of any kind before an alias of another kind (the
         * dgx-h100 system and the host class that names it as an alias);
         * then each kind's aliases, workloads' included (issue 78: every
         * kind's resolver but the workloads' was asked) */
        for (int k = 0; k < WL_PRESET_KINDS && !t; k++)
            t = wl_preset_text((wl_preset_kind)k, o->arg);
        for (int k = 0; k < WL_PRESET_KINDS && !t; k++) {
            const char *id = wl_preset_resolve((wl_preset_kind)k, o->arg);
            t = id ? wl_preset_text((wl_preset_kind)k, id) : NULL;
        }
        if (!t)
            return cli_usage(cmd, "no preset '%.60s' (see 'wattlas presets list')", o->arg);
    }
    if (wl_results_out_open(o->out, &out, &err))
        return cli_fail(cmd, &err);
    int rc = 0;
    if (t) {
        FILE *f = wl_results_out_stream(out);
        fputs(t, f);
        /* a calibrated GPU's text says which spec its coefficients belong
         * to, so that an edited copy goes through the transfer rules */
        wl_core_gpu g;
        wl_error e2;
        if (!strstr(t, "\n[calibrated_spec]") && wl_preset_gpu_resolve(o->arg) &&
            wl_preset_gpu_load(o->arg, &g, &e2) == WL_OK && !g.coef_source[0]) {
            fputc('\n', f);
            wl_preset_write_calibrated_spec(f, &g);
        }
    } else
        rc = wl_preset_derive_vf(o->arg, o->step, wl_results_out_stream(out), &err);
    if (rc) {
        wl_results_out_abort(out);
        return cli_fail(cmd, &err);
    }
    if (wl_results_out_commit(out, &err))
        return cli_fail(cmd, &err);
    return 0;
}

int cmd_presets(int argc, char **argv)
{
    presets_opts o = {.out = "-", .step = 60, .format = WL_FMT_TABLE};
    int rc = presets_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        return 0;
    return rc ? rc : presets_run(&o);
}
