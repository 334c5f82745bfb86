/* Model presets: the [model] keys and their checks; loading one by name. */
#include "preset_internal.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- models -------------------------------------------------------------- */

static const char *const model_ints[] = {"layers", "d_model", "heads", "kv_heads", "d_ff",
                                         "qkv_bias", "pooler", "final_norm", "image_size_px",
                                         "patch_size_px", "channels", "classes", "pooler_dim",
                                         "base_width", "vocab_size", "max_position_embeddings",
                                         "type_vocab_size", "experts", "experts_per_token",
                                         "d_ff_expert", "shared_experts", "dense_layers",
                                         "router_bias", "q_lora_rank", "kv_lora_rank",
                                         "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                                         "route_nodes", "head_dim", "sliding_window",
                                         "global_every", "moe_every"};
/* what no model has: beyond these a preset is a typo, not a design */
static const long long model_max[] = {10000, 1000000, 100000, 100000, 10000000, 1, 1, 1, 16384,
                                      16384, 100000, 10000000, 1000000, 1000000,
                                      100000000, 100000000, 1000000, 100000, 1024, 10000000,
                                      1024, 10000, 1, 1000000, 1000000, 100000, 100000, 100000,
                                      100000, 100000, 10000000, 10000, 10000};
enum { M_ID = 40, M_STYLE = 41 }; /* seen[] slots past the integers */
_Static_assert(sizeof model_max / sizeof *model_max == sizeof model_ints / sizeof *model_ints,
               "one maximum per integer key");
_Static_assert(sizeof model_ints / sizeof *model_ints <= M_ID, "seen[] slots overlap");

static int model_handler(void *user, const char *section, const char *name, const char *value,
                         int line)
{
    ctx *c = user;
    wl_core_model *m = c->model;
    if (strcmp(section, "model") != 0)
        return wl_preset_i_fail(c, line, name, "unknown section [%.60s] (expected [model])", section);
    int *const iptr[] = {&m->layers, &m->d_model, &m->heads, &m->kv_heads, &m->d_ff,
                         &m->qkv_bias, &m->pooler, &m->final_norm, &m->image_size,
                         &m->patch_size, &m->channels, &m->classes, &m->pooler_dim,
                         &m->base_width, &m->vocab_size, &m->max_positions,
                         &m->type_vocab_size, &m->experts, &m->experts_per_token,
                         &m->d_ff_expert, &m->shared_experts, &m->dense_layers,
                         &m->router_bias, &m->q_lora_rank, &m->kv_lora_rank,
                         &m->qk_nope_head_dim, &m->qk_rope_head_dim, &m->v_head_dim,
                         &m->route_nodes, &m->head_dim, &m->sliding_window,
                         &m->global_every, &m->moe_every};
    if (strcmp(name, "blocks") == 0)
        return wl_preset_i_list_append(c, 0, value, line);
    if (strcmp(name, "vocab") == 0) /* the spelling of HF's vocab_size */
        name = "vocab_size";
    if (strcmp(name, "tie_word_embeddings") == 0) {
        long long v;
        if (wl_core_parse_int(value, 0, 1, c->source, line, name, &v, c->err))
            return 0;
        m->untied_head = v == 0;
        return 1;
    }
    if (strcmp(name, "hidden_dropout") == 0 || strcmp(name, "attention_dropout") == 0) {
        double v;
        if (wl_core_parse_real(value, 0, 0.99, c->source, line, name, &v, c->err))
            return 0;
        *(name[0] == 'h' ? &m->hidden_dropout : &m->attention_dropout) = v;
        return 1;
    }
    for (size_t i = 0; i < sizeof model_ints / sizeof *model_ints; i++) {
        if (strcmp(name, model_ints[i]))
            continue;
        if (c->seen[i])
            return wl_preset_i_fail(c, line, name, "duplicate key (first on line %d)", c->seen_line[i]);
        c->seen[i] = 1;
        c->seen_line[i] = line;
        long long v;
        if (wl_core_parse_int(value, 0, model_max[i], c->source, line, name, &v, c->err))
            return 0;
        *iptr[i] = (int)v;
        return 1;
    }
    if (strcmp(name, "id") == 0) {
        if (!value[0] || strlen(value) >= sizeof m->id)
            return wl_preset_i_fail(c, line, name, "empty or longer than %zu characters", sizeof m->id - 1);
        memcpy(m->id, value, strlen(value) + 1);
        c->seen[M_ID] = 1;
    } else if (strcmp(name, "style") == 0) {
        if (wl_style_parse(value, &m->style)) {
            char known[256] = "";
            size_t k = 0;
            for (int i = 0; k < sizeof known && strcmp(wl_style_name((wl_style)i), "?"); i++) {
                int w = snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "",
                                 wl_style_name((wl_style)i));
                k += w > 0 ? (size_t)w : sizeof known;
            }
            return wl_preset_i_fail(c, line, name, "unknown style '%.60s' (%s)", value, known);
        }
        c->seen[M_STYLE] = 1;
    } else if (strcmp(name, "activation") == 0) {
        if (wl_activation_parse(value, &m->activation))
            return wl_preset_i_fail(c, line, name, "unknown activation '%.60s' (relu, gelu, gelu-tanh, swiglu)",
                            value);
    } else if (strcmp(name, "norm") == 0) {
        if (strcmp(value, "layernorm") == 0)
            m->norm = WL_NORM_LAYERNORM;
        else if (strcmp(value, "rmsnorm") == 0)
            m->norm = WL_NORM_RMSNORM;
        else
            return wl_preset_i_fail(c, line, name, "unknown norm '%.60s' (layernorm, rmsnorm)", value);
    } else if (strcmp(name, "norm_placement") == 0) {
        if (strcmp(value, "pre") == 0)
            m->pre_norm = 1;
        else if (strcmp(value, "post") == 0)
            m->pre_norm = 0;
        else
            return wl_preset_i_fail(c, line, name, "unknown placement '%.60s' (pre, post)", value);
    } else if (strcmp(name, "positions") == 0) {
        if (strcmp(value, "learned") == 0)
            m->positions = WL_POS_LEARNED;
        else if (strcmp(value, "rotary") == 0)
            m->positions = WL_POS_ROTARY;
        else
            return wl_preset_i_fail(c, line, name, "unknown positions '%.60s' (learned, rotary)", value);
    } else if (!wl_preset_i_is_info(name) && strcmp(name, "name") != 0) {
        return wl_preset_i_fail(c, line, name, "unknown key in [model]");
    }
    return 1;
}

static int model_line(const ctx *c, const char *field)
{
    for (size_t i = 0; i < sizeof model_ints / sizeof *model_ints; i++)
        if (strcmp(model_ints[i], field) == 0 ||
            (strncmp(model_ints[i], field, strlen(field)) == 0 &&
             strcmp(model_ints[i] + strlen(field), "_px") == 0))
            return c->seen_line[i];
    return strcmp(field, "blocks") == 0 ? c->list[0].line : 0;
}

static int model_parse(ctx *c, const char *text, const char *source, wl_core_model *out,
                       wl_error *err)
{
    int rc = wl_preset_ini_parse(text, strlen(text), source, model_handler, c, err);
    if (rc)
        return rc;
    if (c->list[0].text) {
        wl_core_numlist l = {0};
        rc = wl_core_parse_list(c->list[0].text, 1, 1000, 1, source, c->list[0].line, "blocks",
                                &l, err);
        if (!rc && (l.n < 1 || l.n > WL_MAX_STAGES)) {
            wl_error_set(err, source, c->list[0].line, "blocks", "needs 1 to %d stages, got %zu",
                         WL_MAX_STAGES, l.n);
            rc = WL_EPARSE;
        }
        for (size_t i = 0; !rc && i < l.n; i++)
            out->blocks[i] = (int)l.v[i];
        out->stages = (int)l.n;
        wl_core_numlist_free(&l);
        if (rc)
            return WL_EPARSE;
    }
    int cnn = c->seen[M_STYLE] && out->style == WL_STYLE_RESNET;
    if (cnn && !c->list[0].text) {
        wl_error_set(err, source, 0, "blocks", "missing required key in [model] for style resnet");
        return WL_EPARSE;
    }
    if (out->style == WL_STYLE_VIT || cnn) {
        static const char *const vreq[] = {"image_size_px", "channels"};
        for (int i = 0; i < 2; i++)
            if (!c->seen[8 + 2 * i]) {
                wl_error_set(err, source, 0, vreq[i], "missing required key in [model] for a vision style");
                return WL_EPARSE;
            }
    }
    static const char *const req[] = {"layers", "d_model", "heads"};
    for (int i = 0; i < 3 && !cnn; i++)
        if (!c->seen[i]) {
            wl_error_set(err, source, 0, req[i], "missing required key in [model]");
            return WL_EPARSE;
        }
    if (!c->seen[4] && !cnn) {
        wl_error_set(err, source, 0, "d_ff", "missing required key in [model]");
        return WL_EPARSE;
    }
    if (!c->seen[M_ID]) {
        wl_error_set(err, source, 0, "id", "missing required key in [model]");
        return WL_EPARSE;
    }
    if (!c->seen[M_STYLE]) {
        wl_error_set(err, source, 0, "style", "missing required key in [model]");
        return WL_EPARSE;
    }
    if (out->kv_heads < 0)
        out->kv_heads = out->heads;
    if (out->final_norm < 0)
        out->final_norm = out->pre_norm;
    /* a learned position table of no rows: a training step writes their
     * gradient, and 0 reached the kernel builder as "n: kernel dimensions
     * must be positive" (issue 64) */
    for (size_t i = 0; i < sizeof model_ints / sizeof *model_ints; i++)
        if (!strcmp(model_ints[i], "max_position_embeddings") && c->seen[i] &&
            out->max_positions < 1 && out->positions == WL_POS_LEARNED &&
            !wl_core_model_is_vision(out)) {
            wl_error_set(err, source, c->seen_line[i], "max_position_embeddings",
                         "must be >= 1 with learned positions (the position table's rows)");
            return WL_EPARSE;
        }
    if (wl_core_model_check(out, err)) {
        wl_error_locate(err, source, model_line(c, err->field));
        return WL_EPARSE;
    }
    return WL_OK;
}

int wl_preset_model_parse(const char *text, const char *source, wl_core_model *out,
                          wl_error *err)
{
    memset(out, 0, sizeof *out);
    out->pre_norm = 1;
    out->final_norm = -1;
    out->kv_heads = -1;
    ctx c = {.source = source, .model = out, .err = err};
    int rc = model_parse(&c, text, source, out, err);
    wl_preset_i_lists_free(&c);
    return rc;
}

/* A preset by id, alias or path: found (builtin.c), then parsed. */
int wl_preset_model_load(const char *id_or_path, wl_core_model *out, wl_error *err)
{
    char src[256];
    const char *text;
    char *owned;
    int rc = wl_preset_find(WL_PRESET_MODEL, id_or_path, &text, &owned, src, sizeof src, err);
    if (!rc)
        rc = wl_preset_model_parse(text, owned ? id_or_path : src, out, err);
    free(owned);
    return rc;
}
