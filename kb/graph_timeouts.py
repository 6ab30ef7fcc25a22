"""Deadlines and one-line errors shared by the graph-server backends.

Every graph query gets ``HYBRIDRAG_GRAPH_TIMEOUT`` seconds (default 10), enforced on the client so a
frozen server (SIGSTOP, a hung host) cannot hang a request: redis-py's socket timeout on the native
FalkorDB path, :func:`call_with_deadline` on the Bolt path (the ``neo4j`` driver has no read timeout
of its own). A server that is down, frozen or too slow raises :class:`GraphUnavailableError`.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from hybridrag.kb.model import GraphUnavailableError, KBError

DEFAULT_TIMEOUT = 10.0
T = TypeVar("T")
_USERINFO = re.compile(r"(?<=//)[^/@\s]+@")


def graph_timeout() -> float:
    """Seconds a graph query may take: ``$HYBRIDRAG_GRAPH_TIMEOUT`` or 10."""
    raw = os.environ.get("HYBRIDRAG_GRAPH_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise KBError(f"HYBRIDRAG_GRAPH_TIMEOUT must be a positive number of seconds, got {raw!r}")
    return value


def redact(uri: str) -> str:
    """``uri`` without ``user:password@`` (for messages and manifests)."""
    parts = urlsplit(uri)
    if "@" not in parts.netloc:
        return uri
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def one_line(err: BaseException) -> str:
    """The error as one line, without credentials that a URI inside it may carry."""
    text = " ".join(str(err).split()) or type(err).__name__
    return _USERINFO.sub("", text)


def call_with_deadline(fn: Callable[[], T], seconds: float, timeout_message: str) -> T:
    """Run ``fn`` in a daemon thread; raise GraphUnavailableError(timeout_message) after ``seconds``.

    The thread is abandoned, not killed: the caller must close what it blocks on (the backends reset
    their connection pool) so that it ends.
    """
    box: dict[str, object] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=target, name="graph-query", daemon=True).start()
    if not done.wait(seconds):
        raise GraphUnavailableError(timeout_message)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
