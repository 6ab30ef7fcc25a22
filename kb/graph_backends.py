"""Which graph server a KB uses: open it from the manifest, export a built graph to it, drop it.

The manifest's ``graph`` entry names the backend: ``{"backend": "memory"}`` (the graph files in
the KB directory), ``{"backend": "neo4j", "uri": "bolt://...", "namespace": NS}`` (the official
driver, also FalkorDB's Bolt layer; the build's label namespace, :mod:`kb.graph_namespace`) or
``{"backend": "falkordb", "uri": "redis://host:port", "graph": NAME}`` (FalkorDB through its own
client). Entries without a namespace (Neo4j) or with any graph name (FalkorDB) written by earlier
versions are still read.

An ingest exports each build to a graph of its own (:mod:`kb.graph_versions`), so a re-ingest never
changes the graph a live KB is reading; :func:`drop_graph` removes one no build uses any more.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from hybridrag.kb.graph_timeouts import redact
from hybridrag.kb.graph_versions import GraphTarget, check_prefix_owner
from hybridrag.kb.model import KBError
from hybridrag.kb.store import GraphStore

BACKENDS = ("neo4j", "falkordb")


def open_graph(cfg: dict, directory: Path) -> GraphStore:
    """Open the graph store a manifest's ``graph`` entry names."""
    match cfg.get("backend", "memory"):
        case "memory":
            from hybridrag.kb.memory_store import InMemoryGraphStore

            return InMemoryGraphStore.load(directory)
        case "neo4j":
            from hybridrag.kb.neo4j_store import Neo4jGraphStore

            ns = cfg.get("namespace")
            return Neo4jGraphStore.connect(cfg["uri"], namespace=ns, must_exist=ns is not None)
        case "falkordb":
            from hybridrag.kb.falkordb_store import FalkorDBGraphStore

            return FalkorDBGraphStore.connect(cfg["uri"], cfg.get("graph"), must_exist=True)
        case other:
            raise KBError(f"unknown graph backend {other!r} in the manifest of {directory}")


def export_graph(
    backend: str,
    uri: str,
    store: GraphStore,
    progress: bool = True,
    target: GraphTarget | None = None,
    own_graphs: frozenset[str] = frozenset(),
) -> dict:
    """Write a built in-memory graph to a graph server; return the manifest's ``graph`` entry.

    With a ``target`` (an ingest: :func:`kb.graph_versions.plan_target`) the graph goes to the
    build's own graph or namespace, after the ``?graph=`` name's ownership is checked (``own_graphs``:
    the graphs of this KB's builds). Without one: Neo4j's plain labels (merged into what is there), or
    the FalkorDB graph the URI names (emptied first) or a new random one.
    """
    if backend not in BACKENDS:
        raise KBError(f"unknown graph backend {backend!r}: use {' or '.join(BACKENDS)}")
    every_triple = store.neighbors((e.id for e in store.entities), direction="out")  # type: ignore[attr-defined]
    if target is not None:
        from hybridrag.kb.graph_cypher_store import check_relation_type

        for rel in {t.type for t in every_triple}:  # before anything is written or claimed
            check_relation_type(rel)
        check_prefix_owner(target, set(own_graphs))
        with _open_target(target.entry) as server:
            server.write(store.entities, every_triple, progress=progress, owner=target.owner)  # type: ignore[attr-defined]
        return target.entry
    if backend == "neo4j":
        from hybridrag.kb.neo4j_store import Neo4jGraphStore

        with Neo4jGraphStore.connect(uri) as neo:
            neo.write(store.entities, every_triple, progress=progress)  # type: ignore[attr-defined]
        return {"backend": "neo4j", "uri": uri}
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore, split_uri

    url, name = split_uri(uri)
    name = name or f"hybridrag_{uuid.uuid4().hex[:12]}"
    with FalkorDBGraphStore(url, name) as falkor:
        falkor.drop()
        falkor.write(store.entities, every_triple, progress=progress)  # type: ignore[attr-defined]
    return {"backend": "falkordb", "uri": url, "graph": name}


def _open_target(entry: dict):
    """A write handle on a build's graph or namespace (no format check: it is new)."""
    if entry["backend"] == "neo4j":
        from hybridrag.kb.neo4j_store import Neo4jGraphStore

        return Neo4jGraphStore.connect(entry["uri"], namespace=entry["namespace"], check=False)
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore

    return FalkorDBGraphStore(entry["uri"], entry["graph"])


def check_reachable(backend: str, uri: str) -> None:
    """Raise :class:`GraphUnavailableError` (one line) unless the graph server at ``uri`` answers.

    An ingest asks before it parses and embeds, so a server that is down costs seconds, not a build.
    """
    if backend == "neo4j":
        from hybridrag.kb.neo4j_store import Neo4jGraphStore

        Neo4jGraphStore.connect(uri, check=False).close()
        return
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore

    with FalkorDBGraphStore(uri, None) as falkor:
        falkor.list_graphs()


def graph_exists(cfg: dict) -> bool:
    """True when the server still holds the graph (or namespace) of a manifest ``graph`` entry."""
    if cfg.get("backend") == "falkordb":
        from hybridrag.kb.falkordb_store import FalkorDBGraphStore

        with FalkorDBGraphStore(cfg["uri"], cfg.get("graph")) as falkor:
            return falkor.graph_name in falkor.list_graphs()
    if cfg.get("backend") == "neo4j" and cfg.get("namespace"):
        from hybridrag.kb.graph_namespace import namespace_exists

        with _open_target(cfg) as neo:
            return namespace_exists(neo, cfg["namespace"])
    return cfg.get("backend", "memory") != "memory"  # plain Neo4j labels: cannot tell one KB's from another's


def drop_graph(cfg: dict) -> None:
    """Delete the server-side graph (or namespace) of a manifest ``graph`` entry.

    A Neo4j entry without a namespace (written before builds had one) is left alone: its plain labels
    may hold other KBs' graphs too, so that is a KBError saying so.
    """
    if cfg.get("backend") == "falkordb":
        from hybridrag.kb.falkordb_store import FalkorDBGraphStore

        with FalkorDBGraphStore(cfg["uri"], cfg.get("graph")) as falkor:
            falkor.drop()
    elif cfg.get("backend") == "neo4j":
        if not cfg.get("namespace"):
            raise KBError(
                f"the graph at {redact(cfg['uri'])} has no namespace (an older ingest); left in place: "
                "delete its :Entity nodes yourself when no KB uses them"
            )
        with _open_target(cfg) as neo:
            neo.clear()
