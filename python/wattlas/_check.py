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
