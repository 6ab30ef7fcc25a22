"""MoR: Mixture of structural-and-textual Retrieval, as Planning → Reasoning → Organizing.

plan_question (LLM planning graph, validated against the schema) → one traverse_route per route
in parallel (``Send``) → intersect_routes (merge, then the corrective check of
:mod:`agents.mor.critique`) → rerank_trajectories (the trained network of :mod:`agents.mor.neural`)
→ END (or generate_answer in QA mode). Corrective edge (ours): a plan whose traversal shows a
problem (a restriction naming no entity, a hop reaching nothing, an unnamed ambiguous relation,
a schema problem) goes back to plan_question with the problems named, at most ``max_iterations``
plans (3); the attempt with the fewest problems is reranked. An invalid or unparseable plan is
re-planned the same way, then goes to match_text (the paper's fallback, §4.1). A plan repeated
unchanged ends the loop. ``max_iterations=1`` is the paper's single pass: one LLM call per
question (the planner), plus its retry. Candidates are graph-first by default
(:mod:`agents.mor.graph_first`); ``ranking="paper"``.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from hybridrag.agents.llm.constrained import is_llama_cpp
from hybridrag.agents.llm.judge import few_shot_count
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.agents.mor import rerank as rr
from hybridrag.agents.mor import roles as roles
from hybridrag.agents.mor import traversal as trav
from hybridrag.agents.mor.context import MoRContext
from hybridrag.agents.mor.critique import critique
from hybridrag.agents.mor.examples import planner_shots
from hybridrag.agents.mor.graph_first import select_graph_first
from hybridrag.agents.mor.matching import question_vector
from hybridrag.agents.mor.organize import best_attempt, neural_scores
from hybridrag.agents.mor.output import is_own, outputs, references_text, render_trace
from hybridrag.agents.mor.plan import validate_plan
from hybridrag.agents.mor.tools import STEPS, fillers, textual
from hybridrag.graphs.runtime import InputState, OutputState, context_of, resolve_kb, timed, traced
from hybridrag.tools.steps import run_step

PlanRoute = Literal["valid plan: traverse each route", "invalid plan: re-plan", "invalid plan: textual matching"]
IntersectRoute = Literal["problems named: re-plan", "no problem or no plan left: rerank"]
RerankRoute = Literal["QA mode: answer", "retrieval mode: end"]
PLAN_ROUTES: dict[PlanRoute, str] = {
    "valid plan: traverse each route": "traverse_route",
    "invalid plan: re-plan": "plan_question",
    "invalid plan: textual matching": "match_text",
}  # labels in the drawing
INTERSECT_ROUTES: dict[IntersectRoute, str] = {
    "problems named: re-plan": "plan_question",  # the corrective edge
    "no problem or no plan left: rerank": "rerank_trajectories",
}
RERANK_ROUTES: dict[RerankRoute, str] = {"QA mode: answer": "generate_answer", "retrieval mode: end": END}


class State(InputState, OutputState, total=False):
    """Full MoR state: plan, per-route results, candidates, and the common output."""

    iteration: int
    planner_messages: list
    raw_plan: dict | None
    plan: dict
    route_results: Annotated[list[dict], operator.add]
    candidates: list[dict]
    feedback: list[str]
    plans_seen: list[str]
    attempts: list[dict]
    replan: bool
    repeated: bool


class RouteTask(TypedDict):
    """What one parallel traversal receives."""

    question: str
    route: dict
    index: int
    iteration: int


def plan_question(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Planner: one-shot planning graph, validated against the KB schema; later turns re-plan with
    the problems of the previous plan named.
    """
    ctx = context_of(runtime, MoRContext)
    model, t, usage = load_chat_model(ctx.llm, ctx.llm_base_url), state.get("iteration", 0) + 1, {}
    kb = resolve_kb(ctx)
    schema, shown = kb.graph.schema(), []
    if t == 1:
        n = few_shot_count(ctx.num_few_shot, ctx.small_model_few_shot, ctx.llm)
        shots = planner_shots(kb, state["question"], ctx.examples, n, ctx.planner, ctx.few_shot)
        shown = [s["question"] for s in shots]
        show = roles.schema_shown(ctx.planner_schema, model, is_llama_cpp(model), len(shots))
        messages = roles.planner_messages(state["question"], schema, shots, ctx.planner, show)
    else:
        messages = roles.replan_messages(
            state["planner_messages"], state.get("raw_plan") or {}, state.get("feedback", []), state["question"]
        )
    with timed("planning", usage):
        choices = roles.plan_choices(schema, state["question"], ctx.planner) if is_llama_cpp(model) else None
        reply, raw, calls = roles.plan(model, messages, ctx.planner, ctx.structured_method, choices)
        checked = (
            validate_plan(reply, schema, ctx.targets(), ctx.max_hops)
            if reply is not None
            else {"valid": False, "target": None, "routes": [], "shown": [], "problems": ["unparseable planner output"]}
        )
    key = json.dumps(raw, sort_keys=True)
    repeated = raw is not None and key in state.get("plans_seen", [])
    retry = not checked["valid"] and t < ctx.max_iterations and not repeated
    decision = (
        f"mixed traversal over {len(checked['routes'])} route(s)"
        if checked["valid"]
        else "invalid plan: re-plan"
        if retry
        else "invalid plan: textual matching"
    )
    step = traced(
        "plan_question",
        decision,
        iteration=t,
        routes=checked["shown"],
        target=checked["target"],
        problems=checked["problems"],
        raw=raw,
        repeated=repeated,
        **({"examples": shown} if t == 1 else {}),
    )
    return {
        "iteration": t,
        "planner_messages": messages,
        "raw_plan": raw,
        "plan": checked,
        "feedback": checked["problems"],
        "replan": retry,
        "repeated": repeated,
        "plans_seen": [*state.get("plans_seen", []), key],
        "trace": [step],
        "usage": {**calls, **usage},
    }


def route_after_planning(state: State, runtime: Runtime[MoRContext]) -> list[Send] | PlanRoute:
    """Valid plan: one traversal per route, in parallel; invalid: re-plan or textual matching."""
    if state["plan"]["valid"]:
        return [
            Send(
                "traverse_route",
                {"question": state["question"], "route": r, "index": i, "iteration": state["iteration"]},
            )
            for i, r in enumerate(state["plan"]["routes"])
        ]
    return "invalid plan: re-plan" if state.get("replan") else "invalid plan: textual matching"


def traverse_route(task: RouteTask, runtime: Runtime[MoRContext]) -> dict:
    """Mixed traversal of one route: textual seeds, typed neighbours + per-layer text matches."""
    ctx = context_of(runtime, MoRContext)
    kb, usage = resolve_kb(ctx), {}
    with timed("reasoning", usage):
        res = run_step(
            "mor",
            STEPS,
            "structural_traversal",
            {
                "question": task["question"],
                "route": task["route"],
                "seed_k": ctx.seed_k,
                "layer_k": ctx.layer_k,
                "matcher": ctx.text_matcher,
                "max_frontier": ctx.max_frontier,
                "layer_match": "never" if ctx.retrieval == "structural" else ctx.layer_match,
                "structure": ctx.retrieval != "textual",
                "text_edges": ctx.text_edges,
                "mention_rows": ctx.num_candidates,
                "graph_first": ctx.ranking == "graph_first",
            },
            kb,
            ctx.tools,
        )
    step = traced(
        "traverse_route",
        f"route {task['index'] + 1}: {len(res['candidates'])} candidates",
        route=task["route"]["nodes"],
        layers=res["layers"],
        topics=res["topics"],
    )
    return {
        "route_results": [{**res, "index": task["index"], "iteration": task["iteration"]}],
        "trace": [step],
        "usage": usage,
    }


def _attempt(
    state: State, kind: str, problems: list[str], candidates: list[dict], topics: list[str] | None = None
) -> list[dict]:
    """The attempts so far plus this one (the reranker takes the best)."""
    return [
        *state.get("attempts", []),
        {
            "iteration": state["iteration"],
            "kind": kind,
            "problems": problems,
            "candidates": candidates,
            "topics": topics or [],
        },
    ]


def intersect_routes(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Intersect the routes' candidates (union if empty); keep the best by semantic score
    (graph-first: structurally reached ones first, no route's topic entity); then check the
    followed plan (:func:`agents.mor.critique.critique`) and decide whether to re-plan.
    """
    ctx = context_of(runtime, MoRContext)
    kb, usage, q, t = resolve_kb(ctx), {}, state["question"], state["iteration"]
    results = sorted(
        (r for r in state.get("route_results", []) if r.get("iteration", t) == t), key=lambda r: r["index"]
    )
    with timed("reasoning", usage):
        pool, mode = trav.merge_routes(results)
        topics = {t for r in results for t in r.get("topics", [])}
        pool = {e: t for e, t in pool.items() if e not in topics}
        qvec, missing = question_vector(kb, q), ctx.top_k - len(pool) if ctx.fill_with_text else 0
        select = select_graph_first if ctx.ranking == "graph_first" else trav.select_candidates
        cands = select(kb, qvec, pool, ctx.num_candidates)
        fill = fillers(ctx, kb, q, qvec, set(pool) | topics, [state["plan"]["target"]], missing)
        problems = critique(kb, state["plan"], results, mode, ctx.retrieval != "textual")
    replan = bool(problems) and t < ctx.max_iterations and not state.get("repeated")  # a repeat ends the loop
    step = traced(
        "intersect_routes",
        mode + (": re-plan" if replan else ""),
        route_sizes=[len(r["candidates"]) for r in results],
        merged=len(pool),
        selected=len(cands),
        fillers=len(fill),
        text_only=sum(c.get("tier", 0) > 0 for c in cands),
        problems=problems,
    )
    return {
        "candidates": cands + fill,
        "feedback": problems,
        "replan": replan,
        "attempts": _attempt(state, "plan", problems, cands + fill, sorted(topics)),
        "trace": [step],
        "usage": usage,
    }


def route_after_intersect(state: State, runtime: Runtime[MoRContext]) -> IntersectRoute:
    """Problems and plans left: re-plan with them named; otherwise rerank."""
    return "problems named: re-plan" if state.get("replan") else "no problem or no plan left: rerank"


def match_text(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Fallback for an invalid plan: textual matching of the question (§4.1)."""
    ctx = context_of(runtime, MoRContext)
    kb, usage, q = resolve_kb(ctx), {}, state["question"]
    with timed("reasoning", usage):
        categories = ctx.targets() or None
        pool = textual(ctx, kb, q, categories, ctx.num_candidates)
        cands = trav.select_candidates(kb, question_vector(kb, q), pool, ctx.num_candidates)
    step = traced("match_text", f"{len(cands)} candidates by textual matching", categories=categories)
    return {
        "candidates": cands,
        "attempts": _attempt(state, "text", state["plan"]["problems"], cands),
        "trace": [step],
        "usage": usage,
    }


def rerank_trajectories(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Structure-aware rerank of the best attempt's candidate trajectories; keep the top-K."""
    ctx = context_of(runtime, MoRContext)
    kb, usage = resolve_kb(ctx), {}
    best = best_attempt(state.get("attempts", []))
    cands = best["candidates"] if best else state.get("candidates", [])
    with timed("organizing", usage):
        scores, used = neural_scores(ctx.reranker, ctx.reranker_weights, ctx.fingerprint_length, kb, cands)
        linear = used.startswith("structure")
        weights = (
            rr.load_weights("" if ctx.reranker == "neural" else ctx.reranker_weights, ctx.fingerprint_length)
            if linear
            else {"semantic": 1.0}
        )
        groups = rr.parse_groups(ctx.reranker_features) if linear or scores is not None else ("tf",)
        top = rr.rerank(cands, weights, ctx.fingerprint_length, groups, scores)[: ctx.top_k]
        out = outputs(kb, state["question"], top, best.get("topics", []) if best else [])
    structural = sum(any(s["via"] == "struct" for s in c["trajectory"]) for c in top)
    step = traced(
        "rerank_trajectories",
        f"top {len(top)} of {len(cands)}",
        reranker=used,
        attempt=best["iteration"] if best else None,
        structural=structural,
        textual=len(top) - structural,
        top=[c["id"] for c in top[:5]],
    )
    return {**out, "trace": [step], "usage": usage}


def route_after_rerank(state: State, runtime: Runtime[MoRContext]) -> RerankRoute:
    """QA mode answers from the top entities; retrieval mode ends."""
    return "QA mode: answer" if context_of(runtime, MoRContext).answer else "retrieval mode: end"


def generate_answer(state: State, runtime: Runtime[MoRContext]) -> dict:
    """QA mode (App. E): a short answer from the top five entities (top name if unparseable)."""
    ctx = context_of(runtime, MoRContext)
    model, usage = load_chat_model(ctx.llm, ctx.llm_base_url), {}
    with timed("answering", usage):
        refs = references_text(state.get("ranked", []), state.get("evidence", []), 5)
        reply, calls = roles.answer(model, state["question"], refs, ctx.structured_method)
    best = best_attempt(state.get("attempts", []))
    topics = [resolve_kb(ctx).name(t) for t in (best.get("topics", []) if best else [])]
    own = reply is not None and is_own(reply.answer, state["question"], topics)  # never the question's entity
    text = reply.answer if reply and not own else state.get("answer", "")
    decision = "the reply names the question's own entity: top entity" if own else roles.answer_decision(reply, calls)
    step = traced("generate_answer", decision, answer=text)
    return {"answer": text, "trace": [step], "usage": {**calls, **usage}}


__all__ = ["MoRContext", "best_attempt", "builder", "graph", "render_trace"]

builder = StateGraph(State, context_schema=MoRContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(plan_question)
builder.add_node(traverse_route)
builder.add_node(intersect_routes)
builder.add_node(match_text)
builder.add_node(rerank_trajectories)
builder.add_node(generate_answer)
builder.add_edge(START, "plan_question")  # every question is planned first
builder.add_conditional_edges(  # valid plan → parallel traversals; invalid → re-plan or text matching
    "plan_question", route_after_planning, PLAN_ROUTES
)
builder.add_edge("traverse_route", "intersect_routes")  # all routes join at the intersection
builder.add_conditional_edges(  # corrective edge: problems → re-plan with them named; else rerank
    "intersect_routes", route_after_intersect, INTERSECT_ROUTES
)
builder.add_edge("match_text", "rerank_trajectories")  # textual candidates are reranked too
builder.add_conditional_edges("rerank_trajectories", route_after_rerank, RERANK_ROUTES)  # QA mode
builder.add_edge("generate_answer", END)

graph = builder.compile(name="mor")
