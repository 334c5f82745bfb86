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
"show ID    a preset's INI text (GPU, model, host or system, by id or alias)\n"
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
        default: rc = cli_bad_option(cmd, c, argc, argv); break;
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

static const wl_results_col list_cols[] = {
    WL_RESULTS_COL("kind", WL_COL_TEXT, 0, 5),
    WL_RESULTS_COL("id", WL_COL_TEXT, 0, 18),
    WL_RESULTS_COL("name", WL_COL_TEXT, 0, 30),
    WL_RESULTS_COL("sms", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("sm_clock_min_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("sm_clock_max_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("dram_bw_gbs", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("dram_type", WL_COL_TEXT, 0, 6),
    WL_RESULTS_COL("power_limit_w", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("style", WL_COL_TEXT, 0, 6),
    WL_RESULTS_COL("layers", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("d_model", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("heads", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("kv_heads", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("d_ff", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("activation", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("host", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("launch_us", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("mem_capacity_gb", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("params_m", WL_COL_NUM, 1, 0),
};
#define NLIST (sizeof list_cols / sizeof *list_cols)

static int list(const presets_opts *o)
{
    cli_rows rows;
    int rc = cli_rows_open("presets", o->out, o->format, list_cols, NLIST, &rows);
    if (rc)
        return rc;
    wl_results_cell cells[NLIST];
    for (int kind = 0; kind < WL_PRESET_KINDS && !rc; kind++) {
        wl_preset_kind k = (wl_preset_kind)kind;
        for (size_t i = 0; i < wl_preset_count(k) && !rc; i++) {
            for (size_t c = 0; c < NLIST; c++)
                cells[c] = (wl_results_cell){NULL, NAN};
            const char *id = wl_preset_id(k, i);
            cells[0].s = wl_preset_kind_name(k);
            cells[1].s = id;
            wl_error err;
            wl_core_gpu g;
            wl_core_model m;
            wl_core_host h;
            wl_cluster_system sy;
            if (k == WL_PRESET_SYSTEM && wl_cluster_system_load(id, &sy, &err) == WL_OK) {
                /* a system: its name, and its GPU in the host column's place */
                cells[2].s = sy.name;
                cells[16].s = sy.gpu;
            } else if (k == WL_PRESET_HOST && wl_preset_host_load(id, &h, &err) == WL_OK) {
                cells[2].s = h.name;
                cells[17].v = h.launch_us;
            } else if (!kind && wl_preset_gpu_load(id, &g, &err) == WL_OK) {
                cells[2].s = g.name;
                const double v[6] = {g.sms, g.sm_clock_min_mhz, g.sm_clock_max_mhz,
                                     g.dram_bw_gbs, NAN, g.power_limit_w};
                for (int j = 0; j < 6; j++)
                    cells[3 + j].v = v[j];
                cells[7].s = g.dram_type;
                cells[16].s = g.host_id[0] ? g.host_id : NULL;
                cells[17].v = g.coef.host_launch_us;
                cells[18].v = g.mem_capacity_gb > 0 ? g.mem_capacity_gb : NAN;
            } else if (kind == 1 && wl_preset_model_load(id, &m, &err) == WL_OK) {
                cells[9].s = wl_style_name(m.style);
                double np = 0;
                wl_core_model_params(&m, &np);
                cells[19].v = np / 1e6;
                const double v[5] = {m.layers, m.d_model, m.heads, m.kv_heads, m.d_ff};
                for (int j = 0; j < 5 && !wl_core_model_is_vision(&m); j++)
                    cells[10 + j].v = v[j];
                cells[15].s = wl_activation_name(m.activation);
            } else {
                cells[2].s = "(invalid preset)";
            }
            if (wl_results_writer_row(rows.w, cells))
                rc = EXIT_RUNTIME;
        }
    }
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
        const char *g = wl_preset_gpu_resolve(o->arg), *m = wl_preset_model_resolve(o->arg),
                   *h = wl_preset_host_resolve(o->arg), *sy = wl_preset_system_resolve(o->arg);
        /* an exact id of any kind before an alias of another kind (the
         * dgx-h100 system and the host class that names it as an alias) */
        for (int k = 0; k < WL_PRESET_KINDS && !t; k++)
            t = wl_preset_text((wl_preset_kind)k, o->arg);
        if (!t)
            t = g ? wl_preset_text(WL_PRESET_GPU, g) : m ? wl_preset_text(WL_PRESET_MODEL, m)
                : h ? wl_preset_text(WL_PRESET_HOST, h) : sy ? wl_preset_text(WL_PRESET_SYSTEM, sy) : NULL;
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
