/* Sweep specs: the GPU of each variant of a --set grid, each variant
 * checked (and what the transfer rules moved with a spec key said), and an
 * edited copy of a built-in GPU preset named apart from it; below spec.c,
 * which calls them, with the list helper both use. */
#include "sweep_internal.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The calibrated coefficients a variant's spec keys moved through the
 * transfer rules (wl_preset_gpu_apply: a spec key set away from the preset
 * carries the coefficients as to another GPU), as bits in the order of
 * wl_calib_param_name; a coefficient set itself is not counted. */
static unsigned long long transferred(const wl_sweep_spec *s, const wl_core_gpu *base,
                                      const wl_core_gpu *g)
{
    unsigned long long bits = 0;
    int np = wl_calib_param_count();
    for (int i = 0; i < np && i < 64; i++) {
        const char *name = wl_calib_param_name(i);
        double a = 0, b = 0;
        int set = 0;
        for (size_t k = 0; k < s->nset && !set; k++)
            set = strcmp(s->set[k].key, name) == 0;
        if (set || wl_preset_gpu_get(base, name, &a) || wl_preset_gpu_get(g, name, &b))
            continue;
        if (fabs(b - a) > 1e-9 * fabs(a))
            bits |= 1ull << i;
    }
    return bits;
}

/* Says that a knob moved other figures, and by which rule: lowering the
 * memory bandwidth or the SM count changes the calibrated coefficients
 * too, and a figure that moves with them should not surprise. */
static int note_transferred(wl_sweep_spec *s, unsigned long long moved)
{
    char names[700] = "";
    size_t len = 0;
    for (int i = 0; i < wl_calib_param_count() && i < 64; i++)
        if (moved >> i & 1ull) {
            int w = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                             wl_calib_param_name(i));
            if (w < 0 || (size_t)w >= sizeof names - len)
                break;
            len += (size_t)w;
        }
    char *t = wl_core_strprintf(
        "--set of a spec key carries the calibrated coefficients through the transfer rules "
        "(wl_core_gpu_transfer, core/gpu.c; README \"Transfer to unmeasured GPUs\"), as for "
        "another GPU: %s moved with it", names);
    int rc = t ? wl_sweep_i_add_text(&s->notes, t) : WL_ENOMEM;
    free(t);
    return rc;
}

/* The keys of a rule list (wl_preset_gpu_derived or _held of key) that the
 * spec does not set itself, comma-joined into buf. */
static size_t unset_keys(const wl_sweep_spec *s, const char *(*rule)(const char *, size_t),
                         const char *key, char *buf, size_t n)
{
    size_t len = 0;
    const char *d;
    buf[0] = 0;
    for (size_t i = 0; (d = rule(key, i)); i++) {
        int set = 0;
        for (size_t j = 0; j < s->nset; j++)
            set |= !strcmp(s->set[j].key, d);
        int w = set || len >= n ? 0 : snprintf(buf + len, n - len, "%s%s", len ? ", " : "", d);
        len += w > 0 ? (size_t)w : 0;
    }
    return len;
}

/* Says what a set key re-derived and what it held (wl_preset_gpu_derived,
 * wl_preset_gpu_held): --set sms=264 alone once left the L2's bandwidth at
 * 132 SMs' without a word, and a 2x die ran the 8192^3 GEMM 1.35x faster. */
static int note_derived(wl_sweep_spec *s)
{
    for (size_t k = 0; k < s->nset; k++) {
        const char *key = s->set[k].key;
        char follows[200], held[300];
        size_t fl = unset_keys(s, wl_preset_gpu_derived, key, follows, sizeof follows);
        size_t hl = unset_keys(s, wl_preset_gpu_held, key, held, sizeof held);
        if (!fl && !hl)
            continue;
        char *t = wl_core_strprintf("--set %s: %s%s%s%s%s", key,
                                    fl ? "re-derived in proportion to it, as the presets derive "
                                         "them: " : "",
                                    follows, fl && hl ? "; " : "",
                                    hl ? "held at the preset's (no rule derives them): " : "", held);
        int rc = t ? wl_sweep_i_add_text(&s->notes, t) : WL_ENOMEM;
        free(t);
        if (rc)
            return rc;
    }
    return WL_OK;
}

/* Every variant is checked before anything is written while there are at
 * most CHECK_ALL of them (GPUs x variants). A larger --set grid (a product
 * of 10^7 variants, most of them for other shards) would spend its setup
 * there, about 25 us a variant, before the first row: instead each set
 * value is checked on its own on every GPU, the other keys at the
 * preset's, and each combination as its chunk is evaluated (a bad one
 * stops the run there with its error, the output not written), so the
 * setup grows with the values, not with their product. */
enum { CHECK_ALL = 20000 };

int wl_sweep_i_check_variants(wl_sweep_spec *s, wl_error *err)
{
    unsigned long long nvar = wl_sweep_i_n_variants(s), moved = 0;
    if (note_derived(s))
        return WL_ENOMEM;
    if ((unsigned long long)s->gpus.n * nvar <= CHECK_ALL) {
        for (size_t gi = 0; gi < s->gpus.n; gi++)
            for (unsigned long long v = 0; v < nvar; v++) {
                wl_core_gpu g;
                int rc = wl_sweep_i_variant_gpu(s, gi, v, &g, err);
                if (rc)
                    return rc;
                moved |= transferred(s, &s->gpu[gi], &g);
            }
        return moved ? note_transferred(s, moved) : WL_OK;
    }
    for (size_t gi = 0; gi < s->gpus.n; gi++)
        for (size_t k = 0; k < s->nset; k++)
            for (size_t j = 0; j < s->set[k].vals.n; j++) {
                wl_core_gpu g = s->gpu[gi];
                const char *key = s->set[k].key;
                double x = s->set[k].vals.v[j];
                /* the values, then the relations, each error naming this one
                 * value of the key (not "these set values") */
                if (wl_preset_gpu_apply_values(&g, &key, &x, 1, NULL, err) ||
                    wl_core_gpu_check(&g, err)) {
                    char text[256];
                    snprintf(text, sizeof text, "%s", err->text);
                    wl_error_set(err, s->set[k].o.source, s->set[k].o.line, key,
                                 "%s with %s = %g: %s", s->gpus.v[gi], key, x, text);
                    return WL_EINVAL;
                }
                /* the note's coefficients from 64 values of the key,
                 * its ends among them (transferred looks each one up by
                 * name: 10^5 values took 2.5 s) */
                size_t n = s->set[k].vals.n, stride = (n + 63) / 64;
                if (j % stride == 0 || j + 1 == n)
                    moved |= transferred(s, &s->gpu[gi], &g);
            }
    return moved ? note_transferred(s, moved) : WL_OK;
}

/* A copy of a built-in preset, edited (`presets show h100-sxm-80gb >
 * mine.ini`, then dram_bw_gbs changed), keeps the built-in's id, and beside
 * the built-in two rows would carry one name. Such a file is named by its
 * stem (mine), or ID-edited when the stem is taken, with a note; a file
 * that matches the built-in field for field keeps the id. */
int wl_sweep_i_name_edited_copy(wl_sweep_spec *s, size_t i)
{
    const char *path = s->gpus.v[i];
    size_t len = strlen(path);
    wl_core_gpu *g = &s->gpu[i];
    const char *text = wl_preset_text(WL_PRESET_GPU, g->id);
    if (!text || !(strchr(path, '/') || (len > 4 && !strcmp(path + len - 4, ".ini"))))
        return WL_OK;
    wl_core_gpu builtin;
    wl_error e;
    const char *key = NULL;
    if (wl_preset_gpu_parse(text, g->id, &builtin, &e) ||
        !(key = wl_preset_gpu_differs(g, &builtin)))
        return WL_OK;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strcspn(base, ".");
    char stem[64], old[64];
    snprintf(stem, sizeof stem, "%.*s", (int)(n < sizeof stem - 1 ? n : sizeof stem - 1), base);
    snprintf(old, sizeof old, "%s", g->id);
    int taken = !stem[0] || !strcmp(stem, old) || wl_preset_text(WL_PRESET_GPU, stem);
    for (size_t k = 0; k < s->gpus.n && !taken; k++)
        taken = k != i && !strcmp(s->gpu[k].id, stem);
    if (taken)
        snprintf(g->id, sizeof g->id, "%.56s-edited", old);
    else
        snprintf(g->id, sizeof g->id, "%s", stem);
    char *t = wl_core_strprintf("%s: its [gpu] id is the built-in %s's but its %s differs "
                                "(and maybe more): named %s", path, old, key, g->id);
    int rc = t ? wl_sweep_i_add_text(&s->notes, t) : WL_ENOMEM;
    free(t);
    return rc;
}

/* The GPU of variant v of GPU gi, with the set values applied; err names
 * the set axis whose value failed. */
int wl_sweep_i_variant_gpu(const wl_sweep_spec *s, size_t gi, unsigned long long v, wl_core_gpu *g,
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
    /* wl_preset_gpu_apply checks the relations between keys too, naming
     * the set axis of the field that broke */
    int rc = wl_preset_gpu_apply(g, keys, x, s->nset, &bad, err);
    if (rc) {
        wl_error_locate(err, s->set[bad].o.source, s->set[bad].o.line);
        return WL_EINVAL;
    }
    return WL_OK;
}

unsigned long long wl_sweep_i_n_variants(const wl_sweep_spec *s)
{
    unsigned long long n = 1;
    for (size_t k = 0; k < s->nset; k++)
        n *= s->set[k].vals.n;
    return n;
}

/* Appends a copy of text to l. */
int wl_sweep_i_add_text(wl_core_strlist *l, const char *text)
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
