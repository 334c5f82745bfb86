"""wattlas.cluster and wattlas.cluster_search: one parallel configuration
of a model on a multi-GPU system, or every one, through the library's
cluster view (python/cluster.c); the package re-exports both."""
import os as _os
import warnings as _warnings

from . import _wattlas
from . import Error, WattlasWarning, _check, _table_of, _text

# the layout options that are counts: True and False are not counts here
_COUNTS = {"tp", "pp", "dp", "vp", "ep", "cp", "global_batch", "micro_batch", "seq", "gen",
           "max_tp", "max_pp", "max_vp", "max_micro_batch", "capacity_factor"}


_CLUSTER_DOC = """
    system: a system preset or INI file (``wattlas.presets("system")``);
    nodes: how many of its nodes; model: a model preset; host: the host
    that issues the kernels; set: {key: value}, system keys (``nic_gbps``)
    or GPU keys (``power_limit_w``: every GPU).
    tp, pp, dp, vp, ep, cp: tensor, pipeline, data parallel sizes, chunks
    per GPU, expert and context parallel sizes (dp: the GPUs left over);
    sequence_parallel, zero (0 or 1), tp_comm_overlap, no_dp_overlap;
    capacity_factor and ep_overlap (MoE: the all-to-alls beside another
    micro-batch's MoE layer, DualPipe's pairing); global_batch, micro_batch, seq, gen; mode
    (train, prefill, decode); recompute (none, selective, full); schedule
    (gpipe, 1f1b, interleaved, zb-h1); partition (uniform, balanced,
    parameters, or the layers of each stage as a list); dtype, attention,
    launch; finetune ("full" or "lora"), lora_rank, lora_targets: LoRA
    adapters on the frozen model; clock (MHz, default the top clock); tokens: also the time and
    energy to train that many.

    Columns: the configuration (``system`` ... ``sm_clock_mhz``), then
    ``time_s`` (an iteration), ``energy_j`` and ``power_w`` of the whole
    cluster, ``tflops_per_gpu``, ``mfu``, ``bubble_s``, ``imbalance_pct``,
    ``tp_comm_exposed_s`` ... ``ep_comm_exposed_s``, ``memory_gb``,
    ``fits``, ``energy_gpu_j``, ``energy_network_j``, ``energy_node_j``,
    ``tokens_per_s``, ``energy_per_token_j``; decode: ``gen``, ``ttft_s``,
    ``tpot_ms``.
"""


def _cluster_items(opts):
    items = []
    for key, value in opts.items():
        if value is None:
            continue
        if isinstance(value, bool):
            if key in _COUNTS:
                raise Error(f"{key}: expected a number, got {value!r}")
            value = int(value)
        items.append((key, _text(key, value)))  # lists, ranges, numpy as everywhere
    return items


def _cluster_call(system, model, nodes, host, set, opts, search, threads, front_only, clock,
                  tokens, view=None):
    if set is not None and not isinstance(set, dict):
        raise Error("set: expected a dict of system or GPU keys to numbers")
    pairs = [(str(k), _check.real(f"set.{k}", v, -1e15, 1e15)) for k, v in (set or {}).items()]
    nodes = _check.integer("nodes", nodes, 1, 1000000)
    threads = _check.integer("threads", threads, 0, 1024)  # 0: every core
    clock = 0.0 if clock is None else _check.real("clock", clock, 1, 100000)
    tokens = 0.0 if tokens is None else _check.real("tokens", tokens, 1, 1e18)
    if view is not None:
        _check.distinct({"timeline": view.get("timeline")}, system, model, host)
    args = [(str(system), nodes, str(model), host), pairs, _cluster_items(opts),
            bool(search), threads, bool(front_only), clock, tokens]
    if view is not None:
        args.append(view)
    cols = _wattlas._cluster(*args)
    if view is not None and view.get("fmt"):
        return cols
    table = _table_of(cols)
    if "fits" in table.columns and any(f == 0 for f in table["fits"]):
        _warnings.warn(f"{table[0]['memory_gb']:.1f} GB per GPU does not fit its GPU",
                       WattlasWarning, stacklevel=3)
    return table


def cluster(system: str = "dgx-a100-80gb", model: str = "gpt3-1.3b", *, nodes: int = 1,
            host=None, set: "dict | None" = None, tp=None, pp=None, dp=None, vp=None, ep=None,
            cp=None, sequence_parallel=None, zero=None, tp_comm_overlap=None,
            no_dp_overlap=None, capacity_factor=None, ep_overlap=None, global_batch=None,
            micro_batch=None,
            seq=None, gen=None, mode=None, recompute=None, schedule=None, partition=None,
            dtype=None, attention=None, launch=None, finetune=None, lora_rank=None,
            lora_targets=None, clock=None, tokens=None, optimize=None, max_slowdown_pct=None, energy_scope=None, frontier: bool = False,
            stages: bool = False, power_limit_w=None, power_limits=None,
            stage_power_limits=None, timeline: "str | os.PathLike | None" = None, fmt: "str | None" = None,
            all: bool = False) -> "Table":
    opts = dict(tp=tp, pp=pp, dp=dp, vp=vp, ep=ep, cp=cp, sequence_parallel=sequence_parallel,
                zero=zero, tp_comm_overlap=tp_comm_overlap, no_dp_overlap=no_dp_overlap,
                capacity_factor=capacity_factor, ep_overlap=ep_overlap, global_batch=global_batch,
                micro_batch=micro_batch, seq=seq, gen=gen, mode=mode, recompute=recompute,
                schedule=schedule, partition=partition, dtype=dtype, attention=attention,
                launch=launch, finetune=finetune, lora_rank=lora_rank, lora_targets=lora_targets)
    if optimize not in (None, False, True, "energy"):
        raise Error(f"optimize: expected 'energy', got '{optimize}'")
    # power_limit_w, every command's spelling; power_limits the older one
    if power_limit_w is not None and power_limits is not None:
        raise Error("power_limit_w: give power_limit_w or power_limits (the older name), not both")
    limits_kw = "power_limits" if power_limit_w is None else "power_limit_w"
    if power_limit_w is not None:
        power_limits = power_limit_w
    view = dict(optimize=bool(optimize), stages=bool(stages), frontier=bool(frontier),
                max_slowdown_pct=None if max_slowdown_pct is None else float(max_slowdown_pct),
                energy_scope=energy_scope,
                power_limits=_watts(limits_kw, power_limits),
                stage_power_limits=_watts("stage_power_limits", stage_power_limits),
                timeline=None if timeline is None else _os.fspath(timeline), fmt=fmt,
                all=bool(all))
    # a list of clocks: a row at each
    if clock is not None and not isinstance(clock, (int, float, str)):
        try:
            view["clocks"] = [float(c) for c in clock]
        except (TypeError, ValueError):
            raise Error("clock: expected MHz, or a list of them") from None
        clock = view["clocks"][0] if view["clocks"] else None
    return _cluster_call(system, model, nodes, host, set, opts, False, 1, False, clock, tokens,
                         view)


def _watts(key, v):
    """A list of watts: a number, a list, or a range text ("150:300:25")."""
    if v is None:
        return None
    if isinstance(v, (bool, bytes, bytearray)):
        raise Error(f"{key}: expected watts, got {v!r}")
    if isinstance(v, str):
        if ":" in v:
            parts = v.split(":")
            try:
                lo, hi, step = (float(p) for p in parts)
            except ValueError:
                raise Error(f"{key}: expected LO:HI:STEP in W, got '{v}'") from None
            if not (step > 0 and hi >= lo):
                raise Error(f"{key}: expected LO:HI:STEP with STEP > 0, got '{v}'")
            n = int((hi - lo) / step + 1e-9) + 1
            return [lo + i * step for i in range(n)]
        v = v.split(",")
    if isinstance(v, (int, float)):
        v = [v]
    try:
        return [_check.real(key, x, 1, 100000) for x in v]
    except TypeError:
        raise Error(f"{key}: expected watts") from None


def cluster_search(system: str = "dgx-a100-80gb", model: str = "gpt3-1.3b", *, nodes: int = 1,
                   host=None, set: "dict | None" = None, global_batch=None, seq=None, gen=None,
                   mode=None, dtype=None, attention=None, launch=None, recompute=None,
                   schedule=None, partition=None, sequence_parallel=None, zero=None,
                   tp_comm_overlap=None, no_dp_overlap=None, ep_overlap=None, max_tp=None,
                   max_pp=None, max_vp=None, max_micro_batch=None, finetune=None,
                   lora_rank=None, lora_targets=None, clock=None, tokens=None,
                   threads: int = 0, front_only: bool = True) -> "Table":
    opts = dict(global_batch=global_batch, seq=seq, gen=gen, mode=mode, dtype=dtype,
                attention=attention, launch=launch, recompute=recompute, schedule=schedule,
                partition=partition, sequence_parallel=sequence_parallel, zero=zero,
                tp_comm_overlap=tp_comm_overlap, no_dp_overlap=no_dp_overlap,
                ep_overlap=ep_overlap, max_tp=max_tp, max_pp=max_pp, max_vp=max_vp,
                max_micro_batch=max_micro_batch, finetune=finetune, lora_rank=lora_rank,
                lora_targets=lora_targets)
    return _cluster_call(system, model, nodes, host, set, opts, True, threads, front_only,
                         clock, tokens)


cluster.__doc__ = """One parallel configuration of a model on a multi-GPU system, as
    ``wattlas cluster``: a training iteration, a prefill or a generation
    from the simulated timeline of every pipeline stage; a one-row
    :class:`Table`. Energy plans, as the command line's options:
    ``optimize="energy"`` a clock per stage and phase within
    ``max_slowdown_pct`` (default 1) of every GPU at its maximum, of
    ``energy_scope`` ("gpu" or "all"); ``frontier=True`` the time-energy
    frontier of plans (default bound 25) and, with ``power_limit_w``, of the
    board caps; ``power_limit_w`` (or ``power_limits``) alone a row per limit; ``stages=True`` a row
    per stage; ``stage_power_limits`` a limit per stage; ``timeline`` writes
    the Chrome trace; ``fmt`` the command line's text. A layout that does
    not fit its GPUs' memory raises Error naming both, unless ``all=True``
    (it is simulated, with ``fits`` 0) or ``stages=True``.
""" + _CLUSTER_DOC + """
    Example::

        r = wattlas.cluster("dgx-a100-80gb", "gpt3-175b", nodes=8, tp=8, pp=8, vp=3,
                            global_batch=64, recompute="selective",
                            sequence_parallel=True, dtype="fp16")
        r[0]["time_s"], r[0]["mfu"]
"""

cluster_search.__doc__ = """Every parallel configuration of a model on a system, as ``wattlas
    cluster search``: with ``front_only`` the time-energy front of those that
    fit (``choice``: fastest, least_energy, front), else every configuration
    (``choice`` empty off the front; those whose weights and optimizer state
    cannot fit have empty times). recompute, schedule, partition take lists
    of the values to try; max_tp, max_pp, max_vp, max_micro_batch bound the
    space; threads 0 for all cores.
""" + _CLUSTER_DOC + """
    Example::

        front = wattlas.cluster_search(model="gpt3-175b", nodes=128, global_batch=1536)
        front[0]["tp"], front[0]["pp"], front[0]["time_s"]
"""
