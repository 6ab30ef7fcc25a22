"""HydraRAG node bodies for evidence pruning and question answering (paper §4.3-4.4).

Same contract as :mod:`agents.hydrarag_steps`. Fallbacks (recorded in the trace):

- path selection unparseable or naming no candidate → the top W_max paths by cross-score;
- path refinement unparseable → the selected paths as they are;
- answer check unparseable, or {Yes} without an answer → {No} (explore further);
- final generation unparseable → the best ranked entity (empty when nothing was found).

No LLM call is made to select among at most W_max paths, or to refine or check an empty set.
"""

from __future__ import annotations

from typing import Any

from agents import hydrarag_roles as roles
from agents.hydrarag_pruning import apply_choice, numbered, rank_candidates, to_evidence, to_ranked
from agents.hydrarag_steps import traced


def _common(state: dict) -> dict:
    return {"question": state["question"], "skyline": state["skyline"],
            "splits": " | ".join(state.get("split_questions", [])) or state["question"]}


def prune(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Relevance → top W1; tri-factor verification and cross-score → top W2; LLM → W_max."""
    phase, calls, used = state["phase"], {}, None
    cands = [c for c in state.get("candidates", []) if c["phase"] == phase]
    pool = rank_candidates(kb, cands, state["skyline"], state.get("topic_keys", []),
                           set(state.get("subgraph", [])), ctx.pruning())
    selected = pool
    if len(pool) > ctx.max_width:
        reply, calls = roles.select_paths(model, ctx.structured_method, **_common(state),
                                          paths=numbered(pool), width=str(ctx.max_width))
        selected, used = apply_choice(pool, reply.selected if reply else None, ctx.max_width)
    chosen = {c["id"] for c in selected}
    ordered = selected + [c for c in pool if c["id"] not in chosen]
    by_source = {s: sum(c["source"] == s for c in cands) for s in ("kg", "doc", "web")}
    decision = f"{len(cands)} paths → {len(pool)} by cross-score → {len(selected)} selected"
    step = traced("prune_evidence", decision, phase=phase, by_source=by_source,
                  selected=[c["text"] for c in selected], support=[c["support"] for c in selected],
                  fallback="unusable path selection: top W_max by cross-score" if used is False else None)
    topic_ids = {t["id"] for t in state.get("topics", [])}
    update = {"selected": selected, "evidence": [to_evidence(c) for c in ordered], "trace": [step],
              "ranked": to_ranked(kb, ordered, topic_ids, ctx.top_k), "usage": calls}
    if phase != "final":
        update["kept"] = selected
    return update


def refine(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Summarise the selected paths (GoT-style refinement) before answering."""
    selected, calls = state.get("selected", []), {}
    if not selected:
        summary, decision = "", "nothing to refine"
    elif not ctx.path_refinement:
        summary, decision = numbered(selected), "refinement off: the paths as they are"
    else:
        reply, calls = roles.refine(model, ctx.structured_method, **_common(state), paths=numbered(selected))
        ok = reply is not None and bool(reply.summary.strip())
        summary = reply.summary.strip() if ok else numbered(selected)
        decision = "summarised" if ok else "unparseable refinement: the paths as they are"
    step = traced("refine_paths", decision, phase=state["phase"], summary=summary)
    return {"summary": summary, "trace": [step], "usage": calls}


def check(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """CoT evaluation of the refined paths: {Yes} and the answer, or {No}."""
    calls, answer = {}, ""
    if not state.get("selected"):
        reasoning = "no evidence: {No} without asking"
    else:
        reply, calls = roles.check(model, ctx.structured_method, **_common(state), evidence=state["summary"])
        if reply is None:
            reasoning = "unparseable answer check: {No}"
        else:
            reasoning = reply.reasoning
            answer = reply.answer.strip() if reply.sufficient == "yes" else ""
    verdict = "yes" if answer else "no"
    step = traced("check_answer", "{Yes} " + answer if answer else "{No}", phase=state["phase"],
                  round=state["round"], reasoning=reasoning)
    update = {"verdict": verdict, "trace": [step], "usage": calls}
    if answer:
        update["answer"] = answer
    return update


def collect_final(state: dict) -> dict:
    """Paths_F: every round's selected paths (deduplicated by text) as the final candidates."""
    final, seen = [], set()
    for c in state.get("kept", []):
        if c["text"] not in seen:
            seen.add(c["text"])
            final.append({**c, "phase": "final"})
    step = traced("collect_final_paths", f"{len(final)} paths from {state['round']} round(s)", phase="final")
    return {"phase": "final", "candidates": final, "trace": [step]}


def generate(state: dict, ctx: Any, kb: Any, model: Any) -> dict:
    """Answer from the final refined paths and the model's own knowledge."""
    evidence = state.get("summary") or numbered(state.get("selected", []))
    reply, calls = roles.generate(model, ctx.structured_method, **_common(state), evidence=evidence)
    if reply is not None and reply.answer.strip():
        answer, fallback = reply.answer.strip(), None
    else:
        best = [r["name"] for r in state.get("ranked", []) if r["kind"] == "entity"]
        answer, fallback = (best[0] if best else ""), "unparseable generation: the best ranked entity"
    step = traced("generate_answer", answer or "(no answer)", phase="final",
                  reasoning=reply.reasoning if reply else "", fallback=fallback)
    return {"answer": answer, "trace": [step], "usage": calls}
