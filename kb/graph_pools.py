"""Nodes' edge pools read from a Cypher server in one request: SSRAG's walk asks for a hop's nodes at once.

A pool is what SSRAG's graph branch scores for a node (:func:`agents.ssrag.facts.pool_of`): every
edge of a node with at most ``limit`` of them, the first ``limit`` by (relation, head id, tail id)
for a hub. :func:`node_pools` asks the server once for the degree, the name and, below the limit,
every edge of all the nodes (the other end's id and name come along), and once more per hub for its
first ``limit`` edges, cut and ordered on the server; a hub's edges never cross the wire whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hybridrag.kb import graph_read as rd
from hybridrag.kb import neo4j_cypher as cy
from hybridrag.kb.model import Triple

if TYPE_CHECKING:
    from hybridrag.kb.graph_session import CypherSession


def node_pools(store: CypherSession, keyed: dict[str, str], limit: int) -> dict[str, list[Triple]]:
    """Pools of the nodes ``keyed`` (digest key → id), by id; unknown ids are left out.

    A hub's pool is sorted by (relation, head, tail); a smaller node's edges come in the server's order.
    """
    if not keyed:
        return {}
    recs = [
        r for r in store._by_keys(cy.node_edges(store.max_record_chars), list(keyed), limit=limit) if r["src"] in keyed
    ]
    known = dict(keyed)
    rd.other_ends(store, recs, known)
    degree: dict[str, int] = {}
    for r in recs:
        if r["src"] not in degree:
            degree[r["src"]] = r["n"]
            rd.remember_name(store, keyed[r["src"]], r.get("src_name"), r.get("src_name_n"))
    edges = [r for r in recs if r["rel"] is not None and degree[r["src"]] <= limit]
    ids = _resolve(store, [r["other"] for r in edges], known)
    out: dict[str, list[Triple]] = {keyed[k]: [] for k in degree}
    for r in edges:
        here, there = keyed[r["src"]], ids[r["other"]]
        out[here].append(Triple(here, r["rel"], there) if r["out"] else Triple(there, r["rel"], here))
    for key in (k for k, n in degree.items() if n > limit):
        out[keyed[key]] = _first_edges(store, key, keyed[key], limit)
    return out


def _first_edges(store: CypherSession, key: str, node: str, limit: int) -> list[Triple]:
    """A hub's first ``limit`` edges by (relation, head id, tail id), ordered and cut on the server."""
    recs: list[dict[str, Any]] = store._query(cy.first_edges(store.max_record_chars), {"key": key, "limit": limit})
    known = {key: node}
    rd.other_ends(store, recs, known)
    ids = _resolve(store, [k for r in recs for k in (r["head"], r["tail"])], known)
    return sorted(
        (Triple(ids[r["head"]], r["rel"], ids[r["tail"]]) for r in recs), key=lambda t: (t.type, t.head, t.tail)
    )


def _resolve(store: CypherSession, keys: list[str], known: dict[str, str]) -> dict[str, str]:
    """Ids of ``keys``: ``known`` ones, the others (an id cut to the record cap) from the cache or the server."""
    need = [k for k in keys if k not in known]
    return {**rd.ids(store, need), **known} if need else known
