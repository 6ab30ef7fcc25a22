"""Builder surgery for ``graphs.get_builder``: changed copies of a method's ``StateGraph`` builder.

A copy gets a node put right after another (``graphs.threads``, ``graphs.approval``), or routers
that also run when a thread's state is updated or forked; the method's own builder is untouched.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable
from typing import Any


def copy_builder(builder: Any) -> Any:
    """A copy of ``builder`` whose nodes, edges, branches and channels can change without touching it."""
    out = copy.copy(builder)
    out.nodes, out.channels, out.compiled = dict(builder.nodes), dict(builder.channels), False
    out.schemas, out.managed = dict(builder.schemas), dict(builder.managed)
    out.edges, out.waiting_edges = set(builder.edges), set(builder.waiting_edges)
    out.branches = defaultdict(dict, {start: dict(spec) for start, spec in builder.branches.items()})
    return out


def insert_after(builder: Any, source: str, name: str, action: Callable[..., Any]) -> Any:
    """A copy of ``builder`` with node ``name`` running ``action`` right after ``source``.

    ``source`` is a node or START; every edge and branch that left it now leaves ``name``.
    """
    out = copy_builder(builder)
    out.edges = {(name if start == source else start, end) for start, end in builder.edges}
    out.waiting_edges = {
        (tuple(name if s == source else s for s in starts), end) for starts, end in builder.waiting_edges
    }
    out.branches = defaultdict(
        dict, {name if start == source else start: dict(spec) for start, spec in builder.branches.items()}
    )
    out.add_node(name, action)
    out.add_edge(source, name)
    return out


def _runtime_or_none() -> Any:
    """The run's ``Runtime``, or a context-less one outside a run step.

    LangGraph calls a branch outside a run step on ``update_state`` and when forking a thread; the
    router then falls back to the default context (plus the ``configurable`` of the call).
    """
    from langgraph.runtime import Runtime, get_runtime

    try:
        runtime = get_runtime()
    except (RuntimeError, KeyError):
        runtime = None
    return runtime if runtime is not None else Runtime(context=None)


def optional_runtime(router: Callable[..., Any]) -> Any:
    """``router(state, runtime)`` as a branch LangGraph can also call from ``update_state``."""
    from langchain_core.runnables import RunnableLambda

    def route(state: Any) -> Any:
        return router(state, runtime=_runtime_or_none())

    route.__name__ = route.__qualname__ = router.__name__
    route.router = router  # type: ignore[attr-defined]  # the method's function, for tests and tools
    return RunnableLambda(route, name=router.__name__)


def forkable(builder: Any) -> Any:
    """A copy of ``builder`` whose routers that take the ``runtime`` also work on a state update or fork.

    Without it LangGraph raises "Missing required config key 'N/A' for '<router>'" when a thread's
    state is updated or forked.
    """
    import inspect

    out = copy_builder(builder)
    for specs in out.branches.values():
        for name, spec in list(specs.items()):
            func = getattr(spec.path, "func", None)
            if callable(func) and "runtime" in inspect.signature(func).parameters:
                specs[name] = spec._replace(path=optional_runtime(func))
    return out
