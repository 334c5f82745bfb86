/* Host presets: loading one by name, its parser and writer, and a host set
 * on every GPU. */
#include "preset_internal.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A preset by id, alias or path: found (builtin.c), then parsed. */
int wl_preset_host_load(const char *id_or_path, wl_core_host *out, wl_error *err)
{
    char src[256];
    const char *text;
    char *owned;
    int rc = wl_preset_find(WL_PRESET_HOST, id_or_path, &text, &owned, src, sizeof src, err);
    if (!rc)
        rc = wl_preset_host_parse(text, owned ? id_or_path : src, out, err);
    free(owned);
    return rc;
}

/* ---- hosts ----------------------------------------------------------------- */

int wl_preset_gpus_set_host(const char *id_or_path, wl_core_gpu *gpus, size_t n, wl_error *err)
{
    wl_core_host h;
    int rc = wl_preset_host_load(id_or_path, &h, err);
    for (size_t i = 0; !rc && i < n; i++)
        wl_core_gpu_set_host(&gpus[i], &h);
    return rc;
}

static const char *const host_info[] = {"source", "command", "cpu", "framework", "aliases",
                                        "note", "fitted_rows", "data_hash", "fitted_on"};

/* [host]'s keys: id and name, then the costs core lists (wl_core_host_cost) */
#define N_HOST_KEYS 16

static const char *host_key(size_t k, size_t *off, double *hi)
{
    if (k < 2)
        return k ? "name" : "id";
    return wl_core_host_cost(k - 2, off, hi);
}

typedef struct {
    wl_core_host *h;
    const char *source;
    wl_error *err;
    int line[N_HOST_KEYS]; /* the lines of host_key's keys */
} host_ctx;

static int host_handler(void *user, const char *section, const char *name, const char *value,
                        int line)
{
    host_ctx *c = user;
    if (strcmp(section, "host")) {
        wl_error_set(c->err, c->source, line, name, "unknown section [%.60s] (a host preset has [host])",
                     section);
        return 0;
    }
    size_t k, off = 0;
    double hi = 0;
    const char *key;
    for (k = 0; (key = host_key(k, &off, &hi)) && strcmp(name, key); k++)
        ;
    if (!key) {
        for (size_t i = 0; i < sizeof host_info / sizeof *host_info; i++)
            if (!strcmp(name, host_info[i]))
                return 1;
        wl_error_set(c->err, c->source, line, name, "unknown key in [host]");
        return 0;
    }
    if (k >= N_HOST_KEYS) {
        wl_error_set(c->err, c->source, line, name, "more [host] keys than the reader holds");
        return 0;
    }
    if (c->line[k]) {
        wl_error_set(c->err, c->source, line, name, "duplicate key in [host] (first on line %d)",
                     c->line[k]);
        return 0;
    }
    c->line[k] = line;
    if (k < 2) {
        char *dst = k ? c->h->name : c->h->id;
        size_t cap = k ? sizeof c->h->name : sizeof c->h->id;
        if (!value[0] || strlen(value) >= cap) {
            wl_error_set(c->err, c->source, line, name, "empty or longer than %zu characters", cap - 1);
            return 0;
        }
        memcpy(dst, value, strlen(value) + 1);
        return 1;
    }
    double *dst = (double *)(void *)((char *)c->h + off);
    return wl_core_parse_real(value, 0, hi, c->source, line, name, dst, c->err) == WL_OK;
}

int wl_preset_host_parse(const char *text, const char *source, wl_core_host *out, wl_error *err)
{
    memset(out, 0, sizeof *out);
    host_ctx c = {.h = out, .source = source, .err = err};
    int rc = wl_preset_ini_parse(text, strlen(text), source, host_handler, &c, err);
    if (rc)
        return rc;
    if (!c.line[0] || !c.line[2]) {
        wl_error_set(err, source, 0, c.line[0] ? "launch_us" : "id", "missing required key in [host]");
        return WL_EPARSE;
    }
    if (wl_core_host_check(out, err)) {
        size_t k = 0, off;
        double hi;
        const char *key;
        while ((key = host_key(k, &off, &hi)) && strcmp(err->field, key))
            k++;
        wl_error_locate(err, source, key ? c.line[k] : 0);
        return WL_EPARSE;
    }
    return WL_OK;
}

void wl_preset_write_host(FILE *out, const wl_core_host *host)
{
    fprintf(out, "[host]\nid = %s\n", host->id);
    if (host->name[0])
        fprintf(out, "name = %s\n", host->name);
    size_t off;
    double hi;
    const char *key;
    /* launch_us always; a cost left at 0 is unstated (its fallback) */
    for (size_t i = 0; (key = wl_core_host_cost(i, &off, &hi)); i++) {
        double v = *(const double *)(const void *)((const char *)host + off);
        int sd = strstr(key, "_stderr") != NULL;
        if (i == 0 || v > 0)
            fprintf(out, sd ? "%s = %.4g\n" : "%s = %.10g\n", key, v);
    }
}
