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

from dataclasses import replace

from hybridrag.agents.fusion.scoring import Candidate
from hybridrag.tools.text import words

DUPLICATE_OVERLAP = 0.4  # word Jaccard from which two passages are near-duplicates (best of 0.3/0.4/0.5)
_STOP = frozenset(
    "a an the of in on at to for by with from and or is was were are be been it its as he she they his her "
    "their this that which who".split()
)


def reciprocal_rank_fusion(rankings: list[list[Candidate]], constant: int) -> list[Candidate]:
    """The candidates of ``rankings`` by Σ 1 / (constant + rank), each once, with that sum as its score.

    Ranks start at 1 and count each id once per ranking (its first occurrence). A candidate keeps
    the copy of the first ranking that holds it; ties keep the order of first appearance.
    """
    total: dict[str, float] = {}
    first: dict[str, Candidate] = {}
    for ranking in rankings:
        for rank, cid in enumerate(dict.fromkeys(c.id for c in ranking), 1):
            total[cid] = total.get(cid, 0.0) + 1.0 / (constant + rank)
        for c in ranking:
            first.setdefault(c.id, c)
    order = sorted(first, key=lambda i: -total[i])  # stable: first appearance on a tie
    return [replace(first[i], score=total[i]) for i in order]


def corroborated(items: list[Candidate]) -> list[Candidate]:
    """``items`` with each group of near-duplicate passages ordered by corroboration, in the group's places.

    A passage's corroboration is how many of its own words (none of its copies has them) the items
    outside its group hold; the best corroborated goes first, the earlier on a tie. Each item takes
    the score of the place it moves to, so the scores stay in order.
    """
    bags = [frozenset(words(c.text)) - _STOP for c in items]
    out = list(items)
    for group in _duplicate_groups(items, bags):
        outside = frozenset().union(*(b for i, b in enumerate(bags) if i not in group))

        def support(i: int, group: list[int] = group, outside: frozenset[str] = outside) -> int:
            return len((bags[i] - frozenset().union(*(bags[j] for j in group if j != i))) & outside)

        for place, i in zip(group, sorted(group, key=lambda i: (-support(i), i)), strict=True):
            out[place] = replace(items[i], score=items[place].score)
    return out


def _duplicate_groups(items: list[Candidate], bags: list[frozenset[str]]) -> list[list[int]]:
    """Positions of the passages of each group of two or more near-duplicates (linked by word Jaccard)."""
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    passages = [i for i, c in enumerate(items) if c.kind != "entity" and bags[i]]
    for n, a in enumerate(passages):
        for b in passages[n + 1 :]:
            if len(bags[a] & bags[b]) >= DUPLICATE_OVERLAP * len(bags[a] | bags[b]):
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for i in passages:
        groups.setdefault(root(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]
