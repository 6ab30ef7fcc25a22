"""Build a KB directory: graph, text indexes and a manifest, with progress bars."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from kb.build import assemble
from kb.embeddings import DEFAULT_EMBEDDINGS, embed_matrix, get_embeddings
from kb.loaders import read_entities, read_passages, read_triples, read_type_map
from kb.memory_store import InMemoryGraphStore
from kb.model import Entity, KBError, Passage
from kb.text_index import BM25Index, DenseIndex, Doc, save_docs

FORMAT_VERSION = 1
log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What an ingest wrote and how long each stage took (seconds)."""

    directory: Path
    counts: dict[str, int]
    seconds: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def entity_doc_text(e: Entity) -> str:
    """Text indexed for an entity: its name, then its document when it has one."""
    return f"{e.name}: {e.text}" if e.text else e.name


def build_graph(
    out: Path,
    triples: Sequence[str | Path],
    entities: str | Path | None = None,
    type_map: str | Path | dict | None = None,
    progress: bool = True,
    allow_empty: bool = False,
) -> InMemoryGraphStore:
    """Parse triples (and entity documents), assemble the in-memory store and save it.

    An empty graph is an error unless ``allow_empty`` (a text-only KB of passages).
    """
    ents = {e.id: e for e in read_entities(Path(entities))} if entities else {}
    tmap = type_map if isinstance(type_map, dict) else (read_type_map(Path(type_map)) if type_map else {})
    parsed = []
    for path in triples:
        it = read_triples(Path(path))
        parsed.extend(tqdm(it, desc=f"triples {Path(path).name}", unit=" triples", disable=not progress))
    if not parsed and not ents and not allow_empty:
        raise KBError("no triples and no entities found in the input files")
    store = InMemoryGraphStore(*assemble(parsed, ents, tmap))
    store.save(out)
    return store


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
) -> IngestReport:
    """Parse the inputs, build the graph store and text indexes, write the manifest."""
    out = Path(directory)
    secs: dict[str, float] = {}
    t0 = time.perf_counter()
    store = build_graph(out, triples, entities, type_map, progress, allow_empty=passages is not None)
    secs["graph"] = time.perf_counter() - t0
    ent_list, rel_names = store.entities, store.relation_names

    warnings: list[str] = []
    pas: list[Passage] = list(read_passages(Path(passages))) if passages else []
    unknown = sum(1 for p in pas if p.entity_id is not None and p.entity_id not in store.index_of)
    if unknown:
        warnings.append(f"{unknown} passages name an entity_id missing from the graph; kept unlinked")
        pas = [p if p.entity_id in store.index_of or p.entity_id is None
               else Passage(p.id, p.text, None, p.source) for p in pas]
    graph_cfg = {"backend": "memory"}
    if neo4j_uri or falkordb_uri:
        from kb.graph_backends import export_graph

        t = time.perf_counter()
        backend, uri = ("neo4j", neo4j_uri) if neo4j_uri else ("falkordb", falkordb_uri)
        graph_cfg = export_graph(backend, uri, store, progress=progress)
        secs[backend] = time.perf_counter() - t

    t = time.perf_counter()
    docs = [Doc("entity", e.id, e.id, entity_doc_text(e)) for e in ent_list]
    docs += [Doc("passage", p.id, p.entity_id, p.text) for p in pas]
    save_docs(docs, out / "docs.jsonl")
    BM25Index.build([d.text for d in docs]).save(out)
    secs["bm25"] = time.perf_counter() - t
    t = time.perf_counter()
    emb = get_embeddings(embeddings)
    vectors = embed_matrix(emb, [d.text for d in docs], progress=progress)
    DenseIndex.build(vectors).save(out / "dense.faiss")
    secs["embed"] = time.perf_counter() - t
    counts = {**store.counts(), "passages": len(pas), "docs": len(docs), "relations": len(rel_names)}
    manifest = {
        "format_version": FORMAT_VERSION,
        "counts": counts,
        "embeddings": {"spec": embeddings, "dim": int(vectors.shape[1])},
        "graph": graph_cfg,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "warnings": warnings,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    for w in warnings:
        log.warning(w)
    return IngestReport(out, counts, secs, warnings)
