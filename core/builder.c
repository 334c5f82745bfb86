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

#include <stdio.h>
#include <string.h>

typedef struct {
    wl_core_workload *wl;
    const wl_core_model *m;
    wl_dtype dt;      /* activations */
    wl_dtype gemm_dt; /* GEMM inputs: tf32 keeps fp32 storage on tensor cores */
    int tc;
    long long b, s, T, d, h, kvh, hd, ff;
    wl_attention attn;
    int rc;
} bld;

static void add(bld *B, const wl_kernel *k)
{
    if (!B->rc && wl_core_workload_add(B->wl, k))
        B->rc = WL_ENOMEM;
}

/* Linear layer y = x W^T + b with bias fused (addmm). GPT-2's Conv1D puts
 * tokens in M; nn.Linear's cuBLAS call puts output features in M. */
static void linear(bld *B, long long in, long long out)
{
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = B->gemm_dt;
    k.acc_dtype = B->tc ? B->gemm_dt : WL_DT_FP32;
    k.tensor_core = B->tc;
    k.batch = 1;
    k.k = in;
    if (B->m->style == WL_STYLE_GPT2) {
        k.m = B->T;
        k.n = out;
    } else {
        k.m = out;
        k.n = B->T;
    }
    add(B, &k);
}

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
}

static void ew(bld *B, wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel k = {0};
    k.kind = WL_K_ELEMENTWISE;
    k.op = op;
    k.n = n;
    k.batch = 1;
    k.in_dtype = dt;
    k.acc_dtype = WL_DT_FP32;
    add(B, &k);
}

static void rowop(bld *B, wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt)
{
    wl_kernel k = {0};
    k.kind = kind;
    k.batch = rows;
    k.n = dim;
    k.in_dtype = dt;
    k.acc_dtype = WL_DT_FP32;
    add(B, &k);
}

static int half(const bld *B) { return B->dt != WL_DT_FP32 && B->dt != WL_DT_TF32; }

/* HF LlamaRMSNorm in eager mode is not one kernel: upcast, pow, mean, +eps,
 * rsqrt, scale, downcast, weight. */
static void norm(bld *B)
{
    if (B->m->norm == WL_NORM_LAYERNORM) {
        rowop(B, WL_K_LAYERNORM, B->T, B->d, B->dt);
        return;
    }
    if (B->m->style != WL_STYLE_LLAMA) {
        rowop(B, WL_K_RMSNORM, B->T, B->d, B->dt);
        return;
    }
    long long n = B->T * B->d;
    if (half(B))
        ew(B, WL_EW_CAST_FP32, n, B->dt);
    ew(B, WL_EW_UNSPEC_SCALAR, n, WL_DT_FP32);        /* pow(2) */
    rowop(B, WL_K_REDUCE, B->T, B->d, WL_DT_FP32);    /* mean(-1) */
    ew(B, WL_EW_SCALAR_ADD, B->T, WL_DT_FP32);        /* + eps */
    ew(B, WL_EW_UNSPEC_SCALAR, B->T, WL_DT_FP32);     /* rsqrt */
    ew(B, WL_EW_MUL, n, WL_DT_FP32);                  /* x * rsqrt */
    if (half(B))
        ew(B, WL_EW_CAST_BF16, n, WL_DT_FP32);
    ew(B, WL_EW_MUL, n, B->dt);                       /* weight * x */
}

/* rotate_half: q*cos + cat(-x2, x1)*sin */
static void rotary(bld *B, long long heads)
{
    long long n = B->b * heads * B->s * B->hd;
    ew(B, WL_EW_MUL, n, B->dt);
    ew(B, WL_EW_UNSPEC_SCALAR, n / 2, B->dt); /* neg */
    ew(B, WL_EW_COPY, n, B->dt);              /* cat */
    ew(B, WL_EW_MUL, n, B->dt);
    ew(B, WL_EW_ADD, n, B->dt);
}

static void attention(bld *B)
{
    const wl_core_model *m = B->m;
    long long bh = B->b * B->h, ss = bh * B->s * B->s;
    long long dq = B->h * B->hd, dkv = B->kvh * B->hd;
    wl_style st = m->style;

    if (st == WL_STYLE_GPT2) {
        linear(B, B->d, dq + 2 * dkv); /* fused c_attn */
    } else {
        linear(B, B->d, dq);
        if (st == WL_STYLE_OPT)
            ew(B, WL_EW_SCALAR_MUL, B->T * dq, B->dt); /* q * scaling */
        linear(B, B->d, dkv);
        linear(B, B->d, dkv);
    }
    if (m->positions == WL_POS_ROTARY) {
        rotary(B, B->h);
        rotary(B, B->kvh);
    }
    if (B->attn == WL_ATTN_FLASH) {
        wl_kernel k = {0};
        k.kind = WL_K_ATTN_FLASH;
        k.in_dtype = B->gemm_dt;
        k.acc_dtype = WL_DT_FP32;
        k.tensor_core = B->tc;
        k.batch = bh;
        k.m = B->s;
        k.n = B->s;
        k.k = B->hd;
        k.causal = st != WL_STYLE_BERT;
        add(B, &k);
    } else {
        if (B->kvh < B->h && st == WL_STYLE_LLAMA) {
            ew(B, WL_EW_COPY, B->T * dq, B->dt); /* repeat_kv(k) */
            ew(B, WL_EW_COPY, B->T * dq, B->dt); /* repeat_kv(v) */
        }
        bgemm(B, bh, B->s, B->s, B->hd);
        switch (st) {
        case WL_STYLE_GPT2:
            ew(B, WL_EW_UNSPEC_TENSOR, ss, B->dt); /* where(causal, w, min) */
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->s, B->dt);
            break;
        case WL_STYLE_BERT:
            ew(B, WL_EW_UNSPEC_SCALAR, ss, B->dt); /* / sqrt(d_head) */
            ew(B, WL_EW_ADD, ss, B->dt);           /* + extended mask */
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->s, B->dt);
            break;
        case WL_STYLE_OPT:
            ew(B, WL_EW_ADD, ss, B->dt); /* + causal mask */
            if (half(B)) {               /* softmax(dtype=fp32).to(dtype) */
                ew(B, WL_EW_CAST_FP32, ss, B->dt);
                ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
            }
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->s, half(B) ? WL_DT_FP32 : B->dt);
            break;
        case WL_STYLE_LLAMA:
            ew(B, WL_EW_SCALAR_MUL, ss, B->dt); /* * scaling */
            ew(B, WL_EW_ADD, ss, B->dt);        /* + causal mask */
            if (half(B))
                ew(B, WL_EW_CAST_FP32, ss, B->dt);
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->s, half(B) ? WL_DT_FP32 : B->dt);
            if (half(B))
                ew(B, WL_EW_CAST_BF16, ss, WL_DT_FP32);
            break;
        }
        bgemm(B, bh, B->s, B->hd, B->s);
    }
    if (st == WL_STYLE_LLAMA)
        ew(B, WL_EW_COPY, B->T * dq, B->dt); /* transpose(1,2).contiguous() */
    linear(B, dq, B->d);
}

static void mlp(bld *B)
{
    long long n = B->T * B->ff;
    switch (B->m->activation) {
    case WL_ACT_SWIGLU:
        linear(B, B->d, B->ff); /* gate */
        linear(B, B->d, B->ff); /* up */
        ew(B, WL_EW_SILU, n, B->dt);
        ew(B, WL_EW_MUL, n, B->dt);
        break;
    case WL_ACT_GELU_TANH:
        linear(B, B->d, B->ff);
        if (B->m->style == WL_STYLE_GPT2) {
            /* NewGELU: 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))) as 8 kernels */
            ew(B, WL_EW_SCALAR_MUL, n, B->dt);
            ew(B, WL_EW_UNSPEC_SCALAR, n, B->dt);
            ew(B, WL_EW_SCALAR_MUL, n, B->dt);
            ew(B, WL_EW_ADD, n, B->dt);
            ew(B, WL_EW_SCALAR_MUL, n, B->dt);
            ew(B, WL_EW_TANH, n, B->dt);
            ew(B, WL_EW_SCALAR_MUL, n, B->dt);
            ew(B, WL_EW_MUL, n, B->dt);
        } else {
            ew(B, WL_EW_GELU, n, B->dt);
        }
        break;
    case WL_ACT_GELU:
        linear(B, B->d, B->ff);
        ew(B, WL_EW_GELU, n, B->dt);
        break;
    case WL_ACT_RELU:
        linear(B, B->d, B->ff);
        ew(B, WL_EW_RELU, n, B->dt);
        break;
    }
    linear(B, B->ff, B->d);
}

static void layer(bld *B)
{
    long long n = B->T * B->d;
    if (B->m->pre_norm) {
        norm(B);
        attention(B);
        ew(B, WL_EW_ADD, n, B->dt);
        norm(B);
        mlp(B);
        ew(B, WL_EW_ADD, n, B->dt);
    } else {
        attention(B);
        ew(B, WL_EW_ADD, n, B->dt);
        norm(B);
        mlp(B);
        ew(B, WL_EW_ADD, n, B->dt);
        norm(B);
    }
}

static void prefix(bld *B)
{
    const wl_core_model *m = B->m;
    long long n = B->T * B->d;
    switch (m->style) {
    case WL_STYLE_GPT2:
        if (m->positions == WL_POS_LEARNED)
            ew(B, WL_EW_ADD, n, B->dt); /* wte + wpe */
        break;
    case WL_STYLE_BERT:
        ew(B, WL_EW_ADD, n, B->dt);            /* word + token type + position */
        norm(B);                               /* embedding LayerNorm */
        ew(B, WL_EW_SCALAR_MUL, B->T, B->dt);  /* (1 - mask) * min */
        break;
    case WL_STYLE_OPT:
        ew(B, WL_EW_ADD, B->b * B->s * B->s, WL_DT_FP32); /* causal + padding mask */
        ew(B, WL_EW_MUL, B->T, WL_DT_FP32);              /* positions = cumsum * mask */
        if (m->positions == WL_POS_LEARNED)
            ew(B, WL_EW_ADD, n, B->dt);
        break;
    case WL_STYLE_LLAMA:
        ew(B, WL_EW_UNSPEC_SCALAR, B->s * B->s, WL_DT_FP32);      /* triu of min */
        ew(B, WL_EW_MUL, B->s * B->s, WL_DT_FP32);                /* *= arange > */
        ew(B, WL_EW_ADD, B->b * B->s * B->s, WL_DT_FP32);         /* + padding mask */
        break;
    }
    if (m->positions == WL_POS_ROTARY) {
        /* rotary cos/sin: inv_freq @ positions in fp32, cat, cos, sin, scaling */
        wl_kernel k = {0};
        k.kind = WL_K_GEMM;
        k.in_dtype = WL_DT_FP32;
        k.acc_dtype = WL_DT_FP32;
        k.batch = B->b;
        k.m = B->hd / 2;
        k.n = B->s;
        k.k = 1;
        add(B, &k);
        long long cs = B->b * B->s * B->hd;
        ew(B, WL_EW_COPY, cs, WL_DT_FP32);
        ew(B, WL_EW_UNSPEC_SCALAR, cs, WL_DT_FP32); /* cos */
        ew(B, WL_EW_UNSPEC_SCALAR, cs, WL_DT_FP32); /* sin */
        ew(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
        ew(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
        if (half(B)) {
            ew(B, WL_EW_CAST_BF16, cs, WL_DT_FP32);
            ew(B, WL_EW_CAST_BF16, cs, WL_DT_FP32);
        }
    }
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
        k.batch = 1;
        k.m = B->d;
        k.n = B->b;
        k.k = B->d;
        add(B, &k);
        ew(B, WL_EW_TANH, B->b * B->d, B->dt);
    }
}

int wl_core_model_check(const wl_core_model *m, wl_error *err)
{
    const char *src = m->id[0] ? m->id : "model";
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
    return WL_OK;
}

static int setup(bld *B, const wl_core_model *model, const wl_core_shape *shape, wl_error *err)
{
    memset(B, 0, sizeof *B);
    if (wl_core_model_check(model, err))
        return WL_EINVAL;
    if (shape->batch < 1 || shape->seq < 1 || shape->batch > 1000000 || shape->seq > 10000000) {
        wl_error_set(err, model->id, 0, shape->batch < 1 ? "batch" : "seq",
                     "batch and seq must be positive");
        return WL_EINVAL;
    }
    /* the largest tensor (attention scores or the MLP activation) must stay
     * far below 2^63 elements, and below what any GPU could hold */
    double scores = (double)shape->batch * model->heads * (double)shape->seq * (double)shape->seq;
    double mlp = (double)shape->batch * (double)shape->seq * (double)model->d_ff;
    if (scores > 1e15 || mlp > 1e15) {
        wl_error_set(err, model->id, 0, "seq", "batch x seq is too large for this model "
                     "(a single tensor would exceed 1e15 elements)");
        return WL_EINVAL;
    }
    B->m = model;
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
    B->hd = B->d / B->h;
    B->ff = model->d_ff;
    B->attn = shape->attention;
    return WL_OK;
}

static void name_of(char *buf, size_t n, const wl_core_model *m, const wl_core_shape *s,
                    const char *what)
{
    snprintf(buf, n, "%s_%s_b%lld_s%lld_%s%s", m->id, wl_dtype_name(s->dtype), s->batch, s->seq,
             s->attention == WL_ATTN_FLASH ? "flash_" : "", what);
}

/* The whole forward pass, or one layer only. */
static int build(const wl_core_model *model, const wl_core_shape *shape, int layer_only,
                 wl_core_workload **out, wl_error *err)
{
    *out = NULL;
    bld B;
    if (setup(&B, model, shape, err))
        return WL_EINVAL;
    char name[128];
    name_of(name, sizeof name, model, shape, layer_only ? "layer" : "prefill");
    B.wl = wl_core_workload_create(name);
    if (!B.wl)
        return WL_ENOMEM;
    if (layer_only) {
        layer(&B);
    } else {
        prefix(&B);
        for (int l = 0; l < model->layers; l++)
            layer(&B);
        suffix(&B);
    }
    if (B.rc) {
        wl_core_workload_free(B.wl);
        return B.rc;
    }
    *out = B.wl;
    return WL_OK;
}

int wl_core_build(const wl_core_model *model, const wl_core_shape *shape, wl_core_workload **out,
                  wl_error *err)
{
    return build(model, shape, 0, out, err);
}

int wl_core_build_layer(const wl_core_model *model, const wl_core_shape *shape,
                        wl_core_workload **out, wl_error *err)
{
    return build(model, shape, 1, out, err);
}
