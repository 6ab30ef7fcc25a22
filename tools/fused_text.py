"""Hybrid text search for any method: dense and BM25 hits fused by reciprocal rank, near-duplicates by corroboration.

The two steps of fusion's text fill (``agents/fusion/text_fill.py`` applies them to its candidates),
over any ranked items, and over the KB's own hits so every method can use them:

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
from typing import TypeVar

from hybridrag.kb.base import Hit, KnowledgeBase
from hybridrag.tools.text import words

T = TypeVar("T")
DUPLICATE_OVERLAP = 0.4  # word Jaccard from which two passages are near-duplicates (best of 0.3/0.4/0.5 in fusion)
_STOP = frozenset(
    "a an the of in on at to for by with from and or is was were are be been it its as he she they his her "
    "their this that which who".split()
)


def fuse_ranked(rankings: Sequence[Sequence[T]], key: Callable[[T], str], constant: int = 0) -> list[T]:
    """The items of ``rankings`` by Σ 1 / (``constant`` + rank), each once, with that sum as its ``score``.

    Ranks start at 1 and count each ``key`` once per ranking (its first occurrence). An item keeps the
    copy of the first ranking that holds it; ties keep the order of first appearance.
    """
    total: dict[str, float] = {}
    first: dict[str, T] = {}
    for ranking in rankings:
        seen: dict[str, T] = {}
        for item in ranking:
            seen.setdefault(key(item), item)
        for rank, item_key in enumerate(seen, 1):
            total[item_key] = total.get(item_key, 0.0) + 1.0 / (constant + rank)
            first.setdefault(item_key, seen[item_key])
    order = sorted(first, key=lambda d: -total[d])  # stable: first appearance on a tie
    return [replace(first[d], score=total[d]) for d in order]  # type: ignore[type-var]


def fuse_hits(rankings: Sequence[Sequence[Hit]], constant: int = 0) -> list[Hit]:
    """The hits of ``rankings`` by reciprocal-rank fusion (one entry per document id)."""
    return fuse_ranked(rankings, lambda h: h.doc.id, constant)


def _groups(passages: list[int], bags: list[frozenset[str]]) -> list[list[int]]:
    """Positions of each group of two or more near-duplicate ``passages`` (linked by word Jaccard)."""
    parent = {i: i for i in passages}

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for n, a in enumerate(passages):
        for b in passages[n + 1 :]:
            if len(bags[a] & bags[b]) >= DUPLICATE_OVERLAP * len(bags[a] | bags[b]):
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for i in passages:
        groups.setdefault(root(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def corroborate_by(items: Sequence[T], text: Callable[[T], str], is_entity: Callable[[T], bool]) -> list[T]:
    """``items`` with each group of near-duplicate passages ordered by corroboration, in the group's places.

    A passage's corroboration is how many of its own words (none of its copies has them) the items
    outside its group hold; the best corroborated goes first, the earlier on a tie. Each item takes the
    ``score`` of the place it moves to, so the scores stay in order.
    """
    bags = [frozenset(words(text(item))) - _STOP for item in items]
    out = list(items)
    passages = [i for i, item in enumerate(items) if not is_entity(item) and bags[i]]
    for group in _groups(passages, bags):
        outside = frozenset().union(*(b for i, b in enumerate(bags) if i not in group))

        def support(i: int, group: list[int] = group, outside: frozenset[str] = outside) -> int:
            return len((bags[i] - frozenset().union(*(bags[j] for j in group if j != i))) & outside)

        for place, i in zip(group, sorted(group, key=lambda i: (-support(i), i)), strict=True):
            out[place] = replace(items[i], score=items[place].score)  # type: ignore[type-var,attr-defined]
    return out


def corroborate(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with each group of near-duplicate passages ordered by corroboration."""
    return corroborate_by(hits, lambda h: h.doc.text, lambda h: h.doc.kind == "entity")


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
