"""What every method graph shares at run time: input/output state, the run's context and KB.

:func:`context_of` and :func:`resolve_kb` are what every node calls first; both are worked out once
per graph run (a memo keyed by the run's ``Runtime.control``: a resume or fork is a new run). A
server installs a :class:`RunPolicy` (``app/policy.py``) to check a remote client's context and to
name an unavailable KB without its path; without one, a Python caller has full control.
"""

from __future__ import annotations

import operator
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AnyMessage
from langgraph._internal._typing import MISSING  # a channel's "no value"
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from hybridrag.agents.context import Context
from hybridrag.agents.llm.usage import add_usage, with_counters
from hybridrag.kb.base import KnowledgeBase, open_kb

NodeFn = Callable[..., dict]
_RUNS: dict[int, tuple[Any, dict]] = {}  # id(RunControl) -> (the control, its run's memo), oldest first
_RUNS_LOCK = threading.Lock()
MAX_RUN_MEMOS = 64


def merge_usage(left: dict | None, right: dict | None) -> dict:
    """Reducer adding usage records (nested per-role and per-stage dicts merged recursively).

    Returns:
        The sum, with every counter of ``agents.llm.usage`` present (0 when no LLM call was made).
    """
    return with_counters(add_usage(left or {}, right or {}))


class ChatMessages(BinaryOperatorAggregate):
    """``add_messages`` over a chat that is absent until its first message: a question's output has no ``messages``."""

    def __init__(self, typ: Any = list, operator: Any = add_messages) -> None:
        """The channel of ``messages``, empty (not an empty list) until written."""
        super().__init__(typ, operator)
        self.value = MISSING

    def update(self, values: Any) -> bool:
        """Add the messages written (the first write goes through ``add_messages`` too)."""
        if values and self.value is MISSING:
            self.value = []
        return super().update(values)


Messages = Annotated[list[AnyMessage], ChatMessages()]
"""A chat: LangGraph messages (dicts in the input are converted), appended or replaced by id."""


class InputState(TypedDict):
    """What a user sends: the question, or a chat whose last message is the user's (``graphs.chat``)."""

    question: NotRequired[str]
    messages: NotRequired[Messages]


class OutputState(TypedDict, total=False):
    """The common output shape of every method (``messages``: the chat, with the answer, on a chat turn)."""

    messages: Messages
    answer: str
    ranked: list[dict]
    evidence: list[dict]
    trace: Annotated[list[dict], operator.add]
    usage: Annotated[dict, merge_usage]


class KBUnavailableError(ValueError):
    """A served run's KB cannot be opened; the message names the KB by the operator's name, never its path."""


@dataclass(frozen=True)
class RunPolicy:
    """What a server decides about a run; each hook returns None where the server does not act.

    Attributes:
        context: (the client's raw context, the method's Context class) -> the checked context.
        open_kb: a checked context -> its KB (a failure named for a client).
        edit_limit: () -> the longest approval edit a client may send.
        question_limit: () -> the longest question (or last chat message) a client may send.
    """

    context: Callable[[Any, type], Context | None]
    open_kb: Callable[[Context], KnowledgeBase | None]
    edit_limit: Callable[[], int | None]
    question_limit: Callable[[], int | None] = lambda: None


_POLICY: list[RunPolicy] = []


def install_policy(policy: RunPolicy | None) -> None:
    """Make ``policy`` the process's run policy (None removes it)."""
    _POLICY[:] = [policy] if policy is not None else []


def active_policy() -> RunPolicy | None:
    """The installed run policy, if any."""
    return _POLICY[0] if _POLICY else None


def run_memo(runtime: Any = None) -> dict | None:
    """A dict shared by the nodes of the graph run being executed; None outside a run.

    A run is told by its ``Runtime.control`` (LangGraph makes one per ``invoke`` / ``stream``;
    resuming or forking a thread is a new run); the memos of the newest MAX_RUN_MEMOS runs are kept.
    """
    if runtime is None:
        try:
            from langgraph.runtime import get_runtime

            runtime = get_runtime()
        except RuntimeError:  # not inside a run
            return None
    control = getattr(runtime, "control", None)
    if control is None:  # a node called by hand, or a LangGraph without run controls
        return None
    with _RUNS_LOCK:
        entry = _RUNS.get(id(control))
        if entry is None or entry[0] is not control:
            entry = _RUNS[id(control)] = (control, {})
            if len(_RUNS) > MAX_RUN_MEMOS:
                del _RUNS[next(iter(_RUNS))]
        return entry[1]


def context_of(runtime: Any, default: type[Context]) -> Context:
    """The run's context: ``runtime.context``, or a default one when a caller passed none.

    Under a server's :class:`RunPolicy` the context comes from a remote client and is checked
    (a ``PolicyError`` names the field a client may not set). Worked out once per graph run.
    """
    raw = getattr(runtime, "context", None)
    memo, key = run_memo(runtime), ("context", default, id(raw))
    hit = memo.get(key) if memo is not None else None
    if hit is not None and hit[0] is raw:
        return hit[1]
    policy = active_policy()
    ctx = policy.context(raw, default) if policy is not None else None
    if ctx is None:
        ctx = with_configurable(raw, default, _run_configurable())
    if getattr(ctx, "approve", False):
        _check_approvable(type(ctx))
    if memo is not None:
        memo[key] = (raw, ctx)  # the raw context is kept, so its id is not reused while memoised
    return ctx


def _check_approvable(cls: type) -> None:
    """``approve=True`` on a method that cannot pause, or on a run without a checkpointer, is an error."""
    from langgraph.config import get_config

    from hybridrag.graphs import check_approvable, method_of

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
    """A Python caller's context: ``context=`` (dataclass or dict) filled from ``configurable``.

    Precedence: the context, then ``config["configurable"]``, then the ``HYBRIDRAG_<FIELD>``
    environment, then the field's default; keys that are not fields of ``cls`` (LangGraph's own:
    thread_id, checkpoint_ns, ...) are ignored.
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


def resolve_kb(ctx: Context) -> KnowledgeBase:
    """The KB the context names, opened once per process; within one run, the build the first node got."""
    memo = run_memo()
    ref = memo.get(("kb", ctx.kb)) if memo is not None else None
    kb = ref() if ref is not None else None
    if kb is None:
        kb = _open_kb_of(ctx)
        if memo is not None:  # a weak reference: a memo never keeps a replaced build in memory
            memo[("kb", ctx.kb)] = weakref.ref(kb)
    return kb


def _open_kb_of(ctx: Context) -> KnowledgeBase:
    """The KB of ``ctx`` from the process-wide cache (``kb.base.open_kb``), through the policy if any."""
    if ctx.kb in ("", "sample"):
        from hybridrag.kb.sample import sample_kb_dir

        return open_kb(sample_kb_dir())
    policy = active_policy()
    kb = policy.open_kb(ctx) if policy is not None else None
    return kb if kb is not None else open_kb(ctx.kb)


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
