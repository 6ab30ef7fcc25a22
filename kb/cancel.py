"""Cooperative cancellation of a run's CPU work: a run-scoped stop event and a cheap check.

A served run (``app.runs.controlled_stream``) installs its stop event with :func:`stop_scope`;
the event follows the run through context variables, which LangGraph and LangChain copy into
the executor threads that run sync nodes (``Send`` fan-out included). Long loops call
:func:`check_cancelled`, which raises :class:`RunCancelled` once the event is set (budget spent,
client gone), so the CPU work stops instead of running on after the response.

Outside a controlled run (CLI, Python) there is no event: the check is one context-variable read.
Code that starts its own threads must run their work in ``contextvars.copy_context()`` (as
``concurrent.futures`` does not) for the check to see the run's event there.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_STOP: ContextVar[threading.Event | None] = ContextVar("hybridrag_stop_event", default=None)
_LAYER = re.compile(r"(^|\.)(layer|layers|h|block|blocks)\.\d+$")  # one transformer layer of an encoder


class RunCancelled(Exception):  # noqa: N818 - named like asyncio's CancelledError
    """The run this work belongs to was stopped (its budget ran out or its client went away).

    An ``Exception`` but not a ``RuntimeError`` / ``ValueError``, so the narrow ``except`` clauses
    of the methods' fallbacks do not swallow it; a broad ``except Exception`` must re-raise it.
    """


def check_cancelled() -> None:
    """Raise :class:`RunCancelled` when the current run's stop event is set; otherwise nothing."""
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise RunCancelled("the run was stopped; its remaining work was cancelled")


def current_stop() -> threading.Event | None:
    """The stop event of the run this code runs in, or None outside a controlled run."""
    return _STOP.get()


@contextmanager
def stop_scope(stop: threading.Event) -> Iterator[None]:
    """Make ``stop`` the current run's stop event inside the block (and in what it starts)."""
    token = _STOP.set(stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def _check_hook(module: Any, args: Any) -> None:
    check_cancelled()


def watch_layers(model: Any) -> int:
    """Check for cancellation before every transformer layer (and top-level module) of a torch ``model``.

    A long batched encode then stops within one layer's time. Returns the number of hooks added.
    """
    hooks = 0
    for name, module in model.named_modules():
        if name and ("." not in name or _LAYER.search(name)):
            module.register_forward_pre_hook(_check_hook)
            hooks += 1
    return hooks
