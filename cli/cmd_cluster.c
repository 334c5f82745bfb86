/* wattlas cluster: one parallel configuration of a model on a multi-GPU
 * system (options and printing; the model is in cluster/). */
#include "cli.h"
#include "../cluster/wattlas_cluster.h"
#include "../presets/wattlas_presets.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas cluster [options]\n\n"
"Time, energy and memory of one parallel configuration of a model on a\n"
"multi-GPU system: a training iteration (--mode train) or a prefill pass\n"
"(--mode prefill), from the simulated timeline of every pipeline stage.\n\n"
"  --system ID|FILE.ini    system preset (default dgx-a100-80gb; 'wattlas presets list')\n"
"  --nodes N               nodes of the system (default 1)\n"
"  --model ID|FILE.ini     model preset (default gpt3-1.3b)\n"
"  --mode train|prefill    (default train)\n"
"  --tp N --pp N --dp N    tensor, pipeline and data parallel sizes (dp default:\n"
"                          the GPUs over tp x pp)\n"
"  --vp N                  model chunks per GPU (interleaved schedule; default 1)\n"
"  --sequence-parallel     split norms and dropouts over the sequence\n"
"  --zero 0|1              1: optimizer state sharded over dp (default 0)\n"
"  --global-batch N        sequences per iteration (default micro x dp x 4 pp)\n"
"  --micro-batch N         sequences per micro-batch (default 1)\n"
"  --seq N                 tokens per sequence (default 2048)\n"
"  --recompute none|selective|full  activation recomputation (default none)\n"
"  --schedule gpipe|1f1b|interleaved|zb-h1  (default 1f1b, interleaved with --vp > 1)\n"
"  --dtype bf16|fp16|fp32  (default bf16)\n"
"  --attention eager|flash (default eager: Megatron's fused softmax)\n"
"  --launch eager|graphs   kernels issued one by one or replayed (default eager)\n"
"  --host ID|FILE.ini      the host that issues the kernels\n"
"  --clock MHZ             every GPU's SM clock (default the maximum)\n"
"  --set KEY=VALUE         a GPU key (power_limit_w=300: every GPU) or a system key\n"
"                          (nic_gbps=400); repeatable\n"
"  --no-dp-overlap         the gradient all-reduce after the backward, not during it\n"
"  --tokens N              also the time and energy to train N tokens\n"
"  --optimize energy       choose a clock per stage and phase (forward; backward and\n"
"                          optimizer) for the least energy within --max-slowdown-pct\n"
"                          of every GPU at its maximum clock; adds energy_saving_pct,\n"
"                          slowdown_pct, best_fixed_clock_mhz, saving_vs_fixed_pct\n"
"                          (with --stages: the plan per stage)\n"
"  --max-slowdown-pct X    the bound (default 1)\n"
"  --stages                a row per pipeline stage instead of the summary\n"
"  --timeline FILE.json    the simulated timeline as Chrome trace events (Perfetto)\n"
"  --format table|csv|ndjson|json   (default table)\n"
"  -o FILE                 write to FILE (atomically) instead of stdout\n\n"
"Columns: time_s per iteration; energy_j and power_w of the whole cluster (GPUs,\n"
"NICs, switches, the rest of the nodes); tflops_per_gpu (model FLOPs per GPU per\n"
"second), mfu; per GPU, mean over stages: bubble_s (idle in the pipeline),\n"
"tp/pp/dp_comm_exposed_s (collectives not hidden by compute); memory_gb of the\n"
"largest stage and fits.\n");
}

#define MAX_SET 64

typedef struct {
    const char *system, *model, *host, *timeline, *out;
    int nodes, stages;
    double clock;
    double tokens;
    int optimize;
    double max_slowdown_pct;
    wl_cluster_config cfg;
    int dp_given, gb_given;
    const char *set_key[MAX_SET];
    double set_val[MAX_SET];
    char set_buf[MAX_SET][64];
    size_t nset;
    wl_results_format format;
} cluster_opts;

static int set_opt(const char *cmd, cluster_opts *o, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof o->set_buf[0])
        return cli_usage(cmd, "--set: expected KEY=VALUE, got '%.60s'", arg);
    if (o->nset >= MAX_SET)
        return cli_usage(cmd, "--set: at most %d settings", MAX_SET);
    memcpy(o->set_buf[o->nset], arg, (size_t)(eq - arg));
    o->set_buf[o->nset][eq - arg] = 0;
    double v;
    int rc = cli_real(cmd, "--set", eq + 1, -1e300, 1e300, &v);
    if (rc)
        return rc;
    o->set_key[o->nset] = o->set_buf[o->nset];
    o->set_val[o->nset++] = v;
    return 0;
}

static int parse(int argc, char **argv, cluster_opts *o)
{
    const char *cmd = "cluster";
    enum {
        O_SYSTEM = 256, O_NODES, O_MODEL, O_MODE, O_TP, O_PP, O_DP, O_VP, O_SP, O_ZERO, O_GB, O_MB,
        O_SEQ, O_RECOMP, O_SCHED, O_DTYPE, O_ATTN, O_LAUNCH, O_HOST, O_CLOCK, O_SET, O_NODPO,
        O_TOKENS, O_STAGES, O_TIMELINE, O_FORMAT, O_OPT, O_MAXSLOW, O_HELP
    };
    static const struct option lo[] = {
        {"system", required_argument, 0, O_SYSTEM}, {"nodes", required_argument, 0, O_NODES},
        {"model", required_argument, 0, O_MODEL}, {"mode", required_argument, 0, O_MODE},
        {"tp", required_argument, 0, O_TP}, {"pp", required_argument, 0, O_PP},
        {"dp", required_argument, 0, O_DP}, {"vp", required_argument, 0, O_VP},
        {"sequence-parallel", no_argument, 0, O_SP}, {"zero", required_argument, 0, O_ZERO},
        {"global-batch", required_argument, 0, O_GB}, {"micro-batch", required_argument, 0, O_MB},
        {"seq", required_argument, 0, O_SEQ}, {"recompute", required_argument, 0, O_RECOMP},
        {"schedule", required_argument, 0, O_SCHED}, {"dtype", required_argument, 0, O_DTYPE},
        {"attention", required_argument, 0, O_ATTN}, {"launch", required_argument, 0, O_LAUNCH},
        {"host", required_argument, 0, O_HOST}, {"clock", required_argument, 0, O_CLOCK},
        {"set", required_argument, 0, O_SET}, {"no-dp-overlap", no_argument, 0, O_NODPO},
        {"tokens", required_argument, 0, O_TOKENS}, {"stages", no_argument, 0, O_STAGES},
        {"timeline", required_argument, 0, O_TIMELINE}, {"format", required_argument, 0, O_FORMAT},
        {"optimize", required_argument, 0, O_OPT},
        {"max-slowdown-pct", required_argument, 0, O_MAXSLOW},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    long long v;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case O_SYSTEM: o->system = optarg; break;
        case O_NODES:
            if (!(rc = cli_int(cmd, "--nodes", optarg, 1, 1000000, &v)))
                o->nodes = (int)v;
            break;
        case O_MODEL: o->model = optarg; break;
        case O_MODE:
            if (wl_mode_parse(optarg, &o->cfg.mode) || o->cfg.mode == WL_MODE_DECODE)
                rc = cli_usage(cmd, "--mode: expected train or prefill, got '%.60s'%s", optarg,
                               o->cfg.mode == WL_MODE_DECODE ? " (decode on many GPUs is not modelled yet)" : "");
            break;
        case O_TP: if (!(rc = cli_int(cmd, "--tp", optarg, 1, 1 << 20, &v))) o->cfg.tp = (int)v; break;
        case O_PP: if (!(rc = cli_int(cmd, "--pp", optarg, 1, 1 << 20, &v))) o->cfg.pp = (int)v; break;
        case O_DP:
            if (!(rc = cli_int(cmd, "--dp", optarg, 1, 1 << 24, &v)))
                o->cfg.dp = (int)v, o->dp_given = 1;
            break;
        case O_VP: if (!(rc = cli_int(cmd, "--vp", optarg, 1, 1024, &v))) o->cfg.vp = (int)v; break;
        case O_SP: o->cfg.sequence_parallel = 1; break;
        case O_ZERO: if (!(rc = cli_int(cmd, "--zero", optarg, 0, 1, &v))) o->cfg.zero = (int)v; break;
        case O_GB:
            if (!(rc = cli_int(cmd, "--global-batch", optarg, 1, WL_MAX_BATCH, &o->cfg.global_batch)))
                o->gb_given = 1;
            break;
        case O_MB: rc = cli_int(cmd, "--micro-batch", optarg, 1, WL_MAX_BATCH, &o->cfg.micro_batch); break;
        case O_SEQ: rc = cli_int(cmd, "--seq", optarg, 1, WL_MAX_SEQ, &o->cfg.seq); break;
        case O_RECOMP:
            if (wl_recompute_parse(optarg, &o->cfg.recompute))
                rc = cli_usage(cmd, "--recompute: expected none, selective or full, got '%.60s'", optarg);
            break;
        case O_SCHED:
            if (!(o->cfg.schedule = wl_cluster_schedule_lookup(optarg)))
                rc = cli_usage(cmd, "--schedule: expected %s, got '%.60s'", wl_cluster_schedule_names(),
                               optarg);
            break;
        case O_DTYPE:
            if (wl_dtype_parse(optarg, &o->cfg.dtype))
                rc = cli_usage(cmd, "--dtype: expected bf16, fp16 or fp32, got '%.60s'", optarg);
            break;
        case O_ATTN:
            if (wl_attention_parse(optarg, &o->cfg.attention))
                rc = cli_usage(cmd, "--attention: expected eager or flash, got '%.60s'", optarg);
            break;
        case O_LAUNCH:
            if (wl_launch_parse(optarg, &o->cfg.launch))
                rc = cli_usage(cmd, "--launch: expected eager or graphs, got '%.60s'", optarg);
            break;
        case O_HOST: o->host = optarg; break;
        case O_CLOCK: rc = cli_real(cmd, "--clock", optarg, 1, 100000, &o->clock); break;
        case O_SET: rc = set_opt(cmd, o, optarg); break;
        case O_NODPO: o->cfg.no_dp_overlap = 1; break;
        case O_TOKENS: rc = cli_real(cmd, "--tokens", optarg, 1, 1e18, &o->tokens); break;
        case O_STAGES: o->stages = 1; break;
        case O_OPT:
            if (strcmp(optarg, "energy"))
                rc = cli_usage(cmd, "--optimize: expected energy, got '%.60s'", optarg);
            o->optimize = 1;
            break;
        case O_MAXSLOW: rc = cli_real(cmd, "--max-slowdown-pct", optarg, 0, 1000, &o->max_slowdown_pct); break;
        case O_TIMELINE: o->timeline = optarg; break;
        case O_FORMAT: rc = cli_format(cmd, optarg, &o->format); break;
        case 'o': o->out = optarg; break;
        case O_HELP: help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argv); break;
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    return 0;
}

/* The system, its GPU (with --host and --set) and the model. */
static int load_all(const char *cmd, cluster_opts *o, wl_cluster_system *sys, wl_core_gpu *gpu,
                    wl_core_model *model)
{
    wl_error err = {0};
    /* a preset that does not exist is the option's error */
    if (wl_cluster_system_load(o->system, sys, &err)) {
        if (!strcmp(err.field, "system"))
            wl_error_locate(&err, "--system", 0);
        return cli_fail(cmd, &err);
    }
    if (wl_preset_gpu_load(sys->gpu, gpu, &err))
        return cli_fail(cmd, &err);
    if (wl_preset_model_load(o->model, model, &err)) {
        if (!strcmp(err.field, "model"))
            wl_error_locate(&err, "--model", 0);
        return cli_fail(cmd, &err);
    }
    if (o->host && wl_preset_gpus_set_host(o->host, gpu, 1, &err)) {
        wl_error_locate(&err, "--host", 0);
        return cli_fail(cmd, &err);
    }
    sys->nodes = o->nodes;
    const char *gk[MAX_SET];
    double gv[MAX_SET];
    size_t ng = 0;
    for (size_t i = 0; i < o->nset; i++) {
        int rc = wl_cluster_system_set(sys, o->set_key[i], o->set_val[i], &err);
        if (rc == WL_ENOTFOUND) {
            gk[ng] = o->set_key[i];
            gv[ng++] = o->set_val[i];
        } else if (rc) {
            wl_error_locate(&err, "--set", 0);
            return cli_fail(cmd, &err);
        }
    }
    size_t failed = 0;
    if (ng && wl_preset_gpu_apply(gpu, gk, gv, ng, &failed, &err)) {
        wl_error_locate(&err, "--set", 0);
        return cli_fail(cmd, &err);
    }
    return 0;
}

static const wl_results_col cols[] = {
    WL_RESULTS_COL("system", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("model", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("mode", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("gpus", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("tp", WL_COL_INT, 0, 0), WL_RESULTS_COL("pp", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("dp", WL_COL_INT, 0, 0), WL_RESULTS_COL("vp", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("sequence_parallel", WL_COL_BOOL, 0, 0), WL_RESULTS_COL("zero", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("schedule", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("recompute", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("micro_batch", WL_COL_INT, 0, 0), WL_RESULTS_COL("global_batch", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("seq", WL_COL_INT, 0, 0), WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("time_s", WL_COL_NUM, 4, 0), WL_RESULTS_COL("energy_j", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("power_w", WL_COL_NUM, 0, 0), WL_RESULTS_COL("tflops_per_gpu", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("mfu", WL_COL_NUM, 4, 0), WL_RESULTS_COL("bubble_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("tp_comm_exposed_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("pp_comm_exposed_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("dp_comm_exposed_s", WL_COL_NUM, 4, 0), WL_RESULTS_COL("memory_gb", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("fits", WL_COL_BOOL, 0, 0), WL_RESULTS_COL("energy_gpu_j", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("energy_network_j", WL_COL_NUM, 0, 0), WL_RESULTS_COL("energy_node_j", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("tokens_per_s", WL_COL_NUM, 0, 0), WL_RESULTS_COL("energy_per_token_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("train_time_s", WL_COL_NUM, 0, 0), WL_RESULTS_COL("train_energy_j", WL_COL_NUM, 0, 0),
    /* --optimize */
    WL_RESULTS_COL("energy_saving_pct", WL_COL_NUM, 2, 0), WL_RESULTS_COL("slowdown_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("best_fixed_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("saving_vs_fixed_pct", WL_COL_NUM, 2, 0),
};
#define NOPT 4
#define NCOLS (sizeof cols / sizeof *cols)

static const wl_results_col stage_cols[] = {
    WL_RESULTS_COL("stage", WL_COL_INT, 0, 0), WL_RESULTS_COL("fwd_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("bwd_clock_mhz", WL_COL_NUM, 0, 0), WL_RESULTS_COL("busy_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("pp_comm_exposed_s", WL_COL_NUM, 4, 0), WL_RESULTS_COL("end_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("in_flight", WL_COL_INT, 0, 0), WL_RESULTS_COL("weights_gb", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("grads_gb", WL_COL_NUM, 2, 0), WL_RESULTS_COL("optimizer_gb", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("activations_gb", WL_COL_NUM, 2, 0), WL_RESULTS_COL("memory_gb", WL_COL_NUM, 2, 0),
};
#define NSCOLS (sizeof stage_cols / sizeof *stage_cols)

static int write_timeline(const char *cmd, const char *path, const wl_cluster *cl)
{
    wl_error err = {0};
    wl_results_out *out;
    if (wl_results_out_open(path, &out, &err))
        return cli_fail(cmd, &err);
    wl_cluster_timeline_json(cl, wl_results_out_stream(out));
    if (wl_results_out_commit(out, &err))
        return cli_fail(cmd, &err);
    return 0;
}

static int run(const char *cmd, cluster_opts *o)
{
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model model;
    int rc = load_all(cmd, o, &sys, &gpu, &model);
    if (rc)
        return rc;
    int gpus = sys.nodes * sys.gpus_per_node;
    if (!o->dp_given) {
        long long tpp = (long long)o->cfg.tp * o->cfg.pp;
        if (gpus % tpp)
            return cli_usage(cmd, "tp x pp = %lld does not divide the %d GPUs of %d %s nodes", tpp,
                             gpus, sys.nodes, sys.id);
        o->cfg.dp = (int)(gpus / tpp);
    }
    if (!o->gb_given)
        o->cfg.global_batch = o->cfg.micro_batch * o->cfg.dp * 4 * o->cfg.pp;
    double clock = o->clock > 0 ? o->clock : gpu.sm_clock_max_mhz;
    wl_error err = {0};
    wl_cluster *cl = NULL;
    if (wl_cluster_create(&sys, &gpu, &model, &o->cfg, &cl, &err)) {
        /* a configuration the options made impossible is a usage error,
         * named by its option */
        if (err.field[0] && strcmp(err.source, "cluster") == 0) {
            char opt[80];
            snprintf(opt, sizeof opt, "--%s", err.field);
            for (char *q = opt; *q; q++)
                *q = *q == '_' ? '-' : *q;
            wl_error_locate(&err, opt, 0);
        }
        return cli_fail(cmd, &err);
    }
    wl_cluster_result r;
    wl_cluster_plan_result pr;
    double *plan = NULL;
    if (o->optimize) {
        plan = malloc(sizeof(double) * 2 * (size_t)wl_cluster_stages(cl));
        if (!plan) {
            wl_cluster_free(cl);
            fprintf(stderr, "wattlas cluster: out of memory\n");
            return EXIT_RUNTIME;
        }
        if (wl_cluster_optimize(cl, o->max_slowdown_pct, plan, &pr, &err)) {
            free(plan);
            wl_cluster_free(cl);
            return cli_fail(cmd, &err);
        }
        r = pr.planned;
    } else if (wl_cluster_run(cl, clock, NULL, &r, &err)) {
        wl_cluster_free(cl);
        if (!strcmp(err.field, "clock"))
            wl_error_locate(&err, "--clock", 0);
        return cli_fail(cmd, &err);
    }
    cli_rows rows;
    if ((rc = cli_rows_open(cmd, o->out, o->format, o->stages ? stage_cols : cols,
                            o->stages ? NSCOLS : NCOLS - (o->optimize ? 0 : NOPT), &rows))) {
        free(plan);
        wl_cluster_free(cl);
        return rc;
    }
    if (o->stages) {
        for (int i = 0; i < wl_cluster_stages(cl) && !rc; i++) {
            const wl_cluster_stage_stats *st = wl_cluster_sim_stage_of(cl, i);
            wl_cluster_memory mm;
            wl_cluster_stage_memory(cl, i, &mm);
            wl_results_cell c[NSCOLS] = {
                {.v = i}, {.v = plan ? plan[2 * i] : clock}, {.v = plan ? plan[2 * i + 1] : clock},
                {.v = st->busy_s},
                {.v = st->send_s + st->recv_wait_s}, {.v = st->end_s}, {.v = mm.in_flight},
                {.v = mm.weights_gb}, {.v = mm.grads_gb}, {.v = mm.optimizer_gb},
                {.v = mm.activations_gb}, {.v = mm.total_gb}};
            rc = wl_results_writer_row(rows.w, c) ? EXIT_RUNTIME : 0;
        }
    } else {
        int train = o->cfg.mode == WL_MODE_TRAIN;
        double iters = train && o->tokens > 0 ? o->tokens / r.tokens : NAN;
        wl_results_cell c[NCOLS] = {
            {.s = sys.id}, {.s = model.id}, {.s = wl_mode_name(o->cfg.mode)}, {.v = r.gpus},
            {.v = o->cfg.tp}, {.v = o->cfg.pp}, {.v = o->cfg.dp}, {.v = o->cfg.vp},
            {.v = o->cfg.sequence_parallel}, {.v = o->cfg.zero},
            {.s = wl_cluster_schedule_name(o->cfg.schedule ? o->cfg.schedule
                                           : o->cfg.vp > 1 ? wl_cluster_interleaved : wl_cluster_1f1b)},
            {.s = wl_recompute_name(o->cfg.recompute)}, {.v = (double)o->cfg.micro_batch},
            {.v = (double)o->cfg.global_batch}, {.v = (double)o->cfg.seq},
            {.v = plan ? NAN : clock}, /* a plan's clocks per stage: --stages lists them */
            {.v = r.time_s}, {.v = r.energy_j}, {.v = r.power_w}, {.v = r.tflops_per_gpu},
            {.v = r.mfu}, {.v = r.bubble_s}, {.v = r.tp_comm_exposed_s}, {.v = r.pp_comm_exposed_s},
            {.v = r.dp_comm_exposed_s}, {.v = r.memory_gb}, {.v = r.fits}, {.v = r.energy_gpu_j},
            {.v = r.energy_network_j}, {.v = r.energy_node_j}, {.v = r.tokens_per_s},
            {.v = r.energy_per_token_j}, {.v = iters * r.time_s}, {.v = iters * r.energy_j},
            {.v = plan ? pr.energy_saving_pct : NAN}, {.v = plan ? pr.slowdown_pct : NAN},
            {.v = plan ? pr.best_fixed_clock_mhz : NAN}, {.v = plan ? pr.saving_vs_fixed_pct : NAN}};
        if (o->format == WL_FMT_TABLE)
            wl_results_writer_note(rows.w, "%s x %d nodes (%d GPUs), %s, %d micro-batches, critical "
                                   "stage %d", sys.id, sys.nodes, r.gpus, model.id, r.micro_batches,
                                   r.critical_stage);
        rc = wl_results_writer_row(rows.w, c) ? EXIT_RUNTIME : 0;
        if (!r.fits)
            fprintf(stderr, "wattlas cluster: warning: %.1f GB per GPU does not fit %s's %.1f GB\n",
                    r.memory_gb, gpu.id, gpu.mem_capacity_gb);
    }
    rc = cli_rows_close(cmd, &rows, rc == 0);
    if (!rc && o->timeline)
        rc = write_timeline(cmd, o->timeline, cl);
    free(plan);
    wl_cluster_free(cl);
    return rc;
}

int cmd_cluster(int argc, char **argv)
{
    cluster_opts o = {.system = "dgx-a100-80gb", .model = "gpt3-1.3b", .nodes = 1, .out = "-",
                      .format = WL_FMT_TABLE, .max_slowdown_pct = 1};
    wl_cluster_config_default(&o.cfg);
    o.cfg.dp = 0;
    int rc = parse(argc, argv, &o);
    if (rc == CLI_HELP)
        return 0;
    if (rc)
        return rc;
    return run("cluster", &o);
}
