"""Array-level graph operations behind HydraRAG's path search, for the in-memory graph store.

Each function returns exactly what the generic graph-store code in :mod:`agents.hydrarag.kg`
returns (the same sets, the same names in the same order), computed on the store's integer
edge arrays instead of one ``Triple`` object per edge:

- :func:`within_hops`: entity ids within ``depth`` hops of the seeds (the ego-graph's node set)
  by a vectorised breadth-first frontier over an undirected CSR index;
- :func:`neighbour_groups`: one hop from a set, neighbours grouped by (relation, inverse);
- :func:`first_names`: the first ``k`` names of a set in sorted order and the set's size, from
  a per-KB rank of every entity name (no sort of the whole set).

The indexes are built once per opened store (bounded by ``MAX_STORES``). Other stores (e.g.
Neo4j) return None from :func:`arrays`, and the callers keep the generic code.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from hybridrag.kb.cancel import check_cancelled
from hybridrag.kb.memory_store import InMemoryGraphStore

MAX_STORES = 4  # opened stores whose indexes are kept
_INDEXES: dict[int, tuple[InMemoryGraphStore, Arrays]] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Arrays:
    """Undirected CSR adjacency and the name rank of every entity of one store."""

    store: InMemoryGraphStore
    indptr: np.ndarray
    neighbours: np.ndarray
    name_rank: np.ndarray
    by_rank: np.ndarray
    ids: np.ndarray


def _build(g: InMemoryGraphStore) -> Arrays:
    n = len(g.entities)
    src = np.concatenate([g.heads, g.tails]).astype(np.int64)
    dst = np.concatenate([g.tails, g.heads]).astype(np.int64)
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    by_rank = np.array(sorted(range(n), key=lambda i: g.entities[i].name), dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)
    rank[by_rank] = np.arange(n)
    return Arrays(g, indptr, dst[order], rank, by_rank, np.array([e.id for e in g.entities], dtype=object))


def arrays(graph: object) -> Arrays | None:
    """The indexes of an in-memory store (built on first use), None for any other store."""
    if not isinstance(graph, InMemoryGraphStore):
        return None
    with _LOCK:
        hit = _INDEXES.get(id(graph))
        if hit is None or hit[0] is not graph:
            if len(_INDEXES) >= MAX_STORES:
                _INDEXES.clear()
            hit = (graph, _build(graph))
            _INDEXES[id(graph)] = hit
        return hit[1]


def _gather(a: Arrays, frontier: np.ndarray) -> np.ndarray:
    """Every neighbour (either direction) of the entity indexes in ``frontier``."""
    starts, ends = a.indptr[frontier], a.indptr[frontier + 1]
    sizes = ends - starts
    if not sizes.sum():
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.cumsum(np.concatenate([[0], sizes[:-1]])), sizes)
    return a.neighbours[offsets + np.arange(sizes.sum())]


def within_hops(a: Arrays, seeds: Iterable[str], depth: int) -> list[str]:
    """Ids of the entities within ``depth`` hops of ``seeds`` in either direction, seeds included.

    Each hop marks the frontier's neighbours in a boolean array (no sort); a frontier whose edges
    are more than a quarter of the graph's is expanded over the whole edge array at once (3 hops
    on a dense graph reach most of it).
    """
    g = a.store
    n = len(g.entities)
    idx = np.array([g.index_of[s] for s in dict.fromkeys(seeds) if s in g.index_of], dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[idx] = True
    frontier = idx
    for _ in range(max(0, depth)):
        if not len(frontier):
            break
        check_cancelled()
        degree = a.indptr[frontier + 1] - a.indptr[frontier]
        mark = np.zeros(n, dtype=bool)
        if int(degree.sum()) * 4 > len(a.neighbours):
            inside = np.zeros(n, dtype=bool)
            inside[frontier] = True
            mark[a.neighbours[np.repeat(inside, np.diff(a.indptr))]] = True
        else:
            mark[_gather(a, frontier)] = True
        mark &= ~seen
        frontier = np.flatnonzero(mark)
        seen |= mark
    return a.ids[seen].tolist()


def neighbour_groups(a: Arrays, ends: list[str], seen: set[str]) -> dict[tuple[str, bool], set[str]]:
    """One hop from ``ends``: {(relation, inverse): neighbour ids not in ``seen``}.

    The groups are those the generic expansion builds from out-edges (inverse False) and in-edges
    (inverse True).
    """
    check_cancelled()  # called once per chain of a beam: a stopped run ends here
    g = a.store
    idx = [g.index_of[e] for e in ends if e in g.index_of]
    edges_out, tails = g.edge_ids(idx, direction="out")
    edges_in, heads = g.edge_ids(idx, direction="in")
    blocked = np.zeros(len(g.entities), dtype=bool)
    blocked[[g.index_of[s] for s in seen if s in g.index_of]] = True
    groups: dict[tuple[str, bool], set[str]] = {}
    for edges, nbrs, inverse in ((edges_out, tails, False), (edges_in, heads, True)):
        keep = ~blocked[nbrs]
        rels, nbrs = g.rels[edges[keep]], nbrs[keep]
        if not len(rels):
            continue
        order = np.argsort(rels, kind="stable")
        rels, nbrs = rels[order], nbrs[order]
        cuts = np.flatnonzero(np.diff(rels)) + 1
        for rel, part in zip(rels[np.r_[0, cuts]].tolist(), np.split(nbrs, cuts), strict=True):
            groups[(g.relation_names[rel], inverse)] = set(a.ids[np.unique(part)].tolist())
    return groups


def first_names(a: Arrays, ids: Iterable[str], k: int) -> tuple[list[str], int]:
    """The ``k`` alphabetically first names of the entities ``ids`` and how many there are."""
    g, ids = a.store, list(ids)
    idx = [g.index_of.get(i) for i in ids]
    unknown = [i for i, x in zip(ids, idx, strict=True) if x is None]
    known = np.array([x for x in idx if x is not None], dtype=np.int64)
    ranks = a.name_rank[known]
    if len(ranks) > k:
        ranks = np.partition(ranks, k - 1)[:k] if k > 0 else ranks[:0]
    names = [g.entities[i].name for i in a.by_rank[np.sort(ranks)]]
    if unknown:
        names = sorted(names + unknown)[:k]
    return names, len(idx)


def linked(
    a: Arrays, ids: frozenset[str], relations: tuple[str, ...], inverse: bool, others: frozenset[str]
) -> frozenset[str]:
    """Members of ``ids`` with an edge of ``relations`` into ``others`` (the graph reduction of a joined path).

    Out-edges are read, or in-edges when ``inverse``.
    """
    g = a.store
    idx = [g.index_of[i] for i in sorted(ids) if i in g.index_of]
    edges, nbrs = g.edge_ids(idx, list(relations), direction="in" if inverse else "out")
    target = np.zeros(len(g.entities), dtype=bool)
    target[[g.index_of[o] for o in others if o in g.index_of]] = True
    members = (g.tails if inverse else g.heads)[edges[target[nbrs]]]
    return frozenset(a.ids[np.unique(members)].tolist())
