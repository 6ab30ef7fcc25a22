"""SSRAG from the two branches' texts to the answer: joint rerank, dedup, answer, answer check.

:func:`rerank` (both branches' texts by cosine to Qv, top 2k) → :func:`dedup` (TextDedup: exact,
cosine tie-break, LLM filter; the top k are the unified context) → :func:`answer` (the LLM over
the context, or :func:`agents.ssrag.small.rule_answer` under the small-model rules) →
:func:`verify` (a failed answer sends the run back to the entities, with the reason). Each
returns an :class:`~agents.ssrag.outcome.Outcome`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from hybridrag.agents.ssrag import correct as fix
from hybridrag.agents.ssrag import shots
from hybridrag.agents.ssrag import unify as uni
from hybridrag.agents.ssrag.context import SSRAGContext
from hybridrag.agents.ssrag.outcome import Outcome
from hybridrag.agents.ssrag.small import constrained, rule_answer, small
from hybridrag.agents.ssrag.vectors import query_vector
from hybridrag.kb.base import KnowledgeBase


def asked(state: Mapping[str, Any]) -> set[str]:
    """KB ids of the question's own entities (never its answer)."""
    return {e["id"] for e in state.get("entities", []) if e.get("id")}


def nodes_by_id(state: Mapping[str, Any]) -> dict[str, dict]:
    """The graph branch's nodes by id."""
    return {n["id"]: n for n in state.get("nodes", [])}


def rerank(kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """Joint rerank: vector and graph texts by cosine to Qv, top 2k."""
    qv = query_vector(kb, state["query"] if ctx.rerank_query == "augmented" else state["question"])
    items = state.get("vector", []) + state.get("graph", [])
    scores = uni.item_scores(kb, items, qv, nodes_by_id(state), ctx.graph_vectors, ctx.fact_scoring)
    pool = uni.joint_rerank(kb, items, qv, 2 * ctx.top_k, ctx.bare_contexts_last, scores)
    kg = sum(i["source"] == "kg" for i in pool)
    return Outcome({"pool": pool}, f"top {len(pool)}: {kg} graph, {len(pool) - kg} text")


def dedup(model: BaseChatModel, kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """TextDedup (exact, cosine tie-break, LLM filter), then the top k as the unified context.

    The update also holds the ranked contexts and the top context's name as the answer, for a
    retrieval-only run (``answer=false``).
    """
    calls: dict = {}
    note = None
    pool = state.get("pool", [])
    vecs = uni.item_vectors(kb, pool, nodes_by_id(state), ctx.graph_vectors, ctx.fact_scoring)
    kept, removed = uni.text_dedup(kb, pool, ctx.dedup_threshold, vecs)
    if ctx.llm_dedup and not small(ctx):
        kept, dropped, calls, note = uni.llm_filter(
            model, state["query"], kept, ctx.structured_method, ctx.context_budget
        )
        removed += dropped
    top = kept[: ctx.top_k]
    own = asked(state)
    order = uni.candidates_first(top, own)
    update = {
        "context": top,
        "answer": uni.fallback_answer(order, own, state["question"]),
        "ranked": [uni.as_ranked(i) for i in order],
        "evidence": [uni.as_evidence(i) for i in top],
        "answering": ctx.answer,
    }
    return Outcome(update, f"kept {len(top)}, removed {len(removed)}", calls, note, {"removed": removed})


def answer(model: BaseChatModel, kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """Answer generation over the unified context (the top context's name on fallback)."""
    own = asked(state)
    context = state.get("context", [])
    if small(ctx):  # the rule's answer is accepted as it is (no fallback note for the answer check)
        examples = shots.nearest(kb, state["question"], ctx.n_examples, ctx.examples)
        text, order, why = rule_answer(context, own, examples, state.get("graph", []), state["question"])
        back = [uni.as_evidence(order[0])] if order and order[0] not in context else []
        update: dict[str, Any] = {"answer": text, "answer_note": "", "ranked": [uni.as_ranked(i) for i in order]}
        if back:
            update["evidence"] = back + state.get("evidence", [])
        return Outcome(update, text, {}, why)
    surfaces = [s for e in state.get("entities", []) for s in e.get("surfaces") or [e["name"]]]
    text, calls, note = uni.generate(
        model, state["question"], context, ctx.structured_method, ctx.context_budget, surfaces, constrained(ctx, model)
    )
    if note:  # the non-LLM answer: the best context that is not one of the question's entities
        text = uni.fallback_answer(uni.candidates_first(context, own), own, state["question"])
    return Outcome({"answer": text, "answer_note": note or ""}, text, calls, note)


def verify(ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """The answer check: a failed answer sends the run back to the entities, with the reason in ``feedback``."""
    problem = fix.answer_problem(state.get("answer", ""), state.get("answer_note"), state["question"])
    rounds = state.get("answer_rounds", 0) + 1
    again = bool(problem) and rounds < ctx.max_iterations and state.get("entity_rounds", 0) < ctx.max_iterations
    found = [c["name"] for c in state.get("context", [])]
    feedback = fix.answer_feedback(state.get("entities", []), problem, found) if again else ""
    decision = "accepted" if not problem else f"re-augment: {problem}" if again else f"kept: {problem}"
    return Outcome({"answer_rounds": rounds, "feedback": feedback}, decision, {}, None, {"round": rounds})
