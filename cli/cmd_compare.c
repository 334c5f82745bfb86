/* wattlas compare: one workload on several GPUs, with each GPU's
 * energy-optimal clock. */
#include "cli.h"
#include "../pareto/wattlas_pareto.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas compare --gpu A,B,... [options]\n\n"
"Predicts one workload on each GPU: time, power and energy at the requested\n"
"clock (default: each GPU's maximum), the energy-optimal clock over each GPU's\n"
"whole clock range, and the energy there against the energy at the maximum\n"
"clock. GPUs without measurements run on transferred coefficients (marked).\n\n"
"  --gpu LIST              comma-separated GPU presets or INI paths (required)\n"
"  --model ID|FILE.ini     model preset (default gpt2)\n"
"  --trace FILE.json       use a kernel trace instead of --model\n"
"  --idle [ID=]TABLE.csv   measured idle table for that GPU instead of its preset's\n"
"                          idle curve (repeatable; a bare TABLE only with one GPU)\n"
"  --batch N  --seq N      shape (defaults 1 and 128)\n"
"  --dtype bf16|fp16|fp32|tf32   precision (default bf16)\n"
"  --mode prefill          the only mode built natively\n"
"  --attention eager|flash attention implementation (default eager)\n"
"  --clock MHZ             requested clock for the first columns (default: max)\n"
"  --format table|csv|json output format (default table)\n"
"  -o FILE                 write to FILE (atomically) instead of stdout\n");
}

typedef struct {
    char gpu[64], source[96];
    double clock_mhz;
    wl_core_result at, opt, max;
} cmp_row;

static const char *const hdr[] = {
    "gpu", "workload", "batch", "seq", "dtype", "attention", "sm_clock_mhz",
    "effective_clock_mhz", "time_ms", "power_w", "energy_j", "opt_clock_mhz",
    "opt_effective_clock_mhz", "opt_time_ms", "opt_power_w", "opt_energy_j", "max_clock_mhz",
    "max_time_ms", "max_energy_j", "opt_saving_pct", "opt_slowdown_pct", "coefficients"};
#define NH (sizeof hdr / sizeof *hdr)

static double saving_pct(const cmp_row *r) { return 100.0 * (1.0 - r->opt.energy_j / r->max.energy_j); }
static double slowdown_pct(const cmp_row *r) { return 100.0 * (r->opt.time_ms / r->max.time_ms - 1.0); }

/* Scans the GPU's clock grid; the optimum is wl_pareto_choose's "energy"
 * objective (ties go to the faster point). */
static int eval_gpu(const wl_core_gpu *g, const wl_core_workload *wl, double clock,
                    const wl_pareto_objective *energy, cmp_row *row, wl_error *err)
{
    wl_core_evaluator *ev = NULL;
    int rc = wl_core_evaluator_create(g, wl, wl_core_latency_lookup("tiled"), &ev);
    if (rc) {
        wl_error_set(err, g->id, 0, "gpu", "cannot evaluate on this GPU: %s", wl_core_strerror(rc));
        return rc;
    }
    snprintf(row->gpu, sizeof row->gpu, "%s", g->id);
    snprintf(row->source, sizeof row->source, "%s", g->coef_source[0] ? g->coef_source : "own");
    row->clock_mhz = clock > 0 ? clock : g->sm_clock_max_mhz;
    wl_core_op op = {row->clock_mhz, 0, 0, 0};
    rc = wl_core_evaluator_run(ev, &op, &row->at);
    op.sm_clock_mhz = g->sm_clock_max_mhz;
    if (!rc)
        rc = wl_core_evaluator_run(ev, &op, &row->max);
    size_t n = (size_t)floor((g->sm_clock_max_mhz - g->sm_clock_min_mhz) / g->sm_clock_step_mhz + 1e-9) + 1;
    double *tpe = malloc(3 * n * sizeof *tpe);
    if (!rc && !tpe)
        rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        wl_core_result r;
        op.sm_clock_mhz = g->sm_clock_min_mhz + (double)i * g->sm_clock_step_mhz;
        rc = wl_core_evaluator_run(ev, &op, &r);
        tpe[i] = r.time_ms;
        tpe[n + i] = r.power_w;
        tpe[2 * n + i] = r.energy_j;
    }
    if (!rc) {
        long best = wl_pareto_choose(energy, tpe, tpe + n, tpe + 2 * n, n);
        op.sm_clock_mhz = g->sm_clock_min_mhz + (double)(best < 0 ? 0 : best) * g->sm_clock_step_mhz;
        rc = wl_core_evaluator_run(ev, &op, &row->opt);
    }
    if (rc)
        wl_error_set(err, g->id, 0, "gpu", "evaluation failed: %s", wl_core_strerror(rc));
    free(tpe);
    wl_core_evaluator_free(ev);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    const char *cmd = "compare";
    const char *gpus = NULL, *model = "gpt2", *trace = NULL, *format = "table", *out = "-";
    long long batch = 1, seq = 128;
    wl_dtype dtype = WL_DT_BF16;
    wl_attention attn = WL_ATTN_EAGER;
    double clock = 0;
    const char *idle_specs[16];
    int nidle = 0;
    static const struct option lo[] = {
        {"idle", required_argument, 0, 'i'},
        {"gpu", required_argument, 0, 'g'},   {"model", required_argument, 0, 'm'},
        {"trace", required_argument, 0, 't'}, {"batch", required_argument, 0, 'b'},
        {"seq", required_argument, 0, 's'},   {"dtype", required_argument, 0, 'd'},
        {"mode", required_argument, 0, 'M'},  {"attention", required_argument, 0, 'a'},
        {"clock", required_argument, 0, 'c'}, {"format", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'g': gpus = optarg; break;
        case 'm': model = optarg; break;
        case 't': trace = optarg; break;
        case 'i':
            if (nidle == 16)
                return usage_error(cmd, "--idle: at most 16 tables");
            idle_specs[nidle++] = optarg;
            break;
        case 'b':
            if (parse_int_arg(cmd, "--batch", optarg, 1, 1000000, &batch)) return EXIT_USAGE;
            break;
        case 's':
            if (parse_int_arg(cmd, "--seq", optarg, 1, 10000000, &seq)) return EXIT_USAGE;
            break;
        case 'd':
            if (wl_dtype_parse(optarg, &dtype) ||
                (dtype != WL_DT_BF16 && dtype != WL_DT_FP16 && dtype != WL_DT_FP32 && dtype != WL_DT_TF32))
                return usage_error(cmd, "--dtype: expected bf16, fp16, fp32 or tf32, got '%s'", optarg);
            break;
        case 'M':
            if (strcmp(optarg, "prefill") != 0)
                return usage_error(cmd, "--mode: only 'prefill' is supported, got '%s'", optarg);
            break;
        case 'a':
            if (wl_attention_parse(optarg, &attn))
                return usage_error(cmd, "--attention: expected eager or flash, got '%s'", optarg);
            break;
        case 'c':
            if (parse_double_arg(cmd, "--clock", optarg, &clock)) return EXIT_USAGE;
            if (!(clock > 0)) return usage_error(cmd, "--clock must be positive");
            break;
        case 'f':
            if (strcmp(optarg, "table") && strcmp(optarg, "csv") && strcmp(optarg, "json"))
                return usage_error(cmd, "--format: expected table, csv or json, got '%s'", optarg);
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
    if (!gpus || !gpus[0])
        return usage_error(cmd, "--gpu LIST is required (e.g. --gpu a100-pcie-40gb,h100-sxm-80gb)");

    /* split the list */
    static char names[MAX_GPUS][256];
    int ng = 0;
    for (const char *p = gpus; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0 || len >= sizeof names[0])
            return usage_error(cmd, "--gpu: empty or too long entry in '%s'", gpus);
        if (ng >= MAX_GPUS)
            return usage_error(cmd, "--gpu: at most %d GPUs", MAX_GPUS);
        memcpy(names[ng], p, len);
        names[ng++][len] = 0;
        p = e ? e + 1 : p + len;
    }

    wl_error err = {0};
    static wl_core_gpu g[MAX_GPUS];
    for (int i = 0; i < ng; i++)
        if (wl_preset_gpu_load(names[i], &g[i], &err))
            return runtime_error(cmd, &err);
    const char *idle_used[MAX_GPUS];
    int irc = apply_idle_specs(cmd, g, (size_t)ng, idle_specs, (size_t)nidle, idle_used);
    if (irc)
        return irc;
    for (int i = 0; i < ng; i++) {
        if (clock > 0 && (clock < g[i].sm_clock_min_mhz - 1e-9 || clock > g[i].sm_clock_max_mhz + 1e-9))
            return usage_error(cmd, "--clock %.1f MHz is outside %s's range %.0f-%.0f MHz", clock,
                               g[i].id, g[i].sm_clock_min_mhz, g[i].sm_clock_max_mhz);
        if (g[i].tc_flop_per_clk_sm[dtype] <= 0 && g[i].cuda_flop_per_clk_sm[dtype] <= 0)
            return usage_error(cmd, "%s has no %s support; choose another --dtype", g[i].id,
                               wl_dtype_name(dtype));
    }
    wl_core_workload *wl = NULL;
    int rc;
    if (trace) {
        rc = wl_core_trace_load(trace, &wl, &err);
    } else {
        wl_core_model m;
        rc = wl_preset_model_load(model, &m, &err);
        if (!rc) {
            wl_core_shape sh = {batch, seq, dtype, attn};
            rc = wl_core_build(&m, &sh, &wl, &err);
            if (wl_core_model_is_vision(&m))
                seq = 0;
        }
    }
    if (rc)
        return runtime_error(cmd, &err);
    static cmp_row rows[MAX_GPUS];
    wl_pareto_objective energy;
    if (wl_pareto_objective_parse("energy", &energy, &err)) {
        wl_core_workload_free(wl);
        return runtime_error(cmd, &err);
    }
    for (int i = 0; i < ng; i++)
        if ((rc = eval_gpu(&g[i], wl, clock, &energy, &rows[i], &err))) {
            wl_core_workload_free(wl);
            return runtime_error(cmd, &err);
        }
    const char *wname = wl_core_workload_name(wl);

    wl_results_out *o = NULL;
    rc = wl_results_out_open(out, &o, &err);
    if (rc) {
        wl_core_workload_free(wl);
        return runtime_error(cmd, &err);
    }
    FILE *f = wl_results_out_stream(o);
    if (strcmp(format, "csv") == 0) {
        for (size_t k = 0; k < NH; k++)
            fprintf(f, "%s%s", hdr[k], k + 1 < NH ? "," : "\n");
        for (int i = 0; i < ng; i++) {
            const cmp_row *r = &rows[i];
            char sq[24] = "";
            if (!trace && seq > 0)
                snprintf(sq, sizeof sq, "%lld", seq);
            fprintf(f, "%s,%s,%lld,%s,%s,%s,%.1f,%.1f,%.5f,%.2f,%.6f,%.1f,%.1f,%.5f,%.2f,%.6f,"
                       "%.1f,%.5f,%.6f,%.2f,%.2f,%s\n",
                    r->gpu, wname, batch, sq, wl_dtype_name(dtype), wl_attention_name(attn),
                    r->clock_mhz, r->at.effective_clock_mhz, r->at.time_ms, r->at.power_w,
                    r->at.energy_j, r->opt.requested_clock_mhz, r->opt.effective_clock_mhz,
                    r->opt.time_ms, r->opt.power_w, r->opt.energy_j, r->max.requested_clock_mhz,
                    r->max.time_ms, r->max.energy_j, saving_pct(r), slowdown_pct(r), r->source);
        }
    } else if (strcmp(format, "json") == 0) {
        fprintf(f, "[\n");
        for (int i = 0; i < ng; i++) {
            const cmp_row *r = &rows[i];
            fprintf(f, "  {\"gpu\": \"%s\", \"workload\": \"%s\", \"sm_clock_mhz\": %.1f, "
                       "\"effective_clock_mhz\": %.1f, \"time_ms\": %.5f, \"power_w\": %.2f, "
                       "\"energy_j\": %.6f, \"opt_clock_mhz\": %.1f, \"opt_time_ms\": %.5f, "
                       "\"opt_energy_j\": %.6f, \"max_energy_j\": %.6f, \"opt_saving_pct\": %.2f, "
                       "\"opt_slowdown_pct\": %.2f, \"coefficients\": \"%s\"}%s\n",
                    r->gpu, wname, r->clock_mhz, r->at.effective_clock_mhz, r->at.time_ms,
                    r->at.power_w, r->at.energy_j, r->opt.requested_clock_mhz, r->opt.time_ms,
                    r->opt.energy_j, r->max.energy_j, saving_pct(r), slowdown_pct(r), r->source,
                    i + 1 < ng ? "," : "");
        }
        fprintf(f, "]\n");
    } else {
        fprintf(f, "# workload %s (%zu kernels), %s, %s attention\n", wname,
                wl_core_workload_count(wl), wl_dtype_name(dtype), wl_attention_name(attn));
        fprintf(f, "%-16s %9s %9s %10s %8s %10s | %9s %10s %10s | %10s %8s %8s\n", "gpu",
                "clock_mhz", "eff_mhz", "time_ms", "power_w", "energy_j", "opt_mhz", "opt_time_ms",
                "opt_j", "max_clk_j", "saving%", "slower%");
        int any_transfer = 0;
        for (int i = 0; i < ng; i++) {
            const cmp_row *r = &rows[i];
            int tr = strcmp(r->source, "own") != 0;
            any_transfer |= tr;
            fprintf(f, "%-15s%s %9.0f %9.1f %10.3f %8.1f %10.4f | %9.0f %10.3f %10.4f | %10.4f %8.1f %8.1f\n",
                    r->gpu, tr ? "+" : " ", r->clock_mhz, r->at.effective_clock_mhz, r->at.time_ms,
                    r->at.power_w, r->at.energy_j, r->opt.requested_clock_mhz, r->opt.time_ms,
                    r->opt.energy_j, r->max.energy_j, saving_pct(r), slowdown_pct(r));
        }
        if (any_transfer)
            fprintf(f, "+ coefficients transferred from a calibrated GPU (no measurements)\n");
    }
    wl_core_workload_free(wl);
    rc = wl_results_out_commit(o, &err);
    return rc ? runtime_error(cmd, &err) : 0;
}
