"""SSRAG's joint rerank and TextDedup (paper §III-C, Algorithm 3 lines 9-11).

- Joint rerank (``GetTop2k``): the vector branch's texts and the graph branch's converted nodes
  are scored by cosine to the query vector Qv (:func:`agents.ssrag.context_vectors.item_scores`) and the
  best ``2k`` kept. ``mode="paper"`` is the paper's single cosine order. ``mode="interleave"``
  (ours, the default): the cosine order decides which places each branch takes and orders the
  graph contexts, and the vector branch's texts fill its places in the branch's own order. On the
  local corpus that order is the dense and BM25 rankings fused, near-duplicate passages by
  corroboration (:func:`tools.fused_text.hybrid_search`); a cosine re-sort of those texts keeps
  only the dense half and puts a doctored near-copy of a paragraph wherever its wording lands
  (docs/benchmarks_ssrag.md "Issue 26"). ``bare_last`` (ours): contexts that state nothing but
  their name rank after the others; each group is ordered as above.
- TextDedup: exact-match removal (case and whitespace folded), then a cosine tie-break that drops
  an item at least ``threshold`` similar to an earlier kept one (the earlier in rank wins).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from hybridrag.agents.ssrag.context_vectors import item_scores, item_vectors
from hybridrag.kb.base import KnowledgeBase

JointRerank = Literal["interleave", "paper"]


def states_nothing(item: dict) -> bool:
    """Whether a context's text is only its own name (e.g. an entity document that is a bare name)."""
    return " ".join((item["text"] or "").lower().split()) == " ".join(item["name"].lower().split())


def from_vector_branch(item: dict) -> bool:
    """Whether a context is a text of the vector branch (a KB document or a web snippet), not a graph node."""
    return item["source"] != "kg"


def interleave(order: list[int], items: list[dict]) -> list[int]:
    """``order`` with the vector branch's places refilled by its items in input order.

    Each place ``order`` gives a vector-branch item takes the next vector-branch item of ``order``
    by position in ``items`` (the branch's own rank); graph items stay where ``order`` puts them.
    """
    texts = iter(sorted(i for i in order if from_vector_branch(items[i])))
    return [next(texts) if from_vector_branch(items[i]) else i for i in order]


def joint_rerank(
    kb: KnowledgeBase,
    items: list[dict],
    qv: np.ndarray,
    keep: int,
    bare_last: bool = True,
    scores: np.ndarray | None = None,
    mode: JointRerank = "interleave",
) -> list[dict]:
    """GetTop2k: the best ``keep`` items by cosine to Qv (ties: earlier first), ordered as ``mode`` says.

    Args:
        kb: The knowledge base (its stored vectors score KB documents).
        items: The vector branch's texts in the branch's order, then the graph contexts.
        qv: The query vector.
        keep: How many to return (2k).
        bare_last: Contexts stating nothing but their name after the others (false: one group).
        scores: The items' cosines (:func:`item_scores`; computed with the defaults when not given).
        mode: ``"interleave"`` (ours: the vector branch's texts keep their branch order in the
            places the cosine gives the branch) or ``"paper"`` (one cosine order).

    Returns:
        The kept items, each with its own cosine as ``score``.
    """
    if mode not in ("interleave", "paper"):
        raise ValueError(f"unknown ssrag joint_rerank {mode!r}; use interleave, paper")
    if not items:
        return []
    scores = item_scores(kb, items, qv) if scores is None else scores
    order = [int(i) for i in np.argsort(-scores, kind="stable")]
    groups = [order]
    if bare_last:
        groups = [[i for i in order if not states_nothing(items[i])], [i for i in order if states_nothing(items[i])]]
    if mode == "interleave":
        groups = [interleave(g, items) for g in groups]
    ranked = [i for g in groups for i in g]
    return [{**items[i], "score": round(float(scores[i]), 6)} for i in ranked[:keep]]


def text_dedup(
    kb: KnowledgeBase, items: list[dict], threshold: float, vecs: np.ndarray | None = None
) -> tuple[list[dict], list[dict]]:
    """Exact-match removal and high-cosine tie-break over ranked items.

    Returns (kept items, removed ``[{"id", "reason"}]``); the earlier item of a pair wins.
    ``vecs``: the items' vectors (:func:`item_vectors`; computed with the defaults when not given).
    """
    vecs = item_vectors(kb, items) if vecs is None else vecs
    seen: dict[str, str] = {}
    kept: list[dict] = []
    kept_rows: list[int] = []
    removed: list[dict] = []
    for row, item in enumerate(items):
        key = " ".join((item["text"] or item["name"]).lower().split())
        if key in seen:
            removed.append({"id": item["id"], "reason": f"exact duplicate of {seen[key]}"})
            continue
        if kept_rows:
            sims = vecs[kept_rows] @ vecs[row]
            best = int(np.argmax(sims))
            if sims[best] >= threshold:
                removed.append({"id": item["id"], "reason": f"cosine {sims[best]:.3f} to {kept[best]['id']}"})
                continue
        seen[key] = item["id"]
        kept.append(item)
        kept_rows.append(row)
    return kept, removed
