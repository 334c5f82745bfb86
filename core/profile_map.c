/* PyTorch profile import, second half: each kernel mapped to a wattlas
 * kernel through its aten op, the workload with the host's timeline, and
 * the import's entry point, wl_core_profile_parse (core/profile.c reads
 * the events; its header comment says how the whole import works). */
#include "profile_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- mapping an op to a kernel ------------------------------------------- */

/* The precision a kernel is counted in: the first floating input's (an
 * integer tensor's op is counted in fp32, the nearest width). */
static wl_dtype op_dtype(const pf_op *o)
{
    for (int i = 0; i < o->nin; i++)
        if (o->in[i].ndim >= 0 && o->in[i].dt >= 0)
            return (wl_dtype)o->in[i].dt;
    for (int i = 0; i < o->nin; i++)
        if (o->in[i].ndim >= 0 && o->in[i].itemsize == 1)
            return WL_DT_INT8;
    return WL_DT_FP32;
}

/* Elements of the broadcast result of the tensor inputs. */
static double broadcast_numel(const pf_op *o, int *ntensor)
{
    long long out[PF_DIMS] = {0};
    int nd = 0;
    *ntensor = 0;
    for (int i = 0; i < o->nin; i++) {
        const pf_in *x = &o->in[i];
        if (x->ndim < 0)
            continue;
        (*ntensor)++;
        if (x->ndim > nd) {
            for (int k = nd - 1; k >= 0; k--)
                out[k + x->ndim - nd] = out[k];
            for (int k = 0; k < x->ndim - nd; k++)
                out[k] = 1;
            nd = x->ndim;
        }
        for (int k = 0; k < x->ndim; k++) {
            long long d = x->dim[k];
            int j = k + nd - x->ndim;
            if (d > out[j])
                out[j] = d;
        }
    }
    double n = 1;
    for (int k = 0; k < nd; k++)
        n *= (double)(out[k] > 0 ? out[k] : 0);
    return n;
}

static long long clampn(double n)
{
    if (!(n >= 1))
        return 1;
    return n > WL_MAX_TENSOR_ELEMENTS ? (long long)WL_MAX_TENSOR_ELEMENTS : (long long)llround(n);
}

static int name_is(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, list[i]))
            return 1;
    return 0;
}
#define NAME_IN(name, ...)                                                                   \
    name_is(name, (const char *const[]){__VA_ARGS__},                                          \
            sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void ew_kernel(wl_kernel *k, wl_ew_op op, double n, wl_dtype dt)
{
    k->kind = WL_K_ELEMENTWISE;
    k->op = op;
    k->n = clampn(n);
    k->batch = 1;
    k->in_dtype = dt;
    k->acc_dtype = WL_DT_FP32;
}

static void row_kernel(wl_kernel *k, wl_kernel_kind kind, double numel, double row, wl_dtype dt)
{
    if (!(row >= 1))
        row = 1;
    k->kind = kind;
    k->n = clampn(row);
    k->batch = clampn(numel / row);
    k->in_dtype = dt;
    k->acc_dtype = WL_DT_FP32;
}

static int gemm_kernel(wl_kernel *k, const pf_op *o, const char *name)
{
    /* mm(a[M,K], b[K,N]); addmm(bias, a, b); bmm(a[B,M,K], b[B,K,N]);
     * baddbmm(c, a, b). M and N as wattlas counts a linear layer: the
     * output features in M, the tokens in N (cuBLAS's column-major view
     * of the row-major product) */
    int first = !strcmp(name, "aten::addmm") || !strcmp(name, "aten::baddbmm") ||
                !strcmp(name, "aten::_addmm_activation");
    int bat = !strcmp(name, "aten::bmm") || !strcmp(name, "aten::baddbmm");
    if (o->nin < first + 2)
        return 0;
    const pf_in *a = &o->in[first], *b = &o->in[first + 1];
    int r = bat ? 3 : 2;
    if (a->ndim != r || b->ndim != r || a->dim[r - 1] != b->dim[r - 2])
        return 0;
    wl_dtype dt = a->dt >= 0 ? (wl_dtype)a->dt : WL_DT_FP32;
    k->kind = WL_K_GEMM;
    k->batch = bat ? a->dim[0] : 1;
    k->m = b->dim[r - 1];
    k->n = a->dim[r - 2];
    k->k = a->dim[r - 1];
    /* the rows of a [M, K] and b [K, N] (and c) must be 16-byte aligned */
    k->unaligned = (k->k * (long long)wl_dtype_bytes(dt)) % 16 != 0 ||
                   (k->m * (long long)wl_dtype_bytes(dt)) % 16 != 0;
    k->in_dtype = dt;
    /* PyTorch runs fp32 matmuls on CUDA cores unless TF32 is allowed */
    k->tensor_core = dt != WL_DT_FP32;
    k->acc_dtype = k->tensor_core ? dt : WL_DT_FP32;
    if (bat && k->batch > 1) {
        /* wattlas's batched GEMMs keep the product's rows in M */
        long long t = k->m;
        k->m = k->n;
        k->n = t;
    }
    return k->batch >= 1 && k->m >= 1 && k->n >= 1 && k->k >= 1;
}

/* Attention: q [b, h, s, d] (the cuDNN and SDPA ops) or [b, s, h, d] (the
 * flash and efficient kernels' own ops); k likewise with the key/value
 * heads. */
static int attn_kernel(wl_kernel *k, const pf_op *o, const char *name)
{
    if (o->nin < 2 || o->in[0].ndim != 4 || o->in[1].ndim != 4)
        return 0;
    const pf_in *q = &o->in[0], *kk = &o->in[1];
    int bshd = strstr(name, "_flash_attention_") || strstr(name, "_efficient_attention_");
    long long b = q->dim[0], h = bshd ? q->dim[2] : q->dim[1], s = bshd ? q->dim[1] : q->dim[2];
    long long kvh = bshd ? kk->dim[2] : kk->dim[1], sk = bshd ? kk->dim[1] : kk->dim[2];
    k->kind = WL_K_ATTN_FLASH;
    k->batch = b * h;
    k->m = s;
    k->n = sk;
    k->k = q->dim[3];
    k->causal = o->causal && s > 1;
    k->groups = kvh > 0 && kvh < h && h % kvh == 0 ? (int)(h / kvh) : 0;
    k->in_dtype = q->dt >= 0 ? (wl_dtype)q->dt : WL_DT_BF16;
    k->acc_dtype = WL_DT_FP32;
    k->tensor_core = 1;
    k->bwd = strstr(name, "backward") != NULL;
    return k->batch >= 1 && k->m >= 1 && k->n >= 1 && k->k >= 1;
}

/* The wattlas kernel of the i-th of an op's nk kernels; 0 when no mapping
 * covers it (it keeps its measured time). */
static int map_kernel(const pf *P, const pf_op *o, const pf_dev *d, wl_kernel *k)
{
    memset(k, 0, sizeof *k);
    if (!o)
        return 0;
    const char *name = P->names[o->name];
    wl_dtype dt = op_dtype(o);
    int nt = 0;
    double n = broadcast_numel(o, &nt);
    const pf_in *x = o->nin ? &o->in[0] : NULL;
    int nk = o->nkernels > 0 ? o->nkernels : 1;

    if (NAME_IN(name, "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                "aten::_addmm_activation"))
        return !d->aux && gemm_kernel(k, o, name);
    if (strstr(name, "attention") && strncmp(name, "aten::_", 7) == 0)
        return !d->aux && attn_kernel(k, o, name);
    if (!x)
        return 0;
    /* row operations over the last dimension */
    double last = x->ndim > 0 ? (double)x->dim[x->ndim - 1] : 1;
    if (NAME_IN(name, "aten::_softmax", "aten::_log_softmax", "aten::_softmax_backward_data",
                "aten::_log_softmax_backward_data")) {
        row_kernel(k, WL_K_SOFTMAX, x->numel, last, dt);
        k->bwd = strstr(name, "backward") != NULL;
        return 1;
    }
    if (!strcmp(name, "aten::native_layer_norm") || !strcmp(name, "aten::_fused_rms_norm")) {
        double dim = o->nin > 1 && o->in[1].ndim >= 1 ? (double)o->in[1].dim[o->in[1].ndim - 1]
                                                       : last;
        row_kernel(k, name[6] == 'n' ? WL_K_LAYERNORM : WL_K_RMSNORM, x->numel, dim, dt);
        return 1;
    }
    if (!strcmp(name, "aten::native_layer_norm_backward")) {
        /* the input gradient, then the weight and bias gradients as column
         * sums of the gradient and the normalised input (GammaBeta...) */
        if (d->aux) {
            row_kernel(k, WL_K_REDUCE, 2.0 * x->numel, 2.0 * x->numel / last, dt);
            k->strided = 1;
        } else
            row_kernel(k, WL_K_LAYERNORM, x->numel, last, dt);
        k->bwd = !d->aux;
        return 1;
    }
    if (NAME_IN(name, "aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max",
                "aten::min", "aten::argmax", "aten::argmin", "aten::any", "aten::all",
                "aten::prod", "aten::norm", "aten::linalg_vector_norm", "aten::var",
                "aten::std", "aten::var_mean", "aten::logsumexp", "aten::cumsum")) {
        double row = o->red_n > 0 ? o->red_n : x->numel;
        if (!strcmp(name, "aten::cumsum"))
            row = last;
        row_kernel(k, WL_K_REDUCE, x->numel, row, dt);
        k->strided = o->red_outer && strcmp(name, "aten::cumsum") != 0;
        return 1;
    }
    if (!strncmp(name, "aten::_foreach_", 15)) {
        /* multi_tensor_apply: the lists' elements in chunks over its
         * kernels; the op by its arity */
        const char *f = name + 15;
        wl_ew_op op = WL_EW_UNSPEC_SCALAR;
        int lists = 0;
        for (int i = 0; i < o->nin; i++)
            lists += o->in[i].ndim == -2;
        if (!strncmp(f, "addcmul", 7) || !strncmp(f, "addcdiv", 7))
            op = WL_EW_TERNARY;
        else if (!strncmp(f, "zero", 4))
            op = WL_EW_FILL;
        else if (!strncmp(f, "copy", 4))
            op = WL_EW_COPY;
        else if (lists >= 2)
            op = !strncmp(f, "add", 3) || !strncmp(f, "sub", 3) ? WL_EW_ADD : WL_EW_MUL;
        else if (!strncmp(f, "add", 3) || !strncmp(f, "sub", 3))
            op = WL_EW_SCALAR_ADD;
        else if (!strncmp(f, "mul", 3) || !strncmp(f, "div", 3))
            op = WL_EW_SCALAR_MUL;
        /* The profiler records a TensorList's shapes as [] (PyTorch 2.11):
         * then each launch is taken as full, 320 chunks of 65536 elements,
         * the most multi_tensor_apply puts in one (AdamW over Qwen2-1.5B's
         * 1.54 G parameters launches 75 kernels per op in the H200 profile,
         * 74 full ones would hold them). Its time is the chain of loads
         * (core/latency.c), the same for any launch of 265 to 320 chunks. */
        double per = x->numel > 0 ? x->numel / nk : 320.0 * 65536.0;
        ew_kernel(k, op, per, P->main_dt);
        return 1;
    }
    if (NAME_IN(name, "aten::copy_", "aten::_to_copy", "aten::clone", "aten::contiguous")) {
        /* copy_(dst, src): a cast when the precisions differ */
        const pf_in *src = !strcmp(name, "aten::copy_") && o->nin > 1 ? &o->in[1] : x;
        const pf_in *dst = x;
        wl_ew_op op = WL_EW_COPY;
        if (src->dt != dst->dt && !strcmp(name, "aten::copy_"))
            op = dst->dt == WL_DT_FP32 ? WL_EW_CAST_FP32 : WL_EW_CAST_BF16;
        ew_kernel(k, op, dst->numel, src->dt >= 0 ? (wl_dtype)src->dt : dt);
        if (op == WL_EW_CAST_BF16 && src->dt < 0)
            k->in_dtype = WL_DT_FP32;
        return 1;
    }
    if (NAME_IN(name, "aten::cat", "aten::stack")) {
        ew_kernel(k, WL_EW_COPY, x->numel, x->ndim == -2 ? P->main_dt : dt);
        return 1;
    }
    if (NAME_IN(name, "aten::fill_", "aten::zero_", "aten::zeros", "aten::ones", "aten::full",
                "aten::ones_like", "aten::zeros_like", "aten::full_like", "aten::arange",
                "aten::normal_", "aten::uniform_", "aten::triu", "aten::tril")) {
        ew_kernel(k, WL_EW_FILL, n, dt);
        return 1;
    }
    if (NAME_IN(name, "aten::index_select", "aten::gather", "aten::embedding", "aten::index",
                "aten::take_along_dim")) {
        /* a gather writes the index's shape, taking rows of the table */
        double out = n;
        if (!strcmp(name, "aten::index_select") && o->nin >= 2 && x->ndim >= 1 && x->dim[0] > 0)
            out = o->in[o->nin - 1].numel * x->numel / (double)x->dim[0];
        else if (!strcmp(name, "aten::gather") && o->nin >= 2)
            out = o->in[1].numel;
        ew_kernel(k, WL_EW_COPY, out, dt);
        return 1;
    }
    if (NAME_IN(name, "aten::native_dropout")) {
        ew_kernel(k, WL_EW_DROPOUT, n, dt);
        return 1;
    }
    if (NAME_IN(name, "aten::native_dropout_backward")) {
        ew_kernel(k, WL_EW_DROPOUT_BWD, n, dt);
        return 1;
    }
    static const struct { const char *name; wl_ew_op op; int bwd; } act[] = {
        {"aten::relu", WL_EW_RELU, 0},           {"aten::relu_", WL_EW_RELU, 0},
        {"aten::clamp_min", WL_EW_RELU, 0},      {"aten::threshold_backward", WL_EW_RELU, 1},
        {"aten::gelu", WL_EW_GELU, 0},           {"aten::gelu_backward", WL_EW_GELU, 1},
        {"aten::silu", WL_EW_SILU, 0},           {"aten::silu_backward", WL_EW_SILU, 1},
        {"aten::tanh", WL_EW_TANH, 0},           {"aten::tanh_backward", WL_EW_TANH, 1},
    };
    for (size_t i = 0; i < sizeof act / sizeof *act; i++)
        if (!strcmp(name, act[i].name)) {
            ew_kernel(k, act[i].op, n, dt);
            k->bwd = act[i].bwd;
            return 1;
        }
    if (NAME_IN(name, "aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::rsub")) {
        ew_kernel(k, nt >= 2 ? WL_EW_ADD : WL_EW_SCALAR_ADD, n, dt);
        return 1;
    }
    if (NAME_IN(name, "aten::mul", "aten::mul_", "aten::div", "aten::div_")) {
        ew_kernel(k, nt >= 2 ? WL_EW_MUL : WL_EW_SCALAR_MUL, n, dt);
        return 1;
    }
    if (NAME_IN(name, "aten::where", "aten::addcmul", "aten::addcmul_", "aten::addcdiv",
                "aten::addcdiv_", "aten::lerp_", "aten::lerp")) {
        ew_kernel(k, nt >= 3 ? WL_EW_TERNARY : WL_EW_UNSPEC_TENSOR, n, dt);
        return 1;
    }
    /* the other pointwise ops of ATen's TensorIterator: one input reads
     * like a scalar op, two like a tensor op */
    if (NAME_IN(name, "aten::pow", "aten::pow_", "aten::rsqrt", "aten::sqrt", "aten::neg",
                "aten::exp", "aten::log", "aten::cos", "aten::sin", "aten::abs", "aten::sigmoid",
                "aten::reciprocal", "aten::clamp", "aten::clamp_", "aten::eq", "aten::ne",
                "aten::lt", "aten::le", "aten::gt", "aten::ge", "aten::bitwise_not",
                "aten::bitwise_and", "aten::bitwise_or", "aten::logical_not", "aten::logical_and",
                "aten::logical_or", "aten::masked_fill_", "aten::masked_fill", "aten::maximum",
                "aten::minimum", "aten::erf", "aten::floor", "aten::round", "aten::sign",
                "aten::exp_", "aten::sigmoid_backward", "aten::isinf", "aten::isnan",
                "aten::nan_to_num", "aten::remainder", "aten::fmod", "aten::square")) {
        ew_kernel(k, nt >= 2 ? WL_EW_UNSPEC_TENSOR : WL_EW_UNSPEC_SCALAR, n, dt);
        return 1;
    }
    return 0;
}

/* ---- the workload ------------------------------------------------------------- */

static int cmp_dev(const void *a, const void *b)
{
    const pf_dev *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : (x->corr < y->corr ? -1 : x->corr > y->corr);
}

/* The first of the sorted op starts that is not below t (nopts if none). */
static size_t first_op_at(const pf *P, double t)
{
    size_t lo = 0, hi = P->nopts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (P->opts[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Recorded ops whose start lies in [a, b). */
static double ops_in(const pf *P, double a, double b)
{
    size_t first = first_op_at(P, a), end = first_op_at(P, b);
    return end > first ? (double)(end - first) : 0.0;
}

static pf_seg host_seg(const pf *P, double a, double b, int sync, size_t before)
{
    pf_seg g = {.us = b > a ? b - a : 0, .sync = sync, .before = before};
    g.ops = ops_in(P, a, b);
    for (size_t r = 0; r < P->novh; r++) {
        double lo = P->ovh[r].ts > a ? P->ovh[r].ts : a;
        double hi = P->ovh[r].end < b ? P->ovh[r].end : b;
        if (hi > lo)
            g.ovh_us += hi - lo;
    }
    return g;
}

static double seg_us(const pf_seg *g, double per_op)
{
    double t = g->us - g->ovh_us - per_op * g->ops;
    return t > 0 ? t : 0;
}

/* The profiled step replayed with its measured kernel times: the host's
 * segments less per_op per recorded op, each device event starting when
 * the host has issued it and the one before has ended. */
static double replay_ms(const pf *P, const pf_seg *seg, size_t nseg, double per_op)
{
    double issue = 0, end = 0;
    size_t si = 0;
    for (size_t i = 0; i < P->ndev; i++) {
        for (; si < nseg && seg[si].before == i; si++) {
            if (seg[si].sync && end > issue)
                issue = end;
            issue += seg_us(&seg[si], per_op);
        }
        double start = issue > end ? issue : end;
        end = start + P->dev[i].dur;
    }
    return end * 1e-3;
}

/* The per-op cost that makes the replay take the stated wall time, by
 * bisection in [0, 50] us (the replay's time falls as the cost grows). */
static double solve_per_op(const pf *P, const pf_seg *seg, size_t nseg)
{
    double lo = 0, hi = 50;
    if (replay_ms(P, seg, nseg, lo) <= P->wall_ms)
        return lo;
    if (replay_ms(P, seg, nseg, hi) >= P->wall_ms)
        return hi;
    for (int it = 0; it < 40; it++) {
        double mid = 0.5 * (lo + hi);
        if (replay_ms(P, seg, nseg, mid) > P->wall_ms)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static int cmp_range(const void *a, const void *b)
{
    const pf_range *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The optimizer steps' ranges sorted and merged where they overlap, so that
 * whether a time falls in one is a binary search: a scan of every range per
 * kernel made 3x10^5 kernels against 3x10^5 ranges take 63 s (issue 64). */
static void merge_ranges(pf *P)
{
    if (P->nopt < 2)
        return;
    qsort(P->opt, P->nopt, sizeof *P->opt, cmp_range);
    size_t m = 0;
    for (size_t i = 1; i < P->nopt; i++) {
        if (P->opt[i].ts <= P->opt[m].end)
            P->opt[m].end = P->opt[i].end > P->opt[m].end ? P->opt[i].end : P->opt[m].end;
        else
            P->opt[++m] = P->opt[i];
    }
    P->nopt = m + 1;
}

/* Whether t falls in a merged optimizer range. */
static int in_optimizer(const pf *P, double t)
{
    size_t lo = 0, hi = P->nopt; /* the first range starting after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (P->opt[mid].ts <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && t <= P->opt[lo - 1].end;
}

static int cmp_call(const void *a, const void *b)
{
    const pf_call *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The SM clock from a name ending "_<N>mhz" before its extension. */
static double clock_from_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *best = NULL;
    for (const char *p = base; (p = strstr(p, "mhz")) != NULL; p += 3)
        best = p;
    if (!best || best == base)
        return 0;
    const char *d = best;
    while (d > base && isdigit((unsigned char)d[-1]))
        d--;
    if (d == best || d == base || d[-1] != '_' || (best[3] && best[3] != '.' && best[3] != '_'))
        return 0;
    double f = strtod(d, NULL);
    return f > 0 && f <= 1e4 ? f : 0;
}

typedef struct {
    int name;
    long long count;
} pf_miss;

/* a device event's byte in build: its phase (wl_phase), and whether its
 * kernel was mapped by its op */
enum { PF_MAPPED = 0x80 };

static void add_gap(wl_core_workload *wl, double us, int sync, int phase, int *rc)
{
    if (*rc || (!(us > 0.05) && !sync))
        return;
    wl_kernel g = {0};
    g.kind = WL_K_GAP;
    /* at 0.1 us steps, so the gaps' distinct values stay few */
    g.gap_us = us > 0 ? round(us * 10.0) / 10.0 : 0.0;
    if (g.gap_us > 3.6e9)
        g.gap_us = 3.6e9;
    g.sync = sync;
    g.phase = phase;
    if (wl_core_workload_add(wl, &g))
        *rc = WL_ENOMEM;
}

static int build(pf *P, wl_core_workload **out)
{
    if (P->ndev) /* qsort takes no null base, even for nothing */
        qsort(P->dev, P->ndev, sizeof *P->dev, cmp_dev);
    /* a tensor list's precision is not recorded: the optimizer's and
     * cat's lists are taken in the precision of the profile's matmuls */
    P->main_dt = WL_DT_FP32;
    for (size_t i = 0; i < P->nop; i++) {
        const char *nm = P->names[P->op[i].name];
        if ((!strcmp(nm, "aten::mm") || !strcmp(nm, "aten::addmm") || !strcmp(nm, "aten::bmm")) &&
            P->op[i].nin >= 2 && P->op[i].in[1].dt >= 0) {
            P->main_dt = (wl_dtype)P->op[i].in[1].dt;
            break;
        }
    }
    long long kernels = 0;
    for (size_t i = 0; i < P->ndev; i++)
        if (P->dev[i].type == DEV_KERNEL) {
            kernels++;
            pf_op *o = (pf_op *)wl_core_pf_op_of(P, P->dev[i].ext);
            if (o)
                o->nkernels++;
        }
    if (!kernels) {
        wl_error_set(P->err, P->source, 0, "traceEvents",
                     "the profile holds no GPU kernels (profiled without CUDA activity?)");
        return WL_EPARSE;
    }
    /* the main thread: the one that launched the first device event; ops
     * on another thread are the autograd engine's (the backward pass) */
    long long main_tid = 0;
    int have_main = 0;
    for (size_t i = 0; i < P->ndev && !have_main; i++) {
        const pf_call *c = wl_core_pf_call_of(P, P->dev[i].corr);
        const pf_op *o = wl_core_pf_op_of(P, P->dev[i].ext);
        if (o) {
            main_tid = o->tid;
            have_main = 1;
        } else if (c) {
            main_tid = c->tid;
            have_main = 1;
        }
    }
    /* the kernels: mapped ones averaged over their identical launches
     * (the busy time is kept exactly; so identical launches stay one
     * distinct kernel), the others at their own times. A device event
     * keeps a byte here (mapped, and its phase): its mapped kernel is
     * tmp's, a measured one is made again from the event (a wl_kernel per
     * event held 1.4 GB for 10^7 events) */
    unsigned char *st = malloc(P->ndev ? P->ndev : 1);
    double *sum = NULL;
    pf_seg *seg = NULL;
    pf_miss *miss = NULL;
    size_t nmiss = 0, capmiss = 0;
    /* an op name's place in miss + 1 (slot 0: kernels of no op) */
    size_t *missat = calloc(P->nnames + 1, sizeof *missat);
    wl_core_workload *tmp = wl_core_workload_create("tmp"), *wl = NULL;
    size_t capseg = 0;
    int rc = st && tmp && missat ? WL_OK : WL_ENOMEM;
    merge_ranges(P);
    long long mapped = 0, unmapped = 0, memsets = 0, memcpys = 0;
    double busy = 0, other_ms = 0;
    for (size_t i = 0; !rc && i < P->ndev; i++) {
        const pf_dev *d = &P->dev[i];
        pf_op *o = (pf_op *)wl_core_pf_op_of(P, d->ext);
        wl_kernel kk, *k = &kk;
        int ok = d->type == DEV_KERNEL && map_kernel(P, o, d, k);
        if (ok && k->kind == WL_K_ELEMENTWISE)
            k->strided = d->strided;
        if (ok && k->kind == WL_K_GEMM && d->unaligned)
            k->unaligned = 1;
        wl_error scratch = {0};
        if (ok && wl_kernel_check(k, P->source, 0, &scratch))
            ok = 0; /* a shape the model cannot take: kept as measured */
        /* Dims no GPU could have run in the measured time are not the
         * kernel's (a recorded shape wrong, or edited): 10^16 FLOP/s is
         * above every board's dense peak (B200 fp8: 4.5x10^15). Mapped,
         * a 10^6 x 10^6 GEMM anchored at 20 us drew 298 MW; kept at its
         * measured time it is what the profile saw (issue 64). */
        if (ok && !(wl_core_kernel_flops(k) <= 1e16 * fmax(d->dur, 0.01) * 1e-6))
            ok = 0;
        if (o)
            o->seen++;
        int phase = WL_PHASE_FORWARD;
        if (o && have_main && o->tid != main_tid)
            phase = WL_PHASE_BACKWARD;
        if (o && in_optimizer(P, o->ts))
            phase = WL_PHASE_OPTIMIZER;
        st[i] = (unsigned char)(phase | (ok ? PF_MAPPED : 0));
        if (!ok) {
            if (d->type == DEV_MEMSET) {
                memsets++;
            } else if (d->type == DEV_MEMCPY) {
                memcpys++;
            } else {
                unmapped++;
                other_ms += d->dur * 1e-3;
                int nm = o ? o->name : -1;
                size_t at = (size_t)(nm + 1), j = missat[at] ? missat[at] - 1 : nmiss;
                if (j == nmiss) {
                    if (wl_core_pf_grow((void **)&miss, &capmiss, nmiss, sizeof *miss)) {
                        rc = WL_ENOMEM;
                        break;
                    }
                    miss[nmiss++] = (pf_miss){nm, 0};
                    missat[at] = nmiss;
                }
                miss[j].count++;
            }
        } else {
            mapped++;
        }
        if (d->type == DEV_KERNEL)
            busy += d->dur * 1e-3;
        k->phase = phase;
        if (ok && wl_core_workload_add(tmp, k))
            rc = WL_ENOMEM;
    }
    size_t nu = wl_core_workload_unique_count(tmp);
    if (!rc) {
        sum = calloc(nu ? nu : 1, sizeof *sum);
        if (!sum)
            rc = WL_ENOMEM;
    }
    for (size_t i = 0, j = 0; !rc && i < P->ndev; i++)
        if (st[i] & PF_MAPPED) {
            size_t u = tmp->uidx[j++];
            sum[u] += P->dev[i].dur;
        }
    if (!rc) {
        const char *base = strrchr(P->source, '/');
        char name[128];
        snprintf(name, sizeof name, "%s", base ? base + 1 : P->source);
        char *dot = strstr(name, ".json");
        if (dot)
            *dot = '\0';
        wl = wl_core_workload_create(name);
        if (!wl)
            rc = WL_ENOMEM;
    }
    /* the host's timeline: launches and synchronisations in time order,
     * as segments of host time before each device event */
    if (!rc) {
        if (P->ncall)
            qsort(P->call, P->ncall, sizeof *P->call, cmp_call);
        if (P->nopts)
            qsort(P->opts, P->nopts, sizeof *P->opts, wl_core_cmp_double);
    }
    size_t ci = 0, nseg = 0;
    double cursor = NAN;
    int pending_sync = 0;
    for (size_t i = 0; !rc && i < P->ndev; i++) {
        const pf_call *launch = wl_core_pf_call_of(P, P->dev[i].corr);
        if (launch) {
            if (isnan(cursor))
                cursor = launch->ts;
            /* the synchronisations the host made since the last launch */
            for (; ci < P->ncall && P->call[ci].ts < launch->ts; ci++) {
                const pf_call *c = &P->call[ci];
                if (!c->sync || c->ts < cursor)
                    continue;
                if (wl_core_pf_grow((void **)&seg, &capseg, nseg, sizeof *seg)) {
                    rc = WL_ENOMEM;
                    break;
                }
                seg[nseg++] = host_seg(P, cursor, c->ts, pending_sync, i);
                pending_sync = 1;
                cursor = c->ts + c->dur;
            }
            if (rc || wl_core_pf_grow((void **)&seg, &capseg, nseg, sizeof *seg)) {
                rc = WL_ENOMEM;
                break;
            }
            seg[nseg++] = host_seg(P, cursor, launch->ts, pending_sync, i);
            pending_sync = 0;
            cursor = launch->ts;
            /* a copy to the host returns once the GPU has done it: the
             * host goes on from the call's end, after the GPU */
            if (P->dev[i].type == DEV_MEMCPY && P->dev[i].dtoh) {
                pending_sync = 1;
                cursor = launch->ts + launch->dur;
            }
        }
    }
    /* The profiler's own cost: recording each op (its shapes, types and
     * concrete inputs) and its launch call stretches the host's time, not
     * the GPU's. On the shared H200 host the profiled steps that are
     * host-bound take 3.1-5.1 us more per recorded op than the same steps
     * unprofiled (bert-large, gpt2 and qwen2 prefill, the opt and qwen2
     * training steps: shared/data/profiles summary.csv against the
     * traces' spans); 4 us is taken off each recorded op's host time
     * unless the trace states its unprofiled wall time per step
     * ("wattlas": {"wall_ms_per_step": ...}), from which the cost is
     * solved: the replay of the measured kernels at the profile's clock
     * then takes that wall time. The profiler's buffer stalls ("overhead"
     * events) are taken off whole. */
    double per_op = 4.0;
    if (!rc && P->wall_ms > 0)
        per_op = solve_per_op(P, seg, nseg);
    P->per_op_us = per_op;
    size_t si = 0;
    for (size_t i = 0, j = 0; !rc && i < P->ndev; i++) {
        wl_kernel k;
        if (st[i] & PF_MAPPED) {
            size_t u = tmp->uidx[j++];
            /* each mapped launch was added to tmp once: its count */
            double m = sum[u] / (double)tmp->ucount[u];
            k = tmp->k[u];
            k.measured_us = m > 1e-3 ? m : 1e-3;
            k.measured_mhz = P->clock_mhz;
        } else {
            /* kept at its measured time, as a memory-bound kernel */
            double dur = P->dev[i].dur;
            k = (wl_kernel){.kind = WL_K_MEASURED, .batch = 1, .n = 1,
                            .measured_us = dur > 0.01 ? round(dur * 100.0) / 100.0 : 0.01,
                            .phase = st[i] & ~PF_MAPPED};
        }
        for (; si < nseg && seg[si].before == i; si++)
            add_gap(wl, seg_us(&seg[si], per_op), seg[si].sync, k.phase, &rc);
        if (!rc && wl_core_workload_add(wl, &k))
            rc = WL_ENOMEM;
    }
    if (!rc) {
        wl_core_workload_set_host_timed(wl, 1);
        wl_core_workload_set_recorded_limit(wl, P->limit_w);
        wl_core_workload_set_recorded_gpu_id(wl, P->gpu);
        /* what the user should know: kernels kept at their measured time */
        char limit[320] = "the GPU's default power limit";
        if (P->limit_w > 0)
            snprintf(limit, sizeof limit, "a %g W power limit", P->limit_w);
        if (P->gpu[0]) {
            size_t ll = strlen(limit);
            snprintf(limit + ll, sizeof limit - ll, " on %.250s", P->gpu);
        }
        char *nb = wl->note;
        size_t nn = sizeof wl->note;
        int w = snprintf(nb, nn,
                         "profile at %g MHz under %s: %lld kernels (%.3f ms busy), %lld "
                         "mapped by their aten op, %lld kept at their measured time (%.3f ms)",
                         P->clock_mhz, limit, kernels, busy, mapped, unmapped, other_ms);
        for (size_t r = 0; r < 4 && r < nmiss && w > 0 && (size_t)w < nn; r++) {
            size_t best = r;
            for (size_t s = r + 1; s < nmiss; s++)
                if (miss[s].count > miss[best].count)
                    best = s;
            pf_miss t = miss[r];
            miss[r] = miss[best];
            miss[best] = t;
            w += snprintf(nb + w, nn - (size_t)w, "%s %s x%lld", r ? "," : ":",
                          miss[r].name >= 0 ? P->names[miss[r].name] : "(no op)",
                          miss[r].count);
        }
        if (w > 0 && (size_t)w < nn && (memsets || memcpys))
            w += snprintf(nb + w, nn - (size_t)w, "; %lld memsets and %lld memcpys at their times",
                          memsets, memcpys);
        if (w > 0 && (size_t)w < nn)
            snprintf(nb + w, nn - (size_t)w, "; host gaps from its timeline, less the profiler's "
                     "%.2f us per recorded op (%s%s)", P->per_op_us,
                     P->wall_ms > 0 ? "solved from the unprofiled step time in " : "default",
                     P->wall_ms > 0 ? P->wall_src : "");
        /* A step whose GPU waits on the host most of the time is set by
         * the host, and the profiler stretches the host: the shared
         * Llama-3-8B decode profiles (61-72% gaps) predicted 1220 and 560
         * ms a step at 1980 MHz against 863 ms unprofiled, until their
         * summary.csv gave the unprofiled time. */
        double step_ms = replay_ms(P, seg, nseg, per_op), gap = step_ms - busy;
        if (!(P->wall_ms > 0) && step_ms > 0 && gap > 0.5 * step_ms)
            snprintf(wl->warning, sizeof wl->warning,
                     "the GPU waits on the host for %.0f%% of the profiled step, which the "
                     "profiler's own cost stretches by a guessed %.2f us an op: give the unprofiled "
                     "step time (--profile-step-ms MS, or wall_ms_per_step in a summary.csv "
                     "beside the profile)", 100 * gap / step_ms, P->per_op_us);
        *out = wl;
        wl = NULL;
    } else if (rc == WL_ENOMEM) {
        wl_error_set(P->err, P->source, 0, "", "out of memory");
    }
    wl_core_workload_free(wl);
    wl_core_workload_free(tmp);
    free(st);
    free(seg);
    free(sum);
    free(miss);
    free(missat);
    return rc;
}

/* The field of a CSV line (no quoting: summary.csv has none) at col into
 * buf, or "" past its end. */
static void csv_field(const char *line, int col, char *buf, size_t n)
{
    const char *p = line;
    for (int c = 0; c < col && p; c++)
        if ((p = strchr(p, ',')))
            p++;
    size_t l = p ? strcspn(p, ",\r\n") : 0;
    if (l >= n)
        l = n - 1;
    memcpy(buf, p ? p : "", l);
    buf[l] = 0;
}

/* The unprofiled wall time per step from the summary.csv the harness
 * writes beside its profiles (workload,sm_clock_mhz,wall_ms_per_step,...):
 * the row of this profile's workload (its name less _<MHz>mhz and the
 * extension) at its clock; 0 when there is none. */
static double wall_from_summary(const char *source, double clock_mhz)
{
    const char *sl = strrchr(source, '/');
    const char *base = sl ? sl + 1 : source;
    char path[4200], stem[512];
    int dl = sl ? (int)(sl - source) : 0;
    if (snprintf(path, sizeof path, "%.*s%ssummary.csv", dl, source, sl ? "/" : "") >=
        (int)sizeof path)
        return 0;
    /* <workload>_<N>mhz.json[.gz] */
    const char *m = strstr(base, "mhz.");
    const char *u = m ? m : base;
    while (u > base && u[-1] >= '0' && u[-1] <= '9')
        u--;
    if (!m || u == base || u[-1] != '_' || (size_t)(u - 1 - base) >= sizeof stem)
        return 0;
    memcpy(stem, base, (size_t)(u - 1 - base));
    stem[u - 1 - base] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096], cell[512];
    int cw = -1, cc = -1, ct = -1, lines = 0;
    double wall = 0;
    if (fgets(line, sizeof line, f))
        for (int c = 0; c < 64; c++) {
            csv_field(line, c, cell, sizeof cell);
            cw = !strcmp(cell, "workload") ? c : cw;
            cc = !strcmp(cell, "sm_clock_mhz") ? c : cc;
            ct = !strcmp(cell, "wall_ms_per_step") ? c : ct;
        }
    while (cw >= 0 && cc >= 0 && ct >= 0 && lines++ < 100000 && fgets(line, sizeof line, f)) {
        csv_field(line, cw, cell, sizeof cell);
        if (strcmp(cell, stem))
            continue;
        csv_field(line, cc, cell, sizeof cell);
        double clk = 0, t = 0;
        if (wl_core_parse_number(cell, &clk) || fabs(clk - clock_mhz) > 0.5)
            continue;
        csv_field(line, ct, cell, sizeof cell);
        if (!wl_core_parse_number(cell, &t) && t > 0 && t <= 3.6e6) {
            wall = t;
            break;
        }
    }
    fclose(f);
    return wall;
}

/* The import: the events read (profile.c), the clock the profile ran at
 * (given, recorded by the harness, or in its name), then the workload. */
static int parse(wl_core_zin *in, const char *text, size_t len, const char *source,
                 const wl_core_recorded *rec, wl_core_workload **out, wl_error *err)
{
    *out = NULL;
    pf P = {.source = source, .err = err};
    int rc = WL_OK;
    int r = wl_core_pf_read(&P, text, len, in);
    if (r)
        rc = r == -2 ? WL_ENOMEM : r == -3 ? WL_EIO : WL_EPARSE;
    /* a profile with no kernel says so first: its clock would not matter */
    int any_kernel = 0;
    for (size_t i = 0; !rc && i < P.ndev && !any_kernel; i++)
        any_kernel = P.dev[i].type == DEV_KERNEL;
    if (!rc && !any_kernel) {
        wl_error_set(err, source, 0, "traceEvents",
                     "the profile holds no GPU kernels (profiled without CUDA activity?)");
        rc = WL_EPARSE;
    }
    if (!rc) {
        if (rec && rec->sm_clock_mhz > 0)
            P.clock_mhz = rec->sm_clock_mhz;
        else if (!(P.clock_mhz > 0))
            P.clock_mhz = clock_from_name(source);
        if (rec && rec->power_limit_w > 0)
            P.limit_w = rec->power_limit_w;
        /* the unprofiled step time: given, recorded, or beside it */
        if (P.wall_ms > 0)
            P.wall_src = "its wall_ms_per_step";
        if (rec && rec->step_ms > 0) {
            P.wall_ms = rec->step_ms;
            P.wall_src = "--profile-step-ms";
        }
        if (rec && rec->gpu[0])
            snprintf(P.gpu, sizeof P.gpu, "%s", rec->gpu);
        if (!(P.clock_mhz > 0) || P.clock_mhz > 1e4) {
            wl_error_set(err, source, 0, "sm_clock_mhz",
                         "the profile does not say the SM clock it ran at: give "
                         "--profile-clock MHZ (spec key profile_clock), name it "
                         "..._<MHz>mhz.json[.gz], or record \"wattlas\": {\"sm_clock_mhz\": N} "
                         "(wattlas.measure profile does)");
            rc = WL_EPARSE;
        }
    }
    if (!rc && !(P.wall_ms > 0) && (P.wall_ms = wall_from_summary(source, P.clock_mhz)) > 0)
        P.wall_src = "the summary.csv beside it";
    if (!rc)
        rc = build(&P, out);
    wl_core_pf_free(&P);
    return rc;
}

int wl_core_profile_parse(const char *text, size_t len, const char *source,
                          const wl_core_recorded *rec, wl_core_workload **out, wl_error *err)
{
    return parse(NULL, text, len, source, rec, out, err);
}

int wl_core_profile_parse_z(wl_core_zin *in, const char *head, size_t headlen,
                            const char *source, const wl_core_recorded *rec,
                            wl_core_workload **out, wl_error *err)
{
    return parse(in, head, headlen, source, rec, out, err);
}
