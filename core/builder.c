/* Native workload builder: the kernel sequence that HuggingFace eager PyTorch
 * launches for a base model's prefill, from its hyperparameters.
 *
 * The sequences follow shared/data/traces (GPT-2, BERT, OPT): the tracer
 * records GEMMs, softmax, layer norms and elementwise kernels, not views or
 * embedding gathers, and so does this builder. The style selects the
 * framework's implementation quirks (GEMM operand order, fused or separate
 * QKV, where scaling and masking happen); the other fields select the
 * architecture (activation, norm, positions, GQA). */
#include "core_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the backward tape ------------------------------------------------------
 * A training forward records, for every op it launches, the kernels that
 * op's backward launches (PyTorch's derivatives.yaml formulas as the CUDA
 * backends implement them) and the parameters whose gradients they
 * produce. The backward pass walks the tape in reverse, as the autograd
 * engine does for a chain of ops. A tensor used by several ops gets one
 * gradient accumulation (an add) per extra use (a "fan-out" entry). Marks
 * bracket the ranges a recompute runs again. */
#define TP_MAXK 6
enum { MARK_NONE = 0, MARK_LAYER_BEGIN, MARK_LAYER_END, MARK_CORE_BEGIN, MARK_CORE_END };

typedef struct {
    int nk;
    wl_kernel k[TP_MAXK]; /* backward kernels in launch order */
    int np;
    double param[2];      /* numels of the parameters whose gradients they give */
    int mark;
    size_t at;            /* marks: index of the next forward kernel */
    size_t from;          /* end marks: the opening mark's index */
} tp_ent;

typedef struct {
    wl_core_workload *wl;
    const wl_core_model *m;
    wl_dtype dt;      /* activations */
    wl_dtype gemm_dt; /* GEMM inputs: tf32 keeps fp32 storage on tensor cores */
    int tc;
    long long b, s, T, d, h, kvh, hd, ff;
    long long sk;     /* key length: s, or the cache's length in a decode step */
    long long chunk;  /* serving: prompt tokens of arriving requests mixed into a
                         decode step (chunked prefill) */
    long long prompt; /* ... whose prompts are this long */
    int gen;          /* 0: no cache; 1: a generation's prefill; 2: a decode step */
    int graphing;     /* kernels go into a CUDA graph ... */
    size_t graph_n;   /* ... of which this many are already in */
    wl_attention attn;
    int hf5;          /* HF transformers 5.x eager (see hf5_* below) */
    int strided;      /* elementwise kernels added now take ATen's strided path */
    wl_dtype conv_dt; /* cuDNN convolutions: TF32 tensor cores for fp32 (PyTorch's
                         default allow_tf32 for cuDNN), else the dtype */
    int rc;
    wl_error *err;
    /* training */
    const wl_core_shape *sh;
    int train;          /* record the tape (a training forward) */
    int in_core;        /* inside the attention core (selective recompute) */
    wl_phase phase;     /* of the kernels added now */
    tp_ent *tape;
    size_t ntape, captape;
    int micro;          /* micro-batch index */
    int master;         /* fp32 master weights and main gradients */
    double saved_layer, saved_core, saved_other; /* bytes kept for backward */
    double saved_peak;  /* the largest layer a full recompute rebuilds */
    double saved_peak_step; /* saved activations at their peak */
    double *plist;      /* parameter numels in model.parameters() order */
    size_t np, capp;
} bld;

/* Every kernel is checked as a trace's would be: a shape that passes the
 * model-level limits can still make one tensor absurd (a vision input at a
 * huge batch). */
static void add(bld *B, const wl_kernel *k0)
{
    if (B->rc)
        return;
    wl_kernel k = *k0;
    if (k.kind == WL_K_ELEMENTWISE && !k.strided)
        k.strided = B->strided;
    k.phase = (int)B->phase;
    k.graphed = B->graphing && B->graph_n++ > 0;
    if (wl_kernel_check(&k, B->m->id, 0, B->err))
        B->rc = WL_EINVAL;
    else if (wl_core_workload_add(B->wl, &k))
        B->rc = WL_ENOMEM;
}

/* A new tape entry (zeroed), or NULL when not training or out of memory. */
static tp_ent *tp_new(bld *B)
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

static void tp_k(tp_ent *e, const wl_kernel *k)
{
    if (e && e->nk < TP_MAXK)
        e->k[e->nk++] = *k;
}

static wl_kernel ewk(wl_ew_op op, long long n, wl_dtype dt)
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

static wl_kernel rowk(wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt)
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
static void save(bld *B, double elems, double bytes_per_elem)
{
    if (!B->train)
        return;
    if (B->in_core)
        B->saved_core += elems * bytes_per_elem;
    else
        B->saved_layer += elems * bytes_per_elem;
}

/* A tensor of n elements used `uses` times: its gradient is the sum of one
 * gradient per use, an add per extra use (the engine's input buffer). */
static void fanout(bld *B, long long n, wl_dtype dt, int uses)
{
    tp_ent *e = tp_new(B);
    for (int i = 1; e && i < uses; i++) {
        wl_kernel k = ewk(WL_EW_ADD, n, dt);
        tp_k(e, &k);
    }
}

/* The last entry also gives the gradient of a parameter of numel elements
 * (ops whose backward the caller wrote out). */
static void tp_param(bld *B, double numel)
{
    if (B->train && !B->rc && B->ntape) {
        tp_ent *e = &B->tape[B->ntape - 1];
        if (e->np < 2)
            e->param[e->np++] = numel;
    }
}

/* The host waits for the GPU (an .item() or a token read back). */
static void host_sync(bld *B)
{
    wl_kernel sy = {0};
    sy.kind = WL_K_GAP;
    sy.sync = 1;
    add(B, &sy);
}

static void mark(bld *B, int what)
{
    tp_ent *e = tp_new(B);
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
 * reduction kernel). */
static void linear_x(bld *B, long long in, long long out, int bias, int conv1d)
{
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = B->gemm_dt;
    k.acc_dtype = B->tc ? B->gemm_dt : WL_DT_FP32;
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
    add(B, &k);
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
            wl_kernel r = rowk(WL_K_REDUCE, B->T * out, splits, WL_DT_FP32);
            add(B, &r);
        }
    }
    tp_ent *e = tp_new(B);
    if (!e)
        return;
    wl_kernel g = k;
    g.m = conv1d ? B->T : in;
    g.n = conv1d ? in : B->T;
    g.k = out;
    tp_k(e, &g);
    g.m = in;
    g.n = out;
    g.k = B->T;
    tp_k(e, &g);
    e->param[e->np++] = (double)in * (double)out;
    if (bias) {
        wl_kernel r = rowk(WL_K_REDUCE, out, B->T, B->dt);
        tp_k(e, &r);
        e->param[e->np++] = (double)out;
    }
}

static void linear(bld *B, long long in, long long out, int bias)
{
    linear_x(B, in, out, bias, B->m->style == WL_STYLE_GPT2);
}

/* Batched C = A B (A: m x k, B: k x n). Backward (bmm's formulas):
 * grad_A = grad_C B^T (m x k over n) and grad_B = A^T grad_C (k x n over m). */
static void bgemm(bld *B, long long batch, long long m, long long n, long long kk)
{
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = B->gemm_dt;
    k.acc_dtype = B->tc ? B->gemm_dt : WL_DT_FP32;
    k.tensor_core = B->tc;
    k.batch = batch;
    k.m = m;
    k.n = n;
    k.k = kk;
    add(B, &k);
    tp_ent *e = tp_new(B);
    if (!e)
        return;
    wl_kernel g = k;
    g.m = m, g.n = kk, g.k = n;
    tp_k(e, &g);
    g.m = kk, g.n = n, g.k = m;
    tp_k(e, &g);
}

/* An elementwise op on tensors that need no gradient (masks, positions,
 * rotary tables): no backward. */
static void ewc(bld *B, wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel k = ewk(op, n, dt);
    add(B, &k);
}

/* An elementwise op whose backward is given: nb kernels. */
static void ewb(bld *B, wl_ew_op op, long long n, wl_dtype dt, const wl_kernel *bk, int nb)
{
    ewc(B, op, n, dt);
    tp_ent *e = tp_new(B);
    for (int i = 0; e && i < nb; i++)
        tp_k(e, &bk[i]);
}

/* An elementwise op on tensors that need gradients, with the backward of
 * derivatives.yaml: add passes the gradient through (no kernel); mul
 * multiplies it by the other input, once per input; a scalar multiply
 * scales it; relu, gelu, silu and tanh launch their *_backward kernel
 * (reading the gradient and the saved tensor); a cast casts back; where
 * selects the gradient; dropout applies its mask. */
static void ew(bld *B, wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel bk[2] = {{0}, {0}};
    int nb = 0;
    switch (op) {
    case WL_EW_MUL:
        bk[nb++] = ewk(WL_EW_MUL, n, dt);
        bk[nb++] = ewk(WL_EW_MUL, n, dt);
        break;
    case WL_EW_SCALAR_MUL: case WL_EW_UNSPEC_SCALAR: case WL_EW_UNSPEC_TENSOR:
        bk[nb++] = ewk(op, n, dt);
        break;
    case WL_EW_RELU: case WL_EW_GELU: case WL_EW_SILU: case WL_EW_TANH:
        bk[nb] = ewk(op, n, dt);
        bk[nb++].bwd = 1;
        break;
    case WL_EW_CAST_FP32:
        bk[nb++] = ewk(WL_EW_CAST_BF16, n, WL_DT_FP32);
        break;
    case WL_EW_CAST_BF16:
        bk[nb++] = ewk(WL_EW_CAST_FP32, n, B->dt);
        break;
    case WL_EW_DROPOUT:
        bk[nb++] = ewk(WL_EW_DROPOUT_BWD, n, dt);
        break;
    default: /* add, scalar add, copy: the gradient passes through */
        break;
    }
    ewb(B, op, n, dt, bk, nb);
}

/* Dropout in training (HF: nn.functional.dropout / nn.Dropout): one
 * native_dropout kernel writing the output and a one-byte mask, which it
 * keeps; nothing at p = 0, where ATen returns the input. */
static void dropout(bld *B, long long n, double p)
{
    if (!B->train || !(p > 0))
        return;
    ew(B, WL_EW_DROPOUT, n, B->dt);
    save(B, (double)n, 1.0);
}

/* Row operations. Backward: softmax_backward_data (one kernel reading the
 * gradient and the saved output); layer_norm's two kernels (the input
 * gradient, then the weight and bias gradients as column sums over the
 * rows of grad and normalised input); likewise RMSNorm with one weight. */
static void rowop(bld *B, wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt)
{
    wl_kernel k = rowk(kind, rows, dim, dt);
    add(B, &k);
    tp_ent *e = tp_new(B);
    if (!e || (kind != WL_K_SOFTMAX && kind != WL_K_LAYERNORM && kind != WL_K_RMSNORM))
        return;
    wl_kernel g = k;
    g.bwd = 1;
    tp_k(e, &g);
    if (kind == WL_K_SOFTMAX)
        return;
    wl_kernel r = rowk(WL_K_REDUCE, dim, 2 * rows, dt);
    tp_k(e, &r);
    e->param[e->np++] = (double)dim;
    if (kind == WL_K_LAYERNORM)
        e->param[e->np++] = (double)dim;
}

static int half(const bld *B) { return B->dt != WL_DT_FP32 && B->dt != WL_DT_TF32; }

static double eb(const bld *B) { return wl_dtype_bytes(B->dt); }

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
static void hf5_rmsnorm(bld *B);

static void norm(bld *B)
{
    if (B->hf5 && B->m->style == WL_STYLE_LLAMA && B->m->norm == WL_NORM_RMSNORM) {
        hf5_rmsnorm(B);
        return;
    }
    if (B->m->norm == WL_NORM_LAYERNORM) {
        rowop(B, WL_K_LAYERNORM, B->T, B->d, B->dt);
        save(B, (double)(B->T * B->d), eb(B)); /* input; mean and rstd below */
        save(B, 2.0 * (double)B->T, 4.0);
        return;
    }
    if (B->m->style != WL_STYLE_LLAMA) {
        rowop(B, WL_K_RMSNORM, B->T, B->d, B->dt);
        save(B, (double)(B->T * B->d), eb(B));
        save(B, (double)B->T, 4.0);
        return;
    }
    long long n = B->T * B->d, T = B->T;
    const wl_dtype F = WL_DT_FP32;
    fanout(B, n, F, 2);
    wl_kernel pw[3] = {ewk(WL_EW_COPY, n, F), ewk(WL_EW_SCALAR_MUL, n, F), ewk(WL_EW_MUL, n, F)};
    ewb(B, WL_EW_UNSPEC_SCALAR, n, F, pw, 3);  /* pow(2) */
    ewb(B, WL_EW_SCALAR_ADD, T, F, NULL, 0);    /* + eps */
    wl_kernel rs[3] = {ewk(WL_EW_UNSPEC_SCALAR, T, F), ewk(WL_EW_SCALAR_MUL, T, F), ewk(WL_EW_MUL, T, F)};
    ewb(B, WL_EW_UNSPEC_SCALAR, T, F, rs, 3);   /* rsqrt */
    wl_kernel xr[3] = {ewk(WL_EW_MUL, n, F), ewk(WL_EW_MUL, n, F), rowk(WL_K_REDUCE, T, B->d, F)};
    ewb(B, WL_EW_MUL, n, F, xr, 3);             /* x * rsqrt */
    wl_kernel wy[3] = {ewk(WL_EW_MUL, n, B->dt), rowk(WL_K_REDUCE, B->d, T, B->dt),
                       ewk(WL_EW_MUL, n, B->dt)};
    ewb(B, WL_EW_SCALAR_MUL, n, B->dt, wy, 3);  /* weight * x.to(dtype) */
    tp_param(B, (double)B->d);
    save(B, (double)n, 4.0 + eb(B)); /* x in fp32 and the cast product */
    save(B, (double)T, 4.0);         /* rsqrt */
}

/* apply_rotary_pos_emb: x*cos + rotate_half(x)*sin. rotate_half's neg and
 * cat are views and a small copy the traces do not record. Backward: one
 * mul per product (cos and sin need no gradient) and the sum of x's two
 * gradients. */
static void hf5_rotary(bld *B, long long heads);

static void rotary(bld *B, long long heads)
{
    if (B->hf5) {
        hf5_rotary(B, heads);
        return;
    }
    long long n = B->b * heads * B->s * B->hd;
    wl_kernel mb = ewk(WL_EW_MUL, n, B->dt);
    fanout(B, n, B->dt, 2);
    ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);
    ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);
    ew(B, WL_EW_ADD, n, B->dt);
}

/* The KV cache of a generation: each forward writes its new tokens' k and v
 * into a preallocated cache in place (one kernel for both, as vLLM's
 * reshape_and_cache and HF's StaticCache index_copy_ do; CUDA graphs need
 * these fixed addresses). HF's default DynamicCache instead appends by
 * torch.cat, which copies the whole cache every step; that is not built. */
static void cache_update(bld *B)
{
    if (B->gen)
        ewc(B, WL_EW_COPY, 2 * (B->b * B->s + B->chunk) * B->kvh * B->hd, B->dt);
}

static void flash(bld *B, long long bh)
{
    const wl_core_model *m = B->m;
    wl_style st = m->style;
    wl_kernel k = {0};
    k.kind = WL_K_ATTN_FLASH;
    k.in_dtype = B->gemm_dt;
    k.acc_dtype = WL_DT_FP32;
    k.tensor_core = B->tc;
    k.batch = bh;
    k.m = B->s;
    k.n = B->sk;
    k.k = B->hd;
    /* a decode step's one query sees the whole cache: no mask */
    k.causal = st != WL_STYLE_BERT && st != WL_STYLE_VIT && B->s > 1;
    k.groups = B->kvh > 0 && B->kvh < B->h ? (int)(B->h / B->kvh) : 0;
    add(B, &k);
    /* FlashAttention-2's backward as PyTorch's SDPA launches it: the row
     * sums of dO * O, the fused dQ/dK/dV kernel (which recomputes the
     * scores), and the conversion of its fp32 dQ accumulator */
    tp_ent *e = tp_new(B);
    if (!e)
        return;
    wl_kernel d = rowk(WL_K_REDUCE, bh * B->s, 2 * B->hd, B->dt);
    tp_k(e, &d);
    wl_kernel g = k;
    g.bwd = 1;
    tp_k(e, &g);
    if (half(B)) {
        wl_kernel c = ewk(WL_EW_CAST_BF16, B->T * B->h * B->hd, WL_DT_FP32);
        tp_k(e, &c);
    }
    /* cuDNN's backward with grouped queries (SDPA's enable_gqa) sums the
     * key and value gradients over each group: two more kernels */
    if (B->hf5 && k.groups > 1) {
        wl_kernel r = rowk(WL_K_REDUCE, B->b * B->kvh * B->sk * B->hd, k.groups, WL_DT_FP32);
        tp_k(e, &r);
        tp_k(e, &r);
    }
    /* q, k, v, the output and the log-sum-exp per row */
    save(B, (double)B->T * (double)((2 * B->h + 2 * B->kvh) * B->hd), eb(B));
    save(B, (double)(bh * B->s), 4.0);
}

static void hf5_attention(bld *B);

static void attention(bld *B)
{
    if (B->hf5) {
        hf5_attention(B);
        return;
    }
    const wl_core_model *m = B->m;
    long long bh = B->b * B->h, ss = bh * B->s * B->sk;
    long long dq = B->h * B->hd, dkv = B->kvh * B->hd;
    wl_style st = m->style;
    int qkv_bias = st != WL_STYLE_LLAMA || m->qkv_bias;

    save(B, (double)(B->T * B->d), eb(B)); /* the projections' input */
    if (st == WL_STYLE_GPT2) {
        linear(B, B->d, dq + 2 * dkv, 1); /* fused c_attn */
    } else {
        fanout(B, B->T * B->d, B->dt, 3);
        linear(B, B->d, dq, qkv_bias);
        if (st == WL_STYLE_OPT)
            ew(B, WL_EW_SCALAR_MUL, B->T * dq, B->dt); /* q * scaling */
        linear(B, B->d, dkv, qkv_bias);
        linear(B, B->d, dkv, qkv_bias);
    }
    if (m->positions == WL_POS_ROTARY) {
        rotary(B, B->h);
        rotary(B, B->kvh);
    }
    cache_update(B);
    if (B->attn == WL_ATTN_FLASH) {
        flash(B, bh);
    } else {
        /* the attention core: what selective recompute runs again */
        mark(B, MARK_CORE_BEGIN);
        B->in_core = B->train;
        save(B, 2.0 * (double)(B->T * dq), eb(B)); /* q and k (k repeated over groups) */
        bgemm(B, bh, B->s, B->sk, B->hd);
        wl_dtype sdt = B->dt; /* the softmax's precision */
        switch (st) {
        case WL_STYLE_GPT2:
            ew(B, WL_EW_UNSPEC_TENSOR, ss, B->dt); /* where(causal, w, min) */
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
            break;
        case WL_STYLE_BERT:
            ew(B, WL_EW_UNSPEC_SCALAR, ss, B->dt); /* / sqrt(d_head) */
            ew(B, WL_EW_ADD, ss, B->dt);           /* + extended mask */
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
            break;
        case WL_STYLE_OPT:
            ew(B, WL_EW_ADD, ss, B->dt); /* + causal mask */
            if (half(B)) {               /* softmax(dtype=fp32).to(dtype) */
                ew(B, WL_EW_CAST_FP32, ss, B->dt);
                ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
                sdt = WL_DT_FP32;
            }
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, sdt);
            break;
        case WL_STYLE_VIT:
        case WL_STYLE_RESNET:
            /* / sqrt(d_head), then softmax(dtype=fp32) and the casts as the
             * vit-large traces record them */
            ew(B, WL_EW_SCALAR_MUL, ss, B->dt);
            if (half(B))
                sdt = WL_DT_FP32;
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, sdt);
            if (half(B)) {
                ew(B, WL_EW_CAST_FP32, ss, B->dt);
                ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
            }
            break;
        case WL_STYLE_LLAMA:
            /* eager_attention_forward (transformers 4.48+): matmul * scaling,
             * + causal mask, softmax(dtype=fp32).to(dtype); repeat_kv is an
             * expand and reshape the traces do not record */
            ew(B, WL_EW_SCALAR_MUL, ss, B->dt);
            ew(B, WL_EW_ADD, ss, B->dt);
            if (half(B)) {
                ew(B, WL_EW_CAST_FP32, ss, B->dt);
                ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
                sdt = WL_DT_FP32;
            }
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, sdt);
            break;
        }
        save(B, (double)ss, wl_dtype_bytes(sdt)); /* the softmax output */
        int drop = B->train && m->attention_dropout > 0;
        dropout(B, ss, m->attention_dropout);
        /* PV keeps its probabilities (a new tensor after a dropout or a
         * cast back from fp32) and v */
        if (drop || sdt != B->dt)
            save(B, (double)ss, eb(B));
        save(B, (double)(B->T * dq), eb(B));
        bgemm(B, bh, B->s, B->hd, B->sk);
        B->in_core = 0;
        mark(B, MARK_CORE_END);
    }
    save(B, (double)(B->T * dq), eb(B)); /* the output projection's input */
    linear(B, dq, B->d, st != WL_STYLE_LLAMA);
}

/* GPT-2's NewGELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as the
 * eight kernels the traces record. Backward by derivatives.yaml: the final
 * product's two muls, tanh_backward, the scalar products' scales, pow's
 * grad * 3 x^2 (pow, scale, mul), nothing for the additions, and the sum of
 * x's three gradients. Kept: x, tanh's output and both factors. */
static void new_gelu(bld *B, long long n)
{
    wl_dtype dt = B->dt;
    wl_kernel sc = ewk(WL_EW_SCALAR_MUL, n, dt);
    wl_kernel pw[3] = {ewk(WL_EW_UNSPEC_SCALAR, n, dt), ewk(WL_EW_SCALAR_MUL, n, dt),
                       ewk(WL_EW_MUL, n, dt)};
    fanout(B, n, dt, 3);
    ewb(B, WL_EW_SCALAR_MUL, n, dt, &sc, 1);   /* 0.5 x */
    ewb(B, WL_EW_UNSPEC_SCALAR, n, dt, pw, 3); /* x^3 */
    ewb(B, WL_EW_SCALAR_MUL, n, dt, &sc, 1);   /* 0.044715 x^3 */
    ew(B, WL_EW_ADD, n, dt);                   /* x + ... */
    ewb(B, WL_EW_SCALAR_MUL, n, dt, &sc, 1);   /* sqrt(2/pi) (...) */
    ew(B, WL_EW_TANH, n, dt);
    ewb(B, WL_EW_SCALAR_MUL, n, dt, NULL, 0);  /* 1 + tanh: no backward kernel */
    ew(B, WL_EW_MUL, n, dt);
    save(B, 4.0 * (double)n, eb(B));
}

static void mlp(bld *B)
{
    long long n = B->T * B->ff;
    int bias = B->m->style != WL_STYLE_LLAMA;
    save(B, (double)(B->T * B->d), eb(B)); /* the first projection's input */
    switch (B->m->activation) {
    case WL_ACT_SWIGLU:
        /* down(act(gate(x)) * up(x)): Python evaluates act(gate(x)) first */
        fanout(B, B->T * B->d, B->dt, 2);
        linear(B, B->d, B->ff, bias); /* gate */
        ew(B, WL_EW_SILU, n, B->dt);
        linear(B, B->d, B->ff, bias); /* up */
        ew(B, WL_EW_MUL, n, B->dt);
        save(B, 3.0 * (double)n, eb(B)); /* gate, silu(gate), up */
        break;
    case WL_ACT_GELU_TANH:
        linear(B, B->d, B->ff, bias);
        if (B->m->style == WL_STYLE_GPT2) {
            new_gelu(B, n);
        } else {
            ew(B, WL_EW_GELU, n, B->dt);
            save(B, (double)n, eb(B));
        }
        break;
    case WL_ACT_GELU:
        linear(B, B->d, B->ff, bias);
        ew(B, WL_EW_GELU, n, B->dt);
        save(B, (double)n, eb(B));
        break;
    case WL_ACT_RELU:
        linear(B, B->d, B->ff, bias);
        ew(B, WL_EW_RELU, n, B->dt);
        break;
    }
    save(B, (double)n, eb(B)); /* the second projection's input */
    linear(B, B->ff, B->d, bias);
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
        B->saved_other += B->saved_layer +
                          (B->saved_core > 0 ? (double)B->T * (double)((B->h + 2 * B->kvh) * B->hd) * eb(B)
                                             : 0.0);
        break;
    case WL_RECOMPUTE_FULL:
        B->saved_other += (double)(B->T * B->d) * eb(B);
        if (all > B->saved_peak)
            B->saved_peak = all;
        break;
    }
    B->saved_layer = B->saved_core = 0;
}

/* A transformer layer. In training its input feeds the sublayer and the
 * residual (post-norm BERT: the attention's three projections and the
 * residual), so its gradient is a sum; dropout follows each sublayer. */
static void layer(bld *B)
{
    long long n = B->T * B->d;
    double p = B->m->hidden_dropout;
    mark(B, MARK_LAYER_BEGIN);
    if (B->m->pre_norm) {
        fanout(B, n, B->dt, 2);
        norm(B);
        attention(B);
        dropout(B, n, p);
        ew(B, WL_EW_ADD, n, B->dt);
        fanout(B, n, B->dt, 2);
        norm(B);
        mlp(B);
        dropout(B, n, p);
        ew(B, WL_EW_ADD, n, B->dt);
    } else {
        fanout(B, n, B->dt, 2);
        attention(B);
        dropout(B, n, p);
        ew(B, WL_EW_ADD, n, B->dt);
        norm(B);
        fanout(B, n, B->dt, 2);
        mlp(B);
        dropout(B, n, p);
        ew(B, WL_EW_ADD, n, B->dt);
        norm(B);
    }
    mark(B, MARK_LAYER_END);
    layer_saved(B);
}

/* The gradient of an embedding table (embedding_dense_backward_cuda): the
 * table's gradient zeroed, the T indices sorted, then each row's gradients
 * summed into it. The sort's radix passes and the segment bookkeeping run
 * on the T indices and are counted as one kernel. A table tied to the LM
 * head adds the head's gradient to its own. */
static void embed_bwd(bld *B, long long rows, int tied)
{
    tp_ent *e = tp_new(B);
    if (!e)
        return;
    wl_kernel f = ewk(WL_EW_FILL, rows * B->d, B->dt);
    wl_kernel so = ewk(WL_EW_COPY, 2 * B->T, WL_DT_FP32);
    wl_kernel sum = ewk(WL_EW_ADD, B->T * B->d, B->dt);
    tp_k(e, &f);
    tp_k(e, &so);
    tp_k(e, &sum);
    if (tied) {
        wl_kernel acc = ewk(WL_EW_ADD, rows * B->d, B->dt);
        tp_k(e, &acc);
    }
    e->param[e->np++] = (double)rows * (double)B->d;
}

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
        ewc(B, WL_EW_FILL, B->s, L);
    ewc(B, WL_EW_SCALAR_ADD, B->s, L);
    ewc(B, WL_EW_FILL, B->sk, L);
    ewc(B, WL_EW_SCALAR_ADD, B->sk, L);
    B->strided = 1; /* broadcast operands */
    ewc(B, WL_EW_UNSPEC_TENSOR, B->s * B->sk, WL_DT_INT8); /* kv_idx <= q_idx */
    B->strided = 0;
    ewc(B, WL_EW_FILL, 1, B->dt);
    B->strided = 1;
    ewc(B, WL_EW_TERNARY, B->b * B->s * B->sk, B->dt);     /* where(mask, 0, min) */
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
    ewc(B, WL_EW_COPY, rows * B->s, F);
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = F;
    k.acc_dtype = F;
    k.batch = rows;
    k.m = B->hd / 2;
    k.n = B->s;
    k.k = 1;
    add(B, &k);
    B->strided = 2;
    ewc(B, WL_EW_COPY, cs, F);          /* cat(freqs, freqs) */
    B->strided = 0;
    ewc(B, WL_EW_UNSPEC_SCALAR, cs, F); /* cos */
    ewc(B, WL_EW_SCALAR_MUL, cs, F);
    ewc(B, WL_EW_UNSPEC_SCALAR, cs, F); /* sin */
    ewc(B, WL_EW_SCALAR_MUL, cs, F);
    if (half(B)) {
        ewc(B, WL_EW_CAST_BF16, cs, F);
        ewc(B, WL_EW_CAST_BF16, cs, F);
    }
}

static void hf5_prefix(bld *B)
{
    const wl_core_model *m = B->m;
    long long n = B->T * B->d;
    const wl_dtype L = WL_DT_FP32;
    int eager = B->attn == WL_ATTN_EAGER;
    switch (m->style) {
    case WL_STYLE_GPT2:
        embed_bwd(B, m->vocab_size, !m->untied_head);
        ewc(B, WL_EW_COPY, n, B->dt);           /* wte(input_ids) */
        ewc(B, WL_EW_FILL, B->s, L);             /* cache_position */
        ewc(B, WL_EW_SCALAR_ADD, B->s, L);
        if (m->positions == WL_POS_LEARNED) {
            embed_bwd(B, m->max_positions, 0);
            ewc(B, WL_EW_COPY, B->s * B->d, B->dt); /* wpe(position_ids) */
            ew(B, WL_EW_ADD, n, B->dt);
        }
        dropout(B, n, m->hidden_dropout);
        if (eager)
            hf5_causal_mask(B);
        break;
    case WL_STYLE_BERT:
        ewc(B, WL_EW_COPY, B->s, L);             /* position_ids[:, :s] */
        embed_bwd(B, m->vocab_size, !m->untied_head);
        ewc(B, WL_EW_COPY, n, B->dt);            /* word_embeddings */
        ewc(B, WL_EW_COPY, B->T, L);             /* token_type_ids expanded */
        embed_bwd(B, m->type_vocab_size, 0);
        ewc(B, WL_EW_COPY, n, B->dt);            /* token_type_embeddings */
        ew(B, WL_EW_ADD, n, B->dt);
        embed_bwd(B, m->max_positions, 0);
        ewc(B, WL_EW_COPY, B->s * B->d, B->dt);  /* position_embeddings */
        ew(B, WL_EW_ADD, n, B->dt);
        norm(B);
        dropout(B, n, m->hidden_dropout);
        break;
    case WL_STYLE_OPT:
        embed_bwd(B, m->vocab_size, !m->untied_head);
        ewc(B, WL_EW_COPY, n, B->dt);            /* embed_tokens */
        /* the all-ones attention mask the model makes, its positions
         * (cumsum(mask) * mask - 1) and the padding half of the mask */
        ewc(B, WL_EW_FILL, B->T, L);
        wl_kernel cs = rowk(WL_K_REDUCE, B->b, B->s, L);
        add(B, &cs);
        ewc(B, WL_EW_MUL, B->T, L);
        ewc(B, WL_EW_SCALAR_ADD, B->T, L);
        ewc(B, WL_EW_COPY, B->T, L);
        ewc(B, WL_EW_COPY, B->T, WL_DT_INT8);
        if (eager) {
            hf5_causal_mask(B);
            /* and-ed with the padding mask of every sequence */
            ewc(B, WL_EW_UNSPEC_TENSOR, B->s * B->sk, WL_DT_INT8);
            ewc(B, WL_EW_COPY, B->b * B->sk, L);
            ewc(B, WL_EW_COPY, B->b * B->sk, L);
            ewc(B, WL_EW_COPY, B->T, WL_DT_INT8);
            ewc(B, WL_EW_UNSPEC_TENSOR, B->b * B->s * B->sk, WL_DT_INT8);
        }
        ewc(B, WL_EW_SCALAR_ADD, B->T, L);       /* positions + offset 2 */
        if (m->positions == WL_POS_LEARNED) {
            embed_bwd(B, m->max_positions, 0);
            ewc(B, WL_EW_COPY, n, B->dt);        /* embed_positions */
            ew(B, WL_EW_ADD, n, B->dt);
        }
        break;
    default: /* LLAMA */
        embed_bwd(B, m->vocab_size, !m->untied_head);
        if (B->gen == 2) {
            /* generate's inputs for a step: the last tokens and the
             * positions (copies), the embedding, the attention mask's
             * copies and its sum, and a check read back to the host */
            ewc(B, WL_EW_COPY, B->b, L);
            ewc(B, WL_EW_COPY, B->b, L);
            ewc(B, WL_EW_COPY, n, B->dt);
            ewc(B, WL_EW_COPY, B->b * B->sk, WL_DT_INT8);
            ewc(B, WL_EW_COPY, B->b * B->sk, L);
            wl_kernel sm = rowk(WL_K_REDUCE, B->b, B->sk, L);
            add(B, &sm);
            ewc(B, WL_EW_UNSPEC_SCALAR, 1, L);
            host_sync(B);
        } else {
            ewc(B, WL_EW_COPY, n, B->dt);        /* embed_tokens */
            ewc(B, WL_EW_FILL, B->s, L);         /* cache_position */
            ewc(B, WL_EW_SCALAR_ADD, B->s, L);
        }
        if (eager)
            hf5_causal_mask(B);
        break;
    }
    if (m->positions == WL_POS_ROTARY)
        hf5_rotary_table(B);
}

/* Qwen2RMSNorm / LlamaRMSNorm, eager:
 *   x = x.to(fp32); v = x.pow(2).mean(-1, keepdim); x = x * rsqrt(v + eps);
 *   return weight * x.to(dtype)
 * Backward by derivatives.yaml: the casts cast back; weight * y gives
 * grad * w and sum_tokens(grad * y); x * r gives grad * r and
 * sum_row(grad * x); rsqrt gives -0.5 grad r^3 (pow, scale, mul on the
 * row statistics); mean gives grad.expand / d (one kernel); pow(x, 2)
 * gives grad * 2 x (a scale and a mul: the profiles show no pow(x, 1));
 * x feeds pow and the product, so its two gradients are added. */
static void hf5_rmsnorm(bld *B)
{
    long long n = B->T * B->d, T = B->T;
    const wl_dtype F = WL_DT_FP32;
    if (half(B))
        ew(B, WL_EW_CAST_FP32, n, B->dt);
    fanout(B, n, F, 2);
    wl_kernel pw[2] = {ewk(WL_EW_SCALAR_MUL, n, F), ewk(WL_EW_MUL, n, F)};
    ewb(B, WL_EW_UNSPEC_SCALAR, n, F, pw, 2);   /* pow(2) */
    wl_kernel mean = rowk(WL_K_REDUCE, T, B->d, F);
    add(B, &mean);
    tp_ent *e = tp_new(B);
    wl_kernel mb = ewk(WL_EW_SCALAR_MUL, n, F);
    tp_k(e, &mb);                               /* mean_backward */
    ewb(B, WL_EW_SCALAR_ADD, T, F, NULL, 0);    /* + eps */
    wl_kernel rs[3] = {ewk(WL_EW_UNSPEC_SCALAR, T, F), ewk(WL_EW_SCALAR_MUL, T, F), ewk(WL_EW_MUL, T, F)};
    ewb(B, WL_EW_UNSPEC_SCALAR, T, F, rs, 3);   /* rsqrt */
    wl_kernel xr[3] = {ewk(WL_EW_MUL, n, F), ewk(WL_EW_MUL, n, F), rowk(WL_K_REDUCE, T, B->d, F)};
    xr[1].strided = 1;
    B->strided = 1;                             /* the row statistic broadcast */
    ewb(B, WL_EW_MUL, n, F, xr, 3);             /* x * rsqrt */
    B->strided = 0;
    if (half(B))
        ew(B, WL_EW_CAST_BF16, n, F);
    wl_kernel wy[3] = {ewk(WL_EW_MUL, n, B->dt), rowk(WL_K_REDUCE, B->d, T, B->dt),
                       ewk(WL_EW_MUL, n, B->dt)};
    wy[2].strided = 1;
    B->strided = 1;                             /* the weight broadcast */
    ewb(B, WL_EW_MUL, n, B->dt, wy, 3);         /* weight * x.to(dtype) */
    B->strided = 0;
    tp_param(B, (double)B->d);
    save(B, (double)n, 4.0 + 4.0 + eb(B));      /* x in fp32, the product, its cast */
    save(B, (double)T, 4.0);                    /* rsqrt */
}

/* apply_rotary_pos_emb: q cos + rotate_half(q) sin, rotate_half(x) =
 * cat(-x2, x1). Backward: cos and sin need no gradient, so a mul each;
 * neg's a neg; cat's gradient is two views, each slice of x a zeroed
 * tensor and a copy into it (slice_backward); x's three gradients are
 * added. */
static void hf5_rotary(bld *B, long long heads)
{
    long long n = B->b * heads * B->s * B->hd;
    wl_kernel mb = ewk(WL_EW_MUL, n, B->dt);
    mb.strided = 1; /* cos and sin broadcast over batch and heads */
    fanout(B, n, B->dt, 3);
    B->strided = 1;
    ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);             /* x * cos */
    wl_kernel sl[2] = {ewk(WL_EW_FILL, n, B->dt), ewk(WL_EW_COPY, n / 2, B->dt)};
    sl[1].strided = 1;
    tp_ent *e = tp_new(B);                            /* the two slices of x */
    for (int i = 0; e && i < 2; i++) {
        tp_k(e, &sl[0]);
        tp_k(e, &sl[1]);
    }
    wl_kernel nb = ewk(WL_EW_UNSPEC_SCALAR, n / 2, B->dt);
    ewb(B, WL_EW_UNSPEC_SCALAR, n / 2, B->dt, &nb, 1); /* -x2, a strided slice */
    B->strided = 2;
    ewb(B, WL_EW_COPY, n, B->dt, NULL, 0);            /* cat */
    B->strided = 1;
    ewb(B, WL_EW_MUL, n, B->dt, &mb, 1);              /* * sin */
    B->strided = 0;
    ew(B, WL_EW_ADD, n, B->dt);
    save(B, (double)n, eb(B));                        /* rotate_half(x) for nothing: x kept */
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
    ew(B, WL_EW_COPY, n, B->dt);
    ew(B, WL_EW_COPY, n, B->dt);
    B->strided = 0;
}

/* Softmax as PyTorch 2.11 runs it: the backward is the product of the
 * gradient and the output, then _softmax_backward_data's reduction
 * kernel (two kernels in every training profile). */
static void hf5_softmax(bld *B, long long rows, long long dim, wl_dtype dt)
{
    wl_kernel k = rowk(WL_K_SOFTMAX, rows, dim, dt);
    add(B, &k);
    tp_ent *e = tp_new(B);
    wl_kernel mb = ewk(WL_EW_MUL, rows * dim, dt);
    tp_k(e, &mb);
    k.bwd = 1;
    tp_k(e, &k);
}

/* A gradient that reaches a view with another layout (heads and tokens
 * transposed) is made contiguous before the next matmul: one copy. */
static void hf5_layout_grad(bld *B, long long n, int copies)
{
    tp_ent *e = tp_new(B);
    wl_kernel c = ewk(WL_EW_COPY, n, B->dt);
    c.strided = 1;
    for (int i = 0; e && i < copies; i++)
        tp_k(e, &c);
}

static void hf5_attention(bld *B)
{
    const wl_core_model *m = B->m;
    long long bh = B->b * B->h, ss = bh * B->s * B->sk;
    long long dq = B->h * B->hd, dkv = B->kvh * B->hd;
    wl_style st = m->style;
    int qkv_bias = st != WL_STYLE_LLAMA || m->qkv_bias;
    int decoder = st != WL_STYLE_BERT;
    save(B, (double)(B->T * B->d), eb(B)); /* the projections' input */
    if (st == WL_STYLE_GPT2) {
        linear(B, B->d, dq + 2 * dkv, 1); /* c_attn, split into views */
        /* backward: the split's gradient is a cat of the three (the
         * query's and the key's made contiguous first) */
        tp_ent *e = tp_new(B);
        wl_kernel cat = ewk(WL_EW_COPY, B->T * (dq + 2 * dkv), B->dt);
        cat.strided = 2;
        tp_k(e, &cat);
        hf5_layout_grad(B, B->T * dq, 2);
    } else {
        fanout(B, B->T * B->d, B->dt, 3);
        linear(B, B->d, dq, qkv_bias);
        hf5_layout_grad(B, B->T * dq, 1);
        if (st == WL_STYLE_OPT)
            ew(B, WL_EW_SCALAR_MUL, B->T * dq, B->dt); /* q * scaling */
        linear(B, B->d, dkv, qkv_bias);
        hf5_layout_grad(B, B->T * dkv, 1);
        linear(B, B->d, dkv, qkv_bias);
        hf5_layout_grad(B, B->T * dkv, 1);
    }
    if (m->positions == WL_POS_ROTARY) {
        rotary(B, B->h);
        rotary(B, B->kvh);
    }
    if (decoder)
        hf5_cache_cat(B);
    if (B->attn == WL_ATTN_FLASH) {
        /* sdpa_attention_forward: grouped queries go to SDPA (enable_gqa),
         * no copies; cuDNN's decode kernel (one query) reduces its key
         * splits in a second kernel */
        flash(B, bh);
        if (B->s == 1 && !B->train)
            ewc(B, WL_EW_COPY, bh * 2 * B->hd, WL_DT_FP32);
    } else {
        mark(B, MARK_CORE_BEGIN);
        B->in_core = B->train;
        long long kvn = B->b * B->h * B->sk * B->hd;
        B->strided = 1; /* the copies read transposed or expanded views */
        if (B->kvh < B->h) { /* repeat_kv: expand and reshape, a copy each */
            ew(B, WL_EW_COPY, kvn, B->dt);
            ew(B, WL_EW_COPY, kvn, B->dt);
        }
        ew(B, WL_EW_COPY, B->T * dq, B->dt);          /* the query made contiguous */
        if (!decoder)
            ew(B, WL_EW_COPY, kvn, B->dt);            /* BERT: key.transpose made contiguous */
        B->strided = 0;
        save(B, 2.0 * (double)(B->T * dq), eb(B));
        bgemm(B, bh, B->s, B->sk, B->hd);
        ew(B, WL_EW_SCALAR_MUL, ss, B->dt);           /* * scaling */
        if (decoder) {
            B->strided = 1;
            ew(B, WL_EW_ADD, ss, B->dt);              /* + the 4-D mask, broadcast over heads */
            B->strided = 0;
        }
        wl_dtype sdt = B->dt;
        int fp32_softmax = (st == WL_STYLE_OPT || st == WL_STYLE_LLAMA) && half(B);
        if (fp32_softmax) {
            ew(B, WL_EW_CAST_FP32, ss, B->dt);
            sdt = WL_DT_FP32;
        }
        hf5_softmax(B, bh * B->s, B->sk, sdt);
        if (fp32_softmax)
            ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
        save(B, (double)ss, wl_dtype_bytes(sdt));
        int drop = B->train && m->attention_dropout > 0;
        dropout(B, ss, m->attention_dropout);
        if (drop || fp32_softmax)
            save(B, (double)ss, eb(B));
        if (!decoder) {
            B->strided = 1;
            ew(B, WL_EW_COPY, kvn, B->dt);            /* BERT: the values made contiguous */
            B->strided = 0;
        }
        save(B, (double)(B->T * dq), eb(B));
        bgemm(B, bh, B->s, B->hd, B->sk);
        B->in_core = 0;
        mark(B, MARK_CORE_END);
        /* transpose(1, 2).contiguous(); its gradient back to the heads' layout */
        wl_kernel oc = ewk(WL_EW_COPY, B->T * dq, B->dt);
        oc.strided = 1;
        B->strided = 1;
        ewb(B, WL_EW_COPY, B->T * dq, B->dt, &oc, 1);
        B->strided = 0;
    }
    save(B, (double)(B->T * dq), eb(B)); /* the output projection's input */
    linear(B, dq, B->d, st != WL_STYLE_LLAMA);
}

static void prefix(bld *B)
{
    const wl_core_model *m = B->m;
    long long n = B->T * B->d;
    if (B->hf5) {
        hf5_prefix(B);
        B->saved_other += B->saved_layer;
        B->saved_layer = 0;
        return;
    }
    switch (m->style) {
    case WL_STYLE_GPT2:
        embed_bwd(B, m->vocab_size, !m->untied_head);
        if (m->positions == WL_POS_LEARNED) {
            embed_bwd(B, m->max_positions, 0);
            ew(B, WL_EW_ADD, n, B->dt); /* wte + wpe */
        }
        dropout(B, n, m->hidden_dropout);
        break;
    case WL_STYLE_BERT:
        embed_bwd(B, m->vocab_size, !m->untied_head);
        embed_bwd(B, m->max_positions, 0);
        embed_bwd(B, m->type_vocab_size, 0);
        ew(B, WL_EW_ADD, n, B->dt);            /* word + token type + position */
        norm(B);                               /* embedding LayerNorm */
        dropout(B, n, m->hidden_dropout);
        ewc(B, WL_EW_SCALAR_MUL, B->T, B->dt); /* (1 - mask) * min */
        break;
    case WL_STYLE_OPT:
        ewc(B, WL_EW_ADD, B->b * B->s * B->sk, WL_DT_FP32); /* causal + padding mask */
        ewc(B, WL_EW_MUL, B->b * B->sk, WL_DT_FP32);        /* positions = cumsum * mask */
        embed_bwd(B, m->vocab_size, !m->untied_head);
        if (m->positions == WL_POS_LEARNED) {
            embed_bwd(B, m->max_positions, 0);
            ew(B, WL_EW_ADD, n, B->dt);
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
        add(B, &k);
        tp_ent *e = tp_new(B);
        if (e) {
            wl_kernel wg = k;
            wg.m = m->channels * p * p;
            wg.n = B->d;
            wg.k = B->b * np;
            wl_kernel bs = rowk(WL_K_REDUCE, B->d, B->b * np, B->dt);
            tp_k(e, &wg);
            tp_k(e, &bs);
            e->param[e->np++] = (double)wg.m * (double)B->d;
            e->param[e->np++] = (double)B->d;
        }
        wl_kernel pos[2] = {rowk(WL_K_REDUCE, B->s * B->d, B->b, B->dt),
                            rowk(WL_K_REDUCE, B->d, B->b, B->dt)};
        ewb(B, WL_EW_SCALAR_ADD, n, B->dt, pos, 2);
        tp_param(B, (double)(B->s * B->d));
        tp_param(B, (double)B->d);
        dropout(B, n, m->hidden_dropout);
        break;
    }
    case WL_STYLE_RESNET:
        break;
    case WL_STYLE_LLAMA:
        /* the causal mask is built without a recorded kernel in this
         * generation of transformers (masking_utils) */
        embed_bwd(B, m->vocab_size, !m->untied_head);
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
        add(B, &k);
        long long cs = B->s * B->hd;
        ewc(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
        ewc(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
    }
    B->saved_other += B->saved_layer;
    B->saved_layer = 0;
}

static void suffix(bld *B)
{
    const wl_core_model *m = B->m;
    if (m->final_norm && m->pre_norm)
        norm(B);
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
        add(B, &k);
        ew(B, WL_EW_TANH, B->b * pd, B->dt);
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
        if (m->channels < 1) { wl_error_set(err, src, 0, "channels", "must be >= 1"); return WL_EINVAL; }
    }
    if (m->style == WL_STYLE_VIT && (m->patch_size < 1 || m->image_size % m->patch_size)) {
        wl_error_set(err, src, 0, "patch_size", "must be >= 1 and divide image_size (%d)", m->image_size);
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
            wl_error_set(err, src, 0, "dense_layers", "must be 0 to layers - 1 (%d)", m->layers - 1);
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
    B->master = shape->mode == WL_MODE_TRAIN && !shape->master_none && half(B);
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
        else if ((unsigned)shape->optimizer > WL_OPTIM_SGD || (unsigned)shape->recompute > WL_RECOMPUTE_FULL)
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
    if (causal && half(B)) {
        ew(B, WL_EW_CAST_FP32, n, B->dt);
        ldt = WL_DT_FP32;
    }
    if (causal) {
        ewc(B, WL_EW_COPY, 2 * rows, WL_DT_FP32); /* pad(labels, (0, 1), -100) */
        ewc(B, WL_EW_COPY, 2 * rows, WL_DT_FP32); /* labels[..., 1:].contiguous() */
    }
    rowop(B, WL_K_SOFTMAX, rows, classes, ldt); /* log_softmax */
    save(B, (double)n, wl_dtype_bytes(ldt));
    wl_kernel nll = rowk(WL_K_REDUCE, 1, rows, ldt);
    wl_kernel nb[2] = {ewk(WL_EW_FILL, n, ldt), ewk(WL_EW_COPY, rows, ldt)};
    add(B, &nll);
    tp_ent *e = tp_new(B);
    for (int i = 0; e && i < 2; i++)
        tp_k(e, &nb[i]);
    wl_kernel one = ewk(WL_EW_SCALAR_MUL, 1, WL_DT_FP32);
    if (B->dt == WL_DT_FP16) /* GradScaler.scale(loss) */
        ewb(B, WL_EW_SCALAR_MUL, 1, WL_DT_FP32, &one, 1);
    e = tp_new(B);
    wl_kernel seed = ewk(WL_EW_FILL, 1, WL_DT_FP32);
    tp_k(e, &seed);
}

/* The LM head (or classifier) and the loss a training step ends with:
 * GPT-2, OPT and Llama-style models a causal LM over every token
 * (*ForCausalLM); BERT the masked-LM head (BertForMaskedLM: dense, GELU,
 * LayerNorm, then the decoder tied to the word embeddings, with a bias);
 * ViT a linear classifier on the [CLS] token (ViTForImageClassification),
 * whose gradient reaches the sequence through select_backward (a zeroed
 * tensor and a copy into it). No pooler: these heads do not use one. */
static void head(bld *B)
{
    const wl_core_model *m = B->m;
    long long V = m->vocab_size;
    if (m->final_norm && m->pre_norm)
        norm(B);
    switch (m->style) {
    case WL_STYLE_VIT: {
        tp_ent *e = tp_new(B);
        wl_kernel sel[2] = {ewk(WL_EW_FILL, B->T * B->d, B->dt), ewk(WL_EW_COPY, B->b * B->d, B->dt)};
        for (int i = 0; e && i < 2; i++)
            tp_k(e, &sel[i]);
        save(B, (double)(B->b * B->d), eb(B));
        long long T = B->T;
        B->T = B->b; /* one row per image */
        linear_x(B, B->d, m->classes, 1, 0);
        B->T = T;
        loss(B, B->b, m->classes, 0);
        break;
    }
    case WL_STYLE_BERT:
        save(B, (double)(B->T * B->d), eb(B));
        linear_x(B, B->d, B->d, 1, 0); /* transform.dense */
        ew(B, WL_EW_GELU, B->T * B->d, B->dt);
        save(B, (double)(B->T * B->d), eb(B));
        norm(B);
        save(B, (double)(B->T * B->d), eb(B));
        linear_x(B, B->d, V, 1, 0);    /* decoder, tied, with its own bias */
        if (B->train && !m->untied_head) {
            tp_ent *e = &B->tape[B->ntape - 1];
            e->param[0] = e->param[1];
            e->np = 1;
        }
        loss(B, B->T, V, 0);
        break;
    default:
        save(B, (double)(B->T * B->d), eb(B));
        linear_x(B, B->d, V, 0, 0);    /* lm_head: nn.Linear, no bias */
        if (B->train && !m->untied_head)
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
        ewc(B, WL_EW_ADD, n, WL_DT_FP32);
    else if (B->micro > 0)
        ewc(B, WL_EW_ADD, n, B->dt);
}

/* Kernels from forward index a to b again (a recompute). */
static void replay(bld *B, size_t a, size_t b)
{
    for (size_t i = a; i < b && !B->rc; i++) {
        wl_kernel k = B->wl->k[i];
        add(B, &k);
    }
}

/* The backward pass: the tape in reverse. A full recompute runs a layer's
 * forward again before its backward; a selective one the attention core. */
static void backward(bld *B)
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
            add(B, &e->k[j]);
        for (int j = 0; j < e->np; j++)
            param_grad(B, e->param[j]);
    }
    B->ntape = 0;
}

/* ---- parameters, in model.parameters() order (HF registration order) ---- */

static void pl(bld *B, double numel)
{
    if (B->rc || numel <= 0)
        return;
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
    int gpt2 = m->style == WL_STYLE_GPT2, mid_norm = m->style == WL_STYLE_OPT || m->style == WL_STYLE_BERT;
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
}

/* The trained model's parameters: the base model, then the head (a tied
 * head adds none). */
static void pl_model(bld *B, int layer_only)
{
    const wl_core_model *m = B->m;
    double d = (double)B->d;
    if (layer_only) {
        pl_layer(B);
        return;
    }
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
    for (int l = 0; l < m->layers; l++)
        pl_layer(B);
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
                ewc(B, op, elems, dt);
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
        host_sync(B);
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
        ewc(B, WL_EW_SCALAR_MUL, 1, WL_DT_FP32); /* _amp_update_scale_ */
    if (B->master) {
        double n = 0;
        for (size_t i = 0; i < B->np; i++)
            n += B->plist[i];
        ewc(B, WL_EW_FILL, (long long)n, WL_DT_FP32);
    }
}

/* grad_accum micro-batches of forward and backward, then the optimizer. */
static void train_step(bld *B, int layer_only)
{
    int n = B->sh->grad_accum > 0 ? B->sh->grad_accum : 1;
    pl_model(B, layer_only);
    for (int mb = 0; mb < n && !B->rc; mb++) {
        B->micro = mb;
        B->phase = WL_PHASE_FORWARD;
        B->train = 1;
        B->saved_other = 0;
        if (layer_only) {
            layer(B);
        } else {
            prefix(B);
            for (int l = 0; l < B->m->layers; l++)
                layer(B);
            head(B);
        }
        if (B->saved_other + B->saved_peak > B->saved_peak_step)
            B->saved_peak_step = B->saved_other + B->saved_peak;
        backward(B);
    }
    optimizer(B);
}

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
        ewc(B, WL_EW_ADD, B->T * B->d, B->dt);
    wl_kernel k = rowk(rms ? WL_K_RMSNORM : WL_K_LAYERNORM, B->T, B->d, B->dt);
    k.residual = residual && rms;
    add(B, &k);
}

static void serve_attention(bld *B, long long bh)
{
    if (B->attn == WL_ATTN_FLASH) {
        flash(B, bh);
    } else {
        /* an unfused attention backend: scores, a softmax with the scale
         * and mask folded in, and the weighted sum */
        bgemm(B, bh, B->s, B->sk, B->hd);
        rowop(B, WL_K_SOFTMAX, bh * B->s, B->sk, B->dt);
        bgemm(B, bh, B->s, B->hd, B->sk);
    }
}

static void serve_layer(bld *B, int first)
{
    const wl_core_model *m = B->m;
    long long dq = B->h * B->hd, dkv = B->kvh * B->hd, T = B->T;
    int llama = m->style == WL_STYLE_LLAMA, bias = !llama;
    if (m->pre_norm)
        serve_norm(B, !first);
    linear_x(B, B->d, dq + 2 * dkv, bias || m->qkv_bias, 0);
    if (m->positions == WL_POS_ROTARY)
        ewc(B, WL_EW_UNSPEC_SCALAR, T * (B->h + B->kvh) * B->hd, B->dt);
    cache_update(B);
    serve_attention(B, B->b * B->h);
    if (B->chunk > 0) {
        /* the arriving prompts' chunk attends causally to its prompt: a
         * chunk spread evenly over a prompt sees half of it on average,
         * which a causal kernel of chunk queries over the prompt's keys
         * counts */
        long long s = B->s, sk = B->sk;
        B->s = B->chunk;
        B->sk = B->prompt;
        serve_attention(B, B->h);
        B->s = s;
        B->sk = sk;
    }
    linear_x(B, dq, B->d, bias, 0);
    serve_norm(B, 1);
    if (m->activation == WL_ACT_SWIGLU) {
        linear_x(B, B->d, 2 * B->ff, bias, 0);
        ewc(B, WL_EW_SILU_MUL, T * B->ff, B->dt);
    } else {
        linear_x(B, B->d, B->ff, bias, 0);
        wl_ew_op act = m->activation == WL_ACT_RELU ? WL_EW_RELU : WL_EW_GELU;
        ewc(B, act, T * B->ff, B->dt);
    }
    linear_x(B, B->ff, B->d, bias, 0);
    if (!llama) /* the MLP's residual add (RMSNorm models fuse it into the next norm) */
        ewc(B, WL_EW_ADD, T * B->d, B->dt);
}

/* One forward of a generation over B->s new positions with B->sk keys,
 * its kernels from `graph` on replayed from a CUDA graph. */
static void gen_forward(bld *B, int layer_only, int graph)
{
    int serve = B->sh->launch == WL_LAUNCH_GRAPHS;
    B->T = B->b * B->s + B->chunk;
    B->graphing = graph;
    B->graph_n = 0;
    if (layer_only && serve) {
        serve_layer(B, 0);
    } else if (layer_only) {
        layer(B);
    } else if (serve) {
        /* token embeddings (a gather, not recorded) plus learned positions */
        if (B->m->positions == WL_POS_LEARNED)
            ewc(B, WL_EW_ADD, B->T * B->d, B->dt);
        for (int l = 0; l < B->m->layers && !B->rc; l++)
            serve_layer(B, l == 0);
        if (B->m->final_norm && B->m->pre_norm)
            serve_norm(B, 1);
    } else {
        prefix(B);
        for (int l = 0; l < B->m->layers && !B->rc; l++)
            layer(B);
        if (B->m->final_norm && B->m->pre_norm)
            norm(B);
    }
    B->graphing = 0; /* the LM head runs eagerly */
    if (layer_only)
        return;
    long long T = B->T;
    B->T = B->b; /* the last position's hidden state */
    linear_x(B, B->d, B->m->vocab_size, 0, 0);
    B->T = T;
}

/* Greedy sampling after each forward. HF generate: the last logits in
 * fp32 (.float()), the argmax, the token appended to the ids (a cat of the
 * b x length int64 ids), the stopping criteria (a few kernels on b flags)
 * and "all finished" read back to the host: a sync per token. A serving
 * engine: the logits in fp32, the argmax, the tokens read back. */
/* HF generate (transformers 5.x) after each forward, as the H200 decode
 * profile records it: the cache position and attention mask grown (an
 * arange, adds, two cats), the logits in fp32, two logits processors
 * (each an arange, fills, a comparison over the vocabulary, an any and a
 * where over b x V), the argmax, then the unfinished-sequence bookkeeping
 * and the stopping criteria over b flags (17 small kernels) and their
 * verdict read back (a sync). */
static void hf5_sample(bld *B, long long len)
{
    long long V = B->m->vocab_size, b = B->b;
    const wl_dtype L = WL_DT_FP32, I = WL_DT_INT8;
    ewc(B, WL_EW_FILL, 1, L);
    ewc(B, WL_EW_ADD, b, L);
    ewc(B, WL_EW_SCALAR_ADD, b, L);
    ewc(B, WL_EW_COPY, b * len, L);
    ewc(B, WL_EW_FILL, b, L);
    ewc(B, WL_EW_COPY, b * len, L);
    ewc(B, WL_EW_CAST_FP32, b * V, B->dt);
    for (int p = 0; p < 2; p++) {
        ewc(B, WL_EW_FILL, V, L);
        ewc(B, WL_EW_FILL, V, I);
        ewc(B, WL_EW_UNSPEC_TENSOR, V, L);
        wl_kernel any = rowk(WL_K_REDUCE, 1, V, I);
        add(B, &any);
        ewc(B, WL_EW_FILL, 1, L);
        ewc(B, WL_EW_TERNARY, b * V, L);
    }
    wl_kernel am = rowk(WL_K_REDUCE, b, V, L); /* argmax */
    add(B, &am);
    static const wl_ew_op crit[] = {WL_EW_MUL, WL_EW_SCALAR_ADD, WL_EW_MUL, WL_EW_ADD,
                                    WL_EW_COPY, WL_EW_FILL, WL_EW_FILL, WL_EW_UNSPEC_TENSOR,
                                    WL_EW_FILL, WL_EW_UNSPEC_TENSOR};
    for (size_t i = 0; i < sizeof crit / sizeof *crit; i++)
        ewc(B, crit[i], crit[i] == WL_EW_COPY ? b * len : b, L);
    wl_kernel r = rowk(WL_K_REDUCE, 1, b, I);
    add(B, &r); /* any */
    add(B, &r); /* any */
    ewc(B, WL_EW_UNSPEC_TENSOR, b, I);
    ewc(B, WL_EW_UNSPEC_SCALAR, b, I);
    ewc(B, WL_EW_UNSPEC_TENSOR, b, L);
    add(B, &r); /* max */
    ewc(B, WL_EW_UNSPEC_SCALAR, 1, L);
    host_sync(B);
}

static void sample(bld *B, long long len)
{
    long long V = B->m->vocab_size;
    int serve = B->sh->launch == WL_LAUNCH_GRAPHS;
    if (B->hf5) {
        hf5_sample(B, len);
        return;
    }
    ewc(B, WL_EW_CAST_FP32, B->b * V, B->dt);
    wl_kernel am = rowk(WL_K_REDUCE, B->b, V, WL_DT_FP32); /* argmax */
    add(B, &am);
    if (!serve) {
        ewc(B, WL_EW_COPY, 2 * B->b * len, WL_DT_FP32);  /* cat(input_ids, next) */
        ewc(B, WL_EW_FILL, B->b, WL_DT_FP32);            /* max-length criterion */
        ewc(B, WL_EW_UNSPEC_TENSOR, B->b, WL_DT_FP32);   /* isin(last, eos) */
        ewc(B, WL_EW_UNSPEC_TENSOR, B->b, WL_DT_FP32);   /* unfinished & ~done */
        wl_kernel mx = rowk(WL_K_REDUCE, 1, B->b, WL_DT_FP32); /* .max() == 0 */
        add(B, &mx);
    }
    host_sync(B);
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
    add(B, &k);
}

/* A generation: the prefill over the prompt (time to first token), then
 * gen - 1 decode steps, each over one new position per sequence with the
 * cache one longer; eagerly (HF generate with a static cache) or as a
 * serving engine replays them from CUDA graphs. */
static void generate(bld *B, int layer_only)
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
    double pending = 0;
    B->prompt = prompt;
    for (long long i = 1; i < gen && !B->rc; i++) {
        B->sk = prompt + i;
        pending += per_step;
        B->chunk = (long long)pending;
        pending -= (double)B->chunk;
        gen_forward(B, layer_only, serve);
        if (!layer_only) {
            sample(B, prompt + i + 1);
            if (serve)
                engine_step(B);
        }
    }
    B->chunk = 0;
    B->s = prompt;
    B->sk = prompt;
    B->T = B->b * prompt;
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
    add(B, &k);
    ew(B, WL_EW_UNSPEC_SCALAR, B->b * cout * oh * oh, B->dt); /* BatchNorm */
    return oh;
}

static void resnet(bld *B)
{
    const wl_core_model *m = B->m;
    long long b = B->b, w0 = m->base_width;
    /* stem: 7x7/2 conv, BN, ReLU, 3x3/2 max-pool (a 4:1 reduction per output) */
    long long hw = conv_bn(B, m->channels, w0, m->image_size, 7, 2);
    ew(B, WL_EW_RELU, b * w0 * hw * hw, B->dt);
    hw = (hw + 2 - 3) / 2 + 1;
    rowop(B, WL_K_REDUCE, b * w0 * hw * hw, 4, B->dt);
    long long cin = w0;
    for (int st = 0; st < m->stages; st++) {
        long long w = w0 << st, cout = 4 * w;
        for (int blk = 0; blk < m->blocks[st]; blk++) {
            int stride = blk == 0 && st > 0 ? 2 : 1;
            long long h1 = conv_bn(B, cin, w, hw, 1, 1);
            ew(B, WL_EW_RELU, b * w * h1 * h1, B->dt);
            long long h2 = conv_bn(B, w, w, h1, 3, stride); /* v1.5: stride on the 3x3 */
            ew(B, WL_EW_RELU, b * w * h2 * h2, B->dt);
            conv_bn(B, w, cout, h2, 1, 1);
            if (blk == 0)
                conv_bn(B, cin, cout, hw, 1, stride); /* downsample */
            ew(B, WL_EW_ADD, b * cout * h2 * h2, B->dt);
            ew(B, WL_EW_RELU, b * cout * h2 * h2, B->dt);
            cin = cout;
            hw = h2;
        }
    }
    rowop(B, WL_K_REDUCE, b * cin, hw * hw, B->dt); /* adaptive average pool */
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
    add(B, &k);
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
        train_step(B, layer_only);
    } else if (shape->mode == WL_MODE_DECODE) {
        generate(B, layer_only);
    } else if (model->style == WL_STYLE_RESNET) {
        resnet(B);
    } else if (layer_only) {
        layer(B);
    } else {
        prefix(B);
        for (int l = 0; l < model->layers; l++)
            layer(B);
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
            layer(&B);
        } else {
            prefix(&B);
            for (int l = 0; l < model->layers; l++)
                layer(&B);
            head(&B);
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
    pl_model(&B, layer_only);
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
