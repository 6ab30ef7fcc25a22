"""Fusion's text side beyond the fact-backed items: dense and BM25 rankings fused by reciprocal rank.

Under 'evidence' scoring, the items no fact backs are ranked by reciprocal-rank fusion (Cormack et
al., 2009) of two searches of the question, each ``top_k`` deep: the dense one (whose first ``k1``
hits are also the vector branch) and BM25. A document scores Σ 1 / (c + rank) over the rankings that
hold it; on a tie the dense ranking's order wins. The fused list is what fills ``top_k`` after the
fact-backed items, so a KB without graph facts (documents only) gets the fused ranking itself.

Two near-duplicate passages that disagree are a document and a doctored copy of it, or an old and
a new version: :func:`corroborated` puts first, among a group of near-duplicates, the one whose own
words (those its copies do not share) the other fused items also state, in the places the group
held. Copies that differ only in words no other item states keep their order.
"""

from __future__ import annotations

from hybridrag.agents.fusion.scoring import Candidate
from hybridrag.tools.fused_text import corroborate_by, fuse_ranked


def reciprocal_rank_fusion(rankings: list[list[Candidate]], constant: int) -> list[Candidate]:
    """The candidates of ``rankings`` by Σ 1 / (constant + rank), each once, with that sum as its score."""
    return fuse_ranked(rankings, lambda c: c.id, constant)


def corroborated(items: list[Candidate]) -> list[Candidate]:
    """``items`` with each group of near-duplicate passages ordered by corroboration, in the group's places."""
    return corroborate_by(items, lambda c: c.text, lambda c: c.kind == "entity")
