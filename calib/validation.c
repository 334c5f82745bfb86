/* Validation of a measurements file: every row on its GPU's preset (with
 * measured idle tables and traces found beside the data), the rows written
 * again with predictions, and the figures to score them. */
#include "wattlas_calib.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAXG 16 /* GPUs in one file */

struct wl_calib_validation {
    wl_calib_set *set;
    size_t ng;
    wl_core_gpu gpus[MAXG];
    const char *ids[MAXG];
    char *id_store[MAXG];
    wl_calib_problem *P[MAXG];
    wl_calib_uncertainty unc[MAXG];
    double level;
    wl_results_col *cols;
    size_t ncols, nin;
    size_t cover[3], ncover, ncover_power, nbad, ntraced;
    char why_buf[256];
};

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* DATA/measurements/X.csv -> DATA (the layout of ../shared/data), or NULL.
 * Notes print the directory, so it is written without "measurements/..":
 * the path less its last two components, when that is the same directory
 * as DIR/.. (it is not when DIR is a symbolic link, ".", or ".."). */
static char *data_dir_of(const char *path)
{
    const char *sl = strrchr(path, '/');
    int dl = sl ? (int)(sl - path) : 0;
    char *up = wl_core_strprintf("%.*s%s..", dl, path, sl ? "/" : "");
    const char *s2 = NULL;
    for (const char *q = path; sl && q < sl; q++)
        if (*q == '/')
            s2 = q;
    const char *last = s2 ? s2 + 1 : path; /* DIR's own name */
    size_t ll = sl ? (size_t)(sl - last) : 0;
    if (!up || !sl || !ll || (ll == 1 && last[0] == '.') ||
        (ll == 2 && last[0] == '.' && last[1] == '.'))
        return up;
    char *lex = s2 ? wl_core_strprintf("%.*s", s2 == path ? 1 : (int)(s2 - path), path)
                   : wl_core_strprintf(".");
    struct stat a, b;
    if (lex && stat(lex, &a) == 0 && stat(up, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino) {
        free(up);
        return lex;
    }
    free(lex);
    return up;
}

static int setup_gpus(wl_calib_validation *v, const wl_calib_validation_options *o,
                      const char *path, wl_error *err)
{
    size_t n = wl_calib_count(v->set);
    if (o->gpu) {
        v->ids[v->ng++] = o->gpu;
    } else {
        for (size_t i = 0; i < n; i++) {
            const wl_calib_row *r = wl_calib_row_at(v->set, i);
            const char *g = wl_preset_gpu_resolve(r->gpu);
            if (!g)
                g = r->gpu;
            size_t k = 0;
            while (k < v->ng && strcmp(v->ids[k], g) != 0)
                k++;
            if (k < v->ng)
                continue;
            if (v->ng == MAXG) {
                wl_error_set(err, path, r->line, "gpu", "more than %d GPUs in one file", MAXG);
                return WL_EINVAL;
            }
            if (!(v->id_store[v->ng] = strdup(g)))
                return WL_ENOMEM;
            v->ids[v->ng] = v->id_store[v->ng];
            v->ng++;
        }
    }
    for (size_t k = 0; k < v->ng; k++) {
        int rc = wl_preset_gpu_load(v->ids[k], &v->gpus[k], err);
        if (rc)
            return rc;
    }
    int rc = o->host ? wl_preset_gpus_set_host(o->host, v->gpus, v->ng, err) : WL_OK;
    if (rc == WL_ENOTFOUND)
        wl_error_locate(err, "--host", 0);
    return rc;
}

/* --idle tables, then a table beside the data for a rule-based idle curve. */
static int idle_tables(wl_calib_validation *v, const wl_calib_validation_options *o,
                       const char *data_dir, wl_error *err)
{
    const char *used[MAXG];
    int rc = wl_preset_apply_idle_specs(v->gpus, v->ng, o->idle_specs, o->n_idle, used, err);
    if (rc)
        return rc;
    for (size_t k = 0; k < v->ng; k++) {
        if (used[k]) {
            wl_core_say(o->note, o->note_user, "%s uses the measured idle table %s", v->gpus[k].id, used[k]);
            continue;
        }
        if (!data_dir || !(v->gpus[k].vf_rule & WL_VF_RULE_IDLE))
            continue;
        char *t = wl_core_strprintf("%s/gpu-tables/%s-idle.csv", data_dir, v->gpus[k].id);
        if (!t)
            return WL_ENOMEM;
        if (is_file(t)) {
            rc = wl_preset_gpu_idle_table(&v->gpus[k], t, err);
            if (!rc)
                wl_core_say(o->note, o->note_user, "%s uses the measured idle table %s", v->gpus[k].id, t);
        }
        free(t);
        if (rc)
            return rc;
    }
    return WL_OK;
}

static const char *const pred_names[10] = {
    "predicted_effective_clock_mhz", "predicted_time_ms", "predicted_power_w",
    "predicted_energy_j", "predicted_time_lo_ms", "predicted_time_hi_ms",
    "predicted_power_lo_w", "predicted_power_hi_w", "predicted_energy_lo_j",
    "predicted_energy_hi_j"};
static const int pred_dec[10] = {1, 4, 2, 5, 4, 4, 2, 2, 5, 5};

static int make_cols(wl_calib_validation *v)
{
    size_t nin = wl_calib_ncols(v->set), np = v->level > 0 ? 10 : 4;
    v->cols = calloc(nin + np, sizeof *v->cols);
    if (!v->cols)
        return WL_ENOMEM;
    for (size_t i = 0; i < nin; i++)
        v->cols[i] = (wl_results_col)WL_RESULTS_COL(wl_calib_col(v->set, i), WL_COL_AUTO, 0, 0);
    for (size_t i = 0; i < np; i++)
        v->cols[nin + i] = (wl_results_col)WL_RESULTS_COL(pred_names[i], WL_COL_NUM, pred_dec[i], 0);
    v->nin = nin;
    v->ncols = nin + np;
    return WL_OK;
}

static int create(wl_calib_validation *v, const char *path, const wl_calib_validation_options *o,
                  wl_error *err)
{
    int rc = wl_calib_load(path, &v->set, err);
    if (rc)
        return rc;
    v->level = o->level;
    char *data_dir = o->beside ? data_dir_of(path) : NULL;
    char *tdir = data_dir ? wl_core_strprintf("%s/traces", data_dir) : NULL;
    if (o->beside && (!data_dir || !tdir))
        rc = WL_ENOMEM;
    if (!rc && tdir && !o->traces_dir && is_dir(tdir)) {
        rc = wl_calib_set_fallback_traces(v->set, tdir);
        if (!rc)
            wl_core_say(o->note, o->note_user, "rows no native builder covers use traces from %s", tdir);
    }
    if (!rc)
        rc = setup_gpus(v, o, path, err);
    if (!rc)
        rc = idle_tables(v, o, data_dir, err);
    for (size_t k = 0; !rc && k < v->ng; k++) {
        rc = wl_calib_problem_create(&v->gpus[k], v->set, o->traces_dir, &v->P[k], err);
        if (!rc && v->level > 0)
            rc = wl_calib_uncertainty_load(v->ids[k], &v->unc[k], err);
        if (!rc && v->level > 0) {
            /* rows from the board the preset was fitted on carry no
             * board-to-board spread; any other board's do */
            int same = o->board == WL_CALIB_BOARD_SAME ||
                       (o->board == WL_CALIB_BOARD_AUTO && wl_calib_fitted_on(&v->unc[k], path));
            if (same)
                memset(&v->unc[k].board, 0, sizeof v->unc[k].board);
            wl_core_say(o->note, o->note_user,
                        same ? "%s: intervals for the board its preset was fitted on (%s)"
                             : "%s: intervals include the spread between boards and hosts (%s)",
                        v->gpus[k].id,
                        o->board == WL_CALIB_BOARD_AUTO ? (same ? "the preset was fitted on these rows"
                                                                : "the preset was not fitted on these rows")
                                                        : "--board");
        }
    }
    if (!rc)
        rc = make_cols(v);
    free(data_dir);
    free(tdir);
    return rc;
}

int wl_calib_validation_create(const char *path, const wl_calib_validation_options *o,
                               wl_calib_validation **out, wl_error *err)
{
    *out = NULL;
    wl_calib_validation *v = calloc(1, sizeof *v);
    if (!v)
        return WL_ENOMEM;
    int rc = create(v, path, o, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, path, 0, "", "out of memory");
    if (rc) {
        wl_calib_validation_free(v);
        return rc;
    }
    *out = v;
    return WL_OK;
}

void wl_calib_validation_free(wl_calib_validation *v)
{
    if (!v)
        return;
    for (size_t k = 0; k < v->ng; k++) {
        wl_calib_problem_free(v->P[k]);
        free(v->id_store[k]);
    }
    free(v->cols);
    wl_calib_free(v->set);
    free(v);
}

const wl_calib_set *wl_calib_validation_set(const wl_calib_validation *v) { return v->set; }
size_t wl_calib_validation_gpus(const wl_calib_validation *v) { return v->ng; }
const wl_core_gpu *wl_calib_validation_gpu(const wl_calib_validation *v, size_t k)
{
    return k < v->ng ? &v->gpus[k] : NULL;
}
wl_calib_problem *wl_calib_validation_problem(wl_calib_validation *v, size_t k)
{
    return k < v->ng ? v->P[k] : NULL;
}

const wl_results_col *wl_calib_validation_cols(const wl_calib_validation *v, size_t *n)
{
    *n = v->ncols;
    return v->cols;
}

int wl_calib_validation_row(wl_calib_validation *v, size_t i, wl_results_cell *cells,
                            const char **why)
{
    *why = NULL;
    const char *fields[WL_RESULTS_CSV_MAXCOLS];
    size_t nin = wl_calib_fields(v->set, i, fields);
    for (size_t c = 0; c < v->ncols; c++)
        cells[c] = (wl_results_cell){c < nin ? fields[c] : NULL, NAN};
    const wl_calib_row *r = wl_calib_row_at(v->set, i);
    size_t k = 0;
    while (k + 1 < v->ng && !wl_preset_gpu_names(r->gpu, v->gpus[k].id))
        k++;
    wl_calib_problem *p = v->P[k];
    wl_core_result res;
    if (!wl_calib_row_ok(p, i, why)) {
        v->nbad++;
        return WL_ENOTFOUND;
    }
    if (wl_calib_predict(p, i, &res)) {
        *why = "the prediction failed";
        v->nbad++;
        return WL_ENOTFOUND;
    }
    v->ntraced += (size_t)wl_calib_row_traced(p, i);
    int scored = wl_calib_row_scored(p, i, why);
    const double pv[4] = {res.effective_clock_mhz, res.time_ms, res.power_w, res.energy_j};
    for (int j = 0; j < 4; j++)
        cells[v->nin + (size_t)j].v = pv[j];
    wl_calib_iv iv;
    if (v->level > 0 && wl_calib_row_interval(p, i, &v->unc[k], v->level, &res, &iv) == WL_OK) {
        const double w[6] = {iv.time_lo_ms, iv.time_hi_ms, iv.power_lo_w, iv.power_hi_w,
                             iv.energy_lo_j, iv.energy_hi_j};
        for (int j = 0; j < 6; j++)
            cells[v->nin + 4 + (size_t)j].v = w[j];
        if (scored) {
            v->ncover++;
            v->cover[0] += r->time_ms >= iv.time_lo_ms && r->time_ms <= iv.time_hi_ms;
            if (wl_calib_row_has_power(r)) {
                v->ncover_power++;
                v->cover[1] += r->power_w >= iv.power_lo_w && r->power_w <= iv.power_hi_w;
                v->cover[2] += r->energy_j >= iv.energy_lo_j && r->energy_j <= iv.energy_hi_j;
            }
        }
    }
    return WL_OK;
}

int wl_calib_validation_predict(wl_calib_validation *v, size_t i, const wl_core_gpu **gpu,
                                wl_core_result *res, int *scored)
{
    const wl_calib_row *r = wl_calib_row_at(v->set, i);
    size_t k = 0;
    while (k + 1 < v->ng && !wl_preset_gpu_names(r->gpu, v->gpus[k].id))
        k++;
    wl_calib_problem *p = v->P[k];
    const char *why;
    *gpu = &v->gpus[k];
    *scored = 0;
    if (!wl_calib_row_ok(p, i, &why) || wl_calib_predict(p, i, res))
        return WL_ENOTFOUND;
    *scored = wl_calib_row_scored(p, i, &why);
    return WL_OK;
}

void wl_calib_validation_counts(const wl_calib_validation *v, wl_calib_validation_summary *s)
{
    memset(s, 0, sizeof *s);
    s->not_modelled = v->nbad;
    s->traced = v->ntraced;
    s->covered = v->ncover;
    for (int j = 0; j < 3; j++) {
        size_t d = j ? v->ncover_power : v->ncover;
        s->coverage_pct[j] = d ? 100.0 * (double)v->cover[j] / (double)d : 0;
    }
    double pool[3] = {0, 0, 0};
    for (size_t k = 0; k < v->ng; k++) {
        wl_calib_metrics m;
        if (wl_calib_score(v->P[k], NULL, &m) != WL_OK || !m.n)
            continue;
        pool[0] += m.mape_time * (double)m.n;
        pool[1] += m.mape_power * (double)m.n_power;
        pool[2] += m.mape_energy * (double)m.n_power;
        s->scored += m.n;
        s->scored_power += m.n_power;
    }
    if (s->scored)
        s->mape_time = pool[0] / (double)s->scored;
    if (s->scored_power) {
        s->mape_power = pool[1] / (double)s->scored_power;
        s->mape_energy = pool[2] / (double)s->scored_power;
    }
}
