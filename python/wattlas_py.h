/* wattlas._wattlas, shared between its files: _wattlas.c (the module, the
 * error, sweeps, columns, compare, presets), tables.c (selection,
 * schedules, validation, energy-check, merge, derive-vf), cluster.c
 * (_cluster) and fit.c (_calibrate, _learn, _plot, _report). */
#ifndef WATTLAS_PY_H
#define WATTLAS_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "wattlas.h"

/* wattlas.Error once the package has set it, ValueError before */
PyObject *wl_py_error_class(void);
/* Raises wattlas.Error (or MemoryError) for a library failure: NULL. */
PyObject *wl_py_raise(int rc, const wl_error *err);
/* A finished spec from (key, value, source) triples (NULL with an exception set). */
wl_sweep_spec *wl_py_build_spec(PyObject *items, const char *spec_path, int predict);
/* Rows fill() writes, decoded as columns (NULL with an exception set). */
PyObject *wl_py_rows_as_columns(const wl_results_col *cols, size_t nc,
                                int (*fill)(void *ctx, wl_results_writer *w), void *ctx);

/* Text collected from a row writer (NDJSON, CSV, ...) over a memory
 * stream: open (fmt a format name; -1 with an exception set), then close
 * (ok: the text as a str; else discarded; NULL with an exception set). */
typedef struct {
    FILE *f;
    char *text;
    size_t len;
    wl_results_writer *w;
} wl_py_collect;
int wl_py_collect_open(wl_py_collect *c, const char *fmt, const wl_results_col *cols, size_t nc);
PyObject *wl_py_collect_close(wl_py_collect *c, int ok);

/* the methods defined outside _wattlas.c */
PyObject *wl_py_cluster(PyObject *self, PyObject *args);
PyObject *wl_py_calibrate(PyObject *self, PyObject *args);
PyObject *wl_py_learn(PyObject *self, PyObject *args);
PyObject *wl_py_plot(PyObject *self, PyObject *args);
PyObject *wl_py_report(PyObject *self, PyObject *args);
PyObject *wl_py_select(PyObject *self, PyObject *args);
PyObject *wl_py_validate(PyObject *self, PyObject *args);
PyObject *wl_py_energy_check(PyObject *self, PyObject *args);
PyObject *wl_py_merge(PyObject *self, PyObject *args);
PyObject *wl_py_derive_vf(PyObject *self, PyObject *args);

#endif
