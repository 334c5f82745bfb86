/* wattlas._wattlas: _calibrate, _learn, _plot and _report, the commands
 * that fit, draw and write files, as the command line runs them. */
#include "wattlas_py.h"

#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines said by a run, kept in a memory stream (no Python calls while the
 * GIL is released). */
static void say_line(void *user, const char *line)
{
    FILE *f = user;
    if (f)
        fprintf(f, "%s\n", line);
}

/* A str of the lines of f, a memory stream over *buf and *len (NULL with
 * an exception set); closes f and frees the buffer. */
static PyObject *said(FILE *f, char **buf, size_t *len)
{
    PyObject *s = NULL;
    if (fclose(f) == 0)
        s = PyUnicode_DecodeUTF8(*buf ? *buf : "", *buf ? (Py_ssize_t)*len : 0, "replace");
    else
        PyErr_NoMemory();
    free(*buf);
    *buf = NULL;
    return s;
}

static PyObject *metrics_dict(const wl_calib_metrics *m, int have)
{
    if (!have)
        Py_RETURN_NONE;
    return Py_BuildValue("{s:n,s:n,s:d,s:d,s:d,s:d,s:d,s:s}", "rows", (Py_ssize_t)m->n,
                         "rows_power", (Py_ssize_t)m->n_power, "mape_time_pct", m->mape_time,
                         "mape_power_pct", m->n_power ? m->mape_power : NAN, "mape_energy_pct",
                         m->n_power ? m->mape_energy : NAN, "worst_regret_pct",
                         m->n_regret ? m->worst_regret : NAN, "mean_regret_pct",
                         m->n_regret ? m->mean_regret : NAN, "worst_regret_workload",
                         m->n_regret ? m->worst_regret_workload : "");
}

/* _calibrate(path, gpu, out, host, idle, traces, holdout, fit, host_out,
 *            kfold, lomo, quiet, prior_weight, from_preset, transfer_sd,
 *            command, vf) -> (log, summary, coefficients)
 * As 'wattlas calibrate': coefficients a list of (name, before, after,
 * stderr, fitted). */
PyObject *wl_py_calibrate(PyObject *self, PyObject *args)
{
    (void)self;
    wl_calib_run_options o;
    wl_calib_run_options_default(&o);
    double prior_weight, transfer_sd;
    int kfold, lomo, quiet, from_preset;
    const char *vf = NULL;
    if (!PyArg_ParseTuple(args, "sszzzzzzzippddpzz", &o.path, &o.gpu, &o.out, &o.host, &o.idle,
                          &o.traces, &o.holdout, &o.fit, &o.host_out, &kfold, &lomo, &quiet,
                          &prior_weight, &from_preset, &transfer_sd, &o.command, &vf))
        return NULL;
    if (vf && strcmp(vf, "rows") && strcmp(vf, "keep")) {
        wl_error e = {0};
        wl_error_set(&e, "vf", 0, "", "expected rows or keep, got '%.40s'", vf);
        return wl_py_raise(WL_EINVAL, &e);
    }
    o.vf_keep = vf && !strcmp(vf, "keep");
    o.kfold = kfold;
    o.lomo = lomo;
    o.quiet = quiet;
    if (prior_weight >= 0)
        o.fit_options.prior_weight = prior_weight;
    if (transfer_sd > 0)
        o.fit_options.transfer_rel = transfer_sd;
    if (from_preset)
        o.fit_options.from_defaults = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    o.say = say_line;
    o.user = f;
    wl_calib_run_result *r = malloc(sizeof *r);
    if (!r) {
        fclose(f);
        free(buf);
        return PyErr_NoMemory();
    }
    wl_error err = {0};
    int rc;
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    rc = wl_calib_run(&o, r, &err);
    Py_END_ALLOW_THREADS
    int stopped = wl_py_stop_end(&stop);
    PyObject *log = said(f, &buf, &len), *res = NULL, *coefs = NULL, *summary = NULL;
    if (rc || stopped) {
        Py_XDECREF(log);
        free(r);
        return stopped ? NULL : wl_py_raise(rc, &err);
    }
    if (!log || !(coefs = PyList_New(0)))
        goto done;
    for (int i = 0; i < wl_calib_param_count(); i++) {
        const char *name = wl_calib_param_name(i);
        double v0 = NAN, v1 = NAN;
        wl_preset_gpu_get(&r->gpu, name, &v0);
        wl_preset_gpu_get(&r->fitted, name, &v1);
        int fitted = (int)(r->info.fitted >> i & 1ull);
        PyObject *row = Py_BuildValue("(sdddO)", name, v0, v1,
                                      r->info.unc.valid ? r->stderr_of[i] : NAN,
                                      fitted ? Py_True : Py_False);
        if (!row || PyList_Append(coefs, row)) {
            Py_XDECREF(row);
            goto done;
        }
        Py_DECREF(row);
    }
    summary = Py_BuildValue(
        "{s:n,s:n,s:n,s:n,s:N,s:N,s:N,s:N,s:N,s:i,s:d,s:d,s:O,s:O,s:z,s:z}", "rows",
        (Py_ssize_t)r->rows, "excluded", (Py_ssize_t)r->excluded, "fitted_rows",
        (Py_ssize_t)r->used, "held_out_rows", (Py_ssize_t)r->held, "before",
        metrics_dict(&r->before, 1), "after", metrics_dict(&r->after, 1), "held_out",
        metrics_dict(&r->held_out, r->has_held_out), "kfold",
        metrics_dict(&r->kfold, r->kfold_folds > 0), "lomo",
        metrics_dict(&r->lomo, r->lomo_folds > 0), "iterations", r->info.iterations,
        "cost_initial", r->info.cost_initial, "cost_final", r->info.cost_final, "few_shot",
        r->few_shot ? Py_True : Py_False, "host_fitted", r->host_fitted ? Py_True : Py_False,
        "gpu_written", r->gpu_written, "host_written", r->host_written);
    if (summary)
        res = Py_BuildValue("(OOO)", log, summary, coefs);
done:
    Py_XDECREF(log);
    Py_XDECREF(coefs);
    Py_XDECREF(summary);
    free(r);
    return res;
}

static PyObject *cv_dict(const wl_learn_cv *cv)
{
    if (!cv->folds)
        Py_RETURN_NONE;
    return Py_BuildValue("{s:i,s:n,s:d,s:d,s:d,s:d,s:d,s:d}", "folds", cv->folds, "rows",
                         (Py_ssize_t)cv->rows, "learned_time_pct", cv->learned[0],
                         "learned_power_pct", cv->learned[1], "learned_energy_pct",
                         cv->learned[2], "analytical_time_pct", cv->analytical[0],
                         "analytical_power_pct", cv->analytical[1], "analytical_energy_pct",
                         cv->analytical[2]);
}

/* _learn(path, out, importance, kind, hybrid, trees, max_depth, seed, gpu,
 *        host, beside, kfold, lomo, random_split, refit) -> (log, summary)
 * As 'wattlas learn'. */
PyObject *wl_py_learn(PyObject *self, PyObject *args)
{
    (void)self;
    wl_learn_run_options o;
    wl_learn_run_options_default(&o);
    const char *kind;
    int hybrid, trees, depth, beside, kfold, lomo, random_split, refit;
    unsigned long seed;
    if (!PyArg_ParseTuple(args, "sszspiikzzpippp", &o.path, &o.out, &o.importance, &kind,
                          &hybrid, &trees, &depth, &seed, &o.data.gpu, &o.data.host, &beside,
                          &kfold, &lomo, &random_split, &refit))
        return NULL;
    wl_error err = {0};
    if (wl_learn_kind_parse(kind, &o.learn.kind)) {
        wl_error_set(&err, "kind", 0, "kind", "expected rf or gbt, got '%.60s'", kind);
        return wl_py_raise(WL_EINVAL, &err);
    }
    if (trees < 0 || trees > 5000 || depth < 0 || depth > 16 || seed > 4294967295ul) {
        wl_error_set(&err, trees < 0 || trees > 5000 ? "trees" : depth < 0 || depth > 16
                                                                  ? "max_depth" : "seed", 0, "",
                     "out of range (trees 1 to 5000, max_depth 1 to 16, seed below 2^32)");
        return wl_py_raise(WL_EINVAL, &err);
    }
    o.learn.hybrid = hybrid;
    o.learn.trees = trees;
    o.learn.max_depth = depth;
    o.learn.seed = (unsigned)seed;
    o.data.beside = beside;
    o.kfold = kfold;
    o.lomo = lomo;
    o.random_split = random_split;
    o.no_refit = !refit;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    o.say = say_line;
    o.user = f;
    wl_learn_run_result r;
    int rc;
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    rc = wl_learn_run(&o, &r, &err);
    Py_END_ALLOW_THREADS
    int stopped = wl_py_stop_end(&stop);
    PyObject *log = said(f, &buf, &len);
    if (rc || stopped) {
        Py_XDECREF(log);
        return stopped ? NULL : wl_py_raise(rc, &err);
    }
    if (!log)
        return NULL;
    return Py_BuildValue("(N{s:n,s:N,s:N,s:N,s:s})", log, "rows", (Py_ssize_t)r.rows,
                         "workload", cv_dict(&r.workload), "model", cv_dict(&r.model), "random",
                         cv_dict(&r.random), "description", r.description);
}

/* _plot(kind, path, text, source, out, options) -> None
 * As 'wattlas plot KIND': the table a file path or CSV text named source
 * (a trace's path for timeline); options a dict of the kind and style
 * options by their command-line names (underscores for dashes). */
PyObject *wl_py_plot(PyObject *self, PyObject *args)
{
    (void)self;
    const char *kname, *path, *text, *source, *out;
    Py_ssize_t tlen;
    PyObject *opts;
    if (!PyArg_ParseTuple(args, "szz#ssO!", &kname, &path, &text, &tlen, &source, &out,
                          &PyDict_Type, &opts))
        return NULL;
    wl_error err = {0};
    const wl_plot_kind *kind = wl_plot_kind_find(kname);
    if (!kind) {
        wl_error_set(&err, "kind", 0, "kind", "unknown figure kind '%.60s' (wattlas plot "
                                              "--help lists them)", kname);
        return wl_py_raise(WL_EINVAL, &err);
    }
    wl_plot_options o;
    wl_plot_options_default(&o);
    wl_plot_kind_options k = {0};
    static const struct {
        const char *key;
        size_t off;
        int style; /* in o, else in k */
    } texts[] = {{"title", offsetof(wl_plot_options, title), 1},
                 {"palette", offsetof(wl_plot_options, palette), 1},
                 {"panels", offsetof(wl_plot_kind_options, panels), 0},
                 {"objective", offsetof(wl_plot_kind_options, objective), 0},
                 {"facet", offsetof(wl_plot_kind_options, facet), 0},
                 {"x", offsetof(wl_plot_kind_options, x), 0},
                 {"y", offsetof(wl_plot_kind_options, y), 0},
                 {"z", offsetof(wl_plot_kind_options, z), 0},
                 {"reduce", offsetof(wl_plot_kind_options, reduce), 0},
                 {"metric", offsetof(wl_plot_kind_options, metric), 0},
                 {"against", offsetof(wl_plot_kind_options, against), 0}};
    static const struct {
        const char *key;
        size_t off;
        int style;
    } flags[] = {{"log_x", offsetof(wl_plot_options, log_x), 1},
                 {"log_y", offsetof(wl_plot_options, log_y), 1},
                 {"linear", offsetof(wl_plot_options, linear), 1},
                 {"edp", offsetof(wl_plot_kind_options, edp), 0},
                 {"normalize", offsetof(wl_plot_kind_options, normalize), 0},
                 {"show_infeasible", offsetof(wl_plot_kind_options, show_infeasible), 0}};
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(opts, &pos, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (!name)
            return NULL;
        int done = 0;
        for (size_t i = 0; !done && i < sizeof texts / sizeof *texts; i++) {
            if (strcmp(name, texts[i].key))
                continue;
            const char *v = PyUnicode_AsUTF8(value);
            if (!v) {
                PyErr_Clear();
                wl_error_set(&err, name, 0, name, "expected text");
                return wl_py_raise(WL_EINVAL, &err);
            }
            *(const char **)((char *)(texts[i].style ? (void *)&o : (void *)&k) + texts[i].off) = v;
            done = 1;
        }
        for (size_t i = 0; !done && i < sizeof flags / sizeof *flags; i++) {
            if (strcmp(name, flags[i].key))
                continue;
            int v = PyObject_IsTrue(value);
            if (v < 0)
                return NULL;
            *(int *)((char *)(flags[i].style ? (void *)&o : (void *)&k) + flags[i].off) = v;
            done = 1;
        }
        if (done)
            continue;
        if (!strcmp(name, "stack")) {
            const char *v = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
            int t = v ? -1 : PyObject_IsTrue(value);
            k.stack = v ? (!strcmp(v, "parts") ? WL_PLOT_STACK_PARTS
                           : !strcmp(v, "phases") ? WL_PLOT_STACK_PHASES : -1)
                        : t > 0 ? WL_PLOT_STACK_PARTS : WL_PLOT_STACK_NONE;
            if (k.stack < 0) {
                wl_error_set(&err, "stack", 0, "stack", "expected parts, phases or True");
                return wl_py_raise(WL_EINVAL, &err);
            }
        } else if (!strcmp(name, "legend")) {
            const char *v = PyUnicode_AsUTF8(value);
            if (!v || wl_plot_legend_parse(v, &o.legend)) {
                PyErr_Clear();
                wl_error_set(&err, "legend", 0, "legend", "expected outside, inside or none");
                return wl_py_raise(WL_EINVAL, &err);
            }
        } else if (!strcmp(name, "dpi") || !strcmp(name, "width_in") ||
                   !strcmp(name, "height_in")) {
            double v = PyFloat_AsDouble(value);
            int dpi = !strcmp(name, "dpi");
            if (PyErr_Occurred() || !(v >= (dpi ? 10 : 0.5)) || !(v <= (dpi ? 2400 : 100))) {
                PyErr_Clear();
                wl_error_set(&err, name, 0, name, "expected a number %s", dpi ? "from 10 to 2400"
                                                                             : "of inches, 0.5 to 100");
                return wl_py_raise(WL_EINVAL, &err);
            }
            *(dpi ? &o.dpi : !strcmp(name, "width_in") ? &o.width_in : &o.height_in) = v;
        } else {
            wl_error_set(&err, name, 0, name, "not an option of wattlas.plot");
            return wl_py_raise(WL_EINVAL, &err);
        }
    }
    wl_results_table *t = NULL;
    int rc = WL_OK;
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    if (!path && !kind->file_fn)
        rc = wl_results_table_load_mem(text, (size_t)tlen, source, &t, &err);
    if (!rc)
        rc = wl_plot_draw(kind, t, path, &k, &o, out, &err);
    Py_END_ALLOW_THREADS
    wl_results_table_free(t);
    if (wl_py_stop_end(&stop))
        return NULL;
    if (rc)
        return wl_py_raise(rc, &err);
    Py_RETURN_NONE;
}

/* _report(items, spec, out, threads, command) -> {points, figures, learned_outside}
 * As 'wattlas report': a study from a spec file and sweep keys. */
PyObject *wl_py_report(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *items;
    const char *spec_path, *dir, *command;
    int threads;
    if (!PyArg_ParseTuple(args, "Ozsiz", &items, &spec_path, &dir, &threads, &command))
        return NULL;
    wl_plot_report_options ro = {.command = command, .spec_path = spec_path, .threads = threads};
    wl_plot_report_stats st;
    wl_error err = {0};
    int rc;
    if (spec_path && PyObject_Length(items) == 0 && wl_plot_study_is_serve(spec_path)) {
        /* a serving study: its [serve] section is the whole study */
        wl_py_stop stop;
        wl_py_stop_begin(&stop);
        Py_BEGIN_ALLOW_THREADS
        rc = wl_plot_serve_report(spec_path, dir, &ro, &st, &err);
        Py_END_ALLOW_THREADS
        if (wl_py_stop_end(&stop))
            return NULL;
        if (rc)
            return wl_py_raise(rc, &err);
        return Py_BuildValue("{s:K,s:n,s:K}", "points", st.points, "figures",
                             (Py_ssize_t)st.figures, "learned_outside", st.learned_outside);
    }
    PyErr_Clear(); /* PyObject_Length of a non-sequence: the spec builder says */
    wl_sweep_spec *s = wl_py_build_spec(items, spec_path, 0);
    if (!s)
        return NULL;
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    rc = wl_plot_report(s, dir, &ro, &st, &err);
    Py_END_ALLOW_THREADS
    wl_sweep_spec_free(s);
    if (wl_py_stop_end(&stop))
        return NULL;
    if (rc)
        return wl_py_raise(rc, &err);
    return Py_BuildValue("{s:K,s:n,s:K}", "points", st.points, "figures",
                         (Py_ssize_t)st.figures, "learned_outside", st.learned_outside);
}

