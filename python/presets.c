/* The methods of wattlas._wattlas over the presets: their list, a kind's
 * catalogue as columns, and a preset's text. */
#include "wattlas_py.h"

#include <stdio.h>
#include <string.h>

/* _catalog(kind) -> columns (as _columns): the table 'wattlas presets
 * list' prints, of one kind (-1: all). */
static int fill_catalog(void *ctx, wl_results_writer *w)
{
    return wl_cluster_catalog_rows(*(const int *)ctx, w);
}

PyObject *wl_py_catalog(PyObject *self, PyObject *args)
{
    (void)self;
    int kind = -1;
    if (!PyArg_ParseTuple(args, "i", &kind))
        return NULL;
    wl_results_col cols[WL_CLUSTER_CATALOG_COLS];
    size_t nc = wl_cluster_catalog_cols(kind, cols);
    return wl_py_rows_as_columns(cols, nc, fill_catalog, &kind);
}

PyObject *wl_py_presets(PyObject *self, PyObject *unused)
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
PyObject *wl_py_preset_text(PyObject *self, PyObject *args)
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
