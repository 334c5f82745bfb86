/* The methods of wattlas._wattlas that run the library's sweep: sweep and
 * predict (as text or as columns) and compare. A sweep spec's keys come in
 * as text, the grammar every other front end uses. */
#include "wattlas_py.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A finished spec from (key, value, source) string triples set in order on
 * a spec file's keys; predict: one prediction's default and check (the
 * maximum clock unless a clock is given; wl_sweep_spec_check_clocks), as
 * 'wattlas predict'. NULL with a Python exception set. */
wl_sweep_spec *wl_py_build_spec(PyObject *items, const char *spec_path, int predict)
{
    PyObject *seq = PySequence_Fast(items, "items: expected a sequence of (key, value, source)");
    if (!seq)
        return NULL;
    wl_error err = {0};
    wl_sweep_spec *s = wl_sweep_spec_create();
    int rc = WL_OK, clock_given = 0;
    if (!s) {
        PyErr_NoMemory();
        goto fail_py;
    }
    if (spec_path && (rc = wl_sweep_spec_load(s, spec_path, &err)))
        goto fail;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *key, *value, *source;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "sss", &key, &value, &source))
            goto fail_py;
        clock_given |= !strcmp(key, "clock");
        if ((rc = wl_sweep_spec_set(s, key, value, source, 0, &err)))
            goto fail;
    }
    if (predict && !clock_given && (rc = wl_sweep_spec_set(s, "clock", "max", "clock", 0, &err)))
        goto fail;
    if ((rc = wl_sweep_spec_finish(s, &err)) ||
        (predict && (rc = wl_sweep_spec_check_clocks(s, "clock", &err))))
        goto fail;
    Py_DECREF(seq);
    return s;
fail:
    wl_py_raise(rc, &err);
fail_py:
    wl_sweep_spec_free(s);
    Py_DECREF(seq);
    return NULL;
}

/* Runs a finished spec into a memory buffer in format (NULL with an
 * exception set); *len its length, *st the run's statistics. */
static char *run_spec(const wl_sweep_spec *s, wl_results_format format, int threads,
                      const unsigned shard[2], size_t *len, wl_sweep_stats *st)
{
    wl_error err = {0};
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) {
        PyErr_NoMemory();
        return NULL;
    }
    wl_sweep_options so = {.format = format, .threads = threads,
                           .shard_index = shard ? shard[0] : 0,
                           .shard_count = shard ? shard[1] : 0};
    int rc;
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    /* the sweep polls the watched flag itself (sweep/run.c stopping) */
    rc = wl_sweep_run(s, &so, f, NULL, st, &err);
    Py_END_ALLOW_THREADS
    int interrupted = wl_py_stop_end(&stop);
    if (fclose(f) && !rc) {
        wl_error_set(&err, "wattlas", 0, "", "could not collect the rows");
        rc = WL_EIO;
    }
    if (rc || interrupted) {
        free(text);
        if (!interrupted)
            wl_py_raise(rc, &err);
        return NULL;
    }
    return text;
}

/* _sweep(items, spec=None, fmt="ndjson", threads=0, predict=False,
 *        shard=None) -> str: the rows as the command line writes them
 * (shard "I/N": that slice, csv or ndjson, as 'wattlas sweep --shard'). */
PyObject *wl_py_sweep(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"items", "spec", "fmt", "threads", "predict", "shard", NULL};
    PyObject *items;
    const char *spec_path = NULL, *fmt = "ndjson", *shard_text = NULL;
    int threads = 0, predict = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zsipz", names, &items, &spec_path, &fmt,
                                     &threads, &predict, &shard_text))
        return NULL;
    wl_results_format format;
    if (wl_results_format_parse(fmt, &format)) {
        PyErr_Format(PyExc_ValueError, "format: expected table, csv, ndjson or json, got '%.60s'", fmt);
        return NULL;
    }
    unsigned shard[2] = {0, 0};
    if (shard_text) {
        wl_error err = {0};
        if (wl_sweep_shard_parse(shard_text, &shard[0], &shard[1], &err))
            return wl_py_raise(WL_EINVAL, &err);
        if (format != WL_FMT_CSV && format != WL_FMT_NDJSON) {
            wl_error_set(&err, "shard", 0, "fmt", "a shard is written as csv or ndjson "
                         "(merge joins the shards)");
            return wl_py_raise(WL_EINVAL, &err);
        }
    }
    wl_sweep_spec *s = wl_py_build_spec(items, spec_path, predict);
    if (!s)
        return NULL;
    size_t len = 0;
    wl_sweep_stats st;
    char *text = run_spec(s, format, threads, shard_text ? shard : NULL, &len, &st);
    wl_sweep_spec_free(s);
    if (!text)
        return NULL;
    PyObject *res = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "strict");
    free(text);
    return res;
}

/* _columns(items, spec=None, threads=0, predict=False) ->
 *   ([(name, type, decimals, sig, texts or None, bytes), ...], warnings,
 *    {"points", "unfit", "throttled", "coefficients": {gpu: source}})
 * One evaluation of the grid into columns: f64 values, or for text columns
 * the distinct texts and a u32 index a row (0xffffffff: empty). */
PyObject *wl_py_columns(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"items", "spec", "threads", "predict", NULL};
    PyObject *items;
    const char *spec_path = NULL;
    int threads = 0, predict = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zip", names, &items, &spec_path, &threads,
                                     &predict))
        return NULL;
    wl_sweep_spec *s = wl_py_build_spec(items, spec_path, predict);
    if (!s)
        return NULL;
    size_t len = 0;
    wl_sweep_stats st;
    char *buf = run_spec(s, WL_FMT_COLUMNS, threads, NULL, &len, &st);
    PyObject *cols = buf ? wl_py_decode_columns(&buf, len) : NULL;
    free(buf);
    PyObject *warn = cols ? PyList_New(0) : NULL, *coef = cols ? PyDict_New() : NULL;
    PyObject *res = NULL;
    for (size_t i = 0; warn && i < wl_sweep_spec_warning_count(s); i++) {
        PyObject *t = PyUnicode_FromString(wl_sweep_spec_warning(s, i));
        if (!t || PyList_Append(warn, t)) {
            Py_XDECREF(t);
            Py_CLEAR(warn);
        }
        Py_XDECREF(t);
    }
    /* what a profile's import kept at measured times (as the command line notes) */
    for (size_t i = 0; warn && i < wl_sweep_spec_note_count(s); i++) {
        PyObject *t = PyUnicode_FromString(wl_sweep_spec_note(s, i));
        if (!t || PyList_Append(warn, t))
            Py_CLEAR(warn);
        Py_XDECREF(t);
    }
    /* requested clocks a GPU cannot run, left out (as the command line notes) */
    for (size_t i = 0; warn && wl_sweep_spec_gpu(s, i); i++) {
        const wl_core_gpu *g = wl_sweep_spec_gpu(s, i);
        size_t nclip = wl_sweep_spec_clipped(s, i);
        if (!nclip)
            continue;
        PyObject *t = PyUnicode_FromFormat("%s sweeps the requested clocks within its range "
                                           "%d-%d MHz; %zu outside it are left out", g->id,
                                           (int)g->sm_clock_min_mhz, (int)g->sm_clock_max_mhz,
                                           nclip);
        if (!t || PyList_Append(warn, t))
            Py_CLEAR(warn);
        Py_XDECREF(t);
    }
    for (size_t i = 0; coef && wl_sweep_spec_gpu(s, i); i++) {
        const wl_core_gpu *g = wl_sweep_spec_gpu(s, i);
        PyObject *v = PyUnicode_FromString(g->coef_source[0] ? g->coef_source : "measured");
        if (!v || PyDict_SetItemString(coef, g->id, v))
            Py_CLEAR(coef);
        Py_XDECREF(v);
    }
    if (cols && warn && coef)
        res = Py_BuildValue("(OO{sKsKsKsO})", cols, warn, "points", st.tally.points, "unfit",
                            st.tally.unfit, "throttled", st.tally.throttled, "coefficients", coef);
    Py_XDECREF(cols);
    Py_XDECREF(warn);
    Py_XDECREF(coef);
    wl_sweep_spec_free(s);
    return res;
}

/* ---- compare ------------------------------------------------------------------ */

typedef struct {
    const wl_sweep_spec *s;
    double clock;
    const wl_pareto_objective *obj;
    PyObject *notes; /* [(warning, text)] */
    size_t runnable;
    wl_error err;
    int rc;
} compare_ctx;

static void compare_note(void *user, int warning, const char *text)
{
    compare_ctx *x = user;
    PyObject *t = Py_BuildValue("(is)", warning, text);
    if (!t || PyList_Append(x->notes, t))
        PyErr_Clear(); /* a note lost to memory is not worth failing the rows for */
    Py_XDECREF(t);
}

static int fill_compare(void *ctx, wl_results_writer *w)
{
    compare_ctx *x = ctx;
    x->rc = wl_sweep_compare(x->s, x->clock, x->obj, w, compare_note, x, &x->runnable, &x->err);
    return WL_OK; /* its error is raised by the caller */
}

/* _compare(items, objective, clock) -> (columns, notes): as 'wattlas
 * compare' (items: the sweep keys of one workload and its GPUs). */
PyObject *wl_py_compare(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *items;
    const char *objective, *fmt = NULL;
    double clock;
    if (!PyArg_ParseTuple(args, "Osd|z", &items, &objective, &clock, &fmt))
        return NULL;
    compare_ctx x = {.clock = clock};
    wl_pareto_objective obj;
    if (wl_pareto_objective_parse(objective, &obj, &x.err)) {
        wl_error_locate(&x.err, "objective", 0);
        return wl_py_raise(WL_EINVAL, &x.err);
    }
    wl_sweep_spec *s = wl_py_build_spec(items, NULL, 0);
    if (!s)
        return NULL;
    x.s = s;
    x.obj = &obj;
    x.notes = PyList_New(0);
    wl_results_col cols[WL_PARETO_COMPARE_COLS];
    size_t nc = wl_pareto_compare_cols(wl_sweep_spec_level(s) > 0,
                                       wl_sweep_spec_has_mode(s, WL_MODE_DECODE), cols);
    PyObject *out = NULL, *res = NULL;
    wl_py_stop stop; /* the GIL stays held: notes go to a Python list */
    wl_py_stop_begin(&stop);
    if (x.notes && fmt) {
        /* the command line's text */
        wl_py_collect c;
        if (!wl_py_collect_open(&c, fmt, cols, nc)) {
            fill_compare(&x, c.w);
            out = wl_py_collect_close(&c, !x.rc);
        } else if (c.f) {
            wl_py_collect_close(&c, 0);
        }
    } else if (x.notes) {
        out = wl_py_rows_as_columns(cols, nc, fill_compare, &x);
    }
    if (wl_py_stop_end(&stop))
        Py_CLEAR(out); /* KeyboardInterrupt is set */
    else if (out && x.rc)
        wl_py_raise(x.rc, &x.err);
    else if (out && !x.runnable)
        PyErr_SetString(wl_py_error_class(), "no GPU can run this case");
    else if (out)
        res = Py_BuildValue("(OO)", out, x.notes);
    Py_XDECREF(out);
    Py_XDECREF(x.notes);
    wl_sweep_spec_free(s);
    return res;
}
