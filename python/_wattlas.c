/* wattlas._wattlas: the CPython binding of libwattlas. It only carries text
 * across: a sweep spec's keys in (the grammar every other front end uses),
 * the library's own row writer's NDJSON out, so that Python sees the same
 * numbers, digit for digit, as the command line. Errors become
 * wattlas.Error with the library's message and its source, line and field. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattlas.h"

static PyObject *wl_py_error; /* wattlas.Error, set by the package */

/* Raises wattlas.Error (or MemoryError) for a library failure. */
static PyObject *raise_wl(int rc, const wl_error *err)
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
    PyObject *cls = wl_py_error ? wl_py_error : PyExc_ValueError;
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
static wl_sweep_spec *build_spec(PyObject *items, const char *spec_path, int predict)
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
    raise_wl(rc, &err);
fail_py:
    wl_sweep_spec_free(s);
    Py_DECREF(seq);
    return NULL;
}

/* Runs a finished spec into a memory buffer in format (NULL with an
 * exception set); *len its length, *st the run's statistics. */
static char *run_spec(const wl_sweep_spec *s, wl_results_format format, int threads, size_t *len,
                      wl_sweep_stats *st)
{
    wl_error err = {0};
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) {
        PyErr_NoMemory();
        return NULL;
    }
    wl_sweep_options so = {.format = format, .threads = threads};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = wl_sweep_run(s, &so, f, NULL, st, &err);
    Py_END_ALLOW_THREADS
    if (fclose(f) && !rc) {
        wl_error_set(&err, "wattlas", 0, "", "could not collect the rows");
        rc = WL_EIO;
    }
    if (rc) {
        free(text);
        raise_wl(rc, &err);
        return NULL;
    }
    return text;
}

/* _sweep(items, spec=None, fmt="ndjson", threads=0, predict=False) -> str:
 * the rows as the command line writes them. */
static PyObject *py_sweep(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"items", "spec", "fmt", "threads", "predict", NULL};
    PyObject *items;
    const char *spec_path = NULL, *fmt = "ndjson";
    int threads = 0, predict = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zsip", names, &items, &spec_path, &fmt,
                                     &threads, &predict))
        return NULL;
    wl_results_format format;
    if (wl_results_format_parse(fmt, &format)) {
        PyErr_Format(PyExc_ValueError, "format: expected table, csv, ndjson or json, got '%.60s'", fmt);
        return NULL;
    }
    wl_sweep_spec *s = build_spec(items, spec_path, predict);
    if (!s)
        return NULL;
    size_t len = 0;
    wl_sweep_stats st;
    char *text = run_spec(s, format, threads, &len, &st);
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
    wl_sweep_spec *s = build_spec(items, spec_path, predict);
    if (!s)
        return NULL;
    size_t len = 0;
    wl_sweep_stats st;
    char *buf = run_spec(s, WL_FMT_COLUMNS, threads, &len, &st);
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

/* Text collected from a row writer (NDJSON, CSV, ...) over a memory stream. */
typedef struct {
    FILE *f;
    char *text;
    size_t len;
    wl_results_writer *w;
} collect;

static int collect_open(collect *c, const char *fmt, const wl_results_col *cols, size_t nc)
{
    memset(c, 0, sizeof *c);
    wl_results_format format;
    if (wl_results_format_parse(fmt, &format)) {
        PyErr_Format(PyExc_ValueError, "format: expected table, csv, ndjson or json, got '%.60s'", fmt);
        return -1;
    }
    if (!(c->f = open_memstream(&c->text, &c->len)) ||
        wl_results_writer_create(c->f, format, cols, nc, &c->w)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Finishes and returns the text as a str (NULL with an exception set). */
static PyObject *collect_close(collect *c, int ok)
{
    PyObject *res = NULL;
    if (ok)
        wl_results_writer_finish(c->w);
    else
        wl_results_writer_free(c->w);
    if (c->f && fclose(c->f) == 0 && ok)
        res = PyUnicode_DecodeUTF8(c->text ? c->text : "", (Py_ssize_t)c->len, "strict");
    else if (ok)
        PyErr_NoMemory();
    free(c->text);
    memset(c, 0, sizeof *c);
    return res;
}

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

/* _select(what, path, text, source, values, group_by, all, objective, fmt) -> str
 * what "pareto": the fronts over the value columns (a list of names);
 * what "optimize": the savings table at objective, values (time, power,
 * energy columns). The table is the file path, or the CSV text named
 * source. As 'wattlas pareto' and 'wattlas optimize' print them. */
static PyObject *py_select(PyObject *self, PyObject *args)
{
    (void)self;
    const char *what, *path, *text, *source, *group_by, *objective, *fmt;
    Py_ssize_t tlen;
    PyObject *values;
    int all;
    if (!PyArg_ParseTuple(args, "szz#sOzpzs", &what, &path, &text, &tlen, &source, &values,
                          &group_by, &all, &objective, &fmt))
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
        return raise_wl(rc, &err);
    }
    wl_pareto_load_options lo = {.values = names, .nvalues = (size_t)nv, .group_by = group_by,
                                 .keep_infeasible = all, .keep_fields = !optimize,
                                 .collapse = !all};
    wl_pareto_set *s = NULL;
    PyObject *res = NULL;
    wl_results_col *cols = NULL;
    collect c = {0};
    Py_BEGIN_ALLOW_THREADS
    rc = load_set(path, text, tlen, source, &lo, &s, &err);
    Py_END_ALLOW_THREADS
    if (rc) {
        raise_wl(rc, &err);
        goto done;
    }
    if (optimize) {
        wl_results_col sc[WL_PARETO_KEYED_MAX];
        size_t nc = wl_pareto_savings_cols(s, sc, WL_PARETO_KEYED_MAX);
        if (!nc) {
            PyErr_SetString(wl_py_error ? wl_py_error : PyExc_ValueError,
                            "group_by: too many columns");
            goto done;
        }
        if (collect_open(&c, fmt, sc, nc))
            goto done;
        rc = wl_pareto_savings_rows(s, &obj, c.w);
    } else {
        if (!(cols = calloc(wl_pareto_set_ncols(s) + 1, sizeof *cols))) {
            PyErr_NoMemory();
            goto done;
        }
        size_t nc = wl_pareto_front_cols(s, cols);
        if (collect_open(&c, fmt, cols, nc))
            goto done;
        rc = wl_pareto_front_rows(s, c.w);
    }
    res = collect_close(&c, !rc);
    if (rc && !PyErr_Occurred())
        PyErr_NoMemory();
done:
    if (c.f)
        collect_close(&c, 0);
    free(cols);
    wl_pareto_set_free(s);
    Py_DECREF(seq);
    return res;
}

/* _validate(path, gpu, host, traces, level, beside, fmt) -> (str, summary)
 * As 'wattlas validate': the rows with their predictions, and the pooled
 * figures as a dict. */
static PyObject *py_validate(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path, *gpu, *host, *traces, *fmt;
    double level;
    int beside;
    if (!PyArg_ParseTuple(args, "szzzdps", &path, &gpu, &host, &traces, &level, &beside, &fmt))
        return NULL;
    wl_calib_validation_options vo = {.traces_dir = traces, .gpu = gpu, .host = host,
                                      .beside = beside, .level = level};
    wl_calib_validation *v = NULL;
    wl_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = wl_calib_validation_create(path, &vo, &v, &err);
    Py_END_ALLOW_THREADS
    if (rc)
        return raise_wl(rc, &err);
    size_t nc;
    const wl_results_col *cols = wl_calib_validation_cols(v, &nc);
    collect c;
    PyObject *text = NULL, *res = NULL;
    wl_results_cell *cells = calloc(nc + 1, sizeof *cells);
    if (!cells) {
        PyErr_NoMemory();
        goto done;
    }
    if (collect_open(&c, fmt, cols, nc))
        goto done;
    const wl_calib_set *set = wl_calib_validation_set(v);
    int wrc = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; !wrc && i < wl_calib_count(set); i++) {
        const char *why = NULL;
        wl_calib_validation_row(v, i, cells, &why);
        wrc = wl_results_writer_row(c.w, cells);
    }
    Py_END_ALLOW_THREADS
    if (!(text = collect_close(&c, !wrc)))
        goto done;
    wl_calib_validation_summary sm;
    wl_calib_validation_counts(v, &sm);
    if (!sm.scored) {
        wl_error_set(&err, path, 0, "", "no row could be scored");
        raise_wl(WL_EINVAL, &err);
        goto done;
    }
    res = Py_BuildValue("(O{s:n,s:n,s:n,s:n,s:d,s:d,s:d})", text, "scored",
                        (Py_ssize_t)sm.scored, "scored_power", (Py_ssize_t)sm.scored_power,
                        "not_modelled", (Py_ssize_t)sm.not_modelled, "traced",
                        (Py_ssize_t)sm.traced, "mape_time_pct", sm.mape_time, "mape_power_pct",
                        sm.mape_power, "mape_energy_pct", sm.mape_energy);
done:
    Py_XDECREF(text);
    free(cells);
    wl_calib_validation_free(v);
    return res;
}

/* _presets() -> [(kind, id), ...] of the built-in presets */
/* Rows that fill() writes with the library's row writer, as columns (the
 * binary stream of WL_FMT_COLUMNS, decoded). NULL with an exception set. */
static PyObject *rows_as_columns(const wl_results_col *cols, size_t nc,
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
    const char *objective;
    double clock;
    if (!PyArg_ParseTuple(args, "Osd", &items, &objective, &clock))
        return NULL;
    compare_ctx x = {.clock = clock};
    wl_pareto_objective obj;
    if (wl_pareto_objective_parse(objective, &obj, &x.err)) {
        wl_error_locate(&x.err, "objective", 0);
        return raise_wl(WL_EINVAL, &x.err);
    }
    wl_sweep_spec *s = build_spec(items, NULL, 0);
    if (!s)
        return NULL;
    x.s = s;
    x.obj = &obj;
    x.notes = PyList_New(0);
    wl_results_col cols[WL_PARETO_COMPARE_COLS];
    size_t nc = wl_pareto_compare_cols(wl_sweep_spec_level(s) > 0, cols);
    PyObject *out = x.notes ? rows_as_columns(cols, nc, fill_compare, &x) : NULL;
    PyObject *res = NULL;
    if (out && x.rc)
        raise_wl(x.rc, &x.err);
    else if (out && !x.runnable)
        PyErr_SetString(wl_py_error ? wl_py_error : PyExc_ValueError, "no GPU can run this case");
    else if (out)
        res = Py_BuildValue("(OO)", out, x.notes);
    Py_XDECREF(out);
    Py_XDECREF(x.notes);
    wl_sweep_spec_free(s);
    return res;
}

/* ---- cluster ----------------------------------------------------------------- */

/* One (key, value) of a configuration or a search. Values come as text
 * (the package writes them as the command line takes them). */
static int cluster_key(wl_cluster_config *c, wl_cluster_search_spec *sp, int *layers,
                       const char *key, const char *v, wl_error *err)
{
    static const struct {
        const char *key;
        int off, lo, hi;
    } ints[] = {
        {"tp", offsetof(wl_cluster_config, tp), 1, 1 << 20},
        {"pp", offsetof(wl_cluster_config, pp), 1, 1 << 20},
        {"dp", offsetof(wl_cluster_config, dp), 1, 1 << 24},
        {"vp", offsetof(wl_cluster_config, vp), 1, 1024},
        {"ep", offsetof(wl_cluster_config, ep), 1, 1 << 20},
        {"cp", offsetof(wl_cluster_config, cp), 1, 1 << 16},
        {"zero", offsetof(wl_cluster_config, zero), 0, 1},
        {"sequence_parallel", offsetof(wl_cluster_config, sequence_parallel), 0, 1},
        {"tp_comm_overlap", offsetof(wl_cluster_config, tp_comm_overlap), 0, 1},
        {"no_dp_overlap", offsetof(wl_cluster_config, no_dp_overlap), 0, 1},
    };
    long long n;
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if (!strcmp(key, ints[i].key)) {
            if (wl_core_parse_int(v, ints[i].lo, ints[i].hi, key, 0, key, &n, err))
                return WL_EINVAL;
            *(int *)((char *)c + ints[i].off) = (int)n;
            if (!strcmp(key, "zero"))
                sp->zero = 1u << n;
            if (!strcmp(key, "sequence_parallel"))
                sp->sequence_parallel = 1u << n;
            return WL_OK;
        }
    if (!strcmp(key, "global_batch") || !strcmp(key, "micro_batch") || !strcmp(key, "seq") ||
        !strcmp(key, "gen"))
        return wl_core_parse_int(v, 1, !strcmp(key, "seq") ? WL_MAX_SEQ : WL_MAX_BATCH, key, 0,
                                 key, !strcmp(key, "global_batch") ? &c->global_batch
                                      : !strcmp(key, "micro_batch") ? &c->micro_batch
                                      : !strcmp(key, "seq")         ? &c->seq
                                                                    : &c->gen, err);
    if (!strcmp(key, "capacity_factor"))
        return wl_core_parse_real(v, 0.01, 64, key, 0, key, &c->capacity_factor, err);
    int bad = 0;
    if (!strcmp(key, "mode"))
        bad = wl_mode_parse(v, &c->mode);
    else if (!strcmp(key, "dtype"))
        bad = wl_dtype_parse(v, &c->dtype);
    else if (!strcmp(key, "attention"))
        bad = wl_attention_parse(v, &c->attention);
    else if (!strcmp(key, "launch"))
        bad = wl_launch_parse(v, &c->launch);
    else if (!strcmp(key, "partition") &&
             !wl_cluster_partition_parse(v, &c->partition, layers, &c->nstage_layers, err)) {
        /* a name, or the layers of each stage ("5,6,6,7") */
        c->stage_layers = c->partition == WL_CLUSTER_PART_LIST ? layers : NULL;
        sp->partitions = c->partition == WL_CLUSTER_PART_LIST ? 0 : 1u << c->partition;
        return WL_OK;
    } else if (!strcmp(key, "recompute") || !strcmp(key, "schedule") || !strcmp(key, "partition")) {
        /* one value, or for a search a comma list of those to try */
        char buf[256];
        if (strlen(v) >= sizeof buf) {
            wl_error_set(err, key, 0, key, "too long a list of values");
            return WL_EINVAL;
        }
        snprintf(buf, sizeof buf, "%s", v);
        unsigned mask = 0;
        int count = 0;
        for (char *tok = strtok(buf, ","); tok && !bad; tok = strtok(NULL, ","), count++) {
            if (!strcmp(key, "recompute")) {
                wl_recompute r;
                bad = wl_recompute_parse(tok, &r);
                c->recompute = r;
                mask |= 1u << r;
            } else if (!strcmp(key, "schedule")) {
                const wl_cluster_schedule_type *t = wl_cluster_schedule_lookup(tok);
                bad = !t;
                c->schedule = t;
                for (int i = 0; t && wl_cluster_schedule_at(i); i++)
                    if (wl_cluster_schedule_at(i) == t)
                        mask |= 1u << i;
            } else { /* a search's partitions to try: uniform,balanced */
                wl_cluster_partition pa;
                bad = wl_cluster_partition_lookup(tok, &pa);
                c->partition = pa;
                mask |= 1u << pa;
            }
        }
        if (!strcmp(key, "recompute"))
            sp->recomputes = mask;
        else if (!strcmp(key, "schedule"))
            sp->schedules = mask;
        else
            sp->partitions = mask;
    } else if (!strcmp(key, "max_tp") || !strcmp(key, "max_pp") || !strcmp(key, "max_vp") ||
               !strcmp(key, "max_micro_batch")) {
        if (wl_core_parse_int(v, 1, 1 << 20, key, 0, key, &n, err))
            return WL_EINVAL;
        if (!strcmp(key, "max_tp"))
            sp->max_tp = (int)n;
        else if (!strcmp(key, "max_pp"))
            sp->max_pp = (int)n;
        else if (!strcmp(key, "max_vp"))
            sp->max_vp = (int)n;
        else
            sp->max_micro_batch = n;
        return WL_OK;
    } else {
        wl_error_set(err, key, 0, key, "not an option of cluster");
        return WL_EINVAL;
    }
    if (bad) {
        wl_error_set(err, key, 0, key, "'%.60s' is not a value of %s", v, key);
        return WL_EINVAL;
    }
    return WL_OK;
}

/* Rows of configurations and results as columns; choice: a first column
 * naming the front's points (a search), or NULL. */
typedef struct {
    const wl_cluster_system *sys;
    const wl_core_model *m;
    const wl_cluster_config *cfgs;
    const wl_cluster_result *res;
    const char *const *choice;
    size_t n;
    double clock, tokens;
    const char *part_text;
} cluster_rows_ctx;

static int fill_cluster_rows(void *ctx, wl_results_writer *w)
{
    const cluster_rows_ctx *x = ctx;
    size_t off = x->choice ? 1 : 0;
    for (size_t i = 0; i < x->n; i++) {
        wl_results_cell c[WL_CLUSTER_ROW_COLS + 1];
        if (x->choice)
            c[0] = (wl_results_cell){x->choice[i], NAN};
        wl_cluster_row_cells(c + off, x->sys->id, x->m->id, &x->cfgs[i], &x->res[i], x->clock,
                             x->tokens, x->part_text);
        if (wl_results_writer_row(w, c))
            return WL_ENOMEM;
    }
    return WL_OK;
}

static PyObject *cluster_rows(const cluster_rows_ctx *x)
{
    size_t nc = WL_CLUSTER_ROW_COLS - WL_CLUSTER_ROW_NOPT, off = x->choice ? 1 : 0;
    wl_results_col cols[WL_CLUSTER_ROW_COLS + 1];
    if (x->choice)
        cols[0] = (wl_results_col)WL_RESULTS_COL("choice", WL_COL_TEXT, 0, 0);
    memcpy(cols + off, wl_cluster_row_cols(), nc * sizeof *cols);
    return rows_as_columns(cols, nc + off, fill_cluster_rows, (void *)x);
}

/* _cluster(inputs, set, options, search, threads, front_only, clock, tokens) -> columns
 * inputs: (system, nodes, model, host or None); set: [(key, float)];
 * options: [(key, text)]. One configuration (its row), or every
 * configuration of a search (front_only: the time-energy front alone,
 * with a choice column). */
static PyObject *py_cluster(PyObject *self, PyObject *args)
{
    (void)self;
    const char *system, *model, *host;
    int nodes, search, threads, front_only;
    PyObject *set, *opts;
    double clock, tokens;
    if (!PyArg_ParseTuple(args, "(sisz)OOpipdd", &system, &nodes, &model, &host, &set, &opts,
                          &search, &threads, &front_only, &clock, &tokens))
        return NULL;
    const char *keys[WL_CLUSTER_MAX_SET];
    double vals[WL_CLUSTER_MAX_SET];
    Py_ssize_t ns = PySequence_Size(set);
    if (ns < 0)
        return NULL;
    if (ns > WL_CLUSTER_MAX_SET) {
        PyErr_SetString(wl_py_error ? wl_py_error : PyExc_ValueError, "set: at most 64 settings");
        return NULL;
    }
    PyObject *held = PyList_New(0); /* keeps the keys' strings alive */
    if (!held)
        return NULL;
    for (Py_ssize_t i = 0; i < ns; i++) {
        PyObject *it = PySequence_GetItem(set, i);
        const char *k;
        if (!it || !PyArg_ParseTuple(it, "sd", &k, &vals[i]) || PyList_Append(held, it)) {
            Py_XDECREF(it);
            Py_DECREF(held);
            return NULL;
        }
        keys[i] = k;
        Py_DECREF(it);
    }
    wl_error err = {0};
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_cluster_inputs in = {.system = system, .model = model, .host = host, .nodes = nodes,
                            .set_key = keys, .set_val = vals, .nset = (size_t)ns};
    int rc = wl_cluster_load(&in, &sys, &gpu, &m, &err);
    Py_DECREF(held);
    if (rc)
        return raise_wl(rc, &err);
    wl_cluster_config cfg;
    wl_cluster_config_default(&cfg);
    cfg.dp = 0;
    wl_cluster_search_spec sp;
    wl_cluster_search_default(&sp);
    int layers[WL_CLUSTER_MAX_LIST];
    const char *part_text = NULL;
    Py_ssize_t no = PySequence_Size(opts);
    for (Py_ssize_t i = 0; i < no; i++) {
        PyObject *it = PySequence_GetItem(opts, i);
        const char *k, *v;
        if (!it || !PyArg_ParseTuple(it, "ss", &k, &v)) {
            Py_XDECREF(it);
            return NULL;
        }
        rc = cluster_key(&cfg, &sp, layers, k, v, &err);
        /* a list of layers is written as given (the tuple stays alive in opts) */
        if (!rc && !strcmp(k, "partition") && cfg.partition == WL_CLUSTER_PART_LIST)
            part_text = v;
        Py_DECREF(it);
        if (rc)
            return raise_wl(rc, &err);
    }
    int gpus = sys.nodes * sys.gpus_per_node;
    double f = clock > 0 ? clock : gpu.sm_clock_max_mhz;
    PyObject *out = NULL;
    if (!search) {
        wl_cluster *cl = NULL;
        wl_cluster_result r;
        if ((rc = wl_cluster_config_fill(&cfg, gpus, &err)) ||
            (rc = wl_cluster_create(&sys, &gpu, &m, &cfg, &cl, &err)) ||
            (rc = wl_cluster_refine_split(cl, &err)) || (rc = wl_cluster_run(cl, f, NULL, &r, &err))) {
            wl_cluster_free(cl);
            return raise_wl(rc, &err);
        }
        wl_cluster_free(cl);
        cluster_rows_ctx x = {&sys, &m, &cfg, &r, NULL, 1, f, tokens, part_text};
        return cluster_rows(&x);
    }
    sp.base = cfg;
    if (sp.base.global_batch <= 0)
        sp.base.global_batch = gpus;
    wl_cluster_config *cfgs = NULL;
    size_t n = 0;
    if ((rc = wl_cluster_search_configs(&sp, &m, gpus, sys.gpus_per_node, &cfgs, &n, &err)))
        return raise_wl(rc, &err);
    wl_cluster_search_row *rows = calloc(n ? n : 1, sizeof *rows);
    unsigned char *front = calloc(n ? n : 1, 1);
    const char **choice = calloc(n ? n : 1, sizeof *choice);
    wl_cluster_result *res = calloc(n ? n : 1, sizeof *res);
    wl_cluster_config *kept = calloc(n ? n : 1, sizeof *kept);
    if (!rows || !front || !choice || !res || !kept) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = wl_cluster_search_eval(&sys, &gpu, &m, cfgs, n, f, threads, front_only, rows, NULL, NULL,
                                &err);
    Py_END_ALLOW_THREADS
    if (rc) {
        raise_wl(rc, &err);
        goto done;
    }
    long fast = -1, least = -1;
    if (wl_cluster_search_pick(rows, n, front, &fast, &least)) {
        PyErr_NoMemory();
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *ch = (long)i == fast && (long)i == least ? "fastest+least_energy"
                         : (long)i == fast                  ? "fastest"
                         : (long)i == least                 ? "least_energy"
                         : front[i]                         ? "front"
                                                            : "";
        if (front_only && !front[i])
            continue;
        choice[k] = ch;
        res[k] = rows[i].r;
        kept[k++] = cfgs[i];
    }
    cluster_rows_ctx x = {&sys, &m, kept, res, choice, k, f, tokens, NULL};
    out = cluster_rows(&x);
done:
    free(rows);
    free(front);
    free(choice);
    free(res);
    free(kept);
    free(cfgs);
    return out;
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
    return rows_as_columns(cols, nc, fill_catalog, &kind);
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
        return raise_wl(WL_EINVAL, &err);
    }
    const char *text = wl_preset_text(k, id);
    if (!text) {
        wl_error_set(&err, "presets", 0, kind, "no preset '%.60s' (see wattlas.presets())", id);
        return raise_wl(WL_EINVAL, &err);
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
 *            command) -> (log, summary, coefficients)
 * As 'wattlas calibrate': coefficients a list of (name, before, after,
 * stderr, fitted). */
static PyObject *py_calibrate(PyObject *self, PyObject *args)
{
    (void)self;
    wl_calib_run_options o;
    wl_calib_run_options_default(&o);
    double prior_weight, transfer_sd;
    int kfold, lomo, quiet, from_preset;
    if (!PyArg_ParseTuple(args, "sszzzzzzzippddpz", &o.path, &o.gpu, &o.out, &o.host, &o.idle,
                          &o.traces, &o.holdout, &o.fit, &o.host_out, &kfold, &lomo, &quiet,
                          &prior_weight, &from_preset, &transfer_sd, &o.command))
        return NULL;
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
    Py_BEGIN_ALLOW_THREADS
    rc = wl_calib_run(&o, r, &err);
    Py_END_ALLOW_THREADS
    PyObject *log = said(f, &buf, &len), *res = NULL, *coefs = NULL, *summary = NULL;
    if (rc) {
        Py_XDECREF(log);
        free(r);
        return raise_wl(rc, &err);
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
static PyObject *py_learn(PyObject *self, PyObject *args)
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
        return raise_wl(WL_EINVAL, &err);
    }
    if (trees < 0 || trees > 5000 || depth < 0 || depth > 16 || seed > 4294967295ul) {
        wl_error_set(&err, trees < 0 || trees > 5000 ? "trees" : depth < 0 || depth > 16
                                                                  ? "max_depth" : "seed", 0, "",
                     "out of range (trees 1 to 5000, max_depth 1 to 16, seed below 2^32)");
        return raise_wl(WL_EINVAL, &err);
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
    Py_BEGIN_ALLOW_THREADS
    rc = wl_learn_run(&o, &r, &err);
    Py_END_ALLOW_THREADS
    PyObject *log = said(f, &buf, &len);
    if (rc) {
        Py_XDECREF(log);
        return raise_wl(rc, &err);
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
static PyObject *py_plot(PyObject *self, PyObject *args)
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
        return raise_wl(WL_EINVAL, &err);
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
                return raise_wl(WL_EINVAL, &err);
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
                return raise_wl(WL_EINVAL, &err);
            }
        } else if (!strcmp(name, "legend")) {
            const char *v = PyUnicode_AsUTF8(value);
            if (!v || wl_plot_legend_parse(v, &o.legend)) {
                PyErr_Clear();
                wl_error_set(&err, "legend", 0, "legend", "expected outside, inside or none");
                return raise_wl(WL_EINVAL, &err);
            }
        } else if (!strcmp(name, "dpi") || !strcmp(name, "width_in") ||
                   !strcmp(name, "height_in")) {
            double v = PyFloat_AsDouble(value);
            int dpi = !strcmp(name, "dpi");
            if (PyErr_Occurred() || !(v >= (dpi ? 10 : 0.5)) || !(v <= (dpi ? 2400 : 100))) {
                PyErr_Clear();
                wl_error_set(&err, name, 0, name, "expected a number %s", dpi ? "from 10 to 2400"
                                                                             : "of inches, 0.5 to 100");
                return raise_wl(WL_EINVAL, &err);
            }
            *(dpi ? &o.dpi : !strcmp(name, "width_in") ? &o.width_in : &o.height_in) = v;
        } else {
            wl_error_set(&err, name, 0, name, "not an option of wattlas.plot");
            return raise_wl(WL_EINVAL, &err);
        }
    }
    wl_results_table *t = NULL;
    int rc = WL_OK;
    Py_BEGIN_ALLOW_THREADS
    if (!path && !kind->file_fn)
        rc = wl_results_table_load_mem(text, (size_t)tlen, source, &t, &err);
    if (!rc)
        rc = wl_plot_draw(kind, t, path, &k, &o, out, &err);
    Py_END_ALLOW_THREADS
    wl_results_table_free(t);
    if (rc)
        return raise_wl(rc, &err);
    Py_RETURN_NONE;
}

/* _report(items, spec, out, threads, command) -> {points, figures, learned_outside}
 * As 'wattlas report': a study from a spec file and sweep keys. */
static PyObject *py_report(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *items;
    const char *spec_path, *dir, *command;
    int threads;
    if (!PyArg_ParseTuple(args, "Ozsiz", &items, &spec_path, &dir, &threads, &command))
        return NULL;
    wl_sweep_spec *s = build_spec(items, spec_path, 0);
    if (!s)
        return NULL;
    wl_plot_report_options ro = {.command = command, .spec_path = spec_path, .threads = threads};
    wl_plot_report_stats st;
    wl_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = wl_plot_report(s, dir, &ro, &st, &err);
    Py_END_ALLOW_THREADS
    wl_sweep_spec_free(s);
    if (rc)
        return raise_wl(rc, &err);
    return Py_BuildValue("{s:K,s:n,s:K}", "points", st.points, "figures",
                         (Py_ssize_t)st.figures, "learned_outside", st.learned_outside);
}

static PyMethodDef methods[] = {
    {"_sweep", (PyCFunction)(void (*)(void))py_sweep, METH_VARARGS | METH_KEYWORDS,
     "_sweep(items, spec=None, fmt='ndjson', threads=0, predict=False) -> str"},
    {"_columns", (PyCFunction)(void (*)(void))py_columns, METH_VARARGS | METH_KEYWORDS,
     "_columns(items, spec=None, threads=0, predict=False) -> (columns, warnings, stats)"},
    {"_presets", py_presets, METH_NOARGS, "_presets() -> [(kind, id), ...]"},
    {"_catalog", py_catalog, METH_VARARGS, "_catalog(kind) -> columns"},
    {"_compare", py_compare, METH_VARARGS, "_compare(items, objective, clock) -> (columns, notes)"},
    {"_cluster", py_cluster, METH_VARARGS,
     "_cluster(inputs, set, options, search, threads, front_only, clock, tokens) -> columns"},
    {"_select", py_select, METH_VARARGS,
     "_select(what, path, text, source, values, group_by, all, objective, fmt) -> str"},
    {"_validate", py_validate, METH_VARARGS,
     "_validate(path, gpu, host, traces, level, beside, fmt) -> (str, dict)"},
    {"_calibrate", py_calibrate, METH_VARARGS,
     "_calibrate(path, gpu, out, host, idle, traces, holdout, fit, host_out, kfold, lomo, "
     "quiet, prior_weight, from_preset, transfer_sd, command) -> (log, summary, coefficients)"},
    {"_learn", py_learn, METH_VARARGS,
     "_learn(path, out, importance, kind, hybrid, trees, max_depth, seed, gpu, host, beside, "
     "kfold, lomo, random_split, refit) -> (log, summary)"},
    {"_plot", py_plot, METH_VARARGS, "_plot(kind, path, text, source, out, options) -> None"},
    {"_report", py_report, METH_VARARGS,
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
