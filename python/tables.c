/* The methods of wattlas._wattlas that read and write tables: pareto and
 * optimize (and clock schedules), validate, energy-check, merge and
 * derive-vf. */
#include "wattlas_py.h"
#include "../serve/wattlas_serve.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pareto set from a file (path) or CSV text (named source). */
static int load_set(const char *path, const char *text, Py_ssize_t tlen, const char *source,
                    const wl_pareto_load_options *lo, wl_pareto_set **s, wl_error *err)
{
    if (path)
        return wl_pareto_set_load(path, lo, s, err);
    wl_results_table *t = NULL;
    int rc = wl_results_table_load_mem(text, (size_t)tlen, source, &t, err);
    if (!rc)
        rc = wl_pareto_set_from_table(t, lo, s, err);
    wl_results_table_free(t);
    return rc;
}

/* A clock schedule per group of the table (path, or CSV text named
 * source), as 'wattlas optimize --schedule[=by] --switch-us' prints it. */
static PyObject *schedules(const char *path, const char *text, Py_ssize_t tlen,
                           const char *source, const char *by_name, int all,
                           const wl_pareto_objective *obj, double switch_us, const char *fmt)
{
    wl_error err = {0};
    wl_pareto_schedule_by by = !strcmp(by_name, "class")   ? WL_PARETO_BY_CLASS
                               : !strcmp(by_name, "phase") ? WL_PARETO_BY_PHASE
                               : !strcmp(by_name, "auto")  ? WL_PARETO_BY_AUTO
                                                           : (wl_pareto_schedule_by)-2;
    if ((int)by == -2) {
        wl_error_set(&err, "schedule", 0, "schedule", "expected class, phase or True, got '%.60s'",
                     by_name);
        return wl_py_raise(WL_EINVAL, &err);
    }
    if (!wl_pareto_schedule_supports(obj)) {
        wl_error_set(&err, "objective", 0, "objective",
                     "schedule supports the energy and energy-within-slowdown=P objectives");
        return wl_py_raise(WL_EINVAL, &err);
    }
    if (!(switch_us >= 0 && switch_us <= 1e6)) {
        wl_error_set(&err, "switch_us", 0, "switch_us", "expected 0 to 1e6 microseconds");
        return wl_py_raise(WL_EINVAL, &err);
    }
    wl_results_csv *csv = NULL;
    wl_pareto_set *s = NULL;
    wl_py_collect c = {0};
    PyObject *res = NULL;
    int rc = path ? wl_results_csv_open(path, &csv, &err)
                  : wl_results_csv_open_mem(text, (size_t)tlen, source, &csv, &err);
    if (!rc) {
        wl_pareto_load_options lo = wl_pareto_schedule_load_options(
            &by, wl_results_csv_col(csv, "kernel_class") >= 0, all);
        Py_BEGIN_ALLOW_THREADS
        rc = wl_pareto_set_read(csv, &lo, &s, &err);
        Py_END_ALLOW_THREADS
        if (rc && !strcmp(err.text, "no such column"))
            strncat(err.text, " (schedule='class' needs a sweep with kernels=True)",
                    sizeof err.text - strlen(err.text) - 1);
    }
    wl_results_csv_close(csv);
    if (rc) {
        wl_py_raise(rc, &err);
        goto done;
    }
    wl_results_col cols[WL_PARETO_KEYED_MAX];
    size_t nc = wl_pareto_schedule_cols(s, cols, WL_PARETO_KEYED_MAX);
    if (!nc) {
        PyErr_SetString(wl_py_error_class(), "group_by: too many columns");
        goto done;
    }
    if (wl_py_collect_open(&c, fmt, cols, nc))
        goto done;
    rc = wl_pareto_schedules(s, obj, by, switch_us, c.w, &err);
    res = wl_py_collect_close(&c, !rc);
    if (rc && !PyErr_Occurred())
        wl_py_raise(rc, &err);
done:
    if (c.f)
        wl_py_collect_close(&c, 0);
    wl_pareto_set_free(s);
    return res;
}

/* _energy_check(gpu, dtypes, fmt) -> str: as 'wattlas energy-check' prints it. */
PyObject *wl_py_energy_check(PyObject *self, PyObject *args)
{
    (void)self;
    const char *gpu, *dtypes, *fmt;
    if (!PyArg_ParseTuple(args, "szs", &gpu, &dtypes, &fmt))
        return NULL;
    wl_results_col cols[WL_SWEEP_ENERGY_CHECK_COLS];
    size_t nc = wl_sweep_energy_check_cols(cols);
    wl_py_collect c = {0};
    if (wl_py_collect_open(&c, fmt, cols, nc))
        return c.f ? wl_py_collect_close(&c, 0) : NULL;
    wl_error err = {0};
    int rc = wl_sweep_energy_check(gpu, dtypes, c.w, &err);
    if (rc) {
        wl_py_collect_close(&c, 0);
        return wl_py_raise(rc, &err);
    }
    return wl_py_collect_close(&c, 1);
}

/* _merge(paths, out) -> str or None: the shards of one sweep joined, into
 * the file out (written atomically) or returned as text. */
/* (what, path) pairs of a sequence into v (n entries; strings borrowed
 * from the tuples, which seq holds) */
static int path_pairs(PyObject *seq, wl_results_path *v, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2) {
            PyErr_SetString(PyExc_TypeError, "expected (what, path) pairs");
            return -1;
        }
        if (!(v[i].what = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0))) ||
            !(v[i].path = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 1))))
            return -1;
    }
    return 0;
}

/* _paths_distinct(inputs, outputs): wl_results_paths_distinct over (what,
 * path) pairs; raises the usage error naming both. */
PyObject *wl_py_paths_distinct(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ins, *outs;
    if (!PyArg_ParseTuple(args, "OO", &ins, &outs))
        return NULL;
    PyObject *si = PySequence_Fast(ins, "inputs: expected a list"), *so = NULL, *res = NULL;
    wl_results_path *vi = NULL, *vo = NULL;
    if (!si || !(so = PySequence_Fast(outs, "outputs: expected a list")))
        goto done;
    Py_ssize_t ni = PySequence_Fast_GET_SIZE(si), no = PySequence_Fast_GET_SIZE(so);
    vi = calloc((size_t)ni + 1, sizeof *vi);
    vo = calloc((size_t)no + 1, sizeof *vo);
    if (!vi || !vo) {
        PyErr_NoMemory();
        goto done;
    }
    if (path_pairs(si, vi, ni) || path_pairs(so, vo, no))
        goto done;
    wl_error err = {0};
    int rc = wl_results_paths_distinct(vi, (size_t)ni, vo, (size_t)no, &err);
    res = rc ? wl_py_raise(rc, &err) : Py_NewRef(Py_None);
done:
    free(vi);
    free(vo);
    Py_XDECREF(si);
    Py_XDECREF(so);
    return res;
}

PyObject *wl_py_merge(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *paths;
    const char *out = NULL;
    if (!PyArg_ParseTuple(args, "Oz", &paths, &out))
        return NULL;
    PyObject *seq = PySequence_Fast(paths, "shards: expected a list of file names");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const char **v = calloc((size_t)n + 1, sizeof *v);
    PyObject *res = NULL;
    wl_error err = {0};
    if (!v) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(v[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i))))
            goto done;
    if (n < 1 || n > INT_MAX) {
        wl_error_set(&err, "shards", 0, "shards", "expected the shard files of one sweep");
        wl_py_raise(WL_EINVAL, &err);
        goto done;
    }
    int rc;
    if (out) {
        wl_results_out *o = NULL;
        wl_py_stop stop;
        wl_py_stop_begin(&stop);
        Py_BEGIN_ALLOW_THREADS
        rc = wl_results_out_open(out, &o, &err);
        if (!rc && (rc = wl_sweep_merge(v, (int)n, wl_results_out_stream(o), &err)))
            wl_results_out_abort(o);
        else if (!rc)
            rc = wl_results_out_commit(o, &err);
        Py_END_ALLOW_THREADS
        if (wl_py_stop_end(&stop))
            ; /* KeyboardInterrupt set; the output left as it was */
        else if (rc)
            wl_py_raise(rc, &err);
        else
            res = Py_NewRef(Py_None);
    } else {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) {
            PyErr_NoMemory();
            goto done;
        }
        wl_py_stop stop;
        wl_py_stop_begin(&stop);
        Py_BEGIN_ALLOW_THREADS
        rc = wl_sweep_merge(v, (int)n, f, &err);
        Py_END_ALLOW_THREADS
        int stopped = wl_py_stop_end(&stop);
        if (fclose(f) && !rc) {
            wl_error_set(&err, "merge", 0, "", "could not collect the rows");
            rc = WL_EIO;
        }
        if (stopped)
            ; /* KeyboardInterrupt set */
        else if (rc)
            wl_py_raise(rc, &err);
        else
            res = PyUnicode_DecodeUTF8(text ? text : "", (Py_ssize_t)len, "strict");
        free(text);
    }
done:
    free(v);
    Py_DECREF(seq);
    return res;
}

/* _select(what, path, text, source, values, group_by, all, objective, fmt,
 *         schedule, switch_us) -> str
 * what "pareto": the fronts over the value columns (a list of names);
 * what "optimize": the savings table at objective, values (time, power,
 * energy columns), or with schedule (class, phase, auto) the clock
 * schedules. The table is the file path, or the CSV text named source. As
 * 'wattlas pareto' and 'wattlas optimize' print them. */
PyObject *wl_py_select(PyObject *self, PyObject *args)
{
    (void)self;
    const char *what, *path, *text, *source, *group_by, *objective, *fmt, *schedule = NULL;
    Py_ssize_t tlen;
    PyObject *values;
    int all, by_class = 0;
    double switch_us = 20;
    if (!PyArg_ParseTuple(args, "szz#sOzpzs|zdp", &what, &path, &text, &tlen, &source, &values,
                          &group_by, &all, &objective, &fmt, &schedule, &switch_us, &by_class))
        return NULL;
    int optimize = !strcmp(what, "optimize");
    PyObject *seq = PySequence_Fast(values, "values: expected a list of column names");
    if (!seq)
        return NULL;
    Py_ssize_t nv = PySequence_Fast_GET_SIZE(seq);
    const char *names[16];
    if (nv < 1 || nv > (optimize ? 3 : 15)) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "values: expected 1 to 15 column names");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nv; i++)
        if (!(names[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) {
            Py_DECREF(seq);
            return NULL;
        }
    if (optimize)
        names[nv++] = "sm_clock_mhz";
    wl_error err = {0};
    wl_pareto_objective obj;
    int rc = optimize ? wl_pareto_objective_parse(objective ? objective : "", &obj, &err) : WL_OK;
    if (rc) {
        wl_error_locate(&err, "objective", 0);
        snprintf(err.field, sizeof err.field, "objective");
        Py_DECREF(seq);
        return wl_py_raise(rc, &err);
    }
    if (optimize && schedule) {
        Py_DECREF(seq);
        return schedules(path, text, tlen, source, schedule, all, &obj, switch_us, fmt);
    }
    wl_pareto_load_options lo = {.values = names, .nvalues = (size_t)nv, .group_by = group_by,
                                 .keep_infeasible = all, .keep_fields = !optimize,
                                 .collapse = !all, .voltage_groups = optimize,
                                 .class_values = optimize && by_class};
    wl_pareto_set *s = NULL;
    PyObject *res = NULL;
    wl_results_col *cols = NULL;
    wl_py_collect c = {0};
    Py_BEGIN_ALLOW_THREADS
    rc = load_set(path, text, tlen, source, &lo, &s, &err);
    Py_END_ALLOW_THREADS
    if (rc) {
        wl_py_raise(rc, &err);
        goto done;
    }
    if (optimize) {
        wl_results_col sc[WL_PARETO_KEYED_MAX];
        size_t nc = wl_pareto_savings_cols(s, sc, WL_PARETO_KEYED_MAX);
        if (!nc) {
            PyErr_SetString(wl_py_error_class(),
                            "group_by: too many columns");
            goto done;
        }
        if (wl_py_collect_open(&c, fmt, sc, nc))
            goto done;
        rc = wl_pareto_savings_rows(s, &obj, c.w);
    } else {
        if (!(cols = calloc(wl_pareto_set_ncols(s) + 1, sizeof *cols))) {
            PyErr_NoMemory();
            goto done;
        }
        size_t nc = wl_pareto_front_cols(s, cols);
        if (wl_py_collect_open(&c, fmt, cols, nc))
            goto done;
        rc = wl_pareto_front_rows(s, c.w);
    }
    res = wl_py_collect_close(&c, !rc);
    if (rc && !PyErr_Occurred())
        PyErr_NoMemory();
done:
    if (c.f)
        wl_py_collect_close(&c, 0);
    free(cols);
    wl_pareto_set_free(s);
    Py_DECREF(seq);
    return res;
}

/* _validate(path, gpu, host, traces, level, beside, fmt) -> (str, summary)
 * As 'wattlas validate': the rows with their predictions, and the pooled
 * figures as a dict. */
/* Per GPU of a validation: its metrics with the preset's coefficients
 * (MAPE, the energy-optimal clock's regret) and, with lomo, the pooled
 * leave-one-model-out refits', as 'wattlas validate' prints them. */
static PyObject *validation_gpus(wl_calib_validation *v, int lomo)
{
    PyObject *out = PyDict_New();
    size_t ng = wl_calib_validation_gpus(v);
    for (size_t k = 0; out && k < ng; k++) {
        wl_calib_problem *p = wl_calib_validation_problem(v, k);
        const wl_core_gpu *g = wl_calib_validation_gpu(v, k);
        wl_calib_metrics m;
        if (wl_calib_score(p, NULL, &m) != WL_OK || !m.n)
            continue;
        PyObject *d = Py_BuildValue(
            "{s:n,s:d,s:d,s:d,s:n,s:d,s:d,s:s}", "scored", (Py_ssize_t)m.n, "mape_time_pct",
            m.mape_time, "mape_power_pct", m.mape_power, "mape_energy_pct", m.mape_energy,
            "regret_workloads", (Py_ssize_t)m.n_regret, "regret_worst_pct",
            m.n_regret ? m.worst_regret : NAN, "regret_mean_pct", m.n_regret ? m.mean_regret : NAN,
            "coefficients", g->coef_source[0] ? g->coef_source : "own");
        /* leave one model out: refit without each, score it (only on a
         * GPU's own coefficients, as the command line does) */
        size_t n = wl_calib_count(wl_calib_problem_set(p));
        int *fold = lomo && !g->coef_source[0] ? malloc((n ? n : 1) * sizeof *fold) : NULL;
        if (d && fold) {
            char names[64][64];
            wl_calib_metrics per[64], pooled;
            int nf = wl_calib_folds_by_model(p, fold, names, 64), rc = WL_EINVAL;
            if (nf >= 2) {
                wl_calib_fit_options fo;
                wl_calib_fit_options_default(&fo);
                Py_BEGIN_ALLOW_THREADS
                rc = wl_calib_crossval(p, fold, nf, &fo, &pooled, per);
                Py_END_ALLOW_THREADS
            }
            PyObject *l = rc == WL_OK
                              ? Py_BuildValue("{s:n,s:d,s:d,s:d,s:d,s:d}", "scored",
                                              (Py_ssize_t)pooled.n, "mape_time_pct",
                                              pooled.mape_time, "mape_power_pct",
                                              pooled.mape_power, "mape_energy_pct",
                                              pooled.mape_energy, "regret_worst_pct",
                                              pooled.worst_regret, "regret_mean_pct",
                                              pooled.mean_regret)
                              : Py_NewRef(Py_None);
            if (!l || PyDict_SetItemString(d, "lomo", l)) {
                Py_CLEAR(d);
            }
            Py_XDECREF(l);
        }
        free(fold);
        if (!d || PyDict_SetItemString(out, g->id, d)) {
            Py_XDECREF(d);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(d);
    }
    return out;
}

PyObject *wl_py_validate(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path, *gpu, *host, *traces, *fmt, *board = NULL, *learned = NULL;
    double level;
    int beside, lomo = 0;
    PyObject *idle = Py_None;
    if (!PyArg_ParseTuple(args, "szzzdps|zOzp", &path, &gpu, &host, &traces, &level, &beside,
                          &fmt, &board, &idle, &learned, &lomo))
        return NULL;
    wl_calib_validation_options vo = {.traces_dir = traces, .gpu = gpu, .host = host,
                                      .beside = beside, .level = level};
    wl_error err = {0};
    if (board) {
        if (!strcmp(board, "same"))
            vo.board = WL_CALIB_BOARD_SAME;
        else if (!strcmp(board, "other"))
            vo.board = WL_CALIB_BOARD_OTHER;
        else {
            wl_error_set(&err, "board", 0, "board", "expected same or other, got '%.40s'", board);
            return wl_py_raise(WL_EINVAL, &err);
        }
    }
    const char *specs[16];
    if (idle != Py_None) {
        PyObject *seq = PySequence_Fast(idle, "idle: expected a list of [ID=]TABLE.csv");
        if (!seq)
            return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n > 16) {
            Py_DECREF(seq);
            wl_error_set(&err, "idle", 0, "idle", "at most 16 idle tables");
            return wl_py_raise(WL_EINVAL, &err);
        }
        for (Py_ssize_t i = 0; i < n; i++)
            if (!(specs[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) {
                Py_DECREF(seq);
                return NULL;
            }
        vo.idle_specs = specs;
        vo.n_idle = (size_t)n;
        /* the strings live as long as idle does: the caller's list */
        Py_DECREF(seq);
    }
    wl_learn_model *lm = NULL;
    wl_learn_tally lt = {0};
    if (learned && wl_learn_model_load(learned, &lm, &err))
        return wl_py_raise(WL_EPARSE, &err);
    wl_calib_validation *v = NULL;
    int rc;
    /* Ctrl-C stops the rows and the refits (wl_py_stop) */
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    rc = wl_calib_validation_create(path, &vo, &v, &err);
    Py_END_ALLOW_THREADS
    if (rc || wl_stop_requested()) {
        wl_learn_model_free(lm);
        wl_calib_validation_free(v);
        return wl_py_stop_end(&stop) ? NULL : wl_py_raise(rc, &err);
    }
    size_t nc;
    const wl_results_col *cols = wl_calib_validation_cols(v, &nc);
    wl_py_collect c;
    PyObject *text = NULL, *res = NULL, *gpus = NULL;
    wl_results_cell *cells = calloc(nc + 1, sizeof *cells);
    if (!cells) {
        PyErr_NoMemory();
        goto done;
    }
    if (wl_py_collect_open(&c, fmt, cols, nc))
        goto done;
    const wl_calib_set *set = wl_calib_validation_set(v);
    int wrc = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; !wrc && i < wl_calib_count(set) && !wl_stop_requested(); i++) {
        const char *why = NULL;
        if (lm)
            wl_learn_validation_row(lm, v, i, cells, &why, &lt);
        else
            wl_calib_validation_row(v, i, cells, &why);
        wrc = wl_results_writer_row(c.w, cells);
    }
    Py_END_ALLOW_THREADS
    if (!(text = wl_py_collect_close(&c, !wrc && !wl_stop_requested())))
        goto done;
    wl_calib_validation_summary sm;
    wl_calib_validation_counts(v, &sm);
    if (!sm.scored) {
        wl_error_set(&err, path, 0, "", "no row could be scored");
        wl_py_raise(WL_EINVAL, &err);
        goto done;
    }
    if (!(gpus = validation_gpus(v, lomo)) || wl_stop_requested())
        goto done;
    double ns = lt.scored ? (double)lt.scored : NAN;
    res = Py_BuildValue("(O{s:n,s:n,s:n,s:n,s:d,s:d,s:d,s:O,s:d,s:d,s:d,s:d,s:d,s:d,s:n})",
                        text, "scored", (Py_ssize_t)sm.scored, "scored_power",
                        (Py_ssize_t)sm.scored_power, "not_modelled", (Py_ssize_t)sm.not_modelled,
                        "traced", (Py_ssize_t)sm.traced, "mape_time_pct", sm.mape_time,
                        "mape_power_pct", sm.mape_power, "mape_energy_pct", sm.mape_energy,
                        "gpus", gpus, "coverage_time_pct",
                        sm.covered ? sm.coverage_pct[0] : NAN, "coverage_power_pct",
                        sm.covered ? sm.coverage_pct[1] : NAN, "coverage_energy_pct",
                        sm.covered ? sm.coverage_pct[2] : NAN, "learned_mape_time_pct",
                        100 * lt.ape_learned[0] / ns, "learned_mape_power_pct",
                        100 * lt.ape_learned[1] / ns, "learned_mape_energy_pct",
                        100 * lt.ape_learned[2] / ns, "learned_outside", (Py_ssize_t)lt.outside);
done:
    Py_XDECREF(text);
    Py_XDECREF(gpus);
    free(cells);
    wl_calib_validation_free(v);
    wl_learn_model_free(lm);
    if (wl_py_stop_end(&stop))
        Py_CLEAR(res); /* KeyboardInterrupt is set */
    return res;
}

/* _derive_vf(idle_csv, step_mhz) -> the [vf] section's text */
PyObject *wl_py_derive_vf(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    double step;
    if (!PyArg_ParseTuple(args, "sd", &path, &step))
        return NULL;
    wl_error err = {0};
    if (!(step >= 1e-3 && step <= 100000)) {
        wl_error_set(&err, "step_mhz", 0, "step_mhz", "expected 0.001 to 100000 MHz");
        return wl_py_raise(WL_EINVAL, &err);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return PyErr_NoMemory();
    int rc = wl_preset_derive_vf(path, step, f, &err);
    if (fclose(f) && !rc) {
        wl_error_set(&err, path, 0, "", "could not collect the text");
        rc = WL_EIO;
    }
    PyObject *res = rc ? wl_py_raise(rc, &err)
                       : PyUnicode_DecodeUTF8(text ? text : "", (Py_ssize_t)len, "strict");
    free(text);
    return res;
}


/* A finished serving job from (key, value) text pairs; NULL with the
 * Python exception set. */
static wl_serve_job *serve_job_of(PyObject *items)
{
    PyObject *seq = PySequence_Fast(items, "items: expected a list of (key, value)");
    if (!seq)
        return NULL;
    wl_serve_job *j = wl_serve_job_create();
    wl_error err = {0};
    int rc = j ? WL_OK : WL_ENOMEM;
    for (Py_ssize_t i = 0; !rc && i < PySequence_Fast_GET_SIZE(seq); i++) {
        const char *k, *v;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ss", &k, &v)) {
            Py_DECREF(seq);
            wl_serve_job_free(j);
            return NULL;
        }
        rc = wl_serve_job_set(j, k, v, k, &err);
    }
    Py_DECREF(seq);
    if (!rc)
        rc = wl_serve_job_finish(j, &err);
    if (rc) {
        wl_serve_job_free(j);
        if (rc == WL_ENOMEM && !err.text[0])
            PyErr_NoMemory();
        else
            wl_py_raise(rc, &err);
        return NULL;
    }
    return j;
}

/* _serve_requests(items) -> {name, prompt_tokens, output_tokens, temperature,
 * top_p, top_k}: the requests a serving study sends, as lists, and how they
 * ask to be sampled (what python3 -m wattlas.measure serve replays). */
PyObject *wl_py_serve_requests(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *items;
    if (!PyArg_ParseTuple(args, "O", &items))
        return NULL;
    wl_serve_job *j = serve_job_of(items);
    if (!j)
        return NULL;
    const wl_serve_requests *r = wl_serve_job_requests(j);
    wl_serve_sampling smp;
    wl_serve_job_sampling(j, &smp);
    size_t n = wl_serve_requests_count(r);
    PyObject *p = PyList_New((Py_ssize_t)n), *o = PyList_New((Py_ssize_t)n), *out = NULL;
    for (size_t i = 0; p && o && i < n; i++) {
        long long a, b;
        wl_serve_requests_get(r, i, &a, &b);
        PyList_SET_ITEM(p, (Py_ssize_t)i, PyLong_FromLongLong(a));
        PyList_SET_ITEM(o, (Py_ssize_t)i, PyLong_FromLongLong(b));
    }
    if (p && o && !PyErr_Occurred())
        out = Py_BuildValue("{s:s,s:O,s:O,s:d,s:d,s:L,s:d}", "name", wl_serve_requests_name(r),
                            "prompt_tokens", p, "output_tokens", o, "temperature",
                            smp.temperature, "top_p", smp.top_p, "top_k", smp.top_k,
                            "repetition_penalty", smp.repetition_penalty);
    Py_XDECREF(p);
    Py_XDECREF(o);
    wl_serve_job_free(j);
    return out;
}

/* _serve(items, fmt) -> str: a serving study (items: (key, value) text
 * pairs, wattlas serve's options with '_' for '-'), its rows as fmt. */
PyObject *wl_py_serve(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *items;
    const char *fmt;
    if (!PyArg_ParseTuple(args, "Os", &items, &fmt))
        return NULL;
    wl_serve_job *j = serve_job_of(items);
    if (!j)
        return NULL;
    wl_error err = {0};
    int rc;
    size_t nc;
    const wl_results_col *cols = wl_serve_cols(&nc);
    wl_py_collect c = {0};
    if (wl_py_collect_open(&c, fmt, cols, nc)) {
        wl_serve_job_free(j);
        return c.f ? wl_py_collect_close(&c, 0) : NULL;
    }
    /* Ctrl-C stops the engine's steps (wl_py_stop) */
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    rc = wl_serve_job_run(j, c.w, NULL, NULL, &err);
    Py_END_ALLOW_THREADS
    wl_serve_job_free(j);
    int stopped = wl_py_stop_end(&stop);
    if (rc || stopped) {
        wl_py_collect_close(&c, 0);
        return stopped ? NULL : wl_py_raise(rc, &err);
    }
    return wl_py_collect_close(&c, 1);
}
