/* wattlas predict: the smallest sweep (one GPU, one workload, some clocks),
 * with its columns and formats. */
#include "cli.h"
#include "../sweep/wattlas_sweep.h"
#include "../pareto/wattlas_pareto.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas predict [options]\n\n"
"Predicts time, average board power and energy of one prefill forward pass, a\n"
"training step or a generation.\n\n"
"  --gpu ID|FILE.ini       GPU preset (default a100-pcie-40gb)\n"
"  --model ID|FILE.ini     model preset or hub id (default gpt2)\n"
"  --trace FILE.json       a kernel trace instead of --model (with --dtype fp32, a\n"
"                          bf16/fp16 trace is retyped as eager PyTorch runs fp32), or a\n"
"                          PyTorch profiler trace (.json or .json.gz, named *_<MHz>mhz\n"
"                          or with \"wattlas\": {\"sm_clock_mhz\": N}): each kernel keeps\n"
"                          its measured time at that clock and moves with the clock by\n"
"                          the model; the host's gaps come from its timeline\n"
"  --host ID|FILE.ini      the host that issues the kernels (presets/hosts/; default:\n"
"                          the host class named by the GPU preset)\n"
"  --idle TABLE.csv        measured idle table (sm_clock_mhz,voltage_mv,idle_power_w;\n"
"                          voltage may be empty) instead of the preset's idle curve\n"
"  --batch N               sequences (or images) per pass (default 1)\n"
"  --seq N                 tokens per sequence (default 128)\n"
"  --dtype bf16|fp16|fp32|tf32|fp8  precision (default bf16; fp8 is an\n"
"                                8-bit checkpoint's W8A8 inference)\n"
CLI_MODE_HELP
"  --attention eager|flash attention implementation (default eager)\n"
"  --clock LIST            requested SM clocks in MHz: a value, a list, MIN:MAX:STEP\n"
"                          (default: the GPU's maximum)\n"
"  --voltage-mv MV         a fixed core voltage instead of the V-f curve (then any\n"
"                          clock may be asked for)\n"
"  --voltage-offset-mv LIST  shifts of the V-f curve\n"
"  --scope model|layer|layer-in-model  whole forward pass, or one transformer\n"
"                          layer called on its own, block(x), as a layer is measured\n"
"                          (no attention mask, no KV cache from a model around it;\n"
"                          decoder: the same as layer), or the layer as it runs\n"
"                          inside the model's forward (its 4-D mask add and cache\n"
"                          concatenations included)\n"
"  --latency tiled|roofline  kernel latency model (default tiled)\n"
"  --power-limit-w LIST    board power limits in W, as nvidia-smi -pl sets (a list\n"
"                          gives a row per value; the same as --set power_limit_w=)\n"
"  --set KEY=VALUE         a numeric GPU preset key, e.g. --set sms=264\n"
"  --no-power-limit        report the unthrottled point\n"
"  --kernels               a row per kernel class: launches, busy time, dynamic and\n"
"                          total energy, TFLOP, DRAM traffic\n"
"  --learned MODEL.json    apply a model from 'wattlas learn' (a hybrid corrects\n"
"                          the prediction inside its training domain)\n"
"  --interval LEVEL        prediction interval at LEVEL (0.95 or 95) from the\n"
"                          preset's coefficient covariance and residual spread,\n"
"                          plus the spread between boards and hosts of one\n"
"                          product (power at a clock, the controller's setpoint,\n"
"                          the host's cost per kernel)\n"
"  --board same|other      same: the preset was calibrated on this very board\n"
"                          (no spread between boards in the interval); other\n"
"                          (default): any board of the product\n"
"  --format table|csv|ndjson|json  output format (default: -o FILE's extension,\n"
"                          .csv, .ndjson or .json, else table)\n"
"  -o FILE                 write to FILE (atomically) instead of stdout\n"
"  --quiet                 no notes on stderr (warnings stay)\n\n"
"Columns are those of 'wattlas sweep'. Energy parts: energy_dyn_compute_j (SM\n"
"pipes, tensor cores, shared memory, clocks of active SMs), energy_dyn_memory_j\n"
"(L2 and DRAM), energy_static_j (idle power at the clock plus temperature-\n"
"dependent leakage). Time includes host launch gaps; launch_bound_pct is the\n"
"share of it the GPU waits on the host.\n");
}

typedef struct {
    wl_sweep_spec *spec;
    wl_results_format format;
    const char *out;
    int clock_given, interval, quiet;
} predict_opts;

static const cli_axis axis_opts[] = {
    {"gpu", "gpu"},     {"model", "model"},   {"trace", "trace"},     {"batch", "batch"},
    {"seq", "seq"},     {"dtype", "dtype"},   {"attention", "attention"}, {"clock", "clock"},
    {"voltage-mv", "voltage_mv"}, {"voltage-offset-mv", "voltage_offset_mv"},
    {"scope", "scope"}, {"latency", "latency"}, {"learned", "learned"}, {"idle", "idle"},      {"interval", "interval"},
    {"board", "board"},
    {"host", "host"},   {"set", "set"}, {"power-limit-w", "power_limit_w"},
    CLI_MODE_AXES,
};
#define NAXIS (sizeof axis_opts / sizeof *axis_opts)

static int predict_parse(int argc, char **argv, predict_opts *o)
{
    const char *cmd = "predict";
    enum { O_NOLIMIT = 256, O_KERNELS, O_FORMAT, O_QUIET, O_HELP };
    struct option lo[NAXIS + 6];
    size_t n = 0;
    cli_axis_options(axis_opts, NAXIS, lo, &n);
    lo[n++] = (struct option){"no-power-limit", no_argument, 0, O_NOLIMIT};
    lo[n++] = (struct option){"kernels", no_argument, 0, O_KERNELS};
    lo[n++] = (struct option){"format", required_argument, 0, O_FORMAT};
    lo[n++] = (struct option){"quiet", no_argument, 0, O_QUIET};
    lo[n++] = (struct option){"help", no_argument, 0, O_HELP};
    lo[n] = (struct option){0, 0, 0, 0};
    wl_error err = {0};
    optind = 1;
    opterr = 0;
    int c, rc = 0, ngpu = 0, nidle = 0;
    int fmt_given = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        const cli_axis *ax = cli_axis_of(axis_opts, NAXIS, c);
        if (ax) {
            const char *key = ax->key;
            if (!strcmp(key, "gpu") && (ngpu++ || strchr(optarg, ',')))
                return cli_usage(cmd, "--gpu: predict takes one GPU (see 'wattlas compare')");
            if (!strcmp(key, "idle") && nidle++)
                return cli_usage(cmd, "--idle: one table (one GPU)");
            if (!strcmp(key, "scope") && strcmp(optarg, "model") && strcmp(optarg, "layer") &&
                strcmp(optarg, "decoder") && strcmp(optarg, "layer-in-model"))
                return cli_usage(cmd, "--scope: expected model, layer (or decoder) or layer-in-model, "
                                      "got '%.60s'", optarg);
            o->clock_given |= !strcmp(key, "clock");
            o->interval |= !strcmp(key, "interval");
            rc = cli_axis_set(cmd, o->spec, ax, optarg);
            continue;
        }
        switch (c) {
        case O_NOLIMIT:
            if (wl_sweep_spec_set(o->spec, "power_limit", "off", "--no-power-limit", 0, &err))
                rc = cli_fail(cmd, &err);
            break;
        case O_KERNELS:
            if (wl_sweep_spec_set(o->spec, "classes", "on", "--kernels", 0, &err))
                rc = cli_fail(cmd, &err);
            break;
        case O_FORMAT:
            rc = cli_format(cmd, optarg, &o->format);
            fmt_given = 1;
            break;
        case O_QUIET: o->quiet = 1; break;
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
    if (!o->clock_given && wl_sweep_spec_set(o->spec, "clock", "max", "--clock", 0, &err))
        return cli_fail(cmd, &err);
    if (wl_sweep_spec_finish(o->spec, &err) || wl_sweep_spec_check_clocks(o->spec, "--clock", &err))
        return cli_fail(cmd, &err);
    return 0;
}

static int predict_run(const predict_opts *o)
{
    const char *cmd = "predict";
    wl_error err = {0};
    wl_results_out *out = NULL;
    const wl_core_workload *wl = NULL;
    wl_core_workload *owned = NULL;
    wl_sweep_shape_id id;
    int rc = wl_sweep_spec_workload(o->spec, &wl, &owned, &id, &err);
    if (rc)
        return cli_fail(cmd, &err);
    if (wl_results_out_open(o->out, &out, &err)) {
        wl_core_workload_free(owned);
        return cli_fail(cmd, &err);
    }
    FILE *f = wl_results_out_stream(out);
    const wl_core_gpu *g = wl_sweep_spec_gpu(o->spec, 0);
    if (o->format == WL_FMT_TABLE) {
        fprintf(f, "# gpu %s%s%s, %s (%zu kernels)", g->id, g->coef_source[0] ? ", coefficients " : "",
                g->coef_source, wl_core_workload_name(wl), wl_core_workload_launches(wl));
        if (!id.traced) {
            fprintf(f, ", batch %lld", id.batch);
            if (id.seq > 0)
                fprintf(f, ", seq %lld", id.seq);
        }
        fprintf(f, ", %s%s%s", wl_dtype_name(id.dtype), id.traced ? "" : ", attention ",
                id.traced ? "" : wl_attention_name(id.attention));
        if (!id.traced && id.shape.mode == WL_MODE_DECODE)
            fprintf(f, id.shape.launch == WL_LAUNCH_GRAPHS
                           ? ", decode as a continuous-batching server (launch graphs): ttft_ms "
                             "one arriving request's prefill"
                           : ", decode with static batching (launch eager): ttft_ms the batch's "
                             "prefill");
        fputc('\n', f);
    }
    cli_spec_notes(cmd, o->spec, o->quiet);
    /* coefficients that are not this GPU's own fit are said to be so */
    if (!o->quiet && g->coef_source[0] && strncmp(g->coef_source, "transferred", 11))
        fprintf(stderr, "wattlas predict: note: %s: coefficients %s\n", g->id, g->coef_source);
    /* a precision the GPU has no math for: the row is empty, and why is said */
    wl_error no_math = {0};
    if (wl_core_gpu_runs(g, wl, &no_math))
        fprintf(stderr, "wattlas predict: warning: %s cannot run this case: %s; its row is "
                "empty (feasible = 0)\n", g->id, no_math.text);
    /* a prediction for a case that cannot run is still made, but said so */
    if (id.fits == 0) {
        const wl_core_memory *m = &id.memory;
        char parts[400], has[48];
        wl_core_memory_parts_text(m, parts, sizeof parts);
        wl_results_gb_text(has, sizeof has, g->mem_capacity_gb);
        fprintf(stderr, "wattlas predict: warning: %s does not fit %s: it needs %.1f GB (%s), "
                "the GPU has %s\n", wl_core_workload_name(wl), g->id, m->total_gb, parts, has);
        const wl_core_shape *sh = &id.shape;
        if (!o->quiet && sh->mode == WL_MODE_DECODE && sh->launch == WL_LAUNCH_GRAPHS &&
            id.max_batch >= 0)
            fprintf(stderr, "wattlas predict: note: a serving engine's paged cache holds %lld "
                    "running sequences of this length there (--batch %lld); the others would "
                    "wait in its queue\n", id.max_batch, id.max_batch > 0 ? id.max_batch : 1);
    } else if (!o->quiet && id.fits < 0 && !id.traced) {
        fprintf(stderr, "wattlas predict: note: %s gives no mem_capacity_gb: whether %.1f GB fits "
                "is unknown\n", g->id, id.memory.total_gb);
    }
    wl_core_workload_free(owned);
    wl_sweep_options so = {.format = o->format, .threads = 1, .no_constants_line = 1};
    wl_sweep_stats st;
    rc = wl_sweep_run(o->spec, &so, f, NULL, &st, &err);
    if (rc) {
        wl_results_out_abort(out);
        return cli_fail(cmd, &err);
    }
    cli_learned_outside(cmd, o->spec, st.tally.learned_outside);
    if (o->format == WL_FMT_TABLE) {
        if (st.tally.throttled)
            fprintf(f, "# throttled = 1: power-limited, the GPU runs below the requested clock\n");
        if (st.points > 1 && !isnan(st.tally.best_energy_j)) {
            /* the optimum and its flat band, per case (a voltage is a case
             * of its own), from one reading of the same run: the footer
             * names rows of the table above */
            wl_results_table *tab = NULL;
            wl_pareto_set *set = NULL;
            wl_pareto_saving *sv = NULL;
            wl_pareto_objective obj;
            wl_sweep_stats st2;
            static const char *const vals[4] = {"time_ms", "power_w", "energy_j", "sm_clock_mhz"};
            wl_pareto_load_options lo = {.values = vals, .nvalues = 4, .collapse = 1,
                                         .voltage_groups = 1};
            int brc = wl_sweep_run_table(o->spec, &so, "predict", &tab, &st2, &err);
            if (!brc)
                brc = wl_pareto_objective_parse("energy", &obj, &err);
            if (!brc)
                brc = wl_pareto_set_from_table(tab, &lo, &set, &err);
            size_t ng = brc ? 0 : wl_pareto_set_groups(set);
            if (ng && (sv = calloc(ng, sizeof *sv)) && !wl_pareto_savings(set, &obj, sv))
                for (size_t gi = 0; gi < ng; gi++) {
                    if (sv[gi].chosen < 0)
                        continue;
                    const char *key = ng > 1 ? wl_pareto_set_group_key(set, gi) : "";
                    /* the chosen row's time, power, energy and clock */
                    const double *v = wl_pareto_set_values(set, (size_t)sv[gi].chosen);
                    char e[WL_RESULTS_NUM_MAX], t[WL_RESULTS_NUM_MAX], k[WL_RESULTS_NUM_MAX];
                    wl_results_fmt(k, sizeof k, v[3], 0);
                    wl_results_fmt(e, sizeof e, v[2], 6);
                    wl_results_fmt(t, sizeof t, v[0], 5);
                    fprintf(f, "# energy-optimal requested clock%s%s: %s MHz (%s J, %s ms)",
                            ng > 1 ? " for " : "", key, k, e, t);
                    if (isfinite(sv[gi].band_lo_mhz)) {
                        char a[WL_RESULTS_NUM_MAX], b[WL_RESULTS_NUM_MAX];
                        wl_results_fmt(a, sizeof a, sv[gi].band_lo_mhz, 0);
                        wl_results_fmt(b, sizeof b, sv[gi].band_hi_mhz, 0);
                        fprintf(f, "; within 1%% of it: %s-%s MHz", a, b);
                    }
                    fputc('\n', f);
                }
            free(sv);
            wl_pareto_set_free(set);
            wl_results_table_free(tab);
        }
        const wl_calib_uncertainty *un = o->interval ? wl_sweep_spec_uncertainty(o->spec, 0) : NULL;
        if (un && !(un->board.dyn_power_sd > 0 || un->board.setpoint_sd > 0 ||
                    un->board.host_sd > 0))
            fprintf(f, "# the interval is for the board the preset was calibrated on "
                       "(--board same)\n");
        else if (un)
            fprintf(f, "# the interval includes the spread between boards and hosts of one "
                       "product (sd of ln: power at a clock %.2f, the controller's setpoint "
                       "%.2f, the host's cost per kernel %.2f) and the fit's residual scatter "
                       "(time %.2f, power %.2f, energy %.2f), within what no board can pass "
                       "(the run at the top clock unheld, at the lowest clock); --board same "
                       "leaves the boards' spread out for a board of your own calibration\n",
                    un->board.dyn_power_sd, un->board.setpoint_sd, un->board.host_sd,
                    un->sigma_time, un->sigma_power, un->sigma_energy);
        if (!strncmp(g->coef_source, "transferred", 11))
            fprintf(f, "# coefficients %s by the transfer rules (not measured)%s%s%s\n",
                    g->coef_source, g->fit_info[0] ? "; " : "", g->fit_info,
                    o->interval ? "; the interval is the source's calibration uncertainty" : "");
        else if (g->coef_source[0])
            fprintf(f, "# coefficients: %s\n", g->coef_source);
        else if (g->fit_info[0])
            fprintf(f, "# coefficients %s\n", g->fit_info);
    }
    if (wl_results_out_commit(out, &err))
        return cli_fail(cmd, &err);
    return 0;
}

int cmd_predict(int argc, char **argv)
{
    predict_opts o = {.spec = wl_sweep_spec_create(), .format = WL_FMT_TABLE, .out = "-"};
    if (!o.spec) {
        fprintf(stderr, "wattlas predict: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = predict_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        rc = 0;
    else if (!rc)
        rc = predict_run(&o);
    wl_sweep_spec_free(o.spec);
    return rc;
}
