"""SSRAG's graph state, context and the helpers every node shares (:mod:`graphs.ssrag` builds the graph)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from hybridrag.agents.context import Context
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.agents.ssrag.settings import SSRAGSettings, check_choices
from hybridrag.agents.ssrag.tools import STEPS
from hybridrag.graphs.runtime import InputState, OutputState, context_of, resolve_kb, traced
from hybridrag.tools.steps import check_overrides


@dataclass(kw_only=True)
class SSRAGContext(SSRAGSettings, Context):
    """SSRAG settings (:class:`agents.ssrag.settings.SSRAGSettings`); each falls back to ``HYBRIDRAG_<FIELD>``."""


class State(InputState, OutputState, total=False):
    """Full SSRAG state: the augmentation, the route, both branches and the common output."""

    sub_questions: list[str]
    examples: list[str]
    entities: list[dict]
    cues: dict
    query: str
    route: str
    source: str
    vector: list[dict]
    vector_source: str
    nodes: list[dict]
    graph: list[dict]
    pool: list[dict]
    context: list[dict]
    entity_rounds: int
    entity_reply: str
    feedback: str
    answer_note: str
    answer_rounds: int
    stalled: bool
    answering: bool


def _ctx(runtime: Runtime[SSRAGContext]) -> SSRAGContext:
    ctx = context_of(runtime, SSRAGContext)
    check_choices(ctx)
    check_overrides("ssrag", ctx.tools, STEPS)
    return ctx


def _setup(runtime: Runtime[SSRAGContext]) -> tuple[SSRAGContext, Any, Any]:
    ctx = _ctx(runtime)
    return ctx, resolve_kb(ctx), load_chat_model(ctx.llm, ctx.llm_base_url)


def _asked(state: State) -> set[str]:
    """KB ids of the question's own entities (never its answer)."""
    return {e["id"] for e in state.get("entities", []) if e.get("id")}


def _nodes(state: State) -> dict[str, dict]:
    return {n["id"]: n for n in state.get("nodes", [])}


def _out(node: str, decision: str, usage: dict, calls: dict, fallback: str | None, **facts: Any) -> dict:
    return {"trace": [traced(node, decision, fallback=fallback, **facts)], "usage": {**calls, **usage}}
