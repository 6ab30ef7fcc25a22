"""SSRAG's query side: Algorithm 1's augmentation and Algorithm 2's router, one function per role.

:func:`decompose` → :func:`entities` (with the entity check: unknown entities give the extractor a
reason) → :func:`intent` → :func:`rewrite` → :func:`route` (TEMPORAL or FACTUAL, then web or the
local corpus; with ``max_iterations > 1`` the router is asked once more, with the reason, when
:func:`agents.ssrag.correct.route_problem` finds one). Each makes its role's LLM call (the
router's under ``routing="llm"``), or with a small model (``judge``) takes the rule of
:mod:`agents.ssrag.small`, and returns an :class:`~agents.ssrag.outcome.Outcome`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from hybridrag.agents.llm.structured import add_usage
from hybridrag.agents.ssrag import augment as aug
from hybridrag.agents.ssrag import correct as fix
from hybridrag.agents.ssrag import routing as rt
from hybridrag.agents.ssrag import shots
from hybridrag.agents.ssrag.context import SSRAGContext
from hybridrag.agents.ssrag.outcome import Outcome
from hybridrag.agents.ssrag.small import RULED, extract, rule_intent, small
from hybridrag.agents.ssrag.typos import spelled
from hybridrag.agents.ssrag.vectors import query_vector
from hybridrag.kb.base import KnowledgeBase


def decompose(model: BaseChatModel, kb: KnowledgeBase, ctx: SSRAGContext, question: str) -> Outcome:
    """DecomposeQuery: the question as self-contained sub-questions (examples from the KB's bank)."""
    shown = shots.nearest(kb, question, ctx.n_examples, ctx.examples)
    calls: dict = {}
    note: str | None
    if small(ctx):
        subs, note = [question], f"{RULED}: the question itself"
    else:
        subs, calls, note = aug.decompose(model, question, ctx.structured_method, shots.decompose_shots(shown))
    examples = [e.question for e in shown]
    found = {"sub_questions": subs, "examples": examples}
    return Outcome(found, f"{len(subs)} sub-question(s)", calls, note, found)


def entities(model: BaseChatModel, kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """ExtractKeyEntities, alias canonicalisation (longest surface kept), and the entity check.

    Names the question writes with one typo are shown to the extractor as the KB spells them and
    link when copied as typed (:mod:`agents.ssrag.typos`).

    ``state`` holds the question, its sub-questions and the previous ask's ``entity_reply``,
    ``entity_rounds``, ``feedback`` and ``answer_rounds``. The update sets ``feedback`` when the
    extractor is to be asked again, and ``stalled`` when a re-augmentation named the same entities.
    """
    question, rounds, feedback = state["question"], state.get("entity_rounds", 0), state.get("feedback", "")
    follow = fix.follow_up(state["entity_reply"], feedback, question) if feedback else ()
    shown = shots.nearest(kb, question, ctx.n_examples, ctx.examples)
    spellings = spelled(kb, question)
    found, calls, note = extract(
        model, kb, ctx, question, state["sub_questions"], follow, shots.kinds(kb) + shots.entity_shots(shown), spellings
    )
    linked_entities = aug.canonicalise(kb, found, spellings)
    problem = fix.entity_problems(linked_entities, fix.known_names(kb, question))
    reply = ", ".join(e["name"] for e in found) or "(no entity)"
    again = bool(problem) and rounds + 1 < ctx.max_iterations and reply != state.get("entity_reply")
    # re-augmented after a failed answer but the same entities again: a new pass would repeat the last one
    stalled = bool(feedback) and state.get("answer_rounds", 0) > 0 and reply == state.get("entity_reply")
    names, linked = [e["name"] for e in linked_entities], [e["id"] for e in linked_entities if e["id"]]
    update = {
        "entities": linked_entities,
        "entity_rounds": rounds + 1,
        "entity_reply": reply,
        "feedback": problem if again else "",
        "stalled": stalled and not again,
    }
    facts = {"linked": linked, "feedback": feedback or None, "problem": problem or None}
    return Outcome(update, ", ".join(names) or "no entity", calls, note, facts)


def intent(model: BaseChatModel, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """DetectIntent: question word, subtopics, temporal and factual cues (LLM merged with rules)."""
    calls: dict = {}
    note: str | None
    if small(ctx):
        cues, note = rule_intent(state["question"]), f"{RULED}: rule cues only"
    else:
        cues, calls, note = aug.detect_intent(
            model, state["question"], state["sub_questions"], state["entities"], ctx.structured_method
        )
    return Outcome({"cues": cues}, cues["intent"], calls, note, cues)


def rewrite(model: BaseChatModel, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """EnhanceQuery: the augmented query Q_aug (acronyms expanded, entities verbatim, word limit)."""
    calls: dict = {}
    note: str | None
    if small(ctx):
        query, note = aug.canonical_question(state["question"], state["entities"]), f"{RULED}: canonicalised question"
    else:
        query, calls, note = aug.enhance_query(
            model, state["question"], state["entities"], state["cues"], ctx.max_query_tokens, ctx.structured_method
        )
    return Outcome({"query": query}, query, calls, note)


def route(model: BaseChatModel, kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """Agentic router: TEMPORAL or FACTUAL, then web or the local corpus (empty local → web)."""
    calls: dict = {}
    note, rule = None, rt.rule_label(state["cues"])
    label, problem = rule, ""
    local = rt.probe_local(kb, query_vector(kb, state["query"]), state["query"], state["entities"], ctx.local_min_score)
    if small(ctx):
        note = f"{RULED}: temporal-cue rule"
    elif ctx.routing == "llm":
        reply, calls = rt.classify(model, state["query"], ctx.structured_method)
        label, note = (reply.label, None) if reply else (rule, "unparseable label: temporal-cue rule")
        web = "the local corpus has results for it" if local["found"] else ""
        problem = fix.route_problem(label, rule, state["cues"], web) if reply and ctx.max_iterations > 1 else ""
        if problem:  # the corrective edge of the router: asked once more, with the reason
            again, more = rt.classify(model, state["query"], ctx.structured_method, feedback=(label, problem))
            calls, label = add_usage(calls, more), again.label if again else label
    source, reason = rt.choose_source(label, local)
    facts = {"reason": reason, "rule_label": rule, "local": local, "feedback": problem or None}
    return Outcome({"route": label, "source": source}, f"{label} → {source}", calls, note, facts)
