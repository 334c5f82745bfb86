/* A model's layers by family: the kernel sequence that HuggingFace eager
 * PyTorch launches for a base model's forward (attention, MLP, the layer,
 * the embeddings before it and the norm and pooler after it; ResNet's
 * bottlenecks), from its hyperparameters.
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

    if (wl_core_bld_proj_keeps_input(B, PROJ_QKV))
        wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B)); /* the projections' input */
    if (st == WL_STYLE_GPT2) {
        wl_core_bld_proj(B, PROJ_QKV, B->d, dq + 2 * dkv, 1); /* fused c_attn */
    } else {
        bld_fork f = wl_core_bld_fork(B); /* q, k and v share their input */
        wl_core_bld_fanout(B, B->T * B->d, B->dt, 3);
        wl_core_bld_proj(B, PROJ_Q, B->d, dq, qkv_bias);
        if (st == WL_STYLE_OPT)
            wl_core_bld_ew(B, WL_EW_SCALAR_MUL, B->T * dq, B->dt); /* q * scaling */
        wl_core_bld_fork_next(B, &f);
        wl_core_bld_proj(B, PROJ_K, B->d, dkv, qkv_bias);
        wl_core_bld_fork_next(B, &f);
        wl_core_bld_proj(B, PROJ_V, B->d, dkv, qkv_bias);
        wl_core_bld_fork_join(B, &f);
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
        /* called alone (no mask given) only GPT-2's own causal buffer
         * (where(bias, w, min)) masks; BERT, OPT and Llama add the mask the
         * model passes in, and a lone block has none */
        B->softmax_q = st == WL_STYLE_GPT2 || (!B->alone && (st == WL_STYLE_OPT || st == WL_STYLE_LLAMA)) ? B->s : 0;
        switch (st) {
        case WL_STYLE_GPT2:
            wl_core_bld_ew(B, WL_EW_UNSPEC_TENSOR, ss, B->dt); /* where(causal, w, min) */
            wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
            break;
        case WL_STYLE_BERT:
            wl_core_bld_ew(B, WL_EW_UNSPEC_SCALAR, ss, B->dt); /* / sqrt(d_head) */
            if (!B->alone)
                wl_core_bld_ew(B, WL_EW_ADD, ss, B->dt); /* + extended mask */
            wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
            break;
        case WL_STYLE_OPT:
            if (!B->alone)
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
            if (!B->alone)
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
    if (wl_core_bld_proj_keeps_input(B, PROJ_O))
        wl_core_bld_save(B, (double)(B->T * dq), wl_core_bld_eb(B)); /* the output projection's input */
    wl_core_bld_proj(B, PROJ_O, dq, B->d, st != WL_STYLE_LLAMA);
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
    if (wl_core_bld_proj_keeps_input(B, PROJ_UP) ||
        (B->m->activation == WL_ACT_SWIGLU && wl_core_bld_proj_keeps_input(B, PROJ_GATE)))
        wl_core_bld_save(B, (double)(B->T * B->d),
                         wl_core_bld_eb(B)); /* the first projection's input */
    switch (B->m->activation) {
    case WL_ACT_SWIGLU: {
        /* down(act(gate(x)) * up(x)): Python evaluates act(gate(x)) first;
         * gate and up share their input (as q, k and v do) */
        bld_fork f = wl_core_bld_fork(B);
        wl_core_bld_fanout(B, B->T * B->d, B->dt, 2);
        wl_core_bld_proj(B, PROJ_GATE, B->d, B->ff, bias);
        wl_core_bld_ew(B, WL_EW_SILU, n, B->dt);
        wl_core_bld_fork_next(B, &f);
        wl_core_bld_proj(B, PROJ_UP, B->d, B->ff, bias);
        wl_core_bld_fork_join(B, &f);
        wl_core_bld_ew(B, WL_EW_MUL, n, B->dt);
        wl_core_bld_save(B, 3.0 * (double)n, wl_core_bld_eb(B)); /* gate, silu(gate), up */
        break;
    }
    case WL_ACT_GELU_TANH:
        wl_core_bld_proj(B, PROJ_UP, B->d, B->ff, bias);
        if (B->m->style == WL_STYLE_GPT2) {
            new_gelu(B, n);
        } else {
            wl_core_bld_ew(B, WL_EW_GELU, n, B->dt);
            wl_core_bld_save(B, (double)n, wl_core_bld_eb(B));
        }
        break;
    case WL_ACT_GELU:
        wl_core_bld_proj(B, PROJ_UP, B->d, B->ff, bias);
        wl_core_bld_ew(B, WL_EW_GELU, n, B->dt);
        wl_core_bld_save(B, (double)n, wl_core_bld_eb(B));
        break;
    case WL_ACT_RELU:
        wl_core_bld_proj(B, PROJ_UP, B->d, B->ff, bias);
        wl_core_bld_ew(B, WL_EW_RELU, n, B->dt);
        break;
    }
    if (wl_core_bld_proj_keeps_input(B, PROJ_DOWN))
        wl_core_bld_save(B, (double)n, wl_core_bld_eb(B)); /* the second projection's input */
    wl_core_bld_proj(B, PROJ_DOWN, B->ff, B->d, bias);
}

/* Per layer, what stays saved for the backward pass: everything (no
 * recompute), all but the attention core's tensors, whose inputs q, k, v
 * the checkpoint keeps (selective, Korthikanti et al. 2022), or only the
 * layer's input (full); a full recompute rebuilds one layer's tensors at a
 * time in the backward pass. */
static void layer_saved(bld *B)
{
    if (!B->train || B->no_grad) /* a frozen layer keeps nothing */
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

void wl_core_bld_suffix(bld *B)
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

void wl_core_bld_resnet(bld *B)
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
