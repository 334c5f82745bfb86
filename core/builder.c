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
    wl_dtype conv_dt; /* cuDNN convolutions: TF32 tensor cores for fp32 (PyTorch's
                         default allow_tf32 for cuDNN), else the dtype */
    int rc;
    wl_error *err;
} bld;

/* Every kernel is checked as a trace's would be: a shape that passes the
 * model-level limits can still make one tensor absurd (a vision input at a
 * huge batch). */
static void add(bld *B, const wl_kernel *k)
{
    if (B->rc)
        return;
    if (wl_kernel_check(k, B->m->id, 0, B->err))
        B->rc = WL_EINVAL;
    else if (wl_core_workload_add(B->wl, k))
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

/* HF LlamaRMSNorm / Qwen2RMSNorm in eager mode is not one kernel:
 *   x = x.to(fp32); v = x.pow(2).mean(-1); x = x * rsqrt(v + eps);
 *   return weight * x.to(dtype)
 * The qwen2 traces record five of these kernels: pow, + eps and rsqrt (on
 * the T row statistics), the fp32 product, and the weight product in the
 * activation dtype. The .to() casts and the mean are not recorded, and the
 * time and power coefficients were fitted on trace sequences that leave
 * them out, so the builder leaves them out too. */
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
    ew(B, WL_EW_UNSPEC_SCALAR, n, WL_DT_FP32); /* pow(2) */
    ew(B, WL_EW_SCALAR_ADD, B->T, WL_DT_FP32); /* + eps */
    ew(B, WL_EW_UNSPEC_SCALAR, B->T, WL_DT_FP32); /* rsqrt */
    ew(B, WL_EW_MUL, n, WL_DT_FP32);           /* x * rsqrt */
    ew(B, WL_EW_SCALAR_MUL, n, B->dt);         /* weight * x.to(dtype) */
}

/* apply_rotary_pos_emb: x*cos + rotate_half(x)*sin. rotate_half's neg and
 * cat are views and a small copy the traces do not record. */
static void rotary(bld *B, long long heads)
{
    long long n = B->b * heads * B->s * B->hd;
    ew(B, WL_EW_MUL, n, B->dt);
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
        k.causal = st != WL_STYLE_BERT && st != WL_STYLE_VIT;
        add(B, &k);
    } else {
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
        case WL_STYLE_VIT:
        case WL_STYLE_RESNET:
            /* / sqrt(d_head), then softmax(dtype=fp32) and the casts as the
             * vit-large traces record them */
            ew(B, WL_EW_SCALAR_MUL, ss, B->dt);
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->s, half(B) ? WL_DT_FP32 : B->dt);
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
            }
            rowop(B, WL_K_SOFTMAX, bh * B->s, B->s, half(B) ? WL_DT_FP32 : B->dt);
            break;
        }
        bgemm(B, bh, B->s, B->hd, B->s);
    }
    linear(B, dq, B->d);
}

static void mlp(bld *B)
{
    long long n = B->T * B->ff;
    switch (B->m->activation) {
    case WL_ACT_SWIGLU:
        /* down(act(gate(x)) * up(x)): Python evaluates act(gate(x)) first */
        linear(B, B->d, B->ff); /* gate */
        ew(B, WL_EW_SILU, n, B->dt);
        linear(B, B->d, B->ff); /* up */
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
    case WL_STYLE_VIT: {
        /* patch embedding: a patch x patch, stride-patch conv as an implicit
         * GEMM (M = patches, N = d, K = C p^2), then + position embeddings */
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
        ew(B, WL_EW_SCALAR_ADD, n, B->dt);
        break;
    }
    case WL_STYLE_RESNET:
        break;
    case WL_STYLE_LLAMA:
        /* the causal mask is built without a recorded kernel in this
         * generation of transformers (masking_utils) */
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
        ew(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
        ew(B, WL_EW_SCALAR_MUL, cs, WL_DT_FP32);
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
    return WL_OK;
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
    if (model->style == WL_STYLE_VIT) {
        long long g = model->image_size / model->patch_size;
        B->s = g * g + 1; /* patches + [CLS] */
        B->T = B->b * B->s;
    } else if (model->style == WL_STYLE_RESNET) {
        B->s = 1;
        B->T = B->b;
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
    if (model->style == WL_STYLE_RESNET) {
        if (layer_only) {
            wl_core_workload_free(B.wl);
            wl_error_set(err, model->id, 0, "scope", "a ResNet has no transformer layer");
            return WL_EINVAL;
        }
        resnet(&B);
    } else if (layer_only) {
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
