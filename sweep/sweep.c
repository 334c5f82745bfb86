/* Sweep grids: axes with their origins, enumeration, parallel evaluation,
 * streaming output, shards and merging. */
#include "wattlas_sweep.h"
#include "../learn/wattlas_learn.h"
#include "../calib/wattlas_calib.h"
#include "../presets/wattlas_presets.h"
#include "../pareto/wattlas_pareto.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_SET 16

/* Where an axis's values came from: errors about them name it. */
typedef struct {
    char source[256];
    int line;
    int given;
} origin;

typedef struct {
    char key[64];
    wl_core_numlist vals;
    origin o;
} set_axis;

struct wl_sweep_spec {
    wl_core_strlist gpus, models, traces, idle, host;
    wl_core_numlist batch, seq, clocks, voff, vfix;
    wl_dtype *dtypes;
    size_t ndt;
    wl_attention *attn;
    size_t nattn;
    wl_mode *modes;
    size_t nmode;
    origin o_mode, o_train;
    wl_core_shape opts;     /* the training and decode options (mode unused) */
    origin o_gpu, o_model, o_trace, o_idle, o_host, o_batch, o_seq, o_dtype, o_attn, o_clock, o_voff,
        o_vfix;
    set_axis set[MAX_SET];
    size_t nset;
    wl_sweep_scope scope;
    int classes; /* a row per kernel class */
    int clock_max; /* clock = max */
    const wl_core_latency_type *lat;
    int no_power_limit;
    double level; /* prediction intervals, 0: none */
    origin o_level;
    char report_title[256], report_objective[64];
    /* resolved by finish */
    int finished;
    wl_core_gpu *gpu;            /* one per gpus entry */
    wl_calib_uncertainty *unc;   /* one per gpus entry when level > 0 */
    wl_learn_model *learned;     /* --learned: applied to every point */
    origin o_learned;
    uint64_t learned_hash;       /* of the model file, for shard fingerprints */
    wl_core_numlist *gclk;       /* each GPU's clocks: its own grid, its own
                                    maximum, or the requested ones in its range */
    size_t *clipped;             /* requested clocks outside each GPU's range */
    size_t maxclk;               /* the longest of them: the clock axis stride */
    wl_core_model *model;        /* one per models entry */
    wl_core_strlist warnings;    /* what a caller should tell its user */
    wl_core_strlist notes;       /* ... and what it may (--quiet silences) */
    wl_core_workload **trace_wl; /* one per traces entry, as recorded */
    wl_dtype *trace_dt;          /* their recorded precision */
    size_t n_workloads;          /* models or traces */
};

/* ---- setting axes ---------------------------------------------------------- */

wl_sweep_spec *wl_sweep_spec_create(void)
{
    wl_sweep_spec *s = calloc(1, sizeof *s);
    if (s)
        s->lat = wl_core_latency_tiled;
    return s;
}

void wl_sweep_spec_free(wl_sweep_spec *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->trace_wl && i < s->traces.n; i++)
        wl_core_workload_free(s->trace_wl[i]);
    wl_learn_model_free(s->learned);
    for (size_t i = 0; s->gclk && i < s->gpus.n; i++) /* before gpus is cleared */
        wl_core_numlist_free(&s->gclk[i]);
    free(s->gclk);
    free(s->clipped);
    wl_core_strlist_free(&s->gpus);
    wl_core_strlist_free(&s->models);
    wl_core_strlist_free(&s->warnings);
    wl_core_strlist_free(&s->notes);
    wl_core_strlist_free(&s->traces);
    wl_core_strlist_free(&s->idle);
    wl_core_strlist_free(&s->host);
    wl_core_numlist_free(&s->batch);
    wl_core_numlist_free(&s->seq);
    wl_core_numlist_free(&s->clocks);
    wl_core_numlist_free(&s->voff);
    wl_core_numlist_free(&s->vfix);
    for (size_t i = 0; i < s->nset; i++)
        wl_core_numlist_free(&s->set[i].vals);
    free(s->dtypes);
    free(s->attn);
    free(s->modes);
    free(s->gpu);
    free(s->unc);
    free(s->model);
    free(s->trace_wl);
    free(s->trace_dt);
    free(s);
}

/* Values from a new origin replace the axis; from the same one they add to
 * it. Returns 1 when the axis must be cleared first. */
static int take_origin(origin *o, const char *source, int line)
{
    int replace = o->given && strcmp(o->source, source) != 0;
    snprintf(o->source, sizeof o->source, "%s", source);
    o->line = line;
    o->given = 1;
    return replace;
}

static int set_names(wl_core_strlist *l, origin *o, const char *value, const char *source,
                     int line, const char *field, wl_error *err)
{
    if (take_origin(o, source, line))
        wl_core_strlist_free(l);
    return wl_core_parse_names(value, source, line, field, l, err);
}

static int set_numbers(wl_core_numlist *l, origin *o, const char *value, double lo, double hi,
                       int integers, const char *source, int line, const char *field,
                       wl_error *err)
{
    if (take_origin(o, source, line))
        l->n = 0;
    return wl_core_parse_list(value, lo, hi, integers, source, line, field, l, err);
}

/* Parsers of one enum name into an array element (0: ok). */
static int parse_dtype(const char *name, void *out)
{
    wl_dtype dt;
    if (wl_dtype_parse(name, &dt) ||
        (dt != WL_DT_BF16 && dt != WL_DT_FP16 && dt != WL_DT_FP32 && dt != WL_DT_TF32))
        return 1;
    *(wl_dtype *)out = dt;
    return 0;
}

static int parse_attention(const char *name, void *out) { return wl_attention_parse(name, out); }
static int parse_mode(const char *name, void *out) { return wl_mode_parse(name, out); }

/* A list of enum names (dtype, attention, mode) into *arr of *n elements of
 * size bytes: replacing it or appending to it by origin, as set_names. */
static int set_enums(void **arr, size_t *n, size_t size, origin *o, const char *value,
                     int (*parse)(const char *, void *), const char *expected,
                     const char *source, int line, const char *field, wl_error *err)
{
    wl_core_strlist l = {0};
    int rc = wl_core_parse_names(value, source, line, field, &l, err);
    if (take_origin(o, source, line))
        *n = 0;
    void *na = rc ? NULL : realloc(*arr, (*n + l.n) * size);
    if (!rc && !na)
        rc = WL_ENOMEM;
    if (na)
        *arr = na;
    for (size_t i = 0; !rc && i < l.n; i++) {
        if (parse(l.v[i], (char *)*arr + *n * size)) {
            wl_error_set(err, source, line, field, "expected %s, got '%.60s'", expected, l.v[i]);
            rc = WL_EINVAL;
        } else {
            (*n)++;
        }
    }
    wl_core_strlist_free(&l);
    return rc;
}

static int set_dtypes(wl_sweep_spec *s, const char *value, const char *source, int line,
                      wl_error *err)
{
    void *a = s->dtypes;
    int rc = set_enums(&a, &s->ndt, sizeof *s->dtypes, &s->o_dtype, value, parse_dtype,
                       "bf16, fp16, fp32 or tf32", source, line, "dtype", err);
    s->dtypes = a;
    return rc;
}

static int set_attention(wl_sweep_spec *s, const char *value, const char *source, int line,
                         wl_error *err)
{
    void *a = s->attn;
    int rc = set_enums(&a, &s->nattn, sizeof *s->attn, &s->o_attn, value, parse_attention,
                       "eager or flash", source, line, "attention", err);
    s->attn = a;
    return rc;
}

static int set_modes(wl_sweep_spec *s, const char *value, const char *source, int line,
                     wl_error *err)
{
    void *a = s->modes;
    int rc = set_enums(&a, &s->nmode, sizeof *s->modes, &s->o_mode, value, parse_mode,
                       "prefill, train or decode", source, line, "mode", err);
    s->modes = a;
    return rc;
}

/* The training and decode options: one value each. */
static int set_train(wl_sweep_spec *s, const char *key, const char *value, const char *source,
                     int line, wl_error *err)
{
    wl_core_shape *o = &s->opts;
    long long v;
    take_origin(&s->o_train, source, line);
    if (!strcmp(key, "optimizer")) {
        if (wl_optimizer_parse(value, &o->optimizer)) {
            wl_error_set(err, source, line, key, "expected adamw or sgd, got '%.60s'", value);
            return WL_EINVAL;
        }
    } else if (!strcmp(key, "master_dtype")) {
        if (strcmp(value, "fp32") && strcmp(value, "none")) {
            wl_error_set(err, source, line, key, "expected fp32 or none, got '%.60s'", value);
            return WL_EINVAL;
        }
        o->master_none = !strcmp(value, "none");
    } else if (!strcmp(key, "recompute")) {
        if (wl_recompute_parse(value, &o->recompute)) {
            wl_error_set(err, source, line, key, "expected none, selective or full, got '%.60s'",
                         value);
            return WL_EINVAL;
        }
    } else if (!strcmp(key, "launch")) {
        if (wl_launch_parse(value, &o->launch)) {
            wl_error_set(err, source, line, key, "expected eager or graphs, got '%.60s'", value);
            return WL_EINVAL;
        }
    } else if (!strcmp(key, "stack")) {
        if (wl_stack_parse(value, &o->stack)) {
            wl_error_set(err, source, line, key, "expected hf5 or hf4, got '%.60s'", value);
            return WL_EINVAL;
        }
    } else if (!strcmp(key, "impl")) {
        if (wl_impl_parse(value, &o->impl)) {
            wl_error_set(err, source, line, key, "expected hf-eager or fused, got '%.60s'", value);
            return WL_EINVAL;
        }
    } else if (!strcmp(key, "grad_accum")) {
        if (wl_core_parse_int(value, 1, WL_MAX_GRAD_ACCUM, source, line, key, &v, err))
            return WL_EINVAL;
        o->grad_accum = (int)v;
    } else { /* gen */
        if (wl_core_parse_int(value, 1, WL_MAX_GEN, source, line, key, &v, err))
            return WL_EINVAL;
        o->gen = v;
    }
    return WL_OK;
}

/* set.KEY = LIST: every value must be one the preset key accepts. */
static int set_field(wl_sweep_spec *s, const char *field, const char *list, const char *source,
                     int line, wl_error *err)
{
    double dummy;
    static const wl_core_gpu probe;
    if (wl_preset_gpu_get(&probe, field, &dummy) != WL_OK) {
        wl_error_set(err, source, line, field, "not a numeric GPU preset key");
        return WL_EINVAL;
    }
    size_t i;
    for (i = 0; i < s->nset; i++)
        if (strcmp(s->set[i].key, field) == 0)
            break;
    if (i == s->nset) {
        if (s->nset >= MAX_SET) {
            wl_error_set(err, source, line, field, "at most %d set axes", MAX_SET);
            return WL_EINVAL;
        }
        if (strlen(field) >= sizeof s->set[i].key) {
            wl_error_set(err, source, line, "set", "key too long");
            return WL_EINVAL;
        }
        memset(&s->set[i], 0, sizeof s->set[i]);
        snprintf(s->set[i].key, sizeof s->set[i].key, "%s", field);
        s->nset++;
    }
    set_axis *a = &s->set[i];
    size_t before = take_origin(&a->o, source, line) ? 0 : a->vals.n;
    a->vals.n = before;
    int rc = wl_core_parse_list(list, -1e300, 1e300, 0, source, line, field, &a->vals, err);
    /* each value within the key's range */
    for (size_t k = before; !rc && k < a->vals.n; k++)
        if ((rc = wl_preset_gpu_value_ok(field, a->vals.v[k], err)))
            wl_error_locate(err, source, line);
    return rc;
}

int wl_sweep_spec_set(wl_sweep_spec *s, const char *key, const char *value, const char *source,
                      int line, wl_error *err)
{
    if (s->finished) {
        wl_error_set(err, source, line, key, "the spec is already finished");
        return WL_EINVAL;
    }
    if (!strcmp(key, "gpu")) return set_names(&s->gpus, &s->o_gpu, value, source, line, key, err);
    if (!strcmp(key, "model")) return set_names(&s->models, &s->o_model, value, source, line, key, err);
    if (!strcmp(key, "trace")) return set_names(&s->traces, &s->o_trace, value, source, line, key, err);
    if (!strcmp(key, "idle")) return set_names(&s->idle, &s->o_idle, value, source, line, key, err);
    if (!strcmp(key, "host")) return set_names(&s->host, &s->o_host, value, source, line, key, err);
    if (!strcmp(key, "batch"))
        return set_numbers(&s->batch, &s->o_batch, value, 1, (double)WL_MAX_BATCH, 1, source,
                           line, key, err);
    if (!strcmp(key, "seq"))
        return set_numbers(&s->seq, &s->o_seq, value, 1, (double)WL_MAX_SEQ, 1, source, line, key,
                           err);
    if (!strcmp(key, "clock")) {
        if (!strcmp(value, "max")) { /* the first GPU's maximum, known in finish */
            if (take_origin(&s->o_clock, source, line))
                s->clocks.n = 0;
            s->clock_max = 1;
            return WL_OK;
        }
        return set_numbers(&s->clocks, &s->o_clock, value, 1, 100000, 0, source, line, key, err);
    }
    if (!strcmp(key, "voltage_offset_mv"))
        return set_numbers(&s->voff, &s->o_voff, value, -2000, 2000, 0, source, line, key, err);
    if (!strcmp(key, "voltage_mv"))
        return set_numbers(&s->vfix, &s->o_vfix, value, 1, 5000, 0, source, line, key, err);
    if (!strcmp(key, "dtype"))
        return set_dtypes(s, value, source, line, err);
    if (!strcmp(key, "attention"))
        return set_attention(s, value, source, line, err);
    if (!strcmp(key, "mode"))
        return set_modes(s, value, source, line, err);
    if (!strcmp(key, "optimizer") || !strcmp(key, "master_dtype") || !strcmp(key, "recompute") ||
        !strcmp(key, "launch") || !strcmp(key, "grad_accum") || !strcmp(key, "gen") ||
        !strcmp(key, "stack") || !strcmp(key, "impl"))
        return set_train(s, key, value, source, line, err);
    if (!strcmp(key, "scope")) {
        if (!strcmp(value, "model")) s->scope = WL_SWEEP_MODEL;
        else if (!strcmp(value, "layer") || !strcmp(value, "decoder")) s->scope = WL_SWEEP_LAYER;
        else if (!strcmp(value, "kernel")) s->scope = WL_SWEEP_MODEL, s->classes = 1;
        else {
            wl_error_set(err, source, line, key, "expected model, layer (or decoder) or kernel, got '%.60s'", value);
            return WL_EINVAL;
        }
        return WL_OK;
    }
    if (!strcmp(key, "learned")) {
        /* a model from 'wattlas learn': read now, so a bad file names the
         * option or the spec line */
        wl_learn_model *m = NULL;
        int rc = wl_learn_model_load(value, &m, err);
        if (rc) {
            if (!err->line && source && line)
                wl_error_locate(err, source, line);
            return rc;
        }
        char *bytes = NULL;
        size_t blen = 0;
        if (wl_core_read_file(value, &bytes, &blen, err) == WL_OK) {
            s->learned_hash = wl_sweep_hash(WL_SWEEP_HASH_BASIS, bytes, blen);
            free(bytes);
        }
        wl_learn_model_free(s->learned);
        s->learned = m;
        take_origin(&s->o_learned, source, line);
        return WL_OK;
    }
    if (!strcmp(key, "classes")) {
        if (strcmp(value, "on") && strcmp(value, "off")) {
            wl_error_set(err, source, line, key, "expected on or off, got '%.60s'", value);
            return WL_EINVAL;
        }
        s->classes = strcmp(value, "on") == 0;
        return WL_OK;
    }
    if (!strcmp(key, "latency")) {
        const wl_core_latency_type *t = wl_core_latency_lookup(value);
        if (!t) {
            wl_error_set(err, source, line, key, "expected tiled or roofline, got '%.60s'", value);
            return WL_EINVAL;
        }
        s->lat = t;
        return WL_OK;
    }
    if (!strcmp(key, "power_limit")) {
        if (strcmp(value, "on") && strcmp(value, "off")) {
            wl_error_set(err, source, line, key, "expected on or off, got '%.60s'", value);
            return WL_EINVAL;
        }
        s->no_power_limit = strcmp(value, "off") == 0;
        return WL_OK;
    }
    if (!strcmp(key, "interval")) {
        double l;
        if (wl_core_parse_real(value, 0, 100, source, line, key, &l, err))
            return WL_EINVAL;
        if (l >= 1)
            l /= 100; /* 95 means 95% */
        if (!(l > 0 && l < 1)) {
            wl_error_set(err, source, line, key, "a level in (0, 1) or a percentage, got '%.60s'",
                         value);
            return WL_EINVAL;
        }
        s->level = l;
        take_origin(&s->o_level, source, line);
        return WL_OK;
    }
    if (!strncmp(key, "set.", 4))
        return set_field(s, key + 4, value, source, line, err);
    if (!strcmp(key, "set")) {
        const char *eq = strchr(value, '=');
        char field[64];
        if (!eq || eq == value || (size_t)(eq - value) >= sizeof field) {
            wl_error_set(err, source, line, key, "expected KEY=LIST, got '%.60s'", value);
            return WL_EINVAL;
        }
        memcpy(field, value, (size_t)(eq - value));
        field[eq - value] = 0;
        return set_field(s, field, eq + 1, source, line, err);
    }
    wl_error_set(err, source, line, key, "unknown sweep key");
    return WL_EINVAL;
}

typedef struct {
    wl_sweep_spec *s;
    const char *source;
    wl_error *err;
} ini_ctx;

static int spec_handler(void *user, const char *section, const char *name, const char *value,
                        int line)
{
    ini_ctx *c = user;
    if (strcmp(section, "report") == 0) {
        char *dst = NULL;
        size_t cap = 0;
        if (!strcmp(name, "title"))
            dst = c->s->report_title, cap = sizeof c->s->report_title;
        else if (!strcmp(name, "objective"))
            dst = c->s->report_objective, cap = sizeof c->s->report_objective;
        if (!dst) {
            wl_error_set(c->err, c->source, line, name, "unknown key in [report] (title, objective)");
            return 0;
        }
        if (strlen(value) >= cap) {
            wl_error_set(c->err, c->source, line, name, "longer than %zu characters", cap - 1);
            return 0;
        }
        memcpy(dst, value, strlen(value) + 1);
        return 1;
    }
    char key[80];
    if (strcmp(section, "sweep") == 0)
        snprintf(key, sizeof key, "%s", name);
    else if (strcmp(section, "set") == 0)
        snprintf(key, sizeof key, "set.%.70s", name);
    else {
        wl_error_set(c->err, c->source, line, name,
                     "unknown section [%.60s] (expected [sweep], [set] or [report])", section);
        return 0;
    }
    return wl_sweep_spec_set(c->s, key, value, c->source, line, c->err) == WL_OK;
}

int wl_sweep_spec_parse(wl_sweep_spec *s, const char *text, size_t len, const char *source,
                        wl_error *err)
{
    ini_ctx c = {s, source, err};
    return wl_preset_ini_parse(text, len, source, spec_handler, &c, err);
}

int wl_sweep_spec_load(wl_sweep_spec *s, const char *path, wl_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = wl_core_read_file(path, &text, &len, err);
    if (!rc)
        rc = wl_sweep_spec_parse(s, text, len, path, err);
    free(text);
    return rc;
}

const char *wl_sweep_spec_report(const wl_sweep_spec *s, const char *key)
{
    const char *v = !strcmp(key, "title") ? s->report_title
                    : !strcmp(key, "objective") ? s->report_objective : NULL;
    return v && v[0] ? v : NULL;
}

/* ---- finishing -------------------------------------------------------------- */

static int add_default(wl_core_strlist *l, const char *v)
{
    wl_error e;
    return l->n ? WL_OK : wl_core_parse_names(v, "", 0, "", l, &e);
}

static int add_default_num(wl_core_numlist *l, double v)
{
    if (l->n)
        return WL_OK;
    wl_error e;
    char t[WL_CORE_NUM_TEXT];
    wl_core_num_text(t, sizeof t, v);
    return wl_core_parse_list(t, -1e300, 1e300, 0, "", 0, "", l, &e);
}

/* The precision a trace was recorded in: that of its first tensor-core
 * GEMM, else of its first GEMM. */
static wl_dtype trace_dtype(const wl_core_workload *wl)
{
    wl_dtype first = WL_DT_FP32;
    int seen = 0;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind != WL_K_GEMM)
            continue;
        if (k->tensor_core && k->in_dtype != WL_DT_TF32)
            return k->in_dtype;
        if (!seen)
            first = k->in_dtype, seen = 1;
    }
    return first == WL_DT_TF32 ? WL_DT_FP32 : first;
}

/* The GPU of variant v of GPU gi, with the set values applied; err names
 * the set axis whose value failed. */
static int variant_gpu(const wl_sweep_spec *s, size_t gi, unsigned long long v, wl_core_gpu *g,
                       wl_error *err)
{
    *g = s->gpu[gi];
    if (!s->nset)
        return WL_OK;
    const char *keys[MAX_SET];
    double x[MAX_SET];
    for (size_t k = s->nset; k-- > 0;) {
        keys[k] = s->set[k].key;
        x[k] = s->set[k].vals.v[v % s->set[k].vals.n];
        v /= s->set[k].vals.n;
    }
    size_t bad = 0;
    int rc = wl_preset_gpu_apply(g, keys, x, s->nset, &bad, err);
    if (rc) {
        wl_error_locate(err, s->set[bad].o.source, s->set[bad].o.line);
        return WL_EINVAL;
    }
    if (wl_core_gpu_check(g, err)) {
        /* the relation that broke: name the set axis of its field, else the first */
        size_t k = 0;
        while (k + 1 < s->nset && strcmp(s->set[k].key, err->field) != 0)
            k++;
        char text[256];
        snprintf(text, sizeof text, "%s", err->text);
        wl_error_set(err, s->set[k].o.source, s->set[k].o.line, err->field,
                     "%s with these set values: %s", s->gpus.v[gi], text);
        return WL_EINVAL;
    }
    return WL_OK;
}

static unsigned long long n_variants(const wl_sweep_spec *s)
{
    unsigned long long n = 1;
    for (size_t k = 0; k < s->nset; k++)
        n *= s->set[k].vals.n;
    return n;
}

/* Each GPU sweeps its own clocks: its whole grid, its own maximum, or the
 * requested clocks that lie in its range (where its V-f curve is defined;
 * any clock with a fixed voltage). Clipped ones are counted for a note. */
static int gpu_clocks(wl_sweep_spec *s, int requested, wl_error *err)
{
    size_t ng = s->gpus.n;
    s->gclk = calloc(ng, sizeof *s->gclk);
    s->clipped = calloc(ng, sizeof *s->clipped);
    if (!s->gclk || !s->clipped)
        return WL_ENOMEM;
    s->maxclk = 0;
    for (size_t i = 0; i < ng; i++) {
        const wl_core_gpu *g = &s->gpu[i];
        wl_core_numlist *l = &s->gclk[i];
        size_t n = s->clock_max ? 1 : requested ? s->clocks.n : wl_core_gpu_clock_count(g);
        if (!(l->v = malloc(n * sizeof *l->v)))
            return WL_ENOMEM;
        l->cap = n;
        for (size_t k = 0; k < n; k++) {
            double f = s->clock_max ? g->sm_clock_max_mhz
                       : requested  ? s->clocks.v[k]
                                    : wl_core_gpu_clock(g, k);
            if (requested && !s->vfix.n && !wl_core_gpu_clock_in_range(g, f))
                s->clipped[i]++;
            else
                l->v[l->n++] = f;
        }
        if (!l->n) {
            wl_error_set(err, s->o_clock.source, s->o_clock.line, "clock",
                         "no requested clock lies in %s's range %.0f-%.0f MHz", g->id,
                         g->sm_clock_min_mhz, g->sm_clock_max_mhz);
            return WL_EINVAL;
        }
        if (l->n > s->maxclk)
            s->maxclk = l->n;
    }
    return WL_OK;
}

/* Whether a prefill shape builds (its errors name batch or seq). */
static int build_check(const wl_sweep_spec *s, const wl_core_model *m, const wl_core_shape *sh,
                       wl_error *err)
{
    wl_core_workload *w = NULL;
    int rc = s->scope == WL_SWEEP_LAYER && m->style != WL_STYLE_RESNET
                 ? wl_core_build_layer(m, sh, &w, err)
                 : wl_core_build(m, sh, &w, err);
    wl_core_workload_free(w);
    return rc;
}

static int add_text(wl_core_strlist *l, const char *text)
{
    char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return WL_ENOMEM;
    l->v = v;
    if (!(v[l->n] = strdup(text)))
        return WL_ENOMEM;
    l->n++;
    return WL_OK;
}

static int add_warning(wl_sweep_spec *s, const char *text)
{
    return add_text(&s->warnings, text);
}

static int finish(wl_sweep_spec *s, wl_error *err)
{
    if (s->traces.n && (s->models.n || s->batch.n || s->seq.n || s->nattn)) {
        wl_error_set(err, s->o_trace.source, s->o_trace.line, "trace",
                     "a trace fixes its model and shape: give no model, batch, seq or attention");
        return WL_EINVAL;
    }
    if (s->traces.n) {
        for (size_t i = 0; i < s->nmode; i++)
            if (s->modes[i] != WL_MODE_PREFILL) {
                wl_error_set(err, s->o_mode.source, s->o_mode.line, "mode",
                             "a trace is the forward pass it recorded: mode %s needs a model",
                             wl_mode_name(s->modes[i]));
                return WL_EINVAL;
            }
    }
    if (s->traces.n && s->scope == WL_SWEEP_LAYER) {
        wl_error_set(err, s->o_trace.source, s->o_trace.line, "scope",
                     "scope layer needs models, not traces");
        return WL_EINVAL;
    }
    if (s->vfix.n && s->voff.n) {
        wl_error_set(err, s->o_vfix.source, s->o_vfix.line, "voltage_mv",
                     "a fixed voltage and a voltage offset exclude each other");
        return WL_EINVAL;
    }
    int rc = WL_OK;
    if ((rc = add_default(&s->gpus, "a100-pcie-40gb")) ||
        (!s->traces.n && (rc = add_default(&s->models, "gpt2"))) ||
        (rc = add_default_num(&s->batch, 1)) || (rc = add_default_num(&s->seq, 128)))
        return rc;
    if (!s->vfix.n && (rc = add_default_num(&s->voff, 0)))
        return rc;
    if (!s->nattn) {
        s->attn = calloc(1, sizeof *s->attn);
        if (!s->attn)
            return WL_ENOMEM;
        s->nattn = 1;
        /* a serving engine's attention is a fused kernel */
        if (s->opts.launch == WL_LAUNCH_GRAPHS)
            s->attn[0] = WL_ATTN_FLASH;
    }
    if (!s->nmode) {
        s->modes = calloc(1, sizeof *s->modes);
        if (!s->modes)
            return WL_ENOMEM;
        s->nmode = 1;
    }
    if (!s->opts.gen)
        s->opts.gen = 128;
    if (!s->opts.grad_accum)
        s->opts.grad_accum = 1;
    size_t ng = s->gpus.n;
    s->gpu = calloc(ng, sizeof *s->gpu);
    if (!s->gpu)
        return WL_ENOMEM;
    for (size_t i = 0; i < ng; i++)
        if ((rc = wl_preset_gpu_load(s->gpus.v[i], &s->gpu[i], err))) {
            if (rc == WL_ENOTFOUND)
                wl_error_locate(err, s->o_gpu.source, s->o_gpu.line);
            return rc;
        }
    /* measured idle tables replace the presets' idle curves before any set */
    if ((rc = wl_preset_apply_idle_specs(s->gpu, ng, (const char *const *)s->idle.v, s->idle.n,
                                         NULL, err))) {
        if (!strcmp(err->field, "idle"))
            wl_error_locate(err, s->o_idle.source, s->o_idle.line);
        return rc;
    }
    /* the host issues every GPU's kernels: it replaces each preset's host */
    if (s->host.n > 1) {
        wl_error_set(err, s->o_host.source, s->o_host.line, "host",
                     "one host per run (got %zu); run once per host", s->host.n);
        return WL_EINVAL;
    }
    if (s->host.n && (rc = wl_preset_gpus_set_host(s->host.v[0], s->gpu, ng, err))) {
        if (rc == WL_ENOTFOUND)
            wl_error_locate(err, s->o_host.source, s->o_host.line);
        return rc;
    }
    if (s->level > 0) {
        s->unc = calloc(ng, sizeof *s->unc);
        if (!s->unc)
            return WL_ENOMEM;
        for (size_t i = 0; i < ng; i++)
            if ((rc = wl_calib_uncertainty_load(s->gpus.v[i], &s->unc[i], err)))
                return rc;
    }
    int requested = s->clocks.n > 0 && !s->clock_max;
    if (s->clock_max) {
        char t[WL_CORE_NUM_TEXT];
        wl_core_num_text(t, sizeof t, s->gpu[0].sm_clock_max_mhz);
        if ((rc = wl_core_parse_list(t, 0, 1e6, 0, "", 0, "clock", &s->clocks, err)))
            return rc;
    }
    if (!s->clocks.n) {
        const wl_core_gpu *g = &s->gpu[0];
        size_t n = wl_core_gpu_clock_count(g);
        s->clocks.v = malloc(n * sizeof *s->clocks.v);
        if (!s->clocks.v)
            return WL_ENOMEM;
        s->clocks.cap = n;
        for (size_t i = 0; i < n; i++)
            s->clocks.v[s->clocks.n++] = wl_core_gpu_clock(g, i);
    }
    if ((rc = gpu_clocks(s, requested, err)))
        return rc;
    if (s->traces.n) {
        s->trace_wl = calloc(s->traces.n, sizeof *s->trace_wl);
        s->trace_dt = calloc(s->traces.n, sizeof *s->trace_dt);
        if (!s->trace_wl || !s->trace_dt)
            return WL_ENOMEM;
        for (size_t i = 0; i < s->traces.n; i++) {
            if ((rc = wl_core_trace_load(s->traces.v[i], &s->trace_wl[i], err)))
                return rc;
            /* what a profile's import kept at measured times */
            const char *nt = wl_core_workload_note(s->trace_wl[i]);
            if (nt[0]) {
                char *t = wl_core_strprintf("%s: %s", s->traces.v[i], nt);
                rc = t ? add_text(&s->notes, t) : WL_ENOMEM;
                free(t);
                if (rc)
                    return rc;
            }
            s->trace_dt[i] = trace_dtype(s->trace_wl[i]);
            /* a trace runs as recorded, or retyped to fp32 as eager PyTorch would */
            for (size_t d = 0; d < s->ndt; d++)
                if (s->dtypes[d] != s->trace_dt[i] && s->dtypes[d] != WL_DT_FP32) {
                    wl_error_set(err, s->o_dtype.source, s->o_dtype.line, "dtype",
                                 "%s was recorded in %s: it runs as %s or retyped to fp32, "
                                 "not as %s", s->traces.v[i], wl_dtype_name(s->trace_dt[i]),
                                 wl_dtype_name(s->trace_dt[i]), wl_dtype_name(s->dtypes[d]));
                    return WL_EINVAL;
                }
        }
        s->n_workloads = s->traces.n;
    } else {
        if (!s->ndt) {
            s->dtypes = calloc(1, sizeof *s->dtypes);
            if (!s->dtypes)
                return WL_ENOMEM;
            s->dtypes[0] = WL_DT_BF16;
            s->ndt = 1;
        }
        s->model = calloc(s->models.n, sizeof *s->model);
        if (!s->model)
            return WL_ENOMEM;
        for (size_t i = 0; i < s->models.n; i++)
            if ((rc = wl_preset_model_load(s->models.v[i], &s->model[i], err))) {
                if (rc == WL_ENOTFOUND)
                    wl_error_locate(err, s->o_model.source, s->o_model.line);
                return rc;
            }
        /* a built-in model named by another spelling ("GPT-3-13B") is
         * written under its id, so tables of one model agree */
        for (size_t i = 0; i < s->models.n; i++) {
            const char *nm = s->models.v[i], *id = NULL;
            size_t l = strlen(nm);
            if (!strchr(nm, '/') && !(l > 4 && !strcmp(nm + l - 4, ".ini")) &&
                !wl_preset_text(WL_PRESET_MODEL, nm))
                id = wl_preset_model_resolve(nm);
            char *copy = id ? strdup(id) : NULL;
            if (id && !copy)
                return WL_ENOMEM;
            if (copy) {
                free(s->models.v[i]);
                s->models.v[i] = copy;
            }
        }
        s->n_workloads = s->models.n;
        /* every shape must build: errors name the batch and seq origins.
         * The builders' limits (positive dimensions, the tensor-size caps)
         * bound quantities that grow with batch and with seq, so the corners
         * of the batch x seq grid decide for the shapes between them; a
         * sweep of 10^5 batches no longer builds 10^5 models to start. */
        double bx[2] = {INFINITY, -INFINITY}, qx[2] = {INFINITY, -INFINITY};
        for (size_t b = 0; b < s->batch.n; b++) {
            bx[0] = fmin(bx[0], s->batch.v[b]);
            bx[1] = fmax(bx[1], s->batch.v[b]);
        }
        for (size_t q = 0; q < s->seq.n; q++) {
            qx[0] = fmin(qx[0], s->seq.v[q]);
            qx[1] = fmax(qx[1], s->seq.v[q]);
        }
        size_t nb = s->batch.n ? (bx[0] < bx[1] ? 2 : 1) : 0;
        size_t nq = s->seq.n ? (qx[0] < qx[1] ? 2 : 1) : 0;
        /* a mode's own limits (a model it cannot train or decode, the
         * length of a generation) are checked on the smallest shape, the
         * sizes on the corners */
        for (size_t m = 0; m < s->models.n; m++)
            for (size_t md = 0; md < s->nmode; md++)
                for (size_t b = 0; b < nb; b++)
                    for (size_t q = 0; q < nq; q++) {
                        wl_core_shape sh = s->opts;
                        sh.batch = (long long)bx[b];
                        sh.seq = (long long)qx[q];
                        sh.dtype = s->dtypes[0];
                        sh.attention = s->attn[0];
                        sh.mode = s->modes[md];
                        if (sh.mode == WL_MODE_DECODE && (b || q))
                            continue; /* a generation's size grows with seq and gen only */
                        if (sh.mode == WL_MODE_DECODE)
                            sh.seq = (long long)qx[nq - 1];
                        wl_core_build_info info;
                        rc = sh.mode == WL_MODE_PREFILL
                                 ? build_check(s, &s->model[m], &sh, err)
                                 : wl_core_build_info_of(&s->model[m], &sh, 0, &info, err);
                        if (rc) {
                            const origin *o = !strcmp(err->field, "batch") ? &s->o_batch
                                              : !strcmp(err->field, "seq") ? &s->o_seq
                                              : !strcmp(err->field, "mode") ? &s->o_mode
                                              : !strcmp(err->field, "gen") ||
                                                        !strcmp(err->field, "grad_accum")
                                                  ? &s->o_train
                                                  : &s->o_model;
                            wl_error_locate(err, o->source, o->line);
                            return rc;
                        }
                    }
    }
    /* a context past a model's learned position table cannot run (PyTorch
     * indexes past the table); the prediction is still made, and said so */
    for (size_t m = 0; !s->traces.n && m < s->models.n; m++) {
        const wl_core_model *md = &s->model[m];
        double longest = 0;
        for (size_t q = 0; q < s->seq.n; q++)
            longest = fmax(longest, s->seq.v[q]);
        int decodes = 0;
        for (size_t k = 0; k < s->nmode; k++)
            decodes |= s->modes[k] == WL_MODE_DECODE;
        if (decodes)
            longest += (double)s->opts.gen;
        if (md->positions == WL_POS_LEARNED && md->max_positions > 0 && longest > md->max_positions) {
            char t[300];
            snprintf(t, sizeof t, "%.60s has %d learned positions: a context of %.0f tokens%s "
                     "cannot run in PyTorch (its position table ends at %d); predicted as if it "
                     "could", s->models.v[m], md->max_positions, longest,
                     decodes ? " (prompt and generation)" : "", md->max_positions);
            if ((rc = add_warning(s, t)))
                return rc;
        }
    }
    /* every GPU variant must be valid: check each combination of set values */
    unsigned long long nvar = n_variants(s);
    for (size_t gi = 0; gi < ng; gi++)
        for (unsigned long long v = 0; v < nvar; v++) {
            wl_core_gpu g;
            if ((rc = variant_gpu(s, gi, v, &g, err)))
                return rc;
        }
    return WL_OK;
}

size_t wl_sweep_spec_warning_count(const wl_sweep_spec *s)
{
    return s->finished ? s->warnings.n : 0;
}

const char *wl_sweep_spec_warning(const wl_sweep_spec *s, size_t i)
{
    return s->finished && i < s->warnings.n ? s->warnings.v[i] : NULL;
}

size_t wl_sweep_spec_note_count(const wl_sweep_spec *s)
{
    return s->finished ? s->notes.n : 0;
}

const char *wl_sweep_spec_note(const wl_sweep_spec *s, size_t i)
{
    return s->finished && i < s->notes.n ? s->notes.v[i] : NULL;
}

size_t wl_sweep_spec_clipped(const wl_sweep_spec *s, size_t gpu)
{
    return s->finished && gpu < s->gpus.n ? s->clipped[gpu] : 0;
}

int wl_sweep_spec_finish(wl_sweep_spec *s, wl_error *err)
{
    if (s->finished)
        return WL_OK;
    int rc = finish(s, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, "sweep", 0, "", "out of memory");
    if (!rc)
        s->finished = 1;
    return rc;
}

/* ---- enumeration -------------------------------------------------------------
 * Outer combinations: gpu, set values (first key outermost), workload,
 * batch, seq, dtype, attention; inner points: voltage, clock. */

static unsigned long long n_shapes(const wl_sweep_spec *s)
{
    return s->traces.n ? (unsigned long long)s->ndt + (s->ndt == 0)
                       : (unsigned long long)(s->batch.n * s->seq.n * s->ndt * s->nattn * s->nmode);
}

static unsigned long long n_outer(const wl_sweep_spec *s)
{
    return (unsigned long long)s->gpus.n * n_variants(s) * s->n_workloads * n_shapes(s);
}

static const wl_core_numlist *volts(const wl_sweep_spec *s) { return s->vfix.n ? &s->vfix : &s->voff; }

/* Points per outer combination: voltages x the longest GPU clock list; a
 * GPU with fewer clocks leaves the rest of its stride empty. */
static unsigned long long n_inner(const wl_sweep_spec *s)
{
    return (unsigned long long)(volts(s)->n * s->maxclk);
}

unsigned long long wl_sweep_spec_points(const wl_sweep_spec *s)
{
    return s->finished ? n_outer(s) * n_inner(s) : 0;
}

size_t wl_sweep_spec_axis_count(const wl_sweep_spec *s, const char *axis)
{
    if (!s->finished)
        return 0;
    if (!strcmp(axis, "gpu")) return s->gpus.n;
    if (!strcmp(axis, "model")) return s->n_workloads;
    if (!strcmp(axis, "batch")) return s->traces.n ? 1 : s->batch.n;
    if (!strcmp(axis, "seq")) return s->traces.n ? 1 : s->seq.n;
    if (!strcmp(axis, "dtype")) return s->ndt ? s->ndt : 1;
    if (!strcmp(axis, "attention")) return s->traces.n ? 1 : s->nattn;
    if (!strcmp(axis, "mode")) return s->traces.n ? 1 : s->nmode;
    if (!strcmp(axis, "voltage")) return volts(s)->n;
    if (!strcmp(axis, "clock")) return s->clocks.n;
    for (size_t k = 0; k < s->nset; k++)
        if (!strncmp(axis, "set.", 4) && !strcmp(axis + 4, s->set[k].key))
            return s->set[k].vals.n;
    return 0;
}

int wl_sweep_spec_check_clocks(const wl_sweep_spec *s, const char *source, wl_error *err)
{
    if (!s->finished || !s->gpus.n) {
        wl_error_set(err, source, 0, "", "the sweep is not finished");
        return WL_EINVAL;
    }
    for (size_t i = 0; !s->vfix.n && i < s->clocks.n; i++) {
        int rc = wl_core_gpu_clock_check(&s->gpu[0], s->clocks.v[i], source, 0, err);
        if (rc)
            return rc;
    }
    return WL_OK;
}

const double *wl_sweep_spec_clocks(const wl_sweep_spec *s, size_t *n)
{
    *n = s->finished ? s->clocks.n : 0;
    return s->clocks.v;
}

const wl_core_gpu *wl_sweep_spec_gpu(const wl_sweep_spec *s, size_t i)
{
    return s->finished && i < s->gpus.n ? &s->gpu[i] : NULL;
}

double wl_sweep_spec_level(const wl_sweep_spec *s)
{
    return s->level;
}

const wl_calib_uncertainty *wl_sweep_spec_uncertainty(const wl_sweep_spec *s, size_t i)
{
    return s->finished && s->unc && i < s->gpus.n ? &s->unc[i] : NULL;
}

int wl_sweep_spec_workload(const wl_sweep_spec *s, wl_core_workload **wl, wl_sweep_shape_id *id,
                           wl_error *err);

typedef struct {
    size_t gpu, wl, b, sq, dt, at, md;
    unsigned long long variant;
    size_t setidx[MAX_SET];
} combo;

static void decode(const wl_sweep_spec *s, unsigned long long o, combo *c)
{
    memset(c, 0, sizeof *c);
    if (!s->traces.n) {
        c->md = o % s->nmode; o /= s->nmode;
        c->at = o % s->nattn; o /= s->nattn;
        c->dt = o % s->ndt; o /= s->ndt;
        c->sq = o % s->seq.n; o /= s->seq.n;
        c->b = o % s->batch.n; o /= s->batch.n;
    } else {
        unsigned long long nd = n_shapes(s);
        c->dt = o % nd; o /= nd;
    }
    c->wl = o % s->n_workloads;
    o /= s->n_workloads;
    unsigned long long nv = n_variants(s);
    c->variant = o % nv;
    unsigned long long v = c->variant;
    for (size_t k = s->nset; k-- > 0;) {
        c->setidx[k] = v % s->set[k].vals.n;
        v /= s->set[k].vals.n;
    }
    c->gpu = o / nv;
}

/* ---- columns ------------------------------------------------------------------- */

/* Parameter columns, then the results: one vocabulary for predict, sweep
 * and everything that reads them. */
enum { R_CLOCK, R_EFF, R_VOLT, R_FEAS, R_THR, R_TIME, R_POWER, R_ENERGY, R_DYNC, R_DYNM,
       R_STATIC, R_LAUNCH, R_MEM, R_FITS, R_COUNT };
static const wl_results_col result_cols[R_COUNT] = {
    WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0),        WL_RESULTS_COL("effective_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("voltage_mv", WL_COL_NUM, 1, 0),          WL_RESULTS_COL("feasible", WL_COL_BOOL, 0, 0),
    WL_RESULTS_COL("throttled", WL_COL_BOOL, 0, 0),          WL_RESULTS_COL("time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("power_w", WL_COL_NUM, 3, 0),             WL_RESULTS_COL("energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_dyn_compute_j", WL_COL_NUM, 6, 0), WL_RESULTS_COL("energy_dyn_memory_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_static_j", WL_COL_NUM, 6, 0),     WL_RESULTS_COL("launch_bound_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("memory_gb", WL_COL_NUM, 3, 0),           WL_RESULTS_COL("fits", WL_COL_BOOL, 0, 0)};
static const wl_results_col iv_cols[6] = {
    WL_RESULTS_COL("time_lo_ms", WL_COL_NUM, 5, 0),  WL_RESULTS_COL("time_hi_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("power_lo_w", WL_COL_NUM, 3, 0),  WL_RESULTS_COL("power_hi_w", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("energy_lo_j", WL_COL_NUM, 6, 0), WL_RESULTS_COL("energy_hi_j", WL_COL_NUM, 6, 0)};
/* Training and generation results, present when the sweep has the mode. */
enum { T_FWD, T_BWD, T_OPT, T_EFWD, T_EBWD, T_EOPT, T_MICRO, T_MODEL, T_HW, T_MFU, T_WEIGHTS,
       T_MASTER, T_GRADS, T_OPTST, T_ACT, T_COUNT };
static const wl_results_col train_cols[T_COUNT] = {
    WL_RESULTS_COL("time_fwd_ms", WL_COL_NUM, 5, 0),     WL_RESULTS_COL("time_bwd_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("time_opt_ms", WL_COL_NUM, 5, 0),     WL_RESULTS_COL("energy_fwd_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_bwd_j", WL_COL_NUM, 6, 0),    WL_RESULTS_COL("energy_opt_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("micro_batches", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("model_tflop", WL_COL_NUM, 6, 0),     WL_RESULTS_COL("hardware_tflop", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("mfu", WL_COL_NUM, 4, 0),             WL_RESULTS_COL("weights_gb", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("master_gb", WL_COL_NUM, 3, 0),       WL_RESULTS_COL("grads_gb", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("optimizer_gb", WL_COL_NUM, 3, 0),    WL_RESULTS_COL("activations_gb", WL_COL_NUM, 3, 0)};
enum { D_TTFT, D_TPOT, D_EPT, D_KV, D_EPRE, D_EDEC, D_COUNT };
static const wl_results_col decode_cols[D_COUNT] = {
    WL_RESULTS_COL("ttft_ms", WL_COL_NUM, 5, 0),           WL_RESULTS_COL("tpot_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("energy_per_token_j", WL_COL_NUM, 6, 0), WL_RESULTS_COL("kv_cache_gb", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("energy_prefill_j", WL_COL_NUM, 6, 0),   WL_RESULTS_COL("energy_decode_j", WL_COL_NUM, 6, 0)};

static int has_mode(const wl_sweep_spec *s, wl_mode m)
{
    for (size_t i = 0; i < s->nmode; i++)
        if (s->modes[i] == m)
            return 1;
    return 0;
}

static const wl_results_col class_cols[7] = {
    WL_RESULTS_COL("kernel_class", WL_COL_TEXT, 0, 15),    WL_RESULTS_COL("class_launches", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("class_time_ms", WL_COL_NUM, 6, 0),     WL_RESULTS_COL("class_dyn_energy_j", WL_COL_NUM, 7, 0),
    WL_RESULTS_COL("class_energy_j", WL_COL_NUM, 7, 0),    WL_RESULTS_COL_SIG("class_gflop", 3),
    WL_RESULTS_COL("class_dram_gb", WL_COL_NUM, 6, 0)};

/* ---- plans ----------------------------------------------------------------------- */

struct wl_sweep_plan {
    const wl_sweep_spec *s;
    wl_sweep_options o;
    wl_results_col *cols;
    size_t ncols, nparam;  /* columns before sm_clock_mhz */
    wl_results_writer *w;
    size_t train_at, decode_at;    /* first training / decode column (0: none) */
    unsigned long long lo, hi;     /* points of this slice */
    unsigned long long o_lo, o_hi; /* outer combinations touching it */
    unsigned long long rows;       /* rows this slice writes */
    uint64_t fingerprint;
};

/* FNV-1a, 64 bits */
uint64_t wl_sweep_hash(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}


static uint64_t fnv_str(uint64_t h, const char *s) { return wl_sweep_hash(h, s, strlen(s) + 1); }

static uint64_t fnv_nums(uint64_t h, const wl_core_numlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        char t[40];
        snprintf(t, sizeof t, "%.17g", l->v[i]);
        h = fnv_str(h, t);
    }
    return fnv_str(h, "|");
}

/* Everything that decides the output, so that shards of different sweeps
 * are never merged. */
static uint64_t fingerprint(const wl_sweep_plan *p)
{
    const wl_sweep_spec *s = p->s;
    uint64_t h = fnv_str(WL_SWEEP_HASH_BASIS, "wattlas " WL_VERSION);
    for (size_t i = 0; i < p->ncols; i++)
        h = fnv_str(h, p->cols[i].name);
    const wl_core_strlist *names[5] = {&s->gpus, &s->models, &s->traces, &s->idle, &s->host};
    for (int k = 0; k < 5; k++) {
        for (size_t i = 0; i < names[k]->n; i++)
            h = fnv_str(h, names[k]->v[i]);
        h = fnv_str(h, "|");
    }
    const wl_core_numlist *nums[5] = {&s->batch, &s->seq, &s->clocks, &s->voff, &s->vfix};
    for (int k = 0; k < 5; k++)
        h = fnv_nums(h, nums[k]);
    for (size_t k = 0; k < s->nset; k++)
        h = fnv_nums(fnv_str(h, s->set[k].key), &s->set[k].vals);
    h = wl_sweep_hash(h, s->dtypes, s->ndt * sizeof *s->dtypes);
    h = wl_sweep_hash(h, s->attn, s->nattn * sizeof *s->attn);
    h = wl_sweep_hash(h, s->modes, s->nmode * sizeof *s->modes);
    long long topts[8] = {s->opts.optimizer, s->opts.master_none, s->opts.recompute,
                          s->opts.grad_accum, s->opts.gen, s->opts.launch,
                          s->opts.stack, s->opts.impl};
    h = wl_sweep_hash(h, topts, sizeof topts);
    int opts[5] = {(int)s->scope, s->classes, s->no_power_limit, (int)p->o.format,
                   (int)lround(s->level * 1e6)};
    h = wl_sweep_hash(h, opts, sizeof opts);
    h = wl_sweep_hash(h, &s->learned_hash, sizeof s->learned_hash);
    return fnv_str(h, wl_core_latency_name(s->lat));
}

static int make_columns(wl_sweep_plan *p)
{
    const wl_sweep_spec *s = p->s;
    size_t n = 1 + s->nset + 8 + 1 + R_COUNT + (s->level > 0 ? 6 : 0) + T_COUNT + D_COUNT +
               (s->classes ? 7 : 0);
    p->cols = calloc(n, sizeof *p->cols);
    if (!p->cols)
        return WL_ENOMEM;
    size_t k = 0;
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 14);
    for (size_t i = 0; i < s->nset; i++)
        p->cols[k++] = (wl_results_col)WL_RESULTS_COL(s->set[i].key, WL_COL_NUM, -1, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("model", WL_COL_TEXT, 0, 10);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("batch", WL_COL_INT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("seq", WL_COL_INT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 5);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("attention", WL_COL_TEXT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("mode", WL_COL_TEXT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("scope", WL_COL_TEXT, 0, 0);
    p->cols[k++] = s->vfix.n ? (wl_results_col)WL_RESULTS_COL("fixed_voltage_mv", WL_COL_NUM, 1, 0)
                             : (wl_results_col)WL_RESULTS_COL("voltage_offset_mv", WL_COL_NUM, 1, 0);
    p->nparam = k;
    for (size_t i = 0; i < R_COUNT; i++)
        p->cols[k++] = result_cols[i];
    for (size_t i = 0; s->level > 0 && i < 6; i++)
        p->cols[k++] = iv_cols[i];
    p->train_at = p->decode_at = 0;
    if (has_mode(s, WL_MODE_TRAIN)) {
        p->train_at = k;
        for (size_t i = 0; i < T_COUNT; i++)
            p->cols[k++] = train_cols[i];
    }
    if (has_mode(s, WL_MODE_DECODE)) {
        p->decode_at = k;
        for (size_t i = 0; i < D_COUNT; i++)
            p->cols[k++] = decode_cols[i];
    }
    for (size_t i = 0; s->classes && i < 7; i++)
        p->cols[k++] = class_cols[i];
    p->ncols = k;
    /* a table shows only the parameters that vary (a title names the rest) */
    if (p->o.format == WL_FMT_TABLE) {
        static const char *const axis[8] = {"model", "batch", "seq", "dtype", "attention", "mode",
                                            "scope", "voltage"};
        size_t j = 0;
        p->cols[j++].table_hide = s->gpus.n == 1;
        for (size_t i = 0; i < s->nset; i++)
            p->cols[j++].table_hide = s->set[i].vals.n == 1;
        for (int i = 0; i < 8; i++)
            p->cols[j++].table_hide = wl_sweep_spec_axis_count(s, axis[i]) <= 1;
    }
    return WL_OK;
}

/* Kernel classes present in a workload (rows per point at kernel scope). */
static int classes_present(const wl_core_workload *wl, int *present)
{
    int n = 0;
    memset(present, 0, WL_CLASS_COUNT * sizeof *present);
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        int c = wl_core_kernel_class(wl_core_workload_kernel(wl, i));
        if (!present[c])
            present[c] = 1, n++;
    }
    return n;
}

static int shape_workload(const wl_sweep_spec *s, const combo *c, wl_core_workload **wl,
                          int *own, wl_error *err);

/* Points of outer combination oi with an index in [lo, hi) that exist: the
 * first gclk[gpu].n of each voltage's stride of maxclk. */
static unsigned long long present_points(const wl_sweep_spec *s, unsigned long long oi,
                                         size_t gpu, unsigned long long lo, unsigned long long hi)
{
    unsigned long long n = 0, base = oi * n_inner(s);
    for (size_t vi = 0; vi < volts(s)->n; vi++) {
        unsigned long long a = base + vi * s->maxclk, b = a + s->gclk[gpu].n;
        if (a < lo)
            a = lo;
        if (b > hi)
            b = hi;
        n += b > a ? b - a : 0;
    }
    return n;
}

/* Rows the slice writes: points, or points x classes at kernel scope. */
static int count_rows(wl_sweep_plan *p, wl_error *err)
{
    const wl_sweep_spec *s = p->s;
    p->rows = 0;
    for (unsigned long long oi = p->o_lo; oi < p->o_hi; oi++) {
        combo c;
        decode(s, oi, &c);
        unsigned long long pts = present_points(s, oi, c.gpu, p->lo, p->hi);
        if (!s->classes) {
            p->rows += pts;
            continue;
        }
        wl_core_workload *wl = NULL;
        int own = 0, present[WL_CLASS_COUNT];
        int rc = shape_workload(s, &c, &wl, &own, err);
        if (rc)
            return rc;
        p->rows += pts * (unsigned long long)classes_present(wl, present);
        if (own)
            wl_core_workload_free(wl);
    }
    return WL_OK;
}

int wl_sweep_plan_create(const wl_sweep_spec *s, const wl_sweep_options *o,
                         wl_sweep_plan **out, wl_error *err)
{
    *out = NULL;
    if (!s->finished) {
        wl_error_set(err, "sweep", 0, "", "the spec is not finished");
        return WL_EINVAL;
    }
    unsigned sc = o->shard_count ? o->shard_count : 1;
    if (o->shard_index > sc || (o->shard_count && !o->shard_index)) {
        wl_error_set(err, "sweep", 0, "shard", "shard %u/%u: expected 1 <= I <= N", o->shard_index,
                     o->shard_count);
        return WL_EINVAL;
    }
    if (o->shard_count && (o->format == WL_FMT_JSON || o->format == WL_FMT_TABLE)) {
        wl_error_set(err, "sweep", 0, "shard", "shards are written as csv or ndjson, not %s",
                     wl_results_format_name(o->format));
        return WL_EINVAL;
    }
    wl_sweep_plan *p = calloc(1, sizeof *p);
    if (!p)
        return WL_ENOMEM;
    p->s = s;
    p->o = *o;
    int rc = make_columns(p);
    if (!rc)
        rc = wl_results_writer_create(NULL, o->format, p->cols, p->ncols, &p->w);
    if (rc) {
        wl_sweep_plan_free(p);
        return rc;
    }
    unsigned long long total = wl_sweep_spec_points(s), ni = n_inner(s);
    unsigned idx = o->shard_count ? o->shard_index - 1 : 0;
    /* contiguous slices, so shard outputs concatenate to the full run */
    p->lo = (unsigned long long)((long double)total * idx / sc);
    p->hi = (unsigned long long)((long double)total * (idx + 1) / sc);
    p->o_lo = p->lo / ni;
    p->o_hi = p->hi > p->lo ? (p->hi - 1) / ni + 1 : p->o_lo;
    p->fingerprint = fingerprint(p);
    if ((rc = count_rows(p, err))) {
        wl_sweep_plan_free(p);
        return rc;
    }
    *out = p;
    return WL_OK;
}

void wl_sweep_plan_free(wl_sweep_plan *p)
{
    if (!p)
        return;
    wl_results_writer_free(p->w);
    free(p->cols);
    free(p);
}

unsigned long long wl_sweep_plan_chunks(const wl_sweep_plan *p) { return p->o_hi - p->o_lo; }
unsigned long long wl_sweep_plan_points(const wl_sweep_plan *p) { return p->hi - p->lo; }
wl_results_writer *wl_sweep_plan_writer(wl_sweep_plan *p) { return p->w; }

void wl_sweep_plan_finish(wl_sweep_plan *p)
{
    wl_results_writer_finish(p->w);
    p->w = NULL;
}

#define SHARD_TAG "# wattlas-shard"

void wl_sweep_shard_line(FILE *out, unsigned index, unsigned count, uint64_t fingerprint,
                         unsigned long long lo, unsigned long long hi, unsigned long long total,
                         unsigned long long rows, wl_results_format format)
{
    fprintf(out, SHARD_TAG " %u/%u sweep=%016llx points=%llu-%llu/%llu rows=%llu format=%s\n", index,
            count, (unsigned long long)fingerprint, lo, hi, total, rows, wl_results_format_name(format));
}

static void param_cells(const wl_sweep_plan *p, const combo *c, const wl_core_gpu *g,
                        wl_results_cell *cells);

/* A table leaves out the parameters that do not vary: one line names them
 * and their values, as the first combination's cells give them ("# gpu
 * a100-pcie-40gb, model gpt2, batch 1, ..."). */
static void constants_line(const wl_sweep_plan *p, FILE *out)
{
    const wl_sweep_spec *s = p->s;
    wl_results_cell cells[MAX_SET + 16];
    if (p->nparam > sizeof cells / sizeof *cells)
        return;
    combo c;
    decode(s, 0, &c);
    wl_core_gpu g;
    wl_error e = {0};
    if (variant_gpu(s, c.gpu, c.variant, &g, &e))
        return;
    param_cells(p, &c, &g, cells);
    cells[p->nparam - 1] = (wl_results_cell){NULL, volts(s)->v[0]};
    wl_results_buf b = {0};
    for (size_t i = 0; i < p->nparam; i++) {
        char t[WL_RESULTS_NUM_MAX];
        const char *v = cells[i].s;
        if (!v && !isnan(cells[i].v) &&
            wl_results_fmt(t, sizeof t, cells[i].v, p->cols[i].decimals < 0 ? 0 : p->cols[i].decimals) > 0)
            v = t;
        if (!p->cols[i].table_hide || !v) /* shown, or empty (a vision model's seq) */
            continue;
        wl_results_buf_puts(&b, b.n ? ", " : "# ");
        wl_results_buf_puts(&b, p->cols[i].name);
        wl_results_buf_put(&b, " ", 1);
        wl_results_buf_puts(&b, v);
    }
    if (b.n && !b.oom) {
        wl_results_buf_put(&b, "\n", 1);
        fwrite(b.p, 1, b.n, out);
    }
    wl_results_buf_free(&b);
}

void wl_sweep_plan_begin(wl_sweep_plan *p, FILE *out)
{
    wl_results_writer_set_stream(p->w, out);
    if (p->o.shard_count)
        wl_sweep_shard_line(out, p->o.shard_index, p->o.shard_count, p->fingerprint, p->lo, p->hi,
                            wl_sweep_spec_points(p->s), p->rows, p->o.format);
    if (p->o.format == WL_FMT_TABLE && !p->o.no_constants_line)
        constants_line(p, out);
    wl_results_writer_header(p->w);
}

/* ---- tallies -------------------------------------------------------------------------- */

void wl_sweep_tally_init(wl_sweep_tally *t)
{
    memset(t, 0, sizeof *t);
    t->best_energy_j = t->best_time_ms = t->best_clock_mhz = NAN;
}

void wl_sweep_tally_add(wl_sweep_tally *t, const wl_sweep_tally *part)
{
    t->points += part->points;
    t->throttled += part->throttled;
    t->unfit += part->unfit;
    t->learned_outside += part->learned_outside;
    /* the first point of least energy: later ties do not replace it */
    if (!isnan(part->best_energy_j) &&
        (isnan(t->best_energy_j) || part->best_energy_j < t->best_energy_j)) {
        t->best_energy_j = part->best_energy_j;
        t->best_time_ms = part->best_time_ms;
        t->best_clock_mhz = part->best_clock_mhz;
    }
}

/* ---- per-thread curves ------------------------------------------------------------------
 * GPU variants that differ only in their governor (power limit, cap
 * fraction) compute the same unlimited results at every clock: the power
 * limit only decides where the clock settles. A thread keeps the curves of
 * its last chunks and applies each variant's limit to them (results are the
 * same bit for bit whether a curve was kept or not, so the output does not
 * depend on which thread ran which chunk). */

#define CURVES 8

typedef struct {
    int used;
    unsigned long long stamp;
    wl_core_gpu key;          /* the variant with its governor fields zeroed */
    size_t wl, b, sq, dt, at; /* the shape */
    size_t n;                 /* voltages x clocks */
    wl_core_result *res;
    unsigned char *have;
} curve;

/* Workloads of recent shapes: the builder's output does not depend on the
 * GPU, so the variants of one shape share it. */
#define SHAPES 4

typedef struct {
    unsigned long long stamp;
    size_t wl, b, sq, dt, at;
    wl_core_workload *w;
} shape_slot;

struct wl_sweep_scratch {
    curve c[CURVES];
    shape_slot shapes[SHAPES];
    unsigned long long tick;
};

wl_sweep_scratch *wl_sweep_scratch_create(void) { return calloc(1, sizeof(wl_sweep_scratch)); }

wl_sweep_scratch **wl_sweep_scratch_pool(const wl_sweep_options *o, int *threads)
{
#ifdef _OPENMP
    *threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#else
    (void)o;
    *threads = 1;
#endif
    wl_sweep_scratch **pool = calloc((size_t)*threads, sizeof *pool);
    for (int t = 0; pool && t < *threads; t++)
        pool[t] = wl_sweep_scratch_create();
    return pool;
}

void wl_sweep_scratch_pool_free(wl_sweep_scratch **pool, int threads)
{
    for (int t = 0; pool && t < threads; t++)
        wl_sweep_scratch_free(pool[t]);
    free(pool);
}

void wl_sweep_scratch_free(wl_sweep_scratch *sc)
{
    if (!sc)
        return;
    for (int i = 0; i < CURVES; i++) {
        free(sc->c[i].res);
        free(sc->c[i].have);
    }
    for (int i = 0; i < SHAPES; i++)
        wl_core_workload_free(sc->shapes[i].w);
    free(sc);
}

static void governor_free_key(const wl_core_gpu *g, wl_core_gpu *key)
{
    *key = *g;
    key->power_limit_w = 0;
    key->coef.power_cap_frac = 0;
}

/* The curve of this variant and shape: a kept one, or the least recently
 * used slot made ready for it; NULL without scratch or memory. */
static curve *curve_for(wl_sweep_scratch *sc, const wl_core_gpu *g, size_t wl, size_t b,
                        size_t sq, size_t dt, size_t at, size_t n)
{
    if (!sc)
        return NULL;
    wl_core_gpu key;
    governor_free_key(g, &key);
    sc->tick++;
    curve *lru = &sc->c[0];
    for (int i = 0; i < CURVES; i++) {
        curve *c = &sc->c[i];
        if (c->used && c->n == n && c->wl == wl && c->b == b && c->sq == sq && c->dt == dt &&
            c->at == at && memcmp(&c->key, &key, sizeof key) == 0) {
            c->stamp = sc->tick;
            return c;
        }
        if (!c->used || c->stamp < lru->stamp)
            lru = c;
    }
    if (lru->n < n || !lru->res) {
        wl_core_result *r = realloc(lru->res, n * sizeof *r);
        if (r)
            lru->res = r;
        unsigned char *h = r ? realloc(lru->have, n) : NULL;
        if (!h) {
            lru->used = 0;
            return NULL;
        }
        lru->have = h;
    }
    memset(lru->have, 0, n);
    lru->used = 1;
    lru->stamp = sc->tick;
    lru->key = key;
    lru->wl = wl, lru->b = b, lru->sq = sq, lru->dt = dt, lru->at = at;
    lru->n = n;
    return lru;
}

/* ---- evaluating a chunk ------------------------------------------------------------ */

static const char *wl_name(const wl_sweep_spec *s, const combo *c)
{
    if (s->traces.n) {
        const char *p = strrchr(s->traces.v[c->wl], '/');
        return p ? p + 1 : s->traces.v[c->wl];
    }
    return s->models.v[c->wl];
}

static wl_dtype combo_dtype(const wl_sweep_spec *s, const combo *c)
{
    if (s->traces.n)
        return s->ndt ? s->dtypes[c->dt] : s->trace_dt[c->wl];
    return s->dtypes[c->dt];
}

static void combo_shape(const wl_sweep_spec *s, const combo *c, wl_core_shape *sh)
{
    *sh = s->opts;
    sh->batch = (long long)s->batch.v[c->b];
    sh->seq = (long long)s->seq.v[c->sq];
    sh->dtype = s->dtypes[c->dt];
    sh->attention = s->attn[c->at];
    sh->mode = s->modes[c->md];
}

static int shape_workload(const wl_sweep_spec *s, const combo *c, wl_core_workload **wl,
                          int *own, wl_error *err)
{
    *own = 0;
    if (s->traces.n) {
        *wl = s->trace_wl[c->wl];
        if (combo_dtype(s, c) == s->trace_dt[c->wl])
            return WL_OK;
        *own = 1;
        return wl_core_workload_retype(s->trace_wl[c->wl], WL_DT_FP32, wl, err);
    }
    wl_core_shape sh;
    combo_shape(s, c, &sh);
    const wl_core_model *m = &s->model[c->wl];
    *own = 1;
    return s->scope == WL_SWEEP_LAYER && m->style != WL_STYLE_RESNET
               ? wl_core_build_layer(m, &sh, wl, err)
               : wl_core_build(m, &sh, wl, err);
}

/* The footprint of a combination on its GPU variant: a model's from its
 * architecture and shape; a trace records kernels, not tensors, so its
 * footprint is unknown (NaN, fits -1). A layer-scope point needs the whole
 * model in memory all the same. */
static void combo_memory(const wl_sweep_spec *s, const combo *c, const wl_core_gpu *g,
                         wl_core_memory *mem, int *fits)
{
    memset(mem, 0, sizeof *mem);
    mem->total_gb = NAN;
    *fits = -1;
    if (s->traces.n)
        return;
    wl_core_shape sh;
    combo_shape(s, c, &sh);
    wl_error e = {0};
    if (wl_core_memory_estimate(&s->model[c->wl], &sh, mem, &e))
        mem->total_gb = NAN;
    else
        *fits = wl_core_memory_fits(g, mem);
}

/* The learned model's use for combination c's workload. */
static void learned_use(const wl_sweep_spec *s, const combo *c, wl_learn_use *u)
{
    wl_core_shape ls;
    combo_shape(s, c, &ls);
    *u = (wl_learn_use){.model = s->learned,
                        .shape = s->traces.n ? NULL : &s->model[c->wl],
                        .c = {.batch = ls.batch, .seq = ls.seq, .dtype = combo_dtype(s, c),
                              .mode = s->traces.n ? WL_MODE_PREFILL : ls.mode,
                              .attention = s->traces.n ? WL_ATTN_EAGER : ls.attention}};
}

int wl_sweep_spec_learned(const wl_sweep_spec *s, wl_learn_use *u)
{
    memset(u, 0, sizeof *u);
    if (!s->finished || !s->learned)
        return 0;
    combo c;
    decode(s, 0, &c);
    learned_use(s, &c, u);
    return 1;
}

int wl_sweep_spec_workload(const wl_sweep_spec *s, wl_core_workload **wl, wl_sweep_shape_id *id,
                           wl_error *err)
{
    *wl = NULL;
    memset(id, 0, sizeof *id);
    if (!s->finished) {
        wl_error_set(err, "sweep", 0, "", "the spec is not finished");
        return WL_EINVAL;
    }
    combo c;
    decode(s, 0, &c);
    int own = 0;
    wl_core_workload *w = NULL;
    int rc = shape_workload(s, &c, &w, &own, err);
    if (rc)
        return rc;
    if (!own) {
        /* a trace as recorded: the caller owns a copy */
        wl_core_workload *copy = wl_core_workload_create(wl_core_workload_name(w));
        for (size_t i = 0; copy && i < wl_core_workload_count(w); i++)
            if (wl_core_workload_add(copy, wl_core_workload_kernel(w, i))) {
                wl_core_workload_free(copy);
                copy = NULL;
            }
        if (!copy)
            return WL_ENOMEM;
        w = copy;
    }
    snprintf(id->model, sizeof id->model, "%s", wl_name(s, &c));
    wl_core_gpu g;
    if ((rc = variant_gpu(s, c.gpu, c.variant, &g, err))) {
        wl_core_workload_free(w);
        return rc;
    }
    combo_memory(s, &c, &g, &id->memory, &id->fits);
    id->traced = s->traces.n > 0;
    id->max_batch = -1;
    if (!id->traced && id->fits == 0) {
        wl_core_shape sh;
        combo_shape(s, &c, &sh);
        wl_error e = {0};
        if (wl_core_memory_max_batch(&g, &s->model[c.wl], &sh, &id->max_batch, &e))
            id->max_batch = -1;
    }
    id->dtype = combo_dtype(s, &c);
    if (!id->traced) {
        id->batch = (long long)s->batch.v[c.b];
        id->seq = wl_core_model_is_vision(&s->model[c.wl]) ? 0 : (long long)s->seq.v[c.sq];
        id->attention = s->attn[c.at];
        combo_shape(s, &c, &id->shape);
    }
    *wl = w;
    return WL_OK;
}

/* The parameter cells of a combination (the first p->nparam columns, less
 * the voltage, which the caller fills). */
static void param_cells(const wl_sweep_plan *p, const combo *c, const wl_core_gpu *g,
                        wl_results_cell *cells)
{
    const wl_sweep_spec *s = p->s;
    size_t k = 0;
    cells[k++] = (wl_results_cell){g->id, NAN};
    for (size_t i = 0; i < s->nset; i++)
        cells[k++] = (wl_results_cell){NULL, s->set[i].vals.v[c->setidx[i]]};
    cells[k++] = (wl_results_cell){wl_name(s, c), NAN};
    int traced = s->traces.n > 0;
    int vision = !traced && wl_core_model_is_vision(&s->model[c->wl]);
    cells[k++] = (wl_results_cell){NULL, traced ? NAN : s->batch.v[c->b]};
    cells[k++] = (wl_results_cell){NULL, traced || vision ? NAN : s->seq.v[c->sq]};
    cells[k++] = (wl_results_cell){wl_dtype_name(combo_dtype(s, c)), NAN};
    cells[k++] = (wl_results_cell){traced ? NULL : wl_attention_name(s->attn[c->at]), NAN};
    cells[k++] = (wl_results_cell){wl_mode_name(traced ? WL_MODE_PREFILL : s->modes[c->md]), NAN};
    /* what one row's time and energy cover: the whole pass, one decoder
     * layer (a ResNet has no such layer: the whole pass), or the pass with
     * a row per kernel class */
    cells[k++] = (wl_results_cell){s->classes ? "kernel"
                                   : s->scope == WL_SWEEP_LAYER && !traced &&
                                           s->model[c->wl].style != WL_STYLE_RESNET
                                       ? "layer"
                                       : "model",
                                   NAN};
}

static void result_cells(const wl_core_result *r, int feasible, double memory_gb, int fits,
                         wl_results_cell *cells)
{
    const double v[R_COUNT] = {r->requested_clock_mhz, r->effective_clock_mhz, r->voltage_mv,
                               feasible, r->throttled, r->time_ms, r->power_w, r->energy_j,
                               r->energy_dyn_compute_j, r->energy_dyn_memory_j,
                               r->energy_static_j, 100.0 * r->launch_bound_frac,
                               memory_gb, fits < 0 ? NAN : (double)fits};
    for (int i = 0; i < R_COUNT; i++)
        cells[i] = (wl_results_cell){NULL, v[i]};
}

/* A training step's split and accounting (empty for other modes). MFU is
 * the model's FLOPs over the time at the GPU's dense peak for the dtype at
 * its maximum clock (the datasheet figure, as MFU is quoted). */
static void train_cells(const wl_core_result *r, int on, const wl_core_shape *sh,
                        const wl_core_build_info *info, const wl_core_memory *mem, double peak,
                        wl_results_cell *cells)
{
    double hw = 0;
    for (int k = 0; k < WL_PHASE_COUNT; k++)
        hw += r->phase[k].flops;
    const double v[T_COUNT] = {
        r->phase[WL_PHASE_FORWARD].time_ms, r->phase[WL_PHASE_BACKWARD].time_ms,
        r->phase[WL_PHASE_OPTIMIZER].time_ms, r->phase[WL_PHASE_FORWARD].energy_j,
        r->phase[WL_PHASE_BACKWARD].energy_j, r->phase[WL_PHASE_OPTIMIZER].energy_j,
        sh->grad_accum > 1 ? (double)sh->grad_accum : 1.0, info->model_flop * 1e-12, hw * 1e-12,
        peak > 0 ? info->model_flop / (r->time_ms * 1e-3) / peak : NAN,
        mem->weights_gb, mem->master_gb, mem->grads_gb, mem->optimizer_gb, mem->activations_gb};
    for (int i = 0; i < T_COUNT; i++)
        cells[i] = (wl_results_cell){NULL, on ? v[i] : NAN};
}

/* A generation: time to the first token (the prefill and its sampling),
 * mean time per further token, energy per generated token (batch x gen of
 * them), the cache at the last token, and the energy of the two phases. */
static void decode_cells(const wl_core_result *r, int on, const wl_core_shape *sh,
                         const wl_core_build_info *info, wl_results_cell *cells)
{
    double g = (double)sh->gen;
    const double v[D_COUNT] = {
        r->phase[WL_PHASE_FORWARD].time_ms,
        sh->gen > 1 ? r->phase[WL_PHASE_DECODE].time_ms / (g - 1) : NAN,
        r->energy_j / ((double)sh->batch * g), info->kv_cache_gb,
        r->phase[WL_PHASE_FORWARD].energy_j, r->phase[WL_PHASE_DECODE].energy_j};
    for (int i = 0; i < D_COUNT; i++)
        cells[i] = (wl_results_cell){NULL, on ? v[i] : NAN};
}

static int chunk(const wl_sweep_plan *p, unsigned long long oi, wl_sweep_scratch *sc,
                 wl_results_buf *b, wl_sweep_tally *tally, wl_error *err)
{
    const wl_sweep_spec *s = p->s;
    combo c;
    decode(s, oi, &c);
    wl_core_gpu g;
    int rc = variant_gpu(s, c.gpu, c.variant, &g, err); /* validated in finish */
    if (rc)
        return rc;
    wl_core_workload *wl = NULL;
    int own = 0;
    shape_slot *slot = NULL;
    size_t ak = c.at + s->nattn * c.md; /* attention and mode: the shape's last keys */
    for (int i = 0; sc && i < SHAPES && !slot; i++) {
        shape_slot *q = &sc->shapes[i];
        if (q->w && q->wl == c.wl && q->b == c.b && q->sq == c.sq && q->dt == c.dt && q->at == ak)
            slot = q;
    }
    if (slot) {
        wl = slot->w;
        slot->stamp = ++sc->tick;
    } else if ((rc = shape_workload(s, &c, &wl, &own, err))) {
        return rc;
    } else if (own && sc) {
        /* kept for the next variants of this shape */
        slot = &sc->shapes[0];
        for (int i = 1; i < SHAPES; i++)
            if (sc->shapes[i].stamp < slot->stamp)
                slot = &sc->shapes[i];
        wl_core_workload_free(slot->w);
        *slot = (shape_slot){++sc->tick, c.wl, c.b, c.sq, c.dt, ak, wl};
        own = 0;
    }
    wl_core_evaluator *ev = NULL;
    if ((rc = wl_core_evaluator_create(&g, wl, s->lat, &ev))) {
        if (own)
            wl_core_workload_free(wl);
        return rc;
    }
    wl_results_cell cells[64 + MAX_SET];
    param_cells(p, &c, &g, cells);
    wl_core_memory mem;
    int fits;
    combo_memory(s, &c, &g, &mem, &fits);
    wl_core_shape sh = {0};
    wl_core_build_info info = {0};
    if (!s->traces.n) {
        combo_shape(s, &c, &sh);
        wl_error e2 = {0};
        if (sh.mode != WL_MODE_PREFILL &&
            wl_core_build_info_of(&s->model[c.wl], &sh, s->scope == WL_SWEEP_LAYER, &info, &e2))
            info.model_flop = NAN;
    }
    double peak = wl_core_gpu_peak_flops(&g, combo_dtype(s, &c), g.sm_clock_max_mhz);
    /* the learned model's case, once per chunk; the clock is set per point */
    wl_learn_use lu = {0};
    if (s->learned)
        learned_use(s, &c, &lu);
    const wl_core_numlist *vl = volts(s);
    const wl_core_numlist *clk = &s->gclk[c.gpu];
    size_t m = s->maxclk;
    curve *cv = curve_for(sc, &g, c.wl, c.b, c.sq, c.dt, ak, vl->n * m);
    unsigned long long ni = n_inner(s), base = oi * ni;
    size_t vi0 = base >= p->lo ? 0 : (size_t)((p->lo - base) / m);
    for (size_t vi = vi0; vi < vl->n; vi++) {
        double vv = vl->v[vi];
        cells[p->nparam - 1] = (wl_results_cell){NULL, vv};
        /* the parameter cells are the same for every clock: format once */
        wl_results_buf prefix = {0};
        wl_results_writer_format_cols(p->w, cells, 0, p->nparam, &prefix);
        wl_core_throttle_cache tc = {0};
        for (size_t ci = 0; ci < clk->n; ci++) {
            unsigned long long pi = base + vi * m + ci;
            if (pi < p->lo || pi >= p->hi)
                continue;
            double f = clk->v[ci];
            wl_core_op op = {.sm_clock_mhz = f,
                             .voltage_mv = s->vfix.n ? vv : 0,
                             .voltage_offset_mv = s->vfix.n ? 0 : vv,
                             .ignore_power_limit = s->no_power_limit};
            wl_core_result r;
            size_t idx = vi * m + ci;
            int erc;
            if (cv && !wl_core_throttle_cache_covers(ev, &tc, &op)) {
                if (!cv->have[idx]) {
                    wl_core_op free_op = op;
                    free_op.ignore_power_limit = 1;
                    if (wl_core_evaluator_run(ev, &free_op, &cv->res[idx]) == WL_OK)
                        cv->have[idx] = 1;
                }
                erc = cv->have[idx] ? wl_core_evaluator_limit(ev, &op, &cv->res[idx], &tc, &r)
                                    : WL_EINVAL;
            } else {
                erc = wl_core_evaluator_run_cached(ev, &op, &tc, &r);
            }
            if (erc != WL_OK) {
                /* a voltage at or below zero: nothing runs */
                memset(&r, 0, sizeof r);
                r.requested_clock_mhz = r.effective_clock_mhz = f;
                r.time_ms = r.power_w = r.energy_j = NAN;
                r.energy_dyn_compute_j = r.energy_dyn_memory_j = r.energy_static_j = NAN;
                r.launch_bound_frac = NAN;
                r.voltage_mv = s->vfix.n ? vv : wl_core_gpu_voltage_mv(&g, f) + vv;
            }
            if (s->learned && erc == WL_OK) {
                /* the learned model: a hybrid's correction, or a plain
                 * model's prediction; no allocation */
                tally->learned_outside += wl_learn_use_apply(&lu, &g, f, &r) < 1;
            }
            int feasible = isfinite(r.time_ms) &&
                           (s->vfix.n || wl_core_gpu_clock_in_range(&g, f)) &&
                           wl_core_gpu_feasible(&g, r.effective_clock_mhz, r.voltage_mv);
            size_t k = p->nparam;
            result_cells(&r, feasible, mem.total_gb, fits, cells + k);
            k += R_COUNT;
            if (s->level > 0) {
                wl_calib_iv iv = {0};
                int ok = isfinite(r.time_ms) &&
                         wl_calib_interval(ev, &g, &s->unc[c.gpu], &op, s->level, &r, &iv) == WL_OK;
                const double w[6] = {iv.time_lo_ms, iv.time_hi_ms, iv.power_lo_w, iv.power_hi_w,
                                     iv.energy_lo_j, iv.energy_hi_j};
                for (int i = 0; i < 6; i++)
                    cells[k++] = (wl_results_cell){NULL, ok ? w[i] : NAN};
            }
            if (p->train_at)
                train_cells(&r, sh.mode == WL_MODE_TRAIN, &sh, &info, &mem, peak,
                            cells + p->train_at);
            if (p->decode_at)
                decode_cells(&r, sh.mode == WL_MODE_DECODE, &sh, &info, cells + p->decode_at);
            tally->points++;
            tally->throttled += (unsigned long long)r.throttled;
            tally->unfit += fits == 0;
            if (feasible && fits != 0 && isfinite(r.energy_j) &&
                (isnan(tally->best_energy_j) || r.energy_j < tally->best_energy_j)) {
                tally->best_energy_j = r.energy_j;
                tally->best_time_ms = r.time_ms;
                tally->best_clock_mhz = r.requested_clock_mhz;
            }
            if (!s->classes) {
                wl_results_buf_put(b, prefix.p, prefix.n);
                wl_results_writer_format_cols(p->w, cells, p->nparam, p->ncols, b);
                continue;
            }
            double static_w = r.time_ms > 0 ? r.energy_static_j / (r.time_ms * 1e-3) : 0;
            for (int cl = 0; cl < WL_CLASS_COUNT; cl++) {
                const wl_core_class_stats *cs = &r.cls[cl];
                if (!cs->launches)
                    continue;
                size_t j = p->ncols - 7; /* the class columns come last */
                cells[j++] = (wl_results_cell){wl_core_class_name(cl), NAN};
                cells[j++] = (wl_results_cell){NULL, (double)cs->launches};
                cells[j++] = (wl_results_cell){NULL, cs->busy_ms};
                cells[j++] = (wl_results_cell){NULL, cs->energy_j};
                cells[j++] = (wl_results_cell){NULL, cs->energy_j + static_w * cs->busy_ms * 1e-3};
                cells[j++] = (wl_results_cell){NULL, cs->flops * 1e-9};
                cells[j++] = (wl_results_cell){NULL, cs->dram_bytes * 1e-9};
                wl_results_buf_put(b, prefix.p, prefix.n);
                wl_results_writer_format_cols(p->w, cells, p->nparam, p->ncols, b);
            }
        }
        int oom = prefix.oom;
        wl_results_buf_free(&prefix);
        if (oom)
            b->oom = 1;
    }
    wl_core_evaluator_free(ev);
    if (own)
        wl_core_workload_free(wl);
    if (b->oom) {
        wl_error_set(err, "sweep", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    return WL_OK;
}

int wl_sweep_plan_chunk(const wl_sweep_plan *p, unsigned long long i, wl_sweep_scratch *sc,
                        wl_results_buf *b, wl_sweep_tally *tally, wl_error *err)
{
    wl_sweep_tally_init(tally);
    if (i >= wl_sweep_plan_chunks(p)) {
        wl_error_set(err, "sweep", 0, "", "no chunk %llu", i);
        return WL_EINVAL;
    }
    return chunk(p, p->o_lo + i, sc, b, tally, err);
}

/* ---- running ------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned long long count_lines(const char *p, size_t n)
{
    unsigned long long k = 0;
    for (const char *q = p; (q = memchr(q, '\n', (size_t)(p + n - q))) != NULL; q++)
        k++;
    return k;
}

int wl_sweep_run_table(const wl_sweep_spec *s, const wl_sweep_options *o, const char *source,
                       wl_results_table **out, wl_sweep_stats *stats, wl_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return WL_ENOMEM;
    wl_sweep_options so = *o;
    so.format = WL_FMT_CSV;
    so.shard_index = so.shard_count = 0;
    int rc = wl_sweep_run(s, &so, m, NULL, stats, err);
    if (fclose(m) && !rc)
        rc = WL_ENOMEM;
    if (!rc)
        rc = wl_results_table_load_mem(text, len, source, out, err);
    free(text);
    return rc;
}

int wl_sweep_run(const wl_sweep_spec *s, const wl_sweep_options *o, FILE *out,
                 volatile sig_atomic_t *stop, wl_sweep_stats *stats, wl_error *err)
{
    memset(stats, 0, sizeof *stats);
    wl_sweep_tally_init(&stats->tally);
    wl_sweep_plan *p = NULL;
    int rc = wl_sweep_plan_create(s, o, &p, err);
    if (rc)
        return rc;
    wl_sweep_plan_begin(p, out);
    double t0 = now_s();
    volatile int failed = 0, wfail = 0;
    unsigned long long done = 0, rows = 0, total = wl_sweep_plan_points(p);
    wl_error first_err;
    memset(&first_err, 0, sizeof first_err);
    long long n_o = (long long)wl_sweep_plan_chunks(p);
    int threads;
    wl_sweep_scratch **scratch = wl_sweep_scratch_pool(o, &threads);
#ifdef _OPENMP
#pragma omp parallel for ordered schedule(dynamic, 1) num_threads(threads)
#endif
    for (long long k = 0; k < n_o; k++) {
#ifdef _OPENMP
        int me = omp_get_thread_num();
#else
        int me = 0;
#endif
        wl_sweep_scratch *sc = scratch && me < threads ? scratch[me] : NULL;
        wl_results_buf b = {0};
        wl_sweep_tally part;
        wl_sweep_tally_init(&part);
        int my_rc = WL_OK;
        wl_error my_err;
        memset(&my_err, 0, sizeof my_err);
        if (!failed && !(stop && *stop) && !wfail)
            my_rc = wl_sweep_plan_chunk(p, (unsigned long long)k, sc, &b, &part, &my_err);
#pragma omp ordered
        {
            if (my_rc && !failed) {
                failed = 1;
                rc = my_rc;
                first_err = my_err;
            }
            if (!failed && !(stop && *stop) && !wfail && b.n) {
                wl_results_writer_emit(p->w, b.p, b.n);
                wfail = ferror(out) != 0;
                done += part.points;
                wl_sweep_tally_add(&stats->tally, &part);
                /* a JSON row is ",\n  {...}": one newline each; the
                 * binary stream of columns has no lines */
                rows += o->format == WL_FMT_COLUMNS ? part.points : count_lines(b.p, b.n);
            }
            if (!failed && o->progress)
                o->progress(o->progress_user, done, total);
        }
        wl_results_buf_free(&b);
    }
    wl_sweep_scratch_pool_free(scratch, threads);
    stats->points = done;
    stats->rows = rows;
    stats->seconds = now_s() - t0;
    stats->interrupted = stop && *stop;
    stats->write_failed = wfail;
    if (!rc && !wfail)
        wl_sweep_plan_finish(p);
    else
        *err = first_err;
    wl_sweep_plan_free(p);
    return rc;
}

/* ---- merge ---------------------------------------------------------------------------- */

typedef struct {
    const char *path;
    unsigned idx, count;
    unsigned long long fp, lo, hi, total, rows;
    char format[16];
} shard_meta;

static int read_meta(FILE *f, const char *path, shard_meta *m, wl_error *err)
{
    char line[512];
    if (!fgets(line, sizeof line, f) || strncmp(line, SHARD_TAG " ", strlen(SHARD_TAG) + 1) != 0) {
        wl_error_set(err, path, 1, "", "not a sweep shard (no '" SHARD_TAG "' line: it was not "
                     "written as a shard of a sweep)");
        return WL_EPARSE;
    }
    char extra;
    int n = sscanf(line + strlen(SHARD_TAG), " %u/%u sweep=%16llx points=%llu-%llu/%llu rows=%llu "
                   "format=%15s %c", &m->idx, &m->count, &m->fp, &m->lo, &m->hi, &m->total,
                   &m->rows, m->format, &extra);
    if (n != 8 || m->idx < 1 || m->idx > m->count || m->lo > m->hi || m->hi > m->total) {
        wl_error_set(err, path, 1, "", "malformed shard line");
        return WL_EPARSE;
    }
    m->path = path;
    return WL_OK;
}

/* Copies a shard's rows to out (the CSV header once), counting them. */
static int copy_rows(FILE *f, const shard_meta *m, int first, int csv, char **header,
                     FILE *out, wl_error *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 1, rc = WL_OK;
    unsigned long long rows = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[len - 1] != '\n') {
            wl_error_set(err, m->path, lineno, "", "truncated last row (no newline)");
            rc = WL_EPARSE;
            break;
        }
        if (csv && lineno == 2) {
            if (first) {
                if (!(*header = strdup(line))) {
                    rc = WL_ENOMEM;
                    break;
                }
                fwrite(line, 1, (size_t)len, out);
            } else if (strcmp(*header, line) != 0) {
                wl_error_set(err, m->path, 2, "", "its header differs from the first shard's");
                rc = WL_EPARSE;
                break;
            }
            continue;
        }
        fwrite(line, 1, (size_t)len, out);
        rows++;
    }
    free(line);
    if (!rc && ferror(f)) {
        wl_error_set(err, m->path, lineno, "", "read error");
        rc = WL_EIO;
    }
    if (!rc && rows != m->rows) {
        wl_error_set(err, m->path, 0, "", "shard %u/%u is incomplete: %llu of %llu rows (was it "
                     "interrupted?)", m->idx, m->count, rows, m->rows);
        rc = WL_EPARSE;
    }
    return rc;
}

int wl_sweep_merge(const char *const *paths, int n, FILE *out, wl_error *err)
{
    if (n < 1) {
        wl_error_set(err, "merge", 0, "", "no shards");
        return WL_EINVAL;
    }
    shard_meta *m = calloc((size_t)n, sizeof *m);
    int *order = calloc((size_t)n, sizeof *order);
    int rc = m && order ? WL_OK : WL_ENOMEM;
    for (int i = 0; !rc && i < n; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f) {
            wl_error_set(err, paths[i], 0, "", "cannot open: %s", strerror(errno));
            rc = WL_EIO;
            break;
        }
        rc = read_meta(f, paths[i], &m[i], err);
        fclose(f);
    }
    /* one sweep, every shard once */
    for (int i = 0; !rc && i < n; i++) {
        if (m[i].count != (unsigned)n || m[i].fp != m[0].fp || m[i].total != m[0].total ||
            strcmp(m[i].format, m[0].format) != 0) {
            if (m[i].fp != m[0].fp || m[i].total != m[0].total)
                wl_error_set(err, paths[i], 1, "", "a shard of another sweep than %s", paths[0]);
            else if (m[i].count != (unsigned)n)
                wl_error_set(err, paths[i], 1, "", "shard %u of %u, but %d shards were given",
                             m[i].idx, m[i].count, n);
            else
                wl_error_set(err, paths[i], 1, "", "format %s differs from %s's", m[i].format,
                             paths[0]);
            rc = WL_EINVAL;
            break;
        }
        if (order[m[i].idx - 1]) {
            wl_error_set(err, paths[i], 1, "", "shard %u/%u given twice (also %s)", m[i].idx,
                         m[i].count, paths[order[m[i].idx - 1] - 1]);
            rc = WL_EINVAL;
            break;
        }
        order[m[i].idx - 1] = i + 1;
    }
    char *header = NULL;
    int csv = !rc && strcmp(m[0].format, "csv") == 0;
    for (int k = 0; !rc && k < n; k++) {
        const shard_meta *sm = &m[order[k] - 1];
        FILE *f = fopen(sm->path, "r");
        if (!f) {
            wl_error_set(err, sm->path, 0, "", "cannot open: %s", strerror(errno));
            rc = WL_EIO;
            break;
        }
        char skip[512];
        if (!fgets(skip, sizeof skip, f)) /* the shard line, read above */
            rc = WL_EIO;
        if (!rc)
            rc = copy_rows(f, sm, k == 0, csv, &header, out, err);
        fclose(f);
    }
    if (rc == WL_ENOMEM)
        wl_error_set(err, "merge", 0, "", "out of memory");
    free(header);
    free(m);
    free(order);
    return rc;
}

/* ---- one workload on several GPUs (wattlas compare) ------------------------------ */

/* A choice whose numbers are all NaN, with the reason. */
static void not_runnable(wl_pareto_gpu_choice *ch, const char *why)
{
    memset(ch, 0, sizeof *ch);
    wl_core_result *r[3] = {&ch->at, &ch->opt, &ch->max};
    ch->clock_mhz = NAN;
    for (int k = 0; k < 3; k++) {
        r[k]->requested_clock_mhz = r[k]->effective_clock_mhz = NAN;
        r[k]->time_ms = r[k]->power_w = r[k]->energy_j = NAN;
    }
    snprintf(ch->not_runnable, sizeof ch->not_runnable, "%.199s", why);
}

int wl_sweep_compare(const wl_sweep_spec *s, double clock_mhz, const wl_pareto_objective *obj,
                     wl_results_writer *w, wl_sweep_note_fn note, void *user, size_t *runnable,
                     wl_error *err)
{
    *runnable = 0;
    wl_core_workload *wl = NULL;
    wl_sweep_shape_id id;
    int rc = wl_sweep_spec_workload(s, &wl, &id, err);
    if (rc)
        return rc;
    int iv = wl_sweep_spec_level(s) > 0;
    wl_results_writer_note(w, "%s (%zu kernels), objective %s", wl_core_workload_name(wl),
                           wl_core_workload_launches(wl), obj->text);
    wl_pareto_workload_id wid = {id.model, wl_dtype_name(id.dtype),
                                 id.traced ? NULL : wl_attention_name(id.attention),
                                 wl_mode_name(id.traced ? WL_MODE_PREFILL : id.shape.mode),
                                 id.batch, id.seq, id.memory.total_gb};
    wl_results_cell cells[WL_PARETO_COMPARE_COLS];
    wl_learn_use lu;
    int learned = wl_sweep_spec_learned(s, &lu);
    char text[400];
    for (size_t i = 0; !rc && i < wl_sweep_spec_axis_count(s, "gpu"); i++) {
        const wl_core_gpu *g = wl_sweep_spec_gpu(s, i);
        wl_pareto_gpu_choice ch;
        wl_error e = {0};
        /* a GPU that cannot run the case gets a row saying why; the others go on */
        if ((clock_mhz > 0 && wl_core_gpu_clock_check(g, clock_mhz, "clock", 0, &e)) ||
            wl_core_gpu_runs(g, wl, &e)) {
            not_runnable(&ch, e.text);
            snprintf(text, sizeof text, "%s cannot run this case: %.300s", g->id, e.text);
            if (note)
                note(user, 0, text);
        } else if ((rc = wl_pareto_gpu_optimum(g, wl, NULL, clock_mhz, obj,
                                               wl_sweep_spec_uncertainty(s, i),
                                               wl_sweep_spec_level(s), learned ? &lu : NULL, &ch,
                                               err))) {
            break;
        } else {
            (*runnable)++;
        }
        if (ch.learned_outside && note) {
            snprintf(text, sizeof text, "on %s, %zu of %zu points lie outside the learned model's "
                     "training domain: %.200s", g->id, ch.learned_outside,
                     wl_core_gpu_clock_count(g) + 1, wl_learn_outside_note(lu.model));
            note(user, 1, text);
        }
        if (!ch.not_runnable[0] && wl_core_memory_fits(g, &id.memory) == 0 && note) {
            snprintf(text, sizeof text, "%.120s does not fit %s: it needs %.1f GB, the GPU has "
                     "%.1f GB (fits = 0)", wl_core_workload_name(wl), g->id, id.memory.total_gb,
                     g->mem_capacity_gb);
            note(user, 1, text);
        }
        wl_pareto_compare_cells(g, &wid, &ch, iv, cells);
        if (wl_results_writer_row(w, cells)) {
            wl_error_set(err, "compare", 0, "", "out of memory");
            rc = WL_ENOMEM;
        }
    }
    wl_core_workload_free(wl);
    return rc;
}
