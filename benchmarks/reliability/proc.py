"""Helpers of the hardening probes: a server's CPU over a while, raw HTTP with an early hang-up, log counts.

``hybridrag serve`` runs in its own process (started by :class:`benchmarks.reliability.load.Served`); what it
costs is read from ``/proc/<pid>/stat`` (user + system time of every thread), so a run that keeps
computing after its client got a 504 or went away shows up as CPU seconds spent afterwards.
"""

from __future__ import annotations

import json
import shlex
import socket
import time
from pathlib import Path

from hybridrag.evals.timing import process_cpu_seconds


def cpu_during(pid: int, seconds: float) -> float:
    """CPU seconds ``pid`` spends over the next ``seconds`` of wall time."""
    before = process_cpu_seconds(pid)
    time.sleep(seconds)
    return process_cpu_seconds(pid) - before


def wait_idle(pid: int, limit: float = 240, window: float = 2.0) -> float:
    """Wait until ``pid`` uses under 5 % of a core over ``window`` s; return the seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if cpu_during(pid, window) < 0.05 * window:
            break
    return time.monotonic() - t0


def curl(url: str, body: object | str, stream: bool = False) -> str:
    """The curl command that sends ``body`` (JSON, or raw text) to ``url``."""
    data = body if isinstance(body, str) else json.dumps(body)
    if len(data) > 300:
        data = data[:120] + "…" + data[-40:]
    return f"curl -s{'N' if stream else ''} -X POST {url} -H 'content-type: application/json' -d {shlex.quote(data)}"


def post_and_hang_up(url: str, path: str, body: bytes, after: float) -> float:
    """POST ``body`` to ``url + path`` on a raw socket and close it after ``after`` s (or on a reply).

    Returns:
        The wall seconds until the socket was closed.
    """
    host, port = url.removeprefix("http://").split(":")
    t0 = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=after) as s:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        s.sendall(head + body)
        try:
            s.recv(1)  # returns early if the server answers before ``after``
        except TimeoutError:
            pass
    return time.monotonic() - t0


def log_counts(log: Path, start: int) -> tuple[int, int, int]:
    """(lines, tracebacks, new end offset) of what ``log`` gained after byte ``start``."""
    data = log.read_bytes()[start:]
    text = data.decode("utf-8", errors="replace")
    lines = [x for x in text.splitlines() if x.strip()]
    tracebacks = sum(1 for x in lines if x.startswith("Traceback (most recent call last)"))
    return len(lines), tracebacks, start + len(data)
