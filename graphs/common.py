"""What every method graph shares: run context, input/output state, reducers, helpers."""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Annotated, Any

from typing_extensions import TypedDict

from kb.base import KnowledgeBase, open_kb


def merge_usage(left: dict | None, right: dict | None) -> dict:
    """Reducer adding usage counters; nested dicts (per-stage) are merged recursively."""
    out = dict(left or {})
    for k, v in (right or {}).items():
        if isinstance(v, dict):
            out[k] = merge_usage(out.get(k), v)
        else:
            out[k] = out.get(k, 0) + v
    return out


class InputState(TypedDict):
    """What a user sends: the question."""

    question: str


class OutputState(TypedDict, total=False):
    """The common output shape of every method."""

    answer: str
    ranked: list[dict]
    evidence: list[dict]
    trace: Annotated[list[dict], operator.add]
    usage: Annotated[dict, merge_usage]


def _env(name: str) -> str | None:
    return os.environ.get(f"HYBRIDRAG_{name.upper()}")


def _parse(raw: str, default: Any) -> Any:
    """Read an environment value as the type of the field's default (booleans from 1/true/yes/on)."""
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, int | float):
        try:
            return type(default)(raw)
        except ValueError:
            raise ValueError(f"environment value {raw!r} is not a valid {type(default).__name__}") from None
    return raw


@dataclass(kw_only=True)
class Context:
    """Run-scoped settings; each field falls back to the ``HYBRIDRAG_<FIELD>`` env var."""

    kb: str = field(default="sample", metadata={
        "description": "KB directory built by `hybridrag ingest`, or 'sample' for the bundled sample KB."})
    top_k: int = field(default=10, metadata={"description": "Number of ranked results returned."})
    max_iterations: int = field(default=4, metadata={
        "description": "Upper bound on corrective feedback loops (LLM methods)."})

    def __post_init__(self) -> None:
        """Apply ``HYBRIDRAG_*`` environment overrides to fields left at their default."""
        for f in fields(self):
            raw = _env(f.name)
            if raw is None or getattr(self, f.name) != f.default:
                continue
            setattr(self, f.name, _parse(raw, f.default))


def resolve_kb(ctx: Context) -> KnowledgeBase:
    """Open (once per process) the KB named by the context."""
    if ctx.kb in ("", "sample"):
        from kb.sample import sample_kb_dir

        return open_kb(sample_kb_dir())
    return open_kb(ctx.kb)


def context_of(runtime: Any, default: type[Context]) -> Context:
    """Return ``runtime.context`` or a default context when a caller passed none.

    In server mode (``HYBRIDRAG_SERVER_MODE``, set by langgraph.json for the Agent Server) the
    context comes from a remote client: ``graphs.policy`` checks it and applies the operator's
    settings, raising ``PolicyError`` (naming the field) for anything a client may not set.
    """
    from graphs.policy import server_context, server_mode

    ctx = getattr(runtime, "context", None)
    if server_mode():
        return server_context(ctx, default)
    if ctx is None:
        return default()
    if isinstance(ctx, dict):
        return default(**ctx)
    return ctx


@contextmanager
def timed(stage: str, sink: dict):
    """Add the seconds spent in the block to ``sink['stages'][stage]``."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        sink.setdefault("stages", {})[stage] = sink.get("stages", {}).get(stage, 0.0) + time.perf_counter() - t0


def traced(node: str, decision: str, **details: Any) -> dict:
    """One trace entry: which node ran and what it decided."""
    return {"node": node, "decision": decision, **details}


NodeFn = Callable[..., dict]
