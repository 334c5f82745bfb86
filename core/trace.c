/* Kernel-trace import, format of shared/data/traces: a JSON list in launch
 * order of [params, tags] pairs. */
#include "core_internal.h"
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int get_num(const wj_value *obj, const char *key, double *out, const char *src,
                   int line, wl_error *err)
{
    const wj_value *v = wj_get(obj, key);
    if (!v || (v->type != WJ_NUMBER && v->type != WJ_BOOL)) {
        wl_error_set(err, src, line, key, "missing or not a number");
        return WL_EPARSE;
    }
    *out = v->num;
    return WL_OK;
}

static int get_count(const wj_value *obj, const char *key, long long *out, const char *src,
                     int line, wl_error *err)
{
    double d;
    if (get_num(obj, key, &d, src, line, err))
        return WL_EPARSE;
    if (!(d >= 1) || d > WL_MAX_TENSOR_ELEMENTS || d != floor(d)) {
        wl_error_set(err, src, line, key, "must be a positive integer, got %g", d);
        return WL_EPARSE;
    }
    *out = (long long)d;
    return WL_OK;
}

static int get_dtype(const wj_value *obj, const char *key, wl_dtype *out, const char *src,
                     int line, wl_error *err)
{
    const wj_value *v = wj_get(obj, key);
    if (!v || v->type != WJ_STRING || wl_dtype_parse(v->str, out)) {
        wl_error_set(err, src, line, key, "missing or unknown precision (fp32, tf32, fp16, bf16, fp8, int8)");
        return WL_EPARSE;
    }
    return WL_OK;
}

static int parse_entry(const wj_value *e, const char *src, wl_kernel *k, wl_error *err)
{
    int line = e->line;
    if (e->type != WJ_ARRAY || e->n != 2 || e->items[0].type != WJ_OBJECT ||
        e->items[1].type != WJ_ARRAY || e->items[1].n < 1 ||
        e->items[1].items[0].type != WJ_STRING) {
        wl_error_set(err, src, line, "", "entry must be [params-object, [kind, ...]]");
        return WL_EPARSE;
    }
    const wj_value *prm = &e->items[0];
    const char *kind = e->items[1].items[0].str;
    memset(k, 0, sizeof *k);
    if (strcmp(kind, "gemm") == 0 || strcmp(kind, "conv2d") == 0) {
        k->kind = WL_K_GEMM;
        double tc = 0;
        if (get_count(prm, "batch", &k->batch, src, line, err) ||
            get_count(prm, "dimM", &k->m, src, line, err) ||
            get_count(prm, "dimN", &k->n, src, line, err) ||
            get_count(prm, "dimK", &k->k, src, line, err) ||
            get_dtype(prm, "precM", &k->in_dtype, src, line, err) ||
            get_dtype(prm, "precA", &k->acc_dtype, src, line, err) ||
            get_num(prm, "useTensorCore", &tc, src, line, err))
            return WL_EPARSE;
        k->tensor_core = tc != 0;
        if (kind[0] == 'c') {
            double rs = 0, stride = 0;
            if (get_num(prm, "rs", &rs, src, line, err) ||
                get_num(prm, "stride", &stride, src, line, err))
                return WL_EPARSE;
            if (!(rs >= 1 && rs <= 64 && stride >= 1 && stride <= 64)) {
                wl_error_set(err, src, line, "rs", "conv2d needs 1 <= rs, stride <= 64");
                return WL_EPARSE;
            }
            k->conv_taps = (int)(rs * rs);
            k->conv_stride = (int)stride;
        }
    } else if (strcmp(kind, "softmax") == 0 || strcmp(kind, "layernorm") == 0 ||
               strcmp(kind, "rmsnorm") == 0) {
        k->kind = kind[0] == 's' ? WL_K_SOFTMAX : (kind[0] == 'l' ? WL_K_LAYERNORM : WL_K_RMSNORM);
        if (get_count(prm, "batch", &k->batch, src, line, err) ||
            get_count(prm, "dim", &k->n, src, line, err) ||
            get_dtype(prm, "prec", &k->in_dtype, src, line, err))
            return WL_EPARSE;
        k->acc_dtype = WL_DT_FP32;
    } else if (strcmp(kind, "elementwise") == 0) {
        k->kind = WL_K_ELEMENTWISE;
        const wj_value *op = wj_get(prm, "op");
        if (!op || op->type != WJ_STRING || wl_ew_op_parse(op->str, &k->op)) {
            wl_error_set(err, src, line, "op", "missing or unknown elementwise op");
            return WL_EPARSE;
        }
        k->batch = 1;
        if (get_count(prm, "dim", &k->n, src, line, err) ||
            get_dtype(prm, "prec", &k->in_dtype, src, line, err))
            return WL_EPARSE;
        k->acc_dtype = WL_DT_FP32;
    } else if (strcmp(kind, "flash_attention") == 0) {
        k->kind = WL_K_ATTN_FLASH;
        double causal = 0;
        if (get_count(prm, "batch", &k->batch, src, line, err) ||
            get_count(prm, "dimM", &k->m, src, line, err) ||
            get_count(prm, "dimN", &k->n, src, line, err) ||
            get_count(prm, "dimK", &k->k, src, line, err) ||
            get_dtype(prm, "precM", &k->in_dtype, src, line, err) ||
            get_num(prm, "causal", &causal, src, line, err))
            return WL_EPARSE;
        k->tensor_core = 1;
        k->causal = causal != 0;
        k->acc_dtype = WL_DT_FP32;
        /* optional: query heads per key/value head (grouped-query attention) */
        long long g = 1;
        if (wj_get(prm, "groups") && get_count(prm, "groups", &g, src, line, err))
            return WL_EPARSE;
        k->groups = g > 1 ? (int)(g > 1024 ? 1025 : g) : 0; /* range checked with the kernel */
    } else if (strcmp(kind, "gap") == 0) {
        k->kind = WL_K_GAP;
        if (get_num(prm, "us", &k->gap_us, src, line, err))
            return WL_EPARSE;
        if (!(k->gap_us >= 0) || !isfinite(k->gap_us)) {
            wl_error_set(err, src, line, "us", "must be >= 0");
            return WL_EPARSE;
        }
    } else {
        wl_error_set(err, src, line, "kind", "unsupported kernel kind '%.60s'", kind);
        return WL_EUNSUPPORTED;
    }
    /* the size limits of native models apply to traces too */
    return wl_kernel_check(k, src, line, err) ? WL_EPARSE : WL_OK;
}

typedef struct {
    wl_core_workload *wl;
    const char *source;
    wl_error *err;
} trace_reader;

/* One entry of the list, as it is read: a kernel added to the workload. */
static int add_entry(void *user, const wj_value *e)
{
    trace_reader *r = user;
    wl_kernel k;
    int rc = parse_entry(e, r->source, &k, r->err);
    if (!rc && wl_core_workload_add(r->wl, &k)) {
        wl_error_set(r->err, r->source, e->line, "", "out of memory");
        rc = WL_ENOMEM;
    }
    return rc;
}

int wl_core_trace_parse(const char *text, size_t len, const char *source,
                        wl_core_workload **out, wl_error *err)
{
    *out = NULL;
    const char *base = strrchr(source, '/');
    wl_core_workload *wl = wl_core_workload_create(base ? base + 1 : source);
    if (!wl)
        return WL_ENOMEM;
    char msg[200];
    int line = 0;
    size_t n = 0;
    trace_reader r = {.wl = wl, .source = source, .err = err};
    int rc = wj_parse_list(text, len, add_entry, &r, &n, &line, msg, sizeof msg);
    if (rc == -1) {
        wl_error_set(err, source, line, "", "%s", msg);
        rc = WL_EPARSE;
    } else if (rc == WJ_NOT_LIST) {
        wl_error_set(err, source, line, "", "a trace must be a JSON list of kernels");
        rc = WL_EPARSE;
    } else if (!rc && n == 0) {
        wl_error_set(err, source, 1, "", "the trace holds no kernels");
        rc = WL_EPARSE;
    }
    if (rc) {
        wl_core_workload_free(wl);
        return rc;
    }
    /* A one-kernel trace is a kernel microbenchmark: one launch cannot be
     * timed with a board power meter, so such rows are per launch of a
     * kernel issued back to back (EnergAIzer's kernel database, the
     * project's H100 set, 'wattlas.measure kernels') */
    wl_core_workload_set_repeated(wl, wl_core_workload_count(wl) == 1);
    *out = wl;
    return WL_OK;
}

/* A profile is read as a stream (core/zin.c): its text, a few GB for
 * 10^7 events, is never held whole. Kernel traces are read whole, to
 * WL_MAX_FILE_BYTES. */
#define PROFILE_MAX_BYTES (16ULL << 30)
/* the first bytes are read in pieces of this many (a fuzzing build's few
 * bytes leave the rest of a small input to the profile reader's window) */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define HEAD_STEP 3
#else
#define HEAD_STEP (1 << 16)
#endif

int wl_core_trace_load_as(const char *path, const wl_core_recorded *rec, wl_core_workload **out,
                          wl_error *err)
{
    *out = NULL;
    wl_core_zin *in = NULL;
    int rc = wl_core_zin_open(path, PROFILE_MAX_BYTES, &in, err);
    if (rc)
        return rc;
    /* the first bytes, to the first that is not white space: a profile is
     * a JSON object, a kernel trace a list */
    size_t cap = 1 << 16, n = 0, skip = 0;
    char *buf = malloc(cap);
    int decided = 0;
    if (!buf)
        rc = WL_ENOMEM;
    while (!rc) {
        if (cap - n - 1 < (1 << 15)) {
            char *nb = cap >= WL_MAX_FILE_BYTES ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                rc = cap >= WL_MAX_FILE_BYTES ? WL_EIO : WL_ENOMEM;
                if (rc == WL_EIO)
                    wl_error_set(err, path, 0, "", "larger than %d MiB", WL_MAX_FILE_BYTES >> 20);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t step = decided ? cap - n - 1 : HEAD_STEP;
        long got = wl_core_zin_read(in, buf + n, step < cap - n - 1 ? step : cap - n - 1, err);
        if (got < 0) {
            rc = WL_EIO;
            break;
        }
        n += (size_t)got;
        buf[n] = '\0';
        /* a UTF-8 byte order mark, which RFC 8259 lets a reader ignore (an
         * editor on Windows may add one) */
        skip = n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3) ? 3 : 0;
        if (!decided && (n >= 3 || got == 0)) { /* a mark's three bytes, or all there is */
            size_t i = skip;
            while (i < n && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
                i++;
            decided = i < n ? (buf[i] == '{' ? 1 : 2) : 0;
            if (decided == 1 || (got == 0 && !decided))
                break;
        }
        if (got == 0)
            break;
    }
    if (rc == WL_ENOMEM)
        wl_error_set(err, path, 0, "", "out of memory");
    const char *text = buf + skip;
    n -= skip;
    if (rc) {
        /* told */
    } else if (decided == 1) {
        rc = wl_core_profile_parse_z(in, text, n, path, rec, out, err);
    } else if (rec && (rec->sm_clock_mhz > 0 || rec->power_limit_w > 0 || rec->gpu[0] ||
                       rec->step_ms > 0)) {
        wl_error_set(err, path, 0,
                     rec->sm_clock_mhz > 0    ? "profile_clock"
                     : rec->power_limit_w > 0 ? "profile_power_limit_w"
                     : rec->step_ms > 0       ? "profile_step_ms"
                                              : "profile_gpu",
                     "a kernel trace measured nothing: the recorded clock and power limit are a "
                     "PyTorch profile's");
        rc = WL_EINVAL;
    } else {
        rc = wl_core_trace_parse(text, n, path, out, err);
    }
    wl_core_zin_close(in);
    free(buf);
    return rc;
}

int wl_core_trace_load(const char *path, wl_core_workload **out, wl_error *err)
{
    return wl_core_trace_load_as(path, NULL, out, err);
}

/* A half-precision trace run again in fp32, as eager PyTorch would launch
 * it: the casts to and from fp32 vanish (.float() of an fp32 tensor is the
 * tensor itself), matmuls run on CUDA cores (torch's default
 * allow_tf32 = False for matmul), convolutions on TF32 tensor cores
 * (cuDNN's default allow_tf32 = True), and every other kernel reads and
 * writes fp32. Shapes do not change. */
int wl_core_workload_retype(const wl_core_workload *src, wl_dtype to, wl_core_workload **out,
                            wl_error *err)
{
    *out = NULL;
    if (to != WL_DT_FP32) {
        wl_error_set(err, wl_core_workload_name(src), 0, "dtype",
                     "a trace can only be retyped to fp32, not to %s", wl_dtype_name(to));
        return WL_EUNSUPPORTED;
    }
    char name[160];
    snprintf(name, sizeof name, "%s@fp32", wl_core_workload_name(src));
    wl_core_workload *w = wl_core_workload_create(name);
    if (!w)
        return WL_ENOMEM;
    for (size_t i = 0; i < wl_core_workload_count(src); i++) {
        wl_kernel k = *wl_core_workload_kernel(src, i);
        if (k.measured_us > 0 || k.kind == WL_K_MEASURED) {
            wl_core_workload_free(w);
            wl_error_set(err, wl_core_workload_name(src), 0, "dtype",
                         "a profile's kernels were measured in their own precision; "
                         "profile the fp32 run instead");
            return WL_EUNSUPPORTED;
        }
        if (k.kind == WL_K_ELEMENTWISE && (k.op == WL_EW_CAST_FP32 || k.op == WL_EW_CAST_BF16))
            continue;
        if (k.kind == WL_K_ATTN_FLASH) {
            wl_core_workload_free(w);
            wl_error_set(err, wl_core_workload_name(src), 0, "dtype",
                         "fused (flash) attention has no fp32 kernel");
            return WL_EUNSUPPORTED;
        }
        if (k.kind == WL_K_GEMM) {
            int conv = k.conv_taps > 0;
            k.in_dtype = k.acc_dtype = conv ? WL_DT_TF32 : WL_DT_FP32;
            k.tensor_core = conv;
        } else if (k.kind != WL_K_GAP) {
            k.in_dtype = k.acc_dtype = WL_DT_FP32;
        }
        if (wl_core_workload_add_as(w, src, i, &k)) {
            wl_core_workload_free(w);
            return WL_ENOMEM;
        }
    }
    wl_core_workload_set_repeated(w, wl_core_workload_repeated(src));
    *out = w;
    return WL_OK;
}
