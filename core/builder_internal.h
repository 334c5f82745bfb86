/* Private to core/'s builders (builder.c and the build_*.c beside it): the
 * state of a build and the operations every family's sequence is made of.
 * From the bottom: build_ops.c the primitives (kernels, the backward tape,
 * linear layers, norms, rotary); build_hf5.c what transformers 5.x launches
 * beyond them; build_layer.c every family's layers (attention, MLP, the
 * embeddings, the final norm and pooler, ResNet); build_train.c the
 * training step (loss, backward, optimizer); build_gen.c generation and
 * the serving engine; builder.c the checks and the entry points. */
#ifndef WATTLAS_BUILDER_INTERNAL_H
#define WATTLAS_BUILDER_INTERNAL_H

#include "core_internal.h"

#include <stddef.h>

/* ---- the backward tape ------------------------------------------------------
 * A training forward records, for every op it launches, the kernels that
 * op's backward launches (PyTorch's derivatives.yaml formulas as the CUDA
 * backends implement them) and the parameters whose gradients they
 * produce. The backward pass walks the tape in reverse, as the autograd
 * engine does for a chain of ops. A tensor used by several ops gets one
 * gradient accumulation (an add) per extra use (a "fan-out" entry). Marks
 * bracket the ranges a recompute runs again. */
#define TP_MAXK 6
enum { MARK_NONE = 0, MARK_LAYER_BEGIN, MARK_LAYER_END, MARK_CORE_BEGIN, MARK_CORE_END };

typedef struct {
    int nk;
    wl_kernel k[TP_MAXK]; /* backward kernels in launch order */
    int np;
    double param[2];      /* numels of the parameters whose gradients they give */
    int mark;
    size_t at;            /* marks: index of the next forward kernel */
    size_t from;          /* end marks: the opening mark's index */
} tp_ent;

typedef struct {
    wl_core_workload *wl;
    const wl_core_model *m;
    wl_dtype dt;      /* activations */
    wl_dtype gemm_dt; /* GEMM inputs: tf32 keeps fp32 storage on tensor cores */
    int tc;
    long long b, s, T, d, h, kvh, hd, ff;
    long long sk;     /* key length: s, or the cache's length in a decode step */
    long long chunk;  /* serving: prompt tokens of arriving requests mixed into a
                         decode step (chunked prefill) */
    long long prompt; /* ... whose prompts are this long */
    long long padded; /* serving: tokens a step's CUDA graph computes (0: T) */
    long long head_rows; /* serving: rows through the LM head (0: b) */
    long long head_vocab; /* serving: the LM head's columns (0: the vocabulary): a
                             tensor-parallel rank's shard */
    long long moe_experts, moe_ff; /* serving: a rank's experts and their width */
    long long moe_ranks;  /* ... of the model's experts over this many ranks (0: 1) */
    int quant;            /* serving an 8-bit checkpoint: bf16 activations quantized
                             before each 8-bit GEMM (build_gen.c serve_linear) */
    wl_core_sampler sampler; /* serving: how the sampled rows are sampled */
    int penalties;           /* serving: vLLM's penalties on the logits first */
    int gen;          /* 0: no cache; 1: a generation's prefill; 2: a decode step */
    int alone;        /* a layer called on its own, block(x): no attention mask and
                         no KV cache from a model around it (--scope layer) */
    long long rep;    /* launches added now stand for this many (0: 1): a block
                         of decode steps built once (build_gen.c) */
    int graphing;     /* kernels go into a CUDA graph ... */
    size_t graph_n;   /* ... of which this many are already in */
    wl_attention attn;
    int hf5;          /* HF transformers 5.x eager (see hf5_* below) */
    int strided;      /* elementwise kernels added now take ATen's strided path */
    long long softmax_q; /* softmaxes added now are causally masked over this many
                            queries (0: unmasked; core/latency.c) */
    wl_dtype conv_dt; /* cuDNN convolutions: TF32 tensor cores for fp32 (PyTorch's
                         default allow_tf32 for cuDNN), else the dtype */
    int rc;
    wl_error *err;
    /* training */
    const wl_core_shape *sh;
    int train;          /* record the tape (a training forward) */
    int in_core;        /* inside the attention core (selective recompute) */
    wl_phase phase;     /* of the kernels added now */
    tp_ent *tape;
    size_t ntape, captape;
    int micro;          /* micro-batch index */
    int master;         /* fp32 master weights and main gradients */
    double saved_layer, saved_core, saved_other; /* bytes kept for backward */
    double saved_peak;  /* the largest layer a full recompute rebuilds */
    double saved_peak_step; /* saved activations at their peak */
    double *plist;      /* trainable parameter numels in model.parameters() order */
    size_t np, capp;
    /* fine-tuning (build_train.c) */
    int no_grad;        /* ops added now need no gradient (their inputs need none and
                           their weights are frozen): autograd records nothing */
    int frozen;         /* weights of ops added now are frozen: no weight gradients */
    int pl_frozen;      /* parameters listed now are frozen ... */
    double frozen_params; /* ... and counted here, not in plist */
    double unreached_params; /* frozen parameters the backward never reaches */
    unsigned lora;      /* LoRA's target projections (WL_LORA_*; 0: none) */
    long long lora_rank;
} bld;

/* Projections that share one input (q, k and v; gate and up): each starts
 * from whether that input needs a gradient (its no_grad), and after them
 * the outputs need one if any does: fork before the first, next between
 * them, join after the last. */
typedef struct {
    int in, out;
} bld_fork;
static inline bld_fork wl_core_bld_fork(const bld *B) { return (bld_fork){B->no_grad, 1}; }
static inline void wl_core_bld_fork_next(bld *B, bld_fork *f)
{
    f->out &= B->no_grad;
    B->no_grad = f->in;
}
static inline void wl_core_bld_fork_join(bld *B, const bld_fork *f) { B->no_grad &= f->out; }

/* A layer's projections, for LoRA's targets: GPT-2's fused c_attn is QKV. */
enum { PROJ_NONE = 0, PROJ_Q, PROJ_K, PROJ_V, PROJ_QKV, PROJ_O, PROJ_GATE, PROJ_UP, PROJ_DOWN };

/* build_ops.c: the primitives */
void wl_core_bld_add(bld *B, const wl_kernel *k0);
tp_ent *wl_core_bld_tp_new(bld *B);
void wl_core_bld_tp_k(tp_ent *e, const wl_kernel *k);
wl_kernel wl_core_bld_ewk(wl_ew_op op, long long n, wl_dtype dt);
wl_kernel wl_core_bld_rowk(wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt);
void wl_core_bld_save(bld *B, double elems, double bytes_per_elem);
void wl_core_bld_fanout(bld *B, long long n, wl_dtype dt, int uses);
void wl_core_bld_tp_param(bld *B, double numel);
void wl_core_bld_host_sync(bld *B);
void wl_core_bld_mark(bld *B, int what);
void wl_core_bld_linear_x(bld *B, long long in, long long out, int bias, int conv1d);
void wl_core_bld_linear(bld *B, long long in, long long out, int bias);
/* A layer's projection: a linear layer, with a LoRA adapter when targeted */
void wl_core_bld_proj(bld *B, int proj, long long in, long long out, int bias);
int wl_core_bld_proj_adapted(const bld *B, int proj);
/* whether the projection's input is kept for its backward (its weight or
 * adapter trains), for the callers' saves */
int wl_core_bld_proj_keeps_input(const bld *B, int proj);
void wl_core_bld_bgemm(bld *B, long long batch, long long m, long long n, long long kk);
void wl_core_bld_ewc(bld *B, wl_ew_op op, long long n, wl_dtype dt);
void wl_core_bld_ewb(bld *B, wl_ew_op op, long long n, wl_dtype dt, const wl_kernel *bk, int nb);
void wl_core_bld_ew(bld *B, wl_ew_op op, long long n, wl_dtype dt);
void wl_core_bld_dropout(bld *B, long long n, double p);
void wl_core_bld_rowop(bld *B, wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt);
int wl_core_bld_half(const bld *B);
double wl_core_bld_eb(const bld *B);
void wl_core_bld_norm(bld *B);
void wl_core_bld_rotary(bld *B, long long heads);
void wl_core_bld_cache_update(bld *B);
void wl_core_bld_flash(bld *B, long long bh);
void wl_core_bld_embed_bwd(bld *B, long long rows, int tied);
/* ... transformers 5.x's (--stack hf5) */
void wl_core_bld_hf5_rmsnorm(bld *B);
void wl_core_bld_hf5_rotary(bld *B, long long heads);

/* build_hf5.c: HF transformers 5.x (--stack hf5) beyond the ops */
void wl_core_bld_hf5_prefix(bld *B);
void wl_core_bld_hf5_attention(bld *B);
void wl_core_bld_hf5_sample(bld *B, long long len);

/* build_layer.c: a model's layers by family */
void wl_core_bld_layer(bld *B);
void wl_core_bld_prefix(bld *B);
/* the final norm and the pooler after the layers */
void wl_core_bld_suffix(bld *B);
/* torchvision's ResNet v1.5, the whole model */
void wl_core_bld_resnet(bld *B);

/* build_train.c: the training step */
void wl_core_bld_head(bld *B);
void wl_core_bld_backward(bld *B);
void wl_core_bld_pl_model(bld *B, int layer_only);
void wl_core_bld_train_forward(bld *B, int layer_only);
void wl_core_bld_train_step(bld *B, int layer_only);

/* build_gen.c: generation and the serving engine */
void wl_core_bld_generate(bld *B, int layer_only);
void wl_core_bld_serve_step(bld *B, const wl_core_serve_step *st);

#endif
