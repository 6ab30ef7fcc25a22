"""Which graph server a KB uses: open it from the manifest, export a built graph to it.

The manifest's ``graph`` entry names the backend: ``{"backend": "memory"}`` (the graph files in
the KB directory), ``{"backend": "neo4j", "uri": "bolt://..."}`` (the official driver; also FalkorDB's
Bolt layer) or ``{"backend": "falkordb", "uri": "redis://host:port", "graph": NAME}`` (FalkorDB
through its own client).

An export to FalkorDB writes a graph of its own: the ``graph`` parameter of the URI
(``redis://host:port?graph=NAME``, emptied first) or a new ``hybridrag_<random>`` name, so a re-ingest
never changes the graph a live KB is reading; :func:`drop_graph` removes one no longer needed.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from kb.model import KBError
from kb.store import GraphStore

BACKENDS = ("neo4j", "falkordb")


def open_graph(cfg: dict, directory: Path) -> GraphStore:
    """Open the graph store a manifest's ``graph`` entry names."""
    match cfg.get("backend", "memory"):
        case "memory":
            from kb.memory_store import InMemoryGraphStore

            return InMemoryGraphStore.load(directory)
        case "neo4j":
            from kb.neo4j_store import Neo4jGraphStore

            return Neo4jGraphStore.connect(cfg["uri"])
        case "falkordb":
            from kb.falkordb_store import FalkorDBGraphStore

            return FalkorDBGraphStore.connect(cfg["uri"], cfg.get("graph"), must_exist=True)
        case other:
            raise KBError(f"unknown graph backend {other!r} in the manifest of {directory}")


def export_graph(backend: str, uri: str, store: GraphStore, progress: bool = True) -> dict:
    """Write a built in-memory graph to a graph server; return the manifest's ``graph`` entry."""
    every_triple = store.neighbors((e.id for e in store.entities), direction="out")  # type: ignore[attr-defined]
    if backend == "neo4j":
        from kb.neo4j_store import Neo4jGraphStore

        with Neo4jGraphStore.connect(uri) as neo:
            neo.write(store.entities, every_triple, progress=progress)  # type: ignore[attr-defined]
        return {"backend": "neo4j", "uri": uri}
    if backend == "falkordb":
        from kb.falkordb_store import FalkorDBGraphStore, split_uri

        url, name = split_uri(uri)
        name = name or f"hybridrag_{uuid.uuid4().hex[:12]}"
        with FalkorDBGraphStore(url, name) as falkor:
            falkor.drop()
            falkor.write(store.entities, every_triple, progress=progress)  # type: ignore[attr-defined]
        return {"backend": "falkordb", "uri": url, "graph": name}
    raise KBError(f"unknown graph backend {backend!r}: use {' or '.join(BACKENDS)}")


def drop_graph(cfg: dict) -> None:
    """Delete the server-side graph of a manifest ``graph`` entry (FalkorDB only; others: nothing)."""
    if cfg.get("backend") == "falkordb":
        from kb.falkordb_store import FalkorDBGraphStore

        with FalkorDBGraphStore(cfg["uri"], cfg.get("graph")) as falkor:
            falkor.drop()
