/* The builders' kernel emitters: one launch, a linear layer, batched and
 * fused attention GEMMs, elementwise ops with their backward, row ops,
 * norms and rotary (transformers 4.x's and 5.x's), the cache update, an
 * embedding's gradient, and what a step saves for backward and shards
 * under tensor parallelism. The bottom of the builder: build_hf5.c,
 * build_layer.c, build_train.c, build_gen.c and builder.c assemble layers
 * and steps from them. */
#include "builder_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every kernel is checked as a trace's would be: a shape that passes the
 * model-level limits can still make one tensor absurd (a vision input at a
 * huge batch). */
void wl_core_bld_add(bld *B, const wl_kernel *k0)
{
    if (B->rc)
        return;
    wl_kernel k = *k0;
    if (k.kind == WL_K_ELEMENTWISE && !k.strided)
        k.strided = B->strided;
    if (B->hf5)
        wl_core_kernel_on_stack(&k, WL_STACK_HF5);
    /* a forward softmax under a causal mask: its masked scores' cost
     * (core/latency.c) */
    if (k.kind == WL_K_SOFTMAX && !k.bwd && B->softmax_q > 0) {
        k.causal = 1;
        k.m = B->softmax_q;
    }
    k.phase = (int)B->phase;
    k.graphed = B->graphing && B->graph_n++ > 0;
    if (wl_kernel_check(&k, B->m->id, 0, B->err))
        B->rc = WL_EINVAL;
    else if (wl_core_workload_add_n(B->wl, &k, B->rep > 1 ? B->rep : 1))
        B->rc = WL_ENOMEM;
}

/* A new tape entry (zeroed), or NULL when not training or out of memory;
 * also where the ops added now need no gradient (B->no_grad) */
static tp_ent *tp_alloc(bld *B)
{
    if (!B->train || B->rc)
        return NULL;
    if (B->ntape == B->captape) {
        size_t nc = B->captape ? 2 * B->captape : 256;
        tp_ent *t = realloc(B->tape, nc * sizeof *t);
        if (!t) {
            B->rc = WL_ENOMEM;
            return NULL;
        }
        B->tape = t;
        B->captape = nc;
    }
    tp_ent *e = &B->tape[B->ntape++];
    memset(e, 0, sizeof *e);
    return e;
}

tp_ent *wl_core_bld_tp_new(bld *B)
{
    return B->no_grad ? NULL : tp_alloc(B);
}

void wl_core_bld_tp_k(tp_ent *e, const wl_kernel *k)
{
    if (e && e->nk < TP_MAXK)
        e->k[e->nk++] = *k;
}

wl_kernel wl_core_bld_ewk(wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel k = {0};
    k.kind = WL_K_ELEMENTWISE;
    k.op = op;
    k.n = n;
    k.batch = 1;
    k.in_dtype = dt;
    k.acc_dtype = WL_DT_FP32;
    return k;
}

wl_kernel wl_core_bld_rowk(wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt)
{
    wl_kernel k = {0};
    k.kind = kind;
    k.batch = rows;
    k.n = dim;
    k.in_dtype = dt;
    k.acc_dtype = WL_DT_FP32;
    return k;
}

/* Bytes a training forward keeps for its backward (PyTorch's saved
 * tensors): counted per layer, and apart inside the attention core, which
 * selective recompute does not keep. */
void wl_core_bld_save(bld *B, double elems, double bytes_per_elem)
{
    if (!B->train || B->no_grad)
        return;
    if (B->in_core)
        B->saved_core += elems * bytes_per_elem;
    else
        B->saved_layer += elems * bytes_per_elem;
}

/* A tensor of n elements used `uses` times: its gradient is the sum of one
 * gradient per use, an add per extra use (the engine's input buffer). */
void wl_core_bld_fanout(bld *B, long long n, wl_dtype dt, int uses)
{
    tp_ent *e = wl_core_bld_tp_new(B);
    for (int i = 1; e && i < uses; i++) {
        wl_kernel k = wl_core_bld_ewk(WL_EW_ADD, n, dt);
        wl_core_bld_tp_k(e, &k);
    }
}

/* The last entry also gives the gradient of a parameter of numel elements
 * (ops whose backward the caller wrote out): none for a frozen one, and
 * where no gradient is recorded, the last entry is another op's. */
void wl_core_bld_tp_param(bld *B, double numel)
{
    if (B->train && !B->no_grad && !B->frozen && !B->rc && B->ntape) {
        tp_ent *e = &B->tape[B->ntape - 1];
        if (e->np < 2)
            e->param[e->np++] = numel;
    }
}

/* The host waits for the GPU (an .item() or a token read back). */
void wl_core_bld_host_sync(bld *B)
{
    wl_kernel sy = {0};
    sy.kind = WL_K_GAP;
    sy.sync = 1;
    wl_core_bld_add(B, &sy);
}

void wl_core_bld_mark(bld *B, int what)
{
    /* a layer that starts without gradients can end with them (LoRA's
     * first layer, from its first adapter on): its opening mark is kept,
     * and a layer that ends without them has nothing to recompute */
    tp_ent *e = what == MARK_LAYER_BEGIN || what == MARK_CORE_BEGIN ? tp_alloc(B)
                                                                    : wl_core_bld_tp_new(B);
    if (!e)
        return;
    e->mark = what;
    e->at = B->wl->n;
    e->from = e->at;
    if (what == MARK_LAYER_END || what == MARK_CORE_END)
        for (size_t i = B->ntape - 1; i-- > 0;)
            if (B->tape[i].mark == what - 1) {
                e->from = B->tape[i].at;
                break;
            }
}

/* Linear layer y = x W^T + b with bias fused (addmm). GPT-2's Conv1D puts
 * tokens in M; nn.Linear's cuBLAS call puts output features in M.
 * Backward (addmm's formulas): the input gradient grad_y W (dgrad), the
 * weight gradient grad_y^T x (wgrad, K = tokens) and, with a bias, the sum
 * of grad_y over tokens (autograd's sum_to of the broadcast bias: a
 * reduction kernel). Autograd computes only what is needed: no dgrad when
 * x needs no gradient, no wgrad or bias sum for a frozen weight, nothing
 * at all when neither. */
static void linear_full(bld *B, long long in, long long out, int bias, int conv1d, int xgrad,
                        int wtrain)
{
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = B->gemm_dt;
    /* an 8-bit checkpoint's linear (B->quant): its bf16 input quantized per
     * token first (vLLM's scaled_fp8_quant: a pass over the T x in
     * activations, an absmax and a scaled cast), then the GEMM in 8 bits;
     * its LM head (the vocabulary's outputs) stays 16-bit */
    if (B->quant && wl_dtype_bytes(B->gemm_dt) == 1.0) {
        if (out == B->m->vocab_size)
            k.in_dtype = B->dt;
        else
            wl_core_bld_ewc(B, WL_EW_UNSPEC_SCALAR, B->T * in, B->dt);
    }
    k.acc_dtype = B->tc ? k.in_dtype : WL_DT_FP32;
    k.tensor_core = B->tc;
    k.batch = 1;
    k.k = in;
    k.unaligned = in % 8 != 0 || out % 8 != 0; /* the weight's rows (and its gradients') */
    if (conv1d) {
        k.m = B->T;
        k.n = out;
    } else {
        k.m = out;
        k.n = B->T;
    }
    wl_core_bld_add(B, &k);
    /* cuBLAS splits K for a skinny GEMM whose output tiles would leave
     * SMs idle (64 x 8 tiles against a Hopper's 132 SMs: a decode step's
     * projections of 4096 outputs and less, not its 14336-wide MLP nor
     * the LM head, in the H200 profiles), then sums the fp32 partials in
     * a second kernel (cublasLt splitKreduce) */
    if (B->hf5 && B->T <= 64 && (out + 63) / 64 * ((B->T + 7) / 8) < 132) {
        long long tiles = (out + 63) / 64 * ((B->T + 7) / 8);
        long long splits = (132 + tiles - 1) / tiles;
        if (splits > in / 256)
            splits = in / 256;
        if (splits >= 2) {
            wl_kernel r = wl_core_bld_rowk(WL_K_REDUCE, B->T * out, splits, WL_DT_FP32);
            r.internal = 1; /* launched by cublasLt inside the addmm */
            wl_core_bld_add(B, &r);
        }
    }
    if (!xgrad && !wtrain)
        return;
    tp_ent *e = tp_alloc(B); /* a trained weight's gradient though x needs none */
    if (!e)
        return;
    wl_kernel g = k;
    if (xgrad) {
        g.m = conv1d ? B->T : in;
        g.n = conv1d ? in : B->T;
        g.k = out;
        wl_core_bld_tp_k(e, &g);
    }
    if (!wtrain)
        return;
    g.m = in;
    g.n = out;
    g.k = B->T;
    wl_core_bld_tp_k(e, &g);
    e->param[e->np++] = (double)in * (double)out;
    if (bias) {
        wl_kernel r = wl_core_bld_rowk(WL_K_REDUCE, out, B->T, B->dt);
        r.strided = 1; /* the bias gradient: a column sum over the tokens */
        wl_core_bld_tp_k(e, &r);
        e->param[e->np++] = (double)out;
    }
}

void wl_core_bld_linear_x(bld *B, long long in, long long out, int bias, int conv1d)
{
    linear_full(B, in, out, bias, conv1d, !B->no_grad, !B->frozen);
}

void wl_core_bld_linear(bld *B, long long in, long long out, int bias)
{
    wl_core_bld_linear_x(B, in, out, bias, B->m->style == WL_STYLE_GPT2);
}

int wl_core_bld_proj_adapted(const bld *B, int proj)
{
    static const unsigned bits[] = {
        [PROJ_Q] = WL_LORA_Q, [PROJ_K] = WL_LORA_K, [PROJ_V] = WL_LORA_V,
        [PROJ_QKV] = WL_LORA_Q | WL_LORA_K | WL_LORA_V, [PROJ_O] = WL_LORA_O,
        [PROJ_GATE] = WL_LORA_GATE, [PROJ_UP] = WL_LORA_UP, [PROJ_DOWN] = WL_LORA_DOWN};
    return proj > PROJ_NONE && proj <= PROJ_DOWN && (B->lora & bits[proj]) != 0;
}

int wl_core_bld_proj_keeps_input(const bld *B, int proj)
{
    if (proj == PROJ_QKV && B->m->style != WL_STYLE_GPT2)
        return !B->frozen || wl_core_bld_proj_adapted(B, PROJ_Q) ||
               wl_core_bld_proj_adapted(B, PROJ_K) || wl_core_bld_proj_adapted(B, PROJ_V);
    return !B->frozen || wl_core_bld_proj_adapted(B, proj);
}

/* A projection with a LoRA adapter, as PEFT's lora.Linear runs it (Hu et
 * al. 2021; peft/tuners/lora/layer.py): result = base(x), then
 * result = result + lora_B(lora_A(dropout(x))) * scaling, lora_A and
 * lora_B nn.Linear layers of rank r (no bias) and lora_dropout 0 (PEFT's
 * default: nn.Identity, no kernel). x feeds the base layer and lora_A, so
 * its gradient is a sum; the base layer is frozen; lora_B's input gradient
 * is always needed (lora_A trains), lora_A's only when x needs one. The
 * sum's output needs a gradient from here on. */
void wl_core_bld_proj(bld *B, int proj, long long in, long long out, int bias)
{
    int conv1d = B->m->style == WL_STYLE_GPT2;
    if (!wl_core_bld_proj_adapted(B, proj)) {
        wl_core_bld_linear_x(B, in, out, bias, conv1d);
        return;
    }
    int xg = !B->no_grad;
    long long T = B->T, r = B->lora_rank;
    wl_core_bld_fanout(B, T * in, B->dt, 2);
    linear_full(B, in, out, bias, conv1d, xg, 0);
    linear_full(B, in, r, 0, 0, xg, 1);   /* lora_A */
    linear_full(B, r, out, 0, 0, 1, 1);   /* lora_B */
    B->no_grad = 0;
    wl_core_bld_ew(B, WL_EW_SCALAR_MUL, T * out, B->dt); /* * scaling (alpha / r) */
    wl_core_bld_ew(B, WL_EW_ADD, T * out, B->dt);        /* result + ... */
}

/* Batched C = A B (A: m x k, B: k x n). Backward (bmm's formulas):
 * grad_A = grad_C B^T (m x k over n) and grad_B = A^T grad_C (k x n over m). */
void wl_core_bld_bgemm(bld *B, long long batch, long long m, long long n, long long kk)
{
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    /* an 8-bit checkpoint's attention runs in bf16 (a serving forward sets
     * its own: build_gen.c) */
    k.in_dtype = B->quant && B->sh->launch != WL_LAUNCH_GRAPHS ? B->dt : B->gemm_dt;
    k.acc_dtype = B->tc ? k.in_dtype : WL_DT_FP32;
    k.tensor_core = B->tc;
    k.batch = batch;
    k.m = m;
    k.n = n;
    k.k = kk;
    wl_core_bld_add(B, &k);
    tp_ent *e = wl_core_bld_tp_new(B);
    if (!e)
        return;
    wl_kernel g = k;
    g.m = m, g.n = kk, g.k = n;
    wl_core_bld_tp_k(e, &g);
    g.m = kk, g.n = n, g.k = m;
    wl_core_bld_tp_k(e, &g);
}

/* An elementwise op on tensors that need no gradient (masks, positions,
 * rotary tables): no backward. */
void wl_core_bld_ewc(bld *B, wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel k = wl_core_bld_ewk(op, n, dt);
    wl_core_bld_add(B, &k);
}

/* An elementwise op whose backward is given: nb kernels. */
void wl_core_bld_ewb(bld *B, wl_ew_op op, long long n, wl_dtype dt, const wl_kernel *bk, int nb)
{
    wl_core_bld_ewc(B, op, n, dt);
    tp_ent *e = wl_core_bld_tp_new(B);
    for (int i = 0; e && i < nb; i++)
        wl_core_bld_tp_k(e, &bk[i]);
}

/* An elementwise op on tensors that need gradients, with the backward of
 * derivatives.yaml: add passes the gradient through (no kernel); mul
 * multiplies it by the other input, once per input; a scalar multiply
 * scales it; relu, gelu, silu and tanh launch their *_backward kernel
 * (reading the gradient and the saved tensor); a cast casts back; where
 * selects the gradient; dropout applies its mask. */
void wl_core_bld_ew(bld *B, wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel bk[2] = {{0}, {0}};
    int nb = 0;
    switch (op) {
    case WL_EW_MUL:
        bk[nb++] = wl_core_bld_ewk(WL_EW_MUL, n, dt);
        bk[nb++] = wl_core_bld_ewk(WL_EW_MUL, n, dt);
        break;
    case WL_EW_SCALAR_MUL: case WL_EW_UNSPEC_SCALAR: case WL_EW_UNSPEC_TENSOR:
        bk[nb++] = wl_core_bld_ewk(op, n, dt);
        break;
    case WL_EW_RELU: case WL_EW_GELU: case WL_EW_SILU: case WL_EW_TANH:
        bk[nb] = wl_core_bld_ewk(op, n, dt);
        bk[nb++].bwd = 1;
        break;
    case WL_EW_CAST_FP32:
        bk[nb++] = wl_core_bld_ewk(WL_EW_CAST_BF16, n, WL_DT_FP32);
        break;
    case WL_EW_CAST_BF16:
        bk[nb++] = wl_core_bld_ewk(WL_EW_CAST_FP32, n, B->dt);
        break;
    case WL_EW_DROPOUT:
        bk[nb++] = wl_core_bld_ewk(WL_EW_DROPOUT_BWD, n, dt);
        break;
    default: /* add, scalar add, copy: the gradient passes through */
        break;
    }
    wl_core_bld_ewb(B, op, n, dt, bk, nb);
}

/* Dropout in training (HF: nn.functional.dropout / nn.Dropout): one
 * native_dropout kernel writing the output and a one-byte mask, which it
 * keeps; nothing at p = 0, where ATen returns the input. */
void wl_core_bld_dropout(bld *B, long long n, double p)
{
    if (!B->train || !(p > 0))
        return;
    wl_core_bld_ew(B, WL_EW_DROPOUT, n, B->dt);
    wl_core_bld_save(B, (double)n, 1.0);
}

/* Row operations. Backward: softmax_backward_data (one kernel reading the
 * gradient and the saved output); layer_norm's two kernels (the input
 * gradient, then the weight and bias gradients as column sums over the
 * rows of grad and normalised input); likewise RMSNorm with one weight. */
void wl_core_bld_rowop(bld *B, wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt)
{
    wl_kernel k = wl_core_bld_rowk(kind, rows, dim, dt);
    wl_core_bld_add(B, &k);
    tp_ent *e = wl_core_bld_tp_new(B);
    if (!e || (kind != WL_K_SOFTMAX && kind != WL_K_LAYERNORM && kind != WL_K_RMSNORM))
        return;
    wl_kernel g = k;
    g.bwd = 1;
    wl_core_bld_tp_k(e, &g);
    if (kind == WL_K_SOFTMAX || B->frozen)
        return;
    wl_kernel r = wl_core_bld_rowk(WL_K_REDUCE, dim, 2 * rows, dt);
    r.strided = 1; /* GammaBeta: column sums over the rows */
    wl_core_bld_tp_k(e, &r);
    e->param[e->np++] = (double)dim;
    if (kind == WL_K_LAYERNORM)
        e->param[e->np++] = (double)dim;
}

int wl_core_bld_half(const bld *B) { return B->dt != WL_DT_FP32 && B->dt != WL_DT_TF32; }

double wl_core_bld_eb(const bld *B) { return wl_dtype_bytes(B->dt); }

/* HF LlamaRMSNorm / Qwen2RMSNorm in eager mode is not one kernel:
 *   x = x.to(fp32); v = x.pow(2).mean(-1); x = x * rsqrt(v + eps);
 *   return weight * x.to(dtype)
 * The qwen2 traces record five of these kernels: pow, + eps and rsqrt (on
 * the T row statistics), the fp32 product, and the weight product in the
 * activation dtype. The .to() casts and the mean are not recorded, and the
 * time and power coefficients were fitted on trace sequences that leave
 * them out, so the builder leaves them out too -- and their backward.
 * Backward of the recorded five, from derivatives.yaml: weight * y gives
 * grad * w and sum_tokens(grad * y) (a mul and a column sum); x * r gives
 * grad * r and sum_row(grad * x); rsqrt gives -0.5 grad r^3 (pow, scale,
 * mul on the T statistics); pow(x, 2) gives grad * 2 x^1 (pow with
 * exponent 1 is a copy, then a scale and a mul); x feeds pow and the
 * product, so its two gradients are added. */

void wl_core_bld_norm(bld *B)
{
    if (B->hf5 && B->m->style == WL_STYLE_LLAMA && B->m->norm == WL_NORM_RMSNORM) {
        wl_core_bld_hf5_rmsnorm(B);
        return;
    }
    if (B->m->norm == WL_NORM_LAYERNORM) {
        wl_core_bld_rowop(B, WL_K_LAYERNORM, B->T, B->d, B->dt);
        wl_core_bld_save(B, (double)(B->T * B->d),
                         wl_core_bld_eb(B)); /* input; mean and rstd below */
        wl_core_bld_save(B, 2.0 * (double)B->T, 4.0);
        return;
    }
    if (B->m->style != WL_STYLE_LLAMA) {
        wl_core_bld_rowop(B, WL_K_RMSNORM, B->T, B->d, B->dt);
        wl_core_bld_save(B, (double)(B->T * B->d), wl_core_bld_eb(B));
        wl_core_bld_save(B, (double)B->T, 4.0);
        return;
    }
    long long n = B->T * B->d, T = B->T;
    const wl_dtype F = WL_DT_FP32;
    wl_core_bld_fanout(B, n, F, 2);
    wl_kernel pw[3] = {wl_core_bld_ewk(WL_EW_COPY, n, F), wl_core_bld_ewk(WL_EW_SCALAR_MUL, n, F),
                       wl_core_bld_ewk(WL_EW_MUL, n, F)};
    wl_core_bld_ewb(B, WL_EW_UNSPEC_SCALAR, n, F, pw, 3);  /* pow(2) */
    wl_core_bld_ewb(B, WL_EW_SCALAR_ADD, T, F, NULL, 0);    /* + eps */
    wl_kernel rs[3] = {wl_core_bld_ewk(WL_EW_UNSPEC_SCALAR, T, F),
                       wl_core_bld_ewk(WL_EW_SCALAR_MUL, T, F), wl_core_bld_ewk(WL_EW_MUL, T, F)};
    wl_core_bld_ewb(B, WL_EW_UNSPEC_SCALAR, T, F, rs, 3);   /* rsqrt */
    wl_kernel xr[3] = {wl_core_bld_ewk(WL_EW_MUL, n, F), wl_core_bld_ewk(WL_EW_MUL, n, F),
                       wl_core_bld_rowk(WL_K_REDUCE, T, B->d, F)};
    wl_core_bld_ewb(B, WL_EW_MUL, n, F, xr, 3);             /* x * rsqrt */
    wl_kernel wy[3] = {wl_core_bld_ewk(WL_EW_MUL, n, B->dt),
                       wl_core_bld_rowk(WL_K_REDUCE, B->d, T, B->dt),
                       wl_core_bld_ewk(WL_EW_MUL, n, B->dt)};
    wy[1].strided = 1; /* the weight gradient: a column sum over the tokens */
    /* weight * x.to(dtype); a frozen weight: grad * w alone */
    wl_core_bld_ewb(B, WL_EW_SCALAR_MUL, n, B->dt, B->frozen ? &wy[2] : wy, B->frozen ? 1 : 3);
    wl_core_bld_tp_param(B, (double)B->d);
    wl_core_bld_save(B, (double)n, 4.0 + wl_core_bld_eb(B)); /* x in fp32 and the cast product */
    wl_core_bld_save(B, (double)T, 4.0);         /* rsqrt */
}

/* apply_rotary_pos_emb: x*cos + rotate_half(x)*sin. rotate_half's neg and
 * cat are views and a small copy the traces do not record. Backward: one
 * mul per product (cos and sin need no gradient) and the sum of x's two
 * gradients. */

void wl_core_bld_rotary(bld *B, long long heads)
{
    if (B->hf5) {
        wl_core_bld_hf5_rotary(B, heads);
        return;
    }
    long long n = B->b * heads * B->s * B->hd;
    wl_kernel mb = wl_core_bld_ewk(WL_EW_MUL, n, B->dt);
    wl_core_bld_fanout(B, n, B->dt, 2);
    wl_core_bld_ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);
    wl_core_bld_ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);
    wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
}

/* The KV cache of a generation: each forward writes its new tokens' k and v
 * into a preallocated cache in place (one kernel for both, as vLLM's
 * reshape_and_cache and HF's StaticCache index_copy_ do; CUDA graphs need
 * these fixed addresses). HF's default DynamicCache instead appends by
 * torch.cat, which copies the whole cache every step; that is not built. */
void wl_core_bld_cache_update(bld *B)
{
    if (B->gen)
        wl_core_bld_ewc(B, WL_EW_COPY, 2 * (B->b * B->s + B->chunk) * B->kvh * B->hd, B->dt);
}

void wl_core_bld_flash(bld *B, long long bh)
{
    const wl_core_model *m = B->m;
    wl_style st = m->style;
    wl_kernel k = {0};
    k.kind = WL_K_ATTN_FLASH;
    k.in_dtype = B->quant ? B->dt : B->gemm_dt; /* an 8-bit checkpoint's: bf16 */
    k.acc_dtype = WL_DT_FP32;
    k.tensor_core = B->tc;
    k.batch = bh;
    k.m = B->s;
    k.n = B->sk;
    k.k = B->hd;
    /* a decode step's one query sees the whole cache: no mask */
    k.causal = st != WL_STYLE_BERT && st != WL_STYLE_VIT && B->s > 1;
    k.groups = B->kvh > 0 && B->kvh < B->h ? (int)(B->h / B->kvh) : 0;
    wl_core_bld_add(B, &k);
    /* FlashAttention-2's backward as PyTorch's SDPA launches it: the row
     * sums of dO * O, the fused dQ/dK/dV kernel (which recomputes the
     * scores), and the conversion of its fp32 dQ accumulator */
    tp_ent *e = wl_core_bld_tp_new(B);
    if (!e)
        return;
    wl_kernel d = wl_core_bld_rowk(WL_K_REDUCE, bh * B->s, 2 * B->hd, B->dt);
    wl_core_bld_tp_k(e, &d);
    wl_kernel g = k;
    g.bwd = 1;
    wl_core_bld_tp_k(e, &g);
    if (wl_core_bld_half(B)) {
        wl_kernel c = wl_core_bld_ewk(WL_EW_CAST_BF16, B->T * B->h * B->hd, WL_DT_FP32);
        wl_core_bld_tp_k(e, &c);
    }
    /* cuDNN's backward with grouped queries (SDPA's enable_gqa) sums the
     * key and value gradients over each group: two more kernels */
    if (B->hf5 && k.groups > 1) {
        wl_kernel r =
            wl_core_bld_rowk(WL_K_REDUCE, B->b * B->kvh * B->sk * B->hd, k.groups, WL_DT_FP32);
        wl_core_bld_tp_k(e, &r);
        wl_core_bld_tp_k(e, &r);
    }
    /* q, k, v, the output and the log-sum-exp per row */
    wl_core_bld_save(B, (double)B->T * (double)((2 * B->h + 2 * B->kvh) * B->hd),
                     wl_core_bld_eb(B));
    wl_core_bld_save(B, (double)(bh * B->s), 4.0);
}

/* The gradient of an embedding table (embedding_dense_backward_cuda): the
 * table's gradient zeroed, the T indices sorted, then each row's gradients
 * summed into it. The sort's radix passes and the segment bookkeeping run
 * on the T indices and are counted as one kernel. A table tied to the LM
 * head adds the head's gradient to its own. */
void wl_core_bld_embed_bwd(bld *B, long long rows, int tied)
{
    if (B->frozen)
        return; /* its input is indices: a frozen table has no backward */
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

/* ---- transformers 5.x's RMSNorm and rotary (--stack hf5) -------------------- */

/* Qwen2RMSNorm / LlamaRMSNorm, eager:
 *   x = x.to(fp32); v = x.pow(2).mean(-1, keepdim); x = x * rsqrt(v + eps);
 *   return weight * x.to(dtype)
 * Backward by derivatives.yaml: the casts cast back; weight * y gives
 * grad * w and sum_tokens(grad * y); x * r gives grad * r and
 * sum_row(grad * x); rsqrt gives -0.5 grad r^3 (pow, scale, mul on the
 * row statistics); mean gives grad.expand / d (one kernel); pow(x, 2)
 * gives grad * 2 x (a scale and a mul: the profiles show no pow(x, 1));
 * x feeds pow and the product, so its two gradients are added. */
void wl_core_bld_hf5_rmsnorm(bld *B)
{
    long long n = B->T * B->d, T = B->T;
    const wl_dtype F = WL_DT_FP32;
    if (wl_core_bld_half(B))
        wl_core_bld_ew(B, WL_EW_CAST_FP32, n, B->dt);
    wl_core_bld_fanout(B, n, F, 2);
    wl_kernel pw[2] = {wl_core_bld_ewk(WL_EW_SCALAR_MUL, n, F), wl_core_bld_ewk(WL_EW_MUL, n, F)};
    wl_core_bld_ewb(B, WL_EW_UNSPEC_SCALAR, n, F, pw, 2);   /* pow(2) */
    wl_kernel mean = wl_core_bld_rowk(WL_K_REDUCE, T, B->d, F);
    wl_core_bld_add(B, &mean);
    tp_ent *e = wl_core_bld_tp_new(B);
    wl_kernel mb = wl_core_bld_ewk(WL_EW_SCALAR_MUL, n, F);
    wl_core_bld_tp_k(e, &mb);                               /* mean_backward */
    wl_core_bld_ewb(B, WL_EW_SCALAR_ADD, T, F, NULL, 0);    /* + eps */
    wl_kernel rs[3] = {wl_core_bld_ewk(WL_EW_UNSPEC_SCALAR, T, F),
                       wl_core_bld_ewk(WL_EW_SCALAR_MUL, T, F), wl_core_bld_ewk(WL_EW_MUL, T, F)};
    wl_core_bld_ewb(B, WL_EW_UNSPEC_SCALAR, T, F, rs, 3);   /* rsqrt */
    wl_kernel xr[3] = {wl_core_bld_ewk(WL_EW_MUL, n, F), wl_core_bld_ewk(WL_EW_MUL, n, F),
                       wl_core_bld_rowk(WL_K_REDUCE, T, B->d, F)};
    xr[1].strided = 1;
    B->strided = 1;                             /* the row statistic broadcast */
    wl_core_bld_ewb(B, WL_EW_MUL, n, F, xr, 3);             /* x * rsqrt */
    B->strided = 0;
    if (wl_core_bld_half(B))
        wl_core_bld_ew(B, WL_EW_CAST_BF16, n, F);
    wl_kernel wy[3] = {wl_core_bld_ewk(WL_EW_MUL, n, B->dt),
                       wl_core_bld_rowk(WL_K_REDUCE, B->d, T, B->dt),
                       wl_core_bld_ewk(WL_EW_MUL, n, B->dt)};
    wy[1].strided = 1; /* the weight gradient: a column sum over the tokens */
    wy[2].strided = 1;
    B->strided = 1;                             /* the weight broadcast */
    /* weight * x.to(dtype); a frozen weight: grad * w alone */
    wl_core_bld_ewb(B, WL_EW_MUL, n, B->dt, B->frozen ? &wy[2] : wy, B->frozen ? 1 : 3);
    B->strided = 0;
    wl_core_bld_tp_param(B, (double)B->d);
    wl_core_bld_save(B, (double)n,
                     4.0 + 4.0 + wl_core_bld_eb(B));        /* x in fp32, the product, its cast */
    wl_core_bld_save(B, (double)T, 4.0);                    /* rsqrt */
}

/* apply_rotary_pos_emb: q cos + rotate_half(q) sin, rotate_half(x) =
 * cat(-x2, x1). Backward: cos and sin need no gradient, so a mul each;
 * neg's a neg; cat's gradient is two views, each slice of x a zeroed
 * tensor and a copy into it (slice_backward); x's three gradients are
 * added. */
void wl_core_bld_hf5_rotary(bld *B, long long heads)
{
    long long n = B->b * heads * B->s * B->hd;
    wl_kernel mb = wl_core_bld_ewk(WL_EW_MUL, n, B->dt);
    mb.strided = 1; /* cos and sin broadcast over batch and heads */
    wl_core_bld_fanout(B, n, B->dt, 3);
    B->strided = 1;
    wl_core_bld_ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);             /* x * cos */
    wl_kernel sl[2] = {wl_core_bld_ewk(WL_EW_FILL, n, B->dt),
                       wl_core_bld_ewk(WL_EW_COPY, n / 2, B->dt)};
    sl[1].strided = 1;
    tp_ent *e = wl_core_bld_tp_new(B);                            /* the two slices of x */
    for (int i = 0; e && i < 2; i++) {
        wl_core_bld_tp_k(e, &sl[0]);
        wl_core_bld_tp_k(e, &sl[1]);
    }
    wl_kernel nb = wl_core_bld_ewk(WL_EW_UNSPEC_SCALAR, n / 2, B->dt);
    wl_core_bld_ewb(B, WL_EW_UNSPEC_SCALAR, n / 2, B->dt, &nb, 1); /* -x2, a strided slice */
    B->strided = 2;
    wl_core_bld_ewb(B, WL_EW_COPY, n, B->dt, NULL, 0);            /* cat */
    B->strided = 1;
    wl_core_bld_ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);              /* * sin */
    B->strided = 0;
    wl_core_bld_ew(B, WL_EW_ADD, n, B->dt);
    wl_core_bld_save(B, (double)n, wl_core_bld_eb(B)); /* rotate_half(x) for nothing: x kept */
}
