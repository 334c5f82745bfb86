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
 * The events are read one at a time from the text: a 65 MB decode trace
 * (300,000 events) is never held as one parsed tree. */
#include "core_internal.h"
#include "json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- reading a file that may be gzipped -------------------------------- */

int wl_core_read_file_z(const char *path, char **out, size_t *len, wl_error *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        wl_error_set(err, path, 0, "", "cannot open: %s", strerror(errno));
        return WL_EIO;
    }
    unsigned char magic[2] = {0, 0};
    size_t got = fread(magic, 1, 2, f);
    fclose(f);
    if (got < 2 || magic[0] != 0x1f || magic[1] != 0x8b)
        return wl_core_read_file(path, out, len, err);
    gzFile z = gzopen(path, "rb");
    if (!z) {
        wl_error_set(err, path, 0, "", "cannot open: %s", strerror(errno));
        return WL_EIO;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? WL_OK : WL_ENOMEM;
    while (!rc) {
        size_t want = cap - n - 1;
        unsigned chunk = want > (1u << 30) ? (1u << 30) : (unsigned)want;
        int r = gzread(z, buf + n, chunk);
        if (r < 0) {
            int zerr = 0;
            const char *msg = gzerror(z, &zerr);
            wl_error_set(err, path, 0, "", "not a readable gzip file: %s", msg ? msg : "?");
            rc = WL_EIO;
            break;
        }
        n += (size_t)r;
        if (r == 0)
            break;
        if (n < cap - 1)
            continue;
        /* a gzip bomb, or an input no profile reaches */
        if (cap >= WL_MAX_FILE_BYTES) {
            wl_error_set(err, path, 0, "", "larger than %d MiB uncompressed",
                         WL_MAX_FILE_BYTES >> 20);
            rc = WL_EIO;
            break;
        }
        size_t nc = cap * 2;
        char *nb = realloc(buf, nc);
        if (!nb) {
            rc = WL_ENOMEM;
            break;
        }
        buf = nb;
        cap = nc;
    }
    gzclose(z);
    if (rc) {
        free(buf);
        if (rc == WL_ENOMEM)
            wl_error_set(err, path, 0, "", "out of memory");
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return WL_OK;
}

/* ---- a scanner over the event list -------------------------------------- */

typedef struct {
    const char *s, *end;
    int line;
} scan;

static void sc_ws(scan *c)
{
    while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\r' || *c->s == '\n')) {
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
    while (c->s < c->end) {
        char ch = *c->s;
        if (ch == '"') {
            c->s++;
            while (c->s < c->end && *c->s != '"') {
                if (*c->s == '\\' && c->s + 1 < c->end)
                    c->s++;
                else if (*c->s == '\n')
                    c->line++;
                c->s++;
            }
            if (c->s >= c->end)
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
    if (c->s >= c->end || *c->s != '"')
        return -1;
    c->s++;
    size_t k = 0;
    while (c->s < c->end && *c->s != '"') {
        if (*c->s == '\\' && c->s + 1 < c->end)
            c->s++;
        if (k + 1 < n)
            buf[k++] = *c->s;
        c->s++;
    }
    buf[k] = '\0';
    if (c->s >= c->end)
        return -1;
    c->s++;
    sc_ws(c);
    if (c->s >= c->end || *c->s != ':')
        return -1;
    c->s++;
    sc_ws(c);
    return 0;
}

/* ---- what is kept of the events ------------------------------------------ */

#define PF_IN 4    /* tensor inputs kept per op */
#define PF_DIMS 6  /* dimensions kept per tensor */

enum { DEV_KERNEL = 0, DEV_MEMSET, DEV_MEMCPY };

typedef struct {
    double ts, dur;
    long long ext, corr;
    int type;
    int aux; /* a helper kernel of a library call (split-K reduction, ...) */
    int dtoh;
    int strided; /* ATen's elementwise path, from the kernel's name (wl_kernel) */
} pf_dev;

typedef struct {
    double ts, dur;
    long long corr;
    int sync;
    long long tid;
} pf_call;

/* A tensor input: ndim >= 0 with dims; -1 not a tensor; -2 a tensor list
 * (numel: the list's total elements, count: its tensors). */
typedef struct {
    int ndim;
    int dt; /* wl_dtype, or -1 for integer/bool tensors */
    int itemsize;
    long long dim[PF_DIMS];
    double numel;
    long long count;
} pf_in;

typedef struct {
    long long ext;
    long long tid;
    double ts;
    int name;       /* index into the interned names */
    int nin;
    pf_in in[PF_IN];
    int causal;     /* attention: is_causal among the concrete inputs */
    double red_n;   /* reductions: elements per reduced row (0: unknown) */
    int nkernels;   /* kernels it launched (filled after reading) */
    int seen;       /* of them walked so far */
} pf_op;

typedef struct {
    double ts, end;
} pf_range;

typedef struct {
    const char *source;
    wl_error *err;
    int rc;
    pf_dev *dev;
    size_t ndev, capdev;
    pf_call *call;
    size_t ncall, capcall;
    pf_op *op;
    size_t nop, capop;
    pf_range *opt;
    size_t nopt, capopt;
    char **names;
    size_t nnames, capnames;
    size_t *ohash;  /* ext -> op + 1 */
    size_t ohcap;
    size_t *chash;  /* correlation -> call + 1 (launch calls) */
    size_t chcap;
    double clock_mhz;
    wl_dtype main_dt; /* the precision of the profile's matmuls */
    double *opts;     /* start times of every recorded cpu_op, sorted */
    size_t nopts, capopts;
    pf_range *ovh;    /* the profiler's own stalls ("overhead" events) */
    size_t novh, capovh;
    double wall_ms;   /* the unprofiled wall time per step, when stated */
    double per_op_us; /* the profiler's cost per recorded op taken off */
} pf;

/* Host time before a device event: from a to b on the host's clock, the
 * ops recorded in it and the profiler's stalls in it; sync: the host first
 * waited for the GPU. */
typedef struct {
    double us, ovh_us;
    double ops;
    int sync;
    size_t before; /* the device event it precedes */
} pf_seg;

static int grow(void **a, size_t *cap, size_t n, size_t elem)
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

static int intern(pf *P, const char *s)
{
    for (size_t i = P->nnames; i-- > 0;)
        if (!strcmp(P->names[i], s))
            return (int)i;
    if (P->nnames >= 100000 || grow((void **)&P->names, &P->capnames, P->nnames, sizeof *P->names))
        return -1;
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (!c)
        return -1;
    memcpy(c, s, n + 1);
    P->names[P->nnames] = c;
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

static const pf_op *op_of(const pf *P, long long ext)
{
    if (!P->ohcap)
        return NULL;
    for (size_t s = hash_ll(ext) & (P->ohcap - 1); P->ohash[s]; s = (s + 1) & (P->ohcap - 1))
        if (P->op[P->ohash[s] - 1].ext == ext)
            return &P->op[P->ohash[s] - 1];
    return NULL;
}

static const pf_call *call_of(const pf *P, long long corr)
{
    if (!P->chcap)
        return NULL;
    for (size_t s = hash_ll(corr) & (P->chcap - 1); P->chash[s]; s = (s + 1) & (P->chcap - 1))
        if (P->call[P->chash[s] - 1].corr == corr)
            return &P->call[P->chash[s] - 1];
    return NULL;
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
                in->dim[0] = (long long)in->numel;
            } else {
                in->ndim = (int)d->n;
                for (size_t k = 0; k < d->n; k++)
                    in->dim[k] = d->items[k].type == WJ_NUMBER ? (long long)d->items[k].num : -1;
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
        int any = 0;
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
            any = 1;
        }
        if (any && n >= 1)
            o->red_n = n;
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
 * and unrolled (contiguous) kernels 0. */
static int strided_of(const char *name)
{
    if (strstr(name, "CatArrayBatchedCopy"))
        return strstr(name, "contig") || strstr(name, "aligned") || strstr(name, "vectorized")
                   ? 0 : 2;
    return strstr(name, "native::elementwise_kernel") != NULL;
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
    if (type >= 0) {
        if (grow((void **)&P->dev, &P->capdev, P->ndev, sizeof *P->dev))
            return -2;
        P->dev[P->ndev++] = (pf_dev){.ts = ts, .dur = dur, .ext = (long long)ext,
                                     .corr = (long long)corr, .type = type,
                                     .aux = type == DEV_KERNEL && is_aux_kernel(name),
                                     .dtoh = type == DEV_MEMCPY && strstr(name, "DtoH") != NULL,
                                     .strided = type == DEV_KERNEL ? strided_of(name) : 0};
        return 0;
    }
    if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
        int sync = is_sync_call(name);
        if (!sync && !is_launch_call(name))
            return 0;
        if (grow((void **)&P->call, &P->capcall, P->ncall, sizeof *P->call))
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
        if (grow((void **)&P->ovh, &P->capovh, P->novh, sizeof *P->ovh))
            return -2;
        P->ovh[P->novh++] = (pf_range){ts, ts + dur};
        return 0;
    }
    if (!strcmp(cat, "cpu_op")) {
        if (grow((void **)&P->opts, &P->capopts, P->nopts, sizeof *P->opts))
            return -2;
        P->opts[P->nopts++] = ts;
    }
    if (!strcmp(cat, "user_annotation") && !strncmp(name, "Optimizer.step", 14)) {
        if (grow((void **)&P->opt, &P->capopt, P->nopt, sizeof *P->opt))
            return -2;
        P->opt[P->nopt++] = (pf_range){ts, ts + dur};
        return 0;
    }
    if (strcmp(cat, "cpu_op") || ext < 0 || !args || args->type != WJ_OBJECT)
        return 0;
    if (grow((void **)&P->op, &P->capop, P->nop, sizeof *P->op))
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
 * "wattlas": {"sm_clock_mhz": N} the measurement harness adds. */
static int read_events(pf *P, const char *text, size_t len)
{
    scan c = {text, text + len, 1};
    char key[64];
    int found = 0;
    sc_ws(&c);
    if (c.s >= c.end || *c.s != '{') {
        wl_error_set(P->err, P->source, c.line, "", "a profile is a JSON object with traceEvents");
        return -1;
    }
    c.s++;
    sc_ws(&c);
    while (c.s < c.end && *c.s != '}') {
        if (sc_key(&c, key, sizeof key)) {
            wl_error_set(P->err, P->source, c.line, "", "malformed JSON: expected a key");
            return -1;
        }
        if (!strcmp(key, "traceEvents") && c.s < c.end && *c.s == '[') {
            found = 1;
            c.s++;
            sc_ws(&c);
            while (c.s < c.end && *c.s != ']') {
                const char *a = c.s;
                int line = c.line;
                if (sc_skip(&c)) {
                    wl_error_set(P->err, P->source, line, "traceEvents", "truncated event");
                    return -1;
                }
                char msg[128];
                int eline = 0;
                /* only complete events of the kinds read here are parsed */
                size_t n = (size_t)(c.s - a);
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
                sc_ws(&c);
                if (c.s < c.end && *c.s == ',') {
                    c.s++;
                    sc_ws(&c);
                }
            }
            if (c.s >= c.end) {
                wl_error_set(P->err, P->source, c.line, "traceEvents", "truncated list");
                return -1;
            }
            c.s++;
        } else if (!strcmp(key, "wattlas") && c.s < c.end && *c.s == '{') {
            const char *a = c.s;
            int line = c.line;
            if (sc_skip(&c)) {
                wl_error_set(P->err, P->source, line, "wattlas", "truncated object");
                return -1;
            }
            char msg[128];
            int eline = 0;
            wj_value *v = wj_parse(a, (size_t)(c.s - a), &eline, msg, sizeof msg);
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
        } else if (sc_skip(&c)) {
            wl_error_set(P->err, P->source, c.line, key, "truncated value");
            return -1;
        }
        sc_ws(&c);
        if (c.s < c.end && *c.s == ',') {
            c.s++;
            sc_ws(&c);
        }
    }
    if (!found) {
        wl_error_set(P->err, P->source, 1, "traceEvents",
                     "not a PyTorch profiler trace (no traceEvents list)");
        return -1;
    }
    return 0;
}

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
        if (d->aux)
            row_kernel(k, WL_K_REDUCE, 2.0 * x->numel, 2.0 * x->numel / last, dt);
        else
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
        ew_kernel(k, op, x->numel / nk, P->main_dt);
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Recorded ops whose start lies in [a, b). */
static double ops_in(const pf *P, double a, double b)
{
    size_t lo = 0, hi = P->nopts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (P->opts[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo;
    hi = P->nopts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (P->opts[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (double)(lo - first);
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
            pf_op *o = (pf_op *)op_of(P, P->dev[i].ext);
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
        const pf_call *c = call_of(P, P->dev[i].corr);
        const pf_op *o = op_of(P, P->dev[i].ext);
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
     * distinct kernel), the others at their own times */
    wl_kernel *ks = malloc(P->ndev * sizeof *ks);
    double *sum = NULL;
    long long *cnt = NULL;
    pf_seg *seg = NULL;
    pf_miss *miss = NULL;
    size_t nmiss = 0, capmiss = 0;
    wl_core_workload *tmp = wl_core_workload_create("tmp"), *wl = NULL;
    int rc = ks && tmp ? WL_OK : WL_ENOMEM;
    long long mapped = 0, unmapped = 0, memsets = 0, memcpys = 0;
    double busy = 0, other_ms = 0;
    for (size_t i = 0; !rc && i < P->ndev; i++) {
        const pf_dev *d = &P->dev[i];
        pf_op *o = (pf_op *)op_of(P, d->ext);
        wl_kernel *k = &ks[i];
        int ok = d->type == DEV_KERNEL && map_kernel(P, o, d, k);
        if (ok && k->kind == WL_K_ELEMENTWISE)
            k->strided = d->strided;
        wl_error scratch = {0};
        if (ok && wl_kernel_check(k, P->source, 0, &scratch))
            ok = 0; /* a shape the model cannot take: kept as measured */
        if (o)
            o->seen++;
        int phase = WL_PHASE_FORWARD;
        if (o && have_main && o->tid != main_tid)
            phase = WL_PHASE_BACKWARD;
        for (size_t r = 0; o && r < P->nopt; r++)
            if (o->ts >= P->opt[r].ts && o->ts <= P->opt[r].end)
                phase = WL_PHASE_OPTIMIZER;
        if (!ok) {
            memset(k, 0, sizeof *k);
            k->kind = WL_K_MEASURED;
            k->batch = 1;
            k->n = 1;
            k->measured_us = d->dur > 0.01 ? round(d->dur * 100.0) / 100.0 : 0.01;
            if (d->type == DEV_MEMSET) {
                memsets++;
            } else if (d->type == DEV_MEMCPY) {
                memcpys++;
            } else {
                unmapped++;
                other_ms += d->dur * 1e-3;
                int nm = o ? o->name : -1;
                size_t j = 0;
                while (j < nmiss && miss[j].name != nm)
                    j++;
                if (j == nmiss) {
                    if (grow((void **)&miss, &capmiss, nmiss, sizeof *miss)) {
                        rc = WL_ENOMEM;
                        break;
                    }
                    miss[nmiss++] = (pf_miss){nm, 0};
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
        cnt = calloc(nu ? nu : 1, sizeof *cnt);
        if (!sum || !cnt)
            rc = WL_ENOMEM;
    }
    for (size_t i = 0, j = 0; !rc && i < P->ndev; i++)
        if (ks[i].kind != WL_K_MEASURED) {
            size_t u = tmp->uidx[j++];
            sum[u] += P->dev[i].dur;
            cnt[u]++;
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
            qsort(P->opts, P->nopts, sizeof *P->opts, cmp_double);
        seg = malloc((2 * P->ndev + P->ncall + 1) * sizeof *seg);
        if (!seg)
            rc = WL_ENOMEM;
    }
    size_t ci = 0, nseg = 0;
    double cursor = NAN;
    int pending_sync = 0;
    for (size_t i = 0; !rc && i < P->ndev; i++) {
        const pf_call *launch = call_of(P, P->dev[i].corr);
        if (launch) {
            if (isnan(cursor))
                cursor = launch->ts;
            /* the synchronisations the host made since the last launch */
            for (; ci < P->ncall && P->call[ci].ts < launch->ts; ci++) {
                const pf_call *c = &P->call[ci];
                if (!c->sync || c->ts < cursor)
                    continue;
                seg[nseg++] = host_seg(P, cursor, c->ts, pending_sync, i);
                pending_sync = 1;
                cursor = c->ts + c->dur;
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
        wl_kernel k = ks[i];
        if (k.kind != WL_K_MEASURED) {
            size_t u = tmp->uidx[j++];
            double m = sum[u] / (double)cnt[u];
            k.measured_us = m > 1e-3 ? m : 1e-3;
            k.measured_mhz = P->clock_mhz;
        }
        for (; si < nseg && seg[si].before == i; si++)
            add_gap(wl, seg_us(&seg[si], per_op), seg[si].sync, k.phase, &rc);
        if (!rc && wl_core_workload_add(wl, &k))
            rc = WL_ENOMEM;
    }
    if (!rc) {
        wl_core_workload_set_host_timed(wl, 1);
        /* what the user should know: kernels kept at their measured time */
        char *nb = wl->note;
        size_t nn = sizeof wl->note;
        int w = snprintf(nb, nn,
                         "profile at %g MHz: %lld kernels (%.3f ms busy), %lld mapped by "
                         "their aten op, %lld kept at their measured time (%.3f ms)",
                         P->clock_mhz, kernels, busy, mapped, unmapped, other_ms);
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
                     "%.2f us per recorded op (%s)", P->per_op_us,
                     P->wall_ms > 0 ? "solved from its wall_ms_per_step" : "default");
        *out = wl;
        wl = NULL;
    } else if (rc == WL_ENOMEM) {
        wl_error_set(P->err, P->source, 0, "", "out of memory");
    }
    wl_core_workload_free(wl);
    wl_core_workload_free(tmp);
    free(ks);
    free(seg);
    free(sum);
    free(cnt);
    free(miss);
    return rc;
}

static void pf_free(pf *P)
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
    free(P->ohash);
    free(P->chash);
}

int wl_core_profile_parse(const char *text, size_t len, const char *source, double clock_mhz,
                          wl_core_workload **out, wl_error *err)
{
    *out = NULL;
    pf P = {.source = source, .err = err};
    int rc = WL_OK;
    int r = read_events(&P, text, len);
    if (r)
        rc = r == -2 ? WL_ENOMEM : WL_EPARSE;
    if (!rc) {
        if (clock_mhz > 0)
            P.clock_mhz = clock_mhz;
        else if (!(P.clock_mhz > 0))
            P.clock_mhz = clock_from_name(source);
        if (!(P.clock_mhz > 0) || P.clock_mhz > 1e4) {
            wl_error_set(err, source, 0, "sm_clock_mhz",
                         "the profile does not say the SM clock it ran at: name it "
                         "..._<MHz>mhz.json[.gz], or add \"wattlas\": {\"sm_clock_mhz\": N} "
                         "beside traceEvents (python3 -m wattlas.measure profile does)");
            rc = WL_EPARSE;
        }
    }
    if (!rc)
        rc = build(&P, out);
    pf_free(&P);
    return rc;
}

int wl_core_text_is_profile(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
        i++;
    return i < len && text[i] == '{';
}
