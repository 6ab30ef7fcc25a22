"""MoR's structural step and per-layer text matches as array operations (ours: the same result, sub-linear in KB size).

:func:`agents.mor.traversal._structural` reads the triples around a layer one by one and keeps,
per neighbour, the best trajectory reaching it. On the in-memory store with BM25 matching,
:func:`structural` does the same over the store's edge arrays: every (parent, child, edge)
candidate at once, the child's textual score from a per-KB entity → document-row index, the best
parent per child by the trajectory key (anchored, length, summed ``tf``; ties: the first edge in
the store's order, as the loop keeps it), and only the trajectories it keeps are built. When the
caller caps the layer, only the ``limit`` best children are built (the cap's own order).

:func:`top_of` is :meth:`agents.mor.matching.LayerScores.top` with the category test on integer
codes of the document rows (cached per KB) instead of ``np.isin`` over their type strings, which
was the traversal's largest cost growing with the KB, and only the best rows sorted (all rows
scoring at least the ``TOP_ROWS``·k-th best, ties included, more when they hold fewer than k
entities), not every matching row.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable

import numpy as np

from hybridrag.agents.mor.matching import LayerScores, doc_table
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.memory_store import InMemoryGraphStore

EDGES = ("struct", "mention")
TOP_ROWS = 4  # text rows ranked per wanted entity before ranking more (an entity can have several rows)
_entity_codes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store → (type → code, code per entity)
_entity_rows: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # kb → (indptr, doc rows) per entity index
_row_codes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # kb → (type → code, code per doc row)


def applies(kb: KnowledgeBase, scores: LayerScores) -> bool:
    """Whether the array path serves this KB and matcher (in-memory store, BM25); else the loop runs."""
    return isinstance(kb.graph, InMemoryGraphStore) and scores.matcher == "bm25"


def _codes(types: Iterable[str]) -> tuple[dict[str, int], np.ndarray]:
    names: dict[str, int] = {}
    return names, np.fromiter((names.setdefault(t, len(names)) for t in types), dtype=np.int32)


def entity_codes(store: InMemoryGraphStore) -> tuple[dict[str, int], np.ndarray]:
    """Type name → code, and the code of each entity index of the store (built once per store)."""
    got = _entity_codes.get(store)
    if got is None:
        got = _entity_codes[store] = _codes(e.type for e in store.entities)
    return got


def entity_rows(kb: KnowledgeBase) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, rows): the document rows of each entity index of ``kb.graph`` (built once per KB)."""
    got = _entity_rows.get(kb)
    if got is None:
        store, rows_of = kb.graph, doc_table(kb).rows_of
        counts = np.zeros(len(store.entities) + 1, np.int64)
        order = [(store.index_of[e], rows) for e, rows in rows_of.items() if e in store.index_of]
        order.sort()
        for i, rows in order:
            counts[i + 1] = len(rows)
        flat = [r for _, rows in order for r in rows]
        got = _entity_rows[kb] = (np.cumsum(counts), np.asarray(flat, np.int64))
    return got


def entity_scores(kb: KnowledgeBase, scores: LayerScores, idx: np.ndarray) -> np.ndarray:
    """``scores.of`` of each entity index in ``idx``, rounded as a trajectory step stores it."""
    ptr, rows = entity_rows(kb)
    start, stop = ptr[idx], ptr[idx + 1]
    out = np.zeros(len(idx), np.float64)
    has = stop > start
    if has.any():
        lens = (stop - start)[has]
        begin = np.cumsum(lens) - lens  # where each entity's rows start in the gathered list
        flat = rows[np.repeat(start[has] - begin, lens) + np.arange(lens.sum())]
        best = np.maximum.reduceat(scores.rows[flat], begin)
        out[has] = best.astype(np.float64) / scores.scale
    return np.asarray([round(float(v), 6) for v in out.tolist()], np.float64)


def top_of(kb: KnowledgeBase, scores: LayerScores, categories: list[str] | None, k: int) -> list[tuple[str, float]]:
    """Top-``k`` entities of ``categories`` (all when None) with normalised scores, as ``LayerScores.top``."""
    table = scores.table
    got = _row_codes.get(kb)
    if got is None:
        got = _row_codes[kb] = _codes(table.row_type.tolist())
    names, codes = got
    cand = np.flatnonzero(scores.rows > 0) if scores.matcher == "bm25" else np.flatnonzero(~np.isnan(scores.rows))
    cand = cand[table.has_entity[cand]]
    if categories is not None:
        cand = cand[np.isin(codes[cand], [names[c] for c in categories if c in names])]
    vals = scores.rows[cand]
    m = max(k, 1) * TOP_ROWS
    while True:  # the best rows first; more when they hold fewer than k entities
        part = len(cand) > m
        sel = np.flatnonzero(vals >= np.partition(vals, len(vals) - m)[len(vals) - m]) if part else np.arange(len(cand))
        got = _distinct(table.row_entity, cand[sel[np.lexsort((sel, -vals[sel]))]], scores, k)
        if len(got) >= k or not part:
            return list(got.items())
        m *= 4


def _distinct(row_entity: list, rows: np.ndarray, scores: LayerScores, k: int) -> dict[str, float]:
    """The first ``k`` distinct entities of ``rows`` (best first) with their normalised scores."""
    out: dict[str, float] = {}
    for r in rows.tolist():
        eid = row_entity[r]
        if eid not in out:
            out[eid] = float(scores.rows[r]) / scores.scale
            if len(out) >= k:
                break
    return out


def _parents(store: InMemoryGraphStore, current: dict[str, list[dict]]) -> tuple:
    """Trajectories of ``current`` in the store, and their entity index, anchored-if-extended, length, summed ``tf``."""
    keep = [(store.index_of[e], t) for e, t in current.items() if e in store.index_of]
    idx = np.asarray([i for i, _ in keep], np.int64)
    root = np.asarray(
        [bool(t[0].get("topic")) and all(s["via"] in EDGES for s in t[1:]) for _, t in keep], np.int8
    ).reshape(-1)
    length = np.asarray([len(t) for _, t in keep], np.int64).reshape(-1)
    total = np.asarray([sum(s["tf"] for s in t) for _, t in keep], np.float64).reshape(-1)
    return [t for _, t in keep], idx, root, length, total


def _candidates(store: InMemoryGraphStore, idx: np.ndarray, category: str, relations: list[str]) -> tuple:
    """Every (order, parent position in ``idx``, child, edge) the loop would visit, in its order, type-filtered."""
    edges, _ = store.edge_ids(idx.tolist(), relations, "both")
    heads, tails, rels = store.heads[edges].astype(np.int64), store.tails[edges].astype(np.int64), store.rels[edges]
    roles = store.schema().relation_types
    none: tuple[str, ...] = ()
    ends = [(roles[r].head_types, roles[r].tail_types) if r in roles else (none, none) for r in store.relation_names]
    plays = np.asarray([[category in h, category in t] for h, t in ends], dtype=bool).reshape(-1, 2)
    names, codes = entity_codes(store)
    at_of = np.full(len(store.entities), -1, np.int64)  # entity index → its position in ``idx`` (-1: not a parent)
    at_of[idx] = np.arange(len(idx))
    n = len(edges)
    parent, child = np.concatenate([heads, tails]), np.concatenate([tails, heads])
    is_tail = np.concatenate([np.ones(n, np.int64), np.zeros(n, np.int64)])
    at = at_of[parent]
    ok = (at >= 0) & (parent != child)
    ok &= (codes[child] == names.get(category, -1)) | plays[np.concatenate([rels, rels]), is_tail]
    pos = np.arange(n, dtype=np.int64)
    order = np.concatenate([2 * pos, 2 * pos + 1])
    edge = np.concatenate([edges, edges])
    return order[ok], at[ok], child[ok], edge[ok]


def _first_best(starts: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
    """Per group (``starts`` of contiguous groups), the position of its first element with the greatest ``keys``.

    ``keys`` are compared in turn, as a tuple; elements of a group are in the order ties go by.
    """
    size = len(keys[0])
    sizes = np.diff(np.r_[starts, size])
    alive = np.ones(size, bool)
    for k in keys:
        masked = np.where(alive, k, -np.inf)
        alive &= masked == np.repeat(np.maximum.reduceat(masked, starts), sizes)
    return -np.maximum.reduceat(np.where(alive, -np.arange(size), -size), starts)


def structural(
    kb: KnowledgeBase,
    current: dict[str, list[dict]],
    category: str,
    relations: list[str],
    scores: LayerScores,
    limit: int | None = None,
    keep_unanchored: bool = False,
) -> tuple[dict[str, list[dict]], int, bool]:
    """Neighbours of ``current`` of ``category`` along ``relations`` with their best trajectories.

    Returns:
        (child id → trajectory, in first-reached order or, when more than ``limit`` children were
        found, the ``limit`` best in the cap's order, unless none is anchored and
        ``keep_unanchored``; how many children were found; whether any found trajectory is anchored).
    """
    store: InMemoryGraphStore = kb.graph  # type: ignore[assignment]
    parents, idx, root, length, total = _parents(store, current)
    order, at, child, edge = _candidates(store, idx, category, relations)
    if not len(order):
        return {}, 0, False
    o = np.argsort(child * (2 * len(store.heads) + 2) + order)  # by child, then the loop's order
    order, at, child, edge = order[o], at[o], child[o], edge[o]
    starts = np.flatnonzero(np.r_[True, child[1:] != child[:-1]])
    kids, reached = child[starts], order[starts]
    tf = entity_scores(kb, scores, kids)
    c_root, c_len = root[at].astype(np.float64), (length[at] + 1).astype(np.float64)
    c_sum = total[at] + np.repeat(tf, np.diff(np.r_[starts, len(child)]))
    win = _first_best(starts, [c_root, c_len, c_sum])  # per child (ascending), its winning candidate
    anchors = bool(c_root[win].any())
    rank = np.argsort(reached, kind="stable")
    if limit is not None and len(win) > limit and (anchors or not keep_unanchored):
        rank = np.lexsort((reached, -c_sum[win], -c_len[win], -c_root[win]))[:limit]
    ents, rel_names = store.entities, store.relation_names
    out: dict[str, list[dict]] = {}
    for k in rank.tolist():
        w, cid = win[k], ents[kids[k]].id
        e = int(edge[w])
        triple = [ents[store.heads[e]].id, rel_names[store.rels[e]], ents[store.tails[e]].id]
        step = {"id": cid, "type": category, "via": "struct", "edge": triple, "tf": float(tf[k])}
        out[cid] = [*parents[at[w]], step]
    return out, len(win), anchors
