/* A whole calibration as 'wattlas calibrate' and wattlas.calibrate run it:
 * the rows on their GPU, the fit, the figures before and after, the
 * cross-validations asked for, and the fitted presets written atomically.
 * What it reports goes out as lines through one callback, so the command
 * line prints them and Python keeps them. */
#include "calib_internal.h"
#include "../presets/wattlas_presets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wl_calib_run_options_default(wl_calib_run_options *o)
{
    memset(o, 0, sizeof *o);
    wl_calib_fit_options_default(&o->fit_options);
}

typedef struct {
    const wl_calib_run_options *o;
    unsigned long long done, total; /* fits, for progress */
} run_ctx;

/* the report's lines go to the caller's callback */
#define say(c, ...) wl_core_say((c)->o->say, (c)->o->user, __VA_ARGS__)

static void fit_done(void *user)
{
    run_ctx *c = user;
    c->done++;
    if (c->o->progress)
        c->o->progress(c->o->user, c->done, c->total);
}

/* The coefficients of the host's issue cost (host) or all the others. */
static unsigned long long coef_mask(int host)
{
    unsigned long long m = 0;
    for (int i = 0; i < wl_calib_param_count(); i++)
        if (wl_core_coef_is_host(wl_calib_param_name(i)) == host)
            m |= 1ull << i;
    return m;
}

/* The coefficients named in names[0..n). */
static unsigned long long names_mask(const char *const *names, size_t n)
{
    unsigned long long m = 0;
    for (int i = 0; i < wl_calib_param_count(); i++)
        for (size_t j = 0; j < n; j++)
            if (!strcmp(wl_calib_param_name(i), names[j]))
                m |= 1ull << i;
    return m;
}

/* The die's latency coefficients: what a board of an already calibrated
 * die (the H200 beside the H100: the same GH100, another memory and board)
 * keeps, with the host's issue costs, which are not the GPU's. */
static const char *const die_names[] = {"tc_eff", "cuda_eff", "alu_eff", "l2_eff",
                                        "overlap_p", "kernel_fixed_us", "kernel_fixed_clk",
                                        "tile_overhead_clk", "launch_clk",
                                        "host_launch_us", "host_op_launch_us",
                                        "host_train_launch_us", "host_backward_launch_us",
                                        "host_optimizer_launch_us", "host_decode_launch_us"};
#define N_DIE_LATENCY 9 /* die_names before the host's */

static unsigned long long die_mask(void)
{
    return names_mask(die_names, sizeof die_names / sizeof *die_names);
}

/* The memory path's coefficients (DRAM efficiency, bytes in flight, the
 * path's bandwidth). */
static unsigned long long memory_mask(void)
{
    static const char *const mem[] = {"dram_eff", "mem_bytes_per_clk", "mem_path_gbs"};
    return names_mask(mem, sizeof mem / sizeof *mem);
}

/* Whether a preset's [calibration] says a board fit kept the die's
 * latency (the kept key --fit board writes). */
static int kept_latency(const char *text)
{
    int in_cal = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (*p == '[')
            in_cal = !strncmp(p, "[calibration]", 13);
        else if (in_cal && !strncmp(p, "kept", 4) && p[4 + strspn(p + 4, " \t")] == '=')
            return 1;
    }
    return 0;
}

/* The modelled rows of relative and of absolute time. */
static void relative_rows(const wl_calib_problem *p, const wl_calib_set *set, size_t *rel,
                          size_t *abs_)
{
    *rel = *abs_ = 0;
    for (size_t i = 0; i < wl_calib_count(set); i++)
        if (wl_calib_row_scored(p, i, NULL)) {
            int r = wl_calib_row_at(set, i)->time_relative != 0;
            *rel += (size_t)r;
            *abs_ += (size_t)!r;
        }
}

/* fit: gpu|host|gpu,host|auto|NAME,...: which coefficients the rows move
 * (NULL: the GPU's; auto when they are a transfer, decided later). */
static int fit_choice(const wl_calib_run_options *o, wl_calib_fit_options *fo, int *fit_gpu,
                      int *fit_host, wl_error *err)
{
    *fit_gpu = 1;
    *fit_host = 0;
    if (!o->fit) {
        fo->free_mask = coef_mask(0);
        return WL_OK;
    }
    wl_core_strlist l = {0};
    int rc = wl_core_parse_names(o->fit, "--fit", 0, "", &l, err);
    fo->free_mask = 0;
    const unsigned long long host = coef_mask(1);
    if (!rc && l.n == 1 && !strcmp(l.v[0], "auto")) {
        fo->auto_select = 1;
        wl_core_strlist_free(&l);
        return WL_OK;
    }
    for (size_t i = 0; i < l.n && !rc; i++) {
        int k;
        if (!strcmp(l.v[i], "auto")) {
            wl_error_set(err, "--fit", 0, "", "auto: alone, not in a list");
            rc = WL_EINVAL;
        } else if (!strcmp(l.v[i], "gpu")) {
            fo->free_mask |= coef_mask(0);
        } else if (!strcmp(l.v[i], "board")) {
            /* the memory path, the board's power and its controller; the
             * die's latency stays as the preset has it */
            fo->free_mask |= coef_mask(0) & ~die_mask();
        } else if (!strcmp(l.v[i], "host")) {
            fo->free_mask |= host;
        } else if ((k = wl_calib_param_index(l.v[i])) >= 0) {
            fo->free_mask |= 1ull << k;
        } else {
            wl_error_set(err, "--fit", 0, "", "expected gpu, board, host, auto, coefficient "
                         "names (as in [calibration]) or tc_fp8_power_ratio alone, got '%.60s'", l.v[i]);
            rc = WL_EINVAL;
        }
    }
    wl_core_strlist_free(&l);
    *fit_host = (fo->free_mask & host) != 0;
    *fit_gpu = (fo->free_mask & ~host) != 0;
    return rc;
}

static void say_metrics(const run_ctx *c, const char *what, const wl_calib_metrics *m)
{
    char t[200], r[300] = "";
    wl_calib_mape_text(t, sizeof t, m->n, m->n_power, m->mape_time, m->mape_power,
                       m->mape_energy);
    if (m->n_regret)
        snprintf(r, sizeof r, "; clock regret worst %.2f%% (%s), mean %.2f%%", m->worst_regret,
                 m->worst_regret_workload, m->mean_regret);
    say(c, "%s (%zu rows): MAPE %s%s", what, m->n, t, r);
}

static void say_workload(void *user, const wl_calib_wl_stats *s)
{
    const run_ctx *c = user;
    if (!s->n_power) { /* time only */
        say(c, "  %-34s %3zu  %6.2f %+7.2f  %6s %7s  %6s %7s", s->key, s->n, s->mape_time,
            s->bias_time, "-", "-", "-", "-");
        return;
    }
    say(c, "  %-34s %3zu  %6.2f %+7.2f  %6.2f %+7.2f  %6.2f %+7.2f", s->key, s->n,
        s->mape_time, s->bias_time, s->mape_power, s->bias_power, s->mape_energy,
        s->bias_energy);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --holdout every:K: every K-th of the file's distinct model names in
 * sorted order (the K-th, the 2K-th, ...), a split that depends on the
 * names alone, never on the values; the names joined with commas in
 * *names (malloc'd) and appended to list. */
static int holdout_every(const char *spec, const wl_calib_set *set, wl_core_strlist *list,
                         char **names, wl_error *err)
{
    char *end = NULL;
    long k = strtol(spec + 6, &end, 10);
    if (end == spec + 6 || *end || k < 2 || k > 1000) {
        wl_error_set(err, "--holdout", 0, "", "every:K takes K from 2 to 1000, got '%.40s'",
                     spec + 6);
        return WL_EINVAL;
    }
    size_t n = wl_calib_count(set), m = 0;
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        wl_error_set(err, "--holdout", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        v[m++] = wl_calib_row_at(set, i)->model;
    qsort(v, m, sizeof *v, cmp_str);
    size_t u = 0; /* distinct, in place */
    for (size_t i = 0; i < m; i++)
        if (!u || strcmp(v[u - 1], v[i]))
            v[u++] = v[i];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = f ? WL_OK : WL_ENOMEM;
    for (size_t i = (size_t)k - 1; f && i < u; i += (size_t)k)
        fprintf(f, "%s%s", i >= (size_t)k ? "," : "", v[i]);
    if (f && fclose(f))
        rc = WL_ENOMEM;
    free(v);
    if (rc || !len) {
        free(buf);
        wl_error_set(err, "--holdout", 0, "", rc ? "out of memory"
                                                 : "every:%ld holds out nothing: the file has "
                                                   "%zu model names", k, u);
        return rc ? rc : WL_EINVAL;
    }
    *names = buf;
    return wl_core_parse_names(buf, "--holdout", 0, "", list, err);
}

/* Whether a model is in the list. */
static int listed(const wl_core_strlist *list, const char *model)
{
    for (size_t i = 0; i < list->n; i++)
        if (strcmp(list->v[i], model) == 0)
            return 1;
    return 0;
}

/* Cross-validated figures on the training rows (held-out rows in no fold). */
static void crossval(run_ctx *c, const wl_calib_fit_options *fo, wl_calib_problem *p,
                     const unsigned char *train, size_t n, int *fold, wl_calib_run_result *r)
{
    const wl_calib_run_options *o = c->o;
    if (o->kfold) {
        int nf = wl_calib_folds_kfold(p, o->kfold, fold);
        for (size_t i = 0; i < n; i++)
            if (!train[i])
                fold[i] = -2; /* held out entirely: in no fold, in no training set */
        int crc = nf >= 2 ? wl_calib_crossval(p, fold, nf, fo, &r->kfold, NULL) : WL_EINVAL;
        if (nf < 2)
            say(c, "%d-fold: %d workload%s, too few to fold", o->kfold, nf, nf == 1 ? "" : "s");
        else if (crc == WL_OK) {
            char what[64];
            snprintf(what, sizeof what, "%d-fold cross-validated", nf);
            say_metrics(c, what, &r->kfold);
            r->kfold_folds = nf;
        }
        if (nf >= 2 && r->kfold.n_failed_folds)
            say(c, "%d-fold: %d of %d refits failed, their %zu rows unscored (fold %d: %s)", nf,
                r->kfold.n_failed_folds, nf, r->kfold.n_failed_rows,
                r->kfold.first_failed_fold + 1, r->kfold.failed_why);
    }
    if (o->lomo) {
        char names[64][64];
        wl_calib_metrics per[64];
        int nf = wl_calib_folds_by_model(p, fold, names, 64);
        for (size_t i = 0; i < n; i++)
            if (!train[i])
                fold[i] = -2;
        int crc = nf >= 2 ? wl_calib_crossval(p, fold, nf, fo, &r->lomo, per) : WL_EINVAL;
        if (nf < 2)
            /* issue 77: one model printed nothing */
            say(c, "leave-one-model-out: %s%s%s, too few to leave one out", nf ? "one model (" : "no model",
                nf ? names[0] : "", nf ? ")" : "");
        for (int f = 0; nf >= 2 && crc != WL_ENOMEM && crc != WL_ESTOPPED && f < nf; f++) {
            /* rows of time only have no power to score (validate's wording) */
            char t[200];
            if (per[f].n_failed_folds)
                snprintf(t, sizeof t, "refit failed: %s", per[f].failed_why);
            else
                wl_calib_mape_text(t, sizeof t, per[f].n, per[f].n_power, per[f].mape_time,
                                   per[f].mape_power, per[f].mape_energy);
            say(c, "  without %-12s (%3zu rows): %s", names[f],
                per[f].n_failed_folds ? per[f].n_failed_rows : per[f].n, t);
        }
        if (crc == WL_OK) {
            say_metrics(c, "leave-one-model-out", &r->lomo);
            r->lomo_folds = nf;
        }
    }
}

/* The host's issue cost before and after, with its standard error. */
static void say_host(const run_ctx *c, const wl_core_gpu *before, const wl_core_gpu *after,
                     const wl_calib_fit_info *info, const double *se)
{
    int k = wl_calib_param_index("host_launch_us"), ko = wl_calib_param_index("host_op_launch_us");
    int kt = wl_calib_param_index("host_train_launch_us");
    const char *id = before->host_id[0] ? before->host_id : "(the preset's own)";
    if (info->fitted >> k & 1ull)
        say(c, "host %s: issue cost %.2f us per kernel of a model -> %.2f +- %.2f us", id,
            before->coef.host_launch_us, after->coef.host_launch_us, se[k]);
    if (info->fitted >> ko & 1ull)
        say(c, "host %s: issue cost %.2f us per kernel of a bare op in a loop -> %.2f +- %.2f us",
            id, wl_core_coeffs_op_launch_us(&before->coef), after->coef.host_op_launch_us, se[ko]);
    if (info->fitted >> kt & 1ull)
        say(c, "host %s: issue cost %.2f us per kernel of a training step -> %.2f +- %.2f us", id,
            wl_core_coeffs_train_launch_us(&before->coef), after->coef.host_train_launch_us, se[kt]);
    static const struct {
        const char *name, *what;
        int phase;
    } ph[] = {{"host_backward_launch_us", "backward", WL_PHASE_BACKWARD},
              {"host_optimizer_launch_us", "optimizer step", WL_PHASE_OPTIMIZER}};
    int kd = wl_calib_param_index("host_decode_launch_us");
    if (info->fitted >> kd & 1ull)
        say(c, "host %s: issue cost %.2f us per kernel of a generation's decode steps -> %.2f +- "
               "%.2f us",
            id, before->coef.host_decode_launch_us > 0 ? before->coef.host_decode_launch_us
                                                       : before->coef.host_launch_us,
            after->coef.host_decode_launch_us, se[kd]);
    for (size_t i = 0; i < sizeof ph / sizeof *ph; i++) {
        int kp = wl_calib_param_index(ph[i].name);
        if (info->fitted >> kp & 1ull)
            say(c, "host %s: issue cost %.2f us per kernel of a training step's %s -> %.2f +- %.2f us "
                   "(its forward's held at %.2f us)",
                id, wl_core_coeffs_phase_launch_us(&before->coef, ph[i].phase), ph[i].what,
                wl_core_coeffs_phase_launch_us(&after->coef, ph[i].phase), se[kp],
                wl_core_coeffs_train_launch_us(&after->coef));
    }
}

/* The fitted host as a preset named after its file. */
static int write_host(const wl_calib_run_options *o, const char *path, const wl_core_gpu *fitted,
                      const wl_calib_fit_info *info, const double *se, size_t rows, wl_error *err)
{
    /* each cost as fitted; a bare op's unfitted is kept only as a host
     * file the user named (--host: their own machine's) gave it, not from
     * the GPU's host class (no bare-op row: not the rows' host's, so
     * unstated, following the fitted forward's); a standard error only
     * for what the rows fitted */
    int ko = wl_calib_param_index("host_op_launch_us");
    int kt = wl_calib_param_index("host_train_launch_us");
    int kb = wl_calib_param_index("host_backward_launch_us");
    int kz = wl_calib_param_index("host_optimizer_launch_us");
    int fit_op = info->fitted >> ko & 1ull, fit_tr = info->fitted >> kt & 1ull;
    int fit_b = info->fitted >> kb & 1ull, fit_z = info->fitted >> kz & 1ull;
    wl_core_host h = {.launch_us = fitted->coef.host_launch_us,
                      .op_launch_us = fit_op || o->host ? fitted->coef.host_op_launch_us : 0,
                      .train_launch_us = fitted->coef.host_train_launch_us,
                      .backward_launch_us = fitted->coef.host_backward_launch_us,
                      .optimizer_launch_us = fitted->coef.host_optimizer_launch_us,
                      .decode_launch_us = fitted->coef.host_decode_launch_us,
                      .driver_launch_us = fitted->coef.host_driver_launch_us,
                      .serve_step_us = fitted->coef.host_serve_step_us,
                      .serve_seq_us = fitted->coef.host_serve_seq_us};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base);
    if (bl > 4 && !strcmp(base + bl - 4, ".ini"))
        bl -= 4;
    if (!bl || bl >= sizeof h.id)
        base = "host", bl = 4; /* no usable name in the path */
    snprintf(h.id, sizeof h.id, "%.*s", (int)bl, base);
    snprintf(h.name, sizeof h.name, "host fitted to %.100s", o->path);
    if (info->unc.valid) {
        h.launch_us_stderr = se[wl_calib_param_index("host_launch_us")];
        h.op_launch_us_stderr = fit_op ? se[ko] : 0;
        h.train_launch_us_stderr = fit_tr ? se[kt] : 0;
        h.backward_launch_us_stderr = fit_b ? se[kb] : 0;
        h.optimizer_launch_us_stderr = fit_z ? se[kz] : 0;
    }
    char *src = wl_core_strprintf("fitted by wattlas calibrate to %zu rows of %s (GPU %s)", rows,
                                  o->path, fitted->id);
    if (!src) {
        wl_error_set(err, path, 0, "", "out of memory");
        return WL_ENOMEM;
    }
    wl_results_out *out = NULL;
    int rc = wl_results_out_open(path, &out, err);
    if (!rc) {
        FILE *f = wl_results_out_stream(out);
        wl_preset_write_host(f, &h);
        wl_calib_write_info(f, "source", src);
        wl_calib_write_info(f, "command", o->command ? o->command : "");
        rc = wl_results_out_commit(out, err);
    }
    free(src);
    return rc;
}

/* What a few-shot fit moved (prior -> fitted +- se, and the information the
 * rows gave it in units of the prior's) and what it held; *note gets the
 * one-line summary for the preset. */
static void say_few_shot(const run_ctx *c, const wl_core_gpu *before, const wl_core_gpu *after,
                         const wl_calib_fit_info *info, const wl_calib_fit_options *fo,
                         const double *se, size_t rows, char **note)
{
    const char *prior = before->coef_source[0] ? before->coef_source : "the preset's calibration";
    say(c, "few-shot: prior %s, each coefficient +-%.0f%%; %zu rows identify %d of %d "
           "coefficients:", prior, 100 * fo->transfer_rel, rows, info->n_chosen,
        wl_calib_param_count());
    char *list = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&list, &len);
    for (int j = 0; j < info->n_chosen; j++) {
        int i = info->chosen[j];
        const char *name = wl_calib_param_name(i);
        double v0 = 0, v1 = 0;
        wl_preset_gpu_get(before, name, &v0);
        wl_preset_gpu_get(after, name, &v1);
        say(c, "  %-20s %12.6g -> %12.6g +- %-10.4g (information %.1fx the prior's)", name, v0,
            v1, se[i], info->gain[j]);
        if (m)
            fprintf(m, "%s%s", j ? ", " : "", name);
    }
    if (!info->n_chosen)
        say(c, "  none: the rows add less than the prior knows; the transfer stands");
    say(c, "  the other %d stay at the prior (their standard errors are its spread)",
        wl_calib_param_count() - info->n_chosen);
    if (m && fclose(m) == 0)
        *note = wl_core_strprintf("prior %s (+-%g each); fitted to %zu rows: %s; the others "
                                  "held at the prior", prior, fo->transfer_rel, rows,
                                  info->n_chosen ? list : "none");
    free(list);
}

/* A usage error: the option's name as source. */
static int usage(wl_error *err, const char *option, const char *text)
{
    wl_error_set(err, option, 0, "", "%s", text);
    return WL_EINVAL;
}

int wl_calib_run(const wl_calib_run_options *o, wl_calib_run_result *r, wl_error *err)
{
    memset(r, 0, sizeof *r);
    run_ctx c = {.o = o};
    wl_calib_fit_options fo = o->fit_options;
    wl_core_strlist held_out = {0};
    char *file_text = NULL, *vf_text = NULL, *few_note = NULL, *held_names = NULL;
    char *kept_note = NULL;
    wl_calib_uncertainty pu;
    wl_calib_set *set = NULL;
    wl_calib_problem *p = NULL;
    unsigned char *train = NULL, *test = NULL;
    int *fold = NULL;
    wl_results_out *out = NULL;
    wl_core_gpu gpu;
    int fit_gpu, fit_host, rc, same_die = 0;
    if (!o->path || !o->gpu || !o->out) {
        rc = usage(err, !o->path ? "path" : !o->gpu ? "--gpu" : "-o",
                   !o->path ? "expected one MEASUREMENTS.csv" : !o->gpu ? "--gpu is required"
                                                                      : "-o FILE.ini is required");
        goto done;
    }
    if (o->fit && !strcmp(o->fit, "tc_fp8_power_ratio")) {
        /* pairs of GEMMs, not rows of workloads: a fit of its own */
        if (!(rc = wl_calib_tc_ratio_run(o, err)))
            r->gpu_written = o->out;
        goto done;
    }
    if ((rc = fit_choice(o, &fo, &fit_gpu, &fit_host, err)))
        goto done;
    if (o->kfold && (o->kfold < 2 || o->kfold > 1000)) {
        wl_error_set(err, "--kfold", 0, "", "expected 2 to 1000 folds, got %d", o->kfold);
        rc = WL_EINVAL;
        goto done;
    }
    if (o->fit && fit_host && fit_gpu && !o->host_out) {
        rc = usage(err, "--fit", "with the host and GPU coefficients needs --host-out FILE.ini");
        goto done;
    }
    if (o->host_out && o->fit && !(fit_host && fit_gpu) && !fo.auto_select) {
        rc = usage(err, "--host-out", "only with --fit gpu,host or auto (--fit host writes -o)");
        goto done;
    }
    int every = o->holdout && !strncmp(o->holdout, "every:", 6);
    if (o->holdout && !every &&
        (rc = wl_core_parse_names(o->holdout, "--holdout", 0, "", &held_out, err)))
        goto done;
    if ((rc = wl_preset_gpu_load(o->gpu, &gpu, err))) {
        if (rc == WL_ENOTFOUND && !err->line)
            wl_error_locate(err, "--gpu", 0);
        goto done;
    }
    if (o->host && (rc = wl_preset_gpus_set_host(o->host, &gpu, 1, err))) {
        if (rc == WL_ENOTFOUND && !err->line)
            wl_error_locate(err, "--host", 0);
        goto done;
    }
    /* a GPU that has only transferred coefficients is calibrated few-shot
     * unless fit says otherwise; the transfer (and the source's own
     * uncertainty) is the prior */
    if (!o->fit && gpu.coef_source[0])
        fo.auto_select = 1;
    if (fo.auto_select) {
        wl_error e2 = {0};
        if (wl_calib_uncertainty_load(o->gpu, &pu, &e2) == WL_OK && pu.valid)
            fo.prior_unc = &pu;
        fo.free_mask = 0; /* every coefficient, the host's issue cost included */
        /* Transferred from the same die (the H200 from the H100: the same
         * GH100, another memory and board): the silicon's latency
         * coefficients are the source's fit and stay; the rows fit the
         * memory path, the board's power and its controller. Fitted
         * jointly, a board that draws less power pulled the launch latency
         * to 21 us (the H200 kernel database; time MAPE 15 -> 19%). */
        const char *from = "transferred from ";
        wl_core_gpu src;
        wl_error e3 = {0};
        if (!strncmp(gpu.coef_source, from, strlen(from)) &&
            wl_preset_gpu_load(gpu.coef_source + strlen(from), &src, &e3) == WL_OK &&
            wl_core_gpu_same_die(&src, &gpu)) {
            fo.free_mask = (coef_mask(0) | coef_mask(1)) & ~die_mask();
            same_die = 1;
        }
    } else if (o->host_out && !(fit_host && fit_gpu)) {
        rc = usage(err, "--host-out", "only with --fit gpu,host or auto (--fit host writes -o)");
        goto done;
    }
    /* the preset text to carry over */
    const char *text;
    if ((rc = wl_preset_find(WL_PRESET_GPU, o->gpu, &text, &file_text, NULL, 0, err)))
        goto done;
    if (!o->fit && !fo.auto_select && kept_latency(text)) {
        /* a board of a die calibrated before (--fit board wrote kept =):
         * another board of it moves what boards differ in, as that fit did */
        fo.free_mask = coef_mask(0) & ~die_mask();
        say(&c, "note: %s kept its die's latency from the fit it came from (kept = in its "
                "[calibration]): these rows fit the board (--fit board; --fit gpu refits the "
                "latency too)", gpu.id);
    }
    if (o->idle) {
        wl_core_gpu g2;
        char *spec = NULL;
        if ((rc = wl_calib_vf_section(o->idle, &gpu, &vf_text, err)))
            goto done;
        if (!(spec = wl_calib_preset_spec(text, vf_text))) {
            wl_error_set(err, o->idle, 0, "", "out of memory");
            rc = WL_ENOMEM;
            goto done;
        }
        rc = wl_preset_gpu_parse(spec, o->idle, &g2, err);
        free(spec);
        if (rc)
            goto done;
        gpu.vf = g2.vf;
    }
    if ((rc = wl_calib_load(o->path, &set, err)) ||
        (rc = wl_calib_problem_create(&gpu, set, o->traces, &p, err)))
        goto done;
    if (every) {
        if ((rc = holdout_every(o->holdout, set, &held_out, &held_names, err)))
            goto done;
        say(&c, "held out (--holdout %s): %s", o->holdout, held_names);
    }
    size_t n_rel, n_abs;
    relative_rows(p, set, &n_rel, &n_abs);
    if ((!o->fit || fo.auto_select) && fit_gpu && n_rel && !n_abs) {
        /* Rows of relative time say how time changes, not how long a known
         * amount of work takes: they cannot set how fast the memory is (a
         * flat time curve is a memory-bound share of unknown size; the
         * A40's stage profiles pulled dram_eff to 0.42, a streaming add at
         * 42% of its bandwidth). They fit the board's power and its
         * controller; the latency and the memory path stay the prior's. */
        unsigned long long all = coef_mask(0) | coef_mask(1); /* free_mask 0: every one */
        fo.free_mask = (fo.free_mask ? fo.free_mask : all) & ~die_mask() & ~memory_mask();
        say(&c, "note: rows of relative time (time_relative): they fit the board's power and "
                "its controller; the latency and the memory path stay the preset's");
    } else if (n_rel && fit_gpu) {
        /* With rows of absolute time beside them, those pin the latency and
         * the memory path (issue 77: one relative row froze them for all) */
        say(&c, "note: %zu rows of relative time (time_relative) are each scaled to their "
                "workload's unstated work; the %zu rows of absolute time fit the latency and the "
                "memory path", n_rel, n_abs);
    }
    size_t n = wl_calib_count(set);
    train = calloc(n ? n : 1, 1);
    test = calloc(n ? n : 1, 1);
    fold = calloc(n ? n : 1, sizeof *fold);
    if (!train || !test || !fold) {
        wl_error_set(err, o->path, 0, "", "out of memory");
        rc = WL_ENOMEM;
        goto done;
    }
    r->rows = n;
    /* the exclusions by reason, for the summary that --quiet keeps */
    struct exclusion {
        const char *why;
        size_t n;
        int line;
    } why[6];
    size_t nwhy = 0, other = 0;
    for (size_t i = 0; i < n; i++) {
        const char *reason = NULL;
        const wl_calib_row *row = wl_calib_row_at(set, i);
        if (!wl_calib_row_scored(p, i, &reason)) {
            r->excluded++;
            if (!o->quiet)
                say(&c, "%s:%d: excluded: %s", o->path, row->line, reason);
            size_t k = 0;
            while (k < nwhy && strcmp(why[k].why, reason ? reason : ""))
                k++;
            if (k < nwhy)
                why[k].n++;
            else if (nwhy < sizeof why / sizeof *why)
                why[nwhy++] = (struct exclusion){.why = reason ? reason : "", .n = 1, .line = row->line};
            else
                other++;
            continue;
        }
        int out_of_fit = o->holdout && listed(&held_out, row->model);
        test[i] = (unsigned char)out_of_fit;
        train[i] = (unsigned char)!out_of_fit;
        r->used += !out_of_fit;
        r->held += (size_t)out_of_fit;
    }
    if (r->excluded) {
        /* even with --quiet: which rows the fit left out, and why */
        char sum[700];
        size_t l = (size_t)snprintf(sum, sizeof sum, "excluded %zu of %zu rows:", r->excluded, n);
        for (size_t k = 0; k < nwhy && l < sizeof sum; k++)
            l += (size_t)snprintf(sum + l, sizeof sum - l, "%s %zu %.80s (first on line %d)",
                                  k ? ";" : "", why[k].n, why[k].why, why[k].line);
        if (other && l < sizeof sum)
            snprintf(sum + l, sizeof sum - l, "; %zu for other reasons", other);
        say(&c, "%s", sum);
    }
    if (o->holdout && !r->held) {
        wl_error_set(err, "--holdout", 0, "", "%.200s matches no usable row", o->holdout);
        rc = WL_EINVAL;
        goto done;
    }
    if (fit_gpu && !o->vf_keep && ((gpu.vf_rule & WL_VF_RULE_VOLTAGE) || gpu.vf_voltage_from[0])) {
        /* the voltage from the board's own compute-bound rows, before the
         * fit: the coefficients are fitted on the curve they will run on */
        wl_calib_vf_derived vfd;
        int was_rule = (gpu.vf_rule & WL_VF_RULE_VOLTAGE) != 0;
        if (wl_calib_vf_derive(p, set, train, &gpu, &vfd) == WL_OK) {
            wl_calib_vf_apply(&vfd, &gpu);
            const char *base = strrchr(o->path, '/');
            snprintf(gpu.vf_voltage_from, sizeof gpu.vf_voltage_from, "%s", base ? base + 1 : o->path);
            wl_calib_problem_set_gpu(p, &gpu);
            char idle_note[300];
            if (o->idle) {
                const char *ib = strrchr(o->idle, '/');
                snprintf(idle_note, sizeof idle_note,
                         "idle board power: %s, measured, smoothed at 60 MHz knots by wattlas calibrate --idle",
                         ib ? ib + 1 : o->idle);
            }
            free(vf_text);
            if (!(vf_text = wl_calib_vf_text(&gpu, &vfd, text, o->idle ? idle_note : NULL, o->path,
                                             o->command))) {
                wl_error_set(err, o->path, 0, "", "out of memory");
                rc = WL_ENOMEM;
                goto done;
            }
            char pts[400];
            size_t l = 0;
            for (int i = 0; i < vfd.n && l < sizeof pts; i++)
                l += (size_t)snprintf(pts + l, sizeof pts - l, "%s%.0f MHz %.0f mV", i ? ", " : "",
                                      vfd.clock_mhz[i], vfd.voltage_mv[i]);
            say(&c, "voltage from these rows (%s before): %d compute-bound rows of %d kernels (%s): %s",
                was_rule ? "the rule" : "a table derived", vfd.rows, vfd.kernels, vfd.names, pts);
        } else
            say(&c, "note: no compute-bound kernel (GEMMs the clock paces, at three clocks or more) in "
                    "these rows: the voltage stays %s", was_rule ? "the preset's rule" : "the preset's table");
    }
    /* progress in fits: the fit, then a fit per cross-validation fold */
    c.total = 1;
    if (o->kfold)
        c.total += (unsigned long long)wl_calib_folds_kfold(p, o->kfold, fold);
    if (o->lomo)
        c.total += (unsigned long long)wl_calib_folds_by_model(p, fold, NULL, 64);
    fo.fold_done = fit_done;
    fo.fold_user = &c;
    wl_calib_score(p, train, &r->before);
    wl_calib_fit_info *info = &r->info;
    rc = wl_calib_fit(p, train, &fo, &r->fitted, info);
    if (rc) {
        wl_error_set(err, o->path, 0, "", "cannot fit: %s",
                     info->message[0] ? info->message : wl_core_strerror(rc));
        goto done;
    }
    fit_done(&c);
    r->gpu = gpu;
    if (info->unc.valid)
        wl_calib_stderr(&info->unc, r->stderr_of);
    wl_calib_problem_set_gpu(p, &r->fitted);
    wl_calib_score(p, train, &r->after);
    say(&c, "fit: %zu rows, %d iterations, cost %.4f -> %.4f", r->used, info->iterations,
        info->cost_initial, info->cost_final);
    if (!o->quiet) {
        say(&c, "residuals per workload (in-sample; MAPE and mean signed error, %%):");
        say(&c, "  %-34s %3s  %6s %7s  %6s %7s  %6s %7s", "workload", "n", "time", "bias",
            "power", "bias", "energy", "bias");
        wl_calib_per_workload(p, train, say_workload, &c);
    }
    say_metrics(&c, "in-sample before", &r->before);
    say_metrics(&c, "in-sample after ", &r->after);
    if (o->holdout) {
        if (!o->quiet) {
            say(&c, "held-out residuals per workload:");
            wl_calib_per_workload(p, test, say_workload, &c);
        }
        if (wl_calib_score(p, test, &r->held_out) == WL_OK) {
            say_metrics(&c, "held-out", &r->held_out);
            r->has_held_out = 1;
        }
    }
    r->host_fitted = (info->fitted & coef_mask(1)) != 0;
    r->few_shot = fo.auto_select;
    if (same_die)
        say(&c, "few-shot: %s is the same die as its source: its latency coefficients (tc_eff, "
                "cuda_eff, alu_eff, l2_eff, overlap_p, kernel_fixed_us/clk, tile_overhead_clk, "
                "launch_clk) are the source's and stay", gpu.id);
    if (fo.auto_select)
        say_few_shot(&c, &gpu, &r->fitted, info, &fo, r->stderr_of, r->used, &few_note);
    if (r->host_fitted)
        say_host(&c, &gpu, &r->fitted, info, r->stderr_of);
    if (fo.auto_select && r->host_fitted && r->fitted.host_id[0]) {
        /* the issue cost of the machine these rows came from now belongs
         * to the written preset */
        say(&c, "note: the host's issue cost was fitted with these rows: %s holds it in "
                "[calibration] in place of host = %s", o->out, r->fitted.host_id);
        r->fitted.host_id[0] = 0;
    }
    wl_calib_problem_set_gpu(p, &gpu);
    crossval(&c, &fo, p, train, n, fold, r);
    if (fo.auto_select && o->host_out && !r->host_fitted)
        say(&c, "note: the rows do not identify the host's issue cost: %s not written",
            o->host_out);
    if (r->host_fitted && (fit_host || o->host_out)) {
        const char *hp = fit_gpu ? o->host_out : o->out;
        if ((rc = write_host(o, hp, &r->fitted, info, r->stderr_of, r->used, err)))
            goto done;
        r->host_written = hp;
    }
    if (fit_gpu && !fo.auto_select && !(fo.free_mask & die_mask() & coef_mask(0))) {
        /* --fit board: say where the latency it kept comes from */
        const char *from = "transferred from ";
        int tr = !strncmp(gpu.coef_source, from, strlen(from));
        char names[256];
        size_t l = 0;
        for (int i = 0; i < N_DIE_LATENCY && l < sizeof names; i++)
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", die_names[i]);
        kept_note = wl_core_strprintf("the die's latency (%s) %s%s%s", names,
                                      tr ? "from " : "as the preset gave it",
                                      tr ? gpu.coef_source + strlen(from) : "",
                                      tr ? ", the same die" : "");
    }
    if (fit_gpu) {
        if ((rc = wl_results_out_open(o->out, &out, err)))
            goto done;
        /* the fp8 cycle ratio is not this fit's: its error goes with it, from
         * the preset fitted before or the transfer's source */
        wl_calib_uncertainty u8;
        wl_error e8 = {0};
        double rel8 = wl_calib_uncertainty_load(o->gpu, &u8, &e8) == WL_OK && u8.tc_fp8_ratio > 0
                          ? u8.tc_fp8_stderr / u8.tc_fp8_ratio
                          : 0;
        wl_calib_preset_info pi = {.preset_text = text, .vf_text = vf_text, .data_path = o->path,
                                   .tc_fp8_stderr_rel = rel8,
                                   .command = o->command, .fitted_rows = r->used,
                                   .in_sample = &r->after, .few_shot = few_note,
                                   .kept = kept_note,
                                   .held_out = !r->held ? NULL : held_names ? held_names
                                                                            : o->holdout,
                                   .held_out_rows = r->held,
                                   .held_out_metrics = r->has_held_out ? &r->held_out : NULL};
        wl_calib_write_preset(wl_results_out_stream(out), &r->fitted, info, &pi);
        rc = wl_results_out_commit(out, err);
        out = NULL;
        if (rc)
            goto done;
        r->gpu_written = o->out;
        if (o->host && !r->host_fitted)
            say(&c, "note: fitted with host %s; the preset names its own host class (predict "
                    "with --host %s for the machine these rows came from)", gpu.host_id, o->host);
    }
done:
    wl_results_out_abort(out);
    wl_core_strlist_free(&held_out);
    free(train);
    free(test);
    free(fold);
    free(file_text);
    free(vf_text);
    free(few_note);
    free(held_names);
    free(kept_note);
    wl_calib_problem_free(p);
    wl_calib_free(set);
    return rc;
}
