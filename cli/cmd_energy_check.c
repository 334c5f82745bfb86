/* wattlas energy-check: board-level energy per operation at peak against
 * the first-principles figure for the arithmetic alone. */
#include "cli.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas energy-check --gpu ID|FILE.ini [--dtype LIST] [--format table|csv] [-o FILE]\n\n"
"Compares the board's energy per operation at peak (TDP / dense peak\n"
"throughput at the maximum clock) with the energy of the arithmetic alone:\n"
"one multiply at the input precision plus one accumulate-add per MAC, from\n"
"the 7 nm table of Jouppi et al. (ISCA 2021), scaled to the GPU's process\n"
"node as L^0.567. The residual is operand delivery (registers, shared memory,\n"
"L2, DRAM), control, clocking, static and idle power. The model's own split\n"
"at an 8192^3 GEMM at the maximum clock (unthrottled) follows.\n\n"
"  --gpu ID|FILE.ini   GPU preset (default a100-sxm-80gb)\n"
"  --dtype LIST        precisions (default: every one the GPU has)\n"
"  --format table|csv  output format (default table)\n"
"  -o FILE             write to FILE (atomically) instead of stdout\n");
}

int cmd_energy_check(int argc, char **argv)
{
    const char *cmd = "energy-check";
    const char *gpu_id = "a100-sxm-80gb", *dtypes = NULL, *format = "table", *out = "-";
    static const struct option lo[] = {{"gpu", required_argument, 0, 'g'},
                                       {"dtype", required_argument, 0, 'd'},
                                       {"format", required_argument, 0, 'f'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'g': gpu_id = optarg; break;
        case 'd': dtypes = optarg; break;
        case 'f':
            if (strcmp(optarg, "table") && strcmp(optarg, "csv"))
                return usage_error(cmd, "--format: expected table or csv, got '%s'", optarg);
            format = optarg;
            break;
        case 'o': out = optarg; break;
        case 'h': help(stdout); return 0;
        case ':': return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        default: return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    wl_error err = {0};
    wl_core_gpu g;
    if (wl_preset_gpu_load(gpu_id, &g, &err))
        return runtime_error(cmd, &err);
    if (!(g.process_nm > 0)) {
        wl_error_set(&err, gpu_id, 0, "process_nm", "the preset gives no process node");
        return runtime_error(cmd, &err);
    }
    int want[WL_DT_COUNT] = {0}, nwant = 0;
    if (dtypes) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", dtypes);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            wl_dtype dt;
            if (wl_dtype_parse(t, &dt))
                return usage_error(cmd, "--dtype: unknown precision '%s'", t);
            if (!(g.tc_flop_per_clk_sm[dt] > 0) && !(g.cuda_flop_per_clk_sm[dt] > 0))
                return usage_error(cmd, "--dtype: %s has no %s", g.id, t);
            want[dt] = 1;
            nwant++;
        }
    } else {
        for (int d = 0; d < WL_DT_COUNT; d++)
            if (g.tc_flop_per_clk_sm[d] > 0 || g.cuda_flop_per_clk_sm[d] > 0)
                want[d] = 1, nwant++;
    }
    wl_core_energy_check ec[WL_DT_COUNT];
    for (int d = 0; d < WL_DT_COUNT; d++)
        if (want[d] && wl_core_energy_check_run(&g, (wl_dtype)d, &ec[d], &err))
            return runtime_error(cmd, &err);

    wl_results_out *o = NULL;
    if (wl_results_out_open(out, &o, &err))
        return runtime_error(cmd, &err);
    FILE *f = wl_results_out_stream(o);
    if (strcmp(format, "csv") == 0) {
        fprintf(f, "gpu,dtype,unit,process_nm,clock_mhz,peak_tflops,board_w,board_pj_per_flop,"
                   "mult_pj,add_pj,arith_pj_per_flop,reg_pj_per_byte,operand_pj_per_flop,"
                   "residual_pj_per_flop,model_gemm_mnk,"
                   "model_power_w,model_tflops,model_pj_per_flop,model_compute_pj_per_flop,"
                   "model_memory_pj_per_flop,model_static_pj_per_flop\n");
        for (int d = 0; d < WL_DT_COUNT; d++) {
            if (!want[d])
                continue;
            const wl_core_energy_check *e = &ec[d];
            fprintf(f, "%s,%s,%s,%g,%.0f,%.2f,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%lld,%.1f,%.2f,%.4f,%.4f,%.4f,%.4f\n",
                    g.id, wl_dtype_name(e->dtype), e->tensor_core ? "tensor" : "cuda", g.process_nm,
                    e->clock_mhz, e->peak_tflops, e->board_w, e->board_pj_per_flop, e->mult_pj,
                    e->add_pj, e->arith_pj_per_flop, e->reg_pj_per_byte, e->operand_pj_per_flop,
                    e->residual_pj_per_flop, e->gemm_mnk,
                    e->model_power_w, e->model_tflops, e->model_pj_per_flop, e->model_compute_pj,
                    e->model_memory_pj, e->model_static_pj);
        }
    } else {
        fprintf(f, "# %s, %g nm, %.0f W TDP, peak at %.0f MHz; pJ per FLOP (per OP for int8)\n",
                g.id, g.process_nm, g.tdp_w > 0 ? g.tdp_w : g.power_limit_w, g.sm_clock_max_mhz);
        fprintf(f, "%-6s %-6s %10s %9s %11s %8s %8s %10s %7s | %9s %8s %9s %9s %9s %9s\n", "dtype",
                "unit", "peak_tflops", "board_pj", "mac_pj", "arith_pj", "reg_pj", "residual_pj",
                "first%",
                "model_tf", "model_w", "model_pj", "compute", "memory", "static");
        for (int d = 0; d < WL_DT_COUNT; d++) {
            if (!want[d])
                continue;
            const wl_core_energy_check *e = &ec[d];
            char mac[32];
            snprintf(mac, sizeof mac, "%.3f+%.3f", e->mult_pj, e->add_pj);
            fprintf(f, "%-6s %-6s %10.1f %9.3f %11s %8.3f %8.3f %10.3f %7.1f | %9.1f %8.1f %9.3f %9.3f %9.3f %9.3f\n",
                    wl_dtype_name(e->dtype), e->tensor_core ? "tensor" : "cuda", e->peak_tflops,
                    e->board_pj_per_flop, mac, e->arith_pj_per_flop, e->operand_pj_per_flop,
                    e->residual_pj_per_flop,
                    100.0 * (e->arith_pj_per_flop + e->operand_pj_per_flop) / e->board_pj_per_flop,
                    e->model_tflops,
                    e->model_power_w, e->model_pj_per_flop, e->model_compute_pj,
                    e->model_memory_pj, e->model_static_pj);
        }
        fprintf(f, "board_pj = TDP / peak; mac_pj = multiply + accumulate-add (Jouppi et al. ISCA 2021,\n"
                   "7 nm, scaled by node^0.567), or the preset's [technology] figure (shown +0.000);\n"
                   "arith_pj = mac_pj / 2; reg_pj = register operands per MAC / 2 (16 B per FFMA,\n"
                   "0.4375 B x element size per tensor-core MAC, mma m16n8k*) x register-file pJ/B (Horowitz ISSCC 2014\n"
                   "8 KB SRAM, 1.25 pJ/B at 45 nm, node-scaled, or [technology] e_reg_pj_per_byte);\n"
                   "first%% = (arith + reg) / board; residual = board - arith - reg: shared memory,\n"
                   "L2, DRAM, control, clocks, static and idle.\n"
                   "model: an 8192^3 GEMM at the maximum clock, unthrottled, and its energy parts.\n");
    }
    if (wl_results_out_commit(o, &err))
        return runtime_error(cmd, &err);
    return 0;
}
