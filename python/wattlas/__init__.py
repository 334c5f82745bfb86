"""wattlas: time, power and energy of AI workloads on GPUs at any clock.

The same C library as the ``wattlas`` command line, from Python::

    import wattlas
    rows = wattlas.predict(gpu="a100-pcie-40gb", model="gpt2", batch=8, seq=512,
                           dtype="bf16", clock=[900, 1410])
    rows[0]["energy_j"]          # a list of dicts, one per row
    rows.to_pandas()             # a DataFrame, when pandas is installed
    rows.to_numpy()["time_ms"]   # numpy arrays by column, when numpy is installed

Keyword arguments are the sweep keys of ``wattlas sweep --help`` and the spec
files (``gpu``, ``model``, ``trace``, ``batch``, ``seq``, ``dtype``,
``attention``, ``mode``, ``clock``, ``voltage_mv``, ``scope``, ``latency``,
``power_limit``, ``interval``, ``host``, ``optimizer``, ``recompute``,
``gen``, ...); a list or tuple is an axis, ``range``/``(lo, hi, step)`` are
written as the command line takes them (``clock="510:1410:90"``), True and
False are on and off, and ``set={"power_limit_w": [250, 300]}`` sweeps GPU
preset fields. The numbers are the command line's, digit for digit: both
format them with the library's one row writer.

Bad input raises :class:`wattlas.Error` with the library's message; its
``source``, ``line`` and ``field`` name where the bad value came from (the
keyword, or the spec file and its line).
"""

import json

from . import _wattlas

__all__ = ["Error", "Rows", "predict", "sweep", "presets", "preset_text", "version"]

version = _wattlas.version
__version__ = version


class Error(ValueError):
    """A value wattlas cannot use, or a file it cannot read (``io``)."""

    source = ""
    line = 0
    field = ""
    text = ""
    io = False


_wattlas._set_error(Error)


class Rows(list):
    """Result rows: a list of dicts (column name to value, None where the
    command line leaves the cell empty), with the column order in
    ``columns``."""

    def __init__(self, rows=(), columns=()):
        super().__init__(rows)
        self.columns = list(columns)

    def to_pandas(self):
        """The rows as a pandas.DataFrame (pandas must be installed)."""
        import pandas

        return pandas.DataFrame(list(self), columns=self.columns)

    def to_numpy(self):
        """A dict of column name to numpy array: float64 for numeric
        columns (NaN where empty), object arrays for text."""
        import numpy

        out = {}
        for c in self.columns:
            vals = [r.get(c) for r in self]
            if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                   for v in vals):
                out[c] = numpy.array([numpy.nan if v is None else v for v in vals],
                                     dtype=numpy.float64)
            else:
                out[c] = numpy.array(vals, dtype=object)
        return out


def _text(key, value):
    """One sweep value as the command line writes it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, range):
        if value.step <= 0 or len(value) == 0:
            raise Error(f"{key}: expected a non-empty increasing range")
        return f"{value.start}:{value[-1]}:{value.step}"
    if isinstance(value, (list, tuple)):
        if not value:
            raise Error(f"{key}: expected at least one value")
        return ",".join(_text(key, v) for v in value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (int, str)):
        return str(value)
    try:  # numpy scalars and arrays
        import numpy

        if isinstance(value, numpy.ndarray):
            return _text(key, value.tolist())
        if isinstance(value, numpy.generic):
            return _text(key, value.item())
    except ImportError:
        pass
    raise Error(f"{key}: cannot use a {type(value).__name__} as a value")


def _items(kw):
    items = []
    for key, value in kw.items():
        if value is None:
            continue
        if key == "set":
            if not isinstance(value, dict):
                raise Error("set: expected a dict of GPU preset fields to values")
            for field, v in value.items():
                items.append((f"set.{field}", _text(f"set.{field}", v), f"set.{field}"))
            continue
        items.append((key, _text(key, value), key))
    return items


def _rows(text):
    rows, columns = [], []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        row = json.loads(line)
        if not columns:
            columns = list(row)
        rows.append(row)
    return Rows(rows, columns)


def sweep(spec=None, *, threads=0, fmt=None, **axes):
    """Evaluates a grid, as ``wattlas sweep``: ``spec`` an INI spec file
    (keywords given here replace its axes), ``threads`` 0 for all cores.
    Returns Rows, or with ``fmt`` ("csv", "ndjson", "json", "table") the
    text the command line writes."""
    text = _wattlas._sweep(_items(axes), spec, fmt or "ndjson", int(threads), False)
    return text if fmt else _rows(text)


def predict(gpu=None, model=None, *, fmt=None, **options):
    """One workload on one GPU at one or more clocks (the maximum unless
    ``clock`` is given), as ``wattlas predict``. Returns Rows, or with
    ``fmt`` the command line's text."""
    if gpu is not None and (isinstance(gpu, (list, tuple)) or "," in str(gpu)):
        raise Error("gpu: predict takes one GPU (sweep takes several)")
    scope = options.get("scope")
    if scope is not None and scope not in ("model", "layer", "decoder"):
        raise Error(f"scope: expected model or layer (or decoder), got '{scope}'")
    options.update(gpu=gpu, model=model)
    text = _wattlas._sweep(_items(options), None, fmt or "ndjson", 1, True)
    return text if fmt else _rows(text)


def presets(kind=None):
    """The built-in presets as dicts with ``kind`` (gpu, model, host,
    system) and ``id``; only those of ``kind`` when given."""
    if kind is not None and kind not in ("gpu", "model", "host", "system"):
        raise Error(f"kind: expected gpu, model, host or system, got '{kind}'")
    return [{"kind": k, "id": i} for k, i in _wattlas._presets() if kind in (None, k)]


def preset_text(kind, id):
    """The INI text of a built-in preset."""
    return _wattlas._preset_text(kind, id)
