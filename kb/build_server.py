"""The graph-server side of a KB build: export a build's graph, drop the graphs no build uses.

A build that exports to a graph server writes into a graph (or namespace) of its own
(:mod:`kb.graph_versions`); the target is recorded in the partial build before anything is
sent, so a killed export's graph is found and dropped by the next ingest.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from hybridrag.kb.kb_dir import PARTIAL, kb_id, partial_target, record_target, server_graphs
from hybridrag.kb.memory_store import InMemoryGraphStore

log = logging.getLogger(__name__)


def drop_unused_graph(entry: dict, warnings: list[str]) -> bool:
    """Delete a graph-server graph no build uses; a failure is a warning, not an error. True when dropped."""
    from hybridrag.kb.graph_backends import drop_graph
    from hybridrag.kb.graph_timeouts import redact

    try:
        drop_graph(entry)
    except Exception as exc:  # noqa: BLE001 - the live build is intact; a leftover graph is not fatal
        shown = {**entry, "uri": redact(str(entry.get("uri", "")))}
        warnings.append(f"could not drop the unused graph {shown}: {type(exc).__name__}: {exc}")
        return False
    return True


def discard_build(partial: Path) -> None:
    """Remove a failed build and the server graph it exported to (noted for the next ingest if that fails)."""
    target = partial_target(partial)
    shutil.rmtree(partial, ignore_errors=True)
    failed: list[str] = []
    if target is not None and not drop_unused_graph(target, failed):
        partial.mkdir(parents=True, exist_ok=True)  # the next ingest retries the drop
        record_target(partial, target)
        log.warning("%s", failed[0])


def export_build(root: Path, out: Path, backend: str, uri: str, store: InMemoryGraphStore, progress: bool) -> dict:
    """Export the graph to a server graph of this build's own; return the manifest's ``graph`` entry."""
    from hybridrag.kb.graph_backends import export_graph
    from hybridrag.kb.graph_versions import plan_target

    target = plan_target(backend, uri, kb_id(root), root, out.name.removesuffix(PARTIAL))
    record_target(out, target.entry)  # before anything is sent: a killed export's graph gets dropped
    return export_graph(backend, uri, store, progress=progress, target=target, own_graphs=server_graphs(root))
