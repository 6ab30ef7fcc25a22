"""A method's retrieval steps as named LangChain tools: traced as tool runs, swappable by the user.

Every step a method takes against its KB (search passages, expand the graph, ...) is a
:class:`~langchain_core.tools.BaseTool` with an args schema and a docstring. A node runs it with
:func:`run_step`, which invokes the tool under the node's run config, so LangSmith / Studio /
``astream_events`` show ``on_tool_start`` / ``on_tool_end`` with the step's inputs and outputs.

A user swaps a step by naming it in the context: ``Context(tools={"dense_search": my_tool})``
(Python only; a served client cannot set ``tools``). The user's tool must keep the step's output
contract (:attr:`Step.contract`); its output is converted by the step's ``adopt`` function, and
anything else is a :class:`StepError` naming the step and the contract.

The default tools are built once per KB (:func:`default_tools`). A default tool's visible output is
a bounded, JSON-friendly view (at most :data:`VIEW_LIMIT` items); the full internal result (triples,
candidates, ...) goes around the tool to the node, so the method's results are exactly those of
calling the retrieval functions directly. When nothing would see the tool run (no callback handler,
no tracer), a default step is its runner called directly, and its view is not built.
What a step is and the shared output contracts: :mod:`tools.contracts`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks.base import BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from hybridrag.tools.contracts import (  # noqa: F401 - the steps' modules import these from here
    PASSAGES,
    VIEW_LIMIT,
    SearchArgs,
    Step,
    StepCall,
    StepError,
    adopt_hits,
    as_hits,
    hits_view,
    listed,
    passage,
    passages,
    score_of,
    search_step,
)

_box: ContextVar[dict | None] = ContextVar("hybridrag_step_box", default=None)
_cache: dict[tuple[str, int], tuple[Any, dict[str, BaseTool]]] = {}
_lock = threading.Lock()


class StepTool(BaseTool):
    """A method's default tool for one step.

    It runs ``runner`` (returning ``(internal, view)``), hands the internal result to the node
    (:func:`run_step`) and returns the view as its output.
    """

    runner: Any

    def _run(self, **kwargs):  # unannotated: LangChain reads _run's type hints on every call
        box = _box.get()
        internal, view = self.runner(**kwargs, **(box or {}).get("extra", {}))
        if box is not None:
            box["internal"] = internal
        return view() if callable(view) else view


def _tool(step: Step, run: Callable[..., tuple[Any, Any]]) -> BaseTool:
    """The default tool of ``step`` over one KB."""
    return StepTool(name=step.name, description=step.description, args_schema=step.args, runner=run)


def default_tools(method: str, kb: Any, steps: Mapping[str, Step]) -> dict[str, BaseTool]:
    """The default tools of a method over one KB, built on first use and kept."""
    key = (method, id(kb))
    hit = _cache.get(key)
    if hit is not None and hit[0] is kb:
        return hit[1]
    with _lock:
        tools = {name: _tool(step, step.default(kb)) for name, step in steps.items()}
        _cache[key] = (kb, tools)  # the KB is kept so its id is not reused
    return tools


def check_overrides(method: str, tools: Mapping[str, Any] | None, steps: Mapping[str, Step]) -> None:
    """Refuse an override naming no step of ``method`` or that is not a LangChain tool."""
    if not tools:
        return
    if not isinstance(tools, Mapping):
        raise StepError(f"{method} tools: expected a dict of step name → LangChain tool, got {type(tools).__name__}")
    unknown = sorted(str(n) for n in tools if n not in steps)
    if unknown:
        raise StepError(f"{method} has no retrieval step(s) {', '.join(unknown)}; its steps: {', '.join(steps)}")
    for name, tool in tools.items():
        if not isinstance(tool, BaseTool):
            raise StepError(
                f"{method} step {name!r}: expected a LangChain tool (BaseTool; e.g. "
                f"retriever.as_tool() or @tool), got {type(tool).__name__}"
            )


def run_step(
    method: str,
    steps: Mapping[str, Step],
    name: str,
    args: dict,
    kb: Any,
    tools: Mapping[str, Any] | None = None,
    extra: dict | None = None,
) -> Any:
    """Run step ``name`` as a tool call under the current run's config; return its internal result.

    ``tools`` are the user's overrides (the context's ``tools``); a step they do not name runs the
    default tool. ``extra``: objects the default tool needs beside its inputs (a chat model, the
    settings); they go around the tool, not through its inputs.
    """
    check_overrides(method, tools, steps)
    step = steps[name]
    default = default_tools(method, kb, steps)[name]
    tool = (tools or {}).get(name, default)
    config = _run_config()
    if tool is default and not _observed(config):
        return default.runner(**args, **(extra or {}))[0]  # nobody sees the run: skip its bookkeeping
    if tool is default:
        box: dict = {"extra": extra or {}}
        token = _box.set(box)
        try:
            tool.invoke(args, config)
        finally:
            _box.reset(token)
        return box["internal"]
    out = _output(tool.invoke(_fit(tool, args), config))
    return step.adopt(kb, out, StepCall(name, step.contract, args, extra or {}))


def _fit(tool: BaseTool, args: dict) -> Any:
    """The input a user tool takes: the args, or the query alone.

    The query alone goes to a single-input tool naming none of the args (``retriever.as_tool()``
    takes one string).
    """
    names = set(tool.args)
    if len(names) == 1 and not names & set(args):
        text = args.get("query", args.get("question"))
        if isinstance(text, str):
            return text
    return args


def _run_config() -> RunnableConfig | None:
    """The config of the node being run (the tool run becomes its child); None outside a run."""
    try:
        from langgraph.config import get_config

        return get_config()
    except RuntimeError:
        return None


def _observed(config: RunnableConfig | None) -> bool:
    """Whether a tool run would be seen by a callback handler or a tracer.

    A handler of the run (Studio's and ``astream_events``' streams, a user's handler) or a tracer the
    environment turns on (LangSmith) sees it.

    Inside a graph run the node's callbacks are a manager LangGraph derived from the run's, which
    was configured (environment tracers included) when the run started: its handlers tell. Anything
    else (a list of handlers, none) is configured here as a tool run would configure it.
    """
    callbacks = (config or {}).get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        return bool(callbacks.handlers)
    from langchain_core.callbacks.manager import CallbackManager

    return bool(CallbackManager.configure(callbacks).handlers)


def _output(out: Any) -> Any:
    """A ToolMessage's artifact or content (a tool called with a ToolCall returns a message)."""
    from langchain_core.messages import ToolMessage

    if isinstance(out, ToolMessage):
        return out.artifact if out.artifact is not None else out.content
    return out
