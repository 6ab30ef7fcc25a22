"""MoR's retrieval steps as tools (structural_traversal of one route, textual_retrieval) and the calls that run them.

:func:`traverse` follows one planned route, :func:`merged_candidates` merges the routes and tops
the list up with text matches, :func:`matched_text` is the fallback for an invalid plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, Field

from hybridrag.agents.mor import traversal as trav
from hybridrag.agents.mor.graph_first import select_graph_first, topic_entities
from hybridrag.agents.mor.matching import question_vector
from hybridrag.tools.steps import PASSAGES, VIEW_LIMIT, Step, StepCall, listed, passage, run_step, score_of

TRAVERSAL = (
    "a dict with candidates: {entity id: trajectory} (a trajectory is a list of steps "
    "{id, type, via, edge, tf}), or a list of entities reached: dicts or Documents (metadata) with id "
    "(or entity_id) and score"
)


class TraversalArgs(BaseModel):
    """Arguments of the structural_traversal step."""

    question: str = Field(description="The question.")
    route: dict = Field(description='The route: {"nodes": [{"type", "restriction"}], "relations": [[rel, ...]]}.')
    seed_k: int = Field(default=5, description="Textual seeds at layer 0.")
    layer_k: int = Field(default=10, description="Textual matches added at each later layer.")
    matcher: str = Field(default="bm25", description="Textual similarity: bm25 or dense.")
    layer_match: str = Field(default="always", description="always, restricted or never.")
    max_frontier: int = Field(default=5000, description="Most candidates a layer keeps.")
    structure: bool = Field(default=True, description="Follow graph edges (False: textual only).")
    text_edges: bool = Field(default=False, description="Textual edges when structure reaches nothing.")
    mention_rows: int = Field(default=200, description="Most texts read for a backward textual edge.")
    graph_first: bool = Field(default=True, description="Mark the route's topic entities (graph-first ranking).")


class TextArgs(BaseModel):
    """Arguments of the textual_retrieval step."""

    query: str = Field(description="What to match.")
    k: int = Field(description="How many entities to return.")
    categories: list[str] | None = Field(default=None, description="Entity types allowed (None: any).")
    matcher: str = Field(default="bm25", description="Textual similarity: bm25 or dense.")


def _view(res: dict) -> dict:
    cands = dict(list(res["candidates"].items())[:VIEW_LIMIT])
    return {**res, "candidates": cands, "found": len(res["candidates"])}


def _traversal_default(kb: Any):
    def run(question: str, route: dict, graph_first: bool = True, **kw: Any) -> tuple[dict, dict]:
        rule = (lambda seeds: topic_entities(kb, route, seeds)) if graph_first else None
        res = trav.traverse_route(kb, question, route, topic_rule=rule, **kw)
        return res, _view(res)

    return run


def _entity_rows(kb: Any, output: Any, call: StepCall) -> list[tuple[str, float]]:
    rows = []
    for item in listed(output, call):
        row = item.metadata if isinstance(item, Document) else item
        if not isinstance(row, Mapping):
            raise call.error(f"returned a {type(item).__name__} item ({str(item)[:60]!r})")
        if isinstance(item, Document) or "text" in row:  # a passage: the entity it is about
            p = passage(item, call)
            eid = p["entity_id"] or p["id"]
        else:
            eid = row.get("entity_id") or row.get("id")
        if not eid:
            raise call.error(f"returned {str(item)[:60]!r} without an entity id")
        rows.append((str(eid), score_of(row, call)))
    return rows


def _step_of(kb: Any, eid: str, score: float) -> list[dict]:
    ent = kb.graph.get(eid)
    return [{"id": eid, "type": ent.type if ent else "", "via": "text", "edge": None, "tf": round(score, 6)}]


def _traversal_adopt(kb: Any, output: Any, call: StepCall) -> dict:
    if isinstance(output, Mapping) and isinstance(output.get("candidates"), Mapping):
        cands = {str(e): list(t) for e, t in output["candidates"].items()}
        return {
            "candidates": cands,
            "layers": list(output.get("layers", [])),
            "seeds": list(output.get("seeds", [])),
            "topics": list(output.get("topics", [])),
        }
    cands = {eid: _step_of(kb, eid, s) for eid, s in _entity_rows(kb, output, call)}
    return {"candidates": cands, "layers": [], "seeds": [], "topics": []}


def _text_default(kb: Any):
    def run(
        query: str,
        k: int,
        categories: list[str] | None = None,
        matcher: str = "bm25",
        exclude: frozenset = frozenset(),
        **_: Any,
    ) -> tuple[dict, dict]:
        found = trav.text_candidates(kb, query, categories, k, matcher, exclude)
        return found, dict(list(found.items())[:VIEW_LIMIT])

    return run


def _text_adopt(kb: Any, output: Any, call: StepCall) -> dict:
    """Entities (or passages: the entity each is about) of the allowed categories, not excluded, at most k."""
    cats, exclude = call.args.get("categories"), call.extra.get("exclude", frozenset())
    out: dict[str, list[dict]] = {}
    for eid, score in _entity_rows(kb, output, call):
        ent = kb.graph.get(eid)
        if eid in exclude or eid in out or (cats and (ent is None or ent.type not in cats)):
            continue
        out[eid] = _step_of(kb, eid, score)
        if len(out) >= call.args.get("k", len(out)):
            break
    return out


STEPS: dict[str, Step] = {
    s.name: s
    for s in [
        Step(
            "structural_traversal",
            "Mixed traversal of one planned route: textual seeds of the first category, "
            "then layer by layer the typed neighbours along the route's relations, united with the layer's "
            "textual matches; each candidate with the trajectory that reached it.",
            TraversalArgs,
            TRAVERSAL,
            _traversal_default,
            _traversal_adopt,
        ),
        Step(
            "textual_retrieval",
            "Entities whose texts best match the query (BM25 or dense), optionally of given "
            "categories: the fallback for an invalid plan and the fillers after the routes.",
            TextArgs,
            PASSAGES + ", or entity dicts with id and score",
            _text_default,
            _text_adopt,
        ),
    ]
}


def textual(
    ctx: Any, kb: Any, query: str, categories: list[str] | None, k: int, exclude: set[str] | frozenset = frozenset()
) -> dict:
    """Run the textual_retrieval step (a tool call); ``exclude`` goes around the tool (it can be large)."""
    return run_step(
        "mor",
        STEPS,
        "textual_retrieval",
        {"query": query, "k": k, "categories": categories, "matcher": ctx.text_matcher},
        kb,
        ctx.tools,
        {"exclude": exclude},
    )


def fillers(ctx: Any, kb: Any, q: str, qvec: Any, have: set[str], categories: list[str] | None, k: int) -> list:
    """Up to ``k`` textual matches not in ``have``, marked ``filler`` (as :func:`agents.mor.candidates.fillers`)."""
    if k <= 0:
        return []
    extra = textual(ctx, kb, q, categories, k, have)
    return [{**c, "filler": True} for c in trav.select_candidates(kb, qvec, extra, k)]


def traverse(ctx: Any, kb: Any, question: str, route: dict) -> dict:
    """Run the structural_traversal step over one route with the run's settings (a tool call)."""
    args = {
        "question": question,
        "route": route,
        "seed_k": ctx.seed_k,
        "layer_k": ctx.layer_k,
        "matcher": ctx.text_matcher,
        "max_frontier": ctx.max_frontier,
        "layer_match": "never" if ctx.retrieval == "structural" else ctx.layer_match,
        "structure": ctx.retrieval != "textual",
        "text_edges": ctx.text_edges,
        "mention_rows": ctx.num_candidates,
        "graph_first": ctx.ranking == "graph_first",
    }
    return run_step("mor", STEPS, "structural_traversal", args, kb, ctx.tools)


def merged_candidates(ctx: Any, kb: Any, question: str, target: str | None, results: list[dict]) -> dict:
    """The routes' candidates merged, without any route's topic entity, the best kept by semantic score.

    Graph-first ranking puts the structurally reached ones first; a list shorter than ``top_k`` is
    topped up with text matches of the ``target`` category (``fill_with_text``).

    Returns:
        ``{"selected", "fillers", "merged": pool size, "mode": how the routes were merged, "topics"}``.
    """
    pool, mode = trav.merge_routes(results)
    topics = {t for r in results for t in r.get("topics", [])}
    pool = {e: t for e, t in pool.items() if e not in topics}
    qvec = question_vector(kb, question)
    missing = ctx.top_k - len(pool) if ctx.fill_with_text else 0
    select = select_graph_first if ctx.ranking == "graph_first" else trav.select_candidates
    selected = select(kb, qvec, pool, ctx.num_candidates)
    fill = fillers(ctx, kb, question, qvec, set(pool) | topics, [target], missing)
    return {"selected": selected, "fillers": fill, "merged": len(pool), "mode": mode, "topics": sorted(topics)}


def matched_text(ctx: Any, kb: Any, question: str) -> list[dict]:
    """Textual matching of the question in the answer categories (§4.1), the best kept by semantic score."""
    pool = textual(ctx, kb, question, ctx.targets() or None, ctx.num_candidates)
    return trav.select_candidates(kb, question_vector(kb, question), pool, ctx.num_candidates)
