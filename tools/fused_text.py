"""Hybrid text search for any method: dense and BM25 hits fused by reciprocal rank, near-duplicates by corroboration.

The same two steps as fusion's text fill (``agents/fusion/text_fill.py``), over the KB's own hits so
every method can use them:

- :func:`fuse_hits`: the hits of several rankings by Σ 1 / (c + rank) (reciprocal-rank fusion,
  Cormack et al., 2009; ``c = 0`` by default, as fusion's ``text_rrf_k``), each document once, the
  first ranking's order on a tie; a hit's score becomes its fused sum.
- :func:`corroborate`: among near-duplicate passages (word Jaccard ≥ 0.4 without stop words), the
  one whose own words (those its copies lack) the other hits state most goes first, in the places
  the group held; copies no other hit tells apart keep their order. A doctored copy of a paragraph
  swaps its facts for words no other retrieved text states.

:func:`hybrid_search` does both over ``kb.dense_search`` and ``kb.lexical_search``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from hybridrag.kb.base import Hit, KnowledgeBase
from hybridrag.tools.text import words

DUPLICATE_OVERLAP = 0.4
_STOP = frozenset(
    "a an the of in on at to for by with from and or is was were are be been it its as he she they his her "
    "their this that which who".split()
)


def fuse_hits(rankings: Sequence[Sequence[Hit]], constant: int = 0) -> list[Hit]:
    """The hits of ``rankings`` by reciprocal-rank fusion (ranks from 1, each document once per ranking)."""
    total: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking in rankings:
        seen: dict[str, Hit] = {}
        for h in ranking:
            seen.setdefault(h.doc.id, h)
        for rank, doc_id in enumerate(seen, 1):
            total[doc_id] = total.get(doc_id, 0.0) + 1.0 / (constant + rank)
            first.setdefault(doc_id, seen[doc_id])
    order = sorted(first, key=lambda d: -total[d])  # stable: first appearance on a tie
    return [replace(first[d], score=total[d]) for d in order]


def _groups(hits: Sequence[Hit], bags: list[frozenset[str]]) -> list[list[int]]:
    """Positions of each group of two or more near-duplicate passages (linked by word Jaccard)."""
    parent = list(range(len(hits)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    passages = [i for i, h in enumerate(hits) if h.doc.kind != "entity" and bags[i]]
    for n, a in enumerate(passages):
        for b in passages[n + 1 :]:
            if len(bags[a] & bags[b]) >= DUPLICATE_OVERLAP * len(bags[a] | bags[b]):
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for i in passages:
        groups.setdefault(root(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def corroborate(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with each group of near-duplicate passages ordered by corroboration, in the group's places."""
    bags = [frozenset(words(h.doc.text)) - _STOP for h in hits]
    out = list(hits)
    for group in _groups(hits, bags):
        outside = frozenset().union(*(b for i, b in enumerate(bags) if i not in group))

        def support(i: int, group: list[int] = group, outside: frozenset[str] = outside) -> int:
            return len((bags[i] - frozenset().union(*(bags[j] for j in group if j != i))) & outside)

        for place, i in zip(group, sorted(group, key=lambda i: (-support(i), i)), strict=True):
            out[place] = replace(hits[i], score=hits[place].score)
    return out


def hybrid_search(
    kb: KnowledgeBase,
    query: str,
    k: int = 10,
    kind: str | None = None,
    dense: Callable[[str, int], list[Hit]] | None = None,
) -> list[Hit]:
    """The first ``k`` of the dense and BM25 hits (each ``k`` deep) fused, near-duplicates by corroboration.

    ``dense(query, k)``: the dense search to use (a method's own tool step), ``kb.dense_search`` unless given.
    """
    if k <= 0:
        return []
    dense_hits = dense(query, k) if dense else kb.dense_search(query, k, kind)
    return corroborate(fuse_hits([dense_hits, kb.lexical_search(query, k, kind)]))[:k]
