/* PyTorch profiler import: a Chrome trace (torch.profiler's
 * export_chrome_trace, gzipped or not) as a workload that predicts every
 * clock from the one it was measured at.
 *
 * What the trace holds (PyTorch's Kineto exporter): `cat: kernel`,
 * `gpu_memset` and `gpu_memcpy` events on the GPU's timeline with their
 * durations; `cpu_op` events (aten ops, with `Input Dims` and `Input type`
 * when profiled with record_shapes=True); `cuda_runtime` / `cuda_driver`
 * events (the launch calls and the synchronisations on the host). A device
 * event names the op that launched it by `External id` and its launch call
 * by `correlation`.
 *
 * Each kernel becomes a wattlas kernel through its aten op (the op's
 * shapes and types give the GEMM's M, N, K, an attention's heads and
 * lengths, an elementwise op's element count), with its measured duration
 * and the profile's clock attached: the evaluator anchors the model's time
 * to the measurement and moves it with the clock by the model's
 * compute/memory split (core/eval.c). A kernel no mapping covers, and the
 * memsets and memcpys, keep their measured time as memory-bound kernels
 * (WL_K_MEASURED) and are counted in the workload's note: never dropped.
 *
 * The host's own times come from the timeline: the host time between two
 * launches (their calls' start times) becomes a gap before the second, and
 * a synchronisation (cudaStreamSynchronize, cudaDeviceSynchronize, a copy
 * to the host) a sync gap, after which the host resumes once the GPU is
 * done. At another clock the kernels' times change and the host's do not,
 * so a launch-bound profile stays host-paced.
 *
 * The events are read one at a time, from a stream: a 65 MB decode trace
 * (300,000 events) is never held as one parsed tree, nor as one text. */
#include "profile_internal.h"
#include "json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a scanner over the event list -------------------------------------- */

/* The text in memory, or a window onto a stream (core/zin.c) that moves
 * as it is read: what lies before the cursor is dropped when the window
 * is refilled, except from mark on (the event being read, which is parsed
 * whole). A profile of 10^7 events is then never held at once: it took
 * 3.7 GB inflated whole (issue 64); now the kernels it keeps. */
typedef struct {
    const char *s, *end;
    int line;
    wl_core_zin *in; /* NULL: the text is all in memory */
    char *buf;
    size_t cap;
    const char *mark;
    int eof, failed;
    wl_error ioerr; /* why the stream failed */
} scan;

/* A fuzzing build reads in pieces of a few bytes, so that its small
 * inputs cross the window's edges everywhere (tests/fuzz/fuzz_profile.c
 * checks the stream against the text in memory). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define SC_CHUNK_BYTES 8
#else
#define SC_CHUNK_BYTES (1 << 20)
#endif
enum {
    SC_CHUNK = SC_CHUNK_BYTES,
    /* one event, or the "wattlas" object: a kernel's is 300 bytes, a
     * cpu_op's with its shapes and concrete inputs a few KB */
    SC_MAX_VALUE = 1 << 28
};
/* why a stream failed (scan.failed) */
enum { SC_IO = 1, SC_TOO_BIG, SC_NOMEM };

/* The window's end reached: more text from the stream, keeping from the
 * mark (or the cursor) on. 1 when there is more. */
static int sc_more(scan *c)
{
    if (!c->in || c->eof || c->failed)
        return 0;
    const char *keep = c->mark ? c->mark : c->s;
    size_t from = (size_t)(keep - c->buf), kept = (size_t)(c->end - keep);
    size_t at = (size_t)(c->s - keep);
    if (c->cap - kept < SC_CHUNK) {
        /* a value that fills the window: a window twice the size */
        char *nb = c->cap >= SC_MAX_VALUE ? NULL : malloc(2 * c->cap);
        if (!nb) {
            wl_error_set(&c->ioerr, "", c->line, "traceEvents",
                         c->cap >= SC_MAX_VALUE ? "one value over %d MiB" : "out of memory",
                         SC_MAX_VALUE >> 20);
            c->failed = c->cap >= SC_MAX_VALUE ? SC_TOO_BIG : SC_NOMEM;
            return 0;
        }
        memcpy(nb, c->buf + from, kept);
        free(c->buf);
        c->buf = nb;
        c->cap *= 2;
    } else {
        memmove(c->buf, c->buf + from, kept);
    }
    long got = wl_core_zin_read(c->in, c->buf + kept, c->cap - kept, &c->ioerr);
    if (c->mark)
        c->mark = c->buf;
    c->s = c->buf + at;
    c->end = c->buf + kept + (got > 0 ? (size_t)got : 0);
    if (got < 0)
        c->failed = SC_IO;
    else if (got == 0)
        c->eof = 1;
    return got > 0;
}

/* A byte at the cursor (the window refilled when it ends there). */
#define HAVE(c) ((c)->s < (c)->end || sc_more(c))

static void sc_ws(scan *c)
{
    while (HAVE(c) && (*c->s == ' ' || *c->s == '\t' || *c->s == '\r' || *c->s == '\n')) {
        if (*c->s == '\n')
            c->line++;
        c->s++;
    }
}

/* Skips one JSON value (strings and nesting honoured; the value's own
 * syntax is checked when it is parsed). 0, or -1 at a truncated value. */
static int sc_skip(scan *c)
{
    int depth = 0;
    while (HAVE(c)) {
        char ch = *c->s;
        if (ch == '"') {
            c->s++;
            while (HAVE(c) && *c->s != '"') {
                if (*c->s == '\\') {
                    c->s++;
                    if (!HAVE(c))
                        break;
                } else if (*c->s == '\n') {
                    c->line++;
                }
                c->s++;
            }
            if (!HAVE(c))
                return -1;
            c->s++;
        } else if (ch == '{' || ch == '[') {
            depth++;
            c->s++;
        } else if (ch == '}' || ch == ']') {
            if (depth == 0)
                return 0; /* the end of the enclosing container */
            depth--;
            c->s++;
        } else if (ch == ',' && depth == 0) {
            return 0;
        } else {
            if (ch == '\n')
                c->line++;
            c->s++;
        }
        if (depth == 0 && (ch == '"' || ch == '}' || ch == ']')) {
            sc_ws(c);
            return 0;
        }
    }
    return depth == 0 ? 0 : -1;
}

/* Reads a key string at the cursor into buf (cut to n - 1 characters). */
static int sc_key(scan *c, char *buf, size_t n)
{
    if (!HAVE(c) || *c->s != '"')
        return -1;
    c->s++;
    size_t k = 0;
    while (HAVE(c) && *c->s != '"') {
        if (*c->s == '\\') {
            c->s++;
            if (!HAVE(c))
                break;
        }
        if (k + 1 < n)
            buf[k++] = *c->s;
        c->s++;
    }
    buf[k] = '\0';
    if (!HAVE(c))
        return -1;
    c->s++;
    sc_ws(c);
    if (!HAVE(c) || *c->s != ':')
        return -1;
    c->s++;
    sc_ws(c);
    return 0;
}

int wl_core_pf_grow(void **a, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    void *p = realloc(*a, nc * elem);
    if (!p)
        return -1;
    *a = p;
    *cap = nc;
    return 0;
}

/* FNV-1a over a name. */
static size_t hash_str(const char *s)
{
    unsigned long long h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)(h ^ (h >> 29));
}

/* A name's index, added when new. An open-addressing table keeps this
 * linear in the events: a scan of the names made 3x10^5 kernels of 10^5
 * distinct names take 62 s (issue 64). */
static int intern(pf *P, const char *s)
{
    size_t h = hash_str(s);
    for (size_t q = P->nhcap ? h & (P->nhcap - 1) : 0; P->nhcap && P->nhash[q];
         q = (q + 1) & (P->nhcap - 1))
        if (!strcmp(P->names[P->nhash[q] - 1], s))
            return (int)(P->nhash[q] - 1);
    if (P->nnames >= 100000 || wl_core_pf_grow((void **)&P->names, &P->capnames, P->nnames, sizeof *P->names))
        return -1;
    if (2 * (P->nnames + 1) > P->nhcap) {
        size_t nc = P->nhcap ? 2 * P->nhcap : 256;
        size_t *t = calloc(nc, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < P->nnames; i++) {
            size_t q = hash_str(P->names[i]) & (nc - 1);
            while (t[q])
                q = (q + 1) & (nc - 1);
            t[q] = i + 1;
        }
        free(P->nhash);
        P->nhash = t;
        P->nhcap = nc;
    }
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (!c)
        return -1;
    memcpy(c, s, n + 1);
    P->names[P->nnames] = c;
    size_t q = h & (P->nhcap - 1);
    while (P->nhash[q])
        q = (q + 1) & (P->nhcap - 1);
    P->nhash[q] = P->nnames + 1;
    return (int)P->nnames++;
}

static size_t hash_ll(long long v)
{
    unsigned long long h = (unsigned long long)v * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 31));
}

/* An open-addressing index from a key to an element (slots hold i + 1),
 * rebuilt at twice the size when half full. */
static int index_put(size_t **slots, size_t *cap, long long (*key)(const pf *, size_t),
                     const pf *P, size_t count, size_t i)
{
    if (2 * count > *cap) {
        size_t nc = *cap ? 2 * *cap : 1024;
        while (2 * count > nc)
            nc *= 2;
        size_t *h = calloc(nc, sizeof *h);
        if (!h)
            return -1;
        for (size_t j = 0; j < i; j++) {
            size_t s = hash_ll(key(P, j)) & (nc - 1);
            while (h[s])
                s = (s + 1) & (nc - 1);
            h[s] = j + 1;
        }
        free(*slots);
        *slots = h;
        *cap = nc;
    }
    size_t s = hash_ll(key(P, i)) & (*cap - 1);
    while ((*slots)[s]) {
        if (key(P, (*slots)[s] - 1) == key(P, i))
            return 0; /* the first event with a key keeps it */
        s = (s + 1) & (*cap - 1);
    }
    (*slots)[s] = i + 1;
    return 0;
}

static long long op_key(const pf *P, size_t i) { return P->op[i].ext; }
static long long call_key(const pf *P, size_t i) { return P->call[i].corr; }

/* The element whose key is k, as index_put filed it: its index + 1, or 0. */
static size_t index_get(const size_t *slots, size_t cap, long long (*key)(const pf *, size_t),
                        const pf *P, long long k)
{
    if (!cap)
        return 0;
    for (size_t s = hash_ll(k) & (cap - 1); slots[s]; s = (s + 1) & (cap - 1))
        if (key(P, slots[s] - 1) == k)
            return slots[s];
    return 0;
}

const pf_op *wl_core_pf_op_of(const pf *P, long long ext)
{
    size_t i = index_get(P->ohash, P->ohcap, op_key, P, ext);
    return i ? &P->op[i - 1] : NULL;
}

const pf_call *wl_core_pf_call_of(const pf *P, long long corr)
{
    size_t i = index_get(P->chash, P->chcap, call_key, P, corr);
    return i ? &P->call[i - 1] : NULL;
}

/* ---- one event ---------------------------------------------------------- */

static int num_of(const wj_value *o, const char *key, double *out)
{
    const wj_value *v = o ? wj_get(o, key) : NULL;
    if (!v || v->type != WJ_NUMBER || !isfinite(v->num))
        return -1;
    *out = v->num;
    return 0;
}

static const char *str_of(const wj_value *o, const char *key)
{
    const wj_value *v = o ? wj_get(o, key) : NULL;
    return v && v->type == WJ_STRING ? v->str : NULL;
}

/* PyTorch's scalar type names (c10::toString) as wattlas precisions; the
 * integer and boolean tensors (masks, positions) have none: -1, with their
 * element size. */
static int dtype_of(const char *t, int *itemsize)
{
    static const struct { const char *name; int dt, size; } map[] = {
        {"float", WL_DT_FP32, 4},          {"c10::BFloat16", WL_DT_BF16, 2},
        {"c10::Half", WL_DT_FP16, 2},      {"double", WL_DT_FP32, 8},
        {"c10::Float8_e4m3fn", WL_DT_FP8, 1}, {"c10::Float8_e5m2", WL_DT_FP8, 1},
        {"long int", -1, 8},               {"int", -1, 4},
        {"bool", -1, 1},                   {"unsigned char", -1, 1},
        {"signed char", WL_DT_INT8, 1},    {"short int", -1, 2},
    };
    for (size_t i = 0; t && i < sizeof map / sizeof *map; i++)
        if (!strcmp(t, map[i].name)) {
            *itemsize = map[i].size;
            return map[i].dt;
        }
    *itemsize = 4;
    return -2; /* not a tensor type */
}

static double numel_of(const wj_value *dims, int *ok)
{
    double n = 1;
    for (size_t i = 0; i < dims->n; i++) {
        const wj_value *d = &dims->items[i];
        if (d->type != WJ_NUMBER || !(d->num >= 0) || d->num > WL_MAX_TENSOR_ELEMENTS) {
            *ok = 0;
            return 0;
        }
        n *= d->num;
    }
    if (!(n <= WL_MAX_TENSOR_ELEMENTS))
        *ok = 0;
    return n;
}

/* A recorded dimension as an integer, -1 where it is none an integer can
 * hold (converting such a double is undefined behaviour; numel_of refuses
 * the op's dimensions then). */
static long long dim_of(const wj_value *d)
{
    return d->type == WJ_NUMBER && d->num >= 0 && d->num <= WL_MAX_TENSOR_ELEMENTS
               ? (long long)d->num
               : -1;
}

/* Reads an op's inputs: the first PF_IN tensors (or tensor lists). */
static int read_inputs(pf *P, const wj_value *args, pf_op *o, int line)
{
    const wj_value *dims = wj_get(args, "Input Dims");
    const wj_value *types = wj_get(args, "Input type");
    if (!dims || dims->type != WJ_ARRAY || !types || types->type != WJ_ARRAY)
        return 0; /* recorded without shapes: mapped as unknown */
    for (size_t i = 0; i < dims->n && i < types->n && o->nin < PF_IN; i++) {
        const wj_value *d = &dims->items[i];
        const wj_value *t = &types->items[i];
        if (d->type != WJ_ARRAY || t->type != WJ_STRING)
            continue;
        pf_in *in = &o->in[o->nin];
        memset(in, 0, sizeof *in);
        int ok = 1;
        if (!strcmp(t->str, "TensorList") || !strcmp(t->str, "GenericList")) {
            /* the profiler records a list's shapes but not its precision:
             * dt -1 here, the profile's own precision when mapped */
            in->ndim = -2;
            in->dt = -1;
            for (size_t j = 0; j < d->n; j++) {
                if (d->items[j].type != WJ_ARRAY)
                    continue;
                in->numel += numel_of(&d->items[j], &ok);
                in->count++;
            }
        } else {
            int dt = dtype_of(t->str, &in->itemsize);
            /* a scalar, an input that is not a tensor, or a Python number
             * (recorded as a 0-d double or long) */
            if (dt == -2 || (d->n == 0 && (!strcmp(t->str, "double") || !strcmp(t->str, "long int"))))
                continue;
            in->dt = dt;
            if (d->n > PF_DIMS) {
                in->numel = numel_of(d, &ok);
                in->ndim = 1;
                in->dim[0] = ok ? (long long)in->numel : -1;
            } else {
                in->ndim = (int)d->n;
                for (size_t k = 0; k < d->n; k++)
                    in->dim[k] = dim_of(&d->items[k]);
                in->numel = numel_of(d, &ok);
            }
            in->count = 1;
        }
        if (!ok) {
            wl_error_set(P->err, P->source, line, "Input Dims",
                         "a tensor dimension is negative, not a number or absurd "
                         "(more than %g elements)", WL_MAX_TENSOR_ELEMENTS);
            return -1;
        }
        o->nin++;
    }
    return 0;
}

/* The concrete inputs an op's mapping needs: attention's is_causal, a
 * reduction's dimensions. */
static void read_concrete(const wj_value *args, const char *name, pf_op *o)
{
    const wj_value *c = wj_get(args, "Concrete Inputs");
    if (!c || c->type != WJ_ARRAY)
        return;
    /* the position of is_causal in each SDPA backend's signature
     * (aten/src/ATen/native/native_functions.yaml) */
    static const struct { const char *op; size_t at; } causal_at[] = {
        {"aten::_cudnn_attention_forward", 10},  {"aten::_cudnn_attention_backward", 13},
        {"aten::_scaled_dot_product_cudnn_attention", 5},
        {"aten::_scaled_dot_product_flash_attention", 4},
        {"aten::_scaled_dot_product_efficient_attention", 5},
        {"aten::_flash_attention_forward", 8},   {"aten::_flash_attention_backward", 10},
        {"aten::scaled_dot_product_attention", 5},
    };
    for (size_t i = 0; i < sizeof causal_at / sizeof *causal_at; i++)
        if (!strcmp(name, causal_at[i].op) && causal_at[i].at < c->n &&
            c->items[causal_at[i].at].type == WJ_STRING)
            o->causal = !strcmp(c->items[causal_at[i].at].str, "True");
    /* reductions over the dims given second: "[-1]", "[0, 1]" or "2" */
    if (c->n >= 2 && c->items[1].type == WJ_STRING && o->nin > 0 && o->in[0].ndim > 0) {
        const char *s = c->items[1].str;
        const pf_in *x = &o->in[0];
        double n = 1;
        int any = 0, inner = 0;
        while (*s) {
            char *e;
            long v = strtol(s, &e, 10);
            if (e == s) {
                s++;
                continue;
            }
            s = e;
            if (v < 0)
                v += x->ndim;
            if (v < 0 || v >= x->ndim)
                return;
            n *= (double)x->dim[v];
            inner |= v == x->ndim - 1;
            any = 1;
        }
        if (any && n >= 1) {
            o->red_n = n;
            o->red_outer = !inner && x->ndim > 1 && x->dim[x->ndim - 1] > 1;
        }
    }
}

static int is_sync_call(const char *name)
{
    return strstr(name, "Synchronize") != NULL || !strcmp(name, "cudaMemcpy") ||
           !strcmp(name, "cuMemcpyDtoH_v2") || !strcmp(name, "cuCtxSynchronize");
}

static int is_launch_call(const char *name)
{
    return strstr(name, "LaunchKernel") != NULL || strstr(name, "LaunchCooperative") != NULL ||
           strstr(name, "Memset") != NULL || strstr(name, "Memcpy") != NULL ||
           strstr(name, "GraphLaunch") != NULL;
}

/* Helper kernels a library launches beside the main one: they keep their
 * measured time (the op's shape describes the main kernel). */
static int is_aux_kernel(const char *name)
{
    static const char *const aux[] = {"splitKreduce", "lean_reduction", "reduce_head",
                                      "dot_do_o",     "convert_dq",     "GammaBeta"};
    for (size_t i = 0; i < sizeof aux / sizeof *aux; i++)
        if (strstr(name, aux[i]))
            return 1;
    return 0;
}

/* ATen's non-vectorized elementwise kernel (elementwise_kernel, with an
 * offset calculator) is 1, cat's generic batched copy 2, the vectorized
 * and unrolled (contiguous) kernels 0, the foreach ops' multi_tensor_apply
 * 3. */
static int strided_of(const char *name)
{
    if (strstr(name, "multi_tensor_apply_kernel"))
        return 3;
    if (strstr(name, "CatArrayBatchedCopy"))
        return strstr(name, "contig") || strstr(name, "aligned") || strstr(name, "vectorized")
                   ? 0 : 2;
    /* the dynamic-casting path: an operand's dtype is not the op's */
    if (strstr(name, "unrolled_elementwise_kernel") && strstr(name, "LoadWithCast"))
        return 4;
    return strstr(name, "native::elementwise_kernel") != NULL;
}

/* CUTLASS names a kernel by the alignment its loads assume, in elements:
 * align8 (16 bytes of a 16-bit type) or more takes Hopper's TMA kernels'
 * place, align1 to align4 is the fallback for rows that are not 16-byte
 * aligned. The shapes alone miss it when an operand is a transposed view
 * (GPT-2's LM-head weight gradient reads grad_output.t(), whose rows are
 * 50257 elements long). */
static int unaligned_of(const char *name)
{
    return strstr(name, "cutlass") &&
           (strstr(name, "_align1") || strstr(name, "_align2") || strstr(name, "_align4"));
}

static int event(pf *P, const wj_value *e, int line)
{
    if (e->type != WJ_OBJECT)
        return 0;
    const char *cat = str_of(e, "cat"), *name = str_of(e, "name"), *ph = str_of(e, "ph");
    if (!cat || !name || !ph || strcmp(ph, "X"))
        return 0;
    const wj_value *args = wj_get(e, "args");
    double ts, dur;
    if (num_of(e, "ts", &ts) || num_of(e, "dur", &dur)) {
        wl_error_set(P->err, P->source, line, "ts", "a complete event needs numeric ts and dur");
        return -1;
    }
    if (!(dur >= 0) || dur > 3.6e9) {
        wl_error_set(P->err, P->source, line, "dur", "must be 0 to 3.6e9 us (an hour), got %g",
                     dur);
        return -1;
    }
    int type = !strcmp(cat, "kernel") ? DEV_KERNEL : !strcmp(cat, "gpu_memset") ? DEV_MEMSET
             : !strcmp(cat, "gpu_memcpy") ? DEV_MEMCPY : -1;
    double ext = -1, corr = -1, tid = 0;
    if (args && args->type == WJ_OBJECT) {
        num_of(args, "External id", &ext);
        num_of(args, "correlation", &corr);
    }
    num_of(e, "tid", &tid);
    /* ids are integers the profiler counts up, -1 for none, and a thread's
     * id is the system's; a double holds them exactly within 2^53 */
    const struct {
        const char *field;
        double v, lo;
    } ids[3] = {{"External id", ext, -1}, {"correlation", corr, -1}, {"tid", tid, -0x1p53}};
    for (int k = 0; k < 3; k++)
        if (!(ids[k].v >= ids[k].lo && ids[k].v <= 0x1p53)) {
            wl_error_set(P->err, P->source, line, ids[k].field,
                         "must be an integer id from %.0f to 2^53, got %g", ids[k].lo, ids[k].v);
            return -1;
        }
    if (type >= 0) {
        if (wl_core_pf_grow((void **)&P->dev, &P->capdev, P->ndev, sizeof *P->dev))
            return -2;
        P->dev[P->ndev++] = (pf_dev){.ts = ts, .dur = dur, .ext = (long long)ext,
                                     .corr = (long long)corr, .type = type,
                                     .aux = type == DEV_KERNEL && is_aux_kernel(name),
                                     .dtoh = type == DEV_MEMCPY && strstr(name, "DtoH") != NULL,
                                     .strided = type == DEV_KERNEL ? strided_of(name) : 0,
                                     .unaligned = type == DEV_KERNEL && unaligned_of(name)};
        return 0;
    }
    if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
        int sync = is_sync_call(name);
        if (!sync && !is_launch_call(name))
            return 0;
        if (wl_core_pf_grow((void **)&P->call, &P->capcall, P->ncall, sizeof *P->call))
            return -2;
        P->call[P->ncall] = (pf_call){.ts = ts, .dur = dur, .corr = (long long)corr,
                                      .sync = sync, .tid = (long long)tid};
        if (!sync && corr >= 0 &&
            index_put(&P->chash, &P->chcap, call_key, P, P->ncall + 1, P->ncall))
            return -2;
        P->ncall++;
        return 0;
    }
    if (!strcmp(cat, "overhead")) {
        if (wl_core_pf_grow((void **)&P->ovh, &P->capovh, P->novh, sizeof *P->ovh))
            return -2;
        P->ovh[P->novh++] = (pf_range){ts, ts + dur};
        return 0;
    }
    if (!strcmp(cat, "cpu_op")) {
        if (wl_core_pf_grow((void **)&P->opts, &P->capopts, P->nopts, sizeof *P->opts))
            return -2;
        P->opts[P->nopts++] = ts;
    }
    if (!strcmp(cat, "user_annotation") && !strncmp(name, "Optimizer.step", 14)) {
        if (wl_core_pf_grow((void **)&P->opt, &P->capopt, P->nopt, sizeof *P->opt))
            return -2;
        P->opt[P->nopt++] = (pf_range){ts, ts + dur};
        return 0;
    }
    if (strcmp(cat, "cpu_op") || ext < 0 || !args || args->type != WJ_OBJECT)
        return 0;
    if (wl_core_pf_grow((void **)&P->op, &P->capop, P->nop, sizeof *P->op))
        return -2;
    pf_op *o = &P->op[P->nop];
    memset(o, 0, sizeof *o);
    o->ext = (long long)ext;
    o->tid = (long long)tid;
    o->ts = ts;
    if ((o->name = intern(P, name)) < 0)
        return -2;
    if (read_inputs(P, args, o, line))
        return -1;
    read_concrete(args, name, o);
    if (index_put(&P->ohash, &P->ohcap, op_key, P, P->nop + 1, P->nop))
        return -2;
    P->nop++;
    return 0;
}

/* Reads traceEvents one event at a time, and the top-level
 * "wattlas": {"sm_clock_mhz": N, "power_limit_w": W, ...} the measurement
 * harness adds. */
static int read_events(pf *P, scan *c)
{
    char key[64];
    int found = 0;
    sc_ws(c);
    if (!HAVE(c) || *c->s != '{') {
        wl_error_set(P->err, P->source, c->line, "", "a profile is a JSON object with traceEvents");
        return -1;
    }
    c->s++;
    sc_ws(c);
    while (HAVE(c) && *c->s != '}') {
        if (sc_key(c, key, sizeof key)) {
            wl_error_set(P->err, P->source, c->line, "", "malformed JSON: expected a key");
            return -1;
        }
        if (!strcmp(key, "traceEvents") && found) {
            /* a second list would add its kernels to the first's */
            wl_error_set(P->err, P->source, c->line, "traceEvents",
                         "a second traceEvents list (the profile holds one)");
            return -1;
        }
        if (!strcmp(key, "traceEvents") && HAVE(c) && *c->s == '[') {
            found = 1;
            c->s++;
            sc_ws(c);
            while (HAVE(c) && *c->s != ']') {
                int line = c->line;
                c->mark = c->s; /* kept whole across a refill */
                if (sc_skip(c)) {
                    wl_error_set(P->err, P->source, line, "traceEvents", "truncated event");
                    return -1;
                }
                const char *a = c->mark;
                c->mark = NULL; /* the window moves on only at the next refill */
                char msg[128];
                int eline = 0;
                /* only complete events of the kinds read here are parsed */
                size_t n = (size_t)(c->s - a);
                wj_value *v = wj_parse(a, n, &eline, msg, sizeof msg);
                if (!v) {
                    wl_error_set(P->err, P->source, line + (eline > 0 ? eline - 1 : 0),
                                 "traceEvents", "%s", msg);
                    return -1;
                }
                int r = event(P, v, line);
                wj_free(v);
                if (r == -2) {
                    wl_error_set(P->err, P->source, line, "", "out of memory");
                    return -2;
                }
                if (r)
                    return -1;
                sc_ws(c);
                if (HAVE(c) && *c->s == ',') {
                    c->s++;
                    sc_ws(c);
                } else if (HAVE(c) && *c->s != ']') {
                    wl_error_set(P->err, P->source, c->line, "traceEvents",
                                 "malformed JSON: expected , or ] after an event");
                    return -1;
                }
            }
            if (!HAVE(c)) {
                wl_error_set(P->err, P->source, c->line, "traceEvents", "truncated list");
                return -1;
            }
            c->s++;
        } else if (!strcmp(key, "wattlas") && HAVE(c) && *c->s == '{') {
            int line = c->line;
            c->mark = c->s;
            if (sc_skip(c)) {
                wl_error_set(P->err, P->source, line, "wattlas", "truncated object");
                return -1;
            }
            const char *a = c->mark;
            c->mark = NULL;
            char msg[128];
            int eline = 0;
            wj_value *v = wj_parse(a, (size_t)(c->s - a), &eline, msg, sizeof msg);
            if (!v) {
                wl_error_set(P->err, P->source, line, "wattlas", "%s", msg);
                return -1;
            }
            double f;
            if (!num_of(v, "sm_clock_mhz", &f)) {
                if (!(f > 0 && f <= 1e4)) {
                    wj_free(v);
                    wl_error_set(P->err, P->source, line, "sm_clock_mhz",
                                 "must be in (0, 10000] MHz, got %g", f);
                    return -1;
                }
                P->clock_mhz = f;
            }
            const char *gname = str_of(v, "gpu");
            if (gname) {
                size_t gl = strlen(gname);
                if (!gl || gl >= sizeof P->gpu) {
                    wj_free(v);
                    wl_error_set(P->err, P->source, line, "gpu",
                                 "a GPU name of 1 to %zu characters, got %zu", sizeof P->gpu - 1,
                                 gl);
                    return -1;
                }
                memcpy(P->gpu, gname, gl + 1);
            }
            if (!num_of(v, "power_limit_w", &f)) {
                if (!(f >= 1 && f <= 1e5)) {
                    wj_free(v);
                    wl_error_set(P->err, P->source, line, "power_limit_w",
                                 "must be in [1, 100000] W, got %g", f);
                    return -1;
                }
                P->limit_w = f;
            }
            if (!num_of(v, "wall_ms_per_step", &f)) {
                if (!(f > 0 && f <= 3.6e6)) {
                    wj_free(v);
                    wl_error_set(P->err, P->source, line, "wall_ms_per_step",
                                 "must be in (0, 3.6e6] ms, got %g", f);
                    return -1;
                }
                P->wall_ms = f;
            }
            wj_free(v);
        } else if (sc_skip(c)) {
            wl_error_set(P->err, P->source, c->line, key, "truncated value");
            return -1;
        }
        sc_ws(c);
        if (HAVE(c) && *c->s == ',') {
            c->s++;
            sc_ws(c);
        } else if (HAVE(c) && *c->s != '}') {
            wl_error_set(P->err, P->source, c->line, key,
                         "malformed JSON: expected , or } after the value");
            return -1;
        }
    }
    /* the object closes, and nothing but white space follows: a file cut
     * short, or two files run together, is not a profile */
    if (!HAVE(c)) {
        wl_error_set(P->err, P->source, c->line, "", "truncated: the profile's object does not "
                                                    "close");
        return -1;
    }
    c->s++;
    sc_ws(c);
    if (c->s < c->end) {
        wl_error_set(P->err, P->source, c->line, "", "text after the profile's closing }");
        return -1;
    }
    if (!found) {
        wl_error_set(P->err, P->source, 1, "traceEvents",
                     "not a PyTorch profiler trace (no traceEvents list)");
        return -1;
    }
    return 0;
}

int wl_core_pf_read(pf *P, const char *text, size_t len, wl_core_zin *in)
{
    scan c = {.s = text, .end = text + len, .line = 1, .in = in};
    if (in) {
        c.cap = len > SC_CHUNK ? 2 * len : 2 * (size_t)SC_CHUNK;
        if (!(c.buf = malloc(c.cap))) {
            wl_error_set(P->err, P->source, 0, "", "out of memory");
            return -2;
        }
        memcpy(c.buf, text, len);
        c.s = c.buf;
        c.end = c.buf + len;
    }
    int r = read_events(P, &c);
    /* a stream that failed (a corrupt gzip member, bytes after it, a
     * read error) says so, not the truncation it left the parser */
    if (c.failed) {
        *P->err = c.ioerr;
        if (!P->err->source[0])
            wl_error_locate(P->err, P->source, c.line);
        r = c.failed == SC_IO ? -3 : c.failed == SC_NOMEM ? -2 : -1;
    }
    free(c.buf);
    return r;
}

void wl_core_pf_free(pf *P)
{
    free(P->dev);
    free(P->call);
    free(P->op);
    free(P->opt);
    free(P->opts);
    free(P->ovh);
    for (size_t i = 0; i < P->nnames; i++)
        free(P->names[i]);
    free(P->names);
    free(P->nhash);
    free(P->ohash);
    free(P->chash);
}
