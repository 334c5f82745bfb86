/* Private to cluster/: the pieces a pipeline chunk is made of, and the
 * layer builder that makes them. */
#ifndef WATTLAS_CLUSTER_INTERNAL_H
#define WATTLAS_CLUSTER_INTERNAL_H

#include "wattlas_cluster.h"

/* A piece of work one GPU runs: kernels (evaluated by the core at the
 * piece's clock) and the collectives among them. Exposed collectives add
 * their time; overlapped ones hide behind the kernels of another piece (the
 * window: a backward all-reduce behind the weight-gradient GEMMs that follow
 * it, as Megatron-LM's asynchronous tensor-parallel all-reduce runs it) and
 * add only what sticks out. */
typedef enum {
    PC_LAYER_F = 0, /* one transformer layer's forward */
    PC_LAYER_B,     /* its backward: input gradients (and weight gradients
                       unless the schedule splits them off), recompute included */
    PC_LAYER_W,     /* its weight gradients */
    PC_WIN_QKV,     /* weight-gradient GEMMs a backward collective hides behind */
    PC_WIN_FC1,
    PC_EMB_F,       /* input embedding (first virtual stage) */
    PC_EMB_B,
    PC_HEAD_F,      /* final norm, LM head and loss (last virtual stage) */
    PC_HEAD_B,
    PC_WIN_HEAD,
    PC_MOE_F,       /* a mixture-of-experts layer: forward, backward, */
    PC_MOE_B,
    PC_MOE_W,       /* weight gradients, and its backward's windows */
    PC_MWIN_QKV,
    PC_MWIN_FC1,
    PC_WIN_ATTN_F,  /* the attention kernels a ring exchange hides behind */
    PC_WIN_ATTN_B,
    PC_WIN_QKV_F,   /* --tp-comm-overlap: the GEMMs the forward's and the */
    PC_WIN_PROJ_F,  /* backward's tensor-parallel collectives pipeline with */
    PC_WIN_FC1_F,
    PC_WIN_FC2_F,
    PC_WIN_PROJ_B,
    PC_WIN_FC2_B,
    PC_MWIN_QKV_F,  /* the same of a MoE layer's attention */
    PC_MWIN_PROJ_F,
    PC_MWIN_PROJ_B,
    PC_COUNT
} piece_id;

/* A collective that runs beside some kernels (a window: another piece):
 * only what sticks out of frac of the window's time is exposed. */
typedef struct {
    int window;          /* piece id */
    double coll_s;
    double frac;         /* of the window the collective can hide behind */
} cl_hide;
#define CL_MAX_HIDE 8

typedef struct {
    wl_core_workload *wl;
    wl_core_evaluator *ev;
    double comm_s;       /* exposed collectives, seconds */
    double a2a_s;        /* of them, expert parallelism's all-to-alls */
    double a2a_hidden_s;  /* --ep-overlap: the all-to-alls placed beside the
                             other micro-batch's MoE layer (a hide entry) */
    int a2a_window;
    cl_hide hide[CL_MAX_HIDE]; /* collectives hidden behind windows: the
                            backward's tensor-parallel ones behind weight
                            gradients (Megatron's asynchronous all-reduce),
                            context parallelism's ring behind attention,
                            with --tp-comm-overlap the forward's behind
                            their GEMMs */
    int nhide;
} cl_piece;

/* What the builder needs to know. */
typedef struct {
    const wl_core_gpu *gpu;
    const wl_core_model *m;
    const wl_cluster_config *cfg;
    wl_cluster_group tp;     /* the tensor-parallel group */
    long long vocab;         /* padded to a multiple of 128 tp (Megatron) */
    int split_w;             /* weight gradients are their own pieces */
    long long kv_len;        /* decode: the context each step attends to */
    long long chunk;         /* decode: prompt tokens prefilled inside each step
                                (a serving engine's chunked prefill) */
    wl_cluster_group ep;     /* the expert-parallel group (MoE models) */
    wl_cluster_group cp;     /* the context-parallel group */
} cl_build;

/* Builds every piece (pieces[PC_COUNT], zeroed first). */
int wl_cluster_build_pieces(const cl_build *b, cl_piece *pieces, wl_error *err);
void wl_cluster_free_pieces(cl_piece *pieces);

/* A cache of built pieces that configurations of one shape share
 * (piececache.c): get lends the pieces (and pieces2, a decode step's, when
 * b2 is given) of b's shape, building them the first time, and sets
 * *entry (NULL: built for the caller alone, which then owns them); put
 * returns them. One thread at a time. */
typedef struct wl_cluster_piece_cache wl_cluster_piece_cache;
wl_cluster_piece_cache *wl_cluster_piece_cache_create(void);
void wl_cluster_piece_cache_free(wl_cluster_piece_cache *pc);
int wl_cluster_piece_cache_get(wl_cluster_piece_cache *pc, const void *sys, const cl_build *b,
                               const cl_build *b2, cl_piece *pieces, cl_piece *pieces2,
                               void **entry, wl_error *err);
void wl_cluster_piece_cache_put(void *entry);
/* wl_cluster_create with its pieces from cache (NULL: its own). */
int wl_cluster_create_cached(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                             const wl_core_model *model, const wl_cluster_config *cfg,
                             wl_cluster_piece_cache *cache, wl_cluster **out, wl_error *err);

/* Parameters per GPU of one layer and of the embedding/head, and bytes of
 * activations one layer keeps per micro-batch (Korthikanti et al. 2022). */
double wl_cluster_layer_params(const wl_core_model *m, int tp);
/* LoRA's adapter parameters of one layer on one tensor-parallel rank (0
 * without LoRA): per adapted projection lora_A and lora_B, the one on the
 * split side sharded (a column-parallel QKV or FC1: r d + r out/t; a
 * row-parallel projection or FC2: r in/t + r d). */
double wl_cluster_lora_layer_params(const wl_core_model *m, const wl_cluster_config *c);

/* A MoE layer's parameters on one rank, and of them its experts' (which
 * data-parallel ranks of other expert shards do not share). */
double wl_cluster_moe_layer_params(const wl_core_model *m, int tp, int ep, double *expert);
/* Tokens each local expert computes per micro-batch: the capacity
 * ceil(cf x ep x T x k / experts) of T tokens per rank. */
long long wl_cluster_expert_tokens(const wl_core_model *m, const wl_cluster_config *c, long long T);
double wl_cluster_layer_act_bytes(const wl_core_model *m, const wl_cluster_config *c);
/* What a full recompute rebuilds of one layer at a time in the backward. */
double wl_cluster_layer_act_peak_bytes(const wl_core_model *m, const wl_cluster_config *c);
long long wl_cluster_padded_vocab(const wl_core_model *m, int tp);
/* The memory of the largest stage of a training configuration before any
 * simulation: its activations at the peak its schedule's order implies
 * (for zb-h1 the least), which a simulation then finds (sets c's peaks);
 * other modes: one micro-batch's. */
double wl_cluster_memory_floor_gb(wl_cluster *c);
/* Puts sim in c's place and returns c's own: a search lends each thread's
 * simulator to the configurations it runs, so that consecutive ones of one
 * pipeline shape (the enumeration's inner loops) share its task orders. */
wl_cluster_sim *wl_cluster_swap_sim(wl_cluster *c, wl_cluster_sim *sim);

/* ---- the configuration's state (cluster.c), shared with the plans (plans.c) -- */

/* Time and energy of a piece at a clock (0 when the piece is empty). */
typedef struct cost {
    double t, e, comm;
} cost;

/* The pieces' costs at (ff, fb) that clusters lent a cache entry have
 * found (1: at and at2 set), and keeping them for the others. */
int wl_cluster_piece_cache_costs(void *entry, double ff, double fb, int ign, cost *at, cost *at2);
void wl_cluster_piece_cache_keep(void *entry, double ff, double fb, int ign, const cost *at,
                                 const cost *at2);

struct wl_cluster {
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model model;
    wl_cluster_config cfg;
    int p, v, m, gpus, nodes;
    int *lay;             /* [p v]: transformer layers per virtual stage */
    long long vocab;
    cl_piece pc[PC_COUNT];
    cl_piece pc2[PC_COUNT]; /* decode: one step's pieces (pc: the prompt's pass) */
    void *piece_entry;      /* the cache entry lending pc and pc2 (NULL: owned) */
    int decode, rounds;     /* decode: tokens generated, one pipeline round each */
    int serve;              /* decode with CUDA graphs: continuous batching */
    long long kv_len;       /* decode: the mean context a step attends to */
    /* per stage: parameters on one of its GPUs, and the optimizer step's
     * kernels over them (stages with the same count share one: opt_of) */
    double *params;
    double *eparams;      /* of them, routed experts' (synchronised over the
                             expert-data-parallel group, dp / ep) */
    double *tparams;      /* LoRA: the adapters' (the only trainable ones);
                             else params */
    int *lay_moe;         /* [p v]: of a chunk's layers, the MoE ones */
    int ep, cp, dpc;      /* expert and context parallelism; dp x cp */
    wl_cluster_group ep_g, edp_g; /* expert-parallel and expert-data-parallel */
    wl_cluster_group cp_g;
    wl_core_workload **opt_wl;
    wl_core_evaluator **opt_ev;
    int *opt_of;
    double send_s;        /* activation transfer between neighbouring stages */
    wl_cluster_group dp_g, pp_g, tp_g;
    wl_cluster_sim *sim;
    double act_layer_b;   /* activation bytes a layer keeps per micro-batch */
    double act_peak_b;    /* full recompute: one layer rebuilt at a time */
    int ncomms;
    /* scratch, allocated once: wl_cluster_run allocates nothing */
    double *f_s, *b_s, *w_s, *fe, *be, *we; /* per (stage, chunk): durations, energies */
    double *f2_s, *fe2, *coll2_s;           /* decode steps */
    double *coll_s;       /* per (stage, chunk): collectives inside its F, B and W */
    double *stage_clock;  /* [2 p]: the clocks run (after the power limit) */
    double *req, *cur;    /* [2 p]: asked for; tried under the power limit */
    double *thr_lo, *thr_hi, *stage_try; /* per stage: the power limit's search */
    double *thr_plo, *thr_phi;           /* average power at thr_lo, thr_hi */
    double *stage_cap;    /* per stage: its GPUs' board power limit, W */
    int *thr_ok;
    double *sends;        /* per stage: the transfer to the next */
    double *window;       /* per stage: its last micro-batch's backward time */
    double *dp_exp, *opt_t, *opt_e, *e_stage, *t_prev, *f_prev, *tpc; /* per stage */
    int *peak;
    struct {
        int valid;
        double ff, fb;
        struct cost at[PC_COUNT], at2[PC_COUNT];
    } memo;                /* piece costs at the last pair of clocks */
};

/* The durations and energies of stage i's chunks (f_s, fe, b_s, be, w_s,
 * we, and a decode step's f2_s, fe2) with its forward at ff MHz and the rest
 * at fb, the power limit applied kernel by kernel where the GPU's governor
 * holds kernels (power_tau_us under 1 ms), else not (wl_cluster_run applies
 * it to the stage's average); stages at the same clocks share the pieces'
 * costs. */
int wl_cluster_chunk_costs(wl_cluster *c, int i, double ff, double fb);

/* One piece's time and energy at f MHz (stage.c); the parameters per GPU
 * of the embedding and of the output side, and of each stage (c->params,
 * c->eparams); each stage's optimizer step for the current split. */
int wl_cluster_piece_cost(const cl_piece *pc, const wl_core_gpu *gpu, int id, double f,
                          int ignore_limit, cost *out);
void wl_cluster_embedding_params(const wl_cluster *c, double *emb, double *head);
void wl_cluster_stage_params(wl_cluster *c);
int wl_cluster_stage_optimizers(wl_cluster *c);

/* Splits the layers over the stages as c->cfg.partition says (partition.c). */
int wl_cluster_partition_layers(wl_cluster *c, wl_error *err);

/* After stage i's last task: its gradient synchronisation (t_dp, of which
 * its last micro-batch's backward hides what it can), the tied embedding's
 * all-reduce (first and last stage) and ZeRO-1's parameter all-gather
 * (t_ag, hidden behind the stage's forward chunks), in seconds; and its
 * optimizer step at fb MHz. */
void wl_cluster_stage_sync(const wl_cluster *c, int i, double *t_dp, double *tied, double *t_ag);
int wl_cluster_stage_optimizer(const wl_cluster *c, int i, double fb, double *t_s, double *e_j);

/* ---- bounds without a simulation (bound.c) ----------------------------------- */

/* Lower bounds on a training iteration's time (t_lb) and energy (e_lb) with
 * every GPU at clock_mhz, from the pieces' costs alone: wl_cluster_run's
 * result is never below either. The energy's holds only where no stage can
 * be throttled by its power limit (*e_valid 1); the time's always.
 * WL_EINVAL for other modes or a clock out of range. Uses the run's
 * per-stage scratch. */
int wl_cluster_bound(wl_cluster *c, double clock_mhz, double *t_lb, double *e_lb, int *e_valid);

/* ---- the task graph of a timeline (graph.c) --------------------------------- */

/* The last run's timeline as a graph (a stage's tasks in the run's order,
 * each waiting for its input from another stage), with every task's
 * duration and energy at every clock of the GPU's grid. ci holds a plan:
 * each task's clock (an index into clk); top the start's. */
typedef struct {
    int n, p, nclk;
    double *clk, *idle;        /* the grid, ascending, and the idle power there */
    double *t, *e;             /* [row * nclk + clock]: a task row's duration, one GPU's energy */
    int *pred, *prev, *next, *row, *var, *top, *ci;
    double *xdelay, *send, *es, *le, *dur;
    int *micro, *code;         /* per task: micro-batch; 0 F, 1 B, 2 W, 3 decode step */
    int *last, *f0, *fb;       /* per stage: last task, first gap's and the start's tails' clock */
    int *tail_ci;              /* per stage: the tails' clock (the backward's) */
    double *tail_s, *tail_e;   /* per stage: gradient sync and optimizer at the tasks' clocks */
    double *t_dp, *tied, *t_ag; /* per stage: wl_cluster_stage_sync's */
    double *opt_t, *opt_e;     /* [stage * nclk + clock]: the optimizer step */
    int m, train, overlap;     /* micro-batches, training, the syncs overlapped */
    double *tprev;             /* per stage scratch */
    int *fprev;
    double gpus;               /* GPUs one stage's timeline stands for (tp x dp x cp) */
    double rest_w;             /* the nodes' and network's power (energy scope all) */
} cl_graph;

/* The graph of c's last run (the plan's start: its timeline, stage clocks,
 * gradient syncs and optimizer steps), r its result. WL_ENOMEM, WL_EINVAL. */
int wl_cluster_graph_build(wl_cluster *c, const wl_cluster_result *r, cl_graph *d, wl_error *err);
void wl_cluster_graph_free(cl_graph *d);
/* The grid index nearest f MHz. */
int wl_cluster_graph_clock(const cl_graph *d, double f);
/* Iteration time and energy (of scope) at the tasks' clocks (ci), as
 * wl_cluster_run accounts them: equal to its at the start's clocks. */
void wl_cluster_graph_eval(cl_graph *d, wl_cluster_energy_scope scope, double *T, double *E);
/* Every task (and tail) at the start's clocks; at grid clock j or the
 * start's where that is lower (the power limit held it there). */
void wl_cluster_graph_reset(cl_graph *d);
void wl_cluster_graph_uniform(cl_graph *d, int j);
/* Perseus's per-computation plan within deadline D seconds (into ci), from
 * start (the tasks' clocks, then the stages' tails'; NULL: the start's
 * run), lowering clocks only. */
void wl_cluster_graph_fill(cl_graph *d, double D, const int *start);
/* Stage plans: pv[2 p] grid indices, each stage's forward and backward. */
void wl_cluster_graph_set_stages(cl_graph *d, const int *pv);
/* f for every stage, none faster than the start ran. */
void wl_cluster_graph_stage_start(const cl_graph *d, double f, int *pv);
/* The greedy descent of a stage plan pv (in place) by step grid clocks
 * within bound seconds; visit (NULL: none) hears every plan taken. */
typedef int (*cl_graph_visit)(void *ctx, const int *pv, double T, double E);
int wl_cluster_graph_descend(cl_graph *d, int *pv, int step, double bound,
                             wl_cluster_energy_scope scope, cl_graph_visit visit, void *ctx);
/* ci as stage clocks (MHz): each stage's forward and backward clocks, means
 * weighted by the computations' times; plan holds 4 p (2 p of scratch). */
void wl_cluster_graph_means(const cl_graph *d, double *plan);

#endif
