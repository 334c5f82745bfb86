/* A training step: the loss and head, the backward pass from the tape, the
 * optimizer (build_ops.c records the tape in the forward). */
#include "builder_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- training ------------------------------------------------------------------
 * One optimizer step as eager PyTorch runs it, mixed precision the way
 * Megatron-LM (Float16OptimizerWithFloat16Params) and apex O2 run it: the
 * model computes in bf16/fp16 with its own half-precision weights; every
 * parameter gradient is added into an fp32 main gradient as it is produced
 * (main_grad.add_(grad)); the optimizer steps fp32 master weights with fp32
 * state and copies them back to the model. Without a master (--master-dtype
 * none, or fp32 training) weights, gradients and state are in dtype and a
 * micro-batch after the first adds into .grad (AccumulateGrad). fp16 adds
 * loss scaling: the loss times the scale, the gradients unscaled and
 * checked for inf/NaN with a host sync on the result, the scale updated. */

/* Cross-entropy over rows x classes logits, as HF computes it: a causal LM
 * upcasts its logits (ForCausalLMLoss: logits.float()) and shifts the
 * labels (a pad and a contiguous copy of the T int64 labels); then
 * log_softmax, which keeps its output, and nll_loss. Backward:
 * nll_loss_backward (the zeroed input gradient and the scatter of -1/n at
 * the targets), log_softmax_backward_data and the cast back. The backward
 * starts from ones_like(loss). */
static void loss(bld *B, long long rows, long long classes, int causal)
{
    wl_dtype ldt = B->dt;
    long long n = rows * classes;
    if (causal && wl_core_bld_half(B)) {
        wl_core_bld_ew(B, WL_EW_CAST_FP32, n, B->dt);
        ldt = WL_DT_FP32;
    }
    if (causal) {
        wl_core_bld_ewc(B, WL_EW_COPY, 2 * rows, WL_DT_FP32); /* pad(labels, (0, 1), -100) */
        wl_core_bld_ewc(B, WL_EW_COPY, 2 * rows, WL_DT_FP32); /* labels[..., 1:].contiguous() */
    }
    wl_core_bld_rowop(B, WL_K_SOFTMAX, rows, classes, ldt); /* log_softmax */
    wl_core_bld_save(B, (double)n, wl_dtype_bytes(ldt));
    wl_kernel nll = wl_core_bld_rowk(WL_K_REDUCE, 1, rows, ldt);
    wl_kernel nb[2] = {wl_core_bld_ewk(WL_EW_FILL, n, ldt), wl_core_bld_ewk(WL_EW_COPY, rows, ldt)};
    wl_core_bld_add(B, &nll);
    tp_ent *e = wl_core_bld_tp_new(B);
    for (int i = 0; e && i < 2; i++)
        wl_core_bld_tp_k(e, &nb[i]);
    wl_kernel one = wl_core_bld_ewk(WL_EW_SCALAR_MUL, 1, WL_DT_FP32);
    if (B->dt == WL_DT_FP16) /* GradScaler.scale(loss) */
        wl_core_bld_ewb(B, WL_EW_SCALAR_MUL, 1, WL_DT_FP32, &one, 1);
    e = wl_core_bld_tp_new(B);
    wl_kernel seed = wl_core_bld_ewk(WL_EW_FILL, 1, WL_DT_FP32);
    wl_core_bld_tp_k(e, &seed);
}

/* What a fine-tuning freezes (full training: nothing). The embeddings:
 * under LoRA and under --freeze; a layer: every one under LoRA (its
 * adapters train), the first `freeze` ones under --freeze; the final norm
 * and the head under LoRA, except a ViT's classifier, which a LoRA
 * fine-tuning trains (PEFT's modules_to_save: a new task's head); a head
 * tied to the embeddings with them. */
static int embed_frozen(const bld *B) { return B->lora || B->sh->freeze > 0; }
static int layer_frozen(const bld *B, int l) { return B->lora || l < B->sh->freeze; }
static int head_frozen(const bld *B) { return B->lora && B->m->style != WL_STYLE_VIT; }

/* The vocabulary's projection at the end: frozen with a frozen embedding
 * it is tied to (a tied BERT decoder's own bias too, which trains in
 * PyTorch: a column sum left out) */
static void head_linear(bld *B, long long V, int bias)
{
    int fz = B->frozen;
    if (!B->m->untied_head && embed_frozen(B))
        B->frozen = 1;
    wl_core_bld_linear_x(B, B->d, V, bias, 0);
    B->frozen = fz;
}

/* The LM head (or classifier) and the loss a training step ends with:
 * GPT-2, OPT and Llama-style models a causal LM over every token
 * (*ForCausalLM); BERT the masked-LM head (BertForMaskedLM: dense, GELU,
 * LayerNorm, then the decoder tied to the word embeddings, with a bias);
 * ViT a linear classifier on the [CLS] token (ViTForImageClassification),
 * whose gradient reaches the sequence through select_backward (a zeroed
 * tensor and a copy into it). No pooler: these heads do not use one. */
void wl_core_bld_head(bld *B)
{
    const wl_core_model *m = B->m;
    long long V = m->vocab_size;
    if (m->final_norm && m->pre_norm)
        wl_core_bld_norm(B);
    switch (m->style) {
    case WL_STYLE_VIT: {
        tp_ent *e = wl_core_bld_tp_new(B);
        wl_kernel sel[2] = {wl_core_bld_ewk(WL_EW_FILL, B->T * B->d, B->dt),
                            wl_core_bld_ewk(WL_EW_COPY, B->b * B->d, B->dt)};
        for (int i = 0; e && i < 2; i++)
            wl_core_bld_tp_k(e, &sel[i]);
        wl_core_bld_save(B, (double)(B->b * B->d), wl_core_bld_eb(B));
        long long T = B->T;
        B->T = B->b; /* one row per image */
        wl_core_bld_linear_x(B, B->d, m->classes, 1, 0);
        B->T = T;
        loss(B, B->b, m->classes, 0);
        break;
    }
    case WL_STYLE_BERT:
        wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B));
        wl_core_bld_linear_x(B, B->d, B->d, 1, 0); /* transform.dense */
        wl_core_bld_ew(B, WL_EW_GELU, B->T * B->d, B->dt);
        wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B));
        wl_core_bld_norm(B);
        wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B));
        head_linear(B, V, 1);    /* decoder, tied, with its own bias */
        if (B->train && !m->untied_head && B->ntape && B->tape[B->ntape - 1].np == 2) {
            tp_ent *e = &B->tape[B->ntape - 1];
            e->param[0] = e->param[1];
            e->np = 1;
        }
        loss(B, B->T, V, 0);
        break;
    default:
        wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B));
        head_linear(B, V, 0);    /* lm_head: nn.Linear, no bias */
        if (B->train && !m->untied_head && B->ntape)
            B->tape[B->ntape - 1].np = 0; /* the embedding's gradient, summed there */
        loss(B, B->T, V, 1);
        break;
    }
    B->saved_other += B->saved_layer;
    B->saved_layer = 0;
}

/* A parameter's gradient as it is produced: added into its fp32 main
 * gradient (with a master), or into .grad after the first micro-batch. */
static void param_grad(bld *B, double numel)
{
    long long n = (long long)numel;
    if (B->master)
        wl_core_bld_ewc(B, WL_EW_ADD, n, WL_DT_FP32);
    else if (B->micro > 0)
        wl_core_bld_ewc(B, WL_EW_ADD, n, B->dt);
}

/* Kernels from forward index a to b again (a recompute). */
static void replay(bld *B, size_t a, size_t b)
{
    for (size_t i = a; i < b && !B->rc; i++) {
        wl_kernel k = *wl_core_workload_kernel(B->wl, i);
        wl_core_bld_add(B, &k);
    }
}

/* The backward pass: the tape in reverse. A full recompute runs a layer's
 * forward again before its backward; a selective one the attention core. */
void wl_core_bld_backward(bld *B)
{
    B->phase = WL_PHASE_BACKWARD;
    B->train = 0;
    wl_recompute rc = B->sh->recompute;
    for (size_t i = B->ntape; i-- > 0 && !B->rc;) {
        const tp_ent *e = &B->tape[i];
        if ((e->mark == MARK_LAYER_END && rc == WL_RECOMPUTE_FULL) ||
            (e->mark == MARK_CORE_END && rc == WL_RECOMPUTE_SELECTIVE))
            replay(B, e->from, e->at);
        for (int j = 0; j < e->nk; j++)
            wl_core_bld_add(B, &e->k[j]);
        for (int j = 0; j < e->np; j++)
            param_grad(B, e->param[j]);
    }
    B->ntape = 0;
}

/* ---- parameters, in model.parameters() order (HF registration order) ---- */

/* The trainable ones go to plist, the optimizer's list; the frozen are counted. */
static void pl(bld *B, double numel)
{
    if (B->rc || numel <= 0)
        return;
    if (B->pl_frozen) {
        B->frozen_params += numel;
        return;
    }
    if (B->np == B->capp) {
        size_t nc = B->capp ? 2 * B->capp : 128;
        double *p = realloc(B->plist, nc * sizeof *p);
        if (!p) {
            B->rc = WL_ENOMEM;
            return;
        }
        B->plist = p;
        B->capp = nc;
    }
    B->plist[B->np++] = numel;
}

static void pl_norm(bld *B)
{
    double d = (double)B->d;
    pl(B, d);
    if (B->m->norm == WL_NORM_LAYERNORM)
        pl(B, d);
}

static void pl_linear(bld *B, double in, double out, int bias)
{
    pl(B, in * out);
    if (bias)
        pl(B, out);
}

/* One layer's parameters in registration order: GPT-2 ln_1, c_attn,
 * c_proj, ln_2, mlp; OPT and BERT the projections, the attention's norm,
 * the MLP, the last norm; Llama the projections, the MLP, both norms; ViT
 * the projections, the MLP, layernorm_before and _after. */
static void pl_layer(bld *B)
{
    const wl_core_model *m = B->m;
    double d = (double)B->d, dq = (double)(B->h * B->hd), dkv = (double)(B->kvh * B->hd);
    double ff = (double)B->ff;
    int llama = m->style == WL_STYLE_LLAMA, qb = !llama || m->qkv_bias;
    int gpt2 = m->style == WL_STYLE_GPT2,
        mid_norm = m->style == WL_STYLE_OPT || m->style == WL_STYLE_BERT;
    if (gpt2) {
        pl_norm(B);
        pl_linear(B, d, dq + 2 * dkv, 1);
    } else {
        pl_linear(B, d, dq, qb);
        pl_linear(B, d, dkv, qb);
        pl_linear(B, d, dkv, qb);
    }
    pl_linear(B, dq, d, !llama);
    if (gpt2 || mid_norm)
        pl_norm(B);
    pl_linear(B, d, ff, !llama);
    if (m->activation == WL_ACT_SWIGLU)
        pl_linear(B, d, ff, !llama);
    pl_linear(B, ff, d, !llama);
    if (!gpt2)
        pl_norm(B);
    if (!gpt2 && !mid_norm)
        pl_norm(B);
    /* LoRA's adapters (lora_A r x in, then lora_B out x r), registered
     * inside each target module, trainable; their order among the frozen
     * weights does not change the optimizer's list */
    if (B->lora) {
        int fz = B->pl_frozen;
        double r = (double)B->lora_rank;
        B->pl_frozen = 0;
        static const struct { int proj; int in, out; } t[] = {
            {PROJ_QKV, 0, 4}, {PROJ_Q, 0, 1}, {PROJ_K, 0, 2}, {PROJ_V, 0, 2}, {PROJ_O, 1, 0},
            {PROJ_GATE, 0, 3}, {PROJ_UP, 0, 3}, {PROJ_DOWN, 3, 0}};
        double dim[5] = {d, dq, dkv, ff, dq + 2 * dkv};
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
            int qkv = t[i].proj == PROJ_Q || t[i].proj == PROJ_K || t[i].proj == PROJ_V;
            if ((t[i].proj == PROJ_QKV && !gpt2) || (qkv && gpt2) ||
                (t[i].proj == PROJ_GATE && m->activation != WL_ACT_SWIGLU) ||
                !wl_core_bld_proj_adapted(B, t[i].proj))
                continue;
            pl(B, r * dim[t[i].in]);
            pl(B, dim[t[i].out] * r);
        }
        B->pl_frozen = fz;
    }
}

/* The trained model's parameters: the base model, then the head (a tied
 * head adds none). */
void wl_core_bld_pl_model(bld *B, int layer_only)
{
    const wl_core_model *m = B->m;
    double d = (double)B->d;
    int ft = B->sh->mode == WL_MODE_TRAIN; /* a prefill's count: everything */
    B->frozen_params = B->unreached_params = 0;
    if (layer_only) {
        B->pl_frozen = ft && B->lora;
        pl_layer(B);
        B->pl_frozen = 0;
        return;
    }
    B->pl_frozen = ft && embed_frozen(B);
    switch (m->style) {
    case WL_STYLE_VIT: {
        long long p = m->patch_size;
        pl(B, d);                      /* [CLS] */
        pl(B, (double)B->s * d);       /* positions */
        pl_linear(B, (double)(m->channels * p * p), d, 1);
        break;
    }
    case WL_STYLE_BERT:
        pl(B, (double)m->vocab_size * d);
        pl(B, (double)m->max_positions * d);
        pl(B, (double)m->type_vocab_size * d);
        pl_norm(B);
        break;
    default:
        pl(B, (double)m->vocab_size * d);
        if (m->positions == WL_POS_LEARNED)
            pl(B, (double)m->max_positions * d);
        break;
    }
    for (int l = 0; l < m->layers; l++) {
        B->pl_frozen = ft && layer_frozen(B, l);
        double before = B->frozen_params;
        pl_layer(B);
        if (ft && !B->lora && B->pl_frozen) /* below the first trained layer */
            B->unreached_params += B->frozen_params - before;
    }
    B->pl_frozen = ft && head_frozen(B);
    if (m->final_norm && m->pre_norm)
        pl_norm(B);
    switch (m->style) {
    case WL_STYLE_VIT:
        pl_linear(B, d, (double)m->classes, 1);
        break;
    case WL_STYLE_BERT:
        pl(B, (double)m->vocab_size); /* cls.predictions.bias */
        pl_linear(B, d, d, 1);
        pl_norm(B);
        if (m->untied_head)
            pl(B, (double)m->vocab_size * d);
        break;
    default:
        if (m->untied_head)
            pl(B, (double)m->vocab_size * d);
        break;
    }
    B->pl_frozen = 0;
}

/* One torch._foreach_* op over the parameter list: multi_tensor_apply
 * (ATen/native/cuda/MultiTensorApply.cuh) cuts every tensor into chunks of
 * 65536 elements, one CTA each, and launches a kernel whenever it holds 320
 * chunks or the most tensors its 4 KB argument block takes at this depth
 * (tensor lists: 110, 64, 48, 36, 30 for depth 1-5; 96, 64, ... with a
 * scalar list), and after the last chunk. */
static void foreach(bld *B, wl_ew_op op, int depth, int scalarlist, wl_dtype dt)
{
    static const int max_tensors[2][5] = {{110, 64, 48, 36, 30}, {96, 64, 48, 36, 30}};
    const long long chunk = 65536;
    int tmax = max_tensors[scalarlist != 0][depth - 1];
    int blocks = 0, tensors = 0;
    long long elems = 0;
    for (size_t t = 0; t < B->np && !B->rc; t++) {
        long long numel = (long long)B->plist[t];
        long long chunks = (numel + chunk - 1) / chunk;
        tensors++;
        for (long long c = 0; c < chunks; c++) {
            blocks++;
            elems += c == chunks - 1 ? numel - c * chunk : chunk;
            int last = t == B->np - 1 && c == chunks - 1;
            if ((tensors == tmax && c == chunks - 1) || blocks == 320 || last) {
                B->strided = 3;
                wl_core_bld_ewc(B, op, elems, dt);
                B->strided = 0;
                blocks = 0;
                elems = 0;
                tensors = c == chunks - 1 ? 0 : 1;
            }
        }
    }
}

/* The optimizer step (torch.optim, foreach=True, the default on CUDA):
 * AdamW (_multi_tensor_adamw, weight decay 0.01, step counters on the CPU):
 *   params *= 1 - lr wd; lerp_(m, g, 1 - b1); v *= b2; addcmul_(v, g, g);
 *   d = sqrt(v); d /= sqrt(bias_corr2) (a scalar list); d += eps;
 *   addcdiv_(params, m, d, step_sizes);
 * SGD with momentum 0.9 (_multi_tensor_sgd): buf *= 0.9; buf += g;
 * params += -lr buf. With a master the fp32 masters are copied back to the
 * model's half-precision weights (one foreach copy) and the contiguous fp32
 * main-gradient buffer is zeroed for the next step. */
static void optimizer(bld *B)
{
    B->phase = WL_PHASE_OPTIMIZER;
    wl_dtype pdt = B->master ? WL_DT_FP32 : B->dt;
    if (B->dt == WL_DT_FP16) {
        /* _amp_foreach_non_finite_check_and_unscale_, then found_inf.item() */
        foreach(B, WL_EW_SCALAR_MUL, 1, 0, pdt);
        wl_core_bld_host_sync(B);
    }
    if (B->sh->optimizer == WL_OPTIM_ADAMW) {
        foreach(B, WL_EW_SCALAR_MUL, 1, 0, pdt);
        foreach(B, WL_EW_ADD, 2, 0, pdt);
        foreach(B, WL_EW_SCALAR_MUL, 1, 0, pdt);
        foreach(B, WL_EW_TERNARY, 3, 0, pdt);
        foreach(B, WL_EW_UNSPEC_SCALAR, 2, 0, pdt);
        foreach(B, WL_EW_SCALAR_MUL, 1, 1, pdt);
        foreach(B, WL_EW_SCALAR_ADD, 1, 0, pdt);
        foreach(B, WL_EW_TERNARY, 3, 1, pdt);
    } else {
        foreach(B, WL_EW_SCALAR_MUL, 1, 0, pdt);
        foreach(B, WL_EW_ADD, 2, 0, pdt);
        foreach(B, WL_EW_ADD, 2, 0, pdt);
    }
    if (B->master)
        foreach(B, WL_EW_CAST_BF16, 2, 0, WL_DT_FP32);
    if (B->dt == WL_DT_FP16)
        wl_core_bld_ewc(B, WL_EW_SCALAR_MUL, 1, WL_DT_FP32); /* _amp_update_scale_ */
    if (B->master) {
        double n = 0;
        for (size_t i = 0; i < B->np; i++)
            n += B->plist[i];
        if (n > 0)
            wl_core_bld_ewc(B, WL_EW_FILL, (long long)n, WL_DT_FP32);
    }
}

/* A training forward, frozen parts without gradients: a frozen region
 * whose input needs no gradient records nothing for the backward (the
 * embeddings and the layers under --freeze, LoRA's first layer up to its
 * first adapter), so the backward stops at the first trained weight. The
 * first trained layer under --freeze is built as if its input needed a
 * gradient (its residual's sum and its first norm's input gradient: a few
 * elementwise kernels over T x d the real backward skips). A layer alone
 * (--scope layer) is a trained layer of the model, with its adapters under
 * LoRA. */
void wl_core_bld_train_forward(bld *B, int layer_only)
{
    B->phase = WL_PHASE_FORWARD;
    B->train = 1;
    if (layer_only) {
        B->frozen = B->lora != 0;
        wl_core_bld_layer(B);
    } else {
        B->no_grad = B->frozen = embed_frozen(B);
        wl_core_bld_prefix(B);
        for (int l = 0; l < B->m->layers && !B->rc; l++) {
            B->frozen = layer_frozen(B, l);
            if (!B->lora)
                B->no_grad = B->frozen;
            wl_core_bld_layer(B);
        }
        B->frozen = head_frozen(B);
        if (!B->lora)
            B->no_grad = 0;
        wl_core_bld_head(B);
    }
    B->no_grad = B->frozen = 0;
}

/* grad_accum micro-batches of forward and backward, then the optimizer. */
void wl_core_bld_train_step(bld *B, int layer_only)
{
    int n = B->sh->grad_accum > 0 ? B->sh->grad_accum : 1;
    wl_core_bld_pl_model(B, layer_only);
    for (int mb = 0; mb < n && !B->rc; mb++) {
        B->micro = mb;
        B->saved_other = 0;
        wl_core_bld_train_forward(B, layer_only);
        if (B->saved_other + B->saved_peak > B->saved_peak_step)
            B->saved_peak_step = B->saved_other + B->saved_peak;
        wl_core_bld_backward(B);
    }
    /* none: the forward and backward alone, as a pipeline stage's
     * computations are timed (Perseus's stage profiles) */
    if (B->sh->optimizer != WL_OPTIM_NONE)
        optimizer(B);
}
