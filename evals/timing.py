"""Latency statistics and clocks of the benchmarks: p50 / p95 / mean, CPU time, load, peak memory.

Every benchmark computes its percentiles here. A percentile has one of four definitions, named
by ``method`` (``q = pct / 100`` over the ``n`` sorted values ``s``):

- ``linear``: numpy's default, interpolating between the two nearest ranks;
- ``midpoint``: the mean of ``s[floor(q (n - 1))]`` and ``s[ceil(q (n - 1))]`` (the median of
  :func:`statistics.median` at 50);
- ``lower``: ``s[floor(q (n - 1))]``;
- ``nearest``: ``s[round(q (n - 1))]``;
- ``rank``: ``s[min(n - 1, floor(q n))]``.
"""

from __future__ import annotations

import math
import os
import resource
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

METHODS = ("linear", "midpoint", "lower", "nearest", "rank")


def percentile(values: Iterable[float], pct: float, method: str = "linear") -> float:
    """The ``pct`` percentile (0..100) of ``values`` by ``method`` (see the module docstring); NaN for none."""
    data = sorted(float(v) for v in values)
    if not data:
        return float("nan")
    q = pct / 100
    if method == "linear":
        return float(np.percentile(data, pct))
    if method == "midpoint":
        i = q * (len(data) - 1)
        return (data[math.floor(i)] + data[math.ceil(i)]) / 2
    if method == "lower":
        return data[int(q * (len(data) - 1))]
    if method == "nearest":
        return data[round(q * (len(data) - 1))]
    if method == "rank":
        return data[min(len(data) - 1, int(q * len(data)))]
    raise ValueError(f"unknown percentile method {method!r}; use one of {', '.join(METHODS)}")


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean (NaN for no values)."""
    data = [float(v) for v in values]
    return float(np.mean(data)) if data else float("nan")


def stats(values: Iterable[float], scale: float = 1.0, method: str = "linear", suffix: str = "") -> dict:
    """``{"n", "mean", "p50", "p95"}`` of ``values`` times ``scale`` (``{"n": 0}`` for none).

    Args:
        values: The measurements.
        scale: Factor applied to every value (1000: seconds to milliseconds).
        method: The percentile definition.
        suffix: Appended to the three statistic names (``"_ms"``: ``p50_ms``).
    """
    data = [float(v) * scale for v in values]
    if not data:
        return {"n": 0}
    return {
        "n": len(data),
        f"mean{suffix}": mean(data),
        f"p50{suffix}": percentile(data, 50, method),
        f"p95{suffix}": percentile(data, 95, method),
    }


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    """``(result, wall seconds, CPU seconds of the calling thread)`` of one call of ``fn``."""
    wall, cpu = time.perf_counter(), time.thread_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, time.thread_time() - cpu


def clocks() -> tuple[float, float]:
    """``(wall, process CPU)`` seconds now, to subtract from a later :func:`clocks`."""
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> dict[str, float]:
    """``{"seconds", "cpu_s"}`` elapsed since ``start`` (a :func:`clocks` reading)."""
    wall, cpu = clocks()
    return {"seconds": wall - start[0], "cpu_s": cpu - start[1]}


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB (``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, all its threads (Linux ``/proc``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "; fields[0] is field 3 (state)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> tuple[float, float, float]:
    """The 1, 5 and 15-minute load averages."""
    return os.getloadavg()


def load_text(digits: int = 2) -> str:
    """The three load averages as ``"0.52 0.61 0.70"``."""
    return " ".join(f"{x:.{digits}f}" for x in load_average())
