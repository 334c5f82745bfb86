/* Rows the library's row writer writes, carried into Python: the binary
 * column stream (WL_FMT_COLUMNS) decoded into columns, and any other
 * format collected as text over a memory stream. */
#include "wattlas_py.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
PyObject *wl_py_decode_columns(char **bufp, size_t len)
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
    PyObject *out = wl_py_decode_columns(&buf, len);
    free(buf);
    return out;
}

int wl_py_collect_open(wl_py_collect *c, const char *fmt, const wl_results_col *cols, size_t nc)
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
PyObject *wl_py_collect_close(wl_py_collect *c, int ok)
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
