"""The graphs as the Agent Server (LangGraph Studio, ``langgraph dev``) loads them: one factory per method.

langgraph.json names these factories (``./app/studio.py:fusion``, ...), not the compiled
graphs, for one reason: the Agent Server drops the context keys its schema does not list
before a graph sees them, so a misspelt setting (``{"topk": 3}``) would run silently with the
default. A factory receives the run's context as the client sent it; an unknown key is refused
here with a :class:`app.policy.PolicyError` naming it (the Agent Server shows a
``ValueError``'s message in Studio). Everything else a client sends is checked by
``app.policy`` inside the run (``graphs.runtime.context_of`` in server mode). The graph a
factory returns is :func:`served_graph`. Importing this
module in server mode also starts warming up the operator's KBs and models (as ``hybridrag
serve`` does before its ``/health`` says ok).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from functools import cache
from typing import Any

import hybridrag.app.server_policy  # noqa: F401 - installs the server's run policy
from hybridrag.app.policy import PolicyError, client_fields
from hybridrag.graphs import context_class, get_builder, list_graphs

RUN_KEYS = frozenset(
    {
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "run_id",
        "assistant_id",
        "graph_id",
        "user_id",
        "cron_id",
        "run_attempt",
    }
)
"""Keys the Agent Server itself may put beside a run's settings (never a Context field)."""


def _own_key(key: str) -> bool:
    return key in RUN_KEYS or key.startswith(("__", "langgraph_", "langsmith", "x-"))


def check_context_keys(method: str, context: Any) -> None:
    """Refuse a context key that is not a setting of ``method`` (PolicyError naming the key)."""
    if not isinstance(context, Mapping):
        return
    cls = context_class(method)
    known = {f.name for f in fields(cls)}
    unknown = sorted(k for k in context if isinstance(k, str) and k not in known and not _own_key(k))
    if unknown:
        raise PolicyError(unknown[0], f"unknown setting of {method}; a client may set: {', '.join(client_fields(cls))}")


@cache
def served_graph(method: str) -> Any:
    """The graph the Agent Server runs: ``graphs.get_builder(method)`` compiled.

    That is the method's graph whose state starts over with each question asked on a thread (the
    server checkpoints every thread), with its approval node (``approve=True``) and routers that
    also run when a thread is forked. It also takes a chat (``{"messages": [...]}``, kept on the
    thread; ``graphs.chat``), so Studio's chat view and Agent Chat UI talk to it.
    """
    return get_builder(method).compile(name=method)


def factory(method: str) -> Callable[..., Any]:
    """The Agent Server factory of ``method``: checks the run's context keys, returns the compiled graph."""

    def make(runtime: ServerRuntime) -> Any:  # noqa: F821 - resolved by the Agent Server
        check_context_keys(method, getattr(runtime, "context", None))
        return served_graph(method)

    make.__name__ = make.__qualname__ = method
    return make


def _warm_up_in_background() -> None:
    """In the Agent Server (server mode), load the operator's KBs and models as the graphs are imported.

    They load at startup, not in the first run, whose budget the loading would spend.
    """
    import logging
    import threading

    from hybridrag.app.policy import server_mode
    from hybridrag.app.server_config import active_config, warm_up

    def run() -> None:
        try:
            warm_up(active_config())
        except Exception as exc:  # noqa: BLE001 - the first run reports it (e.g. the KB named)
            logging.getLogger("hybridrag.studio").warning("warm-up failed: %s", exc)

    if server_mode():
        threading.Thread(target=run, name="hybridrag-warm-up", daemon=True).start()


_warm_up_in_background()
fusion = factory("fusion")
hybgrag = factory("hybgrag")
mor = factory("mor")
hydrarag = factory("hydrarag")
ssrag = factory("ssrag")
FACTORIES = {name: globals()[name] for name in list_graphs()}
