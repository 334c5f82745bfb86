/* Native workload builder: the kernel sequence that HuggingFace eager PyTorch
 * launches for a base model's prefill, from its hyperparameters.
 *
 * The sequences follow shared/data/traces (GPT-2, BERT, OPT): the tracer
 * records GEMMs, softmax, layer norms and elementwise kernels, not views or
 * embedding gathers, and so does this builder. The style selects the
 * framework's implementation quirks (GEMM operand order, fused or separate
 * QKV, where scaling and masking happen); the other fields select the
 * architecture (activation, norm, positions, GQA). */
#include "builder_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void attention(bld *B)
{
    if (B->hf5) {
        wl_core_bld_hf5_attention(B);
        return;
    }
    const wl_core_model *m = B->m;
    long long bh = B->b * B->h, ss = bh * B->s * B->sk;
    long long dq = B->h * B->hd, dkv = B->kvh * B->hd;
    wl_style st = m->style;
    int qkv_bias = st != WL_STYLE_LLAMA || m->qkv_bias;

    wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B)); /* the projections' input */
    if (st == WL_STYLE_GPT2) {
        wl_core_bld_linear(B, B->d, dq + 2 * dkv, 1); /* fused c_attn */
    } else {
        wl_core_bld_fanout(B, B->T * B->d, B->dt, 3);
        wl_core_bld_linear(B, B->d, dq, qkv_bias);
        if (st == WL_STYLE_OPT)
            wl_core_bld_ew(B, WL_EW_SCALAR_MUL, B->T * dq, B->dt); /* q * scaling */
        wl_core_bld_linear(B, B->d, dkv, qkv_bias);
        wl_core_bld_linear(B, B->d, dkv, qkv_bias);
    }
    if (m->positions == WL_POS_ROTARY) {
        wl_core_bld_rotary(B, B->h);
        wl_core_bld_rotary(B, B->kvh);
    }
    wl_core_bld_cache_update(B);
    if (B->attn == WL_ATTN_FLASH) {
        wl_core_bld_flash(B, bh);
    } else {
        /* the attention core: what selective recompute runs again */
        wl_core_bld_mark(B, MARK_CORE_BEGIN);
        B->in_core = B->train;
        wl_core_bld_save(B, 2.0 * (double)(B->T * dq),
                         wl_core_bld_eb(B)); /* q and k (k repeated over groups) */
        wl_core_bld_bgemm(B, bh, B->s, B->sk, B->hd);
        wl_dtype sdt = B->dt; /* the softmax's precision */
        /* the decoders' causal mask: half the scores masked */
        B->softmax_q = st == WL_STYLE_GPT2 || st == WL_STYLE_OPT || st == WL_STYLE_LLAMA ? B->s : 0;
        switch (st) {
        case WL_STYLE_GPT2:
            wl_core_bld_ew(B, WL_EW_UNSPEC_TENSOR, ss, B->dt); /* where(causal, w, min) */
            wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
            break;
        case WL_STYLE_BERT:
            wl_core_bld_ew(B, WL_EW_UNSPEC_SCALAR, ss, B->dt); /* / sqrt(d_head) */
            wl_core_bld_ew(B, WL_EW_ADD, ss, B->dt);           /* + extended mask */
            wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
            break;
        case WL_STYLE_OPT:
            wl_core_bld_ew(B, WL_EW_ADD, ss, B->dt); /* + causal mask */
            if (wl_core_bld_half(B)) {               /* softmax(dtype=fp32).to(dtype) */
                wl_core_bld_ew(B, WL_EW_CAST_FP32, ss, B->dt);
                wl_core_bld_ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
                sdt = WL_DT_FP32;
            }
            wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, sdt);
            break;
        case WL_STYLE_VIT:
        case WL_STYLE_RESNET:
            /* / sqrt(d_head), then softmax(dtype=fp32) and the casts as the
             * vit-large traces record them */
            wl_core_bld_ew(B, WL_EW_SCALAR_MUL, ss, B->dt);
            if (wl_core_bld_half(B))
                sdt = WL_DT_FP32;
            wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, sdt);
            if (wl_core_bld_half(B)) {
                wl_core_bld_ew(B, WL_EW_CAST_FP32, ss, B->dt);
                wl_core_bld_ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
            }
            break;
        case WL_STYLE_LLAMA:
            /* eager_attention_forward (transformers 4.48+): matmul * scaling,
             * + causal mask, softmax(dtype=fp32).to(dtype); repeat_kv is an
             * expand and reshape the traces do not record */
            wl_core_bld_ew(B, WL_EW_SCALAR_MUL, ss, B->dt);
            wl_core_bld_ew(B, WL_EW_ADD, ss, B->dt);
            if (wl_core_bld_half(B)) {
                wl_core_bld_ew(B, WL_EW_CAST_FP32, ss, B->dt);
                wl_core_bld_ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
                sdt = WL_DT_FP32;
            }
            wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, sdt);
            break;
        }
        B->softmax_q = 0;
        wl_core_bld_save(B, (double)ss, wl_dtype_bytes(sdt)); /* the softmax output */
        int drop = B->train && m->attention_dropout > 0;
        wl_core_bld_dropout(B, ss, m->attention_dropout);
        /* PV keeps its probabilities (a new tensor after a dropout or a
         * cast back from fp32) and v */
        if (drop || sdt != B->dt)
            wl_core_bld_save(B, (double)ss, wl_core_bld_eb(B));
        wl_core_bld_save(B, (double)(B->T * dq), wl_core_bld_eb(B));
        wl_core_bld_bgemm(B, bh, B->s, B->hd, B->sk);
        B->in_core = 0;
        wl_core_bld_mark(B, MARK_CORE_END);
    }
    wl_core_bld_save(B, (double)(B->T * dq), wl_core_bld_eb(B)); /* the output projection's input */
    wl_core_bld_linear(B, dq, B->d, st != WL_STYLE_LLAMA);
}

/* GPT-2's NewGELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as the
 * eight kernels the traces record. Backward by derivatives.yaml: the final
 * product's two muls, tanh_backward, the scalar products' scales, pow's
 * grad * 3 x^2 (pow, scale, mul), nothing for the additions, and the sum of
 * x's three gradients. Kept: x, tanh's output and both factors. */
static void new_gelu(bld *B, long long n)
{
    wl_dtype dt = B->dt;
    wl_kernel sc = wl_core_bld_ewk(WL_EW_SCALAR_MUL, n, dt);
    wl_kernel pw[3] = {wl_core_bld_ewk(WL_EW_UNSPEC_SCALAR, n, dt),
                       wl_core_bld_ewk(WL_EW_SCALAR_MUL, n, dt), wl_core_bld_ewk(WL_EW_MUL, n, dt)};
    wl_core_bld_fanout(B, n, dt, 3);
    wl_core_bld_ewb(B, WL_EW_SCALAR_MUL, n, dt, &sc, 1);   /* 0.5 x */
    wl_core_bld_ewb(B, WL_EW_UNSPEC_SCALAR, n, dt, pw, 3); /* x^3 */
    wl_core_bld_ewb(B, WL_EW_SCALAR_MUL, n, dt, &sc, 1);   /* 0.044715 x^3 */
    wl_core_bld_ew(B, WL_EW_ADD, n, dt);                   /* x + ... */
    wl_core_bld_ewb(B, WL_EW_SCALAR_MUL, n, dt, &sc, 1);   /* sqrt(2/pi) (...) */
    wl_core_bld_ew(B, WL_EW_TANH, n, dt);
    wl_core_bld_ewb(B, WL_EW_SCALAR_MUL, n, dt, NULL, 0);  /* 1 + tanh: no backward kernel */
    wl_core_bld_ew(B, WL_EW_MUL, n, dt);
    wl_core_bld_save(B, 4.0 * (double)n, wl_core_bld_eb(B));
}

static void mlp(bld *B)
{
    long long n = B->T * B->ff;
    int bias = B->m->style != WL_STYLE_LLAMA;
    wl_core_bld_save(B, (double)(B->T * B->d),
                     wl_core_bld_eb(B)); /* the first projection's input */
    switch (B->m->activation) {
    case WL_ACT_SWIGLU:
        /* down(act(gate(x)) * up(x)): Python evaluates act(gate(x)) first */
        wl_core_bld_fanout(B, B->T * B->d, B->dt, 2);
        wl_core_bld_linear(B, B->d, B->ff, bias); /* gate */
        wl_core_bld_ew(B, WL_EW_SILU, n, B->dt);
        wl_core_bld_linear(B, B->d, B->ff, bias); /* up */
        wl_core_bld_ew(B, WL_EW_MUL, n, B->dt);
        wl_core_bld_save(B, 3.0 * (double)n, wl_core_bld_eb(B)); /* gate, silu(gate), up */
        break;
    case WL_ACT_GELU_TANH:
        wl_core_bld_linear(B, B->d, B->ff, bias);
        if (B->m->style == WL_STYLE_GPT2) {
            new_gelu(B, n);
        } else {
            wl_core_bld_ew(B, WL_EW_GELU, n, B->dt);
            wl_core_bld_save(B, (double)n, wl_core_bld_eb(B));
        }
        break;
    case WL_ACT_GELU:
        wl_core_bld_linear(B, B->d, B->ff, bias);
        wl_core_bld_ew(B, WL_EW_GELU, n, B->dt);
        wl_core_bld_save(B, (double)n, wl_core_bld_eb(B));
        break;
    case WL_ACT_RELU:
        wl_core_bld_linear(B, B->d, B->ff, bias);
        wl_core_bld_ew(B, WL_EW_RELU, n, B->dt);
        break;
    }
    wl_core_bld_save(B, (double)n, wl_core_bld_eb(B)); /* the second projection's input */
    wl_core_bld_linear(B, B->ff, B->d, bias);
}

/* Per layer, what stays saved for the backward pass: everything (no
 * recompute), all but the attention core's tensors, whose inputs q, k, v
 * the checkpoint keeps (selective, Korthikanti et al. 2022), or only the
 * layer's input (full); a full recompute rebuilds one layer's tensors at a
 * time in the backward pass. */
static void layer_saved(bld *B)
{
    if (!B->train)
        return;
    double all = B->saved_layer + B->saved_core;
    switch (B->sh->recompute) {
    case WL_RECOMPUTE_NONE:
        B->saved_other += all;
        break;
    case WL_RECOMPUTE_SELECTIVE:
        B->saved_other +=
            B->saved_layer +
            (B->saved_core > 0
                 ? (double)B->T * (double)((B->h + 2 * B->kvh) * B->hd) * wl_core_bld_eb(B)
                 : 0.0);
        break;
    case WL_RECOMPUTE_FULL:
        B->saved_other += (double)(B->T * B->d) * wl_core_bld_eb(B);
        if (all > B->saved_peak)
            B->saved_peak = all;
        break;
    }
    B->saved_layer = B->saved_core = 0;
}

/* A transformer layer. In training its input feeds the sublayer and the
 * residual (post-norm BERT: the attention's three projections and the
 * residual), so its gradient is a sum; dropout follows each sublayer. */
void wl_core_bld_layer(bld *B)
{
    long long n = B->T * B->d;
    double p = B->m->hidden_dropout;
    wl_core_bld_mark(B, MARK_LAYER_BEGIN);
    if (B->m->pre_norm) {
        wl_core_bld_fanout(B, n, B->dt, 2);
        wl_core_bld_norm(B);
        attention(B);
        wl_core_bld_dropout(B, n, p);
        wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        wl_core_bld_fanout(B, n, B->dt, 2);
        wl_core_bld_norm(B);
        mlp(B);
        wl_core_bld_dropout(B, n, p);
        wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
    } else {
        wl_core_bld_fanout(B, n, B->dt, 2);
        attention(B);
        wl_core_bld_dropout(B, n, p);
        wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        wl_core_bld_norm(B);
        wl_core_bld_fanout(B, n, B->dt, 2);
        mlp(B);
        wl_core_bld_dropout(B, n, p);
        wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        wl_core_bld_norm(B);
    }
    wl_core_bld_mark(B, MARK_LAYER_END);
    layer_saved(B);
}

/* The gradient of an embedding table (embedding_dense_backward_cuda): the
 * table's gradient zeroed, the T indices sorted, then each row's gradients
 * summed into it. The sort's radix passes and the segment bookkeeping run
 * on the T indices and are counted as one kernel. A table tied to the LM
 * head adds the head's gradient to its own. */
void wl_core_bld_embed_bwd(bld *B, long long rows, int tied)
{
    tp_ent *e = wl_core_bld_tp_new(B);
    if (!e)
        return;
    wl_kernel f = wl_core_bld_ewk(WL_EW_FILL, rows * B->d, B->dt);
    wl_kernel so = wl_core_bld_ewk(WL_EW_COPY, 2 * B->T, WL_DT_FP32);
    wl_kernel sum = wl_core_bld_ewk(WL_EW_ADD, B->T * B->d, B->dt);
    wl_core_bld_tp_k(e, &f);
    wl_core_bld_tp_k(e, &so);
    wl_core_bld_tp_k(e, &sum);
    if (tied) {
        wl_kernel acc = wl_core_bld_ewk(WL_EW_ADD, rows * B->d, B->dt);
        wl_core_bld_tp_k(e, &acc);
    }
    e->param[e->np++] = (double)rows * (double)B->d;
}

void wl_core_bld_prefix(bld *B)
{
    const wl_core_model *m = B->m;
    long long n = B->T * B->d;
    if (B->hf5) {
        wl_core_bld_hf5_prefix(B);
        B->saved_other += B->saved_layer;
        B->saved_layer = 0;
        return;
    }
    switch (m->style) {
    case WL_STYLE_GPT2:
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        if (m->positions == WL_POS_LEARNED) {
            wl_core_bld_embed_bwd(B, m->max_positions, 0);
            wl_core_bld_ew(B, WL_EW_ADD, n, B->dt); /* wte + wpe */
        }
        wl_core_bld_dropout(B, n, m->hidden_dropout);
        break;
    case WL_STYLE_BERT:
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        wl_core_bld_embed_bwd(B, m->max_positions, 0);
        wl_core_bld_embed_bwd(B, m->type_vocab_size, 0);
        wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);            /* word + token type + position */
        wl_core_bld_norm(B);                               /* embedding LayerNorm */
        wl_core_bld_dropout(B, n, m->hidden_dropout);
        wl_core_bld_ewc(B, WL_EW_SCALAR_MUL, B->T, B->dt); /* (1 - mask) * min */
        break;
    case WL_STYLE_OPT:
        wl_core_bld_ewc(B, WL_EW_ADD, B->b * B->s * B->sk, WL_DT_FP32); /* causal + padding mask */
        wl_core_bld_ewc(B, WL_EW_MUL, B->b * B->sk, WL_DT_FP32); /* positions = cumsum * mask */
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        if (m->positions == WL_POS_LEARNED) {
            wl_core_bld_embed_bwd(B, m->max_positions, 0);
            wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        }
        break;
    case WL_STYLE_VIT: {
        /* patch embedding: a patch x patch, stride-patch conv as an implicit
         * GEMM (M = patches, N = d, K = C p^2), then + position embeddings.
         * Backward: the images need no gradient, so only the weight
         * gradient (K = patches) and the bias sum; the position table's and
         * the [CLS] token's gradients are sums over the batch. */
        long long np = B->s - 1, p = m->patch_size;
        wl_kernel k = {0};
        k.kind = WL_K_GEMM;
        k.in_dtype = B->conv_dt;
        k.acc_dtype = B->conv_dt;
        k.tensor_core = 1;
        k.batch = 1;
        k.m = B->b * np;
        k.n = B->d;
        k.k = m->channels * p * p;
        k.conv_taps = (int)(p * p);
        k.conv_stride = (int)p;
        wl_core_bld_add(B, &k);
        tp_ent *e = wl_core_bld_tp_new(B);
        if (e) {
            wl_kernel wg = k;
            wg.m = m->channels * p * p;
            wg.n = B->d;
            wg.k = B->b * np;
            wl_kernel bs = wl_core_bld_rowk(WL_K_REDUCE, B->d, B->b * np, B->dt);
            wl_core_bld_tp_k(e, &wg);
            wl_core_bld_tp_k(e, &bs);
            e->param[e->np++] = (double)wg.m * (double)B->d;
            e->param[e->np++] = (double)B->d;
        }
        wl_kernel pos[2] = {wl_core_bld_rowk(WL_K_REDUCE, B->s * B->d, B->b, B->dt),
                            wl_core_bld_rowk(WL_K_REDUCE, B->d, B->b, B->dt)};
        wl_core_bld_ewb(B, WL_EW_SCALAR_ADD, n, B->dt, pos, 2);
        wl_core_bld_tp_param(B, (double)(B->s * B->d));
        wl_core_bld_tp_param(B, (double)B->d);
        wl_core_bld_dropout(B, n, m->hidden_dropout);
        break;
    }
    case WL_STYLE_RESNET:
        break;
    case WL_STYLE_LLAMA:
        /* the causal mask is built without a recorded kernel in this
         * generation of transformers (masking_utils) */
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        break;
    }
    if (m->positions == WL_POS_ROTARY) {
        /* LlamaRotaryEmbedding.forward: inv_freq[None,:,None] @
         * position_ids[:,None,:] in fp32 (position_ids has batch 1 when it
         * comes from cache_position), then cos * attention_scaling and
         * sin * attention_scaling on s x head_dim; cat, cos, sin and the
         * casts to the activation dtype are not recorded */
        wl_kernel k = {0};
        k.kind = WL_K_GEMM;
        k.in_dtype = WL_DT_FP32;
        k.acc_dtype = WL_DT_FP32;
        k.batch = 1;
        k.m = B->hd / 2;
        k.n = B->s;
        k.k = 1;
        wl_core_bld_add(B, &k);
        long long cs = B->s * B->hd;
        wl_core_bld_ewc(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
        wl_core_bld_ewc(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
    }
    B->saved_other += B->saved_layer;
    B->saved_layer = 0;
}

static void suffix(bld *B)
{
    const wl_core_model *m = B->m;
    if (m->final_norm && m->pre_norm)
        wl_core_bld_norm(B);
    if (m->pooler) {
        /* pooler: dense on the first token of each sequence, then tanh */
        wl_kernel k = {0};
        k.kind = WL_K_GEMM;
        k.in_dtype = B->gemm_dt;
        k.acc_dtype = B->tc ? B->gemm_dt : WL_DT_FP32;
        k.tensor_core = B->tc;
        long long pd = m->pooler_dim > 0 ? m->pooler_dim : B->d;
        k.batch = 1;
        k.m = pd;
        k.n = B->b;
        k.k = B->d;
        wl_core_bld_add(B, &k);
        wl_core_bld_ew(B, WL_EW_TANH, B->b * pd, B->dt);
    }
}

int wl_core_model_is_vision(const wl_core_model *m)
{
    return m->style == WL_STYLE_VIT || m->style == WL_STYLE_RESNET;
}

int wl_core_model_check(const wl_core_model *m, wl_error *err)
{
    const char *src = m->id[0] ? m->id : "model";
    if (wl_core_model_is_vision(m)) {
        if (m->image_size < 8 || m->image_size > 16384) {
            wl_error_set(err, src, 0, "image_size", "must be in [8, 16384]");
            return WL_EINVAL;
        }
        if (m->channels < 1) {
            wl_error_set(err, src, 0, "channels", "must be >= 1");
            return WL_EINVAL;
        }
    }
    if (m->style == WL_STYLE_VIT && (m->patch_size < 1 || m->image_size % m->patch_size)) {
        wl_error_set(err, src, 0, "patch_size", "must be >= 1 and divide image_size (%d)",
                     m->image_size);
        return WL_EINVAL;
    }
    if (m->style == WL_STYLE_RESNET) {
        if (m->stages < 1 || m->stages > WL_MAX_STAGES) {
            wl_error_set(err, src, 0, "blocks", "needs 1 to %d stages", WL_MAX_STAGES);
            return WL_EINVAL;
        }
        for (int i = 0; i < m->stages; i++)
            if (m->blocks[i] < 1) {
                wl_error_set(err, src, 0, "blocks", "stage %d: must be >= 1", i + 1);
                return WL_EINVAL;
            }
        if (m->base_width < 1 || m->classes < 1) {
            wl_error_set(err, src, 0, m->base_width < 1 ? "base_width" : "classes", "must be >= 1");
            return WL_EINVAL;
        }
        if (m->image_size >> (m->stages + 1) < 1) {
            wl_error_set(err, src, 0, "image_size", "too small for %d stages", m->stages);
            return WL_EINVAL;
        }
        return WL_OK; /* the transformer fields do not apply */
    }
    if (m->layers < 1) { wl_error_set(err, src, 0, "layers", "must be >= 1"); return WL_EINVAL; }
    if (m->d_model < 1) { wl_error_set(err, src, 0, "d_model", "must be >= 1"); return WL_EINVAL; }
    if (m->heads < 1 || m->d_model % m->heads) {
        wl_error_set(err, src, 0, "heads", "must be >= 1 and divide d_model (%d)", m->d_model);
        return WL_EINVAL;
    }
    if (m->kv_heads < 1 || m->heads % m->kv_heads) {
        wl_error_set(err, src, 0, "kv_heads", "must be >= 1 and divide heads (%d)", m->heads);
        return WL_EINVAL;
    }
    if (m->d_ff < 1) { wl_error_set(err, src, 0, "d_ff", "must be >= 1"); return WL_EINVAL; }
    if (m->experts < 0 || m->experts == 1) {
        wl_error_set(err, src, 0, "experts", "0 (a dense model) or at least 2 routed experts");
        return WL_EINVAL;
    }
    if (m->experts > 0) {
        if (m->experts_per_token < 1 || m->experts_per_token > m->experts) {
            wl_error_set(err, src, 0, "experts_per_token", "must be 1 to experts (%d)", m->experts);
            return WL_EINVAL;
        }
        if (m->d_ff_expert < 0 || m->shared_experts < 0) {
            wl_error_set(err, src, 0, m->d_ff_expert < 0 ? "d_ff_expert" : "shared_experts",
                         "must be >= 0");
            return WL_EINVAL;
        }
        if (m->dense_layers < 0 || m->dense_layers >= m->layers) {
            wl_error_set(err, src, 0, "dense_layers", "must be 0 to layers - 1 (%d)",
                         m->layers - 1);
            return WL_EINVAL;
        }
    } else if (m->experts_per_token || m->d_ff_expert || m->shared_experts || m->dense_layers ||
               m->router_bias) {
        wl_error_set(err, src, 0, "experts", "expert keys need experts >= 2");
        return WL_EINVAL;
    }
    if (m->kv_lora_rank > 0) {
        if (m->qk_nope_head_dim < 1 || m->qk_rope_head_dim < 1 || m->v_head_dim < 1) {
            wl_error_set(err, src, 0, m->qk_nope_head_dim < 1 ? "qk_nope_head_dim"
                                      : m->qk_rope_head_dim < 1 ? "qk_rope_head_dim" : "v_head_dim",
                         "latent attention (kv_lora_rank) needs it >= 1");
            return WL_EINVAL;
        }
    } else if (m->q_lora_rank || m->qk_nope_head_dim || m->qk_rope_head_dim || m->v_head_dim) {
        wl_error_set(err, src, 0, "kv_lora_rank", "latent attention keys need kv_lora_rank >= 1");
        return WL_EINVAL;
    }
    return WL_OK;
}

/* HF's expert loop and latent attention are not built kernel by kernel
 * for one GPU; the cluster's Megatron layers are. */
int wl_core_single_gpu_check(const wl_core_model *m, wl_error *err)
{
    if (!wl_core_model_is_moe(m) && !wl_core_model_is_mla(m))
        return WL_OK;
    wl_error_set(err, m->id, 0, wl_core_model_is_moe(m) ? "experts" : "kv_lora_rank",
                 "mixture-of-experts and latent-attention models are modelled by 'wattlas "
                 "cluster' (expert parallelism), not on one GPU");
    return WL_EINVAL;
}

int wl_core_model_is_moe(const wl_core_model *m)
{
    return m->experts > 0;
}

int wl_core_model_is_mla(const wl_core_model *m)
{
    return m->kv_lora_rank > 0;
}

static int setup(bld *B, const wl_core_model *model, const wl_core_shape *shape, wl_error *err)
{
    memset(B, 0, sizeof *B);
    if (wl_core_model_check(model, err))
        return WL_EINVAL;
    if (shape->batch < 1 || shape->batch > WL_MAX_BATCH) {
        wl_error_set(err, model->id, 0, "batch", "expected an integer in [1, %lld], got %lld",
                     WL_MAX_BATCH, shape->batch);
        return WL_EINVAL;
    }
    if (!wl_core_model_is_vision(model) && (shape->seq < 1 || shape->seq > WL_MAX_SEQ)) {
        wl_error_set(err, model->id, 0, "seq", "expected an integer in [1, %lld], got %lld",
                     WL_MAX_SEQ, shape->seq);
        return WL_EINVAL;
    }
    /* the largest tensor (attention scores or the MLP activation) must stay
     * far below 2^63 elements, and below what any GPU could hold */
    double scores = (double)shape->batch * model->heads * (double)shape->seq * (double)shape->seq;
    double mlp = (double)shape->batch * (double)shape->seq * (double)model->d_ff;
    if (scores > WL_MAX_TENSOR_ELEMENTS || mlp > WL_MAX_TENSOR_ELEMENTS) {
        wl_error_set(err, model->id, 0, "seq", "batch x seq is too large for this model "
                     "(a single tensor would exceed %g elements)", WL_MAX_TENSOR_ELEMENTS);
        return WL_EINVAL;
    }
    if (wl_core_single_gpu_check(model, err))
        return WL_EINVAL;
    B->m = model;
    B->err = err;
    B->dt = shape->dtype == WL_DT_TF32 ? WL_DT_FP32 : shape->dtype;
    B->gemm_dt = shape->dtype;
    /* PyTorch runs fp32 matmuls on CUDA cores unless TF32 is allowed */
    B->tc = shape->dtype != WL_DT_FP32;
    B->b = shape->batch;
    B->s = shape->seq;
    B->T = B->b * B->s;
    B->d = model->d_model;
    B->h = model->heads;
    B->kvh = model->kv_heads;
    B->hd = B->h > 0 ? B->d / B->h : 0;
    B->ff = model->d_ff;
    B->attn = shape->attention;
    B->conv_dt = shape->dtype == WL_DT_FP32 ? WL_DT_TF32 : shape->dtype;
    if ((unsigned)shape->stack >= WL_STACK_COUNT || (unsigned)shape->impl >= WL_IMPL_COUNT) {
        wl_error_set(err, model->id, 0, (unsigned)shape->stack >= WL_STACK_COUNT ? "stack" : "impl",
                     "unknown software stack or implementation");
        return WL_EINVAL;
    }
    /* the vision models and a serving engine's generation keep their
     * graphs (no profile of another stack); the text families follow the
     * stack */
    B->hf5 = shape->impl == WL_IMPL_HF_EAGER && shape->stack == WL_STACK_HF5 &&
             !wl_core_model_is_vision(model) &&
             !(shape->mode == WL_MODE_DECODE && shape->launch == WL_LAUNCH_GRAPHS);
    B->sh = shape;
    B->sk = B->s;
    B->master = shape->mode == WL_MODE_TRAIN && !shape->master_none && wl_core_bld_half(B);
    if (shape->mode == WL_MODE_TRAIN) {
        const char *why = NULL, *field = "mode";
        if (model->style == WL_STYLE_RESNET)
            why = "training is built for the transformer families (gpt2, bert, opt, llama, "
                  "vit), not ResNet";
        else if (model->style == WL_STYLE_VIT && model->classes < 1)
            why = "training a ViT needs its classifier's width", field = "classes";
        else if (!wl_core_model_is_vision(model) && model->vocab_size < 1)
            why = "training needs the vocabulary of the LM head", field = "vocab";
        else if (shape->grad_accum < 0 || shape->grad_accum > WL_MAX_GRAD_ACCUM)
            why = "grad_accum must be 1 to 4096", field = "grad_accum";
        else if ((unsigned)shape->optimizer > WL_OPTIM_SGD ||
                 (unsigned)shape->recompute > WL_RECOMPUTE_FULL)
            why = "unknown optimizer or recompute";
        if (why) {
            wl_error_set(err, model->id, 0, field, "%s", why);
            return WL_EINVAL;
        }
    } else if (shape->mode == WL_MODE_DECODE) {
        const char *why = NULL, *field = "mode";
        if (wl_core_model_is_vision(model) || model->style == WL_STYLE_BERT)
            why = "decode needs a decoder (gpt2, opt, llama styles)";
        else if (model->vocab_size < 1)
            why = "decode needs the vocabulary of the LM head", field = "vocab";
        else if (shape->gen < 1 || shape->gen > WL_MAX_GEN)
            why = "gen must be 1 to 1000000 tokens", field = "gen";
        else if (shape->seq + shape->gen - 1 > WL_MAX_SEQ)
            why = "seq + gen is too long", field = "gen";
        else if ((unsigned)shape->launch > WL_LAUNCH_GRAPHS)
            why = "unknown launch mode", field = "launch";
        if (why) {
            wl_error_set(err, model->id, 0, field, "%s", why);
            return WL_EINVAL;
        }
    } else if ((unsigned)shape->mode >= WL_MODE_COUNT) {
        wl_error_set(err, model->id, 0, "mode", "unknown mode");
        return WL_EINVAL;
    }
    if (model->style == WL_STYLE_VIT) {
        long long g = model->image_size / model->patch_size;
        B->s = g * g + 1; /* patches + [CLS] */
        B->T = B->b * B->s;
        B->sk = B->s;
    } else if (model->style == WL_STYLE_RESNET) {
        B->s = 1;
        B->T = B->b;
        B->sk = 1;
    }
    return WL_OK;
}

/* ---- ResNet (torchvision v1.5, eval mode, eager) ----------------------------------- */

/* Convolution as implicit GEMM: M = b oh ow, N = cout, K = cin r r. Returns
 * the output edge. cuDNN's eager call is one kernel; BatchNorm in eval mode
 * is a separate per-channel scale-and-shift kernel (one read, one write). */
static long long conv_bn(bld *B, long long cin, long long cout, long long hw, int r, int stride)
{
    long long pad = r / 2, oh = (hw + 2 * pad - r) / stride + 1;
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = B->conv_dt;
    k.acc_dtype = B->conv_dt;
    k.tensor_core = 1;
    k.batch = 1;
    k.m = B->b * oh * oh;
    k.n = cout;
    k.k = cin * r * r;
    k.conv_taps = r * r;
    k.conv_stride = stride;
    wl_core_bld_add(B, &k);
    wl_core_bld_ew(B, WL_EW_UNSPEC_SCALAR, B->b * cout * oh * oh, B->dt); /* BatchNorm */
    return oh;
}

static void resnet(bld *B)
{
    const wl_core_model *m = B->m;
    long long b = B->b, w0 = m->base_width;
    /* stem: 7x7/2 conv, BN, ReLU, 3x3/2 max-pool (a 4:1 reduction per output) */
    long long hw = conv_bn(B, m->channels, w0, m->image_size, 7, 2);
    wl_core_bld_ew(B, WL_EW_RELU, b * w0 * hw * hw, B->dt);
    hw = (hw + 2 - 3) / 2 + 1;
    wl_core_bld_rowop(B, WL_K_REDUCE, b * w0 * hw * hw, 4, B->dt);
    long long cin = w0;
    for (int st = 0; st < m->stages; st++) {
        long long w = w0 << st, cout = 4 * w;
        for (int blk = 0; blk < m->blocks[st]; blk++) {
            int stride = blk == 0 && st > 0 ? 2 : 1;
            long long h1 = conv_bn(B, cin, w, hw, 1, 1);
            wl_core_bld_ew(B, WL_EW_RELU, b * w * h1 * h1, B->dt);
            long long h2 = conv_bn(B, w, w, h1, 3, stride); /* v1.5: stride on the 3x3 */
            wl_core_bld_ew(B, WL_EW_RELU, b * w * h2 * h2, B->dt);
            conv_bn(B, w, cout, h2, 1, 1);
            if (blk == 0)
                conv_bn(B, cin, cout, hw, 1, stride); /* downsample */
            wl_core_bld_ew(B, WL_EW_ADD, b * cout * h2 * h2, B->dt);
            wl_core_bld_ew(B, WL_EW_RELU, b * cout * h2 * h2, B->dt);
            cin = cout;
            hw = h2;
        }
    }
    wl_core_bld_rowop(B, WL_K_REDUCE, b * cin, hw * hw, B->dt); /* adaptive average pool */
    /* fc: nn.Linear puts the classes in M; fp32 matmuls stay on CUDA cores */
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = B->gemm_dt;
    k.acc_dtype = B->tc ? B->gemm_dt : WL_DT_FP32;
    k.tensor_core = B->tc;
    k.batch = 1;
    k.m = m->classes;
    k.n = b;
    k.k = cin;
    wl_core_bld_add(B, &k);
}

static void name_of(char *buf, size_t n, const wl_core_model *m, const wl_core_shape *s,
                    const char *what)
{
    if (wl_core_model_is_vision(m))
        snprintf(buf, n, "%s_%s_b%lld_%s%s", m->id, wl_dtype_name(s->dtype), s->batch,
                 s->attention == WL_ATTN_FLASH && m->style == WL_STYLE_VIT ? "flash_" : "",
                 strcmp(what, "prefill") == 0 ? "inference" : what);
    else
        snprintf(buf, n, "%s_%s_b%lld_s%lld_%s%s", m->id, wl_dtype_name(s->dtype), s->batch,
                 s->seq, s->attention == WL_ATTN_FLASH ? "flash_" : "", what);
}

static void bld_free(bld *B)
{
    free(B->tape);
    free(B->plist);
    B->tape = NULL;
    B->plist = NULL;
    B->ntape = B->captape = B->np = B->capp = 0;
}

/* The whole step, or one layer only. */
static int build(const wl_core_model *model, const wl_core_shape *shape, int layer_only,
                 wl_core_workload **out, bld *B, wl_error *err)
{
    *out = NULL;
    if (setup(B, model, shape, err))
        return WL_EINVAL;
    char name[160];
    const char *what = shape->mode == WL_MODE_TRAIN ? (layer_only ? "train_layer" : "train")
                       : shape->mode == WL_MODE_DECODE ? (layer_only ? "decode_layer" : "decode")
                       : layer_only ? "layer" : "prefill";
    name_of(name, sizeof name, model, shape, what);
    B->wl = wl_core_workload_create(name);
    if (!B->wl)
        return WL_ENOMEM;
    if (model->style == WL_STYLE_RESNET && layer_only) {
        wl_error_set(err, model->id, 0, "scope", "a ResNet has no transformer layer");
        B->rc = WL_EINVAL;
    } else if (shape->mode == WL_MODE_TRAIN) {
        wl_core_bld_train_step(B, layer_only);
    } else if (shape->mode == WL_MODE_DECODE) {
        wl_core_bld_generate(B, layer_only);
    } else if (model->style == WL_STYLE_RESNET) {
        resnet(B);
    } else if (layer_only) {
        wl_core_bld_layer(B);
    } else {
        wl_core_bld_prefix(B);
        for (int l = 0; l < model->layers; l++)
            wl_core_bld_layer(B);
        suffix(B);
    }
    bld_free(B);
    if (B->rc) {
        wl_core_workload_free(B->wl);
        return B->rc;
    }
    *out = B->wl;
    return WL_OK;
}

int wl_core_build(const wl_core_model *model, const wl_core_shape *shape, wl_core_workload **out,
                  wl_error *err)
{
    bld B;
    return build(model, shape, 0, out, &B, err);
}

int wl_core_build_layer(const wl_core_model *model, const wl_core_shape *shape,
                        wl_core_workload **out, wl_error *err)
{
    bld B;
    return build(model, shape, 1, out, &B, err);
}

/* Parameters whose matmuls the 6N rule counts: all but the tables only
 * looked up (positions, token types, [CLS], an untied input embedding). */
static double matmul_params(const bld *B, double params)
{
    const wl_core_model *m = B->m;
    double d = (double)B->d;
    switch (m->style) {
    case WL_STYLE_VIT:
        return params - d - (double)B->s * d;
    case WL_STYLE_BERT:
        return params - ((double)m->max_positions + m->type_vocab_size) * d -
               (m->untied_head ? (double)m->vocab_size * d : 0);
    default:
        return params - (m->positions == WL_POS_LEARNED ? (double)m->max_positions * d : 0) -
               (m->untied_head ? (double)m->vocab_size * d : 0);
    }
}

int wl_core_build_info_of(const wl_core_model *model, const wl_core_shape *shape, int layer_only,
                          wl_core_build_info *out, wl_error *err)
{
    memset(out, 0, sizeof *out);
    bld B;
    int rc = setup(&B, model, shape, err);
    if (rc)
        return rc;
    if (model->style == WL_STYLE_RESNET && layer_only) {
        wl_error_set(err, model->id, 0, "scope", "a ResNet has no transformer layer");
        return WL_EINVAL;
    }
    if (shape->mode == WL_MODE_TRAIN) {
        /* the saved tensors: one micro-batch's forward is enough */
        B.wl = wl_core_workload_create("");
        if (!B.wl)
            return WL_ENOMEM;
        B.train = 1;
        if (layer_only) {
            wl_core_bld_layer(&B);
        } else {
            wl_core_bld_prefix(&B);
            for (int l = 0; l < model->layers; l++)
                wl_core_bld_layer(&B);
            wl_core_bld_head(&B);
        }
        B.saved_peak_step = B.saved_other + B.saved_peak;
        rc = B.rc;
        bld_free(&B);
        wl_core_workload_free(B.wl);
        if (rc)
            return rc;
    }
    /* the parameters of the mode's model (the prefill's base model has no
     * head: its list is built here for the count only) */
    wl_core_bld_pl_model(&B, layer_only);
    double params = 0;
    for (size_t i = 0; i < B.np; i++)
        params += B.plist[i];
    rc = B.rc;
    bld_free(&B);
    if (rc)
        return rc;
    out->params = params;
    out->matmul_params = layer_only ? params : matmul_params(&B, params);
    double L = layer_only ? 1 : model->layers, d = model->d_model;
    double s = (double)B.s, tok = (double)B.T;
    switch (shape->mode) {
    case WL_MODE_TRAIN:
        tok *= shape->grad_accum > 0 ? shape->grad_accum : 1;
        out->tokens = tok;
        out->model_flop = (6.0 * out->matmul_params + 12.0 * L * d * s) * tok;
        out->saved_gb = B.saved_peak_step / 1e9;
        break;
    case WL_MODE_DECODE: {
        /* the prompt, then token i attends to seq + i positions */
        double b = (double)B.b, g = (double)shape->gen;
        out->tokens = b * (s + g - 1);
        out->model_flop = (2.0 * out->matmul_params + 4.0 * L * d * s) * b * s;
        for (long long i = 1; i < shape->gen; i++)
            out->model_flop += (2.0 * out->matmul_params + 4.0 * L * d * (s + (double)i)) * b;
        /* HF's cache at the last token; a serving engine's paged cache in
         * steady state: running sequences spread evenly between the prompt
         * and its last token, each holding blocks of 16 tokens (vLLM's
         * default block size), half a block unused on average */
        double held = shape->launch == WL_LAUNCH_GRAPHS ? s + (g - 1) / 2 + 8 : s + g - 1;
        out->kv_cache_gb = 2.0 * L * b * held * (double)(B.kvh * B.hd) * wl_dtype_bytes(B.dt) / 1e9;
        break;
    }
    default:
        out->tokens = tok;
        out->model_flop = (2.0 * out->matmul_params + 4.0 * L * d * s) * tok;
        break;
    }
    return WL_OK;
}
