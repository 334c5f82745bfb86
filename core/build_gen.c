/* Generation: HF generate eagerly, or a serving engine replaying CUDA
 * graphs (--launch graphs). */
#include "builder_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- generation -------------------------------------------------------------------
 * HF generate with greedy search: a prefill over the prompt (the LM head on
 * the last position only, logits_to_keep = 1), then one decode step per
 * further token over one new position per sequence with the cache grown
 * by one: the same layers at T = batch, attention of one query over
 * seq + i keys. After each forward the sampler reads the last logits in
 * fp32 (.float()), takes the argmax, appends the token to the ids (a cat
 * of the b x length int64 ids), evaluates the stopping criteria (a few
 * kernels on b flags) and reads "all finished" back to the host: a sync
 * per token. --launch graphs builds a serving engine's generation instead
 * (below). */

/* ---- a serving engine's forward (--launch graphs) --------------------------------
 * CUDA graphs are replayed by serving engines (vLLM, TensorRT-LLM, SGLang)
 * and by torch.compile's "reduce-overhead" mode, not around HF's eager
 * kernel sequence, and those engines fuse that sequence too. --launch
 * graphs therefore builds a serving engine's forward, following vLLM's
 * model code (model_executor/models/llama.py, gpt2.py, opt.py) and its
 * custom ops. Per layer:
 *   the input norm: RMSNorm as one kernel, fused_add_rms_norm from the
 *     second layer on (the previous layer's residual add inside it);
 *     LayerNorm as one kernel, the residual adds as separate adds;
 *   the merged QKV projection (QKVParallelLinear: one GEMM, bias in it);
 *   rotary_embedding, in place on q and k with a cached cos/sin table;
 *   reshape_and_cache_flash: the new keys and values into the cache;
 *   the attention kernel (FlashAttention-2 varlen with causal masking for
 *     a prefill; the split-KV, GQA-packed decode kernel for a step);
 *   o_proj; the second norm (fused with the residual add for RMSNorm);
 *   the merged gate_up GEMM and silu_and_mul, or fc1 and one activation
 *     kernel (gelu_new, relu); the down projection.
 * That is 10 kernels a Llama layer against about 40 in HF eager. Each
 * decode step's forward up to the final norm is one graph (its first
 * kernel carries the launch call); the LM head on each sequence's last
 * position and the greedy sampler (the logits in fp32, argmax, the tokens
 * read back: a sync) run eagerly, as in vLLM's model runner. The prefill
 * is the same fused forward without a graph. The engine's scheduler and
 * input preparation on the host are not modelled. */
static void serve_norm(bld *B, int residual)
{
    int rms = B->m->norm != WL_NORM_LAYERNORM;
    if (residual && !rms)
        wl_core_bld_ewc(B, WL_EW_ADD, B->T * B->d, B->dt);
    wl_kernel k = wl_core_bld_rowk(rms ? WL_K_RMSNORM : WL_K_LAYERNORM, B->T, B->d, B->dt);
    k.residual = residual && rms;
    wl_core_bld_add(B, &k);
}

static void serve_attention(bld *B, long long bh)
{
    wl_dtype g = B->gemm_dt;
    if (B->quant) /* an 8-bit checkpoint's attention runs in bf16 */
        B->gemm_dt = B->dt;
    if (B->attn == WL_ATTN_FLASH) {
        wl_core_bld_flash(B, bh);
    } else {
        /* an unfused attention backend: scores, a softmax with the scale
         * and mask folded in, and the weighted sum */
        wl_core_bld_bgemm(B, bh, B->s, B->sk, B->hd);
        wl_core_bld_rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
        wl_core_bld_bgemm(B, bh, B->s, B->hd, B->sk);
    }
    B->gemm_dt = g;
}

/* A linear layer of a serving forward. With 8-bit weights (B->quant) vLLM's
 * W8A8 path first quantizes the bf16 input per token (scaled_fp8_quant:
 * a pass over the T x in activations, an absmax and a scaled cast) and runs
 * the GEMM in 8 bits; the head and the router stay in bf16 (unquantized
 * layers of the checkpoints). */
static void serve_linear(bld *B, long long in, long long out, int bias)
{
    wl_core_bld_linear_x(B, in, out, bias, 0); /* the quantize is linear_x's */
}

/* The same for 16-bit GEMMs (an unquantized layer of an 8-bit checkpoint). */
static void serve_linear16(bld *B, long long in, long long out)
{
    wl_dtype g = B->gemm_dt;
    if (B->quant)
        B->gemm_dt = B->dt;
    wl_core_bld_linear_x(B, in, out, 0, 0);
    B->gemm_dt = g;
}

/* Multi-head latent attention as vLLM 0.11 serves DeepSeek-V2/V3
 * (model_executor/models/deepseek_v2.py DeepseekV2MLAAttention,
 * v1/attention/backends/mla/common.py), one rank of h heads: the fused
 * q_a/kv_a projection (replicated on every rank) to the query's rank and
 * the latent plus the shared rotary key, their two RMSNorms, q_b_proj to
 * the heads' nope and rope parts, rotary on the rope parts, the latent and
 * rotary key into the cache (one per token, every rank a copy). A decode
 * token absorbs W_UK into its query (a batched GEMM over the heads, 128 to
 * the 512 of the latent), attends over the cached latents (FlashMLA on
 * Hopper, CUTLASS MLA on Blackwell: 576 values a token, read once as key
 * and value; built as a head of 288 the kernel model reads as key and value
 * both, so the bytes are the cache's and the MMAs' flops half of
 * 2 x (576 + 512) a score, a decode being memory-bound at 16 heads a rank
 * and more), then W_UV back to the heads' values. A prompt chunk's keys and
 * values are decompressed (kv_b_proj over its keys) for a 192-wide causal
 * attention of 128-wide values. */
static void serve_mla(bld *B)
{
    const wl_core_model *m = B->m;
    long long T = B->T, h = B->h, qr = m->q_lora_rank, kvr = m->kv_lora_rank;
    long long nope = m->qk_nope_head_dim, rope = m->qk_rope_head_dim, vd = m->v_head_dim;
    serve_linear(B, B->d, qr + kvr + rope, 0);
    if (qr > 0) {
        wl_kernel n = wl_core_bld_rowk(WL_K_RMSNORM, T, qr, B->dt);
        wl_core_bld_add(B, &n);
    }
    wl_kernel n2 = wl_core_bld_rowk(WL_K_RMSNORM, T, kvr, B->dt);
    wl_core_bld_add(B, &n2);
    if (qr > 0)
        serve_linear(B, qr, h * (nope + rope), 0);
    else
        serve_linear(B, B->d, h * (nope + rope), 0);
    wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, T * (h + 1) * rope, B->dt);
    wl_core_bld_ewc(B, WL_EW_COPY, T * (kvr + rope), B->dt); /* concat_and_cache_mla */
    long long hd = B->hd, kvh = B->kvh, s = B->s, sk = B->sk;
    if (B->b > 0) {
        long long td = B->b * B->s;
        wl_core_bld_bgemm(B, h, kvr, td, nope); /* W_UK: each head's 128 x 512 */
        B->hd = (kvr + rope) / 2;
        B->kvh = 1;
        serve_attention(B, B->b * h);
        B->hd = hd;
        B->kvh = kvh;
        wl_core_bld_bgemm(B, h, vd, td, kvr); /* W_UV: each head's 512 x 128 */
    }
    if (B->chunk > 0) {
        long long Tc = B->T;
        B->T = B->prompt; /* the chunk's keys, decompressed */
        serve_linear(B, kvr, h * (nope + vd), 0);
        B->T = Tc;
        B->s = B->chunk;
        B->sk = B->prompt;
        B->hd = (nope + rope + vd) / 2;
        B->kvh = h;
        serve_attention(B, h);
        B->hd = hd;
        B->kvh = kvh;
        B->s = s;
        B->sk = sk;
    }
}

/* A MoE layer's FFN as vLLM 0.11 runs it on one rank (FusedMoE,
 * layers/fused_moe/layer.py and fused_moe.py, the Triton path): the router
 * (a replicated linear to the experts' logits), topk_softmax (the top-k
 * experts and their weights a token), moe_align_block_size (the token
 * slots sorted by expert), then two grouped GEMMs over the experts that
 * got tokens with silu_and_mul between them, and moe_sum (each token's k
 * outputs added). With expert parallelism a rank holds experts / t whole
 * experts and computes only the slots routed to them (the others are masked
 * by its expert_map); without it every expert's width is split t ways.
 * Tokens are taken as routed uniformly: of E experts a rank's one gets
 * none of T tokens with probability (1 - k / E)^T, so E_rank (1 - (1 -
 * k/E)^T) of its experts are read, each once, with T k E_rank / E slots
 * between them: a decode step's weight traffic, which the grouped GEMMs'
 * weights dominate. Shared experts (Llama 4's, DeepSeek's) are a dense
 * MLP beside them, split t ways. The rank's output joins the others' in
 * the layer's all-reduce (serve/). */
static void serve_moe(bld *B)
{
    const wl_core_model *m = B->m;
    long long T = B->T, E = m->experts, k = m->experts_per_token, El = B->moe_experts;
    long long fe = B->moe_ff, d = B->d;
    if (k < 1)
        k = 1;
    serve_linear16(B, d, E); /* the router */
    wl_kernel sm = wl_core_bld_rowk(WL_K_SOFTMAX, T, E, WL_DT_FP32);
    wl_core_bld_add(B, &sm);
    wl_core_bld_ewc(B, WL_EW_COPY, T * k, WL_DT_FP32); /* align: the int32 slots by expert */
    double slots = (double)T * (double)k * (double)El / (double)E;
    double active = (double)El * (1 - pow(1 - (double)k / (double)E, (double)T));
    long long na = (long long)ceil(active - 1e-9);
    if (na < 1)
        na = 1;
    long long per = (long long)ceil(slots / (double)na);
    if (per < 1)
        per = 1;
    long long ns = (long long)ceil(slots);
    if (B->quant) /* the slots' tokens quantized for the 8-bit experts */
        wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, ns * d, B->dt);
    wl_core_bld_bgemm(B, na, 2 * fe, per, d);             /* w13: gate and up */
    wl_core_bld_ewc(B, WL_EW_SILU_MUL, ns * fe, B->dt);
    if (B->quant)
        wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, ns * fe, B->dt);
    wl_core_bld_bgemm(B, na, d, per, fe);                 /* w2: down */
    wl_kernel sum = wl_core_bld_rowk(WL_K_REDUCE, T * d, k, B->dt); /* moe_sum */
    wl_core_bld_add(B, &sum);
    if (m->shared_experts > 0) {
        long long ws = (long long)m->shared_experts *
                       (m->d_ff_expert > 0 ? m->d_ff_expert : m->d_ff) /
                       (B->moe_ranks > 1 ? B->moe_ranks : 1);
        serve_linear(B, d, 2 * ws, 0);
        wl_core_bld_ewc(B, WL_EW_SILU_MUL, T * ws, B->dt);
        serve_linear(B, ws, d, 0);
        wl_core_bld_ewc(B, WL_EW_ADD, T * d, B->dt);
    }
}

static void serve_layer(bld *B, int l)
{
    int first = l == 0;
    const wl_core_model *m = B->m;
    long long dq = B->h * B->hd, dkv = B->kvh * B->hd, T = B->T;
    int llama = m->style == WL_STYLE_LLAMA, bias = !llama;
    if (m->pre_norm)
        serve_norm(B, !first);
    if (wl_core_model_is_mla(m)) {
        serve_mla(B);
        serve_linear(B, B->h * m->v_head_dim, B->d, 0);
        goto mlp;
    }
    serve_linear(B, B->d, dq + 2 * dkv, bias || m->qkv_bias);
    if (m->positions == WL_POS_ROTARY)
        wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, T * (B->h + B->kvh) * B->hd, B->dt);
    wl_core_bld_cache_update(B);
    /* a sliding-window layer (Gemma 3's local ones) attends to the last
     * sliding_window keys of each query: s causal queries ending at sk keys
     * see min(sk, W + (s - 1) / 2) on average, W for one */
    int local = wl_core_model_layer_local(m, l);
    long long W = m->sliding_window, sk0 = B->sk;
    if (local && B->sk > W + (B->s - 1) / 2)
        B->sk = W + (B->s - 1) / 2;
    if (B->b > 0) /* a serving step of prompt chunks alone has no decode attention */
        serve_attention(B, B->b * B->h);
    B->sk = sk0;
    if (B->chunk > 0) {
        /* the arriving prompts' chunk attends causally to its prompt: a
         * chunk spread evenly over a prompt sees half of it on average,
         * which a causal kernel of chunk queries over the prompt's keys
         * counts */
        long long s = B->s, sk = B->sk;
        B->s = B->chunk;
        B->sk = B->prompt;
        if (local && B->sk > W + (B->s - 1) / 2)
            B->sk = W + (B->s - 1) / 2;
        serve_attention(B, B->h);
        B->s = s;
        B->sk = sk;
    }
    serve_linear(B, dq, B->d, bias);
mlp:
    serve_norm(B, 1);
    if (wl_core_model_layer_moe(m, l)) {
        serve_moe(B); /* its experts' down projections are its own */
    } else if (m->activation == WL_ACT_SWIGLU) {
        serve_linear(B, B->d, 2 * B->ff, bias);
        wl_core_bld_ewc(B, WL_EW_SILU_MUL, T * B->ff, B->dt);
        serve_linear(B, B->ff, B->d, bias);
    } else {
        serve_linear(B, B->d, B->ff, bias);
        wl_ew_op act = m->activation == WL_ACT_RELU ? WL_EW_RELU : WL_EW_GELU;
        wl_core_bld_ewc(B, act, T * B->ff, B->dt);
        serve_linear(B, B->ff, B->d, bias);
    }
    if (!llama) /* the MLP's residual add (RMSNorm models fuse it into the next norm) */
        wl_core_bld_ewc(B, WL_EW_ADD, T * B->d, B->dt);
}

/* One forward of a generation over B->s new positions with B->sk keys,
 * its kernels from `graph` on replayed from a CUDA graph. */
static void gen_forward(bld *B, int layer_only, int graph)
{
    int serve = B->sh->launch == WL_LAUNCH_GRAPHS;
    B->T = B->b * B->s + B->chunk;
    if (B->padded > B->T) /* a CUDA graph captured for more tokens computes them all */
        B->T = B->padded;
    B->graphing = graph;
    B->graph_n = 0;
    if (layer_only && serve) {
        serve_layer(B, 0);
    } else if (layer_only) {
        wl_core_bld_layer(B);
    } else if (serve) {
        /* token embeddings (a gather, not recorded) plus learned positions */
        if (B->m->positions == WL_POS_LEARNED)
            wl_core_bld_ewc(B, WL_EW_ADD, B->T * B->d, B->dt);
        for (int l = 0; l < B->m->layers && !B->rc; l++)
            serve_layer(B, l);
        if (B->m->final_norm && B->m->pre_norm)
            serve_norm(B, 1);
    } else {
        wl_core_bld_prefix(B);
        for (int l = 0; l < B->m->layers && !B->rc; l++)
            wl_core_bld_layer(B);
        if (B->m->final_norm && B->m->pre_norm)
            wl_core_bld_norm(B);
    }
    B->graphing = 0; /* the LM head runs eagerly */
    if (layer_only)
        return;
    long long T = B->T;
    B->T = B->head_rows > 0 ? B->head_rows : B->b; /* the last positions' hidden states */
    serve_linear16(B, B->d, B->head_vocab > 0 ? B->head_vocab : B->m->vocab_size);
    B->T = T;
}

/* Greedy sampling after each forward. HF generate: the last logits in
 * fp32 (.float()), the argmax, the token appended to the ids (a cat of the
 * b x length int64 ids), the stopping criteria (a few kernels on b flags)
 * and "all finished" read back to the host: a sync per token. A serving
 * engine: the logits in fp32, the argmax, the tokens read back. */
/* A serving engine's sampler past the cast to fp32 when it draws rather
 * than takes the argmax (vLLM V1, v1/sample/sampler.py and
 * ops/topk_topp_sampler.py), over n = rows x vocab fp32 logits:
 *   the temperature, logits.div_(t) in place;
 *   top-k/top-p by a full sort (apply_top_k_top_p, the PyTorch path, which
 *     vLLM takes unless VLLM_USE_FLASHINFER_SAMPLER enables FlashInfer's):
 *     logits.sort(dim=-1) of the rows, softmax of the sorted rows, their
 *     cumsum in place, the mask cumsum <= 1 - p, masked_fill_ of the sorted
 *     logits, and scatter back to vocabulary order (a clone, then the
 *     scatter reading values and int64 indices);
 *   FlashInfer: softmax, then top_p_sampling_from_probs, a rejection
 *     sampler that reads the probabilities a few times (two passes here);
 *   random_sample: softmax to probabilities, q.exponential_(), probs / q
 *     and the argmax (the Gumbel-max trick without a host sync).
 * The sort is ATen's segmented sort of (key, int64 index) pairs, which
 * sorts all rows at once with one device radix sort (cub onesweep: a
 * histogram pass reading the keys, then four 8-bit digit passes each
 * reading and writing 12 bytes an element) and a pass regrouping the rows
 * (SortStable.cu, segmented_sort_pairs_by_full_sort): about 130 bytes an
 * element, so at 128 rows of Llama 3's 128256-token vocabulary it moves
 * 2.2 GB, two thirds of a millisecond at an H100's bandwidth. vLLM's PR 40376 (2026),
 * which made FlashInfer's sampler the default, measured the PyTorch path
 * at 1.0, 2.3 and 6.2 ms for 64, 128 and 512 rows of 131072 (top-p). */
static void serve_draw(bld *B, long long V)
{
    long long n = B->b * V;
    const wl_dtype F = WL_DT_FP32;
    wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, n, F); /* / temperature */
    if (B->sampler == WL_SAMPLER_SORT) {
        wl_core_bld_ewc(B, WL_EW_FILL, 2 * n, F); /* (row, index) keys */
        wl_kernel h = wl_core_bld_rowk(WL_K_REDUCE, B->b, V, F); /* digit histograms */
        wl_core_bld_add(B, &h);
        for (int pass = 0; pass < 5; pass++) /* 4 digit passes, the rows regrouped */
            wl_core_bld_ewc(B, WL_EW_COPY, 3 * n, F); /* 12 bytes in, 12 out */
        wl_kernel sm = wl_core_bld_rowk(WL_K_SOFTMAX, B->b, V, F);
        wl_core_bld_add(B, &sm);
        wl_core_bld_ewc(B, WL_EW_COPY, n, F);           /* cumsum in place */
        wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, n, F);  /* <= 1 - p */
        wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, n, F);  /* masked_fill_ */
        wl_core_bld_ewc(B, WL_EW_COPY, n, F);           /* scatter's clone */
        wl_core_bld_ewc(B, WL_EW_TERNARY, n, F);        /* scatter: values, indices */
    }
    wl_kernel sm = wl_core_bld_rowk(WL_K_SOFTMAX, B->b, V, F);
    wl_core_bld_add(B, &sm);
    if (B->sampler == WL_SAMPLER_FLASHINFER) {
        wl_kernel r = wl_core_bld_rowk(WL_K_REDUCE, B->b, 2 * V, F);
        wl_core_bld_add(B, &r);
        return;
    }
    wl_core_bld_ewc(B, WL_EW_FILL, n, F);          /* exponential_ */
    wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, n, F); /* probs / q */
    wl_kernel am = wl_core_bld_rowk(WL_K_REDUCE, B->b, V, F); /* argmax */
    wl_core_bld_add(B, &am);
}

/* vLLM's penalties when a request asks for any (repetition_penalty != 1,
 * or a presence or frequency penalty: the ML.ENERGY benchmark sends
 * repetition_penalty 1.1 with every request), before the temperature, over
 * n = rows x vocab fp32 logits (vLLM 0.11 v1/sample/ops/penalties.py
 * apply_all_penalties, model_executor/layers/utils.py apply_penalties):
 * for the prompt's tokens and for the output's, a bin count
 * (torch.zeros((rows, vocab + 1), int64), scatter_add_ of the padded
 * token ids: ids only, small beside the rows) and its mask (> 0: 8 bytes
 * read, 1 written); the repetition penalty as one custom kernel reading the
 * logits and both masks (apply_repetition_penalties_); then the frequency
 * penalty (its factor times the int64 counts, subtracted) and the presence
 * penalty (times the mask, subtracted), which run whatever their values.
 * About 85 bytes an element: 2.8 GB a step at 256 rows of Llama 3's
 * 128256-token vocabulary. */
static void serve_penalties(bld *B, long long V)
{
    long long n = B->b * V;
    const wl_dtype F = WL_DT_FP32;
    for (int k = 0; k < 2; k++) {                      /* the prompt's, the output's */
        wl_core_bld_ewc(B, WL_EW_FILL, 2 * n, F);      /* int64 zeros */
        wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, n, F); /* counts > 0: 8 in, 1 out */
    }
    wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, n, F); /* repetition: logits, two masks */
    wl_core_bld_ewc(B, WL_EW_MUL, n, F);           /* frequency x int64 counts */
    wl_core_bld_ewc(B, WL_EW_ADD, n, F);           /* logits -= */
    wl_core_bld_ewc(B, WL_EW_FILL, n, F);          /* presence x the bool mask */
    wl_core_bld_ewc(B, WL_EW_ADD, n, F);           /* logits -= */
}

static void sample(bld *B, long long len)
{
    long long V = B->m->vocab_size;
    int serve = B->sh->launch == WL_LAUNCH_GRAPHS;
    if (B->hf5) {
        wl_core_bld_hf5_sample(B, len);
        return;
    }
    wl_core_bld_ewc(B, WL_EW_CAST_FP32, B->b * V, B->dt);
    if (serve && B->penalties)
        serve_penalties(B, V);
    if (serve && B->sampler != WL_SAMPLER_GREEDY) {
        serve_draw(B, V);
    } else {
        wl_kernel am = wl_core_bld_rowk(WL_K_REDUCE, B->b, V, WL_DT_FP32); /* argmax */
        wl_core_bld_add(B, &am);
    }
    if (!serve) {
        wl_core_bld_ewc(B, WL_EW_COPY, 2 * B->b * len, WL_DT_FP32);  /* cat(input_ids, next) */
        wl_core_bld_ewc(B, WL_EW_FILL, B->b, WL_DT_FP32);            /* max-length criterion */
        wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, B->b, WL_DT_FP32);   /* isin(last, eos) */
        wl_core_bld_ewc(B, WL_EW_UNSPEC_TENSOR, B->b, WL_DT_FP32);   /* unfinished & ~done */
        wl_kernel mx = wl_core_bld_rowk(WL_K_REDUCE, 1, B->b, WL_DT_FP32); /* .max() == 0 */
        wl_core_bld_add(B, &mx);
    }
    wl_core_bld_host_sync(B);
}

/* A serving engine's host work between two steps, which the GPU waits for
 * (vLLM's engine core with synchronous scheduling: the sampled tokens are
 * read back, the requests updated, the next step scheduled and its inputs
 * prepared before the next graph is launched). Its cost is the host's
 * (serve_step_us + serve_seq_us x the running sequences). */
static void engine_step(bld *B)
{
    wl_kernel k = {0};
    k.kind = WL_K_GAP;
    k.engine = 1;
    k.batch = B->b;
    wl_core_bld_add(B, &k);
}

/* One decode step with the cache at sk keys, its arriving prompts'
 * chunk tokens, standing for rep steps (build.rep). */
static void decode_step(bld *B, int layer_only, long long sk, long long chunk, long long rep)
{
    int serve = B->sh->launch == WL_LAUNCH_GRAPHS;
    if (rep > 1)
        wl_core_workload_begin_stretch(B->wl);
    B->rep = rep;
    B->sk = sk;
    B->chunk = chunk;
    gen_forward(B, layer_only, serve);
    if (!layer_only) {
        sample(B, sk + 1);
        if (serve)
            engine_step(B);
    }
    B->rep = 0;
}

/* The steps of a long generation differ only in the cache's length (and a
 * serving engine's chunk of arriving prompt tokens): the kernels' shapes
 * are the same, their times affine in the length between the tile and
 * split steps of the attention kernels. So beyond WL_GEN_EXACT_STEPS steps
 * (127 KB and 1.4 ms a step for Llama-3-8B eager: a million-token
 * generation would take 127 GB) consecutive steps are built in blocks, one
 * step per block at the block's middle length standing for all of its
 * steps (wl_core_workload_add_n): the midpoint rule, exact for a time
 * affine in the length. A block spans at most 1/GEN_BLOCK_DIV of the
 * length it starts at, so the blocks grow geometrically and a generation
 * of g tokens after a prompt of s builds about GEN_BLOCK_DIV ln((s + g) /
 * max(s, GEN_BLOCK_DIV)) + GEN_BLOCK_DIV steps: 330 for a million tokens
 * after 128, 42 MB for Llama-3-8B. Against every step built, prediction
 * time and energy differ by under 0.05% (test_train test_decode_blocks:
 * worst 0.006% over the GPUs, batches, stacks, launch paths and power
 * limits it checks). A block's odd length puts its middle on a
 * whole length. A serving engine's chunked prefill spreads the block's
 * prompt tokens over its steps: its q = C / L tokens on L - r steps and
 * q + 1 on the other r, built as two steps. */
#define GEN_BLOCK_DIV 32

static void decode_blocks(bld *B, int layer_only, long long prompt, long long gen,
                          double per_step)
{
    double pending = 0;
    for (long long i = 1; i < gen && !B->rc;) {
        long long L = (prompt + i) / GEN_BLOCK_DIV;
        if (L > gen - i)
            L = gen - i;
        if (L < 1)
            L = 1;
        if (L % 2 == 0)
            L--;
        long long mid = prompt + i + L / 2;
        pending += per_step * (double)L;
        long long C = (long long)pending;
        pending -= (double)C;
        long long q = C / L, r = C % L;
        decode_step(B, layer_only, mid, q, L - r);
        if (r > 0)
            decode_step(B, layer_only, mid, q + 1, r);
        i += L;
    }
}

/* A generation: the prefill over the prompt (time to first token), then
 * gen - 1 decode steps, each over one new position per sequence with the
 * cache one longer; eagerly (HF generate with a static cache) or as a
 * serving engine replays them from CUDA graphs. */
void wl_core_bld_generate(bld *B, int layer_only)
{
    long long prompt = B->s, gen = B->sh->gen, b = B->b;
    int serve = B->sh->launch == WL_LAUNCH_GRAPHS;
    B->phase = WL_PHASE_FORWARD;
    B->gen = 1;
    B->sk = prompt;
    if (serve)
        B->b = 1; /* time to first token: one arriving request's prompt */
    gen_forward(B, layer_only, 0);
    if (!layer_only)
        sample(B, prompt + 1);
    B->b = b;
    if (!layer_only && serve)
        engine_step(B); /* over the running sequences */
    B->phase = WL_PHASE_DECODE;
    B->gen = 2;
    B->s = 1;
    /* Continuous batching in steady state (Little's law): b requests run,
     * each for gen steps, so b / gen of them finish and as many arrive per
     * step, and their prompts are prefilled in chunks inside the decode
     * steps (vLLM's chunked prefill: prompt tokens ride in the same
     * forward as the decode tokens). The other b - 1 prompts are spread
     * evenly over the gen - 1 steps, error-diffused to whole tokens: the
     * generation does the same work as b prompts and b x gen tokens. */
    double per_step = serve && gen > 1 ? (double)(b - 1) * (double)prompt / (double)(gen - 1) : 0;
    B->prompt = prompt;
    if (gen - 1 > WL_GEN_EXACT_STEPS && !B->sh->gen_exact) {
        decode_blocks(B, layer_only, prompt, gen, per_step);
    } else {
        double pending = 0;
        for (long long i = 1; i < gen && !B->rc; i++) {
            pending += per_step;
            long long chunk = (long long)pending;
            pending -= (double)chunk;
            decode_step(B, layer_only, prompt + i, chunk, 1);
        }
    }
    B->chunk = 0;
    B->s = prompt;
    B->sk = prompt;
    B->T = B->b * prompt;
}

/* One step of a serving engine as serve/ simulates it (vLLM's scheduler
 * step: one forward over every scheduled token). A step of prompt tokens
 * alone is a prefill over them (one request's, or several requests' chunks
 * counted as one sequence of their tokens over their token-weighted keys:
 * the attention's work, queries x keys, is the same); a step with decode
 * sequences is a decode step with the prompt chunks riding in it, as
 * decode_step builds for --launch graphs. Steps with prompt tokens run
 * eagerly (vLLM V1 captures its graphs for decode-sized batches). */
void wl_core_bld_serve_step(bld *B, const wl_core_serve_step *st)
{
    B->gen = 2;
    B->rep = 0;
    if (st->decode > 0) {
        B->phase = WL_PHASE_DECODE;
        B->b = st->decode;
        B->s = 1;
        B->sk = st->context;
        B->chunk = st->chunk;
        B->prompt = st->chunk_context;
    } else {
        B->phase = WL_PHASE_FORWARD;
        B->b = 1;
        B->s = st->chunk;
        B->sk = st->chunk_context;
        B->chunk = 0;
    }
    B->padded = st->padded;
    B->head_rows = st->sampled;
    B->sampler = st->sampler;
    B->penalties = st->penalties;
    long long b = B->b;
    /* the host's step that scheduled this one, which the GPU waits for
     * (first: a workload's trailing gap would stand for nothing after it) */
    B->b = st->seqs > 0 ? st->seqs : 1;
    if (st->host_step)
        engine_step(B);
    B->b = b;
    gen_forward(B, 0, st->graph);
    B->b = st->sampled;
    if (st->sampled > 0)
        sample(B, st->decode > 0 ? st->context + 1 : st->chunk_context + 1);
    B->b = b;
    B->padded = 0;
    B->head_rows = 0;
    B->sampler = WL_SAMPLER_GREEDY;
    B->penalties = 0;
    B->chunk = 0;
}
