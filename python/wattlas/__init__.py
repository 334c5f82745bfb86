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

import array as _array
import csv as _csv
import io as _io
import json as _json
import math as _math
import os as _os
import struct as _struct
import warnings as _warnings

from . import _check  # keyword values checked as the command line checks them

class _Missing:
    """Stands for the C extension when it is not built: the measurement
    harness (wattlas.measure) runs without it; anything else says why not."""

    def __init__(self, err):
        self._err = err

    def __getattr__(self, name):
        raise ImportError("wattlas: the C extension is not built (make python, or "
                          "pip install --no-build-isolation ./python): %s" % self._err)


try:
    from . import _wattlas
except ImportError as _e:
    _wattlas = _Missing(_e)

__all__ = ["Error", "WattlasWarning", "Rows", "Table", "calibrate", "cluster", "cluster_search",
           "compare", "derive_vf", "energy_check", "learn", "merge", "optimize", "pareto", "plot",
           "predict", "presets", "preset_text", "report", "serve", "serve_requests", "sweep", "validate",
           "version"]

version = None if isinstance(_wattlas, _Missing) else _wattlas.version
__version__ = version


class Error(ValueError):
    """A value wattlas cannot use, or a file it cannot read (``io``):
    ``source`` the keyword or file, ``line`` its line (0: none), ``field``
    the keyword or column, ``text`` what is wrong."""

    source = ""
    line = 0
    field = ""
    text = ""
    io = False

    def __init__(self, message="", *args):
        super().__init__(message, *args)
        # the package's own errors read "keyword: what is wrong" (the
        # library's have their attributes set after this)
        key, sep, rest = str(message).partition(": ")
        if sep and key.replace("_", "").replace(",", "").replace(" ", "").isalnum():
            self.source = self.field = key.split(",")[0].strip()
            self.text = rest
        else:
            self.text = str(message)


if not isinstance(_wattlas, _Missing):
    _wattlas._set_error(Error)


class Rows(list):
    """Result rows: a list of dicts (column name to value, None where the
    command line leaves the cell empty), with the column order in
    ``columns``."""

    def __init__(self, rows=(), columns=(), csv_text=None):
        super().__init__(rows)
        self.columns = list(columns)
        # how the library wrote these rows as CSV, when it made them: pareto
        # and optimize read that text back, so their outputs echo the
        # command line's digits (a float's repr could drop a trailing zero)
        self._csv = csv_text

    def to_csv(self):
        """The rows as CSV text (the library's own text when it made them)."""
        if self._csv is not None and len(self) == self._rows_at_csv:
            return self._csv
        out = _io.StringIO()
        w = _csv.writer(out, lineterminator="\n")
        w.writerow(self.columns)
        for r in self:
            cells = []
            for c in self.columns:
                v = r.get(c)
                cells.append("" if v is None else int(v) if isinstance(v, bool) else
                             repr(v) if isinstance(v, float) else v)
            w.writerow(cells)
        return out.getvalue()

    def to_pandas(self):
        """The rows as a pandas.DataFrame (pandas must be installed)."""
        import pandas

        return pandas.DataFrame(list(self), columns=self.columns)

    def to_numpy(self):
        """A dict of column name to numpy array: float64 for numeric
        columns (NaN where empty), object arrays for text. numpy must be
        installed (python3-numpy): without it this raises Error."""
        numpy = _numpy_or_error("to_numpy")

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


# column types of the library's row writer (wl_results_coltype)
_TEXT, _NUM, _INT, _BOOL, _AUTO = range(5)


def _cell_text(v, ctype, decimals, sig):
    """A number as the library's CSV writer prints it (its rounding is
    printf's, which Python's format shares: correctly rounded, exact
    halves to even); '' for an empty cell."""
    if v is None or v != v:
        return ""
    if ctype == _BOOL:
        return "1" if v else "0"
    if ctype == _INT:
        d = 0
    elif ctype == _NUM and sig > 0:
        d = 0 if v == 0 else max(0, sig - 1 - int(_math.floor(_math.log10(abs(v)))))
    elif decimals < 0:
        t = "%.10g" % v
        return t
    else:
        d = min(decimals, 17)
    t = format(v, ".%df" % d)
    if t.startswith("-") and not t.strip("-0."):
        t = t[1:]  # never -0.00
    return t


def _numpy_or_error(what):
    """numpy, or an Error that says how to get it and what works without."""
    try:
        import numpy
    except ImportError:
        raise Error(f"{what}: numpy is not installed (Debian: apt install python3-numpy); "
                    "without it a column t[name] is an array.array('d') of numbers or a list "
                    "of texts, and rows are dicts") from None
    return numpy


class Table:
    """Result rows held as columns, filled by the library in one pass.

    ``len(t)`` rows; ``t.columns`` their names in order; ``t["time_ms"]``
    one column (a numpy array when numpy is installed: float64 for numbers,
    NaN where empty; object for text; without numpy an array.array("d") of
    numbers, NaN where empty, or a list of texts); ``t[0]`` one row as a dict (None
    where the command line leaves the cell empty); iterating gives the rows
    as dicts. ``to_pandas()``, ``to_numpy()`` and ``to_csv()`` (the command
    line's CSV, digit for digit) convert."""

    def __init__(self, columns, nrows):
        self.columns = [c[0] for c in columns]
        self._meta = {c[0]: (c[1], c[2], c[3]) for c in columns}
        self._n = nrows
        self._data = {}
        for name, ctype, _dec, _sig, texts, raw in columns:
            self._data[name] = (texts, raw)
        self._cache = {}
        self._python_only = set()
        self.summary = None

    def __len__(self):
        return self._n

    def _column(self, name):
        if name in self._cache:
            return self._cache[name]
        texts, raw = self._data[name]
        ctype = self._meta[name][0]
        try:
            import numpy
        except ImportError:
            numpy = None
        if texts is not None:
            vals = list(texts) + [None]
            miss = len(texts)
            if numpy is not None:
                codes = numpy.frombuffer(raw, dtype=numpy.uint32).astype(numpy.int64)
                codes[codes == 0xFFFFFFFF] = miss
                table = numpy.empty(len(vals), dtype=object)
                table[:] = vals
                col = table[codes]
            else:
                col = _texts(texts, raw, None)
        else:
            if numpy is not None:
                col = numpy.frombuffer(raw, dtype=numpy.float64)
                if ctype == _BOOL and not numpy.isnan(col).any():
                    col = col.astype(bool)
                elif ctype == _INT and not numpy.isnan(col).any():
                    col = col.astype(numpy.int64)
            else:
                col = _array.array("d")
                col.frombytes(raw)
        self._cache[name] = col
        return col

    def _value(self, name, i):
        texts, raw = self._data[name]
        ctype = self._meta[name][0]
        if texts is not None:
            c = _struct.unpack_from("I", raw, 4 * i)[0]
            return None if c == 0xFFFFFFFF else texts[c]
        v = _struct.unpack_from("d", raw, 8 * i)[0]
        if v != v:
            return None
        if ctype == _BOOL:
            return v != 0
        if ctype == _INT or (ctype == _AUTO and v == int(v) and abs(v) < 2 ** 53):
            return int(v)
        return v

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self._data:
                raise KeyError(key)
            return self._column(key)
        if isinstance(key, slice):
            return [self[i] for i in range(*key.indices(self._n))]
        i = int(key)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("row index out of range")
        return {c: self._value(c, i) for c in self.columns}

    def __iter__(self):
        for i in range(self._n):
            yield self[i]

    def __repr__(self):
        return "<wattlas.Table: %d rows x %d columns>" % (self._n, len(self.columns))

    def to_numpy(self):
        """A dict of column name to numpy array. numpy must be installed
        (python3-numpy): without it this raises Error; t[name] then gives a
        column as an array.array("d") of numbers or a list of texts."""
        _numpy_or_error("to_numpy")
        return {c: self._column(c) for c in self.columns}

    def to_pandas(self):
        """The rows as a pandas.DataFrame (pandas must be installed)."""
        import pandas

        return pandas.DataFrame(self.to_numpy(), columns=self.columns, copy=False)

    def to_csv(self):
        """The rows as the command line's CSV text (its columns: not the
        ``coefficients`` column the package adds)."""
        out = _io.StringIO()
        w = _csv.writer(out, lineterminator="\n")
        names = [c for c in self.columns if c not in self._python_only]
        w.writerow(names)
        cols = []
        for c in names:
            texts, raw = self._data[c]
            ctype, dec, sig = self._meta[c]
            if texts is not None:
                cols.append(_texts(texts, raw, ""))
            else:
                v = _array.array("d")
                v.frombytes(raw)
                if ctype == _AUTO:  # echoed numbers: the shortest exact form
                    ctype, dec = _NUM, -1
                cols.append([_cell_text(x, ctype, dec, sig) for x in v])
        for row in zip(*cols):
            w.writerow(row)
        return out.getvalue()


def _texts(texts, raw, empty):
    """A text column's rows: its distinct texts by each row's u32 index
    (0xffffffff: empty)."""
    codes = _array.array("I")
    codes.frombytes(raw)
    vals = list(texts) + [empty]
    miss = len(texts)
    return [vals[miss if k == 0xFFFFFFFF else k] for k in codes]


def _table_of(cols):
    """A Table of the extension's columns (a text column's rows are u32
    indices, a number column's f64 values)."""
    n = len(cols[0][5]) // (4 if cols[0][4] is not None else 8) if cols else 0
    return Table(cols, n)


class WattlasWarning(UserWarning):
    """What wattlas warns about: coefficients transferred from another GPU
    rather than measured, workloads that do not fit their GPU's memory,
    contexts past a model's positions, requested clocks outside a GPU's
    range (left out of a sweep)."""


def _columns(items, spec, threads, predict):
    cols, warns, stats = _wattlas._columns(items, spec, int(threads), predict)
    # which coefficients each row's GPU runs on: its own fit ("measured")
    # or another GPU's carried over ("transferred from ...")
    coef = stats["coefficients"]
    gpu = next((c for c in cols if c[0] == "gpu" and c[4] is not None), None)
    if gpu is not None:
        srcs = sorted(set(coef.values()))
        by_gpu = [srcs.index(coef.get(g, "measured")) if coef.get(g, "measured") in srcs else 0
                  for g in gpu[4]]
        codes = _array.array("I")
        codes.frombytes(gpu[5])
        mapped = _array.array("I", (0xFFFFFFFF if k == 0xFFFFFFFF else by_gpu[k] for k in codes))
        cols = list(cols) + [("coefficients", _TEXT, 0, 0, srcs, mapped.tobytes())]
    t = _table_of(cols)
    t._python_only = {"coefficients"}  # not the command line's: left out of to_csv
    for w in warns:
        _warnings.warn(w, WattlasWarning, stacklevel=3)
    for gpu, src in stats["coefficients"].items():
        if src != "measured":
            _warnings.warn(f"{gpu}: coefficients {src}", WattlasWarning, stacklevel=3)
    if stats["unfit"]:
        _warnings.warn(f"{stats['unfit']} of {stats['points']} points need more memory than "
                      "their GPU has (fits = 0)", WattlasWarning, stacklevel=3)
    t.coefficients = stats["coefficients"]
    return t


def _text(key, value, nested=False):
    """One sweep value as the command line writes it (a list of values, not
    of lists: [[1, 2], [3]] would read as 1,2,3 without a word)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple, range)) and nested:
        raise Error(f"{key}: expected a list of values, not a list of lists")
    if isinstance(value, range):
        if value.step <= 0 or len(value) == 0:
            raise Error(f"{key}: expected a non-empty increasing range")
        return f"{value.start}:{value[-1]}:{value.step}"
    if isinstance(value, (list, tuple)):
        if not value:
            raise Error(f"{key}: expected at least one value")
        _check.list_size(key, len(value))
        return ",".join(_text(key, v, True) for v in value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (int, str)):
        return str(value)
    try:  # numpy scalars and arrays
        import numpy

        if isinstance(value, numpy.ndarray):
            if value.ndim > 1 or (nested and value.ndim == 1):
                raise Error(f"{key}: expected a list of values, not a list of lists")
            _check.list_size(key, value.size)  # before 3x10^7 values are converted
            return _text(key, value.tolist(), nested)
        if isinstance(value, numpy.generic):
            return _text(key, value.item(), nested)
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


def _rows(text, csv_text=None):
    rows, columns = [], []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        row = _json.loads(line)
        if not columns:
            columns = list(row)
        rows.append(row)
    out = Rows(rows, columns, csv_text)
    out._rows_at_csv = len(rows)
    return out


Rows._rows_at_csv = -1


def _table(data, what):
    """(path, csv_text, source) for a table given as a file name or Rows."""
    if isinstance(data, (str, _os.PathLike)):
        return _os.fspath(data), None, _os.fspath(data)
    if isinstance(data, (Rows, Table)):
        return None, data.to_csv(), "rows"
    if hasattr(data, "to_csv") and hasattr(data, "columns") and hasattr(data, "dtypes"):
        # a pandas DataFrame (a sweep's, perhaps filtered or joined): its
        # bools as the 1/0 the command line writes, empty cells empty
        frame = data.copy()
        for c in frame.columns:
            if frame[c].dtype == bool:
                frame[c] = frame[c].astype(int)
        return None, frame.to_csv(index=False, na_rep="", lineterminator="\n"), "DataFrame"
    raise Error(f"{what}: expected a CSV file name, a Table or a pandas DataFrame, got a "
                f"{type(data).__name__}")


def _names(key, value):
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise Error(f"{key}: expected a column name or a list of them")


def _group_by(value):
    names = _names("group_by", value)
    return ",".join(names) if names else None


def pareto(data, *, x="time_ms", y="energy_j", minimize=None, group_by=None, all=False,
           fmt=None):
    """The non-dominated rows of each group, as ``wattlas pareto``: ``data``
    a sweep table (a CSV file name, the Table of :func:`sweep`, or a pandas
    DataFrame of one);
    ``minimize`` more columns to minimise; ``group_by`` columns (default:
    the parameters before the voltage and clock); ``all`` keeps points
    that cannot run and every throttled request. Returns Rows, or with
    ``fmt`` the command line's text. Rows keep the group's key columns
    (``gpu``, ``model``, ``batch``, ...), so they join back to the sweep.

    Example::

        t = wattlas.sweep(gpu="a100-pcie-40gb", model="gpt2", batch=[1, 8],
                          clock=range(510, 1411, 30))
        front = wattlas.pareto(t.to_pandas())   # or pareto(t), or a CSV file name
        [(r["batch"], r["sm_clock_mhz"]) for r in front]
    """
    path, text, source = _table(data, "data")
    values = _names("x", x) + _names("y", y) + _names("minimize", minimize)
    out = _wattlas._select("pareto", path, text, source, values, _group_by(group_by),
                           bool(all), None, fmt or "ndjson")
    return out if fmt else _rows(out)


def optimize(data, objective="energy", *, group_by=None, all=False, time=None,
             power="power_w", energy=None, schedule=None, switch_us=20.0, fmt=None):
    """One point per group chosen by ``objective`` (energy, edp, ed2p,
    energy-within-slowdown=P, time-within-power=W) and its savings against
    the fastest point and the maximum clock, with the flat optimum
    (``clock_within_1pct_min_mhz`` to ``..._max_mhz``), as ``wattlas
    optimize``. Returns Rows, or with ``fmt`` the command line's text.
    Rows have the group's key columns (``gpu``, ``model``, ``batch``, ...)
    to join back to the sweep, then ``objective``, the chosen point's
    ``sm_clock_mhz``, ``time_ms``, ``power_w``, ``energy_j``, the fastest
    and maximum-clock points' (``fastest_*``, ``max_*``), the savings and
    penalties (``energy_saving_vs_max_clock_pct``, ...) and the flat
    optimum ``clock_within_1pct_min_mhz`` .. ``_max_mhz``. ``time`` and
    ``energy`` name the value columns (default ``time_ms`` and ``energy_j``;
    in a table with ``kernel_class``, a sweep with ``kernels=True``, each
    class is chosen on ``class_time_ms`` and ``class_energy_j`` unless they
    name columns).

    ``schedule`` ("class", "phase" or True: class when the table has
    ``kernel_class``) gives one clock per part of the work instead, as
    ``wattlas optimize --schedule``: per kernel class of a sweep with
    ``kernels=True``, or per phase of a train or decode sweep, each clock
    switch costing ``switch_us`` microseconds at static power (objectives
    energy and energy-within-slowdown=P). Rows: the best fixed clock, the
    schedule, its switches, its extra saving and its slowdown.

    Example::

        df = wattlas.sweep(gpu="a100-pcie-40gb", model="gpt2", batch=[1, 8],
                           clock=range(510, 1411, 30)).to_pandas()
        best = wattlas.optimize(df, "energy-within-slowdown=10").to_pandas()
        df.merge(best, on=["gpu", "model", "batch"], suffixes=("", "_opt"))
    """
    path, text, source = _table(data, "data")
    if not isinstance(objective, str):
        raise Error("objective: expected text such as 'energy-within-slowdown=5'")
    by_class = time is None and energy is None
    values = (_names("time", "time_ms" if time is None else time) + _names("power", power)
              + _names("energy", "energy_j" if energy is None else energy))
    if len(values) != 3:
        raise Error("time, power, energy: expected one column name each")
    if schedule is True:
        schedule = "auto"
    elif schedule is False:
        schedule = None
    if schedule is not None and not isinstance(schedule, str):
        raise Error("schedule: expected 'class', 'phase' or True")
    if schedule is not None and group_by is not None:
        raise Error("group_by: a schedule groups by the sweep's parameters; leave group_by out")
    try:
        switch_us = float(switch_us)
    except (TypeError, ValueError):
        raise Error("switch_us: expected a number of microseconds") from None
    out = _wattlas._select("optimize", path, text, source, values, _group_by(group_by),
                           bool(all), objective, fmt or "ndjson", schedule, switch_us, by_class)
    return out if fmt else _rows(out)


def energy_check(gpu: str = "a100-sxm-80gb", *, dtype=None, fmt: "str | None" = None):
    """Board energy per operation at peak against the arithmetic's first
    principles, as ``wattlas energy-check``: a row per GPU (one or a list)
    and precision (``dtype``: one name or a list, default every one it has) with the
    board's pJ per FLOP, the multiply's and add's, the operands', the
    residual, ``first_principles_pct`` and the model's own at a large
    GEMM. Returns Rows, or with ``fmt`` the command line's text.

    Example::

        r = wattlas.energy_check("h100-sxm-80gb", dtype="bf16")
        r[0]["board_pj_per_flop"], r[0]["first_principles_pct"]
    """
    gpus = ",".join(_names("gpu", gpu))
    dtypes = None if dtype is None else ",".join(_names("dtype", dtype))
    out = _wattlas._energy_check(gpus, dtypes, fmt or "ndjson")
    return out if fmt else _rows(out)


def serve(*, fmt: "str | None" = None, **options):
    """A serving engine with vLLM's semantics on a request mix, as
    ``wattlas serve``: the same options as keywords (``max_num_seqs``,
    ``max_num_batched_tokens``, ``gpu_memory_utilization``, ``workload``,
    ``prompt_tokens``, ``output_tokens``, ``requests``, ``rate``, ``seed``,
    ``gpu``, ``model``, ``dtype``, ``host``, ``clock``, ``set``
    ("KEY=LIST" or a list of them), ``temperature``, ``top_p``, ``top_k``,
    ``repetition_penalty``, ``output_mean_tokens``, ``tp`` (tensor
    parallelism, a list for several), ``ep``, ``dp`` (data-parallel
    engines) and ``system`` (the GPUs' links),
    ``sampler`` ("native" or "flashinfer"), ``async_scheduling``, ``optimize``,
    ``max_itl_ms``, ``max_ttft_ms``, ``phase_clocks``, ``all``); lists as
    Python lists. Returns Rows with serve's columns: the steady state, the
    ML.ENERGY benchmark's window (avg_batch, output_tokens_per_s, power_w,
    energy_per_token_j, energy_per_request_j, steady_s, stable: None when
    the run has none), the client's latencies over the whole run
    (median_itl_ms, p90_itl_ms, p99_itl_ms, median_ttft_ms, p90_ttft_ms),
    the whole run (run_avg_batch, run_power_w, run_energy_per_token_j,
    run_energy_per_request_j, time_s, energy_j, ...; power and energy summed
    over the run's ``gpus``), or with ``fmt`` the
    command line's text.

    Example::

        r = wattlas.serve(max_num_seqs=[16, 128], async_scheduling=True)
        r[1]["energy_per_token_j"], r[1]["median_itl_ms"]
    """
    out = _wattlas._serve(_serve_items(options), fmt or "ndjson")
    return out if fmt else _rows(out)


def _serve_items(options):
    items = []
    for k, v in options.items():
        if v is None or v is False:
            continue
        if k == "set":
            for one in ([v] if isinstance(v, str) else list(v)):
                if not isinstance(one, str):
                    raise Error("set: expected \"KEY=LIST\" or a list of them")
                items.append(("set", one))
            continue
        if v is True:
            items.append((k, "energy" if k == "optimize" else "on"))
            continue
        items.append((k, _text(k, v)))
    return items


def serve_requests(**options):
    """The requests :func:`serve` sends for the same options (``workload``,
    ``requests``, ``seed``, ``prompt_tokens``, ``output_tokens``,
    ``temperature``, ``top_p``, ``top_k``), as a dict: ``name``,
    ``prompt_tokens`` and ``output_tokens`` (lists, in the order sent) and
    the sampling they ask for (``temperature``, ``top_p``, ``top_k``). What
    ``python3 -m wattlas.measure serve`` replays on a GPU.
    """
    return _wattlas._serve_requests(_serve_items(options))


def merge(shards, out: "str | os.PathLike | None" = None):
    """Joins the outputs of ``sweep(..., shard="I/N", fmt="csv")`` (or
    ndjson), in any order, into what the unsharded sweep writes, as
    ``wattlas merge``: every shard of one sweep exactly once, each complete.
    With ``out`` the result is written there atomically and ``out`` is
    returned; without, the text.

    Example::

        for i in (1, 2):
            with open(f"part{i}.csv", "w") as f:
                f.write(wattlas.sweep(model="gpt2", shard=f"{i}/2", fmt="csv"))
        wattlas.merge(["part1.csv", "part2.csv"], out="all.csv")
    """
    if isinstance(shards, (str, _os.PathLike)):
        shards = [shards]
    paths = [_os.fspath(p) for p in shards]
    _check.distinct({"out": out}, paths)
    text = _wattlas._merge(paths, None if out is None else _os.fspath(out))
    return _os.fspath(out) if out is not None else text


def validate(path, *, gpu=None, host=None, traces=None, interval=None, beside=True,
             board=None, idle=None, learned=None, lomo=False, fmt=None):
    """Predicts every row of a measurements file (the schema of
    shared/data/measurements), as ``wattlas validate``: Rows of the input
    columns and predicted_* (with ``interval``, e.g. 0.95, the bounds too,
    with the spread between boards unless the preset was fitted on this
    very file, or as ``board`` says: "same" or "other");
    ``idle``: measured idle tables ("[ID=]TABLE.csv", one or a list);
    ``learned``: a model from :func:`learn` predicts the rows.
    ``rows.summary`` holds the pooled MAPE of time, power and energy, the
    row counts, the intervals' coverage, the learned model's MAPE, and per
    GPU (``summary["gpus"][id]``) its MAPE and the energy-optimal clock's
    regret; with ``lomo`` the leave-one-model-out refits' pooled held-out
    MAPE and regret too (``["lomo"]``; the command line's --lomo). Raises Error when no row can be scored.

    Example::

        v = wattlas.validate("shared/data/measurements/a100-pcie-40gb-dvfs.csv")
        v.summary["mape_energy_pct"], v.to_pandas()[["predicted_time_ms", "time_ms"]]
    """
    if not isinstance(path, (str, _os.PathLike)):
        raise Error("path: expected a measurements CSV file name")
    level = 0.0
    if interval is not None:
        level = float(interval)
        if level > 1:
            level /= 100
        if not 0 < level < 1:
            raise Error(f"interval: expected a level in (0, 1) or (0, 100), got {interval}")
    if board is not None and board not in ("same", "other"):
        raise Error(f"board: expected same or other, got '{board}'")
    idle_specs = None
    if idle is not None:
        idle_specs = [_os.fspath(i) for i in ([idle] if isinstance(idle, (str, _os.PathLike))
                                                else idle)]
    out, summary = _wattlas._validate(_os.fspath(path), gpu, host,
                                      None if traces is None else _os.fspath(traces), level,
                                      bool(beside), fmt or "ndjson", board, idle_specs,
                                      None if learned is None else _os.fspath(learned),
                                      bool(lomo))
    if fmt:
        return out
    rows = _rows(out)
    rows.summary = summary
    return rows


_ROW_COLUMNS = """
    Columns (units in every name; ``wattlas sweep --help`` gives the rest):
    the parameters ``gpu``, any ``set`` field, ``model``, ``batch``,
    ``seq``, ``dtype``, ``attention``, ``mode``, ``scope``,
    ``voltage_offset_mv``; then ``sm_clock_mhz`` (requested),
    ``effective_clock_mhz`` (after the power limit), ``voltage_mv``,
    ``feasible``, ``throttled``, ``time_ms``, ``power_w``, ``energy_j`` and
    its parts ``energy_dyn_compute_j``, ``energy_dyn_memory_j``,
    ``energy_static_j``, ``launch_bound_pct``, ``memory_gb``, ``fits``;
    training adds ``time_fwd_ms`` ... ``mfu``, decode ``ttft_ms``,
    ``tpot_ms``, ``energy_per_token_j``; ``kernels=True`` a row per kernel
    class (``kernel_class``, ``class_time_ms``, ...); ``interval`` the
    bounds (``time_lo_ms``, ...). The package adds ``coefficients``:
    ``measured``, or ``transferred from GPU`` when the GPU's coefficients
    were carried over from another's fit.
"""

_AXES_DOC = """
    Every axis takes one value or several: a list or tuple (the values), a
    ``range`` or numpy array (its values), or the command line's text
    (``"510:1410:90"``, ``"900,1410"``); True and False are on and off.

    gpu: GPU preset ids or INI files (``wattlas.presets("gpu")``).
    model: model presets, INI files or Hugging Face ids; trace: kernel traces
    or PyTorch profiles; profile_clock, profile_power_limit_w, profile_gpu:
    the SM clock, board power limit and GPU a profile ran at and on, where
    its file does not say; profile_step_ms: its step's wall time unprofiled.
    batch, seq: sequences per pass and tokens per sequence.
    dtype: bf16, fp16, fp32, tf32, fp8; attention: eager or flash.
    mode: prefill, train or decode; gen: tokens generated (decode).
    clock: SM clocks in MHz ("max": the top clock); voltage_mv,
    voltage_offset_mv: a fixed voltage or an offset from the V-f curve.
    scope: model or layer; kernels: a row per kernel class.
    power_limit: "on"/"off" (the board limit); power_limit_w: board power
    limits in W (the command line's --power-limit-w, the same as
    set={"power_limit_w": ...}); set: {preset field: values}, e.g.
    {"sms": [108, 132]}.
    host: the host preset that issues kernels; idle: measured idle tables.
    optimizer, master_dtype, recompute, grad_accum: training options;
    finetune ("full" or "lora"), lora_rank, lora_targets ("q,k,v,o", "all"),
    freeze (the first N layers): what a training step trains;
    launch: eager or graphs (decode); stack: hf5 (transformers 5.x, the
    default) or hf4 (EnergAIzer's A100 stack); impl: hf-eager or fused;
    latency: tiled or roofline;
    interval: a prediction interval level (95), with the spread between
    boards and hosts of one product unless board="same" (the preset was
    calibrated on this very board); learned: a learned model.
"""


# the sweep keys sweep and predict take by name (the rest through **more)
_AXIS_KEYS = ("gpu", "model", "trace", "batch", "seq", "dtype", "attention", "mode", "clock",
              "voltage_mv", "voltage_offset_mv", "scope", "kernels", "power_limit",
              "power_limit_w", "set",
              "host", "idle", "optimizer", "master_dtype", "recompute", "grad_accum",
              "finetune", "lora_rank", "lora_targets", "freeze", "gen",
              "launch", "stack", "impl", "latency", "interval", "learned", "profile_clock",
              "profile_power_limit_w", "profile_gpu", "profile_step_ms")


def _axes(args):
    """The sweep items of a call's arguments (its locals: the named axes and
    **more); kernels=True is the spec's classes."""
    kw = {k: args[k] for k in _AXIS_KEYS if k in args}
    kw.update(args.get("more") or {})
    if kw.pop("kernels", None):
        kw["classes"] = True
    return _items(kw)


def sweep(spec: "str | os.PathLike | None" = None, *, gpu=None, model=None, trace=None,
          batch=None, seq=None, dtype=None, attention=None, mode=None, clock=None,
          voltage_mv=None, voltage_offset_mv=None, scope=None, kernels: bool = False,
          power_limit=None, set: "dict | None" = None, host=None, idle=None, optimizer=None,
          master_dtype=None, recompute=None, grad_accum=None, gen=None, launch=None,
          latency=None, interval=None, learned=None, profile_clock=None,
          profile_power_limit_w=None, profile_gpu=None, profile_step_ms=None, threads: int = 0,
          fmt: "str | None" = None, shard: "str | None" = None, **more) -> "Table | str":
    items = _axes(locals())
    threads = _check.integer("threads", threads, 0, 1024)  # 0: every core
    if shard is not None:
        if fmt not in ("csv", "ndjson"):
            raise Error("shard: a shard is written as csv or ndjson: give fmt='csv'")
        return _wattlas._sweep(items, None if spec is None else _os.fspath(spec), fmt,
                               int(threads), False, str(shard))
    if fmt:
        return _wattlas._sweep(items, None if spec is None else _os.fspath(spec), fmt,
                               int(threads), False)
    return _columns(items, None if spec is None else _os.fspath(spec), threads, False)


def predict(gpu: "str | None" = None, model: "str | None" = None, *, batch=None, seq=None,
            dtype=None, attention=None, mode=None, clock=None, voltage_mv=None,
            voltage_offset_mv=None, scope=None, kernels: bool = False, power_limit=None,
            set: "dict | None" = None, host=None, idle=None, trace=None, optimizer=None,
            master_dtype=None, recompute=None, grad_accum=None, gen=None, launch=None,
            latency=None, interval=None, learned=None, profile_clock=None,
            profile_power_limit_w=None, profile_gpu=None, profile_step_ms=None, fmt: "str | None" = None,
            **more) -> "Table | str":
    if gpu is not None and (isinstance(gpu, (list, tuple)) or "," in str(gpu)):
        raise Error("gpu: predict takes one GPU (sweep takes several)")
    if scope is not None and scope not in ("model", "layer", "decoder"):
        raise Error(f"scope: expected model or layer (or decoder), got '{scope}'")
    items = _axes(locals())
    if fmt:
        return _wattlas._sweep(items, None, fmt, 1, True)
    return _columns(items, None, 1, True)


sweep.__doc__ = """Evaluates a grid of workloads and operating points, as ``wattlas
    sweep``, in one pass of the library; returns a :class:`Table`.

    spec: an INI spec file; keywords given here replace its axes.
    threads: 0 for all cores. fmt: "csv", "ndjson", "json" or "table" to get
    the command line's text instead of a Table. shard: "I/N", the I-th of N
    contiguous slices as ``--shard I/N`` writes it (fmt csv or ndjson;
    :func:`merge` joins them).
""" + _AXES_DOC + _ROW_COLUMNS + """
    Example::

        t = wattlas.sweep(gpu=["a100-pcie-40gb", "h100-sxm-80gb"], model="gpt2",
                          batch=[1, 8], clock=range(510, 1411, 90))
        t.to_pandas().groupby("gpu")["energy_j"].min()
"""

predict.__doc__ = """One workload on one GPU at one or more clocks (the GPU's top clock
    unless ``clock`` is given), as ``wattlas predict``; returns a
    :class:`Table`. Clocks outside the GPU's range are an error here
    (``sweep`` leaves them out with a note). fmt: the command line's text.
""" + _AXES_DOC + _ROW_COLUMNS + """
    Example::

        t = wattlas.predict("h100-sxm-80gb", "llama-3-8b", mode="decode",
                            launch="graphs", batch=32, seq=512, gen=256)
        t[0]["tpot_ms"], t[0]["energy_per_token_j"]
"""


def compare(gpu, model: "str | None" = None, *, objective: str = "energy", clock=None,
            batch=None, seq=None, dtype=None, attention=None, mode=None, scope=None,
            power_limit=None, set: "dict | None" = None, host=None, idle=None, trace=None,
            optimizer=None, master_dtype=None, recompute=None, grad_accum=None, gen=None,
            launch=None, latency=None, interval=None, learned=None, profile_clock=None,
            profile_power_limit_w=None, profile_gpu=None, profile_step_ms=None, fmt: "str | None" = None,
            same_board: bool = False, **more) -> "Table":
    """One workload on several GPUs, as ``wattlas compare``: each GPU's
    point at ``clock`` (default its maximum), at its maximum clock, and at
    the clock of its grid the ``objective`` chooses (energy, edp, ed2p,
    energy-within-slowdown=P, time-within-power=W); a :class:`Table` with a
    row per GPU. gpu: a list of GPU presets; the other keywords one value
    each, as in :func:`predict`; same_board: every GPU on the first one's
    board (--same-board); fmt: the command line's text instead. A GPU that cannot run the case gets a row
    of empty numbers and a WattlasWarning saying why.

    Example::

        t = wattlas.compare(["a100-pcie-40gb", "h100-sxm-80gb"], "llama-3-8b",
                            batch=8, seq=512, objective="energy-within-slowdown=10")
        t.to_pandas()[["gpu", "opt_sm_clock_mhz", "opt_energy_j"]]
    """
    args = dict(locals())
    args.pop("objective")
    args.pop("clock")
    args.pop("fmt")
    one_board = args.pop("same_board")
    if not isinstance(one_board, bool):
        raise Error("same_board: expected True or False")
    items = _axes(args) + [("clock", "max", "clock")]
    if one_board:
        items.append(("same_board", "on", "same_board"))
    clock = 0.0 if clock is None else _check.real("clock", clock, 1, 100000)  # 0: the maximum
    cols, notes = _wattlas._compare(items, str(objective), clock, fmt)
    for _warning, text in notes:
        _warnings.warn(text, WattlasWarning, stacklevel=2)
    return cols if fmt else _table_of(cols)


from ._cluster import cluster, cluster_search  # noqa: E402 (after what it imports)


def presets(kind: "str | None" = None) -> "Table":
    """The built-in presets as ``wattlas presets list`` prints them: a
    :class:`Table` with ``kind`` (gpu, model, host, system), ``id``,
    ``name`` and each kind's figures (a GPU's ``sms``, clocks,
    ``dram_bw_gbs``, ``power_limit_w``, ``mem_capacity_gb``, ``host``; a
    model's ``layers``, ``d_model``, ``heads``, ``d_ff``, ``params_m``;
    ...); only those of ``kind`` when given.

    Example::

        gpus = wattlas.presets("gpu").to_pandas()
        gpus.sort_values("power_limit_w")[["id", "sms", "dram_bw_gbs"]]
    """
    kinds = ("gpu", "model", "host", "system")
    if kind is not None and kind not in kinds:
        raise Error(f"kind: expected gpu, model, host or system, got '{kind}'")
    cols = _wattlas._catalog(-1 if kind is None else kinds.index(kind))
    return _table_of(cols)


def preset_text(kind, id):
    """The INI text of a built-in preset."""
    return _wattlas._preset_text(kind, id)


def derive_vf(idle: "str | os.PathLike", *, step_mhz: float = 60) -> str:
    """A smoothed ``[vf]`` section from a measured idle table (columns
    ``sm_clock_mhz,voltage_mv,idle_power_w``), knots every ``step_mhz``, as
    ``wattlas presets derive-vf``; returns the INI text.

    Example::

        text = wattlas.derive_vf("my-gpu-idle.csv", step_mhz=30)
    """
    return _wattlas._derive_vf(_os.fspath(idle), float(step_mhz))


from ._fit import calibrate, learn, plot, report  # noqa: E402 (after what it imports)


def __dir__():
    """The API only (PEP 562): what ``from wattlas import *`` gives, and
    the measurement harness."""
    return sorted(__all__ + ["measure", "__version__"])
