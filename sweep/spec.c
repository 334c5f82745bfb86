/* Sweep specs: axes with their origins, from options and INI files, checked
 * and finished into a grid; the enumeration of its points. */
#include "sweep_internal.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        wl_preset_gpu_key_error(field, err);
        wl_error_locate(err, source, line);
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

/* The keys wl_sweep_spec_set takes, for the hint on a misspelt one. */
static const char *const sweep_keys[] = {
    "gpu", "model", "trace", "idle", "host", "batch", "seq", "clock", "voltage_offset_mv",
    "voltage_mv", "dtype", "attention", "mode", "optimizer", "master_dtype", "recompute",
    "launch", "grad_accum", "gen", "stack", "impl", "scope", "learned", "classes", "latency",
    "power_limit", "board", "interval", "set"};

static const char *sweep_key_of(void *user, size_t i)
{
    (void)user;
    return sweep_keys[i];
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
    if (!strcmp(key, "board")) {
        if (strcmp(value, "same") && strcmp(value, "other")) {
            wl_error_set(err, source, line, key, "expected same or other, got '%.60s'", value);
            return WL_EINVAL;
        }
        s->same_board = strcmp(value, "same") == 0;
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
    char hint[200];
    wl_core_name_hint(sweep_key_of, NULL, sizeof sweep_keys / sizeof *sweep_keys, key, hint,
                      sizeof hint);
    wl_error_set(err, source, line, key, "unknown sweep key%s", hint);
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

static int add_warning(wl_sweep_spec *s, const char *text)
{
    return wl_sweep_i_add_text(&s->warnings, text);
}

/* The grid's size, with the axes that make it: past 1e8 points a warning
 * before work starts (half an hour and more at the bench's 50,000 points/s
 * on two cores), past 1e15 an error (points are indexed in 64 bits, and no
 * run would finish). The error names the largest axis, where it was given. */
#define GRID_WARN_POINTS 1e8
#define GRID_MAX_POINTS 1e15

typedef struct {
    const char *name;
    double n;
    const origin *o;
} grid_axis;

static int grid_size(wl_sweep_spec *s, wl_error *err)
{
    grid_axis ax[10 + MAX_SET];
    size_t na = 0;
    ax[na++] = (grid_axis){"gpu", (double)s->gpus.n, &s->o_gpu};
    for (size_t k = 0; k < s->nset; k++)
        ax[na++] = (grid_axis){s->set[k].key, (double)s->set[k].vals.n, &s->set[k].o};
    if (s->traces.n) {
        ax[na++] = (grid_axis){"trace", (double)s->n_workloads, &s->o_trace};
        ax[na++] = (grid_axis){"dtype", (double)(s->ndt + (s->ndt == 0)), &s->o_dtype};
    } else {
        ax[na++] = (grid_axis){"model", (double)s->n_workloads, &s->o_model};
        ax[na++] = (grid_axis){"batch", (double)s->batch.n, &s->o_batch};
        ax[na++] = (grid_axis){"seq", (double)s->seq.n, &s->o_seq};
        ax[na++] = (grid_axis){"dtype", (double)s->ndt, &s->o_dtype};
        ax[na++] = (grid_axis){"attention", (double)s->nattn, &s->o_attn};
        ax[na++] = (grid_axis){"mode", (double)s->nmode, &s->o_mode};
    }
    ax[na++] = (grid_axis){s->vfix.n ? "voltage_mv" : "voltage_offset_mv",
                           (double)wl_sweep_i_volts(s)->n, s->vfix.n ? &s->o_vfix : &s->o_voff};
    ax[na++] = (grid_axis){"clock", (double)s->maxclk, &s->o_clock};
    double n = 1;
    size_t big = 0;
    for (size_t i = 0; i < na; i++) {
        n *= ax[i].n;
        if (ax[i].n > ax[big].n)
            big = i;
    }
    if (!(n > GRID_WARN_POINTS))
        return WL_OK;
    char axes[600] = "";
    size_t used = 0;
    for (size_t i = 0; i < na && used < sizeof axes; i++) {
        if (ax[i].n <= 1)
            continue;
        int w = snprintf(axes + used, sizeof axes - used, "%s%.40s %.0f", used ? " x " : "",
                         ax[i].name, ax[i].n);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (n > GRID_MAX_POINTS) {
        wl_error_set(err, ax[big].o->source, ax[big].o->line, ax[big].name,
                     "the grid has %.3g points (%s), more than the %.0e a sweep can index; "
                     "split it into several sweeps", n, axes, GRID_MAX_POINTS);
        return WL_EINVAL;
    }
    char t[800];
    snprintf(t, sizeof t, "the grid has %.3g points (%s): about %.3g hours at 50,000 points/s; "
             "--shard I/N splits it over processes or machines", n, axes, n / 5e4 / 3600);
    return add_warning(s, t);
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
    for (size_t i = 0; i < ng; i++)
        if ((rc = wl_sweep_i_name_edited_copy(s, i)))
            return rc;
    if (s->level > 0) {
        s->unc = calloc(ng, sizeof *s->unc);
        if (!s->unc)
            return WL_ENOMEM;
        for (size_t i = 0; i < ng; i++)
            if ((rc = wl_calib_uncertainty_load(s->gpus.v[i], &s->unc[i], err)))
                return rc;
            else if (s->same_board)
                memset(&s->unc[i].board, 0, sizeof s->unc[i].board);
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
            if ((rc = wl_core_workload_set_stack(s->trace_wl[i], s->opts.stack)))
                return rc;
            /* what a profile's import kept at measured times */
            const char *nt = wl_core_workload_note(s->trace_wl[i]);
            if (nt[0]) {
                char *t = wl_core_strprintf("%s: %s", s->traces.v[i], nt);
                rc = t ? wl_sweep_i_add_text(&s->notes, t) : WL_ENOMEM;
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
    if ((rc = grid_size(s, err)))
        return rc;
    /* every GPU variant must be valid */
    return wl_sweep_i_check_variants(s, err);
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
    return (unsigned long long)s->gpus.n * wl_sweep_i_n_variants(s) * s->n_workloads * n_shapes(s);
}

const wl_core_numlist *wl_sweep_i_volts(const wl_sweep_spec *s) { return s->vfix.n ? &s->vfix : &s->voff; }

/* Points per outer combination: voltages x the longest GPU clock list; a
 * GPU with fewer clocks leaves the rest of its stride empty. */
unsigned long long wl_sweep_i_n_inner(const wl_sweep_spec *s)
{
    return (unsigned long long)(wl_sweep_i_volts(s)->n * s->maxclk);
}

unsigned long long wl_sweep_i_n_outer_per_gpu(const wl_sweep_spec *s)
{
    return wl_sweep_i_n_variants(s) * s->n_workloads * n_shapes(s);
}

unsigned long long wl_sweep_spec_points(const wl_sweep_spec *s)
{
    return s->finished ? n_outer(s) * wl_sweep_i_n_inner(s) : 0;
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
    if (!strcmp(axis, "voltage")) return wl_sweep_i_volts(s)->n;
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

void wl_sweep_i_decode(const wl_sweep_spec *s, unsigned long long o, combo *c)
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
    unsigned long long nv = wl_sweep_i_n_variants(s);
    c->variant = o % nv;
    unsigned long long v = c->variant;
    for (size_t k = s->nset; k-- > 0;) {
        c->setidx[k] = v % s->set[k].vals.n;
        v /= s->set[k].vals.n;
    }
    c->gpu = o / nv;
}

/* FNV-1a, 64 bits (here, below sweep.c, which fingerprints a whole spec
 * with it) */
uint64_t wl_sweep_hash(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}
