/* The presets built into the binary (tools/embed.c writes them from
 * presets/KIND/ID.ini), by kind and id; names resolved through aliases; and
 * finding a preset's text by id, alias or path, with suggestions for a name
 * that matches none. Below every preset parser. */
#include "preset_internal.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *kind, *id, *text;
} wl_preset_blob;
/* generated at build time from presets/gpus/ *.ini and presets/models/ *.ini */
extern const wl_preset_blob wl_preset_blobs[];
extern const size_t wl_preset_blob_count;

/* Per kind: its folder under presets/, the word messages use, and the
 * option that names one. */
static const struct {
    const char *dir, *word, *field;
} kinds[WL_PRESET_KINDS] = {
    [WL_PRESET_GPU] = {"gpus", "GPU", "gpu"},
    [WL_PRESET_MODEL] = {"models", "model", "model"},
    [WL_PRESET_HOST] = {"hosts", "host", "host"},
    [WL_PRESET_SYSTEM] = {"systems", "system", "system"},
    [WL_PRESET_WORKLOAD] = {"workloads", "serving workload", "workload"},
};

const char *wl_preset_i_kind_dir(wl_preset_kind k)
{
    return kinds[k].dir;
}

const char *wl_preset_i_kind_word(wl_preset_kind k)
{
    return kinds[k].word;
}

const char *wl_preset_kind_name(wl_preset_kind kind)
{
    return (unsigned)kind < WL_PRESET_KINDS ? kinds[kind].field : NULL;
}

int wl_preset_kind_parse(const char *name, wl_preset_kind *out)
{
    for (int k = 0; k < WL_PRESET_KINDS; k++)
        if (!strcmp(name, kinds[k].field)) {
            *out = (wl_preset_kind)k;
            return WL_OK;
        }
    return WL_EINVAL;
}

size_t wl_preset_count(wl_preset_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        n += strcmp(wl_preset_blobs[i].kind, wl_preset_i_kind_dir(kind)) == 0;
    return n;
}

const char *wl_preset_id(wl_preset_kind kind, size_t idx)
{
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, wl_preset_i_kind_dir(kind)) == 0 && idx-- == 0)
            return wl_preset_blobs[i].id;
    return NULL;
}

const char *wl_preset_text(wl_preset_kind kind, const char *id)
{
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, wl_preset_i_kind_dir(kind)) == 0 &&
            strcmp(wl_preset_blobs[i].id, id) == 0)
            return wl_preset_blobs[i].text;
    return NULL;
}

/* GPU names as tools write them: lower case, '-' for blanks and '_', no
 * vendor prefix ("NVIDIA A100-SXM4-80GB" -> "a100-sxm4-80gb"). */
static void normalize_gpu_name(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < cap; p++) {
        char ch = *p;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (ch == ' ' || ch == '_' || ch == '\t')
            ch = '-';
        if (ch == '-' && (n == 0 || out[n - 1] == '-'))
            continue;
        out[n++] = ch;
    }
    while (n && out[n - 1] == '-')
        n--;
    out[n] = 0;
    if (strncmp(out, "nvidia-", 7) == 0)
        memmove(out, out + 7, strlen(out + 7) + 1);
}

static int alias_in(const char *p, const char *end, const char *norm);

/* The [gpu] aliases list of a preset text ("aliases = a, b, c", going on
 * over indented lines as the parser reads lists), matched after
 * normalisation. */
static int text_has_alias(const char *text, const char *norm)
{
    const char *p = strstr(text, "\naliases");
    if (!p)
        return 0;
    p = strchr(p, '=');
    if (!p)
        return 0;
    p++;
    for (;;) {
        if (alias_in(p, p + strcspn(p, ";\n"), norm))
            return 1;
        const char *nl = strchr(p, '\n');
        if (!nl || (nl[1] != ' ' && nl[1] != '\t'))
            return 0;
        p = nl + 1;
    }
}

static int alias_in(const char *p, const char *end, const char *norm)
{
    while (p < end) {
        size_t len = strcspn(p, ",;\n");
        if (p + len > end)
            len = (size_t)(end - p);
        char one[128], nn[128];
        size_t k = len < sizeof one - 1 ? len : sizeof one - 1;
        memcpy(one, p, k);
        one[k] = 0;
        const char *slash = strrchr(one, '/'); /* hub ids match by their name */
        normalize_gpu_name(slash ? slash + 1 : one, nn, sizeof nn);
        if (nn[0] && strcmp(nn, norm) == 0)
            return 1;
        p += len + 1;
    }
    return 0;
}

/* Whether a and b are equal with their '-' left out ("gpt-3-13b" and
 * "gpt3-13b", "llama3-8b" and "llama-3-8b"). */
static int same_without_dashes(const char *a, const char *b)
{
    for (;;) {
        while (*a == '-')
            a++;
        while (*b == '-')
            b++;
        if (*a != *b)
            return 0;
        if (!*a)
            return 1;
        a++, b++;
    }
}

static const char *resolve(const char *kind, const char *norm)
{
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, kind) == 0 && strcmp(wl_preset_blobs[i].id, norm) == 0)
            return wl_preset_blobs[i].id;
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, kind) == 0 &&
            text_has_alias(wl_preset_blobs[i].text, norm))
            return wl_preset_blobs[i].id;
    /* the obvious spellings of an id: hyphens placed differently, as long
     * as they name one preset only */
    const char *found = NULL;
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, kind) == 0 &&
            same_without_dashes(wl_preset_blobs[i].id, norm)) {
            if (found)
                return NULL;
            found = wl_preset_blobs[i].id;
        }
    return found;
}

const char *wl_preset_gpu_resolve(const char *name)
{
    char norm[128];
    normalize_gpu_name(name, norm, sizeof norm);
    return resolve("gpus", norm);
}

int wl_preset_gpu_names(const char *name, const char *gpu_id)
{
    if (strcmp(name, gpu_id) == 0)
        return 1;
    const char *id = wl_preset_gpu_resolve(name);
    return id && strcmp(id, gpu_id) == 0;
}

const char *wl_preset_model_resolve(const char *name)
{
    /* a hub id names the model after its organisation: google/vit-large-... */
    const char *slash = strrchr(name, '/');
    char norm[128];
    normalize_gpu_name(slash ? slash + 1 : name, norm, sizeof norm);
    return resolve("models", norm);
}

const char *wl_preset_host_resolve(const char *name)
{
    char norm[128];
    normalize_gpu_name(name, norm, sizeof norm);
    return resolve("hosts", norm);
}

const char *wl_preset_system_resolve(const char *name)
{
    char norm[128];
    normalize_gpu_name(name, norm, sizeof norm);
    return resolve("systems", norm);
}

const char *wl_preset_workload_resolve(const char *name)
{
    char norm[128];
    normalize_gpu_name(name, norm, sizeof norm);
    return resolve("workloads", norm);
}

const char *wl_preset_resolve(wl_preset_kind kind, const char *name)
{
    switch (kind) {
    case WL_PRESET_GPU: return wl_preset_gpu_resolve(name);
    case WL_PRESET_MODEL: return wl_preset_model_resolve(name);
    case WL_PRESET_HOST: return wl_preset_host_resolve(name);
    case WL_PRESET_WORKLOAD: return wl_preset_workload_resolve(name);
    default: return wl_preset_system_resolve(name);
    }
}

/* ---- finding a preset ------------------------------------------------------ */

static const char *preset_id_of(void *user, size_t i)
{
    return wl_preset_id(*(const wl_preset_kind *)user, i);
}

/* ", did you mean X, Y?" for a name no preset of kind has. */
static void suggest(wl_preset_kind kind, const char *id, char *buf, size_t cap)
{
    wl_core_name_hint(preset_id_of, &kind, wl_preset_count(kind), id, buf, cap);
}

static int is_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 4 && strcmp(s + n - 4, ".ini") == 0);
}

int wl_preset_find(wl_preset_kind kind, const char *id, const char **text, char **owned,
                   char *src, size_t cap, wl_error *err)
{
    *text = NULL;
    *owned = NULL;
    if (cap)
        src[0] = 0;
    const char *hub = NULL;
    size_t idlen = strlen(id);
    /* "org/name" that is no file and no .ini: a model hub id */
    if (kind == WL_PRESET_MODEL && is_path(id) && !(idlen > 4 && strcmp(id + idlen - 4, ".ini") == 0)) {
        FILE *probe = fopen(id, "r");
        if (probe) {
            fclose(probe);
        } else if (!(hub = wl_preset_model_resolve(id))) {
            wl_error_set(err, id, 0, "model",
                         "neither a file nor a model preset or alias (see 'wattlas presets list')");
            return WL_ENOTFOUND;
        }
    }
    if (hub)
        id = hub;
    else if (is_path(id)) {
        size_t len = 0;
        int rc = wl_core_read_file(id, owned, &len, err);
        if (rc)
            return rc;
        /* the parsers read up to the first NUL: what follows one would be
         * ignored without a word (study specs refuse it the same way) */
        const char *nul = memchr(*owned, 0, len);
        if (nul) {
            int line = 1;
            for (const char *q = *owned; q < nul; q++)
                line += *q == '\n';
            wl_error_set(err, id, line, "", "NUL byte in a text file");
            free(*owned);
            *owned = NULL;
            return WL_EPARSE;
        }
        *text = *owned;
        snprintf(src, cap, "%s", id);
        return WL_OK;
    }
    *text = wl_preset_text(kind, id);
    if (!*text) {
        const char *canon = wl_preset_resolve(kind, id);
        if (canon) {
            id = canon;
            *text = wl_preset_text(kind, id);
        }
    }
    if (!*text) {
        char hint[160];
        suggest(kind, id, hint, sizeof hint);
        wl_error_set(err, id, 0, wl_preset_kind_name(kind), "no %s preset '%.60s'%s (see 'wattlas presets list')",
                     wl_preset_i_kind_word(kind), id, hint);
        return WL_ENOTFOUND;
    }
    snprintf(src, cap, "presets/%s/%s.ini", wl_preset_i_kind_dir(kind), id);
    return WL_OK;
}

/* ---- a preset's name ------------------------------------------------------ */

typedef struct {
    const char *section;
    char *buf;
    size_t n;
} name_ctx;

static int name_pair(void *user, const char *section, const char *key, const char *value, int line)
{
    (void)line;
    name_ctx *c = user;
    if (!c->buf[0] && !strcmp(section, c->section) && !strcmp(key, "name"))
        snprintf(c->buf, c->n, "%s", value);
    return 1;
}

int wl_preset_name(wl_preset_kind kind, const char *id_or_path, char *buf, size_t n, wl_error *err)
{
    const char *text = NULL;
    char *owned = NULL, src[256];
    if (!n)
        return WL_EINVAL;
    buf[0] = 0;
    int rc = wl_preset_find(kind, id_or_path, &text, &owned, src, sizeof src, err);
    if (!rc) {
        name_ctx c = {.section = kinds[kind].field, .buf = buf, .n = n};
        rc = wl_preset_ini_parse(text, strlen(text), src, name_pair, &c, err);
        if (!rc && !buf[0]) {
            wl_error_set(err, src, 0, "name", "no name in [%s]", kinds[kind].field);
            rc = WL_EINVAL;
        }
    }
    free(owned);
    return rc;
}
