/* Workload: a kernel launch sequence with its distinct kernels indexed, so that
 * identical launches are evaluated once and counted. */
#include "core_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

wl_core_workload *wl_core_workload_create(const char *name)
{
    wl_core_workload *wl = calloc(1, sizeof *wl);
    if (wl)
        snprintf(wl->name, sizeof wl->name, "%s", name ? name : "");
    return wl;
}

void wl_core_workload_free(wl_core_workload *wl)
{
    if (!wl)
        return;
    free(wl->k);
    free(wl->uidx);
    free(wl->rep);
    free(wl->ucount);
    free(wl->hslot);
    free(wl->recorded_gpu);
    free(wl);
}

void wl_core_workload_set_repeated(wl_core_workload *wl, int repeated)
{
    if (wl)
        wl->repeated = repeated != 0;
}

int wl_core_workload_repeated(const wl_core_workload *wl)
{
    return wl ? wl->repeated : 0;
}

int wl_core_workload_training(const wl_core_workload *wl)
{
    for (size_t u = 0; wl && u < wl->nu; u++)
        if (wl->k[u].phase == WL_PHASE_BACKWARD)
            return 1;
    return 0;
}

void wl_core_workload_set_host_timed(wl_core_workload *wl, int host_timed)
{
    if (wl)
        wl->host_timed = host_timed != 0;
}

int wl_core_workload_host_timed(const wl_core_workload *wl)
{
    return wl ? wl->host_timed : 0;
}

void wl_core_workload_set_recorded_limit(wl_core_workload *wl, double watts)
{
    if (wl)
        wl->recorded_limit_w = watts > 0 && isfinite(watts) ? watts : 0.0;
}

double wl_core_workload_recorded_limit(const wl_core_workload *wl)
{
    return wl ? wl->recorded_limit_w : 0.0;
}

void wl_core_workload_set_recorded_gpu_id(wl_core_workload *wl, const char *id)
{
    if (wl)
        snprintf(wl->recorded_gpu_id, sizeof wl->recorded_gpu_id, "%s", id ? id : "");
}

const char *wl_core_workload_recorded_gpu_id(const wl_core_workload *wl)
{
    return wl ? wl->recorded_gpu_id : "";
}

int wl_core_workload_set_recorded_gpu(wl_core_workload *wl, const wl_core_gpu *gpu)
{
    if (!wl)
        return WL_EINVAL;
    wl_core_gpu *g = NULL;
    if (gpu) {
        if (!(g = malloc(sizeof *g)))
            return WL_ENOMEM;
        *g = *gpu;
    }
    free(wl->recorded_gpu);
    wl->recorded_gpu = g;
    return WL_OK;
}

const wl_core_gpu *wl_core_workload_recorded_gpu(const wl_core_workload *wl)
{
    return wl ? wl->recorded_gpu : NULL;
}

double wl_core_workload_recorded_clock(const wl_core_workload *wl)
{
    /* the distinct kernels are in the order of their first launch */
    for (size_t u = 0; wl && u < wl->nu; u++)
        if (wl->k[u].measured_mhz > 0 && wl->k[u].kind != WL_K_MEASURED &&
            wl->k[u].kind != WL_K_GAP)
            return wl->k[u].measured_mhz;
    return 0.0;
}

/* A JSON trace records ops, not the kernels that ran them: which ATen path
 * an op takes is the stack's. On the current stack (hf5) a half-precision
 * upcast is the dynamic-casting copy (strided 4, core/latency.c). The
 * launches are re-added to a fresh workload so that the index of distinct
 * kernels stays true. */
int wl_core_kernel_on_stack(wl_kernel *k, wl_stack stack)
{
    if (stack != WL_STACK_HF5 || k->kind != WL_K_ELEMENTWISE || k->op != WL_EW_CAST_FP32 ||
        k->strided != 0 || (k->in_dtype != WL_DT_BF16 && k->in_dtype != WL_DT_FP16))
        return 0;
    k->strided = 4;
    return 1;
}

int wl_core_workload_set_stack(wl_core_workload *wl, wl_stack stack)
{
    if (!wl)
        return WL_OK;
    size_t hits = 0;
    for (size_t u = 0; u < wl->nu; u++) {
        wl_kernel k = wl->k[u];
        hits += (size_t)wl_core_kernel_on_stack(&k, stack);
    }
    if (!hits)
        return WL_OK;
    wl_core_workload *nw = wl_core_workload_create(wl->name);
    if (!nw)
        return WL_ENOMEM;
    for (size_t i = 0; i < wl->n; i++) {
        wl_kernel k = wl->k[wl->uidx[i]];
        wl_core_kernel_on_stack(&k, stack);
        if (wl_core_workload_add_as(nw, wl, i, &k)) {
            wl_core_workload_free(nw);
            return WL_ENOMEM;
        }
    }
    nw->repeated = wl->repeated;
    nw->host_timed = wl->host_timed;
    nw->recorded_limit_w = wl->recorded_limit_w;
    memcpy(nw->recorded_gpu_id, wl->recorded_gpu_id, sizeof nw->recorded_gpu_id);
    /* the board moves with the rest (swapped below, then freed with nw) */
    nw->recorded_gpu = wl->recorded_gpu;
    wl->recorded_gpu = NULL;
    memcpy(nw->note, wl->note, sizeof nw->note);
    memcpy(nw->warning, wl->warning, sizeof nw->warning);
    wl_core_workload tmp = *wl;
    *wl = *nw;
    *nw = tmp;
    wl_core_workload_free(nw);
    return WL_OK;
}

int wl_kernel_equal(const wl_kernel *a, const wl_kernel *b)
{
    return a->kind == b->kind && a->op == b->op && a->in_dtype == b->in_dtype &&
           a->acc_dtype == b->acc_dtype && a->tensor_core == b->tensor_core &&
           a->causal == b->causal && a->m == b->m && a->n == b->n && a->k == b->k &&
           a->batch == b->batch && a->gap_us == b->gap_us && a->conv_taps == b->conv_taps &&
           a->conv_stride == b->conv_stride && a->phase == b->phase && a->bwd == b->bwd &&
           a->graphed == b->graphed && a->sync == b->sync && a->groups == b->groups &&
           a->residual == b->residual && a->engine == b->engine && a->strided == b->strided &&
           a->unaligned == b->unaligned && a->internal == b->internal &&
           a->measured_us == b->measured_us && a->measured_mhz == b->measured_mhz;
}

int wl_kernel_check(const wl_kernel *k, const char *source, int line, wl_error *err)
{
    if ((unsigned)k->kind >= WL_K_COUNT || (unsigned)k->in_dtype >= WL_DT_COUNT ||
        (unsigned)k->acc_dtype >= WL_DT_COUNT || (unsigned)k->op >= WL_EW_COUNT ||
        (unsigned)k->phase >= WL_PHASE_COUNT) {
        wl_error_set(err, source, line, "kind", "unknown kernel kind, op or precision");
        return WL_EINVAL;
    }
    if (k->kind == WL_K_GAP) {
        if (!(k->gap_us >= 0 && k->gap_us <= 3.6e9)) {
            wl_error_set(err, source, line, "us", "a gap must be 0 to 3.6e9 us (an hour)");
            return WL_EINVAL;
        }
        if (k->engine && !(k->batch >= 1 && k->batch <= 100000000)) {
            wl_error_set(err, source, line, "batch", "an engine step needs 1 to 1e8 sequences");
            return WL_EINVAL;
        }
        return WL_OK;
    }
    /* a measured time: positive and at most a minute per launch, at a clock
     * in (0, 10 GHz] */
    if (k->measured_us != 0 || k->measured_mhz != 0 || k->kind == WL_K_MEASURED) {
        if (!(k->measured_us > 0 && k->measured_us <= 6e7)) {
            wl_error_set(err, source, line, "dur", "a measured kernel time must be in (0, 6e7] us");
            return WL_EINVAL;
        }
        if (!(k->measured_mhz >= 0 && k->measured_mhz <= 1e4) ||
            (k->kind != WL_K_MEASURED && !(k->measured_mhz > 0))) {
            wl_error_set(err, source, line, "sm_clock_mhz",
                         "a measured kernel needs the SM clock it ran at, in (0, 10000] MHz");
            return WL_EINVAL;
        }
        if (k->kind == WL_K_MEASURED)
            return WL_OK;
    }
    int mnk = k->kind == WL_K_GEMM || k->kind == WL_K_ATTN_FLASH;
    const char *bad = k->batch < 1 ? "batch" : k->n < 1 ? "n"
                    : mnk && k->m < 1 ? "m" : mnk && k->k < 1 ? "k" : NULL;
    if (bad) {
        wl_error_set(err, source, line, bad, "kernel dimensions must be positive");
        return WL_EINVAL;
    }
    if (k->unaligned < 0 || k->unaligned > 1) {
        wl_error_set(err, source, line, "unaligned", "must be 0 or 1");
        return WL_EINVAL;
    }
    if (k->causal < 0 || k->causal > 2 || (k->causal == 2 && k->kind != WL_K_SOFTMAX)) {
        wl_error_set(err, source, line, "causal",
                     "must be 0 or 1 (2: Megatron's fused causal softmax, softmax only)");
        return WL_EINVAL;
    }
    if (k->strided < 0 || k->strided > 4) {
        wl_error_set(err, source, line, "strided", "must be 0 to 4");
        return WL_EINVAL;
    }
    if (k->groups < 0 || k->groups > 1024 || (k->groups > 1 && k->batch % k->groups)) {
        wl_error_set(err, source, line, "groups",
                     "query heads per key/value head must be 0-1024 and divide batch*heads");
        return WL_EINVAL;
    }
    if (k->conv_taps < 0 || k->conv_taps > 4096 || k->conv_stride < 0 || k->conv_stride > 64) {
        wl_error_set(err, source, line, "rs", "convolution taps must be 0-4096 and stride 0-64");
        return WL_EINVAL;
    }
    /* the largest tensor the kernel reads or writes */
    double b = (double)k->batch, m = (double)k->m, n = (double)k->n, kk = (double)k->k;
    double big = b * n;
    if (mnk) {
        big = b * m * kk;
        if (b * kk * n > big)
            big = b * kk * n;
        if (b * m * n > big)
            big = b * m * n;
    }
    if (!(big <= WL_MAX_TENSOR_ELEMENTS)) {
        wl_error_set(err, source, line, mnk ? "dimM" : "dim",
                     "a tensor of %g elements (the limit is %g)", big, WL_MAX_TENSOR_ELEMENTS);
        return WL_EINVAL;
    }
    return WL_OK;
}

/* Grows two parallel arrays to hold one more element. */
static int grow2(void **a, size_t ea, void **b, size_t eb, size_t *cap, size_t n)
{
    if (n < *cap)
        return WL_OK;
    size_t nc = *cap ? *cap * 2 : 64;
    void *na = realloc(*a, nc * ea);
    if (!na)
        return WL_ENOMEM;
    *a = na;
    void *nb = realloc(*b, nc * eb);
    if (!nb)
        return WL_ENOMEM;
    *b = nb;
    *cap = nc;
    return WL_OK;
}

/* FNV-1a over the fields wl_kernel_equal compares. */
static size_t kernel_hash(const wl_kernel *k)
{
    long long v[22] = {k->kind, k->op, k->in_dtype, k->acc_dtype, k->tensor_core, k->causal,
                       k->m, k->n, k->k, k->batch, k->conv_taps, k->conv_stride, k->phase,
                       k->bwd, k->graphed, k->sync, k->groups, k->residual, k->engine,
                       k->strided, k->unaligned, k->internal};
    /* a word at a time (a multiply and a shift each): a cluster search
     * builds workloads for thousands of configurations, where FNV's byte
     * at a time was a tenth of its time */
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        h = (h ^ (unsigned long long)v[i]) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 32;
    }
    double g[3] = {k->gap_us, k->measured_us, k->measured_mhz};
    for (size_t i = 0; i < 3; i++) {
        unsigned long long w;
        memcpy(&w, &g[i], sizeof w);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 32;
    }
    return (size_t)(h ^ (h >> 29));
}

/* The open-addressing index of distinct kernels (slots hold u + 1, 0 is
 * empty), kept at most half full. A generation has thousands of distinct
 * kernels (attention at every cache length), where a linear scan per
 * launch would take seconds. */
static int index_grow(wl_core_workload *wl)
{
    size_t nc = wl->hcap ? 2 * wl->hcap : 256;
    size_t *h = calloc(nc, sizeof *h);
    if (!h)
        return WL_ENOMEM;
    for (size_t u = 0; u < wl->nu; u++) {
        size_t i = kernel_hash(&wl->k[u]) & (nc - 1);
        while (h[i])
            i = (i + 1) & (nc - 1);
        h[i] = u + 1;
    }
    free(wl->hslot);
    wl->hslot = h;
    wl->hcap = nc;
    return WL_OK;
}

int wl_core_workload_add_n(wl_core_workload *wl, const wl_kernel *k, long long n)
{
    if (!wl || !k || n < 1 || n > 1000000000000LL)
        return WL_EINVAL;
    if (wl->n == wl->cap) {
        size_t nc = wl->cap ? 2 * wl->cap : 64;
        size_t *ui = realloc(wl->uidx, nc * sizeof *ui);
        if (!ui)
            return WL_ENOMEM;
        wl->uidx = ui;
        wl->cap = nc;
    }
    /* the repeats, once there are any, grow with the launches */
    if ((wl->rep || n != 1) && wl->repcap < wl->cap) {
        long long *r = realloc(wl->rep, wl->cap * sizeof *r);
        if (!r)
            return WL_ENOMEM;
        if (!wl->rep) /* the launches so far stand for themselves */
            for (size_t i = 0; i < wl->n; i++)
                r[i] = 1;
        wl->rep = r;
        wl->repcap = wl->cap;
    }
    if (2 * (wl->nu + 1) > wl->hcap && index_grow(wl))
        return WL_ENOMEM;
    size_t u = wl->nu, i = kernel_hash(k) & (wl->hcap - 1);
    for (; wl->hslot[i]; i = (i + 1) & (wl->hcap - 1))
        if (wl_kernel_equal(&wl->k[wl->hslot[i] - 1], k)) {
            u = wl->hslot[i] - 1;
            break;
        }
    if (u == wl->nu) {
        if (grow2((void **)&wl->k, sizeof *wl->k, (void **)&wl->ucount, sizeof *wl->ucount,
                  &wl->ucap, wl->nu))
            return WL_ENOMEM;
        wl->k[wl->nu] = *k;
        wl->ucount[wl->nu] = 0;
        wl->hslot[i] = wl->nu + 1;
        wl->nu++;
    }
    wl->uidx[wl->n] = u;
    if (wl->rep)
        wl->rep[wl->n] = wl->stretch_next ? -n : n;
    wl->stretch_next = 0;
    wl->ucount[u] += n;
    wl->n++;
    return WL_OK;
}

int wl_core_workload_add(wl_core_workload *wl, const wl_kernel *k)
{
    return wl_core_workload_add_n(wl, k, 1);
}

long long wl_core_workload_repeat(const wl_core_workload *wl, size_t i)
{
    return wl && wl->rep && i < wl->n ? llabs(wl->rep[i]) : 1;
}

int wl_core_workload_stretch_start(const wl_core_workload *wl, size_t i)
{
    return wl && wl->rep && i < wl->n && wl->rep[i] < 0;
}

void wl_core_workload_begin_stretch(wl_core_workload *wl)
{
    if (wl)
        wl->stretch_next = 1;
}

int wl_core_workload_add_as(wl_core_workload *wl, const wl_core_workload *src, size_t i,
                            const wl_kernel *k)
{
    if (wl_core_workload_stretch_start(src, i))
        wl_core_workload_begin_stretch(wl);
    return wl_core_workload_add_n(wl, k, wl_core_workload_repeat(src, i));
}

size_t wl_core_workload_count(const wl_core_workload *wl) { return wl ? wl->n : 0; }

size_t wl_core_workload_launches(const wl_core_workload *wl)
{
    size_t n = 0;
    for (size_t u = 0; wl && u < wl->nu; u++)
        if (wl->k[u].kind != WL_K_GAP)
            n += (size_t)wl->ucount[u];
    return n;
}
const char *wl_core_workload_note(const wl_core_workload *wl) { return wl ? wl->note : ""; }
const char *wl_core_workload_warning(const wl_core_workload *wl) { return wl ? wl->warning : ""; }
size_t wl_core_workload_unique_count(const wl_core_workload *wl) { return wl ? wl->nu : 0; }
const char *wl_core_workload_name(const wl_core_workload *wl) { return wl ? wl->name : ""; }

const wl_kernel *wl_core_workload_kernel(const wl_core_workload *wl, size_t i)
{
    return (wl && i < wl->n) ? &wl->k[wl->uidx[i]] : NULL;
}

double wl_core_kernel_flops(const wl_kernel *k)
{
    double b = (double)k->batch, m = (double)k->m, n = (double)k->n, kk = (double)k->k;
    switch (k->kind) {
    case WL_K_GEMM:
        return 2.0 * b * m * n * kk;
    case WL_K_ATTN_FLASH:
        /* QK^T and PV; causal masking skips about half the tiles; the
         * backward's five matmuls (QK^T recomputed) */
        return 4.0 * b * m * n * kk * (k->causal ? 0.5 : 1.0) * (k->bwd ? 2.5 : 1.0);
    default:
        return 0.0;
    }
}

double wl_core_workload_flops(const wl_core_workload *wl)
{
    double s = 0.0;
    for (size_t u = 0; u < wl->nu; u++)
        s += (double)wl->ucount[u] * wl_core_kernel_flops(&wl->k[u]);
    return s;
}

int wl_core_kernel_class(const wl_kernel *k)
{
    switch (k->kind) {
    case WL_K_GEMM: return k->batch > 1 ? WL_CLASS_BATCHED_GEMM : WL_CLASS_GEMM;
    case WL_K_ATTN_FLASH: return WL_CLASS_FLASH;
    case WL_K_SOFTMAX: return WL_CLASS_SOFTMAX;
    case WL_K_LAYERNORM: case WL_K_RMSNORM: case WL_K_REDUCE: return WL_CLASS_NORM;
    case WL_K_ELEMENTWISE: return WL_CLASS_ELEMENTWISE;
    case WL_K_GAP: return WL_CLASS_GAP;
    case WL_K_MEASURED: return WL_CLASS_OTHER;
    default: return WL_CLASS_ELEMENTWISE;
    }
}
