"""Keyword values checked as the command line checks its options: Python
refuses exactly what the CLI refuses, naming the keyword. Before these, a
NaN clock, ``nodes=1.5``, ``tp=True``, ``power_limits=b'x'`` (120 W) and
``threads=-1`` were coerced or replaced without a word (issue 64)."""

import math as _math


def _error(key, what, value):
    from . import Error
    return Error(f"{key}: expected {what}, got {value!r}")


def _finite(key, what, value, lo, hi):
    """value as a float in [lo, hi]; True, False, text and non-numbers are
    not numbers here."""
    if isinstance(value, (bool, str, bytes, bytearray)):
        raise _error(key, what, value)
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        raise _error(key, what, value) from None
    if not _math.isfinite(f) or not lo <= f <= hi:
        raise _error(key, what, value)
    return f


def integer(key, value, lo, hi):
    """An int (or numpy integer, or a float with no fraction) in [lo, hi]."""
    what = f"an integer in [{lo}, {hi}]"
    f = _finite(key, what, value, lo, hi)
    if f != _math.floor(f):
        raise _error(key, what, value)
    return int(f)


def real(key, value, lo, hi):
    """A finite number in [lo, hi]."""
    return _finite(key, f"a number in [{lo:g}, {hi:g}]", value, lo, hi)


# the command line's limit on a list or range (WL_LIST_MAX)
LIST_MAX = 1000000


def list_size(key, n):
    """A list of n values for key, refused before it is converted when
    longer than the command line takes."""
    if n > LIST_MAX:
        from . import Error
        raise Error(f"{key}: the list has more than {LIST_MAX} values ({n})")


def distinct(outputs, *values):
    """No output (outputs: {keyword: path or None}) is one of the inputs
    (every file name among values: strings and path-likes, in lists and
    dicts too) or another output, as the command line refuses it
    (wl_results_paths_distinct: by device and inode, links followed)."""
    import os
    from . import _wattlas
    ins = []

    def walk(v):
        if isinstance(v, (str, os.PathLike)):
            p = os.fspath(v)
            if isinstance(p, str) and p:
                ins.append(("the input", p))
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
    for v in values:
        walk(v)
    outs = [(k, os.fspath(p)) for k, p in outputs.items() if p is not None]
    _wattlas._paths_distinct(ins, outs)
