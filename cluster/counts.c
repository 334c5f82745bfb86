/* What one rank of a layer holds: its parameters (dense and MoE, the
 * experts' share apart), the tokens each local expert computes, and the
 * activation bytes a layer keeps per micro-batch (Korthikanti et al. 2022);
 * the counts that memory, the optimizer step and the gradient syncs read,
 * beside layers.c's kernels. */
#include "cluster_internal.h"

#include <math.h>

/* Parameters of one layer's attention on one rank: QKV (or latent
 * attention's projections, the down-projections and their norms
 * replicated) and the output projection, with their biases. */
static double attn_params(const wl_core_model *m, int tp)
{
    double d = m->d_model, H = m->heads;
    if (wl_core_model_is_mla(m)) {
        double qk = m->qk_nope_head_dim + m->qk_rope_head_dim, qr = m->q_lora_rank;
        double kvr = m->kv_lora_rank;
        double rep = (qr > 0 ? d * qr + qr : 0) + d * (kvr + m->qk_rope_head_dim) + kvr;
        double split = (qr > 0 ? qr : d) * H * qk + kvr * H * (m->qk_nope_head_dim + m->v_head_dim) +
                       H * m->v_head_dim * d;
        return rep + split / tp;
    }
    double hd = d / H, kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    double q = H * hd, kv = kvh * hd;
    int bias = m->style != WL_STYLE_LLAMA;
    return (d * (q + 2 * kv) + q * d) / tp + (bias ? (q + 2 * kv) / tp + d : 0);
}

/* An MLP of ff hidden units split over tp (column- then row-parallel). */
static double mlp_params(const wl_core_model *m, double ff, int tp)
{
    double d = m->d_model, fc1 = m->activation == WL_ACT_SWIGLU ? 2 * ff : ff;
    int bias = m->style != WL_STYLE_LLAMA;
    return (d * fc1 + ff * d) / tp + (bias ? fc1 / tp + d : 0);
}

static double norm_params(const wl_core_model *m)
{
    return m->norm == WL_NORM_RMSNORM ? 2.0 * m->d_model : 4.0 * m->d_model;
}

/* Parameters of one dense layer on one rank: attention, MLP, the two
 * norms (replicated). */
double wl_cluster_layer_params(const wl_core_model *m, int tp)
{
    return attn_params(m, tp) + mlp_params(m, m->d_ff, tp) + norm_params(m);
}

unsigned wl_cluster_lora_projs(const wl_cluster_config *c, long long *rank)
{
    *rank = 0;
    if (c->mode != WL_MODE_TRAIN || c->finetune != WL_FT_LORA)
        return 0;
    unsigned t = c->lora_targets ? c->lora_targets : WL_LORA_ATTENTION;
    *rank = c->lora_rank > 0 ? c->lora_rank : WL_LORA_RANK_DEFAULT;
    return (t & (WL_LORA_Q | WL_LORA_K | WL_LORA_V) ? 1u : 0) | (t & WL_LORA_O ? 2u : 0) |
           (t & (WL_LORA_GATE | WL_LORA_UP) ? 4u : 0) | (t & WL_LORA_DOWN ? 8u : 0);
}

double wl_cluster_lora_layer_params(const wl_core_model *m, const wl_cluster_config *c)
{
    long long r;
    unsigned p = wl_cluster_lora_projs(c, &r);
    double t = c->tp, d = m->d_model, hd = wl_core_model_head_dim(m);
    double kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    double qkv = (m->heads + 2 * kvh) * hd, o = m->heads * hd;
    double ff = m->activation == WL_ACT_SWIGLU ? 2.0 * m->d_ff : m->d_ff;
    return (double)r * ((p & 1 ? d + qkv / t : 0) + (p & 2 ? o / t + d : 0) +
                        (p & 4 ? d + ff / t : 0) + (p & 8 ? m->d_ff / t + d : 0));
}

/* A MoE layer on one rank: attention, norms, the router (replicated), the
 * shared experts split over tp, and experts / ep routed experts, each
 * split over tp. */
double wl_cluster_moe_layer_params(const wl_core_model *m, int tp, int ep, double *expert)
{
    double fe = m->d_ff_expert > 0 ? m->d_ff_expert : m->d_ff, E = m->experts;
    double router = E * m->d_model + (m->router_bias ? E : 0);
    *expert = (E / (ep > 0 ? ep : 1)) * mlp_params(m, fe, tp);
    return attn_params(m, tp) + norm_params(m) + router + m->shared_experts * mlp_params(m, fe, tp) +
           *expert;
}

long long wl_cluster_expert_tokens(const wl_core_model *m, const wl_cluster_config *c, long long T)
{
    if (m->experts < 1)
        return 0;
    double cf = c->capacity_factor > 0 ? c->capacity_factor : 1.0, ep = c->ep > 0 ? c->ep : 1;
    return (long long)ceil(cf * ep * (double)T * m->experts_per_token / m->experts - 1e-9);
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
    double s = (double)c->seq / (c->cp > 1 ? c->cp : 1), b = (double)c->micro_batch, h = m->d_model;
    double t = c->tp, e = wl_dtype_bytes(wl_cluster_act_dtype(c->dtype)) / 2.0;
    int sp = c->sequence_parallel && c->tp > 1;
    if (c->recompute == WL_RECOMPUTE_FULL)
        return 2.0 * s * b * h * e / (sp ? t : 1);
    double kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    double hdm = wl_core_model_head_dim(m);
    double kvd = kvh * hdm, qd = m->heads * hdm, od = qd;
    if (wl_core_model_is_mla(m)) { /* the heads' q, k and v after the up-projections */
        qd = (double)m->heads * (m->qk_nope_head_dim + m->qk_rope_head_dim);
        kvd = (double)m->heads * (m->qk_nope_head_dim + m->qk_rope_head_dim + m->v_head_dim) / 2;
        od = (double)m->heads * m->v_head_dim;
    }
    double ff = m->d_ff, sw = m->activation == WL_ACT_SWIGLU ? 2 : 1;
    double mask_h = m->hidden_dropout > 0 ? 1.0 : 0.0;
    double rep = (2 + 2 + 2 + 2 * mask_h) * s * b * h + 2 * s * b * h; /* norms' and GEMMs' inputs, masks */
    double mlp = 2 * s * b * (sw + 1) * ff, whole = 0;
    if (wl_core_model_is_moe(m)) {
        /* a MoE layer's FFN keeps its experts' inputs and hidden states for
         * the routed copies (T x top-k x capacity factor), the shared
         * experts' like a dense MLP's, and, whole on every tensor-parallel
         * rank, the permuted tokens and the router's fp32 scores; averaged
         * with the dense layers over the model's layers */
        double cf = c->capacity_factor > 0 ? c->capacity_factor : 1.0;
        double fe = m->d_ff_expert > 0 ? m->d_ff_expert : ff, rows = cf * m->experts_per_token * s * b;
        double moe = 2 * rows * (sw + 1) * fe + 2 * s * b * (sw + 1) * fe * m->shared_experts;
        double f = (double)(m->layers - m->dense_layers) / m->layers;
        mlp = (1 - f) * mlp + f * moe;
        whole = f * (2 * rows * h + 8 * s * b * m->experts);
    }
    double split = 2 * s * b * qd + 4 * s * b * kvd + 2 * s * b * od + mlp;
    double core_b = 0; /* bytes */
    if (c->recompute == WL_RECOMPUTE_NONE)
        core_b = c->attention == WL_ATTN_FLASH
                     ? 4.0 * m->heads * s * b /* fp32 log-sum-exp per row */
                     : (m->attention_dropout > 0 ? 5.0 : 2.0) * m->heads * s * s * b * e;
    return ((sp ? rep / t : rep) + split / t + whole) * e + core_b / t;
}

double wl_cluster_layer_act_peak_bytes(const wl_core_model *m, const wl_cluster_config *c)
{
    wl_cluster_config all = *c;
    all.recompute = WL_RECOMPUTE_NONE;
    return wl_cluster_layer_act_bytes(m, &all);
}
