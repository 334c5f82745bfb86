/* wattlas._wattlas: the CPython binding of libwattlas, its method table.
 * It only carries text across: a sweep spec's keys in (the grammar every
 * other front end uses), the library's own row writer's rows out, so that
 * Python sees the same numbers, digit for digit, as the command line.
 * Errors become wattlas.Error with the library's message and its source,
 * line and field. The methods are in one file per command group:
 * sweep.c (sweep, predict, columns, compare), presets.c, tables.c (pareto,
 * optimize, validate, energy-check, merge, derive-vf), cluster.c, fit.c
 * (calibrate, learn, plot, report); below them columns.c (rows carried
 * into Python) and errors.c (wattlas.Error). */
#include "wattlas_py.h"

static PyMethodDef methods[] = {
    {"_sweep", (PyCFunction)(void (*)(void))wl_py_sweep, METH_VARARGS | METH_KEYWORDS,
     "_sweep(items, spec=None, fmt='ndjson', threads=0, predict=False) -> str"},
    {"_columns", (PyCFunction)(void (*)(void))wl_py_columns, METH_VARARGS | METH_KEYWORDS,
     "_columns(items, spec=None, threads=0, predict=False) -> (columns, warnings, stats)"},
    {"_presets", wl_py_presets, METH_NOARGS, "_presets() -> [(kind, id), ...]"},
    {"_catalog", wl_py_catalog, METH_VARARGS, "_catalog(kind) -> columns"},
    {"_compare", wl_py_compare, METH_VARARGS, "_compare(items, objective, clock) -> (columns, notes)"},
    {"_cluster", wl_py_cluster, METH_VARARGS,
     "_cluster(inputs, set, options, search, threads, front_only, clock, tokens) -> columns"},
    {"_energy_check", wl_py_energy_check, METH_VARARGS,
     "_energy_check(gpu, dtypes, fmt) -> str"},
    {"_serve", wl_py_serve, METH_VARARGS, "_serve(items, fmt) -> str"},
    {"_serve_requests", wl_py_serve_requests, METH_VARARGS, "_serve_requests(items) -> dict"},
    {"_merge", wl_py_merge, METH_VARARGS, "_merge(paths, out) -> str or None"},
    {"_paths_distinct", wl_py_paths_distinct, METH_VARARGS,
     "_paths_distinct([(what, path)], [(what, path)]) -> None; raises when an output is an "
     "input or another output"},
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
    {"_preset_text", wl_py_preset_text, METH_VARARGS, "_preset_text(kind, id) -> str"},
    {"_set_error", wl_py_set_error, METH_O, "_set_error(cls)"},
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
