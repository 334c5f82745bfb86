"""wattlas.calibrate, learn, plot and report: the commands that fit a GPU
or a learned model to measurements, draw a figure and write a study,
through the library (python/fit.c); the package re-exports them."""
import os as _os
import warnings as _warnings

from . import _wattlas
from . import Error, Rows, WattlasWarning, _check, _items, _names, _table


def _call_text(name, args):
    """How a call was made, for the files it writes (as the command line
    records its own command)."""
    parts = [repr(a) for a in args.get("_pos", ())]
    parts += [f"{k}={v!r}" for k, v in args.items() if k != "_pos" and v is not None]
    return f"wattlas.{name}({', '.join(parts)})"


def calibrate(path: "str | os.PathLike", gpu: str, *, out: "str | os.PathLike",
              host: "str | None" = None, idle=None, traces=None, holdout=None,
              fit: "str | list | None" = None, host_out=None, kfold: "int | None" = None,
              lomo: bool = False, prior_weight: "float | None" = None,
              from_preset: bool = False, transfer_sd: "float | None" = None,
              quiet: bool = False, vf: "str | None" = None,
              verbose: bool = False) -> "Rows":
    """Fits a GPU's coefficients to measurements, as ``wattlas calibrate``,
    and writes the fitted GPU preset to ``out`` (atomically).

    path: a measurements CSV (the schema of shared/data/measurements);
    gpu: the GPU preset the rows ran on; host: the host preset they ran
    with; idle: a measured idle table for the V-f curve; traces: kernel
    traces for rows no model builder covers; holdout: models kept out of
    the fit and scored alone; fit: which coefficients move ("gpu", "host",
    ["gpu", "host"], "auto", or coefficient names; default the GPU's, or
    "auto" few-shot when its coefficients are transferred); host_out: the
    fitted host preset (fit gpu,host or auto); kfold: k-fold
    cross-validation by workload; lomo: leave one model out;
    prior_weight, from_preset, transfer_sd: as the command line's options;
    vf: "rows" (the default: a GPU whose voltage is the rule gets it from
    the rows' compute-bound kernels) or "keep" (the preset's), as ``--vf``.

    Returns :class:`Rows`, one per coefficient: ``coefficient``,
    ``before``, ``after``, ``stderr`` (NaN without an uncertainty) and
    ``fitted``. ``rows.summary`` has the row counts, the MAPE before and
    after (``mape_time_pct`` ...), ``held_out``, ``kfold`` and ``lomo``
    (None when not run), and the files written; ``rows.log`` the command
    line's report, printed with ``verbose``.

    Example::

        c = wattlas.calibrate("a100-pcie-40gb-dvfs.csv", "a100-pcie-40gb",
                              out="a100-fitted.ini", kfold=4)
        c.summary["kfold"]["mape_energy_pct"]
    """
    args = dict(_pos=(path, gpu), out=out, host=host, idle=idle, traces=traces, holdout=holdout,
                fit=fit, host_out=host_out, kfold=kfold, lomo=lomo or None,
                prior_weight=prior_weight, from_preset=from_preset or None,
                transfer_sd=transfer_sd, vf=vf)
    _check.distinct({"out": out, "host_out": host_out}, path, gpu, host, idle, traces)
    fspath = lambda p: None if p is None else _os.fspath(p)
    log, summary, coefs = _wattlas._calibrate(
        fspath(path), str(gpu), fspath(out), host, fspath(idle), fspath(traces),
        None if holdout is None else ",".join(_names("holdout", holdout)),
        None if fit is None else ",".join(_names("fit", fit)), fspath(host_out),
        int(kfold or 0), bool(lomo), bool(quiet),
        -1.0 if prior_weight is None else float(prior_weight), bool(from_preset),
        0.0 if transfer_sd is None else float(transfer_sd), _call_text("calibrate", args),
        None if vf is None else str(vf))
    cols = ["coefficient", "before", "after", "stderr", "fitted"]
    rows = Rows([dict(zip(cols, c)) for c in coefs], cols)
    rows.summary = summary
    rows.log = log.splitlines()
    if verbose:
        print(log, end="")
    return rows


def learn(path: "str | os.PathLike", *, out: "str | os.PathLike", kind: str = "rf",
          hybrid: bool = False, kfold: int = 4, lomo: bool = False, random_split: bool = False,
          importance=None, trees: "int | None" = None, max_depth: "int | None" = None,
          seed: int = 1, gpu: "str | None" = None, host: "str | None" = None,
          beside: bool = True, refit: bool = True, verbose: bool = False) -> "Rows":
    """Trains a learned predictor on measurements, as ``wattlas learn``:
    cross-validated by workload (``kfold`` folds; ``lomo`` also leaving one
    model out, ``random_split`` also rows at random), then trained on every
    row and saved to ``out`` (JSON; ``learned=`` in sweep, predict and
    report). kind: "rf" (random forest) or "gbt" (gradient-boosted trees);
    hybrid: learn a correction of the analytical model; importance: a CSV
    of feature importances; gpu, host: the presets the rows are predicted
    on; refit: folds refit the analytical coefficients (slower, honest).

    Returns :class:`Rows`, one per cross-validation: ``split`` (workload,
    model, random), ``folds``, ``rows``, ``learned_time_pct`` ...
    ``analytical_energy_pct`` (held-out MAPE of the learned and the
    analytical predictions). ``rows.summary`` has ``rows`` and
    ``description``; ``rows.log`` the command line's report.

    Example::

        cv = wattlas.learn("a100-pcie-40gb-dvfs.csv", out="hybrid.json", kind="gbt",
                           hybrid=True)
        cv.to_pandas()
    """
    if kind not in ("rf", "gbt"):
        raise Error(f"kind: expected rf or gbt, got '{kind}'")
    _check.distinct({"out": out, "importance": importance}, path, gpu, host)
    log, summary = _wattlas._learn(
        _os.fspath(path), _os.fspath(out), None if importance is None else _os.fspath(importance),
        kind, bool(hybrid), 0 if trees is None else _check.integer("trees", trees, 1, 5000),
        0 if max_depth is None else _check.integer("max_depth", max_depth, 1, 16),
        _check.integer("seed", seed, 0, 4294967295), gpu, host,
        bool(beside), _check.integer("kfold", kfold, 2, 100), bool(lomo), bool(random_split),
        bool(refit))
    cols = ["split", "folds", "rows", "learned_time_pct", "learned_power_pct",
            "learned_energy_pct", "analytical_time_pct", "analytical_power_pct",
            "analytical_energy_pct"]
    rows = Rows([dict(split=s, **summary[s]) for s in ("workload", "model", "random")
                 if summary[s] is not None], cols)
    rows.summary = {"rows": summary["rows"], "description": summary["description"]}
    rows.log = log.splitlines()
    if verbose:
        print(log, end="")
    return rows


def plot(kind: str, data, out: "str | os.PathLike", *, title: "str | None" = None,
         panels=None, stack=None, facet: "str | None" = None, objective: "str | None" = None,
         show_infeasible: bool = False, x: "str | None" = None, y: "str | None" = None,
         z: "str | None" = None, normalize: bool = False, reduce: "str | None" = None,
         edp: bool = False, metric: "str | None" = None, against: "str | None" = None,
         size: "tuple | None" = None, dpi: "float | None" = None, log_x: bool = False,
         log_y: bool = False, linear: bool = False, palette: "str | None" = None,
         legend: "str | None" = None) -> str:
    """Draws a figure, as ``wattlas plot KIND``: PNG, PDF or SVG by the
    extension of ``out``, written atomically; returns ``out``.

    kind: energy-freq, pareto, pareto-norm, heatmap, compare, savings,
    validation, importance or timeline (``wattlas plot --help``).
    data: the table behind it (a CSV file name, a :class:`Table` or
    :class:`Rows`, or a pandas DataFrame); for timeline a trace file from
    ``wattlas cluster --timeline``.
    Kind options (a kind refuses those it does not read): panels
    ("power,time,energy" or a list), stack (True, "parts" or "phases"),
    facet, objective (ring the point it chooses), show_infeasible;
    heatmap x, y, z, normalize, reduce ("min" or "mean"); pareto x, y;
    pareto-norm edp; validation metric; savings against.
    Style: title, size (width, height) in inches, dpi, log_x, log_y,
    linear (energy-freq, pareto: no log axis unless asked; by default an
    axis whose data span more than a decade is log), palette (viridis,
    cividis), legend (outside, inside, none).

    Example::

        t = wattlas.sweep(gpu="a100-pcie-40gb", model="gpt2", batch=[1, 8],
                          clock=range(510, 1411, 90))
        wattlas.plot("energy-freq", t, "energy.png", panels=["power", "time", "energy"])
    """
    options = {}
    for key, value in (("title", title), ("facet", facet), ("objective", objective),
                       ("x", x), ("y", y), ("z", z), ("reduce", reduce), ("metric", metric),
                       ("against", against), ("palette", palette), ("legend", legend)):
        if value is not None:
            if not isinstance(value, str):
                raise Error(f"{key}: expected text, got a {type(value).__name__}")
            options[key] = value
    if panels is not None:
        options["panels"] = ",".join(_names("panels", panels))
    if stack is not None and stack is not False:
        options["stack"] = stack
    for key, value in (("show_infeasible", show_infeasible), ("normalize", normalize),
                       ("edp", edp), ("log_x", log_x), ("log_y", log_y), ("linear", linear)):
        if value:
            options[key] = True
    if size is not None:
        try:
            options["width_in"], options["height_in"] = (float(v) for v in size)
        except (TypeError, ValueError):
            raise Error("size: expected (width, height) in inches") from None
    if dpi is not None:
        options["dpi"] = dpi
    if not isinstance(kind, str):
        raise Error("kind: expected a figure kind such as 'energy-freq'")
    if kind == "timeline":
        if not isinstance(data, (str, _os.PathLike)):
            raise Error("data: timeline draws a trace file (wattlas cluster --timeline)")
        path, text, source = _os.fspath(data), None, _os.fspath(data)
    else:
        path, text, source = _table(data, "data")
    _check.distinct({"out": out}, path)
    _wattlas._plot(kind, path, text, source, _os.fspath(out), options)
    return _os.fspath(out)


def report(spec: "str | os.PathLike | None" = None, *, out: "str | os.PathLike",
           learned=None, threads: int = 0, **axes) -> dict:
    """A whole study, as ``wattlas report``: the sweep of ``spec`` (an INI
    study file with [sweep], [set] and [report] sections) with any sweep
    keywords given here replacing its axes (as in :func:`sweep`), its
    Pareto fronts, the optimisation its [report] names, every figure as
    PNG, PDF and SVG with the CSV behind it, and index.md and index.html, into
    the directory ``out`` (built beside it and moved in only when
    complete). learned: a model from :func:`learn` for every point.
    A study file with a [serve] section is a serving study (as
    ``wattlas report`` takes it): serve.csv, the energy-per-token against
    p90 ITL figure and the index; it takes no keywords here.

    Returns a dict: ``points``, ``figures``, ``learned_outside`` (points
    outside the learned model's domain), ``index`` (the HTML page's path).

    Example::

        r = wattlas.report("studies/default.ini", out="study", batch=[1, 8])
        r["index"]
    """
    kw = dict(axes)
    if learned is not None:
        kw["learned"] = learned
    if kw.pop("kernels", None):
        kw["classes"] = True
    items = _items(kw)
    args = dict(_pos=() if spec is None else (_os.fspath(spec),), out=_os.fspath(out), **kw)
    _check.distinct({"out": out}, spec, kw)
    res = _wattlas._report(items, None if spec is None else _os.fspath(spec), _os.fspath(out),
                           _check.integer("threads", threads, 0, 1024), _call_text("report", args))
    if res["learned_outside"]:
        _warnings.warn(f"{res['learned_outside']} points lie outside the learned model's "
                       "training domain: the analytical prediction stands there",
                       WattlasWarning, stacklevel=2)
    res["index"] = _os.path.join(_os.fspath(out), "index.html")
    return res
