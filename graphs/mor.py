"""MoR: Mixture of structural-and-textual Retrieval, as Planning → Reasoning → Organizing.

plan_question (the LLM's planning graph, validated against the schema) → one traverse_route per
route, in parallel → intersect_routes (merge, then the corrective check) → rerank_trajectories
(the trained network) → END, or generate_answer in QA mode. A followed plan with problems, or an
invalid plan, goes back to plan_question with the problems named, at most ``max_iterations``
plans; an invalid last plan goes to match_text (textual matching), and a plan repeated unchanged
ends the loop. The attempt with the fewest problems is reranked. What the nodes compute lives in
:mod:`agents.mor`; the settings are :class:`MoRContext`.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable
from typing import Annotated, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from hybridrag.agents.llm.models import load_chat_model
from hybridrag.agents.mor import roles
from hybridrag.agents.mor.context import MoRContext
from hybridrag.agents.mor.critique import critique
from hybridrag.agents.mor.organize import add_attempt, best_attempt, rerank_best
from hybridrag.agents.mor.output import render_trace
from hybridrag.agents.mor.plan import plan_outcome
from hybridrag.agents.mor.tools import matched_text, merged_candidates, traverse
from hybridrag.graphs.runtime import InputState, OutputState, context_of, resolve_kb, timed, traced

PlanRoute = Literal["valid plan: traverse each route", "invalid plan: re-plan", "invalid plan: textual matching"]
IntersectRoute = Literal["problems named: re-plan", "no problem or no plan left: rerank"]
RerankRoute = Literal["QA mode: answer", "retrieval mode: end"]
PLAN_ROUTES: dict[Hashable, str] = {
    "valid plan: traverse each route": "traverse_route",
    "invalid plan: re-plan": "plan_question",
    "invalid plan: textual matching": "match_text",
}  # labels in the drawing
INTERSECT_ROUTES: dict[Hashable, str] = {
    "problems named: re-plan": "plan_question",  # the corrective edge
    "no problem or no plan left: rerank": "rerank_trajectories",
}
RERANK_ROUTES: dict[Hashable, str] = {"QA mode: answer": "generate_answer", "retrieval mode: end": END}


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


def _context(runtime: Runtime[MoRContext]) -> MoRContext:
    return cast(MoRContext, context_of(runtime, MoRContext))


def plan_question(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Planner: the planning graph in one call; later turns re-plan with the earlier plan's problems named."""
    ctx = _context(runtime)
    model, t, kb = load_chat_model(ctx.llm, ctx.llm_base_url), state.get("iteration", 0) + 1, resolve_kb(ctx)
    messages, shots = roles.planner_turn(kb, ctx, model, state["question"], t, dict(state))
    shown = [s["question"] for s in shots]
    usage: dict = {}
    with timed("planning", usage):
        checked, raw, calls = roles.checked_plan(kb, ctx, model, state["question"], messages, shots)
    key, repeated, retry, decision = plan_outcome(checked, raw, t, ctx.plans(), state.get("plans_seen", []))
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
        q, t = state["question"], state["iteration"]
        tasks = [RouteTask(question=q, route=r, index=i, iteration=t) for i, r in enumerate(state["plan"]["routes"])]
        return [Send("traverse_route", task) for task in tasks]
    return "invalid plan: re-plan" if state.get("replan") else "invalid plan: textual matching"


def traverse_route(task: RouteTask, runtime: Runtime[MoRContext]) -> dict:
    """Mixed traversal of one route: textual seeds, then typed neighbours and text matches per layer."""
    ctx = _context(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    with timed("reasoning", usage):
        res = traverse(ctx, kb, task["question"], task["route"])
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


def intersect_routes(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Merge this plan's routes into the candidates, check the followed plan, and decide whether to re-plan."""
    ctx = _context(runtime)
    kb, t = resolve_kb(ctx), state["iteration"]
    usage: dict = {}
    results = sorted(
        (r for r in state.get("route_results", []) if r.get("iteration", t) == t), key=lambda r: r["index"]
    )
    with timed("reasoning", usage):
        merged = merged_candidates(ctx, kb, state["question"], state["plan"]["target"], results)
        problems = critique(kb, state["plan"], results, merged["mode"], ctx.retrieval != "textual")
    replan = bool(problems) and t < ctx.plans() and not state.get("repeated")  # a repeat ends the loop
    cands = merged["selected"] + merged["fillers"]
    step = traced(
        "intersect_routes",
        merged["mode"] + (": re-plan" if replan else ""),
        route_sizes=[len(r["candidates"]) for r in results],
        merged=merged["merged"],
        selected=len(merged["selected"]),
        fillers=len(merged["fillers"]),
        text_only=sum(c.get("tier", 0) > 0 for c in merged["selected"]),
        problems=problems,
    )
    return {
        "candidates": cands,
        "feedback": problems,
        "replan": replan,
        "attempts": add_attempt(state.get("attempts", []), t, "plan", problems, cands, merged["topics"]),
        "trace": [step],
        "usage": usage,
    }


def route_after_intersect(state: State, runtime: Runtime[MoRContext]) -> IntersectRoute:
    """Problems and plans left: re-plan with them named; otherwise rerank."""
    return "problems named: re-plan" if state.get("replan") else "no problem or no plan left: rerank"


def match_text(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Fallback for an invalid plan: textual matching of the question (§4.1)."""
    ctx = _context(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    with timed("reasoning", usage):
        cands = matched_text(ctx, kb, state["question"])
    step = traced("match_text", f"{len(cands)} candidates by textual matching", categories=ctx.targets() or None)
    problems = state["plan"]["problems"]
    return {
        "candidates": cands,
        "attempts": add_attempt(state.get("attempts", []), state["iteration"], "text", problems, cands),
        "trace": [step],
        "usage": usage,
    }


def rerank_trajectories(state: State, runtime: Runtime[MoRContext]) -> dict:
    """Structure-aware rerank of the best attempt's candidate trajectories; keep the top-K."""
    ctx = _context(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    with timed("organizing", usage):
        out, facts = rerank_best(ctx, kb, state["question"], state.get("attempts", []), state.get("candidates", []))
    top = facts["top"]
    structural = sum(any(s["via"] == "struct" for s in c["trajectory"]) for c in top)
    step = traced(
        "rerank_trajectories",
        f"top {len(top)} of {facts['pool']}",
        reranker=facts["reranker"],
        attempt=facts["attempt"],
        structural=structural,
        textual=len(top) - structural,
        top=[c["id"] for c in top[:5]],
        passages=facts.get("passages"),
    )
    return {**out, "trace": [step], "usage": usage}


def route_after_rerank(state: State, runtime: Runtime[MoRContext]) -> RerankRoute:
    """QA mode (``answer``, or a documents KB: :meth:`MoRContext.qa_mode`) answers from the top entities."""
    ctx = _context(runtime)
    return "QA mode: answer" if ctx.qa_mode(resolve_kb(ctx)) else "retrieval mode: end"


def generate_answer(state: State, runtime: Runtime[MoRContext]) -> dict:
    """QA mode (App. E): a short answer from the top entities within ``answer_chars`` (else the top entity's name)."""
    ctx = _context(runtime)
    model, kb = load_chat_model(ctx.llm, ctx.llm_base_url), resolve_kb(ctx)
    usage: dict = {}
    best = best_attempt(state.get("attempts", []))
    topics = [kb.name(t) for t in (best.get("topics", []) if best else [])]
    with timed("answering", usage):
        text, decision, calls = roles.qa_answer(
            model, state["question"], dict(state), topics, ctx.structured_method, ctx.answer_chars
        )
    step = traced("generate_answer", decision, answer=text)
    return {"answer": text, "trace": [step], "usage": {**calls, **usage}}


__all__ = ["MoRContext", "builder", "graph", "render_trace"]

builder = StateGraph(State, context_schema=MoRContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(plan_question)
builder.add_node(traverse_route)  # type: ignore[call-overload]  # a Send target takes its own input, not State
builder.add_node(intersect_routes)
builder.add_node(match_text)
builder.add_node(rerank_trajectories)
builder.add_node(generate_answer)
builder.add_edge(START, "plan_question")  # every question is planned first
builder.add_conditional_edges("plan_question", route_after_planning, PLAN_ROUTES)  # traverse, re-plan or text
builder.add_edge("traverse_route", "intersect_routes")  # all routes join at the intersection
builder.add_conditional_edges("intersect_routes", route_after_intersect, INTERSECT_ROUTES)  # re-plan or rerank
builder.add_edge("match_text", "rerank_trajectories")  # textual candidates are reranked too
builder.add_conditional_edges("rerank_trajectories", route_after_rerank, RERANK_ROUTES)  # answer or end
builder.add_edge("generate_answer", END)  # the answer ends the run

graph = builder.compile(name="mor")
