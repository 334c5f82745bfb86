/* Memory footprint of a prefill forward pass in eager PyTorch: the model's
 * parameters and buffers, the activations alive at the worst moment of the
 * pass, the key/value cache a decoder's forward returns, and what the CUDA
 * context and the libraries hold.
 *
 * Weights are counted from the architecture (HF modeling code of the same
 * generation as the builders, torchvision for ResNet): every nn.Linear,
 * embedding, norm and convolution, so the count is exact where the preset
 * gives the embedding tables (vocab_size, max_position_embeddings).
 *
 * Activations follow the eager code's tensor lifetimes under no_grad: a
 * Python name keeps its tensor until it is rebound, so `x = f(x)` holds the
 * old and the new tensor at once while f runs; a temporary of an expression
 * dies when the call that took it returns. The peak is in one layer's
 * attention (the b h s^2 score matrices) or its MLP (the d_ff-wide
 * intermediates), on top of the residual stream and the normed input. */
#include "core_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* CUDA context, the kernels PyTorch loads (lazily since CUDA 11.7) and the
 * cuBLAS/cuDNN handles: 0.3-0.5 GB in nvidia-smi after torch.cuda.init() on
 * A100/H100 with CUDA 12 (PyTorch "CUDA semantics: memory management" notes
 * that this is held outside the caching allocator). Plus cuBLAS's workspace,
 * which PyTorch sizes by CUBLAS_WORKSPACE_CONFIG ":4096:8" (32 MiB) on
 * Hopper and later and ~8 MiB before; 32 MiB is used for all. */
#define CONTEXT_GB 0.5
#define CUBLAS_WORKSPACE_GB (32.0 * 1048576 / 1e9)

/* Parameters of a norm over d features. */
static double norm_params(const wl_core_model *m, double d)
{
    return m->norm == WL_NORM_RMSNORM ? d : 2 * d;
}

/* ResNet (torchvision v1.5): conv weights without bias; BatchNorm has a
 * weight and a bias per channel (parameters) and a running mean and
 * variance (buffers, also on the GPU). *bn_channels sums the channels. */
static double resnet_params(const wl_core_model *m, double *bn_channels)
{
    double c0 = m->base_width, p = m->channels * c0 * 49, bn = c0, cin = c0;
    for (int st = 0; st < m->stages; st++) {
        double w = c0 * (double)(1LL << st), cout = 4 * w;
        for (int blk = 0; blk < m->blocks[st]; blk++) {
            p += cin * w + w * w * 9 + w * cout;
            bn += w + w + cout;
            if (blk == 0) {
                p += cin * cout; /* downsample 1x1 conv + BN */
                bn += cout;
            }
            cin = cout;
        }
    }
    p += 2 * bn;                      /* BN weight and bias */
    p += cin * m->classes + m->classes; /* fc */
    *bn_channels = bn;
    return p;
}

/* Peak live activations of a ResNet forward in elements: the stem's conv and
 * BN outputs side by side, or a bottleneck's input with its conv3 and BN3
 * outputs (and the downsample's conv and BN outputs in the first block of a
 * stage); ReLU is in place in torchvision. */
static double resnet_peak(const wl_core_model *m, double b)
{
    double hw = m->image_size, img = b * m->channels * hw * hw;
    double c0 = m->base_width;
    hw = floor((hw + 6 - 7) / 2) + 1;
    double peak = img + 2 * b * c0 * hw * hw;
    hw = floor((hw + 2 - 3) / 2) + 1;
    double cin = c0;
    for (int st = 0; st < m->stages; st++) {
        double w = c0 * (double)(1LL << st), cout = 4 * w;
        for (int blk = 0; blk < m->blocks[st]; blk++) {
            double ho = blk == 0 && st > 0 ? floor((hw + 2 - 3) / 2) + 1 : hw;
            double x = b * cin * hw * hw;
            double inner = 2 * b * w * hw * hw; /* conv1 and BN1 outputs */
            double out = (blk == 0 ? 3 : 2) * b * cout * ho * ho;
            peak = fmax(peak, x + fmax(inner, out));
            cin = cout;
            hw = ho;
        }
    }
    return peak;
}

/* An MLP of width ff: two linears (three with SwiGLU's gate), biases
 * unless Llama-style. */
static double mlp_params(const wl_core_model *m, double d, double ff)
{
    if (m->activation == WL_ACT_SWIGLU)
        return 3 * d * ff + (m->style == WL_STYLE_LLAMA ? 0 : 2 * ff + d);
    return 2 * d * ff + ff + d;
}

int wl_core_model_params(const wl_core_model *m, double *params)
{
    *params = 0;
    if (m->style == WL_STYLE_RESNET) {
        double bn;
        *params = resnet_params(m, &bn);
        return WL_OK;
    }
    double d = m->d_model, h = m->heads, kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    double hd = wl_core_model_head_dim(m), kv = kvh * hd, dq = h * hd, ff = m->d_ff, p = 0;
    /* embeddings, and an untied LM head's own table */
    p += (double)m->vocab_size * d * (m->untied_head ? 2 : 1);
    if (m->style == WL_STYLE_VIT) {
        double g = (double)(m->image_size / m->patch_size);
        p += m->channels * (double)m->patch_size * m->patch_size * d + d; /* patch conv */
        p += d + (g * g + 1) * d;                                          /* [CLS], positions */
    } else if (m->positions == WL_POS_LEARNED) {
        p += (double)m->max_positions * d;
    }
    if (m->style == WL_STYLE_BERT)
        p += (double)m->type_vocab_size * d + norm_params(m, d); /* token types, embedding LN */
    /* one layer: attention, MLP (or experts), two norms */
    double attn;
    if (wl_core_model_is_mla(m)) {
        /* DeepSeek-V3's MLA (HF modeling_deepseek.py): q_a_proj, its RMSNorm
         * and q_b_proj (or one q_proj), kv_a_proj_with_mqa (the latent and
         * the shared rotary key), its RMSNorm, kv_b_proj, o_proj; no biases */
        double qk = m->qk_nope_head_dim + m->qk_rope_head_dim, qr = m->q_lora_rank;
        double kvr = m->kv_lora_rank;
        attn = (qr > 0 ? d * qr + qr + qr * h * qk : d * h * qk) +
               d * (kvr + m->qk_rope_head_dim) + kvr + kvr * h * (m->qk_nope_head_dim + m->v_head_dim) +
               h * m->v_head_dim * d;
    } else {
        attn = d * dq + 2 * d * kv + dq * d;
        if (m->style == WL_STYLE_LLAMA)
            attn += m->qkv_bias ? dq + 2 * kv : 0; /* o_proj has no bias */
        else
            attn += dq + 2 * kv + d;
    }
    double dense = attn + mlp_params(m, d, ff) + 2 * norm_params(m, d);
    if (wl_core_model_is_moe(m)) {
        /* the router (a bias-free linear to the experts, plus DeepSeek-V3's
         * correction bias), the routed and the shared experts */
        double fe = m->d_ff_expert > 0 ? m->d_ff_expert : ff, E = m->experts;
        double moe = attn + 2 * norm_params(m, d) + E * d + (m->router_bias ? E : 0) +
                     (E + m->shared_experts) * mlp_params(m, d, fe);
        int nm = 0;
        for (int l = 0; l < m->layers; l++)
            nm += wl_core_model_layer_moe(m, l);
        p += (m->layers - nm) * dense + nm * moe;
    } else {
        p += m->layers * dense;
    }
    if (m->final_norm && m->pre_norm)
        p += norm_params(m, d);
    if (m->pooler) {
        double pd = m->pooler_dim > 0 ? m->pooler_dim : d;
        p += pd * d + pd;
    }
    *params = p;
    return WL_OK;
}

static int decoder(const wl_core_model *m)
{
    return m->style == WL_STYLE_GPT2 || m->style == WL_STYLE_OPT || m->style == WL_STYLE_LLAMA;
}

int wl_core_memory_estimate(const wl_core_model *m, const wl_core_shape *sh, wl_core_memory *out,
                            wl_error *err)
{
    memset(out, 0, sizeof *out);
    if (wl_core_model_check(m, err) || wl_core_single_gpu_check(m, err))
        return WL_EINVAL;
    if (sh->batch < 1 || sh->batch > WL_MAX_BATCH ||
        (!wl_core_model_is_vision(m) && (sh->seq < 1 || sh->seq > WL_MAX_SEQ))) {
        wl_error_set(err, m->id, 0, sh->batch < 1 || sh->batch > WL_MAX_BATCH ? "batch" : "seq",
                     "out of range");
        return WL_EINVAL;
    }
    /* tf32 keeps fp32 storage; an 8-bit checkpoint (W8A8) its linear
     * layers' weights in 8 bits and everything else (the embeddings, the
     * LM head, the activations, the KV cache) in bf16 */
    double e = wl_dtype_bytes(sh->dtype == WL_DT_TF32 ? WL_DT_FP32 : sh->dtype);
    double ew = e;
    if (e == 1.0) {
        if (sh->mode == WL_MODE_TRAIN) {
            wl_error_set(err, m->id, 0, "dtype", "%s training is not modelled",
                         wl_dtype_name(sh->dtype));
            return WL_EINVAL;
        }
        e = wl_dtype_bytes(wl_core_serve_act_dtype(sh->dtype));
    }
    /* the parameters kept at e, not ew: the vocabulary's tables */
    double tables = ew < e ? (double)m->vocab_size * m->d_model * (m->untied_head ? 2 : 1) : 0;
    double b = (double)sh->batch, params = 0, buffers = 0, act = 0;
    if (m->style == WL_STYLE_RESNET) {
        double bn;
        params = resnet_params(m, &bn);
        buffers = 2 * bn; /* running mean and variance */
        act = resnet_peak(m, b);
    } else {
        wl_core_model_params(m, &params);
        double s = (double)sh->seq;
        if (m->style == WL_STYLE_VIT) {
            double g = (double)(m->image_size / m->patch_size);
            s = g * g + 1;
        }
        double d = m->d_model, h = m->heads, kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
        double hd = wl_core_model_head_dim(m), T = b * s, S = b * h * s * s;
        if (sh->mode == WL_MODE_DECODE && sh->launch == WL_LAUNCH_GRAPHS && sh->gen > 1) {
            /* a serving engine's largest forward: one request's prompt, or
             * a step of the running sequences with their share of arriving
             * prompts (build_gen.c, generate) */
            double step = b + ceil((b - 1) * s / (double)(sh->gen - 1));
            T = fmax(s, step);
            S = h * s * s;
        }
        /* the residual stream and the normed input (pre-norm: the block
         * keeps `residual`; post-norm: the sublayer input and its output) */
        double base = 2 * T * d;
        /* q, k, v (GPT-2's fused c_attn output is the same 3 T d); GQA's
         * repeat_kv expands k and v to every head by a copy */
        double dq = h * hd; /* d, but where head_dim is its own */
        double qkv = T * (dq + 2 * kvh * hd) + (kvh < h ? 2 * T * dq : 0);
        double attn;
        if (sh->attention == WL_ATTN_FLASH) {
            attn = qkv + T * dq; /* the fused kernel's output; no score matrix */
        } else if (m->style == WL_STYLE_LLAMA) {
            /* attn_weights = softmax(w + mask, dtype=float32).to(dtype): the
             * masked scores, their fp32 softmax and the copy back coexist */
            attn = qkv + S + S * 4 / e + (e == 4 ? 0 : S);
        } else {
            /* scale, mask and softmax each make a new s x s tensor while the
             * old one is still bound: two at a time */
            attn = qkv + 2 * S;
        }
        /* MLP: fc output and activation output (SwiGLU: silu(gate) and up,
         * then their product) */
        double ff = m->d_ff;
        double mlp = m->activation == WL_ACT_SWIGLU ? 3 * T * ff : 2 * T * ff;
        act = base + fmax(attn, mlp);
        if (m->style == WL_STYLE_VIT) /* the image the patch conv reads */
            act = fmax(act, b * m->channels * (double)m->image_size * m->image_size + T * d);
        if (decoder(m)) /* use_cache=True (HF's default): every layer's k, v */
            out->kv_cache_gb = 2.0 * m->layers * T * kvh * hd * e / 1e9;
    }
    out->params = params;
    out->weights_gb = ((params + buffers - tables) * ew + tables * e) / 1e9;
    out->activations_gb = act * e / 1e9;
    out->workspace_gb = CONTEXT_GB + CUBLAS_WORKSPACE_GB;
    if (sh->mode == WL_MODE_TRAIN || sh->mode == WL_MODE_DECODE) {
        /* the model with its head (an untied LM head, a classifier) */
        wl_core_build_info info;
        int rc = wl_core_build_info_of(m, sh, 0, &info, err);
        if (rc)
            return rc;
        out->params = info.params;
        out->weights_gb = ((info.params - tables) * ew + tables * e) / 1e9;
        if (sh->mode == WL_MODE_DECODE) {
            out->kv_cache_gb = info.kv_cache_gb;
        } else {
            /* Mixed precision with a master (Megatron-LM's 18 bytes per
             * parameter, its distributed-optimizer docs): half-precision
             * weights 2, fp32 main gradients 4, fp32 masters 4, AdamW's two
             * fp32 moments 8 (SGD's momentum 4). Without a master the
             * gradients and the state are in dtype (fp32 training: 16). A
             * fine-tuning pays all but the weights' 2 for its trainable
             * parameters only (LoRA's adapters, the unfrozen layers). */
            int master = !sh->master_none && e < 4;
            double se = master ? 4 : e, tp = info.trainable_params;
            out->kv_cache_gb = 0;
            out->master_gb = master ? 4 * tp / 1e9 : 0;
            out->grads_gb = se * tp / 1e9;
            out->optimizer_gb = (sh->optimizer == WL_OPTIM_NONE  ? 0
                                : sh->optimizer == WL_OPTIM_SGD ? 1
                                                                : 2) *
                               se * tp / 1e9;
            out->activations_gb = info.saved_gb;
        }
    }
    out->total_gb = out->weights_gb + out->activations_gb + out->kv_cache_gb + out->workspace_gb +
                    out->master_gb + out->grads_gb + out->optimizer_gb;
    return WL_OK;
}

void wl_core_memory_parts_text(const wl_core_memory *mem, char *buf, size_t n)
{
    const struct {
        const char *name;
        double gb;
    } part[] = {{"weights", mem->weights_gb},
                {"activations", mem->activations_gb},
                {"KV cache", mem->kv_cache_gb},
                {"fp32 master weights", mem->master_gb},
                {"gradients", mem->grads_gb},
                {"optimizer state", mem->optimizer_gb},
                {"context and workspace", mem->workspace_gb}};
    size_t w = 0;
    if (n)
        buf[0] = 0;
    for (size_t i = 0; i < sizeof part / sizeof *part && w < n; i++) {
        if (!(part[i].gb > 0))
            continue;
        int k = snprintf(buf + w, n - w, "%s%s %.1f", w ? ", " : "", part[i].name, part[i].gb);
        if (k < 0)
            break;
        w += (size_t)k;
    }
}

int wl_core_memory_fits(const wl_core_gpu *gpu, const wl_core_memory *mem)
{
    if (!(gpu->mem_capacity_gb > 0) || !isfinite(mem->total_gb) || !(mem->total_gb > 0))
        return -1;
    return mem->total_gb <= gpu->mem_capacity_gb;
}

/* Memory grows with the batch, so the largest batch that fits is found by
 * bisection: about 25 estimates, each a closed form. */
int wl_core_memory_max_batch(const wl_core_gpu *gpu, const wl_core_model *m,
                             const wl_core_shape *shape, long long *out, wl_error *err)
{
    *out = -1;
    if (!(gpu->mem_capacity_gb > 0))
        return WL_OK;
    wl_core_shape sh = *shape;
    wl_core_memory mem;
    long long lo = 0, hi = WL_MAX_BATCH; /* lo fits (0: vacuously), hi + 1 does not */
    sh.batch = hi;
    int rc = wl_core_memory_estimate(m, &sh, &mem, err);
    if (rc)
        return rc;
    if (wl_core_memory_fits(gpu, &mem) == 1) {
        *out = hi;
        return WL_OK;
    }
    while (hi - lo > 1) {
        long long mid = lo + (hi - lo) / 2;
        sh.batch = mid;
        if ((rc = wl_core_memory_estimate(m, &sh, &mem, err)))
            return rc;
        if (wl_core_memory_fits(gpu, &mem) == 1)
            lo = mid;
        else
            hi = mid;
    }
    *out = lo;
    return WL_OK;
}
