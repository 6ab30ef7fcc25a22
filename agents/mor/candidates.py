"""MoR's candidate pool: merging the routes, textual matching, and selection by semantic score.

The routes' candidates are merged (§3.2.2); textual matching of the question alone is the fallback
for an invalid plan and the filler; the pool is cut by its semantic score (§B.2).

Routes are merged by intersection; when the intersection is empty we take the union (the paper
is silent; the authors' code does the same).
"""

from __future__ import annotations

import numpy as np

from hybridrag.agents.mor import frontier
from hybridrag.agents.mor.matching import LayerScores, semantic_scores
from hybridrag.agents.mor.trajectory import Trajectory, rank_key, step
from hybridrag.kb.base import KnowledgeBase


def merge_routes(results: list[dict]) -> tuple[dict[str, Trajectory], str]:
    """Intersect the candidate sets of the routes that found any (union when that is empty).

    Returns:
        (candidate id → its most informative trajectory over the routes, how they were merged).
    """
    found = [r["candidates"] for r in results if r["candidates"]]
    if not found:
        return {}, "no route found candidates"
    common = set(found[0]).intersection(*found[1:])
    mode = "intersection" if common or len(found) == 1 else "union (empty intersection)"
    pool = common or set().union(*found)
    merged: dict[str, Trajectory] = {}
    for cands in found:
        for eid, traj in cands.items():
            if eid in pool and (eid not in merged or rank_key(traj) > rank_key(merged[eid])):
                merged[eid] = traj
    return merged, mode


def text_candidates(
    kb: KnowledgeBase,
    question: str,
    categories: list[str] | None,
    k: int,
    matcher: str = "bm25",
    exclude: set[str] | frozenset = frozenset(),
) -> dict[str, Trajectory]:
    """Textual matching of the question alone: the fallback for invalid plans, and the filler."""
    scores = LayerScores(kb, question, matcher)
    out: dict[str, Trajectory] = {}
    top = [(eid, s) for eid, s in frontier.top_of(kb, scores, categories, k + len(exclude)) if eid not in exclude]
    ents = kb.graph.get_many([eid for eid, _ in top]) if top else {}  # their types in one read
    for eid, s in top:
        out[eid] = [step(eid, ents[eid].type if eid in ents else "", "text", s)]
        if len(out) >= k:
            break
    return out


def select_candidates(kb: KnowledgeBase, query_vec: np.ndarray, pool: dict[str, Trajectory], limit: int) -> list[dict]:
    """Rank the pool by the initial semantic score and keep ``limit`` (§B.2: selects candidates).

    Returns:
        ``[{"id", "semantic", "trajectory"}]`` best first.
    """
    sem = semantic_scores(kb, query_vec, pool)
    order = sorted(pool, key=lambda e: (-sem[e], e))[:limit]
    return [{"id": e, "semantic": round(sem[e], 6), "trajectory": pool[e]} for e in order]


def fillers(
    kb: KnowledgeBase,
    question: str,
    query_vec: np.ndarray,
    have: set[str],
    categories: list[str] | None,
    k: int,
    matcher: str = "bm25",
) -> list[dict]:
    """Up to ``k`` textual matches not in ``have``, marked ``filler`` (they rank after the rest)."""
    if k <= 0:
        return []
    extra = text_candidates(kb, question, categories, k, matcher, have)
    return [{**c, "filler": True} for c in select_candidates(kb, query_vec, extra, k)]
