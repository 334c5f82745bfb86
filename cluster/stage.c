/* What a pipeline stage holds and what its pieces cost: its layers and
 * parameters for the current split, each piece's time and energy at a clock
 * (kernels as the core predicts them, collectives at idle power), a
 * chunk's costs, the optimizer step, the gradient synchronisation, and the
 * memory a GPU of the stage holds. Below cluster.c (which simulates them)
 * and partition.c (which balances them). */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NCCL's buffers per communicator: NCCL_BUFFSIZE (4 MiB) per channel and
 * peer for the ring's send and receive sides, 16-32 channels on NVLink
 * systems: ~0.25 GB per communicator of more than one GPU (NCCL docs,
 * "Environment variables: NCCL_BUFFSIZE"). The CUDA context and cuBLAS
 * workspace as core/memory.c counts them. */
#define CONTEXT_GB 0.53
#define NCCL_COMM_GB 0.25
/* Megatron's optimizer: fp32 main gradients accumulated by the weight-
 * gradient GEMMs (gradient_accumulation_fusion) and all-reduced in fp32
 * (accumulate_allreduce_grads_in_fp32), fp32 master weights and two Adam
 * moments: 4 + 4 + 8 bytes a parameter beside the model's weights. */
#define GRAD_BYTES 4.0
#define MASTER_BYTES 4.0
#define ADAM_BYTES 8.0

/* Optimizer step over n parameters on one GPU, as Megatron's mixed-
 * precision optimizer and Apex FusedAdam run it (multi-tensor kernels; one
 * kernel each here): unscale and check for inf (fp16 only), the gradient
 * norm, clipping, Adam (reads parameter, gradient and both moments, writes
 * parameter and moments: 28 B a parameter, as a 4-input and a 3-input
 * pass), the copy back to the half-precision weights, zeroing the main
 * gradients. */
static int optimizer_wl(double n, wl_dtype dt, wl_core_workload **out)
{
    wl_core_workload *wl = wl_core_workload_create("optimizer");
    if (!wl)
        return WL_ENOMEM;
    long long ne = (long long)ceil(n);
    int rc = WL_OK;
    const wl_dtype F = WL_DT_FP32;
    wl_kernel k = {.kind = WL_K_ELEMENTWISE, .n = ne, .batch = 1, .in_dtype = F, .acc_dtype = F};
    if (dt == WL_DT_FP16) {
        k.op = WL_EW_SCALAR_MUL;
        rc |= wl_core_workload_add(wl, &k);
    }
    wl_kernel r = {.kind = WL_K_REDUCE, .batch = (ne + 65535) / 65536, .n = 65536, .in_dtype = F,
                   .acc_dtype = F};
    rc |= wl_core_workload_add(wl, &r);
    k.op = WL_EW_SCALAR_MUL;
    rc |= wl_core_workload_add(wl, &k);
    k.op = WL_EW_TERNARY;
    rc |= wl_core_workload_add(wl, &k);
    k.op = WL_EW_ADD;
    rc |= wl_core_workload_add(wl, &k);
    if (dt != WL_DT_FP32) {
        k.op = WL_EW_CAST_BF16;
        rc |= wl_core_workload_add(wl, &k);
    }
    k.op = WL_EW_FILL;
    rc |= wl_core_workload_add(wl, &k);
    if (rc) {
        wl_core_workload_free(wl);
        return WL_ENOMEM;
    }
    *out = wl;
    return WL_OK;
}

/* Parameters per GPU of the input embedding (word table and learned
 * positions) and of the output side (final norm and LM head); with tied
 * embeddings and pp > 1 the last stage holds its own copy of the word
 * embedding (Megatron's embedding group), so the head counts it too. */
void wl_cluster_embedding_params(const wl_cluster *c, double *emb, double *head)
{
    const wl_core_model *m = &c->model;
    double d = m->d_model, word = (double)c->vocab / c->cfg.tp * d;
    double pos = m->positions == WL_POS_LEARNED ? (double)m->max_positions * d : 0;
    double fin = m->norm == WL_NORM_RMSNORM ? d : 2 * d;
    *emb = m->vocab_size > 0 ? word + pos : 0;
    *head = fin + (m->vocab_size > 0 && (c->p > 1 || m->untied_head) ? word : 0);
}

/* Parameters on one GPU of each stage: its layers, the embedding on the
 * first, the head on the last. */
void wl_cluster_stage_params(wl_cluster *c)
{
    double emb, head, lp = wl_cluster_layer_params(&c->model, c->cfg.tp), ex = 0, mp = 0;
    if (wl_core_model_is_moe(&c->model))
        mp = wl_cluster_moe_layer_params(&c->model, c->cfg.tp, c->ep, &ex);
    wl_cluster_embedding_params(c, &emb, &head);
    /* the model's first dense_layers layers keep a dense FFN: chunks take
     * layers in virtual-stage order */
    int V = c->p * c->v, before = 0;
    for (int k = 0; k < V; k++) {
        int dense = c->model.experts > 0 ? c->model.dense_layers - before : c->lay[k];
        dense = dense < 0 ? 0 : dense > c->lay[k] ? c->lay[k] : dense;
        c->lay_moe[k] = c->lay[k] - dense;
        before += c->lay[k];
    }
    for (int i = 0; i < c->p; i++) {
        int nm = 0, nl = wl_cluster_stage_layers(c, i);
        for (int ch = 0; ch < c->v; ch++)
            nm += c->lay_moe[ch * c->p + i];
        c->params[i] = lp * (nl - nm) + mp * nm + (i == 0 ? emb : 0) + (i == c->p - 1 ? head : 0);
        c->eparams[i] = ex * nm;
        c->tparams[i] = c->params[i];
        if (wl_cluster_lora_projs(&c->cfg, &(long long){0})) {
            /* LoRA: the base frozen, its adapters added and alone trained */
            double a = wl_cluster_lora_layer_params(&c->model, &c->cfg) * nl;
            c->params[i] += a;
            c->tparams[i] = a;
        }
    }
}

int wl_cluster_split_is_uniform(const wl_cluster *c)
{
    int V = c->p * c->v;
    for (int k = 0; k < V; k++)
        if (c->lay[k] * V != c->model.layers)
            return 0;
    return 1;
}

int wl_cluster_stage_layers(const wl_cluster *c, int stage)
{
    if (stage < 0 || stage >= c->p)
        return -1;
    int n = 0;
    for (int ch = 0; ch < c->v; ch++)
        n += c->lay[ch * c->p + stage];
    return n;
}

/* A piece's cost: kernels as the core predicts them, collectives at the
 * GPU's idle power at that clock. */

/* The phase whose clock a piece runs at: forward pieces at the stage's
 * forward clock, the rest at its backward clock. */
static const int piece_bwd[PC_COUNT] = {
    [PC_LAYER_B] = 1, [PC_LAYER_W] = 1, [PC_WIN_QKV] = 1, [PC_WIN_FC1] = 1,
    [PC_EMB_B] = 1,   [PC_HEAD_B] = 1,  [PC_WIN_HEAD] = 1, [PC_MOE_B] = 1, [PC_MOE_W] = 1,
    [PC_MWIN_QKV] = 1, [PC_MWIN_FC1] = 1, [PC_WIN_ATTN_B] = 1, [PC_WIN_PROJ_B] = 1,
    [PC_WIN_FC2_B] = 1, [PC_MWIN_PROJ_B] = 1,
};

int wl_cluster_piece_cost(const cl_piece *pc, const wl_core_gpu *gpu, int id, double f,
                          int ignore_limit, cost *out)
{
    const cl_piece *p = &pc[id];
    *out = (cost){0};
    if (!p->ev)
        return WL_OK;
    wl_core_op op = {.sm_clock_mhz = f, .ignore_power_limit = ignore_limit};
    wl_core_result r;
    int rc = wl_core_evaluator_run(p->ev, &op, &r);
    if (rc)
        return rc;
    /* what sticks out of each collective's window is exposed */
    double comm = p->comm_s;
    for (int k = 0; k < p->nhide; k++) {
        const cl_hide *h = &p->hide[k];
        if (!pc[h->window].ev) {
            comm += h->coll_s;
            continue;
        }
        wl_core_result w;
        if ((rc = wl_core_evaluator_run(pc[h->window].ev, &op, &w)))
            return rc;
        comm += fmax(0, h->coll_s - h->frac * w.time_ms * 1e-3);
    }
    double idle = wl_core_gpu_idle_w(gpu, r.effective_clock_mhz);
    out->t = r.time_ms * 1e-3 + comm;
    out->e = r.energy_j + idle * comm;
    out->comm = comm;
    return WL_OK;
}

/* the stage's durations and energies of every chunk at its clocks; stages
 * at the same clocks share the pieces' costs */
int wl_cluster_chunk_costs(wl_cluster *c, int i, double ff, double fb)
{
    int V = c->p * c->v;
    const cost *a = c->memo.at;
    /* a governor that holds each kernel (Hopper's, power_tau_us 300: the
     * H200 profiles show GEMMs slowed inside steps whose average is far
     * below the cap) is applied kernel by kernel, as the core applies it;
     * one that holds the average over ~100 ms (Ampere's) is applied to each
     * stage's average by wl_cluster_run */
    int ign = wl_core_gpu_power_tau_us(&c->gpu) > 1000;
    if (!(c->memo.valid && c->memo.ff == ff && c->memo.fb == fb) && c->piece_entry &&
        wl_cluster_piece_cache_costs(c->piece_entry, ff, fb, ign, c->memo.at, c->memo.at2)) {
        c->memo.ff = ff;
        c->memo.fb = fb;
        c->memo.valid = 1;
    }
    if (!(c->memo.valid && c->memo.ff == ff && c->memo.fb == fb)) {
        int split = wl_cluster_schedule_splits_w(c->cfg.schedule);
        for (int id = 0; id < PC_COUNT; id++) {
            /* pieces that only serve as windows are costed by the piece
             * whose collectives hide behind them */
            int window_only = (id >= PC_WIN_QKV && id <= PC_WIN_FC1) || id >= PC_MWIN_QKV ||
                              (id == PC_WIN_HEAD && !split);
            c->memo.at[id] = (cost){0};
            int rc = window_only ? WL_OK
                                 : wl_cluster_piece_cost(c->pc, &c->gpu, id,
                                                         piece_bwd[id] ? fb : ff, ign,
                                                      &c->memo.at[id]);
            /* decode steps at the second phase's clock */
            c->memo.at2[id] = (cost){0};
            if (!rc && c->decode && !window_only)
                rc = wl_cluster_piece_cost(c->pc2, &c->gpu, id, fb, ign, &c->memo.at2[id]);
            if (rc)
                return rc;
        }
        c->memo.ff = ff;
        c->memo.fb = fb;
        c->memo.valid = 1;
        if (c->piece_entry)
            wl_cluster_piece_cache_keep(c->piece_entry, ff, fb, ign, c->memo.at, c->memo.at2);
    }
    cost hw = a[PC_WIN_HEAD]; /* a split schedule's head weight gradient (last W) */
    for (int ch = 0; ch < c->v; ch++) {
        int vs = ch * c->p + i;
        size_t k = (size_t)i * (size_t)c->v + (size_t)ch;
        int first = vs == 0, last = vs == V - 1, M = c->lay_moe[vs], L = c->lay[vs] - M;
        /* the chunk's dense and MoE layers, and the embedding or the head */
#define LAYERS(x, dense, moe, f) (L * (x)[dense].f + M * (x)[moe].f)
#define CHUNK(layer, moe, emb, head, f) \
    (LAYERS(a, layer, moe, f) + (first ? a[emb].f : 0) + (last ? a[head].f : 0))
        c->f_s[k] = CHUNK(PC_LAYER_F, PC_MOE_F, PC_EMB_F, PC_HEAD_F, t);
        c->fe[k] = CHUNK(PC_LAYER_F, PC_MOE_F, PC_EMB_F, PC_HEAD_F, e);
        c->b_s[k] = CHUNK(PC_LAYER_B, PC_MOE_B, PC_EMB_B, PC_HEAD_B, t);
        c->be[k] = CHUNK(PC_LAYER_B, PC_MOE_B, PC_EMB_B, PC_HEAD_B, e);
        c->w_s[k] = LAYERS(a, PC_LAYER_W, PC_MOE_W, t) + (last ? hw.t : 0);
        c->we[k] = LAYERS(a, PC_LAYER_W, PC_MOE_W, e) + (last ? hw.e : 0);
        c->coll_s[k] = CHUNK(PC_LAYER_F, PC_MOE_F, PC_EMB_F, PC_HEAD_F, comm) +
                       CHUNK(PC_LAYER_B, PC_MOE_B, PC_EMB_B, PC_HEAD_B, comm) +
                       LAYERS(a, PC_LAYER_W, PC_MOE_W, comm);
        const cost *a2 = c->memo.at2;
        c->f2_s[k] = LAYERS(a2, PC_LAYER_F, PC_MOE_F, t) + (first ? a2[PC_EMB_F].t : 0) +
                     (last ? a2[PC_HEAD_F].t : 0);
        c->fe2[k] = LAYERS(a2, PC_LAYER_F, PC_MOE_F, e) + (first ? a2[PC_EMB_F].e : 0) +
                    (last ? a2[PC_HEAD_F].e : 0);
        c->coll2_s[k] = LAYERS(a2, PC_LAYER_F, PC_MOE_F, comm) + (first ? a2[PC_EMB_F].comm : 0) +
                        (last ? a2[PC_HEAD_F].comm : 0);
#undef LAYERS
#undef CHUNK
    }
    return WL_OK;
}

/* The parameters whose optimizer state a GPU of stage i keeps: ZeRO-1
 * shards the routed experts' over their dp / ep replicas, the rest over
 * dp. */
static double opt_params(const wl_cluster *c, int i)
{
    double Pe = c->tparams[i] == c->params[i] ? c->eparams[i] : 0, P = c->tparams[i] - Pe;
    if (!c->cfg.zero)
        return P + Pe;
    return P / c->dpc + Pe / (c->dpc / c->ep);
}

/* Each stage's parameters and optimizer step for the current split
 * (c->lay); stages with the same parameter count share the kernels. */
int wl_cluster_stage_optimizers(wl_cluster *c)
{
    wl_cluster_stage_params(c);
    for (int k = 0; k < c->p; k++) {
        wl_core_evaluator_free(c->opt_ev[k]);
        wl_core_workload_free(c->opt_wl[k]);
        c->opt_ev[k] = NULL;
        c->opt_wl[k] = NULL;
    }
    for (int k = 0; k < c->p; k++) {
        c->opt_of[k] = k;
        if (c->cfg.mode != WL_MODE_TRAIN)
            continue;
        for (int j = 0; j < k; j++)
            if (c->tparams[j] == c->tparams[k] && c->eparams[j] == c->eparams[k]) {
                c->opt_of[k] = j;
                break;
            }
        if (c->opt_of[k] != k)
            continue;
        double n = opt_params(c, k);
        if (optimizer_wl(n, c->cfg.dtype, &c->opt_wl[k]) ||
            wl_core_evaluator_create(&c->gpu, c->opt_wl[k], wl_core_latency_tiled, &c->opt_ev[k]))
            return WL_ENOMEM;
    }
    return WL_OK;
}

void wl_cluster_stage_sync(const wl_cluster *c, int i, double *t_dp, double *tied, double *t_ag)
{
    /* the gradients: the routed experts' over their expert-data-parallel
     * replicas (dp / ep), the rest over dp */
    int lora = c->tparams[i] != c->params[i]; /* LoRA: the adapters' gradients alone */
    double Pe = lora ? 0 : c->eparams[i], P = c->tparams[i] - Pe;
    wl_cluster_coll sync = c->cfg.zero ? WL_COLL_REDUCE_SCATTER : WL_COLL_ALL_REDUCE;
    *t_dp = (c->dpc > 1 ? wl_cluster_coll_time(&c->dp_g, sync, P * GRAD_BYTES) : 0) +
            (c->edp_g.n > 1 ? wl_cluster_coll_time(&c->edp_g, sync, Pe * GRAD_BYTES) : 0);
    /* tied embeddings across the first and last stage */
    *tied = 0;
    int p = c->p;
    if (p > 1 && !lora && !c->model.untied_head && c->model.vocab_size > 0 &&
        (i == 0 || i == p - 1)) {
        wl_cluster_group eg;
        wl_cluster_group_of(&c->sys, 2, c->cfg.tp * c->dpc * (p - 1), &eg);
        *tied = wl_cluster_coll_time(&eg, WL_COLL_ALL_REDUCE,
                                     (double)c->vocab / c->cfg.tp * c->model.d_model * GRAD_BYTES);
    }
    /* ZeRO-1: the updated parameters all-gathered */
    *t_ag = 0;
    if (c->cfg.zero && c->dpc > 1) {
        wl_dtype act = wl_cluster_act_dtype(c->cfg.dtype);
        *t_ag = wl_cluster_coll_time(&c->dp_g, WL_COLL_ALL_GATHER, P * wl_dtype_bytes(act)) +
                wl_cluster_coll_time(&c->edp_g, WL_COLL_ALL_GATHER, Pe * wl_dtype_bytes(act));
    }
}

int wl_cluster_stage_optimizer(const wl_cluster *c, int i, double fb, double *t_s, double *e_j)
{
    wl_core_op op = {.sm_clock_mhz = fb, .ignore_power_limit = 1};
    wl_core_result r;
    int rc = wl_core_evaluator_run(c->opt_ev[c->opt_of[i]], &op, &r);
    *t_s = rc ? 0 : r.time_ms * 1e-3;
    *e_j = rc ? 0 : r.energy_j;
    return rc;
}

int wl_cluster_stage_memory(const wl_cluster *c, int stage, wl_cluster_memory *out)
{
    memset(out, 0, sizeof *out);
    if (stage < 0 || stage >= c->p)
        return WL_EINVAL;
    const wl_cluster_config *g = &c->cfg;
    /* fp8: bf16 weights and the fp8 copies Transformer Engine caches */
    double P = c->params[stage], eb = g->dtype == WL_DT_FP8 ? 3.0 : wl_dtype_bytes(g->dtype);
    int nl = wl_cluster_stage_layers(c, stage);
    int train = g->mode == WL_MODE_TRAIN, mixed = g->dtype != WL_DT_FP32;
    out->weights_gb = P * eb / 1e9;
    if (train) {
        out->grads_gb = c->tparams[stage] * GRAD_BYTES / 1e9;
        out->optimizer_gb = opt_params(c, stage) * ((mixed ? MASTER_BYTES : 0) + ADAM_BYTES) / 1e9;
    }
    /* activations of the chunks in flight at the peak, from the simulated
     * schedule (1F1B: p - i micro-batches on stage i; interleaving more) */
    int inflight = c->peak[stage] > 0 ? c->peak[stage] : (train ? c->p - stage : 1);
    out->in_flight = train ? inflight : 1;
    /* a chunk in flight: the mean of this GPU's chunks (they differ only
     * when the partition is uneven) */
    double act = train ? inflight * c->act_layer_b * nl / c->v + c->act_peak_b : c->act_layer_b;
    if (c->decode) {
        /* the KV cache of every sequence of the replica at the full context:
         * K and V of this rank's key/value heads in each of its layers */
        const wl_core_model *m = &c->model;
        double kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
        double kvl = kvh >= g->tp ? kvh / g->tp : 1, hd = wl_core_model_head_dim(m);
        double seqs = (double)g->global_batch / g->dp;
        /* latent attention caches the latent and the shared rotary key */
        double per_tok = wl_core_model_is_mla(m) ? (double)(m->kv_lora_rank + m->qk_rope_head_dim)
                                                 : 2.0 * kvl * hd;
        act += nl * seqs * (double)(g->seq + g->gen) * per_tok * eb;
    }
    /* the last stage's fp32 logits and their gradient in the loss */
    if (stage == c->p - 1 && c->model.vocab_size > 0)
        act += (train ? 2.0 : 1.0) * 4.0 * (double)g->micro_batch * (double)g->seq / c->cp *
               (double)c->vocab / g->tp;
    out->activations_gb = act / 1e9;
    out->workspace_gb = CONTEXT_GB + NCCL_COMM_GB * c->ncomms;
    out->total_gb = out->weights_gb + out->grads_gb + out->optimizer_gb + out->activations_gb +
                    out->workspace_gb;
    return WL_OK;
}

double wl_cluster_memory_gb(const wl_cluster *c)
{
    double worst = 0;
    for (int i = 0; i < c->p; i++) {
        wl_cluster_memory mm;
        wl_cluster_stage_memory(c, i, &mm);
        if (mm.total_gb > worst)
            worst = mm.total_gb;
    }
    return worst;
}
