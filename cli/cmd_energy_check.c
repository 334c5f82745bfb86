/* wattlas energy-check: board-level energy per operation at peak against
 * the first-principles figure for the arithmetic alone. */
#include "cli.h"
#include "../presets/wattlas_presets.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas energy-check --gpu ID|FILE.ini [--dtype LIST] [--format FMT] [-o FILE]\n\n"
"Compares the board's energy per operation at peak (TDP / dense peak\n"
"throughput at the maximum clock) with the energy of the arithmetic alone:\n"
"one multiply at the input precision plus one accumulate-add per MAC, from\n"
"the 7 nm table of Jouppi et al. (ISCA 2021), scaled to the GPU's process\n"
"node as L^0.567, and the register operands of a MAC (16 B per FFMA, 0.4375 B\n"
"x element size per tensor-core MAC) at the register file's energy per byte.\n"
"The residual is shared memory, L2, DRAM, control, clocks, static and idle\n"
"power. The model's own split at an 8192^3 GEMM at the maximum clock\n"
"(unthrottled) follows in the model_* columns.\n\n"
"  --gpu ID|FILE.ini   GPU preset (default a100-sxm-80gb)\n"
"  --dtype LIST        precisions (default: every one the GPU has)\n"
"  --format table|csv|ndjson|json  output format (default table)\n"
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
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'g': o->gpu_id = optarg; break;
        case 'd': o->dtypes = optarg; break;
        case 'f': rc = cli_format(cmd, optarg, &o->format); break;
        case 'o': o->out = optarg; break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv); break;
        }
    }
    if (!rc && optind < argc)
        rc = cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    return rc;
}

static const wl_results_col cols[] = {
    WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 14),
    WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 5),
    WL_RESULTS_COL("unit", WL_COL_TEXT, 0, 6),
    WL_RESULTS_COL("process_nm", WL_COL_NUM, -1, 0),
    WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("peak_tflops", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("board_w", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("board_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("mult_pj", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("add_pj", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("arith_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("reg_pj_per_byte", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("operand_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("residual_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("first_principles_pct", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("model_gemm_mnk", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("model_power_w", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("model_tflops", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("model_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("model_compute_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("model_memory_pj_per_flop", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("model_static_pj_per_flop", WL_COL_NUM, 4, 0),
};
#define NCOLS (sizeof cols / sizeof *cols)

static int check_run(const check_opts *o)
{
    const char *cmd = "energy-check";
    wl_error err = {0};
    wl_core_gpu g;
    if (wl_preset_gpu_load(o->gpu_id, &g, &err)) {
        if (!err.line && !strcmp(err.field, "gpu"))
            wl_error_locate(&err, "--gpu", 0); /* no such preset: the option's value */
        return cli_fail(cmd, &err);
    }
    if (!(g.process_nm > 0)) {
        wl_error_set(&err, o->gpu_id, 0, "process_nm", "the preset gives no process node");
        return cli_fail(cmd, &err);
    }
    int want[WL_DT_COUNT] = {0};
    if (o->dtypes) {
        wl_core_strlist l = {0};
        if (wl_core_parse_names(o->dtypes, "--dtype", 0, "", &l, &err))
            return cli_fail(cmd, &err);
        int rc = 0;
        for (size_t i = 0; !rc && i < l.n; i++) {
            wl_dtype dt;
            if (wl_dtype_parse(l.v[i], &dt))
                rc = cli_usage(cmd, "--dtype: unknown precision '%.40s'", l.v[i]);
            else if (!(g.tc_flop_per_clk_sm[dt] > 0) && !(g.cuda_flop_per_clk_sm[dt] > 0))
                rc = cli_usage(cmd, "--dtype: %s has no %s", g.id, wl_dtype_name(dt));
            else
                want[dt] = 1;
        }
        wl_core_strlist_free(&l);
        if (rc)
            return rc;
    } else {
        for (int d = 0; d < WL_DT_COUNT; d++)
            want[d] = g.tc_flop_per_clk_sm[d] > 0 || g.cuda_flop_per_clk_sm[d] > 0;
    }
    wl_core_energy_check ec[WL_DT_COUNT];
    for (int d = 0; d < WL_DT_COUNT; d++)
        if (want[d] && wl_core_energy_check_run(&g, (wl_dtype)d, &ec[d], &err))
            return cli_fail(cmd, &err);
    cli_rows rows;
    int rc = cli_rows_open(cmd, o->out, o->format, cols, NCOLS, &rows);
    if (rc)
        return rc;
    char tdp[WL_CORE_NUM_TEXT];
    wl_core_num_text(tdp, sizeof tdp, g.tdp_w > 0 ? g.tdp_w : g.power_limit_w);
    wl_results_writer_note(rows.w, "%s, %g nm, %s W TDP, peak at the maximum clock; pJ per FLOP "
                                   "(per OP for int8)", g.id, g.process_nm, tdp);
    for (int d = 0; d < WL_DT_COUNT && !rc; d++) {
        if (!want[d])
            continue;
        const wl_core_energy_check *e = &ec[d];
        const double v[19] = {g.process_nm, e->clock_mhz, e->peak_tflops, e->board_w,
                              e->board_pj_per_flop, e->mult_pj, e->add_pj, e->arith_pj_per_flop,
                              e->reg_pj_per_byte, e->operand_pj_per_flop, e->residual_pj_per_flop,
                              100.0 * (e->arith_pj_per_flop + e->operand_pj_per_flop) /
                                  e->board_pj_per_flop,
                              (double)e->gemm_mnk, e->model_power_w, e->model_tflops,
                              e->model_pj_per_flop, e->model_compute_pj, e->model_memory_pj,
                              e->model_static_pj};
        wl_results_cell cells[NCOLS];
        cells[0] = (wl_results_cell){g.id, NAN};
        cells[1] = (wl_results_cell){wl_dtype_name(e->dtype), NAN};
        cells[2] = (wl_results_cell){e->tensor_core ? "tensor" : "cuda", NAN};
        for (int i = 0; i < 19; i++)
            cells[3 + i] = (wl_results_cell){NULL, v[i]};
        if (wl_results_writer_row(rows.w, cells))
            rc = EXIT_RUNTIME;
    }
    wl_results_writer_note(rows.w, "board = TDP / peak; mult + add per MAC (Jouppi et al. ISCA "
                                   "2021, 7 nm, node^0.567, or the preset's [technology]); arith "
                                   "= (mult + add) / 2; operand = register bytes per MAC x pJ/B / "
                                   "2; first_principles_pct = (arith + operand) / board");
    int crc = cli_rows_close(cmd, &rows, !rc);
    return rc ? rc : crc;
}

int cmd_energy_check(int argc, char **argv)
{
    check_opts o = {.gpu_id = "a100-sxm-80gb", .out = "-", .format = WL_FMT_TABLE};
    int rc = check_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        return 0;
    return rc ? rc : check_run(&o);
}
