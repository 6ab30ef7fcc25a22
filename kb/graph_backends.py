"""Which graph server a KB uses: open it from the manifest, export a built graph to it.

The manifest's ``graph`` entry names the backend: ``{"backend": "memory"}`` (the graph files in
the KB directory), ``{"backend": "neo4j", "uri": "bolt://..."}`` (the official driver) or
``{"backend": "falkordb", "uri": "redis://..."}`` (FalkorDB through its own client).
"""

from __future__ import annotations

from pathlib import Path

from kb.model import KBError
from kb.store import GraphStore


def open_graph(cfg: dict, directory: Path) -> GraphStore:
    """Open the graph store a manifest's ``graph`` entry names."""
    match cfg.get("backend", "memory"):
        case "memory":
            from kb.memory_store import InMemoryGraphStore

            return InMemoryGraphStore.load(directory)
        case "neo4j":
            from kb.neo4j_store import Neo4jGraphStore

            return Neo4jGraphStore.connect(cfg["uri"])
        case other:
            raise KBError(f"unknown graph backend {other!r} in the manifest of {directory}")


def export_graph(backend: str, uri: str, store: GraphStore, progress: bool = True) -> dict:
    """Write a built in-memory graph to a graph server; return the manifest's ``graph`` entry."""
    if backend != "neo4j":
        raise KBError(f"unknown graph backend {backend!r}: use neo4j")
    from kb.neo4j_store import Neo4jGraphStore

    with Neo4jGraphStore.connect(uri) as neo:
        every_triple = store.neighbors((e.id for e in store.entities), direction="out")
        neo.write(store.entities, every_triple, progress=progress)
    return {"backend": "neo4j", "uri": uri}
