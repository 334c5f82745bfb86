/* 'wattlas learn' and wattlas.learn as one call: the cross-validations,
 * the model trained on every row and saved, its feature importances. */
#include "wattlas_learn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wl_learn_run_options_default(wl_learn_run_options *o)
{
    memset(o, 0, sizeof *o);
    wl_learn_options_default(&o->learn);
    o->data.beside = 1;
    o->kfold = 4;
}

typedef struct {
    const wl_learn_run_options *o;
    unsigned long long done, total; /* models trained, for progress */
} run_ctx;

/* the report's lines go to the caller's callback */
#define say(c, ...) wl_core_say((c)->o->say, (c)->o->user, __VA_ARGS__)

static void trained(void *user)
{
    run_ctx *c = user;
    c->done++;
    if (c->o->progress)
        c->o->progress(c->o->user, c->done, c->total);
}

static void say_cv(const run_ctx *c, const char *what, const wl_learn_cv *cv, int hybrid)
{
    say(c, "%s (%d folds, %zu held-out rows): %s MAPE time %.2f%%  power %.2f%%  energy %.2f%%; "
           "analytical alone %.2f%%  %.2f%%  %.2f%%",
        what, cv->folds, cv->rows, hybrid ? "hybrid" : "learned", cv->learned[0],
        cv->learned[1], cv->learned[2], cv->analytical[0], cv->analytical[1], cv->analytical[2]);
}

static int write_importance(const char *path, const wl_learn_model *m, wl_error *err)
{
    static const wl_results_col cols[4] = {
        WL_RESULTS_COL("feature", WL_COL_TEXT, 0, 22),
        WL_RESULTS_COL("time_importance", WL_COL_NUM, 4, 0),
        WL_RESULTS_COL("power_importance", WL_COL_NUM, 4, 0),
        WL_RESULTS_COL("energy_importance", WL_COL_NUM, 4, 0)};
    double imp[3 * WL_LEARN_FEATURES];
    wl_learn_importance(m, imp);
    wl_results_out *out = NULL;
    wl_results_writer *w = NULL;
    int rc = wl_results_out_open(path, &out, err);
    if (!rc && wl_results_writer_create(wl_results_out_stream(out), WL_FMT_CSV, cols, 4, &w)) {
        wl_error_set(err, path, 0, "", "out of memory");
        rc = WL_ENOMEM;
    }
    int nf = wl_learn_model_hybrid(m) ? WL_LEARN_FEATURES : WL_LEARN_PLAIN_FEATURES;
    for (int f = 0; !rc && f < nf; f++) {
        wl_results_cell cells[4] = {{wl_learn_feature_name(f), 0},
                                    {NULL, imp[f]},
                                    {NULL, imp[WL_LEARN_FEATURES + f]},
                                    {NULL, imp[2 * WL_LEARN_FEATURES + f]}};
        if (wl_results_writer_row(w, cells)) {
            wl_error_set(err, path, 0, "", "out of memory");
            rc = WL_ENOMEM;
        }
    }
    if (!rc) {
        wl_results_writer_finish(w);
        return wl_results_out_commit(out, err);
    }
    wl_results_writer_free(w);
    wl_results_out_abort(out);
    return rc;
}

int wl_learn_run(const wl_learn_run_options *o, wl_learn_run_result *r, wl_error *err)
{
    memset(r, 0, sizeof *r);
    run_ctx c = {.o = o};
    wl_learn_data d;
    wl_learn_model *m = NULL;
    if (!o->path || !o->out) {
        wl_error_set(err, !o->path ? "path" : "-o", 0, "", "expected MEASUREMENTS.csv and -o "
                                                           "MODEL.json");
        return WL_EINVAL;
    }
    if (o->kfold < 2 || o->kfold > 100) {
        wl_error_set(err, "--kfold", 0, "", "expected 2 to 100 folds, got %d", o->kfold);
        return WL_EINVAL;
    }
    int rc = wl_learn_data_load(o->path, &o->data, &d, err);
    if (rc)
        return rc;
    r->rows = d.n;
    const struct {
        int on;
        wl_learn_split by;
        wl_learn_cv *cv;
        const char *what;
    } splits[] = {{1, WL_LEARN_BY_WORKLOAD, &r->workload, NULL},
                  {o->lomo, WL_LEARN_BY_MODEL, &r->model, "wattlas learn: leave one model out"},
                  {o->random_split, WL_LEARN_BY_ROW, &r->random,
                   "wattlas learn: rows at random (interpolation: each workload's other clocks "
                   "are in training)"}};
    const size_t ns = sizeof splits / sizeof *splits;
    c.total = 1; /* the final model */
    for (size_t i = 0; i < ns; i++) {
        int nf = splits[i].on ? wl_learn_folds(&d, &o->learn, splits[i].by, o->kfold) : 0;
        c.total += nf > 0 ? (unsigned long long)nf : 0;
    }
    if (o->progress) /* the start: a log says what it is waiting for */
        o->progress(o->user, 0, c.total);
    wl_learn_options lo = o->learn;
    lo.fold_done = trained;
    lo.fold_user = &c;
    char what[160];
    snprintf(what, sizeof what, "wattlas learn: %s %s, %zu rows, %d-fold by workload",
             wl_learn_kind_name(lo.kind), lo.hybrid ? "hybrid" : "plain", d.n, o->kfold);
    for (size_t i = 0; !rc && i < ns; i++) {
        if (!splits[i].on)
            continue;
        rc = wl_learn_crossval(&d, &lo, splits[i].by, o->kfold, !o->no_refit, splits[i].cv, err);
        if (!rc)
            say_cv(&c, splits[i].what ? splits[i].what : what, splits[i].cv, lo.hybrid);
    }
    lo.refit = !o->no_refit;
    if (!rc && !(rc = wl_learn_train(&d, NULL, &lo, &m, err))) {
        trained(&c);
        wl_learn_set_fingerprint(m, d.fingerprint, d.n);
        rc = wl_learn_model_save(m, o->out, err);
    }
    if (!rc) {
        wl_learn_model_describe(m, r->description, sizeof r->description);
        say(&c, "wattlas learn: %s: %s", o->out, r->description);
    }
    if (!rc && o->importance)
        rc = write_importance(o->importance, m, err);
    wl_learn_model_free(m);
    wl_learn_data_free(&d);
    return rc;
}
