"""SSRAG from the two branches' texts to the answer: joint rerank, dedup, answer, answer check.

:func:`rerank` (both branches' texts by cosine to Qv, top 2k) → :func:`dedup` (TextDedup: exact,
cosine tie-break, LLM filter; the top k are the unified context) → :func:`answer` (the LLM over
the context, or :func:`agents.ssrag.small.rule_answer` under the small-model rules) →
:func:`verify` (a failed answer sends the run back to the entities, with the reason). Each
returns an :class:`~agents.ssrag.outcome.Outcome`.

A list question (:func:`tools.list_answer.asks_for_list`) is answered with the list
(:func:`listed`): the answer's context, then every other context its evidence supports the same
way (at the end of the same relation chain, or a fact of its own naming it by the same relation
to the same question entity, on the same side), in rank order, at most ``top_k``, joined by "; ".
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
from hybridrag.agents.ssrag.small import constrained, outranked, rule_answer, small
from hybridrag.agents.ssrag.vectors import query_vector
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.list_answer import asks_for_list, joined, split


def asked(state: Mapping[str, Any]) -> set[str]:
    """KB ids of the question's own entities (never its answer)."""
    return {e["id"] for e in state.get("entities", []) if e.get("id")}


def nodes_by_id(state: Mapping[str, Any]) -> dict[str, dict]:
    """The graph branch's nodes by id."""
    return {n["id"]: n for n in state.get("nodes", [])}


def own_names(state: Mapping[str, Any]) -> set[str]:
    """The question's own entities' names and surfaces, case-folded."""
    entities = state.get("entities", [])
    return {n.casefold() for e in entities for n in [e.get("name", ""), *(e.get("surfaces") or [])] if n}


def links(item: dict, own: set[str]) -> set[tuple[str, str, str]]:
    """How ``item``'s evidence makes it an answer.

    ``("chain", "", "")`` at a relation chain's end, and ``(side, relation, entity)`` for each fact
    of its own joining its name to a question entity (``own``, case-folded names).
    """
    name = item["name"].casefold()
    found = {("chain", "", "")} if item.get("chain") else set()
    for fact in item.get("path") or []:
        f = " ".join(fact.casefold().split())
        for o in own:
            if f.startswith(f"{name} ") and f.endswith(f" {o}"):
                found.add(("subject", f[len(name) : -len(o)].strip(), o))
            if f.startswith(f"{o} ") and f.endswith(f" {name}"):
                found.add(("object", f[len(o) : -len(name)].strip(), o))
    return {k for k in found if k[0] == "chain" or k[1]}


def listed(text: str, order: list[dict], asked_ids: set[str], own: set[str], question: str, top_k: int) -> str:
    """``text``, or for a list question every answer its evidence supports, in rank order (module doc).

    ``order``: the contexts in rank order; the first one named ``text``'s first part (not the
    question's own, ``asked_ids``) is the answer's context. ``text`` as it is when none is.
    """
    parts = split(text)
    if not parts or not asks_for_list(question):
        return text

    def fresh(i: dict) -> bool:
        return i["kind"] == "entity" and (i.get("entity_id") or i["id"]) not in asked_ids

    first = next((i for i in order if fresh(i) and i["name"].casefold() == parts[0].casefold()), None)
    how = links(first, own) if first is not None else set()
    if not how:
        return text
    peers = [i["name"] for i in order if fresh(i) and links(i, own) & how]
    names: dict[str, str] = {}
    for n in [*parts, *peers]:
        names.setdefault(n.casefold(), n)
    return joined(list(names.values())[: max(top_k, 1)])


def rerank(kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """Joint rerank: vector and graph texts by cosine to Qv, top 2k."""
    qv = query_vector(kb, state["query"] if ctx.rerank_query == "augmented" else state["question"])
    items = state.get("vector", []) + state.get("graph", [])
    scores = uni.item_scores(kb, items, qv, nodes_by_id(state), ctx.graph_vectors, ctx.fact_scoring)
    pool = uni.joint_rerank(kb, items, qv, 2 * ctx.top_k, ctx.bare_contexts_last, scores, ctx.joint_rerank)
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
    first = uni.fallback_answer(order, own, state["question"])
    update = {
        "context": top,
        "answer": listed(first, order, own, own_names(state), state["question"], ctx.top_k),
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
        own |= outranked(kb, state["question"], context)  # "The Big Picture" is not an answer to "who directed Big"
        text, order, why = rule_answer(context, own, examples, state.get("graph", []), state["question"])
        text = listed(text, order, own, own_names(state), state["question"], ctx.top_k)
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
    text = listed(text, uni.candidates_first(context, own), own, own_names(state), state["question"], ctx.top_k)
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
