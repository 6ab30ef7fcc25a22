"""Fusion's retrieval steps as tools: dense_search, lexical_search, seed_passages, graph_expand."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, Field

from hybridrag.agents.fusion.paths import MAX_HOPS, Scored, score_graph
from hybridrag.agents.fusion.scoring import Candidate, hits_to_candidates, seeded_passages
from hybridrag.kb.model import Triple
from hybridrag.tools.steps import (
    PASSAGES,
    VIEW_LIMIT,
    Step,
    StepCall,
    as_hits,
    listed,
    passages,
    score_of,
    search_step,
)

PATHS = (
    "a list of graph results: dicts (or Documents whose metadata hold them) with entity (the id reached), "
    "score, and path (triples from a seed, each a dict head/relation/tail or a [head, relation, tail] list)"
)


class SeedArgs(BaseModel):
    """Arguments of the seed_passages step."""

    seeds: list[str] = Field(description="Entity ids to find passages about.")
    k: int = Field(description="At most this many passages per seed.")


class ExpandArgs(BaseModel):
    """Arguments of the graph_expand step."""

    question: str = Field(description="The question the paths are scored against.")
    seeds: list[str] = Field(description="Entity ids to expand from.")
    k: int = Field(description="How many entities to return.")
    hops: int = Field(default=1, ge=1, le=MAX_HOPS, description="Expansion depth.")
    tokenizer: str = Field(default="bigram", description="Dice token sets: bigram or word.")
    answer_aware: bool = Field(default=False, description="Score by seed and relation only (the 'evidence' scoring).")


def _candidate_view(items: list[Candidate]) -> list[dict]:
    return [
        {"id": c.id, "text": c.text, "score": c.score, "kind": c.kind, "entity_id": c.entity_id}
        for c in items[:VIEW_LIMIT]
    ]


def _seed_default(kb: Any):
    def run(seeds: list[str], k: int) -> tuple[list[Candidate], Callable[[], list[dict]]]:
        found = seeded_passages(kb, seeds, k)
        return found, lambda: _candidate_view(found)

    return run


def _seed_adopt(kb: Any, output: Any, call: StepCall) -> list[Candidate]:
    return hits_to_candidates(kb, as_hits(passages(output, call.name, call.contract)), "text")


def _triple_view(t: Triple) -> dict:
    return {"head": t.head, "relation": t.type, "tail": t.tail}


def _expand_default(kb: Any):
    def run(
        question: str, seeds: list[str], k: int, hops: int = 1, tokenizer: str = "bigram", answer_aware: bool = False
    ) -> tuple[list[Scored], Callable[[], list[dict]]]:
        scored = score_graph(kb, question, seeds, k, tokenizer, hops, answer_aware=answer_aware)  # type: ignore[arg-type]
        return scored, lambda: [
            {"entity": n, "score": s, "path": [_triple_view(t) for t in path]} for path, s, n in scored[:VIEW_LIMIT]
        ]

    return run


def _triple(item: Any, call: StepCall) -> Triple:
    if isinstance(item, Mapping) and {"head", "tail"} <= set(item) and ("relation" in item or "type" in item):
        return Triple(str(item["head"]), str(item.get("relation", item.get("type"))), str(item["tail"]))
    if isinstance(item, list | tuple) and len(item) == 3:
        return Triple(*(str(x) for x in item))
    raise call.error(f"returned a path step {str(item)[:60]!r}")


def _expand_adopt(kb: Any, output: Any, call: StepCall) -> list[Scored]:
    out: list[Scored] = []
    for item in listed(output, call):
        row = item.metadata if isinstance(item, Document) else item
        if not isinstance(row, Mapping) or not row.get("entity") or not isinstance(row.get("path"), list | tuple):
            raise call.error(f"returned {str(item)[:60]!r}")
        out.append(([_triple(t, call) for t in row["path"]], score_of(row, call), str(row["entity"])))
    return out


STEPS: dict[str, Step] = {
    s.name: s
    for s in [
        search_step(
            "dense_search",
            "Entity documents and passages nearest in meaning to the query "
            "(dense vectors): the vector branch and its seeds.",
            "dense_search",
        ),
        search_step(
            "lexical_search",
            "Entity documents and passages matching the query's words (BM25): the bm25 baseline.",
            "lexical_search",
        ),
        Step(
            "seed_passages",
            "Passages naming each seed entity as a whole phrase: the text side of the "
            "seeded expansion ('evidence' scoring).",
            SeedArgs,
            PASSAGES,
            _seed_default,
            _seed_adopt,
        ),
        Step(
            "graph_expand",
            "Entities within `hops` relations of the seed entities, best `k` first by their "
            "Dice path score, each with the path from its seed: the graph branch.",
            ExpandArgs,
            PATHS,
            _expand_default,
            _expand_adopt,
        ),
    ]
}
