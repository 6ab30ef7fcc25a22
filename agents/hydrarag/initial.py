"""HydraRAG initialization (paper §4.1): topic entities and sources, question analysis, source selection.

Node bodies (contract in :mod:`agents.hydrarag.views`). Fallbacks, each recorded in the trace:

- topic extraction unparseable or nothing aligned → the KB names found verbatim in the question;
- question analysis unparseable → the question itself as the skyline, depth ``D_max``;
- source selection unparseable or empty → every available source (the no-selector setting).

Small models (:func:`agents.hydrarag.roles.constrained`): topic extraction decodes within the KB
names the question writes (every span of the question when it writes none); one name, the one
cased name among lower-case tags, or the one naming an entity of the shown bank examples' topic
type (:func:`agents.hydrarag.analysis.lone_topic`), is taken without a call, and names align to the
same-named entity of that type first; the question analysis is asked as fields (topic entity, the
KB's relation names, the KB's answer kinds) shown in that form by the bank's nearest examples, and
the skyline and sub-questions are written from them by template (with no call when the shown
examples share one path and kind and a rule took the topic: :func:`_ruled_plan`); under the judge's rules
(``judge=auto`` with a small model, or ``rules``) the source selector is not asked: every
available source is searched.
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hydrarag import analysis, roles, shots
from hybridrag.agents.hydrarag.views import shown, traced
from hybridrag.agents.llm.constrained import kb_choices, question_spans
from hybridrag.agents.llm.judge import use_rules
from hybridrag.prompts.data_block import data_block, data_list
from hybridrag.tools.retrieval import mentions_in


def _types(ctx: Any, model: Any, examples: list[dict]) -> frozenset[str]:
    """The shown bank examples' topic types a small model's topic is held to (none for a larger model)."""
    return analysis.example_types(examples[: ctx.num_examples]) if roles.constrained(ctx, model) else frozenset()


def _topic_reply(state: dict, ctx: Any, kb: Any, model: Any, chosen: list[dict]) -> tuple[Any, dict, bool]:
    """The topic extraction's reply, its usage, and whether the one KB name in the question was taken unasked."""
    q = state["question"]
    if not roles.constrained(ctx, model):
        known = None
    elif lone := analysis.lone_topic(kb, q, _types(ctx, model, chosen)):  # a rule decides: no call
        return roles.TopicEntities(entities=[lone]), {}, True
    else:
        known = analysis.topic_choices(kb, q)
        if len(known) == 1:  # the grammar admits one name only
            return roles.TopicEntities(entities=known), {}, True
    reply, calls = roles.extract_topics(
        model,
        q,
        ctx.structured_method,
        shots.lines(chosen, "topics", ctx.examples, ctx.num_examples),
        {"entities": known} if known else None,
    )
    return reply, calls, False


def detect(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Topic entities from the LLM, aligned per source; S_t."""
    q = state["question"]
    chosen = shots.to_state(shots.choose(kb, q, ctx.examples, ctx.num_examples))
    reply, calls, unasked = _topic_reply(state, ctx, kb, model, chosen)
    mentions = list(dict.fromkeys(m.strip() for m in (reply.entities if reply else []) if m.strip()))
    types = _types(ctx, model, chosen)
    found = analysis.detect_sources(kb, mentions, ctx.link_threshold, ctx.use_web, types)
    notes = ([] if reply else ["unparseable topic extraction"]) + found["notes"]
    notes += ["one KB name (or one cased or typed name) in the question: taken without a call"] if unasked else []
    exact = [kb.name(i) for i in mentions_in(kb, q)] if not found["topics"] else []
    if exact:
        found = analysis.detect_sources(kb, mentions + exact, ctx.link_threshold, ctx.use_web, types)
        notes.append("no topic entity aligned: KB names found in the question used")
    step = traced(
        "detect_sources",
        "S_t = " + (", ".join(found["available"]) or "(none)"),
        mentions=mentions,
        topics=[f"{t['mention']} → {t['id']}" for t in found["topics"]],
        unlinked=found["unlinked"],
        notes=notes,
        examples=[e["question"] for e in chosen] if ctx.examples == "kb" else f"bundled ({ctx.examples})",
    )
    return {
        "shots": chosen,
        "mentions": mentions,
        "unlinked": found["unlinked"],
        "topics": found["topics"],
        "topic_keys": found["topic_keys"],
        "doc_topics": found["doc_topics"],
        "available": found["available"],
        "trace": [step],
        "usage": calls,
    }


def _ruled_plan(kb: Any, question: str, shown: list[dict]) -> roles.SkylinePlan | None:
    """The plan a rule writes as well as the small model: None unless every shown bank example has one path.

    The model's relations are held to the shown examples' paths (:func:`shots.shown_paths`) and it
    copies their answer kind; when the examples share one path and kind, and the topic is the one KB
    name a rule takes (:func:`analysis.lone_topic`) naming an entity of their topic type, the
    grammar leaves the model nothing to choose that it does not copy.
    """
    plans = {(tuple(e["relations"]), e.get("answer_type", "")) for e in shown if e.get("relations")}
    types = analysis.example_types(shown)
    if len(plans) != 1 or len(shown) < 2 or not types:
        return None
    topic = analysis.lone_topic(kb, question, types)
    if topic is None or not any(e.type in types for e in kb.graph.lookup(topic)):
        return None
    [(relations, answer_type)] = plans
    return roles.SkylinePlan(topic=topic, relations=list(relations), answer_type=answer_type)


def _planned(state: dict, ctx: Any, kb: Any, model: Any, names: list[str]) -> tuple[Any, dict]:
    """The small model's analysis: its plan fields made into a question analysis by template, or None.

    The :class:`~agents.hydrarag.roles.SkylinePlan` reply's topic and relations give the
    :class:`~agents.hydrarag.roles.QuestionAnalysis` skyline and sub-questions. The topic is any span
    of the question, or the one a rule chose among its KB names (:func:`analysis.pinned_topic`).
    """
    q = state["question"]
    examples = state.get("shots", [])
    ruled = _ruled_plan(kb, q, examples[: ctx.num_examples] if ctx.examples == "kb" else [])
    pinned = analysis.pinned_topic(kb, q, _types(ctx, model, examples))
    spans = [pinned] if pinned else list(dict.fromkeys([*question_spans(q), *names]))
    reply, calls = (
        (ruled, {})
        if ruled
        else roles.plan(
            model,
            q,
            data_list(names),
            kb_choices(kb),
            ctx.structured_method,
            shots.lines(examples, "plan", ctx.examples, ctx.num_examples),
            spans,
            shots.hop_range(examples[: ctx.num_examples], ctx.examples, ctx.num_examples),
            shots.shown_paths(examples[: ctx.num_examples], ctx.examples, ctx.num_examples),
        )
    )
    if reply is None or not reply.relations:
        return None, calls
    topic, rels = reply.topic.strip(), [r.strip() for r in reply.relations if r.strip()]  # a relation may repeat
    return roles.QuestionAnalysis(
        split_questions=shots.sub_questions(topic, rels, reply.answer_type),
        skyline=shots.chain(topic, rels, reply.answer_type),
    ), calls


def _read_analysis(q: str, reply: Any, names: list[str], max_depth: int) -> tuple[str, list[str], int, str | None]:
    """``(skyline, sub-questions, depth, fallback)`` from the analysis reply; depth capped at ``max_depth``."""
    fallback = None
    if reply is not None and reply.skyline.strip():
        skyline = reply.skyline.strip()
        splits = [s.strip() for s in reply.split_questions if s.strip()] or [q]
        depth = analysis.predicted_depth(skyline, names)
        if depth is None:
            depth, fallback = max_depth, "skyline is not a chain: depth D_max"
    else:
        skyline, splits, depth = q, [q], max_depth
        fallback = "unparseable analysis: the question is the skyline, depth D_max"
    return skyline, splits, max(1, min(depth, max_depth)), fallback


def analyse(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Sub-questions, skyline and predicted depth (capped at D_max); topics in skyline order."""
    q = state["question"]
    names = [t["name"] for t in state["topics"]] + [
        m for m in state.get("mentions", []) if m not in {t["mention"] for t in state["topics"]}
    ]
    if roles.constrained(ctx, model):
        reply, calls = _planned(state, ctx, kb, model, names)
    else:
        reply, calls = roles.analyse(
            model,
            q,
            data_list(names),
            ctx.structured_method,
            shots.lines(state.get("shots", []), "analysis", ctx.examples, ctx.num_examples),
        )
    skyline, splits, depth, fallback = _read_analysis(q, reply, names, ctx.max_depth)
    topics = analysis.reorder(state["topics"], skyline)
    dropped: list[dict] = []
    found: dict = {}
    if roles.constrained(ctx, model) and reply is not None:
        types = _types(ctx, model, state.get("shots", []))
        topics, dropped, found = analysis.planned_topic(kb, topics, skyline, ctx.link_threshold, ctx.use_web, types)
    step = traced(
        "analyze_question",
        f"depth {depth}: {skyline}",
        split_questions=splits,
        topic_order=[t["name"] for t in topics],
        fallback=fallback,
        **({"dropped_topics": [t["name"] for t in dropped]} if dropped else {}),
        **({"plan": "rule: the shown examples' one path, no call"} if reply is not None and not calls else {}),
    )
    return {
        "topics": topics,
        "skyline": skyline,
        "split_questions": splits,
        "depth": depth,
        "trace": [step],
        "usage": calls,
        **found,
    }


def _chosen_sources(state: dict, ctx: Any, model: Any) -> tuple[list[str], str, dict]:
    """The agentic selector's sources S_a (every available one when it is not asked or fails), why, and usage."""
    q, available = state["question"], state["available"]
    if not ctx.source_selector:
        return available, "selector off: every available source", {}
    if len(available) <= 1:
        return available, "one source or none", {}
    if use_rules(ctx.judge, ctx.llm):
        return available, "judge rules (small model): every available source", {}
    analysed = data_block(
        [*(("sub_question", s) for s in state.get("split_questions") or [q]), ("skyline", state["skyline"])]
    )
    shown = shots.lines(state.get("shots", []), "selector", ctx.examples, ctx.num_examples)
    reply, calls = roles.choose_sources(model, q, ", ".join(available), analysed, ctx.structured_method, shown)
    chosen: list[str] = [s for s in dict.fromkeys(reply.sources) if s in available] if reply else []
    if reply is not None and chosen:
        return chosen, reply.reasoning, calls
    why = ("unparseable selection" if reply is None else "no available source chosen") + ": every source"
    return available, why, calls


def select(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Agentic source selector, then the initial probe at min(D_predict, D_max)."""
    chosen, why, calls = _chosen_sources(state, ctx, model)
    chain = analysis.chain(
        state["topics"], state["skyline"], state["question"], state["doc_topics"], state.get("unlinked", [])
    )
    probe = shown(state, ctx, analysis.probe("initial", 1, chosen, state["depth"], [chain], floor=ctx.length_floor))
    step = traced("select_sources", "S_a = " + (", ".join(chosen) or "(none)"), phase="initial", reasoning=why)
    return {"sources": chosen, "probe": probe, "phase": "initial", "round": 1, "trace": [step], "usage": calls}
