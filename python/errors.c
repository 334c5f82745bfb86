/* wattlas.Error: the exception class the package sets (_set_error) and
 * how a library failure is raised as it, with its source, line and field. */
#include "wattlas_py.h"

#include <signal.h>
#include <stdio.h>
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

/* _set_error(cls): the exception class errors are raised as */
PyObject *wl_py_set_error(PyObject *self, PyObject *cls)
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

/* ---- stopping a long call ------------------------------------------------------
 * Python runs its SIGINT handler only between bytecodes, that is after a C
 * call returns (minutes late in a calibration). While the library runs
 * without the GIL, handlers of our own set the flag it polls
 * (wl_stop_watch), so the call returns within its polling interval, its
 * outputs left as they were; then Python's own SIGINT handler runs (by
 * default it raises KeyboardInterrupt), and a SIGTERM is raised again under
 * its own disposition (by default the process ends, its temporary files
 * already gone). Only on the main thread, where Python delivers signals,
 * and not for a signal that is ignored. */
static volatile int py_stop_flag, py_stop_sig;

static void py_on_stop(int sig)
{
    py_stop_sig = sig;
    py_stop_flag = 1;
}

static int py_catch(int sig, struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = py_on_stop;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, NULL, old) || old->sa_handler == SIG_IGN)
        return 0;
    /* SIGINT without Python's handler (SIG_DFL) ends the process as before */
    if (sig == SIGINT && old->sa_handler == SIG_DFL)
        return 0;
    return sigaction(sig, &sa, NULL) == 0;
}

void wl_py_stop_begin(wl_py_stop *st)
{
    st->on_int = st->on_term = 0;
    py_stop_flag = py_stop_sig = 0;
    if (!_PyOS_IsMainThread())
        return;
    st->on_int = py_catch(SIGINT, &st->old_int);
    st->on_term = py_catch(SIGTERM, &st->old_term);
    if (st->on_int || st->on_term)
        wl_stop_watch(&py_stop_flag);
}

int wl_py_stop_end(wl_py_stop *st)
{
    if (st->on_int || st->on_term)
        wl_stop_watch(NULL);
    if (st->on_int)
        sigaction(SIGINT, &st->old_int, NULL);
    if (st->on_term)
        sigaction(SIGTERM, &st->old_term, NULL);
    int sig = py_stop_sig;
    py_stop_flag = py_stop_sig = 0;
    if (!sig)
        return 0;
    /* the stop supersedes what the cut-short call may have raised */
    PyErr_Clear();
    if (sig == SIGTERM)
        raise(SIGTERM); /* its own disposition: the default ends the process */
    else
        PyErr_SetInterrupt(); /* Python's SIGINT handler, run below */
    if (PyErr_CheckSignals() == 0 && !PyErr_Occurred())
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    return 1;
}
