"""Build a KB directory: graph, text indexes and a manifest, with progress bars.

Stages, each recorded in the stage marker (:mod:`kb.ingest_state`): ``parse`` (read and check
the inputs), ``graph`` (assemble and save the graph), ``embeddings`` (in chunks saved as they
finish, :mod:`kb.embed_chunks`), ``indexes`` (document table, BM25, FAISS); then the optional
export to a graph server (into a graph or namespace of the build's own, :mod:`kb.graph_versions`),
the manifest, and the swap that makes the build live (:func:`kb.kb_dir.commit_build`).
Everything is written into a partial build folder under the directory's ingest lock, so a kill
at any point leaves the previous build live (or, on a first ingest, a directory every command
refuses as incomplete), and a re-run embeds only the chunks the killed run had not finished.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hybridrag.kb.build import assemble, gc_paused
from hybridrag.kb.build_server import discard_build, drop_unused_graph, export_build
from hybridrag.kb.embeddings import DEFAULT_EMBEDDINGS, get_embeddings
from hybridrag.kb.ingest_inputs import Inputs, parse_inputs
from hybridrag.kb.ingest_state import StageMarker, ingest_lock
from hybridrag.kb.kb_dir import (
    FORMAT_VERSION,
    MANIFEST,
    PARTIAL,
    commit_build,
    new_build_dir,
    remove_old_builds,
    remove_partial_builds,
    work_dir,
)
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Entity, KBError, Passage
from hybridrag.kb.text_index import BM25Index, DenseIndex, Doc, save_docs
from hybridrag.kb.type_inference import infer_type_map
from hybridrag.kb.vector_reuse import embed_new, embed_reusing, previous_vectors

__all__ = ["FORMAT_VERSION", "IngestReport", "build_graph", "entity_doc_text", "ingest"]
log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What an ingest wrote and how long each stage took (seconds)."""

    directory: Path
    counts: dict[str, int]
    seconds: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    build_dir: Path | None = None
    embed_chunks: int = 0
    embed_chunks_reused: int = 0


def entity_doc_text(e: Entity) -> str:
    """Text indexed for an entity: its name, then its document when it has one."""
    return f"{e.name}: {e.text}" if e.text else e.name


def infer_types(inputs: Inputs) -> dict[str, list[str]]:
    """Give untyped triples the types of :mod:`kb.type_inference` (none given by a type map or an entity row).

    Returns:
        The inferred relation -> [head type, tail type] map ({} when the inputs carried types).
    """
    if not inputs.triples or inputs.type_map or any(e.type for e in inputs.entities.values()):
        return {}
    inputs.type_map = infer_type_map((t.head, t.type, t.tail) for t in inputs.triples)
    kinds = sorted({x for pair in inputs.type_map.values() for x in pair})
    inputs.warnings.append(f"no entity types given: inferred {len(kinds)} from the relations ({', '.join(kinds)})")
    return {rel: list(pair) for rel, pair in sorted(inputs.type_map.items())}


def _assemble(inputs: Inputs, allow_empty: bool) -> InMemoryGraphStore:
    if not inputs.triples and not inputs.entities and not allow_empty:
        raise KBError("no triples and no entities found in the input files")
    with gc_paused():  # the store's id/name tables: hundreds of thousands of acyclic objects
        return InMemoryGraphStore(*assemble(inputs.triples, inputs.entities, inputs.type_map))


def build_graph(
    out: Path,
    triples: Sequence[str | Path],
    entities: str | Path | None = None,
    type_map: str | Path | dict | None = None,
    progress: bool = True,
    allow_empty: bool = False,
) -> InMemoryGraphStore:
    """Parse triples (and entity documents), assemble the in-memory store and save it in ``out``.

    An empty graph is an error unless ``allow_empty`` (a text-only KB of passages).
    """
    store = _assemble(parse_inputs(triples, entities, None, type_map, progress), allow_empty)
    with gc_paused():
        store.save(Path(out))
    return store


def _link_passages(pas: list[Passage], store: InMemoryGraphStore, warnings: list[str]) -> list[Passage]:
    unknown = sum(1 for p in pas if p.entity_id is not None and p.entity_id not in store.index_of)
    if not unknown:
        return pas
    warnings.append(f"{unknown} passages name an entity_id missing from the graph; kept unlinked")
    return [
        p if p.entity_id is None or p.entity_id in store.index_of else Passage(p.id, p.text, None, p.source)
        for p in pas
    ]


def ingest(
    directory: str | Path,
    triples: Sequence[str | Path],
    entities: str | Path | None = None,
    passages: str | Path | None = None,
    type_map: str | Path | dict | None = None,
    embeddings: str = DEFAULT_EMBEDDINGS,
    neo4j_uri: str | None = None,
    falkordb_uri: str | None = None,
    progress: bool = True,
    wait: float = 0,
    attach: Callable[[Path], dict] | None = None,
    reuse_vectors: Path | None = None,
) -> IngestReport:
    """Build a new KB build in ``directory`` and make it live atomically (whatever it held is replaced).

    Another ingest writing the same directory is a KBError (after ``wait`` seconds); a killed
    run's embedding chunks are reused. ``attach(build_dir)``, when given, writes extra parts into
    the build before its manifest and returns extra manifest keys (document ingest: provenance).
    ``reuse_vectors``: a finished build whose vectors are copied for the texts it holds
    (:mod:`kb.vector_reuse`; a change to a KB, :mod:`kb.kb_contents`). To change a KB rather
    than replace it, see :mod:`kb.kb_update`.
    """
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise KBError(f"--kb {root} is a file, not a directory")
    with ingest_lock(root, wait):
        stale: list[str] = []
        for entry in remove_partial_builds(root):  # a killed ingest's half-written server graphs
            drop_unused_graph(entry, stale)
        for w in stale:
            log.warning("%s", w)
        marker = StageMarker(root)
        partial = new_build_dir(root)
        try:
            report = _build(
                root,
                partial,
                marker,
                triples,
                entities,
                passages,
                type_map,
                embeddings,
                neo4j_uri,
                falkordb_uri,
                progress,
                attach,
                reuse_vectors,
            )
        except Exception:  # a reported error (bad input, graph server down): drop the partial build
            discard_build(partial)  # and its server graph; keep the saved embedding chunks for the re-run
            raise
        report.build_dir = commit_build(root, partial)
        shutil.rmtree(work_dir(root), ignore_errors=True)
        for entry in remove_old_builds(root, report.build_dir.name):
            drop_unused_graph(entry, report.warnings)
    for w in report.warnings:
        log.warning(w)
    return report


def _build(
    root: Path,
    out: Path,
    marker: StageMarker,
    triples,
    entities,
    passages,
    type_map,
    embeddings: str,
    neo4j_uri: str | None,
    falkordb_uri: str | None,
    progress: bool,
    attach: Callable[[Path], dict] | None = None,
    reuse: Path | None = None,
) -> IngestReport:
    """Write every part of one build into ``out`` (not yet live)."""
    secs: dict[str, float] = {}
    t = time.perf_counter()
    marker.enter("parse")
    if neo4j_uri or falkordb_uri:  # a graph server that is down: refused before the parse and the embeddings
        from hybridrag.kb.graph_backends import check_reachable

        check_reachable("neo4j" if neo4j_uri else "falkordb", neo4j_uri or falkordb_uri or "")
    inputs = parse_inputs(triples, entities, passages, type_map, progress)
    inferred = infer_types(inputs)
    secs["parse"] = time.perf_counter() - t
    marker.checkpoint("parse", 0)

    t = time.perf_counter()
    marker.enter("graph")
    store = _assemble(inputs, allow_empty=passages is not None)
    warnings = inputs.warnings
    with gc_paused():
        store.save(out)
        pas = _link_passages(inputs.passages, store, warnings)
        docs = [Doc("entity", e.id, e.id, entity_doc_text(e)) for e in store.entities]
        docs += [Doc("passage", p.id, p.entity_id, p.text) for p in pas]
    secs["graph"] = time.perf_counter() - t
    marker.checkpoint("graph", 0)

    t = time.perf_counter()
    marker.enter("embeddings")
    embed = embed_new(
        get_embeddings,
        embeddings,
        work_dir(root) / "embeddings",
        progress,
        lambda done: marker.checkpoint("embeddings", done),
    )
    texts = [d.text for d in docs]
    known = previous_vectors(reuse, embeddings) if reuse is not None else {}
    if known:
        vectors, chunks = embed_reusing(embed, texts, known)
    else:
        chunks = embed(texts)
        vectors = chunks.vectors
    n_chunks, n_reused = (chunks.chunks, chunks.reused) if chunks else (0, 0)
    secs["embed"] = time.perf_counter() - t

    t = time.perf_counter()
    marker.enter("indexes")
    save_docs(docs, out / "docs.jsonl")
    BM25Index.build([d.text for d in docs]).save(out)
    DenseIndex.build(vectors).save(out / "dense.faiss")
    secs["indexes"] = time.perf_counter() - t
    marker.checkpoint("indexes", 0)

    graph_cfg = {"backend": "memory"}
    if neo4j_uri or falkordb_uri:
        t = time.perf_counter()
        backend, uri = ("neo4j", neo4j_uri) if neo4j_uri else ("falkordb", falkordb_uri or "")
        marker.enter(f"export to {backend}")
        graph_cfg = export_build(root, out, backend, uri, store, progress)
        secs[backend] = time.perf_counter() - t
        marker.checkpoint("export", 0)
    counts = {**store.counts(), "passages": len(pas), "docs": len(docs), "relations": len(store.relation_names)}
    extra = attach(out) if attach else {}
    manifest = {
        **extra,
        "format_version": FORMAT_VERSION,
        "build_id": out.name.removesuffix(PARTIAL),
        "counts": counts,
        "embeddings": {"spec": embeddings, "dim": int(vectors.shape[1])},
        "graph": graph_cfg,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "warnings": warnings,
        **({"inferred_types": inferred} if inferred else {}),
        "files": {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()},
        "embedding_chunks": {"total": n_chunks, "reused": n_reused},
        "vectors_copied": sum(1 for x in texts if x in known),
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return IngestReport(root, counts, secs, warnings, embed_chunks=n_chunks, embed_chunks_reused=n_reused)
