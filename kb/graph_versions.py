"""Graph-server builds versioned like in-memory ones: a graph per build, named from the KB and the build.

Each ingest that exports to a server writes a new graph the live KB does not read, and the manifest of
the new build points at it; swapping the KB directory's ``current`` is the commit, and a graph is
dropped only with the last build that uses it (:func:`kb.kb_dir.remove_old_builds`).

- FalkorDB's client: graph ``<prefix>.<build id>``; the prefix is the URI's ``?graph=NAME`` or
  ``hybridrag_<KB id>``. A ``?graph=`` name belongs to the KB directory that first used it: another
  KB directory naming it is refused unless every KB using it adds ``&shared=1`` (their builds still
  write separate graphs; the flag only says the name is shared on purpose).
- Bolt (Neo4j, FalkorDB's Bolt layer): one database, so a label namespace ``k<KB id>_<build id>``
  (:mod:`kb.graph_namespace`); two KB directories never share one.

The KB id is a random token kept in the KB directory (:func:`kb.kb_dir.kb_id`); every build graph
records it, with the KB path and the build id, on its ``:HybridragMeta`` node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridrag.kb.graph_timeouts import redact
from hybridrag.kb.model import KBError

BUILD_SUFFIX = r"\.\d{8}T\d{6}\.\d{6}-[0-9a-f]{6}"  # ".<build id>" as kb.kb_dir.new_build_dir makes it


@dataclass(frozen=True)
class GraphTarget:
    """Where one build's graph goes: its manifest ``graph`` entry and who owns it."""

    entry: dict[str, Any]
    owner: dict[str, Any] = field(default_factory=dict)
    prefix: str | None = None  # an operator-chosen FalkorDB graph name (ownership is checked)


def plan_target(backend: str, uri: str, kb_id: str, kb_path: Path, build_id: str) -> GraphTarget:
    """The graph (or namespace) a new build ``build_id`` of KB ``kb_id`` writes; nothing is sent yet."""
    owner = {"kb": kb_id, "kb_path": str(Path(kb_path).resolve()), "build": build_id, "shared": False}
    if backend == "neo4j":
        from hybridrag.kb.graph_namespace import check_namespace

        ns = check_namespace(f"k{kb_id[:8]}_{re.sub(r'[^A-Za-z0-9]', '_', build_id)}")
        return GraphTarget({"backend": "neo4j", "uri": uri, "namespace": ns}, owner)
    if backend == "falkordb":
        from hybridrag.kb.falkordb_store import check_graph_name, uri_options

        url, name, shared = uri_options(uri)
        prefix = check_graph_name(name) if name else f"hybridrag_{kb_id[:12]}"
        graph = check_graph_name(f"{prefix}.{build_id}")
        return GraphTarget(
            {"backend": "falkordb", "uri": url, "graph": graph}, {**owner, "shared": shared}, prefix if name else None
        )
    raise KBError(f"unknown graph backend {backend!r}: use neo4j or falkordb")


def check_prefix_owner(target: GraphTarget, own_graphs: set[str]) -> None:
    """Refuse a ``?graph=`` name another KB directory uses unless both sides say ``&shared=1``.

    ``own_graphs``: the graphs this KB directory's builds point at (an older layout's graph named
    exactly like the prefix counts as this KB's when one of them does).
    """
    if target.prefix is None:
        return
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore
    from hybridrag.kb.graph_write import read_owner

    url, prefix, me = target.entry["uri"], target.prefix, target.owner
    same = re.compile(re.escape(prefix) + f"(?:{BUILD_SUFFIX})?$")
    with FalkorDBGraphStore(url, prefix) as probe:
        names = [n for n in probe.list_graphs() if same.match(n) and n not in own_graphs]
    latest: dict[str | None, tuple[str, dict | None]] = {}  # per other KB: its newest graph decides
    for name in sorted(names):  # build ids sort by time
        with FalkorDBGraphStore(url, name) as other:
            owner = read_owner(other)
        if owner is None or owner["kb"] != me["kb"]:
            latest[owner["kb"] if owner else None] = (name, owner)
    for name, owner in latest.values():
        if owner is not None and owner["shared"] and me["shared"]:
            continue
        who = f"KB directory {owner['kb_path']}" if owner else "an older hybridrag or another program"
        raise KBError(
            f"FalkorDB graph name {prefix!r} at {redact(url)} is used by another KB directory "
            f"(graph {name!r}, written by {who}); choose another ?graph= name, or add &shared=1 "
            "to the URI of every KB that should share it"
        )
