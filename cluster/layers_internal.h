/* Private to cluster/layers.c: the state of one tensor-parallel shard's
 * build and the kernel emitters its layers are made of (one launch, an
 * elementwise or row op, the GEMMs by precision, fp8's casts, LoRA's
 * adapters beside a fused projection). */
#ifndef WATTLAS_CLUSTER_LAYERS_INTERNAL_H
#define WATTLAS_CLUSTER_LAYERS_INTERNAL_H

#include "cluster_internal.h"

typedef struct {
    const cl_build *b;
    wl_core_workload *wl;
    wl_dtype dt, gdt; /* activations; the linear layers' GEMM inputs */
    int tc;
    long long B, s, kv, T, Ts, d, hl, kvl, hd, ffl, vl;
    long long hdq, hdv;          /* query/key and value head widths */
    int mla;                     /* latent attention */
    long long qr, kvr, rope;     /* its ranks and rotary width */
    int moe;                     /* building a MoE layer */
    int cp;                      /* context-parallel ranks a sequence spans */
    long long chunk;             /* decode: prompt tokens prefilled in the step */
    long long E, topk, El, ne, ffe, shf; /* experts, top-k, local experts, tokens
                                            each computes, expert and shared widths
                                            on this rank */
    int sp, t, rotary, swiglu, gelu, rms, bias;
    double p_hidden, p_attn;
    unsigned lora;               /* LoRA's adapted projections (LP_* bits) */
    long long r;                 /* ... their rank; the base weights frozen */
    int rc;
} lb;

enum { LP_QKV = 1, LP_PROJ = 2, LP_FC1 = 4, LP_FC2 = 8 };

static inline void put(lb *L, const wl_kernel *k0)
{
    wl_kernel k = *k0;
    k.graphed = L->b->cfg->launch == WL_LAUNCH_GRAPHS; /* no host issue cost */
    if (!L->rc)
        L->rc = wl_core_workload_add(L->wl, &k);
}

static inline wl_kernel ew(wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel k = {.kind = WL_K_ELEMENTWISE, .op = op, .n = n, .batch = 1, .in_dtype = dt,
                   .acc_dtype = WL_DT_FP32};
    return k;
}

static inline void ewp(lb *L, wl_ew_op op, long long n, int bwd)
{
    wl_kernel k = ew(op, n, L->dt);
    k.bwd = bwd;
    put(L, &k);
}

static inline void rowp(lb *L, wl_kernel_kind kind, long long rows, long long dim, wl_dtype dt, int bwd)
{
    wl_kernel k = {.kind = kind, .batch = rows, .n = dim, .in_dtype = dt, .acc_dtype = WL_DT_FP32,
                   .bwd = bwd};
    put(L, &k);
}

static inline void gemm_t(lb *L, wl_dtype in, long long batch, long long m, long long n, long long k)
{
    wl_kernel g = {.kind = WL_K_GEMM, .m = m, .n = n, .k = k, .batch = batch, .in_dtype = in,
                   .acc_dtype = L->tc ? L->dt : WL_DT_FP32, .tensor_core = L->tc};
    put(L, &g);
}

/* A linear layer's GEMM, y = x W^T over T rows: m = out, n = T, k = in
 * (cuBLAS as torch calls it), in the GEMM precision (fp8 with Transformer
 * Engine's recipe: E4M3 forward, E5M2 gradients, bf16 out) */
static inline void gemm(lb *L, long long m, long long n, long long k)
{
    gemm_t(L, L->gdt, 1, m, n, k);
}

/* the LM head and the router stay in the activations' precision (Megatron
 * keeps the output layer out of fp8) */
static inline void hgemm(lb *L, long long m, long long n, long long k)
{
    gemm_t(L, L->dt, 1, m, n, k);
}

/* attention's batched products */
static inline void bgemm(lb *L, long long batch, long long m, long long n, long long k)
{
    gemm_t(L, L->dt, batch, m, n, k);
}

/* fp8: Transformer Engine's cast (and transpose) of a GEMM input that no
 * fused kernel wrote in fp8 already: the attention output before the
 * projection, and each linear's incoming gradient in the backward (the
 * norms and the activation write their fp8 outputs themselves). Reads bf16,
 * writes the fp8 tensor and its transpose. */
static inline void to_fp8(lb *L, long long n)
{
    if (L->gdt != WL_DT_FP8)
        return;
    wl_kernel k = ew(WL_EW_CAST_BF16, n, L->dt);
    put(L, &k);
}

/* LoRA on one of Megatron's fused projections, as NeMo's
 * ParallelLinearAdapter runs it: x (in) -> lora_A (rank r) -> lora_B (out)
 * beside the frozen GEMM, its output scaled and added. A column-parallel
 * projection (QKV, FC1) keeps lora_A whole and splits lora_B's outputs; a
 * row-parallel one (the output projection, FC2) splits lora_A's inputs
 * (its r-wide partial sums all-reduced: T r elements, left out) and keeps
 * lora_B whole. Backward: both GEMMs' input and weight gradients (wgrad
 * unless a split schedule runs them apart: lora_w), the scale. */
static inline void lora_dims(const lb *L, unsigned proj, long long *in, long long *out)
{
    switch (proj) {
    case LP_QKV: *in = L->d, *out = (L->hl + 2 * L->kvl) * L->hd; break;
    case LP_PROJ: *in = L->hl * L->hdv, *out = L->d; break;
    case LP_FC1: *in = L->d, *out = L->swiglu ? 2 * L->ffl : L->ffl; break;
    default: *in = L->ffl, *out = L->d; break;
    }
}

static inline void lora_f(lb *L, unsigned proj)
{
    long long in, out;
    if (!(L->lora & proj) || L->mla)
        return;
    lora_dims(L, proj, &in, &out);
    gemm(L, L->r, L->T, in);
    gemm(L, out, L->T, L->r);
    ewp(L, WL_EW_SCALAR_MUL, L->T * out, 0);
    ewp(L, WL_EW_ADD, L->T * out, 0);
}

static inline void lora_w(lb *L, unsigned proj)
{
    long long in, out;
    if (!(L->lora & proj) || L->mla)
        return;
    lora_dims(L, proj, &in, &out);
    gemm(L, L->r, out, L->T);
    gemm(L, in, L->r, L->T);
}

static inline void lora_b(lb *L, unsigned proj, int with_w)
{
    long long in, out;
    if (!(L->lora & proj) || L->mla)
        return;
    lora_dims(L, proj, &in, &out);
    ewp(L, WL_EW_SCALAR_MUL, L->T * out, 0);
    gemm(L, L->r, L->T, out); /* lora_B's input gradient */
    gemm(L, in, L->T, L->r);  /* lora_A's */
    ewp(L, WL_EW_ADD, L->T * in, 0); /* x's two gradients */
    if (with_w)
        lora_w(L, proj);
}

#endif
