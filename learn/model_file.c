/* A learned model as a file (JSON, format wattlas-learned/1): saved, and
 * loaded with every field checked. */
#include "learn_internal.h"
#include "../core/json.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <xgboost/c_api.h>

#define LEARN_FORMAT "wattlas-learned/1"

static void put_floats(FILE *f, const char *name, const float *v, size_t n, int last)
{
    fprintf(f, "\"%s\":[", name);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.9g", i ? "," : "", (double)v[i]);
    fprintf(f, "]%s", last ? "" : ",");
}

static void put_ints(FILE *f, const char *name, const int *v, size_t n, int last)
{
    fprintf(f, "\"%s\":[", name);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? "," : "", v[i]);
    fprintf(f, "]%s", last ? "" : ",");
}

int wl_learn_model_save(const wl_learn_model *m, const char *path, wl_error *err)
{
    wl_results_out *o = NULL;
    int rc = wl_results_out_open(path, &o, err);
    if (rc)
        return rc;
    FILE *f = wl_results_out_stream(o);
    fprintf(f, "{\"format\":\"%s\",\"wattlas_version\":\"%s\",\"kind\":\"%s\",\"hybrid\":%s,\n",
            LEARN_FORMAT, WL_VERSION, wl_learn_kind_name(m->kind), m->hybrid ? "true" : "false");
    fprintf(f, "\"training_data\":\"%s\",\"rows\":%zu,\"trees\":%d,\"max_depth\":%d,\"seed\":%u,\n",
            m->fingerprint, m->rows, m->opt.trees, m->opt.max_depth, m->opt.seed);
    fputs("\"features\":[", f);
    for (int i = 0; i < m->nfeat; i++)
        fprintf(f, "%s\"%s\"", i ? "," : "", wl_learn_feature_names[i]);
    fputs("],\n\"domain_min\":[", f);
    for (int i = 0; i < m->nfeat; i++)
        fprintf(f, "%s%.17g", i ? "," : "", m->lo[i]);
    fputs("],\n\"domain_max\":[", f);
    for (int i = 0; i < m->nfeat; i++)
        fprintf(f, "%s%.17g", i ? "," : "", m->hi[i]);
    fprintf(f, "],\n\"across_models\":%d,\n\"bias\":[%.17g,%.17g,%.17g],\n"
               "\"shrink\":[%.17g,%.17g,%.17g],\n\"targets\":{",
            m->across_models, m->bias[0], m->bias[1], m->bias[2], m->shrink[0], m->shrink[1],
            m->shrink[2]);
    for (int t = 0; t < 3; t++) {
        const forest *fo = &m->f[t];
        fprintf(f, "%s\n\"%s\":{\"base\":%.17g,\"tree_start\":[", t ? "," : "", wl_learn_target_names[t],
                fo->base);
        for (size_t i = 0; i <= fo->ntrees; i++)
            fprintf(f, "%s%zu", i ? "," : "", fo->start[i]);
        fputs("],\n", f);
        int *dl = malloc((fo->nnodes + 1) * sizeof *dl);
        for (size_t i = 0; dl && i < fo->nnodes; i++)
            dl[i] = fo->dleft[i];
        if (!dl)
            rc = WL_ENOMEM;
        put_ints(f, "feature", fo->feat, fo->nnodes, 0);
        put_ints(f, "left", fo->left, fo->nnodes, 0);
        put_ints(f, "right", fo->right, fo->nnodes, 0);
        if (dl)
            put_ints(f, "default_left", dl, fo->nnodes, 0);
        put_floats(f, "threshold", fo->thr, fo->nnodes, 0);
        put_floats(f, "value", fo->value, fo->nnodes, 0);
        put_floats(f, "gain", fo->gain, fo->nnodes, 1);
        fputs("}", f);
        free(dl);
    }
    fputs("}}\n", f);
    if (rc) {
        wl_results_out_abort(o);
        return rc;
    }
    return wl_results_out_commit(o, err);
}

/* An array of n numbers named key in obj, each within [lo, hi]. */
static int get_nums(const wj_value *obj, const char *key, size_t n, double lo, double hi,
                    double *out, const char *path, wl_error *err)
{
    const wj_value *a = wj_get(obj, key);
    if (!a || a->type != WJ_ARRAY || a->n != n) {
        wl_error_set(err, path, obj->line, key, "expected an array of %zu numbers", n);
        return WL_EPARSE;
    }
    for (size_t i = 0; i < n; i++) {
        const wj_value *v = &a->items[i];
        if (v->type != WJ_NUMBER || !isfinite(v->num) || v->num < lo || v->num > hi) {
            wl_error_set(err, path, v->line, key, "entry %zu is not a number in [%g, %g]", i, lo, hi);
            return WL_EPARSE;
        }
        out[i] = v->num;
    }
    return WL_OK;
}

static int load_forest(const wj_value *t, const char *name, forest *f, int nfeat,
                       const char *path, wl_error *err)
{
    const wj_value *o = wj_get(t, name);
    if (!o || o->type != WJ_OBJECT) {
        wl_error_set(err, path, t->line, name, "missing target");
        return WL_EPARSE;
    }
    const wj_value *ts = wj_get(o, "tree_start"), *fe = wj_get(o, "feature"),
                   *ba = wj_get(o, "base");
    if (!ts || ts->type != WJ_ARRAY || ts->n < 1 || !fe || fe->type != WJ_ARRAY || !ba ||
        ba->type != WJ_NUMBER || !isfinite(ba->num)) {
        wl_error_set(err, path, o->line, name, "expected base, tree_start and the node arrays");
        return WL_EPARSE;
    }
    size_t nn = fe->n, nt = ts->n - 1;
    double *buf = malloc((nn + ts->n + 1) * sizeof *buf);
    int rc = buf ? wl_learn_forest_alloc(f, nt, nn) : WL_ENOMEM;
    f->base = ba->num;
    if (!rc)
        rc = get_nums(o, "tree_start", nt + 1, 0, (double)nn, buf, path, err);
    for (size_t i = 0; !rc && i <= nt; i++) {
        f->start[i] = (size_t)buf[i];
        if (i && f->start[i] <= f->start[i - 1]) {
            wl_error_set(err, path, ts->line, "tree_start", "trees must not be empty");
            rc = WL_EPARSE;
        }
    }
    if (!rc && (f->start[0] != 0 || f->start[nt] != nn)) {
        wl_error_set(err, path, ts->line, "tree_start", "does not cover the nodes");
        rc = WL_EPARSE;
    }
    static const char *const ints[4] = {"feature", "left", "right", "default_left"};
    for (int k = 0; !rc && k < 4; k++) {
        rc = get_nums(o, ints[k], nn, -1, k == 0 ? nfeat - 1 : k == 3 ? 1 : (double)nn, buf, path,
                      err);
        for (size_t i = 0; !rc && i < nn; i++) {
            int v = (int)buf[i];
            if (k == 0) f->feat[i] = v;
            else if (k == 1) f->left[i] = v;
            else if (k == 2) f->right[i] = v;
            else f->dleft[i] = (unsigned char)(v != 0);
        }
    }
    static const char *const flts[3] = {"threshold", "value", "gain"};
    for (int k = 0; !rc && k < 3; k++) {
        rc = get_nums(o, flts[k], nn, -3.4e38, 3.4e38, buf, path, err);
        for (size_t i = 0; !rc && i < nn; i++)
            (k == 0 ? f->thr : k == 1 ? f->value : f->gain)[i] = (float)buf[i];
    }
    /* every tree's children inside it and deeper than their parent: the
     * walk always ends */
    for (size_t t2 = 0; !rc && t2 < nt; t2++) {
        size_t a = f->start[t2], b = f->start[t2 + 1];
        for (size_t i = a; !rc && i < b; i++) {
            int l = f->left[i], r = f->right[i];
            int leaf = l < 0;
            if ((leaf && r >= 0) || (!leaf && (r < 0 || (size_t)l <= i - a || (size_t)r <= i - a ||
                                               (size_t)l >= b - a || (size_t)r >= b - a ||
                                               f->feat[i] < 0))) {
                wl_error_set(err, path, o->line, name, "tree %zu node %zu: bad children", t2, i - a);
                rc = WL_EPARSE;
            }
        }
    }
    free(buf);
    return rc;
}

int wl_learn_model_load(const char *path, wl_learn_model **out, wl_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = wl_core_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    char msg[200];
    int line = 0;
    wj_value *doc = wj_parse(text, len, &line, msg, sizeof msg);
    free(text);
    if (!doc) {
        wl_error_set(err, path, line, "", "not JSON: %s", msg);
        return WL_EPARSE;
    }
    wl_learn_model *m = calloc(1, sizeof *m);
    rc = m ? WL_OK : WL_ENOMEM;
    const wj_value *fmt = wj_get(doc, "format"), *kind = wj_get(doc, "kind"),
                   *hyb = wj_get(doc, "hybrid"), *feats = wj_get(doc, "features");
    if (!rc && (doc->type != WJ_OBJECT || !fmt || fmt->type != WJ_STRING ||
                strcmp(fmt->str, LEARN_FORMAT))) {
        wl_error_set(err, path, doc->line, "format", "not a wattlas learned model (%s)", LEARN_FORMAT);
        rc = WL_EPARSE;
    }
    if (!rc && (!kind || kind->type != WJ_STRING || wl_learn_kind_parse(kind->str, &m->kind))) {
        wl_error_set(err, path, kind ? kind->line : doc->line, "kind", "expected rf or gbt");
        rc = WL_EPARSE;
    }
    if (!rc && (!hyb || hyb->type != WJ_BOOL)) {
        wl_error_set(err, path, doc->line, "hybrid", "expected true or false");
        rc = WL_EPARSE;
    }
    if (!rc) {
        m->hybrid = hyb->num != 0;
        m->nfeat = m->hybrid ? WL_LEARN_FEATURES : WL_LEARN_PLAIN_FEATURES;
        /* the features must be ours, in our order */
        int ok = feats && feats->type == WJ_ARRAY && feats->n == (size_t)m->nfeat;
        for (int i = 0; ok && i < m->nfeat; i++)
            ok = feats->items[i].type == WJ_STRING && !strcmp(feats->items[i].str, wl_learn_feature_names[i]);
        if (!ok) {
            wl_error_set(err, path, feats ? feats->line : doc->line, "features",
                         "the features differ from this wattlas's (a model of another version?)");
            rc = WL_EPARSE;
        }
    }
    if (!rc)
        rc = get_nums(doc, "domain_min", (size_t)m->nfeat, -1e300, 1e300, m->lo, path, err);
    if (!rc)
        rc = get_nums(doc, "domain_max", (size_t)m->nfeat, -1e300, 1e300, m->hi, path, err);
    if (!rc)
        rc = get_nums(doc, "shrink", 3, 0, 1, m->shrink, path, err);
    /* a factor beyond e^+-1 is no correction of a physical model */
    if (!rc)
        rc = get_nums(doc, "bias", 3, -1, 1, m->bias, path, err);
    const wj_value *am = wj_get(doc, "across_models");
    if (!rc && (!am || am->type != WJ_NUMBER || (am->num != 0 && am->num != 1))) {
        wl_error_set(err, path, am ? am->line : doc->line, "across_models", "expected 0 or 1");
        rc = WL_EPARSE;
    }
    if (!rc)
        m->across_models = am->num != 0;
    const wj_value *tg = wj_get(doc, "targets");
    if (!rc && (!tg || tg->type != WJ_OBJECT)) {
        wl_error_set(err, path, doc->line, "targets", "missing");
        rc = WL_EPARSE;
    }
    for (int t = 0; !rc && t < 3; t++)
        rc = load_forest(tg, wl_learn_target_names[t], &m->f[t], m->nfeat, path, err);
    const wj_value *td = wj_get(doc, "training_data"), *rows = wj_get(doc, "rows");
    if (!rc && td && td->type == WJ_STRING)
        snprintf(m->fingerprint, sizeof m->fingerprint, "%s", td->str);
    if (!rc && rows && rows->type == WJ_NUMBER && rows->num >= 0)
        m->rows = (size_t)rows->num;
    wj_free(doc);
    if (rc) {
        wl_learn_model_free(m);
        return rc;
    }
    wl_learn_model_ready(m);
    *out = m;
    return WL_OK;
}
