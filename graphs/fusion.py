"""Training-free hybrid retrieval: dense seeds → seeded graph expansion (Dice) → fusion.

Nodes: retrieve_vectors → expand_seeds → fuse_results. The baselines of the paper
(vector-only, graph-only, BM25) are modes of the same graph; ``scoring`` chooses how the
hybrid mode ranks (the paper's Eq. 3–4 verbatim, or the alternatives measured in
docs/benchmarks_fusion.md; see :mod:`agents.fusion.scoring`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hybridrag.agents.context import Context
from hybridrag.agents.fusion.paths import MAX_HOPS
from hybridrag.agents.fusion.scoring import (
    Candidate,
    Scoring,
    answer_of,
    fuse,
    fuse_normalised,
    fuse_rrf,
    hits_to_candidates,
    rank_by_evidence,
    seeds_of,
)
from hybridrag.agents.fusion.tools import STEPS
from hybridrag.graphs.runtime import InputState, OutputState, context_of, resolve_kb, timed, traced
from hybridrag.tools.dice import Tokenizer
from hybridrag.tools.retrieval import mentions_in
from hybridrag.tools.steps import check_overrides, run_step

Mode = Literal["hybrid", "vector", "graph", "bm25"]
Route = Literal["has seeds", "no seeds"]
ROUTES: dict[Route, str] = {"has seeds": "expand_seeds", "no seeds": "fuse_results"}  # labels in the drawing
MAX_SEED_PASSAGES = 1000


@dataclass(kw_only=True)
class FusionContext(Context):
    """Settings of the fusion method (defaults from the paper, except ``scoring``)."""

    mode: Mode = field(
        default="hybrid", metadata={"description": "hybrid (the method), or a baseline: vector, graph, bm25."}
    )
    k1: int = field(
        default=3,
        metadata={
            "description": (
                "K1: top dense hits kept as candidates and used as seeds (the paper gives no value; 3 was best "
                "of 2/3/5/10 on 300 MetaQA-hybrid-50 dev questions, see docs/benchmarks.md). Under 'evidence' "
                "scoring only the first seeds the graph, beside the entities the question names."
            )
        },
    )
    epsilon: float = field(default=1e-6, metadata={"description": "ε bias in favour of graph results on ties."})
    tokenizer: Tokenizer = field(
        default="bigram", metadata={"description": "Dice token sets: 'bigram' (character bigrams, as APOC) or 'word'."}
    )
    scoring: Scoring = field(
        default="evidence",
        metadata={
            "description": (
                "How the hybrid mode ranks (the baselines always keep the paper's scores). 'evidence' (default): "
                "seeds are the entities the question names plus the nearest dense hit's; each item is scored by "
                "the fact backing it on one Dice scale (a graph item by the mean Dice of its seed and of its relation "
                "label with the neighbour's type; a text hit by its best sentence about a seed, the entities the sentence "
                "names standing as their types); hits stating no fact follow; the question's own "
                "entities come last. 'paper': the paper's Eq. 3-4 verbatim (dense seeds, cosine vs mean Dice of "
                "seed, relation, neighbour, +ε, dedupe by max). 'normalised': paper scores over each branch's best. "
                "'rrf': reciprocal-rank fusion. 'normalised' and 'rrf' use both seed sources and put the question's "
                "own entities last. Chosen on MetaQA dev, see docs/benchmarks_fusion.md."
            )
        },
    )
    seed_passages: int = field(
        default=200,
        metadata={
            "description": (
                "'evidence' scoring: passages naming each seed, at most this many from a lexical search of its "
                "name (the text side of the seeded expansion), 0 to 1000; 0 turns it off. 200 was best of "
                "0/50/100/200 on MetaQA dev (tune part), see docs/benchmarks_fusion.md."
            )
        },
    )
    hops: int = field(
        default=1,
        metadata={
            "description": (
                f"Graph expansion depth, 1 to {MAX_HOPS}. 1 is the paper's one-hop expansion; 2-3 reach each "
                "entity once by its best path (for multi-hop questions; worse on one-hop questions)."
            )
        },
    )


class State(InputState, OutputState, total=False):
    """Full state of one fusion run. Candidates are kept as plain dicts (``Candidate`` fields), so a
    checkpointed thread stores only JSON types.
    """

    vector: list[dict]
    graph: list[dict]
    text: list[dict]
    seeds: list[str]
    named: list[str]


def _plain(items: list[Candidate]) -> list[dict]:
    """Candidates as JSON dicts (``asdict`` without its recursive deep copy: the fields are flat)."""
    return [{**vars(c), "path": list(c.path), "facts": list(c.facts)} for c in items]


def _candidates(state: State, key: str) -> list[Candidate]:
    return [Candidate(**c) for c in state.get(key, [])]


CHOICES = {"mode": Mode, "tokenizer": Tokenizer, "scoring": Scoring}  # each choice field and its Literal


def _check(ctx: FusionContext) -> None:
    for name, choice in CHOICES.items():
        if getattr(ctx, name) not in get_args(choice):
            raise ValueError(f"unknown fusion {name} {getattr(ctx, name)!r}; use {', '.join(get_args(choice))}")
    if not 1 <= ctx.hops <= MAX_HOPS:
        raise ValueError(f"fusion hops must be between 1 and {MAX_HOPS}, got {ctx.hops}")
    if not 0 <= ctx.seed_passages <= MAX_SEED_PASSAGES:
        raise ValueError(f"fusion seed_passages must be between 0 and {MAX_SEED_PASSAGES}, got {ctx.seed_passages}")
    check_overrides("fusion", ctx.tools, STEPS)


def _settings(runtime: Runtime[FusionContext]) -> FusionContext:
    """The run's checked settings (every node checks: a resumed or forked thread may bring a new context)."""
    ctx = context_of(runtime, FusionContext)
    _check(ctx)
    return ctx


def _seeds(scoring: str, dense: list[str], named: list[str]) -> list[str]:
    """E_seed: the dense hits' entities (paper); with the question's named entities (normalised, rrf);
    under 'evidence' the named entities and only the nearest dense entity, which catches a name the
    exact match misses while further dense hits (mostly namesakes of the topic) stay text candidates.
    """
    if scoring == "paper":
        return dense
    return list(dict.fromkeys((dense[:1] if scoring == "evidence" else dense) + named))


def _step(ctx: FusionContext, kb, name: str, **args):
    """Run one retrieval step as a tool call (the user's tool when the context names one)."""
    return run_step("fusion", STEPS, name, args, kb, ctx.tools)


def retrieve_vectors(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Vector branch V_k (or the BM25 / graph-only seeding of the baselines)."""
    ctx = _settings(runtime)
    kb, q, usage = resolve_kb(ctx), state["question"], {}
    with timed("retrieve_vectors", usage):
        named = mentions_in(kb, q)  # the entities the question names (entity mapping, Figure 1)
        match ctx.mode:
            case "hybrid":
                vec = (
                    hits_to_candidates(kb, _step(ctx, kb, "dense_search", query=q, k=ctx.k1), "vector")
                    if ctx.k1 > 0
                    else []
                )
                seeds = _seeds(ctx.scoring, seeds_of(vec), named)
            case "vector":
                vec, seeds = hits_to_candidates(kb, _step(ctx, kb, "dense_search", query=q, k=ctx.top_k), "vector"), []
            case "bm25":
                vec, seeds = hits_to_candidates(kb, _step(ctx, kb, "lexical_search", query=q, k=ctx.top_k), "bm25"), []
            case "graph":
                vec, seeds = [], named
            case other:
                raise ValueError(f"unknown fusion mode {other!r}; use hybrid, vector, graph or bm25")
    step = traced(
        "retrieve_vectors",
        f"{len(vec)} text hits, {len(seeds)} seed entities",
        mode=ctx.mode,
        seeds=[kb.name(s) for s in seeds][:10],
        named=[kb.name(n) for n in named][:10],
    )
    return {"vector": _plain(vec), "seeds": seeds, "named": named, "trace": [step], "usage": usage}


def expand_seeds(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Graph branch G_k: entities within ``hops`` of the seeds, ranked by their Dice path score.

    Under 'evidence' scoring also the passages naming a seed (the text side of the expansion).
    """
    ctx = _settings(runtime)
    kb, usage = resolve_kb(ctx), {}
    aware = ctx.mode == "hybrid" and ctx.scoring == "evidence"
    with timed("expand_seeds", usage):
        seeds = state.get("seeds", [])
        text = (
            _step(ctx, kb, "seed_passages", seeds=seeds, k=ctx.seed_passages) if aware and ctx.seed_passages > 0 else []
        )
        scored = _step(
            ctx,
            kb,
            "graph_expand",
            question=state["question"],
            seeds=seeds,
            k=ctx.top_k,
            hops=ctx.hops,
            tokenizer=ctx.tokenizer,
            answer_aware=aware,
        )
        names = kb.names({e for path, _, _ in scored for t in path for e in (t.head, t.tail)})
        graph = []
        for path, s, n in scored:
            steps = [t.verbalise(names) for t in path]
            fact = " / ".join(steps)
            graph.append(Candidate(n, "entity", names[n], s, "graph", fact, steps, n, [fact]))
    best = f"best {graph[0].text} ({graph[0].score:.3f})" if graph else "no triples"
    step = traced("expand_seeds", best, triples=len(graph), hops=ctx.hops, passages=len(text))
    return {"graph": _plain(graph), "text": _plain(text), "trace": [step], "usage": usage}


def fuse_results(state: State, runtime: Runtime[FusionContext]) -> dict:
    """Merge both branches by the chosen scoring, answer from the best fact, keep the top K."""
    ctx = _settings(runtime)
    kb, q, usage = resolve_kb(ctx), state["question"], {}
    vec, graph, named = _candidates(state, "vector"), _candidates(state, "graph"), set(state.get("named", []))
    scoring = ctx.scoring if ctx.mode == "hybrid" else "paper"  # the baselines are the paper's
    with timed("fuse_results", usage):
        subjects = kb.names([*state.get("seeds", []), *named])
        match scoring:
            case "paper":
                pool = fuse(vec, graph, ctx.epsilon, None)
            case "normalised":
                pool = fuse_normalised(vec, graph, ctx.epsilon, None, named)
            case "rrf":
                pool = fuse_rrf(vec, graph, ctx.epsilon, None, named)
            case _:
                text = [*vec, *_candidates(state, "text")]
                pool = rank_by_evidence(kb, text, graph, ctx.epsilon, named, subjects, q, ctx.tokenizer)
        answer = answer_of(kb, q, pool, named, subjects, ctx.tokenizer)
        top = pool[: ctx.top_k]
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


def route_after_vectors(state: State) -> Route:
    """Expand into the graph only when there are seeds (hybrid and graph-only modes).

    It reads the state only: LangGraph runs a conditional edge without a runtime context when a
    caller writes a state as this node (``update_state``, forking a thread in Studio).
    """
    return "has seeds" if state.get("seeds") else "no seeds"


builder = StateGraph(State, context_schema=FusionContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(retrieve_vectors)
builder.add_node(expand_seeds)
builder.add_node(fuse_results)
builder.add_edge(START, "retrieve_vectors")  # every run starts with the (dense or lexical) text branch
builder.add_conditional_edges("retrieve_vectors", route_after_vectors, ROUTES)  # seeds → graph branch
builder.add_edge("expand_seeds", "fuse_results")  # graph results join the text results
builder.add_edge("fuse_results", END)
graph = builder.compile(name="fusion")
