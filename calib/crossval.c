/* Cross-validation (leave-one-model-out, K-fold, holdout) and per-workload
 * residuals. */
#include "wattlas_calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int wl_calib_crossval(const wl_calib_problem *cp, const int *fold, int nfolds,
                      const wl_calib_fit_options *opts, wl_calib_metrics *pooled,
                      wl_calib_metrics *per_fold)
{
    wl_calib_problem *p = (wl_calib_problem *)cp; /* GPU swapped, then restored */
    const wl_calib_set *set = wl_calib_problem_set(p);
    size_t n = wl_calib_count(set);
    memset(pooled, 0, sizeof *pooled);
    unsigned char *train = malloc(n ? n : 1), *test = malloc(n ? n : 1);
    if (!train || !test) {
        free(train);
        free(test);
        return WL_ENOMEM;
    }
    const wl_core_gpu base = *wl_calib_problem_gpu(p);
    /* the refits only score held-out rows (scoring) */
    wl_calib_fit_options fo;
    if (opts)
        fo = *opts;
    else
        wl_calib_fit_options_default(&fo);
    fo.scoring = 1;
    double st = 0, sp = 0, se = 0, sr = 0;
    int rc = WL_OK;
    for (int f = 0; f < nfolds && rc == WL_OK; f++) {
        if (wl_stop_requested()) {
            rc = WL_ESTOPPED;
            break;
        }
        size_t ntest = 0;
        for (size_t i = 0; i < n; i++) {
            test[i] = (unsigned char)(fold[i] == f);
            train[i] = (unsigned char)(fold[i] != f && fold[i] >= -1);
            ntest += test[i];
        }
        wl_calib_metrics m;
        memset(&m, 0, sizeof m);
        wl_core_gpu fitted;
        wl_calib_fit_info info;
        int frc = ntest ? wl_calib_fit(p, train, &fo, &fitted, &info) : WL_OK;
        if (ntest && frc == WL_OK) {
            wl_calib_problem_set_gpu(p, &fitted);
            wl_calib_score(p, test, &m);
            wl_calib_problem_set_gpu(p, &base);
        }
        if (ntest && !m.n) {
            /* a fold whose refit failed is said, not dropped (issue 77: a
             * 2-fold run scored 10 of 31 rows, or said "too few workloads") */
            m.n_failed_folds = 1;
            m.first_failed_fold = f;
            m.n_failed_rows = ntest;
            snprintf(m.failed_why, sizeof m.failed_why, "%s",
                     frc && info.message[0] ? info.message : "no held-out row could be scored");
            if (!pooled->n_failed_folds++) {
                pooled->first_failed_fold = f;
                memcpy(pooled->failed_why, m.failed_why, sizeof m.failed_why);
            }
            pooled->n_failed_rows += ntest;
        }
        if (per_fold)
            per_fold[f] = m;
        if (opts && opts->fold_done)
            opts->fold_done(opts->fold_user);
        if (!m.n)
            continue;
        st += m.mape_time * (double)m.n;
        sp += m.mape_power * (double)m.n_power;
        se += m.mape_energy * (double)m.n_power;
        pooled->n += m.n;
        pooled->n_power += m.n_power;
        if (m.n_regret) {
            sr += m.mean_regret * (double)m.n_regret;
            if (!pooled->n_regret || m.worst_regret > pooled->worst_regret) {
                pooled->worst_regret = m.worst_regret;
                memcpy(pooled->worst_regret_workload, m.worst_regret_workload,
                       sizeof m.worst_regret_workload);
            }
            pooled->n_regret += m.n_regret;
        }
    }
    if (pooled->n)
        pooled->mape_time = st / (double)pooled->n;
    if (pooled->n_power) {
        pooled->mape_power = sp / (double)pooled->n_power;
        pooled->mape_energy = se / (double)pooled->n_power;
    }
    if (pooled->n_regret)
        pooled->mean_regret = sr / (double)pooled->n_regret;
    free(train);
    free(test);
    return rc == WL_ESTOPPED || pooled->n ? rc : WL_EINVAL;
}

int wl_calib_folds_by_model(const wl_calib_problem *p, int *fold, char names[][64], int max)
{
    const wl_calib_set *set = wl_calib_problem_set(p);
    size_t n = wl_calib_count(set);
    int nf = 0;
    char seen[256][64];
    for (size_t i = 0; i < n; i++) {
        fold[i] = -1;
        if (!wl_calib_row_scored(p, i, NULL))
            continue;
        const char *m = wl_calib_row_at(set, i)->model;
        int f;
        for (f = 0; f < nf; f++)
            if (strcmp(seen[f], m) == 0)
                break;
        if (f == nf) {
            if (nf >= max || nf >= 256)
                continue;
            snprintf(seen[nf], sizeof seen[nf], "%s", m);
            if (names)
                snprintf(names[nf], 64, "%s", m);
            nf++;
        }
        fold[i] = f;
    }
    return nf;
}

int wl_calib_folds_kfold(const wl_calib_problem *p, int k, int *fold)
{
    const wl_calib_set *set = wl_calib_problem_set(p);
    size_t n = wl_calib_count(set);
    char (*keys)[160] = calloc(n ? n : 1, sizeof *keys);
    if (!keys || k < 2)
        return free(keys), 0;
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) {
        fold[i] = -1;
        if (!wl_calib_row_scored(p, i, NULL))
            continue;
        char key[160];
        wl_calib_workload_key(wl_calib_row_at(set, i), key, sizeof key);
        size_t w;
        for (w = 0; w < nw; w++)
            if (strcmp(keys[w], key) == 0)
                break;
        if (w == nw)
            memcpy(keys[nw++], key, sizeof key);
        fold[i] = (int)(w % (size_t)k);
    }
    free(keys);
    return nw < (size_t)k ? (int)nw : k;
}

void wl_calib_per_workload(const wl_calib_problem *p, const unsigned char *mask,
                           wl_calib_wl_fn fn, void *user)
{
    const wl_calib_set *set = wl_calib_problem_set(p);
    size_t n = wl_calib_count(set);
    unsigned char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    for (size_t i = 0; i < n; i++) {
        if (done[i] || (mask && !mask[i]) || !wl_calib_row_scored(p, i, NULL))
            continue;
        wl_calib_wl_stats s;
        memset(&s, 0, sizeof s);
        wl_calib_workload_key(wl_calib_row_at(set, i), s.key, sizeof s.key);
        for (size_t j = i; j < n; j++) {
            if ((mask && !mask[j]) || !wl_calib_row_scored(p, j, NULL))
                continue;
            char key[160];
            const wl_calib_row *r = wl_calib_row_at(set, j);
            wl_calib_workload_key(r, key, sizeof key);
            if (strcmp(key, s.key) != 0)
                continue;
            done[j] = 1;
            wl_core_result res;
            if (wl_calib_predict(p, j, &res))
                continue;
            double et = res.time_ms / r->time_ms - 1;
            s.mape_time += fabs(et);
            s.bias_time += et;
            s.n++;
            if (!wl_calib_row_has_power(r))
                continue;
            double ep = res.power_w / r->power_w - 1, ee = res.energy_j / r->energy_j - 1;
            s.mape_power += fabs(ep);
            s.mape_energy += fabs(ee);
            s.bias_power += ep;
            s.bias_energy += ee;
            s.n_power++;
        }
        if (!s.n)
            continue;
        double k = 100.0 / (double)s.n, kp = s.n_power ? 100.0 / (double)s.n_power : 0;
        s.mape_time *= k;
        s.bias_time *= k;
        s.mape_power *= kp;
        s.mape_energy *= kp;
        s.bias_power *= kp;
        s.bias_energy *= kp;
        fn(user, &s);
    }
    free(done);
}
