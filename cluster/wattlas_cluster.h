/* wattlas cluster: one parallel configuration of a model on a multi-GPU
 * system -> time, energy and memory of a training iteration, a prefill or
 * a generation, from a simulated timeline.
 *
 * The pieces, each a plain struct or a type object:
 *  - wl_cluster_system: the machine (GPUs per node and their preset, the
 *    intra-node fabric, the network, the power outside the GPUs), read from
 *    presets/systems/ *.ini;
 *  - wl_cluster_config: the parallelism (tensor, pipeline, data, virtual
 *    stages, sequence parallelism, ZeRO-1), the batch and the schedule;
 *  - wl_cluster_schedule_type: gpipe, 1f1b, interleaved, zb-h1, looked up
 *    by name; each orders the forward/backward chunks of a pipeline stage;
 *  - wl_cluster_collective: ring and tree cost of a collective over the
 *    fabric a group spans.
 * A wl_cluster handle holds the kernels of every chunk (Megatron-LM's
 * tensor-parallel layer, see cluster/layers.c) and their evaluators, and
 * simulates the timeline for any clock per stage and phase. */
#ifndef WATTLAS_CLUSTER_H
#define WATTLAS_CLUSTER_H

#include <stdio.h>

#include "../core/wattlas_core.h"
#include "../results/wattlas_results.h"

/* ---- systems ---------------------------------------------------------------- */

typedef struct {
    char id[64];
    char name[128];
    char gpu[64];              /* GPU preset id */
    int gpus_per_node;
    /* intra-node fabric: what a GPU can send to the others of its node */
    char fabric[16];           /* nvswitch, nvlink or pcie */
    double fabric_bw_gbs;      /* GB/s per GPU per direction */
    double fabric_latency_us;  /* per hop of a collective step */
    double fabric_eff;         /* the fraction of fabric_bw_gbs collectives reach
                                  (NCCL bus bandwidth over the link rate) */
    /* inter-node network */
    int nics_per_node;
    double nic_gbps;           /* Gb/s per NIC per direction */
    double net_latency_us;     /* per hop, switches included */
    double net_eff;            /* fraction of nic_gbps collectives reach */
    char topology[16];         /* fat-tree (rail-optimised, non-blocking) */
    int switch_ports;          /* ports per network switch */
    /* power outside the GPUs */
    double nic_w;              /* per NIC */
    double switch_w;           /* per network switch */
    double node_other_w;       /* per node: CPUs, host memory, intra-node
                                  switches, fans, storage, PSU losses */
    int nodes;                 /* the size asked for (--nodes), default 1 */
} wl_cluster_system;

int wl_cluster_system_load(const char *id_or_path, wl_cluster_system *out, wl_error *err);
int wl_cluster_system_parse(const char *text, const char *source, wl_cluster_system *out,
                            wl_error *err);
int wl_cluster_system_check(const wl_cluster_system *s, wl_error *err);
/* Set one numeric key (as the preset names it) within its range;
 * WL_ENOTFOUND for an unknown key. */
int wl_cluster_system_set(wl_cluster_system *s, const char *key, double value, wl_error *err);
/* The network switches of a non-blocking fat tree for n NICs of k-port
 * switches: one level for n <= k, two (leaves of k/2 down-links, spines)
 * up to k^2/2, three above (Al-Fares et al. 2008). */
long long wl_cluster_fat_tree_switches(long long nics, int ports);

/* ---- collectives ---------------------------------------------------------------
 * A group of n GPUs, k of them in each node it spans (k = n in one node).
 * Bandwidth per GPU: the fabric's inside one node; across nodes the ring's
 * node-boundary hops share the k NICs of the group's GPUs in a node (rail
 * topology: each GPU its own NIC), so the slower of the fabric and k NICs
 * over k GPUs sets it. */
typedef enum {
    WL_COLL_ALL_REDUCE = 0,
    WL_COLL_REDUCE_SCATTER,
    WL_COLL_ALL_GATHER,
    WL_COLL_SEND,               /* point to point */
    WL_COLL_ALL_TO_ALL,         /* bytes: what one GPU holds before the
                                   exchange, 1/n of it staying (expert
                                   parallelism's token dispatch and combine) */
    WL_COLL_COUNT
} wl_cluster_coll;

typedef struct {
    int n, per_node;            /* group size; members per node */
    double bw_gbs;              /* achievable bytes/s per GPU (GB/s) */
    double alpha_us;            /* latency per step */
    double fabric_gbs;          /* inside a node, per GPU */
    double nic_gbs;             /* out of a node, per GPU (its share of the
                                   node's NICs); 0 in one node */
} wl_cluster_group;

/* The group n GPUs at rank stride `stride` form on the system (ranks fill
 * nodes in order). */
void wl_cluster_group_of(const wl_cluster_system *s, int n, int stride, wl_cluster_group *g);
/* Time in seconds of a collective of `bytes` (the whole tensor: an
 * all-reduce's input, an all-gather's output) by the faster of NCCL's ring
 * and tree algorithms:
 *   ring all-reduce       2 (n-1) alpha + 2 (n-1)/n S/B
 *   ring reduce-scatter,  (n-1) alpha + (n-1)/n S/B
 *        all-gather
 *   tree all-reduce       2 ceil(log2 n) alpha + 2 S/B (pipelined double
 *                         binary tree: reduce up, broadcast down)
 *   send                  alpha + S/B
 *   all-to-all            alpha + the slower of the in-node share
 *                         (k-1)/n S over the fabric and the out-of-node
 *                         share (n-k)/n S over the GPU's NICs: every pair's
 *                         transfer is posted at once (NCCL's grouped
 *                         send/recv, as Megatron's and DeepSpeed's MoE
 *                         dispatchers call it) and the two paths run side
 *                         by side */
double wl_cluster_coll_time(const wl_cluster_group *g, wl_cluster_coll op, double bytes);
double wl_cluster_ring_time(const wl_cluster_group *g, wl_cluster_coll op, double bytes);

/* ---- schedules -------------------------------------------------------------- */

typedef struct wl_cluster_schedule_type wl_cluster_schedule_type;
extern const wl_cluster_schedule_type *wl_cluster_gpipe;
extern const wl_cluster_schedule_type *wl_cluster_1f1b;
extern const wl_cluster_schedule_type *wl_cluster_interleaved;
extern const wl_cluster_schedule_type *wl_cluster_zbh1;
const wl_cluster_schedule_type *wl_cluster_schedule_lookup(const char *name);
const char *wl_cluster_schedule_name(const wl_cluster_schedule_type *t);
/* "gpipe, 1f1b, interleaved, zb-h1" for messages. */
const char *wl_cluster_schedule_names(void);

/* The i-th schedule of the table above (NULL past the last): the order
 * searches enumerate them in. */
const wl_cluster_schedule_type *wl_cluster_schedule_at(int i);

/* Whether the schedule runs weight gradients apart (W) / takes v > 1. */
int wl_cluster_schedule_splits_w(const wl_cluster_schedule_type *t);
int wl_cluster_schedule_interleaves(const wl_cluster_schedule_type *t);
/* The chunks stage (of p, v chunks each, m micro-batches) of a training
 * pipeline holds at its peak under the schedule's fixed order; for zb-h1
 * (weight gradients run as the timeline allows) the least it can hold. */
int wl_cluster_schedule_peak(const wl_cluster_schedule_type *t, int p, int v, int m, int stage);

/* One task of a simulated timeline. kind: 'F', 'B', 'W' (weight gradients
 * split off), 'D' (gradient synchronisation), 'O' (optimizer step). */
typedef struct {
    int stage, chunk, micro;
    char kind;
    double start_s, dur_s;
    double power_w;             /* filled by wl_cluster_run */
    double comm_s;              /* of dur_s, collectives inside the task */
    double send_s;              /* after it, the GPU blocked sending its output */
} wl_cluster_task;

/* The pipeline's timeline from per-chunk durations alone: the engine under
 * wl_cluster_run, open for schedules' own studies and tests. */
typedef struct {
    const wl_cluster_schedule_type *schedule; /* NULL: 1f1b */
    int stages, chunks, micro;  /* p, v, m */
    int forward_only;           /* prefill: forwards only */
    const double *f_s, *b_s;    /* [stage * chunks + chunk], seconds */
    const double *w_s;          /* split schedules: weight gradients */
    const double *send_s;       /* [stage]: a transfer from stage to stage + 1
                                   (the last to the first for interleaving) */
    /* decode (forward only, one chunk per stage): micro-batch k >= round_micro
     * is the next token of micro-batch k - round_micro, so its first stage
     * waits for that one's last stage and ring_send_s (the sampled tokens
     * sent back); it runs f2_s instead of f_s. 0: no rounds. */
    int round_micro;
    const double *f2_s;
    double ring_send_s;
    double round_host_s;        /* ... and then the host's serving-engine step
                                   before that micro-batch's next round (also
                                   with one stage) */
} wl_cluster_pipeline;

typedef struct {
    double busy_s;              /* running chunks */
    double send_s;              /* blocked sending */
    double recv_wait_s;         /* waiting while an input was in transfer */
    double end_s;               /* its last task's end */
    int peak_in_flight;         /* forwards held for their backward at most */
} wl_cluster_stage_stats;

typedef struct wl_cluster_sim wl_cluster_sim;
wl_cluster_sim *wl_cluster_sim_create(void);
void wl_cluster_sim_free(wl_cluster_sim *s);
/* WL_EINVAL (err) for a schedule that cannot run the shape (interleaving
 * with micro-batches not a multiple of the stages, v > 1 without it). */
int wl_cluster_sim_run(wl_cluster_sim *s, const wl_cluster_pipeline *pl, wl_error *err);
const wl_cluster_stage_stats *wl_cluster_sim_stage(const wl_cluster_sim *s, int stage);
size_t wl_cluster_sim_task_count(const wl_cluster_sim *s);
wl_cluster_task *wl_cluster_sim_task(wl_cluster_sim *s, size_t i);
/* Adds a task after the pipeline's (gradient sync, optimizer). */
int wl_cluster_sim_append(wl_cluster_sim *s, const wl_cluster_task *t);
/* The last run's task graph: of the list's first *n tasks (the pipeline's
 * F, B and W, before any appended), each one's predecessor on another
 * stage (its index in the list, -1: none) and the delay from each one's
 * end to its output's arrival there (the transfer; a decode round's token
 * return and host step). A stage's tasks follow one another in the list's
 * order, each from the previous one's end plus its send_s; the list is in
 * a topological order. pred and delay hold the task count. WL_ENOMEM. */
int wl_cluster_sim_graph(const wl_cluster_sim *s, int *pred, double *delay, size_t *n);

/* ---- configurations ----------------------------------------------------------- */

/* How the layers are split over the pipeline's (virtual) stages. The
 * embedding always runs on the first virtual stage, the final norm, LM head
 * and loss on the last; what differs is how many transformer layers sit
 * beside them. */
typedef enum {
    /* Megatron-LM's default: every chunk the same number of layers (the
     * layers must divide over pp x vp) */
    WL_CLUSTER_PART_UNIFORM = 0,
    /* the slowest GPU's pipeline work (its chunks' forwards, backwards and
     * weight gradients, embedding, head and loss counted) as small as
     * integer layers allow: what Megatron's --decoder-first/last-pipeline-
     * num-layers and --account-for-embedding/loss-in-pipeline-split are set
     * for by hand */
    WL_CLUSTER_PART_BALANCED,
    /* DeepSpeed's partition_method = parameters: the parameter counts
     * balanced, the word embedding counted on the first stage and its tied
     * copy (the LM head) on the last */
    WL_CLUSTER_PART_PARAMETERS,
    /* the layers of each stage (or virtual stage) as listed */
    WL_CLUSTER_PART_LIST,
    WL_CLUSTER_PART_COUNT
} wl_cluster_partition;
const char *wl_cluster_partition_name(wl_cluster_partition p); /* NULL past the last */
/* uniform, balanced, parameters; WL_EINVAL otherwise (a list is parsed by
 * wl_cluster_partition_parse) */
int wl_cluster_partition_lookup(const char *name, wl_cluster_partition *out);
#define WL_CLUSTER_MAX_LIST 1024
/* "uniform", "balanced", "parameters" or a comma list of layer counts
 * ("5,6,6,7") into *part and layers[*n] (up to WL_CLUSTER_MAX_LIST). */
int wl_cluster_partition_parse(const char *text, wl_cluster_partition *part, int *layers,
                               int *n, wl_error *err);

typedef struct {
    int tp, pp, dp;             /* tensor, pipeline, data parallel sizes */
    int vp;                     /* model chunks (virtual stages) per GPU, >= 1 */
    int sequence_parallel;      /* Korthikanti et al. 2022: norms and dropouts
                                   split over the sequence, all-reduces become
                                   reduce-scatter + all-gather */
    int zero;                   /* 1: optimizer state sharded over dp (ZeRO-1,
                                   Megatron's distributed optimizer) */
    long long global_batch;     /* sequences per iteration */
    long long micro_batch;      /* sequences per micro-batch */
    long long seq;              /* tokens per sequence (decode: the prompt) */
    long long gen;              /* decode: tokens generated */
    wl_recompute recompute;
    const wl_cluster_schedule_type *schedule; /* NULL: 1f1b, interleaved when vp > 1 */
    wl_dtype dtype;
    wl_attention attention;
    wl_mode mode;
    wl_launch launch;
    int no_dp_overlap;          /* 1: the gradient all-reduce starts after the
                                   last backward instead of during it */
    wl_cluster_partition partition;
    int tp_comm_overlap;        /* 1: tensor-parallel collectives pipelined
                                   with their GEMMs (Transformer Engine's
                                   userbuffers; needs sequence parallelism) */
    int ep_overlap;             /* 1: a MoE layer's all-to-alls run beside
                                   another micro-batch's MoE layer (DeepSeek's
                                   DualPipe pairing of a forward and a
                                   backward chunk; in inference two
                                   micro-batches' forwards) */
    int cp;                     /* context parallelism (0: 1): each sequence
                                   split over cp ranks (Megatron-Core's ring
                                   attention, load-balanced causal chunks);
                                   GPUs = tp x cp x pp x dp */
    int ep;                     /* expert parallelism (0: 1): the experts of a
                                   MoE layer split over ep data-parallel
                                   ranks, Megatron-Core's layout (ep divides
                                   dp; experts keep the layer's tp) */
    double capacity_factor;     /* tokens an expert computes over the mean
                                   (0: 1, the balanced routing the auxiliary
                                   loss aims at; Megatron's
                                   --moe-expert-capacity-factor with inputs
                                   padded to the capacity) */
    /* WL_CLUSTER_PART_LIST: layers per stage (pp of them; vp must be 1) or
     * per virtual stage (pp x vp, in the order of the interleaved schedule's
     * model chunks), each at least 1, summing to the model's layers; the
     * caller keeps the array alive while it creates clusters from it */
    const int *stage_layers;
    int nstage_layers;
    /* train: LoRA adapters (finetune = WL_FT_LORA) of lora_rank (0: 16) on
     * lora_targets (0: q, k, v, o) of a frozen model, as NeMo's Megatron
     * LoRA runs them on the fused projections (layers.c) */
    wl_finetune finetune;
    int lora_rank;
    unsigned lora_targets;
} wl_cluster_config;
/* LoRA's adapted fused projections (bits: 1 QKV, 2 the output projection,
 * 4 FC1, 8 FC2) and its rank; 0 without LoRA (or outside training). */
unsigned wl_cluster_lora_projs(const wl_cluster_config *c, long long *rank);

/* The precision of activations, communication and everything but the
 * linear layers' GEMMs: bf16 for fp8 training (Transformer Engine's
 * recipe), the training dtype otherwise. */
wl_dtype wl_cluster_act_dtype(wl_dtype dtype);

/* Megatron's defaults: 1 GPU, bf16, micro-batch 1, seq 2048, 1f1b. */
void wl_cluster_config_default(wl_cluster_config *c);
/* Whether the configuration is possible for the model on that many GPUs:
 * heads and FFN divisible by tp, layers by pp x vp, batch by micro x dp,
 * micro-batches by pp for interleaving. WL_EINVAL naming the option. */
int wl_cluster_config_check(const wl_cluster_config *c, const wl_core_model *m, int gpus,
                            wl_error *err);

/* ---- evaluation ---------------------------------------------------------------- */

typedef struct {
    double time_s;              /* one iteration (train), pass (prefill) or generation */
    double energy_j;            /* whole cluster: GPUs, NICs, switches, nodes */
    double power_w;             /* cluster average */
    double energy_gpu_j, energy_network_j, energy_node_j;
    double tflops_per_gpu;      /* model FLOPs per GPU per second (Megatron) */
    double mfu;                 /* tflops_per_gpu over the GPU's dense peak */
    double bubble_s;            /* per GPU (mean over stages): idle in the
                                   pipeline, not waiting on a transfer */
    double tp_comm_exposed_s;   /* per GPU (mean over stages) */
    double pp_comm_exposed_s;
    double dp_comm_exposed_s;
    double ep_comm_exposed_s;   /* MoE all-to-alls (not in tp_comm_exposed_s) */
    double compute_s;           /* per GPU (mean over stages): running kernels */
    double memory_gb;           /* per GPU, the largest stage */
    int fits;                   /* memory_gb within the GPU's capacity */
    double model_tflop;         /* per iteration, whole model */
    double tokens;              /* per iteration */
    double tokens_per_s;
    double energy_per_token_j;
    int gpus, nodes, micro_batches;
    int critical_stage;         /* the stage that ends last */
    double imbalance_pct;       /* the busiest GPU's work (chunks and optimizer
                                   step) over the mean of the stages', less 1,
                                   in percent: 0 for perfectly balanced stages */
    /* decode */
    double ttft_s, tpot_s;
} wl_cluster_result;

typedef struct wl_cluster wl_cluster;

/* Builds the chunks' kernels for the configuration (gpu: one GPU of the
 * system, with any --set applied). WL_EINVAL with err for an impossible
 * configuration. */
int wl_cluster_create(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                      const wl_core_model *model, const wl_cluster_config *cfg,
                      wl_cluster **out, wl_error *err);
void wl_cluster_free(wl_cluster *c);
int wl_cluster_stages(const wl_cluster *c);
/* Transformer layers on one GPU of a stage (all its chunks); -1 for no such
 * stage. */
int wl_cluster_stage_layers(const wl_cluster *c, int stage);
/* Whether every chunk has the same number of layers (Megatron's uniform
 * split), whatever partition asked for it. */
int wl_cluster_split_is_uniform(const wl_cluster *c);
/* A balanced split (no-op for other partitions) as wl_cluster_create makes
 * it balances the pipeline work at the top clock, which is optimal when the
 * power limit does not throttle; when it does (each GPU by its own average
 * power), this refines the split on simulated runs: uniform is tried too,
 * then layers move from the busiest GPU to the least busy while the busiest
 * GPU's work falls. A handful of runs; 'cluster' does it, search does not. */
int wl_cluster_refine_split(wl_cluster *c, wl_error *err);

/* Phases a stage can run at its own clock. */
enum { WL_CLUSTER_FWD = 0, WL_CLUSTER_BWD = 1, WL_CLUSTER_PHASES = 2 };

/* Simulates the timeline. clocks: NULL for every GPU at `clock_mhz`, else
 * 2 x stages requested clocks (stage s forward at [2s], backward and the
 * optimizer at [2s + 1]). Not thread-safe on one handle (it owns the
 * simulation's scratch). */
int wl_cluster_run(wl_cluster *c, double clock_mhz, const double *clocks, wl_cluster_result *res,
                   wl_error *err);
/* The last run's timeline in the Chrome trace-event format (one process
 * per pipeline, one thread per stage's GPU; "X" events with ts/dur in
 * microseconds, a "C" power counter per GPU). */
int wl_cluster_timeline_json(const wl_cluster *c, FILE *f);

/* The clock stage `stage` ran phase 0 (forward; decode: the prompt) or 1
 * (backward and optimizer; decode: the steps) at in the last run: the one
 * asked for, or lower where the power limit held it (NaN: no such stage). */
double wl_cluster_stage_clock(const wl_cluster *c, int stage, int phase);
/* The last run's stage statistics and tasks. */
const wl_cluster_stage_stats *wl_cluster_sim_stage_of(const wl_cluster *c, int stage);
size_t wl_cluster_task_count(const wl_cluster *c);
const wl_cluster_task *wl_cluster_task_at(const wl_cluster *c, size_t i);

/* Memory per GPU of a stage, in GB, and its parts. */
typedef struct {
    double weights_gb, grads_gb, optimizer_gb, activations_gb, workspace_gb, total_gb;
    int in_flight;              /* chunk forwards held for their backward at the peak */
} wl_cluster_memory;
int wl_cluster_stage_memory(const wl_cluster *c, int stage, wl_cluster_memory *out);
/* The memory of the fullest stage, GB per GPU (what a run's memory_gb says). */
double wl_cluster_memory_gb(const wl_cluster *c);

/* A board power limit per pipeline stage (nvidia-smi -pl on that stage's
 * GPUs; n = the stages), for every later wl_cluster_run; NULL restores the
 * GPU's own limit on all. Each stage's average power over the timeline is
 * held to its own limit (see wl_cluster_run). WL_EINVAL for a count other
 * than the stages or a limit outside (0, 100000] W, field
 * stage_power_limits. */
int wl_cluster_set_stage_power_limits(wl_cluster *c, const double *limits_w, int n,
                                      wl_error *err);

/* Every GPU of the configuration under each board power limit (Zeus's
 * knob, nvidia-smi -pl), requested at clock_mhz: res[i] for limits[i] W,
 * a balanced split refined under each limit. WL_EINVAL for a limit that
 * is not a positive finite number. */
int wl_cluster_power_limit_sweep(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                                 const wl_core_model *m, const wl_cluster_config *cfg,
                                 double clock_mhz, const double *limits, size_t n,
                                 wl_cluster_result *res, wl_error *err);

/* ---- clocks per stage ---------------------------------------------------------- */

/* The energy a clock plan minimises and its savings are of: the GPUs'
 * alone (board energy, as NVML measures it and Perseus, EnvPipe and Zeus
 * report it) or the whole cluster's (GPUs, NICs and switches, the rest of
 * the nodes), where a longer iteration costs the nodes' power too. */
typedef enum { WL_CLUSTER_ENERGY_GPU = 0, WL_CLUSTER_ENERGY_ALL } wl_cluster_energy_scope;
const char *wl_cluster_energy_scope_name(wl_cluster_energy_scope s); /* "gpu", "all"; NULL */
int wl_cluster_energy_scope_lookup(const char *name, wl_cluster_energy_scope *out);

/* Chooses a clock per stage and phase minimising energy with the iteration
 * no more than max_slowdown_pct slower than every GPU at its maximum
 * clock (Perseus, SOSP'24; EnvPipe, ATC'23): greedy lowering of the clock
 * of whichever stage-phase saves the most energy per second of slack
 * while the bound holds. plan gets 2 x stages clocks. */
typedef struct {
    wl_cluster_result at_max;     /* every GPU at its maximum clock */
    wl_cluster_result best_fixed; /* the best one clock for all GPUs within the bound */
    double best_fixed_clock_mhz;
    /* the same configuration with balanced stages (--partition balanced)
     * at its best one clock within the same bound: what rebalancing alone
     * gives, so a plan's saving over it is what DVFS adds (Perseus's
     * savings are over balanced stages); equal to best_fixed when the
     * configuration is balanced already or has one stage */
    wl_cluster_result balanced_fixed;
    double balanced_fixed_clock_mhz;
    wl_cluster_result planned;
    double energy_saving_pct;     /* planned against at_max */
    double saving_vs_fixed_pct;   /* planned against best_fixed */
    double saving_vs_balanced_pct; /* planned against balanced_fixed (negative:
                                      rebalancing saves more than the plan) */
    double slowdown_pct;          /* planned against at_max */
    /* Perseus's plan space: a clock per computation (each micro-batch's
     * forward and backward on each stage, the timeline's order kept), the
     * least energy within the bound; its time and energy (of scope) and
     * against at_max */
    double computation_time_s, computation_energy_j;
    double computation_saving_pct, computation_slowdown_pct;
    wl_cluster_energy_scope scope; /* the energy of the choices and the savings */
} wl_cluster_plan_result;
int wl_cluster_optimize(wl_cluster *c, double max_slowdown_pct, wl_cluster_energy_scope scope,
                        double *plan, wl_cluster_plan_result *out, wl_error *err);

/* The time-energy frontier of clock plans within max_slowdown_pct of every
 * GPU at its maximum: each point a plan (2 x stages clocks in *plans, row
 * by row) or one clock for all GPUs (fixed), fastest first, none dominated
 * by another. *pts and *plans malloc'd. */
typedef struct {
    double time_s, energy_j;                /* energy_j: of the scope */
    double slowdown_pct, energy_saving_pct; /* against every GPU at its maximum */
    int fixed;                              /* one clock for every GPU */
    int computation;                        /* a clock per computation (its plan:
                                               each stage's forward and backward
                                               clocks, time-weighted means) */
} wl_cluster_frontier_point;
int wl_cluster_frontier(wl_cluster *c, double max_slowdown_pct, wl_cluster_energy_scope scope,
                        wl_cluster_frontier_point **pts, double **plans, size_t *n,
                        wl_error *err);

/* The time-energy frontier over board power limits (limits[0..n), W),
 * beside wl_cluster_frontier's over clock plans: every GPU capped alike
 * (Zeus's knob) and requested at its top clock, the caps no other cap
 * beats in time and energy (of scope), fastest first, with slowdown and
 * saving against every GPU at its maximum clock under its own limit.
 * *pts and *limits_out (the cap of each point; of caps that give the same
 * run, the lowest) are malloc'd. */
int wl_cluster_cap_frontier(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                            const wl_core_model *m, const wl_cluster_config *cfg,
                            const double *limits, size_t n, wl_cluster_energy_scope scope,
                            wl_cluster_frontier_point **pts, double **limits_out, size_t *n_out,
                            wl_error *err);

/* ---- search -------------------------------------------------------------------
 * Every parallel configuration of a model on the system's GPUs: tp x pp x dp
 * = GPUs (tp up to max_tp, by default the GPUs of a node, Megatron's rule),
 * micro-batches in powers of two dividing a replica's share of the global
 * batch, each schedule (interleaving with 2..max_vp chunks per GPU), each
 * recomputation, sequence parallelism (tp > 1) and ZeRO-1 (dp > 1); what
 * wl_cluster_config_check refuses is left out. Training only varies
 * recomputation, ZeRO and the schedules that differ. */
typedef struct {
    wl_cluster_config base;     /* global_batch, seq, dtype, attention, mode,
                                   launch, no_dp_overlap: fixed */
    int max_tp;                 /* 0: GPUs per node */
    int max_pp;                 /* 0: no bound */
    int max_vp;                 /* chunks per GPU for interleaving (default 8) */
    long long max_micro_batch;  /* default 16 */
    /* bit i allows value i; 0 allows every value */
    unsigned schedules;         /* bit i: wl_cluster_schedule_at(i) */
    unsigned recomputes;        /* bit i: wl_recompute i */
    unsigned sequence_parallel; /* bit 0: off, bit 1: on */
    unsigned zero;              /* bit 0: ZeRO off, bit 1: ZeRO-1 */
    unsigned partitions;        /* bit i: wl_cluster_partition i (not lists);
                                   0: uniform and balanced */
} wl_cluster_search_spec;

void wl_cluster_search_default(wl_cluster_search_spec *s);
/* The configurations in enumeration order (tp, pp, micro-batch, schedule,
 * vp, recompute, sequence parallel, ZeRO), malloc'd into *out. */
int wl_cluster_search_configs(const wl_cluster_search_spec *s, const wl_core_model *m, int gpus,
                              int gpus_per_node, wl_cluster_config **out, size_t *n,
                              wl_error *err);

typedef struct {
    wl_cluster_result r;
    int evaluated;              /* 0: weights, gradients and optimizer state
                                   alone exceed the GPU's memory, so it was
                                   not simulated (times and energies NaN,
                                   memory_gb that floor, fits 0) */
    int same_as_uniform;        /* a balanced or parameters split that came
                                   out uniform: the row of the uniform
                                   configuration again, left off the front */
    int activations_over;       /* front_only: not simulated either, because
                                   its activations at the peak its schedule
                                   implies already exceed the memory
                                   (evaluated 0, memory_gb that floor) */
    int bounded;                /* front_only (training): not simulated
                                   either, because a simulated configuration
                                   already beats its lower bounds on time
                                   and energy (evaluated 0, times NaN) */
} wl_cluster_search_row;

/* Evaluates n configurations at one clock, on `threads` threads (0:
 * OpenMP's default); rows[i] is cfgs[i]'s, whatever the thread count. The
 * first failing configuration's error in order. front_only: only the rows
 * that can be on the front are needed, so a training configuration whose
 * memory floor with its schedule's activations does not fit is not
 * simulated (activations_over). progress (NULL: none) hears how many are
 * done from one thread, and once more at the end. */
typedef void (*wl_cluster_progress)(void *user, unsigned long long done,
                                    unsigned long long total);
int wl_cluster_search_eval(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                           const wl_core_model *m, const wl_cluster_config *cfgs, size_t n,
                           double clock_mhz, int threads, int front_only,
                           wl_cluster_search_row *rows, wl_cluster_progress progress, void *user,
                           wl_error *err);
/* Among the evaluated rows that fit: the time-energy front (on_front[n]),
 * the fastest and the least energy per iteration (-1: none fits). */
int wl_cluster_search_pick(const wl_cluster_search_row *rows, size_t n, unsigned char *on_front,
                           long *fastest, long *least_energy);

/* The catalogue of built-in presets (what `wattlas presets list` prints):
 * for each GPU, model, host, system and serving workload its kind, id,
 * name and the figures of its kind; only: a wl_preset_kind, or -1 for all.
 * WL_EIO when w fails. The columns (WL_CLUSTER_CATALOG_COLS into cols)
 * are as wide in a table as the longest id and name of only's presets. */
#define WL_CLUSTER_CATALOG_COLS 20
size_t wl_cluster_catalog_cols(int only, wl_results_col *cols);
int wl_cluster_catalog_rows(int only, wl_results_writer *w);

/* The row of one configuration (what `wattlas cluster` and `cluster
 * search` print): its columns, the last WL_CLUSTER_ROW_NOPT of them
 * --optimize's; and the cells of all but those (clock NaN: a plan's
 * clocks; tokens > 0: train_time_s and train_energy_j to train that many;
 * part_text: a list partition as given). */
#define WL_CLUSTER_ROW_COLS 51
#define WL_CLUSTER_ROW_NOPT 9
const wl_results_col *wl_cluster_row_cols(void);
void wl_cluster_row_cells(wl_results_cell *c, const char *sys_id, const char *model_id,
                          const wl_cluster_config *cfg, const wl_cluster_result *r, double clock,
                          double tokens, const char *part_text);

/* ---- what `wattlas cluster` writes for one configuration ------------------------- */

/* The view of one (filled) configuration: its summary row at clock_mhz,
 * or under a clock plan per stage and phase (optimize: within
 * max_slowdown_pct of every GPU at its maximum, the energy of scope; adds
 * the last WL_CLUSTER_ROW_NOPT columns); a row per stage instead (stages);
 * the time-energy frontier of clock plans (frontier, within
 * max_slowdown_pct, default 25), and of the board power caps limits with
 * them; or, limits without frontier, the summary row under each limit.
 * stage_limits: one board power limit per stage. timeline: the run's
 * Chrome trace is written there too. A layout whose fullest stage does
 * not fit its GPU's memory is an error naming both, unless all or stages
 * (a row per stage shows where the memory goes). */
typedef struct {
    double clock_mhz;           /* 0: the GPU's maximum */
    const double *clocks;       /* nclocks: these instead, a summary row at each */
    size_t nclocks;
    double tokens;              /* > 0: the time and energy to train that many */
    const char *part_text;      /* a list partition as given (NULL: none) */
    int optimize, stages, frontier;
    double max_slowdown_pct;    /* NaN: 1, or 25 with frontier */
    wl_cluster_energy_scope scope;
    const double *limits;       /* W */
    size_t nlimits;
    const double *stage_limits; /* W, one per stage */
    size_t nstage_limits;
    FILE *timeline;             /* NULL: none */
    int all;                    /* a layout that does not fit its GPUs is still
                                   simulated (info.fits 0), not an error */
} wl_cluster_view;
typedef struct {
    int fits;                   /* the summary row's configuration fits its GPUs */
    double memory_gb;           /* per GPU, of the summary row */
    size_t sooner;              /* frontier points faster than every GPU at its top
                                   clock (the power limit throttles that baseline) */
} wl_cluster_view_info;
void wl_cluster_view_default(wl_cluster_view *v);
#define WL_CLUSTER_VIEW_COLS 56
size_t wl_cluster_view_cols(const wl_cluster_view *v, wl_results_col *cols);
/* Writes the view's rows to w (a '#' note in the table format). Errors as
 * wl_cluster_create, wl_cluster_set_stage_power_limits (field
 * stage_power_limits), wl_cluster_run (field clock) and
 * wl_cluster_optimize give them; WL_EIO when w fails. */
int wl_cluster_view_rows(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                         const wl_core_model *m, const wl_cluster_config *cfg,
                         const wl_cluster_view *v, wl_results_writer *w,
                         wl_cluster_view_info *info, wl_error *err);

/* A cluster's inputs by name: the system preset (or file), its nodes, the
 * model, the host that issues the kernels (NULL: the GPU's), and KEY=VALUE
 * settings, each a system key (nic_gbps, ...) or else a GPU key
 * (power_limit_w=300: every GPU). Errors name where they came from
 * ("system", "model", "host", "set" as the source). */
#define WL_CLUSTER_MAX_SET 64
typedef struct {
    const char *system, *model, *host;
    int nodes;
    const char *const *set_key;
    const double *set_val;
    size_t nset;
} wl_cluster_inputs;
int wl_cluster_load(const wl_cluster_inputs *in, wl_cluster_system *sys, wl_core_gpu *gpu,
                    wl_core_model *model, wl_error *err);

/* The sizes a configuration leaves to its GPUs: dp 0 is the GPUs over tp x
 * cp x pp (an error naming tp when they do not divide), global_batch 0 is
 * four micro-batches a stage of every replica (micro_batch x dp x 4 pp). */
int wl_cluster_config_fill(wl_cluster_config *c, int gpus, wl_error *err);

#endif
