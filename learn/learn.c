/* Learned predictors: features, training through XGBoost, our own tree
 * evaluator, the domain fade and cross-validation (data.c reads the
 * training rows, model_file.c saves and loads a model). */
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

const char *const wl_learn_feature_names[WL_LEARN_FEATURES] = {
    "sms", "peak_tflops", "dram_bw_gbs", "power_limit_w", "l2_size_mb",
    "layers", "d_model", "heads", "d_ff",
    "batch", "seq", "dtype_bytes", "mode", "flash_attention",
    "sm_clock_mhz", "voltage_mv",
    "log10_predicted_time_ms", "compute_energy_share", "memory_energy_share",
    "launch_bound_share", "throttled", "effective_clock_ratio"};
const char *const wl_learn_target_names[3] = {"time_ms", "power_w", "energy_j"};

const char *wl_learn_feature_name(int f)
{
    return f >= 0 && f < WL_LEARN_FEATURES ? wl_learn_feature_names[f] : "";
}

const char *wl_learn_kind_name(wl_learn_kind k) { return k == WL_LEARN_GBT ? "gbt" : "rf"; }

int wl_learn_kind_parse(const char *s, wl_learn_kind *out)
{
    if (!strcmp(s, "rf"))
        *out = WL_LEARN_RF;
    else if (!strcmp(s, "gbt"))
        *out = WL_LEARN_GBT;
    else
        return WL_EINVAL;
    return WL_OK;
}

/* ---- features ------------------------------------------------------------------- */

void wl_learn_features(const wl_core_gpu *g, const wl_core_model *m, const wl_learn_case *c,
                       const wl_core_result *pred, double *x)
{
    double per_clk = fmax(g->tc_flop_per_clk_sm[c->dtype], g->cuda_flop_per_clk_sm[c->dtype]);
    x[WL_LF_SMS] = g->sms;
    x[WL_LF_PEAK_TFLOPS] = per_clk * g->sms * g->sm_clock_max_mhz * 1e-6;
    x[WL_LF_DRAM_GBS] = g->dram_bw_gbs;
    /* the board's own limit, not a limit asked of it: a cap is an
     * operating point, which the analytical model carries */
    x[WL_LF_TDP_W] = g->tdp_w > 0 ? g->tdp_w : g->power_limit_w;
    x[WL_LF_L2_MB] = g->l2_size_mb;
    x[WL_LF_LAYERS] = m ? m->layers : 0;
    x[WL_LF_D_MODEL] = m ? m->d_model : 0;
    x[WL_LF_HEADS] = m ? m->heads : 0;
    x[WL_LF_D_FF] = m ? m->d_ff : 0;
    x[WL_LF_BATCH] = (double)c->batch;
    x[WL_LF_SEQ] = (double)c->seq;
    x[WL_LF_DTYPE_BYTES] = wl_dtype_bytes(c->dtype);
    x[WL_LF_MODE] = c->mode;
    x[WL_LF_FLASH] = c->attention == WL_ATTN_FLASH;
    x[WL_LF_CLOCK_MHZ] = c->sm_clock_mhz;
    x[WL_LF_VOLTAGE_MV] = pred->voltage_mv;
    double e = pred->energy_j > 0 ? pred->energy_j : 1;
    x[WL_LF_LOG_TIME] = pred->time_ms > 0 ? log10(pred->time_ms) : 0;
    x[WL_LF_COMPUTE_SHARE] = pred->energy_dyn_compute_j / e;
    x[WL_LF_MEMORY_SHARE] = pred->energy_dyn_memory_j / e;
    x[WL_LF_LAUNCH_SHARE] = pred->launch_bound_frac;
    x[WL_LF_THROTTLED] = pred->throttled != 0;
    x[WL_LF_CLOCK_RATIO] = c->sm_clock_mhz > 0 ? pred->effective_clock_mhz / c->sm_clock_mhz : 1;
}

/* ---- the model ------------------------------------------------------------------- */



void wl_learn_forest_free(forest *f)
{
    free(f->start);
    free(f->feat);
    free(f->left);
    free(f->right);
    free(f->dleft);
    free(f->thr);
    free(f->value);
    free(f->gain);
    memset(f, 0, sizeof *f);
}

int wl_learn_forest_alloc(forest *f, size_t ntrees, size_t nnodes)
{
    f->ntrees = ntrees;
    f->nnodes = nnodes;
    f->start = calloc(ntrees + 1, sizeof *f->start);
    f->feat = calloc(nnodes + 1, sizeof *f->feat);
    f->left = calloc(nnodes + 1, sizeof *f->left);
    f->right = calloc(nnodes + 1, sizeof *f->right);
    f->dleft = calloc(nnodes + 1, 1);
    f->thr = calloc(nnodes + 1, sizeof *f->thr);
    f->value = calloc(nnodes + 1, sizeof *f->value);
    f->gain = calloc(nnodes + 1, sizeof *f->gain);
    return f->start && f->feat && f->left && f->right && f->dleft && f->thr && f->value && f->gain
               ? WL_OK
               : WL_ENOMEM;
}

void wl_learn_model_free(wl_learn_model *m)
{
    if (!m)
        return;
    for (int t = 0; t < 3; t++)
        wl_learn_forest_free(&m->f[t]);
    free(m);
}

int wl_learn_model_hybrid(const wl_learn_model *m) { return m->hybrid; }
wl_learn_kind wl_learn_model_kind(const wl_learn_model *m) { return m->kind; }

const char *wl_learn_outside_note(const wl_learn_model *m)
{
    if (!m || !m->hybrid)
        return "the plain model extrapolates there (its trees hold their edge values)";
    if (m->corrects)
        return "the hybrid's correction fades to none there (the analytical prediction)";
    return "the analytical prediction stands there, as everywhere: this hybrid kept no "
           "correction";
}

void wl_learn_set_fingerprint(wl_learn_model *m, const char *fp, size_t rows)
{
    snprintf(m->fingerprint, sizeof m->fingerprint, "%s", fp);
    m->rows = rows;
}

void wl_learn_model_describe(const wl_learn_model *m, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%s %s trained on %zu rows (%s)", wl_learn_kind_name(m->kind),
                     m->hybrid ? "hybrid" : "plain model", m->rows,
                     m->fingerprint[0] ? m->fingerprint : "data not recorded");
    for (int t = 0; m->hybrid && t < 3 && k >= 0 && (size_t)k < n; t++) {
        static const char *const name[3] = {"time", "power", "energy"};
        const char *sep = t ? ", " : "; correction: ";
        size_t at = (size_t)k;
        if (m->shrink[t] > 0)
            k += snprintf(buf + at, n - at, "%s%s trees at %.2f", sep, name[t], m->shrink[t]);
        else if (m->bias[t] != 0)
            k += snprintf(buf + at, n - at, "%s%s x%.4f", sep, name[t], exp(m->bias[t]));
        else
            k += snprintf(buf + at, n - at, "%s%s none", sep, name[t]);
    }
}

/* The trees compare in single precision, as XGBoost does. */
static double forest_eval(const forest *f, const double *x)
{
    double s = f->base;
    for (size_t t = 0; t < f->ntrees; t++) {
        size_t i = f->start[t], root = i;
        while (f->left[i] >= 0) {
            double v = x[f->feat[i]];
            int go_left = isnan(v) ? f->dleft[i] : (float)v < f->thr[i];
            i = root + (size_t)(go_left ? f->left[i] : f->right[i]);
        }
        s += f->value[i];
    }
    return s;
}

/* How far inside the training domain x is over the features in use[]: 1
 * inside, 0 beyond 10% of a feature's range outside it (any difference for
 * a feature the data never varied), linear between. */
static double domain_over(const wl_learn_model *m, const double *x, const unsigned char *use)
{
    double d = 1;
    for (int f = 0; f < m->nfeat; f++) {
        if (!use[f])
            continue;
        double v = x[f], lo = m->lo[f], hi = m->hi[f];
        if (v >= lo && v <= hi)
            continue;
        if (!isfinite(v))
            return 0;
        double margin = 0.1 * (hi - lo), out = v < lo ? lo - v : v - hi;
        double w = margin > 0 ? 1 - out / margin : 0;
        d = fmin(d, w > 0 ? w : 0);
    }
    return d;
}

/* The features that bound each part of a model. A plain model and a
 * hybrid's trees: every feature, except that a correction chosen by how it
 * does on models left out of the training rows (across_models) is known to
 * carry over to another model, so the model's shape (which the trees never
 * read) does not bound it. A hybrid's constant factor reads nothing: the
 * conditions it was measured under bound it, the GPU and the operating
 * point (precision, mode, attention, clock, voltage), not the workload's
 * shape or the prediction's parts. The GPU bounds everything: no
 * correction was tried on a GPU it was not trained on. */
void wl_learn_model_ready(wl_learn_model *m)
{
    for (int f = 0; f < WL_LEARN_FEATURES; f++) {
        int shape = f >= WL_LF_LAYERS && f <= WL_LF_D_FF;
        m->use_trees[f] = f < m->nfeat && !(m->hybrid && m->across_models && shape);
        m->use_bias[f] = f <= WL_LF_L2_MB || f == WL_LF_DTYPE_BYTES || f == WL_LF_MODE ||
                         f == WL_LF_FLASH || f == WL_LF_CLOCK_MHZ || f == WL_LF_VOLTAGE_MV;
    }
    m->trees_used = !m->hybrid;
    m->corrects = 0;
    for (int t = 0; t < 3; t++) {
        m->trees_used |= m->shrink[t] > 0;
        m->corrects |= m->hybrid && (m->shrink[t] > 0 || m->bias[t] != 0);
    }
}

void wl_learn_eval(const wl_learn_model *m, const double *x, double out[3], double *domain)
{
    double d = domain_over(m, x, m->use_trees), db = m->hybrid ? domain_over(m, x, m->use_bias) : d;
    for (int t = 0; t < 3; t++) {
        double margin = forest_eval(&m->f[t], x);
        /* a hybrid's correction fades to exactly 1 outside the domain */
        out[t] = m->hybrid ? exp(db * m->bias[t] + d * m->shrink[t] * margin) : exp(margin);
    }
    /* the domain of the parts in use: the trees', else the factor's */
    if (domain)
        *domain = m->trees_used ? fmin(d, db) : db;
}

/* Scales a result's times by kt and its power by kp, so its energies by
 * kt kp: the parts, phases and kernel classes with their totals, so that
 * they still sum and energy is still power x time. */
static void scale_result(wl_core_result *r, double kt, double kp)
{
    double ke = kt * kp;
    r->time_ms *= kt;
    r->busy_ms *= kt;
    r->energy_j *= ke;
    r->energy_dyn_compute_j *= ke;
    r->energy_dyn_memory_j *= ke;
    r->energy_static_j *= ke;
    for (int k = 0; k < WL_PHASE_COUNT; k++) {
        r->phase[k].time_ms *= kt;
        r->phase[k].busy_ms *= kt;
        r->phase[k].energy_j *= ke;
    }
    for (int k = 0; k < WL_CLASS_COUNT; k++) {
        r->cls[k].busy_ms *= kt;
        r->cls[k].tc_busy_ms *= kt;
        r->cls[k].energy_j *= ke;
    }
    r->power_w *= kp;
}

/* The model predicts time, power and energy apart (a hybrid: their
 * factors on the analytical prediction), and three predictions need not
 * agree: a row whose energy is not its power times its time breaks every
 * column derived from it (issue 59: a hybrid that corrected power alone
 * printed 166 W x 6.6 ms beside 1.19 J). Time and power are the two
 * quantities the model has apart (the kernels' times and the board's
 * draw); energy is their product, so the row takes the model's time and
 * power, and its energy, with every part, phase and class, scales by the
 * product of their factors. A target the hybrid leaves uncorrected stays
 * so (power a time error does not touch keeps its analytical value). */
void wl_learn_apply(const wl_learn_model *m, const double *x, wl_core_result *r, double *domain)
{
    double c[3];
    wl_learn_eval(m, x, c, domain);
    if (!m->hybrid) {
        /* factors against the analytical result, which carries the parts */
        c[0] = r->time_ms > 0 ? c[0] / r->time_ms : NAN;
        c[1] = r->power_w > 0 ? c[1] / r->power_w : NAN;
    }
    if (!(c[0] > 0 && c[1] > 0 && isfinite(c[0]) && isfinite(c[1])))
        return; /* no positive prediction to take: the analytical result stands */
    scale_result(r, c[0], c[1]);
}

double wl_learn_use_apply(const wl_learn_use *u, const wl_core_gpu *g, double mhz,
                          wl_core_result *r)
{
    double x[WL_LEARN_FEATURES], dom;
    wl_learn_case c = u->c;
    c.sm_clock_mhz = mhz;
    wl_learn_features(g, u->shape, &c, r, x);
    wl_learn_apply(u->model, x, r, &dom);
    return dom;
}

void wl_learn_importance(const wl_learn_model *m, double *imp)
{
    for (int t = 0; t < 3; t++) {
        double *row = imp + t * WL_LEARN_FEATURES, sum = 0;
        for (int f = 0; f < WL_LEARN_FEATURES; f++)
            row[f] = 0;
        const forest *fo = &m->f[t];
        for (size_t i = 0; i < fo->nnodes; i++)
            if (fo->left[i] >= 0 && fo->feat[i] >= 0 && fo->feat[i] < WL_LEARN_FEATURES) {
                row[fo->feat[i]] += fo->gain[i];
                sum += fo->gain[i];
            }
        for (int f = 0; sum > 0 && f < WL_LEARN_FEATURES; f++)
            row[f] /= sum;
    }
}

/* ---- training ----------------------------------------------------------------------- */

void wl_learn_options_default(wl_learn_options *o)
{
    memset(o, 0, sizeof *o);
    o->kind = WL_LEARN_RF;
    o->seed = 1;
}

static int xgb_fail(wl_error *err, const char *what)
{
    wl_error_set(err, "xgboost", 0, "", "%s: %s", what, XGBGetLastError());
    return WL_EINVAL;
}

/* The trees of XGBoost's JSON model (learner.gradient_booster.model.trees:
 * left_children, right_children, split_indices, split_conditions (the leaf
 * value at a leaf), default_left, loss_changes) into a forest. */
static int forest_from_xgb(const char *json, size_t len, double base, forest *f, wl_error *err)
{
    char msg[200];
    int line = 0;
    wj_value *doc = wj_parse(json, len, &line, msg, sizeof msg);
    if (!doc) {
        wl_error_set(err, "xgboost", line, "", "unreadable model: %s", msg);
        return WL_EPARSE;
    }
    const wj_value *trees = wj_get(wj_get(wj_get(wj_get(doc, "learner"), "gradient_booster"),
                                          "model"), "trees");
    int rc = trees && trees->type == WJ_ARRAY ? WL_OK : WL_EPARSE;
    size_t nn = 0;
    for (size_t t = 0; !rc && t < trees->n; t++) {
        const wj_value *lc = wj_get(&trees->items[t], "left_children");
        if (!lc || lc->type != WJ_ARRAY)
            rc = WL_EPARSE;
        else
            nn += lc->n;
    }
    if (!rc)
        rc = wl_learn_forest_alloc(f, trees->n, nn);
    size_t at = 0;
    for (size_t t = 0; !rc && t < trees->n; t++) {
        const wj_value *tr = &trees->items[t];
        const wj_value *a[6] = {wj_get(tr, "left_children"), wj_get(tr, "right_children"),
                                wj_get(tr, "split_indices"), wj_get(tr, "split_conditions"),
                                wj_get(tr, "default_left"), wj_get(tr, "loss_changes")};
        size_t m = a[0]->n;
        for (int k = 0; k < 6; k++)
            if (!a[k] || a[k]->type != WJ_ARRAY || a[k]->n != m)
                rc = WL_EPARSE;
        f->start[t] = at;
        for (size_t i = 0; !rc && i < m; i++) {
            f->left[at + i] = (int)a[0]->items[i].num;
            f->right[at + i] = (int)a[1]->items[i].num;
            f->feat[at + i] = (int)a[2]->items[i].num;
            f->thr[at + i] = (float)a[3]->items[i].num;
            f->value[at + i] = (float)a[3]->items[i].num;
            f->dleft[at + i] = a[4]->items[i].num != 0;
            f->gain[at + i] = (float)a[5]->items[i].num;
            if (f->left[at + i] >= (int)m || f->right[at + i] >= (int)m ||
                (f->left[at + i] >= 0 && (f->feat[at + i] < 0 || f->feat[at + i] >= WL_LEARN_FEATURES)))
                rc = WL_EPARSE;
        }
        at += m;
    }
    f->start[f->ntrees] = at;
    f->base = base;
    wj_free(doc);
    if (rc == WL_EPARSE)
        wl_error_set(err, "xgboost", 0, "trees", "the model's trees are not as expected");
    return rc;
}

static int train_target(const float *X, const float *y, size_t n, int nfeat,
                        const wl_learn_options *o, int hybrid, forest *f, wl_error *err)
{
    DMatrixHandle dm = NULL;
    BoosterHandle b = NULL;
    int rc = WL_OK;
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += y[i];
    mean /= (double)n;
    if (XGDMatrixCreateFromMat(X, (bst_ulong)n, (bst_ulong)nfeat, NAN, &dm) ||
        XGDMatrixSetFloatInfo(dm, "label", y, (bst_ulong)n))
        rc = xgb_fail(err, "data");
    if (!rc && XGBoosterCreate(&dm, 1, &b))
        rc = xgb_fail(err, "booster");
    int rf = o->kind == WL_LEARN_RF;
    int trees = o->trees > 0 ? o->trees : rf ? 200 : 300;
    int depth = o->max_depth > 0 ? o->max_depth : rf ? (hybrid ? 4 : 8) : hybrid ? 2 : 4;
    char v[7][32];
    snprintf(v[0], sizeof v[0], "%d", depth);
    snprintf(v[1], sizeof v[1], "%u", o->seed);
    snprintf(v[2], sizeof v[2], "%d", o->threads > 0 ? o->threads : 1);
    snprintf(v[3], sizeof v[3], "%.17g", mean);
    snprintf(v[4], sizeof v[4], "%d", rf ? trees : 1);
    const char *params[][2] = {
        {"verbosity", "0"}, {"objective", "reg:squarederror"}, {"tree_method", "exact"},
        {"max_depth", v[0]}, {"seed", v[1]}, {"nthread", v[2]}, {"base_score", v[3]},
        {"num_parallel_tree", v[4]},
        /* a forest: bagged deep trees at full step; boosting: small steps
         * on shallow trees, a hybrid's the more cautious (it corrects a
         * model that is already close) */
        {"eta", rf ? "1" : hybrid ? "0.05" : "0.1"},
        {"subsample", "0.8"},
        {rf ? "colsample_bynode" : "colsample_bytree", "0.8"},
        {"min_child_weight", hybrid ? "10" : "2"},
        {"lambda", rf ? "0" : "1"}};
    for (size_t i = 0; !rc && i < sizeof params / sizeof *params; i++)
        if (XGBoosterSetParam(b, params[i][0], params[i][1]))
            rc = xgb_fail(err, params[i][0]);
    int rounds = rf ? 1 : trees;
    for (int it = 0; !rc && it < rounds; it++)
        if (XGBoosterUpdateOneIter(b, it, dm))
            rc = xgb_fail(err, "training");
    bst_ulong len = 0;
    const char *buf = NULL;
    if (!rc && XGBoosterSaveModelToBuffer(b, "{\"format\": \"json\"}", &len, &buf))
        rc = xgb_fail(err, "model");
    if (!rc)
        rc = forest_from_xgb(buf, (size_t)len, mean, f, err);
    /* our evaluator must agree with XGBoost's on the training rows */
    bst_ulong plen = 0;
    const float *pred = NULL;
    if (!rc && XGBoosterPredict(b, dm, 0, 0, 0, &plen, &pred))
        rc = xgb_fail(err, "prediction");
    double xd[WL_LEARN_FEATURES];
    for (size_t i = 0; !rc && i < n && i < (size_t)plen; i++) {
        for (int k = 0; k < WL_LEARN_FEATURES; k++)
            xd[k] = k < nfeat ? X[i * (size_t)nfeat + (size_t)k] : 0;
        double mine = forest_eval(f, xd);
        if (fabs(mine - pred[i]) > 1e-4 * (1 + fabs(pred[i]))) {
            wl_error_set(err, "xgboost", 0, "trees",
                         "the trees read back predict %.6g where XGBoost predicts %.6g", mine,
                         (double)pred[i]);
            rc = WL_EINVAL;
        }
    }
    XGBoosterFree(b);
    XGDMatrixFree(dm);
    return rc;
}

/* ---- the hybrid's correction ----------------------------------------------------- */

static int fold_predictions(const wl_learn_data *d, const unsigned char *train, double *x,
                            double *pred);

/* Folds by key over the rows with mask[i] set (NULL: all), in order of
 * first appearance: one per key (k = 0) or k round robin; -1 outside the
 * mask. Returns the number of folds. */
static int key_folds(const wl_learn_data *d, char **keys, const unsigned char *mask, int k,
                     int *fold)
{
    int nf = 0;
    for (size_t i = 0; i < d->n; i++) {
        fold[i] = -1;
        if (mask && !mask[i])
            continue;
        size_t j = 0;
        while (j < i && ((mask && !mask[j]) || strcmp(keys[j], keys[i])))
            j++;
        fold[i] = j < i ? fold[j] : k > 0 ? nf++ % k : nf++;
    }
    return k > 0 && nf > k ? k : nf;
}

/* The inner folds of the training rows (mask; NULL: all): one per model
 * when they hold two or more (*by_model set), else three by workload.
 * Returns the number of folds. */
static int inner_folds(const wl_learn_data *d, const unsigned char *mask, int *fold,
                       int *by_model)
{
    int nf = key_folds(d, d->model, mask, 0, fold);
    if ((*by_model = nf >= 2))
        return nf;
    return key_folds(d, d->workload, mask, 3, fold);
}

/* The constant factor c that minimises the mean absolute percentage error
 * of target t over the rows with use[i]: sum |p c / m - 1| =
 * sum (p / m) |c - m / p|, so c is the median of m / p weighted by p / m.
 * The error metric's own optimum, not the mean of the log ratio, which a
 * few host stalls (time up, power down) pull off the typical row. */
static int by_ratio(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int best_factor(const wl_learn_data *d, const unsigned char *use, int t, double *c)
{
    double (*rw)[2] = malloc((d->n + 1) * sizeof *rw), total = 0;
    if (!rw)
        return WL_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        if (use[i]) {
            double meas = d->meas[3 * i + (size_t)t], pred = d->pred[3 * i + (size_t)t];
            rw[n][0] = meas / pred;
            rw[n][1] = pred / meas;
            total += rw[n++][1];
        }
    qsort(rw, n, sizeof *rw, by_ratio);
    double acc = 0;
    *c = 1;
    for (size_t i = 0; i < n; i++)
        if ((acc += rw[i][1]) >= total / 2) {
            *c = rw[i][0];
            break;
        }
    free(rw);
    return WL_OK;
}

/* How much correction the training rows support, per target: none, a
 * constant factor, or the trees' correction at 1/4 ... 1 of its strength,
 * each fitted on all but one inner fold and scored on that fold's rows. A
 * correction that does not carry over from model to model is left out, so
 * the hybrid falls back to the physics rather than overfitting its way
 * into error. d holds the rows' out-of-fold predictions; bias and shrink
 * are the choice: the correction is exp(bias + shrink * trees). */
enum { CAND_NONE = 0, CAND_BIAS, CAND_TREES, NCAND = CAND_TREES + 4 };

/* The candidate for target t, from e (per fold, target and candidate: the
 * summed absolute relative error) over rows[fold] rows. A candidate counts
 * when its gain over none is positive with 90% confidence for the five
 * candidates together (one-sided t test on the per-fold gains at
 * 1 - 0.1/5, Bonferroni: one of five passing by chance is what the test
 * must rule out) and cuts at least a tenth of the uncorrected error (a gain
 * of 0.3 points on 6% passed a test across five models and still cost the
 * sixth); the largest gain of those wins. Folds are models, and two are not
 * enough: two that happen to share an error cannot be told from an error
 * every model shares (a third then gets it wrong). */
static int choose_candidate(const double *e, const size_t *rows, int nf, int t)
{
    int used = 0, best = CAND_NONE;
    double base = 0, best_gain = 0;
    for (int fo = 0; fo < nf; fo++)
        if (rows[fo]) {
            used++;
            base += e[((size_t)fo * 3 + (size_t)t) * NCAND + CAND_NONE] / (double)rows[fo];
        }
    if (used < 3)
        return CAND_NONE;
    base /= used;
    double t_crit = gsl_cdf_tdist_Pinv(1 - 0.1 / (NCAND - 1), used - 1);
    for (int k = 1; k < NCAND; k++) {
        double s = 0, s2 = 0;
        for (int fo = 0; fo < nf; fo++) {
            if (!rows[fo])
                continue;
            const double *ef = e + ((size_t)fo * 3 + (size_t)t) * NCAND;
            double g = (ef[CAND_NONE] - ef[k]) / (double)rows[fo];
            s += g;
            s2 += g * g;
        }
        double mean = s / used, var = (s2 - used * mean * mean) / (used - 1);
        double se = sqrt((var > 0 ? var : 0) / used);
        if (mean > t_crit * se + 1e-12 && mean >= 0.1 * base && mean > best_gain) {
            best = k;
            best_gain = mean;
        }
    }
    return best;
}

static int choose_correction(const wl_learn_data *d, const unsigned char *mask, const int *fold,
                             int nf, const wl_learn_options *o, double bias[3], double shrink[3])
{
    unsigned char *inner = malloc(d->n + 1);
    /* per fold, target and candidate: the summed error and the rows */
    double *e = calloc((size_t)(nf + 1) * 3 * NCAND, sizeof *e);
    size_t *rows = calloc((size_t)nf + 1, sizeof *rows);
    int rc = inner && e && rows ? WL_OK : WL_ENOMEM;
    wl_learn_options io = *o;
    io.no_shrink = 1;
    io.refit = 0;
    for (int fo = 0; !rc && fo < nf; fo++) {
        if (wl_stop_requested()) {
            rc = WL_ESTOPPED;
            break;
        }
        for (size_t i = 0; i < d->n; i++)
            inner[i] = (!mask || mask[i]) && fold[i] >= 0 && fold[i] != fo;
        wl_learn_model *m = NULL;
        wl_error e2;
        if (wl_learn_train(d, inner, &io, &m, &e2))
            continue; /* too few rows left: this fold says nothing */
        double c[3] = {1, 1, 1};
        for (int t = 0; !rc && t < 3; t++)
            rc = best_factor(d, inner, t, &c[t]);
        for (size_t i = 0; !rc && i < d->n; i++) {
            if (fold[i] != fo)
                continue;
            const double *x = d->x + i * WL_LEARN_FEATURES;
            for (int t = 0; t < 3; t++) {
                double margin = forest_eval(&m->f[t], x);
                double *ef = e + ((size_t)fo * 3 + (size_t)t) * NCAND;
                double meas = d->meas[3 * i + (size_t)t], pred = d->pred[3 * i + (size_t)t];
                ef[CAND_NONE] += fabs(pred / meas - 1);
                ef[CAND_BIAS] += fabs(pred * c[t] / meas - 1);
                for (int a = 1; a <= NCAND - CAND_TREES; a++)
                    ef[CAND_TREES + a - 1] +=
                        fabs(pred * exp(a / (double)(NCAND - CAND_TREES) * margin) / meas - 1);
            }
            rows[fo]++;
        }
        wl_learn_model_free(m);
    }
    for (int t = 0; !rc && t < 3; t++) {
        int best = choose_candidate(e, rows, nf, t);
        bias[t] = 0;
        shrink[t] = 0;
        if (best == CAND_BIAS) {
            double c = 1;
            for (size_t i = 0; i < d->n; i++)
                inner[i] = !mask || mask[i];
            rc = best_factor(d, inner, t, &c);
            bias[t] = log(c);
        } else if (best >= CAND_TREES)
            shrink[t] = (best - CAND_TREES + 1) / (double)(NCAND - CAND_TREES);
    }
    free(inner);
    free(e);
    free(rows);
    return rc;
}

/* The training rows' out-of-fold analytical predictions: each inner fold's
 * rows predicted with coefficients refitted without it (fold_predictions),
 * so that the correction learns the error the physics makes on a model it
 * was not fitted to, which is what it meets in use. x and pred start as
 * d's (n rows each). */
static int oof_predictions(const wl_learn_data *d, const int *fold, int nf, double *x,
                           double *pred)
{
    double *fx = malloc((d->n + 1) * WL_LEARN_FEATURES * sizeof *fx),
           *fp = malloc((d->n + 1) * 3 * sizeof *fp);
    unsigned char *train = malloc(d->n + 1);
    int rc = fx && fp && train ? WL_OK : WL_ENOMEM;
    for (int fo = 0; !rc && fo < nf; fo++) {
        for (size_t i = 0; i < d->n; i++)
            train[i] = fold[i] >= 0 && fold[i] != fo;
        if ((rc = fold_predictions(d, train, fx, fp)))
            break;
        for (size_t i = 0; i < d->n; i++)
            if (fold[i] == fo) {
                memcpy(x + i * WL_LEARN_FEATURES, fx + i * WL_LEARN_FEATURES,
                       WL_LEARN_FEATURES * sizeof *x);
                memcpy(pred + 3 * i, fp + 3 * i, 3 * sizeof *pred);
            }
    }
    free(fx);
    free(fp);
    free(train);
    return rc;
}

/* The forests on the rows with mask[i] set; the domain over them. */
static int train_forests(const wl_learn_data *d, const unsigned char *mask,
                         const wl_learn_options *o, wl_learn_model *m, wl_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += !mask || mask[i];
    int nfeat = m->nfeat;
    float *X = malloc((n + 1) * (size_t)nfeat * sizeof *X), *y = malloc((n + 1) * sizeof *y);
    int rc = X && y ? WL_OK : WL_ENOMEM;
    if (!rc && n < 8) {
        wl_error_set(err, "", 0, "", "%zu rows: too few to learn from (at least 8)", n);
        rc = WL_EINVAL;
    }
    if (!rc) {
        for (int f = 0; f < nfeat; f++) {
            m->lo[f] = INFINITY;
            m->hi[f] = -INFINITY;
        }
        size_t j = 0;
        for (size_t i = 0; i < d->n; i++) {
            if (mask && !mask[i])
                continue;
            for (int f = 0; f < nfeat; f++) {
                double v = d->x[i * WL_LEARN_FEATURES + (size_t)f];
                /* a hybrid does not split on what names the GPU or the
                 * model (constant columns never split): its correction
                 * follows the prediction's character (bound, shares,
                 * clock, shape), which carries over to a model it has not
                 * seen, rather than a model's own residual. Those features
                 * still bound the domain. */
                X[j * (size_t)nfeat + (size_t)f] =
                    o->hybrid && f <= WL_LF_D_FF ? 0.0f : (float)v;
                m->lo[f] = fmin(m->lo[f], v);
                m->hi[f] = fmax(m->hi[f], v);
            }
            j++;
        }
    }
    for (int t = 0; !rc && t < 3; t++) {
        size_t j = 0;
        for (size_t i = 0; i < d->n; i++) {
            if (mask && !mask[i])
                continue;
            double meas = d->meas[3 * i + (size_t)t], pred = d->pred[3 * i + (size_t)t];
            y[j++] = (float)(o->hybrid ? log(meas / pred) : log(meas));
        }
        rc = train_target(X, y, n, nfeat, o, o->hybrid, &m->f[t], err);
    }
    m->rows = n;
    free(X);
    free(y);
    return rc;
}

int wl_learn_train(const wl_learn_data *d, const unsigned char *mask, const wl_learn_options *o,
                   wl_learn_model **out, wl_error *err)
{
    *out = NULL;
    wl_learn_model *m = calloc(1, sizeof *m);
    int choose = o->hybrid && !o->no_shrink;
    int *fold = choose ? malloc((d->n + 1) * sizeof *fold) : NULL;
    double *ox = NULL, *op = NULL;
    int rc = m && (!choose || fold) ? WL_OK : WL_ENOMEM;
    if (!rc) {
        m->kind = o->kind;
        m->hybrid = o->hybrid;
        m->nfeat = o->hybrid ? WL_LEARN_FEATURES : WL_LEARN_PLAIN_FEATURES;
        m->opt = *o;
        for (int t = 0; t < 3; t++)
            m->shrink[t] = 1;
    }
    /* a hybrid learns from out-of-fold predictions where the analytical
     * model can be refitted: the rows' own in-sample residuals are what the
     * fit left over, not what it misses on data it has not seen */
    wl_learn_data od = *d;
    int by_model = 0;
    int nf = !rc && choose ? inner_folds(d, mask, fold, &by_model) : 0;
    m->across_models = by_model;
    if (!rc && choose && o->refit && d->v && nf >= 2) {
        ox = malloc((d->n + 1) * WL_LEARN_FEATURES * sizeof *ox);
        op = malloc((d->n + 1) * 3 * sizeof *op);
        rc = ox && op ? WL_OK : WL_ENOMEM;
        if (!rc) {
            memcpy(ox, d->x, d->n * WL_LEARN_FEATURES * sizeof *ox);
            memcpy(op, d->pred, d->n * 3 * sizeof *op);
            rc = oof_predictions(d, fold, nf, ox, op);
            od.x = ox;
            od.pred = op;
        }
    }
    if (!rc)
        rc = train_forests(&od, mask, o, m, err);
    if (!rc && choose)
        rc = choose_correction(&od, mask, fold, nf, o, m->bias, m->shrink);
    if (rc == WL_ENOMEM)
        wl_error_set(err, "", 0, "", "out of memory");
    free(fold);
    free(ox);
    free(op);
    if (rc) {
        wl_learn_model_free(m);
        return rc;
    }
    wl_learn_model_ready(m);
    *out = m;
    return WL_OK;
}

/* ---- cross-validation ------------------------------------------------------------------ */

/* The fold's analytical predictions and features: each GPU calibrated on
 * its own data refitted on the training rows (train[j]), every row of it
 * predicted with those coefficients; the others keep d's. x and pred are
 * d->n rows. */
static int fold_predictions(const wl_learn_data *d, const unsigned char *train, double *x,
                            double *pred)
{
    memcpy(x, d->x, d->n * WL_LEARN_FEATURES * sizeof *x);
    memcpy(pred, d->pred, d->n * 3 * sizeof *pred);
    const wl_calib_set *set = wl_calib_validation_set(d->v);
    size_t nrows = wl_calib_count(set), ng = wl_calib_validation_gpus(d->v);
    unsigned char *mask = malloc(nrows + 1);
    if (!mask)
        return WL_ENOMEM;
    for (size_t k = 0; k < ng; k++) {
        wl_calib_problem *p = wl_calib_validation_problem(d->v, k);
        wl_core_gpu orig = *wl_calib_problem_gpu(p), fitted;
        if (orig.coef_source[0])
            continue; /* a transfer: not fitted on this data */
        memset(mask, 0, nrows);
        size_t used = 0;
        for (size_t j = 0; j < d->n; j++)
            if (d->gpu[j] == (int)k && train[j]) {
                mask[d->src[j]] = 1;
                used++;
            }
        wl_calib_fit_info info;
        /* a refit that only scores held-out rows (scoring) */
        wl_calib_fit_options fo;
        wl_calib_fit_options_default(&fo);
        fo.scoring = 1;
        int frc = used ? wl_calib_fit(p, mask, &fo, &fitted, &info) : WL_EINVAL;
        if (frc == WL_ESTOPPED) {
            free(mask);
            return frc;
        }
        if (frc != WL_OK)
            continue;
        wl_calib_problem_set_gpu(p, &fitted);
        for (size_t j = 0; j < d->n; j++) {
            wl_core_result res;
            if (d->gpu[j] != (int)k || wl_calib_predict(p, d->src[j], &res))
                continue;
            int mi = d->model_index[j];
            wl_learn_features(&fitted, mi >= 0 ? &d->models[mi] : NULL, &d->cases[j], &res,
                              x + j * WL_LEARN_FEATURES);
            pred[3 * j] = res.time_ms;
            pred[3 * j + 1] = res.power_w;
            pred[3 * j + 2] = res.energy_j;
        }
        wl_calib_problem_set_gpu(p, &orig);
    }
    free(mask);
    return WL_OK;
}

/* Folds: each model, or each workload round robin over k in order of
 * first appearance, or the rows in a seeded random order round robin;
 * fold[i] for each row, the number of folds returned. */
static int split_folds(const wl_learn_data *d, unsigned seed, wl_learn_split by, int k, int *fold)
{
    if (by == WL_LEARN_BY_MODEL)
        return key_folds(d, d->model, NULL, 0, fold);
    if (by == WL_LEARN_BY_WORKLOAD)
        return key_folds(d, d->workload, NULL, k, fold);
    for (size_t i = 0; i < d->n; i++)
        fold[i] = (int)i;
    /* Fisher-Yates with a 64-bit LCG (Knuth's MMIX constants) */
    uint64_t st = 0x9E3779B97F4A7C15u ^ seed;
    for (size_t i = d->n; i > 1; i--) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        size_t j = (size_t)((st >> 33) % i);
        int tmp = fold[i - 1];
        fold[i - 1] = fold[j];
        fold[j] = tmp;
    }
    for (size_t i = 0; i < d->n; i++)
        fold[i] %= k > 0 ? k : 1;
    return d->n < (size_t)k ? (int)d->n : k;
}

int wl_learn_folds(const wl_learn_data *d, const wl_learn_options *o, wl_learn_split by, int k)
{
    int *fold = malloc((d->n + 1) * sizeof *fold);
    if (!fold)
        return -1;
    int nf = split_folds(d, o->seed, by, k, fold);
    free(fold);
    return nf;
}

int wl_learn_crossval(const wl_learn_data *d, const wl_learn_options *o, wl_learn_split by,
                      int k, int refit, wl_learn_cv *out, wl_error *err)
{
    memset(out, 0, sizeof *out);
    int *fold = malloc((d->n + 1) * sizeof *fold);
    unsigned char *mask = malloc(d->n + 1);
    double *fx = malloc((d->n + 1) * WL_LEARN_FEATURES * sizeof *fx),
           *fp = malloc((d->n + 1) * 3 * sizeof *fp);
    int rc = fold && mask && fx && fp ? WL_OK : WL_ENOMEM;
    int nf = rc ? 0 : split_folds(d, o->seed, by, k, fold);
    if (!rc && nf < 2) {
        wl_error_set(err, "", 0, "", "cross-validation needs at least two %s",
                     by == WL_LEARN_BY_WORKLOAD ? "workloads"
                     : by == WL_LEARN_BY_MODEL  ? "models"
                                                : "rows and folds");
        rc = WL_EINVAL;
    }
    double sa[3] = {0}, sl[3] = {0};
    size_t held = 0;
    for (int fo = 0; !rc && fo < nf; fo++) {
        if (wl_stop_requested()) {
            wl_error_set(err, "", 0, "", "stopped");
            rc = WL_ESTOPPED;
            break;
        }
        for (size_t i = 0; i < d->n; i++)
            mask[i] = fold[i] != fo;
        /* the fold's view of the data: refitted predictions, or d's own */
        wl_learn_data fd = *d;
        if (refit && d->v) {
            if ((rc = fold_predictions(d, mask, fx, fp)))
                break;
            fd.x = fx;
            fd.pred = fp;
        }
        wl_learn_options fo_opt = *o;
        fo_opt.refit = refit;
        wl_learn_model *m = NULL;
        if ((rc = wl_learn_train(&fd, mask, &fo_opt, &m, err)))
            break;
        for (size_t i = 0; i < d->n; i++) {
            if (mask[i])
                continue;
            double c[3], dom;
            wl_learn_eval(m, fd.x + i * WL_LEARN_FEATURES, c, &dom);
            /* scored as a row carries them (wl_learn_apply): the model's
             * time and power, energy their product */
            const double *pr = fd.pred + 3 * i;
            double lt = o->hybrid ? pr[0] * c[0] : c[0], lp = o->hybrid ? pr[1] * c[1] : c[1];
            const double lv[3] = {lt, lp, lt * lp * 1e-3};
            for (int t = 0; t < 3; t++) {
                double meas = d->meas[3 * i + (size_t)t], pred = fd.pred[3 * i + (size_t)t];
                double learned = lv[t];
                sa[t] += fabs(pred / meas - 1);
                sl[t] += fabs(learned / meas - 1);
            }
            held++;
        }
        wl_learn_model_free(m);
        if (o->fold_done)
            o->fold_done(o->fold_user);
    }
    for (int t = 0; !rc && t < 3; t++) {
        out->analytical[t] = 100 * sa[t] / (double)(held ? held : 1);
        out->learned[t] = 100 * sl[t] / (double)(held ? held : 1);
    }
    out->rows = held;
    out->folds = nf;
    free(fold);
    free(mask);
    free(fx);
    free(fp);
    return rc;
}
