/* The workload builder's entry points: a model's checks, the set-up of a
 * build from a model and a shape, and the build of a prefill (the layers
 * of build_layer.c), a training step (build_train.c) or a generation
 * (build_gen.c), with its identity and its FLOP and parameter counts. */
#include "builder_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    if (m->heads < 1 || (m->head_dim == 0 && m->d_model % m->heads)) {
        wl_error_set(err, src, 0, "heads", "must be >= 1 and divide d_model (%d) unless head_dim "
                     "gives a head's width", m->d_model);
        return WL_EINVAL;
    }
    if ((m->sliding_window > 0) != (m->global_every > 0) || m->global_every == 1) {
        wl_error_set(err, src, 0, m->sliding_window > 0 ? "global_every" : "sliding_window",
                     "sliding_window and global_every go together (a global layer every "
                     "global_every >= 2 layers, the others local)");
        return WL_EINVAL;
    }
    if (m->head_dim < 0 || m->head_dim % 2) {
        wl_error_set(err, src, 0, "head_dim", "must be even (rotary pairs), or 0: d_model / heads");
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
        if (m->moe_every < 0 || m->moe_every > m->layers) {
            wl_error_set(err, src, 0, "moe_every", "must be 0 to layers (%d)", m->layers);
            return WL_EINVAL;
        }
    } else if (m->experts_per_token || m->d_ff_expert || m->shared_experts || m->dense_layers ||
               m->router_bias || m->moe_every) {
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

/* moe: a serving step, which builds vLLM's fused MoE layers (build_gen.c);
 * every other path refuses mixture-of-experts and latent attention. */
/* What makes a fine-tuning meaningless: LoRA's settings without LoRA, a
 * rank beyond the model's width (an adapter no smaller than its weight),
 * targets the model does not have, --freeze with LoRA (which freezes the
 * whole base model) or of more layers than there are, or nothing left to
 * train. */
static int finetune_why(const wl_core_model *m, const wl_core_shape *sh, const char **field,
                        const char **why)
{
    unsigned present = WL_LORA_ALL & ~(m->activation == WL_ACT_SWIGLU ? 0u : (unsigned)WL_LORA_GATE);
    if (sh->finetune != WL_FT_LORA && (sh->lora_rank || sh->lora_targets))
        *field = sh->lora_rank ? "lora_rank" : "lora_targets",
        *why = "applies to finetune = lora (LoRA adapters); this step trains the whole model";
    else if (sh->lora_rank < 0 || sh->lora_rank > m->d_model)
        *field = "lora_rank", *why = "the rank must be 1 to the model's d_model";
    else if (sh->lora_targets > WL_LORA_ALL ||
             (sh->lora_targets && !(sh->lora_targets & present)))
        *field = "lora_targets", *why = "none of these projections is in the model (a two-layer "
                                        "MLP has up and down, no gate)";
    else if (sh->freeze && sh->finetune == WL_FT_LORA)
        *field = "freeze", *why = "LoRA freezes the whole base model; freeze applies to "
                                  "finetune = full";
    else if (sh->freeze < 0 || sh->freeze > m->layers)
        *field = "freeze", *why = "more layers frozen than the model has";
    else if (sh->freeze == m->layers && !(m->final_norm && m->pre_norm) && !m->untied_head &&
             m->style != WL_STYLE_VIT && m->style != WL_STYLE_BERT)
        *field = "freeze", *why = "every layer frozen and the head tied to the frozen "
                                  "embeddings: nothing left to train";
    return *why != NULL;
}

int wl_core_finetune_check(const wl_core_model *m, const wl_core_shape *sh, wl_error *err)
{
    const char *field = "finetune", *why = NULL;
    if ((unsigned)sh->finetune > WL_FT_LORA)
        why = "unknown finetune";
    else
        finetune_why(m, sh, &field, &why);
    if (!why)
        return WL_OK;
    wl_error_set(err, m->id, 0, field, "%s", why);
    return WL_EINVAL;
}

static int setup_x(bld *B, const wl_core_model *model, const wl_core_shape *shape, int moe,
                   wl_error *err)
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
    if (!moe && wl_core_single_gpu_check(model, err))
        return WL_EINVAL;
    B->m = model;
    B->err = err;
    B->dt = shape->dtype == WL_DT_TF32 ? WL_DT_FP32 : shape->dtype;
    B->gemm_dt = shape->dtype;
    /* an 8-bit checkpoint (fp8) runs W8A8, as vLLM and HF's fbgemm fp8
     * serve it: the linear layers' weights in 8 bits, each input quantized
     * per token first (wl_core_bld_linear_x), activations, attention and the
     * KV cache in bf16, the LM head unquantized. Training in 8 bits
     * (Transformer Engine's scaled GEMMs) is not modelled. */
    if (wl_dtype_bytes(shape->dtype) == 1.0) {
        if (shape->mode == WL_MODE_TRAIN) {
            wl_error_set(err, model->id, 0, "dtype", "%s training is not modelled: %s is an "
                         "8-bit checkpoint's inference (W8A8: prefill and decode)",
                         wl_dtype_name(shape->dtype), wl_dtype_name(shape->dtype));
            return WL_EINVAL;
        }
        B->quant = 1;
        B->dt = wl_core_serve_act_dtype(shape->dtype);
    }
    /* PyTorch runs fp32 matmuls on CUDA cores unless TF32 is allowed */
    B->tc = shape->dtype != WL_DT_FP32;
    B->b = shape->batch;
    B->s = shape->seq;
    B->T = B->b * B->s;
    B->d = model->d_model;
    B->h = model->heads;
    B->kvh = model->kv_heads;
    B->hd = wl_core_model_head_dim(model);
    B->ff = model->d_ff;
    B->moe_experts = model->experts;
    B->moe_ff = model->d_ff_expert > 0 ? model->d_ff_expert : model->d_ff;
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
        else if ((unsigned)shape->optimizer > WL_OPTIM_NONE ||
                 (unsigned)shape->recompute > WL_RECOMPUTE_FULL)
            why = "unknown optimizer or recompute";
        if (why) {
            wl_error_set(err, model->id, 0, field, "%s", why);
            return WL_EINVAL;
        }
        if (wl_core_finetune_check(model, shape, err))
            return WL_EINVAL;
        if (shape->finetune == WL_FT_LORA) {
            B->lora = shape->lora_targets ? shape->lora_targets : WL_LORA_ATTENTION;
            B->lora_rank = shape->lora_rank ? shape->lora_rank : WL_LORA_RANK_DEFAULT;
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

/* The whole step, or one layer only: 1 called on its own (block(x), as
 * the A30 talk measures the decoder layer: a loop over the block at locked
 * clocks under NVML): no attention mask and no KV cache come from a model
 * around it, so it runs neither the 4-D mask add nor the cache's
 * concatenations (a decode step's layer keeps its cache); 2 as it runs
 * inside the model's forward, with both. */

static int setup(bld *B, const wl_core_model *model, const wl_core_shape *shape, wl_error *err)
{
    return setup_x(B, model, shape, 0, err);
}
static int build(const wl_core_model *model, const wl_core_shape *shape, int layer_only,
                 wl_core_workload **out, bld *B, wl_error *err)
{
    *out = NULL;
    if (setup(B, model, shape, err))
        return WL_EINVAL;
    /* a decode step's layer needs its cache: alone only outside decode */
    B->alone = layer_only == 1 && shape->mode != WL_MODE_DECODE;
    char name[160];
    const char *what = shape->mode == WL_MODE_TRAIN
                           ? (layer_only == 2 ? "train_layer_in_model" : layer_only ? "train_layer" : "train")
                       : shape->mode == WL_MODE_DECODE ? (layer_only ? "decode_layer" : "decode")
                       : layer_only == 2 ? "layer_in_model" : layer_only ? "layer" : "prefill";
    char ft[64];
    if (shape->mode == WL_MODE_TRAIN && (B->lora || shape->freeze)) {
        /* a fine-tuning says what it trains: _lora16, _freeze4 */
        if (B->lora)
            snprintf(ft, sizeof ft, "%s_lora%lld", what, B->lora_rank);
        else
            snprintf(ft, sizeof ft, "%s_freeze%d", what, shape->freeze);
        what = ft;
    }
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
        wl_core_bld_resnet(B);
    } else if (layer_only) {
        wl_core_bld_layer(B);
    } else {
        wl_core_bld_prefix(B);
        for (int l = 0; l < model->layers; l++)
            wl_core_bld_layer(B);
        wl_core_bld_suffix(B);
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

int wl_core_build_scope(const wl_core_model *model, const wl_core_shape *shape, wl_core_scope scope,
                        wl_core_workload **out, wl_error *err)
{
    bld B;
    int layer = model->style == WL_STYLE_RESNET ? 0 : scope == WL_SCOPE_LAYER ? 1
                : scope == WL_SCOPE_LAYER_IN_MODEL ? 2 : 0;
    return build(model, shape, layer, out, &B, err);
}

/* vLLM pads the vocabulary to a multiple of 64 (DEFAULT_VOCAB_PADDING_SIZE,
 * layers/vocab_parallel_embedding.py) before splitting it over the ranks */
long long wl_core_serve_vocab(const wl_core_model *m)
{
    return ((long long)m->vocab_size + 63) / 64 * 64;
}

wl_dtype wl_core_serve_act_dtype(wl_dtype dtype)
{
    if (dtype == WL_DT_TF32)
        return WL_DT_FP32;
    return dtype == WL_DT_FP8 || dtype == WL_DT_INT8 ? WL_DT_BF16 : dtype;
}

/* One rank of tensor parallelism t as vLLM shards a decoder
 * (model_executor/models/llama.py, layers/linear.py,
 * layers/vocab_parallel_embedding.py): the query heads split t ways
 * (QKVParallelLinear asserts heads % t == 0); the key/value heads split
 * when there are at least t of them (heads % t == 0), else each is
 * replicated on t / kv_heads ranks (t % kv_heads == 0), one a rank; the
 * MLP's columns (gate_up) and rows (down) split t ways; the LM head is
 * vocabulary-parallel over the vocabulary padded to 64 (its logits are
 * gathered before the sampler, which every rank runs on the whole
 * vocabulary). The head dimension is the model's. */
static int tp_shard(bld *B, int t, int ep, wl_error *err)
{
    const wl_core_model *m = B->m;
    long long kvh = B->kvh > 0 ? B->kvh : B->h;
    const char *why = NULL;
    if (t > 4096)
        why = "expected at most 4096 ranks";
    else if (B->h % t)
        why = "the query heads do not split evenly over the tensor-parallel ranks";
    else if (kvh >= t ? kvh % t : t % kvh)
        why = "the key/value heads neither split over the ranks nor replicate evenly";
    else if (B->ff % t)
        why = "the MLP's width (d_ff) does not split evenly over the ranks";
    else if (B->moe_experts > 0 && (ep ? B->moe_experts % t : B->moe_ff % t))
        why = ep ? "the experts do not split evenly over the expert-parallel ranks"
                 : "an expert's width (d_ff_expert) does not split evenly over the ranks";
    if (why) {
        wl_error_set(err, m->id, 0, "tp", "tensor parallelism %d: %s (%lld heads, %lld key/value "
                     "heads, d_ff %lld)", t, why, B->h, kvh, B->ff);
        return WL_EINVAL;
    }
    B->h /= t;
    B->kvh = kvh >= t ? kvh / t : 1;
    B->ff /= t;
    if (ep)
        B->moe_experts /= t;
    else
        B->moe_ff /= t;
    B->moe_ranks = t;
    B->head_vocab = (wl_core_serve_vocab(m) + t - 1) / t;
    return WL_OK;
}

/* One serving step (serve/): shape gives the model's dtype and attention;
 * its batch and seq are checked as the step's sequences and keys. */
int wl_core_build_serve_step(const wl_core_model *model, const wl_core_shape *shape,
                             const wl_core_serve_step *st, wl_core_workload **out, wl_error *err)
{
    *out = NULL;
    const char *why = NULL;
    if (st->decode < 0 || st->chunk < 0 || st->decode + st->chunk < 1)
        why = "a step needs a decode sequence or a prompt token";
    else if (st->decode > 0 && (st->context < 1 || st->context > WL_MAX_SEQ))
        why = "decode context out of range";
    else if (st->chunk > 0 && (st->chunk_context < st->chunk / (st->prefills > 0 ? st->prefills : 1) ||
                               st->chunk_context > WL_MAX_SEQ || st->chunk > WL_MAX_SEQ))
        why = "prompt chunk out of range";
    else if (st->sampled < 0 || st->sampled > st->decode + st->chunk || st->seqs < 0)
        why = "sampled rows out of range";
    else if (st->tp < 0)
        why = "tensor parallelism out of range";
    if (why) {
        wl_error_set(err, model->id, 0, "step", "%s", why);
        return WL_EINVAL;
    }
    wl_core_shape sh = *shape;
    sh.mode = WL_MODE_DECODE;
    sh.launch = WL_LAUNCH_GRAPHS;
    sh.gen = 2;
    sh.batch = st->decode > 0 ? st->decode : 1;
    sh.seq = st->decode > 0 ? st->context : st->chunk_context;
    if (sh.seq + 1 > WL_MAX_SEQ)
        sh.seq = WL_MAX_SEQ - 1;
    bld B;
    if (setup_x(&B, model, &sh, 1, err))
        return WL_EINVAL;
    if (st->tp > 1 && tp_shard(&B, st->tp, st->ep, err))
        return WL_EINVAL;
    /* an fp8 (or int8) checkpoint as vLLM serves it: W8A8 (setup_x) with
     * the router unquantized too (build_gen.c) */
    char name[160];
    snprintf(name, sizeof name, "%s_%s_serve_d%lld_c%lld_p%lld_k%lld", model->id,
             wl_dtype_name(sh.dtype), st->decode, st->context, st->chunk, st->chunk_context);
    B.wl = wl_core_workload_create(name);
    if (!B.wl)
        return WL_ENOMEM;
    wl_core_bld_serve_step(&B, st);
    bld_free(&B);
    if (B.rc) {
        wl_core_workload_free(B.wl);
        return B.rc;
    }
    *out = B.wl;
    return WL_OK;
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
        wl_core_bld_train_forward(&B, layer_only);
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
    double trainable = 0;
    for (size_t i = 0; i < B.np; i++)
        trainable += B.plist[i];
    double params = trainable + B.frozen_params;
    rc = B.rc;
    bld_free(&B);
    if (rc)
        return rc;
    out->params = params;
    out->trainable_params = shape->mode == WL_MODE_TRAIN ? trainable : 0;
    out->matmul_params = layer_only ? params : matmul_params(&B, params);
    double L = layer_only ? 1 : model->layers, d = model->d_model;
    double s = (double)B.s, tok = (double)B.T;
    switch (shape->mode) {
    case WL_MODE_TRAIN:
        tok *= shape->grad_accum > 0 ? shape->grad_accum : 1;
        out->tokens = tok;
        out->model_flop = (6.0 * out->matmul_params + 12.0 * L * d * s) * tok;
        /* a fine-tuning: the forward (2 N + 4 L d s per token), the input
         * gradients of what the backward reaches (2 N_b + 8 L_b d s: the
         * layers above the frozen ones), and the weight gradients of what
         * trains (2 N_w: LoRA's adapters); full training is 6 N + 12 L d s */
        if (shape->finetune == WL_FT_LORA || shape->freeze > 0) {
            double nb = out->matmul_params - B.unreached_params;
            double lb = layer_only ? 1 : L - shape->freeze;
            out->model_flop = (2.0 * out->matmul_params + 4.0 * L * d * s + 2.0 * nb +
                               8.0 * lb * d * s + 2.0 * trainable) * tok;
        }
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
