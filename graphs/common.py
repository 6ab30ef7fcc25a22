"""What every method graph shares: run context, input/output state, reducers, helpers."""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

from hybridrag.agents.llm.usage import add_usage, with_counters
from hybridrag.graphs.run_memo import KBUnavailableError, resolve_kb, run_memo  # noqa: F401 - the graphs import these from here


def merge_usage(left: dict | None, right: dict | None) -> dict:
    """Reducer adding usage records (:mod:`agents.llm.usage`; nested per-role and per-stage dicts
    merged recursively); the run's counters are always there, 0 when no LLM call was made."""
    return with_counters(add_usage(left or {}, right or {}))


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
    approve: bool = field(default=False, metadata={
        "description": "Pause before retrieval for a human to approve or edit the method's decision (hybgrag: the "
                       "router's action; mor: the plan; hydrarag: the sources; ssrag: the route); resume with true "
                       "or {key: edited value}. Needs a checkpointed thread (Studio, or graphs.get_builder(name) "
                       "compiled with a checkpointer)."})
    tools: dict[str, Any] | None = field(default=None, metadata={"python_only": True, "description": (
        "Python only: replace retrieval steps of the method by your own LangChain tools, {step name: tool} "
        "(tools.steps; e.g. {'dense_search': retriever.as_tool()}); never settable by a client.")})

    def __post_init__(self) -> None:
        """Apply ``HYBRIDRAG_*`` environment overrides to fields left at their default (not to the
        Python-only ``tools``)."""
        for f in fields(self):
            raw = None if f.metadata.get("python_only") else _env(f.name)
            if raw is None or getattr(self, f.name) != f.default:
                continue
            setattr(self, f.name, _parse(raw, f.default))

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict:
        """The JSON schema Studio renders: each field's description, and its values for a fixed choice;
        on a server, a KB or model field lists the names the operator gave, its default the operator's."""
        from hybridrag.app.policy import RULES, server_mode
        from hybridrag.app.server_config import named_choices

        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        for f in fields(cls):
            if f.metadata.get("python_only"):  # objects from Python (tools): never offered to a client
                target.get("properties", {}).pop(f.name, None)
                if f.name in target.get("required", []):
                    target["required"].remove(f.name)
                continue
            prop = target.get("properties", {}).get(f.name)
            if prop is None:
                continue
            if f.metadata.get("description"):
                prop.setdefault("description", f.metadata["description"])
            rule = RULES.get(f.name)
            if rule is not None and rule.kind == "choice" and prop.get("type") == "string":
                allowed = {*rule.choices, f.default} - {None}  # a method's own Literal narrows a shared rule
                own = prop.get("enum")
                prop["enum"] = [v for v in own if v in allowed] if own else sorted(allowed)
            elif rule is not None and rule.kind in ("kb", "model") and server_mode():
                names, default = named_choices(rule.kind)
                if names:
                    prop.update(enum=names, default=default)
        return schema


StructuredMethod = Literal["function_calling", "json_schema", "json_mode"]
"""How a role asks for structured output: a choice field to annotate as this Literal (Studio lists it)."""


def context_of(runtime: Any, default: type[Context]) -> Context:
    """Return ``runtime.context`` or a default context when a caller passed none.

    In server mode (``HYBRIDRAG_SERVER_MODE``, set by langgraph.json for the Agent Server) the
    context comes from a remote client: ``app.policy`` checks it and applies the operator's
    settings, raising ``PolicyError`` (naming the field) for anything a client may not set.
    Worked out once per graph run (the first node's result serves the run's other nodes).
    """
    raw = getattr(runtime, "context", None)
    memo, key = run_memo(runtime), ("context", default, id(raw))
    hit = memo.get(key) if memo is not None else None
    if hit is not None and hit[0] is raw:
        return hit[1]
    from hybridrag.app.policy import server_context, server_mode

    ctx = server_context(raw, default) if server_mode() else with_configurable(raw, default, _run_configurable())
    if getattr(ctx, "approve", False):
        _check_approvable(type(ctx))
    if memo is not None:
        memo[key] = (raw, ctx)  # the raw context is kept, so its id is not reused while memoised
    return ctx


def _check_approvable(cls: type) -> None:
    """``approve=True`` on a method that cannot pause, or on a run without a checkpointer, is an error."""
    from langgraph.config import get_config

    from hybridrag.graphs.approval import check_approvable
    from hybridrag.app.policy import method_of

    try:
        checkpointer = (get_config().get("configurable") or {}).get("__pregel_checkpointer")
    except RuntimeError:  # not inside a run
        return
    check_approvable(method_of(cls), checkpointer)


def _run_configurable() -> dict:
    """The ``configurable`` of the run being executed ({} outside a run)."""
    try:
        from langgraph.config import get_config

        return dict(get_config().get("configurable") or {})
    except RuntimeError:  # not inside a run
        return {}


def with_configurable(ctx: Any, cls: type[Context], configurable: dict) -> Context:
    """A Python caller's context: ``context=`` (dataclass or dict), with ``config["configurable"]``
    filling the fields the context leaves at their default (precedence: context, then
    configurable, then the ``HYBRIDRAG_<FIELD>`` environment, then the field's default).

    As over HTTP (``app/runnable.py``: the input's settings win over ``configurable``), an explicit
    context value wins; ``configurable`` keys that are not fields of ``cls`` (LangGraph's own:
    thread_id, checkpoint_ns, ...) are ignored here.
    """
    if ctx is None:
        ctx = cls()
    elif isinstance(ctx, dict):
        ctx = cls(**ctx)
    if not hasattr(ctx, "__dataclass_fields__") or getattr(ctx, "_policy_checked", False):
        return ctx  # a server built it from the client's checked settings (configurable included)
    named = [f.name for f in fields(ctx) if configurable.get(f.name) is not None]
    if not named:  # nothing to fill (LangGraph's own keys only): no defaults to build
        return ctx
    base = type(ctx)()  # defaults with the HYBRIDRAG_* environment applied
    extra = {n: configurable[n] for n in named if getattr(ctx, n) == getattr(base, n)}
    return replace(ctx, **extra) if extra else ctx


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
