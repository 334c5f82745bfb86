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

#include "layers_internal.h"

/* A linear layer's backward: input gradient (dgrad) then, unless split
 * off, the weight gradient (wgrad, into the fp32 main gradient) and the
 * bias gradient (a column sum). */
static void linear_dgrad(lb *L, long long in, long long out)
{
    to_fp8(L, L->T * out);
    gemm(L, in, L->T, out);
}

static void linear_wgrad(lb *L, long long in, long long out)
{
    if (L->lora)
        return; /* LoRA: the base weights are frozen */
    gemm(L, in, out, L->T);
    if (L->bias)
        rowp(L, WL_K_REDUCE, out, L->T, L->dt, 0);
}

static void norm_f(lb *L)
{
    rowp(L, L->rms ? WL_K_RMSNORM : WL_K_LAYERNORM, L->Ts, L->d, L->dt, 0);
}

/* The norm's weight (and bias) gradients: Apex's cuComputePartGradGammaBeta
 * (TE's alike) reads dy and x again, in the activations' precision, and
 * sums over the rows; a REDUCE of d (2d) columns over the rows reads those
 * Ts x d x 2 elements. */
static void norm_w(lb *L)
{
    if (L->lora)
        return;
    rowp(L, WL_K_REDUCE, L->d * (L->rms ? 1 : 2), L->Ts, L->dt, 0);
}

/* Apex/TE norm backward: the input gradient, then the weight gradients */
static void norm_b(lb *L, int with_w)
{
    rowp(L, L->rms ? WL_K_RMSNORM : WL_K_LAYERNORM, L->Ts, L->d, L->dt, 1);
    if (with_w)
        norm_w(L);
}

static long long qkv_out(const lb *L)
{
    return (L->hl + 2 * L->kvl) * L->hd;
}

static long long fc1_out(const lb *L)
{
    return L->swiglu ? 2 * L->ffl : L->ffl;
}

/* attention over q queries a sequence against n keys, for bh heads */
static void attend(lb *L, long long bh, long long q, long long n, int causal)
{
    if (L->b->cfg->attention == WL_ATTN_FLASH) {
        wl_kernel k = {.kind = WL_K_ATTN_FLASH, .in_dtype = L->dt, .acc_dtype = WL_DT_FP32,
                       .tensor_core = L->tc, .batch = bh, .m = q, .n = n,
                       .k = (L->hdq + L->hdv) / 2, .causal = causal,
                       .groups = L->kvl < L->hl ? (int)(L->hl / L->kvl) : 0};
        put(L, &k);
        return;
    }
    bgemm(L, bh, q, n, L->hdq);
    rowp(L, WL_K_SOFTMAX, bh * q, n, L->dt, 0);
    bgemm(L, bh, q, L->hdv, n);
}

/* Megatron's fused softmax over a causal mask (FusedScaleMaskSoftmax with
 * scaled_upper_triang_masked_softmax, core/latency.c): a full causal pass
 * in 16-bit precision, keys over 16 and at most 4096, queries, keys and
 * batch x heads multiples of 4 (megatron/core/fusions/fused_softmax.py,
 * is_kernel_available); otherwise ATen's softmax over the whole row. */
static int tri_softmax(const lb *L)
{
    return L->b->m->style != WL_STYLE_BERT && L->kv == L->s && L->s > 16 && L->s <= 4096 &&
           L->s % 4 == 0 && (L->B * L->hl) % 4 == 0 && (L->dt == WL_DT_FP16 || L->dt == WL_DT_BF16);
}

static void softmax_k(lb *L, int bwd)
{
    wl_kernel k = {.kind = WL_K_SOFTMAX, .batch = L->B * L->hl * L->s, .n = L->kv,
                   .in_dtype = L->dt, .acc_dtype = WL_DT_FP32, .bwd = bwd,
                   .causal = tri_softmax(L) ? 2 : 0};
    put(L, &k);
}

static void core_f(lb *L)
{
    /* s queries against kv keys: kv = s in a full pass, the cached context
     * in a decode step */
    long long bh = L->B * L->hl, ss = bh * L->s * L->kv;
    if (L->b->cfg->mode == WL_MODE_DECODE && L->kv != L->s) /* this step's keys and values into
                                                                the cache, in place */
        ewp(L, WL_EW_COPY, 2 * L->T * L->kvl * L->hd, 0);
    /* a serving step's prompt chunk: its queries against the prompt so far
     * (causal over the prompt's keys) */
    if (L->chunk > 0)
        attend(L, L->hl, L->chunk, L->b->cfg->seq, 1);
    if (L->b->cfg->attention == WL_ATTN_FLASH) {
        /* MLA's wider query/key heads: the kernel's k is the mean of the
         * two widths, which keeps QK^T + PV's FLOPs */
        wl_kernel k = {.kind = WL_K_ATTN_FLASH, .in_dtype = L->dt, .acc_dtype = WL_DT_FP32,
                       .tensor_core = L->tc, .batch = bh, .m = L->s, .n = L->kv,
                       .k = (L->hdq + L->hdv) / 2,
                       .causal = L->b->m->style != WL_STYLE_BERT && L->s > 1,
                       .groups = L->kvl < L->hl ? (int)(L->hl / L->kvl) : 0};
        put(L, &k);
        return;
    }
    bgemm(L, bh, L->s, L->kv, L->hdq);                 /* baddbmm Q K^T */
    softmax_k(L, 0);                                   /* fused scale, mask, softmax */
    if (L->p_attn > 0)
        ewp(L, WL_EW_DROPOUT, ss, 0);
    bgemm(L, bh, L->s, L->hdv, L->kv);                 /* bmm P V */
}

static void core_b(lb *L)
{
    long long bh = L->B * L->hl, ss = bh * L->s * L->s;
    if (L->b->cfg->attention == WL_ATTN_FLASH) {
        rowp(L, WL_K_REDUCE, bh * L->s, 2 * L->hdv, L->dt, 0); /* rowsum(dO * O) */
        wl_kernel k = {.kind = WL_K_ATTN_FLASH, .in_dtype = L->dt, .acc_dtype = WL_DT_FP32,
                       .tensor_core = L->tc, .batch = bh, .m = L->s, .n = L->kv,
                       .k = (L->hdq + L->hdv) / 2,
                       .causal = L->b->m->style != WL_STYLE_BERT, .bwd = 1,
                       .groups = L->kvl < L->hl ? (int)(L->hl / L->kvl) : 0};
        put(L, &k);
        return;
    }
    bgemm(L, bh, L->s, L->s, L->hdv); /* dP = dO V^T */
    bgemm(L, bh, L->s, L->hdv, L->s); /* dV = P^T dO */
    if (L->p_attn > 0)
        ewp(L, WL_EW_DROPOUT_BWD, ss, 0);
    softmax_k(L, 1);
    bgemm(L, bh, L->s, L->hdq, L->s); /* dQ = dS K */
    bgemm(L, bh, L->s, L->hdq, L->s); /* dK = dS^T Q */
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

/* The attention's input projections: one fused QKV GEMM (column-
 * parallel), or latent attention's (Megatron-Core's MLASelfAttention):
 * the down-projections of the query and of the key/value latent with the
 * shared rotary key, replicated on every tensor-parallel rank, their
 * RMSNorms, and the column-parallel up-projections to the heads. */
static long long mla_kv_up(const lb *L)
{
    return L->hl * (L->hdq - L->rope + L->hdv);
}

static void qkv_f(lb *L)
{
    if (!L->mla) {
        gemm(L, qkv_out(L), L->T, L->d);
        return;
    }
    long long q = L->hl * L->hdq;
    if (L->qr > 0) {
        gemm(L, L->qr, L->T, L->d);
        rowp(L, WL_K_RMSNORM, L->T, L->qr, L->dt, 0);
        gemm(L, q, L->T, L->qr);
    } else {
        gemm(L, q, L->T, L->d);
    }
    gemm(L, L->kvr + L->rope, L->T, L->d);
    rowp(L, WL_K_RMSNORM, L->T, L->kvr, L->dt, 0);
    gemm(L, mla_kv_up(L), L->T, L->kvr);
}

static void lin_b(lb *L, long long in, long long out, int with_w)
{
    linear_dgrad(L, in, out);
    if (with_w)
        linear_wgrad(L, in, out);
}

static void qkv_b(lb *L, int with_w)
{
    if (!L->mla) {
        lin_b(L, L->d, qkv_out(L), with_w);
        return;
    }
    long long q = L->hl * L->hdq;
    lin_b(L, L->kvr, mla_kv_up(L), with_w);
    rowp(L, WL_K_RMSNORM, L->T, L->kvr, L->dt, 1);
    lin_b(L, L->d, L->kvr + L->rope, with_w);
    if (L->qr > 0) {
        lin_b(L, L->qr, q, with_w);
        rowp(L, WL_K_RMSNORM, L->T, L->qr, L->dt, 1);
        lin_b(L, L->d, L->qr, with_w);
    } else {
        lin_b(L, L->d, q, with_w);
    }
}

static void qkv_w(lb *L)
{
    if (!L->mla) {
        linear_wgrad(L, L->d, qkv_out(L));
        return;
    }
    linear_wgrad(L, L->kvr, mla_kv_up(L));
    linear_wgrad(L, L->d, L->kvr + L->rope);
    if (L->qr > 0) {
        linear_wgrad(L, L->qr, L->hl * L->hdq);
        linear_wgrad(L, L->d, L->qr);
    } else {
        linear_wgrad(L, L->d, L->hl * L->hdq);
    }
}

/* rotary embedding on q and k, fused: every head's (MLA: the rotary part of
 * the query heads and the one shared key) */
static void rotary(lb *L)
{
    if (L->rotary)
        ewp(L, WL_EW_MUL, L->mla ? L->T * (L->hl + 1) * L->rope : L->T * (L->hl + L->kvl) * L->hd, 0);
}

static void attn_f(lb *L)
{
    norm_f(L);
    qkv_f(L);
    lora_f(L, LP_QKV);
    rotary(L);
    core_f(L);
    to_fp8(L, L->T * L->hl * L->hdv);
    gemm(L, L->d, L->T, L->hl * L->hdv);
    lora_f(L, LP_PROJ);
    bda_f(L);
}

static void attn_b(lb *L, int with_w)
{
    bda_b(L);
    lora_b(L, LP_PROJ, with_w);
    lin_b(L, L->hl * L->hdv, L->d, with_w); /* out projection */
    if (L->b->cfg->recompute == WL_RECOMPUTE_SELECTIVE)
        core_f(L);
    core_b(L);
    rotary(L);
    lora_b(L, LP_QKV, with_w);
    qkv_b(L, with_w);
    norm_b(L, with_w);
    ewp(L, WL_EW_ADD, L->Ts * L->d, 0); /* the residual's two gradients */
}

/* the activation over n hidden elements, fused with FC1's bias */
static void act_f(lb *L, long long n)
{
    if (L->swiglu)
        ewp(L, WL_EW_SILU_MUL, n, 0);
    else
        ewp(L, L->gelu ? WL_EW_GELU : WL_EW_RELU, n, 0);
}

static void act_b(lb *L, long long n)
{
    if (L->swiglu)
        ewp(L, WL_EW_SILU_MUL, 2 * n, 1);
    else
        ewp(L, L->gelu ? WL_EW_GELU : WL_EW_RELU, n, 1);
}

/* an MLP of ff hidden units on this rank over the T tokens */
static void mlp_core_f(lb *L, long long ff)
{
    gemm(L, L->swiglu ? 2 * ff : ff, L->T, L->d);
    lora_f(L, LP_FC1);
    act_f(L, L->T * ff);
    gemm(L, L->d, L->T, ff);
    lora_f(L, LP_FC2);
}

static void mlp_core_b(lb *L, long long ff, int with_w)
{
    lora_b(L, LP_FC2, with_w);
    lin_b(L, ff, L->d, with_w); /* FC2 */
    act_b(L, L->T * ff);
    lora_b(L, LP_FC1, with_w);
    lin_b(L, L->d, L->swiglu ? 2 * ff : ff, with_w); /* FC1 */
}

/* The tokens' copies a rank routes: each of its T tokens to top-k experts,
 * padded to the capacity factor. */
static long long routed_rows(const lb *L)
{
    return L->El * L->ne;
}

/* A MoE layer's token exchange one way (the dispatch, or the combine back)
 * over the expert-parallel group: an all-to-all of the routed copies. With
 * node-limited routing (the model's route_nodes, DeepSeek-V3's M = 4,
 * report sec. 3.2.2) a token crosses InfiniBand once to each of its
 * min(M, nodes) nodes, to the GPU of its own in-node index, (nodes - 1) /
 * nodes of them remote, and NVLink forwards it to its experts there (the
 * (k - 1) / k of the copies not on that GPU); DeepSeek's kernels pipeline
 * the two, so the slower sets the time. */
static double moe_a2a(const lb *L)
{
    const wl_cluster_group *g = &L->b->ep;
    double row = (double)L->d * wl_dtype_bytes(L->dt), copies = (double)routed_rows(L) * row;
    int M = L->b->m->route_nodes, k = g->per_node > 0 ? g->per_node : 1;
    int nodes = (g->n + k - 1) / k;
    if (M <= 0 || nodes <= 1 || !(g->nic_gbs > 0))
        return wl_cluster_coll_time(g, WL_COLL_ALL_TO_ALL, copies);
    double reach = M < nodes ? M : nodes;
    double ib = (double)L->T * reach * (nodes - 1) / nodes * row / (g->nic_gbs * 1e9);
    double nv = copies * (k - 1) / k / (g->fabric_gbs * 1e9);
    return g->alpha_us * 1e-6 + (ib > nv ? ib : nv);
}

/* A mixture-of-experts FFN (Megatron-Core's MoELayer with the all-to-all
 * token dispatcher and grouped GEMMs): the router's logits (a bias-free
 * linear to the experts), its scores and top-k, the permutation of the
 * token copies into expert order, the all-to-all dispatch over the expert-
 * parallel group (a collective of the piece), each local expert's FC1,
 * activation and FC2 as one grouped GEMM each over its capacity of tokens,
 * the all-to-all back, the un-permutation weighted by the scores, and the
 * shared experts, a dense MLP on every token. The experts keep the layer's
 * tensor parallelism, so the row-parallel collective after the FFN is the
 * dense layer's. */
static void moe_f(lb *L)
{
    long long T = L->T, d = L->d, rows = routed_rows(L), fc1 = L->swiglu ? 2 * L->ffe : L->ffe;
    norm_f(L);
    hgemm(L, L->E, T, d);
    rowp(L, WL_K_SOFTMAX, T, L->E, WL_DT_FP32, 0);
    rowp(L, WL_K_REDUCE, T, L->E, WL_DT_FP32, 0);
    ewp(L, WL_EW_COPY, T * L->topk * d, 0);
    to_fp8(L, rows * d); /* the received tokens */
    gemm_t(L, L->gdt, L->El, fc1, L->ne, d);
    act_f(L, rows * L->ffe);
    gemm_t(L, L->gdt, L->El, d, L->ne, L->ffe);
    ewp(L, WL_EW_TERNARY, T * L->topk * d, 0);
    if (L->shf > 0)
        mlp_core_f(L, L->shf);
    bda_f(L);
}

static void expert_wgrad(lb *L, long long in, long long out)
{
    if (L->lora)
        return;
    gemm_t(L, L->gdt, L->El, in, out, L->ne);
}

static void moe_b(lb *L, int with_w)
{
    long long T = L->T, d = L->d, rows = routed_rows(L), fc1 = L->swiglu ? 2 * L->ffe : L->ffe;
    bda_b(L);
    if (L->shf > 0)
        mlp_core_b(L, L->shf, with_w);
    ewp(L, WL_EW_TERNARY, T * L->topk * d, 0); /* to each copy, and to its score */
    to_fp8(L, rows * d);
    gemm_t(L, L->gdt, L->El, L->ffe, L->ne, d); /* FC2 input gradient */
    if (with_w)
        expert_wgrad(L, L->ffe, d);
    act_b(L, rows * L->ffe);
    to_fp8(L, rows * fc1);
    gemm_t(L, L->gdt, L->El, d, L->ne, fc1);    /* FC1 input gradient */
    if (with_w)
        expert_wgrad(L, d, fc1);
    ewp(L, WL_EW_ADD, T * L->topk * d, 0);      /* the copies' gradients summed per token */
    rowp(L, WL_K_SOFTMAX, T, L->E, WL_DT_FP32, 1);
    hgemm(L, d, T, L->E);
    if (with_w)
        hgemm(L, d, L->E, T);
    norm_b(L, with_w);
    ewp(L, WL_EW_ADD, L->Ts * d, 0);
}

static void moe_w(lb *L)
{
    long long fc1 = L->swiglu ? 2 * L->ffe : L->ffe;
    if (L->shf > 0) {
        linear_wgrad(L, L->shf, L->d);
        linear_wgrad(L, L->d, L->swiglu ? 2 * L->shf : L->shf);
    }
    expert_wgrad(L, L->ffe, L->d);
    expert_wgrad(L, L->d, fc1);
    hgemm(L, L->d, L->E, L->T);
}

static void mlp_f(lb *L)
{
    if (L->moe) {
        moe_f(L);
        return;
    }
    norm_f(L);
    mlp_core_f(L, L->ffl);
    bda_f(L);
}

static void mlp_b(lb *L, int with_w)
{
    if (L->moe) {
        moe_b(L, with_w);
        return;
    }
    bda_b(L);
    mlp_core_b(L, L->ffl, with_w);
    norm_b(L, with_w);
    ewp(L, WL_EW_ADD, L->Ts * L->d, 0);
}

static void layer_f(lb *L)
{
    attn_f(L);
    mlp_f(L);
}

/* The backward of a layer in the order autograd runs it; with_w puts the
 * weight gradients in place (each linear's wgrad after its dgrad). */
static void layer_b(lb *L, int with_w)
{
    if (L->b->cfg->recompute == WL_RECOMPUTE_FULL)
        layer_f(L);
    mlp_b(L, with_w);
    attn_b(L, with_w);
}

/* The weight gradients a split schedule runs apart (W): the GEMMs with
 * their bias sums, and the two norms' parameter sums. */
static void layer_w(lb *L)
{
    if (L->moe) {
        moe_w(L);
    } else {
        linear_wgrad(L, L->ffl, L->d);
        lora_w(L, LP_FC2);
        linear_wgrad(L, L->d, fc1_out(L));
        lora_w(L, LP_FC1);
    }
    linear_wgrad(L, L->hl * L->hdv, L->d);
    lora_w(L, LP_PROJ);
    qkv_w(L);
    lora_w(L, LP_QKV);
    for (int i = 0; i < 2; i++)
        norm_w(L);
}

/* The weight gradient the backward's second collective hides behind: FC1's
 * (a MoE layer's: its experts' grouped FC1) */
static void fc1_window(lb *L)
{
    if (L->moe)
        expert_wgrad(L, L->d, L->swiglu ? 2 * L->ffe : L->ffe);
    else
        linear_wgrad(L, L->d, fc1_out(L));
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
    if (L->lora)
        return; /* a frozen table: no gradient */
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
    hgemm(L, L->vl, L->T, L->d);
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
    hgemm(L, L->d, L->T, L->vl);
    if (with_w && !L->lora)
        hgemm(L, L->d, L->vl, L->T);
    norm_b(L, 1);
}

static void head_w(lb *L)
{
    if (!L->lora)
        hgemm(L, L->d, L->vl, L->T);
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
    L->dt = wl_cluster_act_dtype(c->dtype);
    L->gdt = c->dtype; /* the linear layers' GEMMs */
    L->tc = c->dtype != WL_DT_FP32;
    L->t = c->tp;
    L->sp = c->sequence_parallel && c->tp > 1;
    L->B = c->micro_batch;
    L->cp = c->cp > 1 ? c->cp : 1;
    L->chunk = c->mode == WL_MODE_DECODE ? b->chunk : 0;
    /* context parallelism: a rank's queries are its 1/cp of the sequence,
     * its attention meets every key over the ring */
    L->s = c->mode == WL_MODE_DECODE ? 1 : c->seq / L->cp;
    L->kv = c->mode == WL_MODE_DECODE ? b->kv_len : c->seq;
    L->T = L->B * L->s;
    if (c->mode == WL_MODE_DECODE)
        L->T += b->chunk; /* prompt tokens riding in the step */
    L->Ts = L->sp ? L->T / L->t : L->T;
    L->d = m->d_model;
    long long kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    L->hd = wl_core_model_head_dim(m);
    L->hl = m->heads / c->tp;
    /* fewer key/value heads than ranks: each rank keeps a replica of one */
    L->kvl = kvh >= c->tp ? kvh / c->tp : 1;
    L->ffl = m->d_ff / c->tp;
    L->vl = b->vocab / c->tp;
    L->hdq = L->hdv = L->hd;
    L->mla = wl_core_model_is_mla(m);
    if (L->mla) {
        L->qr = m->q_lora_rank;
        L->kvr = m->kv_lora_rank;
        L->rope = m->qk_rope_head_dim;
        L->hdq = m->qk_nope_head_dim + m->qk_rope_head_dim;
        L->hdv = m->v_head_dim;
        L->kvl = L->hl; /* the latent is expanded to every head */
    }
    if (wl_core_model_is_moe(m)) {
        int ep = c->ep > 0 ? c->ep : 1;
        L->E = m->experts;
        L->topk = m->experts_per_token;
        L->El = m->experts / ep;
        L->ne = wl_cluster_expert_tokens(m, c, L->T);
        L->ffe = (m->d_ff_expert > 0 ? m->d_ff_expert : m->d_ff) / c->tp;
        L->shf = (long long)m->shared_experts * L->ffe;
    }
    L->rotary = m->positions == WL_POS_ROTARY;
    L->swiglu = m->activation == WL_ACT_SWIGLU;
    L->gelu = m->activation == WL_ACT_GELU || m->activation == WL_ACT_GELU_TANH;
    L->rms = m->norm == WL_NORM_RMSNORM;
    L->bias = m->style != WL_STYLE_LLAMA;
    /* inference runs the model in eval mode: no dropout */
    L->p_hidden = c->mode == WL_MODE_TRAIN ? m->hidden_dropout : 0;
    L->p_attn = c->mode == WL_MODE_TRAIN ? m->attention_dropout : 0;
    L->lora = wl_cluster_lora_projs(c, &L->r);
}

/* Collective sizes of one layer's shard (bytes of the whole T x d tensor). */
static double act_bytes(const lb *L)
{
    return (double)L->T * (double)L->d * wl_dtype_bytes(L->dt);
}

static int new_piece(cl_piece *p, const char *name, lb *L)
{
    p->wl = wl_core_workload_create(name);
    p->nhide = 0;
    L->wl = p->wl;
    L->rc = p->wl ? WL_OK : WL_ENOMEM;
    return L->rc;
}

static void hide(cl_piece *p, int window, double coll_s, double frac)
{
    if (coll_s > 0 && p->nhide < CL_MAX_HIDE)
        p->hide[p->nhide++] = (cl_hide){.window = window, .coll_s = coll_s, .frac = frac};
}

/* --tp-comm-overlap: the window pieces, one GEMM each, a forward's (and a
 * backward's) tensor-parallel collectives pipeline with */
static int overlap_windows(cl_piece *pieces, lb *L, int moe, int train)
{
    int rc;
    if ((rc = new_piece(&pieces[moe ? PC_MWIN_QKV_F : PC_WIN_QKV_F], "QKV", L)))
        return rc;
    qkv_f(L);
    if ((rc = new_piece(&pieces[moe ? PC_MWIN_PROJ_F : PC_WIN_PROJ_F], "projection", L)))
        return rc;
    gemm(L, L->d, L->T, L->hl * L->hdv);
    if (train) {
        if ((rc = new_piece(&pieces[moe ? PC_MWIN_PROJ_B : PC_WIN_PROJ_B], "projection dgrad", L)))
            return rc;
        linear_dgrad(L, L->hl * L->hdv, L->d);
    }
    if (moe)
        return L->rc;
    if ((rc = new_piece(&pieces[PC_WIN_FC1_F], "FC1", L)))
        return rc;
    gemm(L, fc1_out(L), L->T, L->d);
    if ((rc = new_piece(&pieces[PC_WIN_FC2_F], "FC2", L)))
        return rc;
    gemm(L, L->d, L->T, L->ffl);
    if (train) {
        if ((rc = new_piece(&pieces[PC_WIN_FC2_B], "FC2 dgrad", L)))
            return rc;
        linear_dgrad(L, L->ffl, L->d);
    }
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
    double tp_f = 0, ag = 0, rs = 0;
    int ovl = b->cfg->tp_comm_overlap && sp;
    if (t > 1 && sp) {
        ag = wl_cluster_coll_time(g, WL_COLL_ALL_GATHER, S);
        rs = wl_cluster_coll_time(g, WL_COLL_REDUCE_SCATTER, S);
    }
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
    /* a MoE layer's token exchange: every rank's T x top-k token copies
     * (padded to the capacity) out to the experts' ranks and back, twice
     * in the backward */
    int moe = wl_core_model_is_moe(b->m);
    double a2a = 0;
    if (moe) {
        L.moe = 1;
        a2a = moe_a2a(&L);
        L.moe = 0;
    }
    /* context parallelism (Megatron-Core's ring attention, Liu et al. 2023):
     * cp - 1 steps each pass the keys and values of a rank's chunk to the
     * next rank while attention runs on the chunk at hand; the backward
     * passes them again with their gradients. The exchange hides behind
     * the attention kernels and only what sticks out is exposed. */
    double ring_f = 0, ring_b = 0;
    if (L.cp > 1) {
        double kvb = (double)L.T * (double)L.kvl * (double)(L.hdq + L.hdv) * wl_dtype_bytes(L.dt);
        ring_f = (L.cp - 1) * wl_cluster_coll_time(&b->cp, WL_COLL_SEND, kvb);
        ring_b = (L.cp - 1) * wl_cluster_coll_time(&b->cp, WL_COLL_SEND, 2 * kvb);
        if ((rc = new_piece(&pieces[PC_WIN_ATTN_F], "attention forward", &L)))
            goto done;
        core_f(&L);
        if (train) {
            if ((rc = new_piece(&pieces[PC_WIN_ATTN_B], "attention backward", &L)))
                goto done;
            core_b(&L);
        }
    }
    /* dense layers (a MoE model's first dense_layers), then MoE layers */
    for (int kind = 0; kind < 2; kind++) {
        if (kind == 0 ? moe && b->m->dense_layers == 0 : !moe)
            continue;
        L.moe = kind;
        int F = kind ? PC_MOE_F : PC_LAYER_F, Bk = kind ? PC_MOE_B : PC_LAYER_B;
        int W = kind ? PC_MOE_W : PC_LAYER_W, WQ = kind ? PC_MWIN_QKV : PC_WIN_QKV;
        int WF = kind ? PC_MWIN_FC1 : PC_WIN_FC1;
        double x = kind ? 2 * a2a : 0;
        /* --ep-overlap: the exchanges of one micro-batch run beside another's
         * compute (DualPipe pairs a forward chunk with a backward one and
         * splits each into attention, dispatch, MLP and combine; inference
         * overlaps two micro-batches' forwards): they hide behind the
         * other's MoE layer, a backward behind a forward and the other way
         * round, what sticks out exposed. */
        int epo = kind && b->cfg->ep_overlap;
        double xo = epo ? x : 0;
        if (epo)
            x = 0;
        if ((rc = new_piece(&pieces[F], kind ? "MoE layer forward" : "layer forward", &L)))
            goto done;
        layer_f(&L);
        cl_piece *pf = &pieces[F];
        pf->a2a_s = x;
        pf->a2a_hidden_s = xo;
        pf->a2a_window = train ? PC_MOE_B : PC_MOE_F;
        hide(pf, pf->a2a_window, xo, 1);
        hide(pf, PC_WIN_ATTN_F, ring_f, 1);
        if (ovl) {
            /* Transformer Engine's userbuffers (Megatron --tp-comm-overlap,
             * sequence parallel): each all-gather before a column-parallel
             * GEMM and each reduce-scatter after a row-parallel one runs in
             * t - 1 ring steps beside t chunks of its GEMM, of which the
             * first (last) cannot overlap: (t - 1)/t of the GEMM hides it.
             * A MoE layer's FFN collectives stay exposed (its dispatcher
             * runs them). */
            double fr = (double)(t - 1) / t;
            pf->comm_s = x + (kind ? ag + rs : 0);
            hide(pf, kind ? PC_MWIN_QKV_F : PC_WIN_QKV_F, ag, fr);
            hide(pf, kind ? PC_MWIN_PROJ_F : PC_WIN_PROJ_F, rs, fr);
            if (!kind) {
                hide(pf, PC_WIN_FC1_F, ag, fr);
                hide(pf, PC_WIN_FC2_F, rs, fr);
            }
            if ((rc = overlap_windows(pieces, &L, kind, train)))
                goto done;
        } else {
            pf->comm_s = tp_f + x;
        }
        if (!train)
            continue;
        if ((rc = new_piece(&pieces[Bk], kind ? "MoE layer backward" : "layer backward", &L)))
            goto done;
        layer_b(&L, !b->split_w);
        cl_piece *pb = &pieces[Bk];
        pb->comm_s = x + (b->cfg->recompute == WL_RECOMPUTE_FULL ? tp_f + x : 0);
        if (ovl) {
            /* the all-gathers of the incoming gradient before the row-
             * parallel layers' input-gradient GEMMs */
            double fr = (double)(t - 1) / t;
            hide(pb, kind ? PC_MWIN_PROJ_B : PC_WIN_PROJ_B, ag, fr);
            if (kind)
                pb->comm_s += ag;
            else
                hide(pb, PC_WIN_FC2_B, ag, fr);
        } else {
            pb->comm_s += exp_b;
        }
        pb->a2a_s = x * (b->cfg->recompute == WL_RECOMPUTE_FULL ? 2 : 1);
        pb->a2a_hidden_s = xo * (b->cfg->recompute == WL_RECOMPUTE_FULL ? 2 : 1);
        pb->a2a_window = PC_MOE_F;
        hide(pb, PC_MOE_F, pb->a2a_hidden_s, 1);
        /* a recomputed forward passes its keys and values round again */
        hide(pb, PC_WIN_ATTN_B, ring_b + (b->cfg->recompute != WL_RECOMPUTE_NONE ? ring_f : 0), 1);
        if (b->split_w) {
            /* the weight gradients run later: nothing to hide behind */
            pb->comm_s += 2 * ov_b;
            if ((rc = new_piece(&pieces[W], "layer weight gradients", &L)))
                goto done;
            layer_w(&L);
        } else if (t > 1) {
            /* QKV's and FC1's weight gradients hide one each */
            hide(pb, WQ, ov_b, 1);
            hide(pb, WF, ov_b, 1);
            if ((rc = new_piece(&pieces[WQ], "QKV weight gradient", &L)))
                goto done;
            qkv_w(&L);
            if ((rc = new_piece(&pieces[WF], "FC1 weight gradient", &L)))
                goto done;
            fc1_window(&L);
        }
    }
    L.moe = 0;
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
                    hide(&pieces[PC_HEAD_B], PC_WIN_HEAD, c, 1);
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
    /* what the overlapped all-to-alls leave exposed at the top clock, for
     * ep_comm_exposed_s (the timeline costs them at every clock) */
    for (int i = 0; i < PC_COUNT; i++) {
        cl_piece *p = &pieces[i];
        if (!(p->a2a_hidden_s > 0))
            continue;
        double w = 0;
        if (pieces[p->a2a_window].ev) {
            wl_core_op op = {.sm_clock_mhz = b->gpu->sm_clock_max_mhz, .ignore_power_limit = 1};
            wl_core_result r;
            if (wl_core_evaluator_run(pieces[p->a2a_window].ev, &op, &r) == WL_OK)
                w = r.time_ms * 1e-3;
        }
        p->a2a_s += fmax(0, p->a2a_hidden_s - w);
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
