"""Graph registry: one compiled LangGraph graph per method, imported on first use."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hybridrag.agents.context import Context


@dataclass(frozen=True)
class GraphInfo:
    """Where a method's graph lives and what it does."""

    name: str
    module: str
    context: str
    description: str


REGISTRY: dict[str, GraphInfo] = {
    info.name: info
    for info in [
        GraphInfo(
            "fusion",
            "hybridrag.graphs.fusion",
            "FusionContext",
            "Training-free KG + dense-text fusion: vector seeds, 1-hop expansion, Dice–Sørensen ranking.",
        ),
        GraphInfo(
            "hybgrag",
            "hybridrag.graphs.hybgrag",
            "HybGRAGContext",
            "HybGRAG: router over a text/hybrid retriever bank with a validator + commentor critic loop.",
        ),
        GraphInfo(
            "mor",
            "hybridrag.graphs.mor",
            "MoRContext",
            "MoR: LLM planning graph → parallel mixed structural/textual traversal per route → "
            "intersection → structure-aware trajectory rerank.",
        ),
        GraphInfo(
            "hydrarag",
            "hybridrag.graphs.hydrarag",
            "HydraRAGContext",
            "HydraRAG: skyline analysis, agentic KG/docs/web selection, multi-hop path search, "
            "cross-source pruning, refine + CoT check over three exploration rounds.",
        ),
        GraphInfo(
            "ssrag",
            "hybridrag.graphs.ssrag",
            "SSRAGContext",
            "SSRAG: query augmentation, TEMPORAL/FACTUAL routing (web or local), vector ∥ graph "
            "retrieval unified by one cosine rerank, dedup, answer.",
        ),
    ]
}


def list_graphs() -> list[str]:
    """Names of every registered method."""
    return list(REGISTRY)


def _info(name: str) -> GraphInfo:
    if name not in REGISTRY:
        raise KeyError(f"unknown method {name!r}; available: {', '.join(REGISTRY)}")
    return REGISTRY[name]


@cache
def get_graph(name: str) -> Any:
    """The compiled graph of a method (``.invoke``, ``.stream``, ``.batch`` with ``context=``).

    It takes ``{"question": ...}`` or a chat, ``{"messages": [...]}``, and answers a chat with an
    AI message (``graphs.chat``); a question runs exactly the method's own nodes.
    """
    from hybridrag.graphs.chat import chat_shaped

    return chat_shaped(importlib.import_module(_info(name).module).builder).compile(name=name)


def get_builder(name: str) -> Any:
    """The uncompiled builder of a method, to compile with a checkpointer.

    Its state starts over with each question asked on a thread (``graphs.threads.per_question``),
    it can pause for a human's approval before retrieval (``approve=True``, ``graphs.approval``),
    its state can be updated or forked (``graphs.rewire.forkable``), and it takes a chat as
    :func:`get_graph` does (a thread keeps the conversation: ``graphs.chat``).
    """
    from hybridrag.graphs.approval import with_approval
    from hybridrag.graphs.chat import chat_shaped
    from hybridrag.graphs.rewire import forkable
    from hybridrag.graphs.threads import per_question

    method = importlib.import_module(_info(name).module).builder
    return forkable(per_question(with_approval(chat_shaped(method), name)))


def context_class(name: str) -> type[Context]:
    """The Context dataclass of a method."""
    info = _info(name)
    return getattr(importlib.import_module(info.module), info.context)


APPROVABLE = ("hybgrag", "mor", "hydrarag", "ssrag")
"""The methods with a decision a human may approve (``graphs.approval.POINTS``)."""


class ApprovalError(ValueError):
    """An approval that cannot be applied; the message names the key and the problem."""


def check_approvable(method: str, checkpointer: Any) -> None:
    """Refuse ``approve=True`` where no pause can happen (a method without a point, or no checkpointer)."""
    if method not in APPROVABLE:
        raise ApprovalError(
            f"approve: {method or 'this method'} has no decision to approve "
            f"(methods that pause: {', '.join(APPROVABLE)})"
        )
    if not checkpointer:
        raise ApprovalError(
            "approve: a pause needs a checkpointed thread: compile graphs.get_builder(name) "
            "with a checkpointer, or run it in LangGraph Studio / the Agent Server"
        )


def method_of(cls: type) -> str:
    """The registered method whose Context class is ``cls`` ('' for none)."""
    return next((n for n, info in REGISTRY.items() if info.context == cls.__name__), "")


def context_for(name: str, **overrides: Any) -> Any:
    """A method's context with ``overrides`` applied; unknown settings raise a clear error.

    ``tools={step name: LangChain tool}`` replaces retrieval steps (:func:`retrieval_steps`; Python only).
    """
    cls = context_class(name)
    known = set(cls.__dataclass_fields__)
    bad = sorted(k for k in overrides if k not in known)
    if bad:
        raise TypeError(f"method {name!r} has no setting(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
    return cls(**{k: v for k, v in overrides.items() if v is not None})


def retrieval_steps(name: str) -> dict[str, str]:
    """A method's retrieval steps, tool name → what it does.

    These are the names ``tools={...}`` in its context may replace (:mod:`tools.steps`).
    """
    _info(name)
    steps = importlib.import_module(f"hybridrag.agents.{name}.tools").STEPS
    return {n: s.description for n, s in steps.items()}
