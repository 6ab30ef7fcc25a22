"""HydraRAG exploration rounds (paper §4.2): one source explored, and the refined and predicted round plans.

Node bodies (contract in :mod:`agents.hydrarag.views`). Fallbacks, each recorded in the trace:

- follow-up question unparseable → the question and skyline again (a deeper, all-source round);
- predictions unparseable or empty → the top ranked entities so far as predictions;
- web search unavailable or failing → no web paths, the reason noted (:mod:`agents.hydrarag.exploration`).

Under the judge's rules (``judge=auto`` with a small model, or ``rules``) the refined round takes
the next nearest shown example's relation chain as its skyline (no such example: the question and
skyline again), and the predicted round the top ranked entities as its predictions: no LLM call
for either.
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hydrarag import analysis, roles, shots
from hybridrag.agents.hydrarag.feedback import feedback_block
from hybridrag.agents.hydrarag.kg import subgraph_members
from hybridrag.agents.hydrarag.pruning import path_blocks
from hybridrag.agents.hydrarag.tools import explore_step
from hybridrag.agents.hydrarag.views import quoted, shown, topic_names, traced
from hybridrag.agents.llm.judge import use_rules

PREDICTIONS = 3  # the paper asks for three predicted answers


def explore(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Explore one source for the current probe, as its tool step (a caller's tool when the context names one)."""
    src, probe, q = state["source"], state["probe"], state["question"]
    model = roles.at_temperature(model, ctx.exploration_temperature)
    found = explore_step(src, q, probe, state["topic_keys"], state["has_subgraph"], ctx, kb, model)
    cands, notes = found["candidates"], found["notes"]
    out = {k: found[k] for k in ("subgraph", "documents") if k in found}
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


def _follow_up(state: dict, ctx: Any, model: Any) -> tuple[Any, dict]:
    """The follow-up reply: the LLM's, or under the judge's rules the next nearest example's chain (None: none)."""
    if not use_rules(ctx.judge, ctx.llm):
        return roles.follow_up(
            model,
            ctx.structured_method,
            shots.lines(state.get("shots", []), "follow_up", ctx.examples, ctx.num_examples),
            **quoted(state),
            topics=topic_names(state),
            paths=path_blocks(state.get("kept", [])),
            feedback=feedback_block(state),
        )
    topic = state["topics"][0]["name"] if state["topics"] else ""
    alt = shots.other_chain(state.get("shots", []), topic, state["skyline"])
    if not alt:
        return None, {}
    missing = "judge rules: the next nearest solved example's relations"
    return roles.FollowUp(missing=missing, question=state["question"], skyline=alt), {}


def plan_refined(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Follow-up question q_new and skyline I_new; every source of S_t at D_max.

    I_new becomes the skyline the round's pruning, answer check and audit read (the refinement
    corrects the analysis).
    """
    q, sky, fallback = state["question"], state["skyline"], None
    reply, calls = _follow_up(state, ctx, roles.at_temperature(model, ctx.exploration_temperature))
    if reply is not None and reply.question.strip():
        q_new, i_new = reply.question.strip(), reply.skyline.strip() or sky
        linked = analysis.link_names(kb, reply.topic_entities, ctx.link_threshold)
        new_ids = [i for i in linked.values() if i]
        names = [*state.get("unlinked", []), *(n for n, i in linked.items() if not i)]
    else:
        q_new, i_new, new_ids, names = q, sky, [], list(state.get("unlinked", []))
        fallback = (
            "judge rules: no other example chain" if use_rules(ctx.judge, ctx.llm) else "unparseable follow-up"
        ) + ": the question and skyline again"
    chains = [analysis.chain(state["topics"], i_new, q_new, [*state["doc_topics"], *new_ids], names)]
    known = {t["id"] for t in state["topics"]}
    fresh = [{"mention": kb.name(i), "id": i, "name": kb.name(i)} for i in dict.fromkeys(new_ids) if i not in known]
    sources = list(state["available"])
    if ctx.follow_up_topics and fresh:  # ours: also search from the entities the follow-up names
        chains.append(analysis.chain(analysis.reorder(fresh, i_new), i_new, q_new, state["doc_topics"]))
        sources += [] if "kg" in sources else ["kg"]
    probe = shown(state, ctx, analysis.probe("refined", 2, sources, ctx.max_depth, chains))
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


def _predictions(state: dict, ctx: Any, model: Any) -> tuple[list[tuple[str, str]], str | None, dict]:
    """``(answer, skyline)`` predictions (at most three), the fallback taken, and usage."""
    sky = state["skyline"]
    reply, calls = (
        (None, {})
        if use_rules(ctx.judge, ctx.llm)
        else roles.predict(
            model,
            ctx.structured_method,
            shots.lines(state.get("shots", []), "predict", ctx.examples, ctx.num_examples),
            **quoted(state),
            topics=topic_names(state),
            paths=path_blocks(state.get("kept", [])),
            feedback=feedback_block(state),
        )
    )
    preds = [
        (p.answer.strip(), p.skyline.strip() or sky) for p in (reply.predictions if reply else []) if p.answer.strip()
    ][:PREDICTIONS]
    if preds:
        return preds, None, calls
    preds = [(r["name"], sky) for r in state.get("ranked", []) if r["kind"] == "entity"][:PREDICTIONS]
    why = "judge rules" if use_rules(ctx.judge, ctx.llm) else "no usable prediction"
    return preds, why + ": top ranked entities used", calls


def plan_predicted(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Predicted answers with skylines, aligned to E_q; one chain (Topic(q) + e) each, at D_max."""
    preds, fallback, calls = _predictions(state, ctx, roles.at_temperature(model, ctx.exploration_temperature))
    linked = analysis.link_names(kb, [a for a, _ in preds], ctx.link_threshold)
    seeds, chains, aligned = state.get("subgraph", []), [], []
    inside = subgraph_members(kb, seeds, ctx.max_depth, {e for e in linked.values() if e})
    for answer, indicator in preds:
        eid = linked.get(answer)
        extra = []
        if eid and (not seeds or eid in inside) and eid not in {t["id"] for t in state["topics"]}:
            extra = [{"mention": answer, "id": eid, "name": kb.name(eid)}]
            aligned.append(kb.name(eid))
        topics = analysis.reorder(state["topics"] + extra, indicator)
        chains.append(
            analysis.chain(topics, indicator, state["question"], state["doc_topics"], state.get("unlinked", []))
        )
    probe = shown(
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
