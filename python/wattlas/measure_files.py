"""The files the measurement harness writes (python3 -m wattlas.measure),
in the schema of wattlas's measurement data (../shared/data/README.md):
measurement rows, idle tables, host presets and PyTorch profiles with their
summary. Every file is written atomically: a temporary file beside the
target, renamed."""

import json
import math
import os
import tempfile


MEAS_COLUMNS = ["gpu", "model", "batch", "seq", "dtype", "mode", "attention", "sm_clock_mhz",
                "measured_clock_mhz", "time_ms", "energy_j", "power_w", "temp_c"]
# beside the schema's columns (the readers find columns by name)
# the options that say what ran (validate and calibrate build each row's
# workload from them, with predict's meaning), then the measurement's quality
EXTRA_COLUMNS = ["power_limit_w", "gen_tokens", "optimizer", "master_dtype", "launch",
                 "stack", "scope", "repeats", "time_spread_pct", "power_spread_pct", "throttle_reasons"]


class MeasureError(Exception):
    """A condition that stops the measurement, told in one line."""


# ---- writers (atomic: a temporary file beside the target, renamed) ----------

def _atomic_write(path, data):
    """Writes data (str: UTF-8 text with \\n line ends; bytes: as they are)."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    binary = isinstance(data, bytes)

    def opened(target, mode):
        return (open(target, mode + "b") if binary
                else open(target, mode, encoding="utf-8", newline="\n"))

    if os.path.exists(path) and not os.path.isfile(path):
        with opened(path, "w") as f:  # a device or FIFO: in place
            f.write(data)
        return
    # the permissions the C library's outputs get: the old file's, or a
    # new file's under the umask (mkstemp's own are 0600)
    if os.path.exists(path):
        mode = os.stat(path).st_mode & 0o7777
    else:
        mask = os.umask(0o022)
        os.umask(mask)
        mode = 0o666 & ~mask
    fd, tmp = tempfile.mkstemp(prefix=".wattlas-", dir=d)
    try:
        os.fchmod(fd, mode)
        with opened(fd, "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _num(v, digits=6):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, int):
        return str(v)
    text = "%.*f" % (digits, v)
    return text.rstrip("0").rstrip(".") if "." in text else text


def measurements_text(rows, cols=None):
    """Rows (dicts) as the measurement schema's CSV, extra columns after
    (or as the columns cols, e.g. a serving row's)."""
    cols = cols or MEAS_COLUMNS + EXTRA_COLUMNS
    lines = [",".join(cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            if c == "throttle_reasons" and v is not None:
                cells.append("0x%x" % v)
            elif isinstance(v, str):
                if any(ch in v for ch in ',"\n'):
                    raise MeasureError("%s: '%s' cannot be a CSV cell" % (c, v))
                cells.append(v)
            else:
                cells.append(_num(v))
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


# the columns that say which point a row measured: a new row replaces an
# earlier one of the same point, and keeps every other
POINT_COLUMNS = ["gpu", "model", "batch", "seq", "dtype", "mode", "attention", "sm_clock_mhz",
                 "power_limit_w", "gen_tokens", "optimizer", "master_dtype", "launch", "stack",
                 "scope"]


def earlier_rows(path, cols=None):
    """The data lines already in a measurement file this harness wrote (none
    if there is no file), to keep beside the rows a new run adds: a second
    run into the same directory (other clocks, power limits or models) must
    not drop the first one's rows. A file that is not in this schema (cols,
    as measurements_text takes them) stops the run before anything is
    measured."""
    cols = cols or MEAS_COLUMNS + EXTRA_COLUMNS
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines()
    if not lines or lines[0] != ",".join(cols):
        raise MeasureError("%s: not a measurement file of this harness (its header differs): "
                           "give another -o, or move it" % path)
    for i, line in enumerate(lines[1:], 2):
        if line and line.count(",") != len(cols) - 1:
            raise MeasureError("%s:%d: %d fields, expected %d: give another -o, or mend it"
                               % (path, i, line.count(",") + 1, len(cols)))
    return [line for line in lines[1:] if line]


def save_measurements(path, earlier, rows, cols=None, point=None):
    """Writes earlier's lines (earlier_rows) that no new row re-measures,
    then rows, atomically; returns how many earlier lines it kept. A row's
    point is its values in the columns point (POINT_COLUMNS by default)."""
    cols = cols or MEAS_COLUMNS + EXTRA_COLUMNS
    where = [cols.index(c) for c in (point or POINT_COLUMNS)]

    def point_of(line):
        cells = line.split(",")
        return tuple(cells[i] for i in where)

    lines = measurements_text(rows, cols).splitlines()
    redone = {point_of(line) for line in lines[1:]}
    kept = [line for line in earlier if point_of(line) not in redone]
    _atomic_write(path, "\n".join(lines[:1] + kept + lines[1:]) + "\n")
    return len(kept)


IDLE_HEADER = "sm_clock_mhz,voltage_mv,idle_power_w"


def idle_text(rows):
    lines = [IDLE_HEADER]
    for r in rows:
        lines.append("%d,%s,%.2f" % (r["sm_clock_mhz"], _num(r.get("voltage_mv")), r["idle_power_w"]))
    return "\n".join(lines) + "\n"


def earlier_idle(path):
    """An idle table's lines by clock (none if there is no file), to keep
    the clocks a new run does not measure: quick at four clocks must not
    drop an idle run's 81. A file that is not an idle table stops the run
    before anything is measured, as earlier_rows does for measurements."""
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines()
    if not lines or lines[0] != IDLE_HEADER:
        raise MeasureError("%s: not an idle table (its header is not '%s'): give another -o, "
                           "or move it" % (path, IDLE_HEADER))
    out = {}
    for i, line in enumerate(lines[1:], 2):
        if not line:
            continue
        cells = line.split(",")
        try:
            clock = int(cells[0])
        except ValueError:
            clock = None
        if len(cells) != 3 or clock is None:
            raise MeasureError("%s:%d: not an idle row (sm_clock_mhz,voltage_mv,idle_power_w): "
                               "give another -o, or mend it" % (path, i))
        out[clock] = line
    return out


def save_idle(path, earlier, rows):
    """Writes rows with earlier's clocks (earlier_idle) that rows do not
    re-measure, in clock order, atomically; returns how many it kept."""
    new = dict(zip((r["sm_clock_mhz"] for r in rows), idle_text(rows).splitlines()[1:]))
    kept = {c: line for c, line in earlier.items() if c not in new}
    merged = {**kept, **new}
    _atomic_write(path, "\n".join([IDLE_HEADER] + [merged[c] for c in sorted(merged)]) + "\n")
    return len(kept)


def host_text(host_id, name, launch_us, stderr_us, source, op_launch_us=None,
              op_stderr_us=None, notes=(), train_launch_us=None, train_stderr_us=None,
              decode_launch_us=None, decode_stderr_us=None, backward_launch_us=None,
              backward_stderr_us=None, optimizer_launch_us=None, optimizer_stderr_us=None):
    """A host preset (presets/hosts): launch_us per kernel of a model's forward,
    op_launch_us per kernel of a bare op in a loop, train_launch_us per
    kernel of a training step's forward (of the whole step where the
    backward's and optimizer's are not given), backward_launch_us and
    optimizer_launch_us per kernel of its backward and optimizer,
    decode_launch_us per kernel of generate's decode steps (each left out
    when None)."""
    for k, v in (("launch_us", launch_us), ("op_launch_us", op_launch_us),
                 ("train_launch_us", train_launch_us), ("decode_launch_us", decode_launch_us),
                 ("backward_launch_us", backward_launch_us),
                 ("optimizer_launch_us", optimizer_launch_us)):
        if v is not None and not (math.isfinite(v) and 0 < v <= 10000):
            raise MeasureError("%s: %r us is not a launch cost (0 to 10000 us)" % (k, v))
    for v in (host_id, name, source):
        if "\n" in v:
            raise MeasureError("'%s' cannot go on one preset line" % v)
    lines = ["; %s" % name, "; measured by: %s" % source]
    lines += ["; %s" % n for n in notes]
    lines += ["[host]", "id = %s" % host_id, "name = %s" % name,
              "launch_us = %.3f" % launch_us, "launch_us_stderr = %.3f" % stderr_us]
    if op_launch_us is not None:
        lines += ["op_launch_us = %.3f" % op_launch_us,
                  "op_launch_us_stderr = %.3f" % (op_stderr_us or 0.0)]
    if train_launch_us is not None:
        lines += ["train_launch_us = %.3f" % train_launch_us,
                  "train_launch_us_stderr = %.3f" % (train_stderr_us or 0.0)]
    for k, v, e in (("backward_launch_us", backward_launch_us, backward_stderr_us),
                    ("optimizer_launch_us", optimizer_launch_us, optimizer_stderr_us)):
        if v is not None:
            lines += ["%s = %.3f" % (k, v), "%s_stderr = %.3f" % (k, e or 0.0)]
    if decode_launch_us is not None:
        lines += ["decode_launch_us = %.3f" % decode_launch_us]
    return "\n".join(lines) + "\n"


# ---- profiles -----------------------------------------------------------------

SUMMARY_COLUMNS = ["workload", "sm_clock_mhz", "wall_ms_per_step", "device_events",
                   "gpu_busy_ms", "kernel_launches", "kernel_busy_ms", "memcpy", "memcpy_ms",
                   "memset", "memset_ms"]
# a profile's row in the summary: a later run's replaces it, beside the rest
SUMMARY_POINT = ["workload", "sm_clock_mhz"]


def trace_summary(trace):
    """A profiler trace's device events: counts and summed durations in ms,
    in total and by kind (kernels, memcpys, memsets)."""
    kinds = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
    n = {k: 0 for k in kinds.values()}
    ms = {k: 0.0 for k in kinds.values()}
    for e in trace.get("traceEvents", []):
        k = kinds.get(e.get("cat")) if isinstance(e, dict) else None
        if k and e.get("ph") == "X":
            n[k] += 1
            ms[k] += float(e.get("dur", 0)) * 1e-3
    return {"device_events": sum(n.values()), "gpu_busy_ms": sum(ms.values()),
            "kernel_launches": n["kernel"], "kernel_busy_ms": ms["kernel"],
            "memcpy": n["memcpy"], "memcpy_ms": ms["memcpy"],
            "memset": n["memset"], "memset_ms": ms["memset"]}


def workload_name(case):
    return "%s_%s_b%d_s%d_%s_%s" % (case["model"], case["mode"], case["batch"], case["seq"],
                                   case["dtype"], case["attention_name"])


def write_profile(path, trace, clock_mhz, wall_ms, stack, power_limit_w=None, gpu=None):
    """The trace gzipped, with what wattlas reads beside traceEvents: the
    clock it ran at, the board power limit it ran under (wattlas anchors
    the kernels at the clocks that limit allowed, whatever limit it is then
    asked about) and the board it ran on (the gpu column: a preset id, or
    NVML's name), the unprofiled wall time per step (from which the
    profiler's own host cost is taken off), and the software stack."""
    import gzip
    trace = dict(trace)
    meta = {"sm_clock_mhz": clock_mhz, "wall_ms_per_step": wall_ms, "stack": stack}
    if power_limit_w:
        meta["power_limit_w"] = power_limit_w
    if gpu:
        meta["gpu"] = gpu
    trace["wattlas"] = meta
    _atomic_write(path, gzip.compress(json.dumps(trace).encode()))


def summary_text(rows):
    return measurements_text(rows, SUMMARY_COLUMNS)
