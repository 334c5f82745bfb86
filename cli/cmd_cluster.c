/* wattlas cluster: one parallel configuration of a model on a multi-GPU
 * system (options and printing; the model is in cluster/). */
#include "cli.h"
#include "../cluster/wattlas_cluster.h"
#include "../presets/wattlas_presets.h"
#include "../sweep/wattlas_sweep.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas cluster [options]\n\n"
"Time, energy and memory of one parallel configuration of a model on a\n"
"multi-GPU system: a training iteration (--mode train), a prefill pass\n"
"(--mode prefill) or a generation (--mode decode: the --seq prompt, then --gen\n"
"tokens, each a round through the pipeline), from the simulated timeline of\n"
"every pipeline stage.\n\n"
"  wattlas cluster search [options]  every configuration instead (see below)\n\n"
"  --system ID|FILE.ini    system preset (default dgx-a100-80gb; 'wattlas presets list')\n"
"  --nodes N               nodes of the system (default 1)\n"
"  --model ID|FILE.ini     model preset (default gpt3-1.3b)\n"
"  --mode train|prefill|decode  (default train)\n"
"  --gen N                 decode: tokens generated (default 128); the prompt runs at\n"
"                          the forward clock, the steps at the backward one\n"
"  --tp N --pp N --dp N    tensor, pipeline and data parallel sizes (dp default:\n"
"                          the GPUs over tp x pp)\n"
"  --vp N                  model chunks per GPU (interleaved schedule; default 1)\n"
"  --sequence-parallel     split norms and dropouts over the sequence\n"
"  --zero 0|1              1: optimizer state sharded over dp (default 0)\n"
"  --tp-comm-overlap       tensor-parallel all-gathers and reduce-scatters pipelined\n"
"                          with their GEMMs (Transformer Engine's userbuffers, Megatron's\n"
"                          --tp-comm-overlap; needs --sequence-parallel; search: applied\n"
"                          to its sequence-parallel configurations)\n"
"  --cp N                  context parallelism: each sequence split over N ranks,\n"
"                          attention by Megatron-Core's ring exchange of keys and\n"
"                          values (needs --attention flash; GPUs = tp x cp x pp x dp)\n"
"  --ep N                  expert parallelism of a mixture-of-experts model: its\n"
"                          experts split over N of the dp ranks, tokens exchanged by\n"
"                          all-to-all (default 1; N divides dp and the experts)\n"
"  --capacity-factor F     tokens an expert computes over the mean, inputs padded to\n"
"                          that capacity (default 1: balanced routing)\n""  --ep-overlap            a MoE layer's all-to-alls run beside another micro-batch's\n"
"                          MoE layer, what sticks out exposed (DeepSeek's DualPipe\n"
"                          pairs a forward chunk with a backward one; inference, two\n"
"                          micro-batches' forwards); the bubbles stay --schedule's\n"
"                          (DualPipe's own bidirectional schedule is not modelled)\n"
"  --global-batch N        sequences per iteration (default micro x dp x 4 pp)\n"
"  --micro-batch N         sequences per micro-batch (default 1)\n"
"  --seq N                 tokens per sequence (default 2048)\n"
"  --recompute none|selective|full  activation recomputation (default none)\n"
"  --finetune full|lora    train: the whole model (default) or LoRA adapters on the\n"
"                          frozen model (NeMo's Megatron LoRA on the fused QKV,\n"
"                          projection, FC1, FC2): no weight gradients for the base,\n"
"                          gradients synchronised, optimizer state and memory over\n"
"                          the adapters only\n"
"  --lora-rank R [16]  --lora-targets LIST [q,k,v,o]  (q, k, v adapt the fused QKV;\n"
"                          gate, up FC1)\n"
"  --schedule gpipe|1f1b|interleaved|zb-h1  (default 1f1b, interleaved with --vp > 1)\n"
"  --power-limit-w LIST    a row per board power limit in W (150:300:25), every GPU\n"
"                          capped alike, Zeus's knob; power_limit_w comes first; with\n"
"                          --frontier, the frontier over these caps beside the plans'\n"
"                          (--power-limits, the older spelling, is the same)\n"
"  --stage-power-limits LIST  one board power limit per pipeline stage, W (each\n"
"                          stage's average power held to its own)\n"
"  --partition uniform|balanced|parameters|N,N,...  layers per stage (default uniform,\n"
"                          Megatron-LM's default, whose layers wattlas models: the same\n"
"                          number per chunk, the embedding on the first stage, the head\n"
"                          and loss on the last); balanced: the busiest GPU's simulated\n"
"                          work (embedding, head and loss counted, power limit applied)\n"
"                          as small as it can be, what Megatron's --decoder-first/last-\n"
"                          pipeline-num-layers are set for; parameters: DeepSpeed's\n"
"                          partition_method (parameter counts balanced); a list: the\n"
"                          layers of each stage, or of each chunk with --vp\n"
"  --dtype bf16|fp16|fp8|fp32  (default bf16; fp8: Transformer Engine's recipe on\n"
"                          Hopper, the linear layers' GEMMs in fp8 with their casts,\n"
"                          the rest in bf16; mfu against the bf16 peak)\n"
"  --attention eager|flash (default eager: Megatron's fused softmax)\n"
"  --launch eager|graphs   kernels issued one by one or replayed (default eager);\n"
"                          decode with graphs: a serving engine, whose host step\n"
"                          (the host's serve_step_us + serve_seq_us x micro-batch)\n"
"                          comes before each micro-batch's next token\n"
"  --host ID|FILE.ini      the host that issues the kernels\n"
"  --clock LIST            every GPU's SM clock in MHz (default the maximum); a\n"
"                          list or MIN:MAX:STEP gives a row per clock\n"
"  --all                   simulate a layout that does not fit its GPUs' memory\n"
"                          (fits 0, a warning) instead of refusing it (exit 1);\n"
"                          --stages shows each stage's memory either way\n"
"  --set KEY=VALUE         a GPU key (power_limit_w=300: every GPU) or a system key\n"
"                          (nic_gbps=400); repeatable\n"
"  --no-dp-overlap         the gradient all-reduce after the backward, not during it\n"
"  --tokens N              also the time and energy to train N tokens\n"
"  --optimize energy       choose a clock per stage and phase (forward; backward and\n"
"                          optimizer) for the least energy within --max-slowdown-pct\n"
"                          of every GPU at its maximum clock; adds energy_saving_pct,\n"
"                          slowdown_pct, best_fixed_clock_mhz, saving_vs_fixed_pct, and\n"
"                          balanced_fixed_clock_mhz, saving_vs_balanced_pct: against the\n"
"                          best one clock with balanced stages, so that what a plan\n"
"                          saves beyond it is DVFS, not rebalancing (with --stages: the\n"
"                          plan per stage); and computation_saving_pct,\n"
"                          computation_slowdown_pct: Perseus's finer plan, a clock per\n"
"                          computation (each micro-batch's forward and backward on each\n"
"                          stage), the timeline's order kept\n"
"  --max-slowdown-pct X    the bound (default 1; 25 with --frontier)\n"
"  --energy-scope gpu|all  the energy the plans minimise and save (energy_scope): the\n"
"                          GPUs' boards (default; as NVML measures it and Perseus and\n"
"                          EnvPipe report it) or all of the cluster (nodes, network)\n"
"  --frontier              the time-energy frontier of clock plans instead: every plan\n"
"                          (a clock per stage and phase, clocks_mhz 'fwd/bwd;...' by\n"
"                          stage) or single clock (kind fixed) within the bound that\n"
"                          no other beats in both time and energy, fastest first; then\n"
"                          the per-computation plans' own frontier (kind computation,\n"
"                          clocks_mhz each stage's time-weighted mean clocks); with\n"
"                          --power-limit-w, then the caps' frontier (kind cap,\n"
"                          power_limit_w), all against every GPU at its maximum clock\n"
"  --stages                a row per pipeline stage instead of the summary\n"
"  --timeline FILE.json    the simulated timeline as Chrome trace events (Perfetto)\n"
"  --format table|csv|ndjson|json   (default table)\n"
"  -o FILE                 write to FILE (atomically) instead of stdout\n"
"  --quiet                 no notes, summary line or progress bar on stderr\n\n"
"Columns: time_s per iteration; energy_j and power_w of the whole cluster (GPUs,\n"
"NICs, switches, the rest of the nodes); tflops_per_gpu (model FLOPs per GPU per\n"
"second), mfu; imbalance_pct (the busiest GPU's work over the stages' mean, less\n"
"1; with --optimize at the top clock); per GPU, mean over stages: bubble_s (idle),\n"
"tp/pp/dp/ep_comm_exposed_s (collectives not hidden by compute; ep: a MoE model's\n"
"all-to-alls); memory_gb of the\n"
"largest stage and fits; decode: ttft_s (the batch's first tokens) and tpot_ms.\n\n"
"wattlas cluster search: every tp x pp x dp of the GPUs, micro-batch (powers of\n"
"two), schedule, chunks per GPU, recompute, expert parallelism (MoE models), sequence parallelism and ZeRO-1 that\n"
"the model allows, evaluated in parallel; prints the time-energy front of those\n"
"that fit (choice: fastest, least_energy, front), and with -o FILE writes every\n"
"row to FILE (csv unless --format); a progress bar goes to stderr when it is a\n"
"terminal. Configurations whose weights and optimizer\n"
"state alone exceed the memory are not simulated (empty times, fits 0); printing\n"
"the front alone (no -o, no --shard), neither are those whose activations at\n"
"their schedule's peak exceed it.\n"
"  --global-batch N        fixed (default: the number of GPUs)\n"
"  --max-tp N              (default the GPUs of a node)  --max-pp N  --max-vp N (8)\n"
"  --max-micro-batch N     (default 16)\n"
"  --schedule LIST --recompute LIST   only these (comma lists)\n"
"  --sequence-parallel, --zero 0|1    only these (default both)\n"
"  --partition LIST        uniform, balanced, parameters (default uniform and balanced;\n"
"                          balanced also takes depths the layers do not divide by)\n"
"  --threads N             (default all cores)\n"
"  --shard I/N             evaluate and write the I-th of N contiguous slices (csv or\n"
"                          ndjson; 'wattlas merge' joins them into the whole -o file)\n"
"Also --system, --nodes, --model, --mode, --seq, --gen, --dtype, --attention,\n"
"--launch, --host, --clock, --set, --no-dp-overlap, --tokens, --format, -o, --quiet.\n");
}

#define MAX_SET 64

typedef struct {
    const char *system, *model, *host, *timeline, *out;
    int nodes, stages, all;
    double clock;
    double tokens;
    int optimize, frontier, slowdown_given;
    wl_cluster_energy_scope scope;
    double max_slowdown_pct;
    wl_cluster_config cfg;
    int dp_given, gb_given;
    /* search */
    int search, threads, format_given, quiet, old_limits;
    unsigned shard_i, shard_n;
    wl_cluster_search_spec spec;
    char **argv;
    int argc;
    const char *set_key[MAX_SET];
    double set_val[MAX_SET];
    char set_buf[MAX_SET][64];
    size_t nset;
    wl_results_format format;
    int part_layers[WL_CLUSTER_MAX_LIST];
    const char *part_text;
    wl_core_numlist limits; /* --power-limits */
    wl_core_numlist clocks; /* --clock, a list */
    wl_core_numlist stage_limits; /* --stage-power-limits */
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

/* A comma list of names into a bit mask (search's --schedule and
 * --recompute): bit i for the i-th name lookup() knows. */
static int name_mask(const char *cmd, const char *opt, const char *arg, int (*lookup)(const char *),
                     const char *names, unsigned *mask)
{
    *mask = 0;
    const char *p = arg;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char tok[32];
        int i = -1;
        if (len > 0 && len < sizeof tok) {
            memcpy(tok, p, len);
            tok[len] = 0;
            i = lookup(tok);
        }
        if (i < 0)
            return cli_usage(cmd, "%s: expected a list of %s, got '%.60s'", opt, names, arg);
        *mask |= 1u << i;
        if (!end)
            return 0;
        p = end + 1;
    }
}

static int schedule_index(const char *name)
{
    const wl_cluster_schedule_type *t = wl_cluster_schedule_lookup(name);
    for (int i = 0; t && wl_cluster_schedule_at(i); i++)
        if (wl_cluster_schedule_at(i) == t)
            return i;
    return -1;
}

static int partition_index(const char *name)
{
    wl_cluster_partition p;
    return wl_cluster_partition_lookup(name, &p) ? -1 : (int)p;
}

static int recompute_index(const char *name)
{
    wl_recompute r;
    return wl_recompute_parse(name, &r) ? -1 : (int)r;
}

/* Options one of cluster and cluster search takes and the other does not. */
static int option_fits(const char *cmd, int search, const char *name, int search_only)
{
    if (search && !search_only)
        return cli_usage(cmd, "--%s: search enumerates it (bound it with --max-tp, --max-pp, "
                         "--max-vp, --max-micro-batch)", name);
    if (!search && search_only)
        return cli_usage(cmd, "--%s is an option of 'wattlas cluster search'", name);
    return 0;
}

/* --power-limits and --stage-power-limits: a list of watts (field names
 * the value in errors), replacing an earlier one */
static int watts_option(const char *cmd, int search, const char *name, const char *field,
                        const char *text, wl_core_numlist *out)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", name);
    int rc = option_fits(cmd, search, name, 0);
    if (rc)
        return rc;
    wl_error e = {0};
    wl_core_numlist_free(out);
    /* --power-limits is an axis (a row per value); --stage-power-limits a
     * value per stage, where two stages may share one */
    int stages = !strcmp(name, "stage-power-limits");
    if ((stages ? wl_core_parse_list : wl_core_parse_axis)(text, 1, 100000, 0, opt, 0, field, out,
                                                           &e))
        return cli_usage(cmd, "%s: %s", opt, e.text);
    return 0;
}

static int parse(int argc, char **argv, cluster_opts *o)
{
    const char *cmd = o->search ? "cluster search" : "cluster";
    enum {
        O_SYSTEM = 256, O_NODES, O_MODEL, O_MODE, O_TP, O_PP, O_DP, O_VP, O_SP, O_ZERO, O_GB, O_MB,
        O_SEQ, O_RECOMP, O_SCHED, O_DTYPE, O_ATTN, O_LAUNCH, O_HOST, O_CLOCK, O_SET, O_NODPO,
        O_TOKENS, O_STAGES, O_TIMELINE, O_FORMAT, O_OPT, O_MAXSLOW, O_MAXTP, O_MAXPP, O_MAXVP,
        O_MAXMB, O_THREADS, O_SHARD, O_FRONTIER, O_GEN, O_SCOPE, O_PART, O_LIMITS, O_LIMITW, O_SLIMITS, O_EP, O_CF, O_CP, O_TPO, O_EPO, O_QUIET, O_HELP, O_ALL,
        O_FT, O_LRANK, O_LTARGETS, O_FREEZE
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
        {"max-tp", required_argument, 0, O_MAXTP}, {"max-pp", required_argument, 0, O_MAXPP},
        {"max-vp", required_argument, 0, O_MAXVP},
        {"max-micro-batch", required_argument, 0, O_MAXMB},
        {"threads", required_argument, 0, O_THREADS}, {"shard", required_argument, 0, O_SHARD},
        {"frontier", no_argument, 0, O_FRONTIER}, {"gen", required_argument, 0, O_GEN},
        {"energy-scope", required_argument, 0, O_SCOPE},
        {"partition", required_argument, 0, O_PART},
        {"power-limit-w", required_argument, 0, O_LIMITW}, {"power-limits", required_argument, 0, O_LIMITS},
        {"stage-power-limits", required_argument, 0, O_SLIMITS},
        {"ep", required_argument, 0, O_EP}, {"capacity-factor", required_argument, 0, O_CF},
        {"finetune", required_argument, 0, O_FT}, {"lora-rank", required_argument, 0, O_LRANK},
        {"lora-targets", required_argument, 0, O_LTARGETS},
        {"freeze", required_argument, 0, O_FREEZE},
        {"cp", required_argument, 0, O_CP}, {"tp-comm-overlap", no_argument, 0, O_TPO},
        {"ep-overlap", no_argument, 0, O_EPO}, {"all", no_argument, 0, O_ALL},
        {"quiet", no_argument, 0, O_QUIET}, {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
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
            if (wl_mode_parse(optarg, &o->cfg.mode))
                rc = cli_usage(cmd, "--mode: expected train, prefill or decode, got '%.60s'", optarg);
            break;
        case O_GEN: rc = cli_int(cmd, "--gen", optarg, 1, 1000000, &o->cfg.gen); break;
        case O_FT:
            if (wl_finetune_parse(optarg, &o->cfg.finetune))
                rc = cli_usage(cmd, "--finetune: expected full or lora, got '%.60s'", optarg);
            break;
        case O_LRANK:
            if (!(rc = cli_int(cmd, "--lora-rank", optarg, 1, 65536, &v)))
                o->cfg.lora_rank = (int)v;
            break;
        case O_LTARGETS:
            if (wl_lora_targets_parse(optarg, &o->cfg.lora_targets))
                rc = cli_usage(cmd, "--lora-targets: expected a list of q, k, v, o, gate, up, "
                               "down, attention, mlp or all, got '%.60s'", optarg);
            break;
        case O_FREEZE:
            /* the stages' frozen prefix is not built: said, not ignored */
            rc = cli_usage(cmd, "--freeze: the cluster models LoRA (--finetune lora); a frozen "
                           "prefix of layers across pipeline stages is not modelled (predict "
                           "and sweep take --freeze on one GPU)");
            break;
        case O_TP:
            if (!(rc = option_fits(cmd, o->search, "tp", 0)) &&
                !(rc = cli_int(cmd, "--tp", optarg, 1, 1 << 20, &v)))
                o->cfg.tp = (int)v;
            break;
        case O_PP:
            if (!(rc = option_fits(cmd, o->search, "pp", 0)) &&
                !(rc = cli_int(cmd, "--pp", optarg, 1, 1 << 20, &v)))
                o->cfg.pp = (int)v;
            break;
        case O_DP:
            if (!(rc = option_fits(cmd, o->search, "dp", 0)) &&
                !(rc = cli_int(cmd, "--dp", optarg, 1, 1 << 24, &v)))
                o->cfg.dp = (int)v, o->dp_given = 1;
            break;
        case O_VP:
            if (!(rc = option_fits(cmd, o->search, "vp", 0)) &&
                !(rc = cli_int(cmd, "--vp", optarg, 1, 1024, &v)))
                o->cfg.vp = (int)v;
            break;
        case O_SP:
            o->cfg.sequence_parallel = 1;
            o->spec.sequence_parallel = 2;
            break;
        case O_ZERO:
            if (!(rc = cli_int(cmd, "--zero", optarg, 0, 1, &v))) {
                o->cfg.zero = (int)v;
                o->spec.zero = 1u << v;
            }
            break;
        case O_EP:
            if (!(rc = option_fits(cmd, o->search, "ep", 0)) &&
                !(rc = cli_int(cmd, "--ep", optarg, 1, 1 << 20, &v)))
                o->cfg.ep = (int)v;
            break;
        case O_TPO: o->cfg.tp_comm_overlap = 1; break;
        case O_EPO: o->cfg.ep_overlap = 1; break;
        case O_CP:
            if (!(rc = option_fits(cmd, o->search, "cp", 0)) &&
                !(rc = cli_int(cmd, "--cp", optarg, 1, 1 << 16, &v)))
                o->cfg.cp = (int)v;
            break;
        case O_CF:
            rc = cli_real(cmd, "--capacity-factor", optarg, 0.01, 64, &o->cfg.capacity_factor);
            break;
        case O_MAXTP:
        case O_MAXPP:
        case O_MAXVP: {
            const char *name = c == O_MAXTP ? "max-tp" : c == O_MAXPP ? "max-pp" : "max-vp";
            char opt[16];
            snprintf(opt, sizeof opt, "--%s", name);
            if (!(rc = option_fits(cmd, o->search, name, 1)) &&
                !(rc = cli_int(cmd, opt, optarg, 1, 1 << 20, &v)))
                *(c == O_MAXTP ? &o->spec.max_tp : c == O_MAXPP ? &o->spec.max_pp : &o->spec.max_vp) = (int)v;
            break;
        }
        case O_MAXMB:
            if (!(rc = option_fits(cmd, o->search, "max-micro-batch", 1)))
                rc = cli_int(cmd, "--max-micro-batch", optarg, 1, WL_MAX_BATCH, &o->spec.max_micro_batch);
            break;
        case O_THREADS:
            if (!(rc = option_fits(cmd, o->search, "threads", 1)) &&
                !(rc = cli_int(cmd, "--threads", optarg, 1, 1024, &v)))
                o->threads = (int)v;
            break;
        case O_SHARD:
            if (!(rc = option_fits(cmd, o->search, "shard", 1)))
                rc = cli_shard(cmd, optarg, &o->shard_i, &o->shard_n);
            break;
        case O_GB:
            if (!(rc = cli_int(cmd, "--global-batch", optarg, 1, WL_MAX_BATCH, &o->cfg.global_batch)))
                o->gb_given = 1;
            break;
        case O_MB:
            if (!(rc = option_fits(cmd, o->search, "micro-batch", 0)))
                rc = cli_int(cmd, "--micro-batch", optarg, 1, WL_MAX_BATCH, &o->cfg.micro_batch);
            break;
        case O_SEQ: rc = cli_int(cmd, "--seq", optarg, 1, WL_MAX_SEQ, &o->cfg.seq); break;
        case O_RECOMP:
            if (o->search)
                rc = name_mask(cmd, "--recompute", optarg, recompute_index, "none, selective and full",
                               &o->spec.recomputes);
            else if (wl_recompute_parse(optarg, &o->cfg.recompute))
                rc = cli_usage(cmd, "--recompute: expected none, selective or full, got '%.60s'", optarg);
            break;
        case O_SCHED:
            if (o->search)
                rc = name_mask(cmd, "--schedule", optarg, schedule_index, wl_cluster_schedule_names(),
                               &o->spec.schedules);
            else if (!(o->cfg.schedule = wl_cluster_schedule_lookup(optarg)))
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
        case O_CLOCK: {
            wl_error e = {0};
            wl_core_numlist_free(&o->clocks);
            if (wl_core_parse_axis(optarg, 1, 100000, 0, "--clock", 0, "", &o->clocks, &e))
                rc = cli_fail(cmd, &e);
            else if (o->clocks.n > 1 && o->search)
                rc = cli_usage(cmd, "--clock: a search runs at one clock, got %zu", o->clocks.n);
            else
                o->clock = o->clocks.v[0];
            break;
        }
        case O_SET: rc = set_opt(cmd, o, optarg); break;
        case O_NODPO: o->cfg.no_dp_overlap = 1; break;
        case O_PART:
            if (o->search) {
                rc = name_mask(cmd, "--partition", optarg, partition_index,
                               "uniform, balanced and parameters", &o->spec.partitions);
            } else {
                wl_error e = {0};
                if (wl_cluster_partition_parse(optarg, &o->cfg.partition, o->part_layers,
                                               &o->cfg.nstage_layers, &e))
                    rc = cli_usage(cmd, "--partition: %s", e.text);
                o->cfg.stage_layers = o->part_layers;
                o->part_text = optarg;
            }
            break;
        case O_TOKENS: rc = cli_real(cmd, "--tokens", optarg, 1, 1e18, &o->tokens); break;
        case O_STAGES: if (!(rc = option_fits(cmd, o->search, "stages", 0))) o->stages = 1; break;
        case O_ALL:
            if (o->search)
                rc = cli_usage(cmd, "--all: a search's -o FILE holds every layout, fits 0 for "
                                    "those that do not fit");
            o->all = 1;
            break;
        case O_OPT:
            if ((rc = option_fits(cmd, o->search, "optimize", 0)))
                break;
            if (strcmp(optarg, "energy"))
                rc = cli_usage(cmd, "--optimize: expected energy, got '%.60s'", optarg);
            o->optimize = 1;
            break;
        case O_MAXSLOW:
            if (!(rc = option_fits(cmd, o->search, "max-slowdown-pct", 0)))
                rc = cli_real(cmd, "--max-slowdown-pct", optarg, 0, 1000, &o->max_slowdown_pct);
            o->slowdown_given = 1;
            break;
        case O_FRONTIER:
            if (!(rc = option_fits(cmd, o->search, "frontier", 0)))
                o->frontier = 1;
            break;
        case O_SCOPE:
            if ((rc = option_fits(cmd, o->search, "energy-scope", 0)))
                break;
            if (wl_cluster_energy_scope_lookup(optarg, &o->scope))
                rc = cli_usage(cmd, "--energy-scope: expected gpu or all, got '%.60s'", optarg);
            break;
        case O_LIMITS: /* the older spelling, accepted */
            o->old_limits = 1;
            /* fall through */
        case O_LIMITW:
            rc = watts_option(cmd, o->search, c == O_LIMITS ? "power-limits" : "power-limit-w",
                              "power_limit_w", optarg, &o->limits);
            break;
        case O_SLIMITS:
            rc = watts_option(cmd, o->search, "stage-power-limits", "stage_power_limits", optarg,
                              &o->stage_limits);
            break;
        case O_TIMELINE:
            if (!(rc = option_fits(cmd, o->search, "timeline", 0)))
                o->timeline = optarg;
            break;
        case O_FORMAT:
            rc = cli_format(cmd, optarg, &o->format);
            o->format_given = 1;
            break;
        case 'o': o->out = optarg; break;
        case O_QUIET: o->quiet = 1; break;
        case O_HELP: help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (o->old_limits && !o->quiet)
        fprintf(stderr, "wattlas %s: note: --power-limits is --power-limit-w, the power limit's "
                        "spelling in every command\n", cmd);
    if (o->limits.n && (o->optimize || o->stages || o->timeline))
        return cli_usage(cmd, "--power-limit-w: a row per limit (or, with --frontier, their "
                         "frontier); it does not combine with --optimize, --stages or --timeline");
    if (o->clocks.n > 1 && (o->optimize || o->stages || o->timeline || o->frontier || o->limits.n))
        return cli_usage(cmd, "--clock: several clocks give a row each; they do not combine with "
                         "--optimize, --stages, --frontier, --power-limit-w or --timeline (each of "
                         "those is of one clock)");
    if (o->limits.n && o->stage_limits.n)
        return cli_usage(cmd, "--power-limit-w caps every GPU alike, --stage-power-limits each "
                         "stage: give one");
    return 0;
}

/* The system, its GPU (with --host and --set) and the model. */
static int load_all(const char *cmd, cluster_opts *o, wl_cluster_system *sys, wl_core_gpu *gpu,
                    wl_core_model *model)
{
    wl_error err = {0};
    wl_cluster_inputs in = {.system = o->system, .model = o->model, .host = o->host,
                            .nodes = o->nodes, .set_key = (const char *const *)o->set_key,
                            .set_val = o->set_val, .nset = o->nset};
    if (wl_cluster_load(&in, sys, gpu, model, &err)) {
        /* the option that gave it */
        static const char *const opt[][2] = {{"system", "--system"}, {"model", "--model"},
                                             {"host", "--host"}, {"set", "--set"}};
        for (size_t i = 0; i < 4; i++)
            if (!strcmp(err.source, opt[i][0]) && err.line == 0)
                wl_error_locate(&err, opt[i][1], 0);
        return cli_fail(cmd, &err);
    }
    return 0;
}

/* the row's columns and cells: the library's (wl_cluster_row_cols) */
#define NOPT WL_CLUSTER_ROW_NOPT
#define NCOLS WL_CLUSTER_ROW_COLS


static int run(const char *cmd, cluster_opts *o)
{
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model model;
    int rc = load_all(cmd, o, &sys, &gpu, &model);
    if (rc)
        return rc;
    int gpus = sys.nodes * sys.gpus_per_node;
    if (!o->dp_given)
        o->cfg.dp = 0;
    if (!o->gb_given)
        o->cfg.global_batch = 0;
    wl_error err = {0};
    if (wl_cluster_config_fill(&o->cfg, gpus, &err))
        return cli_usage(cmd, "%s of %d %s nodes", err.text, sys.nodes, sys.id);
    wl_cluster_view v;
    wl_cluster_view_default(&v);
    v.clock_mhz = o->clock;
    if (o->clocks.n > 1) {
        v.clocks = o->clocks.v;
        v.nclocks = o->clocks.n;
    }
    v.tokens = o->tokens;
    v.part_text = o->part_text;
    v.optimize = o->optimize;
    v.stages = o->stages;
    v.all = o->all;
    v.frontier = o->frontier;
    v.max_slowdown_pct = o->slowdown_given ? o->max_slowdown_pct : NAN;
    v.scope = o->scope;
    v.limits = o->limits.v;
    v.nlimits = o->limits.n;
    v.stage_limits = o->stage_limits.v;
    v.nstage_limits = o->stage_limits.n;
    wl_results_out *tl = NULL;
    if (o->timeline && !(o->limits.n && !o->frontier) && !o->frontier) {
        if (wl_results_out_open(o->timeline, &tl, &err))
            return cli_fail(cmd, &err);
        v.timeline = wl_results_out_stream(tl);
    }
    wl_results_col cols[WL_CLUSTER_VIEW_COLS];
    size_t nc = wl_cluster_view_cols(&v, cols);
    cli_rows rows;
    if ((rc = (tl ? cli_rows_open_held : cli_rows_open)(cmd, o->out, o->format, cols, nc,
                                                         &rows))) {
        wl_results_out_abort(tl);
        return rc;
    }
    wl_cluster_view_info info;
    int vrc = wl_cluster_view_rows(&sys, &gpu, &model, &o->cfg, &v, rows.w, &info, &err);
    /* the timeline in place before the rows: a timeline the disk could not
     * take leaves no row behind (issue 77: the row was printed, then the
     * command failed) */
    int trc = 0;
    if (tl && !vrc) {
        trc = wl_results_out_commit(tl, &err);
        tl = NULL;
    }
    rc = cli_rows_close(cmd, &rows, vrc == WL_OK && !trc);
    if (trc)
        return cli_fail(cmd, &err);
    if (vrc) {
        wl_results_out_abort(tl);
        /* a configuration the options made impossible is a usage error,
         * named by its option */
        if (!strcmp(err.field, "stage_power_limits"))
            return cli_usage(cmd, "--stage-power-limits: %s", err.text);
        if (!strcmp(err.field, "clock")) {
            wl_error_locate(&err, "--clock", 0);
        } else if (err.field[0] && strcmp(err.source, "cluster") == 0) {
            char opt[80];
            /* a limit from --power-limit-w names that option, not the key */
            snprintf(opt, sizeof opt, "--%s",
                     !strcmp(err.field, "power_limit_w") && o->limits.n ? "power-limit-w" : err.field);
            for (char *q = opt; *q; q++)
                *q = *q == '_' ? '-' : *q;
            wl_error_locate(&err, opt, 0);
        }
        return cli_fail(cmd, &err);
    }
    if (!rc && info.sooner && o->format != WL_FMT_TABLE && !o->quiet)
        fprintf(stderr, "wattlas %s: note: %zu point%s end%s sooner than every GPU at its top "
                "clock (slowdown_pct 0), which the power limit throttles to slower stage "
                "clocks: slowdown_pct < 0\n", cmd, info.sooner, info.sooner == 1 ? "" : "s",
                info.sooner == 1 ? "s" : "");
    if (!rc && !info.fits) {
        char has[48];
        wl_results_gb_text(has, sizeof has, gpu.mem_capacity_gb);
        fprintf(stderr, "wattlas cluster: warning: %.1f GB per GPU does not fit %s's %s\n",
                info.memory_gb, gpu.id, has);
    }
    return rc;
}

/* ---- search ---------------------------------------------------------------------- */

/* What decides a search's rows, so that shards of different searches are
 * never merged: the version and every argument but the output, the shard
 * and the threads. */
static uint64_t search_fingerprint(const cluster_opts *o)
{
    uint64_t h = wl_sweep_hash(WL_SWEEP_HASH_BASIS, "wattlas " WL_VERSION " cluster search",
                               sizeof("wattlas " WL_VERSION " cluster search"));
    static const char *const skip[] = {"-o", "--shard", "--threads"};
    for (int i = 1; i < o->argc; i++) {
        const char *a = o->argv[i];
        int skipped = 0;
        for (size_t k = 0; k < sizeof skip / sizeof *skip && !skipped; k++) {
            size_t n = strlen(skip[k]);
            if (!strncmp(a, skip[k], n) && (a[n] == 0 || a[n] == '=' || (k == 0 && a[n]))) {
                skipped = 1;
                i += a[n] == 0; /* its value follows */
            }
        }
        if (!skipped)
            h = wl_sweep_hash(h, a, strlen(a) + 1);
    }
    return h;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rows [lo, hi) of the search, all of them. */
static int write_rows(const char *cmd, const cluster_opts *o, const char *path, wl_results_format fmt,
                      const wl_cluster_system *sys, const wl_core_model *model,
                      const wl_cluster_config *cfgs, const wl_cluster_search_row *rows, size_t lo,
                      size_t hi, size_t total, double clock)
{
    cli_rows out;
    int rc = cli_rows_open(cmd, path, fmt, wl_cluster_row_cols(), NCOLS - NOPT, &out);
    if (rc)
        return rc;
    if (o->shard_n) {
        /* the shard line before the header, as sweep's shards have it */
        wl_sweep_shard_line(wl_results_out_stream(out.out), o->shard_i, o->shard_n,
                            search_fingerprint(o), lo, hi, total, hi - lo, fmt);
        wl_results_writer_header(out.w);
        wl_results_writer_hash_rows(out.w);
    }
    for (size_t i = lo; i < hi && !rc; i++) {
        wl_results_cell c[NCOLS];
        wl_cluster_row_cells(c, sys->id, model->id, &cfgs[i], &rows[i - lo].r, clock, o->tokens, NULL);
        rc = wl_results_writer_row(out.w, c) ? EXIT_RUNTIME : 0;
    }
    if (!rc && o->shard_n) {
        /* the end line merge checks the rows against */
        unsigned long long lines;
        uint64_t h = wl_results_writer_rows_hash(out.w, &lines);
        wl_sweep_shard_end(wl_results_out_stream(out.out), lines, h);
    }
    return cli_rows_close(cmd, &out, rc == 0);
}

/* The front, fastest first, each row named by what it is. */
static int write_summary(const char *cmd, const char *path, wl_results_format fmt,
                         const wl_cluster_system *sys, const wl_core_model *model,
                         const wl_cluster_config *cfgs, const wl_cluster_search_row *rows, size_t n,
                         double clock, double tokens)
{
    unsigned char *front = calloc(n ? n : 1, 1);
    size_t *order = calloc(n ? n : 1, sizeof *order);
    wl_results_col *sc = calloc(NCOLS - NOPT + 1, sizeof *sc);
    if (!front || !order || !sc) {
        free(front), free(order), free(sc);
        fprintf(stderr, "wattlas %s: out of memory\n", cmd);
        return EXIT_RUNTIME;
    }
    long fastest, least;
    wl_cluster_search_pick(rows, n, front, &fastest, &least);
    size_t nf = 0;
    for (size_t i = 0; i < n; i++)
        if (front[i])
            order[nf++] = i;
    /* insertion sort by time: fronts are short */
    for (size_t i = 1; i < nf; i++)
        for (size_t j = i; j > 0 && rows[order[j]].r.time_s < rows[order[j - 1]].r.time_s; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    sc[0] = (wl_results_col)WL_RESULTS_COL("choice", WL_COL_TEXT, 0, 0);
    memcpy(sc + 1, wl_cluster_row_cols(), sizeof *sc * (NCOLS - NOPT));
    cli_rows out;
    int rc = cli_rows_open(cmd, path, fmt, sc, NCOLS - NOPT + 1, &out);
    if (!rc && fmt == WL_FMT_TABLE)
        wl_results_writer_note(out.w, "%s x %d nodes, %s: the time-energy front of the "
                               "configurations that fit, fastest first", sys->id, sys->nodes,
                               model->id);
    for (size_t k = 0; k < nf && !rc; k++) {
        size_t i = order[k];
        wl_results_cell c[NCOLS + 1];
        c[0].s = (long)i == fastest && (long)i == least ? "fastest+least_energy"
                 : (long)i == fastest                  ? "fastest"
                 : (long)i == least                    ? "least_energy"
                                                       : "front";
        wl_cluster_row_cells(c + 1, sys->id, model->id, &cfgs[i], &rows[i].r, clock, tokens, NULL);
        rc = wl_results_writer_row(out.w, c) ? EXIT_RUNTIME : 0;
    }
    if (!rc && fastest < 0)
        fprintf(stderr, "wattlas %s: no configuration fits in %s's memory\n", cmd, sys->gpu);
    rc = rc ? (cli_rows_close(cmd, &out, 0), rc) : cli_rows_close(cmd, &out, 1);
    free(front), free(order), free(sc);
    return rc;
}

static int search_run(const char *cmd, cluster_opts *o)
{
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model model;
    int rc = load_all(cmd, o, &sys, &gpu, &model);
    if (rc)
        return rc;
    int gpus = sys.nodes * sys.gpus_per_node;
    if (o->shard_n && (o->format == WL_FMT_TABLE || o->format == WL_FMT_JSON) && o->format_given)
        return cli_usage(cmd, "--shard writes csv or ndjson (merge joins the shards)");
    o->spec.base = o->cfg;
    if (!o->gb_given)
        o->spec.base.global_batch = gpus;
    double clock = o->clock > 0 ? o->clock : gpu.sm_clock_max_mhz;
    wl_error err = {0};
    if (!wl_core_gpu_clock_in_range(&gpu, clock)) {
        wl_error_set(&err, "--clock", 0, "", "%g MHz is outside %s's %g-%g MHz", clock, gpu.id,
                     gpu.sm_clock_min_mhz, gpu.sm_clock_max_mhz);
        return cli_fail(cmd, &err);
    }
    wl_cluster_config *cfgs = NULL;
    size_t n = 0;
    if (wl_cluster_search_configs(&o->spec, &model, gpus, sys.gpus_per_node, &cfgs, &n, &err))
        return cli_fail(cmd, &err);
    size_t lo = 0, hi = n;
    if (o->shard_n) {
        lo = (size_t)((unsigned long long)n * (o->shard_i - 1) / o->shard_n);
        hi = (size_t)((unsigned long long)n * o->shard_i / o->shard_n);
    }
    wl_cluster_search_row *rows = calloc(hi - lo ? hi - lo : 1, sizeof *rows);
    if (!rows) {
        free(cfgs);
        fprintf(stderr, "wattlas %s: out of memory\n", cmd);
        return EXIT_RUNTIME;
    }
    double t0 = seconds_now();
    int to_file = strcmp(o->out, "-") != 0;
    /* printing the front alone needs no row that cannot fit */
    int front_only = !to_file && !o->shard_n;
    cli_bar b;
    cli_bar_start(&b, "configurations");
    int bar = !o->quiet && isatty(STDERR_FILENO);
    int erc = wl_cluster_search_eval(&sys, &gpu, &model, cfgs + lo, hi - lo, clock, o->threads,
                                     front_only, rows, bar ? cli_bar_draw : NULL, &b, &err);
    cli_bar_end(&b);
    if (erc) {
        free(rows), free(cfgs);
        return cli_fail(cmd, &err);
    }
    double took = seconds_now() - t0;
    size_t sim = 0, fit = 0, act = 0, bnd = 0;
    for (size_t i = 0; i < hi - lo; i++) {
        sim += (size_t)rows[i].evaluated;
        fit += (size_t)(rows[i].evaluated && rows[i].r.fits);
        act += (size_t)rows[i].activations_over;
        bnd += (size_t)rows[i].bounded;
    }
    if (!o->quiet && (act || bnd))
        fprintf(stderr, "wattlas %s: %zu configurations of %s on %d GPUs: %zu simulated, %zu fit "
                "(of the rest, %zu cannot hold their weights and optimizer state, %zu their "
                "activations either, %zu are beaten on their bounds); %.2f s\n", cmd, hi - lo,
                model.id, gpus, sim, fit, hi - lo - sim - act - bnd, act, bnd, took);
    else if (!o->quiet)
        fprintf(stderr, "wattlas %s: %zu configurations of %s on %d GPUs%s: %zu simulated (the rest "
                "cannot hold their weights and optimizer state), %zu fit; %.2f s\n", cmd, hi - lo,
                model.id, gpus, o->shard_n ? " in this shard" : "", sim, fit, took);
    if (o->shard_n) {
        wl_results_format f = o->format_given ? o->format : WL_FMT_CSV;
        rc = write_rows(cmd, o, o->out, f, &sys, &model, cfgs, rows, lo, hi, n, clock);
    } else {
        if (to_file)
            rc = write_rows(cmd, o, o->out, o->format_given ? o->format : WL_FMT_CSV, &sys, &model,
                            cfgs, rows, 0, n, n, clock);
        if (!rc)
            rc = write_summary(cmd, "-", to_file ? WL_FMT_TABLE : o->format, &sys, &model, cfgs,
                               rows, n, clock, o->tokens);
    }
    free(rows);
    free(cfgs);
    return rc;
}

int cmd_cluster(int argc, char **argv)
{
    cluster_opts o = {.system = "dgx-a100-80gb", .model = "gpt3-1.3b", .nodes = 1, .out = "-",
                      .format = WL_FMT_TABLE, .max_slowdown_pct = 1};
    wl_cluster_config_default(&o.cfg);
    wl_cluster_search_default(&o.spec);
    o.cfg.dp = 0;
    if (argc > 1 && !strcmp(argv[1], "search")) {
        o.search = 1;
        argc--;
        argv++;
    }
    o.argc = argc;
    o.argv = argv;
    int rc = parse(argc, argv, &o);
    if (rc == CLI_HELP)
        rc = 0;
    else if (!rc)
        rc = o.search ? search_run("cluster search", &o) : run("cluster", &o);
    wl_core_numlist_free(&o.limits);
    wl_core_numlist_free(&o.stage_limits);
    wl_core_numlist_free(&o.clocks);
    return rc;
}
