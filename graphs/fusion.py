"""Training-free hybrid retrieval: dense seeds → seeded graph expansion (Dice) → fusion.

retrieve_vectors (the vector branch V_k, the seed entities and, under 'evidence' scoring, the
dense and BM25 rankings fused by reciprocal rank) → expand_seeds (the graph branch G_k: entities
within ``hops`` of the seeds, and under 'evidence' scoring the passages naming a seed) →
fuse_results (both branches ranked by the context's ``scoring``, the fused text ranking after the
fact-backed items, the answer read off the best fact or the top passages); without seeds the
graph branch is skipped. The baselines of the paper (vector-only, graph-only, BM25) are modes of
the same graph. The nodes are wiring: the work is in :mod:`agents.fusion.branches`, settings in
:mod:`agents.fusion.context`, the retrieval steps in :mod:`agents.fusion.tools`.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import partial
from typing import Any, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hybridrag.agents.fusion import branches
from hybridrag.agents.fusion.context import FusionContext, check
from hybridrag.agents.fusion.tools import STEPS
from hybridrag.graphs.runtime import InputState, OutputState, context_of, resolve_kb, timed, traced
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.steps import run_step

__all__ = ["ROUTES", "STEPS", "FusionContext", "State", "builder", "graph"]


class State(InputState, OutputState, total=False):
    """Full state of one fusion run; candidates are plain dicts, so a checkpointed thread stores only JSON."""

    vector: list[dict]
    fill: list[dict]
    graph: list[dict]
    text: list[dict]
    seeds: list[str]
    named: list[str]


def _settings(runtime: Runtime[FusionContext]) -> FusionContext:
    """The run's checked settings (every node checks: a resumed or forked thread may bring a new context)."""
    return check(cast(FusionContext, context_of(runtime, FusionContext)))


def _step(ctx: FusionContext, kb: KnowledgeBase, name: str, **args: Any) -> Any:
    """Run one retrieval step as a tool call (the user's tool when the context names one)."""
    return run_step("fusion", STEPS, name, args, kb, ctx.tools)


def retrieve_vectors(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Vector branch V_k (or the BM25 / graph-only seeding of the baselines)."""
    ctx = _settings(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    with timed("retrieve_vectors", usage):
        vec, fill, seeds, named = branches.vector_branch(kb, ctx, state["question"], partial(_step, ctx, kb))
    step = traced(
        "retrieve_vectors",
        f"{len(vec)} text hits, {len(seeds)} seed entities",
        mode=ctx.mode,
        fused_text=len(fill),
        seeds=[kb.name(s) for s in seeds][:10],
        named=[kb.name(n) for n in named][:10],
    )
    return {
        "vector": branches.rows(vec),
        "fill": branches.rows(fill),
        "seeds": seeds,
        "named": named,
        "trace": [step],
        "usage": usage,
    }


def expand_seeds(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Graph branch G_k: entities within ``hops`` of the seeds, and the passages naming a seed."""
    ctx = _settings(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    with timed("expand_seeds", usage):
        seeds = state.get("seeds", [])
        graph, text = branches.graph_branch(kb, ctx, state["question"], seeds, partial(_step, ctx, kb))
    best = f"best {graph[0].text} ({graph[0].score:.3f})" if graph else "no triples"
    step = traced("expand_seeds", best, triples=len(graph), hops=ctx.hops, passages=len(text))
    return {"graph": branches.rows(graph), "text": branches.rows(text), "trace": [step], "usage": usage}


def fuse_results(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Merge both branches by the chosen scoring, keep the top K, answer from the best fact or the top passages."""
    ctx = _settings(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    found = (
        branches.candidates(state.get("vector", [])),
        branches.candidates(state.get("graph", [])),
        branches.candidates(state.get("text", [])),
        branches.candidates(state.get("fill", [])),
    )
    with timed("fuse_results", usage):
        scoring, top, answer = branches.merge_branches(
            kb, ctx, state["question"], found, state.get("seeds", []), set(state.get("named", []))
        )
    from_graph = sum(c.source == "graph" for c in top)
    step = traced(
        "fuse_results",
        f"kept {len(top)}: {from_graph} from graph, {len(top) - from_graph} from text",
        scoring=scoring,
        answer=answer,
    )
    return {
        "answer": answer,
        "ranked": [c.as_ranked() for c in top],
        "evidence": [c.as_evidence() for c in top],
        "trace": [step],
        "usage": usage,
    }


# The router reads the state only: LangGraph runs a conditional edge without a runtime context when a
# caller writes a state as the node before it (update_state, forking a thread in Studio).
Route = Literal["has seeds", "no seeds"]
ROUTES: dict[Hashable, str] = {"has seeds": "expand_seeds", "no seeds": "fuse_results"}  # labels in the drawing


def route_after_vectors(state: State) -> Route:
    """Expand into the graph only when there are seeds (hybrid and graph-only modes)."""
    return "has seeds" if state.get("seeds") else "no seeds"


builder = StateGraph(State, context_schema=FusionContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(retrieve_vectors)
builder.add_node(expand_seeds)
builder.add_node(fuse_results)
builder.add_edge(START, "retrieve_vectors")  # every run starts with the (dense or lexical) text branch
builder.add_conditional_edges("retrieve_vectors", route_after_vectors, ROUTES)  # seeds → graph branch, else fuse
builder.add_edge("expand_seeds", "fuse_results")  # graph results join the text results
builder.add_edge("fuse_results", END)  # the ranked items and the answer are the output
graph = builder.compile(name="fusion")
