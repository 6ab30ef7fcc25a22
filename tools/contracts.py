"""What a method's retrieval step is (:class:`Step`), and the output contracts the methods' steps share.

A step's default tool returns a bounded, JSON-friendly *view* of its result (at most
:data:`VIEW_LIMIT` items), built only when the tool run is seen (:mod:`tools.steps`); a user
tool's output is turned into the step's internal result by the step's ``adopt`` function, which
raises :class:`StepError` naming the step and its contract when the output breaks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, Field

from hybridrag.kb.base import Hit
from hybridrag.kb.text_index import Doc

VIEW_LIMIT = 50
PASSAGES = (
    "a list of passages: LangChain Documents (page_content; metadata id, score, optional kind and "
    "entity_id) or dicts with id, text, score (optional kind, entity_id)"
)


class StepError(ValueError):
    """A tool override that cannot be used: unknown step, not a tool, or output breaking the contract."""


@dataclass(frozen=True)
class Step:
    """One retrieval step of a method: its tool's name, docstring, args and output contract.

    ``default(kb)`` returns the function the default tool runs: called with the args (and the
    node's ``extra`` objects, e.g. the chat model, which are not tool inputs), it returns
    ``(internal, view)``, where ``view`` may be a function of no arguments building the view (then
    built only when the tool run is seen). ``adopt(kb, output, call)`` turns a user tool's output
    into the internal result (raising :class:`StepError` on a broken contract).
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
    meta: Mapping[str, Any]
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
    return {
        "id": str(pid),
        "text": text,
        "score": score_of(meta, call),
        "kind": str(meta.get("kind") or "passage"),
        "entity_id": meta.get("entity_id"),
        "name": meta.get("name"),
    }


def passages(output: Any, name: str, contract: str = PASSAGES) -> list[dict]:
    """A user tool's output as passages (:func:`passage` each)."""
    call = StepCall(name, contract, {}, {})
    return [passage(item, call) for item in listed(output, call)]


def as_hits(items: list[dict]) -> list[Hit]:
    """Passages as KB search hits (what the methods rank)."""
    return [Hit(Doc(p["kind"], p["id"], p["entity_id"], p["text"]), p["score"]) for p in items]


def hits_view(hits: list[Hit]) -> list[dict]:
    """The JSON view of search hits (at most VIEW_LIMIT)."""
    return [
        {"id": h.doc.id, "text": h.doc.text, "score": float(h.score), "kind": h.doc.kind, "entity_id": h.doc.entity_id}
        for h in hits[:VIEW_LIMIT]
    ]


def adopt_hits(kb: Any, output: Any, call: StepCall) -> list[Hit]:
    """A user search tool's output as hits."""
    return as_hits(passages(output, call.name, call.contract))


def search_step(name: str, description: str, search: str) -> Step:
    """A "passages by query" step over ``kb.<search>(query, k)`` (dense_search or lexical_search)."""

    def default(kb: Any) -> Callable[..., tuple[Any, Any]]:
        fn = getattr(kb, search)

        def run(query: str, k: int, **_: Any) -> tuple[list[Hit], Callable[[], list[dict]]]:
            hits = fn(query, k) if k > 0 else []
            return hits, lambda: hits_view(hits)

        return run

    return Step(name, description, SearchArgs, PASSAGES, default, adopt_hits)
