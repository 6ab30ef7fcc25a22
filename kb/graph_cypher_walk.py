"""Walks over a Cypher store built from its one-hop reads: the ego graph and simple paths between sets.

:class:`~kb.graph_cypher_store.CypherGraphStore` delegates :meth:`ego_graph` and :meth:`paths` here.
The ego graph expands a whole frontier per hop (one request, or one per message-sized chunk); paths
are found by one server query per chunk of sources and targets. Ids are sent as digest keys only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from hybridrag.kb import neo4j_cypher as cy
from hybridrag.kb.graph_write import batches, message_bytes
from hybridrag.kb.model import KBError, Subgraph, Triple

if TYPE_CHECKING:
    from hybridrag.kb.graph_session import CypherSession
    from hybridrag.kb.store import Direction

    class WalkSession(CypherSession, Protocol):
        """A Cypher store as the walks see it: its session plus keyed edge and triple reads."""

        def _keyed(self, ids: Iterable[str]) -> dict[str, str]: ...

        def _triples(self, recs: list[dict[str, Any]], known: dict[str, str]) -> list[Triple]: ...

        def _edges(
            self, ids: Iterable[str], relations: Sequence[str] | None, direction: Direction
        ) -> list[tuple[str, Triple, str]]: ...


def ego_graph(store: WalkSession, ids: Iterable[str], radius: int, relations: Sequence[str] | None) -> Subgraph:
    """Breadth-first expansion from the known ``ids``, one edge read per hop."""
    keyed = store._keyed(ids)
    found = {r["key"] for r in store._by_keys(cy.EXISTING, list(keyed))}
    seeds = [i for k, i in keyed.items() if k in found]
    dist = {i: 0 for i in seeds}
    parent: dict[str, Triple] = {}
    seen: dict[Triple, None] = {}
    frontier = seeds
    for d in range(radius):
        if not frontier:
            break
        order = {n: k for k, n in enumerate(frontier)}
        edges = sorted(
            store._edges(frontier, relations, "both"),
            key=lambda e: (order[e[0]], e[1].head != e[0], e[1].type, e[2]),
        )
        nxt: list[str] = []
        for _, t, other in edges:
            seen[t] = None
            if other not in dist:
                dist[other] = d + 1
                parent[other] = t
                nxt.append(other)
        frontier = nxt
    return Subgraph(seeds=seeds, distance=dist, parent=parent, triples=list(seen))


def paths(
    store: WalkSession, sources: Iterable[str], targets: Iterable[str], max_hops: int, limit: int
) -> list[list[Triple]]:
    """Up to ``limit`` simple undirected paths of at most ``max_hops`` hops, shortest first.

    Under a message cap, sources and targets are sent in chunks; a path through a target of
    another chunk is then dropped afterwards, so such a call may return fewer than ``limit``.
    """
    if int(max_hops) < 1 or limit < 1:
        return []
    query = cy.paths(int(max_hops))
    tgt, src = store._keyed(targets), store._keyed(sources)
    cap = store.max_message_bytes
    room = cap and (cap - message_bytes(query, {"sources": [], "targets": [], "limit": int(limit)})) // 2
    if cap and room < 40:
        raise KBError(f"message cap {cap} bytes is too small for a path query to {store.uri}")
    raw: list[list[list[str]]] = []
    for t_chunk, _ in batches(list(tgt), 5000, room, 0):
        for s_chunk, _ in batches(list(src), 5000, room, 0):
            params = {"sources": s_chunk, "targets": t_chunk, "limit": int(limit)}
            raw.extend(r["path"] for r in store._query(query, params))
    steps = [{"head": h, "rel": rel, "tail": t} for path in raw for h, rel, t in path]
    flat = iter(store._triples(steps, {**src, **tgt}))
    found: dict[tuple[Triple, ...], None] = {}
    for path in raw:
        trip = tuple(next(flat) for _ in path)
        inner = {x for a, b in zip(trip, trip[1:], strict=False) for x in {a.head, a.tail} & {b.head, b.tail}}
        if not inner & set(tgt.values()):  # ends at the first target, also across chunks
            found.setdefault(trip, None)
    return [list(p) for p in sorted(found, key=len)][:limit]
