/* wattlas._wattlas: the CPython binding of libwattlas. It only carries text
 * across: a sweep spec's keys in (the grammar every other front end uses),
 * the library's own row writer's NDJSON out, so that Python sees the same
 * numbers, digit for digit, as the command line. Errors become
 * wattlas.Error with the library's message and its source, line and field.
 * cluster.c and fit.c hold the bindings of the other commands. */
#include "wattlas_py.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PyObject *wl_py_error; /* wattlas.Error, set by the package */

PyObject *wl_py_error_class(void)
{
    return wl_py_error ? wl_py_error : PyExc_ValueError;
}

/* Raises wattlas.Error (or MemoryError) for a library failure. */
PyObject *wl_py_raise(int rc, const wl_error *err)
{
    if (rc == WL_ENOMEM)
        return PyErr_NoMemory();
    char buf[900];
    wl_error kw;
    if (err->source[0] == '-' && err->source[1] == '-') {
        /* an option of the command line ("--host-out") is a keyword here */
        kw = *err;
        size_t i = 0;
        for (const char *q = err->source + 2; *q && i + 1 < sizeof kw.source; q++)
            kw.source[i++] = *q == '-' ? '_' : *q;
        kw.source[i] = 0;
        if (!kw.field[0])
            memcpy(kw.field, kw.source, sizeof kw.field < sizeof kw.source ? sizeof kw.field
                                                                            : sizeof kw.source);
        kw.field[sizeof kw.field - 1] = 0;
        err = &kw;
    }
    /* a value given by keyword: "batch: expected ...", not the keyword
     * twice (as the command line words its options) */
    if (err->line == 0 && err->field[0] && !strcmp(err->source, err->field))
        snprintf(buf, sizeof buf, "%s: %s", err->source, err->text);
    else
        wl_error_format(err, buf, sizeof buf);
    PyObject *cls = wl_py_error_class();
    PyObject *exc = PyObject_CallFunction(cls, "s", buf[0] ? buf : "failed");
    if (!exc)
        return NULL;
    PyObject *attrs[5] = {PyUnicode_FromString(err->source), PyLong_FromLong(err->line),
                          PyUnicode_FromString(err->field), PyUnicode_FromString(err->text),
                          PyBool_FromLong(rc == WL_EIO)};
    static const char *const attr_names[5] = {"source", "line", "field", "text", "io"};
    int bad = 0;
    for (int i = 0; i < 5; i++) {
        bad = bad || !attrs[i] || PyObject_SetAttrString(exc, attr_names[i], attrs[i]);
        Py_XDECREF(attrs[i]);
    }
    if (bad) {
        Py_DECREF(exc);
        return NULL;
    }
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

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

/* Ctrl-C during a long sweep. Python runs its SIGINT handler only between
 * bytecodes, that is after the C call returns (6-14 s late in a large
 * sweep). While the library runs, a C handler of our own sets the stop
 * flag it polls between chunks, as the command line's handler does; the
 * call returns early and Python's own SIGINT handler runs (by default
 * it raises KeyboardInterrupt). Only on the main thread, where Python
 * delivers signals, and not where SIGINT is ignored. */
static volatile sig_atomic_t py_stop_flag;

static void py_on_sigint(int sig)
{
    (void)sig;
    py_stop_flag = 1;
}

typedef struct {
    struct sigaction old;
    int active;
} py_stop;

static void py_stop_begin(py_stop *st)
{
    st->active = 0;
    py_stop_flag = 0;
    PyOS_sighandler_t cur = PyOS_getsig(SIGINT);
    if (cur == SIG_IGN || cur == SIG_DFL || !_PyOS_IsMainThread())
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = py_on_sigint;
    sigemptyset(&sa.sa_mask);
    st->active = sigaction(SIGINT, &sa, &st->old) == 0;
}

/* Restores the handler; 1 when Ctrl-C stopped the call. */
static int py_stop_end(py_stop *st)
{
    if (st->active)
        sigaction(SIGINT, &st->old, NULL);
    return st->active && py_stop_flag;
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
    py_stop stop;
    py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    rc = wl_sweep_run(s, &so, f, stop.active ? &py_stop_flag : NULL, st, &err);
    Py_END_ALLOW_THREADS
    int interrupted = py_stop_end(&stop);
    if (fclose(f) && !rc) {
        wl_error_set(&err, "wattlas", 0, "", "could not collect the rows");
        rc = WL_EIO;
    }
    if (rc || interrupted) {
        free(text);
        if (!interrupted)
            wl_py_raise(rc, &err);
        else {
            /* the signal as Python would have seen it: its handler runs
             * now (the default raises KeyboardInterrupt) */
            PyErr_SetInterrupt();
            if (PyErr_CheckSignals() == 0)
                PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
        return NULL;
    }
    return text;
}

/* _sweep(items, spec=None, fmt="ndjson", threads=0, predict=False,
 *        shard=None) -> str: the rows as the command line writes them
 * (shard "I/N": that slice, csv or ndjson, as 'wattlas sweep --shard'). */
static PyObject *py_sweep(PyObject *self, PyObject *args, PyObject *kw)
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

/* ---- columns ------------------------------------------------------------------ */

/* The binary column stream (WL_FMT_COLUMNS) decoded into per column either
 * the f64 values (bytes) or the distinct texts and each row's index into
 * them (u32 bytes, 0xffffffff: empty). A column is numbers when no cell is
 * text. */
typedef struct {
    const char *p, *end;
} rd;

static int rd_get(rd *r, void *out, size_t n)
{
    if ((size_t)(r->end - r->p) < n)
        return -1;
    memcpy(out, r->p, n);
    r->p += n;
    return 0;
}

typedef struct {
    PyObject *name;
    int type, decimals, sig, text;
    double *num;      /* every column, NaN for empty or text */
    uint32_t *code;   /* text columns */
    PyObject *values; /* list of distinct texts */
    PyObject *index;  /* dict text -> code */
    const char *last; /* the previous text cell (rows repeat their texts) */
    uint32_t last_len, last_code;
} col_build;

/* The rows of a column stream after its header, counted by skipping their
 * cells, so that the columns are allocated once at their size (doubling
 * them as rows arrive kept up to twice the table alive beside the stream).
 * -1 when the stream is malformed. */
static long long count_rows(rd r, uint32_t nc)
{
    long long n = 0;
    while (r.p < r.end) {
        for (uint32_t i = 0; i < nc; i++) {
            uint8_t tag;
            uint32_t l;
            if (rd_get(&r, &tag, 1))
                return -1;
            if (tag == 1 && (size_t)(r.end - r.p) >= sizeof(double))
                r.p += sizeof(double);
            else if (tag == 2 && !rd_get(&r, &l, sizeof l) && (size_t)(r.end - r.p) >= l)
                r.p += l;
            else if (tag != 0)
                return -1;
        }
        n++;
    }
    return n;
}

/* Decodes the stream in *bufp and frees it (*bufp NULL) as soon as its
 * cells are read, before the columns are copied out, and each column's
 * values once copied: the peak is the stream plus the table once. */
static PyObject *decode_columns(char **bufp, size_t len)
{
    const char *buf = *bufp;
    rd r = {buf, buf + len};
    uint32_t nc;
    PyObject *res = NULL;
    col_build *cols = NULL;
    size_t cap = 0, nrow = 0;
    if (rd_get(&r, &nc, sizeof nc) || nc > 100000)
        goto bad;
    cols = calloc(nc ? nc : 1, sizeof *cols);
    if (!cols) {
        PyErr_NoMemory();
        goto done;
    }
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t l;
        uint8_t t;
        int32_t dec, sig;
        if (rd_get(&r, &l, sizeof l) || (size_t)(r.end - r.p) < l)
            goto bad;
        cols[i].name = PyUnicode_DecodeUTF8(r.p, (Py_ssize_t)l, "strict");
        r.p += l;
        if (!cols[i].name || rd_get(&r, &t, 1) || rd_get(&r, &dec, sizeof dec) ||
            rd_get(&r, &sig, sizeof sig))
            goto bad;
        cols[i].type = t;
        cols[i].decimals = dec;
        cols[i].sig = sig;
    }
    long long rows = count_rows(r, nc);
    if (rows < 0)
        goto bad;
    while (r.p < r.end) {
        if (nrow == cap) {
            size_t nc2 = cap ? 2 * cap : (size_t)rows;
            for (uint32_t i = 0; i < nc; i++) {
                double *d = realloc(cols[i].num, nc2 * sizeof *d);
                if (!d) {
                    PyErr_NoMemory();
                    goto done;
                }
                cols[i].num = d;
                if (cols[i].code) {
                    uint32_t *c = realloc(cols[i].code, nc2 * sizeof *c);
                    if (!c) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    cols[i].code = c;
                }
            }
            cap = nc2;
        }
        for (uint32_t i = 0; i < nc; i++) {
            col_build *c = &cols[i];
            uint8_t tag;
            if (rd_get(&r, &tag, 1))
                goto bad;
            c->num[nrow] = NAN;
            if (c->code)
                c->code[nrow] = UINT32_MAX;
            if (tag == 1) {
                if (rd_get(&r, &c->num[nrow], sizeof(double)))
                    goto bad;
            } else if (tag == 2) {
                uint32_t l;
                if (rd_get(&r, &l, sizeof l) || (size_t)(r.end - r.p) < l)
                    goto bad;
                if (c->last && c->last_len == l && !memcmp(c->last, r.p, l)) {
                    c->code[nrow] = c->last_code;
                    r.p += l;
                    continue;
                }
                const char *at0 = r.p;
                PyObject *str = PyUnicode_DecodeUTF8(r.p, (Py_ssize_t)l, "strict");
                r.p += l;
                if (!str)
                    goto done;
                if (!c->code) { /* the first text: this column is text */
                    c->code = malloc(cap * sizeof *c->code);
                    c->values = PyList_New(0);
                    c->index = PyDict_New();
                    if (!c->code || !c->values || !c->index) {
                        Py_DECREF(str);
                        PyErr_NoMemory();
                        goto done;
                    }
                    for (size_t k = 0; k < nrow; k++)
                        c->code[k] = UINT32_MAX;
                    c->text = 1;
                }
                PyObject *at = PyDict_GetItemWithError(c->index, str);
                if (at) {
                    c->code[nrow] = (uint32_t)PyLong_AsUnsignedLong(at);
                } else if (PyErr_Occurred()) {
                    Py_DECREF(str);
                    goto done;
                } else {
                    Py_ssize_t k = PyList_GET_SIZE(c->values);
                    PyObject *kk = PyLong_FromSsize_t(k);
                    if (!kk || PyDict_SetItem(c->index, str, kk) || PyList_Append(c->values, str)) {
                        Py_XDECREF(kk);
                        Py_DECREF(str);
                        goto done;
                    }
                    Py_DECREF(kk);
                    c->code[nrow] = (uint32_t)k;
                }
                Py_DECREF(str);
                c->last = at0;
                c->last_len = l;
                c->last_code = c->code[nrow];
            } else if (tag != 0) {
                goto bad;
            }
        }
        nrow++;
    }
    free(*bufp);
    *bufp = NULL;
    res = PyList_New(nc);
    if (!res)
        goto done;
    for (uint32_t i = 0; i < nc; i++) {
        col_build *c = &cols[i];
        PyObject *item;
        if (c->text)
            item = Py_BuildValue("(OiiiOy#)", c->name, c->type, c->decimals, c->sig, c->values,
                                 (const char *)c->code, (Py_ssize_t)(nrow * sizeof *c->code));
        else
            item = Py_BuildValue("(OiiiOy#)", c->name, c->type, c->decimals, c->sig, Py_None,
                                 (const char *)c->num, (Py_ssize_t)(nrow * sizeof *c->num));
        if (!item) {
            Py_CLEAR(res);
            goto done;
        }
        PyList_SET_ITEM(res, i, item);
        free(c->num), free(c->code);
        c->num = NULL, c->code = NULL;
    }
    goto done;
bad:
    PyErr_SetString(PyExc_RuntimeError, "wattlas: a malformed column stream");
done:
    for (uint32_t i = 0; cols && i < nc; i++) {
        Py_XDECREF(cols[i].name);
        Py_XDECREF(cols[i].values);
        Py_XDECREF(cols[i].index);
        free(cols[i].num);
        free(cols[i].code);
    }
    free(cols);
    return res;
}

/* _columns(items, spec=None, threads=0, predict=False) ->
 *   ([(name, type, decimals, sig, texts or None, bytes), ...], warnings,
 *    {"points", "unfit", "throttled", "coefficients": {gpu: source}})
 * One evaluation of the grid into columns: f64 values, or for text columns
 * the distinct texts and a u32 index a row (0xffffffff: empty). */
static PyObject *py_columns(PyObject *self, PyObject *args, PyObject *kw)
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
    PyObject *cols = buf ? decode_columns(&buf, len) : NULL;
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

/* Rows that fill() writes with the library's row writer, as columns (the
 * binary stream of WL_FMT_COLUMNS, decoded). NULL with an exception set. */
PyObject *wl_py_rows_as_columns(const wl_results_col *cols, size_t nc,
                                 int (*fill)(void *ctx, wl_results_writer *w), void *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    wl_results_writer *w = NULL;
    if (!f || wl_results_writer_create(f, WL_FMT_COLUMNS, cols, nc, &w)) {
        if (f)
            fclose(f);
        free(buf);
        return PyErr_NoMemory();
    }
    wl_results_writer_header(w);
    int rc = fill(ctx, w);
    wl_results_writer_finish(w);
    if (fclose(f) || rc) {
        free(buf);
        return PyErr_NoMemory();
    }
    PyObject *out = decode_columns(&buf, len);
    free(buf);
    return out;
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
static PyObject *py_compare(PyObject *self, PyObject *args)
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
    if (out && x.rc)
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

/* _catalog(kind) -> columns (as _columns): the table 'wattlas presets
 * list' prints, of one kind (-1: all). */
static int fill_catalog(void *ctx, wl_results_writer *w)
{
    return wl_cluster_catalog_rows(*(const int *)ctx, w);
}

static PyObject *py_catalog(PyObject *self, PyObject *args)
{
    (void)self;
    int kind = -1;
    if (!PyArg_ParseTuple(args, "i", &kind))
        return NULL;
    size_t nc;
    const wl_results_col *cols = wl_cluster_catalog_cols(&nc);
    return wl_py_rows_as_columns(cols, nc, fill_catalog, &kind);
}

static PyObject *py_presets(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *out = PyList_New(0);
    for (int k = 0; out && k < WL_PRESET_KINDS; k++)
        for (size_t i = 0; i < wl_preset_count((wl_preset_kind)k); i++) {
            PyObject *t = Py_BuildValue("(ss)", wl_preset_kind_name((wl_preset_kind)k),
                                        wl_preset_id((wl_preset_kind)k, i));
            if (!t || PyList_Append(out, t)) {
                Py_XDECREF(t);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(t);
        }
    return out;
}

/* _preset_text(kind, id) -> the INI text of a built-in preset */
static PyObject *py_preset_text(PyObject *self, PyObject *args)
{
    (void)self;
    const char *kind, *id;
    if (!PyArg_ParseTuple(args, "ss", &kind, &id))
        return NULL;
    wl_preset_kind k;
    wl_error err = {0};
    if (wl_preset_kind_parse(kind, &k)) {
        wl_error_set(&err, "presets", 0, "kind", "expected gpu, model, host or system, got '%.60s'",
                     kind);
        return wl_py_raise(WL_EINVAL, &err);
    }
    const char *text = wl_preset_text(k, id);
    if (!text) {
        wl_error_set(&err, "presets", 0, kind, "no preset '%.60s' (see wattlas.presets())", id);
        return wl_py_raise(WL_EINVAL, &err);
    }
    return PyUnicode_FromString(text);
}

/* _set_error(cls): the exception class errors are raised as */
static PyObject *py_set_error(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls) || !PyObject_IsSubclass(cls, PyExc_Exception)) {
        PyErr_SetString(PyExc_TypeError, "expected an exception class");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(wl_py_error, cls);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"_sweep", (PyCFunction)(void (*)(void))py_sweep, METH_VARARGS | METH_KEYWORDS,
     "_sweep(items, spec=None, fmt='ndjson', threads=0, predict=False) -> str"},
    {"_columns", (PyCFunction)(void (*)(void))py_columns, METH_VARARGS | METH_KEYWORDS,
     "_columns(items, spec=None, threads=0, predict=False) -> (columns, warnings, stats)"},
    {"_presets", py_presets, METH_NOARGS, "_presets() -> [(kind, id), ...]"},
    {"_catalog", py_catalog, METH_VARARGS, "_catalog(kind) -> columns"},
    {"_compare", py_compare, METH_VARARGS, "_compare(items, objective, clock) -> (columns, notes)"},
    {"_cluster", wl_py_cluster, METH_VARARGS,
     "_cluster(inputs, set, options, search, threads, front_only, clock, tokens) -> columns"},
    {"_energy_check", wl_py_energy_check, METH_VARARGS,
     "_energy_check(gpu, dtypes, fmt) -> str"},
    {"_merge", wl_py_merge, METH_VARARGS, "_merge(paths, out) -> str or None"},
    {"_derive_vf", wl_py_derive_vf, METH_VARARGS, "_derive_vf(idle_csv, step_mhz) -> str"},
    {"_select", wl_py_select, METH_VARARGS,
     "_select(what, path, text, source, values, group_by, all, objective, fmt, schedule, "
     "switch_us) -> str"},
    {"_validate", wl_py_validate, METH_VARARGS,
     "_validate(path, gpu, host, traces, level, beside, fmt) -> (str, dict)"},
    {"_calibrate", wl_py_calibrate, METH_VARARGS,
     "_calibrate(path, gpu, out, host, idle, traces, holdout, fit, host_out, kfold, lomo, "
     "quiet, prior_weight, from_preset, transfer_sd, command) -> (log, summary, coefficients)"},
    {"_learn", wl_py_learn, METH_VARARGS,
     "_learn(path, out, importance, kind, hybrid, trees, max_depth, seed, gpu, host, beside, "
     "kfold, lomo, random_split, refit) -> (log, summary)"},
    {"_plot", wl_py_plot, METH_VARARGS, "_plot(kind, path, text, source, out, options) -> None"},
    {"_report", wl_py_report, METH_VARARGS,
     "_report(items, spec, out, threads, command) -> summary"},
    {"_preset_text", py_preset_text, METH_VARARGS, "_preset_text(kind, id) -> str"},
    {"_set_error", py_set_error, METH_O, "_set_error(cls)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "wattlas._wattlas",
                                    "The C library behind the wattlas package.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__wattlas(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "version", WL_VERSION)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
