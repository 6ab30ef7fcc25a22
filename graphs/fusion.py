"""Training-free hybrid retrieval: dense seeds → 1-hop graph expansion → Dice fusion.

Nodes: retrieve_vectors → expand_seeds → fuse_results. The baselines of the paper
(vector-only, graph-only, BM25) are modes of the same graph.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from agents.fusion_scoring import Candidate, fuse, hits_to_candidates, score_one_hop, seeds_of
from graphs.common import Context, InputState, OutputState, context_of, merge_usage, resolve_kb, timed, traced
from tools.retrieval import mentions_in

Mode = Literal["hybrid", "vector", "graph", "bm25"]


@dataclass(kw_only=True)
class FusionContext(Context):
    """Settings of the fusion method (defaults from the paper)."""

    mode: str = field(default="hybrid", metadata={
        "description": "hybrid (the method), or a baseline: vector, graph, bm25."})
    k1: int = field(default=3, metadata={"description": (
        "K1: top dense hits kept as candidates and used as seeds (the paper gives no value; 3 was best "
        "of 2/3/5/10 on 300 MetaQA-hybrid-50 dev questions, see docs/benchmarks.md).")})
    epsilon: float = field(default=1e-6, metadata={"description": "ε bias in favour of graph results on ties."})
    tokenizer: str = field(default="bigram", metadata={
        "description": "Dice token sets: 'bigram' (character bigrams, as APOC) or 'word'."})


class State(TypedDict, total=False):
    """Full state of one fusion run."""

    question: str
    vector: list[Candidate]
    graph: list[Candidate]
    seeds: list[str]
    answer: str
    ranked: list[dict]
    evidence: list[dict]
    trace: Annotated[list[dict], operator.add]
    usage: Annotated[dict, merge_usage]


def retrieve_vectors(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Vector branch V_k (or the BM25 / graph-only seeding of the baselines)."""
    ctx = context_of(runtime, FusionContext)
    kb, q, usage = resolve_kb(ctx), state["question"], {}
    with timed("retrieve_vectors", usage):
        match ctx.mode:
            case "hybrid":
                vec = hits_to_candidates(kb, kb.dense_search(q, ctx.k1), "vector")
                seeds = seeds_of(vec)
            case "vector":
                vec, seeds = hits_to_candidates(kb, kb.dense_search(q, ctx.top_k), "vector"), []
            case "bm25":
                vec, seeds = hits_to_candidates(kb, kb.lexical_search(q, ctx.top_k), "bm25"), []
            case "graph":
                vec, seeds = [], mentions_in(kb, q)
            case other:
                raise ValueError(f"unknown fusion mode {other!r}; use hybrid, vector, graph or bm25")
    step = traced("retrieve_vectors", f"{len(vec)} text hits, {len(seeds)} seed entities",
                  mode=ctx.mode, seeds=[kb.name(s) for s in seeds][:10])
    return {"vector": vec, "seeds": seeds, "trace": [step], "usage": usage}


def expand_seeds(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Graph branch G_k: 1-hop triples of the seeds ranked by s_graph (mean Dice)."""
    ctx = context_of(runtime, FusionContext)
    kb, usage = resolve_kb(ctx), {}
    with timed("expand_seeds", usage):
        scored = score_one_hop(kb, state["question"], state.get("seeds", []), ctx.top_k, ctx.tokenizer)
        names = kb.names({e for t, _, _ in scored for e in (t.head, t.tail)})
        graph = [
            Candidate(n, "entity", names[n], s, "graph", t.verbalise(names), [t.verbalise(names)], n)
            for t, s, n in scored
        ]
    best = f"best {graph[0].path[0]} ({graph[0].score:.3f})" if graph else "no triples"
    return {"graph": graph, "trace": [traced("expand_seeds", best, triples=len(graph))], "usage": usage}


def fuse_results(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Union of both branches with the ε graph bias, dedupe by max score, top-K."""
    ctx = context_of(runtime, FusionContext)
    usage: dict = {}
    with timed("fuse_results", usage):
        top = fuse(state.get("vector", []), state.get("graph", []), ctx.epsilon, ctx.top_k)
    from_graph = sum(c.source == "graph" for c in top)
    step = traced("fuse_results", f"kept {len(top)}: {from_graph} from graph, {len(top) - from_graph} from text")
    return {
        "answer": _answer(state["question"], top),
        "ranked": [c.as_ranked() for c in top],
        "evidence": [c.as_evidence() for c in top],
        "trace": [step],
        "usage": usage,
    }


def _answer(question: str, top: list[Candidate]) -> str:
    """The best entity the question does not already name (retrieval, not generation).

    Graph facts come first, then entity hits, then the entities passages are about.
    """
    q = question.lower()
    order = sorted(top, key=lambda c: (c.source != "graph", c.kind != "entity"))
    names = [c.name if c.kind == "entity" else c.name.removeprefix("passage about ") for c in order]
    return next((n for n in names if n and n.lower() not in q), names[0] if names else "")


def route_after_vectors(state: State, runtime: Runtime[FusionContext]) -> Literal["expand_seeds", "fuse_results"]:
    """Expand into the graph only when there are seeds (hybrid and graph-only modes)."""
    return "expand_seeds" if state.get("seeds") else "fuse_results"


builder = StateGraph(State, context_schema=FusionContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(retrieve_vectors)
builder.add_node(expand_seeds)
builder.add_node(fuse_results)
builder.add_edge(START, "retrieve_vectors")  # every run starts with the (dense or lexical) text branch
builder.add_conditional_edges("retrieve_vectors", route_after_vectors)  # seeds → graph branch
builder.add_edge("expand_seeds", "fuse_results")  # graph results join the text results
builder.add_edge("fuse_results", END)
graph = builder.compile(name="fusion")
