"""HydraRAG evidence pruning and path refinement (paper §4.3), and the final rounds' union of paths.

Node bodies (contract in :mod:`agents.hydrarag.views`). Fallbacks, each recorded in the trace:

- path selection unparseable or naming no candidate → the top W_max paths by cross-score;
- path refinement unparseable → the selected paths as they are.

The evidence and the ranked list end with the documents the rounds read that no path in them was
built from, best screened first (:func:`agents.hydrarag.documents.unread`), at most ``top_k``.

No LLM call is made to select among at most W_max paths, or to refine an empty set. Under the
judge's rules (:mod:`agents.llm.judge`) the LLM path selection is not asked: the KG paths that
follow the skyline's relations hop by hop come first (:func:`agents.hydrarag.audit.skyline_first`),
then the rest by cross-score, and the top W_max are kept; and the paths are not refined (the rule
reads the paths, never a summary, and the final answer reads them as they are).
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hydrarag import audit, roles, shots
from hybridrag.agents.hydrarag.documents import as_evidence, as_ranked, unread
from hybridrag.agents.hydrarag.kg import candidate_members
from hybridrag.agents.hydrarag.pruning import (
    apply_choice,
    numbered,
    path_blocks,
    rank_candidates,
    to_evidence,
    to_ranked,
)
from hybridrag.agents.hydrarag.summary import summarise
from hybridrag.agents.hydrarag.views import quoted, traced
from hybridrag.agents.llm.judge import use_rules
from hybridrag.agents.llm.usage import add_usage


def _selected(
    state: dict, ctx: Any, model: Any, pool: list[dict]
) -> tuple[list[dict], list[dict], str | bool | None, dict]:
    """``(pool, selected, how, usage)``: ``how`` is "rules", whether the LLM choice was usable, or None (no choice)."""
    if use_rules(ctx.judge, ctx.llm):
        pool = audit.skyline_first(pool, state["skyline"])
        return pool, pool[: ctx.max_width], "rules", {}
    if len(pool) <= ctx.max_width:
        return pool, pool, None, {}
    reply, calls = roles.select_paths(
        model,
        ctx.structured_method,
        shots.lines(state.get("shots", []), "select_paths", ctx.examples, ctx.num_examples),
        **quoted(state),
        paths=path_blocks(pool),
        width=str(ctx.max_width),
    )
    selected, used = apply_choice(pool, reply.selected if reply else None, ctx.max_width)
    return pool, selected, used, calls


def prune(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Relevance → top W1; tri-factor verification and cross-score → top W2; LLM → W_max."""
    phase = state["phase"]
    cands = [c for c in state.get("candidates", []) if c["phase"] == phase]
    cands, summary_calls, summary_note = summarise(state, ctx, model, cands)
    inside = candidate_members(kb, state.get("subgraph", []), ctx.max_depth, cands)
    ranked = rank_candidates(kb, cands, state["skyline"], state.get("topic_keys", []), inside, ctx.pruning())
    pool, selected, used, calls = _selected(state, ctx, model, ranked)
    chosen = {c["id"] for c in selected}
    ordered = selected + [c for c in pool if c["id"] not in chosen]
    by_source = {s: sum(c["source"] == s for c in cands) for s in ("kg", "doc", "web")}
    decision = f"{len(cands)} paths → {len(pool)} by cross-score → {len(selected)} selected" + (
        " (judge rules: paths along the skyline's relations first, then by cross-score)" if used == "rules" else ""
    )
    step = traced(
        "prune_evidence",
        decision,
        phase=phase,
        by_source=by_source,
        selected=[c["text"] for c in selected],
        support=[c["support"] for c in selected],
        fallback="unusable path selection: top W_max by cross-score" if used is False else None,
        text_summary=summary_note,
    )
    topic_ids = {t["id"] for t in state.get("topics", [])}
    ranked = to_ranked(kb, ordered, topic_ids, ctx.top_k)
    rest = unread(state.get("documents", []), {c["doc_id"] for c in ordered if c.get("doc_id")})[: ctx.top_k]
    update = {
        "selected": selected,
        "evidence": [to_evidence(c) for c in ordered] + [as_evidence(d) for d in rest],
        "trace": [step],
        "ranked": (ranked + [as_ranked(d) for d in rest])[: ctx.top_k],
        "usage": add_usage(summary_calls, calls),
    }
    if phase != "final":
        update["kept"] = selected
    return update


def refine(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Summarise the selected paths (GoT-style refinement) before answering."""
    selected: list[dict] = state.get("selected", [])
    calls: dict = {}
    if not selected:
        summary, decision = "", "nothing to refine"
    elif not ctx.path_refinement:
        summary, decision = numbered(selected), "refinement off: the paths as they are"
    elif use_rules(ctx.judge, ctx.llm):
        summary, decision = numbered(selected), "judge rules (small model): the paths as they are"
    else:
        shown = shots.lines(state.get("shots", []), "refine", ctx.examples, ctx.num_examples)
        reply, calls = roles.refine(model, ctx.structured_method, shown, **quoted(state), paths=path_blocks(selected))
        ok = reply is not None and bool(reply.summary.strip())
        summary = reply.summary.strip() if reply is not None and ok else numbered(selected)
        decision = "summarised" if ok else "unparseable refinement: the paths as they are"
    step = traced("refine_paths", decision, phase=state["phase"], summary=summary)
    return {"summary": summary, "trace": [step], "usage": calls}


def collect_final(state: dict) -> dict:
    """Paths_F: every round's selected paths (deduplicated by text) as the final candidates."""
    final, seen = [], set()
    for c in state.get("kept", []):
        if c["text"] not in seen:
            seen.add(c["text"])
            final.append({**c, "phase": "final"})
    step = traced("collect_final_paths", f"{len(final)} paths from {state['round']} round(s)", phase="final")
    return {"phase": "final", "candidates": final, "trace": [step]}
