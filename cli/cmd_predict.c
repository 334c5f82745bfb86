/* wattlas predict */
#include "cli.h"
#include "../calib/wattlas_calib.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLOCKS 4096

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas predict [options]\n\n"
"Predicts time, average board power and energy of one prefill forward pass.\n\n"
"  --gpu ID|FILE.ini       GPU preset (default a100-pcie-40gb)\n"
"  --model ID|FILE.ini     model preset (default gpt2)\n"
"  --trace FILE.json       use a kernel trace instead of --model (with --dtype fp32,\n"
"                          a bf16/fp16 trace is retyped as eager PyTorch runs fp32)\n"
"  --idle TABLE.csv        measured idle table (sm_clock_mhz,voltage_mv,idle_power_w;\n"
"                          voltage may be empty) instead of the preset's idle curve\n"
"  --batch N               sequences per pass (default 1)\n"
"  --seq N                 tokens per sequence (default 128)\n"
"  --dtype bf16|fp16|fp32|tf32   precision (default bf16)\n"
"  --mode prefill          the only mode built natively\n"
"  --attention eager|flash attention implementation (default eager)\n"
"  --clock MHZ|LIST|MIN:MAX:STEP  requested SM clock(s) (default: the GPU's maximum)\n"
"  --voltage-mv MV         fixed core voltage instead of the V-f curve\n"
"  --voltage-offset-mv MV  shift of the V-f curve\n"
"  --scope model|layer     whole forward pass or one transformer layer\n"
"  --latency tiled|roofline  kernel latency model (default tiled)\n"
"  --no-power-limit        report the unthrottled point\n"
"  --format table|csv|json output format (default table)\n"
"  --interval LEVEL        prediction interval at LEVEL (0.95 or 95) from the\n"
"                          preset's coefficient covariance and residual spread\n"
"  --kernels               add a per-kernel-class breakdown: launches, busy time,\n"
"                          dynamic energy (kernels only), TFLOP, DRAM traffic\n"
"  -o FILE                 write to FILE (atomically) instead of stdout\n"
"  --help                  this text\n\n"
"Energy parts: dyn_compute (SM pipes, tensor cores, shared memory, clocks of\n"
"active SMs), dyn_memory (L2 and DRAM), static (idle power at the clock plus\n"
"temperature-dependent leakage). Time includes host launch gaps.\n");
}

typedef struct {
    const char *gpu_id, *model_id, *trace, *format, *out;
    long long batch, seq;
    wl_dtype dtype;
    wl_attention attention;
    int kernels, layer_scope;
    double level;           /* prediction-interval level, 0 = none */
    const wl_calib_iv *iv;  /* one per clock when level > 0 */
} popts;

static const char *const iv_hdr[] = {"time_lo_ms", "time_hi_ms", "power_lo_w", "power_hi_w",
                                     "energy_lo_j", "energy_hi_j"};

static void iv_values(const wl_calib_iv *iv, double *v)
{
    v[0] = iv->time_lo_ms;
    v[1] = iv->time_hi_ms;
    v[2] = iv->power_lo_w;
    v[3] = iv->power_hi_w;
    v[4] = iv->energy_lo_j;
    v[5] = iv->energy_hi_j;
}
static const int iv_decimals[] = {4, 4, 2, 2, 5, 5};

static const char *const hdr[] = {
    "gpu", "workload", "batch", "seq", "dtype", "attention", "sm_clock_mhz",
    "effective_clock_mhz", "voltage_mv", "throttled", "time_ms", "power_w", "energy_j",
    "energy_dyn_compute_j", "energy_dyn_memory_j", "energy_static_j", "launch_bound_pct"};
#define NH (sizeof hdr / sizeof *hdr)

static void row_values(const wl_core_result *r, double *v)
{
    v[0] = r->requested_clock_mhz;
    v[1] = r->effective_clock_mhz;
    v[2] = r->voltage_mv;
    v[3] = r->throttled;
    v[4] = r->time_ms;
    v[5] = r->power_w;
    v[6] = r->energy_j;
    v[7] = r->energy_dyn_compute_j;
    v[8] = r->energy_dyn_memory_j;
    v[9] = r->energy_static_j;
    v[10] = 100.0 * r->launch_bound_frac;
}

static const int decimals[] = {1, 1, 1, 0, 4, 2, 5, 5, 5, 5, 1};

/* One CSV table. With --kernels it is in long form: each clock's row is
 * followed by one row per kernel class (the totals row has class "all"). */
static void csv_row_prefix(FILE *f, const popts *o, const char *gpu, const char *wl,
                           const wl_core_result *r, int i)
{
    double v[11];
    row_values(r, v);
    wl_results_csv_str(f, gpu);
    fputc(',', f);
    wl_results_csv_str(f, wl);
    fprintf(f, ",%lld,", o->batch);
    if (o->seq > 0) /* empty for vision models, as in the measurement files */
        fprintf(f, "%lld", o->seq);
    fprintf(f, ",%s,%s", wl_dtype_name(o->dtype), wl_attention_name(o->attention));
    for (int j = 0; j < 11; j++) {
        fputc(',', f);
        wl_results_num(f, v[j], decimals[j]);
    }
    if (o->level > 0) {
        double w[6];
        iv_values(&o->iv[i], w);
        for (int j = 0; j < 6; j++) {
            fputc(',', f);
            wl_results_num(f, w[j], iv_decimals[j]);
        }
    }
}

static void write_csv(FILE *f, const popts *o, const char *gpu, const char *wl,
                      const wl_core_result *res, int n)
{
    for (size_t i = 0; i < NH; i++)
        fprintf(f, "%s%s", i ? "," : "", hdr[i]);
    for (size_t i = 0; o->level > 0 && i < 6; i++)
        fprintf(f, ",%s", iv_hdr[i]);
    if (o->kernels)
        fprintf(f, ",kernel_class,launches,busy_ms,dyn_energy_j,tflop,dram_gb");
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        csv_row_prefix(f, o, gpu, wl, &res[i], i);
        if (o->kernels) {
            wl_core_class_stats t = {0};
            for (int c = 0; c < WL_CLASS_COUNT; c++) {
                t.launches += res[i].cls[c].launches;
                t.busy_ms += res[i].cls[c].busy_ms;
                t.flops += res[i].cls[c].flops;
                t.dram_bytes += res[i].cls[c].dram_bytes;
                t.energy_j += res[i].cls[c].energy_j;
            }
            fprintf(f, ",all,%lld,%.4f,%.5f,%.4f,%.4f", t.launches, t.busy_ms, t.energy_j,
                    t.flops * 1e-12, t.dram_bytes * 1e-9);
        }
        fputc('\n', f);
        for (int c = 0; o->kernels && c < WL_CLASS_COUNT; c++) {
            const wl_core_class_stats *s = &res[i].cls[c];
            if (!s->launches)
                continue;
            csv_row_prefix(f, o, gpu, wl, &res[i], i);
            fprintf(f, ",%s,%lld,%.4f,%.5f,%.4f,%.4f\n", wl_core_class_name(c), s->launches,
                    s->busy_ms, s->energy_j, s->flops * 1e-12, s->dram_bytes * 1e-9);
        }
    }
}

static void write_json(FILE *f, const popts *o, const char *gpu, const char *wl,
                       const wl_core_result *res, int n)
{
    fprintf(f, "[\n");
    for (int i = 0; i < n; i++) {
        double v[11];
        row_values(&res[i], v);
        fprintf(f, "  {\"gpu\": ");
        wl_results_json_str(f, gpu);
        fprintf(f, ", \"workload\": ");
        wl_results_json_str(f, wl);
        fprintf(f, ", \"batch\": %lld, \"seq\": ", o->batch);
        if (o->seq > 0)
            fprintf(f, "%lld", o->seq);
        else
            fputs("null", f);
        fprintf(f, ", \"dtype\": \"%s\", \"attention\": \"%s\"", wl_dtype_name(o->dtype),
                wl_attention_name(o->attention));
        for (int j = 0; j < 11; j++) {
            fprintf(f, ", \"%s\": ", hdr[6 + j]);
            if (j == 3)
                fprintf(f, "%s", res[i].throttled ? "true" : "false");
            else
                wl_results_num(f, v[j], decimals[j] + 2);
        }
        if (o->level > 0) {
            double w[6];
            iv_values(&o->iv[i], w);
            fprintf(f, ", \"interval_level\": %.4g", o->level);
            for (int j = 0; j < 6; j++) {
                fprintf(f, ", \"%s\": ", iv_hdr[j]);
                wl_results_num(f, w[j], iv_decimals[j] + 2);
            }
        }
        if (o->kernels) {
            fprintf(f, ",\n   \"kernels\": [");
            int first = 1;
            for (int c = 0; c < WL_CLASS_COUNT; c++) {
                const wl_core_class_stats *s = &res[i].cls[c];
                if (!s->launches)
                    continue;
                fprintf(f, "%s\n     {\"kernel_class\": \"%s\", \"launches\": %lld, "
                           "\"busy_ms\": %.6f, \"dyn_energy_j\": %.7f, \"tflop\": %.6f, "
                           "\"dram_gb\": %.6f}",
                        first ? "" : ",", wl_core_class_name(c), s->launches, s->busy_ms,
                        s->energy_j, s->flops * 1e-12, s->dram_bytes * 1e-9);
                first = 0;
            }
            fprintf(f, "]");
        }
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]\n");
}

static void write_table(FILE *f, const popts *o, const char *gpu, const char *wl,
                        const wl_core_result *res, int n, size_t nk)
{
    char seq[32] = "";
    if (o->seq > 0)
        snprintf(seq, sizeof seq, ", seq %lld", o->seq);
    fprintf(f, "# gpu %s, workload %s (%zu kernels), batch %lld%s, %s, %s attention\n", gpu, wl,
            nk, o->batch, seq, wl_dtype_name(o->dtype), wl_attention_name(o->attention));
    fprintf(f, "%12s %12s %10s %10s %9s %10s %12s %12s %12s %7s\n", "sm_clock_mhz",
            "eff_clock_mhz", "voltage_mv", "time_ms", "power_w", "energy_j", "dyn_comp_j",
            "dyn_mem_j", "static_j", "launch%");
    for (int i = 0; i < n; i++) {
        const wl_core_result *r = &res[i];
        fprintf(f, "%12.0f %12.1f%s %10.1f %10.3f %9.1f %10.4f %12.4f %12.4f %12.4f %7.1f\n",
                r->requested_clock_mhz, r->effective_clock_mhz, r->throttled ? "*" : " ",
                r->voltage_mv, r->time_ms, r->power_w, r->energy_j, r->energy_dyn_compute_j,
                r->energy_dyn_memory_j, r->energy_static_j, 100.0 * r->launch_bound_frac);
        if (o->level > 0) {
            const wl_calib_iv *v = &o->iv[i];
            fprintf(f, "%26s %.0f%% interval: time %.3f-%.3f ms, power %.1f-%.1f W, "
                       "energy %.4f-%.4f J\n", "", 100 * o->level, v->time_lo_ms, v->time_hi_ms,
                    v->power_lo_w, v->power_hi_w, v->energy_lo_j, v->energy_hi_j);
        }
        if (o->kernels) {
            for (int c = 0; c < WL_CLASS_COUNT; c++) {
                const wl_core_class_stats *s = &r->cls[c];
                if (!s->launches)
                    continue;
                fprintf(f, "    %-16s %6lld launches %10.3f ms busy %10.4f J dyn %9.3f TFLOP %9.3f GB DRAM\n",
                        wl_core_class_name(c), s->launches, s->busy_ms, s->energy_j,
                        s->flops * 1e-12, s->dram_bytes * 1e-9);
            }
        }
    }
    int any = 0, best = 0;
    for (int i = 0; i < n; i++) {
        any |= res[i].throttled;
        if (res[i].energy_j < res[best].energy_j)
            best = i;
    }
    if (any)
        fprintf(f, "* power-limited: the GPU throttles below the requested clock\n");
    if (n > 1)
        fprintf(f, "energy-optimal requested clock: %.0f MHz (%.4f J, %.3f ms)\n",
                res[best].requested_clock_mhz, res[best].energy_j, res[best].time_ms);
}

int cmd_predict(int argc, char **argv)
{
    const char *cmd = "predict";
    popts o = {"a100-pcie-40gb", "gpt2", NULL, "table", "-", 1, 128, WL_DT_BF16, WL_ATTN_EAGER,
               0, 0, 0, NULL};
    const char *clock = NULL, *latency = "tiled";
    double v_mv = 0, v_off = 0;
    int no_limit = 0, dtype_given = 0;
    const char *idle = NULL;
    static const struct option lo[] = {
        {"idle", required_argument, 0, 'i'},
        {"gpu", required_argument, 0, 'g'},   {"model", required_argument, 0, 'm'},
        {"trace", required_argument, 0, 't'}, {"batch", required_argument, 0, 'b'},
        {"seq", required_argument, 0, 's'},   {"dtype", required_argument, 0, 'd'},
        {"mode", required_argument, 0, 'M'},  {"attention", required_argument, 0, 'a'},
        {"clock", required_argument, 0, 'c'}, {"voltage-mv", required_argument, 0, 'V'},
        {"voltage-offset-mv", required_argument, 0, 'O'},
        {"scope", required_argument, 0, 'S'}, {"latency", required_argument, 0, 'L'},
        {"no-power-limit", no_argument, 0, 'N'}, {"format", required_argument, 0, 'f'},
        {"kernels", no_argument, 0, 'k'},     {"help", no_argument, 0, 'h'},
        {"interval", required_argument, 0, 'I'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'g': o.gpu_id = optarg; break;
        case 'm': o.model_id = optarg; break;
        case 't': o.trace = optarg; break;
        case 'b':
            if (parse_int_arg(cmd, "--batch", optarg, 1, 1000000, &o.batch)) return EXIT_USAGE;
            break;
        case 's':
            if (parse_int_arg(cmd, "--seq", optarg, 1, 10000000, &o.seq)) return EXIT_USAGE;
            break;
        case 'i': idle = optarg; break;
        case 'd':
            dtype_given = 1;
            if (wl_dtype_parse(optarg, &o.dtype) ||
                (o.dtype != WL_DT_BF16 && o.dtype != WL_DT_FP16 && o.dtype != WL_DT_FP32 &&
                 o.dtype != WL_DT_TF32))
                return usage_error(cmd, "--dtype: expected bf16, fp16, fp32 or tf32, got '%s'", optarg);
            break;
        case 'M':
            if (strcmp(optarg, "prefill") != 0)
                return usage_error(cmd, "--mode: only 'prefill' is supported, got '%s'", optarg);
            break;
        case 'a':
            if (wl_attention_parse(optarg, &o.attention))
                return usage_error(cmd, "--attention: expected eager or flash, got '%s'", optarg);
            break;
        case 'c': clock = optarg; break;
        case 'V':
            if (parse_double_arg(cmd, "--voltage-mv", optarg, &v_mv)) return EXIT_USAGE;
            if (!(v_mv > 0)) return usage_error(cmd, "--voltage-mv must be positive");
            break;
        case 'O':
            if (parse_double_arg(cmd, "--voltage-offset-mv", optarg, &v_off)) return EXIT_USAGE;
            break;
        case 'S':
            if (strcmp(optarg, "model") == 0) o.layer_scope = 0;
            else if (strcmp(optarg, "layer") == 0) o.layer_scope = 1;
            else return usage_error(cmd, "--scope: expected model or layer, got '%s'", optarg);
            break;
        case 'L':
            if (!wl_core_latency_lookup(optarg))
                return usage_error(cmd, "--latency: expected tiled or roofline, got '%s'", optarg);
            latency = optarg;
            break;
        case 'N': no_limit = 1; break;
        case 'f':
            if (strcmp(optarg, "table") && strcmp(optarg, "csv") && strcmp(optarg, "json"))
                return usage_error(cmd, "--format: expected table, csv or json, got '%s'", optarg);
            o.format = optarg;
            break;
        case 'k': o.kernels = 1; break;
        case 'I':
            if (parse_level_arg(cmd, "--interval", optarg, &o.level))
                return EXIT_USAGE;
            break;
        case 'o': o.out = optarg; break;
        case 'h': help(stdout); return 0;
        case ':': return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        default: return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (o.trace && o.layer_scope)
        return usage_error(cmd, "--scope layer needs --model, not --trace");

    wl_error err = {0};
    wl_core_gpu gpu;
    if (wl_preset_gpu_load(o.gpu_id, &gpu, &err))
        return runtime_error(cmd, &err);
    if (idle && apply_idle_table(cmd, &gpu, idle))
        return EXIT_RUNTIME;
    static double clocks[MAX_CLOCKS];
    int nclk = 1;
    clocks[0] = gpu.sm_clock_max_mhz;
    if (clock && parse_clock_list(cmd, clock, clocks, MAX_CLOCKS, &nclk))
        return EXIT_USAGE;
    for (int i = 0; i < nclk && v_mv <= 0; i++)
        if (clocks[i] < gpu.sm_clock_min_mhz - 1e-9 || clocks[i] > gpu.sm_clock_max_mhz + 1e-9)
            return usage_error(cmd, "--clock %.1f MHz is outside %s's range %.0f-%.0f MHz "
                               "(its V-f curve is not defined there; give --voltage-mv to force)",
                               clocks[i], gpu.id, gpu.sm_clock_min_mhz, gpu.sm_clock_max_mhz);

    wl_core_workload *wl = NULL;
    int rc;
    if (o.trace) {
        rc = wl_core_trace_load(o.trace, &wl, &err);
        if (!rc && dtype_given && o.dtype == WL_DT_FP32) {
            wl_core_workload *f32 = NULL;
            rc = wl_core_workload_retype(wl, WL_DT_FP32, &f32, &err);
            wl_core_workload_free(wl);
            wl = f32;
        }
    } else {
        wl_core_model m;
        rc = wl_preset_model_load(o.model_id, &m, &err);
        if (!rc) {
            wl_core_shape sh = {o.batch, o.seq, o.dtype, o.attention};
            rc = o.layer_scope ? wl_core_build_layer(&m, &sh, &wl, &err)
                               : wl_core_build(&m, &sh, &wl, &err);
            if (wl_core_model_is_vision(&m))
                o.seq = 0; /* images: --seq does not apply */
        }
    }
    if (rc)
        return runtime_error(cmd, &err);

    wl_core_evaluator *ev = NULL;
    wl_core_result *res = calloc((size_t)nclk, sizeof *res);
    if (!res || wl_core_evaluator_create(&gpu, wl, wl_core_latency_lookup(latency), &ev)) {
        free(res);
        wl_core_workload_free(wl);
        fprintf(stderr, "wattlas predict: out of memory\n");
        return EXIT_RUNTIME;
    }
    for (int i = 0; i < nclk; i++) {
        wl_core_op op = {clocks[i], v_mv, v_off, no_limit};
        if (wl_core_evaluator_run(ev, &op, &res[i])) {
            fprintf(stderr, "wattlas predict: cannot evaluate at %.1f MHz (voltage %.1f mV)\n",
                    clocks[i], v_mv > 0 ? v_mv : wl_core_gpu_voltage_mv(&gpu, clocks[i]) + v_off);
            wl_core_evaluator_free(ev);
            wl_core_workload_free(wl);
            free(res);
            return EXIT_RUNTIME;
        }
    }
    wl_calib_iv *ivs = NULL;
    if (o.level > 0) {
        wl_calib_uncertainty unc;
        ivs = calloc((size_t)nclk, sizeof *ivs);
        rc = ivs ? wl_calib_uncertainty_load(o.gpu_id, &unc, &err) : WL_ENOMEM;
        for (int i = 0; !rc && i < nclk; i++) {
            wl_core_op op = {clocks[i], v_mv, v_off, no_limit};
            rc = wl_calib_interval(ev, &gpu, &unc, &op, o.level, &res[i], &ivs[i]);
        }
        if (rc) {
            if (!err.text[0])
                wl_error_set(&err, o.gpu_id, 0, "interval", "cannot compute the interval");
            wl_core_evaluator_free(ev);
            wl_core_workload_free(wl);
            free(res);
            free(ivs);
            return runtime_error(cmd, &err);
        }
        o.iv = ivs;
    }
    wl_results_out *out = NULL;
    rc = wl_results_out_open(o.out, &out, &err);
    if (!rc) {
        FILE *f = wl_results_out_stream(out);
        const char *wname = wl_core_workload_name(wl);
        if (strcmp(o.format, "csv") == 0)
            write_csv(f, &o, gpu.id, wname, res, nclk);
        else if (strcmp(o.format, "json") == 0)
            write_json(f, &o, gpu.id, wname, res, nclk);
        else {
            write_table(f, &o, gpu.id, wname, res, nclk, wl_core_workload_count(wl));
            if (gpu.coef_source[0])
                fprintf(f, "# coefficients %s by the transfer rules (not measured)%s\n",
                        gpu.coef_source,
                        o.level > 0 ? "; the interval is the source's calibration uncertainty, "
                                      "without the transfer's own error" : "");
        }
        rc = wl_results_out_commit(out, &err);
    }
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
    free(res);
    free(ivs);
    return rc ? runtime_error(cmd, &err) : 0;
}
