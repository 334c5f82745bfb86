"""NVML for the measurement harness (python3 -m wattlas.measure): the
driver's libnvidia-ml.so.1 through ctypes, the energy counter's update
sampler, clock and power-limit locks that are restored on exit, and the
measurement window (see measure.py's docstring for the method)."""

import ctypes
import statistics
import threading
import time

from .measure_files import MeasureError


# ---- the energy counter ------------------------------------------------------

def power_from_updates(updates, t0, t1):
    """Mean power over [t0, t1] from energy-counter updates.

    updates: (time_s, energy_mj) pairs, time being the moment a new counter
    value was first seen. Power is taken between the first and the last
    update inside the window, so that the counter's coarse update period
    (about 100 ms on an H100) does not bias it. Returns (power_w, seconds
    covered); raises MeasureError with fewer than two updates inside."""
    inside = [(t, e) for t, e in updates if t0 <= t <= t1]
    if len(inside) < 2:
        raise MeasureError("the energy counter moved %d time(s) in the %.2f s window: make the "
                           "window longer (--window-s)" % (len(inside), t1 - t0))
    (ta, ea), (tb, eb) = inside[0], inside[-1]
    if tb <= ta or eb < ea:
        raise MeasureError("the energy counter went backwards")
    return (eb - ea) * 1e-3 / (tb - ta), tb - ta


def spread_pct(values):
    """(max - min) / median in percent."""
    if len(values) < 2:
        return 0.0
    m = statistics.median(values)
    return (max(values) - min(values)) / m * 100.0 if m else 0.0


# ---- NVML through ctypes -----------------------------------------------------

NVML_CLOCK_SM = 1
NVML_TEMPERATURE_GPU = 0


class Nvml:
    """The few NVML calls the harness needs, on the driver's library."""

    def __init__(self, libname="libnvidia-ml.so.1"):
        try:
            self.lib = ctypes.CDLL(libname)
        except OSError as e:
            raise MeasureError("NVML not found (%s): this needs an NVIDIA driver" % e) from None
        # a library that is not NVML (WATTLAS_NVML_LIB pointing elsewhere)
        # lacks its symbols: said so, not an AttributeError's traceback
        self.libname = libname
        self._fn("nvmlErrorString").restype = ctypes.c_char_p
        self._call("nvmlInit_v2")

    def _fn(self, name):
        try:
            return getattr(self.lib, name)
        except AttributeError:
            raise MeasureError("%s is not NVML (it has no %s); WATTLAS_NVML_LIB, if set, must name "
                               "the driver's libnvidia-ml.so.1" % (self.libname, name)) from None

    def _call(self, fn, *args):
        rc = self._fn(fn)(*args)
        if rc != 0:
            text = self.lib.nvmlErrorString(rc).decode(errors="replace")
            hint = " (run as root, or give the user clock permissions)" if rc == 4 else ""
            raise MeasureError("%s: %s%s" % (fn, text, hint))

    def shutdown(self):
        try:
            self.lib.nvmlShutdown()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass

    def device(self, index):
        h = ctypes.c_void_p()
        self._call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(h))
        return h

    def name(self, h):
        buf = ctypes.create_string_buffer(96)
        self._call("nvmlDeviceGetName", h, buf, ctypes.c_uint(96))
        return buf.value.decode(errors="replace")

    def _get(self, fn, ctype, h, *args):
        """An NVML getter's value: fn(h, *args, &out) with out of ctype."""
        v = ctype()
        self._call(fn, h, *args, ctypes.byref(v))
        return v.value

    def energy_mj(self, h):
        return self._get("nvmlDeviceGetTotalEnergyConsumption", ctypes.c_ulonglong, h)

    def max_sm_clock_mhz(self, h):
        return self._get("nvmlDeviceGetMaxClockInfo", ctypes.c_uint, h, ctypes.c_int(NVML_CLOCK_SM))

    def sm_clock_mhz(self, h):
        return self._get("nvmlDeviceGetClockInfo", ctypes.c_uint, h, ctypes.c_int(NVML_CLOCK_SM))

    def temp_c(self, h):
        return self._get("nvmlDeviceGetTemperature", ctypes.c_uint, h,
                         ctypes.c_int(NVML_TEMPERATURE_GPU))

    def throttle_reasons(self, h):
        return self._get("nvmlDeviceGetCurrentClocksThrottleReasons", ctypes.c_ulonglong, h)

    def power_limit_w(self, h):
        return self._get("nvmlDeviceGetPowerManagementLimit", ctypes.c_uint, h) / 1000.0

    def enforced_power_limit_w(self, h):
        """The limit the board enforces (the lowest of the management limit
        and any other constraint), what its controller holds power under."""
        return self._get("nvmlDeviceGetEnforcedPowerLimit", ctypes.c_uint, h) / 1000.0

    def set_power_limit_w(self, h, w):
        self._call("nvmlDeviceSetPowerManagementLimit", h, ctypes.c_uint(int(round(w * 1000))))

    def lock_clock(self, h, mhz):
        self._call("nvmlDeviceSetGpuLockedClocks", h, ctypes.c_uint(int(mhz)), ctypes.c_uint(int(mhz)))

    def unlock_clock(self, h):
        self._call("nvmlDeviceResetGpuLockedClocks", h)


class Sampler(threading.Thread):
    """Polls the energy counter (noting when each new value appears) and,
    less often, the SM clock, temperature and throttle reasons."""

    def __init__(self, nvml, h, poll_s=0.001, slow_every=20):
        super().__init__(daemon=True)
        self.nvml, self.h, self.poll_s, self.slow_every = nvml, h, poll_s, slow_every
        self.updates, self.clocks, self.temps, self.reasons = [], [], [], 0
        self._halt = threading.Event()  # not _stop: threading.Thread has its own
        self.error = None

    def run(self):
        last, n = None, 0
        try:
            while not self._halt.is_set():
                e = self.nvml.energy_mj(self.h)
                t = time.perf_counter()
                if e != last:
                    self.updates.append((t, e))
                    last = e
                if n % self.slow_every == 0:
                    self.clocks.append((t, self.nvml.sm_clock_mhz(self.h)))
                    self.temps.append((t, self.nvml.temp_c(self.h)))
                    try:
                        self.reasons |= self.nvml.throttle_reasons(self.h)
                    except MeasureError:
                        pass
                n += 1
                time.sleep(self.poll_s)
        except MeasureError as e:
            self.error = e

    def stop(self):
        self._halt.set()
        self.join()
        if self.error:
            raise self.error


class Locked:
    """Lock the SM clock and/or set the power limit; always restore both."""

    def __init__(self, nvml, h, clock_mhz=None, power_limit_w=None):
        self.nvml, self.h, self.clock, self.limit = nvml, h, clock_mhz, power_limit_w
        self.old_limit = None

    def __enter__(self):
        if self.limit is not None:
            self.old_limit = self.nvml.power_limit_w(self.h)
            self.nvml.set_power_limit_w(self.h, self.limit)
        if self.clock is not None:
            self.nvml.lock_clock(self.h, self.clock)
        return self

    def __exit__(self, *exc):
        errors = []
        if self.clock is not None:
            try:
                self.nvml.unlock_clock(self.h)
            except MeasureError as e:
                errors.append(str(e))
        if self.old_limit is not None:
            try:
                self.nvml.set_power_limit_w(self.h, self.old_limit)
            except MeasureError as e:
                errors.append(str(e))
        if errors and exc[0] is None:
            raise MeasureError("could not restore the GPU: " + "; ".join(errors))
        return False


def measure_window(nvml, h, step, warmup_s, window_s, sync):
    """Run step() back to back: warm up, then a window; returns a dict with
    time per step (ms), power (W), energy per step (J), effective clock and
    temperature (medians), throttle reasons."""
    t_end = time.perf_counter() + warmup_s
    while time.perf_counter() < t_end:
        step()
    sync()
    s = Sampler(nvml, h)
    s.start()
    time.sleep(0.15)  # the sampler has seen a counter value
    t0 = time.perf_counter()
    n = 0
    while True:
        step()
        n += 1
        if n % 8 == 0 or window_s < 0.05:
            sync()
            if time.perf_counter() - t0 >= window_s:
                break
    sync()
    t1 = time.perf_counter()
    time.sleep(0.25)  # let the counter's next update land after the window
    s.stop()
    power, _ = power_from_updates(s.updates, t0, t1 + 0.25)
    time_ms = (t1 - t0) / n * 1e3
    clocks = [c for t, c in s.clocks if t0 <= t <= t1] or [c for _, c in s.clocks]
    temps = [c for t, c in s.temps if t0 <= t <= t1] or [c for _, c in s.temps]
    return {"time_ms": time_ms, "power_w": power, "energy_j": power * time_ms * 1e-3,
            "measured_clock_mhz": statistics.median(clocks) if clocks else float("nan"),
            "temp_c": statistics.median(temps) if temps else float("nan"),
            "throttle_reasons": s.reasons}


def repeated(nvml, h, step, args, sync):
    runs = [measure_window(nvml, h, step, args.warmup_s, args.window_s, sync)
            for _ in range(args.repeats)]
    out = dict(runs[len(runs) // 2])
    for k in ("time_ms", "power_w", "measured_clock_mhz", "temp_c"):
        out[k] = statistics.median(r[k] for r in runs)
    out["energy_j"] = out["power_w"] * out["time_ms"] * 1e-3
    out["repeats"] = len(runs)
    out["time_spread_pct"] = spread_pct([r["time_ms"] for r in runs])
    out["power_spread_pct"] = spread_pct([r["power_w"] for r in runs])
    out["throttle_reasons"] = 0
    for r in runs:
        out["throttle_reasons"] |= r["throttle_reasons"]
    return out
