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

/* Parameters per GPU of one layer and of the embedding/head, and bytes of
 * activations one layer keeps per micro-batch (Korthikanti et al. 2022). */
double wl_cluster_layer_params(const wl_core_model *m, int tp);
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

#endif
