/* The kernels HF transformers 5.x on PyTorch 2.11 launches beyond the
 * transformers 4.x sequence of build_layer.c (--stack hf5, the default);
 * its RMSNorm and rotary are with the other primitives in build_ops.c. */
#include "builder_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- HF transformers 5.x on PyTorch 2.11 (--stack hf5, --impl hf-eager) -------
 * What the modules of transformers 5.17 launch in eager mode, from their
 * source (models/{gpt2,bert,opt,llama,qwen2}/modeling_*.py,
 * integrations/sdpa_attention.py, masking_utils.py, cache_utils.py) and
 * checked against the H200 profiles of shared/data/profiles, which record
 * every kernel with its aten op:
 *  - the embeddings are gathers (index_select), the positions an arange
 *    plus the cache's length;
 *  - eager attention gets a 4-D additive mask built per forward
 *    (masking_utils: aranges, a comparison, a where over b x s x s keys);
 *    SDPA gets none (is_causal);
 *  - a decoder's DynamicCache appends keys and values with torch.cat,
 *    which copies the whole cache every forward;
 *  - eager_attention_forward: repeat_kv copies for grouped queries,
 *    matmul on a non-contiguous query (a copy), the scores times the
 *    scaling (a kernel even at 1.0), plus the mask, softmax (in fp32 with
 *    a cast each way for OPT and Llama-style models), matmul with the
 *    values, the output made contiguous (a copy);
 *  - Llama-style RMSNorm in fp32: the cast, pow, mean, + eps, rsqrt, the
 *    product, the cast back and the weight: eight kernels;
 *  - rotary: x cos + rotate_half(x) sin, rotate_half a neg of one half
 *    and a cat: five kernels per tensor. */

/* The kernels of masking_utils' causal mask for eager attention: the
 * cache and kv positions (aranges and adds), the causal comparison over
 * s x sk, then where(mask, 0, min) over b x s x sk. */
static void hf5_causal_mask(bld *B)
{
    const wl_dtype L = WL_DT_FP32; /* int64 positions, counted at 4 bytes */
    for (int i = 0; i < 3; i++)
        wl_core_bld_ewc(B, WL_EW_FILL, B->s, L);
    wl_core_bld_ewc(B, WL_EW_SCALAR_ADD, B->s, L);
    wl_core_bld_ewc(B, WL_EW_FILL, B->sk, L);
    wl_core_bld_ewc(B, WL_EW_SCALAR_ADD, B->sk, L);
    B->strided = 1; /* broadcast operands */
    wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, B->s * B->sk, WL_DT_INT8); /* kv_idx <= q_idx */
    B->strided = 0;
    wl_core_bld_ewc(B, WL_EW_FILL, 1, B->dt);
    B->strided = 1;
    wl_core_bld_ewc(B, WL_EW_TERNARY, B->b * B->s * B->sk, B->dt);     /* where(mask, 0, min) */
    B->strided = 0;
}

/* LlamaRotaryEmbedding.forward per forward pass: the positions to fp32,
 * inv_freq @ positions (a batched GEMM of K = 1), cat(freqs, freqs),
 * cos and sin times attention_scaling, both cast to the activation dtype. */
static void hf5_rotary_table(bld *B)
{
    long long rows = B->gen == 2 ? B->b : 1; /* a decode step's positions per sequence */
    long long cs = rows * B->s * B->hd;
    const wl_dtype F = WL_DT_FP32;
    wl_core_bld_ewc(B, WL_EW_COPY, rows * B->s, F);
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = F;
    k.acc_dtype = F;
    k.batch = rows;
    k.m = B->hd / 2;
    k.n = B->s;
    k.k = 1;
    wl_core_bld_add(B, &k);
    B->strided = 2;
    wl_core_bld_ewc(B, WL_EW_COPY, cs, F);          /* cat(freqs, freqs) */
    B->strided = 0;
    wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, cs, F); /* cos */
    wl_core_bld_ewc(B, WL_EW_SCALAR_MUL, cs, F);
    wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, cs, F); /* sin */
    wl_core_bld_ewc(B, WL_EW_SCALAR_MUL, cs, F);
    if (wl_core_bld_half(B)) {
        wl_core_bld_ewc(B, WL_EW_CAST_BF16, cs, F);
        wl_core_bld_ewc(B, WL_EW_CAST_BF16, cs, F);
    }
}

/* GenerationMixin's inputs for a decode step, whatever the model: the last
 * tokens and the positions (two copies) before the embeddings, then the
 * attention mask's copies, its sum and a check read back to the host (the
 * H200 Llama profile; the mixin is the same code for every decoder). */
static void hf5_step_inputs(bld *B, int after)
{
    const wl_dtype L = WL_DT_FP32;
    if (B->gen != 2)
        return;
    if (!after) {
        wl_core_bld_ewc(B, WL_EW_COPY, B->b, L);
        wl_core_bld_ewc(B, WL_EW_COPY, B->b, L);
        return;
    }
    wl_core_bld_ewc(B, WL_EW_COPY, B->b * B->sk, WL_DT_INT8);
    wl_core_bld_ewc(B, WL_EW_COPY, B->b * B->sk, L);
    wl_kernel sm = wl_core_bld_rowk(WL_K_REDUCE, B->b, B->sk, L);
    wl_core_bld_add(B, &sm);
    wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, 1, L);
    wl_core_bld_host_sync(B);
}

void wl_core_bld_hf5_prefix(bld *B)
{
    const wl_core_model *m = B->m;
    long long n = B->T * B->d;
    const wl_dtype L = WL_DT_FP32;
    int eager = B->attn == WL_ATTN_EAGER;
    switch (m->style) {
    case WL_STYLE_GPT2:
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        hf5_step_inputs(B, 0);
        wl_core_bld_ewc(B, WL_EW_COPY, n, B->dt);           /* wte(input_ids) */
        wl_core_bld_ewc(B, WL_EW_FILL, B->s, L);             /* cache_position */
        wl_core_bld_ewc(B, WL_EW_SCALAR_ADD, B->s, L);
        if (m->positions == WL_POS_LEARNED) {
            wl_core_bld_embed_bwd(B, m->max_positions, 0);
            wl_core_bld_ewc(B, WL_EW_COPY, B->s * B->d, B->dt); /* wpe(position_ids) */
            wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        }
        wl_core_bld_dropout(B, n, m->hidden_dropout);
        hf5_step_inputs(B, 1);
        if (eager)
            hf5_causal_mask(B);
        break;
    case WL_STYLE_BERT:
        wl_core_bld_ewc(B, WL_EW_COPY, B->s, L);             /* position_ids[:, :s] */
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        wl_core_bld_ewc(B, WL_EW_COPY, n, B->dt);            /* word_embeddings */
        wl_core_bld_ewc(B, WL_EW_COPY, B->T, L);             /* token_type_ids expanded */
        wl_core_bld_embed_bwd(B, m->type_vocab_size, 0);
        wl_core_bld_ewc(B, WL_EW_COPY, n, B->dt);            /* token_type_embeddings */
        wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        wl_core_bld_embed_bwd(B, m->max_positions, 0);
        wl_core_bld_ewc(B, WL_EW_COPY, B->s * B->d, B->dt);  /* position_embeddings */
        wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        wl_core_bld_norm(B);
        wl_core_bld_dropout(B, n, m->hidden_dropout);
        break;
    case WL_STYLE_OPT:
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        hf5_step_inputs(B, 0);
        wl_core_bld_ewc(B, WL_EW_COPY, n, B->dt);            /* embed_tokens */
        hf5_step_inputs(B, 1);
        /* the all-ones attention mask the model makes, its positions
         * (cumsum(mask) * mask - 1) and the padding half of the mask */
        wl_core_bld_ewc(B, WL_EW_FILL, B->T, L);
        wl_kernel cs = wl_core_bld_rowk(WL_K_REDUCE, B->b, B->s, L);
        wl_core_bld_add(B, &cs);
        wl_core_bld_ewc(B, WL_EW_MUL, B->T, L);
        wl_core_bld_ewc(B, WL_EW_SCALAR_ADD, B->T, L);
        wl_core_bld_ewc(B, WL_EW_COPY, B->T, L);
        wl_core_bld_ewc(B, WL_EW_COPY, B->T, WL_DT_INT8);
        if (eager) {
            hf5_causal_mask(B);
            /* and-ed with the padding mask of every sequence */
            wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, B->s * B->sk, WL_DT_INT8);
            wl_core_bld_ewc(B, WL_EW_COPY, B->b * B->sk, L);
            wl_core_bld_ewc(B, WL_EW_COPY, B->b * B->sk, L);
            wl_core_bld_ewc(B, WL_EW_COPY, B->T, WL_DT_INT8);
            wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, B->b * B->s * B->sk, WL_DT_INT8);
        }
        wl_core_bld_ewc(B, WL_EW_SCALAR_ADD, B->T, L);       /* positions + offset 2 */
        if (m->positions == WL_POS_LEARNED) {
            wl_core_bld_embed_bwd(B, m->max_positions, 0);
            wl_core_bld_ewc(B, WL_EW_COPY, n, B->dt);        /* embed_positions */
            wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
        }
        break;
    default: /* LLAMA */
        wl_core_bld_embed_bwd(B, m->vocab_size, !m->untied_head);
        if (B->gen == 2) {
            hf5_step_inputs(B, 0);
            wl_core_bld_ewc(B, WL_EW_COPY, n, B->dt);        /* embed_tokens */
            hf5_step_inputs(B, 1);
        } else {
            wl_core_bld_ewc(B, WL_EW_COPY, n, B->dt);        /* embed_tokens */
            wl_core_bld_ewc(B, WL_EW_FILL, B->s, L);         /* cache_position */
            wl_core_bld_ewc(B, WL_EW_SCALAR_ADD, B->s, L);
        }
        if (eager)
            hf5_causal_mask(B);
        break;
    }
    if (m->positions == WL_POS_ROTARY)
        hf5_rotary_table(B);
}

/* The dynamic cache's update of one layer: torch.cat of the cache (empty
 * in a prefill) and the new keys, then the values, each copying the
 * whole cache of b x kv_heads x sk x head_dim. A prefill's new keys are a
 * transposed view (cat's strided kernel); a decode step's one position is
 * contiguous, and cat takes its vectorized kernel (the H200 profiles). */
static void hf5_cache_cat(bld *B)
{
    long long n = B->b * B->kvh * B->sk * B->hd;
    B->strided = B->s > 1 ? 2 : 0;
    wl_core_bld_ew(B, WL_EW_COPY, n, B->dt);
    wl_core_bld_ew(B, WL_EW_COPY, n, B->dt);
    B->strided = 0;
}

/* Softmax as PyTorch 2.11 runs it: the backward is the product of the
 * gradient and the output, then _softmax_backward_data's reduction
 * kernel (two kernels in every training profile). */
static void hf5_softmax(bld *B, long long rows, long long dim, wl_dtype dt)
{
    wl_kernel k = wl_core_bld_rowk(WL_K_SOFTMAX, rows, dim, dt);
    wl_core_bld_add(B, &k);
    tp_ent *e = wl_core_bld_tp_new(B);
    wl_kernel mb = wl_core_bld_ewk(WL_EW_MUL, rows * dim, dt);
    wl_core_bld_tp_k(e, &mb);
    k.bwd = 1;
    wl_core_bld_tp_k(e, &k);
}

/* A gradient that reaches a view with another layout (heads and tokens
 * transposed) is made contiguous before the next matmul: one copy. */
static void hf5_layout_grad(bld *B, long long n, int copies)
{
    tp_ent *e = wl_core_bld_tp_new(B);
    wl_kernel c = wl_core_bld_ewk(WL_EW_COPY, n, B->dt);
    c.strided = 1;
    for (int i = 0; e && i < copies; i++)
        wl_core_bld_tp_k(e, &c);
}

void wl_core_bld_hf5_attention(bld *B)
{
    const wl_core_model *m = B->m;
    long long bh = B->b * B->h, ss = bh * B->s * B->sk;
    long long dq = B->h * B->hd, dkv = B->kvh * B->hd;
    wl_style st = m->style;
    int qkv_bias = st != WL_STYLE_LLAMA || m->qkv_bias;
    int decoder = st != WL_STYLE_BERT;
    if (wl_core_bld_proj_keeps_input(B, PROJ_QKV))
        wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B)); /* the projections' input */
    if (st == WL_STYLE_GPT2) {
        wl_core_bld_proj(B, PROJ_QKV, B->d, dq + 2 * dkv, 1); /* c_attn, split into views */
        /* backward: the split's gradient is a cat of the three (the
         * query's and the key's made contiguous first) */
        tp_ent *e = wl_core_bld_tp_new(B);
        wl_kernel cat = wl_core_bld_ewk(WL_EW_COPY, B->T * (dq + 2 * dkv), B->dt);
        cat.strided = 2;
        wl_core_bld_tp_k(e, &cat);
        hf5_layout_grad(B, B->T * dq, 2);
    } else {
        bld_fork f = wl_core_bld_fork(B); /* q, k and v share their input */
        wl_core_bld_fanout(B, B->T * B->d, B->dt, 3);
        wl_core_bld_proj(B, PROJ_Q, B->d, dq, qkv_bias);
        hf5_layout_grad(B, B->T * dq, 1);
        if (st == WL_STYLE_OPT)
            wl_core_bld_ew(B, WL_EW_SCALAR_MUL, B->T * dq, B->dt); /* q * scaling */
        wl_core_bld_fork_next(B, &f);
        wl_core_bld_proj(B, PROJ_K, B->d, dkv, qkv_bias);
        hf5_layout_grad(B, B->T * dkv, 1);
        wl_core_bld_fork_next(B, &f);
        wl_core_bld_proj(B, PROJ_V, B->d, dkv, qkv_bias);
        hf5_layout_grad(B, B->T * dkv, 1);
        wl_core_bld_fork_join(B, &f);
    }
    if (m->positions == WL_POS_ROTARY) {
        wl_core_bld_rotary(B, B->h);
        wl_core_bld_rotary(B, B->kvh);
    }
    /* inside a model's forward the decoder's DynamicCache concatenates k
     * and v (cache_utils); a block called alone has no cache */
    if (decoder && !B->alone)
        hf5_cache_cat(B);
    if (B->attn == WL_ATTN_FLASH) {
        /* sdpa_attention_forward: grouped queries go to SDPA (enable_gqa),
         * no copies; cuDNN's decode kernel (one query) reduces its key
         * splits in a second kernel */
        wl_core_bld_flash(B, bh);
        if (B->s == 1 && !B->train) {
            wl_kernel cb = wl_core_bld_ewk(WL_EW_COPY, bh * 2 * B->hd, WL_DT_FP32);
            cb.internal = 1; /* cuDNN launches it inside the one SDPA call */
            wl_core_bld_add(B, &cb);
        }
    } else {
        wl_core_bld_mark(B, MARK_CORE_BEGIN);
        B->in_core = B->train;
        long long kvn = B->b * B->h * B->sk * B->hd;
        B->strided = 1; /* the copies read transposed or expanded views */
        if (B->kvh < B->h) { /* repeat_kv: expand and reshape, a copy each */
            wl_core_bld_ew(B, WL_EW_COPY, kvn, B->dt);
            wl_core_bld_ew(B, WL_EW_COPY, kvn, B->dt);
        }
        wl_core_bld_ew(B, WL_EW_COPY, B->T * dq, B->dt);          /* the query made contiguous */
        if (!decoder)
            wl_core_bld_ew(B, WL_EW_COPY, kvn, B->dt); /* BERT: key.transpose made contiguous */
        B->strided = 0;
        wl_core_bld_save(B, 2.0 * (double)(B->T * dq), wl_core_bld_eb(B));
        wl_core_bld_bgemm(B, bh, B->s, B->sk, B->hd);
        wl_core_bld_ew(B, WL_EW_SCALAR_MUL, ss, B->dt);           /* * scaling */
        /* eager_attention_forward adds the mask only when one is given: a
         * block called alone gets none (and is then not causal) */
        int masked = decoder && !B->alone;
        if (masked) {
            B->strided = 1;
            wl_core_bld_ew(B, WL_EW_ADD, ss, B->dt); /* + the 4-D mask, broadcast over heads */
            B->strided = 0;
        }
        wl_dtype sdt = B->dt;
        int fp32_softmax = (st == WL_STYLE_OPT || st == WL_STYLE_LLAMA) && wl_core_bld_half(B);
        if (fp32_softmax) {
            wl_core_bld_ew(B, WL_EW_CAST_FP32, ss, B->dt);
            sdt = WL_DT_FP32;
        }
        B->softmax_q = masked ? B->s : 0; /* the causal mask */
        hf5_softmax(B, bh * B->s, B->sk, sdt);
        B->softmax_q = 0;
        if (fp32_softmax)
            wl_core_bld_ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
        wl_core_bld_save(B, (double)ss, wl_dtype_bytes(sdt));
        int drop = B->train && m->attention_dropout > 0;
        wl_core_bld_dropout(B, ss, m->attention_dropout);
        if (drop || fp32_softmax)
            wl_core_bld_save(B, (double)ss, wl_core_bld_eb(B));
        if (!decoder) {
            B->strided = 1;
            wl_core_bld_ew(B, WL_EW_COPY, kvn, B->dt); /* BERT: the values made contiguous */
            B->strided = 0;
        }
        wl_core_bld_save(B, (double)(B->T * dq), wl_core_bld_eb(B));
        wl_core_bld_bgemm(B, bh, B->s, B->hd, B->sk);
        B->in_core = 0;
        wl_core_bld_mark(B, MARK_CORE_END);
        /* transpose(1, 2).contiguous(); its gradient back to the heads' layout */
        wl_kernel oc = wl_core_bld_ewk(WL_EW_COPY, B->T * dq, B->dt);
        oc.strided = 1;
        B->strided = 1;
        wl_core_bld_ewb(B, WL_EW_COPY, B->T * dq, B->dt, &oc, 1);
        B->strided = 0;
    }
    if (wl_core_bld_proj_keeps_input(B, PROJ_O))
        wl_core_bld_save(B, (double)(B->T * dq), wl_core_bld_eb(B)); /* the output projection's input */
    wl_core_bld_proj(B, PROJ_O, dq, B->d, st != WL_STYLE_LLAMA);
}

/* HF generate (transformers 5.x) after each forward, as the H200 decode
 * profile records it: the cache position and attention mask grown (an
 * arange, adds, two cats), the logits in fp32, two logits processors
 * (each an arange, fills, a comparison over the vocabulary, an any and a
 * where over b x V), the argmax, then the unfinished-sequence bookkeeping
 * and the stopping criteria over b flags (17 small kernels) and their
 * verdict read back (a sync). */
void wl_core_bld_hf5_sample(bld *B, long long len)
{
    long long V = B->m->vocab_size, b = B->b;
    const wl_dtype L = WL_DT_FP32, I = WL_DT_INT8;
    wl_core_bld_ewc(B, WL_EW_FILL, 1, L);
    wl_core_bld_ewc(B, WL_EW_ADD, b, L);
    wl_core_bld_ewc(B, WL_EW_SCALAR_ADD, b, L);
    wl_core_bld_ewc(B, WL_EW_COPY, b * len, L);
    wl_core_bld_ewc(B, WL_EW_FILL, b, L);
    wl_core_bld_ewc(B, WL_EW_COPY, b * len, L);
    wl_core_bld_ewc(B, WL_EW_CAST_FP32, b * V, B->dt);
    for (int p = 0; p < 2; p++) {
        wl_core_bld_ewc(B, WL_EW_FILL, V, L);
        wl_core_bld_ewc(B, WL_EW_FILL, V, I);
        wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, V, L);
        wl_kernel any = wl_core_bld_rowk(WL_K_REDUCE, 1, V, I);
        wl_core_bld_add(B, &any);
        wl_core_bld_ewc(B, WL_EW_FILL, 1, L);
        wl_core_bld_ewc(B, WL_EW_TERNARY, b * V, L);
    }
    wl_kernel am = wl_core_bld_rowk(WL_K_REDUCE, b, V, L); /* argmax */
    wl_core_bld_add(B, &am);
    static const wl_ew_op crit[] = {WL_EW_MUL, WL_EW_SCALAR_ADD, WL_EW_MUL, WL_EW_ADD,
                                    WL_EW_COPY, WL_EW_FILL, WL_EW_FILL, WL_EW_UNSPEC_TENSOR,
                                    WL_EW_FILL, WL_EW_UNSPEC_TENSOR};
    for (size_t i = 0; i < sizeof crit / sizeof *crit; i++)
        wl_core_bld_ewc(B, crit[i], crit[i] == WL_EW_COPY ? b * len : b, L);
    wl_kernel r = wl_core_bld_rowk(WL_K_REDUCE, 1, b, I);
    wl_core_bld_add(B, &r); /* any */
    wl_core_bld_add(B, &r); /* any */
    wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, b, I);
    wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, b, I);
    wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, b, L);
    wl_core_bld_add(B, &r); /* max */
    wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, 1, L);
    wl_core_bld_host_sync(B);
}
