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
calling the retrieval functions directly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from kb.base import Hit
from kb.text_index import Doc

VIEW_LIMIT = 50
PASSAGES = ("a list of passages: LangChain Documents (page_content; metadata id, score, optional kind and "
            "entity_id) or dicts with id, text, score (optional kind, entity_id)")


class StepError(ValueError):
    """A tool override that cannot be used: unknown step, not a tool, or output breaking the contract."""


@dataclass(frozen=True)
class Step:
    """One retrieval step of a method: its tool's name, docstring, args and output contract.

    ``default(kb)`` returns the function the default tool runs: called with the args (and the
    node's ``extra`` objects, e.g. the chat model, which are not tool inputs), it returns
    ``(internal, view)``. ``adopt(kb, output, call)`` turns a user tool's output into the internal
    result (raising :class:`StepError` on a broken contract).
    """

    name: str
    description: str
    args: type[BaseModel]
    contract: str
    default: Callable[[Any], Callable[..., tuple[Any, Any]]]
    adopt: Callable[[Any, Any, StepCall], Any]


@dataclass(frozen=True)
class StepCall:
    """One call of a step, as the adopt function of a user tool's output sees it."""

    name: str
    contract: str
    args: dict
    extra: dict

    def error(self, problem: str) -> StepError:
        """A StepError naming the step, the problem and the step's output contract."""
        return StepError(f"step {self.name!r}: {problem}; expected {self.contract}")


class SearchArgs(BaseModel):
    """Arguments of a passage search step."""

    query: str = Field(description="What to search for.")
    k: int = Field(description="How many passages to return.")


_box: ContextVar[dict | None] = ContextVar("hybridrag_step_box", default=None)
_cache: dict[tuple[str, int], tuple[Any, dict[str, BaseTool]]] = {}
_lock = threading.Lock()


class StepTool(BaseTool):
    """A method's default tool for one step: runs ``runner`` (returning ``(internal, view)``), hands the
    internal result to the node (:func:`run_step`) and returns the view as its output."""

    runner: Any

    def _run(self, **kwargs):  # unannotated: LangChain reads _run's type hints on every call
        box = _box.get()
        internal, view = self.runner(**kwargs, **(box or {}).get("extra", {}))
        if box is not None:
            box["internal"] = internal
        return view


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
            raise StepError(f"{method} step {name!r}: expected a LangChain tool (BaseTool; e.g. "
                            f"retriever.as_tool() or @tool), got {type(tool).__name__}")


def run_step(method: str, steps: Mapping[str, Step], name: str, args: dict, kb: Any,
             tools: Mapping[str, Any] | None = None, extra: dict | None = None) -> Any:
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
    """The input a user tool takes: the args, or the query alone for a single-input tool naming none of
    them (``retriever.as_tool()`` takes one string)."""
    names = set(tool.args)
    if len(names) == 1 and not names & set(args):
        text = args.get("query", args.get("question"))
        if isinstance(text, str):
            return text
    return args


def _run_config() -> dict | None:
    """The config of the node being run (the tool run becomes its child); None outside a run."""
    try:
        from langgraph.config import get_config

        return get_config()
    except RuntimeError:
        return None


def _observed(config: dict | None) -> bool:
    """Whether a tool run would be seen: a callback handler of the run (Studio's and ``astream_events``'
    streams, a user's handler) or a tracer the environment turns on (LangSmith)."""
    from langchain_core.callbacks.manager import CallbackManager

    return bool(CallbackManager.configure((config or {}).get("callbacks")).handlers)


def _output(out: Any) -> Any:
    """A ToolMessage's artifact or content (a tool called with a ToolCall returns a message)."""
    from langchain_core.messages import ToolMessage

    if isinstance(out, ToolMessage):
        return out.artifact if out.artifact is not None else out.content
    return out


# ----- output contracts shared by the methods' steps -----

def listed(output: Any, call: StepCall) -> list:
    """A user tool's output as a list; a string, a message text or any non-list is a StepError."""
    if isinstance(output, str | bytes) or not isinstance(output, list | tuple):
        raise call.error(f"returned a {type(output).__name__} ({str(output)[:60]!r})")
    return list(output)


def score_of(row: Mapping, call: StepCall, key: str = "score") -> float:
    """The numeric score of an output row (0 when absent)."""
    try:
        return float(row.get(key) or 0.0)
    except (TypeError, ValueError):
        raise call.error(f"a non-numeric {key} in {str(row)[:60]!r}") from None


def passage(item: Any, call: StepCall) -> dict:
    """One passage as ``{id, text, score, kind, entity_id, name}`` from a Document or a dict."""
    if isinstance(item, Document):
        meta = item.metadata or {}
        pid, text = meta.get("id") or item.id, item.page_content
    elif isinstance(item, Mapping):
        meta = item
        pid, text = item.get("id"), item.get("text", item.get("page_content"))
    else:
        raise call.error(f"returned a {type(item).__name__} item ({str(item)[:60]!r})")
    if not isinstance(text, str) or pid in (None, ""):
        raise call.error(f"returned a passage without {'text' if not isinstance(text, str) else 'an id'}")
    return {"id": str(pid), "text": text, "score": score_of(meta, call), "kind": str(meta.get("kind") or "passage"),
            "entity_id": meta.get("entity_id"), "name": meta.get("name")}


def passages(output: Any, name: str, contract: str = PASSAGES) -> list[dict]:
    """A user tool's output as passages (:func:`passage` each)."""
    call = StepCall(name, contract, {}, {})
    return [passage(item, call) for item in listed(output, call)]


def as_hits(items: list[dict]) -> list[Hit]:
    """Passages as KB search hits (what the methods rank)."""
    return [Hit(Doc(p["kind"], p["id"], p["entity_id"], p["text"]), p["score"]) for p in items]


def hits_view(hits: list[Hit]) -> list[dict]:
    """The JSON view of search hits (at most VIEW_LIMIT)."""
    return [{"id": h.doc.id, "text": h.doc.text, "score": float(h.score), "kind": h.doc.kind,
             "entity_id": h.doc.entity_id} for h in hits[:VIEW_LIMIT]]


def adopt_hits(kb: Any, output: Any, call: StepCall) -> list[Hit]:
    """A user search tool's output as hits."""
    return as_hits(passages(output, call.name, call.contract))


def search_step(name: str, description: str, search: str) -> Step:
    """A "passages by query" step over ``kb.<search>(query, k)`` (dense_search or lexical_search)."""

    def default(kb: Any) -> Callable[..., tuple[Any, Any]]:
        fn = getattr(kb, search)

        def run(query: str, k: int, **_: Any) -> tuple[list[Hit], list[dict]]:
            hits = fn(query, k) if k > 0 else []
            return hits, hits_view(hits)

        return run

    return Step(name, description, SearchArgs, PASSAGES, default, adopt_hits)
