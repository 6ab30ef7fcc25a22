"""Builder surgery shared by ``graphs.threads`` and ``graphs.approval``: a copy of a method's
``StateGraph`` builder with one node put right after another, the method's own builder untouched."""

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
    """A copy of ``builder`` with node ``name`` running ``action`` right after ``source`` (a node or
    START): every edge and branch that left ``source`` now leaves ``name``."""
    out = copy_builder(builder)
    out.edges = {(name if start == source else start, end) for start, end in builder.edges}
    out.waiting_edges = {(tuple(name if s == source else s for s in starts), end)
                         for starts, end in builder.waiting_edges}
    out.branches = defaultdict(dict, {name if start == source else start: dict(spec)
                                      for start, spec in builder.branches.items()})
    out.add_node(name, action)
    out.add_edge(source, name)
    return out
