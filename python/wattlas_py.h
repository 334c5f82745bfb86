/* wattlas._wattlas, shared between its files: _wattlas.c (the module's
 * method table), one file per command group (sweep.c: sweep, predict,
 * columns, compare; presets.c; tables.c: selection, schedules, validation,
 * energy-check, merge, derive-vf; cluster.c: _cluster; fit.c: _calibrate,
 * _learn, _plot, _report), and below them columns.c (rows carried into
 * Python) and errors.c (wattlas.Error). */
#ifndef WATTLAS_PY_H
#define WATTLAS_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <signal.h>

#include "wattlas.h"

/* errors.c: wattlas.Error once the package has set it, ValueError before */
PyObject *wl_py_error_class(void);
/* Raises wattlas.Error (or MemoryError) for a library failure: NULL. */
PyObject *wl_py_raise(int rc, const wl_error *err);
/* _set_error(cls): the exception class errors are raised as */
PyObject *wl_py_set_error(PyObject *self, PyObject *cls);
/* A long call stopped by Ctrl-C or SIGTERM: begin before releasing the GIL
 * (the library polls the flag: wl_stop_watch), end after taking it back:
 * 1 when a signal stopped the call, with its exception set (Python's
 * SIGINT handler's: KeyboardInterrupt by default). */
typedef struct {
    struct sigaction old_int, old_term;
    int on_int, on_term;
} wl_py_stop;
void wl_py_stop_begin(wl_py_stop *st);
int wl_py_stop_end(wl_py_stop *st);

/* sweep.c: a finished spec from (key, value, source) triples (NULL with an
 * exception set). */
wl_sweep_spec *wl_py_build_spec(PyObject *items, const char *spec_path, int predict);

/* columns.c: the binary column stream (WL_FMT_COLUMNS) in *bufp, decoded
 * (NULL with an exception set). */
PyObject *wl_py_decode_columns(char **bufp, size_t len);
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

/* the methods, by file */
PyObject *wl_py_sweep(PyObject *self, PyObject *args, PyObject *kw);
PyObject *wl_py_columns(PyObject *self, PyObject *args, PyObject *kw);
PyObject *wl_py_compare(PyObject *self, PyObject *args);
PyObject *wl_py_presets(PyObject *self, PyObject *unused);
PyObject *wl_py_catalog(PyObject *self, PyObject *args);
PyObject *wl_py_preset_text(PyObject *self, PyObject *args);
PyObject *wl_py_cluster(PyObject *self, PyObject *args);
PyObject *wl_py_calibrate(PyObject *self, PyObject *args);
PyObject *wl_py_learn(PyObject *self, PyObject *args);
PyObject *wl_py_plot(PyObject *self, PyObject *args);
PyObject *wl_py_report(PyObject *self, PyObject *args);
PyObject *wl_py_select(PyObject *self, PyObject *args);
PyObject *wl_py_validate(PyObject *self, PyObject *args);
PyObject *wl_py_energy_check(PyObject *self, PyObject *args);
PyObject *wl_py_merge(PyObject *self, PyObject *args);
PyObject *wl_py_paths_distinct(PyObject *self, PyObject *args);
PyObject *wl_py_derive_vf(PyObject *self, PyObject *args);
PyObject *wl_py_serve_requests(PyObject *self, PyObject *args);
PyObject *wl_py_serve(PyObject *self, PyObject *args);

#endif
