/* Sweep specs: axes with their origins, from options and INI files, and
 * the enumeration of the grid's points (finishing a spec: spec_finish.c). */
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
    return wl_core_parse_axis(value, lo, hi, integers, source, line, field, l, err);
}

/* Parsers of one enum name into an array element (0: ok). */
static int parse_dtype(const char *name, void *out)
{
    wl_dtype dt;
    if (wl_dtype_parse(name, &dt) ||
        (dt != WL_DT_BF16 && dt != WL_DT_FP16 && dt != WL_DT_FP32 && dt != WL_DT_TF32 &&
         dt != WL_DT_FP8))
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
                       "bf16, fp16, fp32, tf32 or fp8", source, line, "dtype", err);
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
    } else if (!strcmp(key, "finetune")) {
        if (wl_finetune_parse(value, &o->finetune)) {
            wl_error_set(err, source, line, key, "expected full or lora, got '%.60s'", value);
            return WL_EINVAL;
        }
    } else if (!strcmp(key, "lora_rank")) {
        if (wl_core_parse_int(value, 1, 65536, source, line, key, &v, err))
            return WL_EINVAL;
        o->lora_rank = (int)v;
    } else if (!strcmp(key, "lora_targets")) {
        if (wl_lora_targets_parse(value, &o->lora_targets)) {
            wl_error_set(err, source, line, key, "expected a list of q, k, v, o, gate, up, down, "
                         "attention, mlp or all, got '%.60s'", value);
            return WL_EINVAL;
        }
    } else if (!strcmp(key, "freeze")) {
        if (wl_core_parse_int(value, 0, 1000000, source, line, key, &v, err))
            return WL_EINVAL;
        o->freeze = (int)v;
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
    int rc = wl_core_parse_axis(list, -1e300, 1e300, 0, source, line, field, &a->vals, err);
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
    "launch", "grad_accum", "finetune", "lora_rank", "lora_targets", "freeze", "gen", "stack",
    "impl", "scope", "learned", "classes", "latency",
    "power_limit", "power_limit_w", "same_board", "board", "interval", "profile_clock", "profile_power_limit_w", "profile_gpu",
    "profile_step_ms", "set"};

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
        !strcmp(key, "finetune") || !strcmp(key, "lora_rank") || !strcmp(key, "lora_targets") ||
        !strcmp(key, "freeze") ||
        !strcmp(key, "stack") || !strcmp(key, "impl"))
        return set_train(s, key, value, source, line, err);
    if (!strcmp(key, "scope")) {
        if (!strcmp(value, "model")) s->scope = WL_SWEEP_MODEL;
        else if (!strcmp(value, "layer") || !strcmp(value, "decoder")) s->scope = WL_SWEEP_LAYER;
        else if (!strcmp(value, "layer-in-model")) s->scope = WL_SWEEP_LAYER_IN_MODEL;
        else if (!strcmp(value, "kernel")) s->scope = WL_SWEEP_MODEL, s->classes = 1;
        else {
            wl_error_set(err, source, line, key,
                         "expected model, layer (or decoder), layer-in-model or kernel, got '%.60s'", value);
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
    if (!strcmp(key, "same_board")) { /* compare: one board's coefficients on every GPU */
        if (strcmp(value, "on") && strcmp(value, "off")) {
            wl_error_set(err, source, line, key, "expected on or off, got '%.60s'", value);
            return WL_EINVAL;
        }
        s->one_board = strcmp(value, "on") == 0;
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
    if (!strcmp(key, "profile_gpu")) {
        /* the board a profile ran on: loaded with the traces in finish */
        size_t l = strlen(value);
        if (!l || l >= sizeof s->recorded.gpu) {
            wl_error_set(err, source, line, key, "a GPU preset id or INI file of 1 to %zu "
                         "characters", sizeof s->recorded.gpu - 1);
            return WL_EINVAL;
        }
        memcpy(s->recorded.gpu, value, l + 1);
        take_origin(&s->o_rgpu, source, line);
        return WL_OK;
    }
    if (!strcmp(key, "profile_clock") || !strcmp(key, "profile_power_limit_w")) {
        /* what a PyTorch profile ran at, for files that do not say */
        int clk = !strcmp(key, "profile_clock");
        double x;
        if (wl_core_parse_real(value, 1, clk ? 1e4 : 1e5, source, line, key, &x, err))
            return WL_EINVAL;
        if (clk)
            s->recorded.sm_clock_mhz = x;
        else
            s->recorded.power_limit_w = x;
        take_origin(clk ? &s->o_rclock : &s->o_rlimit, source, line);
        return WL_OK;
    }
    if (!strcmp(key, "profile_step_ms")) {
        /* the profiled step's wall time unprofiled: the profiler's own
         * host cost is solved from it (core/profile_map.c) */
        double x;
        if (wl_core_parse_real(value, 1e-3, 3.6e6, source, line, key, &x, err))
            return WL_EINVAL;
        s->recorded.step_ms = x;
        take_origin(&s->o_rstep, source, line);
        return WL_OK;
    }
    /* the board's power limit, an axis of watts: the one spelling of every
     * command (--power-limit-w, a spec's power_limit_w), the preset key
     * --set power_limit_w= sets */
    if (!strcmp(key, "power_limit_w"))
        return set_field(s, key, value, source, line, err);
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

wl_core_scope wl_sweep_core_scope(wl_sweep_scope s)
{
    return s == WL_SWEEP_LAYER ? WL_SCOPE_LAYER
           : s == WL_SWEEP_LAYER_IN_MODEL ? WL_SCOPE_LAYER_IN_MODEL : WL_SCOPE_MODEL;
}
