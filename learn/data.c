/* Training data: measured rows with their analytical predictions. */
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

static int row_case(const wl_calib_row *r, wl_learn_case *c);

void wl_learn_data_free(wl_learn_data *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->workload ? d->workload[i] : NULL);
        free(d->model ? d->model[i] : NULL);
    }
    free(d->x);
    free(d->meas);
    free(d->pred);
    free(d->workload);
    free(d->model);
    free(d->src);
    free(d->cases);
    free(d->gpu);
    free(d->model_index);
    free(d->models);
    wl_calib_validation_free(d->v);
    memset(d, 0, sizeof *d);
}

int wl_learn_data_load(const char *path, const wl_calib_validation_options *vo,
                       wl_learn_data *out, wl_error *err)
{
    memset(out, 0, sizeof *out);
    char *bytes = NULL;
    size_t blen = 0;
    int rc = wl_core_read_file(path, &bytes, &blen, err);
    if (rc)
        return rc;
    /* FNV-1a, 64 bits: the data the model was trained on */
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < blen; i++) {
        h ^= (unsigned char)bytes[i];
        h *= 1099511628211ULL;
    }
    free(bytes);
    snprintf(out->fingerprint, sizeof out->fingerprint, "fnv1a64:%016llx", (unsigned long long)h);
    wl_calib_validation *v = NULL;
    rc = wl_calib_validation_create(path, vo, &v, err);
    if (rc)
        return rc;
    out->v = v;
    const wl_calib_set *set = wl_calib_validation_set(v);
    size_t n = wl_calib_count(set);
    out->x = malloc((n + 1) * WL_LEARN_FEATURES * sizeof *out->x);
    out->meas = malloc((n + 1) * 3 * sizeof *out->meas);
    out->pred = malloc((n + 1) * 3 * sizeof *out->pred);
    out->workload = calloc(n + 1, sizeof *out->workload);
    out->model = calloc(n + 1, sizeof *out->model);
    out->src = calloc(n + 1, sizeof *out->src);
    out->cases = calloc(n + 1, sizeof *out->cases);
    out->gpu = calloc(n + 1, sizeof *out->gpu);
    out->models = calloc(n + 1, sizeof *out->models);
    int *have = calloc(n + 1, sizeof *have);
    if (!out->x || !out->meas || !out->pred || !out->workload || !out->model || !out->src ||
        !out->cases || !out->gpu || !out->models || !have)
        rc = WL_ENOMEM;
    out->model_index = calloc(n + 1, sizeof *out->model_index);
    if (!out->model_index)
        rc = WL_ENOMEM;
    /* model presets by name, loaded once: rows with the same model share
     * out->models[k] (first[k] names it) */
    size_t *first = calloc(n + 1, sizeof *first);
    if (!first)
        rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        const wl_calib_row *r = wl_calib_row_at(set, i);
        const wl_core_gpu *g;
        wl_core_result res;
        int scored = 0;
        wl_learn_case c;
        if (wl_calib_validation_predict(v, i, &g, &res, &scored) || !scored || row_case(r, &c))
            continue;
        size_t k = 0;
        while (k < out->nmodels && strcmp(wl_calib_row_at(set, first[k])->model, r->model))
            k++;
        if (k == out->nmodels) {
            wl_error e2;
            first[k] = i;
            have[k] = wl_preset_model_load(r->model, &out->models[k], &e2) == WL_OK;
            out->nmodels++;
        }
        size_t j = out->n;
        int gk = 0;
        while ((size_t)gk + 1 < wl_calib_validation_gpus(v) && wl_calib_validation_gpu(v, (size_t)gk) != g)
            gk++;
        out->src[j] = i;
        out->cases[j] = c;
        out->gpu[j] = gk;
        out->model_index[j] = have[k] ? (int)k : -1;
        wl_learn_features(g, have[k] ? &out->models[k] : NULL, &c, &res,
                          out->x + j * WL_LEARN_FEATURES);
        const double mv[3] = {r->time_ms, r->power_w, r->energy_j};
        const double pv[3] = {res.time_ms, res.power_w, res.energy_j};
        memcpy(out->meas + 3 * j, mv, sizeof mv);
        memcpy(out->pred + 3 * j, pv, sizeof pv);
        out->workload[j] = wl_core_strprintf("%s/%s/b%lld/s%lld/%s/%s", r->gpu, r->model, r->batch,
                                             r->seq, r->dtype, r->mode);
        out->model[j] = wl_core_strprintf("%s", r->model);
        out->n++;
        if (!out->workload[j] || !out->model[j])
            rc = WL_ENOMEM;
    }
    free(first);
    free(have);
    if (!rc && out->n < 8) {
        wl_error_set(err, path, 0, "", "%zu scored rows: too few to learn from (at least 8)", out->n);
        rc = WL_EINVAL;
    }
    if (rc)
        wl_learn_data_free(out);
    return rc;
}

/* A measured row's case; WL_EINVAL when its dtype or mode is unknown. */
static int row_case(const wl_calib_row *r, wl_learn_case *c)
{
    *c = (wl_learn_case){.batch = r->batch, .seq = r->seq, .sm_clock_mhz = r->sm_clock_mhz};
    if (wl_dtype_parse(r->dtype, &c->dtype) || wl_mode_parse(r->mode, &c->mode))
        return WL_EINVAL;
    if (!r->attention[0] || wl_attention_parse(r->attention, &c->attention))
        c->attention = WL_ATTN_EAGER;
    return WL_OK;
}

int wl_learn_validation_row(const wl_learn_model *m, wl_calib_validation *v, size_t i,
                            wl_results_cell *cells, const char **why, wl_learn_tally *t)
{
    int rc = wl_calib_validation_row(v, i, cells, why);
    if (rc)
        return rc;
    const wl_calib_row *r = wl_calib_row_at(wl_calib_validation_set(v), i);
    const wl_core_gpu *g;
    wl_core_result res;
    int scored;
    wl_learn_case c;
    if (wl_calib_validation_predict(v, i, &g, &res, &scored) || row_case(r, &c))
        return WL_OK; /* the analytical prediction stands */
    wl_core_model mdl, *mp = NULL;
    wl_error e2;
    if (wl_preset_model_load(r->model, &mdl, &e2) == WL_OK)
        mp = &mdl;
    double x[WL_LEARN_FEATURES], dom;
    wl_learn_features(g, mp, &c, &res, x);
    const double an[3] = {res.time_ms, res.power_w, res.energy_j};
    wl_learn_apply(m, x, &res, &dom);
    const double le[3] = {res.time_ms, res.power_w, res.energy_j};
    size_t nin = wl_calib_ncols(wl_calib_validation_set(v));
    for (int k = 0; k < 3; k++)
        cells[nin + 1 + (size_t)k].v = le[k];
    if (scored && t) {
        const double me[3] = {r->time_ms, r->power_w, r->energy_j};
        t->scored++;
        t->outside += dom < 1;
        t->faded += dom <= 0;
        for (int k = 0; k < 3; k++) {
            t->ape_learned[k] += fabs(le[k] / me[k] - 1);
            t->ape_analytical[k] += fabs(an[k] / me[k] - 1);
        }
    }
    return WL_OK;
}
