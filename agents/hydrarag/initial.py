"""HydraRAG node bodies for initialization, exploration and phase planning (paper §4.1-4.2).

Each function takes the graph state, the run context (``graphs.hydrarag.HydraRAGContext``),
the opened KB and the chat model, and returns the state update with one trace entry and
its LLM usage (the graph node adds the seconds). Fallbacks (all recorded in the trace):

- topic extraction unparseable or nothing aligned → the KB names found verbatim in the question;
- question analysis unparseable → the question itself as the skyline, depth ``D_max``;
- source selection unparseable or empty → every available source (the no-selector setting);
- follow-up question unparseable → the question and skyline again (a deeper, all-source round);
- predictions unparseable or empty → the top ranked entities so far as predictions;
- web search unavailable or failing → no web paths, the reason noted (:mod:`agents.hydrarag.exploration`).

Small models (:func:`agents.hydrarag.roles.constrained`): topic extraction decodes within the
KB names the question writes (every span of the question when it writes none; one name is taken
without a call); the question analysis is asked as fields (topic entity, the KB's relation
names, the KB's answer kinds) shown in that form by the bank's nearest examples, and the skyline
and sub-questions are written from them by template; under the judge's rules
(``judge=auto`` with a small model, or ``rules``) the source selector is not asked (every
available source is searched: the no-selector setting), the refined round takes the next nearest
shown example's relation chain as its skyline (no such example: the question and skyline again),
and the predicted round the top ranked entities as its predictions: no LLM call for either.
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hydrarag import analysis as analysis
from hybridrag.agents.hydrarag import roles as roles
from hybridrag.agents.hydrarag import shots as shots
from hybridrag.agents.hydrarag.exploration import beam_documents as _beam_documents  # noqa: F401 - evals/bench_modules_methods.py calls it here
from hybridrag.agents.hydrarag.exploration import explore_one
from hybridrag.agents.hydrarag.feedback import feedback_block
from hybridrag.agents.hydrarag.pruning import path_blocks
from hybridrag.agents.llm.constrained import kb_choices, question_spans
from hybridrag.agents.llm.judge import use_rules
from hybridrag.prompts.data_block import data_block, data_list
from hybridrag.tools.retrieval import mentions_in

PREDICTIONS = 3  # the paper asks for three predicted answers


def traced(node: str, decision: str, **details: Any) -> dict:
    """One trace entry (same shape as ``graphs.runtime.traced``; agents do not import graphs)."""
    return {"node": node, "decision": decision, **details}


def _names(state: dict) -> str:
    return data_list(t["name"] for t in state.get("topics", []))


def _splits(state: dict) -> str:
    return data_list(state.get("split_questions") or [state["question"]])


def quoted(state: dict) -> dict:
    """Prompt values every later role shares: the question (the user's text), and the skyline and
    sub-questions as quoted data (model output written from KB names and, later, paths).
    """
    return {"question": state["question"], "skyline": data_block(state["skyline"]), "splits": _splits(state)}


def _shown(state: dict, ctx: Any, probe: dict) -> dict:
    """A probe with the paragraph → path example lines its text exploration shows, and under the judge's
    rules ``follow``: the KG beam keeps the paths along the skyline first (:func:`agents.hydrarag.kg.follow_bonus`).
    """
    return {
        **probe,
        "examples": shots.lines(state.get("shots", []), "text_paths", ctx.examples, ctx.num_examples),
        "follow": use_rules(ctx.judge, ctx.llm),
    }


def detect(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Topic entities from the LLM, aligned per source; S_t."""
    q = state["question"]
    chosen = shots.to_state(shots.choose(kb, q, ctx.examples, ctx.num_examples))
    known = analysis.topic_choices(kb, q) if roles.constrained(ctx, model) else None
    if known is not None and len(known) == 1:  # the grammar admits one name only: no call needed
        reply, calls = roles.TopicEntities(entities=known), {}
    else:
        reply, calls = roles.extract_topics(
            model,
            q,
            ctx.structured_method,
            shots.lines(chosen, "topics", ctx.examples, ctx.num_examples),
            {"entities": known} if known else None,
        )
    mentions = list(dict.fromkeys(m.strip() for m in (reply.entities if reply else []) if m.strip()))
    found = analysis.detect_sources(kb, mentions, ctx.link_threshold, ctx.use_web)
    notes = ([] if reply else ["unparseable topic extraction"]) + found["notes"]
    notes += ["one KB name in the question: taken without a call"] if known is not None and len(known) == 1 else []
    exact = [kb.name(i) for i in mentions_in(kb, q)] if not found["topics"] else []
    if exact:
        found = analysis.detect_sources(kb, mentions + exact, ctx.link_threshold, ctx.use_web)
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


def _planned(state: dict, ctx: Any, kb: Any, model: Any, names: list[str]) -> tuple[Any, dict]:
    """The small model's analysis: :class:`~agents.hydrarag.roles.SkylinePlan` fields made into a
    :class:`~agents.hydrarag.roles.QuestionAnalysis` (skyline and sub-questions by template), or None.
    """
    q = state["question"]
    spans = list(dict.fromkeys([*question_spans(q), *names]))
    shown = state.get("shots", [])
    reply, calls = roles.plan(
        model,
        q,
        data_list(names),
        kb_choices(kb),
        ctx.structured_method,
        shots.lines(shown, "plan", ctx.examples, ctx.num_examples),
        spans,
        shots.hop_range(shown[: ctx.num_examples], ctx.examples, ctx.num_examples),
        shots.shown_paths(shown[: ctx.num_examples], ctx.examples, ctx.num_examples),
    )
    if reply is None or not reply.relations:
        return None, calls
    topic, rels = reply.topic.strip(), [r.strip() for r in reply.relations if r.strip()]  # a relation may repeat
    return roles.QuestionAnalysis(
        split_questions=shots.sub_questions(topic, rels, reply.answer_type),
        skyline=shots.chain(topic, rels, reply.answer_type),
    ), calls


def analyse(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Sub-questions, skyline and predicted depth (capped at D_max); topics in skyline order."""
    q, fallback = state["question"], None
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
    if reply is not None and reply.skyline.strip():
        skyline = reply.skyline.strip()
        splits = [s.strip() for s in reply.split_questions if s.strip()] or [q]
        depth = analysis.predicted_depth(skyline, names)
        if depth is None:
            depth, fallback = ctx.max_depth, "skyline is not a chain: depth D_max"
    else:
        skyline, splits, depth = q, [q], ctx.max_depth
        fallback = "unparseable analysis: the question is the skyline, depth D_max"
    depth = max(1, min(depth, ctx.max_depth))
    topics = analysis.reorder(state["topics"], skyline)
    dropped, found = [], {}
    if roles.constrained(ctx, model) and reply is not None:
        topics, dropped, found = analysis.planned_topic(kb, topics, skyline, ctx.link_threshold, ctx.use_web)
    step = traced(
        "analyze_question",
        f"depth {depth}: {skyline}",
        split_questions=splits,
        topic_order=[t["name"] for t in topics],
        fallback=fallback,
        **({"dropped_topics": [t["name"] for t in dropped]} if dropped else {}),
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


def select(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Agentic source selector, then the initial probe at min(D_predict, D_max)."""
    q, available, calls = state["question"], state["available"], {}
    if not ctx.source_selector or len(available) <= 1 or use_rules(ctx.judge, ctx.llm):
        chosen = available
        why = (
            "selector off: every available source"
            if not ctx.source_selector
            else "one source or none"
            if len(available) <= 1
            else "judge rules (small model): every available source"
        )
    else:
        analysed = data_block(
            [*(("sub_question", s) for s in state.get("split_questions") or [q]), ("skyline", state["skyline"])]
        )
        reply, calls = roles.choose_sources(model, q, ", ".join(available), analysed, ctx.structured_method)
        chosen = [s for s in dict.fromkeys(reply.sources) if s in available] if reply else []
        why = (
            reply.reasoning
            if chosen
            else ("unparseable selection" if reply is None else "no available source chosen") + ": every source"
        )
        chosen = chosen or available
    chain = analysis.chain(state["topics"], state["skyline"], q, state["doc_topics"])
    probe = _shown(state, ctx, analysis.probe("initial", 1, chosen, state["depth"], [chain], floor=ctx.length_floor))
    step = traced("select_sources", "S_a = " + (", ".join(chosen) or "(none)"), phase="initial", reasoning=why)
    return {"sources": chosen, "probe": probe, "phase": "initial", "round": 1, "trace": [step], "usage": calls}


def explore(state: dict, ctx: Any, kb: Any, model: Any, run: Any = None) -> dict:
    """Explore one source for the current probe; ``run`` (the graph's tool step) replaces
    :func:`explore_one` with the same arguments and result.
    """
    src, probe, q = state["source"], state["probe"], state["question"]
    model = roles.at_temperature(model, ctx.exploration_temperature)
    found = (run or explore_one)(src, q, probe, state["topic_keys"], state["has_subgraph"], ctx, kb, model)
    cands, notes = found["candidates"], found["notes"]
    out = {"subgraph": found["subgraph"]} if "subgraph" in found else {}
    step = traced(
        "explore_source",
        f"{src}: {len(cands)} paths",
        phase=probe["phase"],
        source=src,
        depth=probe["depth"],
        notes=notes,
        top=[c["text"] for c in cands[:3]],
    )
    return {"candidates": cands, **out, "trace": [step], "usage": found["usage"]}


def plan_refined(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Follow-up question q_new and skyline I_new; every source of S_t at D_max. I_new becomes the
    skyline the round's pruning, answer check and audit read (the refinement corrects the analysis).
    """
    q, sky, fallback = state["question"], state["skyline"], None
    model = roles.at_temperature(model, ctx.exploration_temperature)
    if use_rules(ctx.judge, ctx.llm):  # a small model's follow-up: the next nearest example's chain instead
        topic = state["topics"][0]["name"] if state["topics"] else ""
        alt = shots.other_chain(state.get("shots", []), topic, sky)
        reply, calls = (
            (
                roles.FollowUp(
                    missing="judge rules: the next nearest solved example's relations", question=q, skyline=alt
                )
                if alt
                else None
            ),
            {},
        )
    else:
        reply, calls = roles.follow_up(
            model,
            ctx.structured_method,
            **quoted(state),
            topics=_names(state),
            paths=path_blocks(state.get("kept", [])),
            feedback=feedback_block(state),
        )
    if reply is not None and reply.question.strip():
        q_new, i_new = reply.question.strip(), reply.skyline.strip() or sky
        new_ids = [i for i in analysis.link_names(kb, reply.topic_entities, ctx.link_threshold).values() if i]
    else:
        q_new, i_new, new_ids = q, sky, []
        fallback = (
            "judge rules: no other example chain" if use_rules(ctx.judge, ctx.llm) else "unparseable follow-up"
        ) + ": the question and skyline again"
    chains = [analysis.chain(state["topics"], i_new, q_new, [*state["doc_topics"], *new_ids])]
    known = {t["id"] for t in state["topics"]}
    fresh = [{"mention": kb.name(i), "id": i, "name": kb.name(i)} for i in dict.fromkeys(new_ids) if i not in known]
    sources = list(state["available"])
    if ctx.follow_up_topics and fresh:  # ours: also search from the entities the follow-up names
        chains.append(analysis.chain(analysis.reorder(fresh, i_new), i_new, q_new, state["doc_topics"]))
        sources += [] if "kg" in sources else ["kg"]
    probe = _shown(state, ctx, analysis.probe("refined", 2, sources, ctx.max_depth, chains))
    step = traced(
        "plan_refined_exploration",
        f"follow-up: {q_new}",
        phase="refined",
        skyline=i_new,
        missing=reply.missing if reply else "",
        new_topics=[kb.name(i) for i in new_ids],
        follow_up_chain=[t["name"] for t in fresh] if ctx.follow_up_topics else [],
        fallback=fallback,
    )
    return {"probe": probe, "phase": "refined", "round": 2, "skyline": i_new, "trace": [step], "usage": calls}


def plan_predicted(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Predicted answers with skylines, aligned to E_q; one chain (Topic(q) + e) each, at D_max."""
    q, sky, fallback = state["question"], state["skyline"], None
    model = roles.at_temperature(model, ctx.exploration_temperature)
    reply, calls = (
        (None, {})
        if use_rules(ctx.judge, ctx.llm)
        else roles.predict(
            model,
            ctx.structured_method,
            **quoted(state),
            topics=_names(state),
            paths=path_blocks(state.get("kept", [])),
            feedback=feedback_block(state),
        )
    )
    preds = [
        (p.answer.strip(), p.skyline.strip() or sky) for p in (reply.predictions if reply else []) if p.answer.strip()
    ][:PREDICTIONS]
    if not preds:
        preds = [(r["name"], sky) for r in state.get("ranked", []) if r["kind"] == "entity"][:PREDICTIONS]
        fallback = (
            "judge rules" if use_rules(ctx.judge, ctx.llm) else "no usable prediction"
        ) + ": top ranked entities used"
    linked = analysis.link_names(kb, [a for a, _ in preds], ctx.link_threshold)
    subgraph, chains, aligned = set(state.get("subgraph", [])), [], []
    for answer, indicator in preds:
        eid = linked.get(answer)
        extra = []
        if eid and (not subgraph or eid in subgraph) and eid not in {t["id"] for t in state["topics"]}:
            extra = [{"mention": answer, "id": eid, "name": kb.name(eid)}]
            aligned.append(kb.name(eid))
        topics = analysis.reorder(state["topics"] + extra, indicator)
        chains.append(analysis.chain(topics, indicator, q, state["doc_topics"]))
    probe = _shown(
        state, ctx, analysis.probe("predicted", 3, state["available"] if chains else [], ctx.max_depth, chains)
    )
    step = traced(
        "plan_predicted_exploration",
        "predicted: " + (", ".join(a for a, _ in preds) or "(none)"),
        phase="predicted",
        aligned=aligned,
        fallback=fallback,
    )
    return {"probe": probe, "phase": "predicted", "round": 3, "trace": [step], "usage": calls}
