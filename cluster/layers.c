/* The kernels of one tensor-parallel shard of a transformer layer as
 * Megatron-LM runs it (megatron/core/transformer, tensor_parallel/layers.py),
 * and of the embedding and the LM head with its vocabulary-parallel loss.
 *
 * Megatron fuses what HF eager leaves apart: LayerNorm and RMSNorm are one
 * kernel each way (Apex/TE), bias + GeLU and bias + dropout + residual add
 * are one kernel each (jit-fused), the scaled masked softmax is one kernel,
 * and the weight gradients accumulate straight into fp32 main gradients
 * (gradient_accumulation_fusion). With tensor parallelism t (Shoeybi et al.
 * 2019) QKV and FC1 are column-parallel (their outputs split over t), the
 * attention runs on h/t heads, and the output projection and FC2 are
 * row-parallel (inputs split), each followed by an all-reduce of the T x d
 * activations: two in the forward, two in the backward (the conjugate f
 * operator before QKV and FC1). Sequence parallelism (Korthikanti et al.
 * 2022, sec. 4.2.2) splits the norms and dropouts over the sequence and
 * turns each all-reduce into a reduce-scatter after the row-parallel GEMM
 * and an all-gather before the column-parallel one; in the backward the
 * all-gather's conjugate (a reduce-scatter) overlaps the weight-gradient
 * GEMMs and the all-gather of the norm output is redone for them
 * (overlapped with the input-gradient GEMM).
 *
 * Recompute: selective reruns the attention core (QK^T, softmax, dropout,
 * PV) before its backward; full reruns the whole layer forward, its
 * collectives included (Korthikanti et al. 2022, sec. 5). */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const cl_build *b;
    wl_core_workload *wl;
    wl_dtype dt;
    int tc;
    long long B, s, kv, T, Ts, d, hl, kvl, hd, ffl, vl;
    int sp, t, rotary, swiglu, gelu, rms, bias;
    double p_hidden, p_attn;
    int rc;
} lb;

static void put(lb *L, const wl_kernel *k0)
{
    wl_kernel k = *k0;
    k.graphed = L->b->cfg->launch == WL_LAUNCH_GRAPHS; /* no host issue cost */
    if (!L->rc)
        L->rc = wl_core_workload_add(L->wl, &k);
}

static wl_kernel ew(wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel k = {.kind = WL_K_ELEMENTWISE, .op = op, .n = n, .batch = 1, .in_dtype = dt,
                   .acc_dtype = WL_DT_FP32};
    return k;
}

static void ewp(lb *L, wl_ew_op op, long long n, int bwd)
{
    wl_kernel k = ew(op, n, L->dt);
    k.bwd = bwd;
    put(L, &k);
}

static void rowp(lb *L, wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt, int bwd)
{
    wl_kernel k = {.kind = kind, .batch = rows, .n = dim, .in_dtype = dt, .acc_dtype = WL_DT_FP32,
                   .bwd = bwd};
    put(L, &k);
}

/* y = x W^T over T rows: m = out, n = T, k = in (cuBLAS as torch calls it) */
static void gemm(lb *L, long long m, long long n, long long k)
{
    wl_kernel g = {.kind = WL_K_GEMM, .m = m, .n = n, .k = k, .batch = 1, .in_dtype = L->dt,
                   .acc_dtype = L->tc ? L->dt : WL_DT_FP32, .tensor_core = L->tc};
    put(L, &g);
}

static void bgemm(lb *L, long long batch, long long m, long long n, long long k)
{
    wl_kernel g = {.kind = WL_K_GEMM, .m = m, .n = n, .k = k, .batch = batch, .in_dtype = L->dt,
                   .acc_dtype = L->tc ? L->dt : WL_DT_FP32, .tensor_core = L->tc};
    put(L, &g);
}

/* A linear layer's backward: input gradient (dgrad) then, unless split
 * off, the weight gradient (wgrad, into the fp32 main gradient) and the
 * bias gradient (a column sum). */
static void linear_dgrad(lb *L, long long in, long long out)
{
    gemm(L, in, L->T, out);
}

static void linear_wgrad(lb *L, long long in, long long out)
{
    gemm(L, in, out, L->T);
    if (L->bias)
        rowp(L, WL_K_REDUCE, out, L->T, L->dt, 0);
}

static void norm_f(lb *L)
{
    rowp(L, L->rms ? WL_K_RMSNORM : WL_K_LAYERNORM, L->Ts, L->d, L->dt, 0);
}

/* Apex/TE norm backward: the input gradient, then the weight (and bias)
 * gradients summed over the rows */
static void norm_b(lb *L, int with_w)
{
    rowp(L, L->rms ? WL_K_RMSNORM : WL_K_LAYERNORM, L->Ts, L->d, L->dt, 1);
    if (with_w)
        rowp(L, WL_K_REDUCE, L->d * (L->rms ? 1 : 2), L->Ts, WL_DT_FP32, 0);
}

static long long qkv_out(const lb *L)
{
    return (L->hl + 2 * L->kvl) * L->hd;
}

static long long fc1_out(const lb *L)
{
    return L->swiglu ? 2 * L->ffl : L->ffl;
}

static void core_f(lb *L)
{
    /* s queries against kv keys: kv = s in a full pass, the cached context
     * in a decode step */
    long long bh = L->B * L->hl, ss = bh * L->s * L->kv;
    if (L->kv != L->s) /* decode: this step's keys and values into the cache, in place */
        ewp(L, WL_EW_COPY, 2 * L->T * L->kvl * L->hd, 0);
    if (L->b->cfg->attention == WL_ATTN_FLASH) {
        wl_kernel k = {.kind = WL_K_ATTN_FLASH, .in_dtype = L->dt, .acc_dtype = WL_DT_FP32,
                       .tensor_core = L->tc, .batch = bh, .m = L->s, .n = L->kv, .k = L->hd,
                       .causal = L->b->m->style != WL_STYLE_BERT && L->s > 1,
                       .groups = L->kvl < L->hl ? (int)(L->hl / L->kvl) : 0};
        put(L, &k);
        return;
    }
    bgemm(L, bh, L->s, L->kv, L->hd);                  /* baddbmm Q K^T */
    rowp(L, WL_K_SOFTMAX, bh * L->s, L->kv, L->dt, 0); /* fused scale, mask, softmax */
    if (L->p_attn > 0)
        ewp(L, WL_EW_DROPOUT, ss, 0);
    bgemm(L, bh, L->s, L->hd, L->kv);                  /* bmm P V */
}

static void core_b(lb *L)
{
    long long bh = L->B * L->hl, ss = bh * L->s * L->s;
    if (L->b->cfg->attention == WL_ATTN_FLASH) {
        rowp(L, WL_K_REDUCE, bh * L->s, 2 * L->hd, L->dt, 0); /* rowsum(dO * O) */
        wl_kernel k = {.kind = WL_K_ATTN_FLASH, .in_dtype = L->dt, .acc_dtype = WL_DT_FP32,
                       .tensor_core = L->tc, .batch = bh, .m = L->s, .n = L->s, .k = L->hd,
                       .causal = L->b->m->style != WL_STYLE_BERT, .bwd = 1,
                       .groups = L->kvl < L->hl ? (int)(L->hl / L->kvl) : 0};
        put(L, &k);
        return;
    }
    bgemm(L, bh, L->s, L->s, L->hd); /* dP = dO V^T */
    bgemm(L, bh, L->s, L->hd, L->s); /* dV = P^T dO */
    if (L->p_attn > 0)
        ewp(L, WL_EW_DROPOUT_BWD, ss, 0);
    rowp(L, WL_K_SOFTMAX, bh * L->s, L->s, L->dt, 1);
    bgemm(L, bh, L->s, L->hd, L->s); /* dQ = dS K */
    bgemm(L, bh, L->s, L->hd, L->s); /* dK = dS^T Q */
}

/* bias + dropout + residual add, one jit-fused kernel over the local rows:
 * reads the sublayer output and the residual, writes the sum and the mask */
static void bda_f(lb *L)
{
    ewp(L, L->p_hidden > 0 ? WL_EW_TERNARY : WL_EW_ADD, L->Ts * L->d, 0);
}

static void bda_b(lb *L)
{
    if (L->p_hidden > 0)
        ewp(L, WL_EW_DROPOUT_BWD, L->Ts * L->d, 0);
}

static void layer_f(lb *L)
{
    long long d = L->d;
    norm_f(L);
    gemm(L, qkv_out(L), L->T, d);
    if (L->rotary) /* fused rotary embedding on q and k */
        ewp(L, WL_EW_MUL, L->T * (L->hl + L->kvl) * L->hd, 0);
    core_f(L);
    gemm(L, d, L->T, L->hl * L->hd);
    bda_f(L);
    norm_f(L);
    gemm(L, fc1_out(L), L->T, d);
    if (L->swiglu)
        ewp(L, WL_EW_SILU_MUL, L->T * L->ffl, 0);
    else
        ewp(L, L->gelu ? WL_EW_GELU : WL_EW_RELU, L->T * L->ffl, 0); /* fused bias + act */
    gemm(L, d, L->T, L->ffl);
    bda_f(L);
}

/* The backward of a layer in the order autograd runs it; with_w puts the
 * weight gradients in place (each linear's wgrad after its dgrad). */
static void layer_b(lb *L, int with_w)
{
    long long d = L->d;
    wl_recompute rc = L->b->cfg->recompute;
    if (rc == WL_RECOMPUTE_FULL)
        layer_f(L);
    bda_b(L);
    linear_dgrad(L, L->ffl, d); /* FC2 */
    if (with_w)
        linear_wgrad(L, L->ffl, d);
    if (L->swiglu)
        ewp(L, WL_EW_SILU_MUL, 2 * L->T * L->ffl, 1);
    else
        ewp(L, L->gelu ? WL_EW_GELU : WL_EW_RELU, L->T * L->ffl, 1);
    linear_dgrad(L, d, fc1_out(L)); /* FC1 */
    if (with_w)
        linear_wgrad(L, d, fc1_out(L));
    norm_b(L, with_w);
    ewp(L, WL_EW_ADD, L->Ts * d, 0); /* the residual's two gradients */
    bda_b(L);
    linear_dgrad(L, L->hl * L->hd, d); /* out projection */
    if (with_w)
        linear_wgrad(L, L->hl * L->hd, d);
    if (rc == WL_RECOMPUTE_SELECTIVE)
        core_f(L);
    core_b(L);
    if (L->rotary)
        ewp(L, WL_EW_MUL, L->T * (L->hl + L->kvl) * L->hd, 0);
    linear_dgrad(L, d, qkv_out(L)); /* QKV */
    if (with_w)
        linear_wgrad(L, d, qkv_out(L));
    norm_b(L, with_w);
    ewp(L, WL_EW_ADD, L->Ts * d, 0);
}

/* The weight gradients a split schedule runs apart (W): the four GEMMs
 * with their bias sums, and the two norms' parameter sums. */
static void layer_w(lb *L)
{
    linear_wgrad(L, L->ffl, L->d);
    linear_wgrad(L, L->d, fc1_out(L));
    linear_wgrad(L, L->hl * L->hd, L->d);
    linear_wgrad(L, L->d, qkv_out(L));
    for (int i = 0; i < 2; i++)
        rowp(L, WL_K_REDUCE, L->d * (L->rms ? 1 : 2), L->Ts, WL_DT_FP32, 0);
}

/* VocabParallelEmbedding: mask the ids outside this rank's rows, gather,
 * zero the masked rows; then the all-reduce (reduce-scatter with sequence
 * parallelism), learned positions added, embedding dropout. Backward: the
 * table's gradient is a scatter-add of the T rows into the zeroed table. */
static void emb_f(lb *L)
{
    ewp(L, WL_EW_COPY, L->T * L->d, 0);
    if (!L->rotary)
        ewp(L, WL_EW_ADD, L->Ts * L->d, 0);
    if (L->p_hidden > 0)
        ewp(L, WL_EW_DROPOUT, L->Ts * L->d, 0);
}

static void emb_b(lb *L)
{
    if (L->p_hidden > 0)
        ewp(L, WL_EW_DROPOUT_BWD, L->Ts * L->d, 0);
    wl_kernel f = ew(WL_EW_FILL, L->vl * L->d, WL_DT_FP32);
    put(L, &f);
    ewp(L, WL_EW_ADD, L->T * L->d, 0);
}

/* Final norm, the column-parallel LM head (V/t outputs) and Megatron's
 * vocab_parallel_cross_entropy on fp32 logits: max over the local vocabulary
 * (then an all-reduce of T floats), subtract and exp, sum (all-reduce),
 * log and the target's logit. Backward: softmax minus the one-hot target,
 * scaled by the incoming gradient, then the head's GEMMs. */
static void head_f(lb *L)
{
    long long n = L->T * L->vl;
    norm_f(L);
    gemm(L, L->vl, L->T, L->d);
    wl_kernel c = ew(WL_EW_CAST_FP32, n, L->dt);
    put(L, &c);
    rowp(L, WL_K_REDUCE, L->T, L->vl, WL_DT_FP32, 0);
    wl_kernel e = ew(WL_EW_UNSPEC_SCALAR, n, WL_DT_FP32); /* x - max, exp */
    put(L, &e);
    rowp(L, WL_K_REDUCE, L->T, L->vl, WL_DT_FP32, 0);
}

static void head_b(lb *L, int with_w)
{
    long long n = L->T * L->vl;
    wl_kernel g = ew(WL_EW_UNSPEC_TENSOR, n, WL_DT_FP32); /* softmax - onehot, x grad */
    put(L, &g);
    wl_kernel c = ew(WL_EW_CAST_BF16, n, WL_DT_FP32);
    put(L, &c);
    linear_dgrad(L, L->d, L->vl);
    if (with_w)
        gemm(L, L->d, L->vl, L->T);
    norm_b(L, 1);
}

static void head_w(lb *L)
{
    gemm(L, L->d, L->vl, L->T);
}

long long wl_cluster_padded_vocab(const wl_core_model *m, int tp)
{
    long long v = m->vocab_size > 0 ? m->vocab_size : 0, q = 128LL * tp;
    return (v + q - 1) / q * q;
}

static void setup(lb *L, const cl_build *b)
{
    const wl_core_model *m = b->m;
    const wl_cluster_config *c = b->cfg;
    memset(L, 0, sizeof *L);
    L->b = b;
    L->dt = c->dtype;
    L->tc = c->dtype != WL_DT_FP32;
    L->t = c->tp;
    L->sp = c->sequence_parallel && c->tp > 1;
    L->B = c->micro_batch;
    L->s = c->mode == WL_MODE_DECODE ? 1 : c->seq;
    L->kv = c->mode == WL_MODE_DECODE ? b->kv_len : L->s;
    L->T = L->B * L->s;
    L->Ts = L->sp ? L->T / L->t : L->T;
    L->d = m->d_model;
    long long kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    L->hd = m->d_model / m->heads;
    L->hl = m->heads / c->tp;
    /* fewer key/value heads than ranks: each rank keeps a replica of one */
    L->kvl = kvh >= c->tp ? kvh / c->tp : 1;
    L->ffl = m->d_ff / c->tp;
    L->vl = b->vocab / c->tp;
    L->rotary = m->positions == WL_POS_ROTARY;
    L->swiglu = m->activation == WL_ACT_SWIGLU;
    L->gelu = m->activation == WL_ACT_GELU || m->activation == WL_ACT_GELU_TANH;
    L->rms = m->norm == WL_NORM_RMSNORM;
    L->bias = m->style != WL_STYLE_LLAMA;
    /* inference runs the model in eval mode: no dropout */
    L->p_hidden = c->mode == WL_MODE_TRAIN ? m->hidden_dropout : 0;
    L->p_attn = c->mode == WL_MODE_TRAIN ? m->attention_dropout : 0;
}

/* Collective sizes of one layer's shard (bytes of the whole T x d tensor). */
static double act_bytes(const lb *L)
{
    return (double)L->T * (double)L->d * wl_dtype_bytes(L->dt);
}

static int new_piece(cl_piece *p, const char *name, lb *L)
{
    p->wl = wl_core_workload_create(name);
    p->window[0] = p->window[1] = -1;
    L->wl = p->wl;
    L->rc = p->wl ? WL_OK : WL_ENOMEM;
    return L->rc;
}

int wl_cluster_build_pieces(const cl_build *b, cl_piece *pieces, wl_error *err)
{
    memset(pieces, 0, sizeof(cl_piece) * PC_COUNT);
    lb L;
    setup(&L, b);
    const wl_cluster_group *g = &b->tp;
    int t = b->cfg->tp, sp = L.sp, train = b->cfg->mode == WL_MODE_TRAIN;
    double S = act_bytes(&L);
    /* forward collectives of a layer: two all-reduces, or with sequence
     * parallelism two all-gathers and two reduce-scatters */
    double tp_f = 0;
    if (t > 1)
        tp_f = sp ? 2 * (wl_cluster_coll_time(g, WL_COLL_ALL_GATHER, S) +
                         wl_cluster_coll_time(g, WL_COLL_REDUCE_SCATTER, S))
                  : 2 * wl_cluster_coll_time(g, WL_COLL_ALL_REDUCE, S);
    /* backward: the conjugates. Exposed: with sequence parallelism the two
     * all-gathers of the incoming gradient; overlapped with the QKV and FC1
     * weight gradients: the input gradient's all-reduce (reduce-scatter) and
     * the redone all-gather of the norm output. */
    double exp_b = t > 1 && sp ? 2 * wl_cluster_coll_time(g, WL_COLL_ALL_GATHER, S) : 0;
    double ov_b = 0;
    if (t > 1)
        ov_b = sp ? wl_cluster_coll_time(g, WL_COLL_REDUCE_SCATTER, S) +
                        wl_cluster_coll_time(g, WL_COLL_ALL_GATHER, S)
                  : wl_cluster_coll_time(g, WL_COLL_ALL_REDUCE, S);
    int rc = WL_OK;
    if ((rc = new_piece(&pieces[PC_LAYER_F], "layer forward", &L)))
        goto done;
    layer_f(&L);
    pieces[PC_LAYER_F].comm_s = tp_f;
    if (train) {
        if ((rc = new_piece(&pieces[PC_LAYER_B], "layer backward", &L)))
            goto done;
        layer_b(&L, !b->split_w);
        cl_piece *pb = &pieces[PC_LAYER_B];
        pb->comm_s = exp_b + (b->cfg->recompute == WL_RECOMPUTE_FULL ? tp_f : 0);
        if (b->split_w) {
            /* the weight gradients run later: nothing to hide behind */
            pb->comm_s += 2 * ov_b;
            if ((rc = new_piece(&pieces[PC_LAYER_W], "layer weight gradients", &L)))
                goto done;
            layer_w(&L);
        } else if (t > 1) {
            pb->overlap_s = ov_b; /* QKV's and FC1's weight gradients hide one each */
            pb->window[0] = PC_WIN_QKV;
            pb->window[1] = PC_WIN_FC1;
            if ((rc = new_piece(&pieces[PC_WIN_QKV], "QKV weight gradient", &L)))
                goto done;
            linear_wgrad(&L, L.d, qkv_out(&L));
            if ((rc = new_piece(&pieces[PC_WIN_FC1], "FC1 weight gradient", &L)))
                goto done;
            linear_wgrad(&L, L.d, fc1_out(&L));
        }
    }
    if (b->m->vocab_size > 0) {
        double emb_c = t > 1 ? wl_cluster_coll_time(g, sp ? WL_COLL_REDUCE_SCATTER : WL_COLL_ALL_REDUCE, S) : 0;
        if ((rc = new_piece(&pieces[PC_EMB_F], "embedding forward", &L)))
            goto done;
        emb_f(&L);
        pieces[PC_EMB_F].comm_s = emb_c;
        if ((rc = new_piece(&pieces[PC_HEAD_F], "LM head and loss forward", &L)))
            goto done;
        head_f(&L);
        /* the all-gather before the head (sequence parallel) and the two
         * all-reduces of T floats in the loss */
        pieces[PC_HEAD_F].comm_s =
            t > 1 ? (sp ? wl_cluster_coll_time(g, WL_COLL_ALL_GATHER, S) : 0) +
                        2 * wl_cluster_coll_time(g, WL_COLL_ALL_REDUCE, 4.0 * (double)L.T)
                  : 0;
        if (train) {
            if ((rc = new_piece(&pieces[PC_EMB_B], "embedding backward", &L)))
                goto done;
            emb_b(&L);
            pieces[PC_EMB_B].comm_s = t > 1 && sp ? wl_cluster_coll_time(g, WL_COLL_ALL_GATHER, S) : 0;
            if ((rc = new_piece(&pieces[PC_HEAD_B], "LM head backward", &L)))
                goto done;
            head_b(&L, !b->split_w);
            if (t > 1) {
                double c = wl_cluster_coll_time(g, sp ? WL_COLL_REDUCE_SCATTER : WL_COLL_ALL_REDUCE, S);
                if (b->split_w) {
                    pieces[PC_HEAD_B].comm_s = c;
                } else {
                    pieces[PC_HEAD_B].overlap_s = c;
                    pieces[PC_HEAD_B].window[0] = PC_WIN_HEAD;
                    if ((rc = new_piece(&pieces[PC_WIN_HEAD], "LM head weight gradient", &L)))
                        goto done;
                    head_w(&L);
                }
            }
            if (b->split_w) {
                /* the head's weight gradient joins the last layer's W */
                if ((rc = new_piece(&pieces[PC_WIN_HEAD], "LM head weight gradient", &L)))
                    goto done;
                head_w(&L);
            }
        }
    }
    rc = L.rc;
done:
    if (rc) {
        wl_error_set(err, "cluster", 0, "", "cannot build the layer kernels: %s",
                     wl_core_strerror(rc));
        wl_cluster_free_pieces(pieces);
        return rc;
    }
    for (int i = 0; i < PC_COUNT; i++) {
        if (!pieces[i].wl)
            continue;
        if (wl_core_workload_count(pieces[i].wl) == 0) {
            wl_core_workload_free(pieces[i].wl);
            pieces[i].wl = NULL;
            continue;
        }
        rc = wl_core_evaluator_create(b->gpu, pieces[i].wl, wl_core_latency_tiled, &pieces[i].ev);
        if (rc) {
            wl_error_set(err, "cluster", 0, "", "cannot prepare the %s kernels: %s",
                         wl_core_workload_name(pieces[i].wl), wl_core_strerror(rc));
            wl_cluster_free_pieces(pieces);
            return rc;
        }
    }
    return WL_OK;
}

void wl_cluster_free_pieces(cl_piece *pieces)
{
    for (int i = 0; i < PC_COUNT; i++) {
        wl_core_evaluator_free(pieces[i].ev);
        wl_core_workload_free(pieces[i].wl);
        pieces[i].ev = NULL;
        pieces[i].wl = NULL;
    }
}

/* Parameters of one layer on one rank: QKV, output projection, FC1, FC2
 * (and their biases), the two norms (replicated). */
double wl_cluster_layer_params(const wl_core_model *m, int tp)
{
    double d = m->d_model, hd = d / m->heads;
    double kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    double q = m->heads * hd, kv = kvh * hd, ff = m->d_ff;
    double fc1 = m->activation == WL_ACT_SWIGLU ? 2 * ff : ff;
    int bias = m->style != WL_STYLE_LLAMA;
    double w = (d * (q + 2 * kv) + q * d + d * fc1 + ff * d) / tp;
    double bb = bias ? ((q + 2 * kv) + fc1) / tp + 2 * d : 0;
    double norms = m->norm == WL_NORM_RMSNORM ? 2 * d : 4 * d;
    return w + bb + norms;
}

/* Activation bytes one layer keeps per micro-batch (Korthikanti et al.
 * 2022, sec. 4, Eq. 1-2 and Table 2), generalised from their 4h MLP and
 * full multi-head attention to the model's FFN width and key/value heads:
 *   attention: input 2sbh, Q 2sbh, K and V 2 x 2 sb kv_dim, output-projection
 *              input 2sbh, dropout mask sbh; core: scores' softmax 2as^2b,
 *              dropout mask as^2b and output 2as^2b (5as^2b), none with
 *              flash attention (which keeps its 4-byte row statistics);
 *   MLP:       input 2sbh, FC1 output 2sb ff' (ff' = 2 ff for SwiGLU), the
 *              activation's output 2 sb ff, dropout mask sbh;
 *   norms:     2 x 2sbh.
 * Tensor parallelism splits Q, K, V, the core, the projection input and the
 * MLP's inner tensors over t; sequence parallelism splits the rest too.
 * Selective recompute keeps no core; full keeps the layer's input (2sbh,
 * over t with sequence parallelism). Scaled by the element size over 2. */
double wl_cluster_layer_act_bytes(const wl_core_model *m, const wl_cluster_config *c)
{
    double s = (double)c->seq, b = (double)c->micro_batch, h = m->d_model, t = c->tp;
    double e = wl_dtype_bytes(c->dtype) / 2.0;
    int sp = c->sequence_parallel && c->tp > 1;
    if (c->recompute == WL_RECOMPUTE_FULL)
        return 2.0 * s * b * h * e / (sp ? t : 1);
    double kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    double kvd = kvh * h / m->heads;
    double ff = m->d_ff, ff1 = m->activation == WL_ACT_SWIGLU ? 2 * ff : ff;
    double mask_h = m->hidden_dropout > 0 ? 1.0 : 0.0;
    double rep = (2 + 2 + 2 + 2 * mask_h) * s * b * h + 2 * s * b * h; /* norms' and GEMMs' inputs, masks */
    double split = 2 * s * b * h + 4 * s * b * kvd + 2 * s * b * h + 2 * s * b * ff1 + 2 * s * b * ff;
    double core_b = 0; /* bytes */
    if (c->recompute == WL_RECOMPUTE_NONE)
        core_b = c->attention == WL_ATTN_FLASH
                     ? 4.0 * m->heads * s * b /* fp32 log-sum-exp per row */
                     : (m->attention_dropout > 0 ? 5.0 : 2.0) * m->heads * s * s * b * e;
    return ((sp ? rep / t : rep) + split / t) * e + core_b / t;
}

double wl_cluster_layer_act_peak_bytes(const wl_core_model *m, const wl_cluster_config *c)
{
    wl_cluster_config all = *c;
    all.recompute = WL_RECOMPUTE_NONE;
    return wl_cluster_layer_act_bytes(m, &all);
}
