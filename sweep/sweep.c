/* Sweep grids: parsing, enumeration, parallel evaluation, streaming output. */
#include "wattlas_sweep.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_SET 16

typedef struct {
    char **v;
    size_t n;
} strlist;

typedef struct {
    double *v;
    size_t n;
} numlist;

struct wl_sweep_spec {
    strlist gpus, models, traces, batch_s, seq_s, dtype_s, attn_s;
    strlist idle; /* [ID=]TABLE.csv: measured idle tables */
    numlist clocks, voff;
    int clocks_set;
    wl_sweep_scope scope;
    struct {
        char key[64];
        numlist vals;
    } set[MAX_SET];
    size_t nset;
    /* resolved by finish */
    int finished;
    long long *batch, *seq;
    size_t nbatch, nseq;
    wl_dtype *dtypes;
    size_t ndt;
    wl_attention *attn;
    size_t nattn;
    wl_core_gpu *gpu;       /* one per gpus entry */
    wl_core_model *model;   /* one per models entry */
    wl_core_workload **trace_wl;
    size_t n_workloads;     /* models or traces */
};

/* ---- lists ---------------------------------------------------------------- */

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static int strlist_add(strlist *l, const char *s, size_t len)
{
    char **nv = realloc(l->v, (l->n + 1) * sizeof *nv);
    if (!nv)
        return WL_ENOMEM;
    l->v = nv;
    char *c = malloc(len + 1);
    if (!c)
        return WL_ENOMEM;
    memcpy(c, s, len);
    c[len] = 0;
    l->v[l->n++] = c;
    return WL_OK;
}

static int numlist_add(numlist *l, double x)
{
    double *nv = realloc(l->v, (l->n + 1) * sizeof *nv);
    if (!nv)
        return WL_ENOMEM;
    l->v = nv;
    l->v[l->n++] = x;
    return WL_OK;
}

/* Comma-separated tokens, blanks trimmed, appended to l. */
static int split_into(strlist *l, const char *value)
{
    const char *p = value;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if (strlist_add(l, p, (size_t)(t - p)))
            return WL_ENOMEM;
        p = e;
    }
    return WL_OK;
}

static int parse_num(const char *s, double *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || *e || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* "MIN:MAX:STEP" or a list, into l. */
static int parse_numbers(numlist *l, const char *value, int allow_range, const char *what,
                         const char *source, int line, wl_error *err)
{
    if (allow_range && strchr(value, ':')) {
        double a, b, st;
        char extra;
        if (sscanf(value, "%lf:%lf:%lf%c", &a, &b, &st, &extra) != 3 || !(st > 0) || !(b >= a)) {
            wl_error_set(err, source, line, what, "expected MIN:MAX:STEP with MIN <= MAX, STEP > 0, got '%s'",
                         value);
            return WL_EINVAL;
        }
        if ((b - a) / st > 1e7) {
            wl_error_set(err, source, line, what, "range '%s' has more than 1e7 values", value);
            return WL_EINVAL;
        }
        for (double x = a; x <= b + 1e-9 * (fabs(b) + 1); x += st)
            if (numlist_add(l, x))
                return WL_ENOMEM;
        return WL_OK;
    }
    strlist tmp = {0};
    if (split_into(&tmp, value))
        return WL_ENOMEM;
    int rc = WL_OK;
    for (size_t i = 0; i < tmp.n && !rc; i++) {
        double x;
        if (parse_num(tmp.v[i], &x)) {
            wl_error_set(err, source, line, what, "not a number: '%s'", tmp.v[i]);
            rc = WL_EINVAL;
        } else if (numlist_add(l, x)) {
            rc = WL_ENOMEM;
        }
    }
    if (!rc && tmp.n == 0) {
        wl_error_set(err, source, line, what, "empty list");
        rc = WL_EINVAL;
    }
    strlist_free(&tmp);
    return rc;
}

/* ---- spec ------------------------------------------------------------------- */

wl_sweep_spec *wl_sweep_spec_create(void)
{
    return calloc(1, sizeof(wl_sweep_spec));
}

void wl_sweep_spec_free(wl_sweep_spec *s)
{
    if (!s)
        return;
    strlist_free(&s->gpus);
    strlist_free(&s->idle);
    strlist_free(&s->models);
    strlist_free(&s->traces);
    strlist_free(&s->batch_s);
    strlist_free(&s->seq_s);
    strlist_free(&s->dtype_s);
    strlist_free(&s->attn_s);
    free(s->clocks.v);
    free(s->voff.v);
    for (size_t i = 0; i < s->nset; i++)
        free(s->set[i].vals.v);
    free(s->batch);
    free(s->seq);
    free(s->dtypes);
    free(s->attn);
    free(s->gpu);
    free(s->model);
    for (size_t i = 0; s->trace_wl && i < s->traces.n; i++)
        wl_core_workload_free(s->trace_wl[i]);
    free(s->trace_wl);
    free(s);
}

int wl_sweep_spec_set(wl_sweep_spec *s, const char *key, const char *value, const char *source,
                      int line, wl_error *err)
{
    if (s->finished) {
        wl_error_set(err, source, line, key, "the spec is already finished");
        return WL_EINVAL;
    }
    strlist *sl = NULL;
    if (strcmp(key, "gpu") == 0) sl = &s->gpus;
    else if (strcmp(key, "model") == 0) sl = &s->models;
    else if (strcmp(key, "trace") == 0) sl = &s->traces;
    else if (strcmp(key, "batch") == 0) sl = &s->batch_s;
    else if (strcmp(key, "seq") == 0) sl = &s->seq_s;
    else if (strcmp(key, "dtype") == 0) sl = &s->dtype_s;
    else if (strcmp(key, "attention") == 0) sl = &s->attn_s;
    else if (strcmp(key, "idle") == 0) sl = &s->idle;
    if (sl) {
        size_t before = sl->n;
        if (split_into(sl, value))
            return WL_ENOMEM;
        if (sl->n == before) {
            wl_error_set(err, source, line, key, "empty list");
            return WL_EINVAL;
        }
        return WL_OK;
    }
    if (strcmp(key, "clock") == 0) {
        s->clocks_set = 1;
        return parse_numbers(&s->clocks, value, 1, key, source, line, err);
    }
    if (strcmp(key, "voltage_offset_mv") == 0)
        return parse_numbers(&s->voff, value, 1, key, source, line, err);
    if (strcmp(key, "scope") == 0) {
        if (strcmp(value, "model") == 0) s->scope = WL_SWEEP_MODEL;
        else if (strcmp(value, "layer") == 0) s->scope = WL_SWEEP_LAYER;
        else if (strcmp(value, "kernel") == 0) s->scope = WL_SWEEP_KERNEL;
        else {
            wl_error_set(err, source, line, key, "expected model, layer or kernel, got '%s'", value);
            return WL_EINVAL;
        }
        return WL_OK;
    }
    /* set.KEY = LIST, or set = KEY=LIST */
    char field[64];
    const char *list = value;
    if (strncmp(key, "set.", 4) == 0) {
        snprintf(field, sizeof field, "%s", key + 4);
    } else if (strcmp(key, "set") == 0) {
        const char *eq = strchr(value, '=');
        if (!eq || eq == value || (size_t)(eq - value) >= sizeof field) {
            wl_error_set(err, source, line, key, "expected KEY=LIST, got '%s'", value);
            return WL_EINVAL;
        }
        memcpy(field, value, (size_t)(eq - value));
        field[eq - value] = 0;
        list = eq + 1;
    } else {
        wl_error_set(err, source, line, key, "unknown sweep axis '%s'", key);
        return WL_EINVAL;
    }
    wl_core_gpu probe;
    memset(&probe, 0, sizeof probe);
    double dummy;
    if (wl_preset_gpu_get(&probe, field, &dummy) != WL_OK) {
        wl_error_set(err, source, line, field, "not a numeric GPU preset field");
        return WL_EINVAL;
    }
    size_t i;
    for (i = 0; i < s->nset; i++)
        if (strcmp(s->set[i].key, field) == 0)
            break;
    if (i == s->nset) {
        if (s->nset >= MAX_SET) {
            wl_error_set(err, source, line, field, "at most %d --set axes", MAX_SET);
            return WL_EINVAL;
        }
        snprintf(s->set[i].key, sizeof s->set[i].key, "%s", field);
        s->nset++;
    }
    return parse_numbers(&s->set[i].vals, list, 1, field, source, line, err);
}

typedef struct {
    wl_sweep_spec *s;
    const char *path;
    wl_error *err;
    int failed;
    char last_key[80];
} ini_ctx;

static int spec_handler(void *user, const char *section, const char *name, const char *value)
{
    ini_ctx *c = user;
    if (c->failed)
        return 0;
    char key[80];
    if (strcmp(section, "report") == 0)
        return 1; /* read by 'wattlas report' */
    if (strcmp(section, "sweep") == 0)
        snprintf(key, sizeof key, "%s", name);
    else if (strcmp(section, "set") == 0)
        snprintf(key, sizeof key, "set.%s", name);
    else {
        wl_error_set(c->err, c->path, 0, name, "unknown section [%s] (expected [sweep] or [set])",
                     section);
        c->failed = 1;
        return 0;
    }
    if (wl_sweep_spec_set(c->s, key, value, c->path, 0, c->err)) {
        c->failed = 1;
        return 0;
    }
    return 1;
}

int wl_sweep_spec_load(wl_sweep_spec *s, const char *path, wl_error *err)
{
    char *text = NULL;
    int rc = wl_core_read_file(path, &text, NULL, err);
    if (rc)
        return rc;
    ini_ctx c = {s, path, err, 0, ""};
    int line = ini_parse_string(text, spec_handler, &c);
    free(text);
    if (line > 0 || c.failed) {
        if (!c.failed)
            wl_error_set(err, path, line, "", "malformed line (expected key = value or [section])");
        else
            err->line = line > 0 ? line : err->line;
        return WL_EPARSE;
    }
    return WL_OK;
}

static int resolve_ints(const strlist *l, long long **out, size_t *n, const char *what,
                        long long lo, long long hi, wl_error *err)
{
    *out = calloc(l->n ? l->n : 1, sizeof **out);
    if (!*out)
        return WL_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        double x;
        if (parse_num(l->v[i], &x) || x != floor(x) || x < (double)lo || x > (double)hi) {
            wl_error_set(err, "sweep", 0, what, "expected an integer in [%lld, %lld], got '%s'", lo,
                         hi, l->v[i]);
            return WL_EINVAL;
        }
        (*out)[i] = (long long)x;
    }
    *n = l->n;
    return WL_OK;
}

int wl_sweep_spec_finish(wl_sweep_spec *s, wl_error *err)
{
    if (s->finished)
        return WL_OK;
    if (s->traces.n && (s->models.n || s->batch_s.n || s->seq_s.n || s->dtype_s.n || s->attn_s.n)) {
        wl_error_set(err, "sweep", 0, "trace",
                     "a trace fixes its model and shape: drop model, batch, seq, dtype, attention");
        return WL_EINVAL;
    }
    if (s->traces.n && s->scope == WL_SWEEP_LAYER) {
        wl_error_set(err, "sweep", 0, "scope", "scope layer needs models, not traces");
        return WL_EINVAL;
    }
    int rc = WL_OK;
    if (!s->gpus.n) rc = split_into(&s->gpus, "a100-pcie-40gb");
    if (!rc && !s->traces.n && !s->models.n) rc = split_into(&s->models, "gpt2");
    if (!rc && !s->batch_s.n) rc = split_into(&s->batch_s, "1");
    if (!rc && !s->seq_s.n) rc = split_into(&s->seq_s, "128");
    if (!rc && !s->dtype_s.n) rc = split_into(&s->dtype_s, "bf16");
    if (!rc && !s->attn_s.n) rc = split_into(&s->attn_s, "eager");
    if (!rc && !s->voff.n) rc = numlist_add(&s->voff, 0.0);
    if (rc)
        return rc;
    if ((rc = resolve_ints(&s->batch_s, &s->batch, &s->nbatch, "batch", 1, 1000000, err)) ||
        (rc = resolve_ints(&s->seq_s, &s->seq, &s->nseq, "seq", 1, 10000000, err)))
        return rc;
    s->dtypes = calloc(s->dtype_s.n, sizeof *s->dtypes);
    s->attn = calloc(s->attn_s.n, sizeof *s->attn);
    s->gpu = calloc(s->gpus.n, sizeof *s->gpu);
    if (!s->dtypes || !s->attn || !s->gpu)
        return WL_ENOMEM;
    for (size_t i = 0; i < s->dtype_s.n; i++)
        if (wl_dtype_parse(s->dtype_s.v[i], &s->dtypes[i]) ||
            (s->dtypes[i] != WL_DT_BF16 && s->dtypes[i] != WL_DT_FP16 &&
             s->dtypes[i] != WL_DT_FP32 && s->dtypes[i] != WL_DT_TF32)) {
            wl_error_set(err, "sweep", 0, "dtype", "expected bf16, fp16, fp32 or tf32, got '%s'",
                         s->dtype_s.v[i]);
            return WL_EINVAL;
        }
    s->ndt = s->dtype_s.n;
    for (size_t i = 0; i < s->attn_s.n; i++)
        if (wl_attention_parse(s->attn_s.v[i], &s->attn[i])) {
            wl_error_set(err, "sweep", 0, "attention", "expected eager or flash, got '%s'",
                         s->attn_s.v[i]);
            return WL_EINVAL;
        }
    s->nattn = s->attn_s.n;
    for (size_t i = 0; i < s->gpus.n; i++)
        if ((rc = wl_preset_gpu_load(s->gpus.v[i], &s->gpu[i], err)))
            return rc;
    /* measured idle tables replace the presets' idle curves before any --set */
    if ((rc = wl_preset_apply_idle_specs(s->gpu, s->gpus.n, (const char *const *)s->idle.v,
                                         s->idle.n, NULL, err)))
        return rc;
    if (!s->clocks.n) {
        const wl_core_gpu *g = &s->gpu[0];
        for (double f = g->sm_clock_min_mhz; f <= g->sm_clock_max_mhz + 1e-9; f += g->sm_clock_step_mhz)
            if (numlist_add(&s->clocks, f))
                return WL_ENOMEM;
    }
    for (size_t i = 0; i < s->clocks.n; i++)
        if (!(s->clocks.v[i] > 0)) {
            wl_error_set(err, "sweep", 0, "clock", "clocks must be positive, got %g", s->clocks.v[i]);
            return WL_EINVAL;
        }
    if (s->traces.n) {
        s->trace_wl = calloc(s->traces.n, sizeof *s->trace_wl);
        if (!s->trace_wl)
            return WL_ENOMEM;
        for (size_t i = 0; i < s->traces.n; i++)
            if ((rc = wl_core_trace_load(s->traces.v[i], &s->trace_wl[i], err)))
                return rc;
        s->n_workloads = s->traces.n;
    } else {
        s->model = calloc(s->models.n, sizeof *s->model);
        if (!s->model)
            return WL_ENOMEM;
        for (size_t i = 0; i < s->models.n; i++)
            if ((rc = wl_preset_model_load(s->models.v[i], &s->model[i], err)))
                return rc;
        s->n_workloads = s->models.n;
    }
    /* every GPU variant must be valid: check each combination of set values */
    unsigned long long nvar = 1;
    for (size_t k = 0; k < s->nset; k++)
        nvar *= s->set[k].vals.n;
    for (size_t gi = 0; gi < s->gpus.n; gi++)
        for (unsigned long long v = 0; v < nvar; v++) {
            wl_core_gpu g = s->gpu[gi];
            unsigned long long r = v;
            const char *keys[MAX_SET];
            double x[MAX_SET];
            for (size_t k = s->nset; k-- > 0;) {
                keys[k] = s->set[k].key;
                x[k] = s->set[k].vals.v[r % s->set[k].vals.n];
                r /= s->set[k].vals.n;
            }
            const char *bad = NULL;
            if (wl_preset_gpu_apply(&g, keys, x, s->nset, &bad)) {
                size_t k = 0;
                while (k + 1 < s->nset && s->set[k].key != bad)
                    k++;
                wl_error_set(err, "sweep", 0, bad, "invalid value %g", x[k]);
                return WL_EINVAL;
            }
            if (wl_core_gpu_check(&g, err)) {
                char msg[300], field[64];
                snprintf(msg, sizeof msg, "%s", err->text);
                snprintf(field, sizeof field, "%s", err->field);
                wl_error_set(err, "sweep", 0, field, "%s with the --set values: %s",
                             s->gpus.v[gi], msg);
                return WL_EINVAL;
            }
        }
    s->finished = 1;
    return WL_OK;
}

/* ---- enumeration ------------------------------------------------------------ */

/* Outer combinations: gpu, set values (first key outermost), workload,
 * batch, seq, dtype, attention; inner points: voltage offset, clock. */
static unsigned long long n_variants(const wl_sweep_spec *s)
{
    unsigned long long n = 1;
    for (size_t k = 0; k < s->nset; k++)
        n *= s->set[k].vals.n;
    return n;
}

static unsigned long long n_shapes(const wl_sweep_spec *s)
{
    return s->traces.n ? 1 : (unsigned long long)(s->nbatch * s->nseq * s->ndt * s->nattn);
}

static unsigned long long n_outer(const wl_sweep_spec *s)
{
    return (unsigned long long)s->gpus.n * n_variants(s) * s->n_workloads * n_shapes(s);
}

static unsigned long long n_inner(const wl_sweep_spec *s)
{
    return (unsigned long long)(s->voff.n * s->clocks.n);
}

unsigned long long wl_sweep_spec_points(const wl_sweep_spec *s)
{
    return s->finished ? n_outer(s) * n_inner(s) : 0;
}

typedef struct {
    size_t gpu, wl, b, sq, dt, at;
    size_t setidx[MAX_SET];
} combo;

static void decode(const wl_sweep_spec *s, unsigned long long o, combo *c)
{
    if (!s->traces.n) {
        c->at = o % s->nattn; o /= s->nattn;
        c->dt = o % s->ndt; o /= s->ndt;
        c->sq = o % s->nseq; o /= s->nseq;
        c->b = o % s->nbatch; o /= s->nbatch;
    } else {
        c->at = c->dt = c->sq = c->b = 0;
    }
    c->wl = o % s->n_workloads;
    o /= s->n_workloads;
    for (size_t k = s->nset; k-- > 0;) {
        c->setidx[k] = o % s->set[k].vals.n;
        o /= s->set[k].vals.n;
    }
    c->gpu = o;
}

/* ---- output --------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} buf;

static void put(buf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + len + 1)
            nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static void putnum(buf *b, double v, int dec)
{
    char t[64];
    int l = wl_results_fmt(t, v, dec);
    put(b, t, (size_t)l);
}

/* A swept parameter value: as short as it can be written exactly. */
static void putparam(buf *b, double v)
{
    char t[64];
    int l = snprintf(t, sizeof t, "%.10g", v);
    put(b, t, (size_t)l);
}

static void putjs(buf *b, const char *s)
{
    /* identifiers and paths: escape quotes and backslashes */
    put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            put(b, "\\", 1);
        if ((unsigned char)*s >= 0x20)
            put(b, s, 1);
    }
    put(b, "\"", 1);
}

static void putcsvs(buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        puts_(b, s);
        return;
    }
    put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            put(b, "\"", 1);
        put(b, s, 1);
    }
    put(b, "\"", 1);
}

static const char *const result_cols[] = {
    "sm_clock_mhz", "effective_clock_mhz", "voltage_mv", "feasible", "throttled", "time_ms",
    "power_w", "energy_j", "energy_dyn_compute_j", "energy_dyn_memory_j", "energy_static_j"};
static const int result_dec[] = {1, 1, 1, 0, 0, 5, 3, 6, 6, 6, 6};
#define NRES (sizeof result_cols / sizeof *result_cols)

static void header(const wl_sweep_spec *s, buf *b)
{
    puts_(b, "gpu");
    for (size_t k = 0; k < s->nset; k++) {
        puts_(b, ",");
        puts_(b, s->set[k].key);
    }
    puts_(b, ",model,batch,seq,dtype,attention,voltage_offset_mv");
    for (size_t i = 0; i < NRES; i++) {
        puts_(b, ",");
        puts_(b, result_cols[i]);
    }
    if (s->scope == WL_SWEEP_KERNEL)
        puts_(b, ",kernel_class,class_launches,class_time_ms,class_energy_j");
    puts_(b, "\n");
}

static const char *wl_name(const wl_sweep_spec *s, const combo *c)
{
    if (s->traces.n) {
        const char *p = strrchr(s->traces.v[c->wl], '/');
        return p ? p + 1 : s->traces.v[c->wl];
    }
    return s->models.v[c->wl];
}

/* One output row (without the newline for CSV kernel rows handled by caller). */
static void row(const wl_sweep_spec *s, const wl_sweep_options *o, const combo *c,
                const wl_core_gpu *g, double voff, const wl_core_result *r, int feasible,
                int cls, buf *b)
{
    double vals[NRES] = {r->requested_clock_mhz, r->effective_clock_mhz, r->voltage_mv,
                         feasible, r->throttled, r->time_ms, r->power_w, r->energy_j,
                         r->energy_dyn_compute_j, r->energy_dyn_memory_j, r->energy_static_j};
    int traced = s->traces.n > 0;
    double static_w = r->time_ms > 0 ? r->energy_static_j / (r->time_ms * 1e-3) : 0;
    if (o->format == WL_SWEEP_NDJSON) {
        puts_(b, "{\"gpu\":");
        putjs(b, g->id);
        for (size_t k = 0; k < s->nset; k++) {
            puts_(b, ",\"");
            puts_(b, s->set[k].key);
            puts_(b, "\":");
            putparam(b, s->set[k].vals.v[c->setidx[k]]);
        }
        puts_(b, ",\"model\":");
        putjs(b, wl_name(s, c));
        if (!traced) {
            puts_(b, ",\"batch\":");
            putnum(b, (double)s->batch[c->b], 0);
            puts_(b, ",\"seq\":");
            putnum(b, (double)s->seq[c->sq], 0);
            puts_(b, ",\"dtype\":");
            putjs(b, wl_dtype_name(s->dtypes[c->dt]));
            puts_(b, ",\"attention\":");
            putjs(b, wl_attention_name(s->attn[c->at]));
        }
        puts_(b, ",\"voltage_offset_mv\":");
        putnum(b, voff, 1);
        for (size_t i = 0; i < NRES; i++) {
            puts_(b, ",\"");
            puts_(b, result_cols[i]);
            puts_(b, "\":");
            if (i == 3 || i == 4)
                puts_(b, vals[i] != 0 ? "true" : "false");
            else
                putnum(b, vals[i], result_dec[i]);
        }
        if (cls >= 0) {
            const wl_core_class_stats *cs = &r->cls[cls];
            puts_(b, ",\"kernel_class\":");
            putjs(b, wl_core_class_name(cls));
            puts_(b, ",\"class_launches\":");
            putnum(b, (double)cs->launches, 0);
            puts_(b, ",\"class_time_ms\":");
            putnum(b, cs->busy_ms, 6);
            puts_(b, ",\"class_energy_j\":");
            putnum(b, cs->energy_j + static_w * cs->busy_ms * 1e-3, 7);
        }
        puts_(b, "}\n");
        return;
    }
    putcsvs(b, g->id);
    for (size_t k = 0; k < s->nset; k++) {
        puts_(b, ",");
        putparam(b, s->set[k].vals.v[c->setidx[k]]);
    }
    puts_(b, ",");
    putcsvs(b, wl_name(s, c));
    puts_(b, ",");
    if (!traced) {
        putnum(b, (double)s->batch[c->b], 0);
        puts_(b, ",");
        putnum(b, (double)s->seq[c->sq], 0);
        puts_(b, ",");
        puts_(b, wl_dtype_name(s->dtypes[c->dt]));
        puts_(b, ",");
        puts_(b, wl_attention_name(s->attn[c->at]));
    } else {
        puts_(b, ",,,");
    }
    puts_(b, ",");
    putnum(b, voff, 1);
    for (size_t i = 0; i < NRES; i++) {
        puts_(b, ",");
        putnum(b, vals[i], result_dec[i]);
    }
    if (cls >= 0) {
        const wl_core_class_stats *cs = &r->cls[cls];
        puts_(b, ",");
        puts_(b, wl_core_class_name(cls));
        puts_(b, ",");
        putnum(b, (double)cs->launches, 0);
        puts_(b, ",");
        putnum(b, cs->busy_ms, 6);
        puts_(b, ",");
        putnum(b, cs->energy_j + static_w * cs->busy_ms * 1e-3, 7);
    }
    puts_(b, "\n");
}

/* ---- running ------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(double t0, unsigned long long done, unsigned long long total, int final)
{
    double el = now_s() - t0;
    double rate = el > 0 ? (double)done / el : 0;
    double frac = total ? (double)done / (double)total : 1;
    int w = 30, fill = (int)(frac * w);
    char bar[40];
    for (int i = 0; i < w; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[w] = 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\r[%s] %5.1f%% %llu/%llu points, %.0f points/s, ETA %02d:%02d ", bar,
            100 * frac, done, total, rate, (int)(eta / 60), (int)eta % 60);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* Evaluates outer combination oi, restricted to points [lo, hi); rows to b. */
static int run_combo(const wl_sweep_spec *s, const wl_sweep_options *o, unsigned long long oi,
                     unsigned long long lo, unsigned long long hi, buf *b,
                     unsigned long long *points, wl_error *err)
{
    combo c;
    decode(s, oi, &c);
    wl_core_gpu g = s->gpu[c.gpu];
    const char *keys[MAX_SET], *bad = NULL;
    double x[MAX_SET];
    for (size_t k = 0; k < s->nset; k++) {
        keys[k] = s->set[k].key;
        x[k] = s->set[k].vals.v[c.setidx[k]];
    }
    wl_preset_gpu_apply(&g, keys, x, s->nset, &bad); /* validated when the spec was read */
    wl_core_workload *wl = NULL;
    int own = 0, rc = WL_OK;
    if (s->traces.n) {
        wl = s->trace_wl[c.wl];
    } else {
        wl_core_shape sh = {s->batch[c.b], s->seq[c.sq], s->dtypes[c.dt], s->attn[c.at]};
        rc = s->scope == WL_SWEEP_LAYER ? wl_core_build_layer(&s->model[c.wl], &sh, &wl, err)
                                        : wl_core_build(&s->model[c.wl], &sh, &wl, err);
        own = 1;
        if (rc)
            return rc;
    }
    wl_core_evaluator *ev = NULL;
    rc = wl_core_evaluator_create(&g, wl, NULL, &ev);
    unsigned long long base = oi * n_inner(s);
    for (size_t vi = 0; !rc && vi < s->voff.n; vi++)
        for (size_t ci = 0; ci < s->clocks.n; ci++) {
            unsigned long long pi = base + vi * s->clocks.n + ci;
            if (pi < lo || pi >= hi)
                continue;
            wl_core_op op = {s->clocks.v[ci], 0, s->voff.v[vi], 0};
            wl_core_result r;
            if (wl_core_evaluator_run(ev, &op, &r) != WL_OK) {
                /* a voltage at or below zero: nothing runs */
                memset(&r, 0, sizeof r);
                r.requested_clock_mhz = r.effective_clock_mhz = s->clocks.v[ci];
                r.time_ms = r.power_w = r.energy_j = NAN;
                r.voltage_mv = wl_core_gpu_voltage_mv(&g, s->clocks.v[ci]) + s->voff.v[vi];
            }
            int feasible = isfinite(r.time_ms) &&
                           s->clocks.v[ci] >= g.sm_clock_min_mhz - 1e-9 &&
                           s->clocks.v[ci] <= g.sm_clock_max_mhz + 1e-9 &&
                           wl_core_gpu_feasible(&g, r.effective_clock_mhz, r.voltage_mv);
            (*points)++;
            if (s->scope == WL_SWEEP_KERNEL) {
                for (int k = 0; k < WL_CLASS_COUNT; k++)
                    if (r.cls[k].launches)
                        row(s, o, &c, &g, s->voff.v[vi], &r, feasible, k, b);
            } else {
                row(s, o, &c, &g, s->voff.v[vi], &r, feasible, -1, b);
            }
        }
    wl_core_evaluator_free(ev);
    if (own)
        wl_core_workload_free(wl);
    if (!rc && b->oom)
        rc = WL_ENOMEM;
    return rc;
}

int wl_sweep_run(const wl_sweep_spec *s, const wl_sweep_options *o, FILE *out,
                 volatile sig_atomic_t *stop, wl_sweep_stats *stats, wl_error *err)
{
    memset(stats, 0, sizeof *stats);
    if (!s->finished) {
        wl_error_set(err, "sweep", 0, "", "spec not finished");
        return WL_EINVAL;
    }
    unsigned sc = o->shard_count ? o->shard_count : 1;
    if (o->shard_index >= sc) {
        wl_error_set(err, "sweep", 0, "shard", "shard index %u must be below the count %u",
                     o->shard_index, sc);
        return WL_EINVAL;
    }
    unsigned long long total = wl_sweep_spec_points(s), ni = n_inner(s);
    /* contiguous slices, so shard outputs concatenate to the full run */
    unsigned long long lo = (unsigned long long)((long double)total * o->shard_index / sc);
    unsigned long long hi = (unsigned long long)((long double)total * (o->shard_index + 1) / sc);
    unsigned long long o_lo = lo / ni, o_hi = hi ? (hi - 1) / ni + 1 : 0;
    if (hi <= lo)
        o_hi = o_lo;
    if (o->format == WL_SWEEP_CSV) {
        buf h = {0};
        header(s, &h);
        if (h.oom) {
            free(h.p);
            return WL_ENOMEM;
        }
        fwrite(h.p, 1, h.n, out);
        free(h.p);
    }
    double t0 = now_s(), last = t0;
    int rc = WL_OK;
    volatile int failed = 0;
    unsigned long long done = 0, rows = 0;
    wl_error first_err;
    memset(&first_err, 0, sizeof first_err);
    long long n_o = (long long)(o_hi - o_lo);
    int threads = o->threads > 0 ? o->threads : 1;
#ifdef _OPENMP
    if (o->threads <= 0)
        threads = omp_get_max_threads();
#endif
#pragma omp parallel for ordered schedule(dynamic, 1) num_threads(threads)
    for (long long k = 0; k < n_o; k++) {
        buf b = {0};
        unsigned long long pts = 0;
        int my_rc = WL_OK;
        wl_error my_err;
        memset(&my_err, 0, sizeof my_err);
        if (!failed && !(stop && *stop))
            my_rc = run_combo(s, o, o_lo + (unsigned long long)k, lo, hi, &b, &pts, &my_err);
#pragma omp ordered
        {
            if (my_rc && !failed) {
                failed = 1;
                rc = my_rc;
                first_err = my_err;
            }
            if (!failed && !(stop && *stop) && b.n) {
                fwrite(b.p, 1, b.n, out);
                done += pts;
                for (size_t i = 0; i < b.n; i++)
                    rows += b.p[i] == '\n';
            }
            if (o->progress) {
                double t = now_s();
                if (t - last > 0.2) {
                    progress(t0, done, hi - lo, 0);
                    last = t;
                }
            }
        }
        free(b.p);
    }
    if (o->progress)
        progress(t0, done, hi - lo, 1);
    stats->points = done;
    stats->rows = rows;
    stats->seconds = now_s() - t0;
    stats->interrupted = stop && *stop;
    if (rc && err)
        *err = first_err;
    return rc;
}

/* ---- merge -------------------------------------------------------------------- */

int wl_sweep_merge(const char *const *paths, int n, FILE *out, wl_error *err)
{
    char *first_header = NULL;
    int rc = WL_OK;
    for (int i = 0; i < n && !rc; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f) {
            wl_error_set(err, paths[i], 0, "", "cannot open: %s", strerror(errno));
            rc = WL_EIO;
            break;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        int lineno = 0;
        while ((len = getline(&line, &cap, f)) > 0) {
            lineno++;
            if (line[len - 1] != '\n') {
                wl_error_set(err, paths[i], lineno, "", "truncated last row (no newline)");
                rc = WL_EPARSE;
                break;
            }
            if (lineno == 1 && line[0] != '{') {
                /* CSV header: keep the first, check the others */
                if (!first_header) {
                    first_header = strdup(line);
                    if (!first_header) {
                        rc = WL_ENOMEM;
                        break;
                    }
                } else if (strcmp(first_header, line) != 0) {
                    wl_error_set(err, paths[i], 1, "", "header differs from %s's", paths[0]);
                    rc = WL_EPARSE;
                    break;
                } else {
                    continue;
                }
            }
            fwrite(line, 1, (size_t)len, out);
        }
        free(line);
        fclose(f);
    }
    free(first_header);
    return rc;
}
